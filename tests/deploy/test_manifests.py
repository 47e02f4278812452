"""deploy/: the Kubernetes manifests and the systemd unit, checked offline.

Every kustomization renders (tests/deploy/kustomize.py; and equals
`kubectl kustomize` where kubectl is installed), every resource it lists
exists and validates against the Kubernetes API schemas of KUBE_VERSION
(kubernetes-validate, strict: unknown fields are errors; the schemas ship
with the package, no network). Then what the manifests promise: non-root,
read-only root filesystem, requests and limits, probes on the Service's
real routes, selectors that select, secrets by reference, a watch daemon
that may read and never write (and patch nodes only in the cordon overlay),
a cluster.yaml the Blueprint accepts, a unit whose command the CLI accepts.
"""

from __future__ import annotations

import asyncio
import configparser
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner

from firstfault.blueprint.config import BlueprintConfig
from firstfault.cli import app
from firstfault.service.app import create_app
from firstfault.service.settings import ServiceSettings
from tests.deploy.kustomize import identity, load_docs, render

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
KUBE_VERSION = "1.31.0"  # the oldest Kubernetes release still supported upstream when this was written
KUSTOMIZATIONS = sorted(p.parent for p in KUBE.rglob("kustomization.yaml"))
READ = {"get", "list", "watch"}


def _by(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (d,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return d


@pytest.fixture(scope="module")
def base() -> list[dict[str, Any]]:
    return render(KUBE / "base")


def test_there_are_the_base_and_two_overlays() -> None:
    assert [p.relative_to(KUBE).as_posix() for p in KUSTOMIZATIONS] == [
        "base", "overlays/catalog-configmap", "overlays/cordon"]


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=lambda p: p.relative_to(KUBE).as_posix())
def test_every_resource_validates_against_the_pinned_kubernetes(directory: Path) -> None:
    docs = render(directory)
    assert len({identity(d) for d in docs}) == len(docs), "a resource is listed twice"
    for d in docs:
        kubernetes_validate.validate(d, KUBE_VERSION, strict=True)


def test_a_broken_manifest_is_refused(base: list[dict[str, Any]]) -> None:
    # The validation can fail: a misspelt field and a wrong type are caught.
    dep = _by(base, "Deployment", "firstfault-service")
    bad = yaml.safe_load(yaml.safe_dump(dep))
    bad["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBE_VERSION, strict=True)
    bad = yaml.safe_load(yaml.safe_dump(dep))
    bad["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBE_VERSION, strict=True)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed: the Python rendering stands")
@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=lambda p: p.relative_to(KUBE).as_posix())
def test_the_rendering_is_what_kubectl_kustomize_renders(directory: Path) -> None:
    out = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=60,
                         check=True).stdout
    theirs = {identity(d): d for d in yaml.safe_load_all(out) if d}
    ours = {identity(d): d for d in render(directory)}
    assert theirs == ours


