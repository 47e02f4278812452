"""Kubernetes pod logs: the official `kubernetes` client against a loopback replay.

No Kubernetes API server can run here, so tests/harness/replay.py serves a
recorded PodList (tests/fixtures/k8slogs/pods.json) and the kubelet's log text
per container, with `--timestamps` prefixes, on the API server's own paths;
an unknown pod gets the API server's 404 Status body. llm-worker-1's trainer
restarted once (restartCount 1): its previous instance holds the crash.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from kubernetes.client import ApiClient, Configuration

from firstfault.analysis.analyze import Analysis, Analyzer
from firstfault.bundle import Context, WindowSpec, WorkloadSpec
from firstfault.collect.http import HttpOptions
from firstfault.collect.k8slogs import K8sPodLogsConnector, split_timestamp
from firstfault.collect.scan import prefilter_words
from firstfault.extract.base import Candidate
from tests.harness.replay import K8sReplay, ReplayServer, spy_candidates

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "k8slogs"
NODES = ["node-01", "node-02", "node-03"]


@pytest.fixture
def kube() -> Iterator[ReplayServer]:
    with ReplayServer(K8sReplay(FIXTURES)) as srv:
        yield srv


def _run(srv: ReplayServer, **kw: object) -> tuple[Analysis, list[Candidate]]:
    ctx = Context.from_spec(WorkloadSpec(id="llm", scheduler="kueue", nodes=NODES, terminal_state="FAILED",
                                         window=WindowSpec(start="2026-10-20T10:00:00Z", end="2026-10-20T10:30:00Z")))
    kw.setdefault("http", HttpOptions(retries=2, sleep=lambda _s: None))
    api = ApiClient(Configuration(host=srv.url))
    conn = K8sPodLogsConnector(api, "train", **kw)  # type: ignore[arg-type]
    analysis = Analyzer().start(ctx)
    got: list[Candidate] = spy_candidates(analysis)
    conn.collect(ctx, prefilter_words(), analysis)
    api.close()
    return analysis, got


def test_kubelet_timestamps_are_split_off() -> None:
    t, text = split_timestamp("2026-10-20T10:12:01.204113907Z node-01 NCCL WARN x")
    assert t == datetime(2026, 10, 20, 10, 12, 1, 204113, tzinfo=UTC) and text == "node-01 NCCL WARN x"
    assert split_timestamp("no stamp here") == (None, "no stamp here")
    assert split_timestamp("2026-13-99T00:00:00Z bad")[0] is None


def test_every_container_and_the_previous_instance_of_a_restarted_one(kube: ReplayServer) -> None:
    analysis, got = _run(kube, label_selector="app=llm")
    logs = sorted((r.path.split("/")[6], r.params.get("container"), r.params.get("previous") or "",
                   r.params.get("timestamps")) for r in kube.stats.requests if r.path.endswith("/log"))
    assert logs == [  # fetched concurrently: compared as a set
        ("llm-worker-0", "trainer", "", "true"),
        ("llm-worker-1", "log-agent", "", "true"),
        ("llm-worker-1", "trainer", "", "true"),
        ("llm-worker-1", "trainer", "true", "true"),
        ("llm-worker-2", "trainer", "", "true"),
    ]
    # (the log-agent sidecar's "[error] ... connection reset" line passes the prefilter too)
    files = [c.file for c in got if c.node == "node-02" and "/trainer" in c.file]
    # the crash of the previous instance comes first, as it came first in time
    assert files[0] == "k8s:train/llm-worker-1/trainer#previous"
    assert files[-1] == "k8s:train/llm-worker-1/trainer"
    crash = next(c for c in got if "unspecified launch failure" in c.text)
    assert crash.time == datetime(2026, 10, 20, 10, 12, 0, 732000, tzinfo=UTC)
    assert (crash.node, crash.rank, crash.line, crash.source) == ("node-02", 1, 5, "application")
    assert crash.text.startswith("RuntimeError")  # the kubelet prefix is gone
    wd = next(c for c in got if "Watchdog" in c.text and c.node == "node-03")
    assert wd.rank == 2 and wd.time == datetime(2026, 10, 20, 10, 22, 31, 123000, tzinfo=UTC)  # its own stamp
    assert analysis.node_last_seen == {
        "node-01": datetime(2026, 10, 20, 10, 22, 31, 123000, tzinfo=UTC),
        "node-02": datetime(2026, 10, 20, 10, 13, 52, 100000, tzinfo=UTC),
        "node-03": datetime(2026, 10, 20, 10, 22, 31, 123000, tzinfo=UTC),
    }
    assert analysis.errors == []
    [cov] = analysis.coverage
    assert (cov.source, cov.status, cov.nodes_seen, cov.files, cov.lines) == ("application", "complete", 3, 5, 18)


def test_a_missing_pod_is_a_404_error_and_the_rest_is_read(kube: ReplayServer) -> None:
    analysis, got = _run(kube, pods=["llm-worker-0", "llm-worker-7"])
    assert {c.node for c in got} == {"node-01"}
    [err] = analysis.errors
    assert err.source == "application" and "llm-worker-7" in err.message and "HTTP 404" in err.message
    assert 'pods \\"llm-worker-7\\" not found' in err.message or 'pods "llm-worker-7" not found' in err.message
    [cov] = analysis.coverage
    assert cov.status == "partial" and cov.missing_nodes == ["node-02", "node-03"]


def test_a_busy_api_server_is_retried_and_a_broken_log_is_an_error(kube: ReplayServer) -> None:
    kube.fail(lambda r: r.path.endswith("llm-worker-0/log"), status=503, times=1)
    kube.fail(lambda r: r.path.endswith("llm-worker-2/log"), status=500)
    analysis, got = _run(kube, label_selector="app=llm", containers=["trainer"])
    assert any(c.node == "node-01" for c in got)  # retried after the 503
    assert not any(c.node == "node-03" for c in got)
    [err] = analysis.errors
    assert err.file == "k8s:train/llm-worker-2/trainer" and "HTTP 500" in err.message
    assert sum(1 for r in kube.stats.requests if r.path.endswith("llm-worker-2/log")) == 3  # 1 + 2 retries
    assert not any(r.params.get("container") == "log-agent" for r in kube.stats.requests)
    [cov] = analysis.coverage
    assert cov.status == "partial"


def test_rank_from_an_env_var_when_the_label_is_not_used(kube: ReplayServer) -> None:
    _, got = _run(kube, label_selector="app=llm", rank_label=None, rank_env="RANK")
    trainers = {(c.node, c.rank) for c in got if "/trainer" in c.file}
    assert trainers == {("node-01", 0), ("node-02", 1), ("node-03", 2)}
    # a sidecar without the env var has no rank
    assert {(c.node, c.rank) for c in got if "/log-agent" in c.file} <= {("node-02", None)}
    _, got = _run(kube, label_selector="app=llm", rank_label=None)
    assert {c.rank for c in got} == {None}


def test_needs_a_selector_or_pods() -> None:
    with pytest.raises(ValueError, match="label_selector or pod names"):
        K8sPodLogsConnector(ApiClient(Configuration(host="http://127.0.0.1:9")), "train")


def test_followed_pod_logs_give_the_current_instances_lines_once(kube: ReplayServer) -> None:
    """watch --follow (collect/follow.py): each container's current instance followed (`follow=true`) by a thread;
    the replay ends each stream after its recorded text, as a container that stopped writing does, and the
    follower opens it again from `sinceSeconds` before its last line: every line once all the same."""
    import time

    from firstfault.collect.follow import PodLogFollow

    running = Context.from_spec(WorkloadSpec(id="llm", scheduler="kueue", nodes=NODES,
                                             window=WindowSpec(start="2026-10-20T10:00:00Z")))
    api = ApiClient(Configuration(host=kube.url))
    conn = K8sPodLogsConnector(api, "train", label_selector="app=llm", http=HttpOptions(retries=2,
                                                                                       sleep=lambda _s: None))
    follow = PodLogFollow(conn, running, prefilter_words())
    analysis = Analyzer().start(running)
    got: list[Candidate] = spy_candidates(analysis)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            follow.poll(analysis, datetime.now(UTC))
            if sum(1 for r in kube.stats.requests if r.params.get("follow") == "true") >= 2 * len(
                    follow.streams) > 0:
                break  # every stream read, ended and opened again
            time.sleep(0.2)
        follow.poll(analysis, datetime.now(UTC))
    finally:
        follow.close()
        api.close()
    followed = [r for r in kube.stats.requests if r.path.endswith("/log")]
    assert followed and all(r.params.get("follow") == "true" and r.params.get("previous") is None for r in followed)
    assert any("sinceSeconds" in r.params for r in followed)  # opened again after it ended
    _, once = _run(kube, label_selector="app=llm")
    current = [c for c in once if not c.file.endswith("#previous")]
    assert sorted((c.file, c.line, c.text) for c in got) == sorted((c.file, c.line, c.text) for c in current)


def _held_log_server(first: bytes, release: threading.Event) -> tuple[socket.socket, threading.Thread]:
    """A kube-apiserver stand-in for one `follow=true` log request: the headers and one chunk (`first`),
    then nothing until `release` is set, then one more chunk and the end: a container that writes, pauses
    and writes again, so the follower's reader thread is blocked in a read in between."""
    srv = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                         + b"%x\r\n%s\r\n" % (len(first), first))
            release.wait(10)
            later = b"2026-10-20T10:00:02.000000000Z written after the follower let go\n"
            with contextlib.suppress(OSError):
                conn.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(later), later))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, t


