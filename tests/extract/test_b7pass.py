"""Classes of input batch b7 showed unread, each tested on real instances from other threads (not the bundle).

Each block names the class, the threads its lines come from, and the look-alikes that must not match.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Event
from tests.conftest import BundleMaker
from tests.extract import helpers


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines)


# ---------------------------------------------------------------- NCCL's shared-memory segment, any spelling
# NCCL's report that it could not make or grow its /dev/shm segment, with or without its WARN header and errno:
# the container's /dev/shm (or the host) cannot give the job what it asks, the workload's configuration.


@pytest.mark.parametrize(
    "lines",
    [
        # hiyouga/EasyR1#228: the bare line behind Ray's worker prefix (fixed by a larger shm)
        ["(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)"],
        # NVIDIA/nccl-tests#166: the header, no errno; the extend and the create are one report
        ["ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to "
         "5967876 bytes",
         "ubuntu:9621:9691 [6] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
         "/dev/shm/nccl-fjwOOB (size 5967872)"],
        # NVIDIA/nccl#1518: the rank-only header NCCL prints without a host (NCCL_SHM_DISABLE=1 worked around it)
        ["[1] misc/shmutils.cc:114 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-NzwJ7O "
         "(size 9637888)"],
    ],
)
def test_nccl_shm_segment_any_spelling(lines: list[str]) -> None:
    events = feed(lines)
    assert [(e.kind, e.fields.get("shm")) for e in events] == [("app.exception", True)]


def test_nccl_shm_attach_is_not_the_segment_size() -> None:
    # NVIDIA/nccl#1589: attaching to a peer's segment that is gone (a release's bug, fixed by a downgrade)
    events = feed(["g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory "
                   "segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)"])
    assert all(not e.fields.get("shm") for e in events)


# ---------------------------------------------------------------- a transport's node lacking what the job named
# The launcher's remote shell finding no daemon of the launcher's (Open MPI's orted, PRRTE's prted), and Gloo
# finding no address for the interface or host it was told to use: the job's own set-up on that node.


@pytest.mark.parametrize(
    ("line", "status"),
    [
        ("bash: orted: command not found", "daemon_not_found"),  # horovod/horovod#760, open-mpi/ompi#8870
        ("/bin/bash: orted: command not found", "daemon_not_found"),  # easybuilders/easybuild-easyconfigs#204
        ("bash: prted: command not found", "daemon_not_found"),  # openpmix/prrte#371
        # the launcher's remote shell refused, in OpenSSH's words: DeepSpeed's pdsh (deepspeedai/DeepSpeed#5709, its
        # `host: ` tag first) and sshconnect.c's host key check (the string OpenSSH prints)
        ("localhost: jiaming@localhost: Permission denied (publickey,password).", "remote_shell_refused"),
        ("Host key verification failed.", "remote_shell_refused"),
        # the launcher's own SSH client refusing the key it was given, in paramiko's words (paramiko/pkey.py
        # _read_private_key): ColossalAI's `colossalai run` through Fabric (hpcaitech/ColossalAI#5213)
        ("Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=192.168.1.11 "
         "--master_port=29508 pretrain.py on 192.168.1.12, is localhost: False, exception: not a valid RSA private key "
         "file", "remote_shell_key_invalid"),
        # written here, raised in the form paramiko's source gives it for a key of the OPENSSH tag
        ("paramiko.ssh_exception.SSHException: not a valid OPENSSH private key file", "remote_shell_key_invalid"),
        # NVIDIA/Megatron-LM#436
        ("RuntimeError: [enforce fail at /root/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] "
         "ifa != nullptr. Unable to find address for: bond1", "no_interface"),
        # Megvii-BaseDetection/YOLOX#139
        ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. "
         "Unable to find address for: ib0", "no_interface"),
        # msr-fiddle/pipedream#32: a host name with no address it can bind
        ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. "
         "Unable to find address for: dgx-1.ai", "no_interface"),
    ],
)
def test_transport_node_lacks_what_the_job_named(line: str, status: str) -> None:
    setup = [e for e in feed([line]) if e.fields.get("setup")]
    assert [(e.kind, e.fields.get("local_status")) for e in setup] == [("nccl.error", status)]


@pytest.mark.parametrize(
    "line",
    [
        # open-mpi/ompi#2843: the launcher's own progress about its daemons
        "[savbu-usnic-a:16604] [[4570,0],0] plm:base:orted_report_launch from daemon [[4570,0],1] on node mpi001",
        # another program missing on the node is not the launcher's daemon
        "bash: nvidia-smi: command not found",
        # pytorch/pytorch#15592: a peer refusing Gloo's connection is the peer's status, not the set-up
        "  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] "
        "connect [127.0.1.1]:3210: Connection refused",
        # a program's own DNS message in the same words, without Gloo's enforce
        "Unable to find address for: db.internal",
        # ssh's offer of methods (horovod/horovod#467's -vvvv output), pdsh's summary of the exit (#5709: the refusal
        # above says why), a file the job may not open, and a node that does not answer (may be down: not set-up)
        "debug1: Authentications that can continue: publickey,password",
        "pdsh@jiaming-Precision-7960-Tower: localhost: ssh exited with exit code 255",
        "PermissionError: [Errno 13] Permission denied: '/data/ckpt/last.pt'",
        "ssh: connect to host 10.0.0.12 port 22: Connection timed out",
        # written here: a client naming the key it uses, no refusal (the near miss of paramiko's words)
        "debug1: Will attempt key: /root/.ssh/id_rsa RSA SHA256:abc explicit; using private key file /root/.ssh/id_rsa",
        # a worker pod's name not resolving yet under Volcano (volcano-sh/volcano#2226): not ready, not set-up
        "ssh: Could not resolve hostname lm-horovod-job-worker-5.lm-horovod-job: Name or service not known",
    ],
)
def test_transport_node_lacks_near_misses(line: str) -> None:
    assert not [e for e in feed([line]) if e.fields.get("setup")]


def test_a_launch_whose_remote_shell_was_refused_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    """DeepSpeed's pdsh launch refused by the node's sshd (deepspeedai/DeepSpeed#5709, the posted block)."""
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "t", "scheduler": "static"},
          "sources": [{"kind": "application", "path": "app/launch.log"}]}
    log = ("localhost: Permission denied, please try again.\n"
           "localhost: jiaming@localhost: Permission denied (publickey,password).\n"
           "pdsh@jiaming-Precision-7960-Tower: localhost: ssh exited with exit code 255\n")
    root = make_bundle({"app/launch.log": log}, wl)
    v = Analyzer().analyze_path(str(root))
    assert (v.attributed_domain, v.root_cause.category if v.root_cause else None) == ("software", "app.exception.setup")


