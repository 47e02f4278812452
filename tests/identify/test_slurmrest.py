"""SlurmRestAttempts: slurmrestd (OpenAPI v0.0.38) over its Unix socket.

Unit tests replay bodies recorded from a real slurmrestd 22.05.8 beside the
harness's single-node cluster (tests/fixtures/slurmrest/, listed with their
requests and statuses in recorded.json; the jobs are described in its
README.md) through httpx.MockTransport: the connector's real httpx client
sees the exact bytes, statuses and content types the server sent. The
integration tests start a real slurmrestd on a Unix socket against the
`slurm_cluster` session cluster and check a job that exited 3, a cancelled
job and an unknown job, and compare with SlurmAttempts (sacct text).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from firstfault.bundle import Context
from firstfault.identify.base import IdentifyError
from firstfault.identify.cursor import parse_cursor
from firstfault.identify.slurm import SlurmAttempts
from firstfault.identify.slurmrest import SlurmRestAttempts
from tests.harness.slurm_harness import TERMINAL, SlurmCluster

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "slurmrest"
T = TypeVar("T")
V = "/slurm/v0.0.38"
DB = "/slurmdb/v0.0.38"

# --------------------------------------------------------------------------
# recorded bodies through httpx.MockTransport
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    status: int
    content_type: str
    body: bytes

    def response(self) -> httpx.Response:
        return httpx.Response(self.status, content=self.body, headers={"content-type": self.content_type})


def _recorded() -> dict[str, Recorded]:
    """Request path (query left out) -> what the real slurmrestd answered."""
    out = {}
    for e in json.loads((FIXTURES / "recorded.json").read_text()):
        # The listing is keyed by its path: its query holds a relative time. The other queried
        # recordings (refused query forms) keep their query and are served only through `over`.
        key = e["request"].split("?", 1)[0] if e["file"] == "slurmdb-jobs.json" else e["request"]
        out[key] = Recorded(e["status"], e["content_type"], (FIXTURES / e["file"]).read_bytes())
    return out


REC = _recorded()
UNKNOWN_CTLD = REC[f"{V}/job/987654"]  # 500, error 2017 'Invalid job id specified'
UNKNOWN_DB = REC[f"{DB}/job/987654"]  # 200, error 9003 'Nothing found with query'


class Replay:
    """Answers each request with its recorded body; `over` replaces some answers. An unrecorded request fails."""

    def __init__(self, over: dict[str, Recorded] | None = None) -> None:
        self.over = over or {}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.raw_path.decode().split("?", 1)[0]
        rec = self.over.get(path) or REC.get(path)
        if rec is None:
            raise AssertionError(f"no recorded answer for {path}")
        return rec.response()

    def paths(self) -> list[str]:
        return [r.url.raw_path.decode() for r in self.requests]


def _ctx(replay: Replay | None = None, **kw: object) -> SlurmRestAttempts:
    return SlurmRestAttempts(Path("/nonexistent/rest.sock"), transport=httpx.MockTransport(replay or Replay()),
                            **kw)  # type: ignore[arg-type]


def test_the_fixtures_show_the_22_05_exit_code_bug() -> None:
    """What the connector works around: the database says SUCCESS for `exit 3`; slurmctld's raw status is 768."""
    db = json.loads(REC[f"{DB}/job/1"].body)["jobs"][0]
    ctld = json.loads(REC[f"{V}/job/1"].body)["jobs"][0]
    assert db["state"]["current"] == "FAILED" and db["exit_code"] == {"status": "SUCCESS", "return_code": 0}
    assert (ctld["job_state"], ctld["exit_code"]) == ("FAILED", 768)


def test_exit_3_is_failed_3_0_from_slurmctld() -> None:
    replay = Replay()
    ident = _ctx(replay, cluster="c1", links={"grafana": "https://g/{cluster}/{job_id}/{attempt}"}).identify("1")
    wl = ident.workload
    assert (wl.id, wl.attempt, wl.name, wl.scheduler) == ("1", 0, "ff-exit3", "slurm")
    assert (wl.terminal_state, wl.exit_code) == ("FAILED", "3:0")
    assert (wl.window.start, wl.window.end) == ("2026-11-29T19:16:24Z", "2026-11-29T19:16:24Z")
    assert wl.nodes == ["ffnode1"] and wl.ranks == {"ffnode1": "0"}  # one task, slurmctld's `tasks`
    assert ident.owner == "root" and ident.documents == []
    assert ident.links == {"grafana": "https://g/c1/1/0"}
    assert replay.paths() == [f"{V}/job/1", f"{DB}/job/1"]
    Context.from_spec(wl)


