"""Scientific HPC codes' own failure conventions (brief hpc98): the abort conventions of the frameworks they are
built on read as one family with the languages' (extract/traceback.py LANGUAGES: AMReX's amrex::Error / amrex::Abort,
QUDA's errorQuda, Fortran's ERROR STOP with a message), so that the message inside reaches the existing tables (the
CUDA/HIP table, errnos, a device's memory: catalog/exceptions.yaml `accelerator_oom`); AMReX's plotfile writer's
failed write with no errno (traceback `_WRITE_FAILED`); and HPE Slingshot's CXI provider's flow-control fatal
(catalog/transport.yaml, cxi C_RC_NO_SPACE). Each block has the look-alikes that must not be read so.

Provenance: a line `as posted` is copied from the public thread named beside it; a line `filled in` is ours, written
from the printing program's source cited beside it."""

from __future__ import annotations

import pytest

from firstfault.extract.traceback import foreign_exception
from tests.extract.helpers import events

# ---------------------------------------------------------------- AMReX (Src/Base/AMReX.cpp Error_host)

# as posted (Pele-Suite/PeleC#889): VisMF's header write on a full file system, then AMReX's signal handler's lines
PELEC = ["amrex::Error::0::Write of Vector<Vector<Real>> failed !!!", "SIGABRT", "See Backtrace.0 file for details"]


def kinds(lines: list[str]) -> list[str]:
    return [ev.kind for ev in events(lines)]


def test_amrex_error_names_its_own_kind_and_reads_the_message() -> None:
    exc = foreign_exception(PELEC[0])
    assert exc is not None and (exc.cls, exc.msg) == ("amrex::Error", "Write of Vector<Vector<Real>> failed")


@pytest.mark.parametrize("line", [
    PELEC[0],
    # filled in: VisMF's other header writes and the FAB data writer (Src/Base/AMReX_VisMF.cpp, AMReX_FArrayBox.cpp)
    "amrex::Error::12::Write of VisMF::Header failed !!!",
    "amrex::Error::3::Write of Vector<VisMF::FabOnDisk> failed !!!",
    "amrex::Error::0::FABio_binary::write() failed !!!",
])
def test_a_plotfile_or_checkpoint_write_that_failed_is_the_storages(line: str) -> None:
    evs = events([line])
    assert [e.kind for e in evs] == ["storage.error"], evs
    assert evs[0].fields["fs"] == "posix" and evs[0].fields.get("errno") is None


@pytest.mark.parametrize("line", [
    # filled in: VisMF's read of a header (a restart from a checkpoint): no write, no storage of its own
    "amrex::Error::0::Read of Vector<Vector<Real>> failed !!!",
    # filled in: a stream write to the terminal (Src/Base/AMReX_Box.cpp's operator<<)
    "amrex::Error::0::operator<<(ostream&,Box&) failed !!!",
    # filled in: a model's own abort (PeleC's input checks)
    "amrex::Abort::0::Invalid bc_lo !!!",
])
def test_amrexs_other_aborts_are_the_programs_own(line: str) -> None:
    assert kinds([line]) == ["app.exception"]


def test_amrexs_out_of_gpu_memory_is_the_devices_memory() -> None:
    # filled in: Src/Base/AMReX_Arena.cpp, amrex::Abort("Out of gpu memory. Free: N Asked: N")
    assert kinds(["amrex::Abort::5::Out of gpu memory. Free: 1048576 Asked: 2147483648 !!!"]) == ["app.cuda_oom"]


@pytest.mark.parametrize("line", [
    # filled in: amrex::Warning's form (`<msg>!`, no lib id): no abort
    "Warning: Write of Vector<Vector<Real>> failed!",
    # filled in: the lib id with no rank is not the convention
    "amrex::Error::Write of Vector<Vector<Real>> failed !!!",
])
def test_amrexs_look_alikes_are_no_abort(line: str) -> None:
    assert foreign_exception(line) is None


