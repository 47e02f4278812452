#!/usr/bin/env python3
# Line shapes are %-templates kept as data and filled millions of times; one style throughout.
# ruff: noqa: UP031
"""Write a large synthetic evidence bundle for firstfault's speed benchmark.

    python bench/gen_bundle.py OUTDIR --nodes 256 --ranks-per-node 8 --target-gb 2.0 [--seed 1]

The bundle follows the evidence-bundle format v1: a Slurm job on node-001..node-NNN
with one application log per rank (Megatron-style step lines, NCCL INFO start-up,
occasional benign warnings), one syslog-style kern.log per node (systemd, audit,
mlx5 and slurmd noise) and an sacct file. ONE hard fault is buried mid-window:
an Xid 79 ("GPU has fallen off the bus") on one node, NCCL remote errors on the
ring/tree neighbours of the lost rank seconds later, c10d watchdog timeouts on
every surviving rank ten minutes later, and sacct says FAILED.

The expected verdict is attributed_domain=hardware, root_cause.category
gpu.fallen_off_bus on the faulted node; the generator prints which node that is.

Speed matters more than variety: the step lines of all ranks share one body per
iteration (Megatron reduces the loss before logging it, so real ranks agree too),
and only the timestamp prefix is built per line, from precomputed strings.
Each rank gets its own Random seeded from (seed, rank), so output does not
depend on the number of worker processes.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

JOB_ID = "4242"
JOB_NAME = "llama-pretrain"
T0 = datetime(2026, 11, 2, 10, 0, 0, tzinfo=UTC)
NCCL_TIMEOUT_S = 600  # PyTorch's default NCCL process-group timeout
TRAIN_START_S = 95.0  # model build, checkpoint load and NCCL init before step 1
KERNEL_SHARE = 0.08  # fraction of the target bytes spent on kernel logs
START_ITER = 12000  # resumed from a checkpoint: realistic, and iteration numbers are wide
TRAIN_ITERS = 250000
GBS = 1024
SEQ_LEN = 4096
# HGX H100 GPU bus numbers, in GPU index order.
GPU_BUS = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
HCA_BUS = ("0c", "1f", "47", "4e", "8d", "94", "c4", "d2")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Plan:
    """Everything every worker needs; built once in the parent, inherited by fork."""

    out: str
    nodes: int
    rpn: int
    seed: int
    window_s: int
    fault_s: float  # seconds from T0 to the Xid 79
    fault_node: int  # 0-based node index
    fault_gpu: int
    n_steps: int
    kern_lines: int  # noise lines per node
    peers: frozenset[int]  # ranks that see NCCL remote errors
    job_end_s: float
    kern_repeat: bool = False  # the same kernel noise lines on every node (only hosts and times differ)


# Shared, read-only tables (filled by _prepare before the workers fork).
SEC: list[str] = []  # "2026-11-02 10:00:05" for each second of the window (+ slack)
SYSLOG_SEC: list[str] = []  # "Nov  2 10:00:05" for each second
MS: list[str] = [",%03d" % i for i in range(1000)]
STEP_SEC: list[int] = []
STEP_MS: list[int] = []
STEP_BODY: list[str] = []
PLAN: Plan | None = None


def node_name(i: int) -> str:
    return "node-%03d" % (i + 1)


def _prepare_time_tables(seconds: int) -> None:
    SEC.clear()
    SYSLOG_SEC.clear()
    for s in range(seconds):
        t = T0 + timedelta(seconds=s)
        SEC.append(t.strftime("%Y-%m-%d %H:%M:%S"))
        SYSLOG_SEC.append("%s %2d %s" % (MONTHS[t.month - 1], t.day, t.strftime("%H:%M:%S")))


def _step_body(it: int, ms_per_it: float, lr: float, loss: float, gnorm: float, tflops: float) -> str:
    return (
        " INFO iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f"
        " | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size: %5d"
        " | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0"
        " | number of nan iterations:   0 |\n" % (it, TRAIN_ITERS, it * GBS, ms_per_it, tflops, lr, GBS, loss, gnorm)
    )


def _prepare_steps(n_steps: int, fault_s: float, seed: int) -> None:
    """Per-iteration bodies and times shared by all ranks."""
    rng = random.Random(seed * 7919 + 17)
    STEP_SEC.clear()
    STEP_MS.clear()
    STEP_BODY.clear()
    span = fault_s - TRAIN_START_S - 2.0
    dt = span / n_steps
    for k in range(n_steps):
        t = TRAIN_START_S + k * dt
        sec = int(t)
        STEP_SEC.append(sec)
        STEP_MS.append(int((t - sec) * 1000))
        it = START_ITER + k + 1
        frac = it / TRAIN_ITERS
        lr = 3e-5 + 0.5 * (3e-4 - 3e-5) * (1 + math.cos(math.pi * frac))
        loss = 1.85 + 0.9 * math.exp(-it / 40000.0) + rng.gauss(0, 0.03)
        STEP_BODY.append(
            _step_body(
                it,
                dt * 1000 * (1 + rng.gauss(0, 0.01)),
                lr,
                loss,
                abs(rng.gauss(0.9, 0.08)),
                412.0 + rng.gauss(0, 3.0),
            )
        )


def _avg_step_len() -> float:
    return (sum(len(b) for b in STEP_BODY) / len(STEP_BODY)) + 23  # + timestamp prefix


# ---------------------------------------------------------------- application logs


def _glog(t: float) -> str:
    """c10d glog header time: E<MMDD> HH:MM:SS.nnnnnnnnn."""
    d = T0 + timedelta(seconds=t)
    return "E%02d%02d %s.%09d" % (d.month, d.day, d.strftime("%H:%M:%S"), int((t % 1) * 1e9))


def _py_ts(t: float) -> str:
    s = int(t)
    return SEC[s] + MS[int((t - s) * 1000)]


def _nccl_init(
    rank: int, world: int, nnodes: int, rpn: int, host: str, pid: int, rng: random.Random, t: float
) -> list[str]:
    local = rank % rpn
    tid = pid + 54 + local
    p = "%s:%d:%d [%d] NCCL INFO " % (host, pid, pid, local)
    q = "%s:%d:%d [%d] NCCL INFO " % (host, pid, tid, local)
    ip = "10.%d.%d.%d" % (rank // rpn // 250, rank // rpn % 250, 10 + local)
    comm = "0x%x" % rng.getrandbits(44)
    nxt = (rank + 1) % world
    prv = (rank - 1) % world
    out = [
        _py_ts(t)
        + " INFO initializing torch distributed with world size %d, rank %d, local rank %d\n" % (world, rank, local),
        p + "Bootstrap : Using ib0:%s<0>\n" % ip,
        p + "cudaDriverVersion 12040\n",
        p + "NCCL_IB_TIMEOUT set by environment to 22.\n",
        p + "NCCL_IB_GID_INDEX set by environment to 3.\n",
    ]
    if rank == 0:
        out.append("NCCL version 2.21.5+cuda12.4\n")
    out += [
        q + "Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n",
        q + "P2P plugin v8 IBext_v8\n",
        q + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB "
        "[5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB [RO]; OOB ib0:%s<0>\n" % ip,
        q + "Using non-device net plugin version 0\n",
        q + "Using network IBext_v8\n",
        q + "ncclCommInitRank comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 "
        "commId 0x4f1c2a9d3e8b7f61 - Init START\n" % (comm, rank, world, local, local, GPU_BUS[local]),
        q + "Setting affinity for GPU %d to %s\n" % (local, "ffffffff,00000000" if local >= rpn // 2 else "ffffffff"),
        q + "NVLS multicast support is available on dev %d\n" % local,
        q
        + "comm %s rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0\n"
        % (comm, rank, world, nnodes, rpn, local),
        q + "NVLS Head  0:  0  8 16 24\n",
        q
        + "Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d [2] %d/-1/-1->%d->%d [3] %d/-1/-1->%d->%d\n"
        % (nxt, rank, prv, nxt, rank, prv, nxt, rank, prv, nxt, rank, prv),
        q + "P2P Chunksize set to 131072\n",
    ]
    if rank == 0:
        ring = " ".join("%4d" % r for r in range(min(world, 32)))
        for ch in range(0, 32, 4):
            out.append(q + "Channel %02d/32 :  %s\n" % (ch, ring))
    for ch in range(0, 32, 2):
        out.append(q + "Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read\n" % (ch, rank, local, nxt, nxt % rpn))
    out += [
        q + "Connected all rings\n",
        q + "Connected all trees\n",
        q + "NVLS comm %s headRank 0 nHeads 4 buffSize 1048576 memSize 2097152 nvlsPerRankSize 201326592 "
        "nvlsTotalSize 805306368\n" % comm,
        q + "Connected NVLS\n",
        q + "threadThresholds 8/8/64 | 16384/8/64 | 512 | 512\n",
        q + "32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer\n",
        q + "TUNER/Plugin: Plugin load returned 11 : libnccl-net.so: cannot open shared object file: No such "
        "file or directory : when loading libnccl-tuner.so\n",
        q + "TUNER/Plugin: Using internal tuner plugin.\n",
        q + "ncclCommInitRank comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 "
        "commId 0x4f1c2a9d3e8b7f61 - Init COMPLETE\n" % (comm, rank, world, local, local, GPU_BUS[local]),
        q + "Init timings: rank %d nranks %d total %.2f (kernels 0.21, alloc 0.11, bootstrap %.2f, "
        "allgathers 0.02, topo 0.41, graphs 0.03, connections 0.88, rest 0.02)\n"
        % (rank, world, 1.7 + rng.random(), 0.5 + rng.random() * 0.3),
    ]
    return out


BENIGN = (
    " WARNING [megatron.core.datasets] shard %05d read slow: %.1f s, retrying from page cache\n",
    " WARNING [torch.utils.data] DataLoader worker %d is slow to return a batch (%.1f s)\n",
    " WARNING [megatron.training] straggler detector: rank is %.1f%% slower than the median (iteration %d)\n",
    " WARNING [nvidia_resiliency_ext] heartbeat to rank monitor took %.1f ms (iteration %d)\n",
)
PYWARN = (
    "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:464: UserWarning: "
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "In version 2.4 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
    "you can pass use_reentrant=True. Refer to docs for more details on the differences "
    "between the two variants.\n"
    "  return fn(*args, **kwargs)\n"
)


def _benign(rng: random.Random, k: int) -> str:
    i = rng.randrange(len(BENIGN))
    if i == 0:
        return BENIGN[0] % (rng.randrange(100000), 1.0 + rng.random() * 3)
    if i == 1:
        return BENIGN[1] % (rng.randrange(8), 2.0 + rng.random() * 5)
    return BENIGN[i] % (5.0 + rng.random() * 10, START_ITER + k)


def _watchdog_block(rank: int, t: float, seq: int) -> list[str]:
    g = "[rank%d]:[%s " % (rank, _glog(t))
    work = (
        "WorkNCCL(SeqNum=%d, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, NumelOut=443687168, "
        "Timeout(ms)=%d) ran for %d milliseconds before timing out."
        % (seq, NCCL_TIMEOUT_S * 1000, NCCL_TIMEOUT_S * 1000 + 60 + rank % 40)
    )
    pg = "[PG ID 0 PG GUID 0(default_pg) Rank %d]" % rank
    return [
        g + "ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective operation timeout: %s\n" % (rank, work),
        g + "ProcessGroupNCCL.cpp:2268] %s  failure detected by watchdog at work sequence id: %d PG status: "
        "last enqueued work: %d, last completed work: %d\n" % (pg, seq, seq + 2, seq - 1),
        g + "ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because "
        "FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero "
        "value.\n",
        g + "ProcessGroupNCCL.cpp:684] [Rank %d] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete "
        "data.\n" % rank,
        g + "ProcessGroupNCCL.cpp:698] [Rank %d] To avoid data inconsistency, we are taking the entire process "
        "down.\n" % rank,
        g + "ProcessGroupNCCL.cpp:1577] %s Process group watchdog thread terminated with exception: [Rank %d] "
        "Watchdog caught collective operation timeout: %s\n" % (pg, rank, work),
        "Exception raised from checkTimeout at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:634 (most recent call first):\n",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c2b0e7446 in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n",
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        "std::ratio<1l, 1000l> > >) + 0x282 (0x7f3be1e3a772 in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n",
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3be1e41bb3 in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n",
        "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7f3be1e4361d in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n",
        "\n",
        "terminate called after throwing an instance of 'c10::DistBackendError'\n",
        "  what():  %s Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught "
        "collective operation timeout: %s\n" % (pg, rank, work),
    ]


def _remote_error_block(
    rank: int,
    host: str,
    pid: int,
    local: int,
    t: float,
    peer_host: str,
    peer_ip: str,
    iteration: int,
    median_s: float,
) -> list[str]:
    tid = pid + 61
    w = "%s:%d:%d [%d] " % (host, pid, tid, local)
    return [
        # A stamped line first, so the unstamped NCCL lines below are placed after the fault.
        _py_ts(t - 0.4)
        + " WARNING [megatron.training] iteration %d running for %.1f s (median %.1f s)\n"
        % (iteration, 2 * median_s + 3.0 + (t % 1), median_s),
        w
        + "misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer %s<%d>\n"
        % (peer_host, 40000 + local * 17),
        w + "NCCL INFO misc/socket.cc:546 -> 6\n",
        w + "NCCL INFO transport/net_ib.cc:1091 -> 6\n",
        w + "NCCL INFO transport/net.cc:1034 -> 6\n",
        w + "NCCL INFO proxy.cc:694 -> 6\n",
        w + "proxy.cc:1119 NCCL WARN [Proxy Service %d] Failed to execute operation Connect from rank %d, "
        "retcode 6\n" % (rank, rank),
        w
        + "misc/socket.cc:518 NCCL WARN Net : Call to recv from %s<%d> failed : Connection reset by peer\n"
        % (peer_ip, 53000 + local),
        w + "NCCL INFO proxy.cc:874 -> 6 [Progress Thread]\n",
    ]


def _fault_rank_block(rank: int, host: str, pid: int, local: int, t: float) -> list[str]:
    w = "%s:%d:%d [%d] " % (host, pid, pid + 58, local)
    g = "[rank%d]:[%s " % (rank, _glog(t + 0.9))
    pg = "[PG ID 0 PG GUID 0(default_pg) Rank %d]" % rank
    msg = (
        "CUDA error: unknown error\nCUDA kernel errors might be asynchronously reported at some other API "
        "call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
        "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
    )
    return [
        w + "include/alloc.h:125 NCCL WARN Cuda failure 999 'unknown error'\n",
        w + "NCCL INFO transport/p2p.cc:275 -> 1\n",
        w + "NCCL INFO proxy.cc:1405 -> 1\n",
        g + "ProcessGroupNCCL.cpp:1577] %s Process group watchdog thread terminated with exception: %s" % (pg, msg),
        "Exception raised from c10_cuda_check_implementation at "
        "/opt/pytorch/pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):\n",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c2b0e7446 in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n",
        "frame #1: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) "
        "+ 0x118 (0x7f3c2b13c5a8 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10_cuda.so)\n",
        "\n",
        "terminate called after throwing an instance of 'c10::DistBackendError'\n",
        "  what():  %s Process group watchdog thread terminated with exception: %s" % (pg, msg),
    ]


def write_rank(rank: int) -> int:
    plan = PLAN
    assert plan is not None
    rng = random.Random(plan.seed * 1000003 + rank)
    world = plan.nodes * plan.rpn
    node = rank // plan.rpn
    local = rank % plan.rpn
    host = node_name(node)
    pid = 20000 + rng.randrange(40000)
    fault_rank = plan.fault_node * plan.rpn + plan.fault_gpu
    off = rng.randrange(0, 250)  # this rank's fixed lag behind the logging rank, in ms

    parts: list[str] = [
        _py_ts(1.0 + local * 0.01) + " INFO Starting pretrain (Megatron-LM core 0.9.0, torch 2.5.1, NCCL 2.21.5)\n"
    ]
    parts += _nccl_init(rank, world, plan.nodes, plan.rpn, host, pid, rng, 30.0 + rng.random() * 5)
    parts.append(_py_ts(60.0) + " INFO loading checkpoint from /lustre/fsw/llama/ckpt at iteration %d\n" % START_ITER)
    parts.append(
        _py_ts(88.0 + rng.random()) + " INFO   successfully loaded checkpoint from "
        "/lustre/fsw/llama/ckpt [ t %d/8, p %d/4 ] at iteration %d\n" % (local + 1, node % 4 + 1, START_ITER)
    )
    parts.append(PYWARN)

    # Rare extras keyed by step index; cheap to look up, cheap to skip.
    extras: dict[int, str] = {}
    n = plan.n_steps
    for _ in range(max(1, n // 400)):
        k = rng.randrange(n)
        extras[k] = extras.get(k, "") + "\0" + _benign(rng, k)

    sec_t, ms_t, body_t = SEC, MS, STEP_BODY
    ssec, sms = STEP_SEC, STEP_MS
    mem_every, ckpt_every = 250, 1000
    chunk: list[str] = []
    path = os.path.join(plan.out, "app", "rank-%d.log" % rank)
    written = 0
    with open(path, "w", encoding="ascii", buffering=1 << 20) as f:
        f.write("".join(parts))
        written += sum(len(p) for p in parts)
        for k in range(n):
            s = ssec[k]
            ms = sms[k] + off
            if ms >= 1000:
                s += 1
                ms -= 1000
            ts = sec_t[s] + ms_t[ms]
            chunk.append(ts)
            chunk.append(body_t[k])
            it = START_ITER + k + 1
            if it % mem_every == 0:
                chunk.append(
                    ts + " INFO [Rank %d] (after %d iterations) memory (MB) | allocated: %.1f | max "
                    "allocated: %.1f | reserved: 45012.0 | max reserved: 45012.0\n"
                    % (rank, it, 21345.2 + local, 40211.9 + local)
                )
            if it % ckpt_every == 0:
                chunk.append(
                    ts + " INFO saving checkpoint at iteration %8d to /lustre/fsw/llama/ckpt in "
                    "torch_dist format\n" % it
                )
                chunk.append(
                    ts + " INFO   successfully saved checkpoint from iteration %8d to "
                    "/lustre/fsw/llama/ckpt [ t %d/8, p %d/4 ]\n" % (it, local + 1, node % 4 + 1)
                )
            if k in extras:
                for e in extras[k].split("\0")[1:]:
                    chunk.append(ts + e)
            if len(chunk) >= 4096:
                data = "".join(chunk)
                written += len(data)
                f.write(data)
                chunk.clear()
        tail: list[str] = []
        seq = 2 * (START_ITER + n) + 7
        if rank == fault_rank:
            tail += _fault_rank_block(rank, host, pid, local, plan.fault_s + 0.3 + rng.random())
        else:
            if rank in plan.peers:
                fh = node_name(plan.fault_node)
                fip = "10.%d.%d.%d" % (plan.fault_node // 250, plan.fault_node % 250, 10 + plan.fault_gpu)
                tail += _remote_error_block(
                    rank,
                    host,
                    pid,
                    local,
                    plan.fault_s + 3.0 + rng.random() * 5,
                    fh,
                    fip,
                    START_ITER + n + 1,
                    (plan.fault_s - TRAIN_START_S) / n,
                )
            tail += _watchdog_block(rank, plan.fault_s + NCCL_TIMEOUT_S + 0.5 + rng.random() * 2, seq)
        data = "".join(chunk) + "".join(tail)
        written += len(data)
        f.write(data)
    return written


# ---------------------------------------------------------------- kernel logs

KERN_NOISE = (
    "%s %s systemd[1]: Started Session %d of User root.\n",
    "%s %s systemd[1]: session-%d.scope: Deactivated successfully.\n",
    "%s %s kernel: [%5d.%06d] audit: type=1130 audit(%d.%03d:%d): pid=1 uid=0 auid=4294967295 ses=4294967295 "
    'subj=unconfined msg=\'unit=sysstat-collect comm="systemd" exe="/usr/lib/systemd/systemd" hostname=? '
    "addr=? terminal=? res=success'\n",
    '%s %s kernel: [%5d.%06d] audit: type=1400 audit(%d.%03d:%d): apparmor="ALLOWED" operation="open" '
    'profile="nvidia-persistenced" name="/proc/driver/nvidia/gpus/" pid=%d comm="nvidia-persistenc" '
    'requested_mask="r" denied_mask="r" fsuid=0 ouid=0\n',
    "%s %s kernel: [%5d.%06d] mlx5_core 0000:%s:00.0: mlx5_cmd_out_err:838:(pid %d): ACCESS_REG(0x805) "
    "op_mod(0x1) failed, status bad parameter(0x3), syndrome (0x15c356), err(-22)\n",
    "%s %s CRON[%d]: (root) CMD (/usr/sbin/nhc -t 60 >/dev/null 2>&1)\n",
    "%s %s chronyd[1187]: Selected source 10.0.0.1 (ntp1.cluster.internal)\n",
    "%s %s sshd[%d]: Accepted publickey for slurm from 10.0.0.2 port %d ssh2: ED25519 "
    "SHA256:Xb2kP7wq1mK3r9sT0uV4yZ6aB8cD1eF2gH3iJ4kL5mN\n",
    "%s %s systemd-logind[1344]: New session %d of user root.\n",
    '%s %s dcgm-exporter[2211]: time="%s" level=info msg="Collecting metrics" gpus=8 fields=42\n',
)
# Corrected PCIe errors a root port reports over and over on every node of a fleet, in the kernel's AER wording
# (the four lines as in GSConnect#1052 / pop-os/pop#751); corrected errors are noise, never a cause, and each
# line holds a word a user greps for ("AER", "error"). Written with kern_repeat only, after every 8th noise line.
KERN_AER_CORRECTED = (
    "%s %s kernel: [%5d.%06d] pcieport 0000:00:1c.5: AER: Corrected error received: 0000:00:1c.5\n"
    "%s %s kernel: [%5d.%06d] pcieport 0000:00:1c.5: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
    "(Receiver ID)\n"
    "%s %s kernel: [%5d.%06d] pcieport 0000:00:1c.5: AER:   device [8086:9d15] error status/mask=00000001/00002000\n"
    "%s %s kernel: [%5d.%06d] pcieport 0000:00:1c.5: AER:    [ 0] RxErr                  (First)\n"
)


def _kern_start(host: str, stamp: str) -> list[str]:
    out = []
    out.append(
        "%s %s slurmd[2345]: slurmd: launch task StepId=%s.0 request from UID:1000 GID:1000 "
        "HOST:10.0.0.1 PORT:47812\n" % (stamp, host, JOB_ID)
    )
    return out


def _xid79_block(host: str, stamp: str, up: float, gpu: int) -> list[str]:
    b = GPU_BUS[gpu]
    u = "[%5d.%06d]" % (int(up), int((up % 1) * 1e6))
    k = "%s %s kernel: %s " % (stamp, host, u)
    return [
        k + "NVRM: GPU at PCI:0000:%s:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08%d\n" % (b, gpu),
        k + "NVRM: GPU Board Serial Number: 16537230527%02d\n" % gpu,
        k + "NVRM: Xid (PCI:0000:%s:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n" % b,
        k + "NVRM: GPU 0000:%s:00.0: GPU has fallen off the bus.\n" % b,
        k + "NVRM: GPU 0000:%s:00.0: GPU serial number is 16537230527%02d.\n" % (b, gpu),
        k + "NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 79.\n",
        k + "NVRM: _threadNodeCheckTimeout: API_GPU_ATTACHED_SANITY_CHECK failed!\n",
    ]


def _step_cancelled(host: str, t: int) -> str:
    return "%s %s slurmstepd[%d]: error: *** STEP %s.0 ON %s CANCELLED AT %s ***\n" % (
        SYSLOG_SEC[t],
        host,
        2400,
        JOB_ID,
        host,
        (T0 + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S"),
    )


def write_node(ni: int) -> int:
    plan = PLAN
    assert plan is not None
    rng = random.Random(plan.seed * 999331 + 7 * ni + 3)
    host = node_name(ni)
    boot = 5000.0 + rng.random() * 200000  # uptime at T0
    epoch0 = int(T0.timestamp())
    d = os.path.join(plan.out, "nodes", host)
    os.makedirs(d, exist_ok=True)
    lines = _kern_start(host, SYSLOG_SEC[2])
    n = plan.kern_lines
    dt = (plan.window_s - 10) / max(n, 1)
    faulted = ni == plan.fault_node
    fault_done = not faulted
    sess = 4000 + rng.randrange(1000)
    serial = rng.randrange(1000, 9000)
    # kern_repeat: every node prints the same lines (counters and template order do not depend on the node).
    rot = 0 if plan.kern_repeat else ni
    if plan.kern_repeat:
        sess, serial = 4500, 5000
    nn = len(KERN_NOISE)
    syslog = SYSLOG_SEC
    end = int(plan.job_end_s) + 1
    end_done = False
    for j in range(n):
        t = 5.0 + j * dt
        if not fault_done and t >= plan.fault_s:
            fault_done = True
            lines += _xid79_block(host, syslog[int(plan.fault_s)], boot + plan.fault_s, plan.fault_gpu)
        if not end_done and t >= end:
            end_done = True
            lines.append(_step_cancelled(host, end))
        st = syslog[int(t)]
        up = boot + t
        upi = int(up)
        upu = int((up - upi) * 1e6)
        i = (j * 7 + rot) % nn  # rotate through templates without per-line random calls
        serial += 1
        if plan.kern_repeat and j % 8 == 7:
            lines.append(KERN_AER_CORRECTED % ((st, host, upi, upu) * 4))
        if i == 0 or i == 1 or i == 8:
            sess += i == 0
            lines.append(KERN_NOISE[i] % (st, host, sess))
        elif i == 2:
            lines.append(KERN_NOISE[2] % (st, host, upi, upu, epoch0 + int(t), j % 1000, serial))
        elif i == 3:
            lines.append(KERN_NOISE[3] % (st, host, upi, upu, epoch0 + int(t), j % 1000, serial, 1500 + j % 300))
        elif i == 4:
            lines.append(KERN_NOISE[4] % (st, host, upi, upu, HCA_BUS[j % 8], 268000 + j % 997))
        elif i == 5:
            lines.append(KERN_NOISE[5] % (st, host, 100000 + serial))
        elif i == 6:
            lines.append(KERN_NOISE[6] % (st, host))
        elif i == 7:
            lines.append(KERN_NOISE[7] % (st, host, 100000 + serial, 40000 + j % 20000))
        else:
            lines.append(KERN_NOISE[9] % (st, host, (T0 + timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%SZ")))
    if not fault_done:
        lines += _xid79_block(host, syslog[int(plan.fault_s)], boot + plan.fault_s, plan.fault_gpu)
    if not end_done:
        lines.append(_step_cancelled(host, end))
    data = "".join(lines)
    with open(os.path.join(d, "kern.log"), "w", encoding="ascii") as f:
        f.write(data)
    return len(data)


# ---------------------------------------------------------------- bundle files


def _ranges(plan: Plan) -> dict[str, str]:
    return {node_name(i): "%d-%d" % (i * plan.rpn, i * plan.rpn + plan.rpn - 1) for i in range(plan.nodes)}


def _iso(t: float) -> str:
    return (T0 + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_meta(plan: Plan) -> int:
    nodes = [node_name(i) for i in range(plan.nodes)]
    y = [
        "apiVersion: firstfault/v1",
        "workload:",
        '  id: "%s"' % JOB_ID,
        "  attempt: 0",
        "  name: %s" % JOB_NAME,
        "  scheduler: slurm",
        "  window:",
        '    start: "%s"' % _iso(0),
        '    end: "%s"' % _iso(plan.window_s),
        "  nodes: [%s]" % ", ".join(nodes),
        "  ranks:",
    ]
    y += ['    %s: "%s"' % (k, v) for k, v in _ranges(plan).items()]
    y.append("  gpus:")
    gm = ", ".join('"0000:%s:00": %d' % (b, i) for i, b in enumerate(GPU_BUS[: plan.rpn]))
    y += ["    %s: {%s}" % (n, gm) for n in nodes]
    y += [
        "  timezone: UTC",
        "sources:",
        "  - kind: kernel",
        '    path: "nodes/{node}/kern.log"',
        "  - kind: application",
        '    path: "app/rank-{rank}.log"',
        "  - kind: scheduler",
        '    path: "scheduler/sacct.txt"',
        "    format: sacct",
    ]
    yaml_text = "\n".join(y) + "\n"
    with open(os.path.join(plan.out, "workload.yaml"), "w", encoding="ascii") as f:
        f.write(yaml_text)
    nodelist = "node-[001-%03d]" % plan.nodes if plan.nodes > 1 else "node-001"
    start = _iso(0)[:-1]
    end = _iso(plan.job_end_s)[:-1]
    rows = [
        "JobID|JobName|State|ExitCode|Start|End|NodeList|Reason",
        "%s|%s|FAILED|1:0|%s|%s|%s|None" % (JOB_ID, JOB_NAME, start, end, nodelist),
        "%s.batch|batch|FAILED|1:0|%s|%s|node-001|None" % (JOB_ID, start, end),
        "%s.extern|extern|COMPLETED|0:0|%s|%s|%s|None" % (JOB_ID, start, end, nodelist),
        "%s.0|python|FAILED|1:0|%s|%s|%s|None" % (JOB_ID, _iso(1)[:-1], end, nodelist),
    ]
    sacct = "\n".join(rows) + "\n"
    os.makedirs(os.path.join(plan.out, "scheduler"), exist_ok=True)
    with open(os.path.join(plan.out, "scheduler", "sacct.txt"), "w", encoding="ascii") as f:
        f.write(sacct)
    return len(yaml_text) + len(sacct)


def _peers(nodes: int, rpn: int, fault_node: int, gpu: int) -> frozenset[int]:
    """Ranks on other nodes that talk to the lost rank directly: same local GPU, nearby nodes."""
    out = set()
    for dlt in range(1, min(8, nodes - 1) + 1):
        for sgn in (-1, 1):
            nj = (fault_node + sgn * dlt) % nodes
            if nj != fault_node:
                out.add(nj * rpn + gpu)
    return frozenset(out)


def make_plan(
    out: str,
    nodes: int,
    rpn: int,
    target_gb: float,
    seed: int,
    window_h: float,
    fault_at: float,
    kernel_share: float = KERNEL_SHARE,
    kern_repeat: bool = False,
) -> Plan:
    rng = random.Random(seed)
    window_s = int(window_h * 3600)
    fault_s = window_s * fault_at + rng.uniform(-90, 90)
    fault_s = max(TRAIN_START_S + 60, min(fault_s, window_s - NCCL_TIMEOUT_S - 120))
    fault_node = rng.randrange(nodes // 4, max(nodes // 4 + 1, 3 * nodes // 4)) if nodes > 1 else 0
    fault_gpu = rng.randrange(rpn)
    target = target_gb * 1e9
    kern_bytes_node = target * kernel_share / nodes
    # 146 bytes a noise line; with kern_repeat every 8th is followed by the AER block (4 lines, about 115 each)
    kern_lines = max(50, int(kern_bytes_node / (146 + (460 / 8 if kern_repeat else 0))))
    _prepare_time_tables(window_s + 5)
    # Calibrate the step count from a provisional table, then rebuild it for real.
    _prepare_steps(200, fault_s, seed)
    avg = _avg_step_len() * (1 + 1 / 250 + 2 / 1000) + 1.0
    world = nodes * rpn
    fixed = 6000  # NCCL init, start-up and the watchdog tail, per rank (measured)
    per_rank = target * (1 - kernel_share) / world - fixed
    n_steps = max(10, int(per_rank / avg))
    _prepare_steps(n_steps, fault_s, seed)
    return Plan(
        out=out,
        nodes=nodes,
        rpn=rpn,
        seed=seed,
        window_s=window_s,
        fault_s=fault_s,
        fault_node=fault_node,
        fault_gpu=fault_gpu,
        n_steps=n_steps,
        kern_lines=kern_lines,
        peers=_peers(nodes, rpn, fault_node, fault_gpu),
        job_end_s=fault_s + NCCL_TIMEOUT_S + 45.0,
        kern_repeat=kern_repeat,
    )


def _work(task: tuple[str, int]) -> int:
    kind, i = task
    return write_rank(i) if kind == "r" else write_node(i)


def generate(
    out: str,
    nodes: int,
    rpn: int,
    target_gb: float,
    seed: int = 1,
    jobs: int = 0,
    window_h: float = 2.0,
    fault_at: float = 0.5,
    quiet: bool = False,
    kernel_share: float = KERNEL_SHARE,
    kern_repeat: bool = False,
) -> dict[str, Any]:
    """Write the bundle to `out`; return a summary (sizes, the faulted node and rank).

    `kernel_share` is the fraction of the bytes spent on kernel logs; `kern_repeat` writes the same kernel
    noise on every node (only host names and times differ), with corrected-AER blocks among it.
    """
    global PLAN
    if nodes < 1 or rpn < 1 or rpn > len(GPU_BUS) or target_gb <= 0:
        raise ValueError("need nodes >= 1, 1 <= ranks-per-node <= 8, target-gb > 0")
    if not 0 < kernel_share < 1:
        raise ValueError("need 0 < kernel-share < 1")
    t_start = time.perf_counter()
    os.makedirs(os.path.join(out, "app"), exist_ok=True)
    os.makedirs(os.path.join(out, "nodes"), exist_ok=True)
    PLAN = make_plan(out, nodes, rpn, target_gb, seed, window_h, fault_at, kernel_share, kern_repeat)
    total = write_meta(PLAN)
    tasks = [("n", i) for i in range(nodes)] + [("r", r) for r in range(nodes * rpn)]
    jobs = jobs or min(2, os.cpu_count() or 1)
    if jobs > 1 and "fork" in mp.get_all_start_methods():
        # fork: the workers inherit PLAN and the precomputed tables instead of rebuilding them.
        with mp.get_context("fork").Pool(jobs) as pool:
            total += sum(pool.imap_unordered(_work, tasks, chunksize=8))
    else:
        total += sum(_work(t) for t in tasks)
    secs = time.perf_counter() - t_start
    fr = PLAN.fault_node * rpn + PLAN.fault_gpu
    summary: dict[str, Any] = {
        "out": out,
        "bytes": total,
        "seconds": round(secs, 2),
        "files": nodes * rpn + nodes + 2,
        "steps_per_rank": PLAN.n_steps,
        "fault_node": node_name(PLAN.fault_node),
        "fault_gpu": PLAN.fault_gpu,
        "fault_rank": fr,
        "fault_time": _iso(PLAN.fault_s),
        "expected": {
            "attributed_domain": "hardware",
            "root_cause.category": "gpu.fallen_off_bus",
            "affected_nodes": [node_name(PLAN.fault_node)],
        },
    }
    # The benchmark runner compares the verdict to this; it is not a source, so analyze never reads it.
    with open(os.path.join(out, "bench-expected.json"), "w", encoding="ascii") as f:
        json.dump(summary["expected"], f)
        f.write("\n")
    if not quiet:
        print(
            "wrote %s: %.3f GB in %d files, %.1f s (%.0f MB/s); %d steps per rank"
            % (out, total / 1e9, nodes * rpn + nodes + 2, secs, total / 1e6 / max(secs, 1e-9), PLAN.n_steps)
        )
        print(
            "fault: Xid 79 on %s GPU %d (rank %d) at %s; expected verdict hardware / gpu.fallen_off_bus"
            % (node_name(PLAN.fault_node), PLAN.fault_gpu, fr, _iso(PLAN.fault_s))
        )
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--ranks-per-node", type=int, default=8)
    ap.add_argument("--target-gb", type=float, default=2.0, help="total bundle size to aim for (GB, 1e9)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=0, help="writer processes (default: min(2, cpus))")
    ap.add_argument("--window-hours", type=float, default=2.0)
    ap.add_argument("--fault-at", type=float, default=0.5, help="fault time as a fraction of the window")
    ap.add_argument("--kernel-share", type=float, default=KERNEL_SHARE, help="fraction of the bytes in kernel logs")
    ap.add_argument(
        "--kern-repeat",
        action="store_true",
        help="the same kernel noise on every node (hosts and times differ), corrected AER among it",
    )
    a = ap.parse_args(argv)
    if os.path.exists(os.path.join(a.outdir, "workload.yaml")) or (os.path.isdir(a.outdir) and os.listdir(a.outdir)):
        print("error: %s exists and is not empty; refusing to mix bundles" % a.outdir, file=sys.stderr)
        return 2
    try:
        generate(
            a.outdir,
            a.nodes,
            a.ranks_per_node,
            a.target_gb,
            a.seed,
            a.jobs,
            a.window_hours,
            a.fault_at,
            kernel_share=a.kernel_share,
            kern_repeat=a.kern_repeat,
        )
    except ValueError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
