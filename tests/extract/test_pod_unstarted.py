"""A pod the kubelet could not start (its sandbox, the sandbox's network, its volumes, its devices) is a failure of the
attempt, not a run that went well (docs/verdict.md, "A run whose end is not shown"): catalog/scheduler.yaml `unstarted`
rows, extract/reasons.py k8s_unstarted, the symptom sym-pod-unstarted; and the CNI's own words in the kubelet's
FailedCreatePodSandBox event are the node's pod network (catalog/platform.yaml `container_errors`, the CNI rows:
node.container on the pod's node, node-container-retried).

Sources of the lines: the kubelet's events (kubernetes/kubernetes pkg/kubelet/events/event.go reasons,
kuberuntime_manager.go `Failed to create pod sandbox: %v`, before `Failed create pod sandbox: %v`), the runtimes'
wrappers (containerd internal/cri/server/sandbox_run.go, dockershim docker_sandbox.go, CRI-O
server/sandbox_network.go) and the CNIs' own errors (each row's `printed_by`), as the threads posted them:
k8snetworkplumbingwg/multus-cni#641, k8snetworkplumbingwg/sriov-cni#208,
k8snetworkplumbingwg/sriov-network-device-plugin#388, cilium/cilium#9793; Calico's IPAM message as its
troubleshooting pages quote it; the DRA driver's FailedPrepareDynamicResources as
kubernetes-sigs/dra-driver-nvidia-gpu's docs print it. Each test names its source.
"""

from __future__ import annotations

import copy
from datetime import UTC

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.container import container_fields
from firstfault.extract.reasons import k8s_unstarted
from firstfault.extract.scheduler import read_scheduler
from firstfault.model import Event
from tests.conftest import WORKLOAD, BundleMaker

HEADER = ("Events:\n  Type     Reason                  Age   From               Message\n"
          "  ----     ------                  ----  ----               -------\n")
SCHEDULED = ("  Normal   Scheduled               36s   default-scheduler  Successfully assigned "
             "default/train-0 to gpu-node-3\n")


def describe(text: str) -> list[Event]:
    return read_scheduler(text.encode(), "k8s-describe", "describe.txt", job_id=None, tz=UTC).events


def unstarted(events: list[Event]) -> list[str]:
    return [str(e.fields["reason"]) for e in events if e.kind == "k8s.event" and e.fields.get("unstarted")]


def analyze(make_bundle: BundleMaker, text: str) -> tuple[str, str | None, list[str], list[str]]:
    # as the threads' bundles are: no window, no nodes, the end not recorded
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"] = {"id": "77", "scheduler": "static"}
    wl["sources"] = [{"kind": "scheduler", "path": "logs/describe.txt", "format": "k8s-describe"}]
    v = Analyzer().analyze_path(str(make_bundle({"logs/describe.txt": text}, wl)))
    return (v.attributed_domain, v.root_cause.category if v.root_cause else None,
            v.root_cause.nodes if v.root_cause else [], [s.category for s in v.symptoms])


# ---------------------------------------------------------------- the words


@pytest.mark.parametrize("word", ["FailedCreatePodSandBox", "NetworkNotReady", "FailedCreatePodContainer",
                                  "FailedMount", "FailedAttachVolume", "FailedMapVolume",
                                  "FailedPrepareDynamicResources"])
def test_the_kubelets_start_failures_are_unstarted(word: str) -> None:
    assert k8s_unstarted(word, "some message no row reads")
    assert not k8s_unstarted(word, "some message no row reads", read=True)


# near misses: the kubelet's other pod events (a sandbox's status query, a sync, a container's own `Failed`, a hook of
# a container that ran, the scheduler's wait, which is `pending`'s), and a word in another case
@pytest.mark.parametrize("word", ["FailedPodSandBoxStatus", "FailedSync", "Failed", "FailedPostStartHook",
                                  "FailedScheduling", "BackOff", "Started", "failedmount", None])
def test_other_events_are_not(word: str | None) -> None:
    assert not k8s_unstarted(word, "some message")


# ---------------------------------------------------------------- the reader


