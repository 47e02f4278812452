"""A generic exception raised right after a logged line that names its cause is that cause raised
(engine/normalise.py `_logged_causes`, catalog/exceptions.yaml `generic_classes`: TensorFlow's UnknownError).

TensorFlow's C++ layers log why (gRPC core's bind that failed) and raise a status whose words name nothing
(`UnknownError: Could not start gRPC server`): the exception takes the logged line's reading. Near misses: the
exception alone, an exception that names a kind of its own after the line, the line far before it, and a generic
exception after a logged line that names nothing.
"""

from __future__ import annotations

from firstfault.analysis.analyze import Analyzer
from firstfault.engine.normalise import FALLOUT_LINES
from tests.conftest import BundleMaker


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# The failure lab's tf_port_in_use (tests/lab/captured/tf_port_in_use, worker 1): another process listens on the
# worker's TF_CONFIG port (its dates moved into the test bundle's window); gRPC core logs the bind that failed
# through absl (before absl::InitializeLog: the seconds since the epoch in the time's place), TensorFlow logs and
# raises UnknownError
BIND = ("E0000 00:00:1796652102.335472    8219 chttp2_server.cc:1177] UNKNOWN:No address added out of total 1 "
        "resolved for '0.0.0.0:26170' {created_time:\"2026-11-02T10:01:42.335453631+00:00\", children:[FAILED_"
        "PRECONDITION:Failed to add any wildcard listeners: Error in bind for address '[::]:26170': Address already in "
        "useError in bind for address '0.0.0.0:26170': Address already in use]}")
RAISED = [
    "E0000 00:00:1796652102.338842    8219 grpc_server_lib.cc:617] UNKNOWN: Could not start gRPC server",
    "E0000 00:00:1796652102.339303    8219 context_distributed_manager.cc:1047] Could not start gRPC server",
    "Traceback (most recent call last):",
    '  File "/work/lab/tf_job.py", line 51, in main',
    "    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)",
    '  File "/usr/lib/python3.11/site-packages/tensorflow/python/eager/context.py", line 745, in ensure_initialized',
    "    pywrap_tfe.TFE_EnableCollectiveOps(context_handle, server_def_str)",
    "tensorflow.python.framework.errors_impl.UnknownError: Could not start gRPC server",
]
STAMP = ("2026-11-02 10:01:27.447903: I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is "
         "optimized.")


def _verdict(make_bundle: BundleMaker, lines: list[str]):  # type: ignore[no-untyped-def]
    return Analyzer().analyze_path(str(make_bundle({"app/rank-1.log": _app([STAMP, *lines])})))


def test_tensorflows_unknown_error_after_grpcs_logged_bind_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, [BIND, *RAISED])
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup", v.root_cause
    assert "UnknownError" in v.root_cause.summary


def test_a_generic_runtime_error_after_a_logged_bind_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    # c10d's own warning of its bind (pytorch/pytorch#85604's words), then a caller's RuntimeError (a traceback) that
    # names nothing
    lines = ["[W socket.cpp:401] [c10d] The server socket has failed to listen on [::]:47531 (errno: 98 - Address "
             "already in use).", *RAISED[2:5], "RuntimeError: failed to start the trainer's server"]
    v = _verdict(make_bundle, lines)
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup", v.root_cause


def test_near_miss_the_unknown_error_alone_stays_the_workloads_exception(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, RAISED)
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_near_miss_an_exception_of_its_own_kind_after_the_line_keeps_its_reading(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, [BIND, *RAISED[2:-1], "ValueError: Expect 4 fields but have 3 in record 5"])
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_near_miss_the_line_far_before_the_exception_is_a_passing_mention(make_bundle: BundleMaker) -> None:
    filler = [f"2026-11-02 10:01:30,{n % 1000:03d} INFO [rank1] train: waiting for the cluster" for n in
              range(FALLOUT_LINES + 5)]
    v = _verdict(make_bundle, [BIND, *filler, *RAISED])
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_near_miss_a_logged_line_that_names_nothing_hands_nothing_on(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, ["E0000 00:00:1796652102.335472    8219 chttp2_server.cc:1177] UNKNOWN:No address added "
                               "out of total 1 resolved for '0.0.0.0:26170'", *RAISED])
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
