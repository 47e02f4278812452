"""The exception extractor (extract/exceptions.py) on real lines (domain-facts sections 3.3, 3.8-3.10):
Python tracebacks, C++ `terminate called` aborts, CUDA errors and OOMs, NCCL failures read from tracebacks.

Lines are verbatim from the public issues cited next to them unless marked
`synthetic`. Multi-line records are fed line by line through one shared
state, and only the lines holding a literal reach the extractor (as in the
scanner), so these tests also prove we never depend on traceback frames.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.extract import exceptions, nccl
from firstfault.extract.base import LineExtractor
from tests.extract.helpers import APPLICATION, TB, assert_fields, holds_literal, kinds
from tests.extract.helpers import one_application as one
from tests.extract.helpers import scan_application as scan

EXC = exceptions.ExceptionExtractor()
ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *APPLICATION)


# ------------------------------------------------------------ app.exception


def test_traceback_closes_on_exception_line_with_frames_filtered() -> None:
    lines = [
        TB,
        '  File "/workspace/train.py", line 212, in <module>',
        "    main()",
        '  File "/workspace/errors.py", line 40, in check_Error',  # holds "Error", is a frame
        '    raise ValueError(f"bad shape {x.shape}")',  # holds "Error", is source
        "ValueError: bad shape torch.Size([8, 4096])",
    ]
    assert holds_literal(EXC, lines[0]) and holds_literal(EXC, lines[-1])
    drafts = scan(EXC, lines)
    assert kinds(drafts) == ["app.exception"]
    assert drafts[0].fields == {"exc_type": "ValueError", "message": "bad shape torch.Size([8, 4096])"}


@pytest.mark.parametrize(
    ("closing", "exc_type", "message"),
    [
        ("omegaconf.errors.ConfigAttributeError: Key 'lr' is not in struct", "ConfigAttributeError", None),
        ("AssertionError", "AssertionError", ""),
        ("FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0001.bin'", "FileNotFoundError", None),
        ("  ZeroDivisionError: division by zero", "ZeroDivisionError", "division by zero"),
        ("StopIteration", "StopIteration", ""),
        ("SystemExit: 1", "SystemExit", "1"),
    ],
)
def test_exception_types(closing: str, exc_type: str, message: str | None) -> None:
    assert holds_literal(EXC, closing)
    drafts = scan(EXC, [TB, closing])
    assert kinds(drafts) == ["app.exception"]
    assert drafts[0].fields["exc_type"] == exc_type
    if message is not None:
        assert drafts[0].fields["message"] == message


def test_rank_prefix_sets_rank_and_streams_do_not_mix() -> None:
    """Two ranks' tracebacks interleaved in one file, PyTorch >= 2.2 prefixes."""
    lines = [
        "[rank3]: " + TB,
        "[rank5]: " + TB,
        '[rank3]:   File "train.py", line 9, in <module>',
        "[rank5]: KeyError: 'input_ids'",
        "[rank3]: IndexError: index 7 is out of bounds for dimension 0 with size 4",
    ]
    drafts = scan(EXC, lines)
    assert [(d.rank, d.fields["exc_type"]) for d in drafts] == [(5, "KeyError"), (3, "IndexError")]


def test_a_chain_is_one_failure_its_first_member_decides() -> None:
    lines = [
        TB,
        "KeyError: 'model.layers.0.weight'",
        "During handling of the above exception, another exception occurred:",
        TB,
        "RuntimeError: Error(s) in loading state_dict for GPT: Missing key(s)",
    ]
    drafts = scan(EXC, lines)
    assert [d.fields["exc_type"] for d in drafts] == ["KeyError"]


