"""The generic mechanisms: launcher prefixes, the traceback model, code tables, unrecognized lines.

Lines marked with a thread are verbatim from that public report; the others
follow the documented formats of the software named.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.engine.loader import CatalogError, load_catalog
from firstfault.extract import codes, numerics
from firstfault.extract.base import Candidate
from firstfault.extract.prefix import PrefixLayer, split_prefixes
from firstfault.model import Event
from tests.extract import helpers


def feed(lines: list[str], hosts: tuple[str, ...] = ()) -> tuple[list[Event], Extraction]:
    ex = Extraction(all_line_extractors(), hosts=hosts)
    return helpers.events(lines, extraction=ex), ex


# ---------------------------------------------------------------- prefixes


@pytest.mark.parametrize(
    ("line", "host", "rank", "local", "body"),
    [
        ("[1,2]<stderr>:[rank2]: Traceback (most recent call last):", None, 2, None,
         "Traceback (most recent call last):"),
        ("[1,3]<stdout>:ValueError: x", None, 3, None, "ValueError: x"),
        # Horovod's own runner tags a rank's stream with the rank alone (safe_shell_exec.prefix_stream), its
        # --prefix-output-with-timestamp stamp glued before it (horovod/horovod#2907, #2955)
        ("[0]<stderr>:RuntimeError: check_rank and exit epoch=1", None, 0, None, "RuntimeError: check_rank and exit "
         "epoch=1"),
        ("Mon Jun  7 11:51:57 2021[1]<stderr>:Aborted (core dumped)", None, 1, None, "Aborted (core dumped)"),
        # Not Horovod's tag: a bracketed number without the stream's name, or a stream name that is none of the two
        ("[0]: x", None, None, None, "[0]: x"),
        ("[0]<stdin>:x", None, None, None, "[0]<stdin>:x"),
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
        # Flux's `flux run` relays each line after the time since the job started (flux-framework/flux-core#6892):
        # a number and a unit, no host.
        ("3.416s: flux-shell[0]: FATAL: task 0 (host fluke120): start failed: /g/g0/garlick/nosuchcommand: No such "
         "file or directory", None, None, None, "3.416s: flux-shell[0]: FATAL: task 0 (host fluke120): start "
         "failed: /g/g0/garlick/nosuchcommand: No such file or directory"),
    ],
)
def test_prefix_layers(line: str, host: str | None, rank: int | None, local: int | None, body: str) -> None:
    p = split_prefixes(line)
    assert (p.host, p.rank, p.local, p.body) == (host, rank, local, body)


def test_mpirun_tags_repeated_mid_line_are_peeled_and_the_exception_read() -> None:
    """Open MPI 4.1.4's `--tag-output` tags each write of a rank's stream: on a loaded machine Python's traceback
    reached mpirun in pieces, and the tag came again inside the line (a run of the lab's `mpirun_exception`
    fault on this project's CI machine, 2026-12-04). The same rank's tag is taken out wherever it is; another
    rank's tag inside a line is text (near miss)."""
    events, _ = feed([
        "[1,1]<stderr>:Traceback (most recent call last):",
        '[1,1]<stderr>:  File "/work/main/lab/mpi_job.py", line 36, in main',
        '[1,1]<stderr>:    [1,1]<stderr>:raise ValueError(f"gradient buffer holds {len(grads)} values, the model '
        'has {len(weights)}")[1,1]<stderr>:',
        "[1,1]<stderr>:ValueError[1,1]<stderr>:: [1,1]<stderr>:gradient buffer holds 7 values, the model has 8"
        "[1,1]<stderr>:",
    ])
    assert [(e.kind, e.rank, e.fields.get("exc_type"), e.fields.get("message")) for e in events] == [
        ("app.exception", 1, "ValueError", "gradient buffer holds 7 values, the model has 8")]
    p = split_prefixes("[1,0]<stderr>:ValueError: [1,2]<stderr>: a peer's tag")
    assert (p.rank, p.body) == (0, "ValueError: [1,2]<stderr>: a peer's tag")


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


def test_a_bare_eof_from_a_dead_workers_pipe_decides_nothing() -> None:
    """The lab's own DataLoader worker segfault under Slurm (a real run, lab fault dataloader_worker_segv): the main
    process was reading the worker's pipe when it died, so multiprocessing raised a bare EOFError, and the worker's
    signal came next in the chain. Near miss: pickle's `EOFError: Ran out of input` is the workload's own I/O."""
    events, _ = feed([
        TB,
        '  File "/usr/lib/python3.11/multiprocessing/connection.py", line 399, in _recv',
        "    raise EOFError",
        "EOFError",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        TB,
        '  File "/usr/lib/python3/site-packages/torch/utils/data/_utils/signal_handling.py", line 73, in handler',
        "RuntimeError: DataLoader worker (pid 21375) is killed by signal: Segmentation fault. ",
    ])
    assert [(e.kind, e.fields.get("signal")) for e in events] == [("process.signal", "SIGSEGV")]
    events, _ = feed([TB, '  File "train.py", line 9, in <module>', "EOFError: Ran out of input"])
    assert [(e.kind, e.fields.get("exc_type")) for e in events] == [("app.exception", "EOFError")]


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
        # NCCL's examples' CUDACHECK macro as vLLM's custom all-reduce prints it (sgl-project/sglang#552)
        ("Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not "
         "supported between these two devices'", "device_choice"),
    ],
)
def test_cuda_errors_in_every_wording(text: str, cls: str) -> None:
    err = codes.cuda_error_of(text)
    assert err is not None and err.cls == cls


