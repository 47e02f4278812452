"""A tiny DDP training job (gloo, CPU) with exactly one injected fault.

Run under torchrun (RANK/WORLD_SIZE/MASTER_* from torchelastic) or under srun
(SLURM_PROCID/SLURM_NTASKS; MASTER_ADDR/MASTER_PORT from the batch script).
The fault is chosen by environment variables, so the launch line stays the
same for every fault:

  LAB_FAULT        name of the fault (see FAULTS below; "none" for a clean run)
  LAB_FAULT_RANKS  comma-separated ranks the fault fires on (default "1")
  LAB_FAULT_STEP   step at which it fires (default 3)
  LAB_STEPS        number of training steps (default 6)
  LAB_WORKDIR      scratch directory (dataset shards, checkpoints, markers)
  LAB_PG_TIMEOUT   process-group timeout in seconds (default 10)

Nothing here imitates a log line: every message below the fault comes from
Python, PyTorch, gloo, torchrun or Slurm themselves. The script's own logging
is ordinary Python logging, as in any training script.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import logging
import math
import mmap
import os
import resource
import shutil
import signal
import sys
import time
import warnings
from datetime import timedelta
from pathlib import Path

import torch
import torch._dynamo  # DDP() imports it lazily (about 2 s); imported before the PG, ranks stay in step
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.elastic.multiprocessing.errors import record
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

FAULT = os.environ.get("LAB_FAULT", "none")
# torchrun restarts the group (--max-restarts): the script keeps each attempt's store keys apart (see main)
PER_ATTEMPT_STORE = FAULT in ("fail_first_attempt", "exception_every_attempt", "exception_then_segv")
FAULT_RANKS = {int(r) for r in os.environ.get("LAB_FAULT_RANKS", "1").split(",") if r.strip()}
FAULT_STEP = int(os.environ.get("LAB_FAULT_STEP", "3"))
STEPS = int(os.environ.get("LAB_STEPS", "6"))
WORKDIR = Path(os.environ.get("LAB_WORKDIR", "/tmp/lab-work"))
PG_TIMEOUT = float(os.environ.get("LAB_PG_TIMEOUT", "10"))

log = logging.getLogger("train")


def _rank_env() -> tuple[int, int, int]:
    if "RANK" not in os.environ and "SLURM_PROCID" in os.environ:
        os.environ["RANK"] = os.environ["SLURM_PROCID"]
        os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
        os.environ["LOCAL_RANK"] = os.environ.get("SLURM_LOCALID", "0")
    return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", "0"))


RANK, WORLD, LOCAL_RANK = _rank_env()


def fires(step: int | None = None) -> bool:
    return RANK in FAULT_RANKS and (step is None or step == FAULT_STEP)


class Shards(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Synthetic regression data; for the worker faults, item 0 of the fault step's batch kills its worker."""

    def __init__(self, n: int = 96) -> None:
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 16, generator=g)
        self.y = (self.x @ torch.linspace(-1, 1, 16)).unsqueeze(1) + 0.01 * torch.randn(n, 1, generator=g)
        self.trap = -1

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if FAULT == "dataloader_shm_full" and fires():
            # rank 1's samples carry a 1 MiB image each: a batch outgrows the 1 MiB /dev/shm
            return torch.cat([self.x[i], torch.zeros(1 << 18)]), self.y[i]
        if i == self.trap:
            if FAULT == "dataloader_worker_segv":
                ctypes.string_at(0)  # a C extension dereferencing NULL inside a worker
            elif FAULT == "dataloader_worker_sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif FAULT == "dataloader_worker_exception":
                raise ValueError(f"corrupt sample {i}: expected 16 features, the record holds 15")
            elif FAULT == "dataloader_worker_parquet":
                import pyarrow.parquet as pq  # the sample's features are a parquet file, cut short by a copy

                pq.read_table(WORKDIR / "data" / f"features-rank{RANK:02d}.parquet")
            elif FAULT == "dataloader_worker_stall":
                time.sleep(600)  # a read that never returns (a stalled network filesystem); nothing says why
            elif FAULT == "dataloader_worker_oom":
                hog = []  # a decoder that keeps every frame: the worker grows until the memory cgroup's limit
                while True:
                    if len(hog) < 192:  # stop at 3 GiB; the limit is far below
                        hog.append(torch.ones(16 << 20, dtype=torch.uint8))
                    time.sleep(0.05)
        return self.x[i], self.y[i]


