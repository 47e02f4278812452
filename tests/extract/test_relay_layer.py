"""A harness's record that relays a program's output line by line (extract/prefix.py `_RELAY`), peeled so the line is
read as its program wrote it; tested on the harnesses' format strings around lines of public threads (b39's LISA
bundle is not among them), through the prefix layer and the whole analysis.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.prefix import split_prefixes
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker


def _analyze(make_bundle: BundleMaker, text: str) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text}, wl)))


def _cause(v: Verdict) -> str | None:
    return v.root_cause.category if v.root_cause is not None else None


# ---------------------------------------------------------------- a harness that relays a program's output as records
# extract/prefix.py `_RELAY`: a harness that logs each line of a program it ran as a record of its own logger (LISA's
# `<parent>.stdout` / `.stderr` loggers, Airflow's subprocess and operator modules) puts its level before the program's
# line; that level is the harness's choice for the stream, so the layer is peeled and the line read as the program
# wrote it. The records' shapes are the harnesses' format strings (microsoft/lisa lisa/util/logger.py and
# lisa/util/process.py; Airflow's `[%(asctime)s] {%(filename)s:%(lineno)d} %(levelname)s - %(message)s`).

# canonical/checkbox#98: nvidia-smi's own failure, as a harness would relay the command's stdout
SMI_FAILED = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
              "NVIDIA driver is installed and running.")
# a thread line relayed through Airflow's BashOperator (an Airflow tutorial's task log: `{subprocess.py:93} INFO - `)
DBT_ERROR = "15:22:22  Encountered an error:"


@pytest.mark.parametrize(
    ("line", "body"),
    [
        # LISA before 2024 (`%(asctime)s.%(msecs)03d[%(thread)d][%(levelname)s] %(name)s %(message)s`), a command's
        # stdout relayed at DEBUG (no_info_log)
        (f"2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_0].node[0].cmd[12].stdout {SMI_FAILED}",
         SMI_FAILED),
        # LISA today (`%(asctime)s.%(msecs)03d %(levelname)s %(name)s %(message)s`, names under `LISA.`), its stderr
        # at ERROR; a frame's own indentation stays
        (f"2024-05-02 10:11:12.345 ERROR LISA.env[generated_1].node[0].cmd[7].stderr   {SMI_FAILED}",
         f"  {SMI_FAILED}"),
        # Airflow 2's SubprocessHook (an Airflow dbt thread's task log) and MWAA's doubled braces
        (f"[2024-05-10, 15:22:22 UTC] {{subprocess.py:93}} INFO - {DBT_ERROR}", DBT_ERROR),
        (f"[2021-04-10 02:20:53,017] {{{{logging_mixin.py:112}}}} WARNING - {SMI_FAILED}", SMI_FAILED),
        # the KubernetesPodOperator's relay of a pod's log with the container's name (a DAG test's pod_manager line)
        (f"[2026-01-01T10:00:12.800+0000] {{pod_manager.py:315}} INFO - [base] {SMI_FAILED}", SMI_FAILED),
    ],
)
def test_a_relayed_line_is_read_as_its_program_wrote_it(line: str, body: str) -> None:
    assert split_prefixes(line).body == body


@pytest.mark.parametrize(
    "line",
    [
        # Airflow's own record, not a relay (its task runner's words)
        "[2023-04-13, 10:15:59 UTC] {local_task_job.py:220} WARNING - State of this instance has been externally set "
        "to success. Terminating instance.",
        # a logger whose name only holds `stdout` in the middle (no stream relay)
        "2024-05-02 10:11:12.345 INFO LISA.stdout_parser.node[0] parsed 3 lines",
        # the pod operator's relay whose line starts with a level word in brackets: not a container's name
        "[2026-01-01T10:00:12.800+0000] {pod_manager.py:315} INFO - [INFO] loading weights",
    ],
)
def test_a_record_that_relays_nothing_keeps_its_words(line: str) -> None:
    body = split_prefixes(line).body
    assert "stdout_parser" in body or "Terminating instance" in body or body.startswith("[INFO] loading")


# PyTorch's warning of an 802 at CUDA's start, as NVIDIA/gpu-operator#2781's threads print it
CUDA_802 = ("/usr/lib/python3/dist-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: Unexpected "
            "error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that "
            "might have already set an error? Error 802: system not yet initialized (Triggered internally at "
            "../c10/cuda/CUDAFunctions.cpp:108.)")


def test_cuda_802_relayed_at_debug_is_the_fabric_not_a_calm_record(make_bundle: BundleMaker) -> None:
    # relayed by a LISA command's stdout at DEBUG: the harness's level is not PyTorch's
    relayed = f"2026-11-02 10:11:12.345[4242][DEBUG] lisa.env[generated_2].node[0].cmd[9].stdout {CUDA_802}\n"
    assert _cause(_analyze(make_bundle, relayed)) == "node.driver"


def test_cuda_802_in_a_programs_own_debug_record_stays_calm(make_bundle: BundleMaker) -> None:
    # where the program's own record says DEBUG (a logger's record of its probe), no cause comes of it
    own = f"2026-11-02 10:11:12,345 DEBUG cuda probe: {CUDA_802}\n"
    assert _cause(_analyze(make_bundle, own)) is None


# NVIDIA FLARE's SubprocessLauncher (nvflare/app_common/launchers/subprocess_launcher.py `log_subprocess_output`):
# the training script's lines through the launcher's logger at INFO, NVFLARE's `%(asctime)s - %(name)s -
# %(levelname)s - %(message)s` with the base name; NVIDIA/NVFlare#3360's lines, verbatim
NVFLARE_LINE = "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1]"


@pytest.mark.parametrize("line", [
    f"2025-04-07 14:57:43,399 - SubprocessLauncher - INFO - {NVFLARE_LINE}",
    # since 2.6 an empty `%(fl_ctx)s - ` before the message (its format string filled in)
    f"2025-09-01 10:00:00,001 - SubprocessLauncher - INFO -  - {NVFLARE_LINE}",
])
def test_nvflares_relay_of_its_scripts_output_is_peeled(line: str) -> None:
    assert split_prefixes(line).body == NVFLARE_LINE


def test_near_miss_another_nvflare_logger_is_its_own_words() -> None:
    line = f"2025-04-07 14:57:43,399 - ClientRunner - INFO - {NVFLARE_LINE}"
    assert split_prefixes(line).body == line


def test_nvflares_relayed_lightning_device_check_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    # (the thread's lines, stamped inside the test workload's window)
    stamp = "2026-11-02 10:11:12,345 - SubprocessLauncher - INFO - "
    v = _analyze(make_bundle, f"{stamp}    raise MisconfigurationException(\n"
                 f"2026-11-02 10:11:12,345 - SubprocessLauncher - INFO - {NVFLARE_LINE}\n"
                 "2026-11-02 10:11:12,345 - SubprocessLauncher - INFO -  But your machine only has: [0]\n")
    assert _cause(v) == "app.exception.setup"