def test_kill_9_cancel_and_ranks() -> None:
    # Job 2 is not in the recording's database answers: served as not (yet) there, slurmctld alone suffices.
    wl = _ctx(Replay({f"{DB}/job/2": UNKNOWN_DB})).identify("2").workload
    assert (wl.terminal_state, wl.exit_code, wl.nodes) == ("FAILED", "0:9", ["ffnode1"])
    wl = _ctx().identify("5").workload
    # sacct prints 'CANCELLED by 0' and 0:0 for the allocation; slurmctld says CANCELLED, killed by SIGTERM.
    assert (wl.terminal_state, wl.exit_code) == ("CANCELLED", "0:15")
    assert wl.window.end == "2026-11-29T19:16:27Z"
    wl = _ctx().identify("3").workload
    assert (wl.exit_code, wl.ranks) == ("1:0", {"ffnode1": "0-3"})  # step 0 ran 4 tasks


def test_running_job_has_no_end_or_state() -> None:
    wl = _ctx().identify("7").workload
    assert (wl.terminal_state, wl.exit_code, wl.window.end) == (None, None, None)
    assert wl.window.start == "2026-11-29T19:16:24Z"  # end_time there is the time limit, not an end


def test_array_task_and_array_job() -> None:
    wl = _ctx().identify("4_6").workload  # slurmctld returns the whole array; the task is picked out
    assert (wl.id, wl.terminal_state, wl.exit_code) == ("4_6", "FAILED", "6:0")
    with pytest.raises(IdentifyError, match=r"array of 2 tasks \(4_6, 4_5\); name one task"):
        _ctx().identify("4")


def test_het_job_is_one_workload_and_a_component_is_url_encoded() -> None:
    wl = _ctx().identify("9").workload  # cancelled while pending: two components, no node
    assert (wl.terminal_state, wl.nodes, wl.ranks, wl.window.start) == ("CANCELLED", [], None, None)
    replay = Replay({f"{DB}/job/9%2B1": REC[f"{DB}/job/9"]})
    wl = _ctx(replay).identify("9+1").workload
    assert wl.id == "9+1" and wl.terminal_state == "CANCELLED"
    assert replay.paths()[0] == f"{V}/job/9%2B1"  # a bare '+' is answered 400 'Unable to parse URL path.'


def test_requeued_job_attempts() -> None:
    latest = _ctx().identify("11").workload
    assert (latest.attempt, latest.terminal_state, latest.exit_code) == (1, "FAILED", "4:0")
    first = _ctx().identify("11", attempt=0).workload  # from the database only: no exit code
    assert (first.attempt, first.terminal_state, first.exit_code) == (0, None, None)  # REQUEUED is not an end
    assert first.window.start == "2026-11-29T19:16:53Z" and first.nodes == ["ffnode1"]
    with pytest.raises(IdentifyError, match="2 attempt"):
        _ctx().identify("11", attempt=2)


def test_forgotten_by_slurmctld_falls_back_without_exit_code() -> None:
    """After MinJobAge slurmctld answers 'Invalid job id': state, times and nodes come from the database,
    the exit code stays unknown rather than the database's wrong 0."""
    wl = _ctx(Replay({f"{V}/job/1": UNKNOWN_CTLD})).identify("1").workload
    assert (wl.terminal_state, wl.exit_code, wl.nodes) == ("FAILED", None, ["ffnode1"])
    assert (wl.window.start, wl.window.end) == ("2026-11-29T19:16:24Z", "2026-11-29T19:16:24Z")
    assert wl.ranks is None  # only the batch step: no numbered step, no task count
    wl = _ctx(Replay({f"{V}/job/3": UNKNOWN_CTLD})).identify("3").workload
    assert (wl.exit_code, wl.ranks) == (None, {"ffnode1": "0-3"})  # ranks from the database's step 0


