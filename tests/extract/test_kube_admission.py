"""The kubelet refusing a pod at admission for its devices, in every Kubernetes form, through the one reasons table
(catalog/scheduler.yaml `device_plugin`); a `kubectl describe` fragment without its Name; the node a record names
(describe Events' From, the scheduler's binding, an event's reportingInstance).

The messages are the kubelet's format strings filled in (pkg/kubelet/cm/admission/errors.go `Allocate failed due to
%v, which is unexpected`, pkg/kubelet/cm/devicemanager/manager.go, pkg/kubelet/lifecycle/predicate.go
InsufficientResourceError) and the NVIDIA device plugin's README (its time-slicing example); each test names its source.
"""

from __future__ import annotations

import json
from datetime import UTC

import pytest

from firstfault.extract.reasons import k8s_reason
from firstfault.extract.scheduler import read_scheduler
from firstfault.extract.structured import StructuredResult
from firstfault.model import Event
from tests.extract import helpers


def read(text: str, fmt: str) -> StructuredResult:
    return read_scheduler(text.encode(), fmt, "k8s.txt", job_id=None, tz=UTC)


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines)


def ends(res: StructuredResult | list[Event]) -> list[tuple[str, str | None, object, object]]:
    events = res.events if isinstance(res, StructuredResult) else res
    return [(e.kind, e.node, e.fields.get("reason"), e.fields.get("due_to")) for e in events
            if e.kind in ("k8s.pod", "k8s.event")]


# ---------------------------------------------------------------- the table: the device manager's words


@pytest.mark.parametrize(
    "message",
    [
        # devicemanager devicesToAllocate, wrapped by admission/errors.go
        "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, "
        "Available: 0, which is unexpected",
        # the same refusal as the pod's status message (the kubelet's rejectPod prefix)
        "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "
        "nvidia.com/gpu, which is unexpected",
        "Allocate failed due to previously allocated devices are no longer healthy; cannot allocate unhealthy devices "
        "amd.com/gpu, which is unexpected",
        "Allocate failed due to cannot allocate unregistered device nvidia.com/gpu, which is unexpected",
        # the kubelet before 1.13 (devicemanager's `can't allocate unregistered device %v`, `Unknown Device Plugin %s`)
        "Allocate failed due to can't allocate unregistered device nvidia.com/gpu, which is unexpected",
        "Allocate failed due to Unknown Device Plugin nvidia.com/gpu, which is unexpected",
        # callPreStartContainerIfNeeded
        "Allocate failed due to device plugin PreStartContainer rpc failed with err: rpc error: code = Unavailable "
        "desc = connection error, which is unexpected",
        # the NVIDIA plugin's ValidateRequest (internal/rm/rm.go) for a device it does not know
        'Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for "nvidia.com/gpu": '
        "invalid request: unknown device: GPU-0b9e2c1a, which is unexpected",
    ],
)
def test_the_device_managers_refusals_are_the_device_plumbing(message: str) -> None:
    assert k8s_reason("UnexpectedAdmissionError", message) == ("device_plugin", None)


@pytest.mark.parametrize(
    "message",
    [
        # the CPU manager's refusal (pkg/kubelet/cm/cpumanager: `not enough cpus available to satisfy request`): no
        # device, the pod's CPUs against the node's exclusive ones
        "Allocate failed due to not enough cpus available to satisfy request, which is unexpected",
        # the topology manager's
        "Resources cannot be allocated with Topology locality",
        "",
    ],
)
def test_other_admission_errors_are_not_the_devices(message: str) -> None:
    assert k8s_reason("UnexpectedAdmissionError", message) == (None, None)


