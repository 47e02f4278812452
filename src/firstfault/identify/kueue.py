"""Kueue attempts: a kueue.x-k8s.io/v1beta1 Workload, its pods and their events.

Read through the official `kubernetes` client (CustomObjectsApi, CoreV1Api).

Which pods: the Workload's controller owner (ownerReferences) names the job.
Owners whose pods carry a known label are listed by it (batch/v1 Job:
`batch.kubernetes.io/job-name`, then the pre-1.27 `job-name`; JobSet:
`jobset.sigs.k8s.io/jobset-name`; Kubeflow training jobs:
`training.kubeflow.org/job-name`). Any other owner (plain pods, RayCluster,
custom kinds) is matched by the pods' own ownerReferences uid over the
namespace's pods. A pod group's Workload is owned by the pods themselves,
which that rule covers too.

Events: `involvedObject.name=` field selectors for the Workload, its owner,
each pod, and the pods the owner's events name ("Created pod: X") even when
they are gone, as they are after an eviction.

Window: Admitted (else QuotaReserved) while True, else the Workload's latest
Admitted/QuotaReserved event, else the pods' earliest startTime; end at
Finished (True), else Evicted (True). Nodes: pods' spec.nodeName plus
"Successfully assigned ns/pod to NODE" events. Attempt:
status.requeueState.count. Terminal state as the engine reads the
conditions, by one definition (catalog/tables.py `kueue_end`):
Finished/Succeeded -> COMPLETED, other Finished -> FAILED, a preemption
-> PREEMPTED, an eviction for the time limit -> TIMEOUT, for its node's
failure -> NODE_FAIL, any other eviction -> FAILED.
Exit code: the earliest terminated container with a non-zero exitCode, as
Slurm's 'return:signal' (exitCode > 128 is signal exitCode-128: '0:9').
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import urllib3
from kubernetes.client import ApiClient, CoreV1Api, CustomObjectsApi
from kubernetes.client.exceptions import ApiException

from firstfault.bundle import WindowSpec, WorkloadSpec
from firstfault.catalog.tables import kueue_end
from firstfault.identify.base import Identified, IdentifyError, Running
from firstfault.identify.cursor import format_cursor, iso, parse_cursor

GROUP, VERSION, PLURAL = "kueue.x-k8s.io", "v1beta1", "workloads"

# Owner kind (by API group) -> label that its pods carry with the owner's name.
POD_LABELS: dict[tuple[str, str], tuple[str, ...]] = {
    ("batch", "Job"): ("batch.kubernetes.io/job-name", "job-name"),
    ("jobset.x-k8s.io", "JobSet"): ("jobset.sigs.k8s.io/jobset-name",),
    ("kubeflow.org", "PyTorchJob"): ("training.kubeflow.org/job-name",),
    ("kubeflow.org", "TFJob"): ("training.kubeflow.org/job-name",),
    ("kubeflow.org", "MPIJob"): ("training.kubeflow.org/job-name",),
    ("kubeflow.org", "XGBoostJob"): ("training.kubeflow.org/job-name",),
    ("kubeflow.org", "PaddleJob"): ("training.kubeflow.org/job-name",),
}
_REF_RE = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$")
_CREATED_POD_RE = re.compile(r"^Created pod: (\S+)$")
_ASSIGNED_RE = re.compile(r"^Successfully assigned (\S+)/(\S+) to (\S+)$")


class KueueAttempts:
    name = "kueue"

    def __init__(
        self,
        api_client: ApiClient,
        *,
        namespace: str | None = None,
        request_timeout: float = 30.0,
        max_pod_event_queries: int = 64,
        links: Mapping[str, str] | None = None,
        owner_label: str | None = None,
        lookback: timedelta | None = timedelta(hours=1),
    ) -> None:
        """`namespace` limits ended_since (None: all namespaces); `links` maps a name to a
        URL template with {namespace}, {name} and {attempt}; `owner_label` is the Workload
        label (or annotation) that names the person who owns it."""
        self.api = api_client
        self.custom = CustomObjectsApi(api_client)
        self.core = CoreV1Api(api_client)
        self.namespace = namespace
        self.timeout = request_timeout
        self.max_pod_event_queries = max_pod_event_queries
        self.links = dict(links or {})
        self.owner_label = owner_label
        self.lookback = lookback

    # ---------------------------------------------------------------- calls

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """One API call; every failure becomes a IdentifyError that says which call and why."""
        try:
            return fn(*args, _request_timeout=self.timeout, **kwargs)
        except ApiException as exc:
            raise IdentifyError(f"kueue: {what}: HTTP {exc.status} {_status_message(exc)}") from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise IdentifyError(f"kueue: {what}: API server unreachable ({type(exc).__name__}: {exc})") from exc

    def _plain(self, model: Any) -> dict[str, Any]:
        """A client model as the API's JSON form (camelCase keys, RFC 3339 times)."""
        out = self.api.sanitize_for_serialization(model)  # type: ignore[no-untyped-call]
        return out if isinstance(out, dict) else {}

    def _events(self, namespace: str, names: Iterable[str]) -> list[dict[str, Any]]:
        items: dict[str, dict[str, Any]] = {}
        for name in names:
            got = self._call(f"listing events of {namespace}/{name}", self.core.list_namespaced_event, namespace,
                             field_selector=f"involvedObject.name={name}")
            for ev in self._plain(got).get("items") or []:
                key = (ev.get("metadata") or {}).get("uid") or json.dumps(ev, sort_keys=True)
                items[key] = ev
        return sorted(items.values(), key=_event_time)

    def _pods(self, namespace: str, owner: dict[str, Any] | None) -> list[dict[str, Any]]:
        if owner is None:
            return []
        group = str(owner.get("apiVersion", "")).rpartition("/")[0]
        name, uid = str(owner.get("name", "")), owner.get("uid")
        for label in POD_LABELS.get((group, str(owner.get("kind", ""))), ()):
            got = self._call(f"listing pods of {namespace}/{name}", self.core.list_namespaced_pod, namespace,
                             label_selector=f"{label}={name}")
            items = self._plain(got).get("items") or []
            if items:
                return list(items)
        if (group, owner.get("kind")) in POD_LABELS:
            return []
        got = self._call(f"listing pods in {namespace}", self.core.list_namespaced_pod, namespace)
        return [p for p in self._plain(got).get("items") or []
                if any(r.get("uid") == uid for r in (p.get("metadata") or {}).get("ownerReferences") or [])]

    # -------------------------------------------------------------- identify

    def identify(self, ref: str) -> Identified:
        """The Workload 'namespace/name' as it stands now (its latest attempt)."""
        m = _REF_RE.match(ref.strip())
        if m is None:
            raise IdentifyError(f"kueue: {ref!r} is not 'namespace/name' of a Workload")
        namespace, name = m.group(1), m.group(3)
        try:
            got = self.custom.get_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, name, _request_timeout=self.timeout)
        except ApiException as exc:
            if exc.status == 404:
                raise IdentifyError(f"kueue: no Workload {namespace}/{name} ({_status_message(exc)})") from exc
            raise IdentifyError(f"kueue: reading Workload {namespace}/{name}: HTTP {exc.status} "
                               f"{_status_message(exc)}") from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise IdentifyError(f"kueue: reading Workload {namespace}/{name}: API server unreachable "
                               f"({type(exc).__name__}: {exc})") from exc

        wl = _dict(got)
        meta = _dict(wl.get("metadata"))
        owners = [_dict(o) for o in meta.get("ownerReferences") or []]
        owner = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
        pods = self._pods(namespace, owner)

        names = [name] + ([str(owner["name"])] if owner and owner.get("name") else [])
        first = self._events(namespace, names)
        pod_names = [str(_dict(p.get("metadata")).get("name")) for p in pods]
        for ev in first:
            created = _CREATED_POD_RE.match(str(ev.get("message") or ""))
            if created and created.group(1) not in pod_names:
                pod_names.append(created.group(1))
        events = first + self._events(namespace, pod_names[: self.max_pod_event_queries])
        events.sort(key=_event_time)

        conds = {str(c.get("type")): _dict(c) for c in _dict(wl.get("status")).get("conditions") or []}
        state, end = _terminal(conds)
        start = _start(conds, events, name, pods, end)
        nodes = _nodes(pods, events, namespace)
        requeue = _dict(_dict(wl.get("status")).get("requeueState")).get("count")
        attempt = requeue if isinstance(requeue, int) and requeue >= 0 else 0

        spec = WorkloadSpec(
            id=f"{namespace}/{name}",
            attempt=attempt,
            name=str(owner["name"]) if owner and owner.get("name") else name,
            scheduler="kueue",
            window=WindowSpec(start=iso(start) if start else None, end=iso(end) if end else None),
            nodes=nodes,
            terminal_state=state,
            exit_code=_exit_code(pods) if state else None,
        )
        pod_list = {"apiVersion": "v1", "kind": "PodList", "items": pods}
        event_list = {"apiVersion": "v1", "kind": "EventList", "items": events}
        base = f"{namespace}-{name}"
        documents = [
            ("kueue-workload", f"workload-{base}.json", _json(wl)),
            ("k8s-pods", f"pods-{base}.json", _json(pod_list)),
            ("k8s-events", f"events-{base}.json", _json(event_list)),
        ]
        fmt = {"namespace": namespace, "name": name, "attempt": attempt}
        links = {k: t.format(**fmt) for k, t in self.links.items()}
        who = None
        if self.owner_label:
            who = _dict(meta.get("labels")).get(self.owner_label) or _dict(meta.get("annotations")).get(
                self.owner_label)
        return Identified(workload=spec, documents=documents, links=links, owner=str(who) if who else None)

    # ----------------------------------------------------------- ended_since

    def ended_since(self, cursor: str | None) -> tuple[list[str], str]:
        """Workloads ('namespace/name') Finished or Evicted after `cursor`, oldest first, and the next cursor.

        The time is the Finished (else Evicted) condition's lastTransitionTime;
        the cursor holds the newest such time and the attempts at it (the
        API's times have whole seconds). None starts `lookback` ago.
        """
        if cursor:
            since: datetime | None
            since, seen = parse_cursor(cursor)
        else:
            since = datetime.now(UTC) - self.lookback if self.lookback is not None else None
            seen = set()
        ended: set[tuple[str, int]] = set()
        for wl in self._workloads():
            meta = _dict(wl.get("metadata"))
            _, end = _terminal(_conditions(wl))
            if end is not None:
                ended.add((f"{meta.get('namespace')}/{meta.get('name')}", int(end.timestamp())))
        floor = int(since.timestamp()) if since is not None else None
        new = sorted((t, r) for r, t in ended - seen if floor is None or t >= floor)
        refs = list(dict.fromkeys(r for _, r in new))
        stamps = [t for t, _ in new] + [t for _, t in seen] + ([floor] if floor is not None else [])
        if not stamps:
            return refs, cursor or ""
        newest = max(stamps)
        keep = {(r, t) for r, t in (ended | seen) if t == newest}
        return refs, format_cursor(datetime.fromtimestamp(newest, UTC), keep)


    def _workloads(self) -> Iterator[dict[str, Any]]:
        """Every Workload (of `namespace`, else of the cluster), 500 to a page."""
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"limit": 500}
            if token:
                kwargs["_continue"] = token
            if self.namespace:
                page = self._call(f"listing Workloads in {self.namespace}", self.custom.list_namespaced_custom_object,
                                  GROUP, VERSION, self.namespace, PLURAL, **kwargs)
            else:
                page = self._call("listing Workloads", self.custom.list_cluster_custom_object, GROUP, VERSION,
                                  PLURAL, **kwargs)
            yield from (_dict(wl) for wl in page.get("items") or [])
            token = _dict(page.get("metadata")).get("continue") or None
            if not token:
                return

    # ---------------------------------------------------------------- running

    def running(self) -> list[Running]:
        """Workloads admitted (Admitted True) and not Finished or Evicted: 'namespace/name', each with when it
        was admitted and its requeue count (a requeued Workload is admitted again: another run)."""
        out: dict[str, str] = {}
        for wl in self._workloads():
            conds = _conditions(wl)
            admitted = _true(conds, "Admitted")
            if admitted is None or _terminal(conds)[0] is not None:
                continue
            meta = _dict(wl.get("metadata"))
            requeue = _dict(_dict(wl.get("status")).get("requeueState")).get("count") or 0
            out[f"{meta.get('namespace')}/{meta.get('name')}"] = f"{admitted.get('lastTransitionTime')}#{requeue}"
        return [Running(r, out[r]) for r in sorted(out)]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _conditions(wl: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(c.get("type")): _dict(c) for c in _dict(wl.get("status")).get("conditions") or []}


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _json(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode()


def _status_message(exc: ApiException) -> str:
    """The API server's Status message when the body is one, else the HTTP reason."""
    try:
        body = json.loads(exc.body or "")
        if isinstance(body, dict) and body.get("message"):
            return f"{body.get('reason') or exc.reason}: {body['message']}"
    except (ValueError, TypeError):
        pass
    return str(exc.reason or "no message")


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC)


