"""A job's resource limits in each stack's words (issue 25, family 2): /dev/shm's size, locked memory, processes
and threads, open files. Each reads as that limit (`limit`), the job's set-up or configuration on the node that
printed it, through the real extractors and the engine; the near misses are lines that only look like one."""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Event
from tests.conftest import XID79, BundleMaker
from tests.extract.helpers import TB, events


def _read(lines: list[str]) -> list[tuple[str, dict[str, object]]]:
    keys = ("setup", "limit", "shm", "errno", "signal", "fs")
    return [(e.kind, {k: v for k, v in e.fields.items() if k in keys}) for e in events(lines)]


def _causes(evs: list[Event]) -> list[str]:
    return [e.kind for e in evs]


# --------------------------------------------------------------------------
# /dev/shm: PyTorch's shared-memory objects, the DataLoader's workers, NCCL's segment
# --------------------------------------------------------------------------


@pytest.mark.parametrize("lines", [
    # idiap/ESLAM#20 (https://github.com/idiap/ESLAM/issues/20): MapAllocator could not grow torch.multiprocessing's
    # shared-memory object (`/torch_<pid>_...`, made by shm_open under /dev/shm) in a container's 64 MB
    ["RuntimeError: unable to write to file </torch_31911_952036340_6686>: No space left on device (28)"],
    [TB,
     '  File "/opt/conda/lib/python3.8/site-packages/torch/multiprocessing/reductions.py", line 333, in '
     'reduce_storage',
     "    fd, size = storage._share_fd_cpu_()",
     "RuntimeError: unable to write to file </torch_18693_3152526440_0>: No space left on device (28)"],
    # NVIDIA/Megatron-LM#878 (https://github.com/NVIDIA/Megatron-LM/issues/878): fixed with `docker run --shm-size`
    ["OSError: [Errno 28] No space left on device: '/dev/shm/torch_1234_567'"],
])
def test_an_enospc_on_the_nodes_shared_memory_is_its_size_not_the_storage(lines: list[str]) -> None:
    got = _read(lines)
    assert len(got) == 1 and got[0][0] == "app.exception", got
    assert got[0][1].get("shm") is True and got[0][1].get("limit") == "shm" and got[0][1].get("errno") == "ENOSPC"


def test_near_miss_an_enospc_on_a_checkpoint_path_stays_the_storages() -> None:
    got = _read(["OSError: [Errno 28] No space left on device: '/mnt/ckpt/step_1000/model.pt'"])
    assert [k for k, _ in got] == ["storage.error"] and "limit" not in got[0][1]


def test_near_miss_a_torch_name_that_is_no_shared_memory_object_stays_the_storages() -> None:
    # a file of the job's own whose name starts like PyTorch's handle, on a real path: the file system's
    got = _read(["OSError: [Errno 28] No space left on device: '/scratch/torch_cache/hub/model.pt'"])
    assert [k for k, _ in got] == ["storage.error"]
    got = _read(["OSError: [Errno 28] No space left on device: '/torch_models/ckpt_100_2.pt'"])
    assert [k for k, _ in got] == ["storage.error"]


def test_pytorchs_shared_memory_object_as_a_path_is_shm() -> None:
    got = _read(["OSError: [Errno 28] No space left on device: '/torch_4242_1396182366_3'"])
    assert [(k, f.get("limit")) for k, f in got] == [("app.exception", "shm")]


def test_near_miss_a_shared_memory_object_that_is_gone_is_no_size_limit() -> None:
    # ENOENT on PyTorch's object: /dev/shm's, but nothing ran out of room there
    got = _read(["RuntimeError: unable to open shared memory object </torch_29919_1396182366> in read-write mode: "
                 "No such file or directory (2)"])
    assert all(f.get("limit") is None for _, f in got)


def test_a_dataloader_workers_bus_error_with_pytorchs_hint_is_shm() -> None:
    # torch/csrc/DataLoader.cpp: the worker's SIGBUS handler and the main process's error for it
    # (THU-DA-6D-Pose-Group/GDR-Net#16, https://github.com/THU-DA-6D-Pose-Group/GDR-Net/issues/16)
    got = _read(["RuntimeError: DataLoader worker (pid 3216) is killed by signal: Bus error. It is possible that "
                 "dataloader's workers are out of shared memory. Please try to raise your shared memory limit."])
    assert got == [("app.exception", {"shm": True, "limit": "shm", "signal": "SIGBUS"})]


