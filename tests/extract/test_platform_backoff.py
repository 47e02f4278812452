"""The kubelet backing off a container that keeps failing, read per container in every form through one reader
(extract/container.py `backoff_fields`), and the one table of the platform's programs that says whose container it is
(catalog/platform.yaml `platform_programs`).

Formats: the kubelet's format strings (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff:
the error `back-off %s restarting failed container=%s pod=%s` and the BackOff event `Back-off restarting failed
container %s in pod %s`; pkg/kubelet/pod_workers.go `"Error syncing pod, skipping"`), the container and DaemonSet
names of NVIDIA/gpu-operator's assets and NVIDIA/k8s-device-plugin's deployments; lines copied from public threads
name their URL. tests/fixtures/scheduler/kubectl-describe-pod-pods-yaml-worker-1.txt is kubectl's real output.
"""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

import pytest

from firstfault.catalog.tables import platform_program_of, platform_program_table, platform_programs
from firstfault.extract.container import backoff_fields
from firstfault.extract.scheduler import read_scheduler
from firstfault.model import Event, Verdict
from tests.extract import helpers

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def backoffs(lines: list[str], source: str = "syslog") -> list[Event]:
    return [e for e in helpers.events(lines, source, node="gpu-7") if e.kind == "k8s.backoff"]


def read(text: str, fmt: str) -> list[Event]:
    res = read_scheduler(text.encode(), fmt, "k8s.txt", job_id=None, tz=UTC)
    return [e for e in res.events if e.kind == "k8s.backoff"]


# ---------------------------------------------------------------- the table


def test_the_table_names_each_program_once_and_feeds_the_panic_reading() -> None:
    rows = platform_program_table()
    assert len({r.program for r in rows}) == len(rows)
    names = platform_programs()
    assert len(set(names)) == len(names)
    # the names the Go-panic reading had before the table (catalog/exceptions.yaml's list) are all still there
    assert {"device-plugin", "gpu-operator", "gpu-feature-discovery", "dcgm-exporter", "nvidia-container-toolkit",
            "nvidia-container-runtime", "kubelet", "containerd", "gcsfuse", "goofys", "juicefs",
            "blobfuse2"} <= set(names)


@pytest.mark.parametrize(("names", "program", "part"), [
    (("nvidia-device-plugin-ctr", None), "nvidia-device-plugin", "device_plugin"),
    ((None, "nvidia-device-plugin-daemonset-x7k2p"), "nvidia-device-plugin", "device_plugin"),
    # the GPU operator's device plugin container (assets/state-device-plugin/0500_daemonset.yaml)
    (("nvidia-device-plugin", "nvidia-device-plugin-daemonset-x7k2p"), "nvidia-device-plugin", "device_plugin"),
    # ROCm/k8s-device-plugin k8s-ds-amdgpu-dp.yaml
    (("amdgpu-dp-cntr", "amdgpu-device-plugin-daemonset-9qv2d"), "amdgpu-device-plugin", "device_plugin"),
    (("nvidia-driver-ctr", "nvidia-driver-daemonset-5dhk8"), "nvidia-driver", "driver"),
    # the container decides first: the toolkit's validation in the device plugin's pod is the toolkit's
    (("toolkit-validation", "nvidia-device-plugin-daemonset-x7k2p"), "nvidia-container-toolkit", "toolkit"),
    (("driver-validation", "nvidia-operator-validator-5xq2z"), "driver-validation", "driver"),
    (("nvidia-dcgm-exporter", None), "dcgm-exporter", "monitor"),
    # NVIDIA/gpu-operator#1947's `kubectl get pods` row: the CUDA validator's own pod
    ((None, "nvidia-cuda-validator-q6m4x"), "cuda-validation", "driver"),
    # the validator's pod alone names no stage (NVIDIA/gpu-operator#1190); its init container does
    ((None, "nvidia-operator-validator-d5c26"), "operator-validator", "monitor"),
    (("toolkit-validation", "nvidia-operator-validator-d5c26"), "nvidia-container-toolkit", "toolkit"),
    # Dynamic Resource Allocation's GPU driver: its kubelet plugin is the node's, its controller the cluster's
    ((None, "nvidia-dra-driver-gpu-kubelet-plugin-52cdm"), "dra-driver-gpu", "device_plugin"),
    ((None, "nvidia-dra-driver-gpu-controller-6658b47869-k49jn"), "dra-driver-gpu-controller", "monitor"),
    # NVIDIA/gpu-operator#528: the device plugin's validator pod
    ((None, "nvidia-device-plugin-validator-whr6m"), "nvidia-device-plugin", "device_plugin"),
])
def test_a_platform_containers_name_names_its_program(names: tuple[str | None, str | None], program: str,
                                                      part: str) -> None:
    row = platform_program_of(*names)
    assert row is not None and (row.program, row.part) == (program, part)


