"""A generic exception after a store's, a transport's or a deadline's failure is that failure's symptom
(engine/normalise.py `_fallout`, catalog/exceptions.yaml `generic_classes`).

An exception whose class names no kind of failure (RuntimeError, std::runtime_error, a fatal log record) and whose
message names no cause either, right after such a failure in its own stream, is the program giving up on it: a
symptom of the failure's kind, never the workload's own cause. Near misses: the same line with no failure before it,
an exception that names a kind of its own after the failure, the failure in another stream or long before.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from firstfault.analysis.analyze import Analyzer
from firstfault.engine.normalise import FALLOUT_LINES, terminal_lines
from firstfault.model import Event, Evidence, FieldValue
from tests.conftest import BundleMaker


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# (the threads' lines below with their dates moved into the test bundle's window)
# horovod/horovod#2746 (Horovod under Ray): the HTTP store's GET tries ran out, then the std::runtime_error that
# http_store.cc throws right after its LOG(ERROR) (`throw std::runtime_error("HTTP request failed.")`, the what() of
# horovod/horovod#2955), as libstdc++'s terminate prints it
HOROVOD = [
    "(pid=11118) [2026-11-02 10:37:42.910981: E /tmp/pip-install-1br0pr96/horovod_284c8b944a414cd09d36e9484ace2798/"
    "horovod/common/gloo/http_store.cc:96] HTTP GET request failed too many times, aborting. See exception message "
    "above.",
    "(pid=11118) terminate called after throwing an instance of 'std::runtime_error'",
    "(pid=11118)   what():  HTTP request failed.",
]
GENERIC_ABORT = HOROVOD[1:]
# tensorflow/tensorflow#60706: a worker's collective past its deadline, then the gRPC server's Stop() that TF_CHECK_OK
# finds unimplemented (a fatal record), then Python's abort
TF = [
    "2026-11-02 10:10:57.934361: E tensorflow/core/common_runtime/base_collective_executor.cc:249] "
    "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Deadline Exceeded",
    "2026-11-02 10:10:57.934547: F tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:103] Non-OK-status: "
    "Stop() status: UNIMPLEMENTED: Clean shutdown is not currently implemented",
    "Fatal Python error: Aborted",
]


def test_horovods_abort_after_its_store_did_not_answer_is_the_stores_symptom(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(HOROVOD)})))
    assert v.root_cause is None and v.attributed_domain == "unknown"


def test_tensorflows_shutdown_fatal_after_a_collectives_deadline_is_the_deadlines_symptom(
        make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(TF)})))
    assert v.root_cause is None and v.attributed_domain == "unknown"


def test_near_miss_the_same_generic_abort_with_no_failure_before_it_stays_the_workloads(
        make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(GENERIC_ABORT)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_near_miss_the_fatal_record_alone_stays_the_workloads(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(TF[1:])})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_near_miss_an_oom_after_a_store_timeout_stays_its_own_cause(make_bundle: BundleMaker) -> None:
    # PyTorch's allocator's words (c10/cuda/CUDACachingAllocator.cpp), after the store's failure in the same stream
    lines = [HOROVOD[0], "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                         "capacity of 79.15 GiB of which 1.06 GiB is free."]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom"


def _ev(kind: str, line: int, fields: dict[str, FieldValue] | None = None, *, rank: int | None = 0,
        file: str = "f.log", at: datetime | None = None) -> Event:
    return Event(kind=kind, time=at, node="n1", rank=rank, fields=dict(fields or {}),
                 evidence=Evidence(source="application", file=file, line=line, text=kind))


GENERIC: dict[str, FieldValue] = {"exc_type": "runtime_error", "message": "HTTP request failed."}


def _kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in terminal_lines(events)]


def test_the_generic_exception_takes_the_failures_kind() -> None:
    out = terminal_lines([_ev("nccl.remote_error", 2, {"detail": "store"}), _ev("app.exception", 4, GENERIC)])
    assert [e.kind for e in out] == ["nccl.remote_error", "nccl.remote_error"]
    assert out[1].fields == {"detail": "runtime_error: HTTP request failed.", "fallout": True}
    # a gloo or stall detector's wait is a timeout's; an exit report between them changes nothing
    assert _kinds([_ev("gloo.timeout", 2), _ev("process.signal", 3, {"signal": "SIGABRT"}),
                   _ev("app.exception", 4, {"exc_type": "FATAL", "message": "Check failed: ok"})]) == [
        "gloo.timeout", "process.signal", "nccl.timeout"]


def test_near_miss_a_class_or_message_that_names_a_kind_of_its_own() -> None:
    failure = _ev("nccl.timeout", 2)
    assert _kinds([failure, _ev("app.exception", 3, {"exc_type": "ValueError", "message": "bad shape"})])[-1] == (
        "app.exception")
    assert _kinds([failure, _ev("app.exception", 3, {**GENERIC, "errno": "EIO", "path": "/ckpt/x.pt"})])[-1] == (
        "app.exception")
    assert _kinds([failure, _ev("app.exception", 3, {**GENERIC, "setup": True})])[-1] == "app.exception"


def test_near_miss_another_stream_another_event_between_or_too_far() -> None:
    failure = _ev("nccl.remote_error", 2)
    assert _kinds([failure, _ev("app.exception", 4, GENERIC, rank=1)])[-1] == "app.exception"
    assert _kinds([failure, _ev("app.exception", 4, GENERIC, file="g.log")])[-1] == "app.exception"
    assert _kinds([failure, _ev("app.numerics", 3, {"value": "nan"}), _ev("app.exception", 4, GENERIC)])[-1] == (
        "app.exception")
    assert _kinds([failure, _ev("app.exception", 3 + FALLOUT_LINES, GENERIC)])[-1] == "app.exception"
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    assert _kinds([_ev("nccl.remote_error", 2, at=t0),
                   _ev("app.exception", 4, GENERIC, at=t0 + timedelta(minutes=10))])[-1] == "app.exception"
    # the failure after the exception, not before it
    assert _kinds([_ev("app.exception", 2, GENERIC), _ev("nccl.remote_error", 4)])[0] == "app.exception"
