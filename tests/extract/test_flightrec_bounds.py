"""Flight-recorder dumps from a hostile or broken job (issue 26, items 7, 8 and 10): the pickle is checked
with bounds before it is built, every value goes through one gate, and a document's problems are capped.

Each reproduction is the issue's, sized down where the defect shows at any size; each has a near miss
that must still be read.
"""

from __future__ import annotations

import json
import pickle
import time
from typing import Any

import pytest

from firstfault.bundle import Context, workload_spec
from firstfault.extract.documents import read_document
from firstfault.extract.flightrec import MAX_PGS, read_flight_recorder
from firstfault.extract.safepickle import PickleLimits, PickleRefused, UnsafeDumpError, check_pickle, load
from firstfault.extract.structured import MAX_ISSUES
from tests.extract.test_flightrec import dump
from tests.memory import MB, run_measured

P2 = b"\x80\x02"  # PROTO 2


def entry(**kw: Any) -> dict[str, Any]:
    e = {"record_id": 0, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 7,
         "profiling_name": "nccl:all_reduce", "state": "started", "input_sizes": [[3, 4]],
         "output_sizes": [[3, 4]], "time_created_ns": 1793613600_000000000}
    e.update(kw)
    return e


def doubled(levels: int) -> list[Any]:
    """[a, a] with a = [b, b] ...: `levels` lists, 2^levels leaves when written out (the memo shares them)."""
    a: list[Any] = []
    for _ in range(levels):
        a = [a, a]
    return a


def messages(data: bytes) -> list[str]:
    return [i.message for i in read_flight_recorder(data, "fr/rank-0.pkl", rank=0).issues]


# -- item 7: bounds while unpickling --

def test_a_300_byte_pickle_that_expands_to_gigabytes_is_refused_before_it_is_built() -> None:
    data = pickle.dumps({"version": "2.5", "entries": [entry(state=doubled(30))]}, protocol=2)
    assert len(data) < 600
    with pytest.raises(PickleRefused, match="expands past"):
        check_pickle(data)
    t = time.perf_counter()
    res = read_flight_recorder(data, "fr/rank-0.pkl", rank=0)
    assert time.perf_counter() - t < 2
    assert res.events == [] and len(res.issues) == 1
    assert res.issues[0].message.startswith("cannot read: refused") and "expands past" in res.issues[0].message


def test_a_shared_structure_of_modest_size_is_read_and_never_rendered() -> None:
    """The near miss: 2^8 leaves pass the check; the state field is not text, so it is named, not printed."""
    res = read_flight_recorder(pickle.dumps({"version": "2.5", "entries": [entry(state=doubled(8))]}, protocol=2),
                               "fr/rank-0.pkl", rank=0)
    (ev,) = res.events
    assert ev.fields["pending_state"] == "<list>" and ev.fields["pending_seq"] == 7
    assert [i.message for i in res.issues] == ["entries[0].state: a list where a name or a state belongs; ignored"]


def test_nesting_past_the_depth_limit_is_refused() -> None:
    deep: Any = 0
    for _ in range(40):
        deep = [deep]
    with pytest.raises(PickleRefused, match="nesting deeper than 32"):
        check_pickle(pickle.dumps({"entries": [entry(state=deep)]}))
    shallow: Any = 0
    for _ in range(20):
        shallow = [shallow]
    assert load(pickle.dumps({"entries": [entry(state=shallow)]}))["entries"][0]["state"] == shallow


def test_object_count_is_bounded_while_reading() -> None:
    """Issue: 200M entries reached 4.9 GB. Four million and one Nones (4 MB) are refused at the limit, in
    little memory; the check's own limit is a parameter, and a dump under it is read."""
    out, peak = run_measured("""
        from firstfault.extract.flightrec import read_flight_recorder
        data = b"\\x80\\x02}X\\x07\\x00\\x00\\x00entries](" + b"N" * 4_000_001 + b"es."
        print(read_flight_recorder(data, "f", rank=0).issues[0].message)
    """)
    assert "more than 4,000,000 objects" in out
    assert peak < 200 * MB, peak
    many = P2 + b"](" + b"N" * 1000 + b"e."
    with pytest.raises(PickleRefused, match="more than 999 objects"):
        check_pickle(many, PickleLimits(max_objects=999))
    check_pickle(many, PickleLimits(max_objects=1001))


