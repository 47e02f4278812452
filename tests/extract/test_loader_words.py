"""The dynamic loader's fatal errors, in every printer's words (catalog/exceptions.yaml, family `loader`).

glibc's loader prints `PROG: OCCASION: OBJECT: ERRSTRING` when it cannot start a program or bind a symbol
(elf/dl-error-skeleton.c fatal_error; elf/dl-load.c, dl-lookup.c), and `PROG: LIB: version `V' not found (required by
X)` from its start-up version check (elf/dl-version.c, elf/rtld.c); musl's loader its own two lines (ldso/dynlink.c); a
language's exception carries dlerror()'s `OBJECT: ERRSTRING`. The library decides: one of the NVIDIA driver's own
(catalog/platform.yaml `driver_libraries`) is the node's driver stack (app.cuda_error, driver -> node.driver); any other
is the job's build or image (app.exception, setup). Programs that go on without a library they tried (TensorFlow's
dlerror warning, NCCL's net plugin, libibverbs' providers, ldd's listing) are no cause.

Lines come from the public threads cited beside them (paths and names as posted).
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import is_driver_library
from firstfault.extract.excclass import loader_library
from tests.conftest import BundleMaker
from tests.extract.helpers import TB, events


def _read(lines: list[str]) -> list[tuple[str, dict[str, object]]]:
    keys = ("setup", "error", "exc_type")
    return [(e.kind, {k: v for k, v in e.fields.items() if k in keys}) for e in events(lines)]


# --------------------------------------------------------------------------
# The loader's own lines: the job's build or image
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "lib"), [
    # ollama/ollama#602: the runner the server starts, its CUDA runtime not where the loader looks
    ("/tmp/ollama568860520/11ama.cpp/gguf/build/cuda/bin/ollama-runner: error while loading shared libraries: "
     "libcudart.so.12: cannot open shared object file: No such file or directory", "libcudart.so.12"),
    # DFHack/dfhack#164: a 64-bit library where the 32-bit program needs its own (dl-load.c's `wrong ELF class`)
    ("hack/dfhack-run: error while loading shared libraries: libz.so.1: wrong ELF class: ELFCLASS64", "libz.so.1"),
    # microsoft/msccl#16: nccl-tests built against a newer NCCL than the one LD_LIBRARY_PATH loads (dl-lookup.c)
    ("nccl-tests/build/all_reduce_perf: symbol lookup error: nccl-tests/build/all_reduce_perf: undefined symbol: "
     "ncclRedOpCreatePreMulSum", "nccl-tests/build/all_reduce_perf"),
    # cloudtty/cloudtty#302: an operator image built against a newer glibc than its base image has (rtld's check)
    ("manager: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by manager)",
     "/lib/x86_64-linux-gnu/libc.so.6"),
    # benjamimgois/goverlay#8: the same, the backticks eaten by the post's markdown
    ("./goverlay: /lib/x86_64-linux-gnu/libc.so.6: version GLIBC_2.34 not found (required by ./goverlay)",
     "/lib/x86_64-linux-gnu/libc.so.6"),
    # MatthiasLohr/docker-f5fpc#26: a glibc program in an Alpine image, in musl's loader's words
    ("Error loading shared library ld-linux-x86-64.so.2: No such file or directory (needed by /usr/local/bin/f5fpc)",
     "ld-linux-x86-64.so.2"),
])
def test_the_loaders_own_line_is_the_jobs_build(line: str, lib: str) -> None:
    got = _read([line])
    assert [(k, f.get("setup")) for k, f in got] == [("app.exception", True)], got
    assert loader_library(line) == lib


@pytest.mark.parametrize("lines", [
    # NVIDIA/cuda-samples#79: a dlopen of the CUDA runtime the job's code names (ctypes raises OSError)
    ["OSError: libcudart.so.10.0: cannot open shared object file: No such file or directory"],
    # sony/nnabla#1063 (its title): the CUDA extension's import, the runtime of another CUDA release than installed
    [TB, "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory"],
    # jcuda/jcuda#1: a JNI library built against a newer glibc than the node's
    ["java.lang.UnsatisfiedLinkError: /home/zournani/JCuda/libJCudaRuntime-linux-x86_64.so: /lib/libc.so.6: version "
     "`GLIBC_2.14' not found (required by /home/zournani/JCuda/libJCudaRuntime-linux-x86_64.so)"],
    # gliderlabs/docker-alpine#106: a glibc JNI library in a musl image
    ["java.lang.UnsatisfiedLinkError: /data/roots/btroot/rlp/lib/amd64-glibc25-gcc41/libbtutiljni.so: "
     "libc.musl-x86_64.so.1: cannot open shared object file: No such file or directory"],
])
def test_a_languages_exception_in_the_loaders_words_is_the_jobs_build(lines: list[str]) -> None:
    got = _read(lines)
    assert [(k, f.get("setup")) for k, f in got] == [("app.exception", True)], got


# --------------------------------------------------------------------------
# The NVIDIA driver's own libraries: the node's driver stack
# --------------------------------------------------------------------------


@pytest.mark.parametrize("lines", [
    # ggml-org/llama.cpp#7822: the CUDA image started where the driver's libraries were not put into the container
    ["/server: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or "
     "directory"],
    # heavyai/heavydb#281
    ["./bin/initdb: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file "
     "or directory"],
])
def test_a_driver_library_the_loader_cannot_open_is_the_nodes_driver(lines: list[str]) -> None:
    got = _read(lines)
    assert [(k, f.get("error")) for k, f in got] == [("app.cuda_error", "driver")], got


def test_near_miss_only_the_drivers_own_libraries_are_the_nodes() -> None:
    # catalog/platform.yaml `driver_libraries`, by file name, as printed (a name or a path): the toolkit's libraries
    # (libcudart, libcudnn, libcublas), shipped with the job's image or environment, are the job's
    assert is_driver_library("libcuda.so.1") and is_driver_library("/usr/lib64/libnvidia-ml.so.535.54.03")
    assert not is_driver_library("libcudart.so.12") and not is_driver_library("libcudnn.so.8")
    assert not is_driver_library("/usr/local/nvidia/lib64/libcublas.so.11")


# --------------------------------------------------------------------------
# Near misses: a program that goes on without the library, a warning, a listing, prose
# --------------------------------------------------------------------------


@pytest.mark.parametrize("line", [
    # tensorflow/tensorflow#60854 (its title, as cut): TensorFlow's warning, after which it runs on the CPU
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; "
    "dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory; LD_LI",
    # NVIDIA/nccl-tests#188: NCCL's net plugin absent, it uses its internal transports
    "user:695833:695833 [2] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot "
    "open shared object file: No such file or directory",
    # bytedance/byteps#313: libibverbs trying each provider in /etc/libibverbs.d
    "libibverbs: Warning: couldn't load driver 'mlx4': libmlx4-rdmav2.so: cannot open shared object file: No such file "
    "or directory",
    # lovell/sharp#773's ldd listing (a library found), and ldd's word for one it did not find (glibc elf/rtld.c's
    # trace mode: `\t%s => not found`)
    "        libvips-cpp.so.42 => /huisordner/node_modules/sharp/build/Release/../../lib/libvips-cpp.so.42 "
    "(0x00007f5a32b4d000)",
    "\tlibcudart.so.11.0 => not found",
    # the loader's warning for a library without version information, which it goes on from (glibc elf/dl-version.c:
    # `no version information available (required by %s)`, after `PROG: LIB: `)
    "python3: /opt/conda/lib/libtinfo.so.6: no version information available (required by /bin/bash)",
    # daralthus/mitsuba2-docker#2's title: the words in prose, no program's line
    "Unable to use GPU variant - error while loading shared libraries: libcuda.so.1: cannot open shared object file",
])
def test_near_miss_a_program_that_goes_on_or_prose_is_no_cause(line: str) -> None:
    assert [k for k, _ in _read([line]) if k in ("app.exception", "app.cuda_error")] == []


# --------------------------------------------------------------------------
# Through the engine: the verdict and its summary
# --------------------------------------------------------------------------


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def test_the_driver_library_missing_is_node_driver_in_the_verdict(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app([
        "/server: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or "
        "directory"])})))
    assert v.root_cause is not None and v.root_cause.category == "node.driver"
    assert "libcuda.so.1: cannot open shared object file" in v.root_cause.summary


def test_another_library_missing_is_the_jobs_set_up_in_the_verdict(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app([
        "nccl-tests/build/all_reduce_perf: symbol lookup error: nccl-tests/build/all_reduce_perf: undefined symbol: "
        "ncclRedOpCreatePreMulSum"])})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert "undefined symbol: ncclRedOpCreatePreMulSum" in v.root_cause.summary


def test_near_miss_a_loader_line_the_job_outlived_is_not_its_cause(make_bundle: BundleMaker) -> None:
    # a helper the job ran failed to start (ggml-org/llama.cpp#7822's line); the job went on and failed later in its
    # own words: the loader's line is a lone line's reading, its stream's last word only
    lines = ["/server: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such "
             "file or directory", "epoch 1 step 10 loss 2.31", TB, '  File "/srv/train.py", line 9, in main',
             "KeyError: 'label'"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


# --------------------------------------------------------------------------
# The loader unable to start a program of the platform (catalog/platform.yaml `platform_programs` `executables`)
# --------------------------------------------------------------------------


def test_the_loader_failing_a_platform_daemon_is_that_daemons_failure() -> None:
    # NVIDIA/pyxis#163: Slurm 24.11's slurmstepd in the job's container without its libslurmfull.so
    got = [(e.kind, e.fields.get("program"), e.fields.get("part")) for e in events([
        "/usr/sbin/slurmstepd: error while loading shared libraries: libslurmfull.so: cannot open shared object file: "
        "No such file or directory"])]
    assert got == [("platform.error", "slurmd", "scheduler")]


def test_near_miss_the_jobs_own_program_named_like_a_daemon_stays_its_set_up() -> None:
    # a program whose name only holds a daemon's (`slurmstepd-wrapper`), and the job's own binary
    for line in ("./slurmstepd-wrapper: error while loading shared libraries: libfoo.so: cannot open shared object "
                 "file: No such file or directory",
                 "./train: error while loading shared libraries: libslurmfull.so: cannot open shared object file: No "
                 "such file or directory"):
        assert _read([line]) == [("app.exception", {"setup": True})], line
