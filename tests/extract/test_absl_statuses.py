"""absl / gRPC / TensorFlow status codes, JAX's backends, the TPU runtime and gRPC's resolver, through the real
extractors (catalog/exceptions.yaml `status_words`, the set-up rows of `exception_classes`).

Each mechanism is tested both ways: a line it must read and one that looks alike and must not. Lines are verbatim
from the public threads or files cited next to them, or a source's format string filled in (said so where it is).
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import status_word_table
from firstfault.extract import excclass
from firstfault.extract.base import Draft
from tests.extract import helpers
from tests.extract.helpers import alone, last_line

ALL = helpers.APP_AND_NCCL
TB = helpers.TB




def one(line: str) -> Draft:
    drafts = last_line(line)
    assert len(drafts) == 1, drafts
    return drafts[0]


# ------------------------------------------------------------------ the status codes, complete

# abseil/abseil-cpp absl/status/status.h `enum class StatusCode` (the same numbers as grpc::StatusCode), but kOk
ABSL_CODES = ("CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
              "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
              "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED")
# tensorflow/tensorflow tensorflow/python/framework/errors_impl.py `_CODE_TO_EXCEPTION_CLASS`
TF_CLASSES = {"CancelledError": "CANCELLED", "UnknownError": "UNKNOWN", "InvalidArgumentError": "INVALID_ARGUMENT",
              "DeadlineExceededError": "DEADLINE_EXCEEDED", "NotFoundError": "NOT_FOUND",
              "AlreadyExistsError": "ALREADY_EXISTS", "PermissionDeniedError": "PERMISSION_DENIED",
              "UnauthenticatedError": "UNAUTHENTICATED", "ResourceExhaustedError": "RESOURCE_EXHAUSTED",
              "FailedPreconditionError": "FAILED_PRECONDITION", "AbortedError": "ABORTED",
              "OutOfRangeError": "OUT_OF_RANGE", "UnimplementedError": "UNIMPLEMENTED", "InternalError": "INTERNAL",
              "UnavailableError": "UNAVAILABLE", "DataLossError": "DATA_LOSS"}


def test_every_status_code_but_ok_is_a_row() -> None:
    assert sorted(status_word_table()) == sorted(ABSL_CODES)


def test_every_tensorflow_class_stands_for_its_code() -> None:
    for cls, word in TF_CLASSES.items():
        row = excclass.class_row(f"tensorflow.python.framework.errors_impl.{cls}", cls, "x")
        assert row is not None, cls
        if cls == "CancelledError":
            assert row.family == "envelope"  # asyncio's row decides, as the CANCELLED word would
        elif cls == "ResourceExhaustedError":
            assert (row.family, row.status) == ("accelerator_oom", word)  # its own row: TF's allocator OOM
        else:
            assert (row.family, row.status) == ("status", word), cls


@pytest.mark.parametrize(("message", "family"), [
    # TensorFlow 1.x's spellings (tensorflow/core/lib/core/status.cc, Status::ToString; messages synthetic)
    ("Out of range: End of sequence", "exception"),
    ("Data loss: corrupted record at 12", "exception"),
    ("Unimplemented: op not supported", "exception"),
    ("Already exists: /tmp/x", "exception"),
    ("Unauthenticated: no credentials", "exception"),
    ("Deadline exceeded: barrier", "timeout"),
    # absl's spelling
    ("UNAUTHENTICATED: Request had invalid authentication credentials.", "exception"),
    ("DATA_LOSS: Checksum mismatch", "exception"),
])
def test_each_spelling_of_a_code_heads_a_message(message: str, family: str) -> None:
    assert excclass.status_family(message) == family


def test_strerrors_are_no_status_spelling() -> None:
    # `Permission denied` is TensorFlow 1.x's PERMISSION_DENIED and strerror(EACCES) too: the errno table reads it
    assert excclass.status_family("Permission denied: /data/x") is None
    assert "Permission denied" not in status_word_table()["PERMISSION_DENIED"].texts


def test_a_tensorflow_class_of_a_symptoms_code_is_that_symptom() -> None:
    # yahoo/TensorFlowOnSpark#607: the collective's peer closed its socket (the message's head, cut)
    d = one("tensorflow.python.framework.errors_impl.UnavailableError: Collective ops is aborted by: Socket closed")
    assert d.kind == "nccl.remote_error"


def test_a_tensorflow_class_of_the_workloads_code_is_its_exception() -> None:
    # (the near miss) a corrupt record is the data's, the workload's exception: not the file system, no symptom
    # (TensorFlow's DataLossError message as tf.data prints it, synthetic)
    d = one("tensorflow.python.framework.errors_impl.DataLossError: corrupted record at 12 [Op:IteratorGetNext]")
    assert (d.kind, d.fields["exc_type"]) == ("app.exception", "DataLossError")


def test_a_collectives_abort_at_the_end_of_its_input_is_no_symptom() -> None:
    # tensorflow/tensorflow#22326: the collective executor logs the input's end (OUT_OF_RANGE), no peer failed
    line = ("2018-09-19 20:50:08.294697: W tensorflow/core/common_runtime/base_collective_executor.cc:203] "
            "BaseCollectiveExecutor::StartAbort Out of range: End of sequence")
    assert excclass.logged_status(line) == "exception"
    assert alone(line) == []


# ------------------------------------------------------------------ a TPU another process holds


@pytest.mark.parametrize("line", [
    # sgl-project/sglang-jax#857: a second process of the job's own asked for the TPU
    "RuntimeError: Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by process with pid "
    "2718466. Not attempting to load libtpu.so in this process. (set JAX_PLATFORMS='' to automatically choose an "
    "available backend)",
    # AI-Hypercomputer/jetstream-pytorch#163: the head process took every TPU, each worker says so (the pid elided)
    "RuntimeError: Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by process with pid .. ",
    # jax-ml/jax#13260 (its message, the pid filled in): JAX's own class, ABORTED naming no collective
    "jaxlib.xla_extension.XlaRuntimeError: ABORTED: The TPU is already in use by process with pid 176028. Not "
    "attempting to load libtpu.so in this process.",
    # marin-community/marin's Iris worker tests (its #4783) quoting a TPU worker's stderr: the chip's VFIO device held
    "jax.errors.JaxRuntimeError: UNKNOWN: TPU initialization failed: open(/dev/vfio/0): Device or resource busy: "
    "Device or resource busy; Couldn't open iommu group /dev/vfio/0",
])
def test_a_tpu_another_process_holds_is_the_jobs_set_up(line: str) -> None:
    d = one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True


def test_an_aborted_collective_is_still_a_symptom() -> None:
    # (the near miss) ABORTED that names no TPU: a collective given up after another failure (synthetic message)
    assert one("jaxlib.xla_extension.XlaRuntimeError: ABORTED: Collective operation aborted").kind == \
        "nccl.communicator_aborted"


# ------------------------------------------------------------------ JAX's backends


@pytest.mark.parametrize("line", [
    # Joy-Lunkad/toy-startup-script-error (README): the job asked for the TPU and its driver would not start
    "RuntimeError: Unable to initialize backend 'tpu': FAILED_PRECONDITION: Couldn't mmap: Resource temporarily "
    "unavailable.; Unable to create DeviceInfo, config: device_path: #011 \"/dev/accel0\" mode: KERNEL "
    "debug_data_directory: \"\" dump_anomalies_only: true crash_in_debug_dump: false allow_core_dump: true; could not "
    "create driver instance (set JAX_PLATFORMS='' to automatically choose an available backend)",
    # openai/grok#40 (its title): a backend the platform does not have
    "RuntimeError: Unable to initialize backend 'tpu': UNIMPLEMENTED: LoadPjrtPlugin is not implemented on windows "
    "yet. (set JAX_PLATFORMS='' to automatically choose an available backend)",
    # jax-ml/jax jax/_src/xla_bridge.py `canonicalize_platform`, its format string filled in
    "RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. "
    "Platforms present are: cpu",
    # jax-ml/jax jax/_src/xla_bridge.py `_get_backend_uncached`, its format string filled in
    "RuntimeError: Backend 'cuda' failed to initialize: FAILED_PRECONDITION: No visible GPU devices.. Available "
    "backends are ['cpu']",
])
def test_a_backend_the_job_asked_for_that_did_not_start_is_its_set_up(line: str) -> None:
    d = one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True
    assert [x.fields.get("setup") for x in alone(line)] == [True]  # a lone line too


@pytest.mark.parametrize("line", [
    # google-deepmind/alphafold3#656 ("can be safely ignored"): the TPU nobody asked for, logged at INFO (absl)
    "I0403 15:25:16.346253 140180234358912 xla_bridge.py:897] Unable to initialize backend 'tpu': INTERNAL: Failed "
    "to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory",
    # jax-ml/jax#22070: Python's logging at INFO; JAX falls back to the CPU
    "INFO:2024-06-25 00:34:55,142:jax._src.xla_bridge:889: Unable to initialize backend 'tpu': ABORTED: The TPU is "
    "already in use by process with pid 176028. Not attempting to load libtpu.so in this process.",
    # kscalelabs/ksim-gym#44: the same notice through another logger's format
    "  INFO  2025-05-20 13:08:38 [jax._src.xla_bridge] Unable to initialize backend 'tpu': INTERNAL: Failed to open "
    "libtpu.so: libtpu.so: cannot open shared object file: No such file or directory",
])
def test_a_backend_nobody_asked_for_is_a_notice(line: str) -> None:
    assert alone(line) == []


def test_a_backend_whose_peers_did_not_answer_is_their_symptom() -> None:
    # A TPU slice's start waits for its other hosts (a Chinese runbook of a v7 pod quotes it on two lines; joined
    # here, the peer's address filled in): the status after JAX's words decides, a timeout of another's
    line = ("RuntimeError: Unable to initialize backend 'tpu': DEADLINE_EXCEEDED: TPU initialization failed: Failed "
            "to connect to 10.0.0.2:8471")
    assert one(line).kind == "nccl.timeout"
    assert excclass.message_status(line.split(": ", 1)[1]) == "timeout"


# ------------------------------------------------------------------ gRPC's resolver


@pytest.mark.parametrize("line", [
    # a public nv-ingest client run's output (the absl log records gRPC prints for an empty target, `dns:///`)
    "E0000 00:00:1774535954.976942 2192153 dns_resolver_ares.cc:358] no server name supplied in dns URI",
    "E0000 00:00:1774535954.977023 2192153 legacy_channel.cc:89] channel stack builder failed: UNKNOWN: the target "
    "uri is not valid: dns:///",
    # jax-ml/jax#10218 (a TPU pod with jax 0.3.5), verbatim: gRPC's glog header padded to its column, and gRPC core's
    # JSON error of that time with the words as its `description`
    "E0410 21:04:57.403257842   30715 f758.cc:310]                no server name supplied in dns URI",
    'E0410 21:04:57.403295131   30715 f872.cc:77]                 channel stack builder failed: {"created":"@164962'
    '4697.403284903","description":"the target uri is not valid: dns:","file":"f814.cc","file_line":1090}',
])
def test_a_target_grpc_cannot_resolve_is_the_jobs_set_up(line: str) -> None:
    drafts = alone(line)
    assert [(d.kind, d.fields.get("setup"), d.fields.get("terminal")) for d in drafts] == [
        ("app.exception", True, True)]  # logged: weak, the stream's last word only


@pytest.mark.parametrize("line", [
    # grpc/grpc src/core/resolver/dns/native/dns_resolver.cc: the source that prints it, quoted
    '    gpr_log(GPR_ERROR, "no server name supplied in dns URI");',
    # a person's words about it (synthetic)
    "the error no server name supplied in dns URI went away after setting the coordinator address",
    # a JSON error whose description only begins with the words (synthetic): the message must end there
    '{"created":"@1649624697.4","description":"the target uri is not valid: dns: see the docs for the form"}',
])
def test_the_resolvers_words_in_code_or_prose_are_nothing(line: str) -> None:
    assert alone(line) == []


# ------------------------------------------------------------------ cuDNN's handle


def test_a_cudnn_handle_without_memory_is_the_accelerators_oom() -> None:
    # A blog of a TensorFlow game agent (GPU memory another program held) quotes the words; TensorFlow's glog prefix
    # (tensorflow/stream_executor/cuda/cuda_dnn.cc `LOG(ERROR) << "Could not create cudnn handle: "`) filled in
    line = ("2020-05-17 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create cudnn "
            "handle: CUDNN_STATUS_ALLOC_FAILED")
    assert [d.kind for d in alone(line)] == ["app.cuda_oom"]


def test_a_cudnn_handle_that_failed_otherwise_names_no_memory() -> None:
    # (the near miss) CUDNN_STATUS_INTERNAL_ERROR: cuDNN's word for an internal operation that failed, no allocation
    # named; TensorFlow's and XLA's own code (cuda_dnn.cc) print the free memory beside it and suspect the driver for
    # NOT_INITIALIZED, so the words decide neither memory nor the driver: the framework's call failed, the job's own
    # failure (catalog/cuda.yaml `cudnn_statuses`, class other), weak and only as its stream's last word.
    # (a public project's comment quotes the line, tensorflow/stream_executor/cuda/cuda_dnn.cc:334]; date filled in)
    line = ("2019-01-01 00:00:00.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:334] Could not create cudnn "
            "handle: CUDNN_STATUS_INTERNAL_ERROR")
    assert [(d.kind, d.fields.get("terminal")) for d in alone(line)] == [("app.exception", True)]
    # ... and the same record at warning level (TensorFlow's `W`) is no failure
    assert alone(line.replace(": E tensorflow", ": W tensorflow")) == []
    # pytorch/xla#6771: XLA's record of the free memory beside it, here a quarter of the GPU free: no memory exhausted
    assert alone("2024-03-25 01:37:01.894809: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:540] Memory usage: "
                 "6073221120 bytes free, 25438126080 bytes total.") == []


@pytest.mark.parametrize(("line", "kind", "error"), [
    # PyTorch's cuDNN check (`cuDNN error: ` + the status's name), verbatim from chenyuntc/pytorch-best-practice#12
    # (a GPU older than the build's cuDNN supports), raised: the job's build for this GPU
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH", "app.cuda_error", "config"),
    # ... a kernel of cuDNN that failed to run, verbatim from jianweif/OptimalGradCheckpointing#5: a CUDA error of
    # the launch-failure class, a symptom as CUDA's `unspecified launch failure` is (what made it fail is said
    # elsewhere: an illegal access, a GPU fault)
    ("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED", "app.cuda_error", "launch_failure"),
    # ... and a status of no CUDA class (the call's arguments: the workload's own) stays the workload's exception
    # (PyTorch's own words: ATen's cuDNN convolution appends the non-contiguous hint to NOT_SUPPORTED)
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous "
     "input.", "app.exception", None),
])
def test_a_raised_cudnn_status_reads_by_its_class(line: str, kind: str, error: str | None) -> None:
    [d] = last_line(line)
    assert (d.kind, d.fields.get("error")) == (kind, error)


def test_caffes_fatal_check_of_a_cudnn_status_reads_by_its_class() -> None:
    # rbgirshick/fast-rcnn#44, verbatim (a Tesla M2090, compute capability 2.0): the job's build for this GPU
    line = ("F0817 22:53:22.694056 24820 cudnn_conv_layer.cpp:32] Check failed: status == CUDNN_STATUS_SUCCESS "
            "(6 vs. 0)  CUDNN_STATUS_ARCH_MISMATCH")
    assert [(d.kind, d.fields.get("error")) for d in alone(line)] == [("app.cuda_error", "config")]


def test_near_miss_a_word_that_only_looks_like_a_status_is_none() -> None:
    # CUDNN_STATUS_SUCCESS is no failure and no row; a status of no table (synthetic) names nothing either
    assert alone("2019-01-01 00:00:00.000000: E cuda_dnn.cc:1] cudnnCreate returned CUDNN_STATUS_SUCCESS") == []
    assert alone("2019-01-01 00:00:00.000000: E cuda_dnn.cc:1] cudnnCreate returned CUDNN_STATUS_MADE_UP") == []


# ------------------------------------------------------------------ the task the coordination service saw fail

# jax-ml/jax#23599: the coordination service lost a task's heartbeat
HEARTBEAT = ("2024-10-09 15:47:38.568412: E external/xla/xla/tsl/distributed_runtime/coordination/coordination_service"
             ".cc:1170] /job:jax_worker/replica:0/task:0 has been set to ERROR in coordination service: UNAVAILABLE: "
             "Task /job:jax_worker/replica:0/task:0 heartbeat timeout. This indicates that the remote task has failed, "
             "got preempted, or crashed unexpectedly. Check the task logs for an earlier error to debug further. "
             "[type.googleapis.com/tensorflow.CoordinationServiceError='']")


def test_the_task_that_stopped_heartbeating_is_named_on_its_symptom() -> None:
    [d] = alone(HEARTBEAT)
    assert (d.kind, d.fields.get("failed_task")) == ("nccl.remote_error", 0)


@pytest.mark.parametrize(("line", "kind", "task"), [
    # openxla/xla coordination_service.cc CheckHeartbeatTimeout's status, raised to a task (format string filled in)
    ("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: Task /job:jax_worker/replica:0/task:3 heartbeat timeout. "
     "This indicates that the remote task has failed, got preempted, or crashed unexpectedly. Check the task logs for "
     "an earlier error or scheduler events (e.g. preemption, eviction) to debug further.", "nccl.remote_error", 3),
    # openxla/xla coordination_service.cc RegisterTaskAsync (format string filled in): the task came back restarted
    ("jaxlib.xla_extension.XlaRuntimeError: ABORTED: /job:jax_worker/replica:0/task:12 unexpectedly tried to connect "
     "with a different incarnation. It has likely restarted.", "nccl.communicator_aborted", 12),
])
def test_a_raised_status_that_names_the_failed_task(line: str, kind: str, task: int) -> None:
    d = one(line)
    assert (d.kind, d.fields.get("failed_task")) == (kind, task)


@pytest.mark.parametrize("line", [
    # tests/lab/captured/jax_sigkill_external's record: names no task (another task died, JAX cannot say which)
    "F1203 16:40:05.603844   32524 client.h:80] Terminating process because the JAX distributed service detected "
    "fatal errors. This most likely indicates that another task died; see the other task logs for more details. "
    "Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: INTERNAL: "
    "Failed to disconnect from coordination service with status: INTERNAL: Shutdown barrier has failed.",
    # openxla/xla coordination_service.cc CheckBarrierTimeout, a line of its message (format string filled in): the
    # barrier's first task is no failed one, and the timed-out names follow on later lines
    "The first task at the barrier: /job:jax_worker/replica:0/task:13. Some timed out task names:",
    # ayaka14732/llama-2-jax#20: the same barrier in JAX's older words, no task on the line
    "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. "
    "Timed out task names:",
])
def test_a_task_named_otherwise_is_no_failed_task(line: str) -> None:
    assert all("failed_task" not in d.fields for d in alone(line))


# ------------------------------------------------------------------ glog / absl / TensorFlow ERROR records


@pytest.mark.parametrize(("line", "kind"), [
    # google/paxml#77: the PjRt distributed client's agent reports the coordination error it got
    ("2024-04-12 23:39:41.656900: E external/xla/xla/pjrt/distributed/client.cc:96] Coordination service agent in "
     "error status: DEADLINE_EXCEEDED: Deadline Exceeded", "nccl.timeout"),
    # XLA's `LOG(ERROR) << "Execution of replica " << i << " failed: " << status` (google-deepmind/alphafold#194's
    # title quotes its words) in absl's record form, a peer's status filled in
    ("E0000 00:00:1712345678.123456  12345 pjrt_stream_executor_client.cc:2985] Execution of replica 0 failed: "
     "UNAVAILABLE: Socket closed", "nccl.remote_error"),
])
def test_an_error_record_with_a_status_of_anothers_failure_is_that_symptom(line: str, kind: str) -> None:
    assert excclass.error_record(line)
    assert [d.kind for d in alone(line)] == [kind]


@pytest.mark.parametrize("line", [
    # pytorch/xla#3975 (its grpc_error_string cut): a WARNING record, the RPC retried: W never decides
    '  2022-09-07 07:32:12.549446: W tensorflow/core/distributed_runtime/rpc/grpc_remote_master.cc:157] RPC failed '
    'with status = "UNAVAILABLE: Socket closed" and grpc_error_string = "{\\"grpc_status\\":14}", maybe retrying the '
    'RPC',
    # the same absl record at INFO (synthetic)
    "I0000 00:00:1712345678.123456  12345 pjrt_stream_executor_client.cc:2985] Execution of replica 0 failed: "
    "UNAVAILABLE: Socket closed",
    # google-deepmind/alphafold#194 (its title in TensorFlow's record form, date filled in): an ERROR record whose
    # status is the workload's own (INTERNAL) names no other's failure, and a logged record is no exception
    "2021-09-30 07:10:00.000000: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/pjrt_stream_executor_client"
    ".cc:2085] Execution of replica 0 failed: Internal: CUBLAS_STATUS_EXECUTION_FAILED",
    # a status word outside any record's head (a person's words, synthetic)
    "we saw E0000 records like 'Execution of replica 0 failed: UNAVAILABLE: Socket closed' before",
])
def test_other_records_decide_nothing(line: str) -> None:
    assert alone(line) == []


# aws-neuron/aws-neuron-sdk, torch-neuronx release notes (2.9.0): PyTorch/XLA's fatal record of a failed TF_CHECK_OK
NON_OK = ("2023-03-08 21:18:27.040863: F tensorflow/compiler/xla/xla_client/xrt_computation_client.cc:476] "
          "Non-OK-status: session->session()->Run(session_work->feed_inputs, session_work->outputs_handles, &outputs) "
          "status: {}")


def test_a_fatal_records_check_ok_status_of_a_peer_is_that_symptom() -> None:
    # the same record with a peer's status after TF_CHECK_OK's words (its status filled in): not the process's own
    line = NON_OK.format("UNAVAILABLE: Socket closed")
    assert [d.kind for d in alone(line)] == ["nccl.remote_error"]


def test_a_fatal_records_check_ok_status_of_its_own_is_its_failure() -> None:
    # (the near miss) the release note's own line: UNKNOWN is the process's own error, the fatal record its exception
    d = alone(NON_OK.format("UNKNOWN: Stream removed"))
    assert [(x.kind, x.fields.get("exc_type")) for x in d] == [("app.exception", "FATAL")]


def test_an_error_record_without_a_status_is_nothing() -> None:
    # the same release note: gRPC's own ERROR record about pings (no status word) is no status's symptom; it is the
    # keepalive policy the server refused the client's pings under, the job's set-up (catalog/exceptions.yaml, gRPC's
    # own words; tests/extract/test_grpc_words.py); then TensorFlow's WARNING of a retry (its grpc_error_string cut)
    assert [(d.kind, d.fields.get("setup")) for d in alone(
        'E0302 01:10:20.511231294  138645 chttp2_transport.cc:1098]   Received a GOAWAY with error code '
        'ENHANCE_YOUR_CALM and debug data equal to "too_many_pings"')] == [("app.exception", True)]
    assert alone('2023-03-02 01:10:20.511500: W tensorflow/core/distributed_runtime/rpc/grpc_remote_master.cc:157] RPC '
                 'failed with status = "UNAVAILABLE: Too many pings" and grpc_error_string = "{}", maybe retrying the '
                 'RPC') == []


# ------------------------------------------------------------------ XLA's compiler


@pytest.mark.parametrize("line", [
    # Physical-Intelligence/openpi#419 (its title, JAX's module filled in): the environment's ptxas is too old
    "jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: ptxas too old. Falling back to the driver to compile.",
    # tensorflow/models#9847: TensorFlow's XLA JIT finds no ptxas in the environment (the session's re-raise)
    "tensorflow.python.framework.errors_impl.NotFoundError: ./bin/ptxas not found",
])
def test_a_compiler_toolchain_the_environment_lacks_is_the_set_up(line: str) -> None:
    d = one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True


def test_a_compile_that_failed_on_the_program_is_the_workloads_exception() -> None:
    # (the near miss) openxla/xla#4970's record, as JAX raises its status: ptxas refused the PTX it was given
    d = one("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: "
            "custom call 'xla.gpu.custom_call' failed: ptxas exited with non-zero error code 65280, output: ptxas "
            "fatal: PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_90'")
    assert (d.kind, d.fields.get("setup")) == ("app.exception", None)


# ------------------------------------------------------------------ RESOURCE_EXHAUSTED: memory or not


def test_resource_exhausted_in_the_allocators_words_is_the_accelerators_memory() -> None:
    # jax-ml/jax#5733 (TensorFlow 1.x's spelling of the code, XLA's allocator's words)
    d = one("RuntimeError: Resource exhausted: Out of memory while trying to allocate 4398046511104 bytes.: while "
            "running replica 0 and partition 0 of a replicated computation (other replicas may have failed as well).")
    assert d.kind == "app.cuda_oom"


def test_resource_exhausted_over_grpcs_message_limit_is_no_memory() -> None:
    # (the near miss) ray-project/lightgbm_ray#28: gRPC's size limit on a message says RESOURCE_EXHAUSTED too
    lines = [TB, "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:",
             "\tstatus = StatusCode.RESOURCE_EXHAUSTED",
             '\tdetails = "Received message larger than max (210771146 vs. 104857600)"']
    assert all(d.kind != "app.cuda_oom" for d in helpers.scan(ALL, lines, "application"))


# tests/lab/captured/jax_sigkill_external (JAX 0.10.2, run in the lab): the coordination service's record of the
# barrier it failed for the task in error, its status as JAX raises one (the class filled in)
BARRIER_FOR_TASK = ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Barrier failed because: task is set to ERROR: "
                    "UNAVAILABLE: Task 1 heartbeat timeout. This indicates that the remote task has failed, got "
                    "preempted, or crashed unexpectedly. Check the task logs for an earlier error or scheduler events "
                    "(e.g. preemption, eviction) to debug further.")


def test_a_barrier_failed_for_a_task_in_error_is_that_tasks_symptom() -> None:
    d = one(BARRIER_FOR_TASK)
    assert (d.kind, d.fields.get("failed_task")) == ("nccl.remote_error", 1)


def test_a_status_of_anothers_failure_at_the_head_still_decides() -> None:
    # (the near miss) the lead's inner status is read only under a head of the workload's own family (synthetic)
    assert excclass.message_status("UNAVAILABLE: Barrier failed because: task is set to ERROR: INTERNAL: x") == "peer"
    assert excclass.message_status("INTERNAL: Barrier failed because: the service is shutting down") == "exception"


def test_a_status_line_that_goes_on_an_error_record_is_read_as_its_message() -> None:
    # tests/lab/captured/jax_sigkill_external, rank 0: the coordination service's ERROR record `Shutdown barrier in
    # coordination service has failed:` goes on in this line, the status alone
    line = ("INTERNAL: Barrier failed because: task is set to ERROR: UNAVAILABLE: Task 1 heartbeat timeout. This "
            "indicates that the remote task has failed, got preempted, or crashed unexpectedly. Check the task logs "
            "for an earlier error or scheduler events (e.g. preemption, eviction) to debug further. "
            "[type.googleapis.com/tensorflow.CoordinationServiceError='']")
    assert [(d.kind, d.fields.get("failed_task")) for d in alone(line)] == [("nccl.remote_error", 1)]


@pytest.mark.parametrize("line", [
    # the same capture: absl's notice at start-up, a level word where a status word would stand
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    # a status line of the workload's own family (synthetic): no exception around it, nothing decided
    "INTERNAL: Failed to execute XLA Runtime executable: run time error",
    # a logger's level before the status word (synthetic): not a status line of its own
    "ERROR: UNAVAILABLE: Socket closed",
])
def test_other_lines_with_a_capital_word_at_their_head_are_no_status_line(line: str) -> None:
    assert alone(line) == []


def test_a_tensorflow_jobs_task_is_no_rank() -> None:
    # (the near miss) TensorFlow's coordination service numbers each job's tasks apart (`worker`, `ps`, `chief`): the
    # same words about `/job:worker/replica:0/task:3` (CheckHeartbeatTimeout's format filled in) name no rank
    d = one("tensorflow.python.framework.errors_impl.UnavailableError: Task /job:worker/replica:0/task:3 heartbeat "
            "timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly.")
    assert d.kind == "nccl.remote_error" and "failed_task" not in d.fields


@pytest.mark.parametrize(("line", "kind"), [
    # abseil/abseil-cpp absl/status/statusor.cc BadStatusOrAccess::what(), its format filled in with gRPC's words: a
    # status read from an empty StatusOr is still the status it holds
    ("RuntimeError: Bad StatusOr access: DEADLINE_EXCEEDED: Deadline Exceeded", "nccl.timeout"),
    # pytorch/xla#9524 (an existing accelerator-OOM case): the status it holds is read by the memory table first
    ("RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
     "memory space vmem.", "app.cuda_oom"),
])
def test_a_status_read_from_an_empty_statusor_is_that_status(line: str, kind: str) -> None:
    assert one(line).kind == kind


def test_a_tpu_slice_started_on_fewer_hosts_than_it_has_is_the_set_up() -> None:
    # Lightning-AI/pytorch-lightning#20244 (its title): the job launched on one host of a four-host slice
    d = one("RuntimeError: Bad StatusOr access: UNKNOWN: TPU initialization failed: Invalid "
            "--2a886c8_slice_builder_worker_addresses specified. Expected 4 worker addresses, got 1.")
    assert d.kind == "app.exception" and d.fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # (the near miss) another TPU start that failed with the workload's own status (UNKNOWN; synthetic message)
    "RuntimeError: Bad StatusOr access: UNKNOWN: TPU initialization failed: internal error in the runtime",
    # pytorch/xla#866: TensorFlow's older words for it, in a fatal record, an argument the program gave
    "2019-07-30 21:43:47.485270: F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead "
    "of handling error Invalid argument: LiteralProto has no shape",
])
def test_a_statusor_holding_the_workloads_own_status_is_its_failure(line: str) -> None:
    assert [d.kind for d in alone(line)] == ["app.exception"]


# ------------------------------------------------------------------ a TPU program's load, and gcloud's report


def test_a_program_that_did_not_fit_the_tpus_memory_is_the_accelerators_oom() -> None:
    # a public TPU experiment log (its `text` block, verbatim): XLA's runtime error 0101, a program that did not fit
    # the chip's HBM (tensorflow/tensorflow third_party/xla/docs/errors/error_0101.md), the status logged alone; and
    # the same words where a post stops before the free memory
    line = ("RESOURCE_EXHAUSTED: Error loading program 'jit_train_step': Attempting to reserve 26.25G at the bottom of "
            "memory. That was not possible. There are 25.52G free, 0B reserved, and 25.52G reservable.")
    assert [d.kind for d in alone(line)] == ["app.cuda_oom"]
    assert [d.kind for d in alone(line[:line.index(" There are")])] == ["app.cuda_oom"]


@pytest.mark.parametrize("line", [
    # googlegenomics/cloudml-examples#5 (verbatim): AI Platform refusing a prediction job whose model is over its size
    "ERROR: (gcloud.ml-engine.jobs.submit.prediction) FAILED_PRECONDITION: Field: uri Error: The total size of files "
    "in gs://gbsc-gcp-project-mvp-cloudml/models/1000-genomes-super-population/export/Servo/1495692639 is 440979953 "
    "bytes, which exceeds the allowed maximum of 262144000 bytes",
    # a public note of a team's Vertex AI runs (verbatim): a machine type the region does not offer
    'ERROR: (gcloud.ai.custom-jobs.create) INVALID_ARGUMENT: Machine type "a2-highgpu-1g" is not supported.',
])
def test_gclouds_report_of_a_request_the_api_refused_is_the_jobs_set_up(line: str) -> None:
    [d] = alone(line)
    assert (d.kind, d.fields.get("setup")) == ("app.exception", True)


@pytest.mark.parametrize("line", [
    # the service failing on its own side (gcloud's format, the status and message filled in): no set-up of the job's
    "ERROR: (gcloud.compute.tpus.tpu-vm.create) INTERNAL: An internal error has occurred (abc123).",
    # a request's status with no gcloud report before it (the near miss's words, the command's prefix left out)
    'INVALID_ARGUMENT: Machine type "a2-highgpu-1g" is not supported.',
    # another program's `ERROR: (...)` before a status (synthetic)
    'ERROR: (mytool.submit) INVALID_ARGUMENT: Machine type "a2-highgpu-1g" is not supported.',
])
def test_what_is_no_request_gcloud_reports_refused_is_not_the_set_up(line: str) -> None:
    assert [d for d in alone(line) if d.fields.get("setup")] == []


@pytest.mark.parametrize("lines", [
    # Compute Engine refusing a GPU VM left at the default live-migration policy, in each client's words: Go's
    # (cloud-barista/cb-spider#1125), gcloud's under `Could not fetch resource:` (loft-sh/devpod#973, verbatim)
    ["googleapi: Error 400: Instances with guest accelerators do not support live migration., badRequest"],
    ["ERROR: (gcloud.compute.instances.create) Could not fetch resource:",
     " - Instances with guest accelerators do not support live migration."],
])
def test_a_gpu_vm_refused_live_migration_is_the_requests_set_up(lines: list[str]) -> None:
    from tests.extract.helpers import events

    assert [(e.kind, e.fields.get("setup")) for e in events(lines)] == [("app.exception", True)]


@pytest.mark.parametrize("line", [
    # the API's answer with another message: no set-up of this row's (the object store's reading keeps it the
    # program's request)
    "googleapi: Error 400: Invalid value for field 'resource.name'., invalid",
    # documentation prose about the policy that does not say the request was refused
    "GPU instances cannot live migrate; set onHostMaintenance to TERMINATE.",
])
def test_near_miss_other_refusals_and_prose_are_not_the_live_migration_row(line: str) -> None:
    from tests.extract.helpers import events

    assert [e for e in events([line]) if e.fields.get("setup")] == []
