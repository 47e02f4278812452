"""Storage and network causes the tables missed (issue 25), each read as data: the printing program's words, the
status or code they carry looked up in its table. Lines with their threads (or the printing program's source); each
block has its look-alikes that must not be read so.
"""

from __future__ import annotations

import pytest

from firstfault.extract.codes import errno_of
from firstfault.extract.traceback import words_cause
from tests.extract.test_b7pass import feed  # every extractor, as the scanner runs them, on an application log
from tests.extract.test_endstate import causes

# ---------------------------------------------------------------- the Hugging Face Hub's retry notice
# huggingface_hub utils/_http.py http_backoff logs each retry it makes: `HTTP Error {status} thrown while requesting
# {method} {url}` for a status in its retry list, `'{err}' thrown while requesting {method} {url}` for a Timeout or
# ConnectionError. The hub's files answering 429 / 5xx, or dropping a connection they took, are the store's side.


@pytest.mark.parametrize(
    "line",
    [
        # pytorch/torchtitan#2239: 48 nodes' load_dataset of allenai/c4 throttled by the hub
        "HTTP Error 429 thrown while requesting GET https://huggingface.co/api/datasets/allenai/c4/tree/"
        "1588ec454efa1a09f29cd18ddd04fe05fc8653a2/en?expand=false&recursive=true&limit=1000",
        # Algomancer/gptcore#2: the hub closed a streamed dataset file's connection mid-read
        "'(ProtocolError('Connection aborted.', RemoteDisconnected('Remote end closed connection without response')), "
        "'(Request ID: fd98ddf2-4690-4322-b018-8226d93d2e7d)')' thrown while requesting GET "
        "https://huggingface.co/datasets/monology/pile-uncopyrighted/resolve/main/train/14.jsonl.zst",
    ],
)
def test_the_hubs_retry_notice_of_its_own_status_or_a_dropped_read_is_the_stores(line: str) -> None:
    assert [(e.kind, e.fields.get("fs")) for e in feed([line])] == [("storage.error", "object_store")]


@pytest.mark.parametrize(
    "line",
    [
        # Toyhom/CLV#2: the node could not connect to the hub at all (connect timeout): its route out, not the store
        "'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: "
        "/uer/gpt2-chinese-cluecorpussmall/resolve/main/tokenizer_config.json (Caused by ConnectTimeoutError("
        "<urllib3.connection.HTTPSConnection object at 0x000001A156B1A550>, 'Connection to huggingface.co timed out. "
        "(connect timeout=10)'))\"), '(Request ID: 8ba9b399-402e-463b-b2cf-cca80e22006a)')' thrown while requesting "
        "HEAD https://huggingface.co/uer/gpt2-chinese-cluecorpussmall/resolve/main/tokenizer_config.json",
        # AUTOMATIC1111/stable-diffusion-webui#17165: no route out of the node (Network is unreachable)
        "WARNING:huggingface_hub.utils._http:'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /openai/clip-vit-large-patch14/resolve/main/merges.txt (Caused by "
        "NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7fc30f2ea230>: Failed to establish a new "
        "connection: [Errno 101] Network is unreachable'))\"), '(Request ID: 5f7287e5-2203-46b5-9dcf-e03db5035a99)')' "
        "thrown while requesting HEAD https://huggingface.co/openai/clip-vit-large-patch14/resolve/main/merges.txt",
        # the same notice of the job's own request refused (a status outside the retry list's, written here): no
        # server's error
        "HTTP Error 401 thrown while requesting GET https://huggingface.co/api/models/meta-llama/Llama-2-7b-hf",
        # the retry loop's next line: says nothing of whose failure
        "Retrying in 1s [Retry 1/5].",
    ],
)
def test_a_connection_the_node_never_made_or_the_jobs_request_is_not_the_stores(line: str) -> None:
    assert all(e.kind != "storage.error" for e in feed([line]))


# ---------------------------------------------------------------- HPE Slingshot's return code in MPICH's OFI record
# MPICH's OFI netmod (ofi_events.c MPIDI_OFI_handle_cq_error) prints a failed completion as `OFI poll failed
# (<file>:<line>:<func>:<fi_strerror(err)> - <fi_cq_strerror(prov_errno)>)`; the CXI provider's words are the Cassini
# return code's name (HewlettPackard/shs-cassini-headers cxi_rc_to_str). UNDELIVERABLE: the NIC's retry handler gave
# up on the path to the target (libfabric prov/cxi proverr2errno: FI_EHOSTUNREACH), a path status.


