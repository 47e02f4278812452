"""Property tests (Hypothesis, fixed seed, bounded cases) of the flight-recorder reader and the pickle check
(issue 26): documents of any depth, width and integer size, in every pickle protocol and in JSON, are read
or refused with a problem, never raise, and give only scalars a verdict can hold; the check refuses exactly
the structures past its limits, computed here on the built object itself."""

from __future__ import annotations

import json
import math
import pickle
import sys
from typing import Any

from hypothesis import HealthCheck, assume, given, seed, settings
from hypothesis import strategies as st

from firstfault.extract.flightrec import MAX_PGS, read_flight_recorder
from firstfault.extract.safepickle import PickleLimits, PickleRefused, check_pickle, load
from firstfault.extract.structured import MAX_ISSUES, TEXT_LIMIT, fits_int64

SEED = 20261203
BOUNDED = settings(max_examples=150, deadline=None, database=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Integers of every width: small, around 64 bits, and up to 40,000 bits (past the check's 4,096 bytes).
wide = st.builds(lambda bits, neg: (-1 if neg else 1) * ((1 << bits) - 1), st.integers(0, 40_000), st.booleans())
ints = st.one_of(st.integers(-(2**70), 2**70), wide)
scalars = st.one_of(st.none(), st.booleans(), ints, st.floats(allow_nan=False), st.text(max_size=30),
                    st.binary(max_size=10))
values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.tuples(kids, kids)
                      | st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=20)


def doubled(levels: int) -> list[Any]:
    a: list[Any] = []
    for _ in range(levels):
        a = [a, a]
    return a


def nested(levels: int) -> Any:
    a: Any = 0
    for _ in range(levels):
        a = [a]
    return a


# What a hostile dump puts where a field belongs: any value, a shared structure, a deep one.
odd = st.one_of(values, st.integers(0, 40).map(doubled), st.integers(0, 60).map(nested))
ops = st.sampled_from(["nccl:all_reduce", "nccl:broadcast", "nccl:send 0->1", "nccl:_all_gather_base", "?"])
states = st.sampled_from(["completed", "started", "scheduled"])
shapes = st.lists(st.lists(ints, max_size=4), max_size=3)
entry = st.fixed_dictionaries({}, optional={
    "record_id": ints | odd, "pg_id": ints | odd, "collective_seq_id": ints | odd,
    "process_group": st.tuples(st.text(max_size=3) | odd, st.text(max_size=10) | odd) | odd,
    "profiling_name": ops | odd, "state": states | odd, "input_sizes": shapes | odd, "output_sizes": shapes | odd,
    "time_created_ns": ints | odd, "is_p2p": st.booleans() | odd})
status = st.fixed_dictionaries({}, optional={
    "last_enqueued_collective": ints | odd, "last_started_collective": ints | odd,
    "last_completed_collective": ints | odd})
document = st.fixed_dictionaries({"entries": st.lists(entry | odd, max_size=12) | odd}, optional={
    "version": st.just("2.5") | odd, "rank": ints | odd, "hostname": st.text(max_size=20) | odd,
    "pg_status": st.dictionaries(st.text(max_size=3) | ints, status | odd, max_size=4) | odd,
    "pg_config": st.dictionaries(st.text(max_size=3), st.fixed_dictionaries({}, optional={"desc": odd}),
                                 max_size=4) | odd})
encodings = st.sampled_from(["pickle-0", "pickle-2", "pickle-4", "pickle-5", "json"])


def encode(doc: Any, how: str) -> bytes:
    if how == "json":
        # JSON has no memo: a shared structure is written out whole, so only modest ones are sent that way.
        assume(_measure(doc, lambda _x: 1)[1] < 100_000)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # only to write the input (JSON, pickle 0 and 1 write integers in decimal)
    try:
        if how == "json":
            return json.dumps(doc, default=lambda b: b.hex()).encode()
        return pickle.dumps(doc, protocol=int(how.rsplit("-", 1)[1]))
    finally:
        sys.set_int_max_str_digits(old)


@seed(SEED)
@BOUNDED
@given(st.one_of(document, document, values), encodings)
def test_any_dump_is_read_or_refused_and_gives_only_storable_scalars(doc: Any, how: str) -> None:
    res = read_flight_recorder(encode(doc, how), "fr/rank-0.pkl", rank=0)
    assert len(res.events) <= MAX_PGS and len(res.issues) <= MAX_ISSUES
    for ev in res.events:
        assert ev.kind == "fr.pg_state" and ev.rank == 0 and len(ev.evidence.text or "") < 2 * TEXT_LIMIT
        for key, v in ev.fields.items():
            assert v is None or isinstance(v, (str, int, float, bool)), (key, type(v))
            if isinstance(v, int):
                assert fits_int64(v), key
            if isinstance(v, str):
                assert len(v) <= 16 * 4 * 210, key  # `recent`: 16 collectives of clipped names
    if not res.events and res.issues:
        assert res.issues[0].message  # a refusal or a problem names itself


def _kids(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [*x.keys(), *x.values()]
    return list(x) if isinstance(x, (list, tuple)) else []


def _measure(x: Any, scalar: Any, memo: dict[int, tuple[int, int]] | None = None) -> tuple[int, int]:
    """(depth, size written out) of an object, each shared part measured once (by id) and counted at each use.

    The check's depth: a scalar or an empty container 0, a container one more than its deepest item. The
    size: `scalar(x)` for a scalar, 1 plus its items' for a container.
    """
    memo = {} if memo is None else memo
    if not isinstance(x, (dict, list, tuple)):
        return 0, scalar(x)
    if id(x) not in memo:
        kids = [_measure(k, scalar, memo) for k in _kids(x)]
        memo[id(x)] = (1 + max(d for d, _ in kids) if kids else 0, 1 + sum(n for _, n in kids))
    return memo[id(x)]


def _most(x: Any) -> int:  # the most a scalar weighs in any protocol (its opcode, a length prefix, text escapes)
    if isinstance(x, str):
        return 16 + 10 * len(x)
    return 16 + len(str(abs(x))) if isinstance(x, int) else 16


@st.composite
def dags(draw: st.DrawFn) -> Any:
    """Containers made of earlier objects, so objects are shared (the memo) and structures expand."""
    nodes: list[Any] = []
    for _ in range(draw(st.integers(1, 16))):
        kind = draw(st.sampled_from(["int", "str", "list", "list", "tuple", "dict", "dict", "dict"]))
        if kind == "int":
            nodes.append(draw(st.integers(-(10**30), 10**30)))
        elif kind == "str":
            nodes.append(draw(st.text(max_size=12)))
        else:  # items mostly from the last few objects: chains of reuse, which is how a structure expands
            near = st.integers(max(0, len(nodes) - 3), len(nodes) - 1)
            items = [nodes[i] for i in draw(st.lists(near, max_size=5))] if nodes else []
            nodes.append(items if kind == "list" else tuple(items) if kind == "tuple"
                         else {f"k{j}": v for j, v in enumerate(items)})
    return nodes[-1]


LIMITS = PickleLimits(max_objects=100_000, max_depth=3, max_expanded=80, max_int_bytes=64)


@seed(SEED)
@settings(BOUNDED, max_examples=200)
@given(dags(), st.integers(0, 5))
def test_the_check_refuses_exactly_what_is_past_its_limits(obj: Any, protocol: int) -> None:
    data = pickle.dumps(obj, protocol=protocol)
    (depth, least), (_, most) = _measure(obj, lambda _x: 1), _measure(obj, _most)
    try:
        check_pickle(data, LIMITS)
    except PickleRefused:
        assert depth > LIMITS.max_depth or most > LIMITS.max_expanded, (depth, least, most)
    else:
        assert depth <= LIMITS.max_depth and least <= LIMITS.max_expanded, (depth, least, most)
        assert load(data, LIMITS) == pickle.loads(data)


@seed(SEED)
@BOUNDED
@given(st.binary(max_size=300))
def test_any_bytes_are_read_or_refused(data: bytes) -> None:
    res = read_flight_recorder(data, "f")
    assert res.events == [] or all(e.kind == "fr.pg_state" for e in res.events)
    assert all(not isinstance(v, float) or not math.isnan(v) for e in res.events for v in e.fields.values())
