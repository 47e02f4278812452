"""`watch` with several threads: exactly once, in order per job, the cursor rule, the same verdicts as one thread.

Real pieces: the Service (`firstfault serve`, a subprocess) analysing every attempt; the verdict
store (a SQLite file, and the suite's private PostgreSQL from tests/store/pg_harness.py); the
Blueprint's own SlurmAttempts, files connector and Service client. The scheduler's answers are
sacct pages recorded from the suite's real Slurm (tests/fixtures/scheduler/sacct-replay.json,
tests/harness/sacct_replay.py), moved in time and renamed per job: in process through the
SlurmAttempts's injectable runner, and as the bash `sacct` of sacct_replay.install_fast for the
`firstfault watch` subprocess that is killed. A requeued job's page is two recorded allocations
under one id (attempt 0 the recorded SIGKILLed job, attempt 1 the job's own kind), since
`sacct -D` prints one allocation record per attempt, earliest first. A flaky slurmdbd is sacct
exiting 1 with its "Problem talking to the database" error for a job's first query.

Expected verdicts follow from the recorded jobs, not from running the tool: a job that exited 0
did not fail (domain none), the CUDA OOM traceback is software (app.cuda_oom), the SIGKILLed
job with no evidence of why is unknown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from firstfault import records
from firstfault.blueprint import build
from firstfault.blueprint.config import load_config
from firstfault.blueprint.watch import PassReport, SharedService, Watcher
from firstfault.identify.slurm import RunResult, SlurmAttempts
from firstfault.store import VerdictStore
from tests.harness.e2e_util import store_rows
from tests.harness.sacct_replay import KINDS, RECORDING, Stream, install_fast, write_logs
from tests.service.server import ServiceProcess
from tests.store.pg_harness import fresh_database, store_url

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIRSTFAULT = Path(sys.executable).parent / "firstfault"
TOKEN = "watch-threads-0123456789abcdef"
FMT = "%Y-%m-%dT%H:%M:%S"
FIRST = 900000
JOBS = 24
REQUEUED = {FIRST + 3, FIRST + 10, FIRST + 17}
FLAKY = {FIRST + 5, FIRST + 10, FIRST + 19, FIRST + 22}  # the first `sacct -j` of each fails
EXPECTED_DOMAIN = {"ok": ("none", None), "oom": ("software", "app.cuda_oom"), "killed": ("unknown", None)}
SACCT_DOWN = ("sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to "
              "host:localhost:6819: Connection refused\nsacct: error: Problem talking to the database: "
              "Connection refused\n")


# ------------------------------------------------------------------------------------------- the scheduler


def _moved(rows: str, job: str, new_id: str, end: datetime, node: str, recorded_node: str) -> list[str]:
    """The recorded rows of one job (header dropped), renamed, on `node`, shifted to end at `end`."""
    lines = rows.splitlines()
    header = lines[0].split("|")
    at = {c: k for k, c in enumerate(header)}
    delta = end.replace(tzinfo=None) - datetime.strptime(lines[1].split("|")[at["End"]], FMT)
    out = []
    for ln in lines[1:]:
        cells = ln.split("|")
        for c in ("Start", "End"):
            cells[at[c]] = (datetime.strptime(cells[at[c]], FMT) + delta).strftime(FMT)
        cells[at["JobID"]] = cells[at["JobID"]].replace(job, new_id, 1)
        cells[at["NodeList"]] = cells[at["NodeList"]].replace(recorded_node, node)
        out.append("|".join(cells))
    return out


class Scheduler:
    """JOBS ended jobs (kinds as sacct_replay.KINDS), some requeued, some behind a flaky slurmdbd."""

    def __init__(self, logs: Path, base: datetime) -> None:
        self.rec = json.loads(RECORDING.read_text())
        self.header = self.rec["jobs"]["ok"]["sacct"].splitlines()[0]
        self.pages: dict[str, str] = {}
        self.ends: list[tuple[str, str, datetime]] = []  # (id, state, end) per attempt
        self.kind: dict[str, str] = {}
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        states = {ln.split("|")[0]: ln.split("|")[1] for ln in self.rec["listing"].splitlines()[1:]}
        for i in range(JOBS):
            jid, kind = str(FIRST + i), KINDS[i % len(KINDS)]
            end = base + timedelta(seconds=20 * i)
            node = f"gpu{i:03d}"
            rows = []
            attempts = [("killed", end - timedelta(seconds=7)), (kind, end)] if FIRST + i in REQUEUED else [(kind, end)]
            for k, at in attempts:
                job = self.rec["jobs"][k]
                rows += _moved(job["sacct"], job["id"], jid, at, node, self.rec["node"])
                self.ends.append((jid, states[job["id"]], at))
            self.pages[jid] = "\n".join([self.header, *rows]) + "\n"
            self.kind[jid] = kind
            d = logs / jid
            d.mkdir(parents=True)
            (d / f"{jid}.out").write_text(self.rec["jobs"][kind]["out"])

    def run(self, argv: Sequence[str], env: Mapping[str, str], timeout: float) -> RunResult:
        args = list(argv)
        if Path(args[0]).name == "scontrol":  # past MinJobAge, as the recorded jobs are
            return RunResult(1, "", "slurm_load_jobs error: Invalid job id specified\n")
        if "-j" in args:
            jid = args[args.index("-j") + 1]
            with self._lock:
                self.calls[jid] += 1
                first = self.calls[jid] == 1
            if first and int(jid) in FLAKY:
                return RunResult(1, "", SACCT_DOWN)
            return RunResult(0, self.pages.get(jid, self.header + "\n"), "")
        start = datetime.strptime(args[args.index("-S") + 1], FMT).replace(tzinfo=UTC)
        rows = [f"{j}|{s}|{e.strftime(FMT)}" for j, s, e in sorted(self.ends, key=lambda r: r[2]) if e >= start]
        return RunResult(0, "\n".join(["JobID|State|End", *rows]) + "\n", "")

    def expected(self) -> set[tuple[str, int]]:
        return {(str(FIRST + i), a) for i in range(JOBS) for a in range(2 if FIRST + i in REQUEUED else 1)}


# -------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    work = tmp_path_factory.mktemp("watch-threads-service")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])  # the Service runs this tree
    try:
        svc = ServiceProcess("service", {"FIRSTFAULT_TOKENS": json.dumps([TOKEN])}, work,
                             argv=[str(FIRSTFAULT), "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "2"])
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture(params=["postgresql", "sqlite"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(request.param, tmp_path, required=True) as url:
        yield url


_OPEN: list[SharedService] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().shutdown()


class Counting(SharedService):
    """The daemon's shared Service client, counting the analyses in flight (and their order).

    The first analysis waits (up to 20 s) for a second one to begin, so a daemon that really
    settles attempts at once is seen to, and one that does not fails the check instead of racing."""

    def __init__(self, client: Any, on_analyze: Any = None, wait_for_second: bool = True) -> None:
        super().__init__(client)
        self.wait_for_second = wait_for_second
        self.count_lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.order: list[tuple[str, int]] = []
        self.second = threading.Event()
        self.on_analyze = on_analyze

    def analyze(self, request: Any) -> Any:
        with self.count_lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.order.append((request.context.id, request.context.attempt))
            first = len(self.order) == 1 and self.wait_for_second
            if len(self.order) == 2:
                self.second.set()
        try:
            if first:
                self.second.wait(20)
            if self.on_analyze is not None:
                self.on_analyze(len(self.order))
            return super().analyze(request)
        finally:
            with self.count_lock:
                self.in_flight -= 1


def _watcher(tmp_path: Path, sched: Scheduler, service: ServiceProcess, url: str, store: VerdictStore,
             concurrency: int, on_analyze: Any = None) -> tuple[Watcher, Counting, list[str]]:
    cfg_path = tmp_path / "cluster.yaml"
    cfg_path.write_text(yaml.safe_dump({
        "cluster": "threads",
        "scheduler": {"slurm": {"timezone": "UTC"}},
        "logs": {"files": {"root": f"{tmp_path}/logs/{{job}}", "sources": [{"kind": "application", "path": "*.out"}]}},
        "service": {"url": service.url, "token": {"env": "FF_THREADS_TOKEN"}},
        "outputs": {"stdout": None, "database": {"url": url}},
    }))
    os.environ["FF_THREADS_TOKEN"] = TOKEN
    cfg = load_config(cfg_path)
    ctx = SlurmAttempts(runner=sched.run, tz="UTC")
    shared = Counting(build.service_client(cfg), on_analyze, wait_for_second=concurrency > 1)
    _OPEN.append(shared)
    lines: list[str] = []
    w = Watcher(source=ctx, store=store, cluster="threads", log=lines.append, concurrency=concurrency,
                make_pipeline=lambda ref: build.pipeline(cfg, ctx, job_id=ref, output_sinks=[], actions=[],
                                                         client=shared),
                begin_pass=shared.new_pass)
    return w, shared, lines


def _assert_exactly_once(url: str, expected: set[tuple[str, int]]) -> None:
    rows = store_rows(url)
    assert [k for k, n in Counter(rows.verdicts).items() if n > 1] == [], "a verdict written twice"
    assert set(rows.verdicts) == expected, sorted(set(rows.verdicts) ^ expected)
    assert sorted((r, a) for r, a, _ in rows.marks) == sorted(expected)
    for ref, attempt, vid in rows.marks:  # each mark committed with its own verdict
        assert vid is not None and rows.verdict_ids[vid] == (ref, attempt)


def _verdicts(url: str) -> dict[tuple[str, int], dict[str, Any]]:
    with VerdictStore.open(url) as s:
        out = {}
        for row in s.list(limit=1000):
            stored = s.get(row.id)
            assert stored is not None
            doc = records.to_builtins(stored)
            doc.pop("analyzed_at")  # the one field that is the time of analysis, not of the evidence
            out[(row.workload_id, row.attempt)] = doc
        return out


# ---------------------------------------------------------------------------------------------- tests


def test_four_threads_settle_each_attempt_once_and_keep_the_cursor_back_until_all_are(
        tmp_path: Path, service: ServiceProcess, db_url: str) -> None:
    sched = Scheduler(tmp_path / "logs", datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30))
    with VerdictStore.open(db_url) as store:
        w, shared, lines = _watcher(tmp_path, sched, service, db_url, store, concurrency=4)

        first = w.run_pass()
        assert 2 <= shared.peak <= 4, shared.peak  # attempts at once, never more than asked
        flaky = {str(j) for j in FLAKY}
        assert {ref for ref, _ in first.failed} == flaky and all("Problem talking to the database" in why
                                                                 for _, why in first.failed)
        assert not first.cursor_moved and store.get_cursor(w.cursor_name) is None
        _assert_exactly_once(db_url, {k for k in sched.expected() if k[0] not in flaky})
        assert sum(1 for ln in lines if ": failed: " in ln) == len(flaky)

        second = w.run_pass()  # the same listing (the cursor stayed): the settled are skipped, the rest done
        assert second.failed == [] and second.cursor_moved and store.get_cursor(w.cursor_name)
        assert sorted(second.analysed) == sorted(f"{r}#{a}" for r, a in sched.expected() if r in flaky)
        # Each settled job is looked at once more (its latest attempt found marked; earlier ones not re-read).
        assert sorted(second.skipped) == sorted(f"{r}#{1 if int(r) in REQUEUED else 0}" for r in sched.kind
                                                if r not in flaky)
        _assert_exactly_once(db_url, sched.expected())

        third = w.run_pass()  # nothing ended since the cursor
        assert (third.ended, third.analysed, third.cursor_moved) == (0, [], True)

    verdicts = _verdicts(db_url)
    for (ref, attempt), doc in verdicts.items():
        kind = "killed" if int(ref) in REQUEUED and attempt == 0 else sched.kind[ref]
        root = doc["root_cause"]
        assert (doc["attributed_domain"], root["category"] if root else None) == EXPECTED_DOMAIN[kind], (ref, kind)
    with VerdictStore.open(db_url) as s:
        ids = {(r.workload_id, r.attempt): r.id for r in s.list(limit=1000)}
        for j in map(str, REQUEUED):  # a requeued job's attempts: in order, on one thread
            assert ids[(j, 0)] < ids[(j, 1)]
            assert shared.order.index((j, 0)) < shared.order.index((j, 1))
            stored = s.get_record(ids[(j, 1)])
            assert stored is not None and stored.enrichment.previous_attempts == [f"{j}#0"]


def test_the_verdicts_do_not_depend_on_the_thread_count(tmp_path: Path, service: ServiceProcess) -> None:
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    got = {}
    for n in (1, 4):
        work = tmp_path / f"n{n}"
        url = f"sqlite:///{work / 'v.db'}"
        sched = Scheduler(work / "logs", base)
        with VerdictStore.open(url) as store:
            w, shared, _ = _watcher(work, sched, service, url, store, concurrency=n)
            w.run_pass()
            assert w.run_pass().cursor_moved
            assert 1 <= shared.peak <= n and (n == 1 or shared.peak >= 2)
        _assert_exactly_once(url, sched.expected())
        got[n] = _verdicts(url)
    assert len(got[1]) == len(got[4]) == JOBS + len(REQUEUED)
    # Everything but the time of analysis, byte for byte.
    for key, doc in got[1].items():
        assert json.dumps(doc, sort_keys=True) == json.dumps(got[4][key], sort_keys=True), key


def test_a_stop_lets_the_attempts_in_flight_commit_and_starts_no_other(tmp_path: Path, service: ServiceProcess,
                                                                       db_url: str) -> None:
    sched = Scheduler(tmp_path / "logs", datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30))
    holder: dict[str, Watcher] = {}

    def stop_at_the_sixth(n: int) -> None:
        if n == 6:
            holder["w"].stop()

    with VerdictStore.open(db_url) as store:
        w, shared, _ = _watcher(tmp_path, sched, service, db_url, store, concurrency=4, on_analyze=stop_at_the_sixth)
        holder["w"] = w
        report: PassReport = w.run_pass()
        assert report.unstarted and not report.cursor_moved and store.get_cursor(w.cursor_name) is None
        rows = store_rows(db_url)
        # Every analysis that began was committed with its mark: none half-written, none dropped.
        assert sorted((r, a) for r, a, _ in rows.marks) == sorted(shared.order)
        assert len(rows.verdicts) == len(rows.marks) == len(report.analysed) < len(sched.expected())
        assert all(r not in {ref for ref, _ in rows.verdicts} for r in report.unstarted)

        # The restarted daemon (a new Watcher on the same store) settles the rest, once.
        again, _, _ = _watcher(tmp_path, sched, service, db_url, store, concurrency=4)
        passes = [again.run_pass() for _ in range(2)]  # the flaky jobs may take a second pass
        assert passes[-1].cursor_moved and passes[-1].failed == []
    _assert_exactly_once(db_url, sched.expected())


def test_kill_9_mid_pass_then_restart_leaves_one_verdict_and_one_mark_each(tmp_path: Path,
                                                                           service: ServiceProcess) -> None:
    """The real `firstfault watch --concurrency 4` subprocess, SIGKILLed with attempts in flight."""
    with fresh_database(required=True) as url:
        nodes = [f"gpu{i:03d}" for i in range(16)]
        stream = Stream.per_hour(3600, 1.0, 120, 910000, nodes, t0=time.time() - 600)  # all ended: one pass
        write_logs(tmp_path / "logs", stream)
        tools = install_fast(tmp_path / "bin", stream)
        cfg = tmp_path / "cluster.yaml"
        cfg.write_text(yaml.safe_dump({
            "cluster": "killed",
            "scheduler": {"slurm": {**tools, "timezone": "UTC"}},
            "logs": {"files": {"root": f"{tmp_path}/logs/{{job}}",
                               "sources": [{"kind": "application", "path": "*.out"}]}},
            "service": {"url": service.url, "token": {"env": "FF_THREADS_TOKEN"}},
            "outputs": {"stdout": None, "database": {"url": url}},
            "watch": {"poll_interval": 0.5, "concurrency": 4},
        }))
        env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTFAULT_")} | {
            "FF_THREADS_TOKEN": TOKEN, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
        log = tmp_path / "watch.log"

        def start() -> subprocess.Popen[bytes]:
            with log.open("ab") as out:
                return subprocess.Popen([str(FIRSTFAULT), "watch", "-c", str(cfg), "--json"], stdout=out,
                                        stderr=subprocess.STDOUT, env=env)

        def wait_marks(proc: subprocess.Popen[bytes], n: int) -> None:
            deadline = time.monotonic() + 120
            while len(store_rows(url).marks) < n:
                assert proc.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "no progress"
                time.sleep(0.01)

        proc = start()
        wait_marks(proc, 10)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
        rows = store_rows(url)
        assert len(rows.marks) == len(rows.verdicts) < stream.count  # never one without the other
        assert len(set(rows.verdicts)) == len(rows.verdicts) and rows.cursors == {}

        proc = start()  # restarted: a SIGTERM with attempts in flight lets them commit, then exits 0
        wait_marks(proc, len(rows.marks) + 10)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()[-3000:]
        rows = store_rows(url)
        assert len(rows.marks) == len(rows.verdicts) and len(set(rows.verdicts)) == len(rows.verdicts)
        if len(rows.marks) < stream.count:
            assert rows.cursors == {}  # the pass was cut short: the cursor stayed

        res = subprocess.run([str(FIRSTFAULT), "watch", "-c", str(cfg), "--once", "--json"], env=env,
                             capture_output=True, text=True, timeout=300, check=False)
        assert res.returncode == 0, res.stderr
        events = [json.loads(ln) for ln in res.stdout.splitlines()]
        assert all(set(e["seconds"]) >= {"identify", "collect", "analyze", "store"} for e in events if "domain" in e)
        _assert_exactly_once(url, {(stream.job_id(i), 0) for i in range(stream.count)})
        assert "watch:slurm:killed" in store_rows(url).cursors


def test_without_a_service_attempts_go_one_at_a_time_and_it_says_so(tmp_path: Path) -> None:
    """The embedded engine analyses in-process: `--concurrency 4` is refused aloud, the pass still settles."""
    from tests.harness.e2e_util import invoke

    stream = Stream.per_hour(3600, 1.0, 6, 930000, ["gpu000"], t0=time.time() - 600)
    write_logs(tmp_path / "logs", stream)
    tools = install_fast(tmp_path / "bin", stream)
    url = f"sqlite:///{tmp_path / 'v.db'}"
    cfg = tmp_path / "cluster.yaml"
    cfg.write_text(yaml.safe_dump({
        "cluster": "embedded",
        "scheduler": {"slurm": {**tools, "timezone": "UTC"}},
        "logs": {"files": {"root": f"{tmp_path}/logs/{{job}}", "sources": [{"kind": "application", "path": "*.out"}]}},
        "outputs": {"stdout": None, "database": {"url": url}},
    }))
    res = invoke(["watch", "-c", str(cfg), "--once", "--concurrency", "4"])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    assert "attempts are settled one at a time (concurrency 4 ignored)" in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if " attempt 0: " in ln]
    assert [ln.split()[0] for ln in lines] == [stream.job_id(i) for i in range(stream.count)]  # in order: serial
    _assert_exactly_once(url, {(stream.job_id(i), 0) for i in range(stream.count)})
