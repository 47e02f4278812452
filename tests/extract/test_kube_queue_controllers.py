"""Kubernetes batch schedulers' and controllers' own words read through the one reasons table and the verdict's
reading of a run whose end is not shown: Kueue's eviction events (`EvictedDueTo` + the Evicted condition's reason,
kubernetes-sigs/kueue pkg/workload/evict/evict.go), a ClusterQueue Kueue keeps inactive for a configuration it cannot
use (pkg/cache/scheduler/clusterqueue.go inactiveReason), a controller's error record that its loop retries
(klog's, controller-runtime's zap JSON), and slurmctld's node lookup of a name it does not hold
(src/common/node_conf.c). Each test names its source.
"""

from __future__ import annotations

from datetime import UTC

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.reasons import k8s_reason, kueue_evicted, text_reasons
from firstfault.extract.scheduler import read_scheduler
from firstfault.extract.slurmerr import read_slurm_error
from firstfault.extract.traceback import controller_record
from tests.conftest import BundleMaker

# ---------------------------------------------------------------- Kueue's eviction events


@pytest.mark.parametrize(
    ("word", "due"),
    [
        ("EvictedDueToPodsReadyTimeout", "eviction"),  # kueue#2376's event
        ("EvictedDueToAdmissionCheck", "eviction"),
        ("EvictedDueToPreempted", "preemption"),
        ("EvictedDueToNodeFailures", "node_failure"),
        ("EvictedDueToDeactivatedDueToMaximumExecutionTimeExceeded", "time_limit"),
    ],
)
def test_kueues_eviction_event_reads_its_conditions_reason(word: str, due: str) -> None:
    assert kueue_evicted(word) == due
    assert k8s_reason(word, "Exceeded the PodsReady timeout ns/job")[0] == due


@pytest.mark.parametrize("word", ["QuotaReserved", "Admitted", "Pending", "EvictedDueTo", "Evictedxyz"])
def test_kueues_other_events_are_no_eviction(word: str) -> None:
    assert kueue_evicted(word) is None
    assert k8s_reason(word, "Admitted by ClusterQueue cluster-queue, wait time since reservation was 0s")[0] is None


def test_the_kubelets_evicted_word_stays_its_own() -> None:
    assert k8s_reason("Evicted", "The node was low on resource: memory.")[0] == "memory_limit"


def test_kueues_eviction_in_describe_events() -> None:
    # kubernetes-sigs/kueue#2376 (`kubectl describe workload`)
    text = ("Events:\n"
            "  Type    Reason                        Age   From                       Message\n"
            "  ----    ------                        ----  ----                       -------\n"
            "  Normal  QuotaReserved                 3m5s  kueue-admission            Quota reserved in cq\n"
            "  Normal  EvictedDueToPodsReadyTimeout  2m5s  kueue-workload-controller  Exceeded the PodsReady timeout "
            "e2e/job-high\n")
    res = read_scheduler(text.encode(), "k8s-describe", "wl.txt", job_id=None, tz=UTC)
    assert [(e.fields.get("reason"), e.fields.get("due_to")) for e in res.events if e.fields.get("due_to")] == [
        ("EvictedDueToPodsReadyTimeout", "eviction")]


# ---------------------------------------------------------------- a ClusterQueue kept inactive


@pytest.mark.parametrize(
    "message",
    [
        # headlamp-k8s/plugins#1191
        "Can't admit new workloads: references missing ResourceFlavor(s): default,spot.",
        "Can't admit new workloads: is stopped, references missing AdmissionCheck(s): prov.",
        "Can't admit new workloads: references inactive AdmissionCheck(s): dws-prov.",
        "Can't admit new workloads: Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
        "found: a,b.",
        'Can\'t admit new workloads: there is no Topology "default" for TAS flavor "tas-flavor".',
    ],
)
def test_a_clusterqueue_that_cannot_admit_for_its_configuration_is_a_placement(message: str) -> None:
    assert [h.reason for h in text_reasons(message, lines=True) if h.scheduler == "kubernetes"] == ["placement"]


@pytest.mark.parametrize(
    "message",
    [
        "Can't admit new workloads: is stopped.",  # an administrator's StopPolicy
        "Can't admit new workloads; clusterQueue is terminating",
        "ClusterQueue cluster-queue is inactive",  # the Workload's word names no reason
        "Can admit new workloads",
    ],
)
def test_a_stopped_or_unexplained_inactive_queue_is_no_placement(message: str) -> None:
    assert "placement" not in [h.reason for h in text_reasons(message)]