# torchrun 2.13's agent, when a worker left its error.json empty (tests/lab/captured/os_exit_torn_error_file,
# real torchrun output; the frames between are cut here): the agent's own exception while it reaps the worker.
_AGENT_SITE = "/work/.venv/lib/python3.11/site-packages/torch/distributed"
_AGENT_TB = [
    TB,
    '  File "/work/.venv/bin/torchrun", line 8, in <module>',
    f'  File "{_AGENT_SITE}/elastic/multiprocessing/api.py", line 974, in _capture_process_failures',
    '  File "<string>", line 7, in __init__',
    f'  File "{_AGENT_SITE}/elastic/multiprocessing/errors/__init__.py", line 123, in __post_init__',
    "    self.error_file_data = json.load(fp)",
    '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py", line 293, in load',
    '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 355, in raw_decode',
    '    raise JSONDecodeError("Expecting value", s, err.value) from None',
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
]


def test_the_launchers_own_exception_while_reaping_a_worker_is_not_the_workloads() -> None:
    # the launcher's word that a worker failed, nothing about why
    assert [(d.kind, d.fields["state"]) for d in scan(EXC, _AGENT_TB)] == [("launcher.exit", "FAILED")]
    # The same exception from the workload's own code (its innermost frame outside the standard library) is.
    own = [*_AGENT_TB[:-5], '  File "/work/train.py", line 40, in load_config', *_AGENT_TB[-5:]]
    assert [d.fields["exc_type"] for d in scan(EXC, own)] == ["JSONDecodeError"]
    # ... and a Debian python3's dist-packages torch is a package, not the standard library.
    deb = [line.replace(_AGENT_SITE, "/usr/lib/python3/dist-packages/torch/distributed") for line in _AGENT_TB]
    assert [d.kind for d in scan(EXC, deb)] == ["launcher.exit"]


# A launcher whose own code does not fit the torch it runs on (an agent subclass calling torchrun's agent with the
# signature of another release; CPython's words for the call, Objects/call.c): the launcher failing on its own.
_AGENT_MISMATCH = [
    TB,
    f'  File "{_AGENT_SITE}/elastic/agent/server/api.py", line 680, in run',
    "    result = self._invoke_run(role)",
    '  File "/opt/venv/lib/python3.10/site-packages/somelauncher/agent.py", line 88, in _invoke_run',
    "    self._initialize_workers(self._worker_group)",
    f'  File "{_AGENT_SITE}/elastic/agent/server/api.py", line 520, in _rendezvous',
    "    self._set_master_addr_port(",
]


@pytest.mark.parametrize("closing", [
    "TypeError: _set_master_addr_port() takes 3 positional arguments but 4 were given",
    "TypeError: _rendezvous() got an unexpected keyword argument 'timeout'",
    "AttributeError: 'WorkerGroup' object has no attribute 'master_addr'",
])
def test_the_launchers_code_that_does_not_fit_what_it_calls_is_its_own_failure(closing: str) -> None:
    assert [(d.kind, d.fields["exc_type"]) for d in scan(EXC, [*_AGENT_MISMATCH, closing])] == [
        ("app.exception", closing.split(":", 1)[0])]


@pytest.mark.parametrize("closing", [
    "TypeError: 'NoneType' object is not subscriptable",
    "AttributeError: 'NoneType' object has no attribute 'get'",
])
def test_the_launchers_other_type_errors_while_reaping_a_worker_stay_its_report(closing: str) -> None:
    # the same classes with words that say nothing of a mismatch: the agent tripping over what a worker left
    assert [d.kind for d in scan(EXC, [*_AGENT_TB[:-4], closing])] == ["launcher.exit"]


def _one_node_bundle(root: Path, log: str) -> Path:
    """A bundle of one node's application log (the runs below were on 2026-12-01, 17:40-18:30 UTC)."""
    (root / "app").mkdir()
    (root / "app" / "node-001.log").write_text(log)
    (root / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: one-node\n  nodes: [node-001]\n  timezone: UTC\n"
        "  window: {start: '2026-12-01T17:40:00Z', end: '2026-12-01T18:30:00Z'}\n"
        "sources:\n- {kind: application, path: 'app/{node}.log'}\n")
    return root


