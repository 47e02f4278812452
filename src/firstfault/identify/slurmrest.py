"""Slurm attempts through slurmrestd's Unix socket (OpenAPI v0.0.38, Slurm 22.05).

An option beside SlurmAttempts (sacct text) for sites that run slurmrestd and
not the Slurm client commands where the Blueprint runs. Same output: one
WorkloadSpec per attempt, same ids ('4242', '4242_7', '4242+1'), same attempt
numbering, same ranks rule, same ended_since cursor.

Where each field comes from, and why:

- slurmctld's view, GET /slurm/v0.0.38/job/{id} (only while slurmctld still
  remembers the job, i.e. for MinJobAge after it ended, and only for the
  latest attempt): `job_state` -> terminal_state, `exit_code` -> exit_code,
  `start_time` / `end_time` -> window, `nodes` -> nodes, `tasks` -> ranks
  when no step says more, `name`, `user_name`, `restart_cnt`.
  `exit_code` is the raw wait(2) status (exit 3 -> 768, kill -9 -> 9) and is
  printed as sacct's 'exit:signal'.
- the accounting database, GET /slurmdb/v0.0.38/job/{id}: one record per
  attempt (it lists requeued attempts, like `sacct -D`), so it gives the
  number of attempts, an earlier attempt's `state.current`, `time.start` /
  `time.end` and `nodes`, the same fields for a job slurmctld has forgotten,
  and the steps (`step.id`, `tasks.count`, `nodes.range`) for the ranks.
  Never its `exit_code` / `derived_exit_code` (nor a step's): Slurm 22.05.8
  reports status SUCCESS / return_code 0 there for jobs that exited non-zero
  (a job that ran `exit 3` reads SUCCESS 0; measured). So an attempt read
  from the database alone has exit_code None (unknown), never a wrong '0:0'.

Differences from SlurmAttempts, all measured on a real 22.05.8:
- terminal_state is slurmctld's / the database's bare state name: a scancel
  reads 'CANCELLED', where sacct prints 'CANCELLED by 0' (the REST API gives
  the canceller's name, `kill_request_user`, not the uid sacct prints).
- a cancelled job's exit code is slurmctld's '0:15' (its batch script died of
  SIGTERM); sacct's allocation row says '0:0' (recorded before the script
  was reaped).
- no documents: a 'sacct' text could not be made exact (the CANCELLED label,
  the exit codes above, the steps' exit codes), and a near-copy would feed
  the engine wrong facts. The engine takes terminal_state from the workload.
- times are epoch seconds, so no time zone is involved.

ended_since reads GET /slurmdb/v0.0.38/jobs?start_time=now-<N>seconds&end_time=now.
On 22.05 that listing's `state` filter matches nothing (state=FAILED answers
'Nothing found'; state=F is a 500), so terminal states are picked here; and
an absolute start_time ('2026-11-29T19:16:40') is refused ('Unable to parse
query.', the ':' is not accepted) and would be read in slurmrestd's zone, so
the window is given relative to slurmrestd's 'now': the socket is local, so
its clock is ours.

Only the v0.0.38 body shapes are read; `api_version` changes the paths only
(v0.0.37 has the same shapes; v0.0.39 and later do not).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from firstfault.bundle import WindowSpec, WorkloadSpec
from firstfault.hostlist import hostlist_expand
from firstfault.identify.base import Identified, IdentifyError, Running
from firstfault.identify.cursor import format_cursor, parse_cursor
from firstfault.identify.cursor import iso as _iso
from firstfault.identify.slurm import (
    NONE_VALUES,
    REF_RE,
    SETTLE,
    TERMINAL_STATES,
    block_layout,
    job_order,
    one_job_or_het,
)

Job = dict[str, Any]

# slurm_load_job's 'Invalid job id specified': slurmctld does not know (or no longer remembers) the job.
_ESLURM_INVALID_JOB_ID = 2017
# slurmdb_jobs_get's 'Nothing found with query' (an HTTP 200): no such job in the accounting database.
_ESLURM_REST_EMPTY_RESULT = 9003
# Slurm's NO_VAL / NO_VAL64 / INFINITE: "not set" in integer fields.
_UNSET = frozenset({0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFE, 0xFFFFFFFFFFFFFFFF})


class SlurmRestAttempts:
    name = "slurmrest"

    def __init__(
        self,
        socket: Path,
        *,
        api_version: str = "v0.0.38",
        timeout: float = 30.0,
        cluster: str | None = None,
        links: Mapping[str, str] | None = None,
        lookback: timedelta | None = timedelta(hours=1),
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`socket` is slurmrestd's Unix socket (`slurmrestd unix:PATH`); `transport` replaces
        it (tests); `cluster` only fills the {cluster} of `links` (slurmrestd serves one
        cluster); `links` and `lookback` as in SlurmAttempts."""
        self.socket, self.api_version, self.timeout, self.cluster = Path(socket), api_version, timeout, cluster
        self.links = dict(links or {})
        self.lookback = lookback
        self._own_socket = transport is None
        self._http = httpx.Client(
            transport=transport or httpx.HTTPTransport(uds=str(socket)),
            base_url="http://slurmrestd",  # the host is ignored on a Unix socket
            timeout=timeout,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SlurmRestAttempts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, path: str) -> str:
        return f"{str(self._http.base_url).rstrip('/')}{path}"

    # ------------------------------------------------------------------ HTTP

    def _get(self, path: str, params: Mapping[str, str] | None = None) -> tuple[int, Job]:
        """(status, body) for a JSON answer; IdentifyError for a dead socket or a body that is not JSON."""
        where = f"slurmrest: GET {self._url(path)} (socket {self.socket})"
        # Checked first: httpcore leaks its socket object when connecting to a missing path fails.
        if self._own_socket and not self.socket.is_socket():
            raise IdentifyError(f"{where}: no such socket (is slurmrestd running with unix:{self.socket}?)")
        try:
            res = self._http.get(path, params=params)
        except httpx.TimeoutException as exc:
            raise IdentifyError(f"{where}: no answer within {self.timeout:g}s") from exc
        except httpx.TransportError as exc:
            raise IdentifyError(f"{where}: {exc or type(exc).__name__} (is slurmrestd running on it?)") from exc
        url = str(res.request.url)
        try:
            body = res.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = res.text.strip()[:200] or "empty body"
            raise IdentifyError(f"slurmrest: GET {url} -> HTTP {res.status_code}: {text}") from None
        if not isinstance(body, dict):
            raise IdentifyError(f"slurmrest: GET {url} -> HTTP {res.status_code}: not a JSON object")
        return res.status_code, body

    def _jobs(self, path: str, params: Mapping[str, str] | None, tolerated: int) -> list[Job]:
        """The `jobs` of an answer; [] when its only error is `tolerated` (the job is unknown there)."""
        status, body = self._get(path, params)
        errors = [e for e in body.get("errors") or [] if isinstance(e, dict)]
        if errors and all(e.get("error_number") == tolerated for e in errors):
            return []
        if status != 200 or errors:
            detail = "; ".join(str(e.get("description") or e.get("error") or e) for e in errors) or "no message"
            raise IdentifyError(f"slurmrest: GET {self._url(path)} -> HTTP {status}: {detail}")
        jobs = body.get("jobs")
        if not isinstance(jobs, list) or not all(isinstance(j, dict) for j in jobs):
            raise IdentifyError(f"slurmrest: GET {self._url(path)}: no 'jobs' list in the answer")
        return jobs

    # --------------------------------------------------------------- identify

    def identify(self, ref: str, attempt: int | None = None) -> Identified:
        """The attempt of job `ref` ('4242', array task '4242_7', het component '4242+1').

        `attempt` picks a requeued attempt (0 = first); default the latest.
        Raises IdentifyError for a malformed or unknown id, an array job named
        without its task, a dead socket or an HTTP error (naming the URL and status).
        """
        ref = ref.strip()
        if not REF_RE.match(ref):
            raise IdentifyError(f"slurmrest: {ref!r} is not a job id (expected 4242, 4242_7 or 4242+1)")
        enc = quote(ref, safe="")  # '+' must be %2B: slurmrestd answers 400 to a bare '+'
        v = self.api_version
        ctld = _select(self._jobs(f"/slurm/{v}/job/{enc}", None, _ESLURM_INVALID_JOB_ID), ref, _ctld_keys)
        db = _select(self._jobs(f"/slurmdb/{v}/job/{enc}", None, _ESLURM_REST_EMPTY_RESULT), ref, _db_keys)
        if not ctld and not db:
            raise IdentifyError(f"slurmrest: no job {ref} known to slurmctld or in the accounting database")
        ids = list(dict.fromkeys([_ctld_keys(j)[0] for j in ctld] + [_db_keys(j)[0] for j in db]))
        one_job_or_het(ids, ref, "slurmrest")

        # One workload per id; a het job (several '+' components) is all of them.
        parts: list[_Part] = []
        n_attempts = 0
        picked = 0
        for cid in ids:
            runs = [j for j in db if _db_keys(j)[0] == cid]
            live = next((j for j in ctld if _ctld_keys(j)[0] == cid), None)
            # slurmdbd hears of a requeue after slurmctld: restart_cnt may know one attempt more.
            count = max(len(runs), (_int(live.get("restart_cnt")) or 0) + 1 if live else 0)
            n_attempts = max(n_attempts, count)
            idx = count - 1 if attempt is None else attempt
            if not 0 <= idx < count:
                raise IdentifyError(f"slurmrest: job {ref} has {count} attempt(s); attempt {attempt} does not exist")
            picked = max(picked, idx)
            rec = runs[idx] if idx < len(runs) else None
            parts.append(_Part.of(live if idx == count - 1 else None, rec))
        main = next((p for p in parts if p.state != "COMPLETED"), parts[0])

        terminal = main.state in TERMINAL_STATES
        starts = [p.start for p in parts if p.start is not None]
        ends = [p.end for p in parts if p.end is not None]
        node_keys: dict[str, None] = {}  # an ordered set: linear in the node count
        for p in parts:
            try:
                expanded = hostlist_expand(p.nodes)
            except ValueError as exc:
                raise IdentifyError(f"slurmrest: job {ref} nodes: {exc}") from exc
            node_keys.update(dict.fromkeys(expanded))
        nodes = list(node_keys)
        spec = WorkloadSpec(
            id=ref,
            attempt=picked,
            name=main.name,
            scheduler="slurm",
            window=WindowSpec(
                start=_iso(min(starts)) if starts else None,
                end=_iso(max(ends)) if terminal and ends else None,
            ),
            nodes=nodes,
            ranks=_ranks(main) if len(parts) == 1 else None,
            terminal_state=main.state if terminal else None,
            exit_code=main.exit_code if terminal else None,
        )
        fmt = {"job_id": ref, "attempt": picked, "cluster": self.cluster or ""}
        links = {k: t.format(**fmt) for k, t in self.links.items()}
        return Identified(workload=spec, documents=[], links=links, owner=main.user)

    # ------------------------------------------------------------ ended_since

    def ended_since(self, cursor: str | None) -> tuple[list[str], str]:
        """Job ids whose allocation ended after `cursor`, oldest end first, and the next cursor.

        Same contract and cursor as SlurmAttempts.ended_since (looks back SETTLE
        before the cursor, leaves out the attempts the cursor holds); reads the
        accounting database's job listing (see the module docstring).
        """
        since: datetime | None
        seen: set[tuple[str, int]]
        if cursor:
            since, seen = parse_cursor(cursor)
        else:
            since = datetime.now(UTC) - self.lookback if self.lookback is not None else None
            seen = set()
        start = since - SETTLE if since is not None else datetime(1970, 1, 2, tzinfo=UTC)
        # One second more: slurmrestd's 'now' is read a moment after ours.
        ago = max(1, math.ceil((datetime.now(UTC) - start).total_seconds()) + 1)
        params = {"start_time": f"now-{ago}seconds", "end_time": "now", "skip_steps": "true"}
        records = self._jobs(f"/slurmdb/{self.api_version}/jobs", params, _ESLURM_REST_EMPTY_RESULT)
        ended: set[tuple[str, int]] = set()
        for rec in records:
            state = _db_state(rec)
            end = _epoch(_dig(rec, "time", "end"))
            if state in TERMINAL_STATES and end is not None and end >= start:
                # A het job's components are one workload: identify('4242').
                ended.add((_db_keys(rec)[0].split("+", 1)[0], int(end.timestamp())))
        new = sorted((t, j) for j, t in ended - seen)
        ids = list(dict.fromkeys(j for _, j in new))
        stamps = [t for _, t in ended | seen] + ([int(since.timestamp())] if since is not None else [])
        if not stamps:
            return ids, cursor or ""
        newest = max(stamps)
        keep = {(j, t) for j, t in ended | seen if t >= newest - SETTLE.total_seconds()}
        return ids, format_cursor(datetime.fromtimestamp(newest, UTC), keep)


    # ---------------------------------------------------------------- running

    def running(self) -> list[Running]:
        """The jobs slurmctld runs now (GET /slurm/{version}/jobs, `job_state` RUNNING): ids as identify()
        takes them (a het job's components are its leader's id), each with its `start_time`."""
        jobs = self._jobs(f"/slurm/{self.api_version}/jobs", None, _ESLURM_REST_EMPTY_RESULT)
        found: dict[str, str] = {}
        for j in jobs:
            if _str(j.get("job_state")).upper() != "RUNNING":
                continue
            ref = _ctld_keys(j)[0].split("+", 1)[0]
            if REF_RE.match(ref):
                found.setdefault(ref, str(_int(j.get("start_time")) or ""))
        return [Running(r, found[r]) for r in sorted(found, key=job_order)]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