@pytest.mark.parametrize(
    "message",
    [
        # https://github.com/volcano-sh/devices/issues/29 (the kubelet's event for Volcano's GPU-sharing plugin)
        "Allocate failed due to rpc error: code = Unknown desc = failed to find gpu id, which is unexpected",
        # the same plugin's other Allocate errors (volcano-sh/devices pkg/plugin/nvidia/server.go: `failed to find gpu
        # ids` for a pod of several GPUs, `failed to find gpu device` for an index it has no device at)
        "Allocate failed due to rpc error: code = Unknown desc = failed to find gpu ids, which is unexpected",
        "Pod was rejected: Allocate failed due to rpc error: code = Unknown desc = failed to find gpu device, which is "
        "unexpected",
    ],
)
def test_volcanos_gpu_sharing_plugin_refusing_the_allocation_is_the_device_plumbing(message: str) -> None:
    assert k8s_reason("UnexpectedAdmissionError", message) == ("device_plugin", None)


@pytest.mark.parametrize(
    "message",
    [
        # the same plugin finding no pending pod whose GPU count matches the kubelet's request
        # (volcano-sh/devices pkg/plugin/nvidia/server.go Allocate: `failed to find candidate pod`): no row
        "Allocate failed due to rpc error: code = Unknown desc = failed to find candidate pod, which is unexpected",
        # the same words not as a plugin's gRPC error: a C++ program's own (openalpr's AlprGpuSupport `failed to find
        # gpu id` on stderr)
        "failed to find gpu id",
    ],
)
def test_words_like_volcanos_that_are_not_its_plugins_allocate_error(message: str) -> None:
    assert k8s_reason("UnexpectedAdmissionError", message) == (None, None)


def test_more_shared_replicas_than_time_slicing_gives_is_the_pods_own_request() -> None:
    # NVIDIA/k8s-device-plugin README, "Shared Access to GPUs": failRequestsGreaterThanOne refusing 2 shared GPUs
    message = ("Allocate failed due to rpc error: code = Unknown desc = request for 'nvidia.com/gpu: 2' too large: "
               "maximum request size for shared resources is 1, which is unexpected")
    assert k8s_reason("UnexpectedAdmissionError", message) == ("setup", None)


@pytest.mark.parametrize("word", ["OutOfnvidia.com/gpu", "OutOfamd.com/gpu", "OutOfgpu.intel.com/i915",
                                  "OutOfnvidia.com/mig-1g.5gb"])
def test_out_of_a_device_plugins_resource(word: str) -> None:
    # predicate.go: InsufficientResourcePrefix + the resource's name for an extended resource
    assert k8s_reason(word, None) == ("device_plugin", None)


@pytest.mark.parametrize("word", ["OutOfcpu", "OutOfmemory", "OutOfpods", "OutOfephemeral-storage",
                                  "OutOfhugepages-2Mi"])
def test_out_of_the_kubelets_own_resources_is_the_schedulers_placement(word: str) -> None:
    # predicate.go: the same prefix + a resource the kubelet itself accounts, which no device plugin counts: the pod
    # was bound to a node that never had room (catalog/scheduler.yaml `placement`; tests/extract/test_kube_placement.py)
    assert k8s_reason(word, None) == ("placement", None)


@pytest.mark.parametrize("word", ["OutOf", "OutOfkubernetes.io/batch-cpu", "Outofnvidia.com/gpu", "OutOfCPU"])
def test_out_of_no_resource_is_nothing(word: str) -> None:
    assert k8s_reason(word, None) == (None, None)


# ---------------------------------------------------------------- every form


def test_a_get_events_table_row() -> None:
    # a public run log's `kubectl get events` (its Training Job Failures section)
    res = read("LAST SEEN   TYPE      REASON                     OBJECT                          MESSAGE\n"
               "32s         Warning   UnexpectedAdmissionError   pod/trm-train-arc2-4gpu-9lltn   Allocate failed due"
               " to requested number of devices unavailable for nvidia.com/gpu. Requested: 4, Available: 0, which is"
               " unexpected\n", "k8s-table")
    assert ends(res) == [("k8s.event", None, "UnexpectedAdmissionError", "device_plugin")]


