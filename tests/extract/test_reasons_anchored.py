"""The reasons table is searched with the rows whose anchor a text holds only (extract/reasons.py `_alternation`): a
row whose longest fixed piece is not in the text matches nowhere in it, so the hits are those of the whole table's
alternation, in the same order, with the same rows winning where several start at one place. Texts are built from
the table's own phrases (placeholders filled in) between other words, so that rows overlap and compete."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault.extract import reasons as R

_FILL = {"{n}": "12", "{host}": "gpu-node-7", "{peer}": "gpu-node-8", "{word}": "ping(24c9)", "{proc}": '"python"'}


def _filled(phrase: str) -> str:
    for k, v in _FILL.items():
        phrase = phrase.replace(k, v)
    return phrase


def _whole(lines: bool) -> re.Pattern[str]:
    m = R._matcher(lines)
    return re.compile("|".join(f"(?P<r{i}>{R._pattern(R._row_text(r), i)})" for i, r in enumerate(m.rows)))


_WHOLE = {lines: _whole(lines) for lines in (True, False)}


def _hits_of_whole(text: str, lines: bool) -> list[tuple[int, int, str]]:
    rows = R._matcher(lines).rows
    return [(h.start(), h.end(), R._row_text(rows[int((h.lastgroup or "r0")[1:])]))
            for h in _WHOLE[lines].finditer(text)]


def _hits(text: str, lines: bool) -> list[tuple[int, int, str]]:
    return [(h.start, h.end, h.spelling) for h in R.text_reasons(text, lines=lines)]


@settings(max_examples=300, deadline=None)
@given(st.booleans(), st.data())
def test_the_anchored_search_finds_what_the_whole_table_finds(lines: bool, data: st.DataObject) -> None:
    rows = R._matcher(lines).rows
    picks = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=4))
    seps = data.draw(st.lists(st.sampled_from([" ", ": ", "x", "", " error ", "\t"]), min_size=len(picks) + 1,
                              max_size=len(picks) + 1))
    # each phrase whole, or cut at one end (a near miss: its anchor may stay while the row no longer matches)
    parts = []
    for i in picks:
        text = _filled(R._row_text(rows[i]))
        cut = data.draw(st.sampled_from([0, 1, -1]))
        parts.append(text[1:] if cut == 1 else text[:-1] if cut == -1 else text)
    text = seps[0] + "".join(p + s for p, s in zip(parts, seps[1:], strict=True))
    assert _hits(text, lines) == _hits_of_whole(text, lines)


def test_a_line_with_no_anchor_holds_no_hit() -> None:
    line = "x" * 5000
    assert R.text_reasons(line, lines=True) == [] and _hits_of_whole(line, True) == []


def test_each_anchor_is_a_piece_every_match_holds() -> None:
    m = R._matcher(True)
    for row, anchor in zip(m.rows, m.anchors, strict=True):
        text = _filled(R._row_text(row))
        assert anchor in text
        assert _hits(text, True), (row, text)
