"""A tiny Ray Train job: a local Ray cluster on 127.0.0.1 and TorchTrainer with 3 workers, DDP on gloo (CPU).

Run as `python lab/ray_job.py`: ray.init() starts the local cluster (GCS, raylet; no dashboard), the
trainer starts 3 RayTrainWorker actors, each one rank of a gloo process group, and their output comes
back to the driver's log with Ray's "(RayTrainWorker pid=N)" prefix. The faults (LAB_FAULT, see jobenv):

  exception          worker rank 1 raises ValueError at step 3 (a collate bug dropped a label)
  sigkill_external   worker rank 1 writes its marker and waits; the driver kill -9s it
  hang               worker rank 1 stops at step 3; the others time out in the DDP allreduce (gloo, 10 s)
  none               a clean run
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import jobenv
import ray
import ray.train
import ray.train.torch
from ray.train import FailureConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer

WORKERS = 3


def train_loop(config: dict[str, Any]) -> None:
    import torch
    import torch.nn.functional as F

    rank = ray.train.get_context().get_world_rank()
    log = jobenv.setup_logging(rank)
    torch.manual_seed(0)
    model = ray.train.torch.prepare_model(
        torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(rank)
    for step in range(jobenv.STEPS):
        jobenv.before_step(log, rank, step)
        x = torch.randn(4, 16, generator=g)
        y = (x @ torch.linspace(-1, 1, 16)).unsqueeze(1)
        out = model(x)
        if jobenv.FAULT == "exception" and jobenv.fires(rank, step):
            y = y[:-1]  # a collate bug drops one label
        loss = F.binary_cross_entropy(out.sigmoid(), y.sigmoid())
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
    log.info("training finished after %d steps (pid %d)", jobenv.STEPS, os.getpid())


def main() -> int:
    # a short session directory: Ray's unix sockets live under it (a socket path is at most 107 bytes)
    ray.init(num_cpus=WORKERS + 1, include_dashboard=False, _temp_dir=tempfile.mkdtemp(prefix="lab-ray-"))
    trainer = TorchTrainer(
        train_loop,
        scaling_config=ScalingConfig(num_workers=WORKERS, use_gpu=False),
        torch_config=TorchConfig(backend="gloo", timeout_s=int(jobenv.PG_TIMEOUT)),
        run_config=RunConfig(name="lab", storage_path=str(jobenv.WORKDIR / "ray_results"),
                             failure_config=FailureConfig(max_failures=0)),
    )
    result = trainer.fit()
    print(f"training result: {result.metrics}", flush=True)
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
