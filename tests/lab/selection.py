"""Which of the failure lab's faults get a fresh run (tests/lab/test_lab.py) in this test session.

The quick run (the README's `./scripts/test.sh`, the default) makes afresh one fault per launcher and mode:
the cheapest one of each that still fails by a cause of its own (`sample`), except for a launcher whose first
start on a machine is slow (DeepSpeed). `FIRSTFAULT_LAB=all` (what
.ci/run sets) makes every fault afresh; `LAB_ONLY="PATTERN ..."` (shell-style patterns of fault names) makes
just the faults it names, whatever FIRSTFAULT_LAB says. The others' tests are deselected, never skipped (in
CI a skipped integration test is a failure). Every fault's captured run (tests/lab/test_captured.py) is
checked in every mode.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable

from lab.faults import FAULTS, Fault

ENV = "FIRSTFAULT_LAB"
MODES = ("sample", "all")  # FIRSTFAULT_LAB's values; unset is "sample"


def mode() -> str:
    value = os.environ.get(ENV, "").strip() or "sample"
    if value not in MODES:
        raise ValueError(f"{ENV}={value!r}: expected one of {', '.join(MODES)} (unset: sample)")
    return value


def _needs_nothing_from_outside(f: Fault) -> bool:
    """The job ends by itself: no kill, signal, scancel or scontrol from the driver, no memory cgroup, tmpfs or
    /dev/shm of its own, no FUSE daemon, loop device or firewall rule under it, no occupied port, and the session's own
    Slurm (no extra Slurm cluster to start)."""
    return not (f.kill_from_outside or f.scancel_at_marker or f.admin_at_marker or f.admin_after
                or f.term_after_marker is not None or f.memcg_limit or f.tmpfs_checkpoint or f.shm_size
                or f.occupy_port or f.max_restarts or f.fuse_data or f.loop_checkpoint or f.kill_fuse_at_marker
                or f.drop_rank_ports) and f.slurm_profile == "harness"


def _cost(f: Fault) -> tuple[float, int]:
    """What a run costs, as far as the fault says: its time limit, then the steps it runs before it ends."""
    return (f.timeout, f.step if f.outcome == "failed" else f.steps)


def sample(faults: Iterable[Fault] = FAULTS.values()) -> frozenset[str]:
    """One fault per mode (bare torchrun, Slurm, mpirun, Lightning, JAX, Ray, Accelerate): among those that need
    nothing from outside the job and fail with a definitive cause (a hang waits for a timeout; a clean run runs
    every step; an unknown verdict is decided by what is missing), the cheapest (`_cost`), then the first in the
    catalogue (lab/faults.py). A mode whose launcher builds something at its first start on a machine
    (`slow_first_start`: DeepSpeed's JIT-compiled op, minutes) has none: the quick run must stay short."""
    best: dict[str, Fault] = {}
    for f in faults:  # the catalogue's order: the first of equal cost stays
        if f.domain in ("unknown", "none") or not _needs_nothing_from_outside(f) or f.slow_first_start:
            continue
        if f.mode not in best or _cost(f) < _cost(best[f.mode]):
            best[f.mode] = f
    return frozenset(f.name for f in best.values())


def selected(name: str) -> bool:
    """Whether fault `name` gets a fresh run in this session (LAB_ONLY, else FIRSTFAULT_LAB)."""
    only = os.environ.get("LAB_ONLY", "").split()
    if only:
        return any(fnmatch.fnmatchcase(name, pat) for pat in only)
    return mode() == "all" or name in sample()
