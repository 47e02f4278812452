"""The generic mechanisms: launcher prefixes, the traceback model, code tables, unrecognized lines.

Lines marked with a thread are verbatim from that public report; the others
follow the documented formats of the software named.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.engine.catalog import CatalogError, load_catalog
from firstfault.extract import app as app_extract
from firstfault.extract import codes
from firstfault.extract.base import Candidate
from firstfault.extract.prefix import PrefixLayer, split_prefixes
from firstfault.model import Event


def feed(lines: list[str], hosts: tuple[str, ...] = ()) -> tuple[list[Event], Extraction]:
    ex = Extraction(all_line_extractors(), hosts=hosts)
    out: list[Event] = []
    for i, text in enumerate(lines, 1):
        out.extend(ex.events(Candidate("application", "app.log", i, None, None, None, text)))
    return out, ex


# ---------------------------------------------------------------- prefixes


@pytest.mark.parametrize(
    ("line", "host", "rank", "local", "body"),
    [
        ("[1,2]<stderr>:[rank2]: Traceback (most recent call last):", None, 2, None,
         "Traceback (most recent call last):"),
        ("[1,3]<stdout>:ValueError: x", None, 3, None, "ValueError: x"),
        ("[default1]:RuntimeError: boom", None, None, 1, "RuntimeError: boom"),
        ("worker-3: [rank9]: KeyError: 'a'", "worker-3", 9, None, "KeyError: 'a'"),
        ("ip-10-0-1-7: Traceback (most recent call last):", "ip-10-0-1-7", None, None,
         "Traceback (most recent call last):"),
        ("2026-11-02T10:03:07.123456789Z stderr F [rank0]:ValueError: y", None, 0, None, "ValueError: y"),
        # Not prefixes: an exception, a log level, a logger, a program, an srun label without --label.
        ("ValueError: bad", None, None, None, "ValueError: bad"),
        ("WARNING: something", None, None, None, "WARNING: something"),
        ("torch.distributed.elastic.multiprocessing.api: [WARNING] x", None, None, None,
         "torch.distributed.elastic.multiprocessing.api: [WARNING] x"),
        ("slurmstepd: error: *** JOB 1 ON n1 CANCELLED AT 2026-01-01T00:00:00 ***", None, None, None,
         "slurmstepd: error: *** JOB 1 ON n1 CANCELLED AT 2026-01-01T00:00:00 ***"),
        ("12: text", None, None, None, "12: text"),
    ],
)
def test_prefix_layers(line: str, host: str | None, rank: int | None, local: int | None, body: str) -> None:
    p = split_prefixes(line)
    assert (p.host, p.rank, p.local, p.body) == (host, rank, local, body)


def test_known_node_names_are_hosts_even_without_digits() -> None:
    assert PrefixLayer(["alpha"]).split("alpha: ValueError: x").host == "alpha"
    assert split_prefixes("alpha: ValueError: x").host is None


def test_interleaved_pdsh_tracebacks_stay_apart_and_keep_their_host() -> None:
    """DeepSpeed's pdsh runner: two hosts' tracebacks interleaved in one file."""
    events, _ = feed([
        "worker-1: Traceback (most recent call last):",
        "worker-0: Traceback (most recent call last):",
        'worker-1:   File "train.py", line 3, in <module>',
        "worker-0: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
        "[10.0.0.2]:2212",
        "worker-1: FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-7.bin'",
    ], hosts=("worker-0", "worker-1"))
    got = sorted((e.kind, e.fields.get("host")) for e in events)
    assert got == [("app.exception", "worker-1"), ("nccl.remote_error", "worker-0")]


# ---------------------------------------------------------------- traceback model

TB = "Traceback (most recent call last):"


def test_dataloader_chain_the_worker_signal_decides() -> None:
    events, _ = feed([
        TB,
        '  File "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py", line 1133, in _try_get_data',
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault. ",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        TB,
        "RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly",
    ])
    assert [(e.kind, e.fields.get("signal"), e.fields.get("by")) for e in events] == [
        ("process.signal", "SIGSEGV", "self")]


def test_an_envelope_first_leaves_the_decision_to_the_next_member() -> None:
    events, _ = feed([TB, "_queue.Empty", "", "The above exception was the direct cause of the following exception:",
                      "", TB, "RuntimeError: DataLoader worker (pid(s) 77) exited unexpectedly"])
    assert events == []  # a worker gone with no reason given: nothing is a cause


@pytest.mark.parametrize(
    ("last", "kind"),
    [
        # pytorch/pytorch gloo: the survivors of a crashed peer.
        ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
         "[127.0.0.1]:48970", "nccl.remote_error"),
        ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] Read error [127.0.0.1]:18617: "
         "Connection reset by peer", "nccl.remote_error"),
        ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
         "1800000ms for recv operation to complete", "gloo.timeout"),
        ("torch.distributed.DistBackendError: NCCL communicator was aborted on rank 3.", "nccl.communicator_aborted"),
        ("ConnectionResetError: [Errno 104] Connection reset by peer", "nccl.remote_error"),
    ],
)
def test_a_message_that_says_a_peer_failed_is_a_symptom(last: str, kind: str) -> None:
    events, _ = feed([TB, last])
    assert [e.kind for e in events] == [kind]


@pytest.mark.parametrize(
    ("last", "kind", "errno"),
    [
        ("OSError: [Errno 28] No space left on device: '/lustre/ckpt/step_1000/model.pt'", "storage.error", "ENOSPC"),
        ("OSError: [Errno 5] Input/output error: '/mnt/nfs/data/shard-03.tar'", "storage.error", "EIO"),
        ("OSError: [Errno 116] Stale file handle", "storage.error", "ESTALE"),
        ("RuntimeError: [enforce fail at inline_container.cc:588] . PytorchStreamWriter failed writing file "
         "data/12: file write failed", "storage.error", None),
        ("OSError: [Errno 28] No space left on device: '/dev/shm/torch_1234_567'", "app.exception", "ENOSPC"),
        ("FileNotFoundError: [Errno 2] No such file or directory: '/data/train.bin'", "app.exception", "ENOENT"),
    ],
)
def test_errno_routes_storage_paths_to_storage_and_shm_to_the_workload(last: str, kind: str,
                                                                        errno: str | None) -> None:
    events, _ = feed([TB, last])
    assert [(e.kind, e.fields.get("errno")) for e in events] == [(kind, errno)]


# ---------------------------------------------------------------- code tables


@pytest.mark.parametrize(
    ("text", "cls"),
    [
        ("RuntimeError: CUDA error: an illegal memory access was encountered", "illegal_address"),
        ("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
         "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:278", "ecc"),
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=700 : an illegal memory access "
         "was encountered", "illegal_address"),
        ("call to cuCtxCreate returned error 214 (CUDA_ERROR_ECC_UNCORRECTABLE)", "ecc"),
        ("CUDA kernel failed : no kernel image is available for execution on the device", "config"),
        ("RuntimeError: CUDA error: system not yet initialized", "system_not_ready"),
        ("cudaErrorNvlinkUncorrectable", "nvlink"),
    ],
)
def test_cuda_errors_in_every_wording(text: str, cls: str) -> None:
    err = codes.cuda_error_of(text)
    assert err is not None and err.cls == cls


def test_signals_and_exit_codes_come_from_the_stdlib() -> None:
    assert codes.exit_signal(137) == "SIGKILL" and codes.exit_signal(-11) == "SIGSEGV"
    assert codes.exit_signal(1) is None
    assert codes.signal_of_text("Bus error") == "SIGBUS" and codes.signal_of_text("Killed") == "SIGKILL"


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        ("Signal 9 (SIGKILL) received by PID 4242", "SIGKILL"),
        ("Error: container exited with exit code 137", "SIGKILL"),
    ],
)
def test_signal_reports(line: str, signal: str) -> None:
    events, _ = feed([line])
    assert [(e.kind, e.fields["signal"]) for e in events] == [("process.signal", signal)]


def test_a_dataloader_worker_bus_error_is_the_workloads_shm_configuration() -> None:
    events, _ = feed(["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
                      "shared memory (shm)."])
    events += feed([TB, "RuntimeError: DataLoader worker (pid 125) is killed by signal: Bus error. "])[0]
    assert [(e.kind, e.fields.get("shm"), e.fields.get("signal")) for e in events] == [
        ("app.exception", True, "SIGBUS")] * 2


@pytest.mark.parametrize(
    "line",
    [
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.0 cgroup. Some of your processes may have "
        "been killed by the cgroup out-of-memory handler.",
        "slurmstepd: error: Job 4242 exceeded memory limit (52480 > 51200), being killed",
        "=>> PBS: job killed: mem 105gb exceeded limit 100gb",
    ],
)
def test_memory_limits_enforced_by_the_scheduler_are_oom_kills(line: str) -> None:
    events, _ = feed([line])
    assert [(e.kind, e.fields["cgroup"]) for e in events] == [("host.oom_kill", True)]


# ---------------------------------------------------------------- unrecognized


def test_unrecognized_lines_are_grouped_by_masked_template_and_understood_ones_are_not() -> None:
    _, ex = feed([
        "2026-11-02 10:00:01,000 ERROR loader: failed to open shard 17 at /data/a/17.bin",
        "2026-11-02 10:00:02,000 ERROR loader: failed to open shard 18 at /data/a/18.bin",
        TB,
        '    raise ValueError("bad Error")',
        "ValueError: bad",
        "no errors found",
    ], hosts=("node-01",))
    groups = ex.unrecognized.groups(lambda n, h, r: n)
    assert [(g.template, g.count, g.line) for g in groups] == [
        ("<TIME> ERROR loader: failed to open shard <N> at <PATH>", 2, 1)]


# ---------------------------------------------------------------- catalog validator


def test_an_xid_class_that_no_rule_matches_fails_the_catalog(tmp_path: object) -> None:
    import shutil
    from pathlib import Path

    from firstfault.engine.catalog import default_root

    dst = Path(str(tmp_path)) / "cat"
    shutil.copytree(default_root(), dst)
    (dst / "rules" / "gpu-xid-other.yaml").unlink()
    with pytest.raises(CatalogError) as err:
        load_catalog(dst)
    assert any("[xid-lands]" in p and "'other'" in p for p in err.value.problems)


# ---------------------------------------------------------------- prefilter from the patterns



@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    pre=st.sampled_from(["", "step 10 | lm ", "train_", "'", "{'", "epoch 1: val_", "\t"]),
    name=st.sampled_from(app_extract._METRIC_NAMES),
    joiner=st.sampled_from(app_extract._JOINERS),
    opener=st.sampled_from(app_extract._OPENS),
    value=st.sampled_from(app_extract._VALUES),
    post=st.sampled_from(["", ", device='cuda:0')", " | lr 1e-4", "\t", "}"]),
)
def test_a_numerics_line_the_regex_reads_always_passes_the_prefilter(pre: str, name: str, joiner: str, opener: str,
                                                                       value: str, post: str) -> None:
    line = f"{pre}{name}{joiner}{opener}{value}{post}"
    assert app_extract.numerics(line) is not None, line
    assert any(w in line for w in app_extract.NumericsExtractor.literals), line


@pytest.mark.parametrize("line", [
    "loss\tnan",  # tab-separated metric tables
    "| epoch 3 | loss  nan | ppl  nan",
    "{'loss': tensor(nan, device='cuda:0', grad_fn=<NllLossBackward0>)}",
    # fairseq's fp16 optimizer gives up (facebookresearch/fairseq)
    "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the "
    "learning rate, using gradient clipping or increasing the batch size.",
    # anomaly mode
    "RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.",
])
def test_nan_spellings(line: str) -> None:
    events, _ = feed([TB, line] if line.startswith(("Floating", "Runtime")) else [line])
    assert [e.kind for e in events] == ["app.numerics"]


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        ("slurmstepd: error: *** JOB 4242 ON node-01 CANCELLED AT 2026-11-02T10:05:00 DUE TO TIME LIMIT ***",
         {"slurm_scope": "job", "due_to": "time_limit"}),
        ("slurmstepd: error: *** JOB 4242 ON node-01 CANCELLED AT 2026-11-02T10:05:00 DUE TO PREEMPTION ***",
         {"slurm_scope": "job", "due_to": "preemption"}),
        ("slurmstepd: error: *** STEP 4242.0 ON node-01 CANCELLED AT 2026-11-02T10:05:00 ***",
         {"slurm_scope": "step", "due_to": None}),
        ("=>> PBS: job killed: walltime 3610 exceeded limit 3600", {"due_to": "time_limit"}),
        ("Exit_status=271", {"signal": "SIGTERM", "exitcode": 271}),
    ],
)
def test_scheduler_banners_say_scope_and_reason(line: str, fields: dict[str, object]) -> None:
    events, _ = feed([line])
    assert len(events) == 1 and events[0].kind == "process.signal"
    assert {k: events[0].fields.get(k) for k in fields} == fields


@pytest.mark.parametrize(
    ("banner", "state", "category"),
    [
        ("slurmstepd: error: *** JOB 3 ON c1 CANCELLED AT 2025-02-13T15:47:35 ***", "CANCELLED",
         "scheduler.cancelled"),
        ("slurmstepd: error: *** JOB 3 ON c1 CANCELLED AT 2025-02-13T15:47:35 DUE TO TIME LIMIT ***", "TIMEOUT",
         "scheduler.time_limit"),
        ("slurmstepd: error: *** JOB 3 ON c1 CANCELLED AT 2025-02-13T15:47:35 DUE TO PREEMPTION ***", "PREEMPTED",
         "scheduler.preempted"),
    ],
)
def test_without_accounting_the_job_banner_is_the_schedulers_word(tmp_path: Path, banner: str, state: str,
                                                                 category: str) -> None:
    from firstfault.engine.analyze import Analyzer

    (tmp_path / "slurm-3.out").write_text(f"step 10 loss 2.31\n{banner}\n")
    (tmp_path / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '3'\n  scheduler: slurm\n"
        "  window: {start: '2025-02-13T15:00:00Z', end: '2025-02-13T16:00:00Z'}\n  nodes: [c1]\n"
        "sources:\n  - {kind: application, path: slurm-3.out}\n")
    v = Analyzer().analyze_path(str(tmp_path))
    assert v.terminal_state == state
    assert v.root_cause is not None and v.root_cause.category == category


# ---------------------------------------------------------------- each new reading, both ways


@pytest.mark.parametrize(
    ("lines", "want"),
    [
        # NCCL cannot size its /dev/shm segment: the container's configuration (dmlc/xgboost#5963 wording)
        (["node-1:100:200 [0] NCCL WARN Call to posix_fallocate failed : No space left on device"],
         [("app.exception", True)]),
        (["node-1:100:200 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to "
          "9637892 bytes, error: No space left on device (28)",
          "node-1:100:200 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment "
          "/dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)"],
         [("app.exception", True)]),  # one report, not two
        # a storage errno a logger printed without a traceback (THUDM/slime#326 wording)
        (["ERROR: megatron.core.dist_checkpointing.strategies.filesystem_async: Local process 0 encountered an "
          "error: [Errno 5] Input/output error"], [("storage.error", None)]),
        # a logged errno that is not the storage's is not a cause on its own
        (["WARNING: retrying: [Errno 2] No such file or directory: '/tmp/x.lock'"], []),
        (["/usr/bin/python: No module named deepspeed"], [("app.exception", None)]),
        (["UserWarning: Failed to initialize NumPy: No module named 'numpy' (Triggered internally at x.cpp:84.)"],
         []),
    ],
)
def test_application_readings(lines: list[str], want: list[tuple[str, object]]) -> None:
    events, _ = feed(lines)
    assert [(e.kind, e.fields.get("shm")) for e in events] == want


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("memory: usage 184320000kB, limit 184320000kB, failcnt 2316326", "host.oom_kill"),
        ("memory: usage 1024kB, limit 184320000kB, failcnt 0", None),
        ("Uncorrectable ECC / other uncorrectable memory error @P2-DIMMF1 - Assertion", "host.mce"),
        ("Uncorrectable ECC / other uncorrectable memory error @P2-DIMMF1 - Deasserted", None),
        ("job 2598356 cancelled - job preempted (node failure)", "sched.node_down"),
        ("c011: Reason=apply ntpd fix : reboot issued : reboot timed out [slurm@2021-09-17T20:52:56]",
         "sched.node_down"),
        ("node-1:100:200 [0] NCCL WARN NET/IB : Got async event : GID table change", None),
    ],
)
def test_kernel_and_syslog_readings(line: str, kind: str | None) -> None:
    ex = Extraction(all_line_extractors())
    got = [e.kind for e in ex.events(Candidate("syslog", "messages", 1, "n1", None, None, line))]
    assert got == ([kind] if kind else [])