@pytest.mark.parametrize("names", [
    ("trainer", "trainer-0"),
    # a name whose words only hold a program's as a part of a word, not a run of whole words
    ("my-device-plugins", None),
    ("driver", "sim-driver-7f9c"),
    ("pytorch", "llama-pretrain-worker-1"),
    (None, None),
])
def test_the_workloads_own_container_is_no_program(names: tuple[str | None, str | None]) -> None:
    assert platform_program_of(*names) is None


# ---------------------------------------------------------------- lines


def test_the_kubelets_journal_line_names_the_container_and_its_pod() -> None:
    # pod_workers.go's record of doBackOff's error, with the journal's prefix; names from
    # NVIDIA/k8s-device-plugin deployments/static/nvidia-device-plugin.yml
    [ev] = backoffs([
        'Dec  4 10:11:12 gpu-7 kubelet[2231]: E1204 10:11:12.123456    2231 pod_workers.go:1298] "Error syncing pod, '
        'skipping" err="failed to \\"StartContainer\\" for \\"nvidia-device-plugin-ctr\\" with CrashLoopBackOff: '
        '\\"back-off 5m0s restarting failed container=nvidia-device-plugin-ctr pod=nvidia-device-plugin-daemonset-'
        'x7k2p_kube-system(0b1c9c1e-7d1f-4a0e-9f55-1f6b0f3d2a11)\\"" pod="kube-system/nvidia-device-plugin-daemonset-'
        'x7k2p" podUID="0b1c9c1e-7d1f-4a0e-9f55-1f6b0f3d2a11"'])
    assert ev.node == "gpu-7"
    assert {k: ev.fields.get(k) for k in ("reason", "container", "pod", "delay", "program", "part")} == {
        "reason": "CrashLoopBackOff", "container": "nvidia-device-plugin-ctr",
        "pod": "nvidia-device-plugin-daemonset-x7k2p", "delay": "5m0s", "program": "nvidia-device-plugin",
        "part": "device_plugin"}


def test_a_line_cut_after_the_pod_workers_reason_still_names_the_container() -> None:
    # https://github.com/NVIDIA/nvidia-container-toolkit/issues/517
    [ev] = backoffs(['"Error syncing pod, skipping" err="failed to \\"StartContainer\\" for '
                     '\\"nvidia-device-plugin-ctr\\" with CrashLoopBackOff'])
    assert (ev.fields["container"], ev.fields["part"]) == ("nvidia-device-plugin-ctr", "device_plugin")


def test_a_kubectl_get_pods_row_pasted_in_text() -> None:
    # https://github.com/NVIDIA/k8s-device-plugin/issues/13
    [ev] = backoffs(["nvidia-device-plugin-daemonset-csjxw   0/1       CrashLoopBackOff   12         39m"],
                    "application")
    assert (ev.fields["pod"], ev.fields["reason"], ev.fields["part"]) == (
        "nvidia-device-plugin-daemonset-csjxw", "CrashLoopBackOff", "device_plugin")


def test_the_workloads_own_back_off_has_no_program() -> None:
    [ev] = backoffs(['Error syncing pod, skipping: failed to "StartContainer" for "web" with CrashLoopBackOff: '
                     '"Back-off 1m20s restarting failed container=web pod=web-5d8f7c9b4-q2x7z_default(7d0c1a52)"'])
    assert (ev.fields["container"], ev.fields["pod"], ev.fields["delay"]) == ("web", "web-5d8f7c9b4-q2x7z", "1m20s")
    assert "program" not in ev.fields and "part" not in ev.fields


def test_an_events_row_whose_message_names_no_container_takes_its_object() -> None:
    # `kubectl get events` (LAST SEEN TYPE REASON OBJECT MESSAGE) with the kubelet's message before 1.26
    [ev] = backoffs(["3m          Warning   BackOff   pod/nvidia-device-plugin-daemonset-x7k2p   Back-off restarting"
                     " failed container"], "application")
    assert (ev.fields["pod"], ev.fields["part"]) == ("nvidia-device-plugin-daemonset-x7k2p", "device_plugin")
    # a describe row: its From names the node, no pod: the workload's for all it says
    [ev] = backoffs(["  Warning  BackOff    3m (x20 over 8m)  kubelet, gpu-9  Back-off restarting failed container"],
                    "application")
    assert ev.fields.get("host") == "gpu-9" and "part" not in ev.fields


@pytest.mark.parametrize("line", [
    # the kubelet's image back-off (pkg/kubelet/images/image_manager.go `Back-off pulling image %q`): no crash loop
    '  Normal   BackOff  2m (x4 over 3m)  kubelet  Back-off pulling image "nvcr.io/nvidia/k8s-device-plugin:v0.14.0"',
    # a pod on its way, in a pasted table
    "gpu-operator   nvidia-container-toolkit-daemonset-4kx9p   0/1   Init:0/1   0   40s   10.0.0.5   gpu-7",
    # prose that names the word
    "How do I debug a pod stuck in CrashLoopBackOff after upgrading the device plugin?",
])
def test_near_misses_are_no_back_off(line: str) -> None:
    assert backoffs([line], "application") == []


