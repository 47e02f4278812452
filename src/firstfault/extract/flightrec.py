"""PyTorch c10d flight-recorder dumps (source kind `flight_recorder`).

A dump is what `TORCH_NCCL_TRACE_BUFFER_SIZE` / `TORCH_NCCL_DUMP_ON_TIMEOUT`
make each rank write when a collective times out: a pickle (or, from
`_dump_nccl_trace_json`, JSON) of one dict, as PyTorch's analyser
(torch/distributed/flight_recorder, `fr_trace`) reads it:

    {"version": "2.5", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
     "pg_status": {"0": {"last_enqueued_collective": 2, "last_started_collective": -1,
                         "last_completed_collective": 2}},
     "entries": [{"record_id": 0, "pg_id": 0, "process_group": ("0", "default_pg"),
                  "collective_seq_id": 1, "p2p_seq_id": 0, "op_id": 1,
                  "profiling_name": "nccl:all_reduce", "time_created_ns": 1724779239936775119,
                  "input_sizes": [[3, 4]], "output_sizes": [[3, 4]], "state": "completed",
                  "timeout_ms": 600000, "is_p2p": False, "frames": [...]}, ...]}

A dump is data from a failed job, possibly tampered with. A pickle is read
by extract/safepickle.py: its opcodes are checked first (no global, no
call; objects, depth, expanded size and integer width bounded) and only
then does the C unpickler build it, under an unpickler that refuses every
global anyway; so it only ever builds dicts, lists, tuples, sets, strings,
bytes, numbers, booleans and None. Torch is never imported. A JSON dump is
bounded by its size; its integers wider than 64 bits stay text.
Every value is then read through one gate per type: an integer outside 64
bits, or text that is not a scalar, is a problem naming its field
(`entries[3].collective_seq_id`), and the rest of the dump is read.

One `fr.pg_state` event per (rank, process group): where that rank's queue
stood (last enqueued / started / completed collective), its oldest
collective not completed (the one it waits in) and its latest one, and a
short `recent` list (`seq:op:numel_in:numel_out` of its last collectives)
that engine/leads.py compares across ranks.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from firstfault.extract.safepickle import PickleLimits, PickleRefused, UnsafeDumpError, load
from firstfault.extract.structured import (
    MAX_INT_DIGITS,
    ParseIssue,
    StructuredResult,
    clip,
    fits_int64,
    int_or_text,
)
from firstfault.model import Event, Evidence, FieldValue

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "fr.pg_state": frozenset({"entries", "last_completed", "last_enqueued", "last_op", "last_started",
                              "pending_numel_in", "pending_numel_out", "pending_op", "pending_seq", "pending_state",
                              "pg", "pg_name", "recent"}),
}

RECENT: Final = 16  # collectives per (rank, pg) kept in `recent`
MAX_PGS: Final = 1024  # process groups read from one dump (a job has a handful to a few hundred)
LIMITS: Final = PickleLimits()
_TEXT: Final = 200  # characters of a name or state kept

__all__ = ["EMITS", "LIMITS", "MAX_PGS", "RECENT", "UnsafeDumpError", "load_dump", "read_flight_recorder"]


def load_dump(data: bytes, check: Callable[[], None] | None = None) -> Any:
    """A dump's document: JSON when it looks like JSON, else a bounded, code-free unpickle (safepickle)."""
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        # Every value but the first follows a '[', ',' or ':': an upper bound on what json builds.
        values = 1 + data.count(b"[") + data.count(b",") + data.count(b":")
        if values > LIMITS.max_objects:
            raise PickleRefused(f"the JSON dump holds up to {values:,} values (the limit is {LIMITS.max_objects:,})")
        return json.loads(data.decode("utf-8"), parse_int=int_or_text)
    return load(data, LIMITS, check)