class _Part:
    """One het component (or the whole job) of the chosen attempt, from slurmctld when it knows it."""

    __slots__ = ("end", "exit_code", "name", "nodes", "start", "state", "steps", "tasks", "user")

    def __init__(self) -> None:
        self.state = ""
        self.exit_code: str | None = None
        self.start: datetime | None = None
        self.end: datetime | None = None
        self.nodes = ""
        self.name: str | None = None
        self.user: str | None = None
        self.tasks: int | None = None
        self.steps: list[Job] = []

    @classmethod
    def of(cls, live: Job | None, rec: Job | None) -> _Part:
        p = cls()
        if rec is not None:
            p.state = _db_state(rec)
            p.start, p.end = _epoch(_dig(rec, "time", "start")), _epoch(_dig(rec, "time", "end"))
            p.nodes = _nodes(rec.get("nodes"))
            p.name, p.user = _str(rec.get("name")) or None, _str(rec.get("user")) or None
            p.steps = [s for s in rec.get("steps") or [] if isinstance(s, dict)]
        if live is not None:
            p.state = _str(live.get("job_state")).upper() or p.state
            p.exit_code = _exit_code(live.get("exit_code"))
            p.nodes = _nodes(live.get("nodes")) or p.nodes
            # A job that never ran has start_time == end_time in slurmctld; the database says no start.
            ran = bool(p.nodes)
            p.start = (_epoch(live.get("start_time")) if ran else None) or p.start
            p.end = _epoch(live.get("end_time")) or p.end
            p.name = _str(live.get("name")) or p.name
            p.user = _str(live.get("user_name")) or p.user
            p.tasks = _int(live.get("tasks"))
        return p


