"""The strict loader's shortcuts for plain scalars (yamlio.StrictLoader, spd45): the same documents as PyYAML's
SafeLoader builds, with duplicate keys still refused."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault import yamlio

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# A 16k-rank job's workload.yaml in small (bench/gen_bundle.py writes its rank ranges and GPU maps so), with the
# scalar forms YAML 1.1 resolves to other types than str next to them.
DOCS = [
    'ranks:\n  node-001: "0-7"\n  node-002: "8-15"\n'
    'gpus:\n  node-001: {"0000:18:00": 0, "0000:2a:00": 1}\n  node-002: {"0000:18:00": 0, "0000:2a:00": 1}\n'
    "nodes: [node-001, node-002]\n",
    "ints: [0, 7, -3, +4, 0x1F, 0o17, 017, 0b101, 1_000, '12', 1:30, -1:30]\n",
    "other: [null, ~, true, no, On, 1.5, .inf, -.NaN, 2026-11-02, 2026-11-02T10:00:00Z, '', ' x ']\n",
    "0: zero\n1: one\n'1': quoted one\nnull: n\n3.5: f\n",
    "base: &b {id: '1', n: 2}\nmerged:\n  <<: *b\n  name: x\nalias: *b\nseq: &s [a, 1]\nagain: *s\n",
    "tagged: !!str 123\nnum: !!int '42'\nflt: !!float 1\nset: !!set {a, b}\nomap: !!omap [{a: 1}, {b: 2}]\n",
    "nested: {a: {b: [1, {c: 2}]}}\n",
]


@pytest.mark.parametrize("text", DOCS)
def test_the_same_document_as_safe_loader(text: str) -> None:
    got = yamlio.load(text)
    want = yaml.load(text, Loader=SAFE)
    assert got == want and repr(got) == repr(want)  # the same types too (1 and True, 1 and 1.0 are ==)


@pytest.mark.parametrize("text", ["=: value key\nk: v\n", "? [a, b]\n: complex key\n"])
def test_keys_off_the_shortcut_are_refused_as_before(text: str) -> None:
    # `=` (a YAML 1.1 value key) has no constructor of its own (SafeLoader's flatten_mapping renames it only
    # after the duplicate check has met it), a sequence is no dict key
    with pytest.raises(yaml.constructor.ConstructorError):
        yamlio.load(text)


def test_a_rank_map_is_read_to_its_strings_and_integers() -> None:
    doc = yamlio.load(DOCS[0])
    assert doc["ranks"] == {"node-001": "0-7", "node-002": "8-15"}
    assert doc["gpus"]["node-002"] == {"0000:18:00": 0, "0000:2a:00": 1}
    assert all(type(v) is int for m in doc["gpus"].values() for v in m.values())


@pytest.mark.parametrize(("text", "key", "first", "second"), [
    ("gpus:\n  node-001: {a: 0, b: 1, a: 2}\n", "a", 2, 2),
    ("ranks:\n  node-001: '0-7'\n  node-002: '8-15'\n  node-001: '16-23'\n", "node-001", 2, 4),
    ("1: a\n0x1: b\n", 1, 1, 2),  # two spellings of one integer are one key
])
def test_duplicate_keys_are_still_refused(text: str, key: object, first: int, second: int) -> None:
    with pytest.raises(yamlio.DuplicateKeyError) as exc:
        yamlio.load(text)
    assert exc.value.problem == f"duplicate key {key!r} (first at line {first}, again at line {second})"


@pytest.mark.parametrize("text", ["1: a\n'1': b\n", "node-001: a\nnode-01: b\n", "0: a\n'false': b\n"])
def test_keys_that_only_look_alike_are_not_duplicates(text: str) -> None:
    assert len(yamlio.load(text)) == 2


_SCALARS = st.one_of(
    st.integers(-10**6, 10**6).map(str), st.sampled_from(["0x1F", "0o7", "017", "1_0", "1:2", "true", "null", "~",
                                                          "1.5", "node-001", "0000:18:00", "'7'", '"x"', "''"]),
    st.text(st.sampled_from("ab0-:_. "), min_size=1, max_size=6).map(lambda s: f'"{s}"'))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_SCALARS, st.lists(st.tuples(_SCALARS, _SCALARS), max_size=4)), max_size=6))
def test_maps_of_scalars_load_as_safe_loader_does(rows: list[tuple[str, list[tuple[str, str]]]]) -> None:
    text = "".join(f"{k}: {{{', '.join(f'{a}: {b}' for a, b in inner)}}}\n" for k, inner in rows) or "{}\n"
    try:
        want: object = yaml.load(text, Loader=SAFE)
    except yaml.YAMLError:
        return
    try:
        got: object = yamlio.load(text)
    except yamlio.DuplicateKeyError:
        return  # SafeLoader keeps the last of a key given twice; the strict loader refuses it
    assert repr(got) == repr(want)
