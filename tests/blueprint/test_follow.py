"""`watch --follow`: running attempts followed, provisional verdicts sent once per attempt and cause, the final
verdict superseding them (blueprint/follow.py, collect/follow.py, store/provisional.py).

Log lines are real, from public threads, as their reporters pasted them:
- the Xid 79 block of illinois-scicomp/machine-shop-maintenance#80 ("New Titan V in porter fell off the bus",
  https://github.com/illinois-scicomp/machine-shop-maintenance/issues/80; tests/wild/hw-xid79-titanv-overheating-
  porter), which a `dmesg -T` printed on node `porter`;
- the c10d watchdog timeouts of XPixelGroup/BasicSR#737 (https://github.com/XPixelGroup/BasicSR/issues/737;
  tests/wild/unk-basicsr-allreduce-watchdog-737): symptoms only, no cause.
The attempts are static ones (a window start and nodes), the evidence files written while the daemon polls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.blueprint.follow import FollowDaemon, cursor_name
from firstfault.blueprint.pipeline import Pipeline
from firstfault.blueprint.watch import Watcher
from firstfault.bundle import Context, SourceSpec
from firstfault.collect.files import FilesConnector
from firstfault.collect.follow import FileFollow
from firstfault.collect.scan import LineScanner, all_line_extractors, prefilter_words
from firstfault.identify.base import Identified, IdentifyError
from firstfault.identify.slurm import parse_squeue
from firstfault.identify.static import StaticAttempts, StaticList
from firstfault.model import Enrichment, Verdict
from firstfault.sinks.alertmanager import AlertmanagerSink
from firstfault.sinks.webhook import delivery_id
from firstfault.store.provisional import ProvisionalLedger
from firstfault.store.repo import VerdictStore
from firstfault.timeparse import TimeParser

WORDS = prefilter_words()
PORTER = (
    "[Tue Apr 15 16:50:03 2025] NVRM: GPU at PCI:0000:02:00: GPU-be29ae39-c771-a3b8-e7c3-83562ff86bbe\n"
    "[Tue Apr 15 16:50:03 2025] NVRM: GPU Board Serial Number: 0322518029277\n"
    "[Tue Apr 15 16:50:03 2025] NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
    "off the bus.\n"
    "[Tue Apr 15 16:50:03 2025] NVRM: GPU 0000:02:00.0: GPU has fallen off the bus.\n"
)
WATCHDOG = (
    "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for "
    "600020 milliseconds before timing out.\n"
)
KERNEL = SourceSpec(kind="kernel", path="nodes/{node}/kern.log")
APP = SourceSpec(kind="application", path="app/{id}/train.log")


def _static(id: str = "job-1", start: str = "2025-04-15T16:00:00Z", end: str | None = None,
            nodes: tuple[str, ...] = ("porter", "stout"), state: str | None = None) -> StaticAttempts:
    return StaticAttempts(id=id, start=start, end=end, nodes=list(nodes), terminal_state=state)


def _files(root: Path, ident: Identified) -> list[SourceSpec]:
    return [KERNEL, SourceSpec(kind="application", path=APP.path.replace("{id}", ident.workload.id))]


class Outputs:
    """What the daemon sent, as a sink sees it."""

    name = "record"

    def __init__(self) -> None:
        self.got: list[Verdict] = []

    def write(self, verdict: Verdict, enrichment: Enrichment) -> None:
        self.got.append(verdict)


def _daemon(root: Path, store: VerdictStore, attempts: list[StaticAttempts], **kw: Any) -> FollowDaemon:
    def make(ident: Identified, cur: dict[str, Any] | None) -> list[Any]:
        ctx = Context.from_spec(ident.workload)
        return [FileFollow(_files(root, ident), root, ctx, WORDS, cursor=(cur or {}).get("files"))]

    return FollowDaemon(source=StaticList(attempts), store=store, make_followers=make, cluster="lab",
                        ledger="static@lab", **{"sinks": [], **kw})


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VerdictStore]:
    s = VerdictStore.open(f"sqlite:///{tmp_path / 'ff.db'}")
    try:
        yield s
    finally:
        s.close()


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(text)


# -- collect: a followed file ---------------------------------------------------------------------------------


def test_a_followed_file_gives_what_reading_it_whole_gives(tmp_path: Path) -> None:
    """Written in pieces, one of them cut inside a line: the candidates (file, line, time, text) are those of the
    whole file read at once, none twice, and the cut line only once its newline is there."""
    root = tmp_path / "ev"
    path = root / "nodes" / "porter" / "kern.log"
    ctx = Context.from_spec(_static().workload)
    follow = FileFollow([KERNEL], root, ctx, WORDS)

    class Sink:
        def __init__(self) -> None:
            self.got: list[Any] = []
            self.coverage: list[Any] = []
            self.errors: list[Any] = []

        def add_candidate(self, c: Any) -> None:
            self.got.append((c.file, c.line, c.time, c.text))

        def saw_node(self, node: str, last: datetime) -> None:
            pass

    sink = Sink()
    now = datetime.now(UTC)
    text = "Apr 15 16:49:00 porter kernel: usb 1-1: new device\n" + PORTER
    cut = text.index("79, pid=")  # inside the Xid line
    _append(path, text[:cut])
    follow.poll(sink, now)
    assert sink.got == [] and follow.tails["nodes/porter/kern.log"].lines == 3  # the Xid line is not whole yet
    _append(path, text[cut:])
    follow.poll(sink, now)
    follow.poll(sink, now)  # nothing new: nothing again
    whole: list[Any] = []
    LineScanner("kernel", all_line_extractors(), words=WORDS).scan_file(
        str(path), "nodes/porter/kern.log", node="porter", rank=None, srun_prefix=False,
        tp=TimeParser(ctx.tz, ctx.window_start, ctx.window_end),
        emit=lambda c: whole.append((c.file, c.line, c.time, c.text)))
    assert sink.got == whole and [g[1] for g in whole] == [4, 5]
    assert follow.cursor()["files"]["nodes/porter/kern.log"][2:] == [path.stat().st_size, 5]


def test_a_truncated_file_is_read_again_and_said(tmp_path: Path) -> None:
    root = tmp_path / "ev"
    path = root / "nodes" / "porter" / "kern.log"
    ctx = Context.from_spec(_static().workload)
    follow = FileFollow([KERNEL], root, ctx, WORDS)
    analysis = Analyzer().start(ctx)
    _append(path, PORTER)
    follow.poll(analysis, datetime.now(UTC))
    path.write_text(PORTER.splitlines(keepends=True)[2])  # logrotate's copytruncate, then one line
    follow.poll(analysis, datetime.now(UTC))
    assert [e.message for e in analysis.errors] == ["replaced or truncated while followed: read again from its start"]
    assert follow.tails["nodes/porter/kern.log"].lines == 1


def test_a_file_cut_while_the_follower_was_stopped_is_said(tmp_path: Path) -> None:
    """The stored cursor says the file had more than it has now (logrotate ran while the daemon was down): the
    lines it held are not in this verdict, and the verdict says so. Near miss: the same file grown is not."""
    root = tmp_path / "ev"
    path = root / "nodes" / "porter" / "kern.log"
    ctx = Context.from_spec(_static().workload)
    _append(path, PORTER)
    first = FileFollow([KERNEL], root, ctx, WORDS)
    first.poll(Analyzer().start(ctx), datetime.now(UTC))
    cursor = first.cursor()
    _append(path, PORTER)  # grew: nothing lost
    grown = Analyzer().start(ctx)
    FileFollow([KERNEL], root, ctx, WORDS, cursor=cursor).poll(grown, datetime.now(UTC))
    assert grown.errors == []
    path.write_text(PORTER.splitlines(keepends=True)[2])  # cut to one line
    cut = Analyzer().start(ctx)
    FileFollow([KERNEL], root, ctx, WORDS, cursor=cursor).poll(cut, datetime.now(UTC))
    assert [(e.file, e.message.split(":")[0]) for e in cut.errors] == [
        ("nodes/porter/kern.log", "replaced or truncated while the follower was stopped")]


def test_only_the_allocations_files_are_followed(tmp_path: Path) -> None:
    """The root holds the cluster's logs: another job's node is not this attempt's evidence (near miss: the
    same template, the same line)."""
    root = tmp_path / "ev"
    _append(root / "nodes" / "porter" / "kern.log", PORTER)
    _append(root / "nodes" / "elsewhere" / "kern.log", PORTER.replace("porter", "elsewhere"))
    ctx = Context.from_spec(_static().workload)
    follow = FileFollow([KERNEL, SourceSpec(kind="kernel", path="nodes/*{node}/kern.log")], root, ctx, WORDS)
    follow.poll(Analyzer().start(ctx), datetime.now(UTC))
    assert sorted(follow.tails) == ["nodes/porter/kern.log", "nodes/stout/kern.log"]


# -- identify: what runs ----------------------------------------------------------------------------------------


def test_squeue_lines_become_running_attempts() -> None:
    """`squeue -h -a -t RUNNING -o %i|%S` as Slurm 22.05 prints it (-M adds a CLUSTER header); a het job's
    components are one attempt."""
    got = parse_squeue("CLUSTER: fftest\n10|2026-12-01T10:00:01\n4242+1|2026-12-01T09:00:00\n"
                       "4242+0|2026-12-01T09:00:00\n9_3|2026-12-01T08:00:00\n\n")
    assert [(r.ref, r.since) for r in got] == [("9_3", "2026-12-01T08:00:00"), ("10", "2026-12-01T10:00:01"),
                                              ("4242", "2026-12-01T09:00:00")]


def test_a_squeue_line_of_another_shape_is_an_error_that_quotes_it() -> None:
    with pytest.raises(IdentifyError, match="JOBID  PARTITION"):
        parse_squeue("JOBID  PARTITION  NAME\n")  # squeue without -h -o (near miss: a header, not a job)


def test_a_static_list_holds_running_attempts_only() -> None:
    with pytest.raises(IdentifyError, match="has an end"):
        StaticList([_static(end="2025-04-15T17:00:00Z")])
    lst = StaticList([_static("a"), _static("b")])
    assert [r.ref for r in lst.running()] == ["a", "b"]
    assert lst.identify("b").workload.window.end is None
    with pytest.raises(IdentifyError, match="no attempt 'c'"):
        lst.identify("c")


# -- the daemon --------------------------------------------------------------------------------------------------


def test_a_cause_on_a_running_attempt_is_sent_once(tmp_path: Path, store: VerdictStore) -> None:
    root = tmp_path / "ev"
    out = Outputs()
    d = _daemon(root, store, [_static()], sinks=[out])
    assert d.step() == []  # nothing written yet
    _append(root / "nodes" / "porter" / "kern.log", PORTER)
    (v, pid), = d.step()
    assert v.provisional and v.outcome == "running" and v.attributed_domain == "hardware"
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert v.root_cause.nodes == ["porter"] and out.got == [v]
    assert [e.file for e in v.evidence if e.role == "cause"] == ["nodes/porter/kern.log"]
    _append(root / "nodes" / "porter" / "kern.log", PORTER)  # the driver says it again: the same cause
    assert d.step() == [] and len(out.got) == 1
    rec = ProvisionalLedger(store).get(pid)
    assert rec is not None and rec.category == "gpu.fallen_off_bus" and rec.ref == "job-1" and rec.held is None
    assert rec.delivery == delivery_id(v, Enrichment(cluster="lab"))
    stored = store.cursors("follow:static@lab:")
    assert list(stored) == [cursor_name("static@lab", "job-1", 0)]
    assert json.loads(stored[cursor_name("static@lab", "job-1", 0)])["sources"]["files"]["files"]


def test_symptoms_alone_send_nothing(tmp_path: Path, store: VerdictStore) -> None:
    """Near miss: the watchdog timed out on a rank (BasicSR#737) and nothing says why."""
    root = tmp_path / "ev"
    out = Outputs()
    d = _daemon(root, store, [_static(start="2025-06-26T06:00:00Z", nodes=("gpu-a",))], sinks=[out])
    _append(root / "app" / "job-1" / "train.log", WATCHDOG)
    d.step()
    assert out.got == [] and ProvisionalLedger(store).running() == []


def test_a_restart_neither_sends_again_nor_loses_a_cause(tmp_path: Path, store: VerdictStore) -> None:
    root = tmp_path / "ev"
    out = Outputs()
    d = _daemon(root, store, [_static("a"), _static("b")], sinks=[out])
    _append(root / "nodes" / "porter" / "kern.log", PORTER)  # on a's nodes and b's: both attempts share them
    assert len(d.step()) == 2
    d.close()
    # Stopped; the fault is written again, and a new one while it was down.
    d2 = _daemon(root, store, [_static("a"), _static("b"), _static("c", nodes=("stout",))], sinks=[out])
    _append(root / "nodes" / "stout" / "kern.log", PORTER.replace("PCI:0000:02:00", "PCI:0000:03:00"))
    got = d2.step()
    assert [v.workload.id for v, _ in got] == ["c"]
    assert sorted((v.workload.id, v.root_cause.nodes[0]) for v in out.got if v.root_cause) == [
        ("a", "porter"), ("b", "porter"), ("c", "stout")]


def test_the_final_verdict_supersedes_and_resolves(tmp_path: Path, store: VerdictStore) -> None:
    root = tmp_path / "ev"
    d = _daemon(root, store, [_static()])
    _append(root / "nodes" / "porter" / "kern.log", PORTER)
    (prov, pid), = d.step()

    class Ended:
        """The attempt as a scheduler reports it once it failed."""

        name = "static"

        def identify(self, ref: str) -> Identified:
            return _static(end="2025-04-15T17:00:00Z", state="FAILED").identify(ref)

        def ended_since(self, cursor: str | None) -> tuple[list[str], str]:
            return (["job-1"], "done") if cursor is None else ([], cursor)

    resolved: list[Verdict] = []

    class Alerts(Outputs):
        name = "alertmanager"

        def resolve(self, verdict: Verdict, enrichment: Enrichment) -> None:
            resolved.append(verdict)

    alerts = Alerts()
    src = Ended()
    w = Watcher(source=src, store=store, cluster="lab", provisional=ProvisionalLedger(store),
                make_pipeline=lambda ref: Pipeline(context=src, logs=[FilesConnector([KERNEL], root)], sinks=[alerts],
                                                   cluster="lab"))
    report = w.run_pass()
    assert report.analysed == ["job-1#0"] and report.failed == []
    final = alerts.got[0]
    assert not final.provisional and final.root_cause is not None
    assert final.root_cause.category == "gpu.fallen_off_bus"
    (sup,) = final.supersedes
    assert sup.held and sup.category == "gpu.fallen_off_bus" and sup.nodes == ["porter"]
    assert sup.delivery == delivery_id(prov, Enrichment(cluster="lab")) != delivery_id(final, Enrichment(cluster="lab"))
    rec = ProvisionalLedger(store).get(pid)
    vid = store.find("job-1", 0, "lab")
    assert rec is not None and rec.held is True and rec.final_verdict_id == vid and rec.settled_at is not None
    assert [r.verdict.root_cause.category for r in [rec] if r.verdict.root_cause] == ["gpu.fallen_off_bus"]
    assert resolved and resolved[0].provisional
    assert ProvisionalLedger(store).running() == []


def test_a_cause_that_did_not_hold_is_said(tmp_path: Path, store: VerdictStore) -> None:
    """Near miss of the above: the final verdict names the cause on another node than the provisional one."""
    from firstfault.blueprint.follow import supersedes

    root = tmp_path / "ev"
    d = _daemon(root, store, [_static()])
    _append(root / "nodes" / "porter" / "kern.log", PORTER)
    (prov, pid), = d.step()
    rec = ProvisionalLedger(store).get(pid)
    assert rec is not None
    assert prov.root_cause is not None
    other = records.replace(prov, provisional=False, outcome="failed",
                            root_cause=records.replace(prov.root_cause, nodes=["stout"]))
    notes, held = supersedes([rec], other)
    assert held == {pid: False} and not notes[0].held
    notes, held = supersedes([rec], records.replace(prov, root_cause=None, attributed_domain="unknown"))
    assert held == {pid: False}


def test_the_store_refuses_a_provisional_verdict(tmp_path: Path, store: VerdictStore) -> None:
    from firstfault.store.db import StoreError

    root = tmp_path / "ev"
    d = _daemon(root, store, [_static()])
    _append(root / "nodes" / "porter" / "kern.log", PORTER)
    (prov, _pid), = d.step()
    with pytest.raises(StoreError, match="provisional"):
        store.write(prov)


def test_provisional_and_final_webhook_ids_differ_and_tie() -> None:
    wild = Path(__file__).resolve().parents[1] / "wild"
    v = Analyzer().analyze_path(str(wild / "hw-xid79-titanv-overheating-porter"))
    enr = Enrichment(cluster="lab")
    p = records.replace(v, provisional=True, outcome="running")
    assert delivery_id(p, enr) != delivery_id(v, enr)
    # The provisional id does not depend on the catalog (a reload does not make the same cause new), the cause does.
    assert delivery_id(p, enr) == delivery_id(records.replace(p, catalog=records.replace(p.catalog, sha256="0" * 64)),
                                              enr)
    assert p.root_cause is not None
    other = records.replace(p, root_cause=records.replace(p.root_cause, category="gpu.memory"))
    assert delivery_id(other, enr) != delivery_id(p, enr)


# -- Alertmanager, for real -------------------------------------------------------------------------------------



@pytest.mark.integration
def test_alertmanager_gets_the_provisional_alert_then_its_resolution(am: Any, tmp_path: Path,
                                                                    store: VerdictStore) -> None:
    root = tmp_path / "ev"
    with AlertmanagerSink(am.url, sleep=lambda _s: None) as sink:
        d = _daemon(root, store, [_static("am-1")], sinks=[sink])
        _append(root / "nodes" / "porter" / "kern.log", PORTER)
        (prov, _pid), = d.step()
        (alert,) = am.alerts(filter='workload="am-1"')
        assert alert["labels"]["alertname"] == "FirstfaultProvisional"
        assert alert["labels"]["category"] == "gpu.fallen_off_bus" and alert["labels"]["node"] == "porter"
        assert alert["labels"]["outcome"] == "running" and alert["status"]["state"] == "active"
        assert datetime.fromisoformat(alert["endsAt"].replace("Z", "+00:00")) > datetime.now(UTC) + timedelta(hours=1)
        got = sink.resolve(prov, Enrichment(cluster="lab"))
        assert got.ok and got.alerts == 1
    # Resolved: Alertmanager lists active (and silenced, inhibited) alerts only.
    assert am.alerts(filter='workload="am-1"') == []


# -- a real Slurm ------------------------------------------------------------------------------------------------


@pytest.mark.integration
def test_squeue_lists_a_running_job_that_identify_then_reads_as_running(slurm_cluster: Any) -> None:
    from firstfault.identify.slurm import SlurmAttempts

    ctx = SlurmAttempts(env={"SLURM_CONF": str(slurm_cluster.conf)}, timeout=20)
    jid = slurm_cluster.sbatch("#!/bin/sh\nsleep 60\n")
    try:
        slurm_cluster.wait_state(jid, ("RUNNING",))
        running = {r.ref: r.since for r in ctx.running()}
        assert jid in running and running[jid][:4].isdigit()
        wl = ctx.identify(jid).workload
        assert wl.terminal_state is None and wl.window.end is None and wl.window.start is not None
        assert wl.nodes == [slurm_cluster.node]
    finally:
        slurm_cluster.run("scancel", jid, check=False)
    slurm_cluster.wait_state(jid)
    assert jid not in {r.ref for r in ctx.running()}
