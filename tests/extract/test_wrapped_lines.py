"""A message wrapped at a line's end (collect/scan.py `continuation`, Extraction.drafts): the line that gives nothing
alone is read joined to the lower-case words that continue it, through the real scanner and engine; a line that
ends its message, or a next line with a start of its own, is read as it stands.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import SlurmError, slurm_tables
from firstfault.collect.scan import Extraction, all_line_extractors, continuation, may_wrap
from firstfault.extract.base import Candidate
from firstfault.model import Verdict
from tests import tier
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import events

# jax-ml/jax#788 (jaxlib 0.1.20 on a GPU), verbatim: the record as the reporter pasted it, wrapped after `Out `
JAX_788 = ("[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:"
           "672] Execution of replica 0 failed: Resource exhausted: Out \nof memory while trying to allocate "
           "5520758552 bytes.\n")


def _workload() -> dict[str, Any]:
    w = copy.deepcopy(WORKLOAD)
    w["workload"]["nodes"] = ["node-01"]
    w["workload"]["ranks"] = {"node-01": "0"}
    return w


def _verdict(make_bundle: BundleMaker, text: str) -> Verdict:
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text}, _workload())))


def test_a_wrapped_accelerator_oom_reads_joined(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, JAX_788)
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom"
    assert not v.unrecognized


def test_a_wrapped_message_of_two_continuation_lines(make_bundle: BundleMaker) -> None:
    # the record of jax-ml/jax#788, verbatim, wrapped here at a narrower width (twice)
    text = ("[1] 2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:"
            "672] Execution of replica 0 failed: Resource exhausted: Out\nof memory while trying to\nallocate "
            "5520758552 bytes.\n")
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first), first) == "of memory while trying to allocate 5520758552 bytes."
    v = _verdict(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom"


@pytest.mark.parametrize("text", [
    # the message ended on its line (a full stop): the next line is another record
    "E external/local_client.cc:672] Execution of replica 0 failed: Resource exhausted.\nof memory while trying to "
    "allocate 5520758552 bytes.\n",
    # the next line has a start of its own: a stamp, an indentation (a traceback's source line), a program's tag
    "E external/local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out\n[1] 2019-06-13 "
    "01:17:09.000000: of memory while trying to allocate 5520758552 bytes.\n",
    "E external/local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out\n    of memory while "
    "trying to allocate 5520758552 bytes.\n",
    "E external/local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out\nkernel: of memory while "
    "trying to allocate 5520758552 bytes.\n",
])
def test_near_miss_two_independent_lines_are_not_joined(text: str) -> None:
    first, _, _ = text.partition("\n")
    assert continuation(text.encode(), len(first.encode()), first) is None


def test_near_miss_independent_lines_keep_their_own_reading(make_bundle: BundleMaker) -> None:
    # a line that reads nothing joined either stays an unrecognized line of its own, with its own words
    # (synthetic: a worker's own error record, then its next message, which starts in lower case)
    text = ("E0101 00:00:00.000000 1 worker.cc:10] Error reading the parameter server's answer\nretrying in 5 "
            "seconds\n")
    v = _verdict(make_bundle, text)
    assert v.root_cause is None
    assert len(v.unrecognized) == 1
    assert v.unrecognized[0].first.text == text.partition("\n")[0]


_NEXT_WORDS = st.text(alphabet="abz'-,.;) :\r\t1A\u00e9", max_size=45)


@settings(max_examples=tier.examples(500), deadline=None)
@given(_NEXT_WORDS, st.sampled_from(["", "\n", "\nmore words here\n"]), st.booleans())
def test_the_scanners_look_at_the_next_line_passes_every_line_continuation_joins(
        nxt: str, after: str, long_head: bool) -> None:
    """scan.py's _CONT_NEXT, matched in the buffer at the next line's start, is a superset of the lines continuation
    joins: where it finds no lower-case word that may end there, continuation answers None (and the scanner does
    not call it). Positive: `of memory while ...` (jax-ml/jax#788's wrap) passes; near miss: an NCCL line's
    `node-135:...` start does not."""
    from firstfault.collect.scan import _CONT_NEXT

    head = "Execution of replica 0 failed: Resource exhausted: Out " if long_head else "x"
    buf = (head + "\n" + nxt + after).encode("utf-8")
    e = buf.index(b"\n")
    if _CONT_NEXT.match(buf, e + 1) is None:
        assert continuation(buf, e, head) is None
    assert _CONT_NEXT.match(b"Out \nof memory while trying\n", 5) is not None
    assert _CONT_NEXT.match(b"Out \nnode-135:29838:29896 [4] NCCL INFO x\n", 5) is None


# Ray's memory monitor as the driver re-raises it (ray-project/ray, doc/source/ray-core/scheduling/
# ray-oom-prevention.rst:
# `ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.`), wrapped by a terminal
# before its kill words: the class alone is the workload's exception; joined, the raylet's kill for host memory.
RAY_OOM_WRAPPED = ("2026-11-02 10:05:00,774\tERROR worker.py:409 -- ray.exceptions.OutOfMemoryError: Task was killed "
                   "due to the\nnode running low on memory.\n")


def test_a_wrapped_line_that_alone_reads_as_the_workloads_exception_reads_joined_where_that_says_more(
        make_bundle: BundleMaker) -> None:
    first = RAY_OOM_WRAPPED.partition("\n")[0]
    assert continuation(RAY_OOM_WRAPPED.encode(), len(first), first) == "node running low on memory."
    v = _verdict(make_bundle, RAY_OOM_WRAPPED)
    assert v.root_cause is not None and v.root_cause.category == "host.oom"
    assert not v.unrecognized


def test_near_miss_a_workloads_exception_whose_next_line_says_nothing_more_stays_as_it_was(
        make_bundle: BundleMaker) -> None:
    # (synthetic) the same class and head, the next line another lower-case message of the job's own
    text = ("2026-11-02 10:05:00,774\tERROR worker.py:409 -- ValueError: the batch of shape (8, 512) does not fit "
            "the\nmodel's context of 256 tokens\n")
    v = _verdict(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert [e.text for e in v.evidence if e.role == "cause"] == [text.partition("\n")[0]]


def test_a_cuda_error_wrapped_before_the_words_that_name_it_reads_joined(make_bundle: BundleMaker) -> None:
    # CUDA's own message for cudaErrorIllegalAddress (700) as PyTorch raises it (c10/cuda/CUDAException.cpp,
    # `CUDA error: an illegal memory access was encountered`), the traceback's last line wrapped by a terminal: alone
    # it is a CUDA error of no known code; joined, the illegal access
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n    loss.backward()\n"
            "RuntimeError: CUDA error: an illegal memory access was\nencountered\n")
    v = _verdict(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"
    assert [e.line for e in v.evidence if e.role == "cause"] == [4]


# A message wrapped after a colon, its value on the next line (scan.py _COLON_NEXT). NCCL's NVLS bind failure as
# pytorch/ci-infra#541's description quotes it from the H100 CI job (NCCL 2.29.7), two lines: the bind line alone is
# no known report; joined, NVLS setup failing.
NVLS_BIND = ("Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:\n"
             "CUDA error 401 'the operation cannot be performed in the present state'.\n")
# Python's OSError repr as ai-dynamo/modelexpress#549's description posts it, wrapped by its author: the path
# indented and quoted on the next line.
ERRNO_WRAPPED = "[Errno 13] Permission denied:\n  '/usr/local/lib/python3.12/dist-packages/flashinfer_cubin'\n"


@pytest.mark.parametrize(("text", "value"), [
    (NVLS_BIND, "CUDA error 401 'the operation cannot be performed in the present state'."),
    (ERRNO_WRAPPED, "'/usr/local/lib/python3.12/dist-packages/flashinfer_cubin'"),
    # the container toolkit's error chain as Azure/AKS#5871's description posts its pod events, one cause a line
    ("failed to construct device spec generators: failed to initialize NVML:\nDriver/library version mismatch\n",
     "Driver/library version mismatch"),
])
def test_a_line_ending_in_a_colon_takes_its_value_from_the_next_line(text: str, value: str) -> None:
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first.encode()), first) == value


def test_the_nvls_bind_failure_wrapped_after_its_colon_reads_joined(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, NVLS_BIND)
    assert v.root_cause is not None and v.root_cause.category == "node.driver.nvls"
    assert [e.line for e in v.evidence if e.role == "cause"] == [1]


def test_an_errno_wrapped_before_its_path_reads_as_the_oserror(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, ERRNO_WRAPPED)
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")


@pytest.mark.parametrize("text", [
    # a colon's next line that is another record: a traceback's frame, a list under its heading, a stamp, a glog
    # record, a level word, an NCCL `host:pid:tid` tag, a bracketed prefix (HugeCTR's `Device to NUMA mapping:`,
    # NVIDIA-Merlin/HugeCTR#417's log; the rest synthetic)
    "Traceback (most recent call last) in the worker:\n  File \"train.py\", line 10, in <module>\n",
    "[HCTR][06:34:47.461][INFO][RK0][main]: Device to NUMA mapping:\n  GPU 0 ->  node 1\n",
    "ERROR failed to read the checkpoint index:\n2026-11-02 10:05:00,774 INFO retrying\n",
    "ERROR failed to read the checkpoint index:\nE0101 00:00:00.000000 1 worker.cc:10] Error reading\n",
    "ERROR failed to read the checkpoint index:\nWARNING the index is stale\n",
    "ERROR failed to read the checkpoint index:\nnode-135:29838:29896 [4] NCCL INFO x\n",
    "ERROR failed to read the checkpoint index:\n[rank1]: RuntimeError: boom\n",
    "ERROR failed to read the checkpoint index:\nDec  6 20:50:24 node-01 kernel: NVRM: Xid 79\n",
    "ERROR failed to read the checkpoint index:\n\nCUDA error 401\n",
])
def test_near_miss_a_colons_next_line_that_is_another_record_is_not_joined(text: str) -> None:
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first.encode()), first) is None


def test_near_miss_a_heading_and_its_list_keep_their_own_readings(make_bundle: BundleMaker) -> None:
    # (synthetic) a line ending in `:` whose next line is another record of its own: read as it stands
    text = ("2026-11-02 10:05:00 ERROR the following ranks failed:\nRuntimeError: CUDA error: an illegal memory access "
            "was encountered\n")
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first), first) is None
    v = _verdict(make_bundle, text)
    assert [e.line for e in v.evidence if e.role == "cause"] == [2]


# NVIDIA-Merlin/HugeCTR#417 (https://github.com/NVIDIA-Merlin/HugeCTR/issues/417), verbatim: HugeCTR's logged
# exception, cudaGetErrorString's words on the record's line and the call that returned them, with its check's place,
# on the next, indented (scan.py _CALL_PLACE, codes.py _AT_SOURCE)
HUGECTR_417 = ("[HCTR][06:36:45.719][ERROR][RK0][main]: Runtime error: an illegal memory access was encountered\n"
               "        cudaStreamSynchronize(local_gpu->get_stream()) at sync_all_gpus "
               "(/hugectr/HugeCTR/src/embeddings/sync_all_gpus_functor.cu:28)\n")


def test_a_cuda_error_whose_call_is_on_the_next_line_reads_joined(make_bundle: BundleMaker) -> None:
    first = HUGECTR_417.partition("\n")[0]
    assert (continuation(HUGECTR_417.encode(), len(first), first) or "").startswith("cudaStreamSynchronize(")
    v = _verdict(make_bundle, HUGECTR_417)
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"
    assert [e.line for e in v.evidence if e.role == "cause"] == [1]


@pytest.mark.parametrize("text", [
    # (synthetic) an indented line under a message that is no CUDA call's place: a traceback's source line, a call
    # of the program's own, a CUDA call's name with no parenthesis
    "RuntimeError: an illegal memory access was encountered\n    loss.backward()\n",
    "Runtime error: an illegal memory access was encountered\n\tcustomSync(stream) at f (x.cu:28)\n",
    "Runtime error: an illegal memory access was encountered\n\tcudaStreamSynchronize failed\n",
])
def test_near_miss_an_indented_line_that_is_no_cuda_calls_place_is_not_joined(text: str) -> None:
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first), first) is None


def test_near_miss_the_words_with_a_call_but_no_checks_place_stay_unread() -> None:
    # (synthetic) the message and a CUDA call joined, without the ` at F (FILE:LINE)` of a check: the words alone,
    # which any later call repeats once the context is dead (catalog/cuda.yaml: 700 stays anchored)
    from firstfault.extract.codes import cuda_error_of
    assert cuda_error_of("Runtime error: an illegal memory access was encountered cudaStreamSynchronize(s)") is None
    assert cuda_error_of(HUGECTR_417.replace("\n        ", " ").strip()) is not None


# --- A heading and its fields (scan.py _FIELD_LINE): brucefan1983/GPUMD#1634, verbatim (the trailing spaces kept): the
# CHECK macro of Fan's "CUDA Programming" (error.cuh) prints `CUDA Error:` and, under it, the file, the line, the code
# and cudaGetErrorString's words, each an indented field.
GPUMD_1634 = ("CUDA Error:\n"
              "    File:       force/neighbor.cu\n"
              "    Line:       748\n"
              "    Error code: 700\n"
              "    Error text: an illegal memory access was encountered  \n")


def test_a_cuda_error_heading_reads_joined_to_its_fields(make_bundle: BundleMaker) -> None:
    first = GPUMD_1634.partition("\n")[0]
    assert continuation(GPUMD_1634.encode(), len(first), first) == (
        "File: force/neighbor.cu Line: 748 Error code: 700 Error text: an illegal memory access was encountered")
    v = _verdict(make_bundle, GPUMD_1634)
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"
    assert [e.line for e in v.evidence if e.role == "cause"] == [1]


@pytest.mark.parametrize("text", [
    # (synthetic) under a heading: a list, a traceback's frame, torchelastic's fields (lower case, padded before the
    # colon), a field at another indentation than the first's is the block's end
    "CUDA Error:\n  GPU 0 -> node 1\n",
    "CUDA Error:\n  File \"/app/train.py\", line 3, in <module>\n",
    "Root Cause (first observed failure):\n  exitcode  : 1 (pid: 4242)\n",
])
def test_near_miss_a_heading_with_no_fields_under_it_is_not_joined(text: str) -> None:
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first), first) is None


def test_near_miss_fields_at_another_indentation_end_the_block() -> None:
    text = "CUDA Error:\n    Error code: 700\n  Error text: an illegal memory access was encountered\n"
    assert continuation(text.encode(), len("CUDA Error:"), "CUDA Error:") == "Error code: 700"


# --- A message wrapped onto an indented line (scan.py _CONT_INDENT, _message_col): the page's column or the terminal
# hung the rest of the message under it, deeper than the column where the message starts.
# The line as census97 (tests/wild/_batches/misses-b144-b149.md, family F6) quotes it from LUMI's user guide: srun's
# `Unable to create step for job %u: %m` (SchedMD/slurm src/srun/srun_job.c, create_job_step's caller) with %m
# slurm_strerror's ESLURM_INVALID_GRES (src/common/slurm_errno.c: `Invalid generic resource (gres) specification`),
# the page's column breaking it after `generic` and indenting the rest 18 columns.
LUMI_GRES = ("srun: error: Unable to create step for job 4203072: Invalid generic\n"
             "                  resource (gres) specification\n")


def test_an_indented_wrap_under_the_message_reads_joined(make_bundle: BundleMaker) -> None:
    first = LUMI_GRES.partition("\n")[0]
    assert continuation(LUMI_GRES.encode(), len(first), first) == "resource (gres) specification"
    v = _verdict(make_bundle, LUMI_GRES)
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert [e.line for e in v.evidence if e.role == "cause"] == [1]  # the evidence points at the first line
    assert not v.unrecognized


def test_an_indented_wrap_over_two_lines_at_one_indentation() -> None:
    # the same line wrapped twice at a narrower column (ours): the continuation lines share their indentation
    text = ("srun: error: Unable to create step for job 4203072: Invalid\n"
            "                  generic resource\n"
            "                  (gres) specification\n")
    first = text.partition("\n")[0]
    # (the second line starts with `(`, no word: the join stops at the first, bounded to _CONT_LINES in any case)
    assert continuation(text.encode(), len(first), first) == "generic resource"
    text = ("srun: error: Unable to create step for job 4203072: Invalid\n"
            "                  generic resource\n"
            "                  specification, gres\n")
    assert continuation(text.encode(), len(first), first) == "generic resource specification, gres"


# The older wild bundles whose lines a wrap split, each read joined (verbatim from their files): jax-ml/jax#788
# (tests/wild sw-jaxlib-0120-...-788, app/train.log: a lower-case continuation, no indentation), NVIDIA/
# FasterTransformer#506 (sw-triton-fastertransformer-...-506, app/tritonserver.log: a table's cell over rows),
# GoogleCloudPlatform/ml-auto-solutions#1369 (sw-jobset-pathways-...-1369, controller/child-job-create-error.txt: a
# colon's value on the next line). One joining step (scan.py continuation) gives each its whole message.
OLDER_WRAPS = [
    (JAX_788, "of memory while trying to allocate 5520758552 bytes."),
    ("| fastertransformer | 1       | UNAVAILABLE: Unsupported: 1. Number of visible GPUs must be evenly divisble by "
     "TP * PP  |\n"
     "|                   |         | 2. Number of visible GPUs must be <= instance count * TP * PP                 "
     "          |\n",
     "\x1e| fastertransformer | 1 | UNAVAILABLE: Unsupported: 1. Number of visible GPUs must be evenly divisble by "
     "TP * PP 2. Number of visible GPUs must be <= instance count * TP * PP |"),
    ("The Job is invalid: spec.template.spec.restartPolicy:\n"
     "Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified\n",
     "Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified"),
    (LUMI_GRES, "resource (gres) specification"),
]


@pytest.mark.parametrize(("text", "cont"), OLDER_WRAPS)
def test_the_wild_bundles_wrapped_lines_are_joined(text: str, cont: str) -> None:
    first = text.partition("\n")[0]
    buf = text.encode()
    assert may_wrap(buf, len(first.encode()))
    assert continuation(buf, len(first.encode()), first) == cont


def _srun_rows() -> list[SlurmError]:
    return list(slurm_tables().errors)


def _wrap_at(text: str) -> int | None:
    """The last word gap of `text` whose next word a wrap may continue with (_CONT_START's lower-case word)."""
    from firstfault.collect.scan import _CONT_START
    gaps = [i for i, ch in enumerate(text)
            if ch == " " and text[i - 1].isalnum() and _CONT_START.match(text[i + 1:].encode())]
    return gaps[-1] if gaps else None


@pytest.mark.parametrize("row", _srun_rows(), ids=lambda r: r.name)
def test_every_slurm_error_wrapped_under_srun_s_message_reads_as_it_does_whole(row: SlurmError) -> None:
    """Slurm's error table (catalog/slurm.yaml `errors`: src/common/slurm_errno.c's texts as `%m` prints them) after
    srun's `Unable to create step for job %u: ` (src/srun/srun_job.c), the text wrapped at its last gap before a
    lower-case word (after a letter or digit: a line that ends in `)` or `,` ended its message) and the rest indented
    18 columns under it, as LUMI's page shows ESLURM_INVALID_GRES: read joined, it gives the events the whole line
    gives, and where the row is understood as no cause (side none), no unrecognized line either. A text with no such
    gap cannot be wrapped so; skipped by name."""
    at = _wrap_at(row.text)
    if at is None:
        pytest.skip(f"{row.name}: no gap before a lower-case word")
    head = "srun: error: Unable to create step for job 4203072: "
    whole = head + row.text
    wrapped = head + row.text[:at] + "\n" + " " * 18 + row.text[at + 1:] + "\n"
    first = wrapped.partition("\n")[0]
    buf = wrapped.encode()
    assert may_wrap(buf, len(first))
    cont = continuation(buf, len(first), first)
    assert cont == row.text[at + 1:]
    ex = Extraction(all_line_extractors())
    got = ex.events(Candidate("application", "slurm-1.out", 1, None, None, None, first, cont=cont))
    alone = Extraction(all_line_extractors())
    want = events([whole], file="slurm-1.out", extraction=alone)
    assert [(e.kind, e.fields) for e in got] == [(e.kind, e.fields) for e in want]
    # (a `none` row gives no event: understood, it is no unrecognized line, whole or wrapped)
    assert not ex.unrecognized._groups and not alone.unrecognized._groups


@pytest.mark.parametrize("text", [
    # a traceback's frame and its source line, indented under it (CPython's traceback format; ours)
    "  File \"/opt/train/train.py\", line 212, in forward_and_backward_step\n    loss = model(batch)\n",
    # a Java exception and its next frame (`\tat ...`, Throwable.printStackTrace; ours)
    "java.lang.IllegalStateException: Unable to create step for job\n\tat org.example.Launcher.run(Launcher.java:42)\n",
    "java.lang.IllegalStateException: Unable to create step for job\n        at org.example.Launcher.run(L.java:42)\n",
    # a new log record, indented: its own stamp, its own tag, a `key: value`
    "srun: error: Unable to create step for job 4203072: Invalid generic\n"
    "                  2026-11-02 10:05:00 error: resource exhausted\n",
    "srun: error: Unable to create step for job 4203072: Invalid generic\n                  kernel: NVRM: Xid 79\n",
    "srun: error: Unable to create step for job 4203072: Invalid generic\n                  reason: Error\n",
    # an indentation no deeper than where the line's message starts (a glog record's message at column 33; a list
    # pasted as a code block, every line at the same indentation)
    "E0101 00:00:00.000000 1 worker.cc:10] Error reading the parameter server's answer\n    retrying in 5 seconds\n",
    "    srun: error: Unable to create step for job 4203072: Invalid generic\n    resource (gres) specification\n",
    # a table's next row, a capital or a digit in its first cell (sacct's padded columns; ours)
    "4203072.0        python     FAILED      1:0  node-01 invalid generic\n"
    "                 4203072.1  extern      COMPLETED\n",
    "4203072.0        python     FAILED      1:0  node-01 invalid generic\n"
    "                 Batch      FAILED      1:0\n",
])
def test_near_miss_an_indented_next_line_that_is_no_continuation_is_not_joined(text: str) -> None:
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first.encode()), first) is None