def test_a_reason_alone_or_the_kubelets_words_decide() -> None:
    assert backoff_fields(None, "Init:CrashLoopBackOff", pod="nvidia-driver-daemonset-5dhk8") == {
        "reason": "Init:CrashLoopBackOff", "pod": "nvidia-driver-daemonset-5dhk8", "program": "nvidia-driver",
        "part": "driver"}
    assert backoff_fields("Back-off pulling image \"x\"", "BackOff") is None
    assert backoff_fields(None, "ImagePullBackOff") is None


# ---------------------------------------------------------------- structured readers


def test_kubectl_describe_and_the_pod_object_say_the_same() -> None:
    # kubectl 1.32.4's real `kubectl describe pod` over tests/fixtures/scheduler/pods.yaml: `State: Waiting` /
    # `Reason: CrashLoopBackOff` of the workload's own container
    text = (FIX / "scheduler" / "kubectl-describe-pod-pods-yaml-worker-1.txt").read_text()
    [desc] = [e for e in read(text, "k8s-describe") if e.fields.get("container") == "pytorch"]
    assert (desc.node, desc.fields["pod"], desc.fields["reason"]) == ("node-02", "llama-pretrain-worker-1",
                                                                      "CrashLoopBackOff")
    assert "part" not in desc.fields
    objs = [e for e in read((FIX / "scheduler" / "pods.yaml").read_text(), "k8s-pods")
            if e.fields.get("pod") == "llama-pretrain-worker-1" and e.fields.get("container") == "pytorch"]
    assert [(e.node, e.fields["reason"]) for e in objs] == [("node-02", "CrashLoopBackOff")]


def test_the_device_plugins_describe_and_its_events() -> None:
    text = """Name:         nvidia-device-plugin-daemonset-x7k2p
Namespace:    kube-system
Node:         gpu-7/10.0.0.7
Status:       Running
Containers:
  nvidia-device-plugin-ctr:
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
Events:
  Type     Reason   Age                From     Message
  ----     ------   ----               ----     -------
  Warning  BackOff  2m (x40 over 12m)  kubelet  Back-off restarting failed container nvidia-device-plugin-ctr in pod \
nvidia-device-plugin-daemonset-x7k2p_kube-system(0b1c)
""".replace("\\\n", "")
    evs = read(text, "k8s-describe")
    assert [(e.node, e.fields["reason"], e.fields["container"], e.fields["part"]) for e in evs] == [
        ("gpu-7", "CrashLoopBackOff", "nvidia-device-plugin-ctr", "device_plugin"),
        ("gpu-7", "BackOff", "nvidia-device-plugin-ctr", "device_plugin")]


def test_a_pods_table_and_an_event_list() -> None:
    table = "\n".join([
        "NAMESPACE      NAME                                       READY   STATUS                  RESTARTS      AGE"
        "   IP         NODE",
        "gpu-operator   nvidia-container-toolkit-daemonset-4kx9p   0/1     Init:CrashLoopBackOff   12 (2m ago)   40m"
        "   10.0.0.5   gpu-7",
        "gpu-operator   nvidia-dcgm-exporter-7hx2k                 1/1     Running                 0             40m"
        "   10.0.0.6   gpu-7", ""])
    [row] = read(table, "k8s-table")
    assert (row.node, row.fields["reason"], row.fields["part"]) == ("gpu-7", "Init:CrashLoopBackOff", "toolkit")
    events = ('{"kind":"EventList","items":[{"kind":"Event","reason":"BackOff","type":"Warning","message":'
              '"Back-off restarting failed container","involvedObject":{"kind":"Pod","name":'
              '"nvidia-operator-validator-5xq2z","fieldPath":"spec.initContainers{driver-validation}"},'
              '"source":{"component":"kubelet","host":"gpu-7"},"lastTimestamp":"2026-12-04T10:00:00Z"},'
              '{"kind":"Event","reason":"BackOff","type":"Normal","message":"Back-off pulling image \\"x\\"",'
              '"involvedObject":{"kind":"Pod","name":"trainer-0","fieldPath":"spec.containers{trainer}"},'
              '"source":{"component":"kubelet","host":"gpu-8"}}]}')
    [ev] = read(events, "k8s-events")
    assert (ev.node, ev.fields["container"], ev.fields["part"]) == ("gpu-7", "driver-validation", "driver")
    assert ev.time is not None


# ---------------------------------------------------------------- an Xid in the device plugin's words


def test_the_device_plugin_relaying_an_xid_is_the_xid() -> None:
    # NVIDIA/k8s-device-plugin internal/rm/health.go checkHealth's format (catalog/platform.yaml `xid_relays`)
    [ev] = [e for e in helpers.events([
        "I1204 10:11:12.000000       1 health.go:169] XidCriticalError: Xid=79 on Device=GPU-0b9e2c1a-1111-2222-"
        "3333-444455556666; marking device as unhealthy."], "application", node="gpu-7") if e.kind == "gpu.xid"]
    assert (ev.fields["xid"], ev.fields["via"], ev.fields["xid_class"]) == (79, "nvidia-device-plugin",
                                                                             "fallen_off_bus")
    assert "pci" not in ev.fields and ev.device is None