@pytest.mark.parametrize(
    ("text", "code", "cls"),
    [
        # AIR-DISCOVER/ICRA2024-Sim2Real-AXS#5 ("fixed by updating the driver"): PyTorch prints the code, then
        # cudaGetErrorString's message, with no CUDA anchor word on the line
        ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
         "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on "
         "non supported HW", 804, "driver"),
        # PKU-YuanGroup/Video-LLaVA#22: the same report as torch.cuda's warning
        ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
         "functions before calling NumCudaDevices() that might have already set an error? Error 804: forward "
         "compatibility was attempted on non supported HW (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:109.)",
         804, "driver"),
        # gpustack/gpustack#1254 (a comment quoting it; fixed by installing nvidia-fabricmanager)
        ("Error 802: system not yet initialized", 802, "system_not_ready"),
    ],
)
def test_a_cuda_code_before_its_own_message_needs_no_anchor(text: str, code: int, cls: str) -> None:
    err = codes.cuda_error_of(text)
    assert err is not None and (err.code, err.cls) == (code, cls)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Error 802: system not yet initialized", 802),  # (gpustack/gpustack#1254, above)
        ("ERROR 802: system not yet initialized", 802),  # the pattern's capitals: `RROR`
        ("CUDA failure 802: system not yet initialized", 802),
        # near misses: no word of the pattern, a number and a message that agree all the same (PyTorch's watchdog
        # line, 300 characters, was where the pattern cost most), and the word without its number
        ("Err 802: system not yet initialized", None),
        ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=24311, OpType=ALLREDUCE, "
         "NumelIn=7098994688, Timeout(ms)=600000) ran for 600060 milliseconds before timing out. 802: system not "
         "yet initialized", None),
        ("Error: system not yet initialized", None),
    ],
)
def test_a_cuda_code_before_its_message_is_found_only_behind_its_words(text: str, code: int | None) -> None:
    by_code = codes._cuda_index()[2]
    err = codes._coded(text, by_code)
    assert (err.code if err is not None else None) == code
    # the pattern itself, over every offset, agrees (the words' test before it only saves its work)
    found = [by_code.get(int(m.group("code"))) for m in codes.CODED_CUDA_MESSAGE.finditer(text)]
    assert any(e is not None and text.startswith(e.message, m.end())
               for e, m in zip(found, codes.CODED_CUDA_MESSAGE.finditer(text), strict=True)) == (code is not None)


