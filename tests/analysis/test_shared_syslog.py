"""One syslog file that a collector fills from every node of the allocation (docs/evidence-bundle.md: a source
without `{node}`): each line's header names its host, and the verdict names the node the cause was on."""

from __future__ import annotations

from pathlib import Path

from firstfault.analysis.analyze import Analyzer

_HEADER = """apiVersion: firstfault/v1
workload:
  id: '77'
  name: shared-syslog
  scheduler: slurm
  window: {start: '2026-11-02T09:59:00Z', end: '2026-11-02T12:00:00Z'}
  nodes: [node-01, node-02]
  timezone: UTC
  terminal_state: FAILED
sources:
- {kind: syslog, path: 'syslog/messages'}
"""


def _bundle(root: Path, lines: list[str]) -> Path:
    (root / "syslog").mkdir(parents=True)
    (root / "workload.yaml").write_text(_HEADER, encoding="utf-8")
    (root / "syslog" / "messages").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_the_cause_is_on_the_node_its_syslog_header_names(tmp_path: Path) -> None:
    out = _bundle(tmp_path / "b", [
        "Nov  2 10:10:00 node-01 kernel: [ 100.000001] nvidia-nvlink: Nvlink Core is being initialized",
        "Nov  2 10:11:00 node-02 kernel: [ 160.000001] NVRM: Xid (PCI:0000:1b:00): 79, pid=1, name=python, "
        "GPU has fallen off the bus.",
    ])
    v = Analyzer().analyze_path(str(out))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert v.affected_nodes == ["node-02"]


def test_a_header_naming_a_host_outside_the_allocation_names_no_node(tmp_path: Path) -> None:
    out = _bundle(tmp_path / "b", [
        "Nov  2 10:11:00 login-7 kernel: [ 160.000001] NVRM: Xid (PCI:0000:1b:00): 79, pid=1, name=python, "
        "GPU has fallen off the bus.",
    ])
    v = Analyzer().analyze_path(str(out))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert "node-02" not in v.affected_nodes and "node-01" not in v.affected_nodes