def test_a_far_memo_index_is_refused_before_the_unpickler_sizes_its_memo() -> None:
    # LONG_BINPUT 2^31 - 1 after one object: the C unpickler would size its memo for 2^32 entries.
    with pytest.raises(PickleRefused, match="memo index 2,147,483,647 beyond"):
        check_pickle(P2 + b"}r\xff\xff\xff\x7f.")
    # The near miss: a pickler's own numbering, past 255 (LONG_BINPUT, LONG_BINGET), is read.
    doc = {"version": "2.5", "entries": [entry(profiling_name=f"nccl:op{i}", collective_seq_id=i)
                                         for i in range(300)]}
    assert load(pickle.dumps(doc, protocol=2)) == pickle.loads(pickle.dumps(doc, protocol=2))


def test_integer_width_is_bounded_while_unpickling() -> None:
    wide = 1 << 65_000  # 8,126 bytes
    with pytest.raises(PickleRefused, match="an integer of about 8,126 bytes"):
        check_pickle(pickle.dumps({"entries": [entry(collective_seq_id=wide)]}, protocol=2))
    with pytest.raises(PickleRefused, match="an integer of about"):  # protocol 0: decimal text
        check_pickle(b"L" + b"9" * 12_000 + b"L\n.")
    check_pickle(pickle.dumps({"entries": [entry(collective_seq_id=10**4999)]}, protocol=2))  # 2,077 bytes


def test_thirteen_kilobytes_of_big_integers_do_not_freeze_the_reader() -> None:
    """Issue: one integer stored in the memo and a shape of 2,500 references to it (13 KB) took the reader
    (and, holding the GIL, the Service's health check) for 30 s, multiplying. Past the width limit the
    pickle is refused; under it the dimension is not a size, and nothing is multiplied."""
    def text(s: str) -> bytes:
        return b"X" + len(s).to_bytes(4, "little") + s.encode()

    def shape_of_refs(nbytes: int) -> bytes:
        """{"entries": [{..., "input_sizes": [[N, N, ... 2,500 times]]}] with N in the memo (index 0)."""
        big = ((1 << (8 * nbytes - 1)) - 1).to_bytes(nbytes, "little", signed=True)
        store = b"\x8b" + len(big).to_bytes(4, "little") + big + b"q\x000"  # LONG4, BINPUT 0, POP
        entry_ = (b"}(" + text("profiling_name") + text("nccl:all_reduce") + text("state") + text("started")
                  + text("collective_seq_id") + b"K\x07" + text("output_sizes") + b"](]K\x03aK\x04ae"
                  + text("input_sizes") + store + b"](" + b"(" + b"h\x00" * 2500 + b"l" + b"e" + b"u")
        return P2 + b"}(" + text("entries") + b"](" + entry_ + b"e" + b"u."

    def read(data: bytes) -> tuple[Any, float]:
        t = time.perf_counter()
        res = read_flight_recorder(data, "fr/rank-0.pkl", rank=0)
        return res, time.perf_counter() - t

    assert len(shape_of_refs(8200)) < 14_000
    res, dt = read(shape_of_refs(8200))
    assert dt < 2 and res.events == [] and "integer of about 8,200 bytes" in res.issues[0].message
    res, dt = read(shape_of_refs(4000))
    (ev,) = res.events
    assert dt < 2 and "pending_numel_in" not in ev.fields and ev.fields["pending_numel_out"] == 12
    assert res.issues[0].message == "entries[0].input_sizes[0][0]: an integer of 31,999 bits; ignored"


