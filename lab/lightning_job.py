"""A tiny PyTorch Lightning job: Trainer(accelerator="cpu", devices=3, strategy="ddp" on gloo), one injected fault.

Run as `python lab/lightning_job.py`: Lightning's own launcher starts local ranks 1 and 2 as child
processes (the script again, with LOCAL_RANK set) and rank 0 watches them. The faults (LAB_FAULT,
see jobenv):

  exception          rank 1's training_step raises ValueError at step 3 (a collate bug dropped a label)
  sigkill_external   rank 1 writes its marker and waits in training_step; the driver kill -9s it
  hang               rank 1 stops at step 3; the others time out in the gradient allreduce (gloo, 10 s)
  gpu_missing        the Trainer asks for accelerator="gpu" on a host without GPUs (Lightning refuses at set-up)
  none               a clean run
"""

from __future__ import annotations

import logging
import os
import sys
from datetime import timedelta

import jobenv
import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.strategies import DDPStrategy
from torch.distributed.distributed_c10d import _set_pg_timeout
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))

    def setup(self, stage: str) -> None:
        # The strategy's timeout covers the rendezvous too, where rank 0 waits for ranks 1 and 2 to start and
        # import torch and Lightning (slow on a loaded machine); the collectives then get the job's short one.
        _set_pg_timeout(timedelta(seconds=jobenv.PG_TIMEOUT))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        rank, step = self.global_rank, self.global_step
        log = jobenv.setup_logging(rank)
        jobenv.before_step(log, rank, step)
        out = self.net(x)
        if jobenv.FAULT == "exception" and jobenv.fires(rank, step):
            y = y[:-1]  # a collate bug drops one label
        loss = F.binary_cross_entropy(out.sigmoid(), y.sigmoid())
        log.info("step %d loss %.4f", step, loss.item())
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(96, 16, generator=g)
    y = (x @ torch.linspace(-1, 1, 16)).unsqueeze(1)
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    trainer = L.Trainer(
        # gpu_missing: the job's configuration asks for GPUs on a host without them
        accelerator="gpu" if jobenv.FAULT == "gpu_missing" else "cpu", devices=3, num_nodes=1,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=180)),
        max_steps=jobenv.STEPS, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=str(jobenv.WORKDIR),
    )
    trainer.fit(Regressor(), loader)
    jobenv.setup_logging(trainer.global_rank).info("training finished after %d steps (pid %d)",
                                                   trainer.global_step, os.getpid())
    # as train.py's teardown: after a clean run gloo's process-group teardown at exit can keep a rank forever
    # (seen here: every rank's last line written, the processes still there 30 s later); the run is over
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
