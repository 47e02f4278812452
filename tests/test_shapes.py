"""bench/shapes.py, issue 27's benchmark of many shapes: its generators and its runner's parts (not its timings).

Each one-node shape, written small, must get the verdict its generator decided by construction; the repeated
kernel noise of gen_bundle.py must be the same lines on every node, and only with kern_repeat; a shape is
generated once for its parameters; a run past its timeout is killed and says so.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle

BENCH = Path(__file__).resolve().parent.parent / "bench"
NOW = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def bench() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(BENCH))
    try:
        import gen_bundle  # bench scripts, not a package
        import run_bench
        import shapes
    finally:
        sys.path.remove(str(BENCH))
    yield {"shapes": shapes, "gen_bundle": gen_bundle, "run_bench": run_bench}


@pytest.mark.parametrize(
    ("gen", "params"),
    [
        ("gen_numbers", {"lines": 3000, "seed": 29}),
        ("gen_numbers2", {"lines": 3000, "seed": 33}),
        ("gen_numbers3", {"lines": 3000, "seed": 36}),
        ("gen_longlines", {"mb": 3, "seed": 30}),
        ("gen_regex", {"lines": 12, "max_run": 1500, "seed": 31}),
        ("gen_syslog_hosts", {"hosts": 64, "mb": 1, "seed": 41}),
        ("gen_mpirun_ranks", {"ranks": 256, "mb": 1, "seed": 43}),
    ],
)
def test_a_small_one_node_shape_gets_the_verdict_it_was_built_for(
    bench: dict[str, ModuleType], tmp_path: Path, gen: str, params: dict[str, Any]
) -> None:
    expected = getattr(bench["shapes"], gen)(tmp_path, params)
    verdict = Analyzer().analyze_bundle(load_bundle(str(tmp_path)), now=NOW, workers=1)
    assert verdict.root_cause is not None
    got = (verdict.attributed_domain, verdict.root_cause.category, verdict.affected_nodes)
    assert got == (expected["attributed_domain"], expected["root_cause.category"], expected["affected_nodes"])


def test_the_long_lines_shape_holds_lines_of_10_kb_to_1_mb(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    bench["shapes"].gen_longlines(tmp_path, {"mb": 3, "seed": 30})
    sizes = [len(ln) for ln in (tmp_path / "app" / "rank-0.log").read_bytes().split(b"\n")]
    long = [n for n in sizes if n >= 10_000]
    assert len(long) >= 5 and max(long) <= 1_000_100  # the stamp and the logger's words on top of 1 MB
    assert sum(long) >= 0.9 * sum(sizes)


def _kern_masked(path: Path) -> list[str]:
    """A kernel log with its host names, times and uptimes masked."""
    text = path.read_text(encoding="ascii")
    text = re.sub(r"node-\d+", "HOST", text)
    text = re.sub(r"\[\s*\d+\.\d+\]", "[UP]", text)
    return text.splitlines()


def _two_nodes(bench: dict[str, ModuleType], out: Path, repeat: bool) -> tuple[list[str], list[str], str]:
    # jobs=1: written in this process. A writer pool forked from a pytest worker (which holds threads) hung
    # here once: one writer exited, the other waited on the pool's task queue, the test never ended.
    s = bench["gen_bundle"].generate(str(out), 3, 2, 0.003, seed=5, jobs=1, quiet=True, kernel_share=0.5,
                                     kern_repeat=repeat)
    quiet = [n for n in ("node-001", "node-002", "node-003") if n != s["fault_node"]]
    return (
        _kern_masked(out / "nodes" / quiet[0] / "kern.log"),
        _kern_masked(out / "nodes" / quiet[1] / "kern.log"),
        s["fault_node"],
    )


def test_kern_repeat_writes_the_same_kernel_lines_on_every_node(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    one, two, fault = _two_nodes(bench, tmp_path / "rep", True)
    assert len(one) > 100 and one == two
    assert sum("AER: Corrected error received" in ln for ln in one) >= len(one) // 15
    # the faulted node: the same lines, and the Xid 79 block among them
    faulted = _kern_masked(tmp_path / "rep" / "nodes" / fault / "kern.log")
    assert [ln for ln in faulted if "NVRM" not in ln] == one


def test_without_kern_repeat_the_nodes_kernel_noise_differs(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    one, two, _fault = _two_nodes(bench, tmp_path / "rot", False)
    assert one != two
    assert not any("AER" in ln for ln in one)


def test_a_shape_is_generated_once_for_its_parameters(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    shapes = bench["shapes"]
    calls: list[dict[str, Any]] = []

    def gen(out: Path, p: dict[str, Any]) -> dict[str, Any]:
        calls.append(p)
        return shapes._expect(out, "software", "app.cuda_oom")

    s = shapes.Shape("z", "probe", "a probe", gen, {"n": 1}, "(none)")
    first = shapes.shape_dir(tmp_path, s)
    assert shapes.shape_dir(tmp_path, s) == first and len(calls) == 1
    (tmp_path / (first.name + ".done")).unlink()  # a generation cut short: written again
    assert shapes.shape_dir(tmp_path, s) == first and len(calls) == 2
    s.params = {"n": 2}  # other parameters: another folder
    assert shapes.shape_dir(tmp_path, s) != first and len(calls) == 3


def test_a_run_past_its_timeout_is_killed_and_says_so(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    rb = bench["run_bench"]
    t0 = time.perf_counter()
    r = rb.timed(["sleep", "30"], tmp_path, timeout=0.3)
    assert r.rc == rb.TIMED_OUT and time.perf_counter() - t0 < 10
    assert rb.timed(["true"], tmp_path, timeout=30).rc == 0  # in time: its own exit status


def test_the_widest_lead_counts_the_ranks_one_lead_names(bench: dict[str, ModuleType]) -> None:
    widest = bench["shapes"].widest_lead
    doc = {"leads": [{"kind": "first_exit", "ranks": [3]}, {"kind": "laggard_rank", "ranks": list(range(70))}]}
    assert widest(doc) == (70, "laggard_rank")
    assert widest({"leads": [{"kind": "stuck_frame", "ranks": []}]}) == (0, "-")
    assert widest(None) == (0, "-")


def _has_hyperscan(env: dict[str, str]) -> str:
    code = "import firstfault.collect.scan as s; print(s.HAVE_HYPERSCAN)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


def test_the_blocked_runs_scanner_has_no_hyperscan(bench: dict[str, ModuleType], tmp_path: Path) -> None:
    shapes = bench["shapes"]
    pytest.importorskip("hyperscan")  # where it is not installed there is nothing to block
    assert _has_hyperscan(shapes._env()).strip() == "True"  # the fast run has it
    blocked = shapes._env({"FIRSTFAULT_MATCHER": "aho-corasick"})
    assert _has_hyperscan(blocked).strip() == "False"


@pytest.mark.parametrize(("gen", "seed"), [("gen_numbers", 29), ("gen_numbers2", 33)])
def test_the_numbers_shapes_stay_in_the_fold_s_c_loop(
    bench: dict[str, ModuleType], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gen: str, seed: int
) -> None:
    """Shapes c and g, written at a tenth of their size, are read by the fold's C loop a chunk at a time, not left
    to Python a line at a time. A prefilter word that holds a digit (or that a hex id could spell) makes every line
    of a shape holding it leave the loop (collect/fold.py `_same_hits`): the C loop is then entered once per line,
    and the whole-process time of c grew threefold twice (CANN's report codes, NCCL_COMM_ID's parse error) with only
    bench/shapes.py to show it. With `port=443` among the words the loop is entered ~15,000 times here."""
    from firstfault.collect import scan

    if scan._fold_run is None:
        pytest.skip("the C module is not built")
    getattr(bench["shapes"], gen)(tmp_path, {"lines": 200_000, "seed": seed})
    real, entered = scan._fold_run, [0]

    def counted(*args: Any) -> Any:
        entered[0] += 1
        return real(*args)

    monkeypatch.setattr(scan, "_fold_run", counted)
    verdict = Analyzer().analyze_bundle(load_bundle(str(tmp_path)), now=NOW, workers=1)
    assert verdict.root_cause is not None and verdict.root_cause.category == "app.cuda_oom"
    assert 0 < entered[0] <= 200, entered[0]  # about 20-30 today: a chunk's worth of lines a call
