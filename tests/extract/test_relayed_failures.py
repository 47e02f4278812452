"""Exceptions that only relay another process's, thread's or service's failure (catalog/exceptions.yaml: the `peer`
rows for a worker, server or agent that failed or never answered, the `envelope` rows for a wrapper whose chained
exception decides): a symptom or nothing, never the workload's own exception.

Each reading is tested both ways: a line it must read and one that looks alike and must not. Lines are verbatim from
the public threads cited next to them or built from the printing program's source (`from <source>`); the near misses
marked `ours` are this test's own wording.
"""

from __future__ import annotations

import pytest

from firstfault.extract.base import Draft
from tests.extract import helpers
from tests.extract.helpers import alone, last_line, scan_application

TB = helpers.TB


def scan_app(lines: list[str]) -> list[Draft]:
    return scan_application(helpers.APP_AND_NCCL, lines)


def kinds(drafts: list[Draft]) -> list[tuple[str, object]]:
    return [(d.kind, d.fields.get("exc_type")) for d in drafts]


# ------------------------------------------------------------ another process failed, nothing more said


@pytest.mark.parametrize("line", [
    # NVIDIA/numba-cuda#618: dask's distributed/core.py Server.start, `raise RuntimeError(f"{type(self).__name__}
    # failed to start.") from exc`
    "RuntimeError: Worker failed to start.",
    # from the same source: the other servers of dask's distributed
    "RuntimeError: Nanny failed to start.",
    "RuntimeError: Scheduler failed to start.",
    # areal-project/AReaL#240: areal/engine/sglang_remote.py _wait_for_server, `raise RuntimeError("server launch
    # failed")`
    "RuntimeError: server launch failed",
    # aws-neuron/aws-neuron-sdk#1369: vLLM's engine core on its workers (v1/engine/core.py)
    "RuntimeError: Worker failed",
    # horovod/horovod#2803: horovod/runner/launch.py, after `ssh not successful for host H:`
    "RuntimeError: could not connect to some hosts via ssh",
    # ray-project/kuberay#2676: Ray's job head with no dashboard agent in time (dashboard/modules/job/job_head.py),
    # as the job SDK raises its HTTP 500
    "RuntimeError: Request failed with status code 500: No available agent to submit job, please try again later..",
])
def test_a_word_that_another_process_failed_is_a_symptom(line: str) -> None:
    assert [d.kind for d in last_line(line)] == ["nccl.remote_error"]
    assert [d.kind for d in alone(line)] == ["nccl.remote_error"]


@pytest.mark.parametrize("line", [
    # sgl-project/sglang#6193: a call inside the process that failed (sglang's register_buffer_to_engine)
    "RuntimeError: Mooncake memory registration failed.",
    # ours: what failed inside the worker, and why
    "RuntimeError: worker failed to load the model weights",
    "ValueError: Worker failed to start: --num-gpus 4 but only 2 visible",
    # ours: a host the job's own code names, not a launcher's check of its hosts
    "RuntimeError: could not connect to some hosts via ssh: key file /home/u/.ssh/id_rsa not found",
])
def test_near_miss_a_failure_said_with_its_reason_stays_the_workloads(line: str) -> None:
    assert [d.kind for d in last_line(line)] == ["app.exception"]


def test_the_exception_a_servers_start_was_raised_from_decides() -> None:
    # dask's chain as Python prints `raise RuntimeError(...) from exc` (the frames: distributed/core.py): the worker's
    # own exception first, then the wrapper, which decides nothing over it
    lines = [TB, '  File "/work/worker_setup.py", line 8, in setup', "KeyError: 'CUDA_VISIBLE_DEVICES'", "",
             "The above exception was the direct cause of the following exception:", "",
             TB, '  File "/env/lib/python3.12/site-packages/distributed/core.py", line 536, in start',
             '    raise RuntimeError(f"{type(self).__name__} failed to start.") from exc',
             "RuntimeError: Worker failed to start."]
    assert kinds(helpers.scan(helpers.APP_AND_NCCL, lines, "application")) == [("app.exception", "KeyError")]


# ------------------------------------------------------------ a thread's wrapper: the thread's exception decides


def test_olmos_thread_error_leaves_the_decision_to_the_threads_exception() -> None:
    # allenai/OLMo olmo/util.py threaded_generator: `raise OLMoThreadError(f"generator thread {thread_name} failed")
    # from x`, the thread's exception printed first
    lines = [TB, '  File "/work/olmo/data/iterable_dataset.py", line 177, in _get_dataset_item',
             "KeyError: 'input_ids'", "",
             "The above exception was the direct cause of the following exception:", "",
             TB, '  File "/work/olmo/util.py", line 638, in threaded_generator',
             "olmo.exceptions.OLMoThreadError: generator thread data thread 3 failed"]
    assert kinds(helpers.scan(helpers.APP_AND_NCCL, lines, "application")) == [("app.exception", "KeyError")]