def test_a_get_pods_row_out_of_gpus_with_its_node() -> None:
    # GoogleCloudPlatform/container-engine-accelerators#100 (`kubectl get pods -o wide | grep replicaset`)
    res = read("NAME                   READY   STATUS                RESTARTS   AGE   IP          NODE"
               "                                 NOMINATED NODE\n"
               "gpu-replicaset-bw4gf   1/1     Running               0          2h    10.2.2.9    "
               "controller-1.k8s.ml.prod.srcd.host   <none>\n"
               "gpu-replicaset-bxbc2   0/1     OutOfnvidia.com/gpu   0          2h    <none>      "
               "controller-2.k8s.ml.prod.srcd.host   <none>\n", "k8s-table")
    assert ends(res) == [("k8s.pod", "controller-2.k8s.ml.prod.srcd.host", "OutOfnvidia.com/gpu", "device_plugin")]


def test_the_same_row_pasted_into_a_log_without_its_header() -> None:
    row = ("gpu-replicaset-bxbc2                    0/1     OutOfnvidia.com/gpu   0          2h    <none>        "
           "controller-2.k8s.ml.prod.srcd.host   <none>")
    assert [(e.kind, e.fields.get("due_to")) for e in feed([row])] == [("k8s.pod", "device_plugin")]


def test_pod_json_status() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "trainer-0"}, "spec": {"nodeName": "gpu-node-7"},
           "status": {"phase": "Failed", "reason": "UnexpectedAdmissionError",
                      "message": "Pod was rejected: Allocate failed due to requested number of devices unavailable for"
                                 " nvidia.com/gpu. Requested: 8, Available: 7, which is unexpected"}}
    assert ends(read(json.dumps(pod), "k8s-pods")) == [
        ("k8s.pod", "gpu-node-7", "UnexpectedAdmissionError", "device_plugin")]


def test_pod_json_out_of_gpus_and_out_of_cpu() -> None:
    # predicate.go's InsufficientResourceError message
    pods = {"kind": "PodList", "items": [
        {"metadata": {"name": "a"}, "spec": {"nodeName": "n1"},
         "status": {"phase": "Failed", "reason": "OutOfnvidia.com/gpu", "message": "Pod Node didn't have enough "
                    "resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0"}},
        {"metadata": {"name": "b"}, "spec": {"nodeName": "n2"},
         "status": {"phase": "Failed", "reason": "OutOfcpu", "message": "Pod Node didn't have enough resource: cpu, "
                    "requested: 4000, used: 63000, capacity: 64000"}}]}
    assert ends(read(json.dumps(pods), "k8s-pods")) == [
        ("k8s.pod", "n1", "OutOfnvidia.com/gpu", "device_plugin"), ("k8s.pod", "n2", "OutOfcpu", "placement")]


def test_the_pasted_events_row_in_a_log() -> None:
    # NVIDIA/k8s-device-plugin README's time-slicing example, the row with a device manager's refusal instead
    line = ("  Warning  UnexpectedAdmissionError  13s   kubelet            Allocate failed due to no healthy devices "
            "present; cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected")
    assert [(e.kind, e.fields.get("due_to")) for e in feed([line])] == [("k8s.pod", "device_plugin")]


def test_a_scheduling_failure_for_gpus_is_no_admission() -> None:
    # The scheduler finding no node (the pod stays Pending: NVIDIA/k8s-device-plugin#119's row) is not the kubelet
    # refusing a bound pod.
    line = ("Warning FailedScheduling  40s (x2 over 40s)  default-scheduler  0/2 nodes are available: 1 Insufficient "
            "nvidia.com/gpu, 1 node(s) were unschedulable.")
    assert [e for e in feed([line]) if e.fields.get("due_to") == "device_plugin"] == []


# ---------------------------------------------------------------- a describe fragment, and the node it names


_REFUSED = ("Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, "
            "which is unexpected")