def test_near_miss_a_bare_bus_error_stays_a_crash() -> None:
    got = _read(["Fatal Python error: Bus error"])
    assert [k for k, _ in got] == ["process.signal"] and "limit" not in got[0][1]


def test_ncclos_failing_to_create_its_shared_memory_file_is_shm() -> None:
    # NVIDIA/nccl src/os/linux.cc ncclOsShmOpen: mkstemp(3) in /dev/shm failed
    got = _read(["node-01:1234:1300 [0] os/linux.cc:780 NCCL WARN Error: failed to create shared memory file "
                 "/dev/shm/nccl-AbCdEf, error No space left on device (28)"])
    assert got == [("app.exception", {"shm": True, "limit": "shm", "errno": "ENOSPC"})]


def test_near_miss_attaching_to_a_peers_segment_that_is_gone_is_not_shm() -> None:
    # NVIDIA/nccl#1589 (https://github.com/NVIDIA/nccl/issues/1589): the segment was made; the peer's side failed
    got = _read(["g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
                 "/dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)"])
    assert all(f.get("limit") is None and f.get("shm") is None for _, f in got)


# --------------------------------------------------------------------------
# Locked memory (ulimit -l)
# --------------------------------------------------------------------------


def test_ncclverbs_registration_without_lockable_memory_is_the_memlock_limit() -> None:
    # NVIDIA/nccl-tests#206 (https://github.com/NVIDIA/nccl-tests/issues/206): `ulimit -l` was 8192
    got = _read(["node-01:1234:1300 [0] misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error "
                 "Cannot allocate memory"])
    # (NCCL's reader and the verbs reader each read it: the same fact)
    assert got and {(k, f.get("setup"), f.get("limit")) for k, f in got} == {("nccl.error", True, "memlock")}


def test_the_efa_providers_abort_without_lockable_memory_is_the_memlock_limit() -> None:
    # awslabs/awsome-distributed-ai#647 (https://github.com/awslabs/awsome-distributed-ai/issues/647): `ulimit -l` was
    # 65536; libfabric prov/efa's abort report
    got = _read(["Libfabric EFA provider has encountered an internal error:", "",
                 "Libfabric error: (-12) Cannot allocate memory",
                 "EFA internal error: (4112) Failure to post internal receive buffers", "",
                 "Your application will now abort()."])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("nccl.error", True, "memlock")]


UCX_MEMLOCK = ("[node-01:183563:0:183563]           ib_md.c:340  UCX  ERROR ibv_reg_mr(address=0x7f1bae800000, "
               "length=39845888, access=0xf) failed: Cannot allocate memory : Please set max locked memory "
               "(ulimit -l) to 'unlimited' (current: 65536 kbytes)")


def test_ucxs_memlock_advice_reads_as_the_limit_once_the_layer_above_could_not_start() -> None:
    # openucx/ucx src/uct/ib/base/ib_log.c uct_ib_memlock_limit_msg (openucx/ucx#7930's example); Open MPI's pml/ucx
    got = _read([UCX_MEMLOCK, "[node-01:183563] pml_ucx.c:309  Error: Failed to create UCP worker"])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("nccl.error", True, "memlock")]


def test_near_miss_ucxs_memlock_advice_alone_is_held() -> None:
    # openucx/ucx#8746: UCX says it of a device it then leaves out, and the run goes on over the others
    assert _read([UCX_MEMLOCK]) == []


def test_near_miss_a_verbs_registration_with_another_errno_is_no_limit() -> None:
    got = _read(["ib_md.c:340  UCX  ERROR ibv_reg_mr(address=0x7f1bae800000, length=39845888, access=0xf) "
                 "failed: Bad address"])
    assert all(f.get("limit") is None for _, f in got)