@pytest.mark.parametrize(
    "text",
    [
        # Azure/azure-vhd-utils#52: the Azure SDK for Go's error, `returned error` after no CUDA call
        "storage: service returned error: StatusCode=503, ErrorCode=ServerBusy, ErrorMessage=The server is busy.",
        # constructed from the 804 line above with another number: the code and its message must agree
        "Error 12: forward compatibility was attempted on non supported HW",
    ],
)
def test_no_cuda_call_and_no_agreeing_code_is_no_cuda_error(text: str) -> None:
    assert codes.cuda_error_of(text) is None


def test_the_cudacheck_macros_line_decides_only_by_a_message_of_the_table() -> None:
    # near miss (constructed in the macro's layout): a message the CUDA table does not hold is a CUDA error of no
    # class the rules take as a cause ("other": a symptom), not the configuration the table's message above names
    err = codes.cuda_error_of("Failed: Cuda error /src/kernels/pack.cu:88 'some driver text nobody listed'")
    assert err is not None and err.cls == "other"


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


def test_srun_names_the_host_whose_task_the_memory_limit_ended() -> None:
    # NVIDIA/NeMo#10192: srun's `HOST: task N:` names the node; slurmstepd's count beside it names none.
    events, _ = feed(["srun: error: as01r3b17: task 3: Out Of Memory",
                      "slurmstepd: error: Detected 1 oom_kill event in StepId=4777403.0. Some of the step tasks have "
                      "been OOM Killed."])
    assert [(e.kind, e.fields.get("host")) for e in events] == [("host.oom_kill", "as01r3b17"), ("host.oom_kill", None)]
    # A task that failed for another reason names its host but is no memory kill.
    other, _ = feed(["srun: error: as01r3b17: task 3: Exited with exit code 1"])
    assert all(e.kind != "host.oom_kill" for e in other)


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


@pytest.mark.parametrize("benign, error", [
    ("node-01 kernel: link check: rx errors=0", "node-01 kernel: link check: rx errors=7"),
    ("scrub: found 0 errors in shard 12", "scrub: found 3 errors in shard 12"),
    ("health: checks failed: 0 of 8", "health: checks failed: 2 of 8"),
])
@pytest.mark.parametrize("benign_first", [True, False])
def test_a_count_of_zero_never_makes_a_line_with_another_count_benign(benign: str, error: str,
                                                                      benign_first: bool) -> None:
    """The templates are remembered by the line with its digits zeroed; `errors=0` and `errors=7` share
    that key, but only the first is benign, whichever comes first."""
    lines = [benign, error] if benign_first else [error, benign]
    _, ex = feed(lines, hosts=("node-01",))
    groups = ex.unrecognized.groups(lambda n, h, r: n)
    assert [(g.count, g.text) for g in groups] == [(1, error)]


def test_a_failure_whose_errno_text_says_no_error_is_still_a_failure() -> None:
    """`no error` is a count's word (benign) only where nothing else on the line says something failed: Gloo's
    connectFullMesh failing with errno 0's text (sgl-project/sglang#3226, the line as posted) is a failure."""
    gloo = ("[rank10]:[E130 18:11:34.707542570 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
            "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error")
    _, ex = feed([gloo, "health check: no errors, 0 failures"], hosts=("node-01",))
    groups = ex.unrecognized.groups(lambda n, h, r: n)
    assert [g.line for g in groups] == [1]


def test_open_mpis_help_aggregation_is_context_and_the_message_it_counts_is_not() -> None:
    """Open MPI counts the copies of a help message it printed once and advises how to see them all (the first three
    lines as Open MPI users' list posts quote them, after an openib and a BTL message); the count and the advice are
    no error of their own, a line that names an error beside those words (this test's) still is."""
    _, ex = feed([
        "[node11:28202] 13 more processes have sent help message help-mpi-btl-openib.txt / pp rnr retry exceeded",
        "[node11:28202] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages",
        "[n06:08470] 1 more process has sent help message help-mpi-btl-base.txt / btl:no-nics",
        "[node11:28202] ERROR: the help message help-mpi-btl-openib.txt could not be sent",
    ], hosts=("node11", "n06"))
    groups = ex.unrecognized.groups(lambda n, h, r: n)
    assert [g.line for g in groups] == [4]


# ---------------------------------------------------------------- catalog validator