# An exception's line whose message's rest hangs at the message's column (the class is the tag): vime's engine
# start-up as its issue quotes it (tests/wild sw-vime-vllm-deepep-...-186, logs/vllm_engine_init.log, verbatim), the
# divisibility check's words (catalog/exceptions.yaml, set-up) split over the wrap.
VIME_186 = ("ValueError: The output_size of gate's and up's weight = 96 is not\n"
            "            divisible by weight quantization block_n = 128.\n")
VIME_HEAD = VIME_186.partition("\n")[0]


def test_an_exceptions_message_hung_at_its_column_reads_joined(make_bundle: BundleMaker) -> None:
    buf = VIME_186.encode()
    assert may_wrap(buf, len(VIME_HEAD))
    assert continuation(buf, len(VIME_HEAD), VIME_HEAD) == "divisible by weight quantization block_n = 128."
    v = _verdict(make_bundle, VIME_186)
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert [e.line for e in v.evidence if e.role == "cause"] == [1]


def test_the_same_hung_message_ending_a_traceback_reads_joined(make_bundle: BundleMaker) -> None:
    # (ours) the same line as a traceback's last, after CPython's header and a frame
    text = ("Traceback (most recent call last):\n"
            "  File \"/opt/vllm/model_executor/layers/fused_moe/layer.py\", line 512, in __init__\n"
            "    self.quant_method.create_weights(layer=self, **moe_quant_params)\n" + VIME_186)
    v = _verdict(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"


@pytest.mark.parametrize("text", [
    # a log record of its own at the message's column: a stamp, a `tag:` (ours)
    VIME_HEAD + "\n            2026-11-02 10:05:00 ERROR worker 3 stopped\n",
    VIME_HEAD + "\n            kernel: NVRM: Xid 79, pid=1234\n",
    # PyTorch's C++ error's place after its message (c10/util/Exception.cpp), and a new traceback
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call "
    "first):\n",
    VIME_HEAD + "\nTraceback (most recent call last):\n",
    # a frame: CPython's under a chained exception, Java's at the message's column
    VIME_HEAD + "\n  File \"/opt/train/train.py\", line 212, in forward_and_backward_step\n",
    "java.lang.IllegalStateException: Unable to create step for job\n" + " " * 33
    + "at org.example.Launcher.run(L.java:42)\n",
    # a blank line between; the message ended on its line
    VIME_HEAD + "\n\n            divisible by weight quantization block_n = 128.\n",
    "ValueError: The output_size of gate's and up's weight = 96 is not divisible.\n            see the config\n",
    # the message's column under a line that is no exception's: srun's tag, a code block's lines at one indentation
    "srun: error: Unable to create step for job 4203072: Invalid generic\n      resource (gres) specification\n",
    "    the loader failed on rank three of the job and\n    stopped the worker there\n",
])
def test_near_miss_a_next_line_at_an_exceptions_column_that_is_no_continuation_is_not_joined(text: str) -> None:
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first.encode()), first) is None