@pytest.mark.parametrize("line", [
    # the same health check's other records (health.go): an event it skips, the Xids it is told to ignore
    "I1204 10:11:12.000000       1 health.go:134] Skipping non-nvmlEventTypeXidCriticalError event: "
    "{Device:0xc000 EventType:1 EventData:0}",
    "I1204 10:11:12.000000       1 health.go:64] Ignoring the following XIDs for health checks: map[13:true 31:true]",
])
def test_the_device_plugins_other_health_records_are_no_xid(line: str) -> None:
    assert [e for e in helpers.events([line], "application", node="gpu-7") if e.kind == "gpu.xid"] == []


# ---------------------------------------------------------------- the driver stack in its own programs' words


def nvml(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("error"), e.fields.get("nvml_error"))
            for e in helpers.events([line], "application", node="gpu-7") if e.kind == "gpu.nvml_error"]


@pytest.mark.parametrize(("line", "read"), [
    # NVIDIA/nvidia-installer kernel.c (the driver container's install), kmod's modprobe for the driver's modules
    ("ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module was "
     "built against the wrong or improperly configured kernel sources", ("driver", "NVIDIA_KERNEL_MODULE_NOT_LOADED")),
    ("ERROR: Unable to build the NVIDIA kernel module.", ("driver", "NVIDIA_KERNEL_MODULE_NOT_BUILT")),
    # NVIDIA/k8s-device-plugin factory.go and main.go
    ("E1204 10:04:59.000000       1 factory.go:112] Incompatible strategy detected auto",
     ("no_devices", "DEVICE_PLUGIN_NO_STRATEGY")),
    # https://github.com/awslabs/amazon-eks-ami/issues/1744 (the plugin of 2024)
    ("E0402 12:47:47.247405       1 factory.go:112] Incompatible platform detected",
     ("no_devices", "DEVICE_PLUGIN_NO_STRATEGY")),
    ("I0402 12:47:47.247350       1 factory.go:104] Detected non-NVML platform: could not load NVML library: "
     "libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
     ("driver", "NVML_ERROR_LIBRARY_NOT_FOUND")),
    # (its `No devices found. Waiting indefinitely.` decides nothing: tests/extract/test_node_programs.py)
    # NVIDIA/gpu-driver-container ubuntu22.04/nvidia-driver _resolve_kernel_version (the driver container's log)
    ("Could not resolve Linux kernel version", ("driver", "DRIVER_CONTAINER_NO_KERNEL")),
    # ROCm/k8s-device-plugin internal/pkg/amdgpu/amdgpu.go GetAMDGPUs (glog's prefix)
    ("F1204 10:04:59.000000       1 amdgpu.go:159] amdgpu driver unavailable. exiting with exit code 2. error: stat "
     "/sys/module/amdgpu/drivers/: no such file or directory", ("driver", "AMDGPU_DRIVER_UNAVAILABLE")),
    # https://github.com/NVIDIA/k8s-device-plugin/issues/16: the plugin of 2017 (`Failed to start nvml with error`)
    ("14:25:40 Failed to start nvml with error: could not load NVML library.",
     ("driver", "NVML_ERROR_LIBRARY_NOT_FOUND")),
    # MLNX_OFED's installer (https://github.com/microsoft/pai/issues/2470; uclasystem/hermit#8; xcat2/xcat-core#4927)
    ("Error: mlnx-ofed-kernel-modules installation failed!", ("driver", "OFED_INSTALL_FAILED")),
    ("Failed to install MLNX_OFED_LINUX-4.5-1.0.1.0-ubuntu16.04-x86_64", ("driver", "OFED_INSTALL_FAILED")),
    ("Failed to build MLNX_OFED_LINUX for 5.14.0-rc5", ("driver", "OFED_INSTALL_FAILED")),
    ("c910f03c01p10: Error: The current MLNX_OFED_LINUX is intended for rhel7.5alternate",
     ("driver", "OFED_INSTALL_FAILED")),
    # Docker's older wording of the driver's device node missing: the path quoted, the errno alone
    # (PierreBeucher/cloudypad#179)
    ('Error response from daemon: error gathering device information while adding custom device "/dev/nvidia-uvm": '
     "no such file or directory", ("driver", "NVIDIA_DEVICE_NODE_MISSING")),
])
def test_the_driver_stacks_own_programs_say_it_is_not_usable(line: str, read: tuple[str, str]) -> None:
    assert nvml(line) == [read]