def _event_time(ev: dict[str, Any]) -> datetime:
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        t = _time(ev.get(key))
        if t is not None:
            return t
    return datetime.min.replace(tzinfo=UTC)


def _true(conds: dict[str, dict[str, Any]], typ: str) -> dict[str, Any] | None:
    c = conds.get(typ)
    return c if c is not None and c.get("status") == "True" else None


def _terminal(conds: dict[str, dict[str, Any]]) -> tuple[str | None, datetime | None]:
    for typ in ("Finished", "Evicted", "Preempted"):
        c = _true(conds, typ)
        if c is not None:
            reason = c.get("reason")
            state = kueue_end(typ, "True", reason if isinstance(reason, str) else None)[1]
            if state is not None:
                return state, _time(c.get("lastTransitionTime"))
    return None, None


def _start(conds: dict[str, dict[str, Any]], events: list[dict[str, Any]], name: str, pods: list[dict[str, Any]],
           end: datetime | None) -> datetime | None:
    for typ in ("Admitted", "QuotaReserved"):
        c = _true(conds, typ)
        if c is not None and _time(c.get("lastTransitionTime")):
            return _time(c.get("lastTransitionTime"))
    # After an eviction both are False: the Workload's own admission events still say when.
    admitted = [
        _event_time(ev) for ev in events
        if ev.get("reason") in ("Admitted", "QuotaReserved") and _dict(ev.get("involvedObject")).get("name") == name
        and (end is None or _event_time(ev) <= end)
    ]
    if admitted:
        return max(admitted)
    starts = [t for t in (_time(_dict(p.get("status")).get("startTime")) for p in pods) if t is not None]
    return min(starts) if starts else None


def _nodes(pods: list[dict[str, Any]], events: list[dict[str, Any]], namespace: str) -> list[str]:
    nodes: dict[str, None] = {}  # an ordered set: linear in the number of pods
    for p in pods:
        node = _dict(p.get("spec")).get("nodeName")
        if node:
            nodes.setdefault(str(node))
    for ev in events:
        m = _ASSIGNED_RE.match(str(ev.get("message") or ""))
        if m and m.group(1) == namespace:
            nodes.setdefault(m.group(3))
    return list(nodes)


def _exit_code(pods: list[dict[str, Any]]) -> str | None:
    failures: list[tuple[datetime, int]] = []
    for p in pods:
        status = _dict(p.get("status"))
        for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            term = _dict(_dict(_dict(cs).get("state")).get("terminated"))
            code = term.get("exitCode")
            if isinstance(code, int) and code != 0:
                failures.append((_time(term.get("finishedAt")) or datetime.max.replace(tzinfo=UTC), code))
    if not failures:
        return None
    code = min(failures)[1]
    return f"0:{code - 128}" if 128 < code < 160 else f"{code}:0"
