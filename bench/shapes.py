#!/usr/bin/env python3
# Line shapes are %-templates kept as data and filled millions of times; report lines are %-formatted tables.
# ruff: noqa: UP031
"""Issue 27's benchmark of many shapes: firstfault analyze against grep on jobs of different shapes, in one run.

    python bench/shapes.py [--workdir /tmp/ff-shapes] [--repeat 3] [--shapes a,b,c,d,e] [--big] [--blocked [ENGINE]]
                           [--timeout 900] [--blocked-timeout 300] [--base-src DIR]

Each shape is generated into --workdir (once: a shape's folder is named by a hash of its parameters and
reused while they hold), with its expected verdict decided by construction, before any tool runs:

  a  ranks16k   2048 nodes x 8 ranks, about 1.1 GB in about 18.4k files (gen_bundle.py): Xid 79 on one
                node, NCCL remote errors on its peers, a watchdog timeout on each of 16k ranks
                -> hardware / gpu.fallen_off_bus
  b  kernrep    128 nodes x 8 ranks, 1 GB, half of it kernel logs whose noise is the same lines on every
                node (only hosts and times differ; corrected AER among it), gen_bundle.py --kern-repeat
                -> hardware / gpu.fallen_off_bus
  c  numbers    one 2M-line application log of warnings that differ only in their numbers (ints, hex,
                floats, ids), then a CUDA out-of-memory traceback -> software / app.cuda_oom
  d  longlines  one application log of lines of 10 kB to 1 MB (configuration dumps, printed tensors,
                some with words grep and the prefilter look for), an illegal memory access among them
                -> software / app.illegal_access
  e  regex      lines built against backtracking patterns of the extractors (long runs of spaces, colons,
                digits and slashes after `NCCL WARN` and the NCCL header), then a host OOM kill in the
                kernel log -> software / host.oom
  g  numbers2   c's kind with other wordings and number layouts: 1M lines of a training loop's step lines,
                the Hugging Face tokenizer's unstamped warning, huggingface_hub's retries with request ids,
                DeepSpeed's allocator-flush warning (its own stamp form), NCCL's proxy warning; then a CUDA
                out-of-memory traceback -> software / app.cuda_oom
  h  numbers3   c's kind with the stamp forms of rank logs: 1M lines of syslog-stamped step lines, c10d's
                glog-stamped socket retries, NCCL's retries with a bracketed stamp, DataLoader's unstamped
                worker-count warning and the tokenizers' fork warning; then a CUDA out-of-memory traceback
                -> software / app.cuda_oom
  i  syslog512  one central syslog (rsyslog) of 512 hosts' kernel lines, ~200 MB: 14 kinds of noise with varying
                numbers behind each host's header, interleaved; an Xid 79 on node-0042 -> hardware /
                gpu.fallen_off_bus
  j  mpirun4k   one `mpirun --tag-output` file of 4096 ranks, ~200 MB: step lines, UCX warnings, a UserWarning,
                each behind its rank's tag; a CUDA OOM traceback on rank 1234 -> software / app.cuda_oom
  f  big4g      (--big only) 512 nodes x 8 ranks, about 4 GB (gen_bundle.py) -> hardware / gpu.fallen_off_bus

For each shape it times, interleaved (run 1 of every tool, then run 2, ...; the page cache warm):

  grep-14   grep -c -E '<issue 27's 14 words>' FILES        (headline.py's GREP_14)
  ff        python -m firstfault analyze BUNDLE --format json -j 2
  ff -j1    the same with -j 1 (in the first round only, unless --j1-each: it is there to compare bytes)
  blocked   (--blocked [ENGINE]) ff with the fast scanner blocked: FIRSTFAULT_MATCHER=ENGINE (default
            aho-corasick: Hyperscan blocked; `re`: both compiled engines blocked; collect/scan.py)
  base      (--base-src DIR) ff, -j 2, with PYTHONPATH=DIR: another checkout's src/ (e.g. a detached
            worktree of main with its own built _lines), for a paired before/after figure on one machine
            under one load; its median, ff/base, and whether its verdict bytes equal this tree's (`catalog
            only` where the two trees' catalogs differ and nothing else does)

and prints one table: median wall time of --repeat runs, peak RSS (GNU time's %M: the largest single
process), the ratio to grep-14, issue 27's target for the row, whether the verdict equals the expected one,
the widest lead (ranks named), and whether the verdict bytes (the analyzed_at line aside) are identical
over every run of ff, ff -j1 and blocked. A run past --timeout (--blocked-timeout for blocked) is killed,
shown as '>N', and that tool is not run again on that shape.

Exit status 0 when every analyze run gave a JSON verdict; 1 otherwise; --enforce: 3 when a target is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(HERE))
import gen_bundle  # noqa: E402  (sibling script)
import headline  # noqa: E402
from headline import GREP_14, verdict_body  # noqa: E402
from run_bench import EXPECTED_FILE, TIMED_OUT, bundle_files, timed  # noqa: E402

GEN_VERSION = 1  # bump when a generator below changes what it writes: the cached shapes are written again
HOST = "node-001"
PID = 31337  # rank 0's process in the one-node shapes


# ---------------------------------------------------------------- one-node bundles (shapes c, d, e)


def _one_node(out: Path, window_s: int, end_s: float) -> None:
    """workload.yaml and sacct of a one-node, one-rank Slurm job (gen_bundle's), the time tables filled."""
    gen_bundle._prepare_time_tables(window_s + 5)
    (out / "app").mkdir(parents=True, exist_ok=True)
    (out / "nodes" / HOST).mkdir(parents=True, exist_ok=True)
    plan = gen_bundle.Plan(
        out=str(out),
        nodes=1,
        rpn=1,
        seed=0,
        window_s=window_s,
        fault_s=end_s,
        fault_node=0,
        fault_gpu=0,
        n_steps=0,
        kern_lines=0,
        peers=frozenset(),
        job_end_s=end_s,
    )
    gen_bundle.write_meta(plan)


def _kern_log(out: Path, end_s: int, extra: list[str] | None = None) -> None:
    """The node's kernel log: slurmd's launch, `extra` (already stamped), the step's cancellation."""
    lines = gen_bundle._kern_start(HOST, gen_bundle.SYSLOG_SEC[2]) + (extra or [])
    lines.append(gen_bundle._step_cancelled(HOST, end_s))
    (out / "nodes" / HOST / "kern.log").write_text("".join(lines), encoding="ascii")


def _expect(out: Path, domain: str, category: str) -> dict[str, Any]:
    exp = {"attributed_domain": domain, "root_cause.category": category, "affected_nodes": [HOST]}
    (out / EXPECTED_FILE).write_text(json.dumps(exp) + "\n", encoding="ascii")
    return exp


# torch.OutOfMemoryError as PyTorch words it (the lines of examples/cuda-oom/app/rank-5.log).
CUDA_OOM = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/megatron/pretrain_gpt.py", line 271, in <module>\n'
    "    pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1747, in _call_impl\n'
    "    return forward_call(*args, **kwargs)\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. GPU 0 has a total capacity of "
    "79.10 GiB of which 5.21 GiB is free. Including non-PyTorch memory, this process has 73.88 GiB memory in use. "
    "Of the allocated memory 69.40 GiB is allocated by PyTorch, and 3.91 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
)