# ---------------------------------------------------------------- the kubelet's preemption for a critical pod
# The kubelet fails a running pod to admit a critical one: reason `Preempting`, message `Preempted in order to
# admit critical pod` (pkg/kubelet/preemption/preemption.go), in a pod's status, its describe, or a client
# repeating it.


def test_kubelet_preempting_reason_and_message() -> None:
    from firstfault.extract.reasons import k8s_reason

    # Shopify/krane#317 (test/unit/.../pod_test.rb): the status a preempted unmanaged pod has
    assert k8s_reason("Preempting", "Preempted in order to admit critical pod") == ("preemption", None)
    # kubernetes/kubernetes#136702 proposes the admitting pod's UID after the message: the phrase still reads
    assert k8s_reason(None, "Preempted in order to admit critical pod: 5f0c") == ("preemption", None)


def test_spark_executor_lost_to_kubelet_preemption() -> None:
    # A Spark-on-Kubernetes driver's log (a public TPC-DS on JuiceFS notes file): it repeats the pod's reason and
    # message for its lost executor.
    events = feed(["23/01/12 12:18:02 ERROR TaskSchedulerImpl: Lost executor 12 on 100.110.242.89:",
                   "The executor with id 12 exited with exit code -1(unexpected).",
                   "The API gave the following brief reason: Preempting",
                   "The API gave the following message: Preempted in order to admit critical pod"])
    assert [e.fields.get("due_to") for e in events if e.fields.get("due_to")] == ["preemption"]


def test_critical_pod_admission_failure_is_not_a_preemption() -> None:
    # Near miss, kubernetes/kubernetes#78405: the critical pod's own admission failed while preempting another
    events = feed(["Unexpected error while attempting to recover from admission failure: preemption: pod "
                   "worker-async-ad-stitching-tracking-5f89bb489d-mvdq4_www(829b7759-7c9d-11e9-ac16-06903246ae0c) "
                   "failed to evict timeout waiting to kill pod"])
    assert not [e for e in events if e.fields.get("due_to") == "preemption"]


