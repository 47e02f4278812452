"""The end of the analysis does no work that grows with a job's ranks where its answer does not need it (issue 27).

A 16k-rank job's watchdog lines are tens of thousands of events. Where only the first of them in time is wanted (a
symptom's first_seen, the note that cites a relayed NCCL result or a hung engine, a lead's majority evidence and a
silent laggard's first two timeouts), the least is found, not the whole list sorted; the streams with no lone
exception line (terminal_lines) and the events with no generic exception after a failure (_fallout) are not walked.
Each answer is the one the sort or the walk gave: the tests hold the order, the ties, and the near misses.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from firstfault.catalog.tables import nccl_result_table
from firstfault.engine.attribute import SymptomHit
from firstfault.engine.leads import find_leads
from firstfault.engine.normalise import terminal_lines
from firstfault.engine.verdict import _hang_note, _relayed_note, _symptoms
from firstfault.model import Event, Evidence, FieldValue

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)


def _ev(kind: str, t: float | None, *, rank: int | None = 0, file: str = "f.log", line: int = 1,
        t_lo: float | None = None, **fields: FieldValue) -> Event:
    node = f"node-{rank // 8}" if rank is not None else None  # eight ranks a node
    return Event(kind=kind, time=None if t is None else T0 + timedelta(seconds=t), node=node, rank=rank,
                 fields=dict(fields), evidence=Evidence(source="application", file=file, line=line, text=kind),
                 t_lo=None if t_lo is None else T0 + timedelta(seconds=t_lo))


# ------------------------------------------------------------------ the first in time, not a sort of all of them

def test_a_symptoms_first_seen_is_its_earliest_time_wherever_it_stands_in_the_list() -> None:
    hits = [SymptomHit("nccl.timeout", _ev("nccl.timeout", t, line=i)) for i, t in enumerate([30, None, 10, 20])]
    hits.append(SymptomHit("nccl.timeout", _ev("nccl.timeout", 40, t_lo=5, line=9)))  # a sample's earliest moment
    (s,) = _symptoms(hits)
    assert s.first_seen == "2026-11-02T10:00:05.000000Z" and s.count == 5


def test_a_symptom_with_no_time_has_no_first_seen() -> None:
    (s,) = _symptoms([SymptomHit("nccl.timeout", _ev("nccl.timeout", None, line=i)) for i in range(3)])
    assert s.first_seen is None  # the near miss: no time, none made up


def _environment_result() -> str:
    return next(r.name for r in nccl_result_table().values() if r.whose == "environment")


def test_the_relayed_result_note_cites_the_first_such_symptom_in_time() -> None:
    name = _environment_result()
    hits = [SymptomHit("nccl.error", _ev("nccl.error", 1, file="early.log", line=3)),  # no result: not cited
            SymptomHit("nccl.error", _ev("nccl.error", 50, file="late.log", line=7, nccl_result=name)),
            SymptomHit("nccl.error", _ev("nccl.error", 20, file="first.log", line=2, nccl_result=name)),
            SymptomHit("nccl.error", _ev("nccl.error", 20, file="tie.log", line=2, nccl_result=name))]
    note = _relayed_note(hits)
    assert note is not None and "(first.log:2)" in note  # of equal times, the file first in order
    assert _relayed_note(hits[:1]) is None  # the near miss: a symptom that names no such result


def test_the_hang_note_cites_the_first_unexplained_hang_in_time() -> None:
    from firstfault.engine.attribute import Finding

    hits = [SymptomHit("gpu.hang", _ev("gpu.hang", 30, file="b.log", line=4)),
            SymptomHit("gpu.hang", _ev("gpu.hang", 10, file="a.log", line=8))]
    note = _hang_note(hits)
    assert note is not None and "(a.log:8" in note
    explained = SymptomHit("gpu.hang", _ev("gpu.hang", 1, file="c.log", line=1),
                           explained_by=object.__new__(Finding))
    note = _hang_note([explained, *hits])
    assert note is not None and "(a.log:8" in note  # the near miss: an explained hang, earlier, is not cited
    assert _hang_note([explained]) is None


def test_a_laggard_leads_evidence_is_the_majoritys_first_report_in_time() -> None:
    n, lag, seq = 64, 2, 48213
    evs: list[Event] = []
    for r in reversed(range(n)):  # listed last, the earliest: the majority's evidence all the same
        if r < lag:
            evs.append(_ev("nccl.watchdog_status", 600, rank=r, file=f"r{r}", last_enqueued=seq - 1,
                           last_completed=seq - 1, pg="0"))
        else:
            evs.append(_ev("nccl.timeout", 600 + r, rank=r, file=f"r{r}", seq=seq, op="ALLREDUCE", stuck=False))
            evs.append(_ev("nccl.watchdog_status", 600 + r, rank=r, file=f"r{r}", last_enqueued=seq,
                           last_completed=seq - 1, pg="0"))
    (lead,) = [d for d in find_leads(evs, {r: f"node-{r // 8}" for r in range(n)}) if d.kind == "laggard_rank"]
    assert lead.ranks == [0, 1]
    assert [(e.kind, e.rank) for e in lead.events] == [("nccl.watchdog_status", 0), ("nccl.watchdog_status", 1),
                                                       ("nccl.timeout", lag)]


def test_silent_laggards_evidence_is_the_first_two_timeouts_in_time() -> None:
    n, seq = 64, 48213
    evs = [_ev("nccl.timeout", 600 + (n - r), rank=r, file=f"r{r}", seq=seq, op="ALLREDUCE", stuck=False)
           for r in range(1, n)]  # rank 0 printed nothing; the last ranks timed out first
    (lead,) = [d for d in find_leads(evs, {r: f"node-{r // 8}" for r in range(n)}) if d.kind == "laggard_rank"]
    assert lead.ranks == [0]
    assert [e.rank for e in lead.events] == [n - 1, n - 2]


# ------------------------------------------------------------------ the streams that hold a lone exception line only

def test_streams_without_a_lone_exception_line_pass_unchanged() -> None:
    evs = [_ev("nccl.timeout", 1, rank=r, file=f"r{r}", line=i) for r in range(4) for i in range(3)]
    assert terminal_lines(evs) == evs


def test_a_lone_exception_line_is_judged_by_its_own_stream_alone() -> None:
    lone = _ev("app.exception", 5, rank=0, file="r0", line=10, terminal=True, exc_type="KeyError")
    later_elsewhere = _ev("nccl.timeout", 9, rank=1, file="r1", line=50)
    assert lone in terminal_lines([lone, later_elsewhere])  # the near miss: another stream's later line
    later_here = _ev("nccl.timeout", 9, rank=0, file="r0", line=50)
    assert lone not in terminal_lines([lone, later_elsewhere, later_here])  # more of its own stream after it


# ------------------------------------------------------------------ a kind's rules, once per kind

def test_the_rules_an_event_meets_are_those_of_its_kind_worked_out_once() -> None:
    from firstfault.engine.loader import shipped_catalog
    from firstfault.engine.match import RuleIndex, kind_matches

    rules = shipped_catalog().active()
    index = RuleIndex(rules)
    for kind in ("nccl.timeout", "nccl.watchdog_status", "gpu.xid", "sched.job", "no.such_kind"):
        want = {r.id for r in rules if any(kind_matches(sel.event, kind) for sel in r.match)}
        first = index.candidates(kind)
        assert {r.id for r in first} == want and len(first) == len(want)
        assert index.candidates(kind) is first  # the second event of a kind meets the same answer
    assert index.candidates("no.such_kind") == ()  # the near miss: a kind no rule selects meets none