# `accelerate launch --cpu --num_processes 1 train.py` (accelerate 1.15.0, torch 2.13.0, run on the development
# machine 2026-12-01) whose script logs three steps and calls sys.exit(1): the launcher's report, verbatim.
_ACCELERATE_TB = [
    "2026-12-01 17:45:50,413 INFO train: step 2: loss 0.7",
    TB,
    '  File "<frozen runpy>", line 198, in _run_module_as_main',
    '  File "<frozen runpy>", line 88, in _run_code',
    '  File "/tmp/accpkgs/accelerate/commands/launch.py", line 1423, in <module>',
    "    main()",
    '  File "/tmp/accpkgs/accelerate/commands/launch.py", line 1413, in launch_command',
    "    simple_launcher(args)",
    '  File "/tmp/accpkgs/accelerate/commands/launch.py", line 999, in simple_launcher',
    "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)",
    "subprocess.CalledProcessError: Command '['/work/main/.venv/bin/python', 'train.py']' returned non-zero exit "
    "status 1.",
]


def test_accelerates_report_of_its_childs_exit_status_is_not_the_workloads_exception(tmp_path: Path) -> None:
    assert [(d.kind, d.fields["state"]) for d in scan(EXC, _ACCELERATE_TB)] == [("launcher.exit", "FAILED")]
    # The same bundle end to end: the launcher says train.py failed, nothing says why, so no cause may be named
    # (and the run is not taken to have been well: its end is the launcher's report).
    from firstfault.analysis.analyze import Analyzer

    v = Analyzer().analyze_path(str(_one_node_bundle(tmp_path, "\n".join(_ACCELERATE_TB) + "\n")))
    assert (v.outcome, v.attributed_domain, v.root_cause) == ("failed", "unknown", None)
    # A child that died of a signal is still read from the launcher's report (signals come first).
    killed = [*_ACCELERATE_TB[:-1], "subprocess.CalledProcessError: Command '['python', 'train.py']' died with "
                                    "<Signals.SIGKILL: 9>."]
    assert [(d.kind, d.fields["signal"]) for d in scan(EXC, killed)] == [("process.signal", "SIGKILL")]


MPSPAWN = Path(__file__).resolve().parents[1] / "fixtures" / "mpspawn"


@pytest.mark.parametrize(("mode", "domain", "summary"), [
    ("raise", "software", "ValueError: label tensor has 15 columns, the model expects 16"),
    ("kill", "unknown", None),
    ("exit", "unknown", None),
])
def test_mp_spawn_reports_are_the_launchers(tmp_path: Path, mode: str, domain: str, summary: str | None) -> None:
    """mp.spawn's join raises ProcessRaisedException (a worker's traceback in its message) or
    ProcessExitedException (a worker's exit code or signal): the launcher's report, never the cause itself
    (tests/fixtures/mpspawn/PROVENANCE.md: real torch 2.13 runs, expectations from the fault)."""
    from firstfault.analysis.analyze import Analyzer

    v = Analyzer().analyze_path(str(_one_node_bundle(tmp_path, (MPSPAWN / f"{mode}.log").read_text())))
    assert v.attributed_domain == domain
    if summary is None:
        assert v.root_cause is None
    else:
        assert v.root_cause is not None and v.root_cause.summary.startswith(summary)
    lines = (MPSPAWN / f"{mode}.log").read_text().splitlines()
    drafts = scan(EXC, lines)
    if mode == "kill":  # the signal is read from the report, by the launcher
        assert [(d.kind, d.fields["signal"], d.fields["by"]) for d in drafts] == [
            ("process.signal", "SIGKILL", "launcher")]


