"""Leads end to end: bundles of a hang, at scale, analysed whole."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.engine.attribute import attribute
from firstfault.engine.leads import find_leads
from firstfault.engine.loader import shipped_catalog
from firstfault.model import Event, Evidence, Lead, Verdict
from tests.conftest import BundleMaker
from tests.extract.test_flightrec import PYSPY, dump

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
SEQ = 48213


def _workload(n_nodes: int, per_node: int, sources: list[dict[str, Any]]) -> dict[str, Any]:
    nodes = [f"node-{i:03d}" for i in range(n_nodes)]
    return {
        "apiVersion": "firstfault/v1",
        "workload": {
            "id": "4242", "scheduler": "static",
            "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"},
            "nodes": nodes,
            "ranks": {n: f"{i * per_node}-{i * per_node + per_node - 1}" for i, n in enumerate(nodes)},
            "terminal_state": "FAILED",
        },
        "sources": sources,
    }


APP = [{"kind": "application", "path": "app/{node}.log"}]


def _timeout(rank: int, seq: int = SEQ, op: str = "ALLREDUCE", numel: int = 8652160, us: int = 0) -> str:
    return (f"[rank{rank}]:[E1102 10:30:00.{us:06d} 4242 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught "
            f"collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, "
            f"Timeout(ms)=600000) ran for 600068 milliseconds before timing out.")


def _status(rank: int, enq: int, done: int, us: int = 1) -> str:
    return (f"[rank{rank}]:[E1102 10:30:00.{us:06d} 4242 ProcessGroupNCCL.cpp:2268] [PG ID 0 PG GUID 0(default_pg) "
            f"Rank {rank}]  failure detected by watchdog at work sequence id: {done + 1} PG status: last enqueued "
            f"work: {enq}, last completed work: {done}")


def _dump_signal(rank: int, frm: int, enq: int, done: int) -> str:
    return (f"[rank{rank}]:[E1102 10:30:01.000000 4242 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) "
            f"Rank {rank}] Received a dump signal due to a collective timeout from  rank {frm} and we will try our "
            f"best to dump the debug info. Last enqueued NCCL work: {enq}, last completed NCCL work: {done}.")


def _per_node(n_nodes: int, per_node: int, lines_of: Any) -> dict[str, str]:
    files = {}
    for i in range(n_nodes):
        lines: list[str] = []
        for r in range(i * per_node, (i + 1) * per_node):
            lines.extend(lines_of(r))
        files[f"app/node-{i:03d}.log"] = "".join(x + "\n" for x in lines)
    return files


def _analyze(root: Path) -> Verdict:
    return Analyzer().analyze_path(str(root), now=NOW)


def test_1024_rank_hang_names_the_laggard_and_its_node(make_bundle: BundleMaker) -> None:
    lag = 19

    def lines(r: int) -> list[str]:
        if r == lag:  # never enqueued the collective: no timeout of its own, only the dump request
            return [_dump_signal(r, 0, SEQ - 1, SEQ - 1)]
        return [_timeout(r), _status(r, SEQ, SEQ - 1)]

    root = make_bundle(_per_node(128, 8, lines), _workload(128, 8, APP))
    v = _analyze(root)
    assert v.attributed_domain == "unknown" and v.root_cause is None and v.affected_nodes == []
    lead = v.leads[0]
    assert (lead.kind, lead.ranks, lead.nodes) == ("laggard_rank", [lag], ["node-002"])
    assert "never entered ALLREDUCE SeqNum 48213" in lead.summary and "1023 other ranks" in lead.summary
    assert lead.evidence and all(v.evidence[i].role == "lead" for i in lead.evidence)
    assert v.evidence[lead.evidence[0]].rank == lag
    assert [x.kind for x in v.leads].count("laggard_rank") == 1
    # byte-identical for the same input
    assert records.dumps(_analyze(root)) == records.dumps(v)


def test_1024_rank_hang_from_flight_recorder_dumps(make_bundle: BundleMaker) -> None:
    lag = 777
    files: dict[str, str | bytes] = {}
    for r in range(1024):
        doc = dump(r, SEQ - 1, SEQ - 1) if r == lag else dump(r, SEQ, SEQ - 1)
        files[f"fr/rank-{r}.pkl"] = pickle.dumps(doc) if r % 2 else json.dumps(doc).encode()
    wl = _workload(128, 8, [{"kind": "flight_recorder", "path": "fr/rank-{rank}.pkl"}])
    v = _analyze(make_bundle(files, wl))
    assert v.attributed_domain == "unknown"
    lead = v.leads[0]
    assert (lead.kind, lead.ranks, lead.nodes) == ("laggard_rank", [lag], ["node-097"])
    assert v.evidence[lead.evidence[0]].source == "flight_recorder"
    assert lead.summary.startswith("rank 777 never entered all_reduce SeqNum 48213 (last enqueued 48212); "
                                   "the 1023 other ranks waited in it")
    fr = next(c for c in v.coverage if c.source == "flight_recorder")
    assert fr.status == "complete" and fr.files == 1024


def test_every_rank_at_the_same_numbers_gives_no_laggard(make_bundle: BundleMaker) -> None:
    root = make_bundle(_per_node(32, 8, lambda r: [_timeout(r), _status(r, SEQ, SEQ - 1)]), _workload(32, 8, APP))
    v = _analyze(root)
    assert v.attributed_domain == "unknown"
    assert v.leads == []
    assert any(s.category == "nccl.timeout" for s in v.symptoms)


def test_op_type_mismatch_is_a_desync(make_bundle: BundleMaker) -> None:
    def lines(r: int) -> list[str]:
        return [_timeout(r, op="ALLGATHER" if r == 5 else "ALLREDUCE"), _status(r, SEQ, SEQ - 1)]

    v = _analyze(make_bundle(_per_node(4, 8, lines), _workload(4, 8, APP)))
    (lead,) = v.leads
    assert (lead.kind, lead.ranks, lead.nodes) == ("desync", [5], ["node-000"])
    assert "ALLGATHER where the 31 other ranks issued ALLREDUCE at SeqNum 48213" in lead.summary


def test_size_mismatch_is_a_desync(make_bundle: BundleMaker) -> None:
    def lines(r: int) -> list[str]:
        return [_timeout(r, numel=4096 if r == 12 else 8192)]

    v = _analyze(make_bundle(_per_node(2, 8, lines), _workload(2, 8, APP)))
    assert [(x.kind, x.ranks) for x in v.leads] == [("desync", [12])]


def test_rank_ahead_of_the_others_is_a_desync(make_bundle: BundleMaker) -> None:
    def lines(r: int) -> list[str]:
        return [_timeout(r), _status(r, SEQ + 1 if r == 3 else SEQ, SEQ - 1)]

    v = _analyze(make_bundle(_per_node(2, 8, lines), _workload(2, 8, APP)))
    assert [(x.kind, x.ranks) for x in v.leads] == [("desync", [3])]
    assert "no other rank issued" in v.leads[0].summary


def test_entered_but_never_finished(make_bundle: BundleMaker) -> None:
    def lines(r: int) -> list[str]:
        return [_status(r, SEQ, SEQ - 2 if r == 9 else SEQ - 1)]

    v = _analyze(make_bundle(_per_node(2, 8, lines), _workload(2, 8, APP)))
    assert [(x.kind, x.ranks) for x in v.leads] == [("laggard_rank", [9])]
    assert "entered but never finished" in v.leads[0].summary


def test_gloo_silent_rank_is_the_laggard(make_bundle: BundleMaker) -> None:
    gloo = ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
            "1800000ms for recv operation to complete")

    def lines(r: int) -> list[str]:
        return [] if r == 9 else ["2026-11-02 10:30:00,000 ERROR step failed", f"[rank{r}]:{gloo}"]

    v = _analyze(make_bundle(_per_node(2, 8, lines), _workload(2, 8, APP)))
    laggards = [x for x in v.leads if x.kind == "laggard_rank"]
    assert [(x.ranks, x.nodes) for x in laggards] == [([9], ["node-001"])]
    assert v.attributed_domain == "unknown"


def test_missing_logs_of_a_whole_node_invent_no_laggard(make_bundle: BundleMaker) -> None:
    files = _per_node(4, 8, lambda r: [_timeout(r)])
    del files["app/node-003.log"]
    v = _analyze(make_bundle(files, _workload(4, 8, APP)))
    assert not [x for x in v.leads if x.kind == "laggard_rank"]


def test_monitored_barrier_names_the_ranks(make_bundle: BundleMaker) -> None:
    files = {"app/node-000.log": "[rank0]:RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass "
                                 "monitoredBarrier in 2000000 ms\n"}
    v = _analyze(make_bundle(files, _workload(2, 4, APP)))
    (lead,) = v.leads
    assert (lead.kind, lead.ranks, lead.nodes) == ("laggard_rank", [4, 5, 6, 7], ["node-001"])


def test_stack_dump_odd_one_out_is_the_first_stuck_frame(make_bundle: BundleMaker) -> None:
    collective = (
        'Thread 1 (idle): "MainThread"\n'
        "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n"
        "    train_step (train.py:120)\n"
    )
    files: dict[str, str | bytes] = {f"stacks/rank-{r}.txt": (PYSPY if r == 3 else collective) for r in range(8)}
    wl = _workload(2, 4, [{"kind": "stack_dump", "path": "stacks/rank-{rank}.txt"}])
    v = _analyze(make_bundle(files, wl))
    first, second = v.leads
    assert (first.kind, first.ranks, first.nodes) == ("stuck_frame", [3], ["node-000"])
    assert "_try_get_data" in first.summary and "data-loader" in first.summary
    assert (second.kind, second.ranks) == ("stuck_frame", [0, 1, 2, 4, 5, 6, 7])


def test_first_exit(make_bundle: BundleMaker) -> None:
    killed = "srun: error: node-001: task 5: Killed"
    files = {
        "app/node-001.log": f"2026-11-02 10:20:00,000 INFO step 100\n{killed}\n",
        "app/node-000.log": "".join(_timeout(r).replace("10:30:00", "10:31:00") + "\n" for r in range(4)),
    }
    v = _analyze(make_bundle(files, _workload(2, 4, APP)))
    fe = [x for x in v.leads if x.kind == "first_exit"]
    assert len(fe) == 1, v.leads
    assert (fe[0].ranks, fe[0].nodes) == ([5], ["node-001"])
    assert "SIGKILL" in fe[0].summary and "4 other ranks failed after it" in fe[0].summary


# ---------------------------------------------------------------- promotion (catalog data: with_lead)

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)


def _ev(kind: str, node: str, rank: int | None = None, t: int = 0, **fields: Any) -> Event:
    return Event(kind=kind, time=T0 + timedelta(seconds=t), node=node, rank=rank, fields=fields,
                 evidence=Evidence(source="test", file="f", line=t, text=kind))


def _hang(lag_node: str) -> list[Event]:
    evs = []
    for r in range(16):
        node = f"n{r // 8}"
        if r == 11:
            evs.append(_ev("nccl.watchdog_status", lag_node, r, 600, last_enqueued=99, last_completed=99, pg="0"))
        else:
            evs.append(_ev("nccl.timeout", node, r, 600, seq=100, op="ALLREDUCE", stuck=False))
            evs.append(_ev("nccl.watchdog_status", node, r, 600, last_enqueued=100, last_completed=99, pg="0"))
    return evs


def test_weak_cause_on_the_laggards_node_becomes_the_cause() -> None:
    cat = shipped_catalog()
    events = [*_hang("n1"), _ev("metric.condition", "n1", None, 30, condition="thermal_hw_slowdown", value=64)]
    leads = find_leads(events)
    att = attribute(events, cat.active(), cat.settings, ["n0", "n1"], leads=leads)
    assert att.root is not None and att.root.rule.id == "gpu-thermal-laggard"
    assert not att.root.weak


def test_weak_cause_elsewhere_is_not_promoted() -> None:
    cat = shipped_catalog()
    events = [*_hang("n1"), _ev("metric.condition", "n0", None, 30, condition="thermal_hw_slowdown", value=64)]
    att = attribute(events, cat.active(), cat.settings, ["n0", "n1"])
    assert att.root is None or att.root.rule.id != "gpu-thermal-laggard"


def test_promoted_summary_names_the_lead(make_bundle: BundleMaker) -> None:
    lag = 11
    files = _per_node(2, 8, lambda r: [_dump_signal(r, 0, SEQ - 1, SEQ - 1)] if r == lag
                      else [_timeout(r), _status(r, SEQ, SEQ - 1)])
    t = int(datetime(2026, 11, 2, 10, 29, tzinfo=UTC).timestamp())
    files["metrics/dcgm.om"] = (
        "# TYPE DCGM_FI_DEV_CLOCK_THROTTLE_REASONS gauge\n"
        f'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{{gpu="3",Hostname="node-001"}} 0 {t - 60}\n'
        f'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{{gpu="3",Hostname="node-001"}} 64 {t}\n'
        "# EOF\n"
    )
    wl = _workload(2, 8, [*APP, {"kind": "metrics", "path": "metrics/dcgm.om", "format": "openmetrics"}])
    v = _analyze(make_bundle(files, wl))
    assert v.root_cause is not None and v.root_cause.rule == "gpu-thermal-laggard", (v.root_cause, v.leads)
    assert v.attributed_domain == "hardware" and v.affected_nodes == ["node-001"]
    assert "rank 11" in v.root_cause.summary and "node-001" in v.root_cause.summary
    assert v.leads and v.leads[0].kind == "laggard_rank"


def test_leads_survive_a_json_round_trip() -> None:
    lead = Lead(kind="laggard_rank", nodes=["n1"], ranks=[11], summary="s", first_seen=None, evidence=[0])
    v = records.decode(json.dumps({
        "workload": {"id": "1", "window": {}, "nodes": []}, "terminal_state": None, "outcome": "unknown",
        "attributed_domain": "unknown", "root_cause": None, "candidates": [], "affected_nodes": [],
        "symptoms": [], "leads": [records.to_builtins(lead)], "evidence": [], "coverage": [], "errors": [],
        "catalog": {"version": "1", "sha256": "x"}, "analyzed_at": "t",
    }), Verdict)
    assert v.leads == [lead]
    assert records.decode(records.dumps(v), Verdict) == v


def test_text_view_shows_a_leads_section(make_bundle: BundleMaker) -> None:
    from rich.console import Console

    from firstfault.render import render_verdict

    line = "[rank0]:RuntimeError: [Rank 0]: Ranks 5 failed to pass monitoredBarrier in 30000 ms\n"
    files = {"app/node-000.log": line}
    v = _analyze(make_bundle(files, _workload(2, 4, APP)))
    console = Console(record=True, width=200)
    render_verdict(v, console)
    text = console.export_text()
    assert "Leads" in text and "laggard_rank on node-001, rank 5: rank 5 failed to pass monitoredBarrier" in text


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        import os

        return (os.system, (f"touch {self.marker}",))


def test_malicious_dump_is_refused_in_errors_and_the_rest_is_read(make_bundle: BundleMaker, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    files: dict[str, str | bytes] = {f"fr/rank-{r}.pkl": pickle.dumps(dump(r, 41 if r == 6 else 42, 41))
                                     for r in range(16)}
    files["fr/rank-3.pkl"] = pickle.dumps({"version": "2.5", "entries": [_Evil(marker)]})
    wl = _workload(2, 8, [{"kind": "flight_recorder", "path": "fr/rank-{rank}.pkl"}])
    v = _analyze(make_bundle(files, wl))
    assert not marker.exists()
    (err,) = v.errors
    assert (err.source, err.file) == ("flight_recorder", "fr/rank-3.pkl")
    assert "refused" in err.message and "system" in err.message
    assert [(ld.kind, ld.ranks) for ld in v.leads] == [("laggard_rank", [6])]
    fr = next(c for c in v.coverage if c.source == "flight_recorder")
    assert fr.files == 16


def test_flight_recorder_op_mismatch_is_a_desync(make_bundle: BundleMaker) -> None:
    files: dict[str, str | bytes] = {
        f"fr/rank-{r}.json": json.dumps(dump(r, 42, 41, pending_op="all_gather" if r == 5 else "all_reduce")).encode()
        for r in range(16)
    }
    wl = _workload(2, 8, [{"kind": "flight_recorder", "path": "fr/rank-{rank}.json"}])
    v = _analyze(make_bundle(files, wl))
    assert [(ld.kind, ld.ranks, ld.nodes) for ld in v.leads] == [("desync", [5], ["node-000"])]
    assert "all_gather where the 15 other ranks issued all_reduce at SeqNum 42" in v.leads[0].summary
    assert v.attributed_domain == "unknown" and "points at" in v.explanation[-1]


def test_first_exit_from_the_torchrun_agent_lines(make_bundle: BundleMaker) -> None:
    """hpcaitech/ColossalAI#3514: the agent stops the survivors (SIGTERM: collateral), then reports the
    rank it lost (-9); glog-stamped form of NVIDIA/Megatron-LM#1880. Node-001's ranks time out after it."""
    agent = [
        "W1102 10:20:01.996000 3304089 site-packages/torch/distributed/elastic/multiprocessing/api.py:908] "
        "Sending process 812914 closing signal SIGTERM",
        "E1102 10:20:02.971000 3304089 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] "
        "failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary: "
        "/data/chenhao/anaconda3/envs/ColossalAI-Chat/bin/python",
    ]
    files = {
        "app/node-000.log": "".join(x + "\n" for x in agent),
        "app/node-001.log": "".join(_timeout(r).replace("10:30:00", "10:30:05") + "\n" for r in range(4, 8)),
    }
    v = _analyze(make_bundle(files, _workload(2, 4, APP)))
    (fe,) = [x for x in v.leads if x.kind == "first_exit"]
    assert (fe.ranks, fe.nodes, fe.devices) == ([3], ["node-000"], ["node-000/gpu3"])
    assert "exited first (SIGKILL)" in fe.summary and "4 other ranks failed after it" in fe.summary