def _ranks(part: _Part) -> dict[str, str | int | list[int]] | None:
    """Block distribution of the largest numbered step (its tasks over its nodes), else of the job's tasks."""
    steps = []
    for s in part.steps:
        sid, ntasks = _dig(s, "step", "id"), _int(_dig(s, "tasks", "count"))
        # Numbered steps come as integers, 'batch' / 'extern' as strings.
        if (isinstance(sid, int) or (isinstance(sid, str) and sid.isdigit())) and ntasks:
            steps.append((-ntasks, int(sid), _str(_dig(s, "nodes", "range"))))
    try:
        if steps:
            neg, _, nodes = min(steps)
            return block_layout(-neg, hostlist_expand(nodes))
        if part.tasks:
            return block_layout(part.tasks, hostlist_expand(part.nodes))
    except ValueError:
        return None
    return None


def _select(jobs: list[Job], ref: str, keys: Callable[[Job], tuple[str, str]]) -> list[Job]:
    """The records of `ref`: an array task or het component out of the whole array / het job slurmrestd returns.

    A plain number also matches a record by its own job_id (an array task's
    or het component's id, as sacct -j accepts it).
    """
    out = []
    for j in jobs:
        cid, base = keys(j)
        if "_" in ref or "+" in ref:
            if cid == ref:
                out.append(j)
        elif ref in (base, cid, str(j.get("job_id"))):
            out.append(j)
    return out