@pytest.mark.parametrize(
    "line",
    [
        # ECP-WarpX/WarpX#4234 (Frontier): Cray MPICH's record under MPI_Waitall
        "MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
        "error - UNDELIVERABLE)",
        # E3SM-Project/E3SM#5750 (Frontier): the same record behind srun's rank label
        "3725: MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/"
        "output error - UNDELIVERABLE)",
    ],
)
def test_slingshots_undeliverable_in_mpichs_ofi_record_is_a_path_completion_error(line: str) -> None:
    events = [e for e in feed([line]) if e.kind == "nccl.ib_completion_error"]
    assert [(e.fields["stack"], e.fields["status_name"], e.fields["status_class"]) for e in events] == [
        ("cxi", "C_RC_UNDELIVERABLE", "path")]


@pytest.mark.parametrize(
    "line",
    [
        # an MPICH record that carries the libfabric errno's words only (the form of releases before the provider's
        # words were added; written here in ofi_events.c's format): no provider's status, no completion error
        "MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
        "error)",
        # a code's name outside MPICH's OFI record (a program's own log line): not the NIC's
        "packet UNDELIVERABLE - retrying later",
        # a provider's words of no row (written here in the record's format): no status read
        "MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output "
        "error - SOMETHING_ELSE)",
    ],
)
def test_an_ofi_record_without_a_providers_status_is_no_completion_error(line: str) -> None:
    assert all(e.kind != "nccl.ib_completion_error" for e in feed([line]))


def test_a_status_the_target_answered_is_no_path_status() -> None:
    # the target's side: delivered through the fabric (VNI_NOT_FOUND: no VNI match at the target endpoint, as a
    # process that exited leaves it): a responder's refusal, which network-transport leaves out
    line = ("MPIDI_OFI_handle_cq_error(1062): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:"
            "Transport endpoint is not connected - VNI_NOT_FOUND)")
    events = [e for e in feed([line]) if e.kind == "nccl.ib_completion_error"]
    assert [e.fields["status_class"] for e in events] == ["remote_access"]


# ---------------------------------------------------------------- Kubeflow's MPI operator's eviction reason
# kubeflow/mpi-operator pkg/controller/mpi_job_controller.go: `mpiJobEvict = "MPIJobEvicted"`, the reason of the
# MPIJob's Failed condition when a worker pod was evicted (message `%d/%d workers are evicted`); its other reasons
# (MPIJobCreated, MPIJobRunning, MPIJobFailed, MPIJobSucceeded) name no cause.


def test_the_mpi_operators_eviction_reason_is_an_eviction() -> None:
    # kubeflow/mpi-operator#647: the MPIJob's status as `kubectl get mpijob -o yaml` printed it
    assert causes(["    message: 1/8 workers are evicted", "    reason: MPIJobEvicted"]) == [("k8s.pod", "eviction")]


def test_the_mpi_operators_other_reasons_name_no_cause() -> None:
    # kubeflow/mpi-operator#647, the same status's earlier conditions, and the generic failure reason (the same file)
    assert causes(["    message: MPIJob xxx is running.", "    reason: MPIJobRunning",
                   "    reason: MPIJobFailed"]) == []


# ---------------------------------------------------------------- a completion status by its number and its words
# A verbs program printing the failed completion's status number with ibv_wc_status_str()'s words for it: the two
# agreeing make it a verbs report though the line names no device.


def test_a_status_number_with_its_own_words_is_a_completion_error() -> None:
    # uccl-project/uccl#799 (UCCL's EP kernels on Broadcom Thor-2 RoCE, GID index 0: every QP's sends timed out)
    line = ("CQE ERROR wr_id=3 status=12(transport retry counter exceeded) opcode=1 byte_len=0 vendor_err=0xa "
            "qp_num=0x2c10")
    events = [e for e in feed([line]) if e.kind == "nccl.ib_completion_error"]
    assert [(e.fields["status"], e.fields["status_class"], e.fields.get("vendor_err")) for e in events] == [
        (12, "path", 10)]


@pytest.mark.parametrize(
    "line",
    [
        # a number whose words are another status's (written here in the same print's layout): they do not agree
        "CQE ERROR wr_id=3 status=5(transport retry counter exceeded) opcode=1 byte_len=0",
        # an HTTP client's status with words of its own (written here): no ibv status's words
        "request failed: status=12(connection closed) retrying",
    ],
)
def test_a_status_number_whose_words_do_not_agree_is_no_completion_error(line: str) -> None:
    assert all(e.kind != "nccl.ib_completion_error" for e in feed([line]))


def test_a_flush_by_its_number_and_words_stays_a_flush() -> None:
    # the same print's layout with the flush status (5, `Work Request Flushed Error`): read, never a path status
    line = "CQE ERROR wr_id=4 status=5(Work Request Flushed Error) opcode=0 byte_len=0 vendor_err=0xf9 qp_num=0x2c11"
    events = [e for e in feed([line]) if e.kind == "nccl.ib_completion_error"]
    assert [e.fields["status_class"] for e in events] == ["flush"]