def test_stuck_watchdog_among_timeouts_is_the_laggard(make_bundle: BundleMaker) -> None:
    stuck = ("[rank{r}]:[E1102 10:30:00.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank {r}] "
             "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
             "collectives.")
    v = _analyze(make_bundle(_per_node(2, 4, lambda r: [stuck.format(r=r)] if r == 6 else [_timeout(r)]),
                             _workload(2, 4, APP)))
    assert [(ld.kind, ld.ranks, ld.nodes) for ld in v.leads] == [("laggard_rank", [6], ["node-001"])]
    assert "heartbeat monitor" in v.leads[0].summary


def _status_pg(rank: int, guid: str, at: int, enq: int, done: int) -> str:
    return (f"[rank{rank}]:[E1102 10:30:00.000002 4242 ProcessGroupNCCL.cpp:2268] [PG ID 3 PG GUID {guid} Rank "
            f"{rank % 4}]  failure detected by watchdog at work sequence id: {at} PG status: last enqueued work: "
            f"{enq}, last completed work: {done}")


def test_two_process_groups_are_never_compared(make_bundle: BundleMaker) -> None:
    """Expert-parallel ranks time out at their group's numbers, data-parallel ranks at theirs (the timeout
    line names no group; the status line after it does): no desync, no laggard across the groups."""
    def lines(r: int) -> list[str]:
        if r < 4:
            return [_timeout(r, seq=1438, op="ALLTOALL_BASE"), _status_pg(r, "d03ba143", 1438, 1438, 1437)]
        return [_timeout(r, seq=SEQ), _status_pg(r, "0(default_pg)", SEQ, SEQ, SEQ - 1)]

    v = _analyze(make_bundle(_per_node(2, 4, lines), _workload(2, 4, APP)))
    assert v.leads == []


