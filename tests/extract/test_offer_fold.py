"""A parallel reader's worker folds a file's unrecognized lines by shape (OfferFold); the parent takes
the entries (Unrecognized.merge). What it takes must be what offering the lines one by one gives:
the groups, their counts, places and earliest lines, and the overflow, whatever the order of the
lines, their times (some missing), hosts and ranks, and however full the template cache and the
groups are. The bounds are made small here so the full regimes are reached.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.extract import unrecognized as u
from firstfault.extract.base import Candidate
from firstfault.extract.unrecognized import OfferFold, Unrecognized
from tests import tier

# Line shapes that share a key (memo.line_shape) but not a template (eth0 / eth1: a digit after a letter is
# not masked), hex ids that share a key, shapes whose key holds a count of 0 (errors=0 is benign, errors=7
# is not), and plain ones.
BODIES = [
    "link eth0 failed: carrier lost",
    "link eth1 failed: carrier lost",
    "link eth7 failed: carrier lost",
    "rx errors=0 on port 3",
    "rx errors=7 on port 3",
    "shard 12 failed to load",
    "shard 99 failed to load",
    "shard 123 failed to load",
    "FATAL: allocator failed at 0x7f00",
    "FATAL: allocator failed at 0x7f99",
    "FATAL: allocator failed at 0x7fab",  # the shape of 0x7f00's: hex ids are masked with the digits
    "checksum deadbeef failed",
    "checksum cafef00d failed",
    "checksum cafe failed",  # too short for a hex id: a shape of its own
    "mount node-01:/scratch failed",
    "mount node-02:/scratch failed",
    "no errors found",
]
T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)

line = st.tuples(
    st.integers(0, len(BODIES) - 1),  # body
    st.one_of(st.none(), st.integers(0, 50)),  # seconds after T0, or no time
    st.sampled_from([None, "node-01", "node-02"]),  # host
    st.sampled_from([None, 0, 1, 2, 3]),  # rank
)
files = st.lists(st.lists(line, max_size=25), min_size=1, max_size=5)


def _candidates(files: list[list[tuple[int, int | None, str | None, int | None]]]
                ) -> list[list[tuple[Candidate, str, str | None]]]:
    out = []
    for f, lines in enumerate(files):
        out.append([(Candidate("kernel", f"nodes/n{f}/kern.log", i + 1, f"n{f % 2}", rank,
                               None if s is None else T0 + timedelta(seconds=s), "x " + BODIES[b]),
                     BODIES[b], host)
                    for i, (b, s, host, rank) in enumerate(lines)])
    return out


def _view(un: Unrecognized) -> tuple[object, ...]:
    groups = un.groups(lambda n, h, r: n, limit=10_000)
    return (tuple((g.template, g.count, tuple(g.nodes), g.file, g.line, g.time, g.text) for g in groups),
            tuple(sorted((t, tuple(sorted(g.where, key=repr))) for t, g in un._groups.items())), un.overflow)


def _both(files: list[list[tuple[Candidate, str, str | None]]]) -> tuple[tuple[object, ...], tuple[object, ...], int]:
    one = Unrecognized(("node-01", "node-02"))
    for lines in files:
        for c, body, host in lines:
            one.offer(c, body, host)
    folded = Unrecognized(("node-01", "node-02"))
    refused = 0
    for lines in files:
        fold = OfferFold()
        for c, body, host in lines:
            fold.offer(c, body, host)
        if not folded.merge(fold.take()):
            refused += 1  # what the parallel reader does then: offer the file's lines one by one
            for c, body, host in lines:
                folded.offer(c, body, host)
    return _view(one), _view(folded), refused


@pytest.mark.parametrize("cache_max, groups_max, where_max", [(20000, 2000, 256), (3, 2000, 256), (20000, 2, 2),
                                                              (4, 3, 1)])
@settings(max_examples=tier.examples(150), deadline=None, derandomize=True)
@given(files=files)
def test_folded_offers_give_what_offering_the_lines_one_by_one_gives(
        files: list[list[tuple[int, int | None, str | None, int | None]]], cache_max: int, groups_max: int,
        where_max: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(u, "_CACHE_MAX", cache_max)
        mp.setattr(u, "MAX_GROUPS", groups_max)
        mp.setattr(u, "_WHERE_MAX", where_max)
        one, folded, _ = _both(_candidates(files))
    assert folded == one


def test_a_fold_is_refused_only_where_the_cache_may_fill_and_the_lines_of_a_shape_differ(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # eth0 / eth1 share a key and not a template: offered one by one past a full cache, each line gets
    # its own template, which a fold (one body per shape) cannot give.
    lines = [[(0, 1, None, 0), (1, 2, None, 0)]]
    monkeypatch.setattr(u, "_CACHE_MAX", 0)
    one, folded, refused = _both(_candidates(lines))
    assert refused == 1 and folded == one
    assert [t for t, *_ in one[0]] == ["link eth0 failed: carrier lost", "link eth1 failed: carrier lost"]
    monkeypatch.setattr(u, "_CACHE_MAX", 20000)
    one, folded, refused = _both(_candidates(lines))
    assert refused == 0 and folded == one
    assert [(t, n) for t, n, *_ in one[0]] == [("link eth0 failed: carrier lost", 2)]


def test_the_earliest_line_is_by_time_then_place_and_a_line_without_time_comes_last() -> None:
    lines = [[(5, None, None, 0), (6, 30, None, 0), (7, 10, None, 1), (5, 10, None, 2)]]
    one, folded, _ = _both(_candidates(lines))
    assert folded == one
    (template, count, _, _, line, time, _), = one[0]
    assert (template, count, line, time) == ("shard <N> failed to load", 4, 3, T0 + timedelta(seconds=10))


def test_a_long_line_is_templated_from_its_first_characters_and_judged_benign_over_all_of_them() -> None:
    """The masks read TEMPLATE_SCAN characters of a line (a 1 MB line cost 20 ms a line in them); whether it is
    benign (`no errors`) is read over the whole line, however far the words are."""
    cfg = "".join(f'"timeout_s_{i}": {i * 7}, ' for i in range(40000))  # about 1 MB, a configuration dump
    un = Unrecognized()
    t = un.template("config error: {" + cfg)
    assert t is not None and t.startswith("config error: {<TEXT>: <N>, <TEXT>: <N>,")
    assert t == Unrecognized().template("config error: {" + cfg[:u.TEMPLATE_SCAN])
    # Near miss: the benign words at the end of the same megabyte make a line that says nothing else failed benign,
    # as on a short line (`config error: ... no errors` says an error: not benign)
    assert Unrecognized().template("config check: {" + cfg + " no errors") is None
    assert Unrecognized().template("config error: {" + cfg + " no errors") is not None


def test_template_masks_an_allocation_name_whole_and_longest() -> None:
    # The hosts' trie (lazyre.alternation) masks what the names sorted longest first did: the longest name
    # that ends a word (node-10, not node-1 and a 0), never a name inside a longer word (node-100, xnode-1,
    # gpu-abc: their digits masked as any number is).
    rec = Unrecognized(["node-1", "node-10", "gpu-a", "gpu-ab"])
    assert rec.template("ERROR node-10 down, node-100 up, xnode-1 failed, node-1.local failed") == \
        "ERROR <HOST> down, node-<N> up, xnode-<N> failed, <HOST>.local failed"
    assert rec.template("error: gpu-ab failed gpu-abc gpu-a") == "error: <HOST> failed gpu-abc <HOST>"