@pytest.mark.parametrize(("line", "module"), [
    # kmod's modprobe for the driver's modules in the driver container's log: catalog/platform.yaml `kernel_modules`
    # (extract/kmod.py), part driver, whatever the reason's words (an errno no row holds is a refusal)
    ("modprobe: ERROR: could not insert 'nvidia': Required key not available", "nvidia"),
    ("modprobe: ERROR: could not insert 'nvidia_uvm': Operation not permitted", "nvidia_uvm"),
])
def test_modprobe_of_the_drivers_modules_is_the_module_table(line: str, module: str) -> None:
    got = [(e.fields.get("module"), e.fields.get("part"), e.fields.get("reason_class"))
           for e in helpers.events([line], "application", node="gpu-7") if e.kind == "node.kernel_module"]
    assert got == [(module, "driver", "refused")]
    assert nvml(line) == []


@pytest.mark.parametrize("line", [
    # GPUDirect RDMA's peer-memory module, not the driver's own (kmod's format)
    "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
    # the plugin's hint after the word that decides: alone it says nothing
    "E1204 10:04:59.000000       1 factory.go:113] If this is a GPU node, did you configure the NVIDIA Container"
    " Toolkit?",
    # the installer's log of a module it did load
    "Kernel module compilation complete.",
    # the driver container's word that it found the kernel (the same script)
    "Proceeding with Linux kernel version 6.8.0-44-generic",
    # MLNX_OFED's installer at work: a package it is installing, and its summary of the packages it will install
    "Installing mlnx-ofed-kernel-modules-4.5...",
    "This program will install the MLNX_OFED_LINUX package on your machine.",
    # one GPU's device node missing is that GPU's, not the driver's control node (the row's texts name no /dev/nvidiaN)
    'error gathering device information while adding custom device "/dev/nvidia3": no such file or directory',
])
def test_near_misses_of_the_driver_stacks_words(line: str) -> None:
    assert nvml(line) == []


# ---------------------------------------------------------------- through the engine


def _bundle(tmp: Path, journals: dict[str, str], k8s: str | None = None) -> Verdict:
    """A failed two-node job whose evidence is the nodes' journals (syslog) and, where given, a `kubectl get pods`
    table (scheduler, k8s-table)."""
    from firstfault.analysis.analyze import Analyzer

    for node, text in journals.items():
        (tmp / "nodes" / node).mkdir(parents=True, exist_ok=True)
        (tmp / "nodes" / node / "journal.log").write_text(text)
    sources = "sources:\n  - {kind: syslog, path: 'nodes/{node}/journal.log'}\n"
    if k8s is not None:
        (tmp / "pods.txt").write_text(k8s)
        sources += "  - {kind: scheduler, path: pods.txt, format: k8s-table}\n"
    (tmp / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n"
        "  window: {start: '2026-12-04T10:00:00Z', end: '2026-12-04T11:00:00Z'}\n  nodes: [gpu-7, gpu-8]\n"
        "  terminal_state: FAILED\n  timezone: UTC\n" + sources)
    return Analyzer().analyze_path(str(tmp))


_PLUGIN_BACKOFF = (
    'Dec  4 10:06:12 gpu-7 kubelet[2231]: E1204 10:06:12.123456    2231 pod_workers.go:1298] "Error syncing pod, '
    'skipping" err="failed to \\"StartContainer\\" for \\"nvidia-device-plugin-ctr\\" with CrashLoopBackOff: '
    '\\"back-off 5m0s restarting failed container=nvidia-device-plugin-ctr '
    'pod=nvidia-device-plugin-daemonset-x7k2p_kube-system(0b1c9c1e-7d1f-4a0e-9f55-1f6b0f3d2a11)\\"" '
    'pod="kube-system/nvidia-device-plugin-daemonset-x7k2p"\n')
_WORKLOAD_BACKOFF = (
    'Dec  4 10:07:12 gpu-8 kubelet[2231]: E1204 10:07:12.123456    2231 pod_workers.go:1298] "Error syncing pod, '
    'skipping" err="failed to \\"StartContainer\\" for \\"trainer\\" with CrashLoopBackOff: \\"back-off 5m0s '
    'restarting failed container=trainer pod=trainer-1_default(0b1c9c1e-7d1f-4a0e-9f55-1f6b0f3d2a12)\\"" '
    'pod="default/trainer-1"\n')


def test_the_device_plugin_crash_looping_is_its_nodes_plumbing(tmp_path: Path) -> None:
    v = _bundle(tmp_path, {"gpu-7": _PLUGIN_BACKOFF, "gpu-8": _WORKLOAD_BACKOFF})
    assert v.root_cause is not None
    assert (v.attributed_domain, v.root_cause.category, v.root_cause.nodes) == (
        "infrastructure", "node.driver.device_plugin", ["gpu-7"])
    assert "container.crash_loop" in {s.category for s in v.symptoms}


def test_the_workloads_own_crash_loop_alone_names_no_cause(tmp_path: Path) -> None:
    v = _bundle(tmp_path, {"gpu-7": "", "gpu-8": _WORKLOAD_BACKOFF})
    assert v.root_cause is None and v.attributed_domain == "unknown"
    assert [s.category for s in v.symptoms] == ["container.crash_loop"]


