"""Kubernetes reasons in every form through one table: `kubectl` tables and describe text (extract/kubetext.py),
pod / node objects (extract/kube.py).

No Kubernetes API server can run here; the inputs are kubectl output people posted (each names its thread), and
kubectl 1.32.4's own output run here against a stub API server that answered with the project's recorded objects
(tests/fixtures/kube-nodes/README.md, tests/fixtures/scheduler/events.yaml): `kubectl events -A`,
`kubectl describe node gpu-node-04`. Expected reasons are the threads' (decided before the reader ran).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from firstfault.extract.scheduler import read_scheduler
from firstfault.extract.structured import StructuredResult
from firstfault.model import Event

FIX = Path(__file__).resolve().parent.parent / "fixtures"


def read(name: str, fmt: str, data: bytes | None = None) -> StructuredResult:
    raw = data if data is not None else (FIX / name).read_bytes()
    return read_scheduler(raw, fmt, name, job_id=None, tz=UTC)


def kinds(res: StructuredResult, kind: str) -> list[Event]:
    return [e for e in res.events if e.kind == kind]


# --------------------------------------------------------------------------
# kubectl get / kubectl events tables
# --------------------------------------------------------------------------


def test_events_rows_pasted_without_their_header() -> None:
    # FederatedAI/KubeFATE#64 (https://github.com/FederatedAI/KubeFATE/issues/64), the reporter's `kubectl get
    # events` block (the same file as tests/wild/sw-k8s-evicted-memorypressure-kubefate): the egg pod evicted for
    # memory, twice (`low on resource: memory`, then `[MemoryPressure]`).
    res = read("scheduler/kubectl-events-kubefate-64.txt", "k8s-table")
    events = kinds(res, "k8s.event")
    assert [(e.fields["reason"], e.fields.get("due_to")) for e in events] == [
        ("Evicted", "memory_limit"), ("Killing", None), ("ExceededGracePeriod", None), ("Scheduled", None),
        ("Evicted", "memory_limit")]
    assert events[0].fields["object_kind"] == "Pod" and events[0].fields["type"] == "Warning"
    assert events[0].time is None  # `4m11s` is an age, not a time
    assert res.issues == []


def test_kubectl_events_table_with_its_header() -> None:
    # kubectl 1.32.4 `kubectl events -A` (run here) over tests/fixtures/scheduler/events.yaml: `LAST SEEN` holds
    # `31d (x3 over 31d)`, the object column is `Node/node-02`.
    res = read("scheduler/kubectl-events-A-events-yaml.txt", "k8s-table")
    by_reason = {e.fields["reason"]: e for e in kinds(res, "k8s.event")}
    assert set(by_reason) == {"BackOff", "NodeNotReady", "EvictedDueToPodsReadyTimeout"}
    nnr = by_reason["NodeNotReady"]
    assert (nnr.node, nnr.fields["due_to"], nnr.fields["object_kind"]) == ("node-02", "node_failure", "Node")
    assert "due_to" not in by_reason["BackOff"].fields  # a symptom's reason names no cause
    assert res.hosts == {"node-02"}


def test_get_nodes_and_pods_a_lost_node_and_its_unknown_pod() -> None:
    # kubernetes/kubernetes#50127 (https://github.com/kubernetes/kubernetes/issues/50127): `kubectl get nodes` with
    # 10.6.0.188 NotReady after a reboot, then `kubectl get pods -o wide` with its pod `Unknown`.
    res = read("scheduler/kubectl-get-nodes-pods-50127.txt", "k8s-table")
    [down] = kinds(res, "sched.node_down")
    assert (down.node, down.fields["host"], down.fields["reason"]) == ("10.6.0.188", "10.6.0.188", "NotReady")
    [pod] = kinds(res, "k8s.pod")  # the two Running pods are no end
    assert (pod.fields["pod"], pod.node, pod.fields["reason"], pod.fields["due_to"]) == (
        "nginx-dm-2214564181-677db", "10.6.0.188", "Unknown", "node_failure")
    # The command lines between the tables are no rows.
    assert res.hosts == {"10.6.0.187", "10.6.0.188"}


def test_get_pods_oomkilled_with_restarts() -> None:
    # hmcts/cnp-flux-config#28772 (https://github.com/hmcts/cnp-flux-config/pull/28772): `STATUS OOMKilled`,
    # `RESTARTS 4 (57s ago)` (a cell with spaces).
    [pod] = kinds(read("scheduler/kubectl-get-pods-oomkilled-28772.txt", "k8s-table"), "k8s.pod")
    assert (pod.fields["reason"], pod.fields["due_to"]) == ("OOMKilled", "memory_limit")


def test_a_cordoned_node_and_a_running_pod_are_no_failure() -> None:
    # Near miss: kubernetes/kubernetes#38529 (https://github.com/kubernetes/kubernetes/issues/38529), its `kubectl
    # get nodes` header and master row: `Ready,SchedulingDisabled` is a cordon, not a lost node.
    table = (b"NAME                           STATUS                     AGE\n"
             b"kubernetes-master              Ready,SchedulingDisabled   3d\n")
    res = read("t.txt", "k8s-table", data=table)
    assert res.events == [] and res.hosts == {"kubernetes-master"}


def test_pods_rows_pasted_without_their_header() -> None:
    # LibreTexts/metalc#133 (https://github.com/LibreTexts/metalc/issues/133): `kubectl get pods -A -o wide | grep
    # Evict`, no header; kubernetes/kubernetes#105467 (https://github.com/kubernetes/kubernetes/issues/105467): a
    # grep of `-A -o wide` with a Running row, a pod on its way (the near miss).
    rows = (b"spicy@rooster:~$ kubectl get pods -A -o wide | grep Evict\n"
            b"binderhub        binder-7c5df8bbf6-2vqvt                                     0/1     Evicted    0   "
            b"       38d     <none>           chick18   <none>           <none>\n"
            b"kube-system   istio-cni-node-btrxw                                 1/1  Running                      0"
            b"              13d    10.128.6.133   192.168.250.5  \n")
    res = read("t.txt", "k8s-table", data=rows)
    [pod] = kinds(res, "k8s.pod")
    assert (pod.fields["pod"], pod.fields["due_to"], pod.node) == ("binder-7c5df8bbf6-2vqvt", "eviction", "chick18")
    assert res.hosts == {"chick18"}


def test_text_that_is_no_table_is_said() -> None:
    res = read("t.txt", "k8s-table", data=b"The connection to the server localhost:8080 was refused\n")
    assert res.events == [] and len(res.issues) == 1 and "no kubectl table" in res.issues[0].message


# --------------------------------------------------------------------------
# kubectl describe
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "pod", "node"),
    [
        # derailed/k9s#174 (https://github.com/derailed/k9s/issues/174), `kubectl describe pod` of an evicted pod.
        ("kubectl-describe-pod-k9s-174.txt", "proprietary-crawler-preemptive-79f7cbc6cf-rzck9",
         "gke-general-preemptible-40c94gb-pool-35dd7b4d-mv7w"),
        # Greenstand/treetracker-infrastructure#49: the message wrapped mid-word (`which e` / `xceeds`).
        ("kubectl-describe-pod-treetracker-49.txt", "treetracker-pgpool-598947fd8f-vzvkq",
         "cloud-services-node-pool-8ld4g"),
        # kubeflow/trainer#301 (tests/wild/sw-k8s-evicted-node-memory-tfjob): the reporter's elided block, its
        # Name only on the command line.
        ("kubectl-describe-pod-tfjob-301.txt", "agents-ppo-ant-feedforward-93168c9e-master-3ti2-0-9st9r", None),
    ],
)
def test_describe_pod_evicted_for_memory(name: str, pod: str, node: str | None) -> None:
    res = read(f"scheduler/{name}", "k8s-describe")
    [ev] = kinds(res, "k8s.pod")
    assert (ev.fields["pod"], ev.node, ev.fields["reason"], ev.fields["phase"]) == (pod, node, "Evicted", "Failed")
    assert (ev.fields["due_to"], ev.fields["pressure"]) == ("memory_limit", "memory")
    assert str(ev.fields["message"]).startswith("The node was low on resource: memory.")
    assert "IP" not in str(ev.fields["message"]) and "..." not in str(ev.fields["message"])


def test_describe_pod_last_state_oomkilled() -> None:
    # kubectl 1.32.4 `kubectl describe pod -n team-a llama-pretrain-worker-1` (run here) over
    # tests/fixtures/scheduler/pods.yaml: `State: Waiting / CrashLoopBackOff`, `Last State: Terminated / OOMKilled
    # / Exit Code: 137` (the form gimlet-io/gimlet#649 quotes).
    [ev] = kinds(read("scheduler/kubectl-describe-pod-pods-yaml-worker-1.txt", "k8s-describe"), "k8s.pod")
    assert (ev.fields["reason"], ev.fields["due_to"], ev.fields["exit_code"], ev.fields["signal"]) == (
        "OOMKilled", "memory_limit", 137, 9)
    assert ev.fields["restart"] is True and ev.node == "node-02" and ev.fields["container"] == "pytorch"
    assert ev.time == datetime(2026, 11, 2, 10, 2, 58, tzinfo=UTC)
    # The same pod from its object (kube.py) says the same.
    [obj] = [e for e in read("scheduler/pods.yaml", "k8s-pods").events if e.kind == "k8s.pod"
             and e.fields["pod"] == "llama-pretrain-worker-1" and e.fields.get("container") == "pytorch"]
    assert {k: obj.fields[k] for k in ("reason", "due_to", "exit_code", "restart")} == {
        k: ev.fields[k] for k in ("reason", "due_to", "exit_code", "restart")} and obj.time == ev.time


def test_describe_node_not_ready() -> None:
    # kubectl 1.32.4 `kubectl describe node gpu-node-04` (run here; the recorded node of
    # tests/fixtures/kube-nodes): `Ready  Unknown ... NodeStatusUnknown  Kubelet stopped posting node status.`
    res = read("scheduler/kubectl-describe-node-gpu-node-04.txt", "k8s-describe")
    [down] = kinds(res, "sched.node_down")
    assert (down.node, down.fields["host"]) == ("gpu-node-04", "gpu-node-04")
    assert down.fields["reason"] == "Ready=Unknown NodeStatusUnknown Kubelet stopped posting node status."
    assert down.time == datetime(2026, 12, 1, 9, 13, 10, tzinfo=UTC)  # the Ready condition's transition
    # MemoryPressure False is fine, and `Events: <none>` has no rows.
    assert len(res.events) == 1


def test_describe_node_conditions_without_the_nodes_name_still_lose_a_node() -> None:
    # kubernetes/kubernetes#36273 (https://github.com/kubernetes/kubernetes/issues/36273), the posted Conditions
    # block alone ("I just found a cluster like this"): Ready Unknown, NodeStatusUnknown. The heartbeat column says
    # it is a node's table; which node, the block does not say, so the event names none.
    res = read("scheduler/kubectl-describe-node-conditions-36273.txt", "k8s-describe")
    [down] = res.events
    assert (down.kind, down.node, "host" in down.fields) == ("sched.node_down", None, False)
    assert down.fields["reason"] == "Ready=Unknown NodeStatusUnknown Kubelet stopped posting node status."
    assert down.time == datetime(2016, 11, 3, 12, 19, 12, tzinfo=UTC) and res.hosts == set()
    # Near miss: kubernetes/kubernetes#73397 (https://github.com/kubernetes/kubernetes/issues/73397), the block its
    # reporter expected: a stale OutOfDisk Unknown, but Ready True. A node that is Ready was not lost.
    res = read("scheduler/kubectl-describe-node-conditions-73397.txt", "k8s-describe")
    assert res.events == [] and len(res.issues) == 1


# --------------------------------------------------------------------------
# Objects: pods, nodes, events (kube.py) through the same table
# --------------------------------------------------------------------------


def test_pod_without_a_reason_but_a_disruption_target() -> None:
    # kubernetes/kubernetes#105467 (https://github.com/kubernetes/kubernetes/issues/105467), a comment's `kubectl
    # get pod -o yaml`: an evicted pod with no status.reason; its DisruptionTarget condition (TerminationByKubelet,
    # ephemeral-storage) says why.
    [ev] = read("scheduler/pod-status-disruption-105467.yaml", "k8s-pods").events
    assert (ev.kind, ev.fields["reason"], ev.fields["due_to"], ev.fields["pressure"]) == (
        "k8s.pod", "TerminationByKubelet", "eviction", "ephemeral-storage")
    assert ev.time == datetime(2025, 5, 29, 7, 30, 2, tzinfo=UTC)


def test_a_nodelist_gives_its_lost_node_only() -> None:
    # tests/fixtures/kube-nodes/nodes.json (its README): gpu-node-04 Ready Unknown; gpu-node-03 cordoned but Ready.
    res = read("kube-nodes/nodes.json", "k8s-pods")
    down = kinds(res, "sched.node_down")
    assert [(e.node, e.fields["host"]) for e in down] == [("gpu-node-04", "gpu-node-04")]
    assert "NodeStatusUnknown" in str(down[0].fields["reason"])
    assert res.hosts == {f"gpu-node-0{i}" for i in range(1, 6)} and res.issues == []


def test_pod_objects_get_the_tables_reason() -> None:
    res = read("scheduler/pods.yaml", "k8s-pods")
    due = {(e.fields["pod"], e.fields.get("container")): e.fields.get("due_to") for e in res.events}
    assert due[("llama-pretrain-worker-1", "pytorch")] == "memory_limit"  # OOMKilled
    assert due[("llama-pretrain-worker-2", None)] == "memory_limit"  # Evicted, low on memory
    assert due[("llama-pretrain-worker-0", "pytorch")] is None  # Error: the container's own


def test_objects_pasted_under_their_commands_are_read_one_output_at_a_time() -> None:
    # Two outputs in one file, each under the command that printed it (the prompt as LibreTexts/metalc#133 posted
    # it, `spicy@rooster:~$`): the YAML of kubernetes/kubernetes#105467 (above) and the JSON of
    # tests/fixtures/kube-nodes/nodes.json. Neither parses with the other or with a command line in it; each is
    # read on its own, its lines numbered in the file.
    yaml_part = (FIX / "scheduler/pod-status-disruption-105467.yaml").read_bytes()
    json_part = (FIX / "kube-nodes/nodes.json").read_bytes()
    data = (b"spicy@rooster:~$ kubectl get pod -o yaml\n" + yaml_part.rstrip(b"\n") + b"\n"
            b"spicy@rooster:~$ kubectl get nodes -o json\n" + json_part)
    res = read("two.txt", "k8s-pods", data=data)
    assert res.issues == []
    [pod] = kinds(res, "k8s.pod")
    assert pod.fields["reason"] == "TerminationByKubelet"
    alone = read("scheduler/pod-status-disruption-105467.yaml", "k8s-pods").events[0]
    assert pod.evidence.line == (alone.evidence.line or 0) + 1
    assert [e.node for e in kinds(res, "sched.node_down")] == ["gpu-node-04"]
    # Near miss: the same file without its command lines is one broken document.
    bare = read("two.txt", "k8s-pods", data=yaml_part.rstrip(b"\n") + b"\n" + json_part)
    assert bare.events == [] and len(bare.issues) == 1


def test_kubectl_status_of_a_container_its_runtime_gave_no_reason() -> None:
    # kubectl's printPod (kubernetes pkg/printers/internalversion/printers.go): `Signal:%d` where the terminated
    # state names a signal, else `ExitCode:%d` (synthetic rows in `kubectl get pods -o wide`'s layout); an init
    # container's `Init:ExitCode:1` is the pod on its way (the near miss).
    table = (b"NAME          READY   STATUS          RESTARTS   AGE   IP           NODE\n"
             b"train-w-0     0/1     ExitCode:137    0          5m    10.0.0.12    gpu-node-3\n"
             b"train-w-1     0/1     Signal:9        0          5m    10.0.0.13    gpu-node-4\n"
             b"train-w-2     0/1     ExitCode:1      0          5m    10.0.0.14    gpu-node-5\n"
             b"train-w-3     0/1     Init:ExitCode:1 0          5m    10.0.0.15    gpu-node-6\n")
    pods = {e.fields["pod"]: (e.node, e.fields.get("exit_code"), e.fields.get("signal"), e.fields.get("due_to"))
            for e in kinds(read("t.txt", "k8s-table", data=table), "k8s.pod")}
    assert pods == {"train-w-0": ("gpu-node-3", 137, 9, None), "train-w-1": ("gpu-node-4", None, 9, None),
                    "train-w-2": ("gpu-node-5", 1, None, None)}
