"""Stack dumps in the debuggers' own forms (gdb / cuda-gdb, lldb, pystack, py-spy --native): one reader per
form, one classification of frame names for all (extract/stackdump.py NATIVE_FRAMES), and near misses that
are no dump. Dumps are cut from the public threads named beside each; the forms from the tools' own docs."""

from __future__ import annotations

import pytest

from firstfault.extract.stackdump import native_category, read_stack_dump
from firstfault.model import Event


def events(text: str) -> list[Event]:
    res = read_stack_dump(text.encode(), "stacks/rank-0.txt", rank=0)
    assert res.issues == []
    return res.events


def picked(text: str) -> tuple[object, ...]:
    (ev,) = events(text)
    f = ev.fields
    return f["form"], f["category"], f["func"], f["thread"]


# ------------------------------------------------------------------ gdb

# NVIDIA/nccl#1013 (`thread apply all bt` of a rank stuck in ncclCommAbort): two of NCCL's own threads,
# stripped (`?? () from libnccl.so.2`), waiting in libc; the main thread is the brief's shape of gdb's frame.
GDB_ALL = """\
Thread 7 (Thread 0x7f272e99a640 (LWP 455407) "python3"):
#0  __futex_abstimed_wait_common64 (private=128, cancel=true, abstime=0x0, op=265, expected=0,\
 futex_word=0x7f272ed9b158) at ./nptl/futex-internal.c:57
#3  0x00007f281f693ac1 in __pthread_cond_wait_common (abstime=0x0, clockid=0, mutex=0x7f272ed9b108,\
 cond=0x7f272ed9b130) at ./nptl/pthread_cond_wait.c:503
#4  ___pthread_cond_wait (cond=0x7f272ed9b130, mutex=0x7f272ed9b108) at ./nptl/pthread_cond_wait.c:627
#5  0x00007f27a267d880 in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2
#6  0x00007f281f694b43 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442

Thread 6 (Thread 0x7f273eecc640 (LWP 455403) "python3"):
#0  0x00007f281f718d7f in __GI___poll (fds=0x7f273eeca000, nfds=65, timeout=500) at ../sysdeps/unix/sysv/linux/poll.c:29
#1  0x00007f27a267dee7 in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2

Thread 1 (Thread 0x7f281fb4e740 (LWP 455300) "python3"):
#0  0x00007f281f693ac1 in pthread_cond_wait@@GLIBC_2.3.2 () from /lib64/libpthread.so.0
#1  0x00007f27a26a1c33 in ncclCommAbort (comm=0x55d0c4f1e2a0) at src/init.cc:2132
#2  0x00007f27c8d2e0b1 in c10d::NCCLComm::ncclCommAbort(std::optional<std::string>) () from \
/opt/torch/lib/libtorch_cuda.so
#3  0x000055d0c2b1a3f4 in _PyEval_EvalFrameDefault ()
"""


def test_gdb_all_threads_main_thread_in_comm_abort() -> None:
    (ev,) = events(GDB_ALL)
    assert (ev.fields["form"], ev.fields["category"], ev.fields["func"]) == ("gdb", "comm_teardown",
                                                                              "ncclCommAbort")
    assert (ev.fields["file"], ev.fields["line"], ev.fields["thread"]) == ("src/init.cc", 2132, "python3")
    assert ev.evidence.line == 14 and ev.evidence.text.startswith("#1  0x00007f27a26a1c33 in ncclCommAbort")


# NVIDIA/nccl#549 (`(gdb) where` of a hung process, no thread header): a CUDA free, under cudart's wrapper
GDB_WHERE = """\
(gdb) where
#0  0x00007ffee4abb6c2 in clock_gettime ()
#1  0x00007f979399ed36 in __GI___clock_gettime (clock_id=4, tp=0x7ffee4a8abb0) at ../sysdeps/unix/clock_gettime.c:115
#2  0x00007f96fee2b70e in ?? () from /usr/lib/x86_64-linux-gnu/libcuda.so.1
#6  0x00007f96fee87259 in cuMemFree_v2 () from /usr/lib/x86_64-linux-gnu/libcuda.so.1
#7  0x00007f97160362c0 in cudart::cudaApiFree(void*) () from /home/u/lib/libnccl.so
"""