def test_laggard_inside_one_process_group(make_bundle: BundleMaker) -> None:
    def lines(r: int) -> list[str]:
        if r == 2:  # never enqueued 1438: no timeout of its own, only the dump request of its group
            return [_dump_signal(r, 0, 1437, 1437).replace("PG GUID 0(default_pg)", "PG GUID d03ba143")]
        if r < 4:
            return [_timeout(r, seq=1438, op="ALLTOALL_BASE"), _status_pg(r, "d03ba143", 1438, 1438, 1437)]
        return [_timeout(r, seq=SEQ), _status_pg(r, "0(default_pg)", SEQ, SEQ, SEQ - 1)]

    v = _analyze(make_bundle(_per_node(2, 4, lines), _workload(2, 4, APP)))
    assert [(ld.kind, ld.ranks) for ld in v.leads] == [("laggard_rank", [2])]
    assert "ALLTOALL_BASE SeqNum 1438 (process group d03ba143)" in v.leads[0].summary


def test_first_exit_of_a_kubernetes_container() -> None:
    """A container terminated (OOMKilled, exit 137) before the other pods' ranks time out."""
    pod = _ev("k8s.pod", "gke-a3-pool-1", None, 0, pod="train-worker-3", container="pytorch", reason="OOMKilled",
              exit_code=137, signal=9, restart=False)
    later = [_ev("nccl.timeout", "gke-a3-pool-0", r, 600, seq=7, op="ALLREDUCE", stuck=False) for r in range(4)]
    (lead,) = find_leads([pod, *later])
    assert (lead.kind, lead.nodes, lead.ranks) == ("first_exit", ["gke-a3-pool-1"], [])
    assert "exitcode 137" in lead.summary and "OOMKilled" in lead.summary and "4 other ranks" in lead.summary