FRAGMENT = (
    "Status:       Failed\n"
    "Reason:       UnexpectedAdmissionError\n"
    f"Message:      Pod was rejected: {_REFUSED}\n"
    "Events:\n"
    "  Type     Reason                    Age   From               Message\n"
    "  ----     ------                    ----  ----               -------\n"
    "  Normal   Scheduled                 18s   default-scheduler  Successfully assigned jupyter/jupyter-a to "
    "a100-80g-4\n"
    f"  Warning  UnexpectedAdmissionError  18s   kubelet            {_REFUSED}\n")


def test_a_describe_fragment_without_its_name_is_one_unnamed_pod() -> None:
    res = read(FRAGMENT, "k8s-describe")
    # the scheduler's binding names the node the paste does not show
    assert ends(res) == [("k8s.pod", "a100-80g-4", "UnexpectedAdmissionError", "device_plugin"),
                         ("k8s.event", "a100-80g-4", "Scheduled", None),
                         ("k8s.event", "a100-80g-4", "UnexpectedAdmissionError", "device_plugin")]
    assert [i.message for i in res.issues] == [
        "k8s-describe: a pod's Status, Reason and Message pasted without its Name: read as one pod the paste does not"
        " name"]


def test_a_fragment_after_a_whole_pod_loses_neither() -> None:
    # a whole pod's describe above the fragment (two pastes in one file): the first pod's end, and the fragment's
    # events, are both read
    text = ("Name: trainer-0\nNode: gpu-node-7/10.0.0.7\nStatus: Failed\nReason: Evicted\n"
            "Message: The node was low on resource: memory.\n\n" + FRAGMENT)
    res = read(text, "k8s-describe")
    got = [(e.kind, e.fields.get("due_to")) for e in res.events]
    assert ("k8s.pod", "memory_limit") in got and ("k8s.event", "device_plugin") in got


def test_a_jobs_describe_is_no_pod_fragment() -> None:
    # a Job's describe has no pod Status: no pod is made of it
    res = read("Name:           trainer\nParallelism:    1\nCompletions:    1\nPods Statuses:  0 Active / 0 Succeeded"
               " / 1 Failed\nEvents:\n  Type     Reason                Age   From            Message\n"
               "  Warning  BackoffLimitExceeded  1m    job-controller  Job has reached the specified backoff limit\n",
               "k8s-describe")
    assert [e.kind for e in res.events] == ["k8s.event"]
    assert res.issues == []


def test_from_names_the_kubelets_node() -> None:
    # kubectl describe before events.k8s.io printed From as `COMPONENT, HOST` (describe.go formatEventSource)
    res = read("Events:\n  Type     Reason    Age   From               Message\n"
               "  Warning  OutOfnvidia.com/gpu  5s  kubelet, gpu-node-3  Node didn't have enough resource: "
               "nvidia.com/gpu, requested: 1, used: 0, capacity: 0\n", "k8s-describe")
    assert ends(res) == [("k8s.event", "gpu-node-3", "OutOfnvidia.com/gpu", "device_plugin")]


def test_a_component_without_a_host_names_no_node() -> None:
    res = read("Events:\n  Type     Reason    Age   From               Message\n"
               "  Warning  UnexpectedAdmissionError  5s  kubelet  Allocate failed due to cannot allocate unregistered "
               "device nvidia.com/gpu, which is unexpected\n", "k8s-describe")
    assert ends(res) == [("k8s.event", None, "UnexpectedAdmissionError", "device_plugin")]


def test_an_events_reporting_instance_is_its_node() -> None:
    # core/v1 Event from a kubelet that fills reportingComponent / reportingInstance and no source.host
    ev = {"kind": "EventList", "items": [
        {"reason": "UnexpectedAdmissionError", "type": "Warning", "involvedObject": {"kind": "Pod", "name": "p"},
         "message": "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: "
                    "1, Available: 0, which is unexpected",
         "source": {}, "reportingComponent": "kubelet", "reportingInstance": "gpu-node-9",
         "lastTimestamp": "2026-12-04T10:00:00Z"},
        # another controller's instance is no node
        {"reason": "Scheduled", "type": "Normal", "involvedObject": {"kind": "Pod", "name": "p"},
         "message": "Successfully assigned default/p to gpu-node-9", "reportingComponent": "default-scheduler",
         "reportingInstance": "default-scheduler-cp-1", "lastTimestamp": "2026-12-04T09:59:59Z"}]}
    assert ends(read(json.dumps(ev), "k8s-events")) == [
        ("k8s.event", "gpu-node-9", "UnexpectedAdmissionError", "device_plugin"),
        ("k8s.event", None, "Scheduled", None)]