def test_the_toolkits_pod_in_a_pods_table_is_its_nodes_container_plumbing(tmp_path: Path) -> None:
    table = "\n".join([
        "NAMESPACE      NAME                                       READY   STATUS                  RESTARTS      AGE"
        "   IP         NODE",
        "gpu-operator   nvidia-container-toolkit-daemonset-4kx9p   0/1     Init:CrashLoopBackOff   12 (2m ago)   40m"
        "   10.0.0.5   gpu-8", ""])
    v = _bundle(tmp_path, {"gpu-7": "", "gpu-8": ""}, table)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("node.container", ["gpu-8"])


def test_a_platform_pods_oom_kill_is_not_the_workloads(tmp_path: Path) -> None:
    """A PodList that holds the exporter's pod OOM-killed beside the workload's pod that failed on its own: the
    exporter's memory limit is its own (engine/normalise.py marks its k8s.pod with the program), no host.oom."""
    from firstfault.analysis.analyze import Analyzer

    pods = {"kind": "PodList", "items": [
        {"kind": "Pod", "metadata": {"name": "nvidia-dcgm-exporter-7hx2k"}, "spec": {"nodeName": "gpu-7"},
         "status": {"phase": "Running", "containerStatuses": [{"name": "nvidia-dcgm-exporter", "lastState": {
             "terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": "2026-12-04T10:05:00Z"}},
             "state": {"running": {}}}]}},
        {"kind": "Pod", "metadata": {"name": "trainer-0"}, "spec": {"nodeName": "gpu-7"},
         "status": {"phase": "Failed", "containerStatuses": [{"name": "trainer", "state": {
             "terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": "2026-12-04T10:06:00Z"}}}]}}]}
    for name, items in (("both", pods["items"]), ("exporter", pods["items"][:1])):
        tmp = tmp_path / name
        tmp.mkdir()
        (tmp / "pods.json").write_text(json.dumps({"kind": "PodList", "items": items}))
        (tmp / "workload.yaml").write_text(
            "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n"
            "  window: {start: '2026-12-04T10:00:00Z', end: '2026-12-04T11:00:00Z'}\n  nodes: [gpu-7]\n"
            "  terminal_state: FAILED\n  timezone: UTC\n"
            "sources:\n  - {kind: scheduler, path: pods.json, format: k8s-pods}\n")
        v = Analyzer().analyze_path(str(tmp))
        got = None if v.root_cause is None else v.root_cause.category
        # the workload's own pod OOM-killed is host.oom; the exporter's alone names no cause
        assert got == ("host.oom" if name == "both" else None), (name, got)


# ---------------------------------------------------------------- containerd's own words


def containers(line: str) -> list[tuple[object, object, object]]:
    return [(e.fields.get("runtime"), e.fields.get("error"), e.fields.get("reported_by"))
            for e in helpers.events([line], "syslog", node="gpu-7") if e.kind == "container.error"]


def test_containerd_with_no_runtime_for_the_pods_runtime_class() -> None:
    # containerd's CRI log of the kubelet's RunPodSandbox (internal/cri/instrument/instrumented_service.go), its error
    # of internal/cri/server/podsandbox/sandbox_run.go and internal/cri/config/config.go, filled in
    line = ('Dec 04 10:05:00 gpu-7 containerd[1201]: time="2026-12-04T10:05:00Z" level=error msg="RunPodSandbox for '
            '&PodSandboxMetadata{Name:trainer-0,Uid:1,Namespace:default,Attempt:0,} failed, error" error="failed to '
            'get sandbox runtime: no runtime for \\"nvidia\\" is configured"')
    assert containers(line) == [("containerd", "node", "kubelet")]


@pytest.mark.parametrize("line", [
    # containerd's other words for a sandbox's runtime (internal/cri/server/container_image_mount.go), no failure of
    # the node's configuration
    'time="2026-12-04T10:05:00Z" level=error msg="failed to get sandbox runtime handler \\"3f2a\\""',
    # its CRI log of a call that succeeded
    'time="2026-12-04T10:05:00Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:trainer-0,} returns '
    'sandbox id \\"3f2a\\""',
])
def test_near_misses_of_containerds_words(line: str) -> None:
    assert containers(line) == []


@pytest.mark.parametrize("line", [
    # https://github.com/k0sproject/k0s/issues/6547 (the node's events: its containerd, given the NVIDIA toolkit's
    # drop-in, no longer served the CRI)
    "  Warning  ContainerGCFailed        24m (x2425 over 40h)   kubelet     rpc error: code = Unimplemented desc = "
    "unknown service runtime.v1.RuntimeService",
    # kubeadm's preflight through crictl against containerd.io's stock config (`disabled_plugins = ["cri"]`), as public
    # kubeadm install notes paste it (crictl's `validate service connection`, kubernetes-sigs/cri-tools)
    '[ERROR CRI]: container runtime is not running: output: time="2023-06-22T17:37:50+09:00" level=fatal '
    'msg="validate service connection: CRI v1 runtime API is not implemented for endpoint '
    '\\"unix:///var/run/containerd/containerd.sock\\": rpc error: code = Unimplemented desc = unknown service '
    'runtime.v1.RuntimeService"',
])
def test_a_runtime_that_does_not_serve_the_cri_is_the_nodes(line: str) -> None:
    assert [(runtime, error) for runtime, error, _ in containers(line)] == [("containerd", "node")]