@pytest.mark.parametrize(("frame", "stdlib"), [
    ('  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode', True),
    ('  File "C:\\Python311\\Lib\\json\\decoder.py", line 355, in raw_decode', True),
    ('  File "<string>", line 7, in __init__', True),
    ('  File "/usr/lib/python3/dist-packages/torch/serialization.py", line 9, in save', False),
    ('  File "/opt/venv/lib/python3.11/site-packages/json5/lib.py", line 9, in load', False),
    ('  File "C:\\venv\\Lib\\site-packages\\torch\\serialization.py", line 9, in save', False),
    ('  File "/home/u/lib/train.py", line 3, in main', False),
    ('  File "/home/u/lib/python3_utils/io.py", line 3, in load', False),  # a directory named like one
    ('  File "/opt/conda/lib/python3.10/json/decoder.py", line 355, in raw_decode', True),
])
def test_standard_library_frames(frame: str, stdlib: bool) -> None:
    from firstfault.extract import traceback as tb

    assert tb._stdlib(frame) is stdlib


# A thread's uncaught exception ends the thread, not the process: in a thread an installed package started (a
# framework's watcher, a logger's writer) it is none of the workload's failures; in the workload's own thread it is.
LIBRARY_THREADS = [
    # tensorflow/tpu#590: TensorFlow's TPU preemption watcher, on an answer without a `health` field
    ["Exception in thread Thread-4:",
     TB,
     '  File "/usr/lib/python3.6/threading.py", line 916, in _bootstrap_inner',
     "    self.run()",
     '  File "/usr/local/lib/python3.6/dist-packages/tensorflow/python/tpu/preempted_hook.py", line 89, in run',
     "    self._cluster._tpu, response['state'], response['health'])  # pylint: disable=protected-access",
     "KeyError: 'health'"],
    # uzh-rpg/rpg_ramnet#17: tensorboard's event writer on Windows, its directory gone (the stored copy of the
    # thread ends the last line there)
    ["Exception in thread Thread-4:",
     TB,
     r'  File "I:\anaconda3\envs\RAMNET\lib\threading.py", line 926, in _bootstrap_inner',
     "    self.run()",
     r'  File "I:\anaconda3\envs\RAMNET\lib\site-packages\tensorboard\summary\writer\event_file_writer.py", '
     "line 233, in run",
     "    self._record_writer.write(data)",
     r'  File "I:\anaconda3\envs\RAMNET\lib\site-packages\tensorboard\summary\writer\record_writer.py", line 40, '
     "in write",
     "    self._writer.write(header + header_crc + data + footer_crc)",
     r'  File "I:\anaconda3\envs\RAMNET\lib\site-packages\tensorboard\compat\tensorflow_stub\io\gfile.py", line '
     "761, in write",
     "    self.fs.write(self.filename, file_content, self.binary_mode)",
     r'  File "I:\anaconda3\envs\RAMNET\lib\site-packages\tensorboard\compat\tensorflow_stub\io\gfile.py", line '
     "150, in write",
     '    self._write(filename, file_content, "wb" if binary_mode else "w")',
     r'  File "I:\anaconda3\envs\RAMNET\lib\site-packages\tensorboard\compat\tensorflow_stub\io\gfile.py", line '
     "164, in _write",
     "    with io.open(filename, mode, encoding=encoding) as f:",
     r"FileNotFoundError: [Errno 2] No such file or directory: b'I:\\PHD_study\\Projects\\RAMnet\\data\\"
     r"trained_model_test\\ergb2depth\\e2depth_si_grad_loss_statenet_skip_conv_convgru_every5rgbframes_"
     r"imageevents4loss_LR0003_S5_100_scale1_clip80_regf3_2\\tensorboard/losses_L_grad\\events.out.tfevents."
     r"1686365193.PC-20230210LQF"],
]


@pytest.mark.parametrize("lines", LIBRARY_THREADS)
def test_an_exception_that_ended_a_librarys_own_thread_is_no_failure_of_the_workloads(lines: list[str]) -> None:
    assert scan(ALL, lines) == []
    # without its header line (a posted excerpt that starts at `Traceback`) the thread's bootstrap frame says the same
    assert scan(ALL, lines[1:]) == []
    # the same traceback in the main thread (no thread's bootstrap frame under it) is the workload's exception
    assert kinds(scan(ALL, [lines[1], *lines[4:]])) == ["app.exception"]