# Warnings whose text repeats and whose numbers do not. gen_bundle.BENIGN's four (ints, floats) come first;
# then NCCL's socket retry (headline.py's noisy log), DDP's stride warning (torch/csrc/distributed/c10d/
# reducer.cpp: three lines, "This is not an error"), c10d's barrier warning (ProcessGroupNCCL.cpp) and
# urllib3's retry (connectionpool.py) with a dataset id in hex.
NUMBERS_NCCL = "%s:%d:%d [%d] NCCL WARN NET/Socket : Call to connect returned Connection refused, retrying\n"
NUMBERS_STRIDES = (
    "[W reducer.cpp:1389] Warning: Grad strides do not match bucket view strides. This may indicate grad was not "
    "created according to the gradient layout contract, or that the param's strides changed since DDP was "
    "constructed.  This is not an error, but may impair performance.\n"
    "grad.sizes() = [%d, %d], strides() = [%d, 1]\n"
    "bucket_view.sizes() = [%d, %d], strides() = [%d, 1] (function operator())\n"
)
NUMBERS_BARRIER = (
    "[rank0]:[W%s ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 0] using GPU %d to perform barrier as devices "
    "used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is "
    "incorrect. Specify device_ids in barrier() to force use of a particular device, or call init_process_group() "
    "with a device_id.\n"
)
NUMBERS_URLLIB3 = (
    " WARNING urllib3.connectionpool: Retrying (Retry(total=%d, connect=None, read=None, redirect=None, "
    "status=None)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='store.internal', "
    "port=443): Read timed out. (read timeout=%d)\")': /datasets/%08x-%04x-4%03x-%04x-%012x/shard-%05d.tar\n"
)


NUMBERS_SPAN = 3 * 3600.0  # the warnings' time span in shapes c and g; the OOM follows it


def _numbers_log(out: Path, lines: int, head: str, entry: Callable[[float, int], tuple[str, int]]) -> None:
    """The log of shapes c and g (their one-node bundle written: _one_node): `head`, then entries until `lines`
    lines (entry(t, n): the text of the entry at time t after n lines, and how many lines it holds), then a CUDA
    OOM traceback."""
    with open(out / "app" / "rank-0.log", "w", encoding="ascii", buffering=1 << 20) as fh:
        fh.write(head)
        buf: list[str] = []
        n = 0
        while n < lines:
            text, used = entry(100.0 + n * (NUMBERS_SPAN - 100.0) / lines, n)
            buf.append(text)
            n += used
            if len(buf) >= 20000:
                fh.write("".join(buf))
                buf.clear()
        fh.write("".join(buf))
        fh.write(CUDA_OOM)
    _kern_log(out, int(NUMBERS_SPAN + 60))


