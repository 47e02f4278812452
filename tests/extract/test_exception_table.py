"""The exception table (catalog/exceptions.yaml, extract/excclass.py) read through the traceback model.

Each mechanism is tested both ways: a line it must read and one that looks
alike and must not. Lines are verbatim from the public threads cited next to
them, or the real output of the software named, run here (`run here`).
Each is fed as the last line of a traceback (the header first), the way the
scanner feeds it; tests/extract/test_lone_exception.py feeds them alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


# ------------------------------------------------------------------ object stores


@pytest.mark.parametrize(("line", "code"), [
    # ray-project/deltacat#51
    ("botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the CompleteMultipartUpload "
     "operation", "SlowDown"),
    # mosaicml/composer#3543: a checkpoint upload that exhausted its retries
    ("boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/tmpn7sa44l2/26aecfcf-aa70-4385-951a-0ab28f00bf8c "
     "to data-force-one-datasets/mosaicml-internal-checkpoints/jacob/lora/atnmlp-r16-lr0.0001-mlp-ep-4-a-32-sd-17/"
     "ep1-ba193-rank0.pt: An error occurred (SlowDown) when calling the CreateMultipartUpload operation (reached max "
     "retries: 4): Please reduce your request rate.", "SlowDown"),
    # ssl-hep/ServiceX#958: a Ceph object store overwhelmed, through MinIO
    ("minio.error.S3Error: S3 operation failed; code: SlowDown, message: None, resource: None, request_id: "
     "tx0000032ac6ddfe2121a06-0067943977-aeca260-af-object-store, host_id: aeca260-af-object-store-af-object-store",
     "SlowDown"),
    # GoogleCloudPlatform/python-docs-samples#4033: GCS's rate limit (the class is the code, the message its status)
    ("google.api_core.exceptions.TooManyRequests: 429 PATCH https://storage.googleapis.com/storage/v1/b/storage-"
     "snippets-test-a8fbc25f-3ad2-467c-8fda-3421552f077a?projection=full: The project exceeded the rate limit for "
     "creating and deleting buckets.", "429"),
])
def test_an_object_stores_own_errors_are_storage(line: str, code: str) -> None:
    d = one(line)
    assert d.kind == "storage.error"
    helpers.assert_fields(d, {"fs": "object_store", "store_code": code})


@pytest.mark.parametrize(("line", "code"), [
    # minio/minio-py#1150: a key the job named that is not in the bucket
    ("minio.error.NoSuchKey: NoSuchKey: message: The specified key does not exist.", "NoSuchKey"),
])
def test_a_key_the_job_named_wrong_is_the_workloads(line: str, code: str) -> None:
    d = one(line)
    assert d.kind == "app.exception"
    helpers.assert_fields(d, {"store_code": code, "exc_type": "NoSuchKey"})


@pytest.mark.parametrize("line", [
    # urllib3/connectionpool.py `_raise_timeout` (`Read timed out. (read timeout=%s)`) as requests raises it: a
    # connection the store took, then left unanswered
    "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='my-bucket.s3.us-west-2.amazonaws.com', port=443): Read "
    "timed out. (read timeout=60)",
    # tensorflow/datasets#2187: re-raised by a pipeline, the store's endpoint in the message, the connection timed out
    "RuntimeError: requests.exceptions.ConnectionError: HTTPSConnectionPool(host='commoncrawl.s3.amazonaws.com', "
    "port=443): Max retries exceeded with url: /crawl-data/CC-MAIN-2019-18/segments/1555578530176.6/wet/"
    "CC-MAIN-20190421040427-20190421062427-00300.warc.wet.gz (Caused by NewConnectionError('<urllib3.connection."
    "HTTPSConnection object at 0x7f1dcd61ba90>: Failed to establish a new connection: [Errno 110] Connection timed "
    "out')) [while running 'Map(download_url)']",
])
def test_any_client_that_names_an_object_stores_endpoint(line: str) -> None:
    d = one(line)
    assert d.kind == "storage.error" and d.fields["fs"] == "object_store" and "store_code" not in d.fields


@pytest.mark.parametrize("line", [
    # rh-aiservices-bu/jumpstart-library#13: requests, to an S3 endpoint, out of retries
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='public-license-plate-dataset.s3.ap-south-1."
    "amazonaws.com', port=443): Max retries exceeded with url: /0.png (Caused by NewConnectionError('<urllib3."
    "connection.HTTPSConnection object at 0x7f1fd4042340>: Failed to establish a new connection: [Errno -2] Name or "
    "service not known'))",
])
def test_a_stores_name_the_node_could_not_resolve_is_not_the_stores(line: str) -> None:
    # the node's resolver: the store was never asked (catalog/exceptions.yaml, the row before the endpoint row's; as
    # the hub's row reads the same words)
    d = one(line)
    assert d.kind == "app.exception" and "fs" not in d.fields


def test_a_client_out_of_retries_on_another_server_is_not_an_object_store() -> None:
    # castacks/tartan_drive_2.0#6: the same retries, to a server that names no object store
    d = one("urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='airlab-share-01.andrew.cmu.edu', port=9000): "
            "Max retries exceeded with url: /tartandrive2/bags/2023-10-26-15-32-25_turnpike_warehouse_fall/"
            "config.yaml (Caused by ResponseError('too many 503 error responses'))")
    assert d.kind == "app.exception" and "fs" not in d.fields


def test_an_http_error_that_names_no_object_store_is_not_one() -> None:
    # a 503 with HTTP's standard reason phrase, from urllib, with no store named in the exception itself: any server's
    d = one("urllib.error.HTTPError: HTTP Error 503: Service Unavailable")
    assert d.kind == "app.exception" and "fs" not in d.fields


def test_an_http_error_quoting_the_stores_own_status_line_is_the_store() -> None:
    # cockpit-project/bots#3991: S3's own reason phrase (`503 Slow Down`, catalog/exceptions.yaml `status_line`), from
    # urllib, names S3's SlowDown though the exception names no store
    d = one("urllib.error.HTTPError: HTTP Error 503: Slow Down")
    assert d.kind == "storage.error" and d.fields["store_code"] == "SlowDown"


@pytest.mark.parametrize(("message", "code", "side"), [
    # Azure/azure-vhd-utils#52 (the Go SDK's form)
    ("storage: service returned error: StatusCode=503, ErrorCode=ServerBusy, ErrorMessage=The server is busy.",
     "ServerBusy", "store"),
    # Azure/azure-storage-azcopy#701 (azcopy's response dump)
    ("X-Ms-Error-Code: [OperationTimedOut]", "OperationTimedOut", "store"),
    # scylladb/scylla-manager#3195: the S3 XML body
    ("<Error><Code>RequestTimeout</Code><Message>Your socket connection to the server was not read from or written "
     "to within the timeout period. Idle connections will be closed.</Message>", "RequestTimeout", "store"),
    # cockpit-project/bots#3991: S3's own status line names the code (`status_line`)
    ("HTTP Error 503: Slow Down", "SlowDown", "store"),
    # carloscarcamo/aws-lambda-unzip-py#2
    ("An error occurred (NoSuchKey) when calling the GetObject operation: The specified key does not exist.",
     "NoSuchKey", "workload"),
    # fsspec/s3fs#858: a bad request is the client's
    ("An error occurred (400) when calling the PutObject operation: Bad Request", "400", "workload"),
])
def test_object_store_codes_in_every_sdks_wording(message: str, code: str, side: str) -> None:
    assert excclass.store_code("ClientError", message) == code
    assert excclass.store_side(code) == side


# fsspec's timeout of an async file system's call (fsspec/asyn.py `sync` raises it bare; fsspec/adlfs#375 "Sometimes I
# get fsspec.exceptions.FSTimeoutError", reading from Azure storage; a DataLoader worker re-raises it with PyTorch's
# `Caught X in DataLoader worker process N.`): only the stores' async clients raise it, no code, the store's side.
@pytest.mark.parametrize("line", [
    "fsspec.exceptions.FSTimeoutError",
    "fsspec.exceptions.FSTimeoutError: Caught FSTimeoutError in DataLoader worker process 0.",
])
def test_fsspecs_timeout_of_a_remote_file_system_is_the_stores(line: str) -> None:
    d = one(line)
    assert d.kind == "storage.error" and d.fields["fs"] == "object_store" and "store_code" not in d.fields


@pytest.mark.parametrize("line", [
    # fsspec's other exceptions are the job's own use of it (fsspec/implementations/cached.py's block cache reopened
    # with another block size), and asyncio's own timeout names no store
    "fsspec.exceptions.BlocksizeMismatchError: Cached file must be reopened with same block size as original "
    "(old: 5242880, new 1048576)",
    "asyncio.exceptions.TimeoutError",
])
def test_another_fsspec_error_or_a_bare_asyncio_timeout_is_not_a_store(line: str) -> None:
    # the bare timeout is a wait that ran out (catalog/exceptions.yaml: a TimeoutError with no message, family timeout)
    assert one(line).kind == ("nccl.timeout" if line.endswith("TimeoutError") else "app.exception")


def test_no_code_at_all_is_the_stores_side() -> None:
    # a connection or read that timed out names no code: the store did not answer
    assert excclass.store_side(None) == "store"


# ------------------------------------------------------------------ the job's own set-up


@pytest.mark.parametrize(("line", "errno"), [
    # meta-pytorch/torchtune#1025: two runs on one machine
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The "
     "server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has "
     "failed to bind to ?UNKNOWN? (errno: 98 - Address already in use).", "EADDRINUSE"),
    # vllm-project/vllm#39015 (PyTorch >= 2.4's form)
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: "
     "29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use", "EADDRINUSE"),
    # intelligent-machine-learning/dlrover#443 (PyTorch 1.x raised a RuntimeError)
    ("RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
     "failed to bind to [::]:44796 (errno: 98 - Address already in use). The server socket has failed to bind to "
     "0.0.0.0:44796 (errno: 98 - Address already in use).", "EADDRINUSE"),
    # KimMeen/Time-LLM#158: a privileged port
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The "
     "server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to "
     "bind to 0.0.0.0:98 (errno: 13 - Permission denied).", "EACCES"),
    # run here: a second socket bound to a port another holds (Python 3.11)
    ("OSError: [Errno 98] Address already in use", "EADDRINUSE"),
])
def test_a_local_errno_on_bind_or_listen_is_the_jobs_set_up_not_a_peer(line: str, errno: str) -> None:
    d = one(line)
    assert d.kind == "app.exception"
    helpers.assert_fields(d, {"setup": True, "errno": errno})


@pytest.mark.parametrize(("line", "kind"), [
    # run here: a connection to a port nobody listens on is refused, the peer's side (Python 3.11)
    ("ConnectionRefusedError: [Errno 111] Connection refused", "nccl.remote_error"),
    # run here: EACCES on a file is the workload's I/O, not its set-up (/usr/bin/python3.11 as uid 65534)
    ("PermissionError: [Errno 13] Permission denied: '/etc/shadow'", "app.exception"),
])
def test_a_peers_errno_or_a_files_is_not_set_up(line: str, kind: str) -> None:
    d = one(line)
    assert d.kind == kind and "setup" not in d.fields


@pytest.mark.parametrize("line", [
    # run here (Python 3.11): an mmap larger than the machine; a seek to a negative offset. In a transport's own
    # report these errnos are the set-up's (memory it may not pin, an argument of its configuration:
    # `transport_only`, tests/extract/test_transport.py); in a Python exception they say nothing of it
    "OSError: [Errno 12] Cannot allocate memory",
    "OSError: [Errno 22] Invalid argument",
])
def test_a_transport_only_errno_in_a_python_exception_is_not_set_up(line: str) -> None:
    d = one(line)
    assert d.kind == "app.exception" and "setup" not in d.fields
    assert excclass.setup_errno(line) is None and excclass.setup_errno(line, transport=True) is not None


def test_an_errno_row_narrows_the_set_up_side_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from firstfault.catalog import tables
    from firstfault.catalog.vocab import CatalogTableError

    real = tables._document
    rows = [{"name": "ENOSPC", "side": "storage", "transport_only": True}]
    monkeypatch.setattr(tables, "_document", lambda name: {**real(name), "errnos": rows}
                        if name == "exceptions.yaml" else real(name))
    with pytest.raises(CatalogTableError, match=r"errnos\[0\]: .*narrow the setup side only"):
        tables.errno_table.__wrapped__.__wrapped__()  # lru_cache, then _kept


@pytest.mark.parametrize("line", [
    # pytorch/pytorch#159742, FacePerceiver/FaRL#10: a build without the backend
    "RuntimeError: Distributed package doesn't have NCCL built in",
    # meta-llama/codellama#125: a process that sees no GPU
    "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
    # deepspeedai/DeepSpeed#6914: batch sizes that do not fit the world size
    "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
    "gradient_acc_step * world_size 8 != 2 * 1 * 1 ",
    # modelscope/ms-swift#5737: layers that do not divide among the pipeline stages
    "AssertionError: Number of layers should be divisible by the pipeline-model-parallel size",
])
def test_a_backend_device_or_size_the_job_lacks_is_its_set_up(line: str) -> None:
    d = one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True


def test_an_op_that_did_not_build_is_the_set_up_and_the_chain_decides_once() -> None:
    # deepspeedai/DeepSpeed#694: ninja fails, DeepSpeed's op builder re-raises
    lines = [
        TB,
        '  File "/home/axe/VirtualEnvs/dspeed/lib/python3.6/site-packages/torch/utils/cpp_extension.py", line 1539, '
        "in _run_ninja_build",
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        TB,
        "RuntimeError: Error building extension 'fused_adam'",
    ]
    drafts = helpers.scan(ALL, lines, "application")
    assert [d.kind for d in drafts] == ["app.exception"]
    assert drafts[0].fields.get("setup") is True and drafts[0].fields["exc_type"] == "CalledProcessError"


def test_another_command_that_failed_is_not_a_build() -> None:
    # the ninja row is narrowed by its message: a CalledProcessError of another command is the workload's own
    # (run here: subprocess.run(['git', 'rev-parse', 'HEAD'], check=True) outside a repository, Python 3.11)
    d = one("subprocess.CalledProcessError: Command '['git', 'rev-parse', 'HEAD']' returned non-zero exit status 128.")
    assert d.kind == "app.exception" and "setup" not in d.fields


@pytest.mark.parametrize("line", [
    # jyh2986/Active-Shift-TF#1 (a test run on a machine with fewer GPUs than the code chose): TensorFlow 1.x's form
    "InvalidArgumentError (see above for traceback): No OpKernel was registered to support Op 'ActiveShift2DOp' with "
    "these attrs.  Registered devices: [CPU], Registered kernels:",
    # salesforce/ctrl#22 (a setup step skipped)
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: No OpKernel was registered to support Op "
    "'CrossReplicaSum' used by {{node training/CrossReplicaSum}}with these attrs: [T=DT_FLOAT, _class=[\"loc:@training/"
    "gradients/concat\"]]",
])
def test_an_op_the_build_has_no_kernel_for_is_the_set_up(line: str) -> None:
    d = one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True


# ------------------------------------------------------------------ a line of its own (`logged` rows, c10d's bind)



@pytest.mark.parametrize("line", [
    # tensorflow/tensorflow#25492 (its title: the executor's log line, no exception line)
    "Executor failed to create kernel. Not found: No registered 'NGraphVariable' OpKernel for GPU devices compatible "
    "with node {{node FirstStageFeatureExtractor/InceptionV2/Conv2d_1a_7x7/BatchNorm/beta}} =",
])
def test_a_set_up_message_in_a_line_of_its_own_is_a_weak_last_word(line: str) -> None:
    (d,) = alone(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True and d.fields.get("terminal") is True
    assert "exc_type" not in d.fields


# A TensorRT engine serialized by another TensorRT release, in TensorRT's words as public deployment notes quote them
# (TensorRT 8 under Triton, `logging.cc:43] 1: [stdArchiveReader.cpp::StdArchiveReader::40] ...`; TensorRT 10 through
# its Python API's logger, `[TRT] [E] IRuntime::deserializeCudaEngine: ...`; TensorRT 7's verifyHeader; the plan-file
# check through the Python logger, as a YOLOv9 QAT recipe's notes quote it before `pip install tensorrt==10.0.1`): a
# line of its own, the job's set-up.
@pytest.mark.parametrize("line", [
    "E0915 01:26:07.509052 1 logging.cc:43] 1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: "
    "Serialization (Serialization assertion stdVersionRead == serializationVersion failed.Version tag does not match. "
    "Note: Current Version: 205, Serialized Engine Version: 213)",
    "[06/16/2025-09:57:23] [TRT] [E] IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization "
    "assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 240, "
    "Serialized Engine Version: 239)",
    "ERROR: coreReadArchive.cpp (41) - Serialization Error in verifyHeader: 0 (Version tag does not match. Note: "
    "Current Version: 96, Serialized Engine Version: 87)",
    "[05/01/2024-10:36:56] [TRT] [E] 6: The engine plan file is not compatible with this version of TensorRT, "
    "expecting library version 10.0.1.6 got 10.0.0.6, please rebuild.",
])
def test_an_engine_serialized_by_another_tensorrt_is_the_set_up(line: str) -> None:
    (d,) = alone(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True and d.fields.get("terminal") is True


@pytest.mark.parametrize("line", [
    # a file that is no engine at all (TensorRT's magic-tag check), and the deserialization's own summary after the
    # version line: neither names a release that does not match
    "[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReader::32] Error Code 1: Serialization (Serialization assertion "
    "magicTagRead == kMAGIC_TAG failed.Magic Tag does not match)",
    "4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)",
])
def test_other_deserialization_failures_are_not_a_release_mismatch(line: str) -> None:
    assert all(d.fields.get("setup") is not True for d in alone(line))


def test_a_kernel_listing_is_no_missing_kernel() -> None:
    # tensorflow/tensorflow#9443: TensorFlow lists the kernels it has at INFO
    line = ('2017-04-25 18:19:08.450602: I tensorflow/core/framework/op_kernel.cc:996] OpKernel (\'op: "StackPop" '
            'device_type: "GPU" constraint { name: "elem_type" allowed_values { list { type: DT_FLOAT } } } '
            'host_memory_arg: "handle"\')')
    assert alone(line) == []


@pytest.mark.parametrize("line", [
    # OpenPipe/ART#201: vLLM's executor on a worker's death
    "ERROR 07-04 17:35:16 [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, shutting down "
    "executor.",
    # vllm-project/vllm#23582: the same behind the engine core's prefix
    "(EngineCore_0 pid=271) ERROR 08-25 12:24:19 [multiproc_executor.py:146] Worker proc VllmWorker-1 died "
    "unexpectedly, shutting down executor.",
    # vllm-project/vllm#14452 (vLLM's own spelling)
    "CRITICAL 03-15 17:24:18 [multiproc_executor.py:48] MulitprocExecutor got fatal signal from worker processes, "
    "shutting down. See stack trace above for root cause issue.",
    # SGLang's launcher after a child's SIGQUIT (sgl-project/sglang, python/sglang/srt/entrypoints/engine.py's
    # sigquit handler; the line as a posted server log shows it, after a scheduler's NCCL error)
    "[2026-02-27 15:27:13] Received sigquit from a child process. It usually means the child failed.",
    # OpenNMT/OpenNMT-tf#985: Horovod's shutdown notice in a line of its own, after a rank left early
    "[1,3]<stderr>:Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to "
    "allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused "
    "by an exception, you should see the exception in the log before the first shutdown message.",
])
def test_a_runtimes_word_that_another_process_died_is_a_symptom(line: str) -> None:
    assert [d.kind for d in alone(line)] == ["nccl.remote_error"]


@pytest.mark.parametrize("line", [
    # vllm-project/vllm#23582: the workers' own goodbye after the executor went
    "(VllmWorker TP0 pid=405) INFO 08-25 12:24:19 [multiproc_executor.py:520] Parent process exited, terminating "
    "worker",
    # verl-project/verl#4921: Ray's words in an exception's message continued on a line of its own
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
    "unexpectedly exits with a connection error code 2.",
])
def test_other_words_about_a_worker_are_not_the_serving_engines_report(line: str) -> None:
    assert [d.kind for d in alone(line) if d.kind == "nccl.remote_error"] == []


@pytest.mark.parametrize("line", [
    # aertslab/pySCENIC#418: a Dask worker's batched stream to its scheduler, closed under it
    "distributed.comm.core.CommClosedError: Comm <TCP (closed) Worker->Scheduler local=tcp://127.0.0.1:33184 "
    "remote=tcp://127.0.0.1:41759> already closed.",
    # askap-vast/vast-pipeline#822: the scheduler's side of the same
    "distributed.comm.core.CommClosedError: in <TCP (closed) Scheduler connection to worker local=tcp://127.0.0.1:8786 "
    "remote=tcp://127.0.0.1:59916>: Stream is closed",
    # coiled/benchmarks#1308: every worker that ran a task died
    "distributed.scheduler.KilledWorker: Attempted to run task ('readparquet-bec6f578be4fe0e15801f53f9dbeb108', 5) "
    "on 4 different workers, but all those workers died while running it. The last worker that attempt to run the "
    "task was tls://10.0.32.47:45841. Inspecting worker logs is often a good next step to diagnose what went wrong. "
    "For more information see https://distributed.dask.org/en/stable/killed.html.",
    # dask/distributed#6763 and #3142: a connect to a scheduler's or worker's address that did not answer in time
    "OSError: Timed out trying to connect to tcp://127.0.0.1:50009 after 5 s",
    "OSError: Timed out trying to connect to 'tcp://172.20.129.23:43394' after 10 s: connect() didn't finish in time",
])
def test_dasks_word_that_another_process_went_away_is_a_symptom(line: str) -> None:
    assert one(line).kind == "nccl.remote_error"


@pytest.mark.parametrize("line", [
    # near misses: another program's connect timeout to a path or a name (no Dask address), and a closed connection
    # in another library's class (websockets' own, as a client of a server that went away prints it)
    "OSError: Timed out trying to connect to /var/run/docker.sock after 30 s",
    "TimeoutError: Timed out trying to connect to the license server",
    "websockets.exceptions.ConnectionClosedError: received 1011 (internal error) keepalive ping timeout",
])
def test_other_connect_timeouts_and_closed_connections_are_not_dasks(line: str) -> None:
    assert one(line).kind == "app.exception"


@pytest.mark.parametrize(("lines", "errno"), [
    # wenet-e2e/wekws#93 (a second training on a machine already running one): the log ends there
    (["[W socket.cpp:401] [c10d] The server socket has failed to bind to [::]:29400 (errno: 98 - Address already in "
      "use).",
      "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:29400 (errno: 98 - Address already "
      "in use).",
      "[E socket.cpp:435] [c10d] The server socket has failed to listen on any local network address."], "EADDRINUSE"),
    # pytorch/pytorch#85604: `listen` on the IPv6 address
    (["[W socket.cpp:401] [c10d] The server socket has failed to listen on [::]:47531 (errno: 98 - Address already in "
      "use)."], "EADDRINUSE"),
    # xMistt/PartyServer#1 (asyncio's bind, an address the host does not have): a server's own end, not a client's
    # try at one of its addresses, so EADDRNOTAVAIL stays the set-up's
    (["OSError: [Errno 99] error while attempting to bind on address ('30.30.40.40', 8080): cannot assign requested "
      "address"], "EADDRNOTAVAIL"),
])
def test_a_logged_bind_with_a_set_up_errno_is_the_jobs_set_up(lines: list[str], errno: str) -> None:
    drafts = helpers.scan(ALL, lines, "application")
    assert {(d.kind, d.fields.get("errno"), d.fields.get("setup"), d.fields.get("terminal")) for d in drafts} == {
        ("app.exception", errno, True, True)}


@pytest.mark.parametrize("line", [
    # NVIDIA-NeMo/Speech#7351: a client's connect warning with EINVAL (not a set-up errno); the run went on
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [ip-26-0-146-37]:22456 (errno: 22 - Invalid "
    "argument).",
    # hpcaitech/Open-Sora#667: a peer's timeout on connect is no set-up failure
    "[W socket.cpp:697] [c10d] The client socket has failed to connect to 0.104.99.143:47389 (errno: 110 - Connection "
    "timed out).",
    # pytorch/PiPPy#158: a client's try at one address of the resolver's (the loopback's IPv6 one in CI), with a
    # set-up errno (EADDRNOTAVAIL): the next address is tried, and the client's own end is said elsewhere
    "[W socket.cpp:558] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot "
    "assign requested address).",
])
def test_a_logged_connect_failure_is_not_the_set_up(line: str) -> None:
    assert [d for d in alone(line) if d.fields.get("setup")] == []


@pytest.mark.parametrize(("line", "code"), [
    # Azure/azure-vhd-utils#52: the Azure SDK for Go's storage error, one line per failed block
    (" {29808918528, 29811015679}: storage: service returned error: StatusCode=503, ErrorCode=ServerBusy, "
     "ErrorMessage=The server is busy.", "ServerBusy"),
    # scylladb/scylla-manager#3195: the S3 REST error document
    ("<Error><Code>RequestTimeout</Code><Message>Your socket connection to the server was not read from or written "
     "to within the timeout period. Idle connections will be closed.</Message>", "RequestTimeout"),
])
def test_an_object_stores_error_from_a_client_that_is_no_python(line: str, code: str) -> None:
    (d,) = alone(line)
    assert d.kind == "storage.error" and d.fields.get("terminal") is True
    helpers.assert_fields(d, {"fs": "object_store", "store_code": code})


@pytest.mark.parametrize("line", [
    # minio/minio#9759 (boto3's own log of an UploadPart the MinIO server closed; MinIO fixed it)
    '2020-06-02 14:42:23,905 botocore.retryhandler [DEBUG] retry needed, retryable exception caught: Connection was '
    'closed before we received a valid response from endpoint URL: "https://minio:9199/main---test-double-finalize-'
    'test-ymabq3poovba3as1/ab?partNumber=3&uploadId=dda41a63-4365-40e4-af1a-3487ab6f6f45".',
    # minio/minio#12295 (mint's awscli test against a MinIO server, its JSON record)
    '{"name": "awscli", "duration": 9713, "function": "aws --endpoint-url http://minio-c3.minio.io:31715 s3api '
    'put-object --body /mint/data/datafile-1-kB --bucket awscli-mint-test-bucket-20784 --key datafile-1-kB\\n", '
    '"status": "FAIL", "error": "Connection was closed before we received a valid response from endpoint URL: '
    '"http://minio-c3.minio.io:31715/awscli-mint-test-bucket-20784/datafile-1-kB"."}',
])
def test_botocores_closed_connection_to_a_store_is_the_stores(line: str) -> None:
    (d,) = alone(line)
    assert d.kind == "storage.error" and d.fields.get("terminal") is True
    helpers.assert_fields(d, {"fs": "object_store"})


@pytest.mark.parametrize("line", [
    # the same words from another AWS service botocore speaks to (a Kinesis stream's put over its 2 MB/s limit, a
    # public notebook's notes)
    'Connection was closed before we received a valid response from endpoint URL: '
    '"https://kinesis.eu-west-1.amazonaws.com/".',
    # a connection never made: a wrong endpoint or no route, not the store's answer (the AWS CLI's form)
    'upload failed: ./ckpt.pt to s3://runs/ckpt.pt Could not connect to the endpoint URL: '
    '"http://minio:9000/runs/ckpt.pt"',
])
def test_botocores_words_that_are_no_stores_failure(line: str) -> None:
    assert [d for d in alone(line) if d.kind == "storage.error"] == []


def test_a_request_the_store_never_answered_in_libcurls_code() -> None:
    """The AWS SDK for C++ reports a request that got no answer as libcurl's CURLcode (`curlCode: 28, Timeout was
    reached`): a transfer the store did not answer is the store's side; a call the client itself got wrong is not."""
    # aws/aws-sdk-cpp#2418 (TiFlash's log of the SDK's error, one line as posted)
    line = ('[2023/03/29 02:15:02.832 +00:00] [ERROR] [S3Common.cpp:126] ["tag=AWSXmlClient message=HTTP response code:'
            ' -1\\nResolved remote host IP address: \\nRequest ID: \\nException name: \\nError message: curlCode: 28, '
            'Timeout was reached\\n0 response headers:"] [source=AWSClient] [thread_id=149]')
    (d,) = alone(line)
    assert d.kind == "storage.error" and d.fields.get("terminal") is True
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "curl28", "store_cause": "timeout"})
    # pyarrow's OSError (its form, as tests/extract/test_spelled_exception.py writes it): the SDK's enum says only
    # NETWORK_CONNECTION, the libcurl code after it says what happened
    d = one("OSError: When reading information for key 'ckpt/step-100.pt' in bucket 'runs': AWS Error "
            "NETWORK_CONNECTION during HeadObject operation: curlCode: 28, Timeout was reached")
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "curl28"})
    # a gRPC status that wraps the store's answer (Triton's model repository, its form): the finer word decides
    (d,) = alone("UNAVAILABLE: Internal: Failed to get object at s3://models/resnet/1/model.plan due to exception: , "
                 "error message: curlCode: 56, Failure when receiving data from the peer")
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "curl56", "store_cause": "unavailable"})


def test_a_libcurl_code_the_client_caused_or_a_retry_is_not_the_stores() -> None:
    # near misses: libcurl's CURLE_BAD_FUNCTION_ARGUMENT is the client's own call (ray-project/ray#41137 names
    # pyarrow's bug); the same timeout in a debug record of a retry is met and gone on from
    d = one("OSError: When reading information for key 'v' in bucket 'b': AWS Error NETWORK_CONNECTION during "
            "HeadObject operation: curlCode: 43, A libcurl function was given a bad argument")
    assert d.kind == "app.exception" and d.fields.get("store_code") == "curl43"
    assert alone("[DEBUG] CurlHttpClient: curlCode: 28, Timeout was reached; retrying in 200 ms") == []


def test_tensorflows_cloud_file_system_names_the_stores_http_status_under_any_status_class() -> None:
    """TensorFlow's GCS file system (tsl curl_http_request.cc; its test expects `Error executing an HTTP request: HTTP
    response code 503 with body 'get response'`) raises the store's answer as a status; after its retries, as
    ABORTED (`All 10 retry attempts failed. The last failure: ...`, retrying_utils.cc): the status class wraps the
    store's own word, which decides (lines written here in those formats)."""
    d = one("tensorflow.python.framework.errors_impl.UnavailableError: Error executing an HTTP request: HTTP response "
            "code 503 with body 'Service Unavailable' when reading gs://ckpt/run-7/checkpoint")
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "503", "store_cause": "unavailable"})
    d = one("tensorflow.python.framework.errors_impl.AbortedError: All 10 retry attempts failed. The last failure: "
            "Error executing an HTTP request: HTTP response code 429 with body '{'")
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "429", "store_cause": "throttled"})


def test_tensorflows_cloud_file_system_near_misses() -> None:
    # a key the job named that is not there is the job's request; a transfer that got no HTTP answer at all names
    # no status (google-research/vision_transformer#303: libcurl's own code, an auth callback aborted)
    d = one("tensorflow.python.framework.errors_impl.NotFoundError: Error executing an HTTP request: HTTP response "
            "code 404 with body 'No such object: ckpt/run-7/missing'")
    assert d.kind == "app.exception"
    d = one("tensorflow.python.framework.errors_impl.AbortedError: All 10 retry attempts failed. The last failure: "
            "Error executing an HTTP request: libcurl code 42 meaning 'Operation was aborted by an application "
            "callback', error details: Callback aborted          when reading metadata of gs://vit_models/imagenet21k/ViT-B_16.npz")
    assert d.kind != "storage.error"


def test_libcurls_code_in_tensorflows_and_tensorstores_spelling_is_the_stores_timeout() -> None:
    """C++ clients other than the AWS SDK spell libcurl's CURLcode their own way: TensorFlow's cloud file system
    (tsl curl_http_request.cc, its test curl_http_request_test.cc: `Error executing an HTTP request: libcurl code 28
    meaning 'Timeout was reached', error details: Operation timed out`) and tensorstore's HTTP transport (tensorstore
    internal/http curl_wrappers.cc: `Error [<code>]=<curl_easy_strerror> in curl operation`)."""
    # tensorflow/tpu's troubleshooting thread as posted (an outfeed's retries on a gs:// upload), the class line ours
    d = one("tensorflow.python.framework.errors_impl.AbortedError: All 10 retry attempts failed. The last failure: "
            "Unavailable: Error executing an HTTP request: libcurl code 28 meaning 'Timeout was reached', error "
            "details: SSL connection timeout when initiating an upload to gs://my_results/run-3/events.out")
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "curl28", "store_cause": "timeout"})
    # tensorstore's record of a transfer that failed (its format, absl's log prefix; the time and thread ours)
    (d,) = alone("E1105 10:02:07.123456  4242 curl_transport.cc:470] Error [56]=Failure when receiving data from the "
                 "peer in curl operation")
    assert d.kind == "storage.error"
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "curl56", "store_cause": "unavailable"})


def test_libcurls_code_near_misses() -> None:
    # a code the table does not list as the store's (an application callback's abort) stays no store's failure; a
    # program's own bracketed error number without curl's words is nothing of a store's
    assert [d for d in alone("E1105 10:02:07.123456  4242 curl_transport.cc:470] Error [42]=Operation was aborted "
                             "by an application callback in curl operation") if d.kind == "storage.error"] == []
    assert [d for d in alone("E1105 10:02:07.123456  4242 loader.cc:88] Error [28]=Timeout was reached in read "
                             "operation") if d.kind == "storage.error"] == []


def test_a_go_clients_error_the_job_caused_is_the_workloads() -> None:
    # Azure's AKS documentation (Azure Files provisioning through a storage account's network rules): the
    # store refused the request, on the job's side
    (d,) = alone("storage: service returned error: StatusCode=403, ErrorCode=AuthorizationFailure, ErrorMessage=This "
                 "request is not authorized to perform this operation.")
    assert d.kind == "app.exception" and d.fields["store_code"] == "AuthorizationFailure"


def test_gcsfs_http_error_names_the_stores_code_after_its_message() -> None:
    """gcsfs's HttpError (fsspec/gcsfs gcsfs/retry.py: the JSON error body's `message`, then `, <code>`); the message
    is Cloud Storage's own for its per-object mutation limit (cloud.google.com/storage/quotas: one write per second
    to the same object name), the bucket and key ours."""
    d = one("gcsfs.retry.HttpError: The rate of change requests to the object ckpt-bucket/run-4/latest exceeds the "
            "rate limit. Please reduce the rate of create, update, and delete requests., 429")
    assert d.kind == "storage.error"
    helpers.assert_fields(d, {"fs": "object_store", "store_code": "429", "store_cause": "throttled"})


def test_gcsfs_http_error_near_misses() -> None:
    # the job's request (a key that is not there) is the workload's; a trailing number after a comma in another
    # program's exception is no store's code
    d = one("gcsfs.retry.HttpError: No such object: ckpt-bucket/run-4/missing, 404")
    assert d.kind == "app.exception" and d.fields.get("store_code") == "404"
    d = one("ValueError: expected a batch of 512 rows, got 429")
    assert d.kind == "app.exception" and "store_code" not in d.fields
    d = one("ValueError: shapes do not match: 512, 429")
    assert d.kind == "app.exception" and "store_code" not in d.fields


def test_a_gcs_error_of_google_cloud_python_before_api_core_is_the_stores() -> None:
    # googleapis/google-cloud-python#3072 (0.23): the module that google.api_core.exceptions replaced
    d = one("google.cloud.exceptions.ServiceUnavailable: 503 Service Unavailable (GET https://www.googleapis.com/"
            "storage/v1/b/xxx/yyy.zzz)")
    assert d.kind == "storage.error" and d.fields["store_code"] == "ServiceUnavailable"
    # ... and the same module's error about another service is not the store's (a synthetic message)
    assert excclass.class_row("google.cloud.exceptions.NotFound", "NotFound",
                              "404 GET https://bigquery.googleapis.com/bigquery/v2/projects/p/datasets/d") is None


# ------------------------------------------------------------------ frameworks other than PyTorch


@pytest.mark.parametrize(("line", "kind"), [
    # ayaka14732/llama-2-jax#20: a coordination barrier timed out (the other processes never came)
    ("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. "
     "Timed out task names:", "nccl.timeout"),
    # vwxyzjn/cleanrl#338: the coordination service did not answer at shutdown
    ("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded", "nccl.timeout"),
    # tensorflow/models#9109: a collective's peer closed its socket
    ("tensorflow.python.framework.errors_impl.UnavailableError: Socket closed", "nccl.remote_error"),
    # horovod/horovod#3618: Horovod's collective failed (what failed is said elsewhere)
    ("horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error", "nccl.error"),
    # ray-project/ray#18586: an actor died (it names no cause)
    ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.", "nccl.remote_error"),
    # LMCache/LMCache#2306: vLLM's engine died (its worker's error is reported above it)
    ("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the "
     "root cause.", "nccl.remote_error"),
])
def test_other_frameworks_collective_and_coordination_errors_are_symptoms(line: str, kind: str) -> None:
    assert one(line).kind == kind


def test_horovods_symptom_keeps_the_nccl_result_it_names() -> None:
    d = one("horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error")
    assert d.fields.get("nccl_result") == "ncclUnhandledCudaError"


@pytest.mark.parametrize("line", [
    # ecmwf-lab/ai-models-graphcast#18: XLA's GPU allocator
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB "
    "(3206250496B) on device ordinal 0",
    # pytorch/xla#9524: XLA on a TPU, out of a memory space of the chip
    "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
    "memory space vmem.",
    # google-deepmind/alphafold#1023
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 "
    "bytes.",
])
def test_accelerator_memory_in_xla_words_is_the_accelerator_oom(line: str) -> None:
    assert one(line).kind == "app.cuda_oom"


# ------------------------------------------------------------------ a status about one file (TensorFlow's I/O)


@pytest.mark.parametrize(("line", "errno"), [
    # keras-team/keras-tuner#390 (a comment): TF 2 appends the strerror to the path
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: models/singleton_classifiers/context.model/"
     "variables/variables_temp_d0c7555bd2aa4ae682695465c0d0e2f4/part-00000-of-00002.data-00000-of-00001.tempstate"
     "8490917510693379885; No space left on device", "ENOSPC"),
    # keras-team/keras-tuner#390 (its title): the strerror alone, lower-case
    ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: disk quota exceeded [Op:SaveV2]", "EDQUOT"),
])
def test_resource_exhausted_with_a_storage_errno_is_the_file_system_not_the_accelerator(line: str, errno: str) -> None:
    d = one(line)
    assert d.kind == "storage.error" and d.fields["errno"] == errno


def test_resource_exhausted_on_a_file_being_written_is_the_file_system() -> None:
    # mozilla/DeepSpeech#374 ("home isn't large ... run out of space"): TensorFlow 1.x gave the path alone after the
    # status, and its session's reprint of the error (`(see above for traceback)`) is the last line
    d = one("InternalError (see above for traceback): Error writing (tmp) checkpoint file: /home/doyouunderstand/"
            ".local/share/deepspeech_wer/checkpoint/205aed8/model.ckpt-6.tempstate9784191321997661396: Resource "
            "exhausted: /home/doyouunderstand/.local/share/deepspeech_wer/checkpoint/205aed8/model.ckpt-6.tempstate"
            "9784191321997661396")
    assert d.kind == "storage.error" and d.fields["fs"] == "posix" and d.fields["exc_type"] == "InternalError"
    assert str(d.fields["path"]).endswith("model.ckpt-6.tempstate9784191321997661396")


@pytest.mark.parametrize("line", [
    # tensorflow/tensorflow#10162: a restore (a read) in a loop; too many open files is RESOURCE_EXHAUSTED too
    "ResourceExhaustedError (see above for traceback): ./models/m9-6/model.ckpt-826.data-00000-of-00001",
    # tensorflow/tensorflow#4350: the path alone, nothing says what was done to it
    "ResourceExhaustedError: ./model/model-49.tempstate5787507096018461664",
])
def test_resource_exhausted_about_a_file_without_a_write_or_an_errno_is_the_workloads(line: str) -> None:
    d = one(line)
    assert d.kind == "app.exception" and d.fields["path"] == line.rsplit(" ", 1)[-1].rsplit(": ", 1)[-1]


def test_resource_exhausted_about_tensors_is_still_the_accelerator() -> None:
    # lc222/seq2seq_chatbot_new#19: no file, no errno
    d = one("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor of shape "
            "[4096] and type float")
    assert d.kind == "app.cuda_oom"


def test_a_status_word_that_names_no_peer_leaves_the_workloads_exception() -> None:
    # the class table sends XlaRuntimeError to its status word; INTERNAL is the workload's own exception
    # (synthetic messages: only the status word at their head is read)
    row = excclass.class_row("jaxlib.xla_extension.XlaRuntimeError", "XlaRuntimeError", "INTERNAL: x")
    assert row is not None and row.family == "status"
    assert excclass.status_family("INTERNAL: Failed to execute XLA Runtime executable") == "exception"
    assert excclass.status_family("Socket closed") is None  # no status word, nothing decided here


def test_a_google_api_error_about_another_service_is_not_the_object_store() -> None:
    # the Google SDK serves every service: only a message naming Cloud Storage makes it the store's
    # (a synthetic message naming another service)
    assert excclass.class_row("google.api_core.exceptions.TooManyRequests", "TooManyRequests",
                              "429 Quota exceeded for aiplatform.googleapis.com") is None


@pytest.mark.parametrize(("line", "kind"), [
    # jax-ml/jax#23599: the coordination service lost a task's heartbeat
    ("2024-10-09 15:47:38.568412: E external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:"
     "1170] /job:jax_worker/replica:0/task:0 has been set to ERROR in coordination service: UNAVAILABLE: Task "
     "/job:jax_worker/replica:0/task:0 heartbeat timeout. This indicates that the remote task has failed, got "
     "preempted, or crashed unexpectedly. Check the task logs for an earlier error to debug further. "
     "[type.googleapis.com/tensorflow.CoordinationServiceError='']", "nccl.remote_error"),
    # vwxyzjn/cleanrl#338: the agent's disconnect timed out
    ("2023-02-17 06:08:24.084633: E external/org_tensorflow/tensorflow/tsl/distributed_runtime/coordination/"
     "coordination_service_agent.cc:481] Failed to disconnect from coordination service with status: "
     "DEADLINE_EXCEEDED: Deadline Exceeded", "nccl.timeout"),
    # mlcommons/training#272: TensorFlow 1.13's collective, in its own spelling of the status
    ("2019-05-19 15:08:13.128241: E tensorflow/core/common_runtime/ring_reducer.cc:369] Aborting RingReduce with "
     "Unavailable: Socket closed", "nccl.remote_error"),
    ("2019-05-19 15:08:13.128323: W tensorflow/core/common_runtime/base_collective_executor.cc:203] "
     "BaseCollectiveExecutor::StartAbort Unavailable: Socket closed", "nccl.remote_error"),
])
def test_a_status_logged_about_the_coordination_service_or_a_collective_is_a_symptom(line: str, kind: str) -> None:
    assert [d.kind for d in helpers.scan(ALL, [line], "application")] == [kind]


def test_the_coordination_service_without_a_status_is_nothing() -> None:
    # an anchor and no status word (a synthetic glog line in JAX's form): nothing failed
    line = "I0929 17:40:00.000000 1044529 coordination_service.cc:100] Connected to coordination service"
    assert excclass.logged_status(line) is None
    assert helpers.scan(ALL, [line], "application") == []


def _classes_refused(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, object]]) -> str:
    """The error of building the exception-class table with `rows` as its rows."""
    from firstfault.catalog import tables
    from firstfault.catalog.vocab import CatalogTableError

    real = tables._document
    monkeypatch.setattr(tables, "_document", lambda name: {**real(name), "exception_classes": rows}
                        if name == "exceptions.yaml" else real(name))
    with pytest.raises(CatalogTableError) as err:
        tables.exception_class_table.__wrapped__.__wrapped__()  # lru_cache, then _kept
    return str(err.value)


def test_a_bad_row_names_its_table_row_and_field(monkeypatch: pytest.MonkeyPatch) -> None:
    from firstfault import records
    from firstfault.catalog.tables import ExceptionClassInfo

    bad_regex = {"match": "botocore.*", "family": "object_store", "message": "(unclosed"}
    assert re.match(r"catalog/exceptions\.yaml: exception_classes\[0\]\.message: bad regex '\(unclosed'",
                    _classes_refused(monkeypatch, [bad_regex]))
    assert re.match(r"catalog/exceptions\.yaml: exception_classes\[0\]\.family: Invalid enum value 'storage'",
                    _classes_refused(monkeypatch, [{"match": "botocore.*", "family": "storage"}]))
    row = records.convert({"match": "botocore.*", "family": "object_store"}, ExceptionClassInfo)
    assert row.family == "object_store"


def test_a_bad_row_of_the_shipped_file_names_its_line() -> None:
    from firstfault.catalog import tables

    lines = (Path(tables.__file__).parent / "exceptions.yaml").read_text(encoding="utf-8").splitlines()
    start = lines.index("exception_classes:")
    family = next(i for i, ln in enumerate(lines[start:], start + 1) if "family:" in ln)
    doc = tables._document("exceptions.yaml")
    assert tables._line("exceptions.yaml", doc, ("exception_classes", 0, "family")) == (
        f"catalog/exceptions.yaml:{family}: ")
    # a document that is not the file's (a test's, say): no line to name
    assert tables._line("exceptions.yaml", {"other": 1}, ("exception_classes", 0)) == "catalog/exceptions.yaml: "


def test_a_logged_row_must_be_about_the_message_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from firstfault import records
    from firstfault.catalog.tables import ExceptionClassInfo

    assert re.match(r"catalog/exceptions\.yaml: exception_classes\[0\]: `logged` needs", _classes_refused(
        monkeypatch, [{"match": "RayActorError", "family": "peer", "logged": ["died unexpectedly"]}]))
    assert re.match(r"catalog/exceptions\.yaml: exception_classes\[0\]: .*6 characters", _classes_refused(
        monkeypatch, [{"match": "*", "family": "peer", "message": "died", "logged": ["died"]}]))
    row = records.convert({"match": "*", "family": "peer", "message": "proc \\S+ died unexpectedly",
                           "logged": ["died unexpectedly"]}, ExceptionClassInfo)
    assert row.logged == ("died unexpectedly",)


# ------------------------------------------------------------------ CuPy's NCCL wrapper


def test_cupys_nccl_error_names_its_result_by_cupys_name() -> None:
    """vllm-project/vllm#3152 (vLLM 0.3.2 through CuPy): `NCCL_ERROR_INVALID_USAGE` is ncclInvalidUsage, which the
    app-setup rule reads as the job's own set-up; CuPy's other names map the same way."""
    d = one("cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_INVALID_USAGE: invalid usage")
    assert (d.kind, d.fields.get("nccl_result")) == ("nccl.error", "ncclInvalidUsage")
    d = one("cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_UNHANDLED_CUDA_ERROR: unhandled cuda error")
    assert (d.kind, d.fields.get("nccl_result")) == ("nccl.error", "ncclUnhandledCudaError")


def test_an_error_class_named_like_cupys_elsewhere_is_not_nccl() -> None:
    """Near miss: only the class NcclError is CuPy's NCCL error; a package's own `NcclErrorHandler...` is not."""
    d = one("mypkg.errors.NcclErrorHandlerMissing: no handler registered for widget 3")
    assert d.kind == "app.exception"

