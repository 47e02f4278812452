"""A tiny MPI job (mpi4py on Debian's Open MPI): a few steps of MPI_Allreduce with one injected fault.

Run as `mpirun -np 3 python -m mpi4py lab/mpi_job.py`: `python -m mpi4py` makes an uncaught exception
call MPI_Abort (the way mpi4py's documentation says to run a script), so one rank's exception ends the
job instead of leaving its peers in the collective. The faults (LAB_FAULT, see jobenv):

  exception          rank 1 raises ValueError at step 3 (a reduction over a short buffer)
  sigkill_external   rank 1 writes its marker and waits; the driver kill -9s it
  hang               rank 1 stops at step 3; the others wait in MPI_Allreduce until mpirun --timeout
  abort              rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3) at step 3 (mpi4py's comm.Abort), saying nothing
  none               a clean run
"""

from __future__ import annotations

import sys

import jobenv
from mpi4py import MPI

comm = MPI.COMM_WORLD
RANK = comm.Get_rank()
log = jobenv.setup_logging(RANK)


def main() -> None:
    log.info("MPI rank %d of %d on %s (%s)", RANK, comm.Get_size(), MPI.Get_processor_name(),
             MPI.Get_library_version().splitlines()[0])
    weights = [0.5 * (RANK + 1)] * 8
    for step in range(jobenv.STEPS):
        jobenv.before_step(log, RANK, step)
        if jobenv.FAULT == "abort" and jobenv.fires(RANK, step):
            comm.Abort(3)  # the program's own decision to end the job; its reason is not printed
        grads = weights[: 7 if jobenv.FAULT == "exception" and jobenv.fires(RANK, step) else 8]
        if len(grads) != len(weights):
            raise ValueError(f"gradient buffer holds {len(grads)} values, the model has {len(weights)}")
        total = comm.allreduce(sum(grads), op=MPI.SUM)
        weights = [w - 0.01 * total for w in weights]
        log.info("step %d: global gradient sum %.4f", step, total)
    comm.Barrier()
    log.info("training finished after %d steps", jobenv.STEPS)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
