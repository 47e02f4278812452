"""vLLM, SGLang and Ray in their own words on a failing run's path (catalog/exceptions.yaml, the rows after
Horovod's; bench/program_scan.py lists every such message of the three programs and what it is read as).

A process the program started that died, as its parent reports it, and a wait that ran out on another process are
symptoms (nccl.remote_error, nccl.timeout): never a cause of their own. A port in use, a cluster without the resources
asked for, memory the flags ask for that the node lacks, an executor, dtype or library the build lacks are the job's
set-up. Each line is the program's own format string filled in (file named beside it: vllm-project/vllm,
sgl-project/sglang, ray-project/ray as released on PyPI, vllm 0.34.0, sglang 0.5.10.post1, ray 2.60.0), with the
program's logger head where it logs the words; each group has near misses from the same sources.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.base import Draft
from tests.conftest import BundleMaker
from tests.extract.helpers import alone, last_line


def kinds(drafts: list[Draft]) -> list[str]:
    return [d.kind for d in drafts]


# ------------------------------------------------------------------ a process that died, as its parent says


@pytest.mark.parametrize("line", [
    # vllm/v1/utils.py: the engine manager's check of its processes
    "RuntimeError: Process EngineCore_DP0 (PID: 4242) died with exit code 1",
    "RuntimeError: Engine core process EngineCore_DP0 died unexpectedly.",
    # vllm/v1/engine/utils.py: the API server's wait for the engine's handshake
    "RuntimeError: Frontend process failed during engine core initialization. See root cause above. Failed frontend "
    "proc(s): ['ApiServer_0']",
    # vllm/v1/executor/multiproc_executor.py: the executor after a worker died or failed
    "RuntimeError: Executor failed.",
    "RuntimeError: One or more workers failed",
    "RuntimeError: Worker failed with error 'list index out of range', please check the stack trace above for the "
    "root cause",
    # sglang/srt/entrypoints/engine.py: the launcher after a child failed to start
    "RuntimeError: Initialization failed. Please see the error messages above.",
    # sglang/utils.py: a server process the launcher started
    "RuntimeError: Server process exited with code 1",
    # sglang/srt/disaggregation/mooncake/conn.py: the prefill instance a decode instance transfers from
    "RuntimeError: Transfer thread failed because of timed out. Prefill instance with bootstrap_port=8998 is dead.",
])
def test_a_process_the_program_started_that_died_is_a_symptom(line: str) -> None:
    assert kinds(last_line(line)) == ["nccl.remote_error"]


@pytest.mark.parametrize("line", [
    # vllm/v1/executor/ray_executor_v2.py, under vLLM's logger head
    "(EngineCore_DP0 pid=4242) ERROR 05-01 12:00:00 [ray_executor_v2.py:522] RayWorkerProc rank=1 died unexpectedly, "
    "shutting down executor.",
    # sglang/srt/managers/tokenizer_manager.py, under SGLang's logger head
    "[2026-05-01 12:00:00] SIGQUIT received. signum=None, frame=None. It usually means one child failed.",
    # sglang/srt/utils/watchdog.py
    "[2026-05-01 12:00:00] Subprocess scheduler_0 (pid=4242) crashed with exit code 1. Triggering SIGQUIT for "
    "cleanup...",
    # sglang/multimodal_gen/runtime/launch_server.py
    "[2026-05-01 12:00:00] Rank 1 scheduler is dead. Please check if there are relevant logs.",
    # ray/dashboard/modules/job/job_manager.py, under Ray's logger head
    "2026-05-01 12:00:00,123\tERROR job_manager.py:303 -- Job supervisor actor for raysubmit_x died: The actor died "
    "unexpectedly before finishing this task.",
])
def test_a_logged_death_of_a_child_is_a_symptom(line: str) -> None:
    assert kinds(alone(line)) == ["nccl.remote_error"]


def test_a_death_by_a_signal_also_names_the_signal() -> None:
    # vllm/v1/utils.py with Python's negative exit code: the kill is read beside the symptom
    drafts = last_line("RuntimeError: Process EngineCore_DP0 (PID: 4242) died with exit code -9")
    assert kinds(drafts) == ["nccl.remote_error", "process.signal"] and drafts[1].fields.get("signal") == "SIGKILL"


def test_the_error_a_workers_failure_carries_decides_where_it_names_a_cause() -> None:
    # vllm/v1/executor/multiproc_executor.py quoting the worker's CUDA error: CUDA's words are read first
    assert kinds(last_line("RuntimeError: Worker failed with error 'CUDA error: an illegal memory access was "
                           "encountered', please check the stack trace above for the root cause")) == ["app.cuda_error"]


@pytest.mark.parametrize("line", [
    # sglang/srt/entrypoints/engine.py logs its own SIGQUIT handler at ERROR: no child died
    "[2026-05-01 12:00:00] Using custom SIGQUIT handler: my_handler",
    # sglang/srt/entrypoints/http_server.py: the warmup's own error follows the words, it decides
    "[2026-05-01 12:00:00] Initialization failed. warmup error: Traceback (most recent call last):",
])
def test_near_miss_other_words_of_the_same_launchers_name_no_death(line: str) -> None:
    assert "nccl.remote_error" not in kinds(alone(line))


def test_near_miss_an_executor_that_failed_for_a_reason_it_gives_is_no_death() -> None:
    # the executor's words anchored whole: more after them is another message (vLLM's own model loader's wording)
    assert kinds(last_line("RuntimeError: Executor failed. Cannot find model weights in /models/x")) != [
        "nccl.remote_error"]


# ------------------------------------------------------------------ a wait on another process that ran out


@pytest.mark.parametrize("line", [
    # vllm/v1/executor/multiproc_executor.py, vllm/distributed/utils.py
    "TimeoutError: RPC call to execute_model timed out.",
    "RuntimeError: Barrier timed out after 300 seconds",
    # vllm/v1/engine/core_client.py, core.py, coordinator.py
    "TimeoutError: Timed out waiting for engine core processes to start. This is often caused by slow weight loading "
    "for large models. Waited 600s (configured by VLLM_ENGINE_READY_TIMEOUT_S).",
    "RuntimeError: Did not receive response from front-end process within 5 minutes",
    "RuntimeError: DP Coordinator process failed to report ZMQ addresses within timeout=30 seconds during startup.",
    # sglang/srt/managers/data_parallel_controller.py
    "RuntimeError: Failed to receive worker ports from node 0 within timeout",
    # ray/_private/node.py, services.py
    "Exception: The current node timed out during startup. This could happen because some of the raylet failed to "
    "startup or the GCS has become overloaded.",
    "TimeoutError: Timed out after 30 seconds while waiting for node to startup. Did not find socket name "
    "/tmp/ray/session_x/sockets/plasma_store in the list of object store socket names.",
    # ray/exceptions.py ObjectFetchTimedOutError.__str__'s last words
    "ray.exceptions.ObjectFetchTimedOutError: Failed to retrieve object 00ff. Fetch for object 00ff timed out because "
    "no locations were found for the object. This may indicate a system-level bug.",
])
def test_a_wait_on_another_process_that_ran_out_is_a_symptom(line: str) -> None:
    assert kinds(last_line(line)) == ["nccl.timeout"]


@pytest.mark.parametrize("line", [
    # sglang/srt/utils/watchdog.py, sglang/srt/entrypoints/http_server.py
    "[2026-05-01 12:00:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
    "[2026-05-01 12:00:00] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. "
    "tic start time: 1. last_heartbeat time: 1",
])
def test_a_logged_watchdog_or_health_check_timeout_is_a_symptom(line: str) -> None:
    assert kinds(alone(line)) == ["nccl.timeout"]


@pytest.mark.parametrize("line", [
    # sglang/srt/server_args.py: the flag's help text
    "  --watchdog-timeout WATCHDOG_TIMEOUT  Set watchdog timeout in seconds. If a forward batch takes longer than "
    "this, the server will crash to prevent hanging.",
    # sglang/srt/utils/watchdog.py: the watchdog's own thread failed, no batch hung
    "[2026-05-01 12:00:00] Scheduler watchdog thread crashed: boom",
])
def test_near_miss_the_watchdogs_other_words_are_no_timeout(line: str) -> None:
    assert "nccl.timeout" not in kinds(alone(line))


def test_near_miss_a_drain_on_shutdown_that_ran_out_is_no_peers_timeout() -> None:
    # vllm/v1/engine/async_llm.py: the server's own drain of requests while it stops
    assert kinds(last_line("TimeoutError: Timeout reached after 30 seconds waiting for requests to drain.")) != [
        "nccl.timeout"]


# ------------------------------------------------------------------ the job's set-up


@pytest.mark.parametrize("line", [
    # vllm/utils/network_utils.py, sglang/srt/entrypoints/engine.py, ray/_private/services.py: a port in use
    "RuntimeError: Could not find open port after 10 attempts starting from port 8000",
    "RuntimeError: engine_info_bootstrap_port 8998 is already in use. When running multiple instances on the same "
    "node, each instance must use a different --engine-info-bootstrap-port.",
    "ValueError: Failed to bind to 0.0.0.0:8265 because it's already occupied. You can use `ray start "
    "--dashboard-port ...` or `ray.init(dashboard_port=...)` to select a different port.",
    # ray/_private/parameter.py RayParams._check_usage (NVIDIA-NeMo/RL#261): two of the node's components, one port
    "ValueError: Ray component worker_ports is trying to use a port number 53058 that is used by other components.",
    # vllm/v1/executor/ray_utils.py, ray/train/_internal/backend_executor.py: resources the cluster lacks
    "ValueError: Cannot provide a placement group of placement_group_specs=[{'GPU': 1.0}] within 1800 seconds. See "
    "`ray status` and `ray list nodes` to make sure the cluster has enough resources.",
    "TimeoutError: Placement group creation timed out. Make sure your cluster either has enough resources or use an "
    "autoscaling cluster.",
    # vllm/v1/executor/ray_utils.py: no Ray
    "ValueError: Failed to import Ray: No module named 'ray'.Please install Ray with `pip install ray`.",
    # sglang/srt/mem_cache/common.py, memory_pool_host.py; ray/_private/services.py: memory the flags ask for
    "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. "
    "req_to_token_pool.available_size()=0, num_reqs=1, ",
    "ValueError: Not enough host memory available. Requesting 64.0 GB but only have 31.2 GB free. Please reduce the "
    "size of the hierarchical cache.",
    "ValueError: The requested object store memory size is greater than the total available memory.",
    # vllm/executor/ray_utils.py initialize_ray_cluster: Ray's view of the node lists none of the engine's device
    # (huggingface/lighteval#841, its PR description's line behind Ray's task prefix, verbatim but the colour codes)
    "(run_inference_one_model pid=2816485) ValueError: Current node has no GPU available. current_node_resource="
    "{'CPU': 96.0, 'node:__internal_head__': 1.0, 'node:26.0.174.186': 1.0, 'memory': 1824080048128.0, "
    "'object_store_memory': 200000000000.0}. vLLM engine cannot start without GPU. Make sure you have at least 1 GPU "
    "available in a node ",
    # vllm/config/parallel.py, vllm/config/model.py, vllm/distributed/device_communicators/pynccl.py
    "ValueError: Unrecognized distributed executor backend mpi. Supported values are 'ray', 'mp' 'uni', "
    "'external_launcher',  custom Executor subclass or its import path.",
    "ValueError: The model type gemma2 does not support float16. Reason: numerical instability",
    "RuntimeError: failed to load the NCCL library for unique-id rendezvous",
    # vllm/v1/worker/utils.py: the budget wording of the free-memory check
    "ValueError: Free memory on device cuda:0 (12.18/23.56 GiB) on startup is less than the engine's budget after "
    "excluding external process's weights (0.9, 21.2 GiB).",
])
def test_the_programs_set_up_words_are_the_jobs_set_up(line: str) -> None:
    drafts = last_line(line)
    assert kinds(drafts) == ["app.exception"] and drafts[0].fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # sglang/srt/server_args.py, under SGLang's logger head
    "[2026-05-01 12:00:00] Port is already in use. dist_init_port=30000 port_base=30001 detokenizer_port=30002 "
    "nccl_port=30003 scheduler_input_port=30004",
    # vllm/distributed/device_communicators/pynccl_wrapper.py, under vLLM's logger head
    "(Worker_TP1 pid=4242) ERROR 05-01 12:00:00 [pynccl_wrapper.py:387] Failed to load NCCL library from libnccl.so.2. "
    "It is expected if you are not running on NVIDIA/AMD GPUs.Otherwise, the nccl library might not exist, be "
    "corrupted or it does not support the current platform Linux.",
])
def test_the_programs_logged_set_up_words_are_the_jobs_set_up(line: str) -> None:
    drafts = [d for d in alone(line) if d.kind == "app.exception"]
    assert len(drafts) == 1 and drafts[0].fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # vllm/snapshot/runtime.py: a process id, not a port
    "vllm.snapshot.runtime.SnapshotRestoreError: captured PID is already occupied: 4242",
    # vllm/distributed/device_communicators/pynccl_wrapper.py: an NCCL call that failed, not the library missing
    "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    # (synthetic) a program's own words that a node has no GPU, without vLLM's resource view after them
    "RuntimeError: Current node has no GPU available, retrying on the next node",
    # (synthetic) a component's port named without Ray's check's words
    "ValueError: Ray component worker_ports uses port number 53058",
])
def test_near_miss_like_words_of_the_same_programs_are_no_set_up(line: str) -> None:
    assert all(d.fields.get("setup") is None for d in last_line(line))


# ------------------------------------------------------------------ Ray's classes that decide nothing


@pytest.mark.parametrize("line", [
    # ray/exceptions.py __str__ of each
    "ray.exceptions.TaskPlacementGroupRemoved: The placement group corresponding to this task has been removed.",
    "ray.exceptions.ActorPlacementGroupRemoved: The placement group corresponding to this Actor has been removed.",
    "ray.exceptions.TaskUnschedulableError: The task is not schedulable: node 7f2b is dead",
])
def test_a_removed_placement_group_or_an_unschedulable_task_decides_nothing(line: str) -> None:
    assert [d for d in last_line(line) if d.kind == "app.exception"] == []


def test_near_miss_rays_other_errors_stay_the_workloads() -> None:
    # ray/exceptions.py ObjectStoreFullError: the job's objects fill the store
    drafts = last_line("ray.exceptions.ObjectStoreFullError: Failed to put object 00ff in object store because it is "
                       "full. Object size is 1024 bytes.")
    assert kinds(drafts) == ["app.exception"] and drafts[0].fields.get("setup") is None


# ------------------------------------------------------------------ whole bundles


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


TB = "Traceback (most recent call last):"


def test_a_start_up_that_timed_out_alone_names_no_cause(make_bundle: BundleMaker) -> None:
    # vllm/v1/engine/core_client.py: the API server gave up on the engine; what held the engine up is not in the log
    lines = [TB, '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core_client.py", line 794, in '
             "_wait_for_engine_startup", "TimeoutError: Timed out waiting for engine core processes to start. This is "
             "often caused by slow weight loading for large models. Waited 600s (configured by "
             "VLLM_ENGINE_READY_TIMEOUT_S)."]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is None


def test_the_launchers_summary_after_the_set_up_error_stays_its_symptom(make_bundle: BundleMaker) -> None:
    # sglang/srt/model_executor/model_runner_kv_cache_mixin.py in the scheduler, then sglang/srt/entrypoints/engine.py
    lines = ["[2026-11-02 10:05:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
             '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 3600, in run_scheduler_process',
             "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
             "[2026-11-02 10:05:01] Received sigquit from a child process. It usually means the child failed.",
             TB, '  File "/sgl/python/sglang/launch_server.py", line 11, in <module>',
             "RuntimeError: Initialization failed. Please see the error messages above."]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert "nccl.remote_error" in [s.category for s in v.symptoms]
