"""A tiny Dask job: a `dask scheduler`, 3 `dask worker`s (each under its nanny) and this client, on 127.0.0.1.

The driver starts the scheduler and the workers as a batch script does (`dask scheduler &`, `dask worker ADDR &`,
each with its own log), then runs `python lab/dask_job.py` as the job's client, and stops the scheduler and the
workers (SIGTERM, as the script's clean-up does) once the client has ended. The client waits for the 3 workers,
computes a dask.array mean, then maps one "training shard" task per step over the workers with futures; the fault
fires in the task of step LAB_FAULT_STEP (jobenv). The faults (LAB_FAULT):

  exception         the task of step 3 raises ValueError (a collate bug dropped a label); the client's result()
                    raises it again
  memory_limit      the task of step 3 allocates past its worker's --memory-limit, 10 MiB at a time; the nanny
                    kills the worker over its memory budget and restarts it; the scheduler gives the task to another
                    worker, which dies the same way, until it gives up (KilledWorker)
  segfault          the task of step 3 dereferences NULL (ctypes.string_at(0)) on every try; its worker process dies
                    of SIGSEGV, the nanny restarts it, until the scheduler gives up (KilledWorker)
  none              a clean run

DASK_SCHEDULER_ADDRESS (the driver's) is the scheduler the client dials; `scheduler_unreachable` gives the workers
and the client a port where no scheduler listens (the driver's choice, not this script's).
"""

from __future__ import annotations

import os
import sys
import time

import jobenv
from distributed import Client

WORKERS = 3


def shard(step: int, fault: str) -> float:
    """One step's work on a worker: a small least-squares fit of a shard, with the fault of its step."""
    import numpy as np

    if step == jobenv.FAULT_STEP:
        if fault == "exception":
            labels = np.ones(31)  # a collate bug dropped one label
            raise ValueError(f"Using a target size ({labels.shape[0]},) that is different to the input size (32,)")
        if fault == "memory_limit":
            held = []
            while True:  # a feature cache that never stops growing
                held.append(np.ones(10 << 20, dtype=np.uint8))
                time.sleep(0.02)
        if fault == "segfault":
            import ctypes

            ctypes.string_at(0)  # a C extension dereferencing NULL
    rng = np.random.default_rng(step)
    x = rng.standard_normal((256, 16))
    y = x @ np.linspace(-1, 1, 16)
    w = np.linalg.lstsq(x, y, rcond=None)[0]
    return float(((x @ w - y) ** 2).mean())


def main() -> int:
    log = jobenv.setup_logging(0)
    address = os.environ["DASK_SCHEDULER_ADDRESS"]
    log.info("connecting to the Dask scheduler at %s", address)
    client = Client(address, timeout=jobenv.PG_TIMEOUT * 2)
    client.wait_for_workers(WORKERS, timeout=180)
    log.info("%d workers: %s", WORKERS, ", ".join(sorted(client.scheduler_info()["workers"])))
    import dask.array as da

    mean = da.random.RandomState(0).random_sample((1000, 1000), chunks=250).mean().compute()
    log.info("input mean %.4f", mean)
    futures = client.map(shard, range(jobenv.STEPS), fault=jobenv.FAULT, pure=False)
    for step, fut in enumerate(futures):
        log.info("step %d loss %.4f", step, fut.result())
    log.info("training finished after %d steps", jobenv.STEPS)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
