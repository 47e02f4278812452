"""The parallel reader (firstfault.analysis.parallel) and the scanner's line accounting.

Reading the line files in two worker processes must give the one-process
verdict byte for byte, on every scenario and on a generated job with a fault;
and the scanner's line counts (coverage) and candidate line numbers must be
the files' own, whatever the chunk size, with or without candidates in a
chunk, with a last line that has no newline.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis import parallel
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect import scan
from firstfault.collect.scan import LineScanner, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.model import LINE_SOURCES
from firstfault.timeparse import TimeParser

ROOT = Path(__file__).parents[1] / "scenarios"
SCENARIOS = sorted(p.parent for p in ROOT.glob("*/expected.yaml"))
NOW = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)
BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer()


@pytest.fixture(autouse=True)
def _workers_for_small_bundles(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test bundles are small: make the parallel reader start its workers for them all the same.
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)


def test_a_small_bundle_is_read_in_this_process(analyzer: Analyzer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_BYTES", 32 << 20)

    def no_pool(*_a: object, **_k: object) -> None:
        raise AssertionError("a pool was started for a small bundle")

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    assert _verdict(analyzer, SCENARIOS[0], 2) == _verdict(analyzer, SCENARIOS[0], 1)


def _verdict(analyzer: Analyzer, path: Path, workers: int) -> str:
    return records.dumps(analyzer.analyze_bundle(load_bundle(str(path)), now=NOW, workers=workers), indent=2)


def test_two_workers_give_every_scenario_the_same_verdict_bytes(analyzer: Analyzer) -> None:
    assert len(SCENARIOS) > 20
    differ = [p.name for p in SCENARIOS if _verdict(analyzer, p, 1) != _verdict(analyzer, p, 2)]
    assert differ == []


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(BENCH))
    try:
        import gen_bundle  # bench script, not a package
    finally:
        sys.path.remove(str(BENCH))
    out = tmp_path_factory.mktemp("gen") / "bundle"
    gen_bundle.generate(str(out), 4, 4, 0.004, seed=3, quiet=True)
    return out


@pytest.mark.parametrize("build", ["two_ranks_and_a_kernel", "kernel_noise_on_every_node"])
def test_a_chatty_bundle_gets_one_verdict_for_one_and_two_workers(analyzer: Analyzer, tmp_path: Path,
                                                                  build: str) -> None:
    """Workers fold their files' copies (collect/fold.py) and their unrecognized offers (OfferFold.repeat), each
    with the lessons of the files it read (Lessons): the verdict is the one process's, and the one of reading
    every line."""
    from firstfault.extract import memo
    from tests import chatty

    case = getattr(chatty, build)(tmp_path)
    one = _verdict(analyzer, case.path, 1)
    if build == "two_ranks_and_a_kernel":
        # The dataloader lines of both ranks in one unrecognized group: rank 0's every other of 5,000, rank 1's two
        # of every three of 4,000.
        assert '"count": 5166' in one
    assert _verdict(analyzer, case.path, 2) == one
    with memo.fastpath(False):
        assert _verdict(analyzer, case.path, 2) == one


def test_a_generated_job_gets_one_verdict_for_one_and_two_workers(analyzer: Analyzer, generated: Path) -> None:
    one = _verdict(analyzer, generated, 1)
    assert '"attributed_domain": "hardware"' in one  # the generator's Xid 79 is found, not an empty verdict
    assert _verdict(analyzer, generated, 2) == one
    assert _verdict(analyzer, generated, 3) == one
    assert _verdict(analyzer, generated, 1) == one  # and the same again: determinism


def _own_lines(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def test_coverage_counts_every_line_of_every_file(analyzer: Analyzer, generated: Path) -> None:
    bundle = load_bundle(str(generated))
    want: dict[str, int] = {}
    for src in bundle.sources:
        if src.spec.kind in LINE_SOURCES:
            want[src.spec.kind] = want.get(src.spec.kind, 0) + sum(_own_lines(Path(f.path)) for f in src.files)
    for workers in (1, 2):
        v = analyzer.analyze_bundle(load_bundle(str(generated)), now=NOW, workers=workers)
        got = {c.source: c.lines for c in v.coverage if c.source in want}
        assert got == want


@pytest.mark.parametrize("chunk", [64, 257, 4096, 8 << 20])
def test_line_counts_and_numbers_are_the_files_own(tmp_path: Path, chunk: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Long runs without a candidate (whole chunks with none), candidates at chunk edges, and a
    # last line without its newline.
    lines = []
    for i in range(400):
        if i % 97 == 5:
            lines.append(f"Nov  2 10:{i % 60:02d}:00 n1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid={i}, GPU has fallen"
                         " off the bus.")
        else:
            lines.append(f"Nov  2 10:{i % 60:02d}:00 n1 systemd[1]: Started session {i} of user root.")
    path = tmp_path / "k.log"
    path.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(scan, "CHUNK", chunk)
    out: list[Candidate] = []
    stats = LineScanner("kernel", all_line_extractors()).scan_file(
        str(path), "k.log", node="n1", rank=None, srun_prefix=False, tp=TimeParser(UTC, None, None),
        emit=out.append)
    assert stats.lines == 400
    assert [c.line for c in out] == [i + 1 for i in range(400) if i % 97 == 5]
    assert all("Xid" in c.text and c.text == lines[c.line - 1] for c in out)


def test_the_newline_counter_counts_like_bytes_count() -> None:
    # The C counter when built (firstfault/_lines.c), else the fallback: either way, slice semantics.
    data = b"a\nbb\n\n" * 50 + b"tail without newline" + b"\n" * 3
    n = len(data)
    for start in (-n - 5, -7, 0, 1, 5, n // 2, n - 1, n, n + 3):
        for end in (-n - 5, -3, 0, 2, n // 3, n - 2, n, n + 9):
            assert scan.count_newlines(data, start, end) == data.count(b"\n", start, end), (start, end)


def test_the_workers_really_run_here_and_never_beside_threads(analyzer: Analyzer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # scripts/test.sh runs this file in a process of its own, so the fork path is the one under test.
    started: list[str] = []
    real = multiprocessing.get_context

    def spy(method: str | None = None) -> object:
        started.append(str(method))
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", spy)
    one = _verdict(analyzer, SCENARIOS[0], 1)
    assert _verdict(analyzer, SCENARIOS[0], 2) == one and started == ["fork"]
    # With another thread running, no fork: the same verdict from this process alone.
    started.clear()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert _verdict(analyzer, SCENARIOS[0], 2) == one and started == []
    finally:
        stop.set()
        t.join()


def _chatty(root: Path, twice: bool) -> Path:
    """Two ranks' logs of a hundred NCCL WARN copies each (three signatures past the store's cap),
    with the files listed by a second source when `twice` (two readings of one file fold into one
    signature)."""
    (root / "app").mkdir(parents=True)
    for rank in (0, 1):
        lines = []
        for i in range(100):
            dev = i % 3
            lines.append(f"2026-11-02 10:{i // 60:02d}:{i % 60:02d},000 INFO step {i}")
            lines.append(f"node-001:{4100 + rank}:{4200 + dev} [{dev}] NCCL WARN NET/Socket : Connection closed "
                         "by remote peer node-002<45678>")
        (root / "app" / f"rank-{rank}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    extra = "- {kind: application, path: 'app/rank-{rank}.log'}\n" if twice else ""
    (root / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\n"
        "workload:\n  id: '9'\n  scheduler: slurm\n"
        "  window: {start: '2026-11-02T10:00:00Z', end: '2026-11-02T11:00:00Z'}\n"
        "  nodes: [node-001, node-002]\n  ranks: {node-001: 0-1}\n  timezone: UTC\n"
        "sources:\n- {kind: application, path: 'app/rank-{rank}.log'}\n" + extra, encoding="utf-8")
    return root


@pytest.mark.parametrize("twice", [False, True])
def test_events_past_the_cap_are_counted_alike_by_one_store_two_workers_and_one_event_at_a_time(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twice: bool) -> None:
    """The scanner's store never builds the events that only count (EventStore.add_drafts), and each
    worker folds its file in a store of its own whose counts the parent's store takes back: both
    must give what adding every event, one at a time, to one store gives."""
    from firstfault.analysis.analyze import Analysis

    bundle = _chatty(tmp_path / "b", twice)
    fast = [_verdict(analyzer, bundle, w) for w in (1, 2)]

    def one_at_a_time(self: Analysis, c: Candidate) -> None:
        for ev in self.extraction.events(c):
            self.store.add(ev)

    monkeypatch.setattr(Analysis, "add_candidate", one_at_a_time)
    monkeypatch.setattr(Analysis, "line_fold", lambda self: None)  # every line handed over, none counted
    reference = _verdict(analyzer, bundle, 1)
    assert fast == [reference, reference]
    symptom = next(s for s in __import__("json").loads(reference)["symptoms"] if s["category"] == "nccl.remote_error")
    assert symptom["count"] == (400 if twice else 200)


def _rank_files_workload(root: Path, last_rank: int) -> None:
    """workload.yaml of a bundle of app/rank-N.log files, ranks 0 to last_rank on one node."""
    (root / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\n"
        "workload:\n  id: '9'\n  scheduler: slurm\n"
        "  window: {start: '2026-11-02T10:00:00Z', end: '2026-11-02T11:00:00Z'}\n"
        f"  nodes: [node-001]\n  ranks: {{node-001: 0-{last_rank}}}\n  timezone: UTC\n"
        "sources:\n- {kind: application, path: 'app/rank-{rank}.log'}\n", encoding="utf-8")


@pytest.mark.parametrize("cache_max", [20000, 2])
def test_unrecognized_lines_are_listed_alike_by_one_process_and_two_workers(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_max: int) -> None:
    """The workers fold each file's unrecognized lines by shape and the parent merges the entries; with
    the template cache full (cache_max 2), a file whose shape holds lines of two templates (eth0 /
    eth1) cannot be folded and the parent reads its offers again. Both ways: the one-process list."""
    from firstfault.extract import unrecognized

    monkeypatch.setattr(unrecognized, "_CACHE_MAX", cache_max)  # before the fork: the workers inherit it
    root = tmp_path / "b"
    (root / "app").mkdir(parents=True)
    for rank in (0, 1):
        # The shard lines come first: their two shapes (one digit, two) fill a cache of 2.
        lines = [f"2026-11-02 10:00:{i:02d},000 ERROR shard {i * 7} failed to load" for i in range(5)]
        lines += [f"2026-11-02 10:01:{i:02d},000 ERROR link eth{(i + rank) % 2} failed: carrier lost after {i} s"
                  for i in range(30)]
        (root / "app" / f"rank-{rank}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _rank_files_workload(root, 1)
    refused: list[str] = []
    real = parallel._reoffer

    def spy(job: object, i: int, target: object) -> None:
        refused.append(job.tasks[i].rel)  # type: ignore[attr-defined]
        real(job, i, target)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "_reoffer", spy)
    one, two = _verdict(analyzer, root, 1), _verdict(analyzer, root, 2)
    assert one == two
    listed = {g["template"]: g["count"] for g in __import__("json").loads(one)["unrecognized"]}
    if cache_max == 2:
        # Past the cache, each line gets its own template: eth0 and eth1 are two groups.
        assert refused and listed["<TIME> ERROR link eth0 failed: carrier lost after <N> s"] == 30
        assert listed["<TIME> ERROR link eth1 failed: carrier lost after <N> s"] == 30
    else:
        assert refused == [] and listed["<TIME> ERROR link eth0 failed: carrier lost after <N> s"] == 60
    assert listed["<TIME> ERROR shard <N> failed to load"] == 10


def test_a_file_of_more_line_shapes_than_a_worker_folds_is_read_by_the_parent(
        analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26, item 18: a file of a million distinct error-looking lines held 1.6 GB in the worker that folded its
    offers (one entry per shape). Past MAX_FOLDED shapes the worker gives the file up and the parent reads it, in
    its place in the reading order: the verdict is the one-process one, and it says how many lines overflowed the
    group limit. Here the limits are made small (before the fork: the workers inherit them)."""
    from firstfault.extract import unrecognized

    monkeypatch.setattr(unrecognized, "MAX_FOLDED", 5)
    monkeypatch.setattr(unrecognized, "MAX_GROUPS", 8)
    monkeypatch.setattr("firstfault.analysis.analyze.MAX_GROUPS", 8)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
             "lima"]
    root = tmp_path / "b"
    (root / "app").mkdir(parents=True)
    for rank in (0, 1, 2):
        n = 3 if rank == 1 else len(words)  # rank 1's file stays under the fold's bound: its worker folds it
        lines = [f"2026-11-02 10:00:{i:02d},000 ERROR {words[i]} {words[-1 - i]} failed" for i in range(n)]
        (root / "app" / f"rank-{rank}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _rank_files_workload(root, 2)
    read_here: list[str] = []
    real = LineScanner.scan_file

    def spy(self: LineScanner, path: str, rel: str, **kw: object) -> object:
        if multiprocessing_parent():
            read_here.append(rel)
        return real(self, path, rel, **kw)  # type: ignore[arg-type]

    def multiprocessing_parent() -> bool:
        import multiprocessing

        return multiprocessing.parent_process() is None

    monkeypatch.setattr(LineScanner, "scan_file", spy)
    two = _verdict(analyzer, root, 2)
    assert read_here == ["app/rank-0.log", "app/rank-2.log"]
    assert two == _verdict(analyzer, root, 1)
    # twelve templates in rank 0's and rank 2's files, eight kept: four lines of each file past the limit
    errors = __import__("json").loads(two)["errors"]
    assert [e["message"] for e in errors] == [
        "8 unrecognized error-looking line(s) were counted, not grouped: their templates came after the first 8"]


def test_a_hundred_thousand_distinct_error_lines_cost_little_memory_in_every_process(tmp_path: Path) -> None:
    """Issue 26, item 18 at scale: 100,000 distinct error-looking lines (random words, no two alike) in one kernel
    log of the showcase, read with two workers. The worker that folded them held an entry per line (a million
    lines: 1.6 GB) and the parent took them all back; now both stay small, and the verdict counts the lines past
    the group limit."""
    import random
    import shutil

    from tests.memory import MB, run_measured

    b = tmp_path / "b"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "nvlink-xid149", b)
    rnd = random.Random(26)
    letters = "abcdefghijklmnopqrstuvwxyz"
    with (b / "nodes" / "node-03" / "kern.log").open("a") as f:
        for i in range(100_000):
            a, c = ("".join(rnd.choice(letters) for _ in range(n)) for n in (8, 6))
            f.write(f"Nov  2 10:06:{i % 60:02d} node-03 kernel: {a} {c} error\n")
    out, peak = run_measured(f"""
        import resource
        from firstfault.analysis import parallel
        from firstfault.analysis.analyze import Analyzer
        parallel.MIN_BYTES = 0
        v = Analyzer().analyze_path({str(b)!r}, workers=2)
        print("CAUSE", v.root_cause.category if v.root_cause else None)
        print("ERRORS", [e.message for e in v.errors])
        print("CHILDREN", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
    """, timeout=600)
    assert "CAUSE gpu.nvlink.signal_integrity" in out
    assert "unrecognized error-looking line(s) were counted, not grouped: their templates came after the first " \
           "2000" in out, out
    children = int(out.split("CHILDREN ")[1].split()[0])
    assert peak < 100 * MB and children < 100 * MB, (peak, children)


