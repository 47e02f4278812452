"""Shared pieces of the collectors: stream lines to candidates, and the HTTP retry policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from firstfault.collect.http import BasicAuth, FetchError, HttpOptions, get, make_client
from firstfault.collect.lines import StreamReader, WordFilter, coverage_item, match_node
from firstfault.extract.base import Candidate
from firstfault.timeparse import TimeParser

UTC_TP = TimeParser(UTC, datetime(2026, 10, 20, 10, tzinfo=UTC), datetime(2026, 10, 20, 11, tzinfo=UTC))
T = datetime(2026, 10, 20, 10, 30, tzinfo=UTC)


def _reader(words: list[str], srun: bool = False) -> tuple[StreamReader, list[Candidate]]:
    out: list[Candidate] = []
    r = StreamReader(source="application", file="loki:{a=\"b\"}", node="n1", rank=None, words=WordFilter(words),
                     tp=UTC_TP, emit=out.append, srun_prefix=srun)
    return r, out


def test_word_filter_is_a_plain_substring_test() -> None:
    wf = WordFilter(["a.b", "(core dumped)"])
    assert wf("x a.b y") and wf("Segfault (core dumped)")
    assert not wf("aXb") and not wf("core dumped")
    assert not WordFilter([])("anything")


def test_own_stamp_then_transport_then_nearest_earlier_stamp() -> None:
    r, out = _reader(["ERR"])
    r.feed("2026-10-20T10:05:00Z ERR own stamp", T)
    r.feed("ERR transport stamp", T)
    r.feed("2026-10-20T10:07:00Z plain line", None)
    r.feed("ERR no stamp at all", None)
    assert [(c.line, c.time) for c in out] == [
        (1, datetime(2026, 10, 20, 10, 5, tzinfo=UTC)),
        (2, T),
        (4, datetime(2026, 10, 20, 10, 7, tzinfo=UTC)),
    ]
    assert r.stats.lines == 4 and r.stats.candidates == 3
    assert r.stats.last_time == datetime(2026, 10, 20, 10, 7, tzinfo=UTC)


def test_dmesg_uptime_uses_the_boot_time_learnt_from_the_stream() -> None:
    r, out = _reader(["Xid"])
    r.feed("[Tue Oct 20 10:00:00 2026] [  100.000000] boot marker", None)
    r.feed("[  160.500000] NVRM: Xid (PCI:0000:3b:00): 79", None)
    assert out[0].time == datetime(2026, 10, 20, 10, 1, 0, 500000, tzinfo=UTC)


def test_srun_prefix_gives_the_rank() -> None:
    r, out = _reader(["NCCL WARN"], srun=True)
    r.feed("12: node-02:1:2 [0] NCCL WARN boom", T)
    assert (out[0].rank, out[0].text) == (12, "node-02:1:2 [0] NCCL WARN boom")


def test_match_node_takes_fqdn_and_short_names() -> None:
    nodes = ["gpu-a01", "gpu-a02.cluster.local"]
    assert match_node("GPU-A01.cluster.local", nodes) == "gpu-a01"
    assert match_node("gpu-a02", nodes) == "gpu-a02.cluster.local"
    assert match_node("gpu-z99", nodes) is None and match_node(None, nodes) is None


def test_coverage_statuses() -> None:
    nodes = ["a", "b"]
    kw: dict[str, object] = {"expected": nodes, "files": 1, "lines": 3}
    assert coverage_item("kernel", seen={"a", "b"}, failures=0, requests=2, **kw).status == "complete"  # type: ignore[arg-type]
    part = coverage_item("kernel", seen={"a"}, failures=0, requests=2, **kw)  # type: ignore[arg-type]
    assert part.status == "partial" and part.missing_nodes == ["b"] and "1 of 2 nodes" in (part.note or "")
    assert coverage_item("kernel", seen=set(), failures=2, requests=2, **kw).status == "error"  # type: ignore[arg-type]
    assert coverage_item("kernel", expected=nodes, seen=set(), files=0, lines=0, failures=0,
                         requests=1).status == "empty"


def _client(handler: object, **kw: object) -> tuple[httpx.Client, HttpOptions, list[float]]:
    sleeps: list[float] = []
    opts = HttpOptions(transport=httpx.MockTransport(handler), sleep=sleeps.append, **kw)  # type: ignore[arg-type]
    return make_client(opts, "http://svc.test"), opts, sleeps


def test_retries_429_and_5xx_with_backoff_and_retry_after() -> None:
    answers = iter([httpx.Response(503), httpx.Response(429, headers={"Retry-After": "2"}), httpx.Response(200)])
    client, opts, sleeps = _client(lambda req: next(answers), retries=3, backoff=0.25)
    assert get(client, opts, "/x", {"q": "a b"}).status_code == 200
    assert sleeps == [0.25, 2.0]


def test_a_4xx_is_not_retried_and_the_error_names_the_url() -> None:
    calls: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        return httpx.Response(400, text="parse error at line 1")

    client, opts, sleeps = _client(handler, retries=3)
    with pytest.raises(FetchError) as ei:
        get(client, opts, "/api/v1/query_range", {"query": 'up{a="b"}[5m]'})
    assert len(calls) == 1 and sleeps == []
    assert ei.value.status == 400
    msg = str(ei.value)
    assert "http://svc.test/api/v1/query_range?query=up%7Ba%3D%22b%22%7D%5B5m%5D" in msg
    assert "HTTP 400: parse error at line 1" in msg


def test_connection_errors_are_retried_a_bounded_number_of_times() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=req)

    client, opts, sleeps = _client(handler, retries=4, backoff=1.0, max_backoff=3.0)
    with pytest.raises(FetchError, match=r"connection failed .* after 5 attempts"):
        get(client, opts, "/x", {})
    assert sleeps == [1.0, 2.0, 3.0, 3.0]


def test_basic_auth_is_sent_and_not_shown() -> None:
    seen: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.headers.get("authorization", ""))
        return httpx.Response(200)

    client, opts, _ = _client(handler, auth=BasicAuth("svc", "pa55word"))
    get(client, opts, "/x", {})
    assert seen == ["Basic c3ZjOnBhNTV3b3Jk"]
    assert "pa55word" not in repr(opts)


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        HttpOptions(concurrency=0)
    assert timedelta(0) < timedelta(seconds=HttpOptions().timeout)