def _one_followed_stream(srv: socket.socket, room: int) -> tuple[ApiClient, Any, Any]:
    """A PodLogFollow with one stream (pod p0, container c) on `srv`, its thread not started, its queue
    holding `room` lines."""
    from firstfault.collect.follow import PodLogFollow, _PodStream

    running = Context.from_spec(WorkloadSpec(id="llm", scheduler="kueue", nodes=NODES,
                                             window=WindowSpec(start="2026-10-20T10:00:00Z")))
    api = ApiClient(Configuration(host=f"http://127.0.0.1:{srv.getsockname()[1]}"))
    follow = PodLogFollow(K8sPodLogsConnector(api, "train", pods=["p0"], http=HttpOptions(retries=0)),
                          running, prefilter_words())
    ps = _PodStream("k8s:train/p0/c", None, None, cast(Any, None), queue.Queue(room))
    ps.thread = threading.Thread(target=follow._follow, args=(ps, "p0", "c"), daemon=True)
    follow.streams[ps.file] = ps
    return api, follow, ps


def test_closing_the_pod_log_follower_while_its_reader_is_blocked_ends_the_reader_cleanly() -> None:
    """close() while a stream's thread is blocked reading it (the pod is silent): the thread ends within
    close(), without an exception, and reads nothing the stream sends afterwards. Before the reader owned
    its response's close, close() closed it under the blocked read, which woke on the next bytes and read
    a closed http.client response (AttributeError in the thread, the flaky failure of the test above)."""
    crashed: list[threading.ExceptHookArgs] = []
    hook = threading.excepthook
    threading.excepthook = crashed.append
    release = threading.Event()
    srv, server = _held_log_server(b"2026-10-20T10:00:01.000000000Z step 1\n", release)
    api, follow, ps = _one_followed_stream(srv, 100)
    try:
        ps.thread.start()
        first = ps.lines.get(timeout=10)  # the reader has the first chunk and waits for the next one
        time.sleep(0.2)
        follow.close()
        assert not ps.thread.is_alive()  # close() ended the read, it did not leave the thread blocked
        release.set()
        server.join(10)
        ps.thread.join(5)
        assert not crashed, crashed[0].exc_value
        assert first[1] == "step 1" and ps.lines.empty()
    finally:
        threading.excepthook = hook
        release.set()
        srv.close()
        api.close()


def test_closing_the_pod_log_follower_lets_a_reader_waiting_on_a_full_queue_end() -> None:
    """close() while a stream's thread waits to put a line into its full queue (nobody polls any more): the
    thread ends within close() instead of staying blocked in put() for good. Near miss of the test above: the
    thread is not in a read, so shutting the socket alone would not end it."""
    release = threading.Event()
    lines = b"".join(b"2026-10-20T10:00:01.%09dZ step %d\n" % (i, i) for i in range(3))
    srv, server = _held_log_server(lines, release)
    api, follow, ps = _one_followed_stream(srv, 1)
    try:
        ps.thread.start()
        deadline = time.monotonic() + 10
        while not ps.lines.full() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ps.lines.full()  # one line queued, the thread holds the next one
        follow.close()
        assert not ps.thread.is_alive()
    finally:
        release.set()
        server.join(10)
        srv.close()
        api.close()
