"""Precedence that is catalog settings, not Python: weak causes and the common endpoint (docs/rules.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from msgspec.structs import replace

from firstfault.engine.attribute import Finding, attribute
from firstfault.engine.loader import shipped_catalog
from firstfault.engine.rules import CommonEndpointSettings, Settings
from firstfault.model import Event, Evidence, FieldValue

T0 = datetime(2026, 11, 1, tzinfo=UTC)
NODES = [f"node-{i:02d}" for i in range(1, 11)]


def ev(kind: str, node: str, t: float, **fields: FieldValue) -> Event:
    return Event(kind=kind, time=T0 + timedelta(seconds=t), node=node, fields=dict(fields),
                 evidence=Evidence(source="test", file=f"test/{node}", line=int(t) + 1, text=kind))


def run(events: list[Event], **settings: object) -> tuple[Finding | None, list[Finding]]:
    cat = shipped_catalog()
    s: Settings = replace(cat.settings, **settings)
    att = attribute(events, cat.active(), s, NODES, leads=[])
    return att.root, att.findings


def test_shipped_settings_are_todays_values() -> None:
    s = shipped_catalog().settings
    assert s.weak_causes == "first_strong"
    assert s.common_endpoint == CommonEndpointSettings(min_reports=2, max_nodes=2, min_share=0.6)


def _weak_and_two_strong() -> list[Event]:
    # Host OOM kills on node-01 and, 100 s later, node-02; a hung task (a weak cause) on node-02 between.
    return [ev("host.oom_kill", "node-01", 0, proc="python"), ev("kernel.hung_task", "node-02", 50, proc="python",
            seconds=120), ev("host.oom_kill", "node-02", 100, proc="python")]


def test_a_weak_cause_yields_to_the_first_strong_one_whatever_its_node() -> None:
    root, findings = run(_weak_and_two_strong())
    hung = next(f for f in findings if f.rule.id == "node-hung-task")
    assert root is not None and root.nodes == ["node-01"]
    assert hung.explained_by is root


def test_same_node_hands_a_weak_cause_to_the_strong_one_on_its_node() -> None:
    root, findings = run(_weak_and_two_strong(), weak_causes="same_node")
    hung = next(f for f in findings if f.rule.id == "node-hung-task")
    assert root is not None and root.nodes == ["node-01"]  # the root does not change
    assert hung.explained_by is not None and hung.explained_by.nodes == ["node-02"]


def _ib_reports(peers: list[str]) -> list[Event]:
    # Each report from another node (node-06 on), each naming its peer.
    return [ev("nccl.ib_completion_error", NODES[5 + i], i, status=12, peer_node=p) for i, p in enumerate(peers)]


def test_the_common_endpoint_takes_the_share_in_the_catalog() -> None:
    # Three reports name node-03, two name node-04 (or node-05): node-03 is in 3 of 5 = 0.6.
    events = _ib_reports(["node-03", "node-03", "node-03", "node-04", "node-05"])
    root, _ = run(events)
    assert root is not None and root.rule.id == "network-transport" and root.nodes == ["node-03"]
    root, _ = run(events, common_endpoint=CommonEndpointSettings(min_share=0.7))
    assert root is not None and root.nodes != ["node-03"] and len(root.nodes) > 1  # the reporters