def test_desync_report_names_the_lagging_ranks(make_bundle: BundleMaker) -> None:
    report = [
        "[rank0]:\t - To our best knowledge, ranks [1, 2] are the lagging ranks that caused this timeout. They never "
        "joined any collectives",
    ]
    files = {"app/node-000.log": "".join(x + "\n" for x in report)}
    v = _analyze(make_bundle(files, _workload(2, 4, APP)))
    assert [(ld.kind, ld.ranks) for ld in v.leads] == [("laggard_rank", [1, 2])]
    assert "desync debug report" in v.leads[0].summary


def test_the_leads_sort_keys_are_computed_once_and_order_as_ev_keys() -> None:
    """_Ctx works out each event's place in the order of _ev_key once (the leads sort a 16k-rank job's events
    several times): the ordered events are those of _ev_key, ties (two events of one key) in the events' own
    order and of one place; it is asked only of the events the context was built from."""
    from firstfault.engine.leads import _Ctx, _ev_key

    t0 = datetime(2026, 11, 2, 11, 0, tzinfo=UTC)

    def ev(sec: int | None, rank: int, text: str) -> Event:
        return Event(kind="nccl.timeout", time=None if sec is None else t0 + timedelta(seconds=sec), node="n1",
                     rank=rank, evidence=Evidence(source="application", file=f"app/rank-{rank}.log", line=3,
                                                  text=text))

    events = [ev(5, 1, "a"), ev(None, 0, "b"), ev(2, 2, "c"), ev(5, 1, "d"), ev(1, 3, "e")]
    ctx = _Ctx(events, {})
    assert ctx.ordered == sorted(events, key=_ev_key)
    assert [e.evidence.text for e in ctx.ordered] == ["e", "c", "a", "d", "b"]  # a before d: their own order
    assert ctx.key(events[0]) == ctx.key(events[3]) < ctx.key(events[1])  # a and d tie; no time sorts last
    assert [e.evidence.text for e in sorted(events[::-1], key=ctx.key)] == ["e", "c", "d", "a", "b"]
    with pytest.raises(KeyError):
        ctx.key(ev(0, 9, "f"))  # not among the events: no place