def test_an_xid_class_that_no_rule_matches_fails_the_catalog(tmp_path: object) -> None:
    import shutil
    from pathlib import Path

    from firstfault.engine.loader import default_root

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
    name=st.sampled_from(numerics._METRIC_NAMES),
    joiner=st.sampled_from(numerics._JOINERS),
    opener=st.sampled_from(numerics._OPENS),
    value=st.sampled_from(numerics._VALUES),
    post=st.sampled_from(["", ", device='cuda:0')", " | lr 1e-4", "\t", "}"]),
)
def test_a_numerics_line_the_regex_reads_always_passes_the_prefilter(pre: str, name: str, joiner: str, opener: str,
                                                                       value: str, post: str) -> None:
    line = f"{pre}{name}{joiner}{opener}{value}{post}"
    assert numerics.numerics(line) is not None, line
    assert any(w in line for w in numerics.NumericsExtractor.literals), line


@pytest.mark.parametrize("line", [
    "Rank 3: found NaN in local grad norm in backward pass before data-parallel communication collective.",
    "Rank 0: found Inf in local grad norm in backward pass",
    "RuntimeError: NaN or Inf found in input tensor.",
    "Loss is NaN, stopping training",
    "ValueError: Loss became infinite or NaN at step 1200",
])
def test_the_fixed_nan_phrases_pass_the_prefilter_without_a_bare_nan_word(line: str) -> None:
    """The numerics literals hold no bare `NaN` (it slowed the whole scan): each phrase the fixed
    patterns read still holds one of them."""
    assert "NaN" not in numerics.NumericsExtractor.literals
    assert numerics.numerics(line) is not None, line
    assert any(w in line for w in numerics.NumericsExtractor.literals), line


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
    from firstfault.analysis.analyze import Analyzer

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


# ---------------------------------------------------------------- wild-sw readings, both ways

_DS = ("[INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
       "Attempted loss scale: {}, reducing to {}")


@pytest.mark.parametrize(
    ("text", "oom"),
    [
        # JAX/XLA (patrickbryant1/AFProfile#8), TensorFlow's GPU BFC allocator
        # (dBeker/Faster-RCNN-TensorFlow-Python3#110)
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
         "4770354232 bytes.", True),
        ("ResourceExhaustedError: OOM when allocating tensor with shape[25088,4096] and type float on "
         "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", True),
        ("W tensorflow/core/framework/op_kernel.cc:968] Resource exhausted: OOM when allocating tensor with "
         "shape[256,832,7,7]", True),
        # a host allocator's OOM is the host's memory; a gRPC quota is no OOM at all
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
         "shape[64,224,224,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu", False),
        ("google.api_core.exceptions.ResourceExhausted: 429 RESOURCE_EXHAUSTED: Quota exceeded for aiplatform",
         False),
        # keras-team/keras-io#709: the allocator's warning, not a failure
        ("2021-11-16 11:33:53.139338: W tensorflow/core/common_runtime/bfc_allocator.cc:272] Allocator (GPU_0_bfc) ran "
         "out of memory trying to allocate 2.18GiB with freed_by_count=0. The caller indicates that this is not a "
         "failure, but may mean that there could be performance gains if more memory were available.", False),
    ],
)
def test_accelerator_oom_in_every_framework(text: str, oom: bool) -> None:
    assert (codes.accelerator_oom(text) is not None) is oom
    events, _ = feed([text])
    assert ("app.cuda_oom" in [e.kind for e in events]) is oom


def test_estale_inside_a_shared_cache_writer_is_a_race_not_the_filesystem() -> None:
    # modelscope/ms-swift#6695
    race, _ = feed([
        '[rank1]:   File "/usr/local/lib/python3.10/dist-packages/datasets/arrow_dataset.py", line 4101, in '
        "_select_with_indices_mapping",
        "[rank1]:     os.chmod(indices_cache_file_name, 0o666 & ~umask)",
        "[rank1]: OSError: [Errno 116] Stale file handle: xxx",
    ])
    assert [(e.kind, e.fields.get("errno"), e.fields.get("cache_race")) for e in race] == [
        ("app.exception", "ESTALE", True)]
    # the same errno while writing a checkpoint is the file system's
    ckpt, _ = feed([
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 440, in save',
        "    with _open_zipfile_writer(f) as opened_zipfile:",
        "OSError: [Errno 116] Stale file handle: '/nfs/ckpt/step_100.pt'",
    ])
    assert [(e.kind, e.fields.get("errno")) for e in ckpt] == [("storage.error", "ESTALE")]


