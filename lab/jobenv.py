"""What every lab job script shares: the fault knobs from the environment, the rank's marker, its logging.

The job scripts (train.py's siblings: mpi_job.py, lightning_job.py, jax_job.py, ray_job.py) are run as
scripts, so they import this module as `jobenv` (their own folder is first on sys.path). It imports
nothing beyond the standard library: an MPI job must not pay for torch.

  LAB_FAULT        name of the fault ("none" for a clean run)
  LAB_FAULT_RANKS  comma-separated ranks the fault fires on (default "1")
  LAB_FAULT_STEP   step at which it fires (default 3)
  LAB_STEPS        number of steps (default 6)
  LAB_WORKDIR      scratch directory (markers, checkpoints)
  LAB_PG_TIMEOUT   collective / process-group timeout in seconds (default 10)
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

FAULT = os.environ.get("LAB_FAULT", "none")
FAULT_RANKS = {int(r) for r in os.environ.get("LAB_FAULT_RANKS", "1").split(",") if r.strip()}
FAULT_STEP = int(os.environ.get("LAB_FAULT_STEP", "3"))
STEPS = int(os.environ.get("LAB_STEPS", "6"))
WORKDIR = Path(os.environ.get("LAB_WORKDIR", "/tmp/lab-work"))
PG_TIMEOUT = float(os.environ.get("LAB_PG_TIMEOUT", "10"))


def setup_logging(rank: int) -> logging.Logger:
    """Ordinary Python logging with the rank in the format, as a training script has it."""
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(name)s: %(message)s")
    return logging.getLogger("train")


def fires(rank: int, step: int | None = None) -> bool:
    return rank in FAULT_RANKS and (step is None or step == FAULT_STEP)


def mark(rank: int) -> None:
    """Tells the driver this process's pid: it is where the driver sends a signal from outside."""
    (WORKDIR / f"marker-rank{rank}").write_text(str(os.getpid()))


def stop_forever(log: logging.Logger, rank: int, step: int) -> None:
    """A rank that stops inside a step (a stalled read, a deadlock); nothing records why.

    Its marker tells the driver where the hang began (for a job no timeout of its own ends)."""
    mark(rank)
    log.info("step %d: fetching remote sample index", step)
    while True:
        time.sleep(1)


def wait_for_kill(log: logging.Logger, rank: int, step: int) -> None:
    """Writes the marker and waits: the driver kills this process from outside now."""
    mark(rank)
    log.info("step %d: waiting for the next batch", step)
    time.sleep(600)


def before_step(log: logging.Logger, rank: int, step: int) -> None:
    """The faults that stop a rank at the start of a step, as every job script injects them: a SIGKILL from outside
    (`sigkill_external`: the rank waits for the driver's kill) or a hang (`hang`), on the fault's ranks and step."""
    if FAULT == "sigkill_external" and fires(rank, step):
        wait_for_kill(log, rank, step)
    if FAULT == "hang" and fires(rank, step):
        stop_forever(log, rank, step)
