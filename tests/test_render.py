"""The text view and Markdown: readable at 80 columns, nothing cut that matters, stable Markdown."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any, cast

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.model import Enrichment, Verdict
from firstfault.render import make_console, ranks_text, render_markdown, terminal_width, text_lines, write

ROOT = Path(__file__).resolve().parent.parent
BUNDLES = {
    "showcase": ROOT / "examples" / "nvlink-xid149",
    "ambiguous": ROOT / "examples" / "ambiguous",
    "unknown": ROOT / "tests" / "scenarios" / "unk-watchdog-only",
}
# Upper bounds on the number of lines of the short form at 80 and 120 columns.
SHORT_BOUND = {"showcase": 40, "ambiguous": 40, "unknown": 30}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
COLOUR_SGR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Verdict]:
    a = Analyzer()
    return {name: a.analyze_path(str(path)) for name, path in BUNDLES.items()}


def _text(v: Verdict, width: int, verbose: bool = False, **kw: Any) -> str:
    buf = io.StringIO()
    write(v, "text", buf, width=width, verbose=verbose, **kw)
    return buf.getvalue()


def _flat(out: str) -> str:
    """The words of the output, whatever the wrapping."""
    return " ".join(out.split())


def _categories(v: Verdict) -> list[str]:
    causes = [*([v.root_cause] if v.root_cause else []), *v.candidates, *v.secondary_causes]
    return [c.category for c in causes] + [s.category for s in v.symptoms]


class _Plus:
    """A verdict with extra fields (leads, unrecognized) whether or not the model has them yet."""

    def __init__(self, v: Verdict, **extra: Any) -> None:
        self._v = v
        self.__dict__.update(extra)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._v, name)


def test_the_three_verdicts_are_what_the_tests_assume(verdicts: dict[str, Verdict]) -> None:
    assert verdicts["showcase"].attributed_domain == "hardware"
    assert verdicts["ambiguous"].attributed_domain == "ambiguous" and len(verdicts["ambiguous"].candidates) == 2
    assert verdicts["unknown"].attributed_domain == "unknown" and verdicts["unknown"].symptoms


@pytest.mark.parametrize("verbose", [False, True], ids=["short", "verbose"])
@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", list(BUNDLES))
def test_text_fits_the_width_and_cuts_no_category(verdicts: dict[str, Verdict], name: str, width: int,
                                                   verbose: bool) -> None:
    v = verdicts[name]
    out = _text(v, width, verbose)
    lines = out.splitlines()
    assert "\x1b[" not in out  # not a terminal: plain text
    too_wide = [ln for ln in lines if len(ln) > width]
    assert not too_wide, too_wide
    assert all(ln == ln.rstrip() for ln in lines), "trailing spaces"
    for cat in _categories(v):
        assert any(re.search(rf"(?<![\w.]){re.escape(cat)}(?![\w.])", ln) for ln in lines), f"{cat} cut or missing"
        assert f"{cat[: len(cat) // 2]}…" not in out
    assert v.attributed_domain.upper() in lines[0]
    if not verbose:
        assert len(lines) <= SHORT_BOUND[name], f"{name} at {width}: {len(lines)} lines\n{out}"


def test_the_showcase_short_form_says_what_on_call_needs(verdicts: dict[str, Verdict]) -> None:
    v = verdicts["showcase"]
    out = _text(v, 80)
    lines = out.splitlines()
    assert lines[0] == "HARDWARE: gpu.nvlink.signal_integrity on node-02"
    assert "NVLink signal-integrity fault (Xid 149, NETIR_LINK_EVT)" in _flat(out)
    assert "Why" in out and "drain node-02" in out
    assert "nodes/node-02/kern.log:5" in out  # the cause line, with file:line
    assert "7 families, 48 events" in out
    assert "--verbose for all" in out
    assert "ranks 0-31 except 6, 13, 22, 30" in _flat(out)  # the ranks that did not time out stand out
    # the short form is short: the old view ran to about 150 lines
    assert len(lines) < 40
    assert len(_text(v, 80, verbose=True).splitlines()) > len(lines)


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", list(BUNDLES))
def test_verbose_shows_each_evidence_line_once_clipped_and_marked(verdicts: dict[str, Verdict], name: str,
                                                                  width: int) -> None:
    v = verdicts[name]
    lines = _text(v, width, verbose=True).splitlines()
    for e in v.evidence:
        loc = f"{e.file}:{e.line}"
        heads = [i for i, ln in enumerate(lines) if ln.lstrip().startswith(loc + " ")]
        assert len(heads) == 1, f"{loc} shown {len(heads)} times"
        shown = lines[heads[0] + 1 :]
        body = next(ln for ln in shown if not ln.startswith("      ") or e.text.startswith(" "))
        body = body[4:]
        if len(e.text) + 4 <= width:
            assert body == e.text.rstrip()
        else:  # clipped to the width, the cut marked
            assert len(body) == width - 4 and body.endswith("…") and e.text.startswith(body[:-1])


def test_short_form_evidence_starts_with_the_cause_and_is_marked_partial(verdicts: dict[str, Verdict]) -> None:
    v = verdicts["showcase"]
    out = _text(v, 80)
    ev = out[out.index("Evidence"):]
    first_loc = ev.splitlines()[1].split()[0]
    assert first_loc == "nodes/node-02/kern.log:5"
    assert f"of {len(v.evidence)} lines" in ev
    amb = _text(verdicts["ambiguous"], 80)
    for c in verdicts["ambiguous"].candidates:
        assert c.summary in amb and c.category in amb
    assert "Candidate 1" in amb and "Candidate 2" in amb


def test_unknown_names_the_gap(verdicts: dict[str, Verdict]) -> None:
    out = _text(verdicts["unknown"], 80)
    assert out.startswith("UNKNOWN: no cause established; symptoms: nccl.timeout")
    assert "kernel missing: 0 of 2 nodes" in out
    assert "none explained" in out


def test_width_comes_from_the_option_then_columns_then_the_terminal_then_80(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width(None, io.StringIO()) == 80
    assert terminal_width(120, io.StringIO()) == 120
    assert terminal_width(10, io.StringIO()) == 40  # never narrower than the labels need
    monkeypatch.setenv("COLUMNS", "100")
    assert terminal_width(None, io.StringIO()) == 100
    assert terminal_width(90, io.StringIO()) == 90
    monkeypatch.setenv("COLUMNS", "wide")
    assert terminal_width(None, io.StringIO()) == 80


def test_colour_only_on_a_terminal_and_never_with_no_color(verdicts: dict[str, Verdict],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    v = verdicts["showcase"]
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert "\x1b[" not in _text(v, 80)  # a StringIO is not a terminal
    coloured = _text(v, 80, color=True)
    assert COLOUR_SGR.search(coloured)
    assert ANSI.sub("", coloured) == _text(v, 80)  # colour changes nothing else
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich's way to say "this is a terminal"
    assert COLOUR_SGR.search(_text(v, 80))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not COLOUR_SGR.search(_text(v, 80))


@pytest.mark.parametrize("name", list(BUNDLES))
def test_markdown_has_the_heading_bullets_and_a_fenced_block(verdicts: dict[str, Verdict], name: str) -> None:
    v = verdicts[name]
    md = render_markdown(v)
    lines = md.splitlines()
    assert lines[0].startswith(f"### {v.attributed_domain.upper()}: ")
    if v.root_cause:
        assert f"`{v.root_cause.category}`" in lines[0]
    for c in v.candidates:
        assert f"`{c.category}`" in lines[0]
    assert any(ln.startswith("- ") for ln in lines)
    opening = lines.index("```text")
    closing = lines.index("```", opening + 1)
    block = lines[opening + 1 : closing]
    assert block and all(re.match(r"^\S+:\d+: ", ln) for ln in block)
    # evidence lines are whole in Markdown (a code block scrolls), each once
    for ln in block:
        loc, text = ln.split(": ", 1)
        assert any(f"{e.file}:{e.line}" == loc and e.text == text for e in v.evidence)
    assert len(block) == len(set(block))
    for cat in _categories(v):
        assert f"`{cat}`" in md
    assert md.endswith("\n") and not md.endswith("\n\n")


@pytest.mark.parametrize("name", list(BUNDLES))
def test_markdown_is_deterministic(verdicts: dict[str, Verdict], name: str) -> None:
    v = verdicts[name]
    later = records.replace(v, analyzed_at="2099-01-01T00:00:00.000000Z")
    assert render_markdown(v) == render_markdown(later)
    assert render_markdown(v, verbose=True) == render_markdown(later, verbose=True)
    assert v.analyzed_at not in render_markdown(v, verbose=True)
    fresh = Analyzer().analyze_path(str(BUNDLES[name]))
    assert render_markdown(fresh) == render_markdown(v)


def test_markdown_verbose_has_every_evidence_line(verdicts: dict[str, Verdict]) -> None:
    v = verdicts["showcase"]
    short, full = render_markdown(v), render_markdown(v, verbose=True)
    assert len(full.splitlines()) > len(short.splitlines())
    for e in v.evidence:
        assert f"{e.file}:{e.line}: {e.text}\n" in full
    assert sum(f"{e.file}:{e.line}: " in short for e in v.evidence) < len(v.evidence)


def test_markdown_escapes_what_would_become_markup(verdicts: dict[str, Verdict]) -> None:
    v = verdicts["showcase"]
    assert v.root_cause is not None
    rc = records.replace(v.root_cause, summary="a *bold* <b>claim</b> with `ticks`")
    ev = [records.replace(v.evidence[0], text="before ``` after"), *v.evidence[1:]]
    md = render_markdown(records.replace(v, root_cause=rc, evidence=ev))
    assert r"a \*bold\* \<b>claim\</b> with \`ticks\`" in md
    assert "````text" in md and "\n````\n" in md  # a fence longer than any run of backticks inside
    assert "node-[01-04]" in md and "NETIR_LINK_EVT" in md  # nothing escaped that needs no escaping


def test_leads_and_unrecognized_are_shown_when_present(verdicts: dict[str, Verdict]) -> None:
    v = verdicts["unknown"]
    lead = {"kind": "laggard_rank", "nodes": ["gpu-st-p5-2"], "ranks": [14],
            "summary": "rank 14 never entered ALLREDUCE SeqNum 90211; the 15 other ranks waited in it",
            "first_seen": "2026-05-20T19:02:11.000000Z", "evidence": [1]}
    group = {"template": "OSError: [Errno <N>] <TEXT>: <PATH>", "count": 12, "nodes": ["gpu-st-p5-1"],
             "first": {"file": "app/rank-5.log", "line": 812, "time": None, "text": "OSError: [Errno 5] I/O error: /x"}}
    plus = cast(Verdict, _Plus(v, leads=[lead], unrecognized=[group]))
    for width in (80, 120):
        out = _text(plus, width)
        assert out.startswith("UNKNOWN: no cause established; lead: laggard_rank on gpu-st-p5-2")
        assert "Leads" in out and "laggard_rank on gpu-st-p5-2, rank 14: rank 14 never entered" in _flat(out)
        assert "first at 19:02:11.000, see app/rank-14.log:13" in out
        assert "Unrecognized" in out and "12x OSError: [Errno <N>] <TEXT>: <PATH>" in out
        assert "first app/rank-5.log:812" in out
        assert all(len(ln) <= width for ln in out.splitlines())
        # the lead's evidence line is among the short form's lines
        ev = out[out.index("Evidence"):]
        assert "app/rank-14.log:13" in ev
    md = render_markdown(plus)
    assert "**Leads**" in md and "`laggard_rank`" in md and "`app/rank-14.log:13`" in md
    assert "**Unrecognized lines**" in md and "`OSError: [Errno <N>] <TEXT>: <PATH>`" in md
    # without them (a verdict from before the fields existed) there is no empty section
    assert "Leads" not in _text(v, 80) and "Unrecognized" not in _text(v, 80)


def test_many_nodes_and_ranks_stay_on_a_few_lines(verdicts: dict[str, Verdict]) -> None:
    v = verdicts["unknown"]
    nodes = [f"node-{i:03d}" for i in range(1, 513)]
    sym = records.replace(v.symptoms[0], nodes=nodes, ranks=list(range(4096)))
    big = records.replace(v, symptoms=[sym])
    short = _text(big, 80)
    assert "node-[001-512] (512 nodes); ranks 0-4095" in short
    assert len(short.splitlines()) <= SHORT_BOUND["unknown"]
    assert ranks_text([0, 1, 2, 5, 7, 8]) == "ranks 0-2, 5, 7-8"
    assert ranks_text([3]) == "rank 3"
    assert ranks_text(list(range(0, 40, 2))).endswith("+12 more")


def test_enrichment_is_shown_in_text_and_markdown(verdicts: dict[str, Verdict]) -> None:
    enr = Enrichment(cluster="eos", owner="alice", links={"job": "https://slurm.example/4242"})
    v = verdicts["showcase"]
    out = _text(v, 80, enrichment=enr)
    assert "cluster eos" in out and "owner alice" in out and "job: https://slurm.example/4242" in out
    md = render_markdown(v, enrichment=enr)
    assert "- job: https://slurm.example/4242" in md


def test_text_lines_never_exceed_a_narrow_width(verdicts: dict[str, Verdict]) -> None:
    for v in verdicts.values():
        for verbose in (False, True):
            lines = text_lines(v, make_console(io.StringIO(), 40, color=False), verbose=verbose)
            assert all(ln.cell_len <= 40 for ln in lines)
            plain = "\n".join(ln.plain for ln in lines)
            for cat in _categories(v):
                assert cat in plain


def test_unknown_format_is_refused(verdicts: dict[str, Verdict]) -> None:
    with pytest.raises(ValueError, match="yaml"):
        write(verdicts["showcase"], "yaml", io.StringIO())
