"""Classes of input batch b9 showed unread, each tested on real instances from other threads (not the bundle).

Each block names the class, the threads its lines come from, and the look-alikes that must not match.
"""

from __future__ import annotations

from datetime import UTC

import pytest

from firstfault.extract.scheduler import read_scheduler
from firstfault.model import Event
from tests.extract import helpers


def feed(lines: list[str], source: str = "application") -> list[Event]:
    return helpers.events(lines, source, node=None if source == "application" else "n1")


def describe(text: str) -> list[Event]:
    return read_scheduler(text.encode(), "k8s-describe", "describe.txt", job_id=None, tz=UTC).events


# ---------------------------------------------------------------- the NVIDIA container stack refusing the host
# nvidia-container-cli's CUDA requirement (the host driver is older than the image's CUDA) and Docker finding no
# runtime for `--gpus` (the NVIDIA Container Toolkit is not installed or configured): the node's install
# (catalog/platform.yaml rows 1002, 1003; positive rule tests in catalog/rules/node-driver.yaml).


@pytest.mark.parametrize(
    "line",
    [
        # SyneRBI/PETRIC2#27 (cuda>=12.8 on a driver of CUDA 12.4)
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a "
        "newer version, or use an earlier cuda container",
        # NVIDIA/nvidia-docker#1352 (`docker run --gpus 2`, no container toolkit set up)
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
        # infiniflow/ragflow#9573 (Compose's `driver: nvidia`)
        'Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]',
    ],
)
def test_container_stack_refusing_the_host_is_the_driver(line: str) -> None:
    events = [e for e in feed([line]) if e.kind == "gpu.nvml_error"]
    assert [e.fields["error"] for e in events] == ["driver"]


def test_an_image_brand_condition_is_not_the_driver() -> None:
    # NVIDIA/nvidia-container-toolkit#24: the image asks for a GPU brand the toolkit did not know (fixed by a newer
    # toolkit): neither the host driver nor NVML failing.
    events = feed(["nvidia-container-cli: requirement error: unsatisfied condition: brand = quadrortx: unknown"])
    assert [e for e in events if e.kind == "gpu.nvml_error"] == []


# ---------------------------------------------------------------- kubelet local-storage evictions, Events rows alone
# The kubelet's eviction for a pod's own local-storage limit (EmptyDir size limit, container ephemeral-storage
# limit, the pod's total) is an eviction for ephemeral storage (catalog/scheduler.yaml), in a pod's Message and in
# describe's Events rows, which people paste without the `Events:` line and its header.


def test_events_rows_pasted_without_their_section() -> None:
    # substratusai/runbooks#246: the one row posted
    events = describe("  Warning  Evicted              60s                kubelet            Pod ephemeral local "
                      "storage usage exceeds the total limit of containers 100Gi.\n")
    assert [(e.kind, e.fields["reason"], e.fields.get("due_to")) for e in events] == [
        ("k8s.event", "Evicted", "eviction")]


def test_events_rows_inside_their_section_read_as_before() -> None:
    # kubernetes/kubernetes#122160: the Events table with its header; the eviction, then the kubelet's kill
    text = "\n".join([
        "Events:",
        "  Type     Reason               Age    From               Message",
        "  ----     ------               ----   ----               -------",
        "  Normal   Started              3m8s   kubelet            Started container grow-test",
        "  Warning  Evicted              2m57s  kubelet            Pod ephemeral local storage usage exceeds the "
        "total limit of containers 5Mi.",
        "  Normal   Killing              2m57s  kubelet            Stopping container grow-test",
    ])
    events = describe(text)
    assert [(e.fields["reason"], e.fields.get("due_to")) for e in events] == [
        ("Started", None), ("Evicted", "eviction"), ("Killing", None)]


def test_a_container_over_its_ephemeral_storage_limit() -> None:
    # cloud-ark/kubeplus#1389: the pod's own Reason and Message
    text = "\n".join([
        "Name:             kubeplus-deployment-dbd87546-kttck",
        "Namespace:        default",
        "Node:             ip-10-0-2-27.us-west-2.compute.internal/10.0.2.27",
        "Status:           Failed",
        "Reason:           Evicted",
        'Message:          Container consumerui exceeded its local ephemeral storage limit "20Mi".',
    ])
    pods = [e for e in describe(text) if e.kind == "k8s.pod"]
    assert [(e.fields.get("due_to"), e.fields.get("pressure")) for e in pods] == [("eviction", "ephemeral-storage")]


def test_a_line_that_only_starts_with_a_type_word_is_no_event_row() -> None:
    # a field line of a describe (`Warning:` is no Events row: no age in the third cell)
    assert describe("Normal  operation resumed after the node came back\n") == []