def test_another_grpc_service_unknown_is_not_the_container_runtimes() -> None:
    # https://github.com/NVIDIA/k8s-device-plugin/issues/156: the kubelet without the device plugin API the plugin
    # registers with (the plugin's own words, platform_words), no container runtime's
    line = ("2020/02/09 00:20:15 Could not register device plugin: rpc error: code = Unimplemented desc = unknown "
            "service deviceplugin.Registration")
    assert containers(line) == []


def test_nvidia_container_runtime_without_its_hook() -> None:
    # https://github.com/NVIDIA/nvidia-container-runtime/issues/68 (the 3.0.0 RPM without the hook), as Docker quotes it
    line = ("docker: Error response from daemon: OCI runtime create failed: unable to retrieve OCI runtime error (open "
            "/run/containerd/io.containerd.runtime.v1.linux/moby/af425d98/log.json: no such file or directory): "
            "nvidia-container-runtime did not terminate sucessfully: 2019/07/23 17:28:30 ERROR: "
            "nvidia-container-runtime: inject NVIDIA hook: stat /usr/bin/nvidia-container-runtime-hook: no such file "
            "or directory")
    assert ("nvidia-container-toolkit", "node") in [(runtime, error) for runtime, error, _ in containers(line)]
    # the same runtime's log when it added the hook (runtime/src/main.go `Prestart hook added, executing runc`)
    assert containers("2019/07/23 17:28:30 nvidia-container-runtime: Prestart hook added, executing runc") == []


# ---------------------------------------------------------------- the platform's programs in their own words


def platform_errors(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("program"), e.fields.get("part"))
            for e in helpers.events([line], "application", node="gpu-7") if e.kind == "platform.error"]


@pytest.mark.parametrize("line", [
    # https://github.com/NVIDIA/k8s-device-plugin/issues/10 and #82 (the plugin of 2017-2018, Go's log prefix)
    "2017/11/24 09:06:29 Could not register device plugin: context deadline exceeded",
    "2018/11/27 03:44:27 Could not start device plugin: context deadline exceeded",
    "2018/11/27 03:44:13 Could not contact Kubelet, retrying. Did you enable the device plugin feature gate?",
    # https://github.com/NVIDIA/k8s-device-plugin/issues/156
    "2020/02/09 00:20:15 Could not register device plugin: rpc error: code = Unimplemented desc = unknown service "
    "deviceplugin.Registration",
    # https://github.com/NVIDIA/k8s-device-plugin/issues/399 (cmd/nvidia-device-plugin/main.go start: the plugins
    # could not start at all, a MIG node without NVIDIA_MIG_MONITOR_DEVICES=all)
    "error starting plugins: unable to add default resources to config: error visiting devices: error visiting "
    "device: error visiting device: error getting device memory info: Insufficient Pemmissions",
])
def test_the_device_plugin_unable_to_start_or_register(line: str) -> None:
    assert platform_errors(line) == [("nvidia-device-plugin", "device_plugin")]


def test_gkes_driver_installer_that_could_not_verify_the_driver() -> None:
    # https://github.com/GoogleCloudPlatform/container-engine-accelerators/issues/237 (Cloud Logging's stamp glued on)
    line = ("2022-05-20 06:14:58.902 EDTfailed to verify GPU driver installation: failed to verify GPU driver "
            "installation: exit status 255")
    assert platform_errors(line) == [("cos-gpu-installer", "driver")]
    # its progress before the check is no failure
    assert platform_errors("2022-05-20 06:14:58.873 EDTVerifying GPU driver installation") == []


def test_rocms_node_labeller_that_finds_no_kfd_topology() -> None:
    # https://github.com/ROCm/k8s-device-plugin/issues/23 (a Talos node without /dev/kfd; its zap record, stack cut)
    line = ('{"level":"error","ts":1636410993.0903304,"logger":"amdgpu-node-labeller","msg":"Fail to glob topology '
            'properties","stacktrace":"main.glob..func5\\n\\t/go/src/github.com/RadeonOpenCompute/k8s-device-plugin/'
            'cmd/k8s-node-labeller/main.go:158"}')
    assert platform_errors(line) == [("amdgpu-node-labeller", "driver")]
    # the same labeller's other errors are one GPU's file it could not read, not the driver's absence
    # (cmd/k8s-node-labeller/main.go: `log.Error(err, "Fail to get firmware versions")`)
    other = '{"level":"error","logger":"amdgpu-node-labeller","msg":"Fail to get firmware versions"}'
    assert platform_errors(other) == []


