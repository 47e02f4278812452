"""Other schedulers' records and Kubernetes' text forms, through the whole engine: the existing rules decide.

The records are the posted outputs of tests/fixtures/scheduler (each test of tests/extract/test_batch.py and
test_kubetext.py names its thread); the expected verdicts are those threads' causes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler"


def _verdict(make_bundle: BundleMaker, fixture: str, fmt: str, *, job_id: str = "t", nodes: list[str] | None = None,
             window: dict[str, str] | None = None, app: str | None = None, name: str = "b") -> Any:
    wl: dict[str, Any] = {"id": job_id, "scheduler": "static", "nodes": nodes or []}
    if window:
        wl["window"] = window
    sources: list[dict[str, str]] = [{"kind": "scheduler", "path": "sched/record.txt", "format": fmt}]
    files: dict[str, str | bytes] = {"sched/record.txt": (FIX / fixture).read_bytes()}
    if app is not None:
        sources.append({"kind": "application", "path": "job.out"})
        files["job.out"] = app
    root = make_bundle(files, {"apiVersion": "firstfault/v1", "workload": wl, "sources": sources}, name=name)
    return Analyzer().analyze_path(str(root))


@pytest.mark.parametrize(
    ("fixture", "fmt", "job_id", "outcome", "category"),
    [
        ("qacct-h_rt-babs.txt", "sge-qacct", "9638568", "timeout", "scheduler.time_limit"),
        ("qstat-fx-griffith-49223.txt", "pbs-qstat", "49223", "timeout", "scheduler.time_limit"),
        ("pbs-server-log-cbio-403.txt", "pbs-tracejob", "7082041", "cancelled", "scheduler.cancelled.by_root"),
        ("bhist-l-hbs-memlimit.txt", "lsf-bhist", "t", "out_of_memory", "host.oom"),
        ("bacct-l-gc3pie-3224113.txt", "lsf-bhist", "3224113", "cancelled", "scheduler.cancelled"),
        ("flux-eventlog-sched-805.json", "flux-jobs", "t", "timeout", "scheduler.time_limit"),
        ("kubectl-get-pods-oomkilled-28772.txt", "k8s-table", "t", "failed", "host.oom"),
        ("kubectl-events-kubefate-64.txt", "k8s-table", "t", "unknown", "host.oom"),  # events say no end state
        ("kubectl-describe-pod-treetracker-49.txt", "k8s-describe", "t", "failed", "host.oom"),
        ("pod-status-disruption-105467.yaml", "k8s-pods", "t", "failed", "scheduler.evicted"),
        # the job's own set-up (a weak cause, standing where nothing stronger does)
        ("qacct-failed28-smrt-213.txt", "sge-qacct", "24930", "failed", "app.exception.setup"),
    ],
)
def test_a_schedulers_record_decides_through_the_rules(make_bundle: BundleMaker, fixture: str, fmt: str,
                                                       job_id: str, outcome: str, category: str) -> None:
    v = _verdict(make_bundle, fixture, fmt, job_id=job_id)
    assert v.outcome == outcome
    assert v.root_cause is not None and v.root_cause.category == category


def test_a_lost_node_a_record_names_is_that_node(make_bundle: BundleMaker) -> None:
    # flux jobs: `node-failure  node failure on elcap8767 (shell rank 1127)` (flux-framework/flux-core#6653).
    v = _verdict(make_bundle, "flux-jobs-node-failure-6653.txt", "flux-jobs", job_id="fdFmCpYwQZ5",
                 nodes=["elcap8766", "elcap8767"])
    assert (v.outcome, v.attributed_domain) == ("node_fail", "infrastructure")
    assert v.root_cause is not None and v.root_cause.category == "node.unreachable"
    assert v.affected_nodes == ["elcap8767"]
    # kubectl describe node: Ready Unknown.
    v = _verdict(make_bundle, "kubectl-describe-node-gpu-node-04.txt", "k8s-describe",
                 nodes=["gpu-node-03", "gpu-node-04"], name="k8s",
                 window={"start": "2026-12-01T09:00:00Z", "end": "2026-12-01T10:00:00Z"})
    assert v.root_cause is not None and (v.root_cause.category, v.affected_nodes) == (
        "node.unreachable", ["gpu-node-04"])


@pytest.mark.parametrize(
    ("fixture", "fmt", "job_id", "outcome"),
    [
        ("qacct-canu-1279.txt", "sge-qacct", "3192235", "failed"),  # exit 1: the job's own error
        ("qstat-f-torque-mavis-48.txt", "pbs-qstat", "48", "failed"),  # killed by no limit
        ("bjobs-l-gc3pie-131851.txt", "lsf-bjobs", "131851", "succeeded"),
        ("flux-eventlog-raw-5300.txt", "flux-jobs", "t", "succeeded"),
    ],
)
def test_a_record_without_a_schedulers_reason_names_no_cause(make_bundle: BundleMaker, fixture: str, fmt: str,
                                                             job_id: str, outcome: str) -> None:
    v = _verdict(make_bundle, fixture, fmt, job_id=job_id)
    assert v.outcome == outcome and v.root_cause is None
    assert v.attributed_domain == ("none" if outcome == "succeeded" else "unknown")


def test_the_schedulers_word_in_the_jobs_output_ends_the_job(make_bundle: BundleMaker) -> None:
    # marbl/canu#444's mhap task (tests/wild/sch-lsf-term-runlimit-default-hour-canu): LSF's job report only.
    report = ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n"
              "Exited with exit code 140.\n")
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "t", "scheduler": "static", "nodes": []},
          "sources": [{"kind": "application", "path": "job.out"}]}
    v = Analyzer().analyze_path(str(make_bundle({"job.out": report}, wl)))
    assert (v.outcome, v.root_cause.category if v.root_cause else None) == ("timeout", "scheduler.time_limit")
    # LSF's owner kill in the output: the job was cancelled.
    v = Analyzer().analyze_path(str(make_bundle({"job.out": "TERM_OWNER: job killed by owner.\n"}, wl, name="c")))
    assert (v.outcome, v.root_cause.category if v.root_cause else None) == ("cancelled", "scheduler.cancelled")


@pytest.mark.parametrize(
    ("fixture", "outcome", "category"),
    [
        # LSF's report in the job's output is the job's record: a report that says the job completed is `none`
        # whatever else the output holds; one of LSF's run limit is the time limit.
        ("lsf-report-done-dtu-example3.txt", "succeeded", None),
        ("lsf-report-runlimit-deeplearningproject.txt", "timeout", "scheduler.time_limit"),
        ("lsf-report-exit120-myretuen.txt", "failed", None),
    ],
)
def test_lsf_report_in_the_jobs_output(make_bundle: BundleMaker, fixture: str, outcome: str,
                                        category: str | None) -> None:
    wl = {"id": "t", "scheduler": "static"}
    root = make_bundle({"job.out": (FIX / fixture).read_bytes()},
                       {"apiVersion": "firstfault/v1", "workload": wl,
                        "sources": [{"kind": "application", "path": "job.out"}]}, name=fixture.split(".")[0])
    v = Analyzer().analyze_path(str(root))
    assert v.outcome == outcome
    assert (v.root_cause.category if v.root_cause else None) == category