def build_model(hidden: int = 32) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))


class WithAuxHead(torch.nn.Module):
    """The model plus an auxiliary head whose loss the job adds only during warm-up (unused_parameters)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = build_model()
        self.aux = torch.nn.Linear(16, 1)
        self.warmup = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.body(x)
        return out + 0.1 * self.aux(x) if self.warmup else out


def load_shard(step: int) -> None:
    """The training data is read shard by shard (LAB_DATA_DIR: through a FUSE mount of it, fuse_read); one shard is
    missing for the file-not-found fault."""
    data = Path(os.environ.get("LAB_DATA_DIR") or WORKDIR / "data")
    shard = data / f"shard-{RANK:02d}-{step:04d}.pt"
    if FAULT == "file_not_found" and fires(step):
        shard = data / f"shard-{RANK:02d}-missing.pt"
    with open(shard, "rb") as f:
        f.read(16)


def checkpoint(model: torch.nn.Module, step: int) -> None:
    enospc = FAULT.startswith("enospc_checkpoint") or FAULT == "fsize_limit"
    # ckpt_eacces: the driver made the job's checkpoint directory mode 0555 (another user's job made it)
    # ckpt_fsync: the driver mounted an ext4 on a loop device there (its image served by a FUSE daemon, or thin)
    target = WORKDIR / ("ckpt-small" if enospc else "ckpt-shared" if FAULT == "ckpt_eacces"
                        else "ckpt-loop" if FAULT == "ckpt_fsync" else "ckpt")
    target.mkdir(parents=True, exist_ok=True)
    state = model.state_dict()
    if enospc:
        # the optimizer state and EMA weights make the real checkpoint large
        state = {**state, "ema": torch.zeros(1 << 19), "optim": torch.zeros(1 << 19)}
    if FAULT == "ckpt_fsync":  # 12 MiB of optimizer state, more than the thin volume's backing store holds
        state = {**state, "optim": torch.zeros(3 << 20)}
    path = target / f"step-{step:04d}-rank{RANK}.pt"
    if FAULT == "fsize_limit":
        # what `ulimit -f 256` gives the job: files may not grow past 256 KiB (Python ignores SIGXFSZ: EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 10, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    if FAULT in ("enospc_checkpoint_fileobj", "ckpt_eacces", "fsize_limit"):
        with open(path, "wb") as f:  # as checkpoint libraries do (fsspec, Lightning): a Python file object
            torch.save(state, f)
    elif FAULT == "ckpt_fsync":
        with open(path, "wb") as f:  # a careful writer: the bytes are on the device before it goes on
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
    else:
        torch.save(state, path)
    log.info("saved checkpoint %s", path)


# tenth round: checkpoints and data written and read through the libraries jobs use beside torch.save (imported only
# for these faults). The optimizer state is random: TensorStore compresses zeros to nothing.
def _big_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {**model.state_dict(), "optim": torch.rand(1 << 20, generator=g)}  # 4 MiB


def library_save(model: torch.nn.Module, step: int) -> None:
    """Rank 0's final save through h5py, netCDF4 or orbax-checkpoint into the driver's 1 MiB tmpfs (ckpt-small)."""
    target = WORKDIR / "ckpt-small"
    target.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().numpy() for k, v in _big_state(model).items()}
    if FAULT == "h5_save":
        import h5py

        path = target / f"step-{step:04d}.h5"
        with h5py.File(path, "w") as f:
            for k, v in state.items():
                f.create_dataset(k, data=v)
    elif FAULT == "netcdf_save":
        import netCDF4

        path = target / f"eval-{step:04d}.nc"
        ds = netCDF4.Dataset(str(path), "w")
        ds.createDimension("sample", state["optim"].size)
        ds.createVariable("prediction", "f4", ("sample",))[:] = state["optim"]
        ds.close()
    else:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import orbax.checkpoint as ocp

        path = target / f"step-{step:04d}"
        ckptr = ocp.StandardCheckpointer()
        ckptr.save(path.absolute(), state)
        ckptr.wait_until_finished()
    log.info("saved checkpoint %s", path)


def library_step(model: torch.nn.Module, step: int) -> None:
    """The step-3 faults of the tenth round (every rank calls it; the barriers fix the order)."""
    out = WORKDIR / "out"
    out.mkdir(parents=True, exist_ok=True)
    if FAULT == "h5_lock":
        import h5py

        # rank 0 keeps the run's metrics file open for writing; rank 1 opens the same file for writing too
        path = out / "metrics.h5"
        held = h5py.File(path, "w") if RANK == 0 else None
        dist.barrier()
        if fires():
            log.info("step %d: appending metrics to %s", step, path)
            with h5py.File(path, "a") as f:
                f.create_dataset(f"rank{RANK}/step{step}", data=[1.0])
        dist.barrier()
        if held is not None:
            held.close()
    elif FAULT == "h5_truncated":
        import h5py

        path = out / f"step-{step:04d}.h5"
        if RANK == 0:
            with h5py.File(path, "w") as f:
                for k, v in _big_state(model).items():
                    f.create_dataset(k, data=v.detach().numpy())
            os.truncate(path, path.stat().st_size // 2)  # an interrupted copy
        dist.barrier()
        log.info("step %d: rolling back to %s", step, path)
        with h5py.File(path, "r") as f:
            model.load_state_dict({k: torch.from_numpy(f[k][()]) for k in model.state_dict()})
    elif FAULT == "netcdf_noclobber":
        import netCDF4

        path = out / f"eval-{step:04d}.nc"
        if fires():
            netCDF4.Dataset(str(path), "w").close()  # what the earlier run of the same experiment left there
            log.info("step %d: writing evaluation output %s", step, path)
            ds = netCDF4.Dataset(str(path), "w", clobber=False)
            ds.close()
        dist.barrier()
    elif FAULT == "orbax_exists":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        path = (out / "orbax" / f"step-{step:04d}").absolute()
        if fires():
            import orbax.checkpoint as ocp

            state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
            ckptr = ocp.StandardCheckpointer()
            ckptr.save(path, state)  # the earlier run of the same experiment, which left step 3's directory
            ckptr.wait_until_finished()
            log.info("step %d: saving checkpoint %s", step, path)
            ckptr.save(path, state)
            ckptr.wait_until_finished()
        dist.barrier()


def rollback(model: torch.nn.Module, step: int) -> None:
    """Saves a checkpoint and reads it straight back, as a job that rolls back after a loss spike does.

    The injected fault damages the checkpoint between the two, as an interrupted copy or a clean-up
    leaves one: ckpt_truncated cuts rank 0's torch.save file to half its size; ckpt_missing_shard saves
    a sharded checkpoint (torch.distributed.checkpoint, one file per rank) and loses rank 1's shard.
    """
    target = WORKDIR / "ckpt"
    target.mkdir(parents=True, exist_ok=True)
    if FAULT in ("ckpt_weights_only", "ckpt_size_mismatch"):
        import argparse

        path = target / f"step-{step:04d}.pt"
        if RANK == 0:
            if FAULT == "ckpt_weights_only":  # the run's arguments saved beside the weights, as many scripts do
                args = argparse.Namespace(lr=0.05, hidden=32, steps=STEPS)
                torch.save({"model": model.state_dict(), "step": step, "args": args}, path)
            else:  # a checkpoint of another configuration of the model (hidden size 64)
                torch.save({"model": build_model(hidden=64).state_dict(), "step": step}, path)
        dist.barrier()
        log.info("step %d: rolling back to %s", step, path)
        model.load_state_dict(torch.load(path)["model"])  # torch >= 2.6: weights_only=True by default
        return
    if FAULT == "ckpt_lfs_pointer":
        # the checkpoint came with a clone of the model repository made without `git lfs pull`: in its place, the
        # pointer file Git LFS leaves (its spec: version, oid, size lines)
        path = target / f"step-{step:04d}.pt"
        if RANK == 0:
            path.write_text("version https://git-lfs.github.com/spec/v1\n"
                            "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
                            "size 12345\n")
        dist.barrier()
        log.info("step %d: rolling back to %s", step, path)
        model.load_state_dict(torch.load(path, weights_only=True)["model"])
        return
    if FAULT == "ckpt_truncated":
        path = target / f"step-{step:04d}.pt"
        if RANK == 0:
            torch.save({"model": model.state_dict(), "step": step}, path)
            os.truncate(path, path.stat().st_size // 2)
        dist.barrier()
        log.info("step %d: rolling back to %s", step, path)
        model.load_state_dict(torch.load(path, weights_only=True)["model"])
        return
    import torch.distributed.checkpoint as dcp

    shards = target / f"step-{step:04d}"
    # every rank also keeps its own data-loader position, so every rank's shard file holds something
    state: dict[str, object] = {"model": model.state_dict(), f"loader.rank{RANK}": torch.tensor([step, RANK])}
    dcp.save(state, checkpoint_id=shards)
    dist.barrier()
    if RANK == 1:
        for f in shards.glob("__1_*.distcp"):
            f.unlink()
    dist.barrier()
    log.info("step %d: rolling back to %s", step, shards)
    dcp.load(state, checkpoint_id=shards)


def resume_node_local(model: DDP, step: int) -> None:
    """Each rank saves its state to its node-local directory and resumes from it (strict=True, the default). Rank 1's
    copy was saved from the DDP wrapper (`module.`-prefixed keys), the others' from the model inside it."""
    target = WORKDIR / "ckpt" / f"rank{RANK}"
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"step-{step:04d}.pt"
    torch.save(model.state_dict() if fires() else model.module.state_dict(), path)
    log.info("step %d: resuming from %s", step, path)
    model.module.load_state_dict(torch.load(path))