def test_gdb_bt_without_header_is_a_thread() -> None:
    (ev,) = events(GDB_WHERE)
    assert (ev.fields["category"], ev.fields["func"]) == ("device_sync", "cuMemFree_v2")
    assert "line" not in ev.fields and ev.fields["file"] == "/usr/lib/x86_64-linux-gnu/libcuda.so.1"


# NVIDIA/nccl#719: NCCL's proxy thread (persistentThread) and its IB async thread are helpers, never the stuck
# frame, even where they poll the network; the one other thread decides.
GDB_HELPERS = """\
Thread 12 (Thread 0x7fd07dfff700 (LWP 112)):
#0  0x00007fd31dcd8ef7 in __GI___sched_getaffinity_new (pid=-2012823256, cpusetsize=1,\
 cpuset=0x2) at ../sysdeps/unix/sysv/linux/sched_getaffinity.c:36
#1  0x00007fd2e7134db5 in persistentThread (comm_=0x7fd088002f70) at proxy.cc:456

Thread 10 (Thread 0x7fd0a1ffd700 (LWP 103)):
#0  0x00007fd31dfd7474 in __libc_read (fd=36, buf=0x7fd0a1ffce70, nbytes=16) at ../sysdeps/unix/sysv/linux/read.c:27
#1  0x00007fd24ceb415f in ibv_get_async_event () from /usr/lib/x86_64-linux-gnu/libibverbs.so.1
#3  0x00007fd2e7127003 in ncclIbAsyncThreadMain (args=0x559abaf04850) at transport/net_ib.cc:70

Thread 1 (Thread 0x7fd31e3f0740 (LWP 90)):
#0  0x00007fd31dfd6f85 in pthread_cond_wait@@GLIBC_2.3.2 () from /lib64/libpthread.so.0
#1  0x00007fd2e7141a10 in cudaStreamSynchronize () from /usr/local/cuda/lib64/libcudart.so.11.0
"""


def test_gdb_helper_threads_do_not_decide() -> None:
    assert picked(GDB_HELPERS) == ("gdb", "device_sync", "cudaStreamSynchronize", "90")


def test_gdb_a_libc_wait_alone_is_no_interesting_frame() -> None:
    text = ("Thread 1 (Thread 0x7fd31e3f0740 (LWP 90)):\n"
            "#0  0x00007fd31dfd6f85 in pthread_cond_wait@@GLIBC_2.3.2 () from /lib64/libpthread.so.0\n"
            "#1  0x00007fd2e7141a10 in std::condition_variable::wait(std::unique_lock<std::mutex>&) () from "
            "/lib64/libstdc++.so.6\n")
    assert picked(text) == ("gdb", "other", "std::condition_variable::wait", "90")


def test_two_bts_without_headers_are_two_processes() -> None:
    one = "#0  0x00007f1 in ncclAllReduce (sendbuff=0x1, count=8) at src/collectives.cc:101\n"
    two = "#0  0x00007f1 in pncclCommAbort (comm=0x55d0) at src/init.cc:2132\n"
    evs = events(one + "(gdb) detach\n" + two)
    assert [(e.fields["category"], e.fields["func"]) for e in evs] == [("collective", "ncclAllReduce"),
                                                                      ("comm_teardown", "pncclCommAbort")]


@pytest.mark.parametrize("text", [
    # an application's log whose lines open with `#0` (a worker's index), not gdb's frames
    "#0 loss=2.31 lr=1e-4 (step 100)\n#1 loss=2.29 lr=1e-4 (step 200)\n",
    "#0  epoch 1 done (train)\n#1  epoch 2 done (train)\n",
    "#0 [rank0]: NCCL WARN Call to ibv_poll_cq failed\n",
    # a Markdown numbered list and headings in a pasted how-to
    "1. Run `gdb -p PID`\n2. Type `thread apply all bt` (all threads)\n#0 Install NCCL (2.18)\n",
    "# Steps\n## 1. ncclCommAbort (hangs)\n",
])
def test_near_miss_not_gdb(text: str) -> None:
    assert events(text) == []