class _Values:
    """The one gate every value of a dump goes through: scalars of bounded size, or a problem naming the field."""

    def __init__(self, res: StructuredResult) -> None:
        self.res = res

    def _bad(self, path: str, what: str) -> None:
        self.res.issues.append(ParseIssue(None, f"{path}: {what}; ignored"))

    def integer(self, v: Any, path: str) -> int | None:
        """An integer (or its decimal text) within 64 bits; anything else is None, a too-wide one a problem."""
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            if fits_int64(v):
                return v
            self._bad(path, f"an integer of {v.bit_length():,} bits")
            return None
        if isinstance(v, str):
            digits = v[1:] if v[:1] == "-" else v
            if digits.isascii() and digits.isdigit():  # not "²" or "--5", which str.isdigit() or lstrip let by
                if len(digits) <= MAX_INT_DIGITS and fits_int64(n := int(v)):
                    return n
                self._bad(path, f"a number of {len(digits):,} digits, past 64 bits")
        return None

    def text(self, v: Any, path: str) -> str:
        """A name or a state as text: a string (clipped) or a plain scalar; any other value is a placeholder."""
        if isinstance(v, str):
            return clip(v, _TEXT)
        if v is None or isinstance(v, (bool, float)):
            return str(v)
        if isinstance(v, int):
            n = self.integer(v, path)
            return "?" if n is None else str(n)
        self._bad(path, f"a {type(v).__name__} where a name or a state belongs")
        return f"<{type(v).__name__}>"

    def numel(self, sizes: Any, path: str) -> int | None:
        """[[3, 4], [5]] -> 17: the element count of a collective's tensors (None past 64 bits)."""
        if not isinstance(sizes, (list, tuple)):
            return None
        total = 0
        for i, shape in enumerate(sizes):
            if not isinstance(shape, (list, tuple)):
                return None
            n = 1
            for j, d in enumerate(shape):
                di = self.integer(d, f"{path}[{i}][{j}]")
                if di is None:
                    return None
                n *= di
                if not fits_int64(n):
                    self._bad(path, "more than 2^63 elements")
                    return None
            total += n
            if not fits_int64(total):
                self._bad(path, "more than 2^63 elements")
                return None
        return total


@dataclass(slots=True)
class _Entry:
    """One collective of a dump, its fields read once."""

    index: int
    raw: dict[Any, Any]
    seq: int | None
    record: int | None
    op: str
    state: Any  # compared with "completed"; rendered through _Values.text when shown
    created: datetime | None


def _op(values: _Values, entry: dict[Any, Any], path: str) -> str:
    name = values.text(entry.get("profiling_name") or "?", f"{path}.profiling_name")
    return name.split(":", 1)[1] if ":" in name else name


def _pg_of(values: _Values, entry: dict[Any, Any], path: str) -> tuple[str, str | None]:
    pg = entry.get("process_group")
    if isinstance(pg, (list, tuple)) and pg:
        desc = pg[1] if len(pg) > 1 else None
        name = (values.text(desc, f"{path}.process_group[1]")
                if desc is not None and not (isinstance(desc, str) and desc == "undefined") else None)
        return values.text(pg[0], f"{path}.process_group[0]"), name
    pid = entry.get("pg_id")
    return (values.text(pid, f"{path}.pg_id") if pid is not None else "0"), None