def test_a_checkpoint_file_that_cannot_be_opened_is_a_failed_write_only_inside_the_save() -> None:
    # Sachini/ronin#51
    save, _ = feed([
        "Traceback (most recent call last):",
        '  File "/opt/anaconda3/envs/py397/lib/python3.9/site-packages/torch/serialization.py", line 422, in save',
        "    with _open_zipfile_writer(f) as opened_zipfile:",
        "RuntimeError: File my_out/checkpoints/checkpoint_0.pt cannot be opened.",
    ])
    assert [e.kind for e in save] == ["storage.error"]
    other, _ = feed([
        "Traceback (most recent call last):",
        '  File "/srv/app/loader.py", line 12, in load',
        "    cfg = read(path)",
        "RuntimeError: File config.yaml cannot be opened.",
    ])
    assert [e.kind for e in other] == ["app.exception"]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # real-stanford/flingbot#11; a raylet summary
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", "host.oom_kill"),
        ("(raylet) [2025-12-07 09:57:19,206 E 393463 393463] (raylet) node_manager.cc:3277: 2 Workers (tasks / actors) "
         "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons", "host.oom_kill"),
        # concourse/hush-house#8: the kubelet's eviction for a resource other than memory
        ("  message: 'The node was low on resource: ephemeral-storage. Container hush-house-worker", "k8s.pod"),
        ("Pod The node had condition: [DiskPressure]. ", "k8s.pod"),
        # memory pressure stays an OOM kill, not an eviction of the scheduler's
        ("Message:        The node was low on resource: memory. Container x was using 9Gi", "host.oom_kill"),
        # no memory kill: a lone exception line of the workload's own (read as terminal)
        ("ValueError: the node was low on samples", "app.exception"),
    ],
)
def test_memory_kills_and_kubelet_evictions(line: str, kind: str | None) -> None:
    events, _ = feed([line])
    assert [e.kind for e in events] == ([kind] if kind else [])


@pytest.mark.parametrize(
    ("line", "host", "due_to"),
    [
        ("slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***", "n447",
         "time_limit"),  # marbl/canu#1067, pre-17.11 wording
        ("slurmstepd-phoenix-07: error: *** JOB 1449736 ON phoenix-07 CANCELLED AT 2023-12-03T12:47:09 DUE TO TIME "
         "LIMIT ***", "phoenix-07", "time_limit"),  # DataBiosphere/toil#4706
        ("slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 ***", None, None),
    ],
)
def test_slurm_banners_old_and_new(line: str, host: str | None, due_to: str | None) -> None:
    events, _ = feed([line])
    assert [(e.kind, e.fields.get("due_to")) for e in events] == [("process.signal", due_to)]
    assert events[0].fields.get("host") == host


def test_a_peer_failure_message_of_horovod_is_a_symptom() -> None:
    # ChenRocks/UNITER#31
    events, _ = feed([
        '[1,1]<stderr>:  File "/opt/conda/lib/python3.6/site-packages/horovod/torch/mpi_ops.py", line 436, '
        "in synchronize",
        "[1,1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)",
        "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks "
        "or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.",
    ])
    assert [e.kind for e in events] == ["nccl.remote_error"]
    mine, _ = feed(["Traceback (most recent call last):", '  File "t.py", line 1, in <module>',
                    "RuntimeError: shape mismatch on one of the inputs"])
    assert [e.kind for e in mine] == ["app.exception"]


def test_loss_was_nan_and_its_near_miss() -> None:
    # neuralhydrology/neuralhydrology#8
    events, _ = feed(["RuntimeError: Loss was NaN for 1 times in a row. Stopped training."])
    assert "app.numerics" in [e.kind for e in events]
    calm, _ = feed(["INFO: loss was nominal at step 3"])
    assert [e.kind for e in calm] == []


