"""torchrun's (torch.distributed.elastic) agent output: the ChildFailedError summary and its signal lines.

The summary is a small state machine over its section and field lines, kept
in the per-stream `ctx.state`; the exception extractor (exceptions.py) asks
`torchrun_entry` which entry a reprinted worker traceback belongs to.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import name_not_found_words
from firstfault.extract.base import Draft, LineContext, LineExtractor, state_set
from firstfault.extract.codes import by_whom, exit_reading
from firstfault.extract.nccl import clip, split_rank_prefix
from firstfault.model import FieldValue

_ROOT = re.compile(r"^\s*Root Cause(?: \(first observed failure\))?:\s*$")
_FAILURES = re.compile(r"^\s*(?:Other )?Failures:\s*$")
_HOST_FIELD = re.compile(r"^\s*host\s*:\s*(?P<host>\S+)\s*$")
_RANK_FIELD = re.compile(r"^\s*rank\s*:\s*(?P<rank>\d+)\s*\(local_rank:\s*(?P<local>\d+)\)")
_EXIT_FIELD = re.compile(r"^\s*exitcode\s*:\s*(?P<code>-?\d+)\s*\(pid:\s*(?P<pid>\d+)\)")
_SENDING = re.compile(r"Sending process (?P<pid>\d+) closing signal (?P<sig>SIG[A-Z0-9]+)")
_AGENT_FAILED = re.compile(r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<local>\d+) \(pid: (?P<pid>\d+)\)")
# The exception's own line, `torch.distributed.elastic.multiprocessing.errors.ChildFailedError:` (the class at the
# line's end, a colon at most after it), not a frame's `raise ChildFailedError(` nor prose that names the class.
_ANNOUNCED = re.compile(r"(?:^|[.\s])ChildFailedError:?\s*$")
_BLOCK: Final = "ff.app.torchrun"
# The pids this agent sent a closing signal to. A worker that died of SIGTERM / SIGINT the agent never sent
# was signalled from outside the launcher (a person, a script, a node agent): `unprompted`, a first exit
# the leads may name, where the agent's own SIGTERMs to the survivors are collateral.
_SENT: Final = "ff.app.torchrun.sent"
_STOP_SIGNALS: Final = ("SIGTERM", "SIGINT")


def _sent(state: dict[str, object]) -> set[int]:
    return state_set(state, _SENT)


def _unprompted(state: dict[str, object], sig: str | None, pid: int) -> bool:
    return sig in _STOP_SIGNALS and pid not in _sent(state)


@dataclass(slots=True)
class _Block:
    """Where we are in one agent's ChildFailedError summary."""

    section: str | None = None  # "failures" | "root"
    host: str | None = None
    rank: int | None = None
    emitted: bool = False
    last: tuple[int | None, str | None] | None = None  # (rank, host) of the last entry
    # The ChildFailedError line of a summary that gave no entry yet (the class's line alone: a summary cut off or
    # never printed), with its place: at the stream's end, a failure seen whose cause is not in the stream (at_end).
    announced: tuple[LineContext, str] | None = None


def _block(state: dict[str, object]) -> _Block:
    blk = state.get(_BLOCK)
    if not isinstance(blk, _Block):
        blk = _Block()
        state[_BLOCK] = blk
    return blk


def torchrun_entry(state: dict[str, object]) -> tuple[int | None, str | None] | None:
    blk = state.get(_BLOCK)
    return blk.last if isinstance(blk, _Block) else None


