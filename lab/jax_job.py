"""A tiny multi-process JAX job on the CPU: jax.distributed.initialize on 127.0.0.1, gloo collectives.

The driver starts one process per rank, as a shell loop or a plain launcher does:
`RANK=r WORLD_SIZE=3 JAX_COORDINATOR_ADDRESS=127.0.0.1:PORT python lab/jax_job.py`, each process's
stdout+stderr into its own log. Each step is a jitted linear-regression gradient, averaged across
processes with an all-gather over the global CPU devices (XLA's gloo collectives). The faults
(LAB_FAULT, see jobenv):

  exception          rank 1 multiplies by a weight matrix of the wrong shape at step 3 (jax raises TypeError)
  sigkill_external   rank 1 writes its marker and waits; the driver kill -9s it
  hang               rank 1 stops at step 3; the others wait in the all-gather
  num_processes_wrong  every process names num_processes=4 for the 3 started: the coordinator waits for a fourth
  coordinator_unreachable  the fault ranks dial the coordinator port of an earlier run, where nothing listens
                     (a free port of this host, taken and let go); process 0 starts the coordinator on the right one
  none               a clean run
"""

from __future__ import annotations

import os
import socket

import jax
import jax.numpy as jnp
import jobenv
import numpy as np
from jax.experimental import multihost_utils

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
log = jobenv.setup_logging(RANK)


def main() -> None:
    # short heartbeat and shutdown limits (defaults 100 s and 300 s): a rank that raised waits at exit in the
    # shutdown barrier for its peers, which wait for it in the all-gather, until the shutdown limit
    # num_processes_wrong: the job's configuration names one process more than the launch starts; the coordinator
    # then waits its whole initialization limit, 20 s for that fault (a run of a minute with the usual 60 s)
    wrong = jobenv.FAULT == "num_processes_wrong"
    stale = jobenv.FAULT == "coordinator_unreachable"
    address = None  # JAX_COORDINATOR_ADDRESS
    if stale and jobenv.fires(RANK):
        with socket.socket() as s:  # a port nothing listens on: the launch script's value from an earlier run
            s.bind(("127.0.0.1", 0))
            address = f"127.0.0.1:{s.getsockname()[1]}"
        log.info("coordinator %s", address)
    jax.distributed.initialize(coordinator_address=address, num_processes=WORLD + wrong, process_id=RANK,
                               heartbeat_timeout_seconds=int(jobenv.PG_TIMEOUT),
                               shutdown_timeout_seconds=int(jobenv.PG_TIMEOUT),
                               initialization_timeout=int((2 if wrong or stale else 6) * jobenv.PG_TIMEOUT))
    log.info("JAX process %d of %d: %d global devices (%s)", jax.process_index(), jax.process_count(),
             jax.device_count(), jax.devices()[0].platform)
    rng = np.random.default_rng(RANK)
    x = jnp.asarray(rng.standard_normal((4, 16), dtype=np.float32))
    y = x @ jnp.linspace(-1, 1, 16)
    w = jnp.zeros(16)
    grad = jax.jit(jax.grad(lambda w, x, y: jnp.mean((x @ w - y) ** 2)))
    for step in range(jobenv.STEPS):
        jobenv.before_step(log, RANK, step)
        xs = x[:, :15] if jobenv.FAULT == "exception" and jobenv.fires(RANK, step) else x  # a feature dropped
        g = grad(w, xs, y)
        g_all = multihost_utils.process_allgather(g)
        w = w - 0.05 * jnp.mean(g_all, axis=0)
        log.info("step %d: |w| %.4f", step, float(jnp.linalg.norm(w)))
    multihost_utils.sync_global_devices("end of training")
    log.info("training finished after %d steps", jobenv.STEPS)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