def _metrics(lines: list[str]) -> list[object]:
    events, _ = feed(lines)
    return [e.fields.get("metric") for e in events if e.kind == "app.numerics"]


def test_a_loss_scale_collapse_is_read_once_and_recovery_resets_it() -> None:
    # zai-org/ChatGLM-6B#1008: 65536 halved to 1024 without a rise
    scales = [65536, 32768, 16384, 8192, 4096, 2048, 1024, 512]
    collapse = [_DS.format(a, b) for a, b in itertools.pairwise(scales)]
    got = _metrics(collapse)
    # read right after the 6th halving, and only once
    assert got.count("loss_scale_collapse") == 1 and got.index("loss_scale_collapse") == 6
    # a rise between overflows starts a new run: never six halvings in a row
    recovering = [_DS.format(a, b) for a, b in [(65536, 32768), (32768, 16384), (16384, 8192), (65536, 32768),
                                                (32768, 16384), (16384, 8192), (8192, 4096)]]
    assert "loss_scale_collapse" not in _metrics(recovering)
    # apex and fairseq name only the new scale; reaching 1 is the floor
    fairseq = [f"| WARNING: overflow detected, setting loss scale to: {v}" for v in (8.0, 4.0, 2.0, 1.0)]
    assert _metrics(fairseq)[-1] == "loss_scale_floor"


_PADDLE = "Found inf or nan, current scale is: {0}, decrease to: {0}*0.5"


def test_paddles_loss_scaler_is_read_by_the_same_collapse_model() -> None:
    # PaddlePaddle/PaddleOCR#6848: the scale already below 1 and still halving: the scaler's floor reached (the loss
    # overflows fp16 unscaled); Paddle's scaler names the scale it leaves and the factor, not the new scale
    posted = [_PADDLE.format(v) for v in ("0.001953125", "0.0009765625", "0.00048828125")]
    assert _metrics(posted) == ["loss_scale", "loss_scale_floor", "loss_scale", "loss_scale"]
    # near miss (Paddle's default init_loss_scaling 2**15, the printer's own format): the scaler finding its level
    # in two halvings is routine, each overflow only a skipped step
    start = [_PADDLE.format(v) for v in ("32768.0", "16384.0")]
    assert _metrics(start) == ["loss_scale", "loss_scale"]
    # six halvings in a row from there, down to 512, are the collapse, as for DeepSpeed's words
    falling = [_PADDLE.format(float(2 ** k)) for k in range(15, 9, -1)]
    assert _metrics(falling)[-1] == "loss_scale_collapse"
    # the same words without Paddle's `*ratio` (a person's paraphrase) are no reading of the scale
    assert _metrics(["Found inf or nan, current scale is: 1024.0, decrease to: 512.0"]) == []


@pytest.mark.parametrize(
    ("line", "host", "proc", "body"),
    [
        ("(RayTrainWorker pid=4331, ip=10.0.0.7) Traceback (most recent call last):", "10.0.0.7", "4331",
         "Traceback (most recent call last):"),
        ("(pid=4331) ValueError: x", None, "4331", "ValueError: x"),
        ("(raylet, ip=172.24.0.226) node_manager.cc:3277: 2 Workers", "172.24.0.226", "raylet",
         "node_manager.cc:3277: 2 Workers"),
        ("[pod/trainer-0/pytorch] RuntimeError: y", None, "pod/trainer-0/pytorch", "RuntimeError: y"),
        ("trainer-1  | Traceback (most recent call last):", None, "trainer-1", "Traceback (most recent call last):"),
        # near misses: a conda prompt, a table row, a parenthesised remark
        ("(base) user@host:~$ python t.py", None, None, "(base) user@host:~$ python t.py"),
        ("Epoch 1 | loss 0.3", None, None, "Epoch 1 | loss 0.3"),
        ("(see above) ValueError: x", None, None, "(see above) ValueError: x"),
    ],
)
def test_ray_kubectl_and_compose_prefixes(line: str, host: str | None, proc: str | None, body: str) -> None:
    p = split_prefixes(line)
    assert (p.host, p.proc, p.body) == (host, proc, body)