def _pod(dep: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = dep["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("name", ["firstfault-service", "firstfault-watch"])
def test_pods_are_locked_down(base: list[dict[str, Any]], name: str) -> None:
    pod = _pod(_by(base, "Deployment", name))
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    for c in pod["containers"]:
        sc = c["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        res = c["resources"]
        assert {"cpu", "memory"} <= set(res["requests"]) and {"cpu", "memory"} <= set(res["limits"])
        assert any(m["mountPath"] == "/tmp" for m in c["volumeMounts"])  # the only writable place
        assert c["image"].startswith("ghcr.io/") and ":" in c["image"]  # the kustomization's image, tagged
        for e in c.get("env", []):
            assert "value" in e or "secretKeyRef" in e["valueFrom"]
            if any(w in e["name"] for w in ("TOKEN", "PASSWORD", "DB")):
                assert "secretKeyRef" in e.get("valueFrom", {}), f"{e['name']} must come from a Secret"


def test_the_probes_use_the_services_real_routes(base: list[dict[str, Any]]) -> None:
    c = _pod(_by(base, "Deployment", "firstfault-service"))["containers"][0]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    async def get(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(ServiceSettings()))
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            return await client.get(path)

    assert asyncio.run(get("/healthz")).json()["status"] == "ok"
    ready = asyncio.run(get("/readyz"))
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert asyncio.run(get("/nothing-here")).status_code == 404  # so the two above are real routes
    port = c["ports"][0]
    assert port["containerPort"] == 8080 and c["args"][c["args"].index("--port") + 1] == "8080"


def test_service_pdb_and_hpa_select_the_service_pods(base: list[dict[str, Any]]) -> None:
    dep = _by(base, "Deployment", "firstfault-service")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    svc = _by(base, "Service", "firstfault")
    assert svc["spec"]["selector"].items() <= labels.items()
    assert svc["spec"]["ports"][0]["targetPort"] == _pod(dep)["containers"][0]["ports"][0]["name"]
    pdb = _by(base, "PodDisruptionBudget", "firstfault-service")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    hpa = _by(base, "HorizontalPodAutoscaler", "firstfault-service")
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": dep["metadata"]["name"]}
    assert hpa["spec"]["scaleTargetRef"] == target
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    assert hpa["spec"]["minReplicas"] > pdb["spec"]["minAvailable"]  # a drain can always proceed


def _rules(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for d in docs if d["kind"] in ("Role", "ClusterRole") for r in d["rules"]]


def test_the_watch_daemon_reads_and_never_writes(base: list[dict[str, Any]]) -> None:
    rules = _rules(base)
    assert all(set(r["verbs"]) <= READ for r in rules)
    granted = {(g, res) for r in rules for g in r["apiGroups"] for res in r["resources"]}
    assert granted == {("kueue.x-k8s.io", "workloads"), ("", "pods"), ("", "pods/log"), ("", "events")}
    binding = _by(base, "ClusterRoleBinding", "firstfault-watch-read")
    pod = _pod(_by(base, "Deployment", "firstfault-watch"))
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": pod["serviceAccountName"],
                                    "namespace": "firstfault"}]
    assert _pod(_by(base, "Deployment", "firstfault-service"))["automountServiceAccountToken"] is False


def test_the_cordon_overlay_adds_node_patch_and_nothing_else(base: list[dict[str, Any]]) -> None:
    cordon = render(KUBE / "overlays" / "cordon")
    added = [r for r in _rules(cordon) if r not in _rules(base)]
    assert added == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]


def test_the_catalog_overlay_mounts_the_catalog_and_passes_rules() -> None:
    docs = render(KUBE / "overlays" / "catalog-configmap")
    c = _pod(_by(docs, "Deployment", "firstfault-service"))["containers"][0]
    assert c["args"][c["args"].index("--rules") + 1] == "/etc/firstfault/catalog"
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    assert mounts == {"/tmp": "tmp", "/etc/firstfault/catalog": "catalog",
                      "/etc/firstfault/catalog/rules": "catalog-rules"}
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"  # the patch kept the rest


def test_the_watch_config_is_a_cluster_yaml_the_blueprint_accepts(base: list[dict[str, Any]]) -> None:
    cm = _by(base, "ConfigMap", "firstfault-watch-config")
    cfg = BlueprintConfig.model_validate(yaml.safe_load(cm["data"]["cluster.yaml"]))
    assert cfg.scheduler.kueue is not None and cfg.scheduler.kueue.in_cluster
    assert cfg.service is not None and cfg.service.url.startswith("http://firstfault.firstfault.svc:8080")
    assert cfg.outputs.database is not None and cfg.outputs.database.password is not None
    env = {e["name"] for e in _pod(_by(base, "Deployment", "firstfault-watch"))["containers"][0]["env"]}
    assert {cfg.service.token.env, cfg.outputs.database.password.env} <= env  # type: ignore[union-attr]


def test_the_systemd_unit_runs_watch_unprivileged() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(ROOT / "deploy" / "systemd" / "firstfault-watch.service")
    svc = unit["Service"]
    assert svc["User"] not in ("", "root") and svc["NoNewPrivileges"] == "yes" and svc["ProtectSystem"] == "strict"
    argv = shlex.split(svc["ExecStart"])
    assert Path(argv[0]).name == "firstfault" and argv[1] == "watch"
    # The CLI accepts the unit's flags: it gets as far as reading the (absent) config file.
    res = CliRunner().invoke(app, [*argv[1:3], "/nonexistent/cluster.yaml", *argv[4:], "--once"])
    assert res.exit_code != 0 and "No such option" not in res.output and "cluster.yaml" in res.output


def test_load_docs_names_the_file_of_a_bad_document(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("apiVersion: v1\nmetadata: {name: x}\n")
    with pytest.raises(Exception, match=r"bad\.yaml"):
        load_docs(p)