def test_the_task_the_coordination_service_saw_fail_is_a_lead_not_a_cause(make_bundle: BundleMaker) -> None:
    # A JAX job of four processes on four nodes: process 0 hosts the coordination service, which logs that task 2
    # stopped heartbeating (jax-ml/jax#23599's line, the task and time filled in); the others' collectives fail after.
    # Nothing establishes a cause: the verdict is unknown, and the named task is where to look.
    line = ("2026-11-02 10:30:00.000000: E external/xla/xla/tsl/distributed_runtime/coordination/coordination_service"
            ".cc:1170] /job:jax_worker/replica:0/task:2 has been set to ERROR in coordination service: UNAVAILABLE: "
            "Task /job:jax_worker/replica:0/task:2 heartbeat timeout. This indicates that the remote task has failed, "
            "got preempted, or crashed unexpectedly. Check the task logs for an earlier error to debug further.")
    files = {"app/node-000.log": line + "\n"}
    v = _analyze(make_bundle(files, _workload(4, 1, APP)))
    assert v.attributed_domain == "unknown" and v.root_cause is None
    # an exit, not a laggard: no rule promotes a slow node's weak evidence on a task that stopped heartbeating
    assert [(x.kind, x.ranks, x.nodes) for x in v.leads] == [("first_exit", [2], ["node-002"])]
    assert "coordination service" in v.leads[0].summary