def _time(values: _Values, ns: Any, path: str) -> datetime | None:
    n = values.integer(ns, path)
    if n is None or n <= 0:
        return None
    try:
        return datetime.fromtimestamp(n / 1e9, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def read_flight_recorder(data: bytes, file: str, *, node: str | None = None, rank: int | None = None,
                         check: Callable[[], None] | None = None) -> StructuredResult:
    """One `fr.pg_state` event per process group of a dump. `check` is the caller's deadline,
    called while the pickle is checked and once per process group."""
    res = StructuredResult()
    try:
        doc = load_dump(data, check)
    except UnsafeDumpError as exc:
        res.issues.append(ParseIssue(None, f"cannot read: {exc}"))
        return res
    except PickleRefused as exc:
        res.issues.append(ParseIssue(None, f"cannot read: refused, past what a flight-recorder dump holds: {exc}"))
        return res
    except (pickle.UnpicklingError, json.JSONDecodeError, UnicodeDecodeError, EOFError, ValueError,
            TypeError, IndexError, KeyError, AttributeError, MemoryError, RecursionError) as exc:
        res.issues.append(ParseIssue(None, f"cannot read: not a flight-recorder pickle or JSON dump ({exc})"))
        return res
    if not isinstance(doc, dict):
        res.issues.append(ParseIssue(None, f"cannot read: the dump is a {type(doc).__name__}, not a dict"))
        return res
    values = _Values(res)
    entries = doc.get("entries")
    if not isinstance(entries, list):
        res.issues.append(ParseIssue(None, "entries: missing or not a list"))
        entries = []
    if rank is None:
        rank = values.integer(doc.get("rank"), "rank")
    host = doc.get("hostname") or doc.get("host_name")
    if isinstance(host, str) and 0 < len(host) <= 255 and node is None:
        res.hosts.add(host)
    by_pg: dict[str, list[_Entry]] = {}
    descs: dict[str, str | None] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            res.issues.append(ParseIssue(None, f"entries[{i}]: not a dict"))
            continue
        path = f"entries[{i}]"
        op = _op(values, e, path)
        if e.get("is_p2p") is True or op in ("send", "recv"):
            continue  # point-to-point work has its own sequence (p2p_seq_id)
        pg, desc = _pg_of(values, e, path)
        by_pg.setdefault(pg, []).append(_Entry(
            i, e, values.integer(e.get("collective_seq_id"), f"{path}.collective_seq_id"),
            values.integer(e.get("record_id"), f"{path}.record_id"), op, e.get("state"),
            _time(values, e.get("time_created_ns"), f"{path}.time_created_ns")))
        descs.setdefault(pg, desc)
    res.lines = len(entries)
    status: dict[Any, Any] = doc["pg_status"] if isinstance(doc.get("pg_status"), dict) else {}
    config: dict[Any, Any] = doc["pg_config"] if isinstance(doc.get("pg_config"), dict) else {}
    keys = {values.text(k, f"pg_status key {n}"): k for n, k in enumerate(status)}
    pgs = sorted(set(by_pg) | set(keys), key=lambda p: (len(p), p))
    if len(pgs) > MAX_PGS:
        res.issues.append(ParseIssue(None, f"{len(pgs) - MAX_PGS:,} more process groups than {MAX_PGS:,}; not read"))
        del pgs[MAX_PGS:]
    for pg in pgs:
        if check is not None:
            check()
        evs = sorted(by_pg.get(pg, []), key=lambda e: (e.seq or 0, e.record or 0))
        st: dict[Any, Any] = status[keys[pg]] if pg in keys and isinstance(status[keys[pg]], dict) else {}
        fields: dict[str, FieldValue] = {"pg": pg}
        cfg: dict[Any, Any] = config[pg] if isinstance(config.get(pg), dict) else {}
        cfg_desc = cfg.get("desc")
        desc = descs.get(pg) or (values.text(cfg_desc, f"pg_config[{pg}].desc")
                                 if cfg_desc is not None and not (isinstance(cfg_desc, str) and cfg_desc == "undefined")
                                 else None)
        if desc:
            fields["pg_name"] = desc
        seqs = [e.seq for e in evs if e.seq is not None]
        done = [e.seq for e in evs if e.seq is not None and e.state == "completed"]
        where_st = f"pg_status[{pg}]"
        enq = values.integer(st.get("last_enqueued_collective"), f"{where_st}.last_enqueued_collective")
        fields["last_enqueued"] = enq if enq is not None else (max(seqs) if seqs else None)
        comp = values.integer(st.get("last_completed_collective"), f"{where_st}.last_completed_collective")
        fields["last_completed"] = comp if comp is not None else (max(done) if done else None)
        started = values.integer(st.get("last_started_collective"), f"{where_st}.last_started_collective")
        if started is not None and started >= 0:
            fields["last_started"] = started
        pending = next((e for e in evs if e.state != "completed"), None)
        when = None
        if pending is not None:
            path = f"entries[{pending.index}]"
            fields["pending_seq"] = pending.seq
            fields["pending_op"] = pending.op
            fields["pending_state"] = values.text(pending.state, f"{path}.state")
            fields["pending_numel_in"] = values.numel(pending.raw.get("input_sizes"), f"{path}.input_sizes")
            fields["pending_numel_out"] = values.numel(pending.raw.get("output_sizes"), f"{path}.output_sizes")
            when = pending.created
        if evs:
            fields["last_op"] = evs[-1].op
            when = when or evs[-1].created
        fields["recent"] = ";".join(
            f"{e.seq}:{e.op}:{values.numel(e.raw.get('input_sizes'), f'entries[{e.index}].input_sizes')}:"
            f"{values.numel(e.raw.get('output_sizes'), f'entries[{e.index}].output_sizes')}" for e in evs[-RECENT:]
        )
        fields["entries"] = len(evs)
        fields = {k: v for k, v in fields.items() if v is not None}
        where = f"rank {rank}" if rank is not None else "this rank"
        pend = (f"waits in {fields['pending_op']} #{fields.get('pending_seq')} ({fields['pending_state']})"
                if pending is not None else "nothing pending")
        text = (f"flight recorder, {where}, pg {pg}{' (' + desc + ')' if desc else ''}: last enqueued "
                f"{fields.get('last_enqueued', '?')}, last completed {fields.get('last_completed', '?')}; {pend}")
        res.events.append(Event(kind="fr.pg_state", time=when, node=node, rank=rank, fields=fields,
                                evidence=Evidence(source="flight_recorder", file=file, line=None, text=text)))
    return res
