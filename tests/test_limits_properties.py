"""Property tests (Hypothesis, fixed seed, bounded cases) that would have found issue 26's input defects: source
templates with globs and placeholders (a RecursionError, minutes of backtracking, another host's directory bound as
a node), timestamps at the calendar's limits (OverflowError), and rank and node names (a 2^70 rank, an unbounded
int(), a node outside the allocation)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from tempfile import TemporaryDirectory
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, assume, given, seed, settings
from hypothesis import strategies as st

from firstfault.bundle import MAX_RANK, MAX_RANKS, SourceSpec, parse_ranges, resolve_source, template_problem
from firstfault.engine.normalise import NodeMapper
from firstfault.timeparse import TIME_MAX, TIME_MIN, TimeParser, TimeRangeError, parse_rfc3339
from tests import tier

SEED = 20261203
BOUNDED = settings(max_examples=tier.examples(120), deadline=None, database=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
NODES = ["node-01", "node-02", "gpu-a.cluster.local"]
RANK_TO_NODE = {r: NODES[r % len(NODES)] for r in range(12)}

# -- source templates --

_literal = st.text(alphabet="abcz019-_.", min_size=1, max_size=6)
_token = st.sampled_from(["*", "?", "[ab]", "{node}", "{rank}", "**"])
_part = st.lists(st.one_of(_literal, _token), min_size=1, max_size=5).map("".join)
templates = st.lists(_part, min_size=1, max_size=5).map("/".join)


@seed(SEED)
@BOUNDED
@given(st.one_of(templates, st.text(max_size=200),
                 st.integers(1, 1200).map(lambda n: "logs/" + "*/" * n + "a.log"),
                 st.integers(1, 40).map(lambda n: "logs/" + "{rank}*" * n + ".log")))
def test_any_template_resolves_or_is_refused_by_name_in_bounded_time(template: str) -> None:
    with TemporaryDirectory() as d:
        root = Path(d)
        (root / "logs").mkdir()
        (root / "logs" / ("1" * 200 + "x.log")).write_text("x\n")
        t0 = time.monotonic()
        src = resolve_source(root, 0, SourceSpec(kind="kernel", path=template), NODES, RANK_TO_NODE)
        assert time.monotonic() - t0 < 5
    problem = template_problem(template)
    if problem is not None:
        assert [e for e in src.errors if problem in e] and not src.files
    for f in src.files:
        assert f.node is None or f.node in NODES
        assert f.rank is None or 0 <= f.rank <= MAX_RANK


def _instance(template: str, draw: st.DrawFn) -> tuple[str, str | None, int | None]:
    """A file name the template names, with the node and rank it was made with (the first of each)."""
    node = draw(st.sampled_from([*NODES, "NODE-01", "node-02.cluster.local"]))
    rank = draw(st.integers(0, 11))
    out = template.replace("{node}", node).replace("{rank}", str(rank))
    while "**" in out:
        out = out.replace("**", "*")
    out = "".join(draw(st.sampled_from(["", "q", "zz"])) if ch == "*" else "a" if ch == "?" else ch for ch in out)
    return out.replace("[ab]", "b"), (node if "{node}" in template else None), (rank if "{rank}" in template else None)


@st.composite
def named_files(draw: st.DrawFn) -> tuple[str, str, str | None, int | None]:
    template = draw(templates.filter(lambda t: template_problem(t) is None))
    name, node, rank = _instance(template, draw)
    # A name with an empty part, a `.` or `..` part, or a part that starts with a dot (glob's `*` and `?` never
    # match a leading dot) is no file such a template can name.
    assume(all(part and not part.startswith(".") for part in name.split("/")))
    return template, name, node, rank


@seed(SEED)
@BOUNDED
@given(named_files())
def test_a_file_a_template_names_is_found_and_bound_to_the_allocation(case: tuple[str, str, str | None, int | None]
                                                                      ) -> None:
    template, name, node, rank = case
    with TemporaryDirectory() as d:
        root = Path(d)
        try:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("x\n")
        except OSError:  # a name the file system refuses (a part that is a file and a directory at once)
            return
        src = resolve_source(root, 0, SourceSpec(kind="kernel", path=template), NODES, RANK_TO_NODE)
    found = [f for f in src.files if f.rel == name]
    assert found, (template, name, src.errors)
    f = found[0]
    if node is not None:  # the allocation's own name, whatever spelling the directory used
        assert f.node == NodeMapper(NODES, {}).inside(node) and f.node in NODES
    if rank is not None:
        assert f.rank is not None and 0 <= f.rank <= MAX_RANK


# -- timestamps at the limits --

_years = st.one_of(st.sampled_from([1, 2, 999, 1000, 1001, 1970, 8998, 8999, 9000, 9998, 9999]), st.integers(1, 9999))
_offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
_zones = st.sampled_from(["UTC", "Asia/Tokyo", "America/New_York", "Pacific/Kiritimati", "Etc/GMT+12"])
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@st.composite
def stamped_lines(draw: st.DrawFn) -> str:
    y, mo, d = draw(_years), draw(st.integers(1, 12)), draw(st.integers(1, 28))
    h, mi, s = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    off = draw(_offsets).utcoffset(None)
    assert off is not None
    sign, mins = ("-" if off < timedelta(0) else "+"), abs(int(off.total_seconds())) // 60
    hh, mm = mins // 60, mins % 60
    zone = draw(st.sampled_from(["", "Z", f"{sign}{hh:02d}:{mm:02d}", f"{sign}{hh:02d}{mm:02d}"]))
    m = _MONTHS[mo - 1]
    form = draw(st.sampled_from([
        f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.123456{zone} node-01 kernel: x",
        f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d},123 ERROR x",
        f"[Mon {m} {d:2d} {h:02d}:{mi:02d}:{s:02d} {y:04d}] NVRM: x",
        f"[{m} {d:02d} {y:04d} {h:02d}:{mi:02d}:{s:02d}] [ERROR] [tid 1] x",
        f"{m} {d:2d} {h:02d}:{mi:02d}:{s:02d} node-01 kernel: [{draw(st.integers(0, 9999999999))}.123456] x",
        f"[rank0]:[E{mo}{d:02d} {h:02d}:{mi:02d}:{s:02d}.123456 1 x.cpp:1] x",
        f"*** JOB 1 ON node-01 CANCELLED AT {y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d} ***",
    ]))
    return form


@seed(SEED)
@settings(max_examples=tier.examples(400), deadline=None, database=None)
@given(stamped_lines(), _zones, _years)
def test_a_stamp_at_any_year_in_any_zone_is_a_time_in_range_or_none(line: str, zone: str, window_year: int) -> None:
    start = datetime(min(max(window_year, 1000), 8998), 6, 1, tzinfo=UTC)
    tp = TimeParser(ZoneInfo(zone), start, start + timedelta(hours=1))
    for parse in (tp.parse, tp.parse):  # the second time through the caches
        got = parse(line)
        if got is not None and got.wall is not None:
            assert TIME_MIN <= got.wall < TIME_MAX


@seed(SEED)
@settings(max_examples=tier.examples(300), deadline=None, database=None)
@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)), _offsets,
       st.booleans())
def test_rfc3339_at_any_year_is_a_time_in_range_or_a_named_error(t: datetime, tz: timezone, naive: bool) -> None:
    text = t.isoformat() if naive else t.replace(tzinfo=tz).isoformat()
    try:
        got = parse_rfc3339(text)
    except TimeRangeError as exc:
        assert "outside the times firstfault reads" in str(exc)
    else:
        assert TIME_MIN <= got < TIME_MAX


# -- rank and node names --

@seed(SEED)
@BOUNDED
@given(st.one_of(st.text(alphabet="0123456789", min_size=1, max_size=6000), st.integers(0, 2 ** 80).map(str)))
def test_any_digits_in_a_file_name_are_a_rank_or_a_named_refusal(digits: str) -> None:
    with TemporaryDirectory() as d:
        root = Path(d)
        (root / "app").mkdir()
        name = f"rank-{digits}.log"
        if len(name.encode()) > 255:  # NAME_MAX: no such file can exist
            return
        (root / "app" / name).write_text("x\n")
        src = resolve_source(root, 0, SourceSpec(kind="application", path="app/rank-{rank}.log"), NODES, RANK_TO_NODE)
    if int(digits) <= MAX_RANK:
        assert [f.rank for f in src.files] == [int(digits)] and not src.errors
    else:
        assert not src.files and src.errors and src.errors[0].startswith(f"app/{name}: rank ")


@seed(SEED)
@BOUNDED
@given(st.one_of(st.text(max_size=60), st.lists(st.integers(-(2 ** 70), 2 ** 70), max_size=5),
                 st.integers(-(2 ** 70), 2 ** 70)))
def test_any_rank_spec_is_ranks_in_range_or_a_value_error(spec: str | list[int] | int) -> None:
    try:
        ranks = parse_ranges(spec)
    except ValueError:
        return
    assert len(ranks) <= MAX_RANKS and all(0 <= r <= MAX_RANK for r in ranks)


_node_names = st.one_of(
    st.sampled_from([*NODES, "NODE-02", "node-02.other.domain", "gpu-a", "node-77", "node-0", "node-011"]),
    st.text(alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]), min_size=1,
            max_size=40))


@seed(SEED)
@BOUNDED
@given(_node_names)
def test_a_directory_name_under_node_is_an_allocation_node_or_named_as_outside(name: str) -> None:
    with TemporaryDirectory() as d:
        root = Path(d)
        try:
            (root / "nodes" / name).mkdir(parents=True)
            (root / "nodes" / name / "kern.log").write_text("x\n")
        except (OSError, ValueError):  # `.`, `..` or a name the file system refuses
            return
        src = resolve_source(root, 0, SourceSpec(kind="kernel", path="nodes/{node}/kern.log"), NODES, RANK_TO_NODE)
    inside = NodeMapper(NODES, {}).inside(os.fsdecode(os.fsencode(name)))
    if inside is None:
        assert not src.files and [host for _, host in src.outside] == [name]
    else:
        assert [f.node for f in src.files] == [inside] and inside in NODES and not src.outside