# ---------------------------------------------------------------- QUDA (lib/util_quda.cpp errorQuda_)

# as posted (lattice/quda#895)
QUDA = ("MG level 0 (GPU): ERROR: cuStreamSynchronize returned error CUDA_ERROR_LAUNCH_FAILED (rank 2, host lnode02, "
        "/qbigwork2/bartek/code/quda_1.0.x/lib/quda_cuda_api.cpp:278 in qudaStreamSynchronize())")


def test_quda_error_reads_its_message_through_the_cuda_table() -> None:
    exc = foreign_exception(QUDA)
    assert exc is not None and exc.cls == "errorQuda"
    assert exc.msg == "cuStreamSynchronize returned error CUDA_ERROR_LAUNCH_FAILED"
    evs = [e for e in events([QUDA]) if e.kind == "app.cuda_error"]
    assert evs and {e.fields["cuda_code"] for e in evs} == {719}


def test_quda_device_malloc_failure_is_the_devices_memory() -> None:
    # filled in: lib/targets/cuda/malloc.cpp device_malloc_'s errorQuda
    line = ("ERROR: Failed to allocate device memory of size 2147483648 (color_spinor_field.cpp:122 in create()) "
            "(rank 0, host nid001234, malloc.cpp:236 in device_malloc_())")
    assert kinds([line]) == ["app.cuda_oom"]


@pytest.mark.parametrize("line", [
    # filled in: any program's `ERROR: ` without errorQuda's rank, host and place
    "ERROR: Solver failed to converge",
    # filled in: the place without `in func()`
    "ERROR: boom (rank 0, host n1, a.cpp:3)",
])
def test_an_error_line_without_errorquda_s_tail_is_not_quda(line: str) -> None:
    exc = foreign_exception(line)
    assert exc is None or exc.cls != "errorQuda"


# ---------------------------------------------------------------- Fortran ERROR STOP and a device allocation

# as posted (ExtremeFLOW/neko#1088): Neko's neko_error, gfortran's IEEE notes at stop, the bare ERROR STOP
NEKO = ["*** ERROR: Memory allocation on device failed ***", "Warning: ieee_underflow is signaling",
        "Warning: ieee_inexact is signaling", "ERROR STOP"]


def test_nekos_device_allocation_failure_is_the_devices_memory() -> None:
    assert kinds(NEKO) == ["app.cuda_oom"]


def test_error_stop_with_a_message_reads_the_message() -> None:
    # filled in: libgfortran runtime/stop.c error_stop_string
    exc = foreign_exception("ERROR STOP Memory allocation on device failed")
    assert exc is not None and (exc.cls, exc.msg) == ("ERROR STOP", "Memory allocation on device failed")
    assert kinds(["ERROR STOP Memory allocation on device failed"]) == ["app.cuda_oom"]


@pytest.mark.parametrize("line", ["ERROR STOP", "ERROR STOP 1", "ERROR STOP -3"])
def test_error_stop_with_no_message_says_nothing_of_why(line: str) -> None:
    assert foreign_exception(line) is None
    assert kinds([line]) == []


@pytest.mark.parametrize("line", [
    # filled in: pinned host memory and a device memory copy: no device's memory exhausted
    "Failed to allocate pinned memory of size 1024",
    "Memory copy to device failed",
    "memory allocation on host failed",
])
def test_host_allocations_and_copies_are_no_device_oom(line: str) -> None:
    assert "app.cuda_oom" not in kinds([line])


# ---------------------------------------------------------------- a GPU math library's call that failed, no status

