"""The cluster's scheduler placing a pod where it could not run, or failing to place it for reasons of its own
(catalog/scheduler.yaml `placement`, rule node-scheduler-placement), in each component's words and each form; and the
pods left waiting for room, which look alike and are no placement.

Sources of the lines: the kubelet's admission refusal (kubernetes/kubernetes pkg/kubelet/lifecycle/predicate.go,
`Pod was rejected: ` + the scheduler framework's InsufficientResourceError; kubelet.go rejectPod's older `Pod ` +
message) as kai-scheduler/KAI-Scheduler#306 posts it; the scheduler framework's Reserve and Score checks
(pkg/scheduler/framework/runtime/framework.go) as koordinator-sh/koordinator#1136 and #1613 post them; Kueue's flavor
assignment (kubernetes-sigs/kueue pkg/scheduler/flavorassigner) as AI-Hypercomputer/xpk#603 posts it; the near misses
from kubernetes/website's "Debug Pods" page (the old default scheduler's fit failure), koordinator#1136's pod
condition (Coscheduling's PreFilter), aws/karpenter-provider-aws#8068's FailedScheduling row, Kueue's own
`insufficient unused quota`. Each test names its source.
"""

from __future__ import annotations

import json
from datetime import UTC

import pytest

from firstfault.extract.reasons import k8s_reason, text_reasons
from firstfault.extract.scheduler import read_scheduler
from firstfault.extract.structured import StructuredResult
from firstfault.model import Event
from tests.extract import helpers


def read(text: str, fmt: str) -> StructuredResult:
    return read_scheduler(text.encode(), fmt, "k8s.txt", job_id=None, tz=UTC)


def placements(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(e.kind, e.node) for e in events if e.fields.get("due_to") == "placement"]


def dues(text: str) -> list[str | None]:
    return [h.reason for h in text_reasons(text) if h.scheduler == "kubernetes"]


# ---------------------------------------------------------------- the table


@pytest.mark.parametrize(
    "message",
    [
        # KAI-Scheduler#306 (the pod's message in `kubectl describe pod`)
        "Pod was rejected: Node didn't have enough resource: memory, requested: 2147483648, used: 32290433792, "
        "capacity: 32457011200",
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 500000, used: 100, capacity: 24000",
        "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 110, capacity: 110",
        # rejectPod before `was rejected`
        "Pod Node didn't have enough resource: cpu, requested: 4000, used: 63000, capacity: 64000",
        # koordinator#1136, the framework's status as a FailedScheduling message
        'running Reserve plugin "DeviceShare": Insufficient Devices',
        # koordinator#1613; the later `... after normalizing`
        'plugin "UnifiedDeviceShare" returns an invalid score 186, it should in the range of [0, 100]',
        'plugin "NodeResourcesFit" returns an invalid score 101, it should in the range of [0, 100] after normalizing',
        # xpk#603
        "couldn't assign flavors to pod set job: resource cpu unavailable in ClusterQueue",
        "couldn't assign flavors to pod set workers: resource memory unavailable in ClusterQueue",
    ],
)
def test_a_placement_in_each_components_words(message: str) -> None:
    assert dues(message) == ["placement"]
    assert k8s_reason("FailedScheduling", message) == ("placement", None)


@pytest.mark.parametrize(
    "message",
    [
        # kubernetes/website "Debug Pods": the old default scheduler's fit failure, a pod waiting for room (`CPU`)
        "fit failure on node (kubernetes-node-6ta5): Node didn't have enough resource: CPU, requested: 1000, used: "
        "1420, capacity: 2000",
        # the InsufficientResourceError alone, without the kubelet's refusal before it: a scheduler's own fit check
        "Node didn't have enough resource: memory, requested: 2147483648, used: 32290433792, capacity: 32457011200",
        # koordinator#1136: Coscheduling's PreFilter while the gang is incomplete
        'running PreFilter plugin "Coscheduling": gang child pod not collect enough, gangName: default/test-work, '
        "podName: default/test-work-1",
        # karpenter-provider-aws#8068: the default scheduler's word for a pod waiting for GPUs
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No "
        "preemption victims found for incoming pod.",
        # Kueue's wait, and an accelerator the ClusterQueue does not offer (the queue's or the job's choice of queue)
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 8 more "
        "needed",
        "couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in ClusterQueue",
    ],
)
def test_a_pod_left_waiting_is_no_placement(message: str) -> None:
    assert "placement" not in dues(message)
    assert k8s_reason("FailedScheduling", message)[0] != "placement"


