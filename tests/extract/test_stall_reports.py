"""The stall and hang detectors' own messages (catalog/ends.yaml `stalls`): each `stall` row read in the forms its
printer writes (a log record, a launcher's rank prefix, an exception's message), each `wait` row deciding nothing,
and the look-alikes (prose, another program's words) read as nothing.

Provenance: a line marked `source` is composed from the printing program's own format string (the file named in
the row's comment in catalog/ends.yaml), with a made-up time stamp, host and ids; the others are as posted in the
public thread named.
"""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import stall_reports
from firstfault.extract import hang
from firstfault.extract.stalls import read_stall
from tests.conftest import BundleMaker
from tests.extract.helpers import events, scan

HANG = hang.HangReportExtractor()

# (line, detector, missing): every `stall` row's line forms.
STALLS: list[tuple[str, str, str | None]] = [
    # source: horovod/common/stall_inspector.cc, under mpirun's rank tag
    ('[1,0]<stderr>:One or more rank (marked by "!") is stalled for longer than 120 seconds. Will shutdown.',
     "horovod", None),
    # source: horovod/runner/launch.py's Timeout message, as horovodrun's exception
    ("Exception: Timed out waiting for tasks to start. Please check connectivity between servers. You may need to "
     "increase the --start-timeout parameter if you have too many servers.", "horovod", None),
    # source: horovod/runner/elastic/driver.py, wait_for_available_slots
    ("horovod.runner.common.util.timeout.TimeoutException: Timed out waiting for minimum number of slots to become "
     "available. Please check that you have enough resources to run at least 2 Horovod processes.", "horovod", None),
    # source: xla/tsl/distributed_runtime/coordination/coordination_service.cc, CheckHeartbeatTimeout, as absl logs it
    ("E0304 21:49:24.232436  208389 coordination_service.cc:538] Task /job:jax_worker/replica:0/task:1 heartbeat "
     "timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly. Check the task "
     "logs for an earlier error to debug further.", "coordination-service", "/job:jax_worker/replica:0/task:1"),
    # source: the same file, the error the service propagates, in TensorFlow's log record
    ("2024-03-04 21:49:24.232436: E tensorflow/core/distributed_runtime/coordination/coordination_service_agent.cc:"
     "710] Coordination agent is set to error: UNAVAILABLE: The following tasks are unhealthy (stopped sending "
     "heartbeats):", "coordination-service", None),
    # megagonlabs/t5-japanese#1 (tests/wild unk-t5-japanese-...-1)
    ("INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)",
     "tensorflow", "/job:worker/replica:0/task:0"),
    # source: torch/lib/c10d/HashStore.cpp / FileStore.cpp (PyTorch 1.0-1.8), `wait`
    ("RuntimeError: Wait timeout", "c10d", None),
]

# (line): every `wait` row's line; each decides nothing.
WAITS: list[str] = [
    # source: tensorflow/core/distributed_runtime/master_session.cc, CreateSession
    "2023-01-01 12:00:00.000000: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still waiting "
    "for response from worker: /job:worker/replica:0/task:1",
    # source: coordination_service.cc, LogConnectStatusLocked
    "I0304 21:49:24.232436  208389 coordination_service.cc:1100] Waiting for 1/2 tasks to connect.",
    # source: torch/distributed/distributed_c10d.py, _store_based_barrier (1.9-1.13)
    "INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for rank: 0, "
    "key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
    # jdb78/pytorch-forecasting#441 (tests/wild unk-pytorch-forecasting-...-441)
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 1/2",
    # source: lightning/fabric/utilities/distributed.py, _init_dist_connection
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8",
    # yeyupiaoling/PPASR#142 (tests/wild sw-ppasr-...-142): Paddle's TCPStore client, a node started before the store's
    "I0224 13:50:30.278173 1512912 tcp_utils.cc:107] Retry to connect to 127.0.1.1:63917 while the server is not yet "
    "listening.",
    # PaddlePaddle/PaddleOCR#3394 (tests/wild unk-paddleocr-...-3394): the NCCL unique-id exchange's retry
    "W0721 18:25:40.236928  6826 gen_comm_id_helper.cc:120] connect addr=127.0.0.1:36250 failed 1 times with reason: "
    "Connection refused retry after 0.5 seconds",
    # vllm-project/vllm#10661 (tests/wild unk-vllm-tp-workers-shm-broadcast-...-10661)
    "(VllmWorkerProcess pid=334) WARNING 11-26 02:04:16 shm_broadcast.py:396] No available block found in 60 second. ",
    # source: python/ray/autoscaler/_private/resource_demand_scheduler.py
    "(autoscaler +1m3s) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0, "
    "'CPU': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider creating fewer "
    "actors or increasing the resources available to this Ray cluster.",
    # source: python/ray/tune/execution/insufficient_resources_manager.py
    "2024-01-01 12:00:00,000\tWARNING insufficient_resources_manager.py:163 -- Ignore this message if the cluster is "
    "autoscaling. No trial is running and no new trial has been started within the last 60 seconds. This could be "
    "due to the cluster not having enough resources available.",
]