def test_near_miss_a_hung_exception_message_is_joined_two_lines_at_most() -> None:
    text = ("ValueError: The output_size of gate's and up's weight = 96 is\n"
            "            not divisible by weight\n            quantization block_n\n            and more words\n")
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first), first) == "not divisible by weight quantization block_n"


def test_near_miss_a_continuation_that_is_a_whole_message_of_its_own_is_read_on_its_own_line(
        make_bundle: BundleMaker) -> None:
    # (ours) an error record that alone reads nothing, then an indented line under it that is a whole message read
    # alone (PyTorch's CUDA OOM, c10/cuda/CUDACachingAllocator.cpp): joined, the OOM's words would all be the next
    # line's, so the join reads nothing that spans it, and the OOM stays the next line's
    text = ("2026-11-02 10:05:00 ERROR worker 3 stopped after the loader failed on rank\n"
            "                                torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    first = text.partition("\n")[0]
    assert continuation(text.encode(), len(first), first) is not None  # (a join is tried: the reading refuses it)
    v = _verdict(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom"
    assert [e.line for e in v.evidence if e.role == "cause"] == [2]


def test_near_miss_an_indented_continuation_that_adds_nothing_leaves_the_line_as_it_was(
        make_bundle: BundleMaker) -> None:
    # (ours) srun's step error with a text no table holds, its rest indented under it: the joined line reads nothing
    # either, so the first line is listed unrecognized as it stands
    text = ("srun: error: Unable to create step for job 4203072: Something the table does not\n"
            "                  know about at all\n")
    v = _verdict(make_bundle, text)
    assert v.root_cause is None
    assert [u.first.text for u in v.unrecognized] == [text.partition("\n")[0]]


# pytorch/ci-infra#1057's kubelet message as its author wrapped it (tests/wild hw-pytorch-ci-infra-device-plugin-...
# -1057, kubectl/kubelet-message.txt, verbatim): an error chain, a cause a line, each line ending in `:`. The fourth
# line holds NVML's `GPU is lost` whole: read alone it gives gpu.nvml_error, so the third line joined to it gives
# nothing that spans the join, and the event is the fourth line's (not the third's, with the repeat memory of
# gpu.py's _recent then hiding the fourth line's own reading).
CI_INFRA_1057 = ("Allocate failed due to device plugin GetPreferredAllocation rpc failed with err:\n"
                 "rpc error: code = Unknown desc = error getting list of preferred allocation devices:\n"
                 "unable to get device link information: error getting NVLink for devices (0, 1):\n"
                 "failed to get nvlink remote pci info: failed to get nvlink state: GPU is lost,\n"
                 "which is unexpected\n")


def test_near_miss_a_colons_next_line_that_is_a_message_of_its_own_keeps_its_event(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, CI_INFRA_1057)
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert [e.line for e in v.evidence if e.role == "cause"] == [4]
