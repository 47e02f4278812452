"""A tiny Hugging Face Accelerate job: `accelerate launch --multi_gpu --num_processes 3`, Accelerator(cpu=True) on gloo.

Run as `accelerate launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no
--main_process_port P lab/accelerate_job.py`. `--cpu --num_processes 3` alone starts one process (Accelerate's
simple launcher starts several only through mpirun and a hostfile); `--multi_gpu` takes the torchrun path
(torch.distributed.run inside the `accelerate` process) and, on a machine without GPUs, Accelerator(cpu=True)
makes each rank a MULTI_CPU process on gloo. The faults (LAB_FAULT, see jobenv):

  exception          rank 1 raises ValueError at step 3 (a collate bug dropped a label)
  sigkill_external   rank 1 writes its marker and waits; the driver kill -9s it
  hang               rank 1 stops at step 3; the others time out in the gradient allreduce (gloo, 10 s)
  none               a clean run
"""

from __future__ import annotations

import os
from datetime import timedelta

import jobenv
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs
from torch.distributed.distributed_c10d import _set_pg_timeout
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    # as lightning_job: the process group's timeout also bounds the rendezvous, where rank 0 waits for ranks that
    # are still importing torch and Accelerate on a loaded machine; the collectives get the job's short one after
    acc = Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(seconds=180))])
    rank = acc.process_index
    log = jobenv.setup_logging(rank)
    log.info("Accelerate process %d of %d (%s, backend %s)", rank, acc.num_processes, acc.distributed_type,
             acc.state.backend)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(96, 16, generator=g)
    y = (x @ torch.linspace(-1, 1, 16)).unsqueeze(1)
    model, opt, loader = acc.prepare(model, opt, DataLoader(TensorDataset(x, y), batch_size=4))
    _set_pg_timeout(timedelta(seconds=jobenv.PG_TIMEOUT))
    for step, (xb, yb) in enumerate(loader):
        if step >= jobenv.STEPS:
            break
        jobenv.before_step(log, rank, step)
        out = model(xb)
        if jobenv.FAULT == "exception" and jobenv.fires(rank, step):
            yb = yb[:-1]  # a collate bug drops one label
        loss = F.binary_cross_entropy(out.sigmoid(), yb.sigmoid())
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
        log.info("step %d loss %.4f", step, loss.item())
    acc.wait_for_everyone()
    log.info("training finished after %d steps (pid %d)", jobenv.STEPS, os.getpid())
    acc.end_training()


if __name__ == "__main__":
    main()