# ---------------------------------------------------------------- the OCI runtime's OOM-killed container init
# runc's `container init was OOM-killed (memory limit too low?)`: the container's memory limit, however it is quoted
# (the kubelet's event, Docker's and ECS's error).


def test_runc_init_oom_killed_as_ecs_quotes_it() -> None:
    # aws/amazon-ecs-agent#3021
    events = feed(["Status reason | CannotStartContainerError: Error response from daemon: OCI runtime create "
                   "failed: container_linux.go:380: starting container process caused: container init was "
                   "OOM-killed (memory limit too low?): unknown"])
    assert "memory_limit" in {e.fields.get("due_to") for e in events} or "host.oom_kill" in {e.kind for e in events}


def test_a_hook_killed_while_the_container_started_is_no_oom() -> None:
    # eclipse-che/che#21765: the kubelet's Failed row for runc; the NVIDIA hook was `Killed` and runc only says it
    # could not read the OOM count: no memory limit is named
    events = describe('  Warning  Failed  5m1s  kubelet  Error: container create failed: time="2022-10-13T15:59:14Z" '
                      'level=warning msg="unable to get oom kill count" error="open /sys/fs/cgroup/memory/'
                      'kubepods.slice/memory.oom_control: no such file or directory"\n')
    assert [(e.fields["reason"], e.fields.get("due_to")) for e in events] == [("Failed", None)]


# ---------------------------------------------------------------- a NIC driver naming itself inside its message
# Intel's igb (and older e1000/e1000e/ixgbe) print `igb: eth0 NIC Link is Down` after the netdev header.


def test_igb_link_down_with_the_driver_name_inside() -> None:
    # an OpenWrt dual-WAN test note on GitHub (the cable pulled from eth0, then put back)
    events = feed(["[  384.605483] igb 0000:56:00.0 eth0: igb: eth0 NIC Link is Down"], source="kernel")
    assert [(e.kind, e.fields["state"], e.fields["iface"]) for e in events] == [("net.link", "down", "eth0")]


def test_igb_link_up_is_never_down() -> None:
    events = feed(["[  395.065444] igb 0000:56:00.0 eth0: igb: eth0 NIC Link is Up 100 Mbps Full Duplex, Flow "
                   "Control: RX/TX"], source="kernel")
    assert [e.fields["state"] for e in events if e.kind == "net.link"] == ["up"]


# ---------------------------------------------------------------- NCCL's NVLS report without its source file
# NCCL's transport/nvls.cc names its transport in its own words (`NVLink SHARP (NVLS)`) and its CUDA failure as
# `CUDA error 401 '...'`; PyTorch quotes it after `Last error:` without NCCL's header (catalog/platform.yaml
# `nccl_transport_names`; cuda.yaml's row 401).


def test_nvls_report_needs_its_transport_and_cuda_failure_on_one_line() -> None:
    # pytorch/ci-infra#541: the report wrapped onto two lines as posted: the first names the transport, the second
    # the CUDA error; neither alone is NCCL's report (a near miss each)
    events = feed(["Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:",
                   "CUDA error 401 'the operation cannot be performed in the present state'."])
    nccl = [e for e in events if e.kind == "nccl.error"]
    assert nccl == []  # neither half names both: the transport and the CUDA failure are on different lines
    # aarora79/agentic-coding-harness-benchmarks#173: with its header (the source file names the transport)
    events = feed(["transport/nvls.cc:287 NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size "
                   "2097152 : CUDA error 401 'the operation cannot be performed in the present state'."])
    assert [(e.fields.get("transport"), e.fields.get("cuda_class")) for e in events if e.kind == "nccl.error"] == [
        ("nvls", "other")]


def test_nvls_named_without_a_failure_is_no_error() -> None:
    # NVIDIA/nccl#1788: NCCL's INFO that NVLS is there, and the WARN's follow-up without the CUDA words
    events = feed(["node004:27907:27907 [1] NCCL INFO NVLS multicast support is available on dev 1",
                   "This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches."])
    assert [e for e in events if e.kind == "nccl.error"] == []


# ---------------------------------------------------------------- HTCondor's memory holds
# HTCondor's starter (and a pool's periodic-hold policy) putting a job on hold for its memory: the job's memory
# limit, as Slurm's and LSF's are (catalog/scheduler.yaml, scheduler htcondor).


@pytest.mark.parametrize(
    "line",
    [
        # a CHTC user's `condor_q -held` rows, posted on GitHub (Docker universe)
        "15872426.5184 erees           5/25 14:51 Error from slot1_3@e327.chtc.wisc.edu: Docker job has gone over "
        "memory limit of 16384 Mb",
        # a research log on GitHub quoting the hold reason of its held jobs
        "Job has gone over memory limit of 2048 megabytes. Peak usage: 2048 megabytes.",
    ],
)
def test_htcondor_memory_hold_is_the_memory_limit(line: str) -> None:
    kills = [e for e in feed([line]) if e.kind == "host.oom_kill"]
    assert [(e.fields["proc"], e.fields["by"]) for e in kills] == [("htcondor", "limit")]