# --------------------------------------------------------------------------
# Processes and threads (ulimit -u, a cgroup's pids.max)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("line", [
    # golang/go#51678 (https://github.com/golang/go/issues/51678)
    "runtime/cgo: pthread_create failed: Resource temporarily unavailable",
    # OpenBLAS driver/others/blas_server.c blas_thread_init
    "OpenBLAS blas_thread_init: pthread_create failed for thread 61 of 64: Resource temporarily unavailable",
    # QingyongHu/RandLA-Net#177 (https://github.com/QingyongHu/RandLA-Net/issues/177), libgomp/team.c
    "libgomp: Thread creation failed: Resource temporarily unavailable",
    # open-mmlab/OpenPCDet#329 (https://github.com/open-mmlab/OpenPCDet/issues/329), CPython's _threadmodule.c
    "RuntimeError: can't start new thread",
    # OpenJDK's thread creation (os_linux.cpp) since JDK 11
    'Exception in thread "main" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory '
    "or process/resource limits reached",
    # bash giving up on fork(2) after its retries (execute_cmd.c)
    "/usr/bin/bash: fork: Resource temporarily unavailable",
    # DanBigioi/DiffusionVideoEditing#4 (https://github.com/DanBigioi/DiffusionVideoEditing/issues/4): a glog CHECK
    # on pthread_create's return, 11 = EAGAIN
    "F20230801 21:50:32.905575  4768 threadpool_pthread_impl.cc:51] Check failed: res == 0 (11 vs. 0) "
    "pthread_create failed",
    # gramineproject/gsc#27 (https://github.com/gramineproject/gsc/issues/27): TensorFlow's PThread (env.cc)
    "2021-11-08 14:09:27.718214: F external/org_tensorflow/tensorflow/core/platform/default/env.cc:73] Check "
    "failed: ret == 0 (11 vs. 0)Thread creation via pthread_create() failed.",
])
def test_a_thread_or_process_the_limit_refused_is_the_jobs_set_up(line: str) -> None:
    got = _read([line])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("app.exception", True, "nproc")], got


def test_a_python_thread_that_could_not_start_in_a_traceback_is_the_nproc_limit() -> None:
    # Project-MONAI/MONAI#1328 (https://github.com/Project-MONAI/MONAI/issues/1328)
    got = _read([TB, '  File "/usr/lib/python3.7/threading.py", line 852, in start',
                 "    _start_new_thread(self._bootstrap, ())", "RuntimeError: can't start new thread"])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("app.exception", True, "nproc")]


def test_eagain_where_fork_itself_raised_is_the_nproc_limit() -> None:
    # facebookresearch/detectron2#3900 (https://github.com/facebookresearch/detectron2/issues/3900): a DataLoader's
    # workers forked past RLIMIT_NPROC; Lib/multiprocessing/popen_fork.py `_launch`
    got = _read([TB, '  File "/usr/lib/python3.8/multiprocessing/process.py", line 121, in start',
                 "    self._popen = self._Popen(self)",
                 '  File "/usr/lib/python3.8/multiprocessing/popen_fork.py", line 70, in _launch',
                 "    self.pid = os.fork()",
                 "BlockingIOError: [Errno 11] Resource temporarily unavailable"])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("app.exception", True, "nproc")]


def test_near_miss_eagain_from_a_socket_in_a_traceback_is_no_limit() -> None:
    got = _read([TB, '  File "/app/client.py", line 3, in poll', "    data = sock.recv(10)",
                 "BlockingIOError: [Errno 11] Resource temporarily unavailable"])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("app.exception", None, None)]


@pytest.mark.parametrize("line", [
    # a CHECK on another call's return: no thread
    "F0407 01:31:07.673615  5759 math_functions.cpp:250] Check failed: res == 0 (11 vs. 0) cudaMemcpy failed",
    # a non-blocking socket's EAGAIN: no limit
    "BlockingIOError: [Errno 11] Resource temporarily unavailable",
    # bash says it goes on trying
    "/usr/bin/bash: fork: retry: Resource temporarily unavailable",
    # enkessler/childprocess#153 (https://github.com/enkessler/childprocess/issues/153): Ruby's warning
    "/app/vendor/bundle/ruby/2.5.0/gems/childprocess-0.9.0/lib/childprocess/unix/fork_exec_process.rb:20: warning: "
    "pthread_create failed for timer: Resource temporarily unavailable, scheduling broken",
])
def test_near_miss_eagain_without_a_thread_or_fork_that_failed_is_no_limit(line: str) -> None:
    assert all(f.get("limit") is None and not f.get("setup") for _, f in _read([line]))


