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

A dump is data from a failed job, possibly tampered with: the pickle is read
by an unpickler that refuses every global (no class, no function, no
`__reduce__` callable can be named), so it only ever builds dicts, lists,
tuples, sets, strings, bytes, numbers, booleans and None. Torch is never
imported.

One `fr.pg_state` event per (rank, process group): where that rank's queue
stood (last enqueued / started / completed collective), its oldest
collective not completed (the one it waits in) and its latest one, and a
short `recent` list (`seq:op:numel_in:numel_out` of its last collectives)
that engine/leads.py compares across ranks.
"""

from __future__ import annotations

import io
import json
import pickle
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from firstfault.extract.structured import ParseIssue, StructuredResult
from firstfault.model import Event, Evidence, FieldValue

# The event kinds this reader emits and their fields (docs/events.md; extract/registry.py).
EMITS: Mapping[str, frozenset[str]] = {
    "fr.pg_state": frozenset({"entries", "last_completed", "last_enqueued", "last_op", "last_started",
                              "pending_numel_in", "pending_numel_out", "pending_op", "pending_seq", "pending_state",
                              "pg", "pg_name", "recent"}),
}

RECENT: Final = 16  # collectives per (rank, pg) kept in `recent`


class UnsafeDumpError(pickle.UnpicklingError):
    """The pickle names a Python global: refused, nothing from it is executed."""


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise UnsafeDumpError(
            f"refused: the pickle names the global {module}.{name} (a flight-recorder dump holds only "
            "builtin containers and scalars; nothing is imported or executed)"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafeDumpError("refused: the pickle asks for a persistent id")


def load_dump(data: bytes) -> Any:
    """A dump's document: JSON when it looks like JSON, else a restricted unpickle."""
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        return json.loads(data.decode("utf-8"))
    return _RestrictedUnpickler(io.BytesIO(data)).load()


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    return None


def _numel(sizes: Any) -> int | None:
    """[[3, 4], [5]] -> 17: the element count of a collective's tensors."""
    if not isinstance(sizes, (list, tuple)):
        return None
    total = 0
    for shape in sizes:
        if not isinstance(shape, (list, tuple)):
            return None
        n = 1
        for d in shape:
            di = _int(d)
            if di is None:
                return None
            n *= di
        total += n
    return total


def _op(entry: dict[Any, Any]) -> str:
    name = str(entry.get("profiling_name") or "?")
    return name.split(":", 1)[1] if ":" in name else name


def _pg_of(entry: dict[Any, Any]) -> tuple[str, str | None]:
    pg = entry.get("process_group")
    if isinstance(pg, (list, tuple)) and pg:
        desc = str(pg[1]) if len(pg) > 1 and pg[1] not in (None, "undefined") else None
        return str(pg[0]), desc
    pid = entry.get("pg_id")
    return (str(pid) if pid is not None else "0"), None


