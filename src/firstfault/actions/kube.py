"""Kubernetes cordon: `spec.unschedulable: true` plus a NoSchedule taint, through the official client.

One strategic-merge PATCH per node, carrying the node's resourceVersion as
read just before, so a node changed in between (another controller, an
operator) answers 409 Conflict and nothing is overwritten; the taints list
is sent whole (Kubernetes replaces it on a patch), the node's own taints
kept. The taint is `<taint_key>=<category>:NoSchedule`; an annotation
`<taint_key>-reason` holds "firstfault: <category> <verdict id>". Running
pods stay (NoSchedule, not NoExecute); `kubectl uncordon N` and
`kubectl taint node N <taint_key>-` undo it.

The share is bounded per pool: nodes with the same value of `pool_label`
(e.g. a node-pool label), or the whole cluster when no label is given.
"""

from __future__ import annotations

from typing import Any

from firstfault.actions.policy import ActionError, AlreadyDone, Inventory, NodeState

DEFAULT_TAINT_KEY = "firstfault.io/fault"
MAX_PAGES = 100  # 100 pages of 500: a 50,000-node cluster; more is refused, not read forever
PAGE = 500


def _label_value(category: str) -> str:
    # A label value: at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric.
    v = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in category)[:63]
    return v.strip("._-") or "fault"


class KubeCordon:
    kind = "cordon"
    group_word = "pool"

    def __init__(self, api_client: Any, *, taint_key: str = DEFAULT_TAINT_KEY, pool_label: str | None = None,
                 timeout: float = 30.0) -> None:
        from kubernetes import client

        self.api = client.CoreV1Api(api_client)
        self.taint_key = taint_key
        self.pool_label = pool_label
        self.timeout = timeout

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return fn(*args, _request_timeout=self.timeout, **kwargs)
        except ApiException as exc:
            reason = str(exc.reason or "").strip()
            raise ActionError(f"Kubernetes API: {what} answered {exc.status} {reason}".rstrip()) from exc
        except (HTTPError, OSError) as exc:
            raise ActionError(f"Kubernetes API: {what} failed: {type(exc).__name__}: {exc}") from exc

    def _state(self, node: Any) -> NodeState:
        name = node.metadata.name
        labels = node.metadata.labels or {}
        pool = labels.get(self.pool_label) if self.pool_label else "cluster"
        cordoned = bool(node.spec and node.spec.unschedulable)
        conditions = (node.status.conditions if node.status else None) or []
        ready = any(c.type == "Ready" and c.status == "True" for c in conditions)
        state = "unschedulable" if cordoned else ("ready" if ready else "not ready")
        groups = (f"{self.pool_label}={pool}",) if self.pool_label and pool else (("cluster",) if pool else ())
        return NodeState(name=name, groups=groups, out=cordoned or not ready, acted=cordoned, state=state)

    def inventory(self) -> Inventory:
        inv = Inventory()
        token: str | None = None
        for _ in range(MAX_PAGES):
            kwargs: dict[str, Any] = {"limit": PAGE}
            if token:
                kwargs["_continue"] = token
            page = self._call("list nodes", self.api.list_node, **kwargs)
            for n in page.items or []:
                st = self._state(n)
                inv.nodes[st.name] = st
            token = page.metadata._continue if page.metadata else None
            if not token:
                return inv
        raise ActionError(f"Kubernetes API: more than {MAX_PAGES * PAGE} nodes; the share cannot be bounded")

    def taint(self, category: str) -> dict[str, str]:
        return {"key": self.taint_key, "value": _label_value(category), "effect": "NoSchedule"}

    def command(self, node: str, reason: str, category: str) -> str:
        t = self.taint(category)
        return (f"PATCH /api/v1/nodes/{node}: spec.unschedulable=true, taint {t['key']}={t['value']}:NoSchedule, "
                f"annotation {self.taint_key}-reason={reason!r}")

    def patch_body(self, node: Any, reason: str, category: str) -> dict[str, Any]:
        mine = self.taint(category)
        taints = [
            {k: v for k, v in {"key": t.key, "value": t.value, "effect": t.effect,
                               "timeAdded": t.time_added.isoformat() if t.time_added else None}.items()
             if v is not None}
            for t in (node.spec.taints if node.spec and node.spec.taints else [])
            if not (t.key == mine["key"] and t.effect == mine["effect"])
        ]
        return {
            "metadata": {"resourceVersion": node.metadata.resource_version,
                         "annotations": {f"{self.taint_key}-reason": reason}},
            "spec": {"unschedulable": True, "taints": [*taints, mine]},
        }

    def act(self, node: str, reason: str, category: str, verdict_id: int | None) -> str:
        current = self._call(f"read node {node}", self.api.read_node, node)
        if current.spec and current.spec.unschedulable:
            raise AlreadyDone(f"node {node} was cordoned meanwhile: left as it is")
        body = self.patch_body(current, reason, category)
        got = self._call(f"patch node {node}", self.api.patch_node, node, body)
        if not (got.spec and got.spec.unschedulable):
            raise ActionError(f"Kubernetes API: node {node} is still schedulable after the patch")
        t = self.taint(category)
        return f"cordoned {node} and tainted it {t['key']}={t['value']}:NoSchedule"
