"""Whose failure a collective library's result names (catalog/cuda.yaml `nccl_results` and catalog/transport.yaml
`mpich_error_classes`, column `whose`), and what the traceback model makes of an exception that only relays one
(extract/codes.py `relays_result`, extract/traceback.py `_classify`).

NCCL's `unhandled system error`, `unhandled cuda error` and `internal error` say that a call NCCL made failed (a
socket, shared memory, ibverbs, a device file; a CUDA call; a check of its own), not which: the environment's
failure, named by NCCL's WARN lines where the evidence has them. An exception whose message is only that result is
a symptom (nccl.error), whatever wrapper raised it; the program's own results (invalid usage, invalid argument; an
MPI class of the call's arguments) stay the program's.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import hccl_result_table, mpich_classes, nccl_result_table
from firstfault.extract.codes import collective_result, hccl_result_of, relays_result
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import APP_AND_NCCL, TB, alone, last_line, scan


def _one(line: str) -> tuple[str, dict[str, object]]:
    drafts = last_line(line)
    assert len(drafts) == 1, drafts
    return drafts[0].kind, dict(drafts[0].fields)


# ------------------------------------------------------------------ the tables


def test_every_nccl_result_says_whose_failure_it_names() -> None:
    # nccl.h: invalid argument / invalid usage are the caller's; a system, CUDA or internal error is a call NCCL made;
    # ncclRemoteError a peer's
    whose = {r.name: r.whose for r in nccl_result_table().values()}
    assert whose["ncclSystemError"] == whose["ncclUnhandledCudaError"] == whose["ncclInternalError"] == "environment"
    assert whose["ncclInvalidUsage"] == whose["ncclInvalidArgument"] == "program"
    assert whose["ncclRemoteError"] == "peer"
    assert all(r.failed for r in nccl_result_table().values() if r.whose == "environment")


def test_the_mpi_classes_of_the_calls_arguments_are_the_programs() -> None:
    # MPI-4.0 §9.4: a count, rank or truncated message is the caller's; MPI_ERR_INTERN / MPI_ERR_OTHER the library's
    by_name = {c.name: c for c in mpich_classes()}
    for name in ("MPI_ERR_TRUNCATE", "MPI_ERR_COUNT", "MPI_ERR_RANK"):
        assert by_name[name].whose == "program" and by_name[name].argument
    for name in ("MPI_ERR_INTERN", "MPI_ERR_OTHER"):
        assert by_name[name].whose == "environment" and not by_name[name].argument


@pytest.mark.parametrize(("text", "name", "whose"), [
    # ncclGetErrorString's words (NVIDIA/nccl src/init.cc) as vLLM's pynccl wrapper raises them (NVIDIA/nccl#1466)
    ("RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", "ncclSystemError",
     "environment"),
    # horovod/horovod#3625
    ("ncclCommInitRank failed: unhandled cuda error", "ncclUnhandledCudaError", "environment"),
    # Open MPI's MPI_Error_string as mpi4py raises it (ExtremeFLOW/pySEMTools#190)
    ("mpi4py.MPI.Exception: MPI_ERR_OTHER: known error not in list", "MPI_ERR_OTHER", "environment"),
])
def test_a_result_is_read_with_whose_failure_it_names(text: str, name: str, whose: str) -> None:
    got = collective_result(text)
    assert got is not None and (got.name, got.whose) == (name, whose)
    assert relays_result(text) == got


def test_near_miss_a_message_that_names_the_failed_call_relays_nothing() -> None:
    # vllm-project/vllm#14537: NCCL 2.21's `Last error:` after the result names the call that failed
    text = ("NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with "
            "NCCL_DEBUG=INFO for details), NCCL version 2.21.5 ncclSystemError: System call (e.g. socket, malloc) or "
            "external library call failed or device error. Last error: Error while creating shared memory segment "
            "/dev/shm/nccl-EoOvZr (size 7340384)")
    assert collective_result(text) is not None
    assert relays_result(text) is None


def test_near_miss_the_programs_results_are_not_relayed_symptoms() -> None:
    # cupy's NCCL_ERROR_INVALID_USAGE (vLLM 0.3) and an MPI class of the call's arguments (MPI-4.0 §9.4)
    assert relays_result("NCCL_ERROR_INVALID_USAGE: invalid usage") is None
    assert relays_result("mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated") is None


# ------------------------------------------------------------------ the traceback model


@pytest.mark.parametrize(("line", "result"), [
    # horovod/horovod#67: Horovod's TensorFlow op relays NCCL's result through TensorFlow's UnknownError
    ("tensorflow.python.framework.errors_impl.UnknownError: ncclCommInitRank failed: unhandled system error",
     "ncclSystemError"),
    # horovod/horovod#3625 (as Horovod's TensorFlow op raises it)
    ("tensorflow.python.framework.errors_impl.UnknownError: ncclCommInitRank failed: unhandled cuda error",
     "ncclUnhandledCudaError"),
])
def test_an_exception_that_only_relays_an_environment_result_is_a_symptom(line: str, result: str) -> None:
    kind, fields = _one(line)
    assert kind == "nccl.error"
    assert fields.get("nccl_result") == result


def test_an_mpi_class_of_the_librarys_own_is_a_symptom() -> None:
    # inducer/meshmode#370: mpi4py's MPI_ERR_OTHER under a broken libfabric (the library's environment)
    kind, _ = _one("mpi4py.MPI.Exception: MPI_ERR_OTHER: known error not in list")
    assert kind == "nccl.error"


@pytest.mark.parametrize("line", [
    # mpi4py/mpi4py#34: a window argument the program's call gave (no one's class here: the words decide nothing)
    "mpi4py.MPI.Exception: MPI_ERR_WIN: invalid window",
    # an MPI class of the call's own arguments (MPI-4.0 §9.4) stays the program's exception
    "mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated",
])
def test_near_miss_the_programs_own_class_stays_its_exception(line: str) -> None:
    kind, _ = _one(line)
    assert kind == "app.exception"


# ------------------------------------------------------------------ the verdict


def _verdict(make_bundle: BundleMaker, lines: list[str], name: str):  # type: ignore[no-untyped-def]
    log = "\n".join(lines) + "\n"
    return Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": log}, copy.deepcopy(WORKLOAD), name)))


HOROVOD = [TB, '  File "train.py", line 40, in <module>',
           # horovod/horovod#67
           "tensorflow.python.framework.errors_impl.UnknownError: ncclCommInitRank failed: unhandled system error"]


def test_the_verdict_is_unknown_and_says_where_to_look(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, HOROVOD, "relayed")
    assert v.attributed_domain == "unknown"
    assert v.root_cause is None
    assert any("NCCL_DEBUG=INFO" in n and "ncclSystemError" in n for n in v.explanation), v.explanation


def test_near_miss_the_programs_own_exception_before_it_still_decides(make_bundle: BundleMaker) -> None:
    # the program's own exception on one rank first; the relayed result after it is its fallout
    own = [TB, '  File "train.py", line 12, in <module>', "KeyError: 'input_ids'"]
    v = _verdict(make_bundle, own + HOROVOD, "own-first")
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


# ------------------------------------------------------------------ Habana's HCCL (catalog/cuda.yaml `hccl_results`)

# HabanaAI/hccl_demo#46: hccl_demo's check of the call, hcclGetErrorString's words for hcclInternalError
# (HabanaAI/HCL hcl/src/hccl/hccl_helpers.cpp get_error_string)
HCCL_DEMO = ("HCCL demo error: In function hcclAllReduceWrapper(): hcclAllReduce(sendbuff, recvbuff, recvcount, "
             "getDataType(envData), getReductionOp(envData), resources.comm, resources.collectiveStream) failed: A "
             "device is busy or an internal check failed")


def test_every_hccl_result_says_whose_failure_it_names() -> None:
    # hccl_types.h's enum read as nccl.h's: the caller's arguments and usage are the program's; a Synapse, system or
    # internal failure a call HCCL made
    whose = {r.name: r.whose for r in hccl_result_table().values()}
    assert whose["hcclInvalidArgument"] == whose["hcclInvalidUsage"] == "program"
    assert whose["hcclInternalError"] == whose["hcclUnhandledSynapseError"] == whose["hcclSystemError"] == "environment"
    assert all(r.failed for r in hccl_result_table().values() if r.whose == "environment")


@pytest.mark.parametrize(("text", "name", "whose"), [
    (HCCL_DEMO, "hcclInternalError", "environment"),
    # the enum's name wherever a program prints it (HCL's own to_string: `hcclInternalError`)
    ("hcclAllReduce returned hcclUnhandledSynapseError", "hcclUnhandledSynapseError", "environment"),
    ("hcclCommInitRank failed: The call to HCCL is incorrect", "hcclInvalidUsage", "program"),
])
def test_an_hccl_result_is_read_with_whose_failure_it_names(text: str, name: str, whose: str) -> None:
    got = collective_result(text)
    assert got is not None and (got.library, got.name, got.whose) == ("hccl", name, whose)


@pytest.mark.parametrize("text", [
    # hcclGetErrorString's plainer words where nothing names HCCL: any program's
    "ValueError: One argument has an invalid value",
    "syscall wrapper: A call to the system failed",
    # Huawei's HCCL (Ascend's, HcclResult `HCCL_E_*`, its API capitalised) is another library
    "HcclAllReduce failed, ret = HCCL_E_INTERNAL",
])
def test_near_miss_no_hccl_result_without_hccl(text: str) -> None:
    assert hccl_result_of(text) is None


def test_hccl_demos_failed_call_is_the_collectives_symptom_and_the_abort_after_it_its_reaction() -> None:
    # the same thread: the failed call, then the C++ runtime's terminate as the demo unwinds
    drafts = scan(APP_AND_NCCL, [HCCL_DEMO, "terminate called without an active exception"], "application")
    kinds = [(d.kind, d.fields.get("nccl_result"), d.fields.get("by")) for d in drafts]
    assert ("nccl.error", "hcclInternalError", None) in kinds
    assert not any(d.kind == "process.signal" and d.fields.get("by") == "self" for d in drafts), kinds


def test_near_miss_the_terminate_alone_is_still_the_programs_crash() -> None:
    drafts = alone("terminate called without an active exception")
    assert any(d.kind == "process.signal" and d.fields.get("by") == "self" for d in drafts)
