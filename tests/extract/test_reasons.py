"""The schedulers' reasons table (catalog/scheduler.yaml) and its reader (extract/reasons.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from firstfault.catalog import tables
from firstfault.catalog.tables import _phrase_inside
from firstfault.catalog.vocab import CatalogTableError
from firstfault.extract import reasons
from firstfault.spec import STATE_OUTCOMES


def test_every_reason_ends_a_job_in_a_state_the_verdict_knows() -> None:
    t = tables.sched_tables()
    assert {r.reason for r in t.reasons} >= {w.reason for w in t.words if w.reason} | {
        x.reason for x in t.texts if x.reason}
    assert all(r.state in STATE_OUTCOMES for r in t.reasons)
    assert reasons.state_of("time_limit") == "TIMEOUT" and reasons.state_of("due to job requeue") is None


def test_a_refining_phrase_must_extend_the_other_at_its_end() -> None:
    # Inside another phrase, a phrase would win where the longer one was meant.
    assert _phrase_inside("Pod The node was low on resource: memory", "The node was low on resource: ")
    # A whole-word phrase inside a word is no match there: `mem N` is not inside `vmem N`.
    assert not _phrase_inside("vmem {n} exceeded limit {n}", "mem {n} exceeded limit {n}")
    assert not _phrase_inside("The node was low on resource: memory", "The node was low on resource: ")
    # Running into the other's start is as bad: it matches first.
    assert _phrase_inside("job killed: walltime {n}", "walltime {n} exceeded limit {n}")


@pytest.fixture
def table_doc(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """catalog/scheduler.yaml as parsed, to be broken by a test; the table is built again from it."""
    import copy

    doc: dict[str, Any] = copy.deepcopy(tables._document("scheduler.yaml"))
    real = tables._document

    monkeypatch.setattr(tables, "_document", lambda name: doc if name == "scheduler.yaml" else real(name))
    monkeypatch.setenv("FIRSTFAULT_CACHE", "off")
    tables.sched_tables.cache_clear()
    yield doc
    tables.sched_tables.cache_clear()


def _add(key: str, row: dict[str, Any]) -> Any:
    def edit(d: dict[str, Any]) -> str:
        d[key].append(row)
        return f"{key}[{len(d[key]) - 1}]"
    return edit


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        # Starts before `walltime {n} exceeded limit {n}` and runs into it: it would win where that one is meant,
        # and say another thing.
        (_add("texts", {"scheduler": "pbs", "text": "job killed: walltime {n}", "reason": "cancelled"}),
         "can match one inside the other"),
        (_add("words", {"scheduler": "lsf", "word": "TERM_RUNLIMIT", "reason": "time_limit"}),
         "duplicate word 'TERM_RUNLIMIT'"),
        (_add("words", {"scheduler": "mesos", "word": "X", "reason": "time_limit"}), ".scheduler"),
        (_add("texts", {"scheduler": "pbs", "text": "lost {node} here", "reason": None}), ".text"),
        (lambda d: d["reasons"].pop(0) and "", "no row for time_limit"),
    ],
)
def test_a_broken_table_is_an_error_naming_the_row(table_doc: dict[str, Any], edit: Any, says: str) -> None:
    where = edit(table_doc)
    with pytest.raises(CatalogTableError) as err:
        tables.sched_tables()
    assert says in str(err.value) and where in str(err.value)


def test_k8s_reason_the_message_refines_an_eviction_only() -> None:
    assert reasons.k8s_reason("Evicted", "The node was low on resource: memory.") == ("memory_limit", "memory")
    assert reasons.k8s_reason("Evicted", "The node had condition: [DiskPressure].") == ("eviction", "DiskPressure")
    assert reasons.k8s_reason("Evicted", None) == ("eviction", None)
    # A word that names its own reason keeps it whatever the message says.
    assert reasons.k8s_reason("OOMKilled", "The node had condition: [DiskPressure].") == ("memory_limit", None)
    assert reasons.k8s_reason("Unknown", None, "phase") == ("node_failure", None)
    assert reasons.k8s_reason("Unknown", None) == (None, None)  # as a reason word, Unknown names nothing


def test_the_prefilter_words_are_those_that_hold_no_other() -> None:
    # line_literals keeps the words that hold no other of them (one search a word in all of them joined by a newline):
    # the same as testing each against each. Near misses: a word that is only found across the join of two others
    # (words holding the newline: a random set of them) holds nothing by that, and a word that another begins with
    # is held by it, not the other way.
    import random

    def each_against_each(words: set[str]) -> tuple[str, ...]:
        return tuple(sorted(w for w in words if not any(o != w and o in w for o in words)))

    words = {"Job ran out of", "out of", "ran out of memory", "NodeFail", "Node", "Nod"}
    assert reasons._holding_none(words) == each_against_each(words) == ("Nod", "out of")
    rnd = random.Random(27)
    for _ in range(500):
        some = {"".join(rnd.choice("ab\n") for _ in range(rnd.randint(1, 5))) for _ in range(12)}
        assert reasons._holding_none(some) == each_against_each(some), some
    got = reasons.line_literals()
    assert got and not any(o != w and o in w for w in got for o in got)