def pause(step: int) -> None:
    """Every rank waits at the step until the driver has acted on the job's node or partition (or 60 s)."""
    (WORKDIR / f"marker-rank{RANK}").write_text(str(os.getpid()))
    log.info("step %d: evaluating", step)
    deadline = time.monotonic() + 60
    while not (WORKDIR / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.2)


def lower_address_space() -> None:
    """What `ulimit -v` does, from inside: the address-space limit just above what the process maps now."""
    with open("/proc/self/status") as f:
        vm = next(int(ln.split()[1]) for ln in f if ln.startswith("VmSize:")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))


def lower_open_files() -> None:
    """What `ulimit -n` does, from inside: the open-file limit at the descriptors the process holds now.
    Under the file_descriptor sharing strategy every tensor a DataLoader worker hands over arrives as a descriptor
    (through a socket to the worker's resource sharer), and each tensor alive holds one, so the next batch cannot
    be received. (One free descriptor more, and the run depends on timing: a fresh run with two free completed.)"""
    held = len(os.listdir("/proc/self/fd")) - 1  # less the descriptor listdir itself held open
    resource.setrlimit(resource.RLIMIT_NOFILE, (held, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def cpu_limited_evaluation() -> None:
    """What `ulimit -t` (or a batch system's CPU-time limit) gives the rank: CPU seconds a little above what it has
    used; its evaluation then runs past them and the kernel sends SIGXCPU (default action: the process ends)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = math.ceil(used.ru_utime + used.ru_stime)
    resource.setrlimit(resource.RLIMIT_CPU, (spent + 1, resource.getrlimit(resource.RLIMIT_CPU)[1]))
    log.info("evaluating on the held-out set")
    acc = torch.zeros(64, 64)
    while True:  # a long evaluation; the limit ends it
        acc = (acc @ torch.randn(64, 64)).tanh()


def pids_limited_evaluation(ds: Dataset[tuple[torch.Tensor, torch.Tensor]]) -> None:
    """The rank joins the pids cgroup the driver made (LAB_PIDS_CGROUP) with a limit of the tasks it has now, as a
    container whose pids.max the job has reached, then starts an evaluation DataLoader with 2 workers."""
    cg = Path(os.environ["LAB_PIDS_CGROUP"])
    (cg / "cgroup.procs").write_text(str(os.getpid()))
    (cg / "pids.max").write_text((cg / "pids.current").read_text().strip())
    log.info("evaluating on the held-out set")
    for _ in DataLoader(ds, batch_size=4, num_workers=2):
        pass


def walk(node: dict[str, object], depth: int = 0) -> int:
    """Counts a config tree's leaves; a tree that contains itself never ends."""
    leaves = 0
    for v in node.values():
        leaves += walk(v, depth + 1) if isinstance(v, dict) else 1
    return leaves


def read_mapped_sample(step: int) -> int:
    """The dataset is memory-mapped; for the SIGBUS fault the file is truncated under the mapping first."""
    path = WORKDIR / "data" / f"shard-{RANK:02d}-{step:04d}.pt"
    with open(path, "r+b") as f:
        mm = mmap.mmap(f.fileno(), 0)
        if FAULT == "sigbus_mmap" and fires(step):
            os.truncate(path, 0)  # another process rewrote the shard
        return mm[len(mm) - 1]


def main() -> None:
    global FAULT
    if FAULT == "stall_before_init" and fires():
        logging.basicConfig(level=logging.INFO, stream=sys.stdout)
        log.info("resolving dataset location")
        while True:
            time.sleep(1)  # never reaches init_process_group; nothing records why
    if FAULT == "fail_first_attempt" and os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") != "0":
        FAULT = "none"  # the restarted attempt runs clean
    if FAULT == "exception_then_segv":  # the first attempt raises, the restarted one segfaults at the same step
        FAULT = "exception_every_attempt" if os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") == "0" else "segv_plain"
    logging.basicConfig(
        level=logging.INFO, stream=sys.stdout,
        format=f"%(asctime)s %(levelname)s [rank{RANK}] %(name)s: %(message)s",
    )
    if FAULT in ("segv_faulthandler", "abort"):
        faulthandler.enable()
    if FAULT == "nan_anomaly":
        torch.autograd.set_detect_anomaly(True)
    if PER_ATTEMPT_STORE and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
        # torchrun restarts the group in the same agent store: the first attempt's gloo addresses are still
        # there and the restarted ranks would dial them (Connection refused). A per-attempt key prefix, as a
        # script meant to survive --max-restarts does, keeps the attempts apart.
        agent = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), WORLD, is_master=False,
                              timeout=timedelta(seconds=PG_TIMEOUT))
        store = dist.PrefixStore(f"attempt-{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}", agent)
        dist.init_process_group("gloo", store=store, rank=RANK, world_size=WORLD,
                                timeout=timedelta(seconds=PG_TIMEOUT))
    else:
        # backend_nccl: the job's configuration asks for NCCL on a machine without GPUs
        dist.init_process_group("nccl" if FAULT == "backend_nccl" else "gloo", timeout=timedelta(seconds=PG_TIMEOUT))
    log.info("initialized gloo process group: rank %d of %d (local rank %d, pid %d)",
             RANK, WORLD, LOCAL_RANK, os.getpid())
    if FAULT == "mesh_mismatch":
        # a 2 x 2 (data x tensor parallel) layout configured for a job that got 3 processes
        from torch.distributed.device_mesh import init_device_mesh

        init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))

    ds = Shards()
    sampler = DistributedSampler(ds, num_replicas=WORLD, rank=RANK, shuffle=False)
    batch = 4
    if FAULT.startswith("dataloader_worker") and fires():
        # the first item of the fault step's batch on this rank
        ds.trap = list(iter(sampler))[FAULT_STEP * batch]
    workers = 2 if FAULT.startswith(("dataloader_worker", "dataloader_shm")) or FAULT == "nofile_limit" else 0
    if FAULT == "nofile_limit" and fires():
        import torch.multiprocessing as tmp

        tmp.set_sharing_strategy("file_descriptor")  # the workers inherit it; Linux's default is file_system
    # dataloader_worker_stall: the job bounds each batch's wait (DataLoader's timeout=, seconds)
    loader = DataLoader(ds, batch_size=batch, sampler=sampler, num_workers=workers,
                        timeout=5.0 if FAULT == "dataloader_worker_stall" else 0.0)
    # cuda_missing: the job's configuration says device "cuda"; this build of PyTorch has none
    model = DDP(build_model().to("cuda") if FAULT == "cuda_missing" and fires()
                else WithAuxHead() if FAULT == "unused_parameters" else build_model())
    log.info("DDP model ready; DataLoader with %d workers", workers)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step, (x, y) in enumerate(loader):
        if step >= STEPS:
            break
        x = x[:, :16]
        if FAULT == "thread_exception" and fires(step):
            import queue
            import threading

            samples: queue.Queue[bytes] = queue.Queue()

            def prefetch(shard: int, out: queue.Queue[bytes]) -> None:
                header = b"\x00\x07RECD"
                if not header.startswith(b"REC"):
                    raise ValueError(f"unexpected record header {header!r} in shard {shard}")
                out.put(header)

            threading.Thread(target=prefetch, args=(step, samples), name="prefetch", daemon=True).start()
            samples.get()  # waits for the prefetch thread forever
        if FAULT == "logged_exception_exit" and fires(step):
            try:
                json.loads((WORKDIR / "data" / f"shard-{RANK:02d}-{step:04d}.pt").read_bytes()[:8].hex() + "}")
            except ValueError:
                log.exception("step %d: cannot parse the shard index; giving up", step)
                sys.exit(1)
        if FAULT == "file_not_found":
            load_shard(step)
        if FAULT == "nofile_limit" and fires(step):
            lower_open_files()
        if FAULT == "module_missing" and step == FAULT_STEP:
            # the job's tokenizer extension lives in a node-local package directory; rank 1's was never synced
            sys.path.insert(0, str(WORKDIR / f"site-rank{RANK}"))
            import lab_fasttok  # type: ignore[import-not-found]

            x = lab_fasttok.normalize(x)
        if FAULT in ("ckpt_truncated", "ckpt_missing_shard", "ckpt_weights_only", "ckpt_size_mismatch",
                     "ckpt_lfs_pointer") and step == FAULT_STEP:
            rollback(model.module, step)
        if FAULT == "ckpt_dir_removed" and step == FAULT_STEP:
            # rank 0 makes the step's checkpoint directory; rank 1's clean-up of old checkpoints removes it before
            # rank 0 saves into it (the barriers fix the race's order)
            step_dir = WORKDIR / "ckpt" / f"step-{step:04d}"
            if RANK == 0:
                step_dir.mkdir(parents=True)
            dist.barrier()
            if fires():
                log.info("step %d: removing old checkpoints under %s", step, step_dir.parent)
                shutil.rmtree(step_dir.parent)
            dist.barrier()
            if RANK == 0:
                torch.save(model.module.state_dict(), step_dir / "model.pt")
                log.info("step %d: saved %s", step, step_dir / "model.pt")
        if FAULT in ("h5_lock", "h5_truncated", "netcdf_noclobber", "orbax_exists") and step == FAULT_STEP:
            library_step(model.module, step)
        if FAULT == "cpu_limit" and fires(step):
            cpu_limited_evaluation()
        if FAULT == "pids_limit" and fires(step):
            pids_limited_evaluation(ds)
        if FAULT == "unused_parameters" and step == FAULT_STEP:
            model.module.warmup = False  # the auxiliary loss ends with the warm-up; its head stays in the model
        if FAULT == "compile" and step == FAULT_STEP:
            # the job evaluates with a compiled copy of its model (Inductor's cache in the job's own directory).
            # Found on the way: the DDP-wrapped model itself, compiled, trained on here without a C++ compiler
            # (Dynamo leaves DDP's forward to DDP), so the compiled path is the evaluation's
            os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(WORKDIR / "inductor-cache"))
            evaluate = torch.compile(model.module)
            with torch.no_grad():
                log.info("step %d: eval loss %.4f", step, F.mse_loss(evaluate(x), y).item())
        if FAULT == "compile_one_rank" and fires(step):
            # only this rank's code path compiles (its own metric), with fullgraph=True: Dynamo refuses the
            # data-dependent branch instead of breaking the graph there
            @torch.compile(fullgraph=True)
            def clipped_error(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
                err = (pred - target).abs().mean()
                return err.clamp(max=1.0) if err.item() > 1.0 else err

            with torch.no_grad():
                log.info("step %d: eval error %.4f", step, clipped_error(model(x), y).item())
        if FAULT == "state_dict_prefix" and step == FAULT_STEP:
            resume_node_local(model, step)
        if FAULT == "filelock_timeout" and fires(step):
            from filelock import FileLock

            # the node's shared feature cache: its lock is held by another process (the driver, as a leftover of
            # an earlier job would) and the job waits for it 5 s
            lock = FileLock(str(WORKDIR / "cache" / "features.lock"), timeout=5)
            log.info("step %d: waiting for the feature cache lock", step)
            with lock:
                pass
        if FAULT == "stdout_broken_pipe" and fires(step):
            # the reader of the rank's stdout goes away (a log collector's pipe, a `| tee` that died): the rank's
            # stdout is now a pipe with no reader; Python ignores SIGPIPE, so the next print raises EPIPE
            r, w = os.pipe()
            sys.stdout.flush()
            os.dup2(w, 1)
            os.close(w)
            os.close(r)
            print(f"step {step}: {len(x)} samples", flush=True)
        if FAULT == "pause" and step == FAULT_STEP:
            pause(step)
        # ninth round: the fault ranks pause at the step while the driver acts under them (kills the FUSE daemon,
        # drops the rank's ports), then go on: read the next shard through the FUSE mount, save a checkpoint. For
        # the checkpoint every rank pauses, so that no peer waits in a collective (10 s) while the driver acts
        if (FAULT in ("fuse_read", "pause_rank") and fires(step)) or (FAULT == "ckpt_fsync" and step == FAULT_STEP):
            pause(step)
        if FAULT == "fuse_read":
            load_shard(step)
        if FAULT == "ckpt_fsync" and fires(step):
            checkpoint(model.module, step)
        if FAULT == "sigkill_external" and fires(step):
            (WORKDIR / f"marker-rank{RANK}").write_text(str(os.getpid()))
            log.info("step %d: waiting for the next batch", step)
            time.sleep(600)  # the driver kill -9s this process now
        if FAULT in ("hang_collective", "hang_monitored_barrier") and fires(step):
            log.info("step %d: fetching remote sample index", step)
            while True:
                time.sleep(1)  # stuck (a stalled read, a deadlock); nothing records why
        if FAULT == "hang_monitored_barrier" and step == FAULT_STEP:
            dist.monitored_barrier(timeout=timedelta(seconds=PG_TIMEOUT), wait_all_ranks=True)
        if FAULT in ("segv_faulthandler", "segv_plain") and fires(step):
            ctypes.string_at(0)
        if FAULT == "abort" and fires(step):
            os.abort()
        if FAULT == "sigbus_mmap":
            read_mapped_sample(step)
        if FAULT == "os_exit" and fires(step):
            os._exit(3)
        if FAULT == "os_exit_torn" and fires(step):
            # torchelastic's error file left empty, as a writer killed between open and write leaves it (seen
            # in CI: the agent read a peer's error.json mid-write); then gone without a word.
            with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w"):
                pass
            os._exit(3)
        if FAULT == "early_exit" and fires(step):
            log.info("step %d: done", step)
            # exit 0 as a clean finish does (teardown): returning into the interpreter's shutdown with gloo's
            # threads still talking to the peers at times ends in `terminate called without an active exception`
            # and SIGABRT instead (seen in a full-tier run here: a crash, not the clean exit this fault is)
            teardown()
        if FAULT == "key_error" and fires(step):
            schedule = {"lr": 0.05, "warmup": 2}
            log.info("step %d: warmup for %d steps", step, schedule["warmup_steps"])
        if FAULT == "recursion_error" and fires(step):
            tree: dict[str, object] = {"model": {"width": 32}}
            tree["model"]["parent"] = tree  # type: ignore[index]
            walk(tree)
        if FAULT == "memory_error_rlimit" and fires(step):
            lower_address_space()
            buf = bytearray(2 << 30)
            del buf
        if FAULT == "alloc_failure_rlimit" and fires(step):
            lower_address_space()
            big = torch.empty(2 << 30, dtype=torch.uint8)
            del big
        if FAULT.startswith("mismatched_collective") and step == FAULT_STEP:
            group = None
            if FAULT == "mismatched_collective_debug":
                dist.set_debug_level(dist.DebugLevel.DETAIL)  # the new group gets the fingerprint check
                group = dist.new_group(backend="gloo")
            metrics = torch.zeros(4 if fires() else 2)
            dist.all_reduce(metrics, group=group)
        if FAULT in ("memory_leak", "slurm_oom") and fires(step):
            hog = []
            while True:  # a leak: every step keeps its activations
                if len(hog) < 192:  # stop at 3 GiB; the limit is far below
                    hog.append(torch.ones(16 << 20, dtype=torch.uint8))
                time.sleep(0.05)
        if FAULT in ("scancel", "time_limit") and step == FAULT_STEP:
            log.info("step %d: evaluating", step)
            (WORKDIR / f"marker-rank{RANK}").write_text(str(os.getpid()))
            time.sleep(600)  # a long evaluation; the scheduler ends the job here
        out = model(x)
        if FAULT in ("value_error", "fail_first_attempt", "exception_every_attempt") and fires(step):
            y = y[:-1]  # a collate bug drops one label
        if FAULT == "assertion_error" and fires(step):
            labels = y[:-1]
            assert out.shape == labels.shape, f"batch shape mismatch: {tuple(out.shape)} vs {tuple(labels.shape)}"
        if FAULT == "nan_guard" and fires(step):
            x = x.clone()
            x[0, 0] = math.inf
            out = model(x)
        if FAULT == "nan_anomaly" and fires(step):
            out = out + torch.sqrt(out.detach().sum() * 0 - 1 + out.sum() * 0)
        if FAULT == "two_rank_exception" and fires(step):
            raise RuntimeError(f"mismatched vocabulary size in batch {step}: expected 32000 tokens, got 32001")
        bce = FAULT in ("value_error", "fail_first_attempt", "exception_every_attempt")
        loss = F.binary_cross_entropy(out.sigmoid(), y.sigmoid()) if bce else F.mse_loss(out, y)
        if FAULT == "nan_guard":
            global_loss = loss.detach().clone()
            dist.all_reduce(global_loss)
            if not torch.isfinite(global_loss):
                log.error("step %d: loss is nan (global loss %s), stopping", step, global_loss.item())
                raise FloatingPointError(f"loss is nan at step {step}")
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
        if FAULT == "completed_warnings" and step == FAULT_STEP:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available; disabling", UserWarning,
                          stacklevel=1)
            try:
                load_shard(10_000)
            except FileNotFoundError:
                log.exception("step %d: prefetch of the next shard failed; will read it synchronously", step)
    final_save = FAULT.startswith("enospc_checkpoint") or FAULT in ("completed_warnings", "ckpt_eacces", "fsize_limit")
    if final_save and RANK == 0:
        checkpoint(model.module, STEPS)
    if FAULT in ("h5_save", "netcdf_save", "orbax_save") and RANK == 0:
        library_save(model.module, STEPS)
    dist.barrier()
    log.info("training finished after %d steps", STEPS)
    teardown()


def teardown() -> None:
    """Leave after a clean run without gloo's destroy_process_group.

    Seen in full-suite runs: after the final barrier and every rank's last log line, two ranks stayed in
    destroy_process_group forever (holding the GIL, so no timeout thread could help) once rank 0 had left,
    and torchrun waited past the lab's limit. The run is over by then: flush and exit 0, as torchrun's
    ranks would have.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    # torchelastic's @record writes error.json for torchrun's summary, and (a side effect worth knowing)
    # enables faulthandler; the plain-segfault fault runs without it, as a script without @record does.
    (main if FAULT == "segv_plain" else record(main))()
