"""Hang reports that name (or imply) the ranks a collective waited for.

The c10d watchdog's own lines (SeqNum, last enqueued / completed work) are
read by extract/nccl.py; this module reads the other reports a hang leaves:

- `monitored_barrier` failures: `Rank 1 failed to pass monitoredBarrier in
  1800000 ms`, and with `wait_all_ranks=True` `Ranks 4, 5, 6, 7 failed to
  pass monitoredBarrier in 2000000 ms` (c10d.monitored_barrier);
- gloo transport timeouts: `Timed out waiting 1800000ms for recv operation
  to complete` (gloo.timeout): every rank that waits prints one, the rank
  they wait for prints none;
- the desync-debug report of TORCH_DISTRIBUTED_DEBUG=DETAIL /
  TORCH_NCCL_DESYNC_DEBUG=1: `ranks [1, 2] are the lagging ranks that caused
  this timeout`, `[1] joined but didn't finish collective #42`
  (c10d.desync_report);
- Horovod's stall inspector: `One or more tensors were submitted to be
  reduced, gathered or broadcasted by subset of ranks and are waiting for
  remainder of ranks for more than 60 seconds` (horovod.stall; the ranks it
  names come on the lines after it, which hold none of the words of a report;
  a posted copy may wrap the line before its seconds);
- the other detectors' stall reports, catalog/ends.yaml `stalls` rows `stall` (extract/stalls.py): Horovod's
  shutdown after HOROVOD_STALL_SHUTDOWN_TIME_SECONDS and its launcher's `Timed out waiting for tasks to start`,
  the TensorFlow / XLA coordination service's heartbeat timeouts, TensorFlow's TPU `lame workers found`, c10d's
  old store `Wait timeout` (stall.report: `detector`, the `missing` rank or task where the line names it).

These are symptoms (every rank of a hang prints them); engine/leads.py
turns them into `laggard_rank` leads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.nccl import HANG_LITERALS, mark_failure, recent, split_rank_prefix
from firstfault.extract.stalls import read_listen, read_stall, read_wait, stall_literals
from firstfault.model import FieldValue

_BARRIER = re.compile(r"\bRanks? (?P<ranks>\d+(?:\s*,\s*\d+)*) failed to pass monitoredBarrier in (?P<ms>\d+) ms")
_BARRIER_OK = re.compile(
    r"\bRank (?P<rank>\d+) successfully reached monitoredBarrier, but received errors while waiting for "
    r"send/recv from rank (?P<peer>\d+)"
)
_REPORTER = re.compile(r"\[Rank (\d+)\]")
_GLOO = re.compile(r"Timed out waiting (?P<ms>\d+)\s*ms for (?P<op>send|recv) operation to complete")
_LAGGING = re.compile(r"ranks \[(?P<ranks>[\d,\s]*)\] are the lagging ranks")
_JOINED = re.compile(r"- \[(?P<rank>\d+)\] joined but didn't finish collective #(?P<seq>\d+)")
_STALL = re.compile(r"by subset of ranks(?: and are waiting for remainder of ranks for more than (?P<s>\d+) seconds)?")
_FINISHED = re.compile(
    r"- \[(?P<rank>\d+)\] finished collective #(?P<seq>\d+), but didn't join collective #(?P<next>\d+)"
)
# A rank's one gloo failure is printed by its RuntimeError, the traceback's
# re-raise and the launcher's error file: the same report within this many lines.
_REPORT_LINES: Final = 80
# The reports of a collective that failed on the rank that prints them (a monitoredBarrier's only where it names
# ranks that failed to pass: the success form is a wait that went on).
_FAILED: Final = frozenset({"gloo.timeout", "stall.report"})


def _ranks(text: str) -> str:
    return ",".join(str(int(r)) for r in re.split(r"[,\s]+", text.strip()) if r)


class HangReportExtractor:
    """monitoredBarrier failures, gloo timeouts, desync-debug reports and Horovod's stall warnings."""

    name = "c10d.hang"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "c10d.desync_report": frozenset({"lagging_ranks", "seq", "state"}),
        "c10d.monitored_barrier": frozenset({"failed_ranks", "reporter", "timeout_ms", "waited_on"}),
        "gloo.timeout": frozenset({"op", "timeout_ms"}),
        "horovod.stall": frozenset({"seconds"}),
        "stall.report": frozenset({"detector", "missing", "seconds", "waited_for", "failed_task"}),
        "rendezvous.wait": frozenset({"detector", "peer", "port"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = HANG_LITERALS + stall_literals()

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        who = rank if rank is not None else ctx.rank
        draft = self._draft(body) or _store_wait(body, ctx.state)
        if draft is None:
            return
        kind, fields = draft
        key = (kind, who, tuple(sorted((k, str(v)) for k, v in fields.items())))
        seen = recent(ctx.state, "ff.hang.reports")
        prev = seen.get(key)
        seen[key] = ctx.lineno
        if kind in _FAILED or (kind == "c10d.monitored_barrier" and fields.get("failed_ranks", "") != ""):
            # the rank's collective failed here (gloo's timeout raises, a failed monitoredBarrier raises, a stall
            # detector shuts the run down): the stream's mark that NCCL's failures leave (extract/nccl.py), so the
            # abort the runtime then makes (std::terminate as the process exits with gloo's threads, faulthandler's
            # `Aborted`) is the rank's reaction, not a crash of its own (extract/signals.py)
            mark_failure(ctx, who)
        if prev is not None and ctx.lineno - prev <= _REPORT_LINES:
            return
        yield Draft(kind, fields, rank=rank)

    def _draft(self, body: str) -> tuple[str, dict[str, FieldValue]] | None:
        m = _BARRIER.search(body)
        if m:
            fields: dict[str, FieldValue] = {"failed_ranks": _ranks(m.group("ranks")), "timeout_ms": int(m.group("ms"))}
            rep = _REPORTER.search(body[: m.start()])
            if rep:
                fields["reporter"] = int(rep.group(1))
            return "c10d.monitored_barrier", fields
        m = _BARRIER_OK.search(body)
        if m:
            return "c10d.monitored_barrier", {"failed_ranks": "", "reporter": int(m.group("rank")),
                                              "waited_on": int(m.group("peer"))}
        m = _GLOO.search(body)
        if m:
            return "gloo.timeout", {"op": m.group("op"), "timeout_ms": int(m.group("ms"))}
        m = _STALL.search(body)
        if m:
            return "horovod.stall", {"seconds": int(m.group("s"))} if m.group("s") else {}
        m = _LAGGING.search(body)
        if m:
            return "c10d.desync_report", {"lagging_ranks": _ranks(m.group("ranks")), "state": "not_joined"}
        m = _JOINED.search(body)
        if m:
            return "c10d.desync_report", {"lagging_ranks": m.group("rank"), "seq": int(m.group("seq")),
                                          "state": "not_finished"}
        m = _FINISHED.search(body)
        if m:
            return "c10d.desync_report", {"lagging_ranks": m.group("rank"), "seq": int(m.group("next")),
                                          "state": "not_joined"}
        stall = read_stall(body)
        if stall is not None:
            return "stall.report", stall
        return None


_K_LISTENS: Final = "ff.hang.listens"  # (detector, port) of the store servers this stream announced


def _store_wait(body: str, state: dict[str, object]) -> tuple[str, dict[str, FieldValue]] | None:
    """A store's client retrying its server (catalog/ends.yaml `stalls`, a `wait` row with `addr` and `port`): a
    `rendezvous.wait` with the address it dials (`peer`), which decides nothing but where the job spans two or more
    nodes and the address reaches only its own host (engine/normalise.py host_local_dialled); and a `stall.report`
    where the same stream announced that port as its own server's (the row's `listen`): the store's own process
    cannot reach its own server at the address it dials, which no wait ends. The server's announcement is kept."""
    listen = read_listen(body)
    if listen is not None:
        seen = state.setdefault(_K_LISTENS, set())
        if isinstance(seen, set):
            seen.add(listen)
        return None
    wait = read_wait(body)
    if wait is None:
        return None
    detector, addr, port = wait
    own = state.get(_K_LISTENS)
    if isinstance(own, set) and (detector, port) in own:
        return "stall.report", {"detector": detector, "waited_for": f"its own server at {addr}:{port}"}
    return "rendezvous.wait", {"detector": detector, "peer": addr, "port": int(port)}


EXTRACTORS: tuple[LineExtractor, ...] = (HangReportExtractor(),)