def test_olmos_thread_error_alone_names_no_cause() -> None:
    # allenai/OLMo#552: the logger's line, the thread's traceback not printed
    line = ("[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: generator thread data "
            "thread 3 failed")
    assert [d for d in alone(line) if d.kind == "app.exception" and not d.fields.get("envelope")] == []


def test_near_miss_another_class_with_a_threads_words_stays_the_workloads() -> None:
    # ours: the class row is OLMo's class, not its words
    got = kinds(last_line("RuntimeError: generator thread data thread 3 failed"))
    assert got == [("app.exception", "RuntimeError")]


# ------------------------------------------------------------ a service's failure reason as its SDK relays it


def test_sagemakers_sdk_relaying_a_capacity_failure_is_no_workload_exception() -> None:
    # aws/deep-learning-containers#1075 (pytest's `E` prefix taken off): sagemaker/session.py _check_job_status
    line = ("sagemaker.exceptions.UnexpectedStatusException: Error for Training job "
            "test-tf-smdataparallel-1619652004-96b6: Failed. Reason: CapacityError: Unable to provision requested ML "
            "compute capacity. Please retry using a different ML instance type.")
    assert [d for d in last_line(line) if d.kind == "app.exception" and not d.fields.get("envelope")] == []


def test_near_miss_sagemakers_sdk_relaying_another_reason_stays_an_exception() -> None:
    # huggingface/blog#114: a reason that is no capacity or internal error of the service's
    line = ("UnexpectedStatusException: Error for Training job huggingface-pytorch-training-2021-05-31-01-39-31-463: "
            "Failed. Reason: ClientError: Artifact upload failed:Insufficient disk space")
    assert [d.kind for d in last_line(line)] == ["app.exception"]


# ------------------------------------------------------------ a socket to another node closed, a store's wait ran out


@pytest.mark.parametrize("exc_type", ["ReadSocketException", "WriteSocketException", "NnTransferSocketException"])
def test_a_transfer_that_failed_on_a_socket_to_another_node_is_a_symptom(exc_type: str) -> None:
    # b4rtaz/distributed-llama#140 (ReadSocketException, verbatim); the other two classes from the same program's
    # source (src/socket.cpp writeSocket, src/nn/nn-network.cpp tryReadSocket): libstdc++'s record of the uncaught
    # exception, its `what()` on the next line
    drafts = scan_app([f"terminate called after throwing an instance of '{exc_type}'", "  what():  std::exception",
                       "Aborted"])
    assert [d.kind for d in drafts] == ["nccl.remote_error"]


@pytest.mark.parametrize("exc_type", [
    # from b4rtaz/distributed-llama src/nn/nn-network.cpp connectSocket: a connect that failed is the job's address or
    # a peer never up, not a transfer another node broke
    "NnConnectionSocketException",
    # ours: another program's class with the same words in it
    "ReadSocketExceptionHandlerError",
    "std::runtime_error",
])
def test_near_miss_another_class_at_the_same_place_stays_the_workloads(exc_type: str) -> None:
    drafts = scan_app([f"terminate called after throwing an instance of '{exc_type}'", "  what():  Socket closed",
                       "Aborted"])
    assert [k for k, _ in kinds(drafts)] == ["app.exception"]


def test_a_stores_wait_that_ran_out_is_a_timeout_symptom() -> None:
    # FastVideo (hao-ai-lab/FastVideo#228), verbatim: c10d's client socket to the TCPStore (pytorch/pytorch
    # torch/csrc/distributed/c10d/socket.cpp SocketImpl::waitForInput), the poll's warning, then its timeout
    lines = [
        "[rank2]:[W303 08:23:41.024955281 socket.cpp:462] [c10d] waitForInput: poll for socket SocketImpl(fd=71, "
        "addr=[localhost]:43246, remote=[localhost]:29500) returned 0, likely a timeout",
        "[rank2]:[W303 08:23:41.025328690 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=71, "
        "addr=[localhost]:43246, remote=[localhost]:29500) timed out after 600000ms",
    ]
    assert [d.kind for d in scan_app(lines)] == ["nccl.timeout"]


