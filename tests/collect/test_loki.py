"""Loki connector: httpx against a loopback replay of a recorded query_range answer.

No Loki server can run here (none is packaged for Debian, PyPI or npm), so
tests/harness/replay.py serves tests/fixtures/loki/query_range_streams.json
(a recorded `streams` answer in Loki's documented format) and applies the
documented request semantics to it: stream matchers, the `|~` line filter,
inclusive start, exclusive end, limit and direction. The fixture: kernel
streams of node-01..03 (journald noise with dmesg uptimes; Xid 79 on node-02
at 10:12:00.5 plus a second entry in the same nanosecond) and application
streams of llm-worker-0..2 (node-02's stops at the fault; the others report
NCCL IB errors at 10:12:01 and watchdog timeouts at 10:22:31).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from firstfault.analysis.analyze import Analysis, Analyzer
from firstfault.bundle import Context, WindowSpec, WorkloadSpec
from firstfault.collect.http import BearerAuth, HttpOptions
from firstfault.collect.lines import WordFilter
from firstfault.collect.loki import LokiConnector, line_filter, render_selector
from firstfault.collect.scan import prefilter_words
from firstfault.extract.base import Candidate
from tests.harness.replay import LokiReplay, ReplayServer, Request, _go_unquote, spy_candidates

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "loki" / "query_range_streams.json"
NODES = ["node-01", "node-02", "node-03"]
QUERIES = {"kernel": '{job="varlogs", host="{node}"}', "application": '{namespace="train", pod=~"{workload}-.*"}'}
WORDS = prefilter_words()


def _ctx(nodes: list[str] = NODES) -> Context:
    return Context.from_spec(WorkloadSpec(
        id="9001", name="llm-worker", scheduler="kueue", nodes=nodes, terminal_state="FAILED",
        window=WindowSpec(start="2026-10-20T10:00:00Z", end="2026-10-20T10:30:00Z")))


def _opts(**kw: object) -> HttpOptions:
    base: dict[str, object] = {"retries": 1, "sleep": lambda _s: None, "timeout": 5.0}
    base.update(kw)
    return HttpOptions(**base)  # type: ignore[arg-type]


def _run(url: str, ctx: Context | None = None, **kw: object) -> tuple[Analysis, list[Candidate]]:
    ctx = ctx or _ctx()
    kw.setdefault("http", _opts())
    conn = LokiConnector(url, QUERIES, node_label="host", rank_label="rank", **kw)  # type: ignore[arg-type]
    analysis = Analyzer().start(ctx)
    got: list[Candidate] = spy_candidates(analysis)
    conn.collect(ctx, WORDS, analysis)
    return analysis, got


def _expected_entries(start: datetime, end: datetime) -> set[tuple[str, int, str]]:
    """What a correct reader must return: every matching entry in [start, end), once."""
    body = json.loads(FIXTURE.read_text())
    wf = WordFilter(WORDS)
    a, b = int(start.timestamp()) * 10**9, int(end.timestamp()) * 10**9
    out = set()
    for s in body["data"]["result"]:
        for ts, line in s["values"]:
            if a <= int(ts) < b and wf(line):
                out.add((s["stream"]["host"], int(ts), line))
    return out


@pytest.fixture
def loki() -> Iterator[ReplayServer]:
    with ReplayServer(LokiReplay(FIXTURE)) as srv:
        yield srv


def _forward(r: Request) -> bool:
    return r.params.get("direction") == "forward"


# -- LogQL building ---------------------------------------------------------------------------


def test_line_filter_is_one_re2_regex_of_literal_words() -> None:
    words = ["(core dumped)", 'say "hi"', "a.b", "x\\y", "exitcode: "]
    flt = line_filter(words)
    m = re.fullmatch(r'\|~ "((?:[^"\\]|\\.)*)"', flt)
    assert m is not None
    rx = re.compile(_go_unquote(m.group(1)))  # what Loki's Go string parser then RE2 would see
    for w in words:
        assert rx.search(f"... {w} ...")
    assert not rx.search("aXb") and not rx.search("core dumped")


@pytest.mark.parametrize("source", ["application", "kernel", "syslog", "scheduler", None])
def test_the_catalogs_filter_fits_a_query_and_keeps_every_line_its_words_keep(source: str | None) -> None:
    # the shipped prefilter for each source kind (more than 2,600 words for the application's): cut to its words'
    # prefixes where the whole would not fit a query string, a filter that still keeps every line any word keeps
    from urllib.parse import quote

    from firstfault.collect.loki import FILTER_BUDGET
    from firstfault.collect.scan import prefilter_words

    words = prefilter_words(source)
    flt = line_filter(words)
    assert len(quote(flt, safe="")) <= FILTER_BUDGET
    m = re.fullmatch(r'\|~ "((?:[^"\\]|\\.)*)"', flt)
    assert m is not None
    rx = re.compile(_go_unquote(m.group(1)))
    assert all(rx.search(f"x {w} y") for w in words)


def test_a_filter_over_the_budget_is_cut_to_prefixes_that_keep_the_same_lines() -> None:
    words = ["Check failed: result == ncclSuccess (", "Check failed: error == cudaSuccess (", "unhandled system error"]
    from urllib.parse import quote

    exact = line_filter(words)
    weight = len(quote(exact, safe=""))
    assert line_filter(words, budget=weight) == exact  # fits: unchanged
    cut = line_filter(words, budget=weight // 2)
    assert len(cut) < len(exact)
    m = re.fullmatch(r'\|~ "((?:[^"\\]|\\.)*)"', cut)
    assert m is not None
    rx = re.compile(_go_unquote(m.group(1)))
    assert all(rx.search(w) for w in words)
    assert not rx.search("an ordinary line")  # near miss: still a filter


def test_selector_placeholders_are_quoted_inside_the_template() -> None:
    sel = render_selector('{host="{node}", pod=~"{workload}-.*", n=~"{nodes}"}', node='n"1',
                          nodes=["a.b", "c"], workload="w", job_id="7")
    assert sel == '{host="n\\"1", pod=~"w-.*", n=~"a\\\\.b|c"}'


def test_queries_must_name_log_kinds() -> None:
    with pytest.raises(ValueError, match="metrics"):
        LokiConnector("http://x", {"metrics": "{a=\"b\"}"})


# -- against the replay -----------------------------------------------------------------------


def test_paging_and_chunks_return_every_matching_entry_once(loki: ReplayServer) -> None:
    analysis, got = _run(loki.url, limit=3, max_window=timedelta(minutes=10))
    win = (datetime(2026, 10, 20, 9, 55, tzinfo=UTC), datetime(2026, 10, 20, 10, 35, tzinfo=UTC))
    expected = _expected_entries(*win)
    seen = {(c.node, c.text) for c in got}
    assert len(got) == len(expected) == len(seen)
    assert seen == {(host, line) for host, _ts, line in expected}
    # Both Xid lines share one nanosecond and straddle a page boundary: neither lost nor doubled.
    xid = [c for c in got if "fallen off the bus" in c.text]
    assert len(xid) == 2 and xid[0].time == xid[1].time
    # 4 chunks of 10 min; the application chunk 10:15-10:25 (6 watchdog lines, limit 3) pages at least twice.
    fwd = [r for r in loki.stats.requests if _forward(r) and 'namespace="train"' in r.params.get("query", "")]
    starts = {r.params["end"] for r in fwd}
    assert len(starts) == 4
    pages = max(sum(1 for r in fwd if r.params["end"] == e) for e in starts)
    assert pages >= 3  # the limit was reached twice in one chunk
    assert all(r.params["limit"] == "3" and "|~" in r.params.get("query", "") for r in fwd)
    assert analysis.errors == []


def test_candidates_are_placed_and_judged(loki: ReplayServer) -> None:
    analysis, got = _run(loki.url)
    xid = next(c for c in got if "NVRM: Xid" in c.text)
    assert xid.source == "kernel" and xid.node == "node-02" and xid.rank is None
    assert xid.file == 'loki:{filename="/var/log/kern.log",host="node-02",job="varlogs"}'
    # dmesg uptime with no boot time known: Loki's nanosecond stamp places it.
    assert xid.time == datetime(2026, 10, 20, 10, 12, 0, 500000, tzinfo=UTC)
    wd = next(c for c in got if "Watchdog" in c.text and c.node == "node-03")
    assert wd.rank == 2 and wd.source == "application"
    assert wd.time == datetime(2026, 10, 20, 10, 22, 31, 123456, tzinfo=UTC)  # its own glog stamp
    # line numbers: positions in the stream Loki returned, in time order
    app = [c for c in got if c.file == next(x.file for x in got if x.node == "node-01" and x.source == "application")]
    assert [c.line for c in app] == sorted(c.line for c in app) and app[0].line == 1
    # the probe gives node-02's last application line, which held no prefilter word
    assert analysis.node_last_seen["node-02"] == datetime(2026, 10, 20, 10, 11, 55, 0, tzinfo=UTC)
    cov = {c.source: c for c in analysis.coverage}
    assert cov["kernel"].status == "complete" and cov["kernel"].nodes_seen == 3
    assert cov["application"].status == "complete"
    verdict = analysis.finish()
    assert verdict.root_cause is not None
    assert (verdict.root_cause.category, verdict.root_cause.nodes) == ("gpu.fallen_off_bus", ["node-02"])


def test_a_500_on_one_chunk_is_recorded_and_the_other_chunks_are_kept(loki: ReplayServer) -> None:
    bad_start = str(int(datetime(2026, 10, 20, 10, 15, tzinfo=UTC).timestamp()) * 10**9)
    loki.fail(lambda r: _forward(r) and r.params["start"] == bad_start
              and 'namespace="train"' in r.params.get("query", ""), status=500)
    analysis, got = _run(loki.url, max_window=timedelta(minutes=10))
    assert not any("Watchdog" in c.text for c in got)  # they were in the failed chunk
    assert any("NCCL WARN" in c.text for c in got) and any("NVRM: Xid" in c.text for c in got)
    assert len(analysis.errors) == 1
    err = analysis.errors[0]
    assert err.source == "application" and err.file == 'loki:{namespace="train", pod=~"llm-worker-.*"}'
    assert "HTTP 500" in err.message and "after 2 attempts" in err.message
    assert f"start={bad_start}" in err.message and "/loki/api/v1/query_range?query=" in err.message
    cov = {c.source: c for c in analysis.coverage}
    assert cov["application"].status == "partial"
    assert re.search(r"^1 of \d+ request\(s\) failed", cov["application"].note or "")
    assert cov["kernel"].status == "complete"


def test_a_timeout_is_an_error_for_that_query_only(loki: ReplayServer) -> None:
    # The stalled query waits well past the timeout, and the timeout is well past what an answered query takes on a
    # loaded machine (0.3 s once timed out a query that was answered, under a load of 4).
    loki.fail(lambda r: 'host="node-03"' in r.params.get("query", "") and _forward(r), status=None, delay=6.0)
    analysis, got = _run(loki.url, http=_opts(timeout=2.0, retries=1))
    msgs = [e.message for e in analysis.errors]
    assert len(msgs) == 1 and "timed out" in msgs[0] and "node-03" in msgs[0]
    assert any(c.node == "node-02" and "NVRM: Xid" in c.text for c in got)
    assert {c.source: c.status for c in analysis.coverage}["kernel"] == "partial"


def test_auth_and_tenant_headers_are_sent_and_the_secret_is_never_shown(loki: ReplayServer) -> None:
    loki.fail(lambda r: r.headers.get("authorization") != "Bearer s3cret-token", status=401)
    analysis, got = _run(loki.url, http=_opts(auth=BearerAuth("s3cret-token")), tenant="team-a")
    assert got and analysis.errors == []
    assert all(r.headers.get("x-scope-orgid") == "team-a" for r in loki.stats.requests)
    assert "s3cret" not in repr(_opts(auth=BearerAuth("s3cret-token")))


def test_a_rejected_query_fails_at_once(loki: ReplayServer) -> None:
    loki.fail(lambda r: True, status=400)
    analysis, _ = _run(loki.url, http=_opts(retries=3))
    # 3 kernel queries + 3 probes, 1 application query + its /series listing: no retries for a 400
    assert len(loki.stats.requests) == 3 * 2 + 2
    assert {c.status for c in analysis.coverage} == {"error"}
    assert all("HTTP 400" in e.message for e in analysis.errors)


def test_no_window_start_means_no_query_and_an_error(loki: ReplayServer) -> None:
    ctx = Context.from_spec(WorkloadSpec(id="1", nodes=NODES))
    analysis, _ = _run(loki.url, ctx=ctx)
    assert loki.stats.requests == []
    assert {c.status for c in analysis.coverage} == {"error"} and len(analysis.errors) == 2


def test_a_thousand_node_job_keeps_to_the_concurrency_limit() -> None:
    """1000 per-node queries through 4 connections: the replay counts what is open at once."""
    nodes = [*NODES, *(f"node-{i:04d}" for i in range(997))]
    ns = str(int(datetime(2026, 10, 20, 10, 12, tzinfo=UTC).timestamp()) * 10**9)
    small = {"status": "success", "data": {"resultType": "streams", "result": [
        {"stream": {"job": "varlogs", "host": "node-02"}, "values": [[ns, "NVRM: Xid (PCI:0000:3b:00): 79, pid=1"]]}]}}
    with ReplayServer(LokiReplay(small), delay=0.002) as srv:
        conn = LokiConnector(srv.url, {"kernel": '{job="varlogs", host="{node}"}'}, probe=False,
                             http=_opts(concurrency=4))
        analysis = Analyzer().start(_ctx(nodes))
        conn.collect(_ctx(nodes), ["NVRM: Xid"], analysis)
        assert len(srv.stats.requests) == 1000
        assert 1 < srv.stats.max_inflight <= 4
        assert srv.stats.max_open_connections <= 4 and srv.stats.connections <= 4
    cov = analysis.coverage[0]
    assert cov.nodes_expected == 1000 and cov.nodes_seen == 1  # only node-02 has matching kernel lines


# -- followed while the attempt runs (collect/follow.py) ---------------------------------------------------------


def test_followed_loki_reads_each_entry_once_across_polls_and_finds_the_fault_as_it_comes(loki: ReplayServer) -> None:
    """The attempt as it ran (no end): polls whose bounds fall between, and on, the fixture's entries (10:12:00.5
    holds two entries of one nanosecond) give every entry of the one-shot read, once; the Xid is judged a cause
    once it has been read, not before."""
    from firstfault.collect.follow import LokiFollow

    running = Context.from_spec(WorkloadSpec(
        id="9001", name="llm-worker", scheduler="kueue", nodes=NODES, window=WindowSpec(start="2026-10-20T10:00:00Z")))
    conn = LokiConnector(loki.url, QUERIES, node_label="host", rank_label="rank", http=_opts(), limit=3)
    follow = LokiFollow(conn, running, WORDS, lag=timedelta(0))
    analysis = Analyzer().start(running)
    got: list[Candidate] = spy_candidates(analysis)
    at = [datetime(2026, 10, 20, 10, 5, tzinfo=UTC), datetime(2026, 10, 20, 10, 12, 0, 500000, tzinfo=UTC)]
    for now in at:
        follow.poll(analysis, now)
    assert analysis.finish(provisional=True).root_cause is None  # [.., 10:12:00.5): the fault not yet read
    for now in (datetime(2026, 10, 20, 10, 12, 3, tzinfo=UTC), datetime(2026, 10, 20, 10, 40, tzinfo=UTC)):
        follow.poll(analysis, now)
        if now.minute == 12:
            v = analysis.finish(provisional=True)
            assert v.root_cause is not None and (v.root_cause.category, v.root_cause.nodes) == (
                "gpu.fallen_off_bus", ["node-02"])
    expected = _expected_entries(datetime(2026, 10, 20, 9, 55, tzinfo=UTC), datetime(2026, 10, 20, 10, 40, tzinfo=UTC))
    assert sorted((c.node, c.text) for c in got) == sorted((h, line) for h, _ts, line in expected)
    assert follow.cursor() == {"ns": int(datetime(2026, 10, 20, 10, 40, tzinfo=UTC).timestamp()) * 10**9}
    # Line numbers go on across polls: one stream's are 1, 2, 3 ... in time order.
    app = [c for c in got if c.source == "application" and c.node == "node-01"]
    assert [c.line for c in app] == list(range(1, len(app) + 1))
    follow.close()