def test_htcondor_hold_for_run_time_is_no_memory_limit() -> None:
    # CHTC's list of common hold reasons (a course page on GitHub): the time limit's hold names no memory
    events = feed(['* "Job failed to complete in 72 hrs"'])
    assert [e for e in events if e.kind == "host.oom_kill"] == []


# ---------------------------------------------------------------- a cloud taking a Spot node back, as Karpenter says
# Karpenter's interruption controller names the message's kind; a Spot interruption is the provider's preemption
# of the node (catalog/scheduler.yaml).


@pytest.mark.parametrize(
    "line",
    [
        # aws/karpenter-provider-aws#4772 (an AWS FIS Spot interruption test, the controller's console log)
        '2023-10-10T05:24:20.236Z\tINFO\tcontroller.interruption\tinitiating delete for machine from interruption '
        'message\t{"commit": "34d50bf-dirty", "queue": "karpenter-venture-preprod-queue-interruption", '
        '"messageKind": "SpotInterruptionKind", "machine": "karpenter-spot-worker-preprod-66tr5", "action": '
        '"CordonAndDrain", "node": "ip-172-27-13-123.ap-southeast-2.compute.internal"}',
        # spack/spack-infrastructure#1297 (Karpenter v1's kind, its JSON log pretty-printed)
        '  "messageKind": "spot_interrupted",',
    ],
)
def test_karpenter_spot_interruption_is_a_preemption(line: str) -> None:
    signals = [e for e in feed([line]) if e.kind == "process.signal"]
    assert [e.fields.get("due_to") for e in signals] == ["preemption"]


def test_karpenter_deleting_for_another_interruption_is_no_preemption() -> None:
    # aws/karpenter-provider-aws#7017: an instance-stop event (AWS scheduled maintenance), the reporter's timeline
    events = feed(["- 7:41:25.295 pm - initiating delete from interruption message"])
    assert [e for e in events if e.fields.get("due_to") == "preemption"] == []


# ---------------------------------------------------------------- NVML's result quoted by another program
# The Kubernetes device plugin and Slurm's gpu/nvml plugin quote NVML's result after their own words; a pod's or an
# event's message that quotes the device plugin is read the same way by the kubectl readers.


@pytest.mark.parametrize(
    "line",
    [
        # LSSI-ETH/plmfit#40 (multi-GPU runs on TITAN RTX; the cluster's GPU)
        "slurmstepd: error: NVML: Failed to get usage(15): GPU is lost",
        # a university GPU cluster's FAQ on GitHub (an interactive srun that stopped)
        "slurmstepd-gypsum-gpu182: error: NVML: Failed to get usage(15): GPU is lost",
    ],
)
def test_slurm_gpu_plugin_quoting_nvml(line: str) -> None:
    events = [e for e in feed([line]) if e.kind == "gpu.nvml_error"]
    assert [(e.fields["error"], e.fields.get("nvml_error")) for e in events] == [("lost", "NVML_ERROR_GPU_IS_LOST")]


def test_device_plugin_message_in_a_describe() -> None:
    # NVIDIA/k8s-device-plugin#231: the pod's allocation failure as `kubectl describe pod` shows its message
    text = ("Message:        Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc "
            "error: code = Unknown desc = Unable to retrieve list of available devices: error creating nvml.Device 3: "
            "nvml: GPU is lost, which is unexpected\n")
    events = [e for e in describe(text) if e.kind == "gpu.nvml_error"]
    assert [e.fields["error"] for e in events] == ["lost"]


def test_a_message_without_nvml_words_is_no_device_report() -> None:
    # kubernetes/kubernetes#122160's rows: the kubelet's own words, no NVML result
    text = ("  Warning  Evicted  2m57s  kubelet  Pod ephemeral local storage usage exceeds the total limit of "
            "containers 5Mi.\n")
    assert [e for e in describe(text) if e.kind == "gpu.nvml_error"] == []


def test_slurm_gpu_plugin_quoting_a_result_without_its_text() -> None:
    # a run log on GitHub counting Slurm's `NVML: Failed to get usage(999)` lines (a code, no result text): the quote
    # names no result of the table, so it is no event, never NVML failing for an unnamed reason
    events = feed(["    produced **zero** forward passes: progress frozen at `forget_ppl 0/400` after 94 s, and 3087",
                   "    `NVML: Failed to get usage(999)` lines in the log. Sibling arms of the *same array* ran the"])
    assert [e for e in events if e.kind == "gpu.nvml_error"] == []