# ---------------------------------------------------------------- TensorFlow's file system error: `context; strerror`
# tsl/platform/errors.cc IOError builds the status message as StrCat(context, "; ", strerror(errno)); the status's own
# words (`Permission denied`, which EROFS and EPERM are reported as) stand before it and are no errno of the file's.


def test_a_read_only_mount_under_tensorflows_permission_denied_is_the_storages() -> None:
    # Azure/MachineLearningNotebooks#1677: a checkpoint saved to the pipeline's blob output mount, read-only
    line = ("tensorflow/core/framework/op_kernel.cc:1763] OP_REQUIRES failed at save_restore_v2_ops.cc:157 : Perm"
            "ission denied: /mnt/azureml/cr/j/0ddbaa5dfd4243c4bd18feabd6037209/cap/data-capability/wd/output_84f8"
            "4eab_univision_ai/pc_ds_2021_v3/refinement-reg/v2/results/128_c1720fb5-81ed-45aa-a823-a1fa5ef1a8d1/e"
            "xport/saved_model/variables/variables_temp/part-00000-of-00001.data-00000-of-00001.tempstate52552743"
            "53572806690; Read-only file system")
    assert errno_of(line) == "EROFS"
    d = words_cause(line)
    assert d is not None and (d.kind, d.fields.get("errno")) == ("storage.error", "EROFS")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # the job's own permission on its file, in the same shape (written here): EACCES, the workload's I/O
        ("Permission denied: /home/u/ckpt/model.ckpt-6.tempstate123; Permission denied", "EACCES"),
        # a `; ` whose tail is no strerror (written here): the first strerror in the text, as before
        ("Permission denied: /home/u/ckpt; while saving step 6", "EACCES"),
    ],
)
def test_the_tail_decides_only_where_it_is_a_strerror(text: str, want: str) -> None:
    assert errno_of(text) == want
    assert words_cause(text) is None


# ---------------------------------------------------------------- Taskcluster's worker reading the cloud's notice
# taskcluster worker-runner's google and aws providers (and generic-worker's aws provider) log the metadata service's
# preemption notice before ending the task: the provider took the instance back.


@pytest.mark.parametrize(
    "line",
    [
        # mozilla/translations#964: the GCP spot V100 worker's journal (start-worker's line)
        "Dec 17 16:03:58Z translations-1-b-linux-v100-gpu-4-1tb-vvppjagzspgzcf58mfvmzw-1 start-worker 2024/12/17 "
        "16:03:58 GCP Metadata Service says termination is imminent",
        # the aws provider's line (taskcluster tools/worker-runner/provider/aws: log.Println of the same words), in the
        # Go logger's layout
        "2024/12/17 16:03:58 EC2 Metadata Service says termination is imminent",
    ],
)
def test_the_workers_notice_of_the_clouds_termination_is_a_preemption(line: str) -> None:
    assert causes([line]) == [("process.signal", "preemption")]


def test_the_workers_polling_failure_is_no_preemption() -> None:
    # generic-worker's aws provider when the metadata endpoint did not answer (its `WARNING: error when calling AWS
    # EC2 spot termination endpoint: %v`, the error written here): no notice was read
    assert causes(["WARNING: error when calling AWS EC2 spot termination endpoint: dial tcp 169.254.169.254:80: "
                   "connect: connection refused"]) == []


# ---------------------------------------------------------------- a distributed file system's client: its service gone
# Alluxio's client status exceptions mirror gRPC's codes (alluxio.exception.status: AlluxioStatusException.from);
# UNAVAILABLE and DEADLINE_EXCEEDED are its master or workers not answering: the file system's side.


def test_alluxios_unavailable_service_is_the_file_systems() -> None:
    # Alluxio/alluxio#15017: the FUSE mount's readdir after the master's keepalive failed
    lines = ["2022-02-16 11:54:35,260 ERROR AlluxioJniFuseFileSystem - Failed to readdir /hdfstest-global: ",
             "alluxio.exception.status.UnavailableException: Failed after 1 attempts: "
             "alluxio.exception.status.UnavailableException: Keepalive failed. The connection is likely gone"]
    events = [e for e in feed(lines) if e.kind in ("storage.error", "app.exception")]
    assert [(e.kind, e.fields.get("fs")) for e in events] == [("storage.error", "alluxio")]


@pytest.mark.parametrize(
    "line",
    [
        # the job's request: a path that is not there (Alluxio's NotFoundException, its message as its master words
        # it, written here)
        "alluxio.exception.status.NotFoundException: Path \"/data/train-00001\" does not exist.",
        # another library's class of the same name (gRPC-era Java services, written here): no Alluxio client
        "com.example.rpc.UnavailableException: backend unavailable",
    ],
)
def test_the_jobs_request_or_another_librarys_class_is_no_file_system_failure(line: str) -> None:
    assert all(e.kind != "storage.error" for e in feed([line]))