def test_the_device_plugins_resource_stays_the_device_plugins() -> None:
    # predicate.go's prefix with an extended resource (GoogleCloudPlatform/container-engine-accelerators#100)
    assert k8s_reason("OutOfnvidia.com/gpu", None) == ("device_plugin", None)
    assert k8s_reason("OutOfmemory", None) == ("placement", None)


# ---------------------------------------------------------------- every form


def test_the_describe_message_line_in_a_log() -> None:
    # KAI-Scheduler#306: the pod's `Message:` as k9s frames it
    line = ("│ Message:          Pod was rejected: Node didn't have enough resource: memory, requested: 2147483648, "
            "used: 32290433792, capacity: 32457011200")
    assert placements(helpers.events([line])) == [("k8s.event", None)]


def test_the_schedulers_klog_line() -> None:
    # koordinator#1136 (koord-scheduler's log)
    line = ('E0323 18:35:48.769533       9 framework.go:949] "Failed running Reserve plugin" err="Insufficient '
            'Devices" plugin="DeviceShare" pod="default/test-worker-1"')
    assert placements(helpers.events([line])) == [("k8s.event", None)]


def test_a_get_pods_row_out_of_memory_with_its_node() -> None:
    # the kubelet's pod reason as `kubectl get pods -o wide` prints it in STATUS
    res = read("NAME        READY   STATUS        RESTARTS   AGE   IP       NODE          NOMINATED NODE\n"
               "trainer-0   0/1     OutOfmemory   0          5m    <none>   gpu-node-3    <none>\n", "k8s-table")
    assert placements(res.events) == [("k8s.pod", "gpu-node-3")]


def test_pod_json_status() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "kai-gpu-workload-pod"}, "spec": {"nodeName": "ip-10-0-1-7"},
           "status": {"phase": "Failed", "reason": "OutOfmemory",
                      "message": "Pod was rejected: Node didn't have enough resource: memory, requested: 2147483648, "
                                 "used: 32290433792, capacity: 32457011200"}}
    assert placements(read(json.dumps(pod), "k8s-pods").events) == [("k8s.pod", "ip-10-0-1-7")]


def test_kueues_describe_events() -> None:
    # xpk#603 (`kubectl describe workload`)
    res = read("Events:\n"
               "  Type     Reason   Age                    From             Message\n"
               "  ----     ------   ----                   ----             -------\n"
               "  Warning  Pending  4m23s (x3 over 4m23s)  kueue-admission  couldn't assign flavors to pod set job: "
               "resource cpu unavailable in ClusterQueue\n", "k8s-describe")
    assert [e.kind for e in res.events if e.fields.get("due_to") == "placement"] == ["k8s.event"]


def test_a_waiting_pods_events_give_no_placement() -> None:
    # karpenter-provider-aws#8068's FailedScheduling row, and Coscheduling's PreFilter in a pod's condition (#1136)
    lines = ["  Warning  FailedScheduling  23m (x54 over 4h48m)    default-scheduler  0/3 nodes are available: 3 "
             "Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for "
             "incoming pod.",
             "    message: 'running PreFilter plugin \"Coscheduling\": gang child pod not collect enough, gangName: "
             "default/test-work, podName: default/test-work-1'"]
    assert placements(helpers.events(lines)) == []


# ---------------------------------------------------------------- a pod waiting for a place: no cause, not started


def pending(events: list[Event]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("reason")) for e in events if e.fields.get("pending")]