def test_gdb_frames_count_up_within_a_thread() -> None:
    """A `#0` after frames of a header's thread is a new `bt`; a number that goes back is no frame of it."""
    text = ("Thread 1 (Thread 0x7f (LWP 90)):\n#3  0x1 in foo () from /lib/a.so\n"
            "#2  0x2 in ncclAllReduce () from /lib/libnccl.so.2\n")
    assert picked(text) == ("gdb", "other", "foo", "90")


# ------------------------------------------------------------------ lldb

# lldb's `bt all` in the shape its docs print (`* thread #1, ..., stop reason = ...`, `frame #N: ADDR
# module`function + offset at file:line:col`), with the names of a rank whose ProcessGroupNCCL::abort hangs
LLDB = """\
* thread #1, name = 'python', stop reason = signal SIGSTOP
  * frame #0: 0x00007f0a1c0e892d libc.so.6`syscall + 29
    frame #1: 0x00007f0a1c07a1f2 python`_PyEval_EvalFrameDefault + 1234
  thread #9, name = 'pt_nccl_watchdg', stop reason = signal SIGSTOP
    frame #0: 0x00007f0a1c0e892d libc.so.6`syscall + 29
    frame #1: 0x00007f09f3aef142 libstdc++.so.6`std::__atomic_futex_unsigned_base::_M_futex_wait_until_steady(\
this=<unavailable>, __has_timeout=true) at futex.cc:217:18
    frame #2: 0x00007f09f4db0b85 libtorch_cuda.so`c10d::ProcessGroupNCCL::waitForFutureOrTimeout(std::future<bool>&, \
bool) + 725
    frame #3: 0x00007f09f4db1068 libtorch_cuda.so`c10d::ProcessGroupNCCL::abort() + 664
"""


def test_lldb_teardown_in_a_side_thread() -> None:
    (ev,) = events(LLDB)
    assert (ev.fields["form"], ev.fields["category"], ev.fields["func"]) == (
        "lldb", "comm_teardown", "c10d::ProcessGroupNCCL::abort")
    assert (ev.fields["file"], ev.fields["thread"], ev.fields["depth"]) == ("libtorch_cuda.so", "pt_nccl_watchdg", 4)


def test_lldb_main_thread_collective() -> None:
    text = ("* thread #1, name = 'python', stop reason = signal SIGSTOP\n"
            "  * frame #0: 0x00007f3c libc.so.6`pthread_cond_wait@@GLIBC_2.3.2 + 543\n"
            "    frame #1: 0x00007f3c libnccl.so.2`ncclGroupEnd + 123\n")
    assert picked(text) == ("lldb", "collective", "ncclGroupEnd", "python")


def test_near_miss_not_lldb() -> None:
    """lldb's frame needs its `module`function` form and a thread of lldb's above it."""
    assert events("* thread #1, name = 'python'\n    frame #1: the loader stalls at ncclGroupEnd\n") == []
    assert events("    frame #1: 0x1 libnccl.so.2`ncclGroupEnd + 123\n") == []


# ------------------------------------------------------------------ pystack

# bloomberg/pystack#279 (`pystack remote PID --native`): C frames among the Python ones, innermost last
PYSTACK = """\
Traceback for thread 257597 (Thread-1 (launc) [] (most recent call last):
    (C) File "Objects/methodobject.c", line 564, in cfunction_call.lto_priv.0 (/usr/lib/libpython3.14.so.1.0)
    (Python) File "<script>", line 5, in <module>
    (C) File "./Modules/timemodule.c", line 408, in time_sleep.lto_priv.0 (/usr/lib/libpython3.14.so.1.0)
"""


def test_pystack_innermost_is_last() -> None:
    assert picked(PYSTACK) == ("pystack", "other", "time_sleep", "Thread-1 (launc")