def test_unknown_job_bad_refs_and_http_errors() -> None:
    with pytest.raises(IdentifyError, match="no job 987654 known to slurmctld or in the accounting database"):
        _ctx().identify("987654")
    for bad in ("", "abc", "42.0", "42_", "4242+1_2"):
        with pytest.raises(IdentifyError, match="not a job id"):
            _ctx().identify(bad)
    # A text body (the recorded 400) and an error other than 'unknown job' name the URL and the status.
    with pytest.raises(IdentifyError, match=r"GET http://slurmrestd/slurm/v0\.0\.38/job/1 -> HTTP 400: "
                                           r"Unable to parse URL path\."):
        _ctx(Replay({f"{V}/job/1": REC[f"{V}/job/9+1"]})).identify("1")
    with pytest.raises(IdentifyError, match=r"slurmdb/v0\.0\.38/job/1 -> HTTP 500: Unable to find JobId=987654"):
        _ctx(Replay({f"{DB}/job/1": UNKNOWN_CTLD})).identify("1")


def test_socket_missing_and_silent(tmp_path: Path) -> None:
    """The real Unix-socket transport: no socket file, then a socket that accepts and never answers."""
    missing = tmp_path / "none.sock"
    with SlurmRestAttempts(missing, timeout=2) as ctx, \
            pytest.raises(IdentifyError, match=rf"GET http://slurmrestd/slurm/v0\.0\.38/job/1 \(socket {missing}\): "
                                              r"no such socket \(is slurmrestd running"):
        ctx.identify("1")
    path = tmp_path / "silent.sock"
    with socket.socket(socket.AF_UNIX) as srv:
        srv.bind(str(path))
        srv.listen(1)
        with SlurmRestAttempts(path, timeout=0.3) as ctx, \
                pytest.raises(IdentifyError, match=r"no answer within 0\.3s"):
            ctx.identify("1")


def test_ended_since_from_the_jobs_listing() -> None:
    replay = Replay()
    ctx = _ctx(replay, lookback=None)
    ids, cursor = ctx.ended_since(None)
    # Running 7 is left out; het 9 (components 9, 10) is one id; requeued 11 once, by its final end.
    assert set(ids) == {"1", "2", "3", "4_5", "4_6", "5", "6", "9", "11"} and len(ids) == 9
    assert ids[-2:] == ["9", "11"]  # oldest end first
    q = replay.requests[0].url.params
    assert re.fullmatch(r"now-\d+seconds", q["start_time"]) and (q["end_time"], q["skip_steps"]) == ("now", "true")
    assert int(q["start_time"][4:-7]) > (datetime.now(UTC) - datetime(1970, 1, 3, tzinfo=UTC)).total_seconds()
    assert parse_cursor(cursor)[0] == datetime(2026, 11, 29, 19, 16, 59, tzinfo=UTC)
    assert ctx.ended_since(cursor)[0] == []
    # From a cursor it looks back SETTLE (2 min) before the cursor's time, relative to now.
    ago = int(replay.requests[1].url.params["start_time"][4:-7])
    expected = (datetime.now(UTC) - parse_cursor(cursor)[0]).total_seconds() + 120
    assert expected <= ago <= expected + 5
    with pytest.raises(IdentifyError, match="cursor"):
        ctx.ended_since("yesterday|x")


def test_ended_since_with_nothing_found() -> None:
    ids, cursor = _ctx(Replay({f"{DB}/jobs": UNKNOWN_DB}), lookback=None).ended_since(None)
    assert (ids, cursor) == ([], "")


# --------------------------------------------------------------------------
# a real slurmrestd beside the session's cluster
# --------------------------------------------------------------------------


@dataclass
class RestD:
    socket: Path
    proc: subprocess.Popen[bytes]