def test_interleaved_ray_worker_tracebacks_stay_apart() -> None:
    events, _ = feed([
        "(RayTrainWorker pid=11) Traceback (most recent call last):",
        "(RayTrainWorker pid=12) Traceback (most recent call last):",
        '(RayTrainWorker pid=11)   File "train.py", line 3, in step',
        '(RayTrainWorker pid=12)   File "train.py", line 9, in load',
        "(RayTrainWorker pid=11) KeyError: 'input_ids'",
        "(RayTrainWorker pid=12) FileNotFoundError: [Errno 2] No such file or directory: 'shard-7.arrow'",
    ])
    assert sorted(str(e.fields.get("exc_type")) for e in events) == ["FileNotFoundError", "KeyError"]


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # a program's own error line ending in a storage strerror, any case (Go, TensorFlow print it lower-case)
        ("tee: /scratch/run/train.log: No space left on device", ("storage.error", "ENOSPC")),
        ("write /var/lib/docker/overlay2/abc/diff/ckpt.pt: no space left on device", ("storage.error", "ENOSPC")),
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: disk quota exceeded [Op:SaveV2]",
         ("storage.error", "EDQUOT")),
        # a C program's call that `failed` and then its strerror, no colon: mdtest's warning as IO500 ran out of
        # disk (IO500/io500#63), and `failed with` (constructed; the idiom of C programs that print strerror after
        # their own words, as in `mount("selinuxfs") failed No such file or directory`)
        ("WARNING: write(20, 0x25385000, 3901) failed No space left on device", ("storage.error", "ENOSPC")),
        ("fallocate(/scratch/ckpt/step_900.pt) failed with Disk quota exceeded", ("storage.error", "EDQUOT")),
        # ... but not a remark, not /dev/shm (the workload's), not NCCL's own shm report, not a failure the
        # program retries (constructed: the strerror is not the line's end)
        ("INFO: checking for the message No space left on device in logs", None),
        ("upload failed with No space left on device, retrying in 5 s", None),
        ("error: cannot write /dev/shm/torch_123: No space left on device", None),
        ("node-1:100:200 [0] NCCL WARN Call to posix_fallocate failed : No space left on device",
         ("app.exception", "ENOSPC")),
    ],
)
def test_storage_strerror_lines(line: str, want: tuple[str, str] | None) -> None:
    events, _ = feed([line])
    assert [(e.kind, e.fields.get("errno")) for e in events] == ([want] if want else [])


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
         ("app.cuda_oom", None)),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", ("app.cuda_oom", None)),
        ("slurmstepd: error: Exceeded job memory limit", ("host.oom_kill", "slurm")),
        ("slurmstepd: error: Exceeded step memory limit at some point.", None),
        ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", ("host.oom_kill", "lsf")),
        ("TERM_PREEMPT: job killed after preemption.", ("process.signal", "preemption")),
        ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", ("process.signal", "time_limit")),
        ("Subject: Job 4242: <train> in cluster <c1> Done", None),
    ],
)
def test_library_oom_and_other_schedulers_limits(line: str, want: tuple[str, object] | None) -> None:
    events, _ = feed([line])
    got = [(e.kind, e.fields.get("proc") if e.kind == "host.oom_kill" else e.fields.get("due_to")) for e in events]
    assert got == ([want] if want else [])


def test_a_stamps_milliseconds_before_error_are_not_a_count_of_zero() -> None:
    """`10:00:07,000 ERROR` holds `000 ERROR`: not a count (`_BENIGN` reads one digit standing alone),
    so Python-logging error lines share their shape's template like any other line."""
    _, ex = feed([
        "2026-11-02 10:00:07,000 ERROR link eth0 failed: carrier lost",
        "2026-11-02 10:00:08,000 ERROR link eth1 failed: carrier lost",
    ], hosts=("node-01",))
    groups = ex.unrecognized.groups(lambda n, h, r: n)
    assert [(g.template, g.count) for g in groups] == [("<TIME> ERROR link eth0 failed: carrier lost", 2)]
