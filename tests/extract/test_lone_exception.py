"""A lone uncaught exception line (no `Traceback` header): read as the traceback's last line, marked terminal.

The shape is tested both ways (extract/traceback.py `lone_exception`), and
the reading is the traceback model's own: the same line gives the same kind
alone as it does at the end of a traceback. Whether a terminal line is a
cause is the engine's to decide (tests/engine/test_terminal_lines.py).
"""

from __future__ import annotations

import pytest

from firstfault.extract import nccl
from firstfault.extract import traceback as tb
from firstfault.extract.base import LineExtractor
from firstfault.extract.memo import fastpath
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)
TB = "Traceback (most recent call last):"

LONE = [
    # vllm-project/vllm#39015, verl-project/verl#5889: a rendezvous port already held
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: "
    "29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
    # mosaicml/composer#3543: the user reported the last line only
    "boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/tmpn7sa44l2/26aecfcf-aa70-4385-951a-0ab28f00bf8c to "
    "data-force-one-datasets/mosaicml-internal-checkpoints/jacob/lora/atnmlp-r16-lr0.0001-mlp-ep-4-a-32-sd-17/"
    "ep1-ba193-rank0.pt: An error occurred (SlowDown) when calling the CreateMultipartUpload operation (reached max "
    "retries: 4): Please reduce your request rate.",
    # GoogleCloudPlatform/python-docs-samples#4033 (a class named neither ...Error nor ...Exception)
    "google.api_core.exceptions.TooManyRequests: 429 PATCH https://storage.googleapis.com/storage/v1/b/storage-"
    "snippets-test-a8fbc25f-3ad2-467c-8fda-3421552f077a?projection=full: The project exceeded the rate limit for "
    "creating and deleting buckets.",
    # tensorflow/models#9109
    "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed",
    # hiyouga/LlamaFactory#2574 (its title: the line as posted)
    "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
    "gradient_acc_step * world_size 16 != 1 * 1 * 1",
    # FacePerceiver/FaRL#10
    "RuntimeError: Distributed package doesn't have NCCL built in",
    # tensorflow/tensorflow#10162: TensorFlow 1.x's session reprints the error after the op's creation stack
    "ResourceExhaustedError (see above for traceback): ./models/m9-6/model.ckpt-826.data-00000-of-00001",
]


@pytest.mark.parametrize("line", LONE)
def test_a_lone_line_reads_as_the_last_line_of_its_traceback_would(line: str) -> None:
    alone = helpers.scan(ALL, [line], "application")
    in_traceback = helpers.scan(ALL, [TB, line], "application")
    assert alone and [d.kind for d in alone] == [d.kind for d in in_traceback]
    for a, t in zip(alone, in_traceback, strict=True):
        assert a.fields.pop("terminal") is True and "terminal" not in t.fields
        assert a.fields == t.fields


@pytest.mark.parametrize("line", [
    # a logger's line: the level and the logger's name come first (hunto/DIST_KD#10)
    "WARNING:torch.distributed.run:",
    # a warning is no exception (pytorch/pytorch#159742's, without the file name the warnings module puts first)
    "UserWarning: Attempted to get default timeout for nccl backend, but NCCL support is not compiled",
    # a command-line tool's error: no Python class is named `Error` (synthetic, in click's form; click's refusal of
    # an option is the job's set-up, tests/extract/test_arg_parsers.py)
    "Error: Could not open file 'ckpt/last.pt': No such file",
    # the C++ stack's header of a c10 exception
    "Exception raised from checkTimeout at ProcessGroupNCCL.cpp:567 (most recent call first):",
    # TensorFlow 1.x's header of the op's creation stack, before its `(see above for traceback)` line
    # (xuanzebi/BERT-CH-NER#10)
    "Caused by op 'save/SaveV2', defined at:",
])
def test_lines_that_are_no_uncaught_exception(line: str) -> None:
    assert tb.lone_exception(line) is None
    assert helpers.scan(ALL, [line], "application") == []


def test_torchruns_record_of_a_failed_worker_is_no_exception_line() -> None:
    # torchrun's agent reports a worker's exit (OFA-Sys/Chinese-CLIP#279): the run's end as the launcher saw it, no
    # uncaught exception of the workload's
    line = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 27316) of "
            "binary: C:\\anaconda\\envs\\clip\\python.exe")
    assert tb.lone_exception(line) is None
    assert [d.kind for d in helpers.scan(ALL, [line], "application")] == ["launcher.exit"]


def test_a_bare_class_shaped_word_is_no_exception_line() -> None:
    # A word shaped like a class name alone on its line (hypothesis found `AError`) is no uncaught exception;
    # Python prints a bare name only for a built-in raised without arguments, and a lone built-in still reads.
    assert tb.lone_exception("AError") is None
    assert tb.lone_exception("XlaRuntimeError") is None
    assert tb.lone_exception("KeyError") is not None
    assert tb.lone_exception("XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable") is not None


def test_a_qualified_class_outside_an_exceptions_module_is_no_exception_line() -> None:
    # the shape alone (`pkg.Name: text`) is not enough: the class must be named like an exception or come from
    # an exceptions / errors module (a synthetic configuration dump, `config.Model: llama`)
    assert tb.lone_exception("config.Model: llama") is None
    assert tb.lone_exception("minio.error.NoSuchKey: NoSuchKey: message: The specified key does not exist.") is not None


@pytest.mark.parametrize("on", [True, False])
def test_the_reading_is_the_same_with_the_memos_on_and_off(on: bool) -> None:
    # the shape's memo is keyed by the line with its digits zeroed; a line that differs only in digits from one
    # that had no shape must still be read (and the other way round); synthetic lines
    lines = ["step 100: loss 2.0", "AssertionError: world size 8 != 2 * 1 * 1", "step 101: loss 2.0",
             "AssertionError: world size 16 != 2 * 1 * 1"]
    with fastpath(on):
        got = [d.kind for line in lines for d in helpers.scan(ALL, [line], "application")]
    assert got == ["app.exception", "app.exception"]
