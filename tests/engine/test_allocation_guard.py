"""The allocation guard (issue 26, item 1): evidence is attributed only to nodes of the attempt.

Many sites keep per-host log trees under one root, so a `{node}` template finds every host's directory. A job on
node-01..04 whose tree also held nodes/node-77/kern.log with another job's Xid 79 got a verdict naming node-77
(and `scontrol update nodename=node-77 state=drain` ran): the real NVLink fault on node-02 vanished. The guard is
NodeMapper.inside (engine/normalise.py): bundle templates bind only allocation nodes (bundle.resolve_source), the
Analysis keeps out lines, documents and node activity of other hosts, and normalisation drops the events whose
node is another host's (a metric series labelled with it). What is kept out is named in `errors`.
"""

from __future__ import annotations

import copy
import shutil
from datetime import UTC, datetime
from pathlib import Path

from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import Context, workload_spec
from firstfault.extract.base import Candidate
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, XID79, BundleMaker

SHOWCASE = Path(__file__).parents[2] / "examples" / "nvlink-xid149"
# Another job's Xid 79, earlier than the showcase's NVLink fault on node-02 (10:03), in node-77's own log.
OTHER_JOBS_XID79 = ("Nov  2 10:01:00 node-77 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=123, name=python, "
                    "GPU has fallen off the bus.\n")


def _names_node(v: Verdict, node: str) -> bool:
    causes = [c for c in (v.root_cause, *v.candidates, *v.secondary_causes) if c is not None]
    return (node in v.affected_nodes or any(node in c.nodes for c in causes)
            or any(e.node == node for e in v.evidence) or any(node in s.nodes for s in v.symptoms))


def test_another_hosts_log_in_the_tree_never_becomes_the_cause(tmp_path: Path) -> None:
    b = tmp_path / "b"
    shutil.copytree(SHOWCASE, b)
    (b / "nodes" / "node-77").mkdir()
    (b / "nodes" / "node-77" / "kern.log").write_text(OTHER_JOBS_XID79)
    v = Analyzer().analyze_path(str(b))
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes, v.root_cause.devices) == (
        "gpu.nvlink.signal_integrity", ["node-02"], ["node-02/gpu3"])
    assert not _names_node(v, "node-77")
    assert [(e.source, e.file, e.message) for e in v.errors] == [
        ("kernel", "nodes/node-77/kern.log", "host 'node-77' is not in the allocation: not read")]
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert (kernel.status, kernel.nodes_seen, kernel.nodes_expected) == ("complete", 4, 4)


def test_a_directory_named_by_another_spelling_of_an_allocation_node_is_read(make_bundle: BundleMaker) -> None:
    # near miss: an FQDN (or upper-case) directory is the node it spells, bound to the allocation's name
    root = make_bundle({"nodes/NODE-02.cluster.local/kern.log": XID79})
    v = Analyzer().analyze_path(str(root))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert v.root_cause.nodes == ["node-02"] and not v.errors, v.errors
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert "node-02" not in kernel.missing_nodes


def test_the_files_of_many_other_hosts_are_named_then_counted(make_bundle: BundleMaker) -> None:
    files = {f"nodes/host-{i:02d}/kern.log": XID79.replace("node-02", f"host-{i:02d}") for i in range(30)}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is None and v.attributed_domain == "unknown"
    outside = [e for e in v.errors if "not in the allocation" in e.message or "outside the allocation" in e.message]
    assert len(outside) == 21, outside
    assert outside[-1].message == "... and 10 more file(s) of 10 host(s) outside the allocation: not read"
    assert outside[-1].file == "nodes/{node}/kern.log"


def test_no_allocation_no_guard(make_bundle: BundleMaker) -> None:
    # near miss: a static bundle that names no nodes binds every directory, as before
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["nodes"] = []
    wl["workload"].pop("ranks")
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-77/kern.log": OTHER_JOBS_XID79}, wl)))
    assert v.root_cause is not None and v.root_cause.nodes == ["node-77"]


def _context() -> Context:
    return Context.from_spec(workload_spec(WORKLOAD["workload"]))


def test_a_requests_line_from_another_host_is_kept_out() -> None:
    # The Service path: a request's line observation bound to a host outside the allocation.
    analysis = Analyzer().start(_context())
    t = datetime(2026, 11, 2, 10, 5, tzinfo=UTC)
    analysis.add_candidate(Candidate("kernel", "nodes/node-77/kern.log", 1, "node-77", None, t,
                                     XID79.replace("node-02", "node-77").rstrip("\n")))
    analysis.saw_node("node-77", t)
    v = analysis.finish()
    assert v.root_cause is None and not _names_node(v, "node-77")
    assert [(e.file, e.message) for e in v.errors] == [
        (None, "1 node activity record(s) of host 'node-77', which is not in the allocation: ignored"),
        ("nodes/node-77/kern.log", "1 line(s) of host 'node-77', which is not in the allocation: ignored")]


