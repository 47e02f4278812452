"""An accelerator's memory exhausted in the words of allocators the tables lacked (brief mem90): Apple Metal's command
buffer status (codes.ACCEL_OOM_PHRASES), HAMi-core's vGPU refusal and NVIDIA DALI's device allocation failure
(catalog/exceptions.yaml `accelerator_oom` rows), and the same words in a service's stderr in the node's journal
(extract/exceptions.py JournalOomExtractor); each with the lines that look alike and are no device OOM.

Provenance: a line `as posted` is copied from the public thread named beside it; a line `filled in` is ours, written
from the printing program's format string cited beside it."""

from __future__ import annotations

import pytest

from firstfault.extract.exceptions import JournalOomExtractor
from tests.extract.helpers import events, holds_literal


def ooms(lines: list[str], source: str = "application") -> list[str]:
    return [str(ev.fields["message"]) for ev in events(lines, source, node=None if source == "application" else "n1")
            if ev.kind == "app.cuda_oom"]


def kinds(lines: list[str], source: str = "application") -> list[str]:
    return [ev.kind for ev in events(lines, source, node=None if source == "application" else "n1")]


# as posted (Project-HAMi/HAMi#662): HAMi-core's oom_check refusing an allocation over the pod's 3000 MiB vGPU memory
# (Project-HAMi/HAMi-core src/allocator/allocator.c: `LOG_ERROR("Device %d OOM %lu / %lu", ...)`)
HAMI_OOM = "[HAMI-core ERROR (pid:30 thread=140382094939712 allocator.c:53)]: Device 0 OOM 3171158016 / 3145728000"
# as posted (Project-HAMi/HAMi#1181): the same line with HAMi-core's usage counter wrapped below zero, a false refusal
# (a bug of its accounting, fixed in HAMi v2.6.1), not the job's memory
HAMI_WRAPPED = ("[HAMI-core ERROR (pid:1 thread=140160828682240 allocator.c:53)]: Device 0 OOM 18446744073707737660 / "
                "24146608128")
# filled in: HAMi-core's debug record of the same numbers (its `Device %d current memory %lu / %lu`)
HAMI_DEBUG = "[HAMI-core Debug(30:140387636202368:allocator.c:60)]: Device 0 current memory 3171158016 / 3145728000"

# as posted (NVIDIA/DALI#1137): DALI's CUDABadAlloc (include/dali/core/cuda_error.h: `Can't allocate %zu bytes on
# device %d.`) passed on by its TensorFlow plug-in
DALI = [
    "tensorflow.python.framework.errors_impl.InternalError: DALI daliShareOutput(&pipeline_handle_) failed: Critical "
    "error in pipeline:",
    "Error when executing Mixed operator ImageDecoder encountered:",
    "Can't allocate 129499136 bytes on device 0.",
    "Current pipeline object is no longer valid. [Op:IteratorGetNext]",
]
# filled in: the same class's pinned host allocation (`Can't allocate %zu bytes on host.`)
DALI_HOST = "Can't allocate 129499136 bytes on host."

# as posted (antirez/ds4#676): Metal's command buffer failed for want of the GPU's wired memory
METAL_OOM = "ds4: Metal model warmup failed: Insufficient Memory (kIOGPUCommandBufferCallbackErrorOutOfMemory)"
# filled in: ggml-metal's report of a command buffer discarded for another's fault, the same status family's
# kIOGPUCommandBufferCallbackErrorInnocentVictim (Metal's MTLCommandBufferErrorInnocentVictim, 5)
METAL_VICTIM = ("ggml_metal_graph_compute: command buffer 0 failed with status 5, error: Discarded (victim of GPU "
                "error/recovery) (00000005:kIOGPUCommandBufferCallbackErrorInnocentVictim)")

# as posted (ollama/ollama#3683): ggml's device allocation in Ollama's journal under systemd
OLLAMA = ("Apr 17 01:25:10 ai-pc ollama[56169]: ggml_backend_cuda_buffer_type_alloc_buffer: allocating 24289.03 MiB on "
          "device 0: cudaMalloc failed: out of memory")


@pytest.mark.parametrize("lines", [[HAMI_OOM], DALI, [METAL_OOM]], ids=["hami", "dali", "metal"])
def test_an_allocators_own_words_for_the_device_memory_are_the_accelerators_oom(lines: list[str]) -> None:
    got = ooms(lines)
    assert len(got) == 1, events(lines)


@pytest.mark.parametrize("line", [HAMI_WRAPPED, HAMI_DEBUG, DALI_HOST, METAL_VICTIM],
                         ids=["hami-wrapped-counter", "hami-debug", "dali-host", "metal-victim"])
def test_the_lines_alike_are_no_device_oom(line: str) -> None:
    assert ooms([line]) == []


def test_an_accelerator_oom_in_a_services_journal_is_read() -> None:
    assert holds_literal(JournalOomExtractor(), OLLAMA)
    got = ooms([OLLAMA], "syslog")
    assert len(got) == 1 and "cudaMalloc failed: out of memory" in got[0]


@pytest.mark.parametrize("line", [
    # filled in: the same call failing for another reason (ggml's format, CUDA's `invalid argument`): a CUDA error,
    # which the journal reader leaves alone
    "Apr 17 01:25:10 ai-pc ollama[56169]: ggml_backend_cuda_buffer_type_alloc_buffer: allocating 24289.03 MiB on "
    "device 0: cudaMalloc failed: invalid argument",
    # filled in: a host allocation failing in a service's journal is no device's, and no other exception word is read
    # there
    "Apr 17 01:25:10 ai-pc python3[4242]: MemoryError: Unable to allocate 74.5 GiB for an array with shape (100000, "
    "100000) and data type float64",
])
def test_the_journal_reader_reads_the_accelerator_oom_words_only(line: str) -> None:
    assert kinds([line], "syslog") == []


# PaddlePaddle's allocators (paddle/fluid/memory/allocation/cuda_allocator.cc and xpu_allocator.cc): as posted
# (PaddlePaddle/PaddleDetection#3100, Paddle 2.0.1), and its XPU kernels' concatenation (filled in)
@pytest.mark.parametrize("line", [
    "Out of memory error on GPU 0. Cannot allocate 18.062744MB memory on GPU 0, available memory is only 17.537501MB.",
    "Out of memory error on GPU 1. Cannot allocate 2.000000GB memory on GPU 1, 14.812500GB memory has been allocated "
    "and available memory is only 1.437500GB.",
    "Out of memory error on XPU, Cannotallocate 96.000000MB memory on XPU. ",
])
def test_paddles_device_allocator_words_are_the_accelerators_memory(line: str) -> None:
    assert len(ooms([line])) == 1


@pytest.mark.parametrize("line", [
    # prose about another program's memory (a Spark guide's words), and a host's
    "Out of memory error on the executor: Broadcasting has to use the memory of the executor to store the table.",
    "Out of memory error on CPU 0. Cannot allocate 1.5GB memory on CPU 0",
])
def test_near_miss_other_out_of_memory_errors_are_no_accelerators(line: str) -> None:
    assert ooms([line]) == []