def test_pystack_collective_under_python() -> None:
    text = ("Traceback for thread 1234 (python) [Has the GIL] (most recent call last):\n"
            '    (Python) File "/work/train.py", line 200, in <module>\n'
            "        main()\n"
            '    (Python) File "/opt/torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n'
            "        work.wait()\n"
            '    (C) File "???", line 0, in c10d::ProcessGroupNCCL::WorkNCCL::wait(std::chrono::duration<long, '
            'std::ratio<1l, 1000l> >) (libtorch_cuda.so)\n'
            '    (C) File "???", line 0, in pthread_cond_wait@@GLIBC_2.3.2 (libc.so.6)\n')
    (ev,) = events(text)
    assert (ev.fields["category"], ev.fields["file"], ev.evidence.line) == ("collective", "libtorch_cuda.so", 6)


def test_near_miss_pystack_frames_need_their_header() -> None:
    text = '    (C) File "src/init.cc", line 2132, in ncclCommAbort (libnccl.so.2)\n'
    assert events(text) == []
    assert events('Thread 10 (idle): "MainThread"\n' + text) == []  # nor under another form's header


# ------------------------------------------------------------------ py-spy --native

# NVIDIA/nccl#992 (`py-spy dump --native` of a thread whose ncclCommAbort hangs)
PYSPY_NATIVE = """\
Thread 3438296 (idle): "Thread-41"
    0x155555277197 (libc.so.6)
    0x15555527c6a4 (libc.so.6)
    commFree (init.cc:180)
    commCleanup (init.cc:1731)
    commReclaim (init.cc:1862)
    ncclCommAbort (init.cc:1931)
    c10d::NCCLComm::ncclCommAbort (libtorch_cuda.so)
    c10d::ProcessGroupNCCL::abort (libtorch_cuda.so)
"""


def test_pyspy_native_frames() -> None:
    (ev,) = events(PYSPY_NATIVE)
    assert (ev.fields["form"], ev.fields["category"], ev.fields["func"], ev.fields["line"]) == (
        "py-spy", "comm_teardown", "commFree", 180)


def test_pyspy_native_before_python_collective() -> None:
    text = ('Thread 7 (idle): "MainThread"\n    pthread_cond_wait@@GLIBC_2.3.2 (libpthread-2.31.so)\n'
            "    cudaStreamSynchronize (libcudart.so.12)\n"
            "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n")
    assert picked(text) == ("py-spy", "device_sync", "cudaStreamSynchronize", "MainThread")


# ------------------------------------------------------------------ one classification

@pytest.mark.parametrize("name, cat", [
    ("ncclCommAbort", "comm_teardown"), ("pncclAllReduce", "collective"), ("ncclGroupEnd", "collective"),
    ("ncclProxyService(void*)", "helper"), ("ncclProxyProgress", "helper"),
    ("cudaStreamSynchronize", "device_sync"), ("cuStreamSynchronize + 12", "device_sync"),
    ("cuMemFree_v2", "device_sync"), ("ibv_poll_cq", "network_poll"), ("PMPI_Wait", "collective"),
    ("MPI_Allreduce", "collective"), ("ompi_request_default_wait_all", "collective"),
    ("c10d::ProcessGroupNCCL::WorkNCCL::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >)", "collective"),
    ("c10d::TCPStore::doWait(c10::ArrayRef<std::string>, std::chrono::duration<long>)", "store"),
    ("gloo::transport::tcp::Pair::recv", "collective"), ("ncclCommInitRank", "comm_setup"),
    ("ncclAllReduce.cold", "collective"),
    ("ncclDevFunc_AllGather_RING_SIMPLE()", "collective"), ("ibv_get_async_event", "helper"),
    # near misses: libc waits, a lookalike prefix, a Python name
    ("pthread_cond_wait@@GLIBC_2.3.2", None), ("futex_wait", None), ("epoll_wait", None),
    ("ncclx_user_hook", None), ("all_reduce", None), ("MPIX_Comm_agree", None),
])
def test_native_names(name: str, cat: str | None) -> None:
    assert native_category(name) == cat
