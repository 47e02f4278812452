"""Mechanisms behind the first-run misses of wild batches b29 and b30 (issue 25), each tested on lines from other
public threads than the bundles', through the real extractors (and the whole analysis where the verdict depends on
more than one line).

Each block names the mechanism, the threads its lines come from, and the look-alikes that must not match.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import feed_store
from firstfault.extract.base import Candidate
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.test_b7pass import feed  # every extractor, as the scanner runs them, on an application log


def _cuda(lines: list[str]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("error")) for e in feed(lines) if e.kind in ("app.cuda_error", "app.cuda_oom")]


def _analyze(make_bundle: BundleMaker, text: str) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text}, wl)))


# ---------------------------------------------------------------- cuBLAS's statuses, by name and in THC's words
# catalog/cuda.yaml `library_statuses` (its cuBLAS rows): the status a cuBLAS call returned decides as cuDNN's does. A
# kernel that failed to run (EXECUTION_FAILED) is a CUDA error of class launch_failure, a symptom whose cause is said
# elsewhere, not an exception of the workload; ARCH_MISMATCH the job's build for another GPU; ALLOC_FAILED the
# accelerator's memory.
# PyTorch before 1.0 printed the status in its own words (aten/src/THC/THCGeneral.cpp __THCublasCheck).


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # nlpyang/PreSumm#251 (THC's words for EXECUTION_FAILED)
        ("RuntimeError: cublas runtime error : the GPU program failed to execute at "
         "/pytorch/aten/src/THC/THCBlas.cu:450", [("app.cuda_error", "launch_failure")]),
        # jadore801120/attention-is-all-you-need-pytorch#193 (today's PyTorch, the status by name)
        ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, "
         "k, &alpha, a, lda, b, ldb, &beta, c, ldc)`", [("app.cuda_error", "launch_failure")]),
        # NVIDIA/DeepLearningExamples#514 (FasterTransformer on a K80: cublasGemmEx needs compute capability 5.0)
        ("  what():  [FT][ERROR] CUDA runtime error: CUBLAS_STATUS_ARCH_MISMATCH /root/DeepLearningExamples-master/"
         "FasterTransformer/v1/fastertransformer/cuda/open_attention.h:171 ", [("app.cuda_error", "config")]),
    ],
)
def test_a_cublas_status_reads_by_its_class(line: str, expected: list[tuple[str, object]]) -> None:
    assert _cuda([line]) == expected


def test_thcs_words_for_a_cublas_allocation_are_the_accelerators_memory() -> None:
    # THC's words for CUBLAS_STATUS_ALLOC_FAILED (aten/src/THC/THCGeneral.cpp), as PyTorch 0.4 raised them
    line = "RuntimeError: cublas runtime error : resource allocation failed at /pytorch/aten/src/THC/THCGeneral.cpp:411"
    assert _cuda([line]) == [("app.cuda_oom", None)]


@pytest.mark.parametrize(
    "line",
    [
        # THC's words for INTERNAL_ERROR name no class of CUDA's: the exception is read as without them
        "RuntimeError: cublas runtime error : an internal operation failed at /pytorch/aten/src/THC/THCBlas.cu:258",
        # a status in a logged record, not raised (tests/extract/test_absl_statuses.py keeps the same for XLA's)
        "2021-09-30 07:10:00.000000: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/pjrt_stream_executor_client"
        ".cc:2085] Execution of replica 0 failed: Internal: CUBLAS_STATUS_EXECUTION_FAILED",
        # a person's words about the status (synthetic)
        "we saw the GPU program failed to execute once, then the rerun worked",
    ],
)
def test_other_cublas_words_are_no_cuda_error_of_a_class(line: str) -> None:
    assert ("app.cuda_error", "launch_failure") not in _cuda([line])
    assert ("app.cuda_error", "config") not in _cuda([line])


def test_a_raised_cublas_execution_failure_alone_names_no_cause(make_bundle: BundleMaker) -> None:
    # daqingliu/NMTree#6's exception line at the end of a backward pass (frames ours): a symptom, no workload fault
    text = ("Traceback (most recent call last):\n"
            '  File "train.py", line 88, in <module>\n'
            "    loss.backward()\n"
            "RuntimeError: cublas runtime error : the GPU program failed to execute at "
            "/pytorch/aten/src/THC/THCBlas.cu:258\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is None, v.explanation
    assert any(s.category.startswith("app.cuda_error") for s in v.symptoms)


# ---------------------------------------------------------------- the NGC containers' driver check
# nvidia_entrypoint.sh (triton-inference-server/server, and every NGC image): the host's driver is older than the
# image's CUDA and forward compatibility cannot bridge it: the driver stack's answer (CUDA's 35), node.driver. A banner
# at the container's start that the job may outlive (NVIDIA/TensorRT-LLM#23: "Seems FT can still run ok in this
# container"): `terminal`, its stream's last word only. The script compares major releases only: where the image's
# release and the driver found are of one CUDA family (NVIDIA's CUDA Compatibility guide, minor version
# compatibility: 13.x >= 580, 12.x >= 525, 11.x >= 450), the image runs and the banner names no failure.


@pytest.mark.parametrize(
    "lines",
    [
        # NVIDIA/TensorRT-LLM#23 (the entrypoint's two lines: a CUDA 12.2 image, a CUDA 11 driver)
        ["ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but",
         "       version 510.85.02 was detected and compatibility mode is UNAVAILABLE."],
        # triton-inference-server/server#139 (a CUDA 10 image, a CUDA 9.2 driver)
        ["ERROR: This container was built for NVIDIA Driver Release 410 or later, but",
         "       version 396.26 was detected and compatibility mode is UNAVAILABLE."],
    ],
)
def test_the_ngc_driver_check_that_failed_is_the_nodes_driver(lines: list[str]) -> None:
    got = [e for e in feed(lines) if e.kind == "app.cuda_error"]
    assert [(e.fields["error"], e.fields.get("cuda_code"), e.fields.get("terminal")) for e in got] == [
        ("driver", 35, True)]


@pytest.mark.parametrize(
    "lines",
    [
        # the same script's other branch (triton-inference-server/server nvidia_entrypoint.sh): forward compatibility on
        ["NOTE: Legacy NVIDIA Driver detected.  Compatibility mode ENABLED."],
        # hiyouga/LlamaFactory#5962 (one line as pasted: a 12.x image on a 12.x driver, minor version compatibility)
        ["This container was built for NVIDIA Driver Release 545.23 or later, butversion 535.104.05 was detected and "
         "compatibility mode is UNAVAILABLE"],
        # eugr/spark-vllm-docker#266 (a DGX Spark: a CUDA 13 image on its 580 driver)
        ["ERROR: This container was built for NVIDIA Driver Release 590.48 or later, but",
         "       version 580.159.03 was detected and compatibility mode is UNAVAILABLE."],
    ],
)
def test_the_ngc_driver_check_within_one_cuda_family_is_nothing(lines: list[str]) -> None:
    assert _cuda(lines) == []


def test_the_ngc_driver_check_as_the_last_word_is_the_cause(make_bundle: BundleMaker) -> None:
    # omarabid59/yolov8-triton#6 (the entrypoint's two lines): nothing after them
    text = ("ERROR: This container was built for NVIDIA Driver Release 525.85 or later, but\n"
            "       version 470.199.02 was detected and compatibility mode is UNAVAILABLE.\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "node.driver", v.explanation


def test_a_job_that_outlived_the_ngc_driver_check_is_judged_by_what_came_after(make_bundle: BundleMaker) -> None:
    # near miss: the banner of two families (NVIDIA/TensorRT-LLM#23's, where FasterTransformer still ran), then the
    # job ran and failed for its own reason (a CUDA OOM, PyTorch's words, ours)
    text = ("ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but\n"
            "       version 510.85.02 was detected and compatibility mode is UNAVAILABLE.\n"
            "step 1 loss 2.31\n"
            "Traceback (most recent call last):\n"
            '  File "train.py", line 12, in <module>\n'
            "    out = model(x)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "79.10 GiB of which 1.10 GiB is free.\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom", v.explanation


# ---------------------------------------------------------------- a traceback cut before its exception line
# engine/normalise.py `terminal_lines`: a lone line's reading counts only as its stream's last word. A traceback the
# stream stops inside (its header and frames, no exception line: the process was stopped while printing it, or the
# posted copy was cut) adds no words of its own, so it does not supersede the error line logged before it (a program
# that logs its failure, then prints the traceback of the same failure).

_CUT = ("Traceback (most recent call last):\n"
        '  File "/opt/app/upload.py", line 41, in save\n'
        "    client.upload_file(path, bucket, key)\n")
# aws/aws-cli#2772 (an `aws s3 sync` between regions; the URL's tail after `amazonaws.` is ours)
_CLOSED = ("copy failed: s3://src-bucket/2016/12/db_bkp.tar.gzip to s3://destination-bucket/2016/12/db_bkp.tar.gzip "
           'Connection was closed before we received a valid response from endpoint URL: '
           '"https://s3-eu-west-1.amazonaws.com/destination-bucket/2016/12/db_bkp.tar.gzip?uploadId=x&partNumber=16".\n')


def test_a_logged_error_before_a_cut_traceback_stays_the_last_word(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "epoch 3 saved\n" + _CLOSED + _CUT)
    assert v.root_cause is not None and v.root_cause.category == "storage.object_store", v.explanation


def test_a_logged_error_before_a_whole_traceback_is_superseded(make_bundle: BundleMaker) -> None:
    # near miss: the traceback after it ends in its own exception line (ours), the stream's last word
    v = _analyze(make_bundle, "epoch 3 saved\n" + _CLOSED + _CUT + "ValueError: bucket name must not be empty\n")
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception"), v.explanation


def test_a_cut_traceback_alone_is_still_read_as_one(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "epoch 3 saved\n" + _CUT)
    assert v.root_cause is not None and v.root_cause.rule == "app-exception-truncated", v.explanation


# ---------------------------------------------------------------- the program's own allocation, in tcmalloc's words
# catalog/exceptions.yaml: gperftools' tcmalloc reporting a large allocation that came back null (`== (nil)`): the
# program's own allocation failing, as C++'s std::bad_alloc is (app.exception, on a line of its own, its stream's
# last word only); the same report with an address is an allocation that succeeded.

def _exc(lines: list[str]) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("setup"), e.fields.get("terminal")) for e in feed(lines)
            if e.kind.startswith("app.")]


def test_a_large_allocation_tcmalloc_could_not_give_is_the_programs_own() -> None:
    # a Chromium renderer's report on an SVG whose dashes exhausted its memory (Chromium's tracker, 2012-12-11)
    assert _exc(["tcmalloc: large alloc 2147483648 bytes == (nil) @  0x20656772616c203a"]) == [
        ("app.exception", None, True)]


def test_a_large_allocation_tcmalloc_gave_is_nothing() -> None:
    # gperftools/gperftools#497: the report of an allocation that succeeded
    assert _exc(["tcmalloc: large alloc 2600001536 bytes == 0xee2000 @  0x7ff92ed1593d"]) == []


def test_a_failed_tcmalloc_allocation_as_the_last_word_is_the_workloads(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, "step 10\ntcmalloc: large alloc 2147483648 bytes == (nil) @  0x20656772616c203a\n")
    assert v.root_cause is not None and v.root_cause.category == "app.exception", v.explanation


# ---------------------------------------------------------------- rclone's remote missing from its configuration
# catalog/exceptions.yaml: rclone asked for a remote its configuration has no section for: the job's own set-up of its
# storage (a model initializer, a backup step), on a line of its own too; its notice that it runs without a config
# file names nothing.

@pytest.mark.parametrize(
    "line",
    [
        # rclone/rclone#290 (2016: `Didn't`)
        '2016/01/10 19:16:52 Failed to create file system for "remote:": Didn\'t find section in config file',
        # rclone/rclone#730 (the remote named `source`, a config file in another user's home)
        '2016/09/14 09:54:17 Failed to create file system for "source:/": didn\'t find section in config file',
    ],
)
def test_a_remote_rclone_has_no_section_for_is_the_jobs_set_up(line: str) -> None:
    assert _exc([line]) == [("app.exception", True, True)]


def test_rclones_notice_of_no_config_file_is_nothing() -> None:
    # rclone/rclone#8542: printed after every command of a user who configures remotes on the fly
    assert _exc(['2025/05/06 17:42:15 NOTICE: Config file "/Users/jgeerling/.config/rclone/rclone.conf" not found - '
                 'using defaults']) == []


def test_a_remote_rclone_has_no_section_for_is_the_set_up_cause(make_bundle: BundleMaker) -> None:
    # TheRealAlexV/proxmox-vzbackup-rclone#4's three lines (`INFO: ` is the backup hook's prefix)
    text = ('INFO: 2020/12/02 14:26:10 Config file "/root/.config/rclone/rclone.conf" not found - using defaults\n'
            'INFO: 2020/12/02 14:26:10 rclone: Version "v1.35-DEV" starting with parameters ["rclone" "--config" '
            '"/root/.config/rclone/rclone.conf" "copy" "/mnt/pve/dump/vzdump-lxc-904.tar.lzo" '
            '"gd-backup_crypt:/2020/12/02" "-v"]\n'
            'INFO: 2020/12/02 14:26:10 Failed to create file system for "gd-backup_crypt:/2020/12/02": didn\'t find '
            'section in config file\n')
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup", v.explanation


# ---------------------------------------------------------------- a name to the line's end, in linear time
# NCCL's `Using network X` (extract/nccl.py) read greedily and stripped after, the rest of the line blank, as the lazy
# pattern before it read it (its `\s*$` went back over every blank of a padded line: tests/test_regex_linear.py).
# The host prefix is NVIDIA/nccl#1189's log's; the words are NCCL's init line.

def _nets(lines: list[str]) -> list[object]:
    store = feed_store(Candidate("application", "app.log", i, None, None, None, t) for i, t in enumerate(lines, 1))
    return [net for net, *_ in store.net_ready]


def test_the_network_nccl_found_is_read_without_its_trailing_blanks() -> None:
    assert _nets(["H20-GPU-05:1789224:1789224 [0] NCCL INFO Using network IB" + " " * 40]) == ["IB"]


def test_words_after_more_than_a_network_name_are_not_one() -> None:
    # near miss: more than a name's length after the words (synthetic): not NCCL's line, as before
    assert _nets(["H20-GPU-05:1789224:1789224 [0] NCCL INFO Using network IB " + "x" * 100]) == []
