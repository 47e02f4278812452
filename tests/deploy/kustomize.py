"""A small kustomize renderer for deploy/kubernetes (no kustomize binary is needed in CI).

It does what our kustomizations use and nothing more, and says so when a
kustomization asks for anything else: `resources` (files, or directories
holding a kustomization), `namespace`, `labels` (pairs, without selectors),
`images` (newName/newTag) and `patches` (strategic-merge files with a
Deployment target). Strategic merge follows Kubernetes' merge keys for the
lists a pod template has: containers, volumes and env by `name`,
volumeMounts by `mountPath`, ports by `containerPort`. Where kubectl is
installed, tests compare this rendering with `kubectl kustomize`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass", "StorageClass"}
KNOWN = {"apiVersion", "kind", "namespace", "labels", "resources", "images", "patches"}
MERGE_KEYS = {"containers": "name", "initContainers": "name", "volumes": "name", "env": "name",
              "volumeMounts": "mountPath", "ports": "containerPort"}


class KustomizeError(Exception):
    pass


def load_docs(path: Path) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    for d in docs:
        if not isinstance(d, dict) or "kind" not in d or "apiVersion" not in d:
            raise KustomizeError(f"{path}: every document needs apiVersion and kind")
    return docs


def _merge(base: Any, patch: Any, key: str | None = None) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = _merge(base[k], v, k) if k in base else copy.deepcopy(v)
        return out
    if isinstance(base, list) and isinstance(patch, list) and key in MERGE_KEYS:
        mk = MERGE_KEYS[key]
        out_list = [copy.deepcopy(x) for x in base]
        for item in patch:
            i = next((j for j, x in enumerate(out_list) if x.get(mk) == item.get(mk)), None)
            if i is None:
                out_list.append(copy.deepcopy(item))
            else:
                out_list[i] = _merge(out_list[i], item)
        return out_list
    return copy.deepcopy(patch)


def render(directory: Path) -> list[dict[str, Any]]:
    kfile = directory / "kustomization.yaml"
    if not kfile.is_file():
        raise KustomizeError(f"{directory}: no kustomization.yaml")
    k = yaml.safe_load(kfile.read_text())
    if unknown := set(k) - KNOWN:
        raise KustomizeError(f"{kfile}: fields this renderer does not do: {sorted(unknown)}")
    docs: list[dict[str, Any]] = []
    for res in k.get("resources", []):
        p = directory / res
        if p.is_dir():
            docs += render(p)
        elif p.is_file():
            docs += load_docs(p)
        else:
            raise KustomizeError(f"{kfile}: resource {res!r} does not exist")
    for patch in k.get("patches", []):
        ppath = directory / patch["path"]
        if not ppath.is_file():
            raise KustomizeError(f"{kfile}: patch {patch['path']!r} does not exist")
        (body,) = load_docs(ppath)
        target = patch.get("target") or {"kind": body["kind"], "name": body["metadata"]["name"]}
        hits = [i for i, d in enumerate(docs)
                if d["kind"] == target["kind"] and d["metadata"]["name"] == target["name"]]
        if len(hits) != 1:
            raise KustomizeError(f"{kfile}: patch {patch['path']!r} matches {len(hits)} resources")
        docs[hits[0]] = _merge(docs[hits[0]], body)
    if ns := k.get("namespace"):
        for d in docs:
            if d["kind"] not in CLUSTER_SCOPED:
                d["metadata"]["namespace"] = ns
    for group in k.get("labels", []):
        if group.get("includeSelectors") or group.get("includeTemplates"):
            raise KustomizeError(f"{kfile}: labels with selectors or templates are not rendered here")
        for d in docs:
            d["metadata"].setdefault("labels", {}).update(group["pairs"])
    for img in k.get("images", []):
        for d in docs:
            spec = d.get("spec", {}).get("template", {}).get("spec", {})
            for c in spec.get("containers", []) + spec.get("initContainers", []):
                if c.get("image") == img["name"]:
                    c["image"] = f"{img.get('newName', img['name'])}:{img['newTag']}"
    return docs


def identity(d: dict[str, Any]) -> tuple[str, str, str]:
    return d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]
