"""A program's own words for a CUDA status, keyed to that status's row (catalog/cuda.yaml `cuda_spellings`), and the
CUresult number Geryon (LAMMPS' GPU package) prints after its own words.

A library that checks what CUDA answered and prints a sentence of its own instead of cudaGetErrorString's still
reports one condition with one owner: Kokkos' `likely mismatch of architecture` is 209's build with no code for the
GPU (the job's build: app.exception.cuda_config), Geryon's `Cuda driver error 804` the host driver's forward
compatibility refused (node.driver). Lines are the printing programs' formats filled in (Kokkos
core/src/Cuda/Kokkos_Cuda_Instance.cpp; lammps lib/gpu/geryon/nvd_macros.h) or quoted from public pages, not the corpus.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.catalog.tables import CudaSpelling, cuda_spellings, cuda_table
from firstfault.extract import codes
from tests.conftest import BundleMaker, workload_ending
from tests.extract import helpers


def _cuda(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("error"), e.fields.get("cuda_code")) for e in helpers.events([line])
            if e.kind in ("app.cuda_error", "app.cuda_oom")]


@pytest.mark.parametrize(
    "line",
    [
        # Kokkos' query kernel did not run on the device (its format, as Idefix's GPU guide and metatensor's LAMMPS
        # install notes quote it)
        "Kokkos::Cuda::initialize ERROR: likely mismatch of architecture",
        # ... under an MPI rank's prefix, as a launcher tags it
        "[1,0]<stderr>:Kokkos::Cuda::initialize ERROR: likely mismatch of architecture",
        # an architecture newer than the device's (Kokkos' format filled in: a build for an A100 run on a V100)
        "Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 8.0 on device with "
        "compute capability 7.0 is not supported by CUDA!",
    ],
)
def test_kokkos_words_for_a_build_without_code_for_the_gpu_are_209(line: str) -> None:
    assert _cuda(line) == [("config", 209)]


def test_dcgms_pulse_test_without_a_build_for_the_gpus_major_version_is_209() -> None:
    # nvvs's ERROR record (NVIDIA/DCGM#238, an RTX 5090 of compute capability 12 under DCGM 4.2.3)
    line = ("2025-06-27 06:32:30.806 ERROR [71830:71830] [[pulse_test]] Incompatible CUDA compute capability major "
            "version: 12 [/builds/dcgm/dcgm/dcgm_private/nvvs/plugin_src/pulsetest/src/PulseTestPlugin.cpp:599] "
            "[PulseTestPlugin::PopulateArgV]")
    assert _cuda(line) == [("config", 209)]


def test_near_miss_a_device_listings_compute_capability_is_no_cuda_error() -> None:
    # NVIDIA's cuda-samples deviceQuery (Samples/1_Utilities/deviceQuery/deviceQuery.cpp) lists the version
    assert _cuda("  CUDA Capability Major/Minor version number:    12.0") == []


@pytest.mark.parametrize(
    "line",
    [
        # Kokkos 4.x's device selection (core/src/impl/Kokkos_Core.cpp get_gpu's format, filled: three ranks mapped
        # onto two GPUs)
        "Error: Requested GPU with id '2' but only 2GPU(s) available! Raised by Kokkos::initialize().",
        # ... as a LAMMPS deployment note quotes it for `-k on g 4` under a launcher that gave each rank one GPU
        "Requested GPU with id '3' but only 1GPU(s) available!",
        # ... and a negative id from the job's settings
        "Error: Requested GPU with invalid id '-1'. Device id cannot be negative! Raised by Kokkos::initialize().",
    ],
)
def test_kokkos_words_for_a_device_id_it_does_not_have_are_101(line: str) -> None:
    assert _cuda(line) == [("device_choice", 101)]


@pytest.mark.parametrize(
    "line",
    [
        # a training script's own fallback to GPU 0, which runs (its print, in several public repositories)
        "Cuda installed but only 2 GPU(s) available! Running on GPU 0 NVIDIA A100-SXM4-40GB!",
        # CUTLASS's distributed GEMM example's own check (its std::cerr), no Kokkos words
        "Error: Requested 4 GPUs but only 2 available",
    ],
)
def test_near_miss_other_programs_gpu_counts_are_no_cuda_error(line: str) -> None:
    assert _cuda(line) == []


def test_the_verdict_on_kokkos_device_id_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    line = "Error: Requested GPU with id '3' but only 1GPU(s) available! Raised by Kokkos::initialize()."
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"


def test_the_verdict_on_kokkos_words_is_the_jobs_build(make_bundle: BundleMaker) -> None:
    line = "Kokkos::Cuda::initialize ERROR: likely mismatch of architecture"
    v = analyze(str(make_bundle({"app/rank-0.log": line + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.cuda_config"


@pytest.mark.parametrize(
    "line",
    [
        # Kokkos' warning for an older build on a newer GPU, which runs (quoted by Idefix's GPU guide)
        "Kokkos::Cuda::initialize WARNING: running kernels compiled for compute capability 6.1 on device with "
        "compute capability 8.6 , this will likely reduce potential performance.",
        "running kernels compiled for compute capability 6.1 on device with compute capability 8.6 , this will "
        "likely reduce potential performance.",
        # prose about the message (a wheel's changelog), not Kokkos' line
        'on a non-Turing GPU with a driver older than 13.2 every import aborted with Kokkos "likely mismatch of '
        'architecture"',
    ],
)
def test_near_miss_kokkos_warning_and_prose_are_no_cuda_error(line: str) -> None:
    assert _cuda(line) == []


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # Geryon's CU_SAFE_CALL with the CUresult a driver call returned: 804, forward compatibility on a GPU the
        # driver does not support (the host's driver)
        ("Cuda driver error 804 in call at file '/opt/lammps/lib/gpu/geryon/nvd_device.h' in line 333.",
         ("driver", 804)),
        # ... its older copies, without `in call`
        ("Cuda driver error 803 in file 'geryon/nvd_device.h' in line 291.", ("driver", 803)),
        # ... and a code of another owner reads as its own row: 700, the kernel's illegal address
        ("Cuda driver error 700 in call at file 'geryon/nvd_timer.h' in line 76.", ("illegal_address", 700)),
    ],
)
def test_geryons_driver_error_number_is_the_curesult(line: str, want: tuple[str, int]) -> None:
    assert _cuda(line) == [want]


def test_geryons_out_of_memory_is_the_devices_memory() -> None:
    # CUresult 2, CUDA_ERROR_OUT_OF_MEMORY, from Geryon's allocation check
    line = "Cuda driver error 2 in call at file 'geryon/nvd_memory.h' in line 120."
    assert [e.kind for e in helpers.events([line])] == ["app.cuda_oom"]


def test_the_verdict_on_geryons_804_is_the_nodes_driver(make_bundle: BundleMaker) -> None:
    lines = ["Cuda driver error 804 in call at file '/opt/lammps/lib/gpu/geryon/nvd_device.h' in line 333.",
             "Abort(-1) on node 0 (rank 0 in comm 0):",
             "application called MPI_Abort(MPI_COMM_WORLD, -1) - process 0"]
    v = analyze(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "node.driver"


@pytest.mark.parametrize(
    "line",
    [
        # prose's plural is no anchor (a lower-case letter goes on from it)
        "Cuda driver errors are reported by the CU_SAFE_CALL macro",
    ],
)
def test_near_miss_geryon_words_in_prose_are_no_cuda_error(line: str) -> None:
    assert _cuda(line) == []


def test_every_spelling_is_keyed_to_a_row_and_prefiltered_by_a_digitless_word() -> None:
    rows = cuda_spellings()
    assert rows and all(r.code in cuda_table() for r in rows)
    words = codes.cuda_spelling_literals()
    assert all(not any(c.isdigit() for c in w) for w in words)
    assert all(any(w in r.format for w in words) for r in rows)


def test_a_spellings_runs_are_its_formats_literal_text() -> None:
    row = CudaSpelling(code=209, format="X ERROR: compiled for %d.%d on device %d.%d is not supported!",
                       printed_by="a program's source")
    assert row.runs == ("X ERROR: compiled for", ".", "on device", ".", "is not supported!")


# DeePMD-kit's DPAssert (deepmodeling/deepmd-kit source/lib/include/gpu_cuda.h), as TensorFlow's op status and LAMMPS'
# pair deepmd pass it on (deepmodeling/deepmd-kit#3034: two GPUs, prod_env_mat.cu:625)
DEEPMD_700 = ("  (1) INTERNAL: Operation received an exception: DeePMD-kit Error: CUDA Runtime library throws an "
              "error: an illegal memory access was encountered, in file /home/conda/feedstock_root/build_artifacts/"
              "libdeepmd_1697184996481/work/source/lib/src/gpu/prod_env_mat.cu: 625")


@pytest.mark.parametrize(
    ("line", "want"),
    [
        (DEEPMD_700, ("illegal_address", 700)),
        # its ROCm build's twin (gpu_rocm.h) with hipGetErrorString's words for the same fault
        ("DeePMD-kit Error: HIP runtime library throws an error: an illegal memory access was encountered, in file "
         "source/lib/src/gpu/prod_env_mat.cu: 625", ("illegal_address", 700)),
    ],
)
def test_deepmds_runtime_library_error_names_the_cuda_error(line: str, want: tuple[str, int]) -> None:
    (got,) = _cuda(line)
    assert got[0] == want[0]


def test_the_verdict_on_deepmds_illegal_address_is_the_workloads(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": DEEPMD_700 + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"


@pytest.mark.parametrize(
    "line",
    [
        # near miss: a runtime library's error in other words than CUDA's (a JVM's, no CUDA anchor before it)
        "Runtime library throws an error: an illegal memory access was encountered",
        # near miss: DeePMD's own nbor check names no CUDA error after its anchor-less words
        "DeePMD-kit: Illegal nbor list sorting: please check the neighbor list",
    ],
)
def test_near_miss_library_error_words_without_deepmds_anchor(line: str) -> None:
    assert _cuda(line) == []
