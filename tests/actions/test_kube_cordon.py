"""`cordon` through the official kubernetes client against recorded Node responses.

No API server can run here: tests/harness/kube_replay.py answers from the bodies under
tests/fixtures/kube-nodes/ (their provenance is in its README.md) and keeps every PATCH body,
so these tests check what the real client sent, and what the actor made of the answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes.client import ApiClient, Configuration

from firstfault.actions.actor import Actor
from firstfault.actions.kube import KubeCordon
from firstfault.actions.policy import Policy
from firstfault.blueprint import build
from firstfault.blueprint.config import load_config
from firstfault.model import Enrichment
from firstfault.store import VerdictStore
from tests.actions.conftest import Verdicts
from tests.harness.kube_replay import KubeReplay, start_kube_replay

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kube-nodes"
POOL = "karpenter.sh/nodepool"


@pytest.fixture
def replay() -> Iterator[KubeReplay]:
    server = start_kube_replay(FIXTURES)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def api(replay: KubeReplay) -> Iterator[ApiClient]:
    cfg = Configuration()
    cfg.host = replay.url
    client = ApiClient(cfg)
    yield client
    client.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VerdictStore]:
    s = VerdictStore.open(f"sqlite:///{tmp_path / 'verdicts.db'}")
    yield s
    s.close()


def _stored(store: VerdictStore, verdicts: Verdicts, node: str) -> tuple[object, int]:
    v = verdicts.hardware(f"wl-{node}", node=node)
    return v, store.write(v, Enrichment(cluster="k8s-a"))


def _cordon(api: ApiClient, store: VerdictStore, policy: Policy, pool: str | None = None) -> Actor:
    return Actor(KubeCordon(api, pool_label=pool), policy, store=store, cluster="k8s-a")


def test_cordon_sends_unschedulable_and_a_noschedule_taint(api: ApiClient, replay: KubeReplay,
                                                          store: VerdictStore, verdicts: Verdicts) -> None:
    v, vid = _stored(store, verdicts, "gpu-node-01")
    (rec,) = _cordon(api, store, Policy(max_share=0.75, dry_run=False)).act(v, vid)  # type: ignore[arg-type]
    assert (rec.outcome, rec.target) == ("done", "gpu-node-01")
    assert rec.detail == "cordoned gpu-node-01 and tainted it firstfault.io/fault=gpu.fallen_off_bus:NoSchedule"
    ((method, path, ctype, body),) = replay.bodies
    assert (method, path, ctype) == ("PATCH", "/api/v1/nodes/gpu-node-01", "application/strategic-merge-patch+json")
    assert json.loads(body) == {
        # The version read just before: a node changed meanwhile answers 409 instead of being overwritten.
        "metadata": {"resourceVersion": "901101",
                     "annotations": {"firstfault.io/fault-reason": f"firstfault: gpu.fallen_off_bus {vid}"}},
        # Kubernetes replaces the taints list on a patch: the node's own taint is sent back with ours.
        "spec": {"unschedulable": True, "taints": [
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
            {"key": "firstfault.io/fault", "value": "gpu.fallen_off_bus", "effect": "NoSchedule"},
        ]},
    }
    # Read the list (the share), then the node (its resourceVersion), then patch it.
    assert [(m, p) for m, p, _ in replay.requests] == [
        ("GET", "/api/v1/nodes"), ("GET", "/api/v1/nodes/gpu-node-01"), ("PATCH", "/api/v1/nodes/gpu-node-01")]


def test_dry_run_reads_but_never_patches(api: ApiClient, replay: KubeReplay, store: VerdictStore,
                                         verdicts: Verdicts) -> None:
    v, vid = _stored(store, verdicts, "gpu-node-01")
    (rec,) = _cordon(api, store, Policy(max_share=0.75)).act(v, vid)  # type: ignore[arg-type]
    assert (rec.outcome, rec.dry_run) == ("dry_run", True)
    assert rec.detail == ("would run: PATCH /api/v1/nodes/gpu-node-01: spec.unschedulable=true, taint "
                          "firstfault.io/fault=gpu.fallen_off_bus:NoSchedule, annotation "
                          f"firstfault.io/fault-reason='firstfault: gpu.fallen_off_bus {vid}'")
    assert replay.bodies == []
    assert all(m == "GET" for m, _, _ in replay.requests)


def test_an_already_cordoned_node_is_left_alone(api: ApiClient, replay: KubeReplay, store: VerdictStore,
                                                verdicts: Verdicts) -> None:
    v, vid = _stored(store, verdicts, "gpu-node-03")
    (rec,) = _cordon(api, store, Policy(max_share=1.0, dry_run=False)).act(v, vid)  # type: ignore[arg-type]
    assert (rec.outcome, rec.detail) == ("skipped", "node gpu-node-03 is already unschedulable: not cordoned twice")
    assert replay.bodies == []


def test_the_share_counts_cordoned_and_not_ready_nodes_of_the_pool(api: ApiClient, replay: KubeReplay,
                                                                   store: VerdictStore, verdicts: Verdicts) -> None:
    v, vid = _stored(store, verdicts, "gpu-node-01")
    (rec,) = _cordon(api, store, Policy(max_share=0.5, dry_run=False), pool=POOL).act(v, vid)  # type: ignore[arg-type]
    # h100: gpu-node-03 cordoned, gpu-node-04 not ready; gpu-node-01 would make three of four.
    assert rec.outcome == "refused"
    assert rec.detail == ("share limit: cordoning gpu-node-01 would leave 3 of 4 nodes of pool "
                          "karpenter.sh/nodepool=h100 out of service (75%), over max_share 50%")
    assert replay.bodies == []


def test_a_conflict_is_a_recorded_error_and_tried_again_next_time(api: ApiClient, replay: KubeReplay,
                                                                  store: VerdictStore, verdicts: Verdicts) -> None:
    v, vid = _stored(store, verdicts, "gpu-node-05")
    (rec,) = _cordon(api, store, Policy(max_share=0.75, dry_run=False)).act(v, vid)  # type: ignore[arg-type]
    assert (rec.outcome, rec.detail) == ("error", "Kubernetes API: patch node gpu-node-05 answered 409 Conflict")
    (again,) = _cordon(api, store, Policy(max_share=0.75, dry_run=False)).act(v, vid)  # type: ignore[arg-type]
    assert again.outcome == "error" and again.id != rec.id
    assert len(replay.bodies) == 2


def test_a_software_verdict_asks_nothing_of_the_api(api: ApiClient, replay: KubeReplay, store: VerdictStore,
                                                    verdicts: Verdicts) -> None:
    v = verdicts.software()
    vid = store.write(v)
    (rec,) = _cordon(api, store, Policy(dry_run=False, max_share=1.0)).act(v, vid)
    assert rec.outcome == "ineligible"
    assert replay.requests == []


def test_cluster_yaml_cordon_is_a_dry_run_unless_told(tmp_path: Path, replay: KubeReplay) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "replay",
        "clusters": [{"name": "replay", "cluster": {"server": replay.url}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "replay", "context": {"cluster": "replay", "user": "u"}}],
    }))
    (tmp_path / "cluster.yaml").write_text(
        f"cluster: k8s-a\noutputs:\n  database: {{url: 'sqlite:///{tmp_path}/v.db'}}\n"
        f"actions:\n  max_share: 0.75\n  cordon: {{kubeconfig: {kubeconfig}}}\n")
    cfg = load_config(tmp_path / "cluster.yaml")
    (actor,) = build.actors(cfg, build.database_url(cfg))
    assert actor.name == "cordon" and actor.policy.dry_run is True
    assert actor.policy.categories == ("gpu.*", "host.hardware", "network.link")
    v = Verdicts(tmp_path / "b").hardware("wl-1", node="gpu-node-01")
    with VerdictStore.open(f"sqlite:///{tmp_path}/v.db") as s:
        vid = s.write(v)
    (rec,) = actor.act(v, vid)
    assert rec.outcome == "dry_run" and replay.bodies == []
