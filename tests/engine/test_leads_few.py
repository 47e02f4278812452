"""Leads that name the few ranks that differ, a two-rank hang's laggard, and a first exit only a launcher saw.

engine/leads.py `differ`: a lead names a minority against a majority, at most MAX_LEAD_RANKS ranks, or it
is not given; one rank against one other only where the evidence has a direction (the rank that timed out
waited for the other). A launcher's report of a death (srun, mpirun, torchrun's agent) comes after it: when
the other ranks lost their connection to a peer before the report, or the report has no time, the reported
rank still exited first.

Real lines: tests/engine/data/two_rank_hang (a real two-rank gloo hang, PROVENANCE.md there); the lab's
captures (tests/lab/captured/slurm_oom_cgroup: the peers' gloo `Connection closed by peer` tracebacks;
slurm_oom_jobacct: `srun: error: ffnode1: task 1: Killed`); open-mpi/ompi#2661 (`mpirun noticed that process
rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).`); NVIDIA/nccl#795 (`misc/socket.cc:538 NCCL
WARN Net : Connection closed by remote peer node-6<47861>`, here with this test's hosts). The watchdog lines
are PyTorch's format (tests/engine/test_leads.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.engine.leads import MAX_LEAD_RANKS, differ, find_leads
from firstfault.model import Event, Evidence, FieldValue, Verdict
from tests.conftest import BundleMaker
from tests.engine.test_leads import APP, SEQ, _per_node, _timeout, _workload

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
DATA = Path(__file__).resolve().parent / "data"
CAPTURED = Path(__file__).resolve().parents[1] / "lab" / "captured"
T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)


def _ev(kind: str, rank: int | None, t: float | None, node: str | None = None, **fields: FieldValue) -> Event:
    return Event(kind=kind, time=None if t is None else T0 + timedelta(seconds=t), node=node, rank=rank,
                 fields=dict(fields), evidence=Evidence(source="test", file=f"r{rank}", line=1, text=kind))


def _job(n: int, per_node: int = 8) -> dict[int, str]:
    return {r: f"node-{r // per_node:04d}" for r in range(n)}


# ------------------------------------------------------------------ differ: a minority, few enough to name

def test_differ_is_a_minority_and_few() -> None:
    assert differ(1, 1023) and differ(MAX_LEAD_RANKS, 16_320)
    assert not differ(MAX_LEAD_RANKS + 1, 16_319)  # few enough to look at, or not a lead
    assert not differ(5_461, 10_923)  # a minority, but a third of the job
    assert not differ(4, 4) and not differ(0, 8)
    assert differ(1, 1, directed=True) and not differ(1, 1)  # one against one needs a direction
    assert not differ(2, 2, directed=True)


def _behind(n: int, lag: int) -> list[Event]:
    """n ranks; the first `lag` ranks never enqueued SeqNum SEQ (their status says SEQ-1), the rest time out in it."""
    evs: list[Event] = []
    for r in range(n):
        if r < lag:
            evs.append(_ev("nccl.watchdog_status", r, 600, last_enqueued=SEQ - 1, last_completed=SEQ - 1, pg="0"))
        else:
            evs.append(_ev("nccl.timeout", r, 600, seq=SEQ, op="ALLREDUCE", stuck=False))
            evs.append(_ev("nccl.watchdog_status", r, 600, last_enqueued=SEQ, last_completed=SEQ - 1, pg="0"))
    return evs


@pytest.mark.parametrize(("lag", "named"), [(40, 40), (MAX_LEAD_RANKS, MAX_LEAD_RANKS), (MAX_LEAD_RANKS + 1, None),
                                            (5_461, None)])
def test_at_16k_ranks_a_laggard_lead_names_the_few_or_nothing(lag: int, named: int | None) -> None:
    n = 16_384
    found = find_leads(_behind(n, lag), _job(n))
    leads = [d for d in found if d.kind == "laggard_rank"]
    if named is None:
        assert leads == []  # a third of a 16k-rank job behind is no lead (it once named 5,461 ranks)
    else:
        (lead,) = leads
        assert len(lead.ranks) == named and lead.ranks == list(range(named))
        assert f"the {n - named} other ranks waited in it" in lead.summary and f"and {named - 8} more" in lead.summary
    assert all(len(d.ranks) <= MAX_LEAD_RANKS and len(d.nodes) <= MAX_LEAD_RANKS for d in found)


def test_an_even_split_of_collectives_is_no_desync() -> None:
    # 4 ranks issue ALLGATHER where 4 issue ALLREDUCE at one sequence number: no odd one out
    evs = [_ev("nccl.timeout", r, 600, seq=SEQ, op="ALLGATHER" if r < 4 else "ALLREDUCE", stuck=False, pg="0")
           for r in range(8)]
    assert [d for d in find_leads(evs, _job(8)) if d.kind == "desync"] == []
    evs[1:4] = [_ev("nccl.timeout", r, 600, seq=SEQ, op="ALLREDUCE", stuck=False, pg="0") for r in range(1, 4)]
    assert [(d.kind, d.ranks) for d in find_leads(evs, _job(8)) if d.kind == "desync"] == [("desync", [0])]


def test_a_stack_dump_group_too_wide_to_name_is_no_lead() -> None:
    frames = [_ev("stack.frame", r, 700, func="wait", file="torch/distributed/c10d.py", line=10,
                  category="collective", thread="MainThread", depth=0) for r in range(1, 200)]
    frames.append(_ev("stack.frame", 0, 700, func="__next__", file="torch/utils/data/dataloader.py", line=5,
                      category="data_loader", thread="MainThread", depth=0))
    leads = [d for d in find_leads(frames, _job(200)) if d.kind == "stuck_frame"]
    assert [(d.ranks, d.order) for d in leads] == [([0], 0)]  # the odd one; the 199 in `wait` only in its summary
    assert "199 other dumped processes elsewhere (most in wait)" in leads[0].summary


# ------------------------------------------------------------------ two ranks: the one that did not time out

def test_a_real_two_rank_gloo_hang_names_the_rank_that_did_not_time_out() -> None:
    v = Analyzer().analyze_path(str(DATA / "two_rank_hang"), now=NOW)
    assert v.attributed_domain == "unknown" and v.root_cause is None
    assert [(x.kind, x.ranks) for x in v.leads] == [("laggard_rank", [1])]
    assert v.leads[0].summary.startswith("rank 1 printed no gloo timeout while the other rank timed out waiting for "
                                         "a recv: it waited for it")


def _analyze(make_bundle: BundleMaker, files: dict[str, str | bytes], wl: dict[str, Any], name: str = "b") -> Verdict:
    return Analyzer().analyze_path(str(make_bundle(files, wl, name=name)), now=NOW)


def test_a_two_rank_nccl_hang_names_the_rank_that_did_not_time_out(make_bundle: BundleMaker) -> None:
    # one node, two GPUs: rank 1's output is read with rank 0's (a silent rank on a node whose logs show
    # nothing at all may be a log that was not collected, and is not named)
    files = _per_node(1, 2, lambda r: [] if r == 1 else [_timeout(r)])
    v = _analyze(make_bundle, files, _workload(1, 2, APP))
    assert [(x.kind, x.ranks, x.nodes) for x in v.leads] == [("laggard_rank", [1], ["node-000"])]
    assert "printed no watchdog timeout while the other rank timed out in ALLREDUCE" in v.leads[0].summary


def test_two_ranks_that_both_time_out_or_one_of_three_that_does_name_no_laggard(make_bundle: BundleMaker) -> None:
    both = _analyze(make_bundle, _per_node(1, 2, lambda r: [_timeout(r)]), _workload(1, 2, APP))
    assert both.leads == []
    # one timeout against two silent ranks: it waited for one of them, or both; the evidence does not say
    one = _analyze(make_bundle, _per_node(1, 3, lambda r: [_timeout(r)] if r == 0 else []), _workload(1, 3, APP),
                   name="c")
    assert [x for x in one.leads if x.kind == "laggard_rank"] == []


# ------------------------------------------------------------------ first exit: the launcher saw it, without a time

def _slurm_workload(stderr: bool) -> dict[str, Any]:
    sources = [{"kind": "application", "path": "slurm-1.out", "rank_prefix": "srun"}]
    if stderr:
        sources.append({"kind": "application", "path": "slurm-1.err"})
    return {"apiVersion": "firstfault/v1",
            "workload": {"id": "1", "scheduler": "static",
                         "window": {"start": "2026-12-01T09:09:32Z", "end": "2026-12-01T09:09:58Z"},
                         "nodes": ["ffnode1"], "ranks": {"ffnode1": "0-2"}, "terminal_state": "FAILED",
                         "timezone": "UTC"},
            "sources": sources}


def _peers_lost_rank1() -> str:
    """slurm_oom_cgroup's output up to the peers' tracebacks (ranks 0 and 2 lose rank 1), without its OOM lines."""
    out = (CAPTURED / "slurm_oom_cgroup" / "slurm-1.out").read_text().splitlines()
    return "".join(x + "\n" for x in out if "oom-kill" not in x and "Out Of Memory" not in x)


KILLED = "srun: error: ffnode1: task 1: Killed"  # tests/lab/captured/slurm_oom_jobacct/slurm-1.out


def test_a_kill_only_srun_reported_without_a_time_is_the_first_exit(make_bundle: BundleMaker) -> None:
    # srun's own messages in the job's stderr file (#SBATCH -e): no stamp anywhere near them
    v = _analyze(make_bundle, {"slurm-1.out": _peers_lost_rank1(), "slurm-1.err": KILLED + "\n"},
                 _slurm_workload(stderr=True))
    fe = [x for x in v.leads if x.kind == "first_exit"]
    assert [(x.ranks, x.nodes) for x in fe] == [([1], ["ffnode1"])]
    assert fe[0].summary.startswith("rank 1 on ffnode1 exited first (SIGKILL; the launcher reported it without a "
                                    "time); 2 other ranks failed after it")
    assert "without a word" not in fe[0].summary


def test_a_kill_srun_reported_after_the_peers_lost_it_is_still_the_first_exit(make_bundle: BundleMaker) -> None:
    # the report stamped later than the losses it caused (here by the step's end banner before it)
    out = _peers_lost_rank1() + ("0: slurmstepd-ffnode1: error: *** STEP 1.0 ON ffnode1 CANCELLED AT "
                                 "2026-12-01T09:09:57 ***\n") + KILLED + "\n"
    v = _analyze(make_bundle, {"slurm-1.out": out}, _slurm_workload(stderr=False))
    fe = [x for x in v.leads if x.kind == "first_exit"]
    assert [x.ranks for x in fe] == [[1]]
    assert "the first losing its connection to a peer at 2026-12-01T09:09:50" in fe[0].summary


def test_a_rank_that_lost_its_peer_before_srun_killed_it_is_not_the_first_exit(make_bundle: BundleMaker) -> None:
    # rank 0 reported the lost peer itself: it went after someone, whatever srun says of it
    v = _analyze(make_bundle, {"slurm-1.out": _peers_lost_rank1(),
                               "slurm-1.err": "srun: error: ffnode1: task 0: Killed\n"}, _slurm_workload(stderr=True))
    assert [x.ranks for x in v.leads if x.kind == "first_exit"] == [[1]]  # rank 1 left first, without a word
    assert "without a word" in v.leads[0].summary


def test_two_untimed_kills_before_the_same_loss_name_neither(make_bundle: BundleMaker) -> None:
    evs = [_ev("process.signal", 1, None, "n1", signal="SIGKILL", by="launcher"),
           _ev("process.signal", 2, None, "n1", signal="SIGKILL", by="launcher"),
           _ev("nccl.remote_error", 0, 5, "n0"), _ev("nccl.remote_error", 3, 6, "n0")]
    assert [d for d in find_leads(evs, {0: "n0", 1: "n1", 2: "n1", 3: "n0"}) if d.kind == "first_exit"] == []
    assert [d.ranks for d in find_leads(evs[:1] + evs[2:], {0: "n0", 1: "n1", 3: "n0"})
            if d.kind == "first_exit"] == [[1]]


def test_mpirun_saw_the_first_exit_the_peers_lost_it(make_bundle: BundleMaker) -> None:
    wl = {"apiVersion": "firstfault/v1",
          "workload": {"id": "9", "scheduler": "static",
                       "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"},
                       "nodes": ["host01", "host02"], "ranks": {"host01": "0-1", "host02": "2-3"},
                       "terminal_state": "FAILED"},
          "sources": [{"kind": "application", "path": "app/rank-{rank}.log"},
                      {"kind": "application", "path": "mpirun.log"}]}
    files: dict[str, str | bytes] = {
        "mpirun.log": "mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).\n"}
    for r in (1, 2, 3):
        host = "host01" if r < 2 else "host02"
        files[f"app/rank-{r}.log"] = (f"2026-11-02 10:30:0{r},100 INFO step 812\n"
                                      f"{host}:1234:1290 [{r % 2}] misc/socket.cc:538 NCCL WARN Net : Connection "
                                      f"closed by remote peer host01<47861>\n")
    v = _analyze(make_bundle, files, wl)
    fe = [x for x in v.leads if x.kind == "first_exit"]
    assert [(x.ranks, x.nodes) for x in fe] == [([0], ["host01"])]
    assert fe[0].summary.startswith("rank 0 on host01 exited first (SIGKILL; the launcher reported it without a "
                                    "time); 3 other ranks failed after it")


def test_a_report_that_names_only_a_node_is_placed_by_the_other_nodes_losses() -> None:
    # accelerate launch / DeepSpeed's runner report a child's signal with the node, not the rank
    kill_b = _ev("process.signal", None, None, "n1", signal="SIGKILL", by="launcher")
    lost_on_a = [_ev("nccl.remote_error", 0, 5, "n0"), _ev("nccl.remote_error", 1, 6, "n0")]
    r2n = {0: "n0", 1: "n0", 2: "n1", 3: "n1"}
    fe = [d for d in find_leads([kill_b, *lost_on_a], r2n) if d.kind == "first_exit"]
    assert [(d.ranks, d.nodes) for d in fe] == [([], ["n1"])]
    # the losses reported on its own node do not place it: they may be its own ranks' collateral
    lost_on_b = [_ev("nccl.remote_error", 2, 5, "n1"), _ev("nccl.remote_error", 3, 6, "n1")]
    assert [d for d in find_leads([kill_b, *lost_on_b], r2n) if d.kind == "first_exit" and d.nodes == ["n1"]
            and "launcher reported" in d.summary] == []
    # two nodes' reports placed at the same loss: neither is first
    kill_c = _ev("process.signal", None, None, "n2", signal="SIGKILL", by="launcher")
    assert [d for d in find_leads([kill_b, kill_c, *lost_on_a], {**r2n, 4: "n2"}) if d.kind == "first_exit"] == []