# kubernetes-sigs/dra-driver-nvidia-gpu's docs: a DRA claim its kubelet plugin could not prepare
DRA = ("  Warning  FailedPrepareDynamicResources  22s  kubelet  Failed to prepare dynamic resources: prepare dynamic "
       "resources: NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline exceeded\n")
# a sandbox whose runtime timed out (containerd's CRI deadline): no CNI's or runtime's words the catalog reads
SANDBOX = ("  Warning  FailedCreatePodSandBox  35s   kubelet            Failed to create pod "
           "sandbox: rpc error: code = "
           "DeadlineExceeded desc = context deadline exceeded\n")


def test_an_unread_start_failure_is_marked() -> None:
    assert unstarted(describe(HEADER + SCHEDULED + DRA)) == ["FailedPrepareDynamicResources"]
    assert unstarted(describe(HEADER + SCHEDULED + SANDBOX)) == ["FailedCreatePodSandBox"]


def test_a_later_start_clears_it() -> None:
    later = ("  Normal   Pulled                  20s   kubelet            Container image "
             "\"busybox\" already present on "
             "machine\n  Normal   Created                 20s   kubelet            Created container train\n")
    assert unstarted(describe(HEADER + SCHEDULED + SANDBOX + later)) == []


def test_the_scheduled_event_alone_does_not_clear_it() -> None:
    # `Scheduled` comes before the sandbox: the pod placed, not started
    assert unstarted(describe(HEADER + SCHEDULED + SANDBOX)) == ["FailedCreatePodSandBox"]


def test_a_message_the_catalog_reads_stands_for_it() -> None:
    # NVIDIA/k8s-device-plugin#479: the runtime's words (container_errors) are the event's reading, not a bare symptom
    row = ("  Warning  FailedCreatePodSandBox  5s    kubelet            Failed to create pod "
           "sandbox: rpc error: code = "
           "Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured\n")
    events = describe(HEADER + SCHEDULED + row)
    assert unstarted(events) == []
    assert [e.fields["error"] for e in events if e.kind == "container.error"] == ["node"]


# ---------------------------------------------------------------- the CNI's words


MULTUS_641 = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to set up "
              "sandbox container \"9f53\" "
              "network for pod \"xxx-86pk5\": networkPlugin cni failed to set up pod \"xxx-c02-86pk5_xxx\" network: "
              "Multus: [xxx/xxx]: error loading k8s delegates k8s args: TryLoadPodDelegates: error in getting k8s "
              "network for pod: GetNetworkDelegates: failed getting the delegate: GetCNIConfig: err in "
              "GetCNIConfigFromFile: No networks found in /etc/cni/multus/net.d")
SRIOV_208 = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup "
             "network for sandbox \"9489\": "
             "[default/samplepod:sriov-net]: error adding container to network \"sriov-net\": SRIOV-CNI failed to "
             "configure VF \"failed to set vf 2 vlan: operation not supported\"")
DP_388 = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to set up sandbox container \"cff5\" "
          "network for pod \"virt-launcher-vmi-sriov-rd7f6\": networkPlugin cni failed to set up pod "
          "\"virt-launcher-vmi-sriov-rd7f6_default\" network: Multus: [default/virt-launcher-vmi-sriov-rd7f6]: error "
          "loading k8s delegates k8s args: TryLoadPodDelegates: error in getting k8s network for pod: "
          "GetNetworkDelegates: failed getting the delegate: getKubernetesDelegate: failed to get a ResourceClient "
          "instance: getKubeletClient: error getting pod resources from client: getPodResources: failed to list pod "
          "resources, &{0xc000132a80}.Get(_) = _, rpc error: code = Unimplemented desc = unknown service "
          "v1.PodResourcesLister")
CILIUM_9793 = ("(combined from similar events): Failed create pod sandbox: rpc error: code = Unknown desc = failed to "
               "set up sandbox container \"49a1\" network for pod \"coredns-5c98db65d4-h5vwr\": NetworkPlugin cni "
               "failed to set up pod \"coredns-5c98db65d4-h5vwr_kube-system\" network: unable to allocate IP via local "
               "cilium agent: [POST /ipam][502] postIpamFailure  range is full")
CALICO = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"XXX\": "
          "failed to request 1 IPv4 addresses. IPAM allocated only 0")
