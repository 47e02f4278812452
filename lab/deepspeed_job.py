"""A tiny DeepSpeed job on the CPU: `deepspeed --num_gpus 3`, deepspeed.init_distributed("gloo"), a DeepSpeed engine.

Run as `DS_ACCELERATOR=cpu deepspeed --num_gpus 3 --master_port P lab/deepspeed_job.py`: DeepSpeed's runner
(deepspeed.launcher.runner, no hostfile: this host only) starts deepspeed.launcher.launch, which starts the 3
ranks (`--local_rank=N` on their command lines) and ends the others once one exits non-zero. DeepSpeed's CPU
accelerator talks gloo when oneCCL's bindings are absent; its first start compiles DeepSpeed's shared-memory
all-reduce op (ninja, g++; cached under ~/.cache/torch_extensions, minutes the first time on 2 cores). The
faults (LAB_FAULT, see jobenv):

  exception          rank 1 raises ValueError at step 3 (a collate bug dropped a label)
  sigkill_external   rank 1 writes its marker and waits; the driver kill -9s it
  hang               rank 1 stops at step 3; the others time out in the gradient allreduce (gloo, 10 s)
  batch_size_mismatch  the config's train_batch_size (16, written for 4 ranks) does not fit 3 ranks: DeepSpeed's
                       own check refuses it in deepspeed.initialize
  none               a clean run
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta

import deepspeed
import jobenv
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.distributed_c10d import _set_pg_timeout

CONFIG = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "SGD", "params": {"lr": 0.05}}, "steps_per_print": 1000}


def main() -> None:
    # as lightning_job: the long timeout covers the rendezvous with ranks still importing DeepSpeed on a loaded
    # machine; the collectives get the job's short one once the engine is built
    deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=180))
    rank = dist.get_rank()
    log = jobenv.setup_logging(rank)
    log.info("DeepSpeed rank %d of %d (local rank %s, backend %s)", rank, dist.get_world_size(),
             os.environ.get("LOCAL_RANK"), dist.get_backend())
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    config = CONFIG
    if jobenv.FAULT == "batch_size_mismatch":  # a config written for 4 ranks of micro batch 4, run on 3
        config = {**CONFIG, "train_batch_size": 16}
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    # every group: DeepSpeed all-reduces the gradients on its own clone of the world group (dist.new_group), made
    # with torch's default timeout (30 min for gloo), not the one init_distributed was given
    for group in list(dist.distributed_c10d._world.pg_map):
        _set_pg_timeout(timedelta(seconds=jobenv.PG_TIMEOUT), group)
    g = torch.Generator().manual_seed(rank)
    for step in range(jobenv.STEPS):
        jobenv.before_step(log, rank, step)
        x = torch.randn(4, 16, generator=g)
        y = (x @ torch.linspace(-1, 1, 16)).unsqueeze(1)
        out = engine(x)
        if jobenv.FAULT == "exception" and jobenv.fires(rank, step):
            y = y[:-1]  # a collate bug drops one label
        loss = F.binary_cross_entropy(out.sigmoid(), y.sigmoid())
        engine.backward(loss)
        engine.step()
        log.info("step %d loss %.4f", step, loss.item())
    dist.barrier()
    log.info("training finished after %d steps (pid %d)", jobenv.STEPS, os.getpid())
    sys.stdout.flush()


if __name__ == "__main__":
    main()