def _closed(rank: int) -> list[str]:
    # pytorch/pytorch's gloo transport on a peer that went away (third_party/gloo/gloo/transport/tcp/pair.cc)
    return [f"2026-11-02 10:25:0{rank},000 ERROR step 100 failed",
            f"[rank{rank}]:RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by "
            f"peer [10.0.0.2]:2212"]


def test_srun_task_state_exited_abnormally_without_a_time_is_the_first_exit(make_bundle: BundleMaker) -> None:
    # src/srun/task_state.c _task_state_print (`%ps task%s %s: %s`), what srun prints on one Ctrl-C: task 1 ended by a
    # signal, no time and no host, while the other ranks said their peer closed the connection.
    files = _per_node(2, 2, lambda r: [] if r == 1 else _closed(r))
    files["slurm-4242.out"] = ("srun: interrupt (one more within 1 sec to abort)\n"
                               "srun: StepId=4242.0 tasks 0,2-3: running\n"
                               "srun: StepId=4242.0 task 1: exited abnormally\n")
    v = _analyze(make_bundle(files, _workload(2, 2, [*APP, {"kind": "application", "path": "slurm-4242.out"}])))
    (fe,) = [x for x in v.leads if x.kind == "first_exit"]
    assert (fe.ranks, fe.nodes) == ([1], ["node-000"])
    assert "without a time" in fe.summary