def test_a_product_past_64_bits_is_no_element_count() -> None:
    res = read_flight_recorder(pickle.dumps({"entries": [entry(input_sizes=[[2**31, 2**31, 2]])]}), "f", rank=0)
    assert "pending_numel_in" not in res.events[0].fields
    # Once for the pending collective, once for its place in `recent`.
    assert [i.message for i in res.issues] == ["entries[0].input_sizes: more than 2^63 elements; ignored"] * 2
    res = read_flight_recorder(pickle.dumps({"entries": [entry(input_sizes=[[2**31, 2**31]])]}), "f", rank=0)
    assert res.events[0].fields["pending_numel_in"] == 2**62 and res.issues == []


def test_a_container_changed_after_it_was_placed_is_refused() -> None:
    # x = []; y = [x]; then x grows: a small count standing for whatever x later becomes, everywhere it is.
    data = P2 + b"]q\x00" + b"]h\x00a" + b"0" + b"h\x00(NNNe."
    with pytest.raises(PickleRefused, match="changed after it was placed"):
        check_pickle(data)
    x = [None, None, None]
    assert load(pickle.dumps([x, x], protocol=2)) == [x, x]  # the pickler's order: filled, then placed


@pytest.mark.parametrize("payload, named", [
    (b"cposix\nsystem\n(S'true'\ntR.", "the global posix.system"),  # protocol 0 GLOBAL
    (P2 + b"\x8c\x05posix\x8c\x06system\x93.", "the global posix.system"),  # STACK_GLOBAL
    (P2 + b")(R.", "asks for code (REDUCE)"),
    (b"P1\n.", "persistent id"),
])
def test_code_is_refused_by_the_check_naming_what_it_asks_for(payload: bytes, named: str) -> None:
    with pytest.raises(UnsafeDumpError, match="refused"):
        check_pickle(payload)
    (msg,) = messages(payload)
    assert msg.startswith("cannot read: refused") and named in msg