def _start_slurmrestd(cluster: SlurmCluster) -> RestD:
    """slurmrestd on a private Unix socket (TCP needs JWT, which Debian's build lacks), its own session."""
    sock = cluster.base / f"rest-{os.getpid()}.sock"
    env = cluster.env | {"SLURMRESTD_SECURITY": "disable_user_check"}
    log = open(cluster.base / "log" / "slurmrestd.stdout", "wb")  # noqa: SIM115 - the child keeps it
    proc = subprocess.Popen(["slurmrestd", "-a", "rest_auth/local", f"unix:{sock}"], stdout=log,
                            stderr=subprocess.STDOUT, env=env, cwd=cluster.base, start_new_session=True)
    log.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"slurmrestd exited with {proc.returncode}: "
                               + (cluster.base / "log" / "slurmrestd.stdout").read_text()[-500:])
        if sock.exists():
            with contextlib.suppress(httpx.TransportError), \
                    httpx.Client(transport=httpx.HTTPTransport(uds=str(sock))) as c:
                if c.get("http://slurmrestd/slurm/v0.0.38/ping").status_code == 200:
                    return RestD(sock, proc)
        time.sleep(0.1)
    _stop(proc)
    raise RuntimeError("slurmrestd not ready after 15s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@pytest.fixture(scope="module")
def restd(slurm_cluster: SlurmCluster) -> Iterator[RestD]:
    if subprocess.run(["which", "slurmrestd"], capture_output=True).returncode != 0:
        pytest.skip("slurmrestd not installed (scripts/ci/install-servers.sh installs it)")
    r = _start_slurmrestd(slurm_cluster)
    try:
        yield r
    finally:
        _stop(r.proc)


@dataclass
class RestJobs:
    exit3: str
    cancelled: str


@pytest.fixture(scope="module")
def rest_jobs(slurm_cluster: SlurmCluster) -> RestJobs:
    c = slurm_cluster
    exit3 = c.sbatch("#!/bin/sh\nexit 3\n", "--job-name=ffr-exit3")
    # exec: the batch process itself is what SIGTERM kills, so Slurm records the signal (0:15). With sh
    # waiting on a child sleep, which of the two died first decided between 0:15 and 143:0 (seen under load).
    cancelled = c.sbatch("#!/bin/sh\nexec sleep 300\n", "--job-name=ffr-cancel")
    c.wait_state(cancelled, ["RUNNING"], 20)
    c.run("scancel", cancelled)
    for job in (exit3, cancelled):
        c.wait_state(job, TERMINAL, 30)
    return RestJobs(exit3, cancelled)


def _poll(fn: Callable[[], T], ok: Callable[[T], bool], timeout: float = 15) -> T:
    """slurmctld writes the accounting record asynchronously; wait until the answer settles."""
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if ok(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


@pytest.mark.integration
def test_real_exit_3_reads_failed_3_0(restd: RestD, rest_jobs: RestJobs, slurm_cluster: SlurmCluster) -> None:
    with SlurmRestAttempts(restd.socket, timeout=20) as ctx:
        wl = ctx.identify(rest_jobs.exit3).workload
    assert (wl.terminal_state, wl.exit_code, wl.name) == ("FAILED", "3:0", "ffr-exit3")
    assert wl.nodes == [slurm_cluster.node] and wl.ranks == {slurm_cluster.node: "0"}
    # The same attempt as sacct's text says, field for field (sacct has whole seconds too).
    sacct = SlurmAttempts(env={"SLURM_CONF": str(slurm_cluster.conf)}, timeout=20).identify(rest_jobs.exit3).workload
    assert (wl.window, wl.nodes, wl.exit_code, wl.terminal_state, wl.attempt) == \
        (sacct.window, sacct.nodes, sacct.exit_code, sacct.terminal_state, sacct.attempt)
    # And the bug it avoids is there on this server: the database's answer says SUCCESS.
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(restd.socket))) as c:
        body = c.get(f"http://slurmrestd{DB}/job/{rest_jobs.exit3}").json()
    assert body["jobs"][0]["exit_code"]["status"] == "SUCCESS"


@pytest.mark.integration
def test_real_cancelled_and_unknown(restd: RestD, rest_jobs: RestJobs, slurm_cluster: SlurmCluster) -> None:
    with SlurmRestAttempts(restd.socket, timeout=20) as ctx:
        wl = ctx.identify(rest_jobs.cancelled).workload
        assert (wl.terminal_state, wl.exit_code, wl.nodes) == ("CANCELLED", "0:15", [slurm_cluster.node])
        assert wl.window.start and wl.window.end and wl.window.start <= wl.window.end
        with pytest.raises(IdentifyError, match="no job 987654 known to slurmctld or in the accounting database"):
            ctx.identify("987654")


@pytest.mark.integration
def test_real_ended_since(restd: RestD, rest_jobs: RestJobs) -> None:
    with SlurmRestAttempts(restd.socket, timeout=20) as ctx:
        ids, cursor = _poll(lambda: ctx.ended_since(None), lambda r: rest_jobs.cancelled in r[0])
        assert rest_jobs.exit3 in ids and rest_jobs.cancelled in ids
        assert not set(ctx.ended_since(cursor)[0]) & {rest_jobs.exit3, rest_jobs.cancelled}