def test_near_miss_srun_task_state_running_names_no_exit(make_bundle: BundleMaker) -> None:
    files = _per_node(2, 2, lambda r: [] if r == 1 else _closed(r))
    files["slurm-4242.out"] = "srun: StepId=4242.0 tasks 0-3: running\n"
    v = _analyze(make_bundle(files, _workload(2, 2, [*APP, {"kind": "application", "path": "slurm-4242.out"}])))
    # the silent rank may still be named for its silence, never as a death srun reported
    assert not [x for x in v.leads if x.kind == "first_exit" and "exited first" in x.summary]


# -- the leads' sort key as a place (spd45) ----------------------------------------------------------------------------

def _keyed_events() -> list[Event]:
    from zoneinfo import ZoneInfo

    t = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    berlin = t.astimezone(ZoneInfo("Europe/Berlin"))  # the same instant in another zone: one iso string, a tie
    out = []
    for i in range(40):
        when = [t, berlin, t + timedelta(seconds=i % 3), None, datetime(2026, 11, 2, 10, 0)][i % 5]
        out.append(Event(kind=["nccl.timeout", "nccl.watchdog_status"][i % 2], time=when, node=f"n{i % 3}",
                         evidence=Evidence(source="application", file=f"app/rank-{i % 4}.log", line=i % 6,
                                           text=str(i)),
                         rank=[None, i % 4][i % 2], fields={"i": i}))  # `i`: ties are told apart only by it
    return out