@pytest.mark.parametrize(
    "line",
    [
        # polyaxon/polyaxon#605: the default scheduler's FitError (pkg/scheduler/framework/types.go) relayed
        "unschedulable: 0/11 nodes are available: 1 Insufficient cpu, 11 Insufficient nvidia.com/gpu",
        # kai-scheduler/KAI-Scheduler#257
        "kai-scheduler : no nodes with enough resources were found: 1 node is not a gpu node or the gpu memory count on"
        " the node was not synced yet, task: <default/gpu-memory>, node: .",
        # volcano-sh/volcano#3220 (job_info.go's gang FitError; the queue's word)
        "0/0 tasks in gang unschedulable: pod group is not ready, 1 minAvailable",
        "queue resource quota insufficient",
        # karpenter-provider-aws#8068's describe Events row
        "  Warning  FailedScheduling  23m (x54 over 4h48m)    default-scheduler  0/3 nodes are available: 3 "
        "Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming "
        "pod.",
    ],
)
def test_a_wait_in_each_schedulers_words_is_pending(line: str) -> None:
    events = helpers.events([line])
    assert [e.kind for e in events if e.fields.get("pending")] == ["k8s.event"]
    assert placements(events) == []


@pytest.mark.parametrize(
    "line",
    [
        # the scheduler's own Scheduled event (pkg/scheduler/schedule_one.go `Successfully assigned %v/%v to %v`)
        "  Normal   Scheduled         5s    default-scheduler  Successfully assigned default/trainer-0 to gpu-node-1",
        # a wait that names its cause: the placement's (koordinator#1613), not a plain wait
        '  Warning  FailedScheduling  5s    koord-scheduler  plugin "UnifiedDeviceShare" returns an invalid score 186, '
        "it should in the range of [0, 100]",
        # a count of nodes that is no scheduler's FitError (no `0/` before it)
        "INFO cluster check: 3/3 nodes are available",
    ],
)
def test_no_wait_where_the_pod_was_placed_or_a_cause_is_named(line: str) -> None:
    assert pending(helpers.events([line])) == []


def test_a_describe_wait_alone_is_pending() -> None:
    # volcano-sh/volcano#1094 (`kubectl describe pg test`)
    res = read("Name:         test\n"
               "Events:\n"
               "  Type     Reason         Age                    From     Message\n"
               "  ----     ------         ----                   ----     -------\n"
               "  Warning  Unschedulable  69s (x78789 over 26h)  volcano  1/1 tasks in gang unschedulable: pod group is"
               " not ready, 1 Pending, 1 minAvailable.\n", "k8s-describe")
    assert pending(res.events) == [("k8s.event", "Unschedulable")]


def test_a_wait_that_cleared_is_no_sign() -> None:
    # a pod's describe Events: FailedScheduling until a node came, then the scheduler's Scheduled and the kubelet's
    # pulls and start (kubernetes/website "Debug Pods": the events a pod that runs shows)
    res = read("Name:         trainer-0\n"
               "Status:       Running\n"
               "Containers:\n"
               "  trainer:\n"
               "    Image:  pytorch:latest\n"
               "Events:\n"
               "  Type     Reason            Age   From               Message\n"
               "  ----     ------            ----  ----               -------\n"
               "  Warning  FailedScheduling  5m    default-scheduler  0/3 nodes are available: 3 Insufficient "
               "nvidia.com/gpu.\n"
               "  Normal   Scheduled         2m    default-scheduler  Successfully assigned default/trainer-0 to "
               "gpu-1\n"
               "  Normal   Started           1m    kubelet            Started container trainer\n", "k8s-describe")
    assert next(e.fields.get("reason") for e in res.events if e.kind == "k8s.event") == "FailedScheduling"
    assert pending(res.events) == []


def test_an_events_list_clears_by_pod() -> None:
    # core/v1 EventList: one pod placed after its wait, another still waiting
    def event(reason: str, pod: str, message: str) -> dict[str, object]:
        return {"kind": "Event", "reason": reason, "message": message, "type": "Normal",
                "involvedObject": {"kind": "Pod", "name": pod}, "lastTimestamp": "2024-05-01T10:00:00Z"}
    doc = {"kind": "EventList", "items": [
        event("FailedScheduling", "a", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."),
        event("FailedScheduling", "b", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."),
        event("Scheduled", "a", "Successfully assigned default/a to gpu-1")]}
    res = read(json.dumps(doc), "k8s-events")
    assert [(e.fields.get("object_name"), e.fields.get("pending")) for e in res.events
            if e.fields.get("reason") == "FailedScheduling"] == [("a", None), ("b", True)]