# Look-alikes: the words in prose, a configuration, another program's message.
NEAR_MISSES: list[str] = [
    "Wait timeout is set to 30 seconds",
    "c10d: store Wait timeout (ms): 300000",
    "The node timed out: check the network",
    "Node timed out: gateway-3",
    # ray-project/ray#24969 (tests/wild sch-ray-gcp-node-preempted-driver-hangs-24969): Ray 1.x's GCS, which a
    # healthy cluster's scale-down prints too (catalog/ends.yaml, the comment before `stalls`)
    "[2022-08-16 13:02:15,608 W 1678 1692] (gcs_server) gcs_heartbeat_manager.cc:106: Node timed out: "
    "f2ae9432a536dd27657ec1a063b1fc85d3697490869a28a6422e37be",
    "if a task misses its heartbeat the service logs 'heartbeat timeout. This indicates that the remote task' below",
    "Timed out waiting for the lock. Please retry.",
    "ShutdownHook: lame workers found: []",
]


def _row_of(line: str) -> list[str]:
    import re

    return [r.detector for r in stall_reports() if r.literal in line and re.search(r.pattern, line)]


def test_every_row_has_a_test_line() -> None:
    lines = [x[0] for x in STALLS] + WAITS
    for row in stall_reports():
        assert any(row.literal in x and _row_of(x) for x in lines), f"no test line for {row.literal!r}"


@pytest.mark.parametrize(("line", "detector", "missing"), STALLS)
def test_stall_report_is_read(line: str, detector: str, missing: str | None) -> None:
    drafts = [d for d in scan(HANG, [line], source="application") if d.kind == "stall.report"]
    assert len(drafts) == 1, drafts
    assert drafts[0].fields["detector"] == detector
    assert drafts[0].fields.get("missing") == missing


def test_the_coordination_service_names_the_task_for_the_lead() -> None:
    fields = read_stall(STALLS[3][0])
    assert fields is not None and fields["failed_task"] == 1


@pytest.mark.parametrize("line", WAITS + NEAR_MISSES)
def test_waits_and_look_alikes_are_no_stall(line: str) -> None:
    assert read_stall(line) is None
    assert "stall.report" not in {e.kind for e in events([line])}


@pytest.mark.parametrize("line", NEAR_MISSES[2:])
def test_look_alikes_hold_no_stall_row(line: str) -> None:
    assert not [r for r in _row_of(line)]


@pytest.mark.parametrize("line", ["RuntimeError: Wait timeout", STALLS[1][0], STALLS[2][0]])
def test_a_stall_as_an_exception_is_the_peers_hang_not_the_programs(line: str) -> None:
    kinds = {e.kind for e in events([line])}
    assert "nccl.timeout" in kinds and "app.exception" not in kinds


def _analyze(make_bundle: BundleMaker, lines: list[str], state: str | None = None) -> Any:
    wl: dict[str, Any] = {"id": "t", "scheduler": "static", "nodes": ["node-001"]}
    if state:
        wl["terminal_state"] = state
    root = make_bundle({"app/train.log": "".join(x + "\n" for x in lines)},
                       {"apiVersion": "firstfault/v1", "workload": wl,
                        "sources": [{"kind": "application", "path": "app/train.log"}]})
    return Analyzer().analyze_path(str(root))


@pytest.mark.parametrize(("line", "detector", "missing"), STALLS)
def test_a_stall_alone_is_no_well_run(make_bundle: BundleMaker, line: str, detector: str,
                                      missing: str | None) -> None:
    v = _analyze(make_bundle, [line])
    assert (v.outcome, v.attributed_domain, v.root_cause) == ("unknown", "unknown", None)


@pytest.mark.parametrize("line", WAITS)
def test_a_wait_alone_stays_none(make_bundle: BundleMaker, line: str) -> None:
    v = _analyze(make_bundle, [line, "Epoch 1: 100%| 500/500 [01:40<00:00, 4.98it/s, loss=2.31]"])
    assert (v.outcome, v.attributed_domain) == ("unknown", "none")