def test_a_place_orders_the_events_as_their_key_does_ties_included() -> None:
    import random

    from firstfault.engine.leads import _Ctx, _ev_key

    events = _keyed_events()
    assert len({_ev_key(e) for e in events}) < len(events)  # there are ties to keep in order
    ctx = _Ctx(events, {})
    assert [e.fields["i"] for e in ctx.ordered] == [e.fields["i"] for e in sorted(events, key=_ev_key)]
    rnd = random.Random(45)
    for _ in range(30):
        sub = rnd.sample(events, rnd.randrange(1, len(events)))  # any subset, in any order
        assert [e.fields["i"] for e in sorted(sub, key=ctx.key)] == \
               [e.fields["i"] for e in sorted(sub, key=_ev_key)]


def test_events_that_differ_in_any_part_of_the_key_get_different_places() -> None:
    from firstfault.engine.leads import _Ctx, _ev_key

    events = _keyed_events()
    ctx = _Ctx(events, {})
    for a in events:
        for b in events:
            assert (ctx.key(a) == ctx.key(b)) == (_ev_key(a) == _ev_key(b))
            assert (ctx.key(a) < ctx.key(b)) == (_ev_key(a) < _ev_key(b))


def test_stack_dumps_of_mixed_forms_name_the_rank_in_comm_abort(make_bundle: BundleMaker) -> None:
    """Ranks dumped with different tools: the one gdb shows in ncclCommAbort is the lead, the rest in
    all_reduce (py-spy, pystack) its tail; the native frame has no line, its library is where."""
    from tests.extract.test_stackdump_forms import GDB_ALL

    pyspy = ('Thread 1 (idle): "MainThread"\n'
             "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n    train_step (train.py:120)\n")
    pystack = ("Traceback for thread 1 (python) [Has the GIL] (most recent call last):\n"
               '    (Python) File "train.py", line 120, in train_step\n'
               '    (Python) File "torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n')
    files: dict[str, str | bytes] = {f"stacks/rank-{r}.txt": GDB_ALL if r == 3 else pyspy if r % 2 else pystack
                                     for r in range(8)}
    wl = _workload(2, 4, [{"kind": "stack_dump", "path": "stacks/rank-{rank}.txt"}])
    v = _analyze(make_bundle(files, wl))
    first, second = v.leads
    assert (first.kind, first.ranks, first.nodes) == ("stuck_frame", [3], ["node-000"])
    assert "stuck in ncclCommAbort (src/init.cc:2132), a communicator's teardown" in first.summary
    assert "(most in all_reduce)" in first.summary
    assert (second.kind, second.ranks) == ("stuck_frame", [0, 1, 2, 4, 5, 6, 7])


def test_stuck_native_frame_without_file_names_no_empty_place(make_bundle: BundleMaker) -> None:
    """cuda-gdb's frame of a kernel on the GPU has no `at` / `from`: the lead names the function alone."""
    gpu = "#0  0x00007fd0b2a9e42b in ncclDevFunc_AllGather_RING_SIMPLE () \n"
    store = "#0  0x1 in c10d::TCPStore::doWait(std::chrono::duration<long>) () from /opt/torch/lib/libtorch_cpu.so\n"
    files: dict[str, str | bytes] = {f"stacks/rank-{r}.txt": gpu if r == 5 else store for r in range(8)}
    wl = _workload(2, 4, [{"kind": "stack_dump", "path": "stacks/rank-{rank}.txt"}])
    first, second = _analyze(make_bundle(files, wl)).leads
    assert first.ranks == [5] and "stuck in ncclDevFunc_AllGather_RING_SIMPLE, a collective;" in first.summary
    assert "stuck in c10d::TCPStore::doWait (/opt/torch/lib/libtorch_cpu.so), a wait on the rendezvous store" \
        in second.summary
