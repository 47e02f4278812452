"""Native programs' terminal error lines, read by the one model a Python job's last line is read by (its class and
its message, through the same tables): libc++abi's one-line uncaught exception (extract/exceptions.py `_LIBCXXABI`)
beside libstdc++'s two-line `terminate called after throwing` record, and libc++abi's abort with no typed exception
(extract/signals.py `_CXX_ABORT`).

Lines are verbatim from the public threads cited next to them, or built from the printing program's source where said.
"""

from __future__ import annotations

import pytest

from firstfault.extract import nccl
from firstfault.extract.base import LineExtractor
from tests.extract.helpers import APPLICATION, kinds
from tests.extract.helpers import scan_application as scan

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *APPLICATION)


@pytest.mark.parametrize(("line", "exc_type", "message"), [
    # svenreiche/Genesis-1.3-Version4#134: LLVM 15+ libc++abi, `due to`
    ("libc++abi: terminating due to uncaught exception of type std::out_of_range: vector", "out_of_range", "vector"),
    # mamba-org/mamba#448: macOS before 11, `libc++abi.dylib: ` and `with`
    ("libc++abi.dylib: terminating with uncaught exception of type std::runtime_error: pybind11_object_dealloc(): "
     "Tried to deallocate unregistered instance!", "runtime_error",
     "pybind11_object_dealloc(): Tried to deallocate unregistered instance!"),
    # libcxxrt/libcxxrt#39: a type that is no std::exception, so no what()
    ("libc++abi: terminating with uncaught exception of type char const*", "char const*", ""),
])
def test_libcxxabi_uncaught_exception_is_the_exception(line: str, exc_type: str, message: str) -> None:
    drafts = scan(ALL, [line])
    assert kinds(drafts) == ["app.exception"], drafts
    assert drafts[0].fields["exc_type"] == exc_type
    assert drafts[0].fields["message"] == message


def test_libcxxabi_what_decides_as_libstdcxx_what_does() -> None:
    """The message after the type is read as a lone exception's (a CUDA result here), as libstdc++'s `what():` is.
    Built from libcxxabi src/cxa_default_handlers.cpp's format and CUDA's message for cudaErrorIllegalAddress."""
    cxx = scan(ALL, ["libc++abi: terminating due to uncaught exception of type c10::Error: CUDA error: an illegal "
                     "memory access was encountered"])
    gnu = scan(ALL, ["terminate called after throwing an instance of 'c10::Error'",
                     "  what():  CUDA error: an illegal memory access was encountered"])
    assert kinds(cxx) == kinds(gnu) == ["app.cuda_error"], (cxx, gnu)
    assert cxx[0].fields == gnu[0].fields


def test_libcxxabi_abort_after_it_is_the_runtimes() -> None:
    # svenreiche/Genesis-1.3-Version4#134: the shell's report of the abort after it (macOS's strsignal)
    drafts = scan(ALL, ["libc++abi: terminating due to uncaught exception of type std::out_of_range: vector",
                        "./run: line 1: 38534 Abort trap: 6           genesis4 genesis4.in"])
    assert [d.fields.get("by") for d in drafts if d.kind == "process.signal"] in ([], ["runtime"]), drafts
    assert kinds(drafts)[0] == "app.exception"


@pytest.mark.parametrize("line", [
    # libcxxabi src/cxa_default_handlers.cpp: std::terminate with no exception in flight, and a foreign one
    "libc++abi: terminating",
    "libc++abi: terminating due to uncaught foreign exception",
])
def test_libcxxabi_terminating_without_a_typed_exception_is_the_programs_abort(line: str) -> None:
    drafts = scan(ALL, [line])
    assert [(d.kind, d.fields.get("signal"), d.fields.get("by")) for d in drafts] == [
        ("process.signal", "SIGABRT", "self")], drafts


@pytest.mark.parametrize("line", [
    # svenreiche/Genesis-1.3-Version4#134's title: no type, no record
    "libc++abi: terminating due to uncaught exception",
    # a person's words around the handler's words: `terminating` alone is the record only as the whole line
    "libc++abi: terminating the app now, see the log",
    "the handler prints terminating due to uncaught exception of type",
])
def test_near_misses_are_not_read(line: str) -> None:
    assert scan(ALL, [line]) == []