class TorchrunExtractor:
    """ChildFailedError summaries and the elastic agent's signal / failure lines."""

    name = "torch.child_failed"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "process.signal": frozenset({"by", "detail", "local_rank", "signal", "unprompted"}),
        "torch.child_failed": frozenset({"exitcode", "failed_rank", "root_cause", "signal", "unprompted"}),
        "launcher.exit": frozenset({"state", "system", "scope", "code", "pid"}),
        "app.exception": frozenset({"envelope", "message"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = (
        "ChildFailedError",
        "Failures:",
        "Root Cause",
        "host      : ",
        "(local_rank: ",
        "exitcode  : ",
        "exitcode: ",
        "closing signal SIG",
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        prefix_rank, body = split_rank_prefix(line)
        blk = _block(ctx.state)
        ctx.claimed = True  # the agent's summary and signal lines, all understood here
        if "ChildFailedError" in body:
            # A new summary (or the agent's traceback announcing one).
            blk.section, blk.host, blk.rank, blk.emitted = None, None, None, False
            if _ANNOUNCED.search(body):
                blk.announced = (ctx, body)
            return
        if _ROOT.match(body):
            blk.section = "root"
            return
        if _FAILURES.match(body):
            blk.section = "failures"
            return
        m = _SENDING.search(body)
        if m:
            sig = m.group("sig")
            _sent(ctx.state).add(int(m.group("pid")))
            yield Draft(
                "process.signal",
                {"signal": sig, "by": "launcher", "detail": clip(body)},
                rank=prefix_rank,
            )
            return
        m = _AGENT_FAILED.search(body)
        if m:
            sig_or_none = exit_reading("torchrun", int(m.group("code"))).signal
            if sig_or_none is not None:
                fields: dict[str, FieldValue] = {
                    "signal": sig_or_none,
                    "by": by_whom(sig_or_none, "launcher"),
                    "detail": clip(body),
                    "local_rank": int(m.group("local")),  # the leads map it to the node's rank
                }
                if _unprompted(ctx.state, sig_or_none, int(m.group("pid"))):
                    fields["unprompted"] = True
                yield Draft("process.signal", fields, rank=prefix_rank)
            elif int(m.group("code")) != 0:
                # A worker that exited with a status of its own (`failed (exitcode: 1) local_rank: 0 (pid: 65043) of
                # binary: ...`): the agent's record that a process of the job failed, how the run ended where nothing
                # else says it (engine/normalise.py own_end; a restart of the worker group after it supersedes it).
                # The ChildFailedError summary after it, where shown, is the symptom that names the rank and host.
                yield Draft("launcher.exit", {"state": "FAILED", "system": "torchrun", "scope": "process",
                                              "code": int(m.group("code")), "pid": int(m.group("pid"))},
                            rank=prefix_rank)
            return
        if blk.section is None:
            return
        m = _HOST_FIELD.match(body)
        if m:
            blk.host, blk.rank, blk.emitted = m.group("host"), None, False
            return
        m = _RANK_FIELD.match(body)
        if m:
            if blk.emitted:  # pre-2.0 summaries print no host line
                blk.host = None
            blk.rank, blk.emitted = int(m.group("rank")), False
            return
        m = _EXIT_FIELD.match(body)
        if m and blk.rank is not None and not blk.emitted:
            code = int(m.group("code"))
            fields = {
                "exitcode": code,
                "root_cause": blk.section == "root",
                "failed_rank": blk.rank,
            }
            sig = exit_reading("torchrun", code).signal
            if sig is not None:
                fields["signal"] = sig
                if _unprompted(ctx.state, sig, int(m.group("pid"))):
                    fields["unprompted"] = True
            blk.emitted = True
            blk.announced = None
            blk.last = (blk.rank, blk.host)
            yield Draft("torch.child_failed", fields, rank=blk.rank, host=blk.host)

    def at_end(self, state: dict[str, object]) -> list[tuple[Draft, LineContext, str]]:
        """Where the stream ends: the agent's ChildFailedError whose summary gave no entry (its class's line alone, a
        summary cut off) says that a worker failed, not which nor why. An `app.exception` marked `envelope`, as the
        traceback model gives a chain of envelopes only (extract/exceptions.py `at_end`): never a cause or symptom,
        only what keeps a run whose end is not shown from being called well (analysis/analyze.py `finish`)."""
        blk = state.get(_BLOCK)
        if not isinstance(blk, _Block) or blk.announced is None:
            return []
        at, text = blk.announced
        return [(Draft("app.exception", {"envelope": True, "message": clip(text)}), at, text)]


# c10d's TCP client (torch/csrc/distributed/c10d/socket.cpp, TCPStore.cpp) on a rendezvous address: the resolver's
# answer for the name, logged per try (`The IPv6 network addresses of (H, P) cannot be retrieved (gai error: -2 - Name
# or service not known).`), and the client's final word on the same name and port: the exception it raised
# (`torch.distributed.DistNetworkError: The client socket has timed out after 20000ms while trying to connect to (H,
# P).`, socket.cpp throwTimeoutError; the older `... has failed to connect to any network address of (H, P).`) or
# TCPStore.cpp's last try (`TCP client failed to connect/validate to host H:P - timed out (try=1, ...)`). socket.cpp's
# own E-line with the same words is logged at every try, and TCPStore retries after it (`- retrying (try=0, ...)`):
# a name the resolver learns late (a pod's DNS record not there yet) then connects, so those lines are no end.
_UNRESOLVED = re.compile(r"network addresses of \((?P<name>[^\s,()]{1,255}), (?P<port>\d{1,5})\) cannot be retrieved "
                         r"\(gai error: -?\d{1,5} - (?P<why>[^()\r\n]{1,120})\)")
_GAVE_UP = re.compile(r"\b(?:DistNetworkError|DistStoreError|RuntimeError|TimeoutError): "
                      r"The client socket has (?:timed out after \d{1,12}m?s while trying to connect to"
                      r"|failed to connect to any network address (?:of|on)) "
                      r"\((?P<name>[^\s,()]{1,255}), (?P<port>\d{1,5})\)"
                      r"|TCP client failed to connect/validate to host (?P<name2>[^\s:]{1,255}):(?P<port2>\d{1,5}) "
                      r"- timed out")
# The older c10d (torch/lib/c10d/Utils.cpp tcputil::connect, torch <= 1.10) looked the name up once and, where
# getaddrinfo failed, threw `std::invalid_argument("host not found: " + gai_strerror(err))` at once, no retry
# (pybind11 makes it `ValueError: host not found: Name or service not known`, from TCPStore's creation:
# pytorch/pytorch#73682, fixed by #74641 `c10d: retry dns lookup failures`; the same throw after getaddrinfo is
# THD's, apaszke/pytorch-dist#53): the lookup and the giving up in one line, the name not in it.
_HOST_NOT_FOUND = re.compile(r"\bhost not found: (?P<why>[^()\r\n]{1,120})")
_K_UNRESOLVED: Final = "ff.app.c10d.unresolved"  # (name, port) the resolver said do not exist, in this stream
_K_REPORTED: Final = "ff.app.c10d.reported"  # (name, port) already reported as the job's set-up


class C10dUnresolvedExtractor:
    """A rendezvous address that names no host: c10d's client could not resolve the name (the resolver's words for a
    name that does not exist, catalog/transport.yaml `name_not_found_words`) and then gave up connecting to that name
    and port, in the same stream. The job's set-up on the node that printed it (an nccl.error with `setup` and
    `local_status` `unresolved_address`, read by the app-setup rule), not a network or a peer's failure: the name came
    from the job's own MASTER_ADDR / --master-addr / --rdzv-endpoint. Either line alone decides nothing (a name with no
    IPv6 address whose IPv4 one connects is logged too; a timeout to a name that resolves is a peer or the network)."""

    name = "c10d.unresolved"
    emits: Mapping[str, frozenset[str]] = {"nccl.error": frozenset({"setup", "local_status", "detail"})}
    sources: frozenset[str] = frozenset({"application"})
    literals: tuple[str, ...] = ("cannot be retrieved (gai error:", "Error: The client socket has",
                                 "TCP client failed to connect/validate", "host not found: ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        m = _UNRESOLVED.search(body)
        if m is not None:
            seen = ctx.state.setdefault(_K_UNRESOLVED, set())
            if isinstance(seen, set) and m.group("why").strip().rstrip(".") in name_not_found_words():
                seen.add((m.group("name"), m.group("port")))
            return
        h = _HOST_NOT_FOUND.search(body)
        if h is not None:
            # the older c10d's one-line lookup failure: a name that does not exist (EAI_AGAIN, the resolver not
            # answering, says nothing of the name: not here), once per stream
            reported = ctx.state.setdefault(_K_REPORTED, set())
            if not isinstance(reported, set) or h.group("why").strip().rstrip(".") not in name_not_found_words() \
                    or ("", "") in reported:
                return
            reported.add(("", ""))
            yield Draft("nccl.error", {"setup": True, "local_status": "unresolved_address",
                                       "detail": clip(f"the rendezvous host does not resolve; {body.strip()}")},
                        rank=rank)
            return
        g = _GAVE_UP.search(body)
        if g is None:
            return
        key = (g.group("name") or g.group("name2"), g.group("port") or g.group("port2"))
        unresolved = ctx.state.get(_K_UNRESOLVED)
        reported = ctx.state.setdefault(_K_REPORTED, set())
        if not isinstance(unresolved, set) or not isinstance(reported, set) or key not in unresolved or key in reported:
            return
        reported.add(key)
        yield Draft("nccl.error", {"setup": True, "local_status": "unresolved_address",
                                   "detail": clip(f"{key[0]}:{key[1]} does not resolve; {body.strip()}")}, rank=rank)


EXTRACTORS: tuple[LineExtractor, ...] = (TorchrunExtractor(), C10dUnresolvedExtractor())