CALICO_OLD = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create pod network sandbox "
              "k8s_vpn-89998f945-w9r9r_kube-system_643f(1dfa): error adding container to network \"k8s-pod-network\": "
              "Failed to request 1 IPv4 addresses. IPAM allocated only 0.")
HOST_LOCAL = ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup "
              "network for sandbox \"a1\": "
              "plugin type=\"bridge\" failed (add): failed to allocate for range 0: no IP addresses available in range "
              "set: 10.244.1.1-10.244.1.254")
NOT_READY = ("network is not ready: container runtime network not ready: NetworkReady=false "
             "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized")


@pytest.mark.parametrize(("message", "runtime"), [
    (MULTUS_641, "cni"), (SRIOV_208, "sriov-cni"), (DP_388, "multus"), (CILIUM_9793, "cilium-cni"),
    (CALICO, "calico"), (CALICO_OLD, "calico"), (HOST_LOCAL, "host-local"), (NOT_READY, "kubelet"),
])
def test_the_cnis_words_are_the_nodes(message: str, runtime: str) -> None:
    fields = container_fields(message)
    assert fields is not None
    assert (fields["error"], fields["runtime"], fields.get("reported_by")) == (
        "node", runtime, None if message is NOT_READY else "kubelet")


@pytest.mark.parametrize("message", [
    # the runtimes' wrappers with a CNI error no row reads: the sandbox got no network, why not said
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"a1\": "
    "plugin type=\"flannel\" failed (add): open /run/flannel/subnet.env: no such file or directory",
    "failed to create pod network sandbox k8s_x_default_1(ab): error adding pod default_x to CNI network \"weave\": "
    "unable to allocate IP address: Post \"http://127.0.0.1:6784/ip/ab\": dial tcp 127.0.0.1:6784: connect: "
    "connection refused",
    "failed to set up sandbox container \"ab\" network for pod \"x\": networkPlugin cni failed to set up pod \"x\" "
    "network: failed to find plugin \"loopback\" in path [/opt/cni/bin]",
])
def test_a_wrapper_alone_says_only_that_it_did_not_start(message: str) -> None:
    fields = container_fields(message)
    assert fields is not None and fields["error"] == "start"


@pytest.mark.parametrize("line", [
    # the node condition's and the kubelet's own log of a node whose CNI is not up yet (every node says it at boot)
    "Ready  False  Mon, 11 Mar 2024 10:00:00 +0000  KubeletNotReady  container runtime network not ready: "
    "NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
    "E0311 10:00:00.000000 812 kubelet.go:2855] \"Container runtime network not ready\" "
    "networkReady=\"NetworkReady=false "
    "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"",
    # the same words in lower case from another program (a lowercase libcni clone), and an INI tool's warning
    "no networks found in /etc/cni/net.d",
    "Warning: no networks found in regions.ini",
])
def test_near_misses_are_no_cni_error(line: str) -> None:
    assert container_fields(line) is None


# ---------------------------------------------------------------- the verdict


def test_a_start_that_failed_for_no_reason_named_is_no_none(make_bundle: BundleMaker) -> None:
    domain, category, _, symptoms = analyze(make_bundle, HEADER + SCHEDULED + DRA)
    assert (domain, category, symptoms) == ("unknown", None, ["container.start_failed"])


def test_a_start_that_got_past_is_none(make_bundle: BundleMaker) -> None:
    later = "  Normal   Started                 20s   kubelet            Started container train\n"
    domain, _, _, symptoms = analyze(make_bundle, HEADER + SCHEDULED + SANDBOX + later)
    assert (domain, symptoms) == ("none", [])


@pytest.mark.parametrize("message", [MULTUS_641, SRIOV_208, DP_388, CALICO])
def test_the_cnis_error_is_the_nodes_plumbing(make_bundle: BundleMaker, message: str) -> None:
    row = f"  Warning  FailedCreatePodSandBox  35s   kubelet, gpu-node-3  {message}\n"
    domain, category, nodes, _ = analyze(make_bundle, HEADER + SCHEDULED + row)
    assert (domain, category, nodes) == ("infrastructure", "node.container", ["gpu-node-3"])