def test_an_exception_that_ended_the_workloads_own_thread_is_its_exception() -> None:
    # tests/lab/captured/thread_exception (run here): the workload's prefetch thread; the main thread waits on it
    lines = ["Exception in thread prefetch:",
             TB,
             '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
             "    self.run()",
             '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", line 982, in run',
             "    self._target(*self._args, **self._kwargs)",
             '  File "/work/wt-lab2/lab/train.py", line 205, in prefetch',
             '    raise ValueError(f"unexpected record header {header!r} in shard {shard}")',
             "ValueError: unexpected record header b'\\x00\\x07RECD' in shard 3"]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["app.exception"] and drafts[0].fields["exc_type"] == "ValueError"


def test_exception_line_without_traceback_is_read_as_terminal() -> None:
    # Alone, the line may be an uncaught exception's last line (spec: read as its traceback would be) or a
    # logger's remark: it is marked `terminal`, and the engine decides from its place in the stream
    # (tests/engine/test_terminal_lines.py). A C++ stack's header is no exception line at all.
    drafts = scan(EXC, ["ValueError: logged by a handler, not raised"])
    assert kinds(drafts) == ["app.exception"] and drafts[0].fields["terminal"] is True
    assert scan(EXC, ["Exception raised from checkTimeout at ProcessGroupNCCL.cpp:567 (most recent call first):"]) == []


def test_child_failed_error_is_left_to_the_block_extractor() -> None:
    lines = [TB, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "]
    assert scan(EXC, lines) == []


# ---------------------------------------------------------- process.signal (exceptions)


def test_keyboard_interrupt_is_a_signal() -> None:
    drafts = scan(ALL, [TB, "KeyboardInterrupt"])
    assert kinds(drafts) == ["process.signal"]
    assert_fields(drafts[0], {"signal": "SIGINT", "by": "launcher"})


def test_torchrun_signal_exception() -> None:
    """torchrun's agent re-raises the signal it received."""
    closing = "torch.distributed.elastic.multiprocessing.api.SignalException: Process 2606 got signal: 15"
    drafts = scan(ALL, [TB, closing])
    assert kinds(drafts) == ["process.signal"]
    assert_fields(drafts[0], {"signal": "SIGTERM", "by": "scheduler"})


def test_system_exit_with_signal_code() -> None:
    drafts = scan(EXC, [TB, "SystemExit: 143"])
    assert kinds(drafts) == ["process.signal"]
    assert drafts[0].fields["signal"] == "SIGTERM"


# ---------------------------------------------------------------- app.cuda_oom

OOM_LINES = [
    # >= 2.1 (pytorch/pytorch#16417 comment)
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity "
    "of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has 23.60 GiB memory "
    "in use.",
    # >= 2.4 (murong-xu/CADS#4 class name)
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 3 has a total capacity of "
    "79.10 GiB of which 1.06 GiB is free.",
    # old format (pytorch#59778)
    "RuntimeError: CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; 781.59 MiB "
    "already allocated; 3.03 GiB free; 1.24 GiB reserved in total by PyTorch)",
    "[rank2]: RuntimeError: CUDA error: out of memory",
]


@pytest.mark.parametrize("closing", OOM_LINES)
def test_cuda_oom_in_traceback(closing: str) -> None:
    drafts = scan(ALL, [TB, closing])
    assert kinds(drafts) == ["app.cuda_oom"], drafts
    assert "out of memory" in str(drafts[0].fields["message"])


@pytest.mark.parametrize("line", OOM_LINES)
def test_cuda_oom_without_traceback(line: str) -> None:
    d = one(EXC, line)
    assert d.kind == "app.cuda_oom"


def test_oom_message_is_the_exception_message() -> None:
    d = scan(EXC, [TB, OOM_LINES[2]])[0]
    assert str(d.fields["message"]).startswith("CUDA out of memory. Tried to allocate 2.26 GiB")


# ---------------------------------------------------------------- app.cuda_error

CUDA_CASES: list[tuple[str, str]] = [
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "illegal_address"),
    ("torch.AcceleratorError: CUDA error: an illegal memory access was encountered", "illegal_address"),
    # jade-hpc-gpu#194
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "ecc"),
    # kohya-ss/sd-scripts#1434: through the NCCL watchdog, no traceback
    (
        "[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: CUDA error: "
        "uncorrectable ECC error encountered",
        "ecc",
    ),
    # vllm-project/vllm#4108
    (
        "[E ProcessGroupNCCL.cpp:916] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: an "
        "illegal memory access was encountered",
        "illegal_address",
    ),
    # pytorch/pytorch#58155
    ("RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution", "nvlink"),
    ("RuntimeError: CUDA error: device-side assert triggered", "device_assert"),
    ("RuntimeError: CUDA error: unspecified launch failure", "launch_failure"),
    ("RuntimeError: CUDA error: misaligned address", "misaligned_address"),
    ("RuntimeError: CUDA error: an illegal instruction was encountered", "illegal_instruction"),
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "unavailable"),
    ("RuntimeError: CUDA error: no CUDA-capable device is detected", "unavailable"),
    ("RuntimeError: No CUDA GPUs are available", "unavailable"),
    ("RuntimeError: CUDA error: unknown error", "other"),
    ("RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered", "illegal_address"),
    (
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access "
        "was encountered",
        "illegal_address",
    ),
    (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access",
        "illegal_address",
    ),
]