def test_a_truncated_pickle_is_refused() -> None:
    data = pickle.dumps(dump(0, 5, 4))
    with pytest.raises(PickleRefused, match="truncated"):
        check_pickle(data[: len(data) // 2])
    assert messages(data[: len(data) // 2])[0].startswith("cannot read: refused")


class _Stop(Exception):
    pass


def test_the_deadline_is_checked_while_a_pickle_is_checked() -> None:
    data = P2 + b"](" + b"N" * 200_000 + b"e."
    calls = []
    check_pickle(data, check=lambda: calls.append(1))
    assert len(calls) == 200_004 // 65_536

    def expired() -> None:
        raise _Stop

    with pytest.raises(_Stop):
        read_flight_recorder(data, "f", check=expired)


def test_a_json_dump_too_many_values_is_refused_by_counting() -> None:
    data = b'{"entries": [' + b"0," * 4_000_000 + b"0]}"
    (msg,) = messages(data)
    assert "holds up to 4,000,00" in msg and "the limit is 4,000,000" in msg
    assert len(read_flight_recorder(json.dumps(dump(0, 5, 4)).encode(), "f").events) == 1


def test_process_groups_past_the_cap_are_counted() -> None:
    def pgs(n: int) -> bytes:
        status = {str(i): {"last_enqueued_collective": 1, "last_completed_collective": 1} for i in range(n)}
        return pickle.dumps({"version": "2.5", "entries": [], "pg_status": status})

    res = read_flight_recorder(pgs(MAX_PGS + 76), "f", rank=0)
    assert len(res.events) == MAX_PGS
    assert [i.message for i in res.issues] == ["76 more process groups than 1,024; not read"]
    res = read_flight_recorder(pgs(MAX_PGS), "f", rank=0)
    assert len(res.events) == MAX_PGS and res.issues == []


# -- item 8: a 5,000-digit integer is a problem naming its field; the rest is read --

@pytest.mark.parametrize("encode", [lambda d: pickle.dumps(d, protocol=2), lambda d: pickle.dumps(d, protocol=5),
                                    lambda d: json.dumps(d).encode()], ids=["pickle-2", "pickle-5", "json"])
def test_a_5000_digit_integer_is_an_error_and_the_rest_is_read(encode: Any) -> None:
    import sys

    doc = dump(3, 10, 9)
    doc["entries"][-1]["collective_seq_id"] = 10**4999  # the pending one
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # only to write the JSON test input
    try:
        data = encode(doc)
    finally:
        sys.set_int_max_str_digits(old)
    res = read_flight_recorder(data, "fr/rank-3.pkl", rank=3)
    (ev,) = res.events
    assert ev.fields["last_enqueued"] == 10 and ev.fields["pending_op"] == "all_reduce"
    assert "pending_seq" not in ev.fields and "pending_numel_in" in ev.fields
    (issue,) = res.issues
    assert issue.message.startswith("entries[3].collective_seq_id: ")
    assert issue.message.endswith(("an integer of 16,607 bits; ignored",  # pickle
                                   "a number of 5,000 digits, past 64 bits; ignored"))  # JSON keeps it as text


@pytest.mark.parametrize("text, read", [("48213", 48213), ("-3", -3), ("9223372036854775807", 2**63 - 1),
                                        ("9223372036854775808", None), ("²", None), ("--5", None), ("٣", None)])
def test_sequence_numbers_written_as_text(text: str, read: int | None) -> None:
    """A dump may write a number as text; only plain ASCII digits within 64 bits are one (int() would refuse
    "²" and "--5", which str.isdigit() and lstrip("-") let through, and crash the reader)."""
    res = read_flight_recorder(pickle.dumps({"entries": [entry(collective_seq_id=text)]}), "f", rank=0)
    assert res.events[0].fields.get("pending_seq") == read
    assert (res.issues == []) is (read is not None or not text.isascii() or text.startswith("--"))


def test_integers_at_the_64_bit_edge() -> None:
    res = read_flight_recorder(pickle.dumps({"entries": [entry(collective_seq_id=2**63 - 1)]}), "f", rank=0)
    assert res.events[0].fields["pending_seq"] == 2**63 - 1 and res.issues == []
    res = read_flight_recorder(pickle.dumps({"entries": [entry(collective_seq_id=2**63)]}), "f", rank=0)
    assert "pending_seq" not in res.events[0].fields
    assert res.issues[0].message == "entries[0].collective_seq_id: an integer of 64 bits; ignored"


# -- item 10: a document's problems are capped --

CTX = Context.from_spec(workload_spec({"id": "42", "nodes": ["node-01"]}))


def test_a_million_problems_in_one_pickle_are_a_hundred_and_a_count() -> None:
    """Issue: one pickle gave 1M errors and a 146 MB verdict."""
    data = P2 + b"}X\x07\x00\x00\x00entries](" + b"N" * 1_000_000 + b"es."
    _, problems = read_document("flight_recorder", None, "fr/rank-0.pkl", data, CTX, rank=0)
    assert len(problems) == MAX_ISSUES + 1
    assert problems[0] == (None, "entries[0]: not a dict")
    assert problems[-1] == (None, "999900 more issues not listed")


def test_a_sacct_file_of_300k_bad_rows_gives_a_hundred_and_a_count() -> None:
    header = "JobID|JobName|State|ExitCode|Start|End|NodeList|Reason\n"
    _, problems = read_document("scheduler", "sacct", "scheduler/sacct.txt",
                                (header + "42|x|FAILED\n" * 300_000).encode(), CTX)
    assert len(problems) == MAX_ISSUES + 1 and problems[-1] == (None, "299900 more issues not listed")
    # The near miss: exactly the cap, no count.
    _, problems = read_document("scheduler", "sacct", "scheduler/sacct.txt",
                                (header + "42|x|FAILED\n" * MAX_ISSUES).encode(), CTX)
    assert len(problems) == MAX_ISSUES and "not listed" not in problems[-1][1]
