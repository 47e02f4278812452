"""Ray's own words (issue 25): its exception classes (catalog/exceptions.yaml), the raylet's worker-kill summary
(extract/jobend.py) and the GCS's word that it lost a node (catalog/scheduler.yaml), each with a near miss.

Lines are Ray's format strings filled in with this test's ids, hosts and numbers (the source file is named beside
each: ray-project/ray python/ray/exceptions.py, src/ray/raylet/node_manager.cc, src/ray/gcs/gcs_server/
gcs_node_manager.cc and gcs_actor_manager.cc), or verbatim from the Ray documentation page named.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import jobend, nccl
from firstfault.extract.base import Draft, LineExtractor
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *jobend.EXTRACTORS, *helpers.APPLICATION)
TB = "Traceback (most recent call last):"
# How a driver's `ray.get` prints a task's failure (python/ray/_private/worker.py `get`, then the exception's line).
DRIVER = [TB, '  File "/work/driver.py", line 10, in <module>',
          '  File "/opt/conda/lib/python3.10/site-packages/ray/_private/worker.py", line 2524, in get',
          "    raise value.as_instanceof_cause()"]


def read(lines: list[str]) -> list[Draft]:
    return helpers.scan(ALL, lines, "application")


def kinds(lines: list[str]) -> list[str]:
    return [d.kind for d in read(lines)]


# ---------------------------------------------------------------- RayTaskError, as Ray prints it

# exceptions.py RayTaskError.__str__: the task's traceback, its `Traceback` header replaced by the task's process
# title and place (`ray::f() (pid=..., ip=...)`, colorama's cyan around the title since Ray 2), then its frames and
# its exception; as_instanceof_cause names the class `RayTaskError(<cause's class>)`.
_TASK_FRAMES = ['  File "/work/tasks.py", line 3, in save']


@pytest.mark.parametrize("head", [
    "ray.exceptions.RayTaskError(OSError): ray::save() (pid=4242, ip=10.0.0.7)",
    "ray.exceptions.RayTaskError(OSError): \x1b[36mray::save()\x1b[39m (pid=4242, ip=10.0.0.7)",
    # an actor's method (Ray Train's worker, Tune's trainable): its actor id and repr follow
    "ray.exceptions.RayTaskError(OSError): ray::RayTrainWorker._RayTrainWorker__execute() (pid=4242, ip=10.0.0.7, "
    "actor_id=7ea542eba0c6a45ad8374aec01000000, repr=<ray.train._internal.worker_group.RayTrainWorker object at "
    "0x7f2b4c1d6b90>)",
    # bare: a carried class Ray could not subclass, or a Ray before as_instanceof_cause
    "ray.exceptions.RayTaskError: ray::save() (pid=4242, ip=10.0.0.7)",
])
def test_the_exception_a_task_raised_decides_whatever_the_wrapper_is_spelled(head: str) -> None:
    drafts = read([*DRIVER, head, *_TASK_FRAMES, "OSError: [Errno 28] No space left on device: '/ckpt/step_100.pt'"])
    assert [(d.kind, d.fields.get("errno")) for d in drafts] == [("storage.error", "ENOSPC")]


def test_near_miss_a_bare_wrapper_is_no_exception_of_its_own() -> None:
    # The task's NCCL error is a symptom: the bare RayTaskError around it must not become the workload's exception
    # (it did: app.exception `RayTaskError`, the root cause of a verdict whose only finding was the NCCL error).
    lines = [*DRIVER, "ray.exceptions.RayTaskError: ray::train() (pid=4242, ip=10.0.0.7)", *_TASK_FRAMES,
             "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled "
             "system error, NCCL version 2.14.3"]
    assert kinds(lines) == ["nccl.error"]


@pytest.mark.parametrize("line", [
    "ray.exceptions.RayTaskError(KeyError): ray::ImplicitFunc.train() (pid=4242, ip=10.0.0.7, "
    "actor_id=7ea542eba0c6a45ad8374aec01000000, repr=train_fn)",
    # behind Ray's worker tag, as the log monitor prints a worker's line on the driver
    "(TunerInternal pid=99) ray.exceptions.RayTaskError(KeyError): ray::f() (pid=4242, ip=10.0.0.7)",
])
def test_a_lone_wrapper_line_is_read_as_the_class_it_carries(line: str) -> None:
    drafts = read([line])
    assert [(d.kind, d.fields.get("exc_type")) for d in drafts] == [("app.exception", "KeyError")]


@pytest.mark.parametrize("line", [
    # python/ray/tune/tune.py `raise TuneError("Trials did not complete", incomplete_trials)`
    "ray.tune.error.TuneError: ('Trials did not complete', [train_fn_0a1b2_00000, train_fn_0a1b2_00001])",
    # the Tuner's failure message (python/ray/tune/tuner.py)
    "ray.tune.error.TuneError: The Ray Tune run failed. Please inspect the previous error messages for a cause. After "
    "fixing the issue, you can restart the run from scratch or continue this run.",
])
def test_tunes_summary_of_failed_trials_leaves_the_decision_to_the_trials(line: str) -> None:
    trial = [TB, '  File "/work/train_fn.py", line 12, in train_fn', "ZeroDivisionError: division by zero"]
    drafts = read([*trial, TB, '  File "/work/tune_main.py", line 30, in <module>', line])
    assert [(d.kind, d.fields.get("exc_type")) for d in drafts] == [("app.exception", "ZeroDivisionError")]


def test_near_miss_a_tune_error_about_the_jobs_own_arguments_is_its_exception() -> None:
    # a TuneError of another message (this test's own wording): the class alone decides nothing
    drafts = read([TB, '  File "/work/tune_main.py", line 30, in <module>',
                   "ray.tune.error.TuneError: Unknown search space: {'lr': [0.1, 0.01]}"])
    assert [(d.kind, d.fields.get("exc_type")) for d in drafts] == [("app.exception", "TuneError")]


# ---------------------------------------------------------------- the other classes


def test_a_runtime_env_ray_could_not_build_is_the_jobs_set_up() -> None:
    # exceptions.py RuntimeEnvSetupError.__str__: `Failed to set up runtime environment.` then the error
    drafts = read([TB, '  File "/work/driver.py", line 10, in <module>',
                   "ray.exceptions.RuntimeEnvSetupError: Failed to set up runtime environment."])
    assert [(d.kind, d.fields.get("setup")) for d in drafts] == [("app.exception", True)]


def test_near_miss_the_workloads_own_exception_naming_a_runtime_env_is_no_set_up() -> None:
    drafts = read([TB, '  File "/work/driver.py", line 10, in <module>',
                   "ValueError: runtime_env field 'pip' must be a list"])
    assert [(d.kind, d.fields.get("setup")) for d in drafts] == [("app.exception", None)]


# exceptions.py OutOfDiskError.__str__ / ObjectStoreFullError.__str__, after the raylet's own message (plasma's
# `Failed to put object <id> in object store because it is full. Object size is N bytes.`)
OUT_OF_DISK = ("ray.exceptions.OutOfDiskError: Failed to put object "
               "00ffffffffffffffffffffffffffffffffffffff0100000001000000 in object store because it is full. "
               "The object cannot be created because the local object store is full and the local disk's "
               "utilization is over capacity (95% by default).Tip: Use `df` on this node to check disk usage "
               "and `ray memory` to check object store memory usage.")
STORE_FULL = ("ray.exceptions.ObjectStoreFullError: Failed to put object "
              "ffffffffffffffffffffffffffffffffffffffff0100000001000000 in object store because it is full. "
              "Object size is 2147483648 bytes.")


def test_the_local_disk_over_rays_threshold_is_a_full_file_system() -> None:
    drafts = read([TB, '  File "/work/driver.py", line 10, in <module>', OUT_OF_DISK])
    assert [(d.kind, d.fields.get("fs"), d.fields.get("exc_type")) for d in drafts] == [
        ("storage.error", "posix", "OutOfDiskError")]


def test_near_miss_the_object_store_full_of_objects_in_scope_is_the_workloads() -> None:
    drafts = read([TB, '  File "/work/driver.py", line 10, in <module>', STORE_FULL])
    assert [(d.kind, d.fields.get("exc_type")) for d in drafts] == [("app.exception", "ObjectStoreFullError")]


# The core worker's own log line where the put that raises ObjectStoreFullError failed (src/ray/core_worker/
# store_provider/plasma_store_provider.cc, glog's ERROR record behind Ray's worker prefix; the words are the title of
# ray-project/ray#7908, `Failed to put object A in object store because it is full. Object size is B bytes.`)
PUT_FAILED = ("(remote_read pid=4242) [2024-03-01 10:00:00,000 E 4242 4242] plasma_store_provider.cc:122: Failed to "
              "put object ffffffffffffffffffffffffffffffffffffffff0100000001000000 in object store because it is full. "
              "Object size is 2147483648 bytes.")


def test_the_put_that_failed_in_the_core_workers_words_is_the_workloads_exception() -> None:
    drafts = read([PUT_FAILED])
    assert [(d.kind, d.fields.get("terminal")) for d in drafts] == [("app.exception", True)]


def test_near_miss_the_same_words_of_the_local_disk_over_its_threshold_are_not_the_stores_memory() -> None:
    # OutOfDiskError's message without its class line: the same first words, then the disk's
    drafts = read([OUT_OF_DISK.split(": ", 1)[1]])
    assert all(d.kind != "app.exception" for d in drafts)


def test_a_spill_the_disk_could_not_take_is_a_full_file_system() -> None:
    # python/ray/_private/external_storage.py FileSystemStorage.spill_objects, in the IO worker that spills: the
    # spill directory's device full
    drafts = read([TB, '  File "/opt/conda/lib/python3.10/site-packages/ray/_private/external_storage.py", line 283, '
                   "in spill_objects", '    with open(url, "wb", buffering=self._buffer_size) as f:',
                   "OSError: [Errno 28] No space left on device: '/tmp/ray/session_2025-07-23_10-00-00_000000_1/"
                   "ray_spilled_objects/7c8c6d3c7ea84a8a9f4b3ad1b6f8c3d2-multi-4'"])
    assert [(d.kind, d.fields.get("errno")) for d in drafts] == [("storage.error", "ENOSPC")]


def test_near_miss_the_raylets_warning_that_the_disk_is_filling_is_no_failure() -> None:
    # src/ray/common/file_system_monitor.cc: a warning that object creation will fail, if spilling is required
    assert kinds(["(raylet) [2025-07-23 10:05:49,679 E 51000 51000] (raylet) file_system_monitor.cc:111: /tmp/ray/"
                  "session_2025-07-23_10-00-00_000000_1 is over 95% full, available space: 21.7165 GB; capacity: "
                  "491.586 GB. Object creation will fail if spilling is required."]) == []


def test_a_task_ray_cancelled_names_no_cause() -> None:
    # exceptions.py TaskCancelledError.__str__ (Ray 2.x: `Task: <TaskID> was cancelled. `)
    assert kinds([TB, '  File "/work/driver.py", line 10, in <module>',
                  "ray.exceptions.TaskCancelledError: Task: TaskID(16310a0f0a45af5cffffffffffffffffffffffff01000000) "
                  "was cancelled."]) == []


def test_near_miss_what_made_the_task_cancel_still_decides() -> None:
    # the exception being handled when the cancellation was raised began the chain, and decides
    lines = [TB, '  File "/work/tasks.py", line 3, in save',
             "OSError: [Errno 122] Disk quota exceeded: '/home/u/ckpt'", "",
             "During handling of the above exception, another exception occurred:", "",
             TB, '  File "/work/driver.py", line 10, in <module>',
             "ray.exceptions.TaskCancelledError: Task: TaskID(16310a0f0a45af5cffffffffffffffffffffffff01000000) was "
             "cancelled."]
    assert [(d.kind, d.fields.get("errno")) for d in read(lines)] == [("storage.error", "EDQUOT")]


def test_a_job_pointed_at_no_cluster_is_its_own_set_up() -> None:
    # python/ray/_private/services.py canonicalize_bootstrap_address: ray.init(address="auto") with no cluster
    drafts = read([TB, '  File "/work/train.py", line 5, in <module>',
                   "ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by "
                   "setting `--address` flag or `RAY_ADDRESS` environment variable."])
    assert [(d.kind, d.fields.get("setup")) for d in drafts] == [("app.exception", True)]


# src/ray/rpc/gcs/gcs_rpc_client.h: the process gives up on the GCS (E), after the retries it warns of (W)
GCS_GONE = ("[2025-07-23 10:05:49,679 E 51000 51000] gcs_rpc_client.h:552: Failed to connect to GCS within 60 seconds. "
            "GCS may have been killed. It's either GCS is terminated by `ray stop` or is killed unexpectedly. If it is "
            "killed unexpectedly, see the log file gcs_server.out. https://docs.ray.io/en/master/ray-observability/"
            "ray-logging.html#logging-directory-structure. The program will terminate.")


def test_a_process_that_lost_the_gcs_reports_a_death_elsewhere() -> None:
    assert kinds([GCS_GONE]) == ["nccl.remote_error"]


@pytest.mark.parametrize("line", [
    "[2026-03-03 20:02:40,466 W 41024 41024] rpc_client.h:153: Failed to connect to GCS at address "
    "10.166.166.106:48057 within 5 seconds.",
    "[2026-03-03 20:03:10,467 W 41024 41024] gcs_client.cc:205: Failed to get cluster ID from GCS server: TimedOut: "
    "Timed out while waiting for GCS to become available.",
])
def test_near_miss_the_retries_while_waiting_for_the_gcs_are_warnings(line: str) -> None:
    assert kinds([line]) == []


def test_a_gcs_address_with_no_host_is_the_jobs_set_up_whatever_its_level() -> None:
    # MM-EUREKA issue 54 (ModalMinds/MM-EUREKA), verbatim: `ray start --address=$MASTER_ADDR:6379` with the variable
    # unset; the raylet's retry names an address with an empty host, at warning level
    line = ("[2025-07-23 10:05:49,679 W 51000 51000] gcs_rpc_client.h:151: Failed to connect to GCS at address :6379 "
            "within 5 seconds.")
    drafts = read([line])
    assert [(d.kind, d.fields.get("setup"), d.fields.get("terminal")) for d in drafts] == [
        ("app.exception", True, True)]


def test_near_miss_a_gcs_address_with_its_host_is_a_retry() -> None:
    # vllm-project/vllm#15385's title, verbatim (the GCS at a real address that did not answer yet): a warning
    assert kinds(["[2025-03-24 10:00:00,000 W 1 1] gcs_rpc_client.h:151: Failed to connect to GCS at address "
                  "192.168.2.40:6379 within 5 seconds."]) == []


# ---------------------------------------------------------------- a death Ray reports, and its exit detail

_ACTOR_DIED = [TB, '  File "/work/driver.py", line 10, in <module>',
               "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
               "\tclass_name: RayTrainWorker", "\tactor_id: 647f783bf08ca69c00e2c66b01000000", "\tpid: 55131",
               "\tip: 172.17.0.2"]


def test_an_actor_whose_constructor_raised_is_that_exception() -> None:
    # exceptions.py ActorDiedError(cause=RayTaskError): the creation task's traceback in the message
    lines = [*DRIVER[:3], "    raise value",
             "ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation task, "
             "\x1b[36mray::RayTrainWorker.__init__()\x1b[39m (pid=4242, ip=10.0.0.7, "
             "actor_id=7ea542eba0c6a45ad8374aec01000000, repr=<RayTrainWorker>)",
             '  File "/work/worker.py", line 12, in __init__', "ModuleNotFoundError: No module named 'flash_attn'"]
    assert [(d.kind, d.fields.get("exc_type")) for d in read(lines)] == [("app.exception", "ModuleNotFoundError")]


def test_an_actor_killed_by_rays_memory_monitor_is_the_hosts_memory() -> None:
    # gcs_actor_manager.cc: the worker's exit type and detail after the actor's fields; the detail is the memory
    # monitor's (node_manager.cc)
    lines = [*_ACTOR_DIED, "The actor is dead because its worker process has died. Worker exit type: "
             "NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low on memory."]
    assert sorted(kinds(lines)) == ["host.oom_kill", "nccl.remote_error"]


def test_the_memory_monitors_own_account_of_a_kill_is_the_hosts_memory() -> None:
    # vllm-project/vllm#2669 (https://github.com/vllm-project/vllm/issues/2669): the worker killing policy's message
    # on a line of its own (its first line, `Task was killed due to the node running low on memory.`, not posted)
    line = ("Memory on the node (IP: 169.254.181.2, ID: 708c7baf966d59aa3f08299830c349ca055293ebb1c33d8e72cd3336) "
            "where the task (actor ID: 0dab4ab45f6c947201afac6d01000000, name=RayWorkerVllm.__init__, pid=308, memory "
            "used=11.15GB) was running was 12.49GB / 13.15GB (0.950003), which exceeds the memory usage threshold of "
            "0.95. Ray killed this worker (ID: 79a553ea91fe46f95e8384ddf8a8f0a01e3418a975ecd0af983c7bb2) because it "
            "was the most recently scheduled task; to see more information about memory usage on this node, use "
            "`ray logs raylet.out -ip 169.254.181.2`.")
    assert kinds([line]) == ["host.oom_kill"]
    # near miss: the threshold named in a configuration note, no worker killed
    assert kinds(["The memory monitor kills a worker when memory use exceeds the memory usage threshold of 0.95 "
                  "(RAY_memory_usage_threshold)."]) == []


def test_near_miss_the_potential_root_causes_ray_lists_are_none() -> None:
    # node_manager.cc HandleClientConnectionError: the connection to the worker ended; the three causes it lists
    # are guesses, not a finding (OOM killer, `ray stop --force`, SIGSEGV)
    lines = [*_ACTOR_DIED, "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
             "Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are "
             "some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory "
             "usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other "
             "unexpected errors."]
    assert kinds(lines) == ["nccl.remote_error"]


def test_near_miss_a_node_death_that_names_rays_id_alone_is_a_symptom() -> None:
    # gcs_actor_manager.cc GenNodeDiedCause: Ray's node id, no host: no node to blame
    lines = [*_ACTOR_DIED[:4], "The actor died because its node has died. Node Id: "
             "9426f44574cce4866be798cfed308f2d3e21ba69487d422872cdd6e3",
             "\tthe actor's node was terminated unexpectedly: health check failed due to missing too many heartbeats"]
    assert kinds(lines) == ["nccl.remote_error"]


def test_an_actor_whose_node_was_preempted_is_the_jobs_preemption() -> None:
    # gcs_actor_manager.cc GenNodeDiedCause, for a node lost past its preemption drain's deadline
    lines = [*_ACTOR_DIED[:4], "The actor died because its node has died. Node Id: "
             "9426f44574cce4866be798cfed308f2d3e21ba69487d422872cdd6e3",
             "\tthe actor's node was preempted: spot instance interruption notice received"]
    drafts = read(lines)
    assert [(d.kind, d.fields.get("due_to"), d.fields.get("scheduler")) for d in drafts] == [
        ("nccl.remote_error", None, None), ("process.signal", "preemption", "ray")]


def test_near_miss_a_node_terminated_on_purpose_names_no_cause() -> None:
    lines = [*_ACTOR_DIED[:4], "The actor died because its node has died. Node Id: "
             "9426f44574cce4866be798cfed308f2d3e21ba69487d422872cdd6e3",
             "\tthe actor's node was terminated expectedly: received SIGTERM"]
    assert kinds(lines) == ["nccl.remote_error"]


def test_near_miss_a_guess_at_a_pods_memory_limit_is_no_oom() -> None:
    # python/ray/_raylet.pyx: a worker's SystemExit under Kubernetes (`may have exceeded`: Ray's guess)
    lines = [*_ACTOR_DIED, "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
             "Worker exit detail: Worker exits unexpectedly. Worker exits with an exit code None. The worker may have "
             "exceeded K8s pod memory limits."]
    assert kinds(lines) == ["nccl.remote_error"]


# ---------------------------------------------------------------- the raylet's worker-kill summary

# node_manager.cc, the memory monitor's summary (docs.ray.io ray-core/scheduling/ray-oom-prevention: `(raylet)
# [2023-04-09 07:23:59,445 E 395 395] (raylet) node_manager.cc:3049: 10 Workers (tasks / actors) killed due to
# memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: ..., IP: 10.0.62.231) ...`)
_SUMMARY = ("(raylet) [2023-04-09 07:23:59,445 E 395 395] (raylet) node_manager.cc:3049: {oom} Workers (tasks / "
            "actors) killed due to memory pressure (OOM), {other} Workers crashed due to other reasons at node (ID: "
            "e5d953ef03e55e26f13973ea1b5a0fd0ecc729cd820bc89e4aa50451, IP: 10.0.62.231) over the last time period. To "
            "see more information about the Workers killed on this node, use `ray logs raylet.out -ip 10.0.62.231`")


def test_the_raylets_summary_of_workers_killed_for_memory() -> None:
    assert kinds([_SUMMARY.format(oom=10, other=0)]) == ["host.oom_kill"]


def test_the_summary_wrapped_by_a_terminal_before_its_kill_words_is_still_read() -> None:
    head, tail = _SUMMARY.format(oom=2, other=0).split(" actors)", 1)
    assert kinds([head, " actors)" + tail]) == ["host.oom_kill"]


def test_near_miss_a_summary_of_crashes_alone_kills_nothing_for_memory() -> None:
    assert kinds([_SUMMARY.format(oom=0, other=3)]) == []


# ---------------------------------------------------------------- the GCS losing a node, through the engine

# gcs_node_manager.cc, the `node_removed` error published to the drivers, as the driver's worker.py logs it
# (Ray 2.x; 1.x said `and ip: <addr>` without the node name)
NODE_DEAD = ("2026-11-02 10:05:00,774\tWARNING worker.py:1866 -- The node with node id: "
             "9426f44574cce4866be798cfed308f2d3e21ba69487d422872cdd6e3 and address: 10.0.0.2 and node name: {name} "
             "has been marked dead because the detector has missed too many heartbeats from it. This can happen when "
             "a \t(1) raylet crashes unexpectedly (OOM, preempted node, etc.) ")
NODE_DEAD_1X = ("2026-11-02 10:05:00,774\tWARNING worker.py:1829 -- The node with node id: "
                "9426f44574cce4866be798cfed308f2d3e21ba69487d422872cdd6e3 and ip: 10.0.0.2 has been marked dead "
                "because the detector has missed too many heartbeats from it. This can happen when a raylet crashes "
                "unexpectedly or has lagging heartbeats.")
# NCCL's bootstrap line on node-02's rank: the address is node-02's
ADDRESS = "node-02:3:3 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>"
_STEP = "2026-11-02 10:00:0{r} step 100 loss 1.234"


def _bundle(make_bundle: BundleMaker, driver: str, address: bool = True) -> Analyzer:
    wl = copy.deepcopy(WORKLOAD)
    files = {f"app/rank-{r}.log": _STEP.format(r=r) + "\n" for r in (1, 2, 4, 5)}
    files["app/rank-3.log"] = _STEP.format(r=3) + "\n" + (ADDRESS + "\n" if address else "")
    files["app/rank-0.log"] = _STEP.format(r=0) + "\n" + driver + "\n"  # the driver runs on node-01
    return make_bundle(files, wl)


@pytest.mark.parametrize("line", [NODE_DEAD.format(name="10.0.0.2"), NODE_DEAD.format(name="node-02"), NODE_DEAD_1X])
def test_a_node_the_gcs_marked_dead_is_that_node_lost(make_bundle: BundleMaker, line: str) -> None:
    v = Analyzer().analyze_path(str(_bundle(make_bundle, line)))
    assert v.attributed_domain == "infrastructure"
    assert v.root_cause is not None and v.root_cause.category == "node.unreachable"
    assert v.root_cause.nodes == ["node-02"]  # the node it names, not the driver's node that logged it


def test_near_miss_a_lost_node_no_address_places_is_never_the_drivers(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(_bundle(make_bundle, NODE_DEAD.format(name="10.0.0.2"), address=False)))
    assert v.root_cause is None or v.root_cause.nodes != ["node-01"]


def test_near_miss_the_oldest_wording_names_no_host(make_bundle: BundleMaker) -> None:
    # Ray 0.x (`client ID <id> ... the monitor`): Ray's id alone
    line = ("2019-04-18 02:11:56,294\tERROR worker.py:1780 -- The node with client ID "
            "37669ef11ddbd4e5fb6ae9e089dedc0475c3f89d has been marked dead because the monitor has missed too many "
            "heartbeats from it.")
    v = Analyzer().analyze_path(str(_bundle(make_bundle, line)))
    assert v.root_cause is None or v.root_cause.category != "node.unreachable"


# ---------------------------------------------------------------- `ray job`'s word on how the job ended

# python/ray/dashboard/modules/job/cli.py `_log_job_status`: `Job '<id>' succeeded` between two rules of dashes,
# `Job '<id>' failed` (then `Status message: ...`), `Job '<id>' was stopped` (JobStatus.STOPPED, logged as a
# warning); its catch-all `Status for job '<id>': RUNNING` for the states that are no end.
def _ray_job() -> dict[str, object]:
    return {"apiVersion": "firstfault/v1",
            "workload": {"id": "raysubmit_Vc4Pm3D8ykbmSYHh", "scheduler": "static", "nodes": ["node-01"]},
            "sources": [{"kind": "application", "path": "app/ray-job.log"}]}


_SUBMITTED = "Job 'raysubmit_Vc4Pm3D8ykbmSYHh' submitted successfully"


def test_a_job_its_owner_stopped_was_cancelled(make_bundle: BundleMaker) -> None:
    lines = [_SUBMITTED, "2026-11-02 10:00:01,000 step 100 loss 1.234",
             "2026-11-02 10:05:00,355\tWARN cli.py:34 -- Job 'raysubmit_Vc4Pm3D8ykbmSYHh' was stopped"]
    v = Analyzer().analyze_path(str(make_bundle({"app/ray-job.log": "".join(x + "\n" for x in lines)},
                                                _ray_job())))
    assert v.outcome == "cancelled"
    assert v.root_cause is not None and v.root_cause.category == "scheduler.cancelled"


@pytest.mark.parametrize("status", ["RUNNING", "PENDING"])
def test_near_miss_the_catch_all_status_of_a_running_job_is_no_end(make_bundle: BundleMaker, status: str) -> None:
    lines = [_SUBMITTED, f"Status for job 'raysubmit_Vc4Pm3D8ykbmSYHh': {status}"]
    v = Analyzer().analyze_path(str(make_bundle({"app/ray-job.log": "".join(x + "\n" for x in lines)},
                                                _ray_job())))
    assert v.outcome == "unknown"
    assert v.root_cause is None


def test_near_miss_prose_that_says_a_job_was_stopped_is_no_end() -> None:
    from firstfault.extract.runend import read_end

    assert read_end("Job 'raysubmit_Vc4Pm3D8ykbmSYHh' was stopped") == {"system": "ray", "scope": "job",
                                                                        "state": "CANCELLED"}
    assert read_end("Job 'raysubmit_Vc4Pm3D8ykbmSYHh' was stopped, resubmitting it with more memory") is None


@pytest.mark.parametrize(("line", "code"), [
    # python/ray/dashboard/modules/job/job_supervisor.py's status message, as `ray job` prints it
    ("Status message: Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 "
     "chars):", 1),
    # ... and job_runner.py's later spelling
    ("Status message: Job entrypoint command failed with exit code 137. Last available logs (truncated to 20,000 "
     "chars):", 137),
    ("Job entrypoint command failed with exit code 2. No logs available.", 2),
])
def test_the_job_supervisors_word_on_the_entrypoints_exit_code(line: str, code: int) -> None:
    from firstfault.extract.runend import read_end

    assert read_end(line) == {"system": "ray", "scope": "job", "code": code, "state": "FAILED"}


def test_near_miss_prose_about_an_entrypoint_that_failed_is_no_end() -> None:
    from firstfault.extract.runend import read_end

    assert read_end("Job entrypoint command failed with exit code 1 because the image lacked python") is None


# ---------------------------------------------------------------- a request no node can ever meet

# python/ray/autoscaler/_private/autoscaler.py: the autoscaler's event summary for a demand that no node type fits,
# as the driver prints it (`(autoscaler +34s)` before it); older releases print the request as a defaultdict
@pytest.mark.parametrize("line", [
    "(autoscaler +34s) Error: No available node types can fulfill resource request {'CPU': 1.0, 'GPU': 8.0}. "
    "Add suitable node types to this cluster to resolve this issue.",
    "(autoscaler +2m5s) Error: No available node types can fulfill resource request defaultdict(<class 'float'>, "
    "{'GPU': 4.0}). Add suitable node types to this cluster to resolve this issue.",
    "(autoscaler +1m1s) Error: No available node types can fulfill resource requests {'GPU': 1.0, 'CPU': 1.0}*8",
    # Kueue's flavor assigner (pkg/scheduler/flavorassigner/flavorassigner.go), before and since kueue#7232
    "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, request > "
    "maximum capacity (24 > 16)",
    "couldn't assign flavors to pod set worker: insufficient quota for nvidia.com/gpu in flavor h100, previously "
    "considered podsets requests (16) + current podset request (8) > maximum capacity (16)",
])
def test_a_request_no_node_of_the_cluster_can_meet_is_the_jobs_set_up(line: str) -> None:
    assert [(d.kind, d.fields.get("setup")) for d in read([line])] == [("app.exception", True)]


@pytest.mark.parametrize("line", [
    # a wait for the cluster's resources to free up, not a request it can never meet
    "Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0, 'GPU': 1.0}. This is "
    "likely due to all cluster resources being claimed by actors.",
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more "
    "needed",
    # the words quoted in prose, with no request after them
    "`No available node types can fulfill resource request` means Ray's schedulable resources are too small.",
])
def test_near_miss_a_wait_for_resources_or_the_words_quoted_is_no_set_up(line: str) -> None:
    assert read([line]) == []


def test_the_memory_monitor_before_2_0_raising_at_its_threshold_is_the_hosts_memory() -> None:
    # ray-project/ray#4877's driver (python/ray/memory_monitor.py RayOutOfMemoryError.get_message, Ray 0.6-1.x: `More
    # than {}% of the memory on node {} is used ({} / {} GB). The top 5 memory consumers are:`), with and without the
    # traceback header the driver prints before it
    line = ("ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node Local is used "
            "(15.98 / 16.82 GB). The top 5 memory consumers are:")
    assert kinds([line]) == ["host.oom_kill"]
    assert kinds([*DRIVER, line]) == ["host.oom_kill"]
    assert jobend.memory_limit_kill(line) == "ray"


@pytest.mark.parametrize("line", [
    # near misses: the job's own words for memory in use, and a dashboard's share of the node's memory, no monitor
    "WARNING: More than 95% of the memory on this GPU is used by the KV cache",
    "node ip-10-0-0-5: 95% of the memory on node ip-10-0-0-5 is used by the object store",
])
def test_near_miss_other_words_for_memory_in_use_are_no_memory_kill(line: str) -> None:
    assert "host.oom_kill" not in kinds([line])