# ---------------------------------------------------------------- the node another program's record names


def feed_on(lines: list[str], node: str) -> list[Event]:
    return helpers.events(lines, node=node)


def test_an_htcondor_hold_names_its_execute_host() -> None:
    # catalog/scheduler.yaml's CHTC row (a Docker universe job's hold reason), read in the submit side's log
    events = feed_on(["Error from slot1_3@e327.chtc.wisc.edu: Docker job has gone over memory limit of 16384 Mb"],
                     "submit-1")
    ooms = [e for e in events if e.kind == "host.oom_kill"]
    assert [(e.fields.get("host"), e.fields.get("names_node")) for e in ooms] == [("e327.chtc.wisc.edu", True)]


def test_a_memory_limit_without_a_slot_stays_on_its_node() -> None:
    # the starter's own words with no `Error from SLOT@HOST:` (catalog/scheduler.yaml's HTCondor row): no host named
    events = feed_on(["Job has gone over memory limit of 2048 megabytes. Peak usage: 2048 megabytes."], "exec-7")
    ooms = [e for e in events if e.kind == "host.oom_kill"]
    assert [(e.node, e.fields.get("host"), e.fields.get("names_node")) for e in ooms] == [("exec-7", None, None)]


def test_an_htcondor_hold_for_another_reason_names_no_cause() -> None:
    # ChristinaLK/chtc-htc _episodes/06-troubleshoot.md (`condor_q -af holdreason`): the slot is named, the reason is
    # the job's executable, no scheduler's reason
    line = ("Error from slot1_6@e231.chtc.wisc.edu: Failed to execute "
            "'/var/lib/condor/execute/slot1/dir_7462/condor_exec.exe' with arguments 0: (errno=8: 'Exec format error')")
    assert [e for e in feed_on([line], "submit-1") if e.kind in ("host.oom_kill", "process.signal")] == []


KARPENTER_V033 = (
    # aws/karpenter-provider-aws#4772 (an AWS FIS Spot interruption test, the controller's console log)
    '2023-10-10T05:24:20.236Z\tINFO\tcontroller.interruption\tinitiating delete for machine from interruption '
    'message\t{"commit": "34d50bf-dirty", "queue": "karpenter-venture-preprod-queue-interruption", '
    '"messageKind": "SpotInterruptionKind", "machine": "karpenter-spot-worker-preprod-66tr5", "action": '
    '"CordonAndDrain", "node": "ip-172-27-13-123.ap-southeast-2.compute.internal"}')
# The same record as the controller logs it since (pkg/controllers/interruption/controller.go: klog.KRef values)
KARPENTER_V1 = (
    '{"level":"INFO","time":"2024-06-01T10:00:00.000Z","logger":"controller","message":"initiating delete from '
    'interruption message","controller":"interruption","messageKind":"SpotInterruptionKind","NodeClaim":'
    '{"name":"default-4w54b"},"action":"CordonAndDrain","Node":{"name":"ip-10-0-36-60.eu-west-2.compute.internal"}}')


@pytest.mark.parametrize(("line", "node"), [
    (KARPENTER_V033, "ip-172-27-13-123.ap-southeast-2.compute.internal"),
    (KARPENTER_V1, "ip-10-0-36-60.eu-west-2.compute.internal")])
def test_karpenters_record_names_the_node_it_took(line: str, node: str) -> None:
    signals = [e for e in feed_on([line], "karpenter-0") if e.kind == "process.signal"]
    assert [(e.fields.get("host"), e.fields.get("names_node"), e.fields.get("taken")) for e in signals] == [
        (node, True, "node")]