@pytest.mark.parametrize("line", [
    # as posted (fspiga/qe-gpu#13): QE-GPU's check of a cuSOLVER call
    " zhegvdx_gpu error: cusolverDnZpotrf failed!",
    # as posted (yambo-code/yambo#76): Yambo's linear-algebra driver
    "[ERROR] LINEAR ALGEBRA driver [SERIAL_lin_system_gpu]cusolverDnCgetrs failed",
    # filled in: a rocSOLVER call in a HIP port's own check, cuFFT's plan
    "rocsolver_zpotrf() failed",
    "cufftPlanMany failed.",
])
def test_a_math_library_call_a_code_says_failed_is_its_own_exception(line: str) -> None:
    assert kinds([line]) == ["app.exception"]


@pytest.mark.parametrize("line", [
    # filled in: a note that the code goes on, and a routine name that is no library's API (QMCPACK's own wrapper,
    # lowercase after the prefix)
    "cusolverDnZpotrf failed, retrying on the host",
    "cublas_inverse failed on walker 0",
])
def test_other_words_about_a_math_library_call_are_not_this_row(line: str) -> None:
    assert "app.exception" not in kinds([line])


# ---------------------------------------------------------------- HPE Slingshot's CXI provider (libfabric prov/cxi)

# as posted (E3SM-Project/E3SM#5057, Perlmutter, HPE's release of 2022)
CXI_2022 = ("libfabric:47445:1656625588:cxi:core:cxip_ux_onload_cb():2444<warn> RXC (0xe910:7:0): Flow control "
            "triggered due to failure to append LE. Software endpoint mode required.")


@pytest.mark.parametrize("line", [
    CXI_2022,
    # filled in: today's RXC_FATAL with FC_SW_LE_MSG_FATAL and FC_SW_ONLOAD_MSG_FATAL (prov/cxi/include/cxip.h,
    # src/cxip_msg_hpc.c at ofiwg/libfabric af8ddbe9), through ofi_log's header
    "libfabric:2210:1718000000::cxi:ep_data:cxip_recv_pending_ptlte_disable():444<warn> nid001234: RXC (0x1a2:0) "
    "PtlTE 17:[Fatal] LE exhaustion during flow control, FI_CXI_RX_MATCH_MODE=[hybrid|software] is required",
    "libfabric:2210:1718000000::cxi:ep_data:cxip_ux_onload_complete():2027<warn> nid001234: RXC (0x1a2:0) "
    "PtlTE 17:[Fatal] LE resources not recovered during flow control. FI_CXI_RX_MATCH_MODE=[hybrid|software] is "
    "required",
])
def test_the_cxi_providers_flow_control_fatal_is_the_nics_resources(line: str) -> None:
    evs = [e for e in events([line]) if e.kind == "nccl.ib_completion_error"]
    assert len(evs) == 1, evs
    assert (evs[0].fields["stack"], evs[0].fields["status_name"], evs[0].fields["status_class"]) == (
        "cxi", "C_RC_NO_SPACE", "resource")


@pytest.mark.parametrize("line", [
    # filled in: the same words with no CXI provider's line around them (a note in a job script's output)
    "Flow control triggered due to failure to append LE. Software endpoint mode required.",
    # filled in: the provider's flow-control warnings it recovers from (FC_OFLOW_NO_MATCH_MSG, FC_REQ_FULL_MSG)
    "libfabric:2210:1718000000::cxi:ep_data:cxip_fc_progress_ctrl():2455<warn> nid001234: RXC (0x1a2:0) PtlTE 17: "
    "Flow control overflow no match, increasing FI_CXI_OFLOW_BUF_SIZE (current is 2097152B) may reduce occurrence",
    "libfabric:2210:1718000000::cxi:ep_data:cxip_fc_progress_ctrl():2476<warn> nid001234: RXC (0x1a2:0) PtlTE 17: "
    "Flow control request list full, increasing FI_CXI_REQ_BUF_SIZE value (current is 2097152B) may reduce occurrence",
])
def test_cxi_words_without_the_provider_or_its_recovered_warnings_are_no_status(line: str) -> None:
    assert "nccl.ib_completion_error" not in kinds([line])