# --------------------------------------------------------------------------
# Open files (ulimit -n)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("lines", [
    ["OSError: [Errno 24] Too many open files: '/data/train/shard-0001.tar'"],
    # torch/utils/data/dataloader.py _try_get_data's advice
    ["RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the "
     "limit using `ulimit -n` in the shell or change the sharing strategy by calling "
     "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code"],
    # PyTorch's shared-memory object could not be opened: the descriptors, not /dev/shm's size
    ["RuntimeError: unable to open shared memory object </torch_29919_1396182366> in read-write mode: Too many "
     "open files (24)"],
])
def test_too_many_open_files_is_the_open_files_limit(lines: list[str]) -> None:
    got = _read(lines)
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("app.exception", True, "nofile")], got


def test_a_descriptor_the_kernel_stripped_at_the_limit_is_the_open_files_limit() -> None:
    # lzccccc/SMOKE#21 (https://github.com/lzccccc/SMOKE/issues/21); pytorch/pytorch#34768 explains it: the fd is
    # stripped from the worker's message when the receiver is at its open-files limit
    got = _read([TB, '  File "/usr/lib/python3.7/multiprocessing/reduction.py", line 185, in recv_handle',
                 "    return recvfds(s, 1)[0]",
                 '  File "/usr/lib/python3.7/multiprocessing/reduction.py", line 161, in recvfds',
                 "    len(ancdata))",
                 "RuntimeError: received 0 items of ancdata"])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("app.exception", True, "nofile")]


def test_ncclsocket_out_of_descriptors_is_the_open_files_limit() -> None:
    # NVIDIA/nccl src/include/checks.h SYSCHECK's words (NVIDIA/nccl#550: alltoall over sockets)
    got = _read(["node-01:1234:1300 [0] misc/socket.cc:600 NCCL WARN Call to accept failed: Too many open files"])
    assert [(k, f.get("setup"), f.get("limit")) for k, f in got] == [("nccl.error", True, "nofile")]


def test_near_miss_the_systems_file_table_is_no_limit_of_the_job() -> None:
    got = _read(["OSError: [Errno 23] Too many open files in system"])
    assert all(f.get("limit") is None and not f.get("setup") for _, f in got)


# --------------------------------------------------------------------------
# Through the engine
# --------------------------------------------------------------------------


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def test_engine_a_rank_that_could_not_start_a_thread_is_the_jobs_set_up_on_its_node(make_bundle: BundleMaker) -> None:
    files = {"app/rank-2.log": _app(["2026-11-02 10:04:58,000 INFO step 9",
                                     "runtime/cgo: pthread_create failed: Resource temporarily unavailable"])}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "software" and v.root_cause is not None
    assert v.root_cause.category == "app.exception.setup" and v.root_cause.nodes == ["node-02"]


def test_engine_a_shm_object_full_is_the_workloads_configuration_not_storage(make_bundle: BundleMaker) -> None:
    files = {"app/rank-0.log": _app(["RuntimeError: unable to write to file </torch_31911_952036340_6686>: No space "
                                     "left on device (28)"])}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "software" and v.root_cause is not None
    assert v.root_cause.category == "app.exception" and v.root_cause.nodes == ["node-01"]


def test_engine_near_miss_a_device_fault_elsewhere_outranks_a_limit_line(make_bundle: BundleMaker) -> None:
    # a set-up reading is weak: a hard fault the evidence shows stands before it
    files = {"nodes/node-02/kern.log": XID79,
             "app/rank-4.log": _app(["runtime/cgo: pthread_create failed: Resource temporarily unavailable"])}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "hardware" and v.root_cause is not None
    assert v.root_cause.category == "gpu.fallen_off_bus"
