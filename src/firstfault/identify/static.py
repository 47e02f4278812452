"""A fixed attempt: a window and a node list, for clusters without a scheduler we can ask.

The operator says when and where (`--start`, `--end`, `--nodes node-[01-04]`);
the ref given to identify() is ignored. Everything is validated once, at
construction, so a typo fails before any collector runs. Without an end the
attempt still runs: `StaticList` holds such attempts for `watch --follow`
(cluster.yaml `follow.static`), by id.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from firstfault import records
from firstfault.bundle import Context, workload_spec
from firstfault.hostlist import hostlist_expand
from firstfault.identify.base import Identified, IdentifyError, Running
from firstfault.timeparse import parse_rfc3339

_EXIT_RE = re.compile(r"^-?\d+:-?\d+$")


def static_id(start: datetime, end: datetime | None, nodes: Sequence[str],
              ranks: Mapping[str, str | int | list[int]] | None) -> str:
    """'static-' and 12 hex digits of a hash of the window (as UTC instants), the node set and the rank map.

    The verdict store keys a verdict by workload id and attempt: two static
    runs over other windows or nodes must not share one (they all shared
    "static", and the second verdict was silently not stored).
    """
    doc = {"start": start.astimezone(UTC).isoformat(), "end": end.astimezone(UTC).isoformat() if end else None,
           "nodes": sorted(nodes), "ranks": {k: str(v) for k, v in sorted((ranks or {}).items())}}
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    return f"static-{digest[:12]}"


class StaticAttempts:
    name = "static"

    def __init__(
        self,
        *,
        start: str,
        end: str | None,
        nodes: str | Sequence[str],
        id: str | None = None,
        name: str | None = None,
        ranks: Mapping[str, str | int | list[int]] | None = None,
        terminal_state: str | None = None,
        exit_code: str | None = None,
        timezone: str = "UTC",
    ) -> None:
        times: dict[str, datetime | None] = {"end": None}
        for key, value in (("start", start), ("end", end)):
            if key == "end" and value is None:
                continue  # the attempt still runs
            try:
                t = parse_rfc3339(value)  # type: ignore[arg-type]
            except (ValueError, TypeError) as exc:
                raise IdentifyError(f"static context: window.{key}: not an RFC 3339 time: {value!r}") from exc
            times[key] = t  # naive means UTC, as in workload.yaml
        begin, finish = times["start"], times["end"]
        assert begin is not None
        if finish is not None and finish <= begin:
            raise IdentifyError(f"static context: window.end {end!r} is not after window.start {start!r}")

        if isinstance(nodes, str):
            try:
                node_list = hostlist_expand(nodes)
            except ValueError as exc:
                raise IdentifyError(f"static context: nodes: {exc}") from exc
        else:
            node_list = [str(n).strip() for n in nodes if str(n).strip()]
        if not node_list:
            raise IdentifyError("static context: nodes: no node given (e.g. 'node-[01-04]')")
        counts = Counter(node_list)
        dupes = sorted(n for n, k in counts.items() if k > 1)
        if dupes:
            raise IdentifyError(f"static context: nodes: listed twice: {', '.join(dupes)}")
        if exit_code is not None and not _EXIT_RE.match(exit_code):
            raise IdentifyError(f"static context: exit_code: expected 'return:signal' such as '1:0', got {exit_code!r}")
        if ranks is not None:
            unknown = sorted(set(ranks) - set(node_list))
            if unknown:
                raise IdentifyError(f"static context: ranks: nodes not in the node list: {', '.join(unknown)}")

        if id is None:
            id = static_id(begin, finish, node_list, ranks)
        try:
            spec = workload_spec({
                "id": id, "name": name, "scheduler": "static", "window": {"start": start, "end": end},
                "nodes": node_list, "ranks": dict(ranks) if ranks is not None else None,
                "terminal_state": terminal_state, "exit_code": exit_code, "timezone": timezone,
            })
            Context.from_spec(spec)  # checks the rank ranges and the zone
        except records.ValidationError as exc:
            loc, msg = records.location(exc)
            raise IdentifyError(f"static context: {'.'.join(str(p) for p in loc) or '(root)'}: {msg}") from exc
        except ValueError as exc:
            raise IdentifyError(f"static context: {exc}") from exc
        self.workload = spec

    def identify(self, ref: str = "") -> Identified:
        """The configured context, whatever the ref (a static context names one attempt only)."""
        return Identified(workload=copy.deepcopy(self.workload))


class StaticList:
    """Attempts that run now, as the operator lists them (cluster.yaml `follow.static`): `watch --follow`
    follows each; identify(id) gives its context (no end: it runs)."""

    name = "static"

    def __init__(self, attempts: Sequence[StaticAttempts]) -> None:
        self.attempts: dict[str, StaticAttempts] = {}
        for a in attempts:
            wid = a.workload.id
            if wid in self.attempts:
                raise IdentifyError(f"static list: attempt id {wid!r} is listed twice")
            if a.workload.window.end is not None:
                raise IdentifyError(f"static list: attempt {wid!r} has an end: only running attempts are followed")
            self.attempts[wid] = a

    def identify(self, ref: str) -> Identified:
        found = self.attempts.get(ref)
        if found is None:
            raise IdentifyError(f"static list: no attempt {ref!r} (listed: {', '.join(sorted(self.attempts))})")
        return found.identify(ref)

    def running(self) -> list[Running]:
        return [Running(wid, a.workload.window.start or "") for wid, a in sorted(self.attempts.items())]