@pytest.mark.parametrize("line", [
    # AlexeyAB/darknet#3496: glibc's __assert_fail, the program's name and the function (the thread: a K80's ECC)
    "darknet: ./src/utils.c:293: error: Assertion `0' failed.",
    # marbl/canu#734: a C++ function's signature as the function (the thread: a short read from the file system)
    "ovStoreSorter: stores/ovStoreWriter.C:291: uint64 ovStoreWriter::loadBucketSizes(uint64*): Assertion "
    "`nr == _fileLimit + 1' failed.",
])
def test_glibc_assert_names_no_cause(line: str) -> None:
    # A failed assert(3) is a program's or a library's invariant broken by what it met: every one the corpus holds
    # was a device, a file system or a runtime the code did not expect, none the code's own fault. No event: the line
    # is left to the unrecognized offer (where to look), and the SIGABRT after it decides as any abort does.
    assert [d for d in scan(ALL, [line]) if d.kind in ("process.signal", "app.crash", "app.exception")] == []


def test_cuda_device_assert_is_cuda_result_710() -> None:
    # facebookresearch/dlrm#247: a kernel's assert, one line per failing thread, as the CUDA result it makes
    drafts = scan(ALL, [
        "/opt/pytorch/pytorch/aten/src/ATen/native/cuda/EmbeddingBag.cu:128: EmbeddingBag_updateOutputKernel_sum_mean:"
        " block: [0,0,0], thread: [0,0,0] Assertion `input[emb] >= 0 && input[emb] < vocab_size` failed."])
    assert kinds(drafts) == ["app.cuda_error"], drafts
    assert (drafts[0].fields["error"], drafts[0].fields["cuda_code"]) == ("device_assert", 710)


@pytest.mark.parametrize("line", [
    # a person's words quoting the assert (darknet#3496's title form): not the whole line
    "I always get darknet: ./src/utils.c:293: error: Assertion `0' failed. after a few iterations",
    # glibc's form with no file:line before it: not __assert_fail's
    "error: Assertion `0' failed.",
    # CUDA's quoting without the block and thread: no device assert
    "EmbeddingBag.cu:128: EmbeddingBag_updateOutputKernel_sum_mean: Assertion `input[emb] >= 0` failed.",
])
def test_assert_near_misses_are_not_read(line: str) -> None:
    assert [d for d in scan(ALL, [line]) if d.kind in ("process.signal", "app.cuda_error")] == []


@pytest.mark.parametrize("lines", [
    # a C++ check's exception around CUDA's words for result 304 (cudaGetErrorString's text, catalog/cuda.yaml), in
    # libstdc++'s record and in libc++abi's: CUDA's result, not the strerror inside it
    ["terminate called after throwing an instance of 'std::runtime_error'",
     "  what():  Error (x.cpp:298): OS call failed or operation not supported on this OS"],
    ["libc++abi: terminating due to uncaught exception of type std::runtime_error: Error (x.cpp:298): OS call failed "
     "or operation not supported on this OS"],
])
def test_what_that_is_cuda_result_304_is_that_result(lines: list[str]) -> None:
    drafts = scan(ALL, lines)
    assert [(d.kind, d.fields.get("cuda_code")) for d in drafts] == [("app.cuda_error", 304)], drafts


def test_operation_not_supported_alone_stays_the_errno() -> None:
    # the strerror of EOPNOTSUPP without CUDA's words around it is no CUDA result
    drafts = scan(ALL, ["terminate called after throwing an instance of 'std::system_error'",
                        "  what():  Operation not supported"])
    assert [d.kind for d in drafts] == ["app.exception"], drafts
    assert drafts[0].fields.get("errno") == "ENOTSUP"


def test_cuda_device_assert_once_per_assert_of_a_stream() -> None:
    # facebookresearch/dlrm#247: the same assert on three threads is one fault
    lines = [f"/opt/pytorch/pytorch/aten/src/ATen/native/cuda/EmbeddingBag.cu:128: "
             f"EmbeddingBag_updateOutputKernel_sum_mean: block: [0,0,0], thread: [{t},0,0] Assertion "
             f"`input[emb] >= 0 && input[emb] < vocab_size` failed." for t in range(3)]
    assert kinds(scan(ALL, lines)) == ["app.cuda_error"]
