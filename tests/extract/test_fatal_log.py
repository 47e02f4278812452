"""A C++ framework's fatal log record (glog / absl `LOG(FATAL)`, a failed `CHECK`, TensorFlow's own form) and Go's
logrus at its fatal level are read as an uncaught exception (extract/traceback.py `fatal_log`): the process aborts
(or exits) right after it.

Lines are verbatim from the public threads cited next to them.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import nccl
from firstfault.extract import traceback as tb
from firstfault.extract.base import LineExtractor
from tests.conftest import BundleMaker
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)


@pytest.mark.parametrize(("line", "message"), [
    # CharlesShang/FastMaskRCNN#177: TensorFlow's dated form
    ("2017-11-28 16:36:15.720252: F tensorflow/core/lib/io/zlib_outputbuffer.cc:77] Check failed: bytes_to_write <= "
     "AvailableInputSpace() (12 vs. -1814274)",
     "Check failed: bytes_to_write <= AvailableInputSpace() (12 vs. -1814274)"),
    # tensorflow/tensorflow#6088: TensorFlow before 1.0, no date
    ("F tensorflow/core/kernels/strided_slice_op.cc:316] Check failed: tmp.CopyFrom(input.Slice(begin[0], end[0]), "
     "final_shape) ", "Check failed: tmp.CopyFrom(input.Slice(begin[0], end[0]), final_shape)"),
    # torrvision/siamfc-tf#21: the same form, cuDNN's algorithms not found
    ("F tensorflow/core/kernels/conv_ops.cc:659] Check failed: stream->parent()->GetConvolveAlgorithms(&algorithms) ",
     "Check failed: stream->parent()->GetConvolveAlgorithms(&algorithms)"),
    # chuanqi305/MobileNet-SSD#180: glog (Caffe)
    ("F0407 01:31:07.673615  5759 math_functions.cpp:250] Check failed: a <= b (0 vs. -1.19209e-07) ",
     "Check failed: a <= b (0 vs. -1.19209e-07)"),
    # homuler/MediaPipeUnityPlugin's wiki (Getting Started): glog's header with the year, TF_CHECK_OK's words the
    # record's only ones the prefilter knows
    ("F20220418 11:58:05.626176 230087 calculator_graph.cc:126] Non-OK-status: Initialize(config) status: NOT_FOUND: "
     "ValidatedGraphConfig Initialization failed.",
     "Non-OK-status: Initialize(config) status: NOT_FOUND: ValidatedGraphConfig Initialization failed."),
    # absl's header before its log is initialised (seconds since the epoch after `00:00:`) glued behind a progress
    # bar's last frame (synthetic: tqdm's bar, absl's prefix, TF_CHECK_OK's format filled in)
    ("  0%|          | 1/100 [00:01<02:37,  1.21s/it]F0000 00:00:1717141650.890307    9276 client.cc:487] "
     "Non-OK-status: status status: INTERNAL: device halted",
     "Non-OK-status: status status: INTERNAL: device halted"),
])
def test_a_fatal_record_is_the_processs_uncaught_failure(line: str, message: str) -> None:
    drafts = helpers.scan(ALL, [line], "application")
    assert [(d.kind, d.fields.get("exc_type"), d.fields.get("message")) for d in drafts] == [
        ("app.exception", tb.FATAL_LOG_CLASS, message)]


@pytest.mark.parametrize(("line", "message"), [
    # abseil's raw logger's failed check (absl/base/internal/raw_logging.cc: `[file : line] RAW: `, ABSL_RAW_CHECK's
    # `Check %s failed: %s`): a Ray worker's corrupted mutex (ray-project/ray#28716's abort, abseil's mutex.cc)
    ("[mutex.cc : 1908] RAW: Check (v & (kMuWait | kMuWrWait)) != kMuWrWait failed: Lock: Mutex corrupt: waiting "
     "writer with no waiters: 0x7fbdb40b1ff0",
     "Check (v & (kMuWait | kMuWrWait)) != kMuWrWait failed: Lock: Mutex corrupt: waiting writer with no waiters: "
     "0x7fbdb40b1ff0"),
    # ... behind Ray's tag for the worker that printed it (extract/prefix.py; not a colour code's `[m`)
    ("(RayTrainWorker pid=3900) [mutex.cc : 1908] RAW: Check (v & (kMuWait | kMuWrWait)) != kMuWrWait failed: Lock",
     "Check (v & (kMuWait | kMuWrWait)) != kMuWrWait failed: Lock"),
    # glog's RAW_CHECK behind its own header, and glog 0.6+'s header with the year (google/glog src/logging_unittest.cc
    # TEST(DeathRawCHECK) and TestSTREQ, as a run of it prints them)
    ("F00000000 00:00:00.000000 2128115 logging_unittest.cc:526] RAW: Check false failed: failure 1",
     "Check false failed: failure 1"),
    ("F20230424 13:28:15.469306 2128115 logging_unittest.cc:701] Check failed: 'static_cast<void*>(nullptr)' Must be "
     "non NULL", "Check failed: 'static_cast<void*>(nullptr)' Must be non NULL"),
    # glog's record behind a stamp the prefix layer leaves (a logger's, before the process's stderr line)
    ("2024-05-02 10:11:12,345 F0407 01:31:07.673615  5759 math_functions.cpp:250] Check failed: a <= b (0 vs. -1) ",
     "Check failed: a <= b (0 vs. -1)"),
])
def test_a_raw_or_dated_check_is_the_processs_fatal_check(line: str, message: str) -> None:
    drafts = helpers.scan(ALL, [line], "application")
    assert [(d.kind, d.fields.get("exc_type"), d.fields.get("message")) for d in drafts] == [
        ("app.exception", tb.FATAL_LOG_CLASS, message)]


@pytest.mark.parametrize("line", [
    # abseil's raw logger at another severity (it prints none): ray-project/ray#28791's signal handler, re-entered
    "[failure_signal_handler.cc : 331] RAW: Signal 11 raised at PC=0x2b1452d395a0 while already in "
    "AbslFailureSignalHandler()",
    # a raw record whose words start like a check but say no failure
    "[mutex.cc : 1234] RAW: Check the lock order of this thread",
    # glog 0.6+'s header with the year at a warning's severity
    "W20230424 13:28:15.469147 2128115 logging_unittest.cc:355] Check failed would be logged here",
    # a glog header quoted mid-word (no space, `]` or `:` before its F)
    "configF0407 01:31:07.673615  5759 math_functions.cpp:250] not a record",
])
def test_raw_records_of_other_severities_are_no_fatal_check(line: str) -> None:
    assert tb.fatal_log(line) is None
    assert all(d.fields.get("exc_type") != tb.FATAL_LOG_CLASS for d in helpers.scan(ALL, [line], "application"))


def test_the_abort_after_a_fatal_record_is_its_consequence() -> None:
    # openxla/xprof#1250: faulthandler reports the abort the CHECK caused; it is the runtime's, not a crash of its own
    lines = ["2025-02-19 10:36:59.486345: F external/org_tensorflow/tensorflow/core/profiler/utils/kernel_stats_utils"
             ".cc:339] Check failed: stats.is_op_tensor_core_eligible == kernel_report.is_op_tensor_core_eligible() "
             "(1 vs. 0)",
             "Fatal Python error: Aborted"]
    drafts = helpers.scan(ALL, lines, "application")
    assert [(d.kind, d.fields.get("by")) for d in drafts] == [("app.exception", None), ("process.signal", "runtime")]


@pytest.mark.parametrize("line", [
    # xprof's own warning (openxla/xprof#1250): glog's form at another severity, with the word `error`
    "W0219 10:36:53.961225 140124482418240 security_validator.py:60] In 3.0, this warning will become an error:",
    # rwth-i6/returnn#299: TensorFlow's dated form at INFO
    "2020-06-09 14:03:19.232834: I tensorflow/core/platform/cpu_feature_guard.cc:142] Your CPU supports instructions "
    "that this TensorFlow binary was not compiled to use: SSE4.1 SSE4.2 AVX",
    # google/paxml#77: an ERROR record, not a fatal one (nothing ends the process here)
    "2024-04-12 23:39:41.656900: E external/xla/xla/pjrt/distributed/client.cc:96] Coordination service agent in "
    "error status: DEADLINE_EXCEEDED: Deadline Exceeded",
])
def test_records_of_other_severities_are_no_fatal_record(line: str) -> None:
    assert tb.fatal_log(line) is None
    assert all(d.fields.get("exc_type") != tb.FATAL_LOG_CLASS for d in helpers.scan(ALL, [line], "application"))



@pytest.mark.parametrize("line", [
    # The lab's jax_sigkill_external capture (tests/lab/captured/jax_sigkill_external): rank 1 was kill -9'ed from
    # outside; ranks 0 and 2 end on this record.
    "F1203 16:40:05.603844   32524 client.h:80] Terminating process because the JAX distributed service detected "
    "fatal errors. This most likely indicates that another task died; see the other task logs for more details. "
    "Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: INTERNAL: "
    "Failed to disconnect from coordination service with status: INTERNAL: Shutdown barrier has failed.",
    # JAX 0.10.2 run here: process 1 of 2 given a coordinator address nothing listens on. JAX says the same words
    # whoever failed, so the record names no cause of its own, as any peer's failure.
    "F1203 18:09:24.197726   26828 client.h:80] Terminating process because the JAX distributed service detected "
    "fatal errors. This most likely indicates that another task died; see the other task logs for more details. "
    "Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: "
    "DEADLINE_EXCEEDED: Deadline Exceeded",
])
def test_a_fatal_record_that_says_another_task_died_names_no_cause(line: str) -> None:
    # The near misses are the records above that name a failed check of the process's own: app.exception. (The
    # second line holds none of the prefilter's words for a fatal record, so no extractor reads it at all.)
    drafts = helpers.scan(ALL, [line], "application")
    assert "app.exception" not in [d.kind for d in drafts]
    exc = tb.fatal_log(line)
    assert exc is not None
    assert [d.kind for d in tb.classify(line, exc, False, False)[0]] == ["nccl.remote_error"]


# ---------------------------------------------------------------- Go's logrus at its fatal level (then os.Exit(1))

_CRICTL_MSG = ('validate service connection: CRI v1 runtime API is not implemented for endpoint '
               '"unix:///run/containerd/containerd.sock": rpc error: code = Unimplemented desc = unknown service '
               'runtime.v1.RuntimeService')


@pytest.mark.parametrize("line", [
    # ondat/discoblocks#105: crictl's fatal record in its key=value form, behind containerd's CRI log prefix (its
    # message's quotes escaped, Go's %q)
    '2023-01-09T12:57:28.791778323Z stderr F time="2023-01-09T12:57:28Z" level=fatal msg="validate service '
    'connection: CRI v1 runtime API is not implemented for endpoint \\"unix:///run/containerd/containerd.sock\\": rpc '
    'error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService"',
    # kubernetes-sigs/cri-tools#1073: the same record in logrus's terminal form
    "FATA[0000] validate service connection: CRI v1 runtime API is not implemented for endpoint "
    '"unix:///run/containerd/containerd.sock": rpc error: code = Unimplemented desc = unknown service '
    "runtime.v1.RuntimeService",
])
def test_a_go_programs_fatal_record_is_its_uncaught_failure(line: str, make_bundle: BundleMaker) -> None:
    drafts = helpers.scan(ALL, [line], "application")
    assert [(d.kind, d.fields.get("exc_type"), d.fields.get("message")) for d in drafts] == [
        ("app.exception", tb.FATAL_LOG_CLASS, _CRICTL_MSG)]
    # a failed job's one line (a workload with no window: the record's own 2023 stamp stands). What crictl died of is
    # the endpoint's answer, gRPC's `unknown service runtime.v1.RuntimeService`: the node's containerd not serving the
    # CRI (catalog/platform.yaml `container_errors`, class node), which explains the program's fatal exit
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "t", "scheduler": "static", "nodes": ["node-001"],
                                                      "terminal_state": "FAILED"},
          "sources": [{"kind": "application", "path": "app/run.log"}]}
    v = Analyzer().analyze_path(str(make_bundle({"app/run.log": line + "\n"}, wl)))
    assert v.attributed_domain == "infrastructure" and v.root_cause is not None
    assert v.root_cause.category == "node.container"


@pytest.mark.parametrize("line", [
    # kubernetes-sigs/cri-tools#1041: the same program's ERROR records, after which it went on to the next endpoint
    'ERRO[0000] validate service connection: CRI v1 runtime API is not available for endpoint '
    '"unix:///var/run/dockershim.sock": rpc error: code = Unavailable desc = connection error',
    # logrus's key=value form at the error level (synthetic, the b35 DCGM exporter's words): no exit follows it
    'time="2022-07-20T01:54:12Z" level=error msg="Error watching fields: Feature not supported"',
    # a fatal level word inside another record's message (synthetic)
    'time="2022-07-20T01:54:12Z" level=info msg="next step: level=fatal handling is configured"',
])
def test_near_miss_other_logrus_levels_are_no_fatal_record(line: str) -> None:
    assert tb.fatal_log(line) is None