def test_describe_pod_pasted_from_its_middle() -> None:
    # derailed/k9s#174's `kubectl describe pod` (tests/fixtures/scheduler) as people paste it: the lines above
    # `Start Time:` elided. Still a pod's, and still evicted for memory.
    from pathlib import Path

    from firstfault.extract.scheduler import read_scheduler

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler" / "kubectl-describe-pod-k9s-174.txt"
    lines = fixture.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Start Time:"))
    cut = "\n".join([lines[start], "...", *[x for x in lines[start:] if x.startswith(("Status:", "Reason:",
                                                                                        "Message:"))]]) + "\n"
    res = read_scheduler(cut.encode(), "k8s-describe", "describe.txt", job_id=None, tz=None)
    assert [(e.kind, e.fields["due_to"]) for e in res.events] == [("k8s.pod", "memory_limit")]
    # Near miss: a Job's describe cut the same way has a Start Time but no Status: no pod is made of it
    job = "Start Time:     Wed, 08 Jul 2020 10:49:49 +0300\nPods Statuses:  0 Running / 0 Succeeded / 1 Failed\n"
    assert not read_scheduler(job.encode(), "k8s-describe", "job.txt", job_id=None, tz=None).events


# ---------------------------------------------------------------- a storage strerror with its number around it
# A program's error line whose storage strerror is preceded by the errno's number (`failed, errno 28, <text>`, the
# form of IOR / mdtest) or followed by it (`(os error 28)`, Rust's io::Error) or by the C source line that
# reported it (`(aiori-POSIX.c:413)`).


@pytest.mark.parametrize(
    "line",
    [
        # bghira/SimpleTuner#2353: safetensors' Rust writer on a full disk, the line it printed before the traceback
        "Error while serializing: I/O error: No space left on device (os error 28)",
        # uv installing into a Docker build layer on a full disk (a public project's notes quoting its build log)
        "23.31   Caused by: No space left on device (os error 28)",
    ],
)
def test_storage_strerror_with_its_number(line: str) -> None:
    assert [(e.kind, e.fields.get("errno")) for e in feed([line])] == [("storage.error", "ENOSPC")]


@pytest.mark.parametrize(
    "line",
    [
        # an IOR run on a file system it may not write (a Kubernetes filebench issue's paste): EACCES, not the storage's
        'ior ERROR: open64("testFile", 66, 0664) failed, errno 13, Permission denied (aiori-POSIX.c:412)',
        # modelscope/ms-swift#6493: EINVAL from the same Rust writer is not the storage's either
        "Error while serializing: I/O error: Invalid argument (os error 22)",
    ],
)
def test_storage_strerror_with_its_number_near_misses(line: str) -> None:
    assert not [e for e in feed([line]) if e.kind == "storage.error"]


# ---------------------------------------------------------------- the driver's device nodes missing on the host
# The container runtime cannot add the driver's control / UVM device nodes: the driver, or nvidia-uvm, is not loaded.


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/nvidia-docker#139: after a reboot
        "lstat /dev/nvidia-uvm: no such file or directory",
        # NVIDIA/nvidia-docker#145: after a reboot with a changed driver
        'Error response from daemon: linux runtime spec devices: error gathering device information while adding '
        'custom device "/dev/nvidia-uvm-tools": lstat /dev/nvidia-uvm-tools: no such file or directory',
        # cBio/cbio-cluster#389: the node's nvidia-uvm module not loaded after an upgrade
        "Error response from daemon: Cannot start container "
        "23e6442e787ba326729d9fb8a3214f4f1f5dd200e31c78a891885e14aff91670: error gathering"
        ' device information while adding custom device "/dev/nvidia-uvm": lstat /dev/nvidia-uvm: '
        "no such file or directory",
    ],
)
def test_driver_device_node_missing(line: str) -> None:
    assert [(e.kind, e.fields.get("error")) for e in feed([line])] == [("gpu.nvml_error", "driver")]


def test_driver_device_nodes_listed_are_no_error() -> None:
    # Near miss, NVIDIA/nvidia-container-toolkit#50: `ls -l /dev/nv*` naming the nodes, all present
    events = feed(["crw-rw-rw- 1 root root 234,   1 Feb 17 13:47 /dev/nvidia-uvm-tools",
                   "crw-rw-rw- 1 root root 234,   0 Feb 17 13:47 /dev/nvidia-uvm"])
    assert not events