def test_a_worker_killed_midway_gives_the_one_process_verdict_and_no_hang(
        analyzer: Analyzer, generated: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The OOM killer takes a worker (SIGKILL, while it reads the third file): with multiprocessing.Pool the parent
    waited for its result forever; the pool now breaks, and the files not yet handed back are read here."""
    import os
    import signal

    one = _verdict(analyzer, generated, 1)
    parent = os.getpid()
    real = parallel._work
    victim = parallel.line_tasks(load_bundle(str(generated)))[2].rel

    def dying(i: int) -> object:
        job = parallel._JOB
        assert job is not None
        if os.getpid() != parent and job.tasks[i].rel == victim:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(i)

    monkeypatch.setattr(parallel, "_work", dying)  # before the fork: the workers inherit it
    monkeypatch.setattr(parallel, "GROUP_BYTES", 1)  # a group a file: the victim's group is its own
    assert _verdict(analyzer, generated, 2) == one
    err = capsys.readouterr().err
    # Named: the first file not handed back, the victim's or one before it still waiting for a worker.
    named = err.split("from ", 1)[1].split(" on, ", 1)[0] if "a reader process died" in err else None
    order = [t.rel for t in parallel.line_tasks(load_bundle(str(generated)))]
    assert named in order and order.index(named) <= order.index(victim), err


def test_an_event_and_a_files_stats_cross_to_the_parent_whole() -> None:
    """Workers send events and stats as flat tuples (parallel._to_wire): every field of Event, Evidence and
    FileStats crosses, each set to a value unlike its default, and nothing else does (a field added to one of
    them and not to the tuple fails here)."""
    import dataclasses
    import pickle

    from firstfault.collect.chunks import FileStats
    from firstfault.model import Event, Evidence

    t = datetime(2026, 11, 2, 11, 0, 26, 123456, tzinfo=UTC)
    ev = Event(kind="gpu.xid", time=t, node="node-1", rank=7, device="GPU 4", fields={"xid": 79, "repeat": 3},
               t_lo=datetime(2026, 11, 2, 11, 0, 20, tzinfo=UTC),
               evidence=Evidence(source="kernel", file="nodes/node-1/kern.log", line=12, text="NVRM: Xid ...",
                                 query="q"))
    wire = parallel._to_wire(ev)
    assert len(wire) == len(dataclasses.fields(Event)) - 1 + len(dataclasses.fields(Evidence))
    back = parallel._from_wire(pickle.loads(pickle.dumps(wire, pickle.HIGHEST_PROTOCOL)))
    assert back == ev and back.evidence == ev.evidence
    # A near miss: one field of the evidence differs, the event differs.
    assert parallel._from_wire((*wire[:-1], None)) != ev

    stats = FileStats(lines=5, bytes=99, candidates=3, events=2, bad_utf8=1, last_time=t, errors=[(4, "x")],
                      notes=["a bug report"])
    wired = parallel._stats_to_wire(stats)
    assert len(wired) == len(dataclasses.fields(FileStats))
    assert parallel._stats_from_wire(pickle.loads(pickle.dumps(wired))) == stats


def test_files_are_shared_out_by_the_sizes_the_bundle_was_loaded_with(generated: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # A 16k-rank job's 18k files were stat'ed again to group them, serially, before any worker started: the groups
    # and the "big enough for workers" test now read the sizes load_bundle's own stat found (SourceFile.size).
    tasks = parallel.line_tasks(load_bundle(str(generated)))
    assert tasks and all(t.size == Path(t.path).stat().st_size for t in tasks)
    groups = parallel._groups(tasks, 2)
    total = parallel._total_bytes(tasks)

    def no_stat(*_a: object, **_k: object) -> None:
        raise AssertionError("a file the bundle sized was stat'ed again")

    monkeypatch.setattr(parallel.os, "stat", no_stat)
    assert parallel._groups(tasks, 2) == groups
    assert parallel._total_bytes(tasks) == total
    assert [r for g in groups for r in range(*g)] == list(range(len(tasks)))  # every file once, in order


def test_a_task_whose_size_is_not_known_is_stat_ed_and_one_that_cannot_be_counts_nothing(generated: Path,
                                                                                       tmp_path: Path) -> None:
    import dataclasses

    tasks = parallel.line_tasks(load_bundle(str(generated)))
    unsized = [dataclasses.replace(t, size=None) for t in tasks]
    assert parallel._groups(unsized, 2) == parallel._groups(tasks, 2)  # (the files did not change since)
    assert parallel._total_bytes(unsized) == parallel._total_bytes(tasks)
    gone = dataclasses.replace(unsized[0], path=str(tmp_path / "gone.log"))
    assert parallel._size(gone) == 0  # the scanner says why it cannot be read


@pytest.mark.parametrize(("first", "owner"), [(2, "node-003"), (3, "node-004")])
def test_the_first_file_in_reading_order_that_names_an_address_owns_it_with_one_process_or_two_workers(
        analyzer: Analyzer, tmp_path: Path, first: int, owner: str) -> None:
    """A worker's file sends the addresses its lines name (model.Address) beside its events, and the parent keeps
    them in the file's place: where two files name one address for two nodes (a posted log's reused address), the
    one read first owns it, as in one process. Two ranks' transport errors name that address as their peer."""
    root = tmp_path / "b"
    (root / "app").mkdir(parents=True)
    error = ("node-00{n}:1{n}:12 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
             "10.0.0.9<5000> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
    boot = "node-00{n}:1{n}:11 [0] NCCL INFO Bootstrap : Using ib0:{addr}<0>"
    for rank in range(4):
        n = rank + 1
        lines = [boot.format(n=n, addr="10.0.0.9" if rank in (2, 3) and (rank == first or rank > first)
                             else f"10.0.0.{n}")]
        if rank < 2:
            lines.append(error.format(n=n))
        (root / "app" / f"rank-{rank}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\n"
        "workload:\n  id: '9'\n  scheduler: slurm\n"
        "  window: {start: '2026-11-02T10:00:00Z', end: '2026-11-02T11:00:00Z'}\n"
        "  nodes: [node-001, node-002, node-003, node-004]\n"
        "  ranks: {node-001: 0, node-002: 1, node-003: 2, node-004: 3}\n  timezone: UTC\n"
        "sources:\n- {kind: application, path: 'app/rank-{rank}.log'}\n", encoding="utf-8")
    one, two = _verdict(analyzer, root, 1), _verdict(analyzer, root, 2)
    assert one == two
    assert __import__("json").loads(one)["affected_nodes"] == [owner]


def test_a_bundle_read_in_this_process_imports_no_pool(tmp_path: Path) -> None:
    # multiprocessing and concurrent.futures (10 ms of a start-up) are imported where a pool may start, not by a run
    # that reads a small bundle in one process; near miss: one whose files pass MIN_BYTES does start one.
    import os
    import subprocess

    probe = ("import sys\nfrom firstfault.analysis import parallel\nfrom firstfault.analysis.analyze import Analyzer\n"
             "parallel.MIN_BYTES = int(sys.argv[2])\nAnalyzer().analyze_path(sys.argv[1], workers=2)\n"
             "print(sorted(m for m in ('multiprocessing', 'concurrent.futures.process', 'email.utils') "
             "if m in sys.modules))\n")
    env = {**os.environ, "FIRSTFAULT_CACHE_DIR": str(tmp_path / "cache")}

    def imported(min_bytes: int) -> str:
        return subprocess.run([sys.executable, "-c", probe, str(SCENARIOS[0]), str(min_bytes)], capture_output=True,
                              text=True, check=True, env=env).stdout.strip()

    assert imported(32 << 20) == "[]"
    assert imported(1) == "['concurrent.futures.process', 'multiprocessing']"
