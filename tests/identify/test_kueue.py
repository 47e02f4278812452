"""KueueAttempts through the official kubernetes client against a replay server.

No real Kubernetes API server can run here, so `kube_replay` (a loopback
HTTP server) answers with recorded bodies in the documented shapes of the
Kubernetes API and Kueue's kueue.x-k8s.io/v1beta1 Workload
(tests/fixtures/kube/). The client stack, URL building, selectors,
deserialization and error handling are the real ones.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC

import pytest
from kubernetes.client import ApiClient, Configuration

from firstfault.bundle import Context
from firstfault.extract.scheduler import read_scheduler
from firstfault.identify.base import IdentifyError
from firstfault.identify.cursor import parse_cursor
from firstfault.identify.kueue import KueueAttempts
from tests.harness.kube_replay import KubeReplay

WL = "/apis/kueue.x-k8s.io/v1beta1"


def _client(host: str) -> ApiClient:
    cfg = Configuration()
    cfg.host = host
    cfg.retries = 0  # an unreachable server must fail at once
    return ApiClient(cfg)


@pytest.fixture
def api(kube_replay: KubeReplay) -> Iterator[ApiClient]:
    kube_replay.requests.clear()
    client = _client(kube_replay.url)
    yield client
    client.close()


def test_failed_job_workload(api: ApiClient, kube_replay: KubeReplay) -> None:
    ident = KueueAttempts(api, links={"workload": "https://k8s.example/{namespace}/{name}"}).identify(
        "team-a/job-llm-pretrain-5d2c1")
    wl = ident.workload
    assert (wl.id, wl.name, wl.scheduler, wl.attempt) == ("team-a/job-llm-pretrain-5d2c1", "llm-pretrain", "kueue", 0)
    assert (wl.window.start, wl.window.end) == ("2026-11-02T10:00:01Z", "2026-11-02T10:42:10Z")
    assert wl.nodes == ["gpu-node-01", "gpu-node-02"]
    # The first container to fail (10:41:58, exit 1) speaks, not the one torn down after it (137).
    assert (wl.terminal_state, wl.exit_code) == ("FAILED", "1:0")
    assert ident.links == {"workload": "https://k8s.example/team-a/job-llm-pretrain-5d2c1"}
    Context.from_spec(wl)

    # Exactly the calls the module docstring promises, with the label and field selectors.
    assert kube_replay.requests == [
        ("GET", f"{WL}/namespaces/team-a/workloads/job-llm-pretrain-5d2c1", {}),
        ("GET", "/api/v1/namespaces/team-a/pods", {"labelSelector": "batch.kubernetes.io/job-name=llm-pretrain"}),
        ("GET", "/api/v1/namespaces/team-a/events", {"fieldSelector": "involvedObject.name=job-llm-pretrain-5d2c1"}),
        ("GET", "/api/v1/namespaces/team-a/events", {"fieldSelector": "involvedObject.name=llm-pretrain"}),
        ("GET", "/api/v1/namespaces/team-a/events", {"fieldSelector": "involvedObject.name=llm-pretrain-0-x7k2p"}),
        ("GET", "/api/v1/namespaces/team-a/events", {"fieldSelector": "involvedObject.name=llm-pretrain-1-q9m4t"}),
    ]


def test_documents_read_back_by_the_extractor(api: ApiClient) -> None:
    ident = KueueAttempts(api).identify("team-a/job-llm-pretrain-5d2c1")
    assert [(f, n) for f, n, _ in ident.documents] == [
        ("kueue-workload", "workload-team-a-job-llm-pretrain-5d2c1.json"),
        ("k8s-pods", "pods-team-a-job-llm-pretrain-5d2c1.json"),
        ("k8s-events", "events-team-a-job-llm-pretrain-5d2c1.json"),
    ]
    read = {f: read_scheduler(data, f, n, job_id=None, tz=UTC) for f, n, data in ident.documents}
    for fmt, res in read.items():
        assert res.issues == [], (fmt, res.issues)
    finished = [e for e in read["kueue-workload"].events if e.fields.get("type") == "Finished"]
    assert finished and finished[0].fields["reason"] == "Failed"
    assert read["k8s-pods"].hosts == {"gpu-node-01", "gpu-node-02"}
    pod_exits = sorted(e.fields.get("exit_code") for e in read["k8s-pods"].events if "exit_code" in e.fields)
    assert pod_exits == [1, 137]
    reasons = [e.fields.get("reason") for e in read["k8s-events"].events]
    assert len(reasons) == 11 and "BackoffLimitExceeded" in reasons
    # Events come out in time order.
    times = [e.time for e in read["k8s-events"].events]
    assert times == sorted(t for t in times if t is not None)


def test_evicted_jobset_with_its_pods_gone(api: ApiClient) -> None:
    wl = KueueAttempts(api).identify("team-b/jobset-sweep-7a1b2").workload
    assert (wl.terminal_state, wl.attempt, wl.name) == ("FAILED", 1, "sweep")  # PodsReadyTimeout, requeued once
    # Admitted is False after the eviction: the Workload's Admitted event gives the start.
    assert (wl.window.start, wl.window.end) == ("2026-11-02T11:00:00Z", "2026-11-02T11:10:00Z")
    assert wl.nodes == [] and wl.exit_code is None


def test_unknown_owner_kind_uses_owner_uid(api: ApiClient, kube_replay: KubeReplay) -> None:
    wl = KueueAttempts(api).identify("team-c/pytorchjob-ddp-1f2e3").workload
    assert wl.nodes == ["gpu-node-05"]  # the other owner's pod on gpu-node-09 is left out
    assert (wl.terminal_state, wl.window.end, wl.exit_code) == (None, None, None)  # still running
    assert ("GET", "/api/v1/namespaces/team-c/pods", {}) in kube_replay.requests


def test_errors_name_the_call_and_the_reason(api: ApiClient) -> None:
    ctx = KueueAttempts(api)
    with pytest.raises(IdentifyError, match=r"no Workload team-a/nope \(NotFound"):
        ctx.identify("team-a/nope")
    with pytest.raises(IdentifyError, match=r"HTTP 403 Forbidden: .*cannot get resource \"workloads\""):
        ctx.identify("locked/x")
    for bad in ("no-namespace", "a/b/c", "Team/X", ""):
        with pytest.raises(IdentifyError, match="not 'namespace/name'"):
            ctx.identify(bad)
    with pytest.raises(IdentifyError, match="cursor"):
        ctx.ended_since("not a cursor|a@b")


def test_unreachable_api_server() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = _client(f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(IdentifyError, match="API server unreachable"):
            KueueAttempts(client, request_timeout=5).identify("team-a/job-llm-pretrain-5d2c1")
        with pytest.raises(IdentifyError, match="listing Workloads: API server unreachable"):
            KueueAttempts(client, request_timeout=5).ended_since(None)
    finally:
        client.close()


def test_ended_since_pages_and_cursor(api: ApiClient, kube_replay: KubeReplay) -> None:
    ctx = KueueAttempts(api, lookback=None)
    refs, cursor = ctx.ended_since(None)
    assert refs == ["team-a/job-eval-9c8d7", "team-a/job-llm-pretrain-5d2c1", "team-b/jobset-sweep-7a1b2"]
    assert sum(1 for r in kube_replay.requests if r[1] == f"{WL}/workloads") == 2  # followed `continue`
    t, seen = parse_cursor(cursor)
    assert t.isoformat() == "2026-11-02T11:10:00+00:00" and {r for r, _ in seen} == {"team-b/jobset-sweep-7a1b2"}
    assert ctx.ended_since(cursor) == ([], cursor)
    # An older cursor returns only what ended after it (and what it did not hold at its own second).
    older = "2026-11-02T10:42:10Z|team-a/job-eval-9c8d7@1793616130"
    assert ctx.ended_since(older)[0] == ["team-a/job-llm-pretrain-5d2c1", "team-b/jobset-sweep-7a1b2"]
    scoped = KueueAttempts(api, namespace="team-b", lookback=None).ended_since(None)[0]
    assert scoped == ["team-b/jobset-sweep-7a1b2"]
    # Default lookback: an hour before now, long after these recordings.
    assert KueueAttempts(api).ended_since(None)[0] == []