def _time(ns: Any) -> datetime | None:
    n = _int(ns)
    if n is None or n <= 0:
        return None
    try:
        return datetime.fromtimestamp(n / 1e9, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def read_flight_recorder(data: bytes, file: str, *, node: str | None = None,
                         rank: int | None = None) -> StructuredResult:
    res = StructuredResult()
    try:
        doc = load_dump(data)
    except UnsafeDumpError as exc:
        res.issues.append(ParseIssue(None, f"cannot read: {exc}"))
        return res
    except (pickle.UnpicklingError, json.JSONDecodeError, UnicodeDecodeError, EOFError, ValueError,
            TypeError, IndexError, KeyError, AttributeError, MemoryError, RecursionError) as exc:
        res.issues.append(ParseIssue(None, f"cannot read: not a flight-recorder pickle or JSON dump ({exc})"))
        return res
    if not isinstance(doc, dict):
        res.issues.append(ParseIssue(None, f"cannot read: the dump is a {type(doc).__name__}, not a dict"))
        return res
    entries = doc.get("entries")
    if not isinstance(entries, list):
        res.issues.append(ParseIssue(None, "entries: missing or not a list"))
        entries = []
    if rank is None:
        rank = _int(doc.get("rank"))
    host = doc.get("hostname") or doc.get("host_name")
    if isinstance(host, str) and host and node is None:
        res.hosts.add(host)
    by_pg: dict[str, list[dict[Any, Any]]] = {}
    descs: dict[str, str | None] = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            res.issues.append(ParseIssue(None, f"entries[{i}]: not a dict"))
            continue
        if e.get("is_p2p") is True or _op(e) in ("send", "recv"):
            continue  # point-to-point work has its own sequence (p2p_seq_id)
        pg, desc = _pg_of(e)
        by_pg.setdefault(pg, []).append(e)
        descs.setdefault(pg, desc)
    res.lines = len(entries)
    status: dict[Any, Any] = doc["pg_status"] if isinstance(doc.get("pg_status"), dict) else {}
    config: dict[Any, Any] = doc["pg_config"] if isinstance(doc.get("pg_config"), dict) else {}
    pgs = sorted(set(by_pg) | {str(k) for k in status}, key=lambda p: (len(p), p))
    for pg in pgs:
        evs = sorted(by_pg.get(pg, []), key=lambda e: (_int(e.get("collective_seq_id")) or 0,
                                                       _int(e.get("record_id")) or 0))
        st: dict[Any, Any] = status[pg] if isinstance(status.get(pg), dict) else {}
        fields: dict[str, FieldValue] = {"pg": pg}
        cfg: dict[Any, Any] = config[pg] if isinstance(config.get(pg), dict) else {}
        desc = descs.get(pg) or (str(cfg.get("desc")) if cfg.get("desc") not in (None, "undefined") else None)
        if desc:
            fields["pg_name"] = desc
        seqs = [s for s in (_int(e.get("collective_seq_id")) for e in evs) if s is not None]
        done = [s for e in evs if (s := _int(e.get("collective_seq_id"))) is not None
                and e.get("state") == "completed"]
        enq = _int(st.get("last_enqueued_collective"))
        fields["last_enqueued"] = enq if enq is not None else (max(seqs) if seqs else None)
        comp = _int(st.get("last_completed_collective"))
        fields["last_completed"] = comp if comp is not None else (max(done) if done else None)
        started = _int(st.get("last_started_collective"))
        if started is not None and started >= 0:
            fields["last_started"] = started
        pending = next((e for e in evs if e.get("state") != "completed"), None)
        when = None
        if pending is not None:
            fields["pending_seq"] = _int(pending.get("collective_seq_id"))
            fields["pending_op"] = _op(pending)
            fields["pending_state"] = str(pending.get("state"))
            fields["pending_numel_in"] = _numel(pending.get("input_sizes"))
            fields["pending_numel_out"] = _numel(pending.get("output_sizes"))
            when = _time(pending.get("time_created_ns"))
        if evs:
            last = evs[-1]
            fields["last_op"] = _op(last)
            when = when or _time(last.get("time_created_ns"))
        fields["recent"] = ";".join(
            f"{_int(e.get('collective_seq_id'))}:{_op(e)}:{_numel(e.get('input_sizes'))}:"
            f"{_numel(e.get('output_sizes'))}" for e in evs[-RECENT:]
        )
        fields["entries"] = len(evs)
        fields = {k: v for k, v in fields.items() if v is not None}
        where = f"rank {rank}" if rank is not None else "this rank"
        pend = (f"waits in {fields['pending_op']} #{fields['pending_seq']} ({fields['pending_state']})"
                if pending is not None else "nothing pending")
        text = (f"flight recorder, {where}, pg {pg}{' (' + desc + ')' if desc else ''}: last enqueued "
                f"{fields.get('last_enqueued', '?')}, last completed {fields.get('last_completed', '?')}; {pend}")
        res.events.append(Event(kind="fr.pg_state", time=when, node=node, rank=rank, fields=fields,
                                evidence=Evidence(source="flight_recorder", file=file, line=None, text=text)))
    return res