def test_a_requests_line_bound_to_an_allocation_node_by_its_fqdn_is_read() -> None:
    # near miss of the above
    analysis = Analyzer().start(_context())
    t = datetime(2026, 11, 2, 10, 5, tzinfo=UTC)
    analysis.add_candidate(Candidate("kernel", "k.log", 1, "node-02.cluster.local", None, t, XID79.rstrip("\n")))
    v = analysis.finish()
    assert v.root_cause is not None and v.root_cause.nodes == ["node-02"] and not v.errors


# Two lines in the form of tests/fixtures/metrics/dcgm.om (dcgm-exporter's DCGM_FI_DEV_XID_ERRORS), the Hostname
# label naming a host outside the allocation: a fleet-wide metrics file holds every host's series.
DCGM_OTHER_HOST = """# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{gpu="3",pci_bus_id="00000000:3B:00.0",device="nvidia3",Hostname="node-77"} 0 1793613600
DCGM_FI_DEV_XID_ERRORS{gpu="3",pci_bus_id="00000000:3B:00.0",device="nvidia3",Hostname="node-77"} 79 1793613630
# EOF
"""


def test_a_metric_series_of_another_host_is_kept_out(make_bundle: BundleMaker) -> None:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "metrics", "path": "metrics/dcgm.om", "format": "openmetrics"}]
    v = Analyzer().analyze_path(str(make_bundle({"metrics/dcgm.om": DCGM_OTHER_HOST}, wl)))
    assert v.root_cause is None and not _names_node(v, "node-77")
    assert any(e.file == "metrics/dcgm.om" and "event(s) of host 'node-77', which is not in the allocation" in
               e.message for e in v.errors), v.errors
    # near miss: the same series labelled with an allocation node is read
    v = Analyzer().analyze_path(str(make_bundle({"metrics/dcgm.om": DCGM_OTHER_HOST.replace("node-77", "node-02")},
                                                wl, name="inside")))
    assert v.root_cause is not None and v.root_cause.nodes == ["node-02"]


def test_a_placeholder_beside_a_star_binds_the_allocation_node_the_name_holds(make_bundle: BundleMaker) -> None:
    # `*{node}`: the star could take any head of the name; the binding taken is the one that is an allocation node
    # (greedy, it bound "2" of "site-a-node-02" before, and the file was another host's)
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "kernel", "path": "nodes/*{node}/kern.log"}]
    root = make_bundle({"nodes/site-a-node-02/kern.log": XID79, "nodes/site-a-node-77/kern.log": OTHER_JOBS_XID79},
                       wl)
    v = Analyzer().analyze_path(str(root))
    assert v.root_cause is not None and v.root_cause.nodes == ["node-02"]
    assert [(e.file, e.message) for e in v.errors] == [
        ("nodes/site-a-node-77/kern.log", "host '7' is not in the allocation: not read")]


# hmcts/cnp-flux-config#28772's pod row (https://github.com/hmcts/cnp-flux-config/pull/28772), with -o wide's IP and
# NODE as kubectl prints them (the node names are this test's): a pod that was OOMKilled, on a node of its own.
OTHER_POD = ("NAME                                                 READY   STATUS      RESTARTS      AGE     IP"
             "           NODE\n"
             "tax-tribunals-application-base-74464f6b98-2kj6g      0/1     OOMKilled   4 (57s ago)   2m40s   "
             "10.0.0.9     node-77\n")


def test_a_pod_row_naming_another_node_is_another_workloads_pod(tmp_path: Path) -> None:
    # The reason is another pod's than the workload's: the row names a node outside the allocation. Pasted into the
    # job's output on a one-node allocation it was placed on that node, a host OOM the job never had.
    b = tmp_path / "b"
    b.mkdir()
    (b / "pods.txt").write_text(OTHER_POD)
    (b / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: train\n  scheduler: static\n  nodes: [node-02]\n"
        "  terminal_state: FAILED\nsources:\n  - kind: application\n    path: pods.txt\n")
    v = Analyzer().analyze_path(str(b))
    assert v.root_cause is None and not _names_node(v, "node-77")
    # near miss: the same row on the allocation's node is the workload's pod.
    (b / "pods.txt").write_text(OTHER_POD.replace("node-77", "node-02"))
    v = Analyzer().analyze_path(str(b))
    assert v.root_cause is not None and (v.root_cause.category, v.root_cause.nodes) == ("host.oom", ["node-02"])