# ---------------------------------------------------------------- a controller's error record


KLOG_PREFILTER = ('E1116 08:24:00.746178       1 coscheduling.go:133] "PreFilter failed" err="pre-filter pod '
                  'mnist-worker-0 cannot find enough sibling pods, current pods number: 1, minMember of group: 2" '
                  'pod="kubedl/mnist-worker-0"')  # scheduler-plugins#450
BARE_PREFILTER = ('"PreFilter failed" err="pod with pgName: test/pod-group-8pvf2 last failed in 3s, deny" '
                  'pod="test/mysql-1"')  # scheduler-plugins#364
ZAP_WATCH = ('{"level":"error","ts":"2024-03-06T08:21:44.586427722Z","caller":"multikueue/multikueuecluster.go:200",'
             '"msg":"Cannot get workload key","clusterName":"w2","error":"not a jobset"}')  # kueue#1814
RECONCILER = ('E1107 10:00:01.000000       1 controller.go:329] "Reconciler error" err="Operation cannot be fulfilled" '
              'controller="pytorchjob" PyTorchJob="default/mnist"')  # controller-runtime through klog (ours)
CSI_CHECK = ('E0706 23:27:30.250532       7 driver.go:107] "GRPC error" err="rpc error: code = Internal desc = Check '
             'volume path, err: function timeout" logger="driver"')  # juicedata/juicefs-csi-driver#1640
TORCH_GLOG = ('E0612 10:00:00.123456 1234 ProcessGroupNCCL.cpp:1575] [PG 0 Rank 3] Watchdog caught collective '
              'operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out. '
              'err="x" pod="a/b"')
LOGRUS = 'time="2024-01-01T00:00:00Z" level=error msg="sync failed" pod="a/b"'
ZAP_NO_CALLER = '{"level":"error","ts":1.7e9,"msg":"Cannot get workload key","error":"not a jobset"}'


@pytest.mark.parametrize("line", [KLOG_PREFILTER, BARE_PREFILTER, ZAP_WATCH, RECONCILER])
def test_a_controllers_error_record_is_one_pass_of_its_loop(line: str) -> None:
    assert controller_record(line)


@pytest.mark.parametrize("line", [CSI_CHECK, TORCH_GLOG, LOGRUS, ZAP_NO_CALLER])
def test_a_node_agents_record_a_cpp_glog_line_or_another_logger_is_not(line: str) -> None:
    assert not controller_record(line)


_WORKLOAD = {
    "apiVersion": "firstfault/v1",
    "workload": {"id": "kc", "scheduler": "static"},  # no terminal state: the run's end is not shown
    "sources": [{"kind": "application", "path": "app/controller.log"}],
}


def _verdict(make_bundle: BundleMaker, lines: list[str]):  # type: ignore[no-untyped-def]
    return Analyzer().analyze_path(str(make_bundle({"app/controller.log": "\n".join(lines) + "\n"}, _WORKLOAD)))


@pytest.mark.parametrize("lines", [[KLOG_PREFILTER, BARE_PREFILTER], [ZAP_WATCH]])
def test_controller_records_alone_say_nothing_failed(make_bundle: BundleMaker, lines: list[str]) -> None:
    v = _verdict(make_bundle, lines)
    assert v.attributed_domain == "none"


@pytest.mark.parametrize("line", [CSI_CHECK, LOGRUS])
def test_other_error_records_alone_stay_unknown(make_bundle: BundleMaker, line: str) -> None:
    v = _verdict(make_bundle, [line])
    assert v.attributed_domain == "unknown"
    assert [u.first.text for u in v.unrecognized] == [line]


# ---------------------------------------------------------------- slurmctld's node lookup


@pytest.mark.parametrize(
    "line",
    [
        '_find_node_record: lookup failure for node "control-plane-0"',  # slurm-bridge#52, as pasted
        '[2025-06-01T10:00:00.123] error: _find_node_record: lookup failure for node "control-plane-0"',
        '[2025-06-01T10:00:00.123] error: _find_node_record: lookup failure for node "cp-0", alias "cp-0.lan"',
    ],
)
def test_slurms_node_lookup_is_understood_naming_no_cause(line: str) -> None:
    read = read_slurm_error(line, daemon_log=True)
    assert read is not None and read.row.side == "none"


def test_the_words_without_slurms_function_are_no_row() -> None:
    assert read_slurm_error('lookup failure for node "control-plane-0"') is None
    assert read_slurm_error('my_find_node_record: lookup failure for node "x"') is None
