"""A cloud taking a VM back, in its own words and the guest's (catalog/scheduler.yaml, extract/jobend.py,
extract/endstate.py; rule scheduler-preempted-node): per provider a bundle whose notice is on node-02 and whose other
ranks report NCCL errors is `scheduler.preempted` on node-02 with the NCCL errors its symptoms; and the near misses
(a rebalance recommendation, a live migration, a person's power-key press, prose or a rule's pattern quoting the
notice) name no preemption.

Lines marked with a thread are verbatim from that public report; lines marked with a source file or a document follow
its format (the host names and times are this bundle's).
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Event
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers
from tests.extract.helpers import assert_cause_with_collective_fallout


def feed(lines: list[str], node: str | None = "node-02", source: str = "syslog") -> list[Event]:
    return helpers.events(lines, source, file="nodes/node-02/syslog" if node else "cluster/nth.log", node=node)


def said(events: list[Event]) -> list[tuple[str | None, str | None, object]]:
    return [(e.fields.get("due_to"), e.fields.get("scheduler"), e.fields.get("taken"))
            for e in events if e.kind == "process.signal"]


# k8s-node-termination-handler, termination/gceTerminationHandler.go: `Handling maintenance event with state: %q`
# (glog), for the metadata's `instance/preempted` (TRUE) and `instance/maintenance-event` values.
GCE_PREEMPTED = ('I1102 10:05:00.000000       1 gceTerminationHandler.go:135] Handling maintenance event with '
                 'state: "TRUE"')
GCE_TERMINATE = ('I1102 10:05:00.000000       1 gceTerminationHandler.go:135] Handling maintenance event with '
                 'state: "TERMINATE_ON_HOST_MAINTENANCE"')
GCE_MIGRATE = ('I1102 10:05:00.000000       1 gceTerminationHandler.go:135] Handling maintenance event with '
               'state: "MIGRATE_ON_HOST_MAINTENANCE"')
# Azure Scheduled Events (learn.microsoft.com "Scheduled Events for Linux VMs", the event document's fields), as a
# poller logs the document it got.
AZURE_PREEMPT = ('2026-11-02 10:05:00,000 INFO scheduled-events: {"DocumentIncarnation": 2, "Events": [{"EventId": '
                 '"C7061BAC-AFDC-4513-B24B-AA5F13A16123", "EventStatus": "Scheduled", "EventType": "Preempt", '
                 '"ResourceType": "VirtualMachine", "Resources": ["node-02"], "NotBefore": "Mon, 02 Nov 2026 10:05:30 '
                 'GMT", "EventSource": "Platform", "DurationInSeconds": -1}]}')
AZURE_FREEZE = AZURE_PREEMPT.replace('"Preempt"', '"Freeze"').replace("-1}", "9}")
# aws/aws-node-termination-handler#1022: the handler's structured log (`INF Requesting instance drain event-id=...
# kind=ASG_LIFECYCLE node-name=...`), here with the Spot ITN kind of #146 and this bundle's node.
NTH_SPOT = ("2026/11/02 10:05:00 INF Requesting instance drain event-id=spot-itn-8f856801ec2e9f3e instance-id="
            "i-0446be825a53df123 kind=SPOT_ITN node-name=node-02 provider-id=aws:///eu-west-1a/i-0446be825a53df123")
# aws/aws-node-termination-handler#1022 verbatim: an ASG lifecycle hook (the group's own scale-in), no preemption
NTH_ASG = ("2024/06/11 19:51:13 INF Requesting instance drain event-id=asg-lifecycle-term-xxx instance-id="
           "i-0446be825a53dfxxx kind=ASG_LIFECYCLE node-name=ip-192-168-64-xx.eu-west-1.compute.internal "
           "provider-id=aws:///eu-west-1a/i-0446be825a53dfxxx")


# ---------------------------------------------------------------- each provider's notice, line by line


@pytest.mark.parametrize(
    ("line", "scheduler"),
    [
        (GCE_PREEMPTED, "gcp"),
        # k8s-node-termination-handler at start with a termination pending (`Current states: Regular: %q, PVM: %q`)
        ('I1102 10:05:00.000000       1 gceTerminationHandler.go:89] Current states: Regular: "NONE", PVM: "TRUE"',
         "gcp"),
        # GCE's metadata as its recursive JSON prints the value (`curl .../instance/?recursive=true`)
        ('  "preempted": "TRUE",', "gcp"),
        # a GCE operation's message for the preemption (gcloud compute operations describe)
        ("statusMessage: Instance was preempted.", "gcp"),
        # a preemptible VM taken back while it started, Packer's googlecompute builder quoting the operation's error
        # (hashicorp/packer#9133, verbatim)
        ("==> googlecompute: * Instance failed to start due to preemption.", "gcp"),
        (AZURE_PREEMPT, "azure"),
        # AKS's node-problem-detector: the node's VMEventScheduled condition as a public AKS write-up pastes it
        ('    message: "Preempt Scheduled : Tue, 14 May 2024 12:57:00 GMT",', "azure"),
        # the GCE audit log's system event (a spot-interruption exporter's test message copies it)
        ('      "message": "Instance was preempted."', "gcp"),
        # AWS docs, "Spot Instance interruption notices": the EventBridge event, pretty-printed
        ('    "detail-type": "EC2 Spot Instance Interruption Warning",', "aws"),
        ('        "instance-action": "terminate"', "aws"),
        # aws/aws-node-termination-handler#146 verbatim (its older log: the event's Kind and Description)
        ("2020/04/28 23:00:46 Got drain event from channel {InstanceID:i-027a7181c7dcdf2ff InstanceType:m5n.4xlarge "
         "PublicHostname: PublicIP: LocalHostname:ip-10-34-5-239.us-west-2.compute.internal LocalIP:10.34.5.239} "
         "{EventID:spot-itn-180911fc5ea28cddd3d3f22b95f796141b4573a1e4e5e39307116a034d72d18e Kind:SPOT_ITN "
         "Description:Spot ITN received. Instance will be interrupted at 2020-04-28T23:02:46.246Z", "aws"),
        (NTH_SPOT, "aws"),
        # Azure ML failing the run for its low-priority nodes taken back (MicrosoftDocs/azure-docs#66288)
        ("AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted. Check if the run has failed "
         "or restarted. Reason: Received pre-emption warning signal", "azure"),
    ],
)
def test_a_clouds_notice_is_a_preemption_of_the_node(line: str, scheduler: str) -> None:
    assert said(feed([line])) == [("preemption", scheduler, "node")]


def test_a_node_event_of_karpenter_names_the_node() -> None:
    # Karpenter's node events as `kubectl get events -A` prints them (a public EKS runbook's capture)
    line = ("20m         Warning   SpotInterrupted               node/ip-10-0-117-148.ec2.internal   Spot interruption "
            "warning was triggered")
    events = [e for e in feed([line], node=None) if e.kind == "process.signal"]
    assert [(e.fields.get("due_to"), e.fields.get("host"), e.fields.get("taken")) for e in events] == [
        ("preemption", "ip-10-0-117-148.ec2.internal", "node")]


@pytest.mark.parametrize("line", [
    # kubernetes pkg/kubelet/nodeshutdown (nodeShutdownNotAdmittedReason / Message), a pod's status in YAML
    "  message: Pod was rejected as the node is shutting down.",
    "  reason: NodeShutdown",
])
def test_the_kubelet_refusing_pods_while_the_node_shuts_down(line: str) -> None:
    assert [s[0] for s in said(feed([line]))] == ["preemption"]


@pytest.mark.parametrize("line", [
    GCE_TERMINATE,
    '  "maintenanceEvent": "TERMINATE_ON_HOST_MAINTENANCE",',
    # the older samples' spelling of the same value
    '  "maintenanceEvent": "SHUTDOWN_ON_HOST_MAINTENANCE",',
    # cloudpilot-ai/karpenter-provider-gcp#37's `gcloud compute operations list` row, with the host-maintenance type
    "systemevent-1678421521000-5f6a  compute.instances.terminateOnHostMaintenance  us-central1-a/instances/node-02  "
    "200  DONE",
])
def test_a_termination_for_host_maintenance_is_the_platforms(line: str) -> None:
    assert said(feed([line])) == [("host_maintenance", "gcp", None)]


# ---------------------------------------------------------------- near misses


@pytest.mark.parametrize("line", [
    # a live migration the VM went on through
    GCE_MIGRATE,
    '  "maintenanceEvent": "MIGRATE_ON_HOST_MAINTENANCE",',
    "systemevent-1678421521000-5f6a  compute.instances.migrateOnHostMaintenance  us-central1-a/instances/node-02  "
    "200  DONE",
    '  "preempted": "FALSE",',
    # a rebalance recommendation is a warning: nothing ended
    '    "detail-type": "EC2 Instance Rebalance Recommendation",',
    ("20m         Normal    SpotRebalanceRecommendation   node/ip-10-0-117-148.ec2.internal   Spot rebalance "
     "recommendation was triggered"),
    # Azure's freeze pauses the VM for seconds
    AZURE_FREEZE,
    '    message: "Freeze Scheduled : Tue, 14 May 2024 12:57:00 GMT",',
    NTH_ASG,
    # a zone's stock-out, Compute Engine's localized message (GoogleCloudPlatform/ai-on-gke#849): no VM was taken back
    "    message: A e2-standard-2 VM instance is currently unavailable in the europe-west4-a",
    # Cromwell's own retry setting that names the words (no operation's error)
    "    # retry when the error says 'failed to start due to preemption' (see the docs)",
    # a person's power-key press (systemd-logind's words on any machine: the ACPI soft-off GCE sends looks the same)
    "Nov  2 10:05:00 node-02 systemd-logind[812]: Power key pressed.",
    "Nov  2 10:05:00 node-02 systemd-logind[812]: Powering Off...",
    # an EventBridge rule's pattern lists the events it would match (a Terraform file's `detail-type = [...]`)
    '    detail-type = ["EC2 Spot Instance Interruption Warning"]',
    # documentation prose quoting the notice (AWS docs, "Spot Instance interruption notices")
    "The following is an example of the event for EC2 Spot Instance Interruption Warning.",
])
def test_near_misses_name_no_preemption(line: str) -> None:
    assert said(feed([line])) == []


# ---------------------------------------------------------------- through the engine

_STEPS = [f"2026-11-02 10:0{m}:00,000 INFO step {m}" for m in range(5)]
# the other ranks' watchdog, as PyTorch prints it
_TIMEOUT = ("[rank{r}]:[E1102 10:15:20.222288244 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=500045, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, "
            "Timeout(ms)=600000) ran for 600038 milliseconds before timing out.")


def _bundle(make_bundle: BundleMaker, files: dict[str, str]) -> Analyzer:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "syslog", "path": "nodes/{node}/syslog"}, {"kind": "syslog", "path": "cluster/nth.log"},
                     {"kind": "application", "path": "app/rank-{rank}.log"}]
    ranks = {f"app/rank-{r}.log": "".join(s + "\n" for s in [*_STEPS, _TIMEOUT.format(r=r)]) for r in (0, 1, 4, 5)}
    return make_bundle({**ranks, **files}, wl)


@pytest.mark.parametrize("files", [
    {"nodes/node-02/syslog": GCE_PREEMPTED + "\n"},
    {"nodes/node-02/syslog": AZURE_PREEMPT + "\n"},
    # the handler's log is the cluster's: its node-name names the node taken
    {"cluster/nth.log": NTH_SPOT + "\n"},
    {"nodes/node-02/syslog": "Nov  2 10:05:00 node-02 systemd-logind[812]: Power key pressed.\n"
                             + GCE_PREEMPTED + "\n"},
], ids=["gce", "azure", "aws-nth", "gce-with-power-key"])
def test_the_node_taken_is_the_cause_and_the_collective_errors_its_symptoms(make_bundle: BundleMaker,
                                                                          files: dict[str, str]) -> None:
    v = Analyzer().analyze_path(str(_bundle(make_bundle, files)))
    assert_cause_with_collective_fallout(v, "scheduler", "scheduler.preempted", "node-02")


def test_host_maintenance_is_the_platform_taking_the_node(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(_bundle(make_bundle, {"nodes/node-02/syslog": GCE_TERMINATE + "\n"})))
    assert v.attributed_domain == "infrastructure"
    assert v.root_cause is not None and v.root_cause.category == "node.unreachable"
    assert v.root_cause.nodes == ["node-02"]


@pytest.mark.parametrize("line", [
    GCE_MIGRATE,
    "Nov  2 10:05:00 node-02 systemd-logind[812]: Power key pressed.",
    '    "detail-type": "EC2 Instance Rebalance Recommendation",',
], ids=["live-migration", "power-key", "rebalance"])
def test_near_miss_no_preemption_through_the_engine(make_bundle: BundleMaker, line: str) -> None:
    v = Analyzer().analyze_path(str(_bundle(make_bundle, {"nodes/node-02/syslog": line + "\n"})))
    assert v.root_cause is None or v.root_cause.category != "scheduler.preempted"
    assert v.attributed_domain != "scheduler"


def test_a_spot_interruption_event_on_the_node_in_a_kubectl_events_table(make_bundle: BundleMaker) -> None:
    # `kubectl get events -A` as the orchestrator's record (k8s-table): Karpenter's events on the node it took back
    # (the rows of a public EKS runbook's capture, this bundle's node), the rebalance recommendation before it a
    # warning only. The node event names the node: scheduler.preempted on node-02.
    table = (
        "NAMESPACE   LAST SEEN   TYPE      REASON                        OBJECT         MESSAGE\n"
        "default     20m         Normal    SpotRebalanceRecommendation   node/node-02   Spot rebalance recommendation "
        "was triggered\n"
        "default     20m         Warning   SpotInterrupted               node/node-02   Spot interruption warning was "
        "triggered\n"
    )
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "scheduler", "path": "cluster/events.txt", "format": "k8s-table"},
                     {"kind": "application", "path": "app/rank-{rank}.log"}]
    ranks = {f"app/rank-{r}.log": "".join(s + "\n" for s in [*_STEPS, _TIMEOUT.format(r=r)]) for r in (0, 1, 4, 5)}
    v = Analyzer().analyze_path(str(make_bundle({**ranks, "cluster/events.txt": table}, wl)))
    assert v.attributed_domain == "scheduler"
    assert v.root_cause is not None and v.root_cause.category == "scheduler.preempted"
    assert v.root_cause.nodes == ["node-02"]
    assert {s.category: s.explained_by for s in v.symptoms}["nccl.timeout"] == "scheduler.preempted"


@pytest.mark.parametrize(("line", "vm"), [
    # cloudpilot-ai/karpenter-provider-gcp#37 verbatim: `gcloud compute operations list`, its TARGET the GKE node's VM
    ("systemevent-1746631209934-6348d44d25ec7-a6b1f0df-60d95dad  compute.instances.preempted                 "
     "us-central1-a/instances/gke-helen-c1-spot-cast-pool-df29e951           200          DONE    "
     "2025-05-07T08:20:20.201-07:00", "gke-helen-c1-spot-cast-pool-df29e951"),
    # the audit log's system event on one line (a spot-interruption exporter's test message's fields)
    ('{"methodName": "compute.instances.preempted", "resourceName": '
     '"projects/mock-project/zones/europe-west1-c/instances/node-02"}', "node-02"),
    (AZURE_PREEMPT, "node-02"),
    # near miss: an event of several resources names no one node
    (AZURE_PREEMPT.replace('["node-02"]', '["node-02", "node-03"]'), None),
])
def test_the_vm_a_clouds_record_names_is_the_node(line: str, vm: str | None) -> None:
    events = [e for e in feed([line], node=None) if e.kind == "process.signal"]
    assert [(e.fields.get("due_to"), e.fields.get("host")) for e in events] == [("preemption", vm)]


def test_a_gce_operations_listing_names_the_node_taken(make_bundle: BundleMaker) -> None:
    # the project's `gcloud compute operations list` (the listing of cloudpilot-ai/karpenter-provider-gcp#37, this
    # bundle's VM and time) kept beside the job's logs: the node it names is the cause's
    listing = ("NAME                                                       TYPE                         TARGET"
               "                          HTTP_STATUS  STATUS  TIMESTAMP\n"
               "systemevent-1793613900000-6348d44d25ec7-a6b1f0df-60d95dad  compute.instances.preempted  "
               "us-central1-a/instances/node-02  200          DONE    2026-11-02T10:05:00.000-00:00\n")
    v = Analyzer().analyze_path(str(_bundle(make_bundle, {"cluster/nth.log": listing})))
    assert v.root_cause is not None and v.root_cause.category == "scheduler.preempted"
    assert v.root_cause.nodes == ["node-02"]


@pytest.mark.parametrize(("line", "due"), [
    # ray-project/ray gcs_node_manager.cc's log past a preemption drain's deadline (Ray's log prefix; the id is Ray's)
    ("[2026-11-02 10:05:00,123 I 2041 2041] (gcs_server) gcs_node_manager.cc:425: Node "
     "4f8d1b6a9e2c0d7f3b5a1c9e8d7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b was forcibly preempted", "preemption"),
    # actor_task_submitter.cc's error message for an actor on a node drained for preemption
    ("Actor died by preemption.", "preemption"),
    # the node's death reason as `ray list nodes --detail` prints it (YAML)
    ("  death_reason: AUTOSCALER_DRAIN_PREEMPTED", "preemption"),
    # near miss: a node drained because it was idle is the autoscaler's scale-down
    ("  death_reason: AUTOSCALER_DRAIN_IDLE", None),
])
def test_ray_losing_a_node_to_preemption(line: str, due: str | None) -> None:
    got = said(feed([line], node=None, source="application"))
    assert got == ([(due, "ray", None)] if due else [])