def gen_numbers(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shape c: one rank's log of p['lines'] warning lines, then a CUDA OOM."""
    _one_node(out, 4 * 3600, NUMBERS_SPAN + 60)
    rng = random.Random(p["seed"])
    py_ts, glog = gen_bundle._py_ts, gen_bundle._glog

    def entry(t: float, n: int) -> tuple[str, int]:
        k = rng.randrange(8)
        if k < 4:
            return py_ts(t) + gen_bundle._benign(rng, n), 1
        if k == 4:
            return NUMBERS_NCCL % (HOST, PID, PID + 40 + rng.randrange(8), rng.randrange(8)), 1
        if k == 5:
            a, b = rng.choice((1024, 2048, 4096, 8192)), rng.choice((1024, 4096, 14336))
            return NUMBERS_STRIDES % (a, b, b, a, b, b), 3
        if k == 6:
            return NUMBERS_BARRIER % ("W" + glog(t)[1:], rng.randrange(8)), 1
        return py_ts(t) + NUMBERS_URLLIB3 % (
            rng.randrange(5), rng.choice((30, 60)), rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
            0x8000 | rng.getrandbits(14), rng.getrandbits(48), rng.randrange(100000)), 1

    head = py_ts(1.0) + " INFO Starting pretrain (Megatron-LM core 0.9.0, torch 2.5.1, NCCL 2.21.5)\n"
    _numbers_log(out, p["lines"], head, entry)
    return _expect(out, "software", "app.cuda_oom")


# Shape g: shape c's kind of log with other wordings and other number layouts, for checking that what was tuned on
# c holds elsewhere. Python logging's `%(asctime)s.%(msecs)06d - %(name)s - %(levelname)s - ` layout (a `.` and six
# digits, then ` - `), a training loop's step line with floats in several layouts (not a candidate); the Hugging Face
# tokenizer's warning (transformers tokenization_utils_base.py; its logger prints no stamp, and `errors` makes it
# error-looking), huggingface_hub's retry of a read timeout with its request id (utils/_http.py) and the retry line
# after it; DeepSpeed ZeRO-3's allocator-flush warning with its own bracketed stamp (stage3.py: a stamp form the
# fold's C loop does not read); and NCCL's proxy warning (proxy.cc: an unstamped NCCL WARN line of another layout).
NUMBERS2_STEP = (" - megatron.training - INFO - iteration %8d/%8d | consumed samples: %12d | elapsed time per "
                 "iteration (ms): %.1f | learning rate: %.6E | global batch size: %5d | lm loss: %.6E | "
                 "grad norm: %.3f | number of skipped iterations: %3d\n")
NUMBERS2_TOKENS = ("Token indices sequence length is longer than the specified maximum sequence length for this model "
                   "(%d > %d). Running this sequence through the model will result in indexing errors\n")
NUMBERS2_HUB = (
    " - huggingface_hub.utils._http - WARNING - '(ReadTimeoutError(\"HTTPSConnectionPool(host='cdn-lfs.hf.co', "
    "port=443): Read timed out. (read timeout=%d)\"), '(Request ID: %08x-%04x-4%03x-%04x-%012x)')' thrown while "
    "requesting GET https://huggingface.co/datasets/corp/web-%d/resolve/main/part-%05d.parquet\n")
NUMBERS2_RETRY = " - huggingface_hub.utils._http - WARNING - Retrying in %ds [Retry %d/5].\n"
NUMBERS2_ZERO = (
    "[%s] [WARNING] [stage3.py:%d:step] %d pytorch allocator cache flushes since last step. this happens when there "
    "is high memory pressure and is detrimental to performance. if this is happening frequently consider adjusting "
    "settings to reduce memory consumption. If you are unable to make the cache flushes go away consider adding "
    "get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their caches at "
    "the same time\n")
NUMBERS2_PROXY = ("%s:%d:%d [%d] proxy.cc:%d NCCL WARN [Proxy Service %d] Failed to execute operation Connect from "
                  "rank %d, retcode 3\n")


def gen_numbers2(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shape g: one rank's log of p['lines'] lines of other warnings and number layouts than c's, then a CUDA OOM."""
    _one_node(out, 4 * 3600, NUMBERS_SPAN + 60)
    rng = random.Random(p["seed"])
    t0 = gen_bundle.T0
    it = [40000]

    def stamp(t: float) -> str:  # 2026-11-02 10:00:07.123456
        d = t0 + timedelta(seconds=t)
        return d.strftime("%Y-%m-%d %H:%M:%S.") + "%06d" % d.microsecond

    def entry(t: float, n: int) -> tuple[str, int]:
        k = rng.randrange(10)
        if k < 4:
            it[0] += 1
            return stamp(t) + NUMBERS2_STEP % (
                it[0], 500000, it[0] * 1024, 800 + rng.random() * 900, 3e-4 * rng.random(), 1024,
                1.5 + rng.random() * 2, 0.05 + rng.random() * 3, rng.randrange(3)), 1
        if k < 6:
            return NUMBERS2_TOKENS % (1025 + rng.randrange(30000), rng.choice((1024, 2048, 4096))), 1
        if k == 6:
            hub = stamp(t) + NUMBERS2_HUB % (rng.choice((10, 30)), rng.getrandbits(32), rng.getrandbits(16),
                                              rng.getrandbits(12), 0x8000 | rng.getrandbits(14),
                                              rng.getrandbits(48), rng.randrange(100), rng.randrange(20000))
            return hub + stamp(t + 0.001) + NUMBERS2_RETRY % (1 << rng.randrange(4), 1 + rng.randrange(5)), 2
        if k == 7:
            d = t0 + timedelta(seconds=t)
            return NUMBERS2_ZERO % (d.strftime("%Y-%m-%d %H:%M:%S,") + "%03d" % (d.microsecond // 1000),
                                    1800 + rng.randrange(200), 1 + rng.randrange(12)), 1
        return NUMBERS2_PROXY % (HOST, PID, PID + 60 + rng.randrange(4), rng.randrange(8),
                                 1200 + rng.randrange(400), rng.randrange(8), rng.randrange(64)), 1

    _numbers_log(out, p["lines"], stamp(1.0) + " - megatron.training - INFO - Starting pretrain\n", entry)
    return _expect(out, "software", "app.cuda_oom")


# Shape h: c's kind again, written for checking the stamp forms the fold's C loop reads (glog's, syslog's, a bracketed
# ISO stamp with a `.` fraction) on other wordings: step lines as journald forwards a unit's stdout (syslog's stamp,
# `python3[PID]:`), c10d's client socket retrying its store (torch/csrc/distributed/c10d/socket.cpp: glog-stamped
# behind the rank prefix, a port and an errno), NCCL's socket retry with NCCL_DEBUG_TIMESTAMP_FORMAT's bracketed stamp
# (`%Y-%m-%d %H:%M:%S.%6f`), DataLoader's worker-count warning (torch/utils/data/dataloader.py, through Python's
# warnings: a path and line, then the call's source line; no stamp: its copies take the stamp before them), and the
# Hugging Face tokenizers' fork warning (unstamped, four lines); then a `torch.OutOfMemoryError` traceback.
NUMBERS3_STEP = ("%s node-001 python3[%d]: [train] epoch %d step %d/%d loss=%.4f ppl=%.2f tok/s=%d "
                 "mem=%.1fGiB\n")
NUMBERS3_SOCKET = ("[rank%d]:[W%s socket.cpp:%d] [c10d] The client socket has failed to connect to [node-%03d]:%d "
                   "(errno: 111 - Connection refused).\n")
NUMBERS3_NCCL = ("[%s] node-%03d:%d:%d [%d] NCCL INFO Call to connect returned Connection timed out, retrying\n")
NUMBERS3_LOADER = (
    "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:%d: UserWarning: This DataLoader will "
    "create %d worker processes in total. Our suggested max number of worker in current system is %d, which is "
    "smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get "
    "DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if "
    "necessary.\n  warnings.warn(_create_warning_msg(\n")
NUMBERS3_FORK = (
    "huggingface/tokenizers: The current process just got forked, after parallelism has already been used. "
    "Disabling parallelism to avoid deadlocks...\nTo disable this warning, you can either:\n"
    "\t- Avoid using `tokenizers` before the fork if possible\n"
    "\t- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)\n")


def gen_numbers3(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shape h: one rank's log of p['lines'] lines of glog-, syslog- and bracket-stamped lines among unstamped
    warnings, then a CUDA OOM."""
    _one_node(out, 4 * 3600, NUMBERS_SPAN + 60)
    rng = random.Random(p["seed"])
    t0 = gen_bundle.T0
    step = [20000]

    def at(t: float) -> datetime:
        return t0 + timedelta(seconds=t)

    def entry(t: float, n: int) -> tuple[str, int]:
        d = at(t)
        k = rng.randrange(10)
        if k < 4:
            step[0] += 1
            return NUMBERS3_STEP % (d.strftime("%b ") + "%2d" % d.day + d.strftime(" %H:%M:%S"), PID,
                                    step[0] // 5000, step[0], 500000, 1.5 + rng.random() * 2, 4 + rng.random() * 20,
                                    rng.randrange(90000, 140000), 40 + rng.random() * 30), 1
        if k == 4:
            return NUMBERS3_SOCKET % (rng.randrange(8), d.strftime("%m%d %H:%M:%S.") + "%06d" % d.microsecond,
                                      rng.choice((697, 731)), rng.randrange(1, 4), 29500 + rng.randrange(3)), 1
        if k == 5:
            return NUMBERS3_NCCL % (d.strftime("%Y-%m-%d %H:%M:%S.") + "%06d" % d.microsecond, 1, PID,
                                    PID + 30 + rng.randrange(6), rng.randrange(8)), 1
        if k < 8:
            return NUMBERS3_LOADER % (rng.choice((557, 560)), rng.choice((16, 32)), rng.choice((8, 12))), 2
        return NUMBERS3_FORK, 4

    head = at(1.0).strftime("%b ") + "%2d" % at(1.0).day + at(1.0).strftime(" %H:%M:%S") + \
        " node-001 python3[%d]: [train] starting\n" % PID
    _numbers_log(out, p["lines"], head, entry)
    return _expect(out, "software", "app.cuda_oom")


# PyTorch's words for a CUDA error raised on the host (c10/cuda/CUDAException.cpp; gen_bundle's fault block has
# the same tail for "unknown error"), behind the traceback of a backward pass.
ILLEGAL_ACCESS = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/megatron/pretrain_gpt.py", line 271, in <module>\n'
    "    loss.backward()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/_tensor.py", line 626, in backward\n'
    "    torch.autograd.backward(\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def _pools(rng: random.Random) -> tuple[str, str]:
    """Two 1.1 MB texts that long lines are cut from: a configuration dump (JSON, some keys with words a user
    greps for) and a printed tensor."""
    keys = (
        "hidden_size",
        "ffn_hidden_size",
        "num_attention_heads",
        "seq_length",
        "micro_batch_size",
        "distributed_timeout_minutes",
        "nccl_timeout_s",
        "on_error",
        "ckpt_fail_policy",
        "lr_warmup_iters",
        "rerun_mode",
        "dataloader_error_retries",
        "log_interval",
        "eval_iters",
        "timeout_s",
    )
    parts: list[str] = []
    size = 0
    i = 0
    while size < 1_100_000:
        k = keys[i % len(keys)]
        v = '"raise"' if k == "on_error" else str(rng.randrange(1, 1 << 16))
        s = '"%s_%d": %s, ' % (k, i, v)
        parts.append(s)
        size += len(s)
        i += 1
    cfg = "".join(parts)
    tens: list[str] = []
    size = 0
    while size < 1_100_000:
        row = "[" + ", ".join("%8.4f" % rng.gauss(0, 1) for _ in range(16)) + "], "
        tens.append(row)
        size += len(row)
    return cfg, "".join(tens)


def gen_longlines(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shape d: about p['mb'] MB of lines of 10 kB to 1 MB (log-uniform) among step lines; the illegal access
    after 60% of them."""
    window_s = 2 * 3600
    _one_node(out, window_s, 5000.0)
    rng = random.Random(p["seed"])
    cfg, tens = _pools(rng)
    gen_bundle._prepare_steps(200, 4900.0, p["seed"])  # Megatron step lines between the long ones
    target = p["mb"] * 1_000_000
    py_ts = gen_bundle._py_ts
    written = 0
    fault_at = int(target * 0.6)
    faulted = False
    k = 0
    with open(out / "app" / "rank-0.log", "w", encoding="ascii", buffering=1 << 20) as fh:
        fh.write(py_ts(1.0) + " INFO Starting pretrain (Megatron-LM core 0.9.0, torch 2.5.1, NCCL 2.21.5)\n")
        while written < target:
            t = 100.0 + 4800.0 * written / target
            n = int(10_000 * 100 ** rng.random())  # 10 kB .. 1 MB
            if k % 2 == 0:
                off = rng.randrange(len(cfg) - n)
                line = py_ts(t) + " INFO [arguments] config: {" + cfg[off : off + n] + "}\n"
            else:
                off = rng.randrange(len(tens) - n)
                line = py_ts(t) + " INFO [debug] logits: tensor([" + tens[off : off + n] + "], device='cuda:0')\n"
            fh.write(line)
            fh.write(py_ts(t) + gen_bundle.STEP_BODY[k % len(gen_bundle.STEP_BODY)])
            written += len(line)
            k += 1
            if not faulted and written >= fault_at:
                faulted = True
                fh.write(py_ts(t + 0.5) + " INFO [train] iteration %d: backward\n" % (12000 + k))
                fh.write(ILLEGAL_ACCESS)
    _kern_log(out, 5000)
    return _expect(out, "software", "app.illegal_access")


# The host OOM killer's two lines (Linux mm/oom_kill.c; REAL pcyin/tranX#41), killing rank 0's process.
OOM_KILL = (
    "%s %s kernel: [%5d.%06d] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
    "global_oom,task_memcg=/user.slice,task=python3,pid=%d,uid=0\n"
    "%s %s kernel: [%5d.%06d] Out of memory: Killed process %d (python3) total-vm:53312244kB, "
    "anon-rss:31451456kB, file-rss:74816kB, shmem-rss:12296kB, UID:0 pgtables:69068kB oom_score_adj:0\n"
)


def _patho_line(kind: int, n: int, rng: random.Random) -> str:
    """One line against a backtracking pattern: a run of n characters that a pattern's quantifiers overlap on,
    ended by a character that makes the match fail (so every split is tried)."""
    head = "%s:%d:%d [0] " % (HOST, PID, PID + 40 + rng.randrange(8))
    if kind == 0:  # `NET/IB : Got async event : <event>\s*$`: a lazy event, then spaces that are not the end
        return head + "NCCL WARN NET/IB : Got async event : x" + " " * n + "y\n"
    if kind == 1:  # colons and digits after NCCL WARN: host:pid:tid heads that never reach ` [dev] `
        return head + "NCCL WARN " + "1:" * (n // 2) + "x\n"
    if kind == 2:  # `Got completion from peer <peer> with ...`: a long peer of digits, no `with`
        return head + "NCCL WARN NET/IB : Got completion from peer " + "0" * n + " x\n"
    if kind == 3:  # a grep-like path prefix (`file.log:123:`) that never ends in one
        return "a/" * (n // 2) + " NCCL WARN x\n"
    if kind == 4:  # many spaces, then colons: `\s*:\s*` runs
        return head + "NCCL WARN NET/IB" + " :" * (n // 2) + " x\n"
    # digits that look like an elapsed time (`12.5s`) and a connect target
    return head + "NCCL WARN Connect to " + "9" * n + "! NCCL WARN\n"


def gen_regex(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shape e: p['lines'] adversarial lines (runs of 1k to p['max_run'] characters, six kinds in turn) among
    step lines, then the host OOM killer kills rank 0."""
    window_s = 2 * 3600
    kill_s = 5000
    _one_node(out, window_s, kill_s + 30.0)
    rng = random.Random(p["seed"])
    py_ts = gen_bundle._py_ts
    with open(out / "app" / "rank-0.log", "w", encoding="ascii", buffering=1 << 20) as fh:
        fh.write(py_ts(1.0) + " INFO Starting pretrain (Megatron-LM core 0.9.0, torch 2.5.1, NCCL 2.21.5)\n")
        for i in range(p["lines"]):
            t = 100.0 + (kill_s - 200.0) * i / p["lines"]
            fh.write(py_ts(t) + " INFO [train] iteration %d done\n" % (12000 + i))
            fh.write(_patho_line(i % 6, rng.randrange(1000, p["max_run"]), rng))
    g = gen_bundle
    stamp = g.SYSLOG_SEC[kill_s]
    up = 250000.0 + kill_s
    oom = OOM_KILL % (stamp, HOST, int(up), 491436, PID, stamp, HOST, int(up), 491542, PID)
    _kern_log(out, kill_s + 30, [oom])
    return _expect(out, "software", "host.oom")


def gen_bundle_shape(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shapes a, b, f: gen_bundle.generate with these parameters."""
    s = gen_bundle.generate(
        str(out),
        p["nodes"],
        p["rpn"],
        p["gb"],
        p["seed"],
        quiet=True,
        kernel_share=p.get("kernel_share", gen_bundle.KERNEL_SHARE),
        kern_repeat=p.get("kern_repeat", False),
    )
    exp: dict[str, Any] = s["expected"]
    return exp


# Shapes i and j: one file that multiplexes many hosts or ranks (written at stop 38 to check the fold's generality,
# not tuned on; branch mux38 made them fold). i: rsyslog's central log, every host's kernel lines in one file behind
# its header (`Dec  4 10:00:01 node-0123 kernel: [100001.000000] `), 14 kinds of kernel noise with varying numbers
# (mlx5_core's failed firmware command, EDAC's corrected error, perf's sample-rate throttle, nvidia-peermem, NVRM's
# GPU UUID line, systemd's session, an AppArmor denial, NAPI's budget, corrected AER, igb's reset, a hung task, NFS
# back, a thermal throttle, MCE's summary), then an Xid 79 on node-0042. j: `mpirun --tag-output` of 4096 ranks,
# `[1,N]<stdout>:` and `[1,N]<stderr>:` before every line: step lines, UCX's port warning with its epoch stamp, a
# UserWarning with a line number; a CUDA OOM traceback on rank 1234 at 60%.
SYSLOG_NOISE = (
    "mlx5_core 0000:%(b)02x:00.0: mlx5_cmd_out_err:838:(pid %(pid)d): ACCESS_REG(0x805) op_mod(0x1) failed, status "
    "bad parameter(0x3), syndrome (0x%(syn)x), err(-22)",
    "EDAC MC%(m)d: 1 CE memory read error on CPU_SrcID#%(m)d_Ha#0_Chan#%(c)d_DIMM#0 (channel:%(c)d slot:0 "
    "page:0x%(pg)x offset:0x0 grain:32 syndrome:0x0)",
    "perf: interrupt took too long (%(a)d > %(b)d), lowering kernel.perf_event_max_sample_rate to %(r)d",
    "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing",
    "NVRM: GPU at PCI:0000:%(b)02x:00: GPU-%(u)08x-aaaa-bbbb-cccc-%(u)012x",
    "systemd[1]: Started Session %(s)d of user slurm.",
    'audit: type=1400 audit(%(t)d.%(ms)d:%(s)d): apparmor="DENIED" operation="open" profile="snap" '
    'name="/proc/%(pid)d/mounts" pid=%(pid)d',
    "ib0: Budget exhausted after napi rescheduled",
    "pcieport 0000:%(b)02x:01.0: AER: Corrected error received: 0000:%(b)02x:00.0",
    "igb 0000:%(b)02x:00.1 eno2: Reset adapter",
    "INFO: task kworker/%(c)d:%(m)d blocked for more than %(a)d seconds.",
    "nfs: server storage-%(m)d OK",
    "CPU%(c)d: Core temperature above threshold, cpu clock throttled (total events = %(a)d)",
    "mce: [Hardware Error]: Machine check events logged",
)


def _static_workload(out: Path, wid: str, extra: str, sources: str) -> None:
    (out / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: %s\n  scheduler: static\n  terminal_state: FAILED\n"
        "  timezone: UTC\n%ssources:\n%s" % (wid, extra, sources), encoding="ascii")


def gen_syslog_hosts(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shape i: one central syslog of p['mb'] MB from p['hosts'] hosts, then an Xid 79 on node-0042."""
    rng = random.Random(p["seed"])
    hosts = ["node-%04d" % i for i in range(p["hosts"])]
    (out / "syslog").mkdir(parents=True, exist_ok=True)
    size, t, limit, done = 0, 0.0, p["mb"] * 1e6, False
    with open(out / "syslog" / "messages", "w", encoding="ascii") as f:
        while size < limit:
            t += 0.01
            h = rng.choice(hosts)
            tpl = rng.choice(SYSLOG_NOISE)
            msg = tpl % {"b": rng.randrange(256), "pid": rng.randrange(99999), "syn": rng.randrange(1 << 24),
                         "m": rng.randrange(4), "c": rng.randrange(8), "pg": rng.randrange(1 << 20),
                         "a": rng.randrange(2500, 9000), "r": rng.randrange(1000, 50000), "u": rng.randrange(1 << 32),
                         "s": rng.randrange(9999), "t": 1733300000 + int(t), "ms": rng.randrange(1000)}
            sec = int(t)
            stamp = "Dec  4 10:%02d:%02d" % ((sec // 60) % 60, sec % 60)
            line = "%s %s kernel: [%.6f] %s\n" % (stamp, h, 100000 + t, msg)
            if not done and size > limit * 0.8:
                line = ("%s node-0042 kernel: [%.6f] NVRM: Xid (PCI:0000:3b:00): 79, pid=1912, GPU has fallen off "
                        "the bus.\n" % (stamp, 100000 + t))
                done = True
            f.write(line)
            size += len(line)
    _static_workload(out, "syslog-hosts", "  window: {start: '2026-12-04T09:59:00Z', end: '2026-12-04T11:00:00Z'}\n"
                     "  nodes: [%s]\n" % ", ".join(hosts), "  - {kind: syslog, path: 'syslog/messages'}\n")
    exp = {"attributed_domain": "hardware", "root_cause.category": "gpu.fallen_off_bus",
           "affected_nodes": ["node-0042"]}
    (out / EXPECTED_FILE).write_text(json.dumps(exp) + "\n", encoding="ascii")
    return exp


def gen_mpirun_ranks(out: Path, p: dict[str, Any]) -> dict[str, Any]:
    """Shape j: one mpirun --tag-output file of p['mb'] MB from p['ranks'] ranks, a CUDA OOM on rank 1234."""
    rng = random.Random(p["seed"])
    out.mkdir(parents=True, exist_ok=True)
    size, t, limit, done = 0, 0.0, p["mb"] * 1e6, False
    oom = ("Traceback (most recent call last):", '  File "train.py", line 88, in <module>', "    main()",
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of "
           "79.15 GiB of which 1.02 GiB is free.")
    with open(out / "mpirun.out", "w", encoding="ascii") as f:
        while size < limit:
            t += 0.001
            r = rng.randrange(p["ranks"])
            k = rng.random()
            if k < 0.6:
                m = "[1,%d]<stdout>:iter %d | loss %.5f | grad_norm %.4f | %d TFLOPS" % (
                    r, int(t * 10), rng.random() * 3, rng.random(), rng.randrange(100, 200))
            elif k < 0.9:
                m = ("[1,%d]<stderr>:[1733300%03d.%06d] [gpu-%04d:%d:0]      ib_iface.c:%d UCX  WARN  failed to get "
                     "port %d state on mlx5_%d: Connection timed out, retrying" % (
                         r, int(t), rng.randrange(10**6), r // 8, rng.randrange(99999), rng.randrange(900, 1100),
                         rng.randrange(1, 3), rng.randrange(8)))
            else:
                m = ("[1,%d]<stderr>:/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py:%d: "
                     "UserWarning: error-prone path taken for module %d" % (
                         r, rng.randrange(1000, 2000), rng.randrange(9999)))
            if not done and size > limit * 0.6:
                f.write("".join("[1,1234]<stderr>:%s\n" % x for x in oom))
                done = True
            f.write(m + "\n")
            size += len(m) + 1
    _static_workload(out, "mpirun-ranks", "", "  - {kind: application, path: 'mpirun.out'}\n")
    exp = {"attributed_domain": "software", "root_cause.category": "app.cuda_oom", "affected_nodes": []}
    (out / EXPECTED_FILE).write_text(json.dumps(exp) + "\n", encoding="ascii")
    return exp


# ---------------------------------------------------------------- the shapes and their targets


@dataclass
class Shape:
    key: str
    name: str
    title: str
    gen: Callable[[Path, dict[str, Any]], dict[str, Any]]
    params: dict[str, Any]
    target: str  # issue 27's target for the row, in words
    ratio_max: float | None = None  # ff / grep-14
    secs_max: float | None = None
    rss_max_mb: float | None = None
    lead_max: int | None = None
    big: bool = False


SHAPES = (
    Shape(
        "a",
        "ranks16k",
        "2048 nodes x 8 ranks, ~1.1 GB, ~18.4k files",
        gen_bundle_shape,
        {"nodes": 2048, "rpn": 8, "gb": 1.1, "seed": 27},
        "<=1.5x grep, RSS<300 MB, lead<=64",
        ratio_max=1.5,
        rss_max_mb=300.0,
        lead_max=64,
    ),
    Shape(
        "b",
        "kernrep",
        "128 x 8 ranks, 1 GB, kernel noise repeated on every node",
        gen_bundle_shape,
        {"nodes": 128, "rpn": 8, "gb": 1.0, "seed": 28, "kernel_share": 0.5, "kern_repeat": True},
        "<=1.0x grep",
        ratio_max=1.0,
    ),
    Shape(
        "c",
        "numbers",
        "one 2M-line log, warnings differing in numbers",
        gen_numbers,
        {"lines": 2_000_000, "seed": 29},
        "<=3 s",
        secs_max=3.0,
    ),
    Shape(
        "g",
        "numbers2",
        "one 1M-line log, c's kind with other wordings and number layouts",
        gen_numbers2,
        {"lines": 1_000_000, "seed": 33},
        "(none)",
    ),
    Shape(
        "h",
        "numbers3",
        "one 1M-line log, glog-, syslog- and bracket-stamped lines among unstamped warnings",
        gen_numbers3,
        {"lines": 1_000_000, "seed": 36},
        "(none)",
    ),
    Shape("i", "syslog512", "one central syslog of 512 hosts' kernel lines, ~200 MB", gen_syslog_hosts,
          {"hosts": 512, "mb": 200, "seed": 41}, "(none)"),
    Shape("j", "mpirun4k", "one mpirun --tag-output file of 4096 ranks, ~200 MB", gen_mpirun_ranks,
          {"ranks": 4096, "mb": 200, "seed": 43}, "(none)"),
    Shape("d", "longlines", "lines of 10 kB-1 MB, ~128 MB", gen_longlines, {"mb": 128, "seed": 30}, "(none)"),
    Shape("e", "regex", "pathological-regex lines", gen_regex, {"lines": 600, "max_run": 8000, "seed": 31}, "(none)"),
    Shape(
        "f",
        "big4g",
        "512 nodes x 8 ranks, ~4 GB",
        gen_bundle_shape,
        {"nodes": 512, "rpn": 8, "gb": 4.0, "seed": 32},
        "(none)",
        big=True,
    ),
)
BLOCKED_RATIO_MAX = 3.0  # issue 27: the same shapes with the fast scanner blocked, <= 3x the fast path


def shape_dir(workdir: Path, shape: Shape) -> Path:
    """Generate the shape unless a finished copy for these parameters is there; its folder."""
    key = json.dumps({"v": GEN_VERSION, "shape": shape.name, **shape.params}, sort_keys=True)
    out = workdir / ("%s-%s" % (shape.name, hashlib.sha256(key.encode()).hexdigest()[:10]))
    done = workdir / (out.name + ".done")  # outside the bundle: not a measured file
    if done.exists() and done.read_text(encoding="utf-8") == key and (out / EXPECTED_FILE).exists():
        return out
    done.unlink(missing_ok=True)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shape.gen(out, dict(shape.params))
    done.write_text(key, encoding="utf-8")
    return out


# ---------------------------------------------------------------- timing


@dataclass
class Tool(headline.Tool):
    """headline.py's tool, with a timeout, a first-round-only mark and the verdicts its runs gave."""

    timeout: float | None = None
    once: bool = False  # run in the first round only
    bodies: set[str] = field(default_factory=set)
    doc: dict[str, Any] | None = None

    @property
    def timed_out(self) -> bool:
        return TIMED_OUT in self.rcs


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """headline.py's environment for this tree's src/, with `extra` variables."""
    env = headline._env(SRC)
    env.update(extra or {})
    return env


def run_shape(
    bundle: Path,
    work: Path,
    repeat: int,
    blocked: str | None,
    timeout: float,
    blocked_timeout: float,
    j1_each: bool,
    base_src: Path | None = None,
) -> tuple[list[str], Tool, list[Tool], Tool | None]:
    files = bundle_files(bundle)
    py = sys.executable
    ana = [py, "-m", "firstfault", "analyze", str(bundle), "--format", "json"]
    grep = Tool("grep-14", ["grep", "-c", "-E", GREP_14, *files], _env(), work / "grep14.out")
    ff = [
        Tool("ff", [*ana, "-j", "2"], _env(), work / "verdict-j2.json", timeout=timeout),
        Tool("ff -j1", [*ana, "-j", "1"], _env(), work / "verdict-j1.json", timeout=timeout, once=not j1_each),
    ]
    if blocked is not None:
        ff.append(
            Tool(
                "blocked",
                [*ana, "-j", "2"],
                _env({"FIRSTFAULT_MATCHER": blocked}),
                work / "verdict-blocked.json",
                timeout=blocked_timeout,
            )
        )
    base = None
    if base_src is not None:
        base = Tool("base", [*ana, "-j", "2"], headline._env(base_src), work / "verdict-base.json", timeout=timeout)
    timed(["cat", *files], bundle)  # warm the page cache
    for i in range(repeat):
        for t in [grep, *ff, *([base] if base is not None else [])]:
            if t.timed_out or (t.once and i > 0):
                continue
            assert t.out is not None
            with open(t.out, "wb") as fh:
                r = timed(t.cmd, bundle, fh, t.env, t.timeout)
            t.secs.append(r.seconds)
            t.rss_kb.append(r.rss_kb)
            t.rcs.append(r.rc)
            if t is not grep and r.rc == 0:
                body, doc = verdict_body(t.out)
                t.bodies.add(body)
                t.doc = doc
    return files, grep, ff, base


def widest_lead(doc: dict[str, Any] | None) -> tuple[int, str]:
    """The most ranks one lead names, and that lead's kind ('-' when there is no lead with ranks)."""
    best = (0, "-")
    for lead in (doc or {}).get("leads") or []:
        n = len(lead.get("ranks") or [])
        if n > best[0]:
            best = (n, str(lead.get("kind")))
    return best


def verdict_of(doc: dict[str, Any] | None) -> tuple[str, str]:
    if doc is None:
        return "-", "-"
    rc = doc.get("root_cause") or {}
    return str(doc.get("attributed_domain")), str(rc.get("category") if isinstance(rc, dict) else None)


def _same_as_base(bodies: set[str], base: Tool, doc: dict[str, Any] | None) -> str:
    """Whether the base checkout's verdict bytes are this tree's: `yes`, `catalog only` (the two trees' catalogs
    differ, so its digest does, and nothing else), or `NO`."""
    if not (base.bodies and bodies):
        return "-"
    if base.bodies == bodies:
        return "yes"
    rest = [{k: v for k, v in (d or {}).items() if k not in ("analyzed_at", "catalog")} for d in (doc, base.doc)]
    return "catalog only" if len(base.bodies) == 1 and rest[0] == rest[1] else "NO"


def _secs(t: Tool) -> str:
    if t.timed_out and not [s for s, rc in zip(t.secs, t.rcs, strict=True) if rc != TIMED_OUT]:
        return ">%.0f" % (t.timeout or 0)
    ok = [s for s, rc in zip(t.secs, t.rcs, strict=True) if rc != TIMED_OUT]
    return "%.2f" % statistics.median(ok) if ok else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ff-shapes"), help="where shapes are generated")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each tool (median)")
    ap.add_argument("--shapes", default="", help="comma list of shape keys or names (default: all but --big's)")
    ap.add_argument("--big", action="store_true", help="also the ~4 GB shape (f), generated on demand")
    ap.add_argument("--blocked", nargs="?", const="aho-corasick", default=None, choices=("aho-corasick", "re"),
                    help="also each shape with the fast scanner blocked (FIRSTFAULT_MATCHER=ENGINE)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before an ff run is killed")
    ap.add_argument("--blocked-timeout", type=float, default=300.0, help="the same for a blocked run")
    ap.add_argument(
        "--j1-each",
        action="store_true",
        help="time ff -j1 in every round (default: the first only; it is there to compare bytes)",
    )
    ap.add_argument("--base-src", type=Path, default=None,
                    help="a src/ of another checkout to time alongside, interleaved (a paired before/after)")
    ap.add_argument("--generate-only", action="store_true", help="write the shapes, time nothing")
    ap.add_argument("--enforce", action="store_true", help="exit 3 when a target is missed")
    a = ap.parse_args(argv)
    want = [w.strip() for w in a.shapes.split(",") if w.strip()]  # in the order given: the order they run in
    by_word = {s.key: s for s in SHAPES} | {s.name: s for s in SHAPES}
    unknown = [w for w in want if w not in by_word]
    if unknown:
        known = ", ".join("%s (%s)" % (s.key, s.name) for s in SHAPES)
        print("error: unknown shape %s in --shapes; known: %s" % (", ".join(unknown), known), file=sys.stderr)
        return 2
    shapes = [by_word[w] for w in want] if want else [s for s in SHAPES if not s.big or a.big]
    a.workdir.mkdir(parents=True, exist_ok=True)
    dirs = {}
    for s in shapes:
        dirs[s.key] = shape_dir(a.workdir, s)
    if a.generate_only:
        for s in shapes:
            print("%s %s: %s" % (s.key, s.name, dirs[s.key]))
        return 0
    block = a.blocked
    # write the bytecode once, untimed (an installed package has it)
    for env in [_env()] + ([headline._env(a.base_src)] if a.base_src is not None else []):
        subprocess.run(
            [sys.executable, "-m", "firstfault", "analyze", str(HERE.parent / "examples" / "cuda-oom"), "--format",
             "json"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
    print(
        "shapes  repeat %d (median), %d CPUs, load %.2f at the start%s%s"
        % (
            a.repeat,
            os.cpu_count() or 0,
            os.getloadavg()[0],
            ", fast scanner also blocked" if a.blocked else "",
            ", base %s" % a.base_src if a.base_src is not None else "",
        )
    )
    rows: list[list[str]] = []
    status, missed = 0, []
    for s in shapes:
        bundle = dirs[s.key]
        work = a.workdir / ("work-" + s.name)
        work.mkdir(exist_ok=True)
        files, grep, ff, base = run_shape(
            bundle, work, a.repeat, block, a.timeout, a.blocked_timeout, a.j1_each, a.base_src
        )
        nbytes = sum((bundle / f).stat().st_size for f in files)
        fast = ff[0]
        exp = json.loads((bundle / EXPECTED_FILE).read_text(encoding="utf-8"))
        dom, cat = verdict_of(fast.doc)
        match = dom == exp["attributed_domain"] and cat.startswith(exp["root_cause.category"])
        width, kind = widest_lead(fast.doc)
        for t in ff:
            if any(rc not in (0, TIMED_OUT) for rc in t.rcs):
                status = 1
        ok_runs = [t for t in ff if t.bodies]
        bodies = set().union(*(t.bodies for t in ok_runs)) if ok_runs else set()
        same = "yes" if len(bodies) == 1 else ("-" if not bodies else "NO (%d)" % len(bodies))
        g = grep.median
        f_ok = not fast.timed_out and fast.secs
        ratio = fast.median / g if f_ok and g else math.nan
        rss = max(fast.rss_kb) / 1024.0 if fast.rss_kb else math.nan
        met = [match]
        if s.ratio_max is not None:
            met.append(ratio <= s.ratio_max)
        if s.secs_max is not None:
            met.append(bool(f_ok) and fast.median <= s.secs_max)
        if s.rss_max_mb is not None:
            met.append(rss < s.rss_max_mb)
        if s.lead_max is not None:
            met.append(width <= s.lead_max)
        blocked_cell, bratio_cell = "-", "-"
        if block is not None:
            b = ff[-1]
            blocked_cell = _secs(b)
            ok = [x for x, rc in zip(b.secs, b.rcs, strict=True) if rc != TIMED_OUT]
            if f_ok and ok:
                br = statistics.median(ok) / fast.median
                bratio_cell = "%.1fx" % br
                met.append(br <= BLOCKED_RATIO_MAX)
            else:
                bratio_cell = ">%.0fx" % ((b.timeout or 0) / fast.median) if f_ok else "-"
                met.append(False)
        if not all(met):
            missed.append(s.name)
        rows.append(
            [
                "%s %s" % (s.key, s.name),
                str(len(files)),
                "%.2f GB" % (nbytes / 1e9) if nbytes >= 1e8 else "%.0f MB" % (nbytes / 1e6),
                "%.2f" % g,
                _secs(fast),
                "%.1fx" % ratio if ratio == ratio else "-",
                "%.0f" % rss,
                _secs(ff[1]),
                blocked_cell,
                bratio_cell,
                s.target,
                "MET" if all(met) else "NOT MET",
                "%s / %s" % (dom, cat),
                "yes" if match else "NO (%s)" % exp["root_cause.category"],
                "%d (%s)" % (width, kind) if width else "none",
                same,
            ]
        )
        if base is not None:
            b_ok = [x for x, rc in zip(base.secs, base.rcs, strict=True) if rc != TIMED_OUT]
            rows[-1] += [
                _secs(base),
                "%.2f" % (fast.median / statistics.median(b_ok)) if f_ok and b_ok else "-",
                _same_as_base(bodies, base, fast.doc),
            ]
        print("| " + " | ".join(rows[-1]) + " |")
        print(
            "  %s done: grep %.2f s, ff %s s (%s)"
            % (s.name, g, _secs(fast), "; ".join("%s rc %s" % (t.name, sorted(set(t.rcs))) for t in ff)),
            flush=True,
        )
    head = [
        "shape",
        "files",
        "size",
        "grep-14 s",
        "ff s",
        "ff/grep",
        "RSS MB",
        "ff -j1 s",
        "blocked s",
        "blocked/ff",
        "target (issue 27)",
        "target",
        "verdict",
        "expected",
        "widest lead (ranks)",
        "bytes j2=j1" + ("=blocked" if block is not None else ""),
    ]
    if a.base_src is not None:
        head += ["base s", "ff/base", "bytes ff=base"]
    rows.sort(key=lambda r: r[0])
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(
        "\nmedians of %d interleaved runs; ff = analyze --format json -j 2; RSS = GNU time %%M of ff (largest "
        "process); 'target' counts the row's targets, the expected verdict%s"
        % (a.repeat, " and blocked <= %.0fx ff" % BLOCKED_RATIO_MAX if block is not None else "")
    )
    if status == 0 and a.enforce and missed:
        status = 3
    return status


if __name__ == "__main__":
    sys.exit(main())