@pytest.mark.parametrize(("line", "error"), CUDA_CASES)
def test_cuda_error_plain_line(line: str, error: str) -> None:
    d = one(EXC, line)
    assert d.kind == "app.cuda_error"
    assert d.fields["error"] == error


def test_cuda_error_traceback_with_hints_is_one_event() -> None:
    """The full PyTorch >= 2.4 report: the closing line plus four hint lines."""
    lines = [
        "[rank1]: " + TB,
        '[rank1]:   File "/workspace/model.py", line 88, in forward',
        "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "[rank1]: CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.",
        "[rank1]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "[rank1]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "[rank1]: Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/"
        "group__CUDART__TYPES.html for more information.",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["app.cuda_error"], drafts
    assert drafts[0].rank == 1
    assert drafts[0].fields["message"] == "an illegal memory access was encountered"


def test_terminate_with_cuda_error_what_is_one_event() -> None:
    lines = [
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  CUDA error: an illegal memory access was encountered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.",
        "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most "
        "recent call first):",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["app.cuda_error"], drafts


def test_terminate_with_other_what_is_an_exception() -> None:
    lines = [
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  filesystem error: cannot open file: /ckpt/step-100/model.pt",
    ]
    drafts = scan(EXC, lines)
    assert kinds(drafts) == ["app.exception"]
    assert drafts[0].fields["exc_type"] == "runtime_error"


def test_terminate_with_dist_backend_error_what_goes_to_nccl() -> None:
    """An abort whose what() is a peer loss, with no 'NCCL' literal of its own."""
    lines = [
        "[rank4]:terminate called after throwing an instance of 'c10::DistBackendError'",
        "[rank4]:  what():  [PG 0 Rank 4] Process group watchdog thread terminated with exception: "
        "store->get('0') got error: Connection reset by peer",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["nccl.remote_error"], drafts
    assert drafts[0].rank == 4


# ---------------------------------------------------------------- NCCL via tracebacks


def test_nccl_traceback_is_not_app_exception() -> None:
    """NVIDIA/nccl#2076: the whole PyTorch report closing a traceback."""
    lines = [
        TB,
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "socketProgressOpt: Call to recv from 172.16.0.4<33759> failed : Connection reset by peer",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["nccl.remote_error"], drafts


def test_watchdog_timeout_runtime_error_is_not_app_exception() -> None:
    lines = [
        TB,
        "RuntimeError: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, "
        "OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1800561 milliseconds before timing out.",
    ]
    drafts = scan(ALL, lines)
    assert kinds(drafts) == ["nccl.timeout"], drafts


@pytest.mark.parametrize(
    ("closing", "kind"),
    [
        (
            "torch.distributed.DistNetworkError: Connection reset by peer",
            "nccl.remote_error",
        ),
        (
            "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 7/8 clients joined.",
            "nccl.timeout",
        ),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError: ",
            "nccl.timeout",
        ),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d "
            "store has failed. See inner exception for details.",
            "nccl.remote_error",
        ),
        (
            "RuntimeError: Timed out initializing process group in store based barrier on rank: 3, for key: "
            "store_based_barrier_key:1 (world_size=16, worker_count=15, timeout=0:30:00)",
            "nccl.error",
        ),
    ],
)
def test_distributed_exceptions_map_to_nccl_kinds(closing: str, kind: str) -> None:
    drafts = scan(ALL, [TB, closing])
    assert kinds(drafts) == [kind], drafts


def test_dist_backend_error_plain_line_without_traceback() -> None:
    line = (
        "[rank3]:torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving "
        "ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: "
        "Connection reset by peer"
    )
    drafts = scan(ALL, [line])
    assert kinds(drafts) == ["nccl.remote_error"]
    assert drafts[0].rank == 3
    # and the same line closing a traceback still counts once
    assert kinds(scan(ALL, ["[rank3]: " + TB, line])) == ["nccl.remote_error"]


def test_terminate_line_alone_emits_nothing() -> None:
    assert scan(ALL, ["terminate called after throwing an instance of 'c10::DistBackendError'"]) == []


def test_terminate_pending_survives_unrelated_lines() -> None:
    lines = [
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  CUDA error: an illegal memory access was encountered",
    ]
    assert kinds(scan(EXC, lines)) == ["app.cuda_error"]
    lines = [
        "terminate called after throwing an instance of 'std::runtime_error'",
        "RuntimeError raised elsewhere",
        "  what():  filesystem error: cannot open file",
    ]
    assert kinds(scan(EXC, lines)) == ["app.exception"]


# ------------------------------------------- the logging module's report of a handler's failed write

# The standard library's logging handlers catch what their emit raises and print it (Handler.handleError) and the
# program goes on. Python 2's form, as Autosubmit printed it at every step while its jobs kept running on a file
# system that lost log lines (BSC-ES/autosubmit#759, a b15 wild bundle: this step was fitted after its first run):
_LOGGING_ERROR_PY2 = [
    "Traceback (most recent call last):",
    '  File "/shared/earth/software/Python/2.7.9-foss-2015a/lib/python2.7/logging/__init__.py", line 883, in emit',
    "    self.flush()",
    '  File "/shared/earth/software/Python/2.7.9-foss-2015a/lib/python2.7/logging/__init__.py", line 843, in flush',
    "    self.stream.flush()",
    "IOError: [Errno 116] Stale file handle",
    "Logged from file log.py, line 286",
]
# Python 3's, in CPython's Lib/logging/__init__.py layout (constructed: a full disk under a FileHandler)
_LOGGING_ERROR_PY3 = [
    "--- Logging error ---",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.10/logging/__init__.py", line 1104, in emit',
    "    self.flush()",
    '  File "/usr/lib/python3.10/logging/__init__.py", line 1084, in flush',
    "    self.stream.flush()",
    "OSError: [Errno 28] No space left on device",
    "Call stack:",
    '  File "/app/train.py", line 88, in <module>',
    "    main()",
    "Message: 'step %d'",
    "Arguments: (5,)",
]


@pytest.mark.parametrize("lines", [_LOGGING_ERROR_PY2, _LOGGING_ERROR_PY3])
def test_a_logging_handlers_failed_write_is_reported_and_gone_on_from(lines: list[str]) -> None:
    assert scan(EXC, lines) == []


def test_an_exception_raised_through_logging_elsewhere_than_a_handlers_emit_still_decides() -> None:
    # near miss (constructed): the program's own call into logging's configuration raised and was not caught
    lines = [
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 12, in <module>',
        "    logging.config.dictConfig(cfg)",
        '  File "/usr/lib/python3.10/logging/config.py", line 811, in dictConfig',
        "    dictConfigClass(config).configure()",
        "ValueError: Unable to configure handler 'file'",
    ]
    assert kinds(scan(EXC, lines)) == ["app.exception"]


# ------------------------------------------- exceptions Python ignored, a standard-library helper's own report

# sys.unraisablehook's default output (CPython Python/errors.c): PyTorch's DataLoader finaliser run in a forked child
# at exit, as Python 3.11 prints it (public notebooks' outputs, the torch dataloader.py of 2.1): nothing was raised.
_IGNORED_DEL = [
    "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x79f71c0979c0>",
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.11/dist-packages/torch/utils/data/dataloader.py", line 1604, in __del__',
    "    self._shutdown_workers()",
    '  File "/usr/local/lib/python3.11/dist-packages/torch/utils/data/dataloader.py", line 1587, in _shutdown_workers',
    "    if w.is_alive():",
    '  File "/usr/lib/python3.11/multiprocessing/process.py", line 160, in is_alive',
    "    assert self._parent_pid == os.getpid(), 'can only test a child process'",
    "AssertionError: can only test a child process",
]
# multiprocessing's resource tracker, a helper process of the standard library, reporting a shared-memory name the
# program had unlinked itself (CPython 3.10 Lib/multiprocessing/resource_tracker.py, main's cleanup loop; vLLM
# 0.5.0's workers print it three times, vllm-project/vllm#5468, a b16 wild bundle: fitted after its first run)
_RESOURCE_TRACKER = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.10/multiprocessing/resource_tracker.py", line 209, in main',
    "    cache[rtype].remove(name)",
    "KeyError: '/psm_10b3d52e'",
]


@pytest.mark.parametrize("lines", [_IGNORED_DEL, _RESOURCE_TRACKER,
                                   # 3.12's atexit form (constructed from the same CPython source)
                                   ["Exception ignored in atexit callback: <function _exit_function at 0x7f3a>",
                                    *_IGNORED_DEL[1:]]])
def test_an_exception_python_ignored_or_a_helper_process_reported_is_no_failure(lines: list[str]) -> None:
    assert scan(EXC, lines) == []


def test_near_miss_the_programs_own_exception_after_an_ignored_one_still_decides() -> None:
    # the same report, then (constructed) the workload's own uncaught exception: that one decides; and a header not
    # right before its traceback does not make a later traceback ignored
    own = ["Traceback (most recent call last):", '  File "/app/train.py", line 88, in <module>', "    main()",
           "ValueError: bad shape (3, 4)"]
    assert kinds(scan(EXC, [*_IGNORED_DEL, *own])) == ["app.exception"]
    assert kinds(scan(EXC, [_IGNORED_DEL[0], "step 5 loss 0.1", *own])) == ["app.exception"]
    # a traceback through the resource tracker's module that the program raised from its own code is its own
    mine = ["Traceback (most recent call last):", '  File "/app/train.py", line 12, in <module>',
            "    resource_tracker.register(name, 'shared_memory')",
            '  File "/usr/lib/python3.10/multiprocessing/resource_tracker.py", line 155, in register',
            "    self._send('REGISTER', name, rtype)", "KeyError: 'shared_memory'"]
    assert kinds(scan(EXC, mine)) == ["app.exception"]