@pytest.mark.parametrize("line", [
    # the same plugin when it did (internal/plugin/server.go Start)
    "I1204 10:04:59.000000       1 server.go:149] Registered device plugin for 'nvidia.com/gpu' with Kubelet",
    "I1204 10:04:59.000000       1 server.go:141] Starting to serve 'nvidia.com/gpu' on "
    "/var/lib/kubelet/device-plugins/nvidia-gpu.sock",
    # one plugin it retries (cmd/nvidia-device-plugin/main.go: `Failed to start one or more plugins. Retrying in
    # 30s...`), and another program's own manager capitalising the same words (a plugin manager's `Error starting
    # plugins: %s`)
    "I1204 10:04:59.000000       1 main.go:245] Failed to start one or more plugins. Retrying in 30s...",
    "2024/05/01 10:00:00 Error starting plugins: plugin foo: not found",
])
def test_the_device_plugin_that_started_says_nothing_failed(line: str) -> None:
    assert platform_errors(line) == []


@pytest.mark.parametrize("line", [
    # https://github.com/kubeflow/trainer/issues/1552: the training operator's reconciler quoting the API server
    '2022-03-18T12:16:02.296Z        ERROR   controller-runtime.manager.controller.tfjob-controller  Reconciler error'
    '        {"name": "run-transformer-xl-2nodes", "namespace": "matrix-benchmarking", "error": "pods '
    '\\"run-transformer-xl-2nodes-ps-0\\" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a'
    ' resource you can\'t set finalizers on: , <nil>"}',
    # https://github.com/intelligent-machine-learning/dlrover/issues/1436: the job master's create_pod, the API
    # server's Status body after kubernetes-client's `HTTP response body:`
    'HTTP response body: {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods '
    '\\"pretrain-megatron-llama2-fault-flash-edljob-worker-0\\" is forbidden: cannot set blockOwnerDeletion if an '
    'ownerReference refers to a resource you can\'t set finalizers on: , \\u003cnil\\u003e","reason":"Forbidden",'
    '"details":{"name":"pretrain-megatron-llama2-fault-flash-edljob-worker-0","kind":"pods"},"code":403}',
])
def test_the_api_server_refusing_an_operators_pods_for_its_rbac(line: str) -> None:
    # kubernetes/kubernetes plugin/pkg/admission/gc/gc_admission.go: the operator may not update its resource's
    # finalizers, so its pods are never made: the cluster's install (part scheduler: node-scheduler)
    assert platform_errors(line) == [("kube-apiserver", "scheduler")]


@pytest.mark.parametrize("line", [
    # the same admission plugin's other refusal (gc_admission.go: no REST mapping for the owner's kind)
    'pods "w-0" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for '
    'APIVersion kubeflow.org/v1 Kind TFJob: , <nil>',
    # a pod over its namespace's ResourceQuota (plugin/pkg/admission/resourcequota: the job's own request) and one
    # OpenShift's security context constraints refuse (the pod's own spec): not the operator's RBAC
    'Error creating: pods "w-0" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8, '
    'used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=4',
    'Error creating: pods "w-0" is forbidden: unable to validate against any security context constraint: []',
])
def test_near_miss_other_refusals_of_the_api_server_are_not_the_operators_rbac(line: str) -> None:
    assert platform_errors(line) == []


def test_the_older_plugins_relayed_xid_is_the_xid_too() -> None:
    # https://github.com/NVIDIA/k8s-device-plugin/issues/189 (`..., the device will go unhealthy.`)
    [ev] = [e for e in helpers.events(["2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-"
                                       "1526-f93c9ea826a8, the device will go unhealthy."], "application", node="gpu-7")
            if e.kind == "gpu.xid"]
    assert (ev.fields["xid"], ev.fields["via"]) == (69, "nvidia-device-plugin")


# ---------------------------------------------------------------- a provisioning program's step status


def provision(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("program"), e.fields.get("part"))
            for e in helpers.events([line], "application", node="c01p10") if e.kind == "platform.error"]


@pytest.mark.parametrize("line", [
    # xcat2/xcat-core xCAT/postscripts/xcatdsklspost run_ps, each of its forms (2012, 2018, since), behind updatenode's
    # node name (xcat2/xcat-core#4927)
    "c01p10: Postscript: otherpkgs exited with code 1",
    "c01p10: postscript: mlnxofed_ib_install exited with code 1",
    "postbootscript end....: confignetwork exited with code 127",
])
def test_an_xcat_script_that_failed_is_the_clusters_provisioning(line: str) -> None:
    assert provision(line) == [("xcat", "provision")]


@pytest.mark.parametrize("line", [
    # a script that worked, the runner's start of one, and its status cut off
    "c01p10: postscript: syslog exited with code 0",
    "postscript end....: remoteshell exited with code 0",
    "c01p10: Mon Mar 12 23:03:04 EDT 2018 Running postscript: mlnxofed_ib_install",
    "postscript start..: mlnxofed_ib_install",
    "c01p10: postscript: mlnxofed_ib_install exited with code",
])
def test_near_misses_of_xcats_script_status(line: str) -> None:
    assert provision(line) == []