def _ctld_keys(j: Job) -> tuple[str, str]:
    """(sacct-style id, the id it was submitted as) of a /slurm/ job record."""
    jid = str(_int(j.get("job_id")) or "")
    het, arr, task = _int(j.get("het_job_id")), _int(j.get("array_job_id")), _int(j.get("array_task_id"))
    if het:
        return f"{het}+{_int(j.get('het_job_offset')) or 0}", str(het)
    if arr and task is not None:
        return f"{arr}_{task}", str(arr)
    return jid, jid


def _db_keys(j: Job) -> tuple[str, str]:
    """(sacct-style id, the id it was submitted as) of a /slurmdb/ job record."""
    jid = str(_int(j.get("job_id")) or "")
    het, off = _int(_dig(j, "het", "job_id")), _int(_dig(j, "het", "job_offset"))
    arr, task = _int(_dig(j, "array", "job_id")), _int(_dig(j, "array", "task_id"))
    if het:
        return f"{het}+{off or 0}", str(het)
    if arr and task is not None:
        return f"{arr}_{task}", str(arr)
    return jid, jid


def _db_state(rec: Job) -> str:
    return _str(_dig(rec, "state", "current")).split()[0].upper() if _str(_dig(rec, "state", "current")) else ""


def _exit_code(raw: object) -> str | None:
    """A wait(2) status as sacct prints it: 'exit:signal' (768 -> '3:0', 9 -> '0:9')."""
    code = _int(raw)
    if code is None or code < 0:
        return None
    sig = code & 0x7F
    return f"{(code >> 8) & 0xFF}:{sig if sig not in (0, 0x7F) else 0}"


def _epoch(raw: object) -> datetime | None:
    t = _int(raw)
    return datetime.fromtimestamp(t, UTC) if t else None


def _int(raw: object) -> int | None:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw in _UNSET:
        return None
    return raw


def _nodes(raw: object) -> str:
    """A hostlist, '' for none (the database says 'None assigned' for a job that never ran)."""
    text = _str(raw)
    return "" if text.lower() in NONE_VALUES else text


def _str(raw: object) -> str:
    return raw.strip() if isinstance(raw, str) else ""


def _dig(d: Mapping[str, Any], *path: str) -> Any:
    cur: Any = d
    for k in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(k)
    return cur