# ---------------------------------------------------------------- a cuDNN other than the one the build expects
# The framework finds a cuDNN older than, or incompatible with, the one it was built against: the job's environment.


@pytest.mark.parametrize(
    "lines",
    [
        # tensorflow/tensorflow#37606 (TensorFlow 1.15's logged line, StyleGAN2 on a Jetson Nano)
        ["2020-07-02 18:49:18.254447: E tensorflow/stream_executor/cuda/cuda_dnn.cc:320] Loaded runtime CuDNN library: "
         "7.5.0 but source was compiled with: 7.6.3.  CuDNN library major and minor version needs to match or have "
         "higher minor version in case of CuDNN 7.0 or later version."],
        # conda-forge/jaxlib-feedstock#329 (XLA's, absl's log prefix)
        ["E1027 15:11:27.184481 3266602 cuda_dnn.cc:456] Loaded runtime CuDNN library: 9.10.1 but source was compiled "
         "with: 9.13.1.  CuDNN library needs to have matching major version and equal or higher minor version."],
        # carpedm20/DCGAN-tensorflow#242 (TensorFlow 1.x's numbers)
        ["E tensorflow/stream_executor/cuda/cuda_dnn.cc:352] Loaded runtime CuDNN library: 5005 (compatibility version "
         "5000) but source was compiled with 5110 (compatibility version 5100)."],
        # RaleLee/Co-GAT#2 (PyTorch's RuntimeError)
        ["RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime "
         "version (8, 3, 3). PyTorch already comes bundled with cuDNN."],
        # pytorch/pytorch#5369 (PyTorch before 1.0)
        ["RuntimeError: cuDNN version mismatch: PyTorch was compiled against 6021 but linked against 5110"],
        # facebookresearch/Detectron#574 (Caffe2's enforce)
        ["RuntimeError: [enforce fail at common_cudnn.h:108] version_match || backwards_compatible_7 || "
         "patch_compatible. cuDNN compiled (7102) and runtime (7005) versions mismatch"],
    ],
)
def test_cudnn_other_than_the_build_expects(lines: list[str]) -> None:
    events = feed(lines)
    assert [(e.kind, e.fields.get("setup")) for e in events] == [("app.exception", True)]


@pytest.mark.parametrize(
    "line",
    [
        # tensorflow/tensorflow#2437: a cuDNN handle that could not be made (memory) is not the version's
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:289] could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
        # tensorflow/tensorflow#37606: the library loading, nothing failed
        "2020-07-02 18:49:12.161725: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully "
        "opened dynamic library libcudnn.so.7",
    ],
)
def test_cudnn_version_near_misses(line: str) -> None:
    assert not [e for e in feed([line]) if e.fields.get("setup")]


# ---------------------------------------------------------------- a read-only root answering for the job's own path
# EROFS for an entry right under `/`: the job creating a directory at the root of a host whose root is read-only by
# design (macOS since 10.15, a container's read-only root), a hard-coded path, not a file system failing under it.


@pytest.mark.parametrize(
    "line",
    [
        "OSError: [Errno 30] Read-only file system: '/sites/'",  # UltimaHoarder/UltimaScraper#110 (macOS)
        "OSError: [Errno 30] Read-only file system: '/.environment'",  # project-chip/connectedhomeip#25451 (macOS)
        "OSError: [Errno 30] Read-only file system: '//logdir'",  # matterport/Mask_RCNN#2880 (macOS, a joined path)
    ],
)
def test_read_only_root_entry_is_the_jobs_path(line: str) -> None:
    events = feed(["Traceback (most recent call last):", '  File "x.py", line 1, in <module>', line])
    assert [(e.kind, e.fields.get("errno")) for e in events] == [("app.exception", "EROFS")]


def test_read_only_file_system_below_the_roots_entries_stays_the_storage() -> None:
    # Near miss, gdha/rear-automated-testing#78: macOS's read-only root again, but the path is below a root entry,
    # where a file system remounted read-only under the job says the same: the path alone cannot tell, the storage's.
    events = feed(["mkdir: /export/rear-tests/logs: Read-only file system"])
    assert [(e.kind, e.fields.get("errno")) for e in events] == [("storage.error", "EROFS")]