@pytest.mark.parametrize("line", [
    # from pytorch/pytorch torch/csrc/distributed/c10d/socket.cpp waitForInput: the poll itself failed (no wait ran out)
    "[W303 08:23:41.024955281 socket.cpp:470] [c10d] waitForInput: poll for socket SocketImpl(fd=71, "
    "addr=[localhost]:43246, remote=[localhost]:29500) failed with res=-1, err=Bad file descriptor.",
    # ours: the words of the row without c10d's socket in them
    "waitForInput: socket closed by the server after 30000ms of idle time",
])
def test_near_miss_other_waitforinput_words_are_no_timeout(line: str) -> None:
    assert "nccl.timeout" not in [d.kind for d in scan_app([line])]


# ------------------------------------------------------------ a platform program the worker could not reach


@pytest.mark.parametrize("line", [
    # vllm-project/vllm#5495, verbatim: Ray's core worker that could not register with its node's raylet
    "[2024-06-13 16:11:51,588 E 13261 13261] core_worker.cc:228: Failed to register worker "
    "01000000ffffffffffffffffffffffffffffffffffffffffffffffff to Raylet. IOError: [RayletClient] Unable to register "
    "worker with raylet. No such file or directory",
    # from ray-project/ray src/ray/raylet_client/raylet_client.cc (the prefix before the socket's own words) and
    # src/ray/core_worker/core_worker.cc (its later `Failed to register worker to Raylet: ` with the worker id after)
    "[2025-02-11 09:30:02,114 E 2211 2211] core_worker.cc:514: Failed to register worker to Raylet: IOError: "
    "[RayletClient] Unable to register worker with raylet. Failed to read data from the socket: End of file "
    "worker_id=01000000ffffffffffffffffffffffffffffffffffffffffffffffff",
])
def test_a_worker_the_raylet_did_not_register_is_a_symptom(line: str) -> None:
    assert [d.kind for d in alone(line)] == ["nccl.remote_error"]


@pytest.mark.parametrize("line", [
    # ours: the job's own registration with a service of its own, in the same words without Ray's client
    "RuntimeError: Unable to register worker with raylet-proxy: token rejected",
    "IOError: [Errno 2] No such file or directory: '/tmp/ray/session_latest/worker_config.yaml'",
])
def test_near_miss_the_jobs_own_registration_or_file_stays_the_workloads(line: str) -> None:
    assert "nccl.remote_error" not in [d.kind for d in alone(line)]
    assert [d.kind for d in alone(line)] != []


# ------------------------------------------------------------ a collective library's call failed, why said elsewhere


@pytest.mark.parametrize("line", [
    # PaddlePaddle/PaddleOCR#6134, verbatim: Paddle's enforce on a BKCL call (Kunlun's collective library)
    "PreconditionNotMetError: bkcl_init_rank failed, got wrong value [3].",
    # from PaddlePaddle paddle/fluid/platform/collective_helper.cc (its older message, without the value)
    "PreconditionNotMetError: bkcl_init_rank failed",
])
def test_a_bkcl_call_that_failed_is_the_collective_librarys(line: str) -> None:
    assert [d.kind for d in alone(line)] == ["nccl.error"]


@pytest.mark.parametrize("line", [
    # ours: the job's own function of a name like BKCL's, with its own reason after it
    "RuntimeError: bkcl_init_rank failed because rank 5 is out of range for 4 devices",
    "PreconditionNotMetError: xpu_set_device failed[2]",
])
def test_near_miss_a_failure_with_its_reason_or_another_call_stays_the_workloads(line: str) -> None:
    assert "nccl.error" not in [d.kind for d in alone(line)]


@pytest.mark.parametrize("line", [
    # baidu/vLLM-Kunlun#382, verbatim: torch_xmlir's XCCL backend raising XCCL's result
    "ValueError: [INVALID PARAMETER]: error code= 1(at .../torch_xmlir/csrc/new_xccl/XCCLUtils.hpp:53)",
    # baidu/vLLM-Kunlun#420, verbatim (the two-rank probe)
    "ValueError: [INVALID PARAMETER]: error code=1",
])
def test_an_xccl_result_raised_by_its_backend_is_the_collective_librarys(line: str) -> None:
    assert [d.kind for d in alone(line)] == ["nccl.error"]


@pytest.mark.parametrize("line", [
    # ours: the job's own argument check, the same bracketed words with its reason after them
    "ValueError: [INVALID PARAMETER]: error code=1: --tp 3 does not divide 8 heads",
    "ValueError: [INVALID PARAMETER] learning rate must be positive",
    # ours: other bracketed words in the same form, which no thread shows XCCL's backend raising
    "RuntimeError: [INTERNAL ERROR]: error code=3",
])
def test_near_miss_an_argument_check_of_the_jobs_own_stays_the_workloads(line: str) -> None:
    assert "nccl.error" not in [d.kind for d in alone(line)]
