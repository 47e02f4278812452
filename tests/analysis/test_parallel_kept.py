"""The regex code a worker of `-j N` generates is kept on disk (firstfault.lazyre.write_at_worker_exit).

A pool worker ends with os._exit, so the atexit that writes lazyre's entry never ran there: the patterns that only
the line readers use (the CUDA table's, first used in a worker) were generated again by every worker of every run
unless a one-process run had kept them. The parent's own write at its exit adds to the entry as it is then (the
workers wrote it meanwhile), not to what the parent read at its start.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "tests" / "scenarios" / "sw-illegal-access-xid31"  # a rank log's `CUDA error: an illegal memory ...`

PROBE = """
import json, sys
from firstfault import lazyre
from firstfault.analysis import parallel
from firstfault.analysis.analyze import Analyzer
from firstfault.extract import codes
parallel.MIN_BYTES = 0  # a small bundle, read by workers all the same
Analyzer().analyze_path(sys.argv[1], workers=int(sys.argv[2]))
print(json.dumps({"parent_built_cuda": codes._cuda_index.cache_info().currsize,
                  "parent_made": [[p, f] for p, f in lazyre._made if isinstance(p, str)]}))
"""


def _run(cache_dir: Path, workers: int) -> tuple[dict[str, object], set[tuple[str, int]]]:
    env = {**os.environ, "FIRSTFAULT_CACHE_DIR": str(cache_dir)}
    env.pop("FIRSTFAULT_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(BUNDLE), str(workers)], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=env).stdout
    entries = list(cache_dir.glob("re-*.marshal"))
    kept = set(marshal.loads(entries[0].read_bytes())) if entries else set()
    return json.loads(out), kept


def test_the_code_a_worker_generated_is_kept_and_the_parent_adds_to_it(tmp_path: Path) -> None:
    from firstfault.extract import codes

    cuda = codes._cuda_index()[1].pattern
    cuda_keys = {(cuda, int(re.IGNORECASE)), (cuda, 0)}  # (pattern, flags as passed): the case-blind one, the lowered
    got, kept = _run(tmp_path / "two", 2)
    assert got["parent_built_cuda"] == 0  # the CUDA line was read in a worker only ...
    assert cuda_keys <= kept  # ... and its table's code is kept all the same
    parent = {(p, f) for p, f in got["parent_made"]}  # type: ignore[union-attr]
    assert parent and parent <= kept  # what the parent generated is in the entry too (added, not written over)
    # The near miss: read in one process (what was kept before this change), the same code is kept by the parent.
    got1, kept1 = _run(tmp_path / "one", 1)
    assert got1["parent_built_cuda"] == 1 and cuda_keys <= kept1
