"""Stop 66's second pass (issue 27): NCCL INFO lines read once per message, their header taken off, change no reading.

- extract/nccl.py `_facts`: a fact reader's reading of an NCCL INFO line the scanner proved settled, remembered by the
  line with its `host:pid:tid [dev] ` header taken off (NcclNetReadyExtractor's `Using network ...`), each copy given
  its own header's host and GPU;
- extract/nccl.py `_read_error`: a body whose template (digits zeroed) _without_words found without NCCL's error words
  answered as nothing, without the memo keyed by the body.

Each reading is the same with the fast paths on and off; a copy under another header keeps its own host and GPU, and a
message that differs in a digit (the key is the rest itself) keeps its own reading.
"""

from __future__ import annotations

from typing import Any

from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract import memo, nccl
from firstfault.extract.base import Candidate

HEADERS = ("node-01:21411:21543 [0] ", "node-02:9:9 [3] ", "gpu-a.example.org:123456:7 [12] ", "h:0:0 [0] ",
           "node-01:21411:21543 [0]  ")


def _read(texts: list[str]) -> list[list[tuple[Any, ...]]]:
    """Each line's drafts (kind, fields, device, rank, host) and whether it was claimed, through the scanner's own
    reading (Extraction._drafts: the split, the settled body, the stream's state)."""
    ex = Extraction(all_line_extractors(), hosts=["node-01", "node-02"])
    out = []
    for i, text in enumerate(texts):
        drafts, ctx = ex._drafts(Candidate("application", f"app/rank-{i % 3}.log", i + 1, None, i % 3, None, text))
        out.append([(d.kind, d.fields, d.device, d.rank, d.host) for d in drafts]
                   + [("claimed", ctx.claimed if ctx is not None else None)])
    return out


def _both(texts: list[str]) -> list[list[tuple[Any, ...]]]:
    with memo.fastpath(False):
        off = _read(texts)
    with memo.fastpath(True):
        on = _read(texts)
        on_again = _read(texts)  # (the memos filled: every line answered from them where it may be)
    assert on == off == on_again
    return on


def test_one_message_under_other_headers_keeps_each_header() -> None:
    """A near miss for a key without the header: one rest under four headers gives each its own host and GPU (and a
    line with two spaces after its `[dev]`, no header to NCCL's readers, none), the same as the fast paths off."""
    texts = [h + "NCCL INFO Using network IB" for h in HEADERS]
    got = _both(texts)
    ready = [d for line in got for d in line if d[0] != "claimed"]
    assert [(d[4], d[2]) for d in ready] == [("node-01", "gpu0"), ("node-02", "gpu3"), ("gpu-a.example.org", "gpu12"),
                                             ("h", "gpu0"), (None, None)]  # (two spaces: no NCCL header)
    assert all(d[1] == {"network": "IB"} for d in ready)
    with memo.fastpath(True):
        _read(texts)
        assert nccl._NET_READY_READS.hits >= 3  # (the path is taken: the copies after the first are the memo's)


def test_messages_a_digit_apart_keep_their_own_reading() -> None:
    """Two rests that differ in a digit (the network's name) are two keys: each gives its own network, read first or
    second; a fork's tag names its library, NCCL's does not."""
    for order in (("IBext_v8", "IBext_v9"), ("IBext_v9", "IBext_v8")):
        texts = [f"node-0{i + 1}:1{i}:2{i} [{i}] NCCL INFO Using network {net}" for i, net in enumerate(order)]
        texts += [f"node-01:1:2 [1] MSCCLPP INFO Using network {order[0]}"]
        got = _both(texts)
        assert [line[0][1] for line in got] == [{"network": order[0]}, {"network": order[1]},
                                                {"network": order[0], "library": "MSCCL++"}]


def test_lines_not_of_the_form_read_themselves() -> None:
    """A line with a layer before the header (the scanner's split takes it off: its rank is the stream's, its body
    the header's), a WARN, or no header at all: each read as the fast paths off read
    it."""
    texts = ["[rank3]: node-01:1:2 [0] NCCL INFO Using network Socket",
             "node-01:1:2 [0] NCCL WARN Using network Socket",
             "NCCL INFO Using network Socket",
             "node-01:1:2 [0] NCCL INFO Using network Socket\r"]
    got = _both(texts)
    assert got[0][0][1:] == ({"network": "Socket"}, "gpu0", None, "node-01")


def test_error_reader_info_lines_under_other_headers() -> None:
    """NCCL's error reader on INFO lines without its words (_read_error's template answer) and on a line of its words
    between them: each line's drafts and claim the same with the fast paths on and off, the WARN still read."""
    info = "NCCL INFO TUNER/Plugin: Plugin load returned 11 : libnccl-net.so: cannot open shared object file"
    warn = "misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45123> failed : Connection refused"
    texts = [h + info for h in HEADERS] + [HEADERS[0] + warn, HEADERS[1] + info, HEADERS[1] + warn]
    got = _both(texts)
    assert any(d[0] != "claimed" for d in got[5])


def test_read_error_template_answer_is_the_body_reading() -> None:
    """_read_error answers a body whose template holds none of the error words as its own reading would: nothing; a
    body of the words is read in full (its memo), the first of its template or not."""
    quiet = "node-01:1:2 [0] NCCL INFO Using network IB"
    worded = "node-01:1:2 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<1> failed"
    with memo.fastpath(True):
        for body in (quiet, quiet.replace("01", "02"), worded, worded.replace("10.0.0.2", "10.0.0.3")):
            got = nccl._read_error(body)
            want = nccl._read_error_uncached(body)
            assert got[0] == want[0] and got[2] == want[2]
            assert (got[1] is None) == (want[1] is None)
        assert nccl._read_error(quiet) is nccl._NO_READ


def test_headless_memo_is_bounded_and_off_with_the_fast_paths() -> None:
    with memo.fastpath(True):
        texts = [f"node-01:1:2 [0] NCCL INFO Using network net{i}" for i in range(nccl._NET_READY_READS.size + 50)]
        _read(texts)
        assert len(nccl._NET_READY_READS) <= nccl._NET_READY_READS.size
    with memo.fastpath(False):
        _read(texts[:10])
        assert len(nccl._NET_READY_READS) == 0