def test_a_record_that_names_only_its_nodeclaim_names_no_node() -> None:
    line = KARPENTER_V1.replace(',"Node":{"name":"ip-10-0-36-60.eu-west-2.compute.internal"}', "")
    signals = [e for e in feed_on([line], "karpenter-0") if e.kind == "process.signal"]
    assert [(e.fields.get("host"), e.fields.get("names_node")) for e in signals] == [(None, None)]


def _tabwriter(rows: list[list[str]]) -> str:
    """Rows padded as kubectl's tabwriter pads them: each column as wide as its widest cell, three spaces after."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join("".join(c.ljust(w + 3) for c, w in zip(r[:-1], widths, strict=False)) + r[-1] + "\n"
                   for r in rows)


# kubectl before 1.14 printed `kubectl get events` with these columns (pkg/printers' event columns; the SOURCE cell is
# formatEventSource's `COMPONENT, HOST`), the SUBOBJECT of a pod-level event empty
OLD_EVENTS = _tabwriter([
    ["LAST SEEN", "FIRST SEEN", "COUNT", "NAME", "KIND", "SUBOBJECT", "TYPE", "REASON", "SOURCE", "MESSAGE"],
    ["2d", "2d", "1", "flask-4207440730-30vn0", "Pod", "", "Normal", "SuccessfulMountVolume", "kubelet, minikube",
     'MountVolume.SetUp succeeded for volume "podinfo"'],
    ["1m", "1m", "1", "trainer-0", "Pod", "", "Warning", "UnexpectedAdmissionError", "kubelet, gpu-node-2",
     "Allocate failed due to cannot allocate unregistered device nvidia.com/gpu, which is unexpected"],
    ["1m", "1m", "1", "trainer-0", "Pod", "", "Normal", "Scheduled", "default-scheduler",
     "Successfully assigned trainer-0 to gpu-node-2"],
])


def test_an_events_tables_source_names_the_node_and_an_empty_cell_keeps_its_column() -> None:
    res = read(OLD_EVENTS, "k8s-table")
    assert ends(res) == [("k8s.event", "minikube", "SuccessfulMountVolume", None),
                         ("k8s.event", "gpu-node-2", "UnexpectedAdmissionError", "device_plugin"),
                         ("k8s.event", None, "Scheduled", None)]  # a source without a host names no node


# kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle registration.go's record (its keys as Karpenter v1
# logs them), then the interruption controller's record of the same claim that
# names no Node
REGISTERED = ('{"level":"INFO","time":"2024-06-01T09:00:00.000Z","logger":"controller",'
              '"message":"registered nodeclaim","controller":"nodeclaim.lifecycle",'
              '"NodeClaim":{"name":"default-4w54b"},"provider-id":'
              '"aws:///eu-west-2a/i-0f4fe866297af566d","Node":{"name":"ip-10-0-36-60.eu-west-2.compute.internal"}}')


def test_a_nodeclaims_earlier_record_names_the_node_of_a_later_one() -> None:
    line = KARPENTER_V1.replace(',"Node":{"name":"ip-10-0-36-60.eu-west-2.compute.internal"}', "")
    signals = [e for e in feed_on([REGISTERED, line], "karpenter-0") if e.kind == "process.signal"]
    assert [(e.fields.get("host"), e.fields.get("names_node")) for e in signals] == [
        ("ip-10-0-36-60.eu-west-2.compute.internal", True)]


def test_another_claims_record_names_no_node_for_it() -> None:
    line = KARPENTER_V1.replace(',"Node":{"name":"ip-10-0-36-60.eu-west-2.compute.internal"}', "").replace(
        "default-4w54b", "default-zzzzz")
    signals = [e for e in feed_on([REGISTERED, line], "karpenter-0") if e.kind == "process.signal"]
    assert [(e.fields.get("host"), e.fields.get("names_node")) for e in signals] == [(None, None)]
