"""Mechanisms behind the first-run misses of wild batches b24 and b25 (issue 25), each tested on lines from other
public threads than the bundles', through the real extractors (and the whole analysis where the verdict depends on
more than one line).

Each block names the mechanism, the threads its lines come from, and the look-alikes that must not match.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.test_b7pass import feed  # every extractor, as the scanner runs them, on an application log


def _cuda(lines: list[str]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("error")) for e in feed(lines) if e.kind in ("app.cuda_error", "app.cuda_oom")]


# ---------------------------------------------------------------- a failed glog CHECK on a CUDA call's status
# Caffe's CUDA_CHECK, mshadow's and MXNet's CUDA_CALL, Minerva's: `Check failed: <expr> == cudaSuccess ... <the
# error's message>`. The message after the checked expression decides, through the CUDA error table; the
# expression's own names (MXNet's tolerated cudaErrorCudartUnloading) and the `(N vs. 0)` numbers do not.


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # weiliu89/caffe#336 (fixed by building for the GPU's compute capability in Makefile.config)
        ("F1208 15:16:46.872542 15643 pooling_layer.cu:212] Check failed: error == cudaSuccess (8 vs. 0)  invalid "
         "device function", [("app.cuda_error", "config")]),
        # apache/mxnet#1550: mshadow's check, whose expression names cudaErrorCudartUnloading too
        ("mxnet.base.MXNetError: [16:52:49] src/storage/./gpu_device_storage.h:39: Check failed: e == cudaSuccess "
         "|| e == cudaErrorCudartUnloading CUDA: out of memory", [("app.cuda_oom", None)]),
        # apache/mxnet#10323: MXNet's kernel launch check, the message after `ErrStr:`
        ("mxnet.base.MXNetError: [17:13:00] src/operator/nn/./../mxnet_op.h:576: Check failed: err == cudaSuccess "
         "(2 vs. 0) Name: mxnet_generic_kernel ErrStr:out of memory", [("app.cuda_oom", None)]),
    ],
)
def test_a_failed_check_on_a_cuda_status_is_read_by_its_message(line: str, expected: list[tuple[str, object]]) -> None:
    assert _cuda([line]) == expected


def test_a_failed_check_without_a_message_is_a_cuda_error_of_no_said_kind() -> None:
    # near miss: apache/mxnet#9529, the check with no message: the number (7, of the toolkit of the day) names no
    # error of today's table, so no class is taken from it
    line = ("[20:24:32] /home/jacky4323/BMXNet_v1/mxnet/src/operator/contrib/proposal.cu:495: Check failed: error == "
            "cudaSuccess (7 vs. 0)")
    assert _cuda([line]) == [("app.cuda_error", "other")]


def test_cuda_success_without_a_failed_check_is_nothing() -> None:
    # near miss: ours, a trace of a call's status that succeeded
    assert _cuda(["I1208 15:16:46.872542 15643 probe.cu:12] cudaGetDeviceCount returned cudaSuccess, 4 devices"]) == []


# ---------------------------------------------------------------- runc's words before 1.1 for its cgroup set-up
# Docker 1.12-18.09 quoting runc: `oci runtime error: container_linux.go:247: starting container process caused
# "process_linux.go:258: applying cgroup configuration for process caused ..."`: the node's cgroups
# (catalog/platform.yaml container_errors), as today's `unable to apply cgroup configuration`.


def _container(lines: list[str]) -> list[tuple[object, object]]:
    return [(e.fields.get("runtime"), e.fields.get("error")) for e in feed(lines) if e.kind == "container.error"]


@pytest.mark.parametrize(
    "line",
    [
        # docker/cli#1228 (`docker run busybox` on a host whose cgroup mounts were missing)
        'docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container '
        'process caused "process_linux.go:279: applying cgroup configuration for process caused \\"mountpoint for '
        'cgroup not found\\"": unknown.',
        # cockpit-project/cockpit#9282 (a Fedora kernel regression under Docker's resource limits)
        'Error response from daemon: oci runtime error: container_linux.go:247: starting container process caused '
        '"process_linux.go:258: applying cgroup configuration for process caused \\"No such device or address\\""',
    ],
)
def test_runcs_old_cgroup_words_are_the_nodes_container_plumbing(line: str) -> None:
    assert _container([line]) == [("runc", "node")]


def test_runcs_old_wrapper_around_a_missing_entrypoint_stays_the_jobs() -> None:
    # near miss: ours, in runc's format of the same years: the wrapper is the same, the error it carries is the
    # job's image (its entrypoint), not the node
    line = ('docker: Error response from daemon: oci runtime error: container_linux.go:247: starting container '
            'process caused "exec: \\"python\\": executable file not found in $PATH".')
    assert _container([line]) == [("runc", "job")]


def test_runcs_old_wrapper_alone_is_a_start_failure_symptom() -> None:
    # near miss: ours, the wrapper with a reason no row names: the container did not start, why is not said
    line = ('docker: Error response from daemon: oci runtime error: container_linux.go:247: starting container '
            'process caused "process_linux.go:245: running exec setns process for init caused \\"exit status 6\\"".')
    assert _container([line]) == [("runc", "start")]


# ---------------------------------------------------------------- a driver container finding no kernel headers
# The GPU operator's (and GKE's) driver installer installs the running kernel's headers to build the module; its
# package manager finding none for that kernel is the node's driver install (catalog/platform.yaml 1010).


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/gpu-operator#190 (OpenShift 4.7's RHEL 8.3 kernel, the container pointed at 8.2's repositories)
        "Error: Unable to find a match: kernel-devel-4.18.0-240.22.1.el8_3.x86_64",
        # kubernetes-sigs/kubespray#6340 (the driver installer's apt-get on a GCP kernel of Ubuntu 18.04)
        "E: Unable to locate package linux-headers-5.3.0-1029-gcp",
    ],
)
def test_a_driver_installer_finding_no_kernel_headers_is_the_nodes_driver(line: str) -> None:
    events = [e for e in feed([line]) if e.kind == "gpu.nvml_error"]
    assert [(e.fields["error"], e.fields["nvml_error"]) for e in events] == [
        ("driver", "DRIVER_CONTAINER_NO_KERNEL_HEADERS")]


@pytest.mark.parametrize(
    "line",
    [
        # near miss: ours, dnf's same words for another package: the job's image build, not the driver
        "Error: Unable to find a match: python3-devel",
        # near miss: gridhead/nvidia-auto-installer-for-fedora-linux#99, the packages without a kernel's version
        # (a desktop's installer with the packages excluded by its own configuration)
        "Error: Unable to find a match: kernel-headers kernel-devel",
    ],
)
def test_other_packages_not_found_are_not_the_driver(line: str) -> None:
    assert [e for e in feed([line]) if e.kind == "gpu.nvml_error"] == []


# ---------------------------------------------------------------- NCCL's ranks disagreeing on a message's size
# The receiver's buffer smaller than the sender's message: NCCL's IB and socket transports return ncclInvalidUsage
# for it (NVIDIA/nccl#605), its bootstrap an internal error; ranks whose sizes, settings or NCCL builds disagree.
# The job's set-up on the rank that printed it (catalog/transport.yaml nccl_node_warns), not the network.


def _setup_warns(lines: list[str]) -> list[tuple[object, object]]:
    return [(e.fields.get("local_status"), e.fields.get("setup")) for e in feed(lines) if e.kind == "nccl.error"]


# Each row's positive line is in tests/extract/test_nccl_node_warns.py SETUP_LINES; the near misses here.


@pytest.mark.parametrize(
    "line",
    [
        # near miss: pmodels/mpich#879, MPI's own truncation error (a buggy MPI program): not NCCL's words
        "Message truncated; 104 bytes received but buffer size is 104",
        # near miss: ours, the bootstrap's words without NCCL's WARN header (plain words of any program)
        "Message truncated : received 1024 bytes instead of 256",
    ],
)
def test_truncation_words_outside_nccls_warn_are_not_ncclss(line: str) -> None:
    assert _setup_warns([line]) == []


_NCCL_RANKS = "".join(f"2026-11-02 10:0{m}:00,000 INFO step {m}\n" for m in range(3))


def _analyze(make_bundle: BundleMaker, files: dict[str, str]) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    return Analyzer().analyze_path(str(make_bundle({**{f"app/rank-{r}.log": _NCCL_RANKS for r in range(6)}, **files},
                                                   wl)))


def test_a_collective_size_mismatch_is_the_jobs_set_up_on_its_rank(make_bundle: BundleMaker) -> None:
    # NVIDIA/nccl#615's WARN (its host renamed to the bundle's), then NCCL's return trace and PyTorch's report
    warn = ("node-02:15483:15645 [0] transport/net_ib.cc:665 NCCL WARN NET/IB : collective mismatch error local size "
            "546816 remote 524288 addr 7ff7d1530000 rkey 2553d seq 14/1c\n"
            "node-02:15483:15645 [0] NCCL INFO include/net.h:32 -> 5\n")
    v = _analyze(make_bundle, {"app/rank-2.log": _NCCL_RANKS + warn})
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup", v.explanation
    assert v.root_cause.nodes == ["node-02"]


def test_a_peer_that_closed_its_connection_stays_a_symptom(make_bundle: BundleMaker) -> None:
    # near miss: the IB transport's peer-loss words on the same rank: no set-up, no cause
    warn = ("node-02:15483:15645 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
            "10.0.0.3<49872> with error 12, opcode 0, len 0, vendor err 129 (Recv)\n")
    v = _analyze(make_bundle, {"app/rank-2.log": _NCCL_RANKS + warn})
    assert v.root_cause is None or v.root_cause.category != "app.exception.setup"


# ---------------------------------------------------------------- GKE's gcsfuse sidecar: the daemon's own end
# The CSI driver's words that the gcsfuse process under the pod's volume was killed or crashed: the mount is gone
# under the job (catalog/platform.yaml storage_words, client gcsfuse): storage.filesystem on that node.


def _storage(lines: list[str], file: str = "app.log") -> list[tuple[str, object]]:
    from tests.extract import helpers
    return [(e.kind, e.fields.get("client")) for e in helpers.events(lines, file=file)
            if e.kind in ("storage.error", "container.error")]


@pytest.mark.parametrize(
    "line",
    [
        # ours, in the node server's format of gcs-fuse-csi-driver#113 with a SIGKILL's word (the sidecar OOM-killed
        # in gcs-fuse-csi-driver#372)
        'Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume "gcs-fuse-csi-ephemeral" : rpc error: '
        'code = Internal desc = the sidecar container failed with error: gcsfuse exited with error: signal: killed',
        # ours: the node server's format (gcsfuse#2950's FailedMount) around the panic gcsfuse#2753 logged on Cloud Run
        'Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume "gcs-fuse-csi-ephemeral" : rpc error: '
        'code = Internal desc = gcsfuse failed with error: panic: inode 1 is *inode.dirInode, wanted *inode.FileInode',
    ],
)
def test_the_gcsfuse_daemon_killed_or_crashed_is_the_mounts_failure(line: str) -> None:
    assert _storage([line]) == [("storage.error", "gcsfuse")]


@pytest.mark.parametrize(
    "line",
    [
        # near miss: gcs-fuse-csi-driver#113, a SIGTERM as the node was not ready: the platform stopping the pod
        "the sidecar container failed with error: gcsfuse exited with error: signal: terminated",
        # near miss: ours, another program's process killed, no gcsfuse before the words
        "E0928 09:11:14.903703       1 runner.go:60] trainer exited with error: signal: killed",
    ],
)
def test_a_stopped_sidecar_or_another_programs_kill_is_no_storage_failure(line: str) -> None:
    assert _storage([line]) == []


def test_a_failed_check_as_the_runtime_unloads_is_no_cuda_error() -> None:
    # near miss: BVLC/caffe's CUDA_CHECK in a destructor at exit (the message of cudaErrorCudartUnloading; ours, in
    # the format of the lines above): catalog/ends.yaml reads it as a notice of a normal exit, never a failure
    line = ("F0302 10:11:12.131415  4242 syncedmem.cpp:16] Check failed: error == cudaSuccess (29 vs. 0)  driver "
            "shutting down")
    assert _cuda([line]) == []


# ---------------------------------------------------------------- a peer at a loopback address on a multi-node job
# A rank of a job on two or more nodes that could not connect to its peer at 127.0.x.x / ::1: the address advertised
# (a host name Debian's /etc/hosts maps to 127.0.1.1, pytorch/gloo#223) reaches only the dialling host. The job's
# set-up on the node that printed it (engine/normalise.py), not a peer's failure; on one node, a symptom still.
# ours: the WARN of pytorch/pytorch#38702 (`include/socket.h:390 NCCL WARN Connect to 10.38.10.112<21724> failed :
# Connection refused`, a 4-node job) with the loopback alias of pytorch/gloo#223 for its address
_LOOPBACK_WARN = ("node-02:941227:943077 [0] include/socket.h:390 NCCL WARN Connect to 127.0.1.1<21724> failed : "
                  "Connection refused\n")
_REAL_WARN = ("node-02:941227:943077 [0] include/socket.h:390 NCCL WARN Connect to 10.38.10.112<21724> failed : "
              "Connection refused\n")


def test_a_peer_at_a_loopback_address_on_several_nodes_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, {"app/rank-2.log": _NCCL_RANKS + _LOOPBACK_WARN})
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup", v.explanation
    assert v.root_cause.nodes == ["node-02"]


def test_a_peer_at_a_real_address_stays_a_symptom(make_bundle: BundleMaker) -> None:
    # near miss: pytorch/pytorch#38702's own address (its host renamed): the peer or the path, the words cannot tell
    v = _analyze(make_bundle, {"app/rank-2.log": _NCCL_RANKS + _REAL_WARN})
    assert v.root_cause is None or v.root_cause.category != "app.exception.setup"
    assert "nccl.remote_error" in [s.category for s in v.symptoms]


def test_a_peer_at_a_loopback_address_on_one_node_stays_a_symptom(make_bundle: BundleMaker) -> None:
    # near miss: on one node the loopback is the right address; refused there, the peer is not listening
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["nodes"] = ["node-02"]
    wl["workload"]["ranks"] = {"node-02": "0-1"}
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _NCCL_RANKS,
                                                 "app/rank-1.log": _NCCL_RANKS + _LOOPBACK_WARN}, wl)))
    assert v.root_cause is None or v.root_cause.category != "app.exception.setup"
    assert "nccl.remote_error" in [s.category for s in v.symptoms]


@pytest.mark.parametrize(("addr", "loop"), [("127.0.1.1", True), ("[::1]", True), ("localhost", True),
                                            ("::ffff:127.0.0.1", True), ("10.38.10.112", False),
                                            ("node-03", False), ("[fe80::1%eth0]", False)])
def test_which_peer_addresses_are_loopback(addr: str, loop: bool) -> None:
    # the table's first rows (catalog/transport.yaml host_local_addresses); link-local is its own kind
    from firstfault.engine.normalise import host_local
    assert (host_local(addr, {}) == "loopback") is loop
