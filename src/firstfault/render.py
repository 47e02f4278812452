"""Verdicts for people: the terminal text view (rich) and Markdown for tickets and chat.

Both layouts are built from one reading of the verdict (`_Content`), so the
short text form and the Markdown block always say the same things: the
cause (or the candidates), why, the symptom families with counts and nodes,
the leads, the top evidence lines and the coverage gaps. `verbose` adds
every evidence line, every lead and unrecognized group, per-source coverage
and the read errors.

Text is laid out for a given width (80 when the output is not a terminal):
category names are never cut (they are single words on lines built to hold
them), every line fits the width, and an evidence line too long for it is
clipped with a trailing "…". Colour is rich's business: only on a terminal,
never with NO_COLOR. Markdown does not depend on any width, colour or clock
(no `analyzed_at`), so the same verdict gives the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault import records
from firstfault.model import Cause, EvidenceItem, Verdict

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from firstfault.model import Enrichment

# rich is imported by the functions of the text view that use it: JSON and Markdown need none of it.

FORMATS: tuple[str, ...] = ("text", "markdown", "json")
DEFAULT_WIDTH = 80
MIN_WIDTH = 40
SHORT_EVIDENCE = 3  # evidence lines in the short form
SHORT_LEADS = 3
SHORT_UNRECOGNIZED = 3
SHORT_NODES = 3  # node names listed one by one before a list is compressed
LABEL_W = 12  # a longer label ("Unrecognized") pushes its first line on

DOMAIN_STYLE = {
    "hardware": "bold red",
    "network": "bold magenta",
    "software": "bold yellow",
    "storage": "bold cyan",
    "infrastructure": "bold blue",
    "scheduler": "bold green",
    "ambiguous": "bold white on dark_orange",
    "unknown": "bold white on grey37",
    "none": "bold green",
}
COVERAGE_STYLE = {"complete": "green", "partial": "yellow"}

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# --------------------------------------------------------------------------
# Width and console
# --------------------------------------------------------------------------


def terminal_width(width: int | None = None, stream: TextIO | None = None) -> int:
    """`width` if given, else COLUMNS, else the terminal's width when `stream` is one, else 80.

    Never below MIN_WIDTH: narrower than that the labels alone would not fit.
    """
    if width is None:
        cols = os.environ.get("COLUMNS", "")
        if cols.isdigit() and int(cols) > 0:
            width = int(cols)
        elif stream is not None:
            try:
                if stream.isatty():
                    width = os.get_terminal_size(stream.fileno()).columns
            except (AttributeError, OSError, ValueError):
                width = None
    return max(width or DEFAULT_WIDTH, MIN_WIDTH)


def make_console(stream: TextIO, width: int | None = None, *, color: bool | None = None) -> Console:
    """A console for `stream` at `terminal_width(width, stream)`.

    `color` None: rich decides (colour on a terminal, none when piped, none
    with NO_COLOR, FORCE_COLOR honoured); True/False forces it (tests).
    """
    from rich.console import Console

    kw: dict[str, Any] = {}
    if color is False:
        kw = {"force_terminal": False, "color_system": None}
    elif color is True:
        kw = {"force_terminal": True, "color_system": "standard", "no_color": False}
    return Console(file=stream, width=terminal_width(width, stream), highlight=False, emoji=False,
                   markup=False, soft_wrap=False, **kw)


# --------------------------------------------------------------------------
# What a verdict says (shared by both layouts)
# --------------------------------------------------------------------------


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key: leads and unrecognized groups are models once the model has them, dicts before."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def clean(s: object) -> str:
    """One line of text: tabs and control characters (a log line may hold any) become spaces."""
    return _CONTROL_RE.sub(" ", str(s).replace("\t", " ").replace("\r\n", " ").replace("\n", " "))


def clock(t: str | None) -> str:
    """'2026-11-02T10:03:07.123456Z' -> '10:03:07.123' (the date is in the header)."""
    if not t:
        return "untimed"
    return t.split("T", 1)[-1].rstrip("Z")[:12]


def ranks_text(ranks: Sequence[int], limit: int | None = 8) -> str:
    """[0, 1, 2, 5, 7, 8] -> 'ranks 0-2, 5, 7-8'; a range with a few holes -> 'ranks 0-31 except 6, 13'
    (the ranks missing from a symptom are often the telling ones); past `limit` ranges, '+N more'."""
    if not ranks:
        return ""
    rs = sorted(set(ranks))
    spans: list[tuple[int, int]] = []
    for r in rs:
        if spans and r == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], r)
        else:
            spans.append((r, r))
    if len(rs) == 1:
        return f"rank {rs[0]}"
    holes = len(spans) - 1  # ranks missing between the lowest and the highest, when few
    if 0 < holes <= (limit or holes) and rs[-1] - rs[0] + 1 - len(rs) == holes:
        missing = ", ".join(str(a[1] + 1) for a in spans[:-1])
        return f"ranks {rs[0]}-{rs[-1]} except {missing}"
    shown = spans if limit is None else spans[:limit]
    text = ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in shown)
    left = len(rs) - sum(hi - lo + 1 for lo, hi in shown)
    return f"ranks {text}" + (f" +{left} more" if left else "")


def nodes_text(nodes: Sequence[str], *, full: bool = False) -> str:
    """A few names as they are; more in Slurm hostlist form (node-[01-64]), cut after 3 groups unless `full`."""
    if len(nodes) <= SHORT_NODES:
        return ", ".join(nodes)
    from firstfault.hostlist import hostlist_compress

    groups = hostlist_compress(nodes).split(",")
    # hostlist_compress joins ranges inside brackets with commas too: re-split on the top level only.
    parts: list[str] = []
    depth = 0
    for g in groups:
        if depth:
            parts[-1] += "," + g
        else:
            parts.append(g)
        depth += g.count("[") - g.count("]")
    if full or len(parts) <= 3:
        return f"{', '.join(parts)} ({len(nodes)} nodes)"
    return f"{', '.join(parts[:3])} +{len(parts) - 3} more ({len(nodes)} nodes)"


def _n(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def where(e: EvidenceItem) -> str:
    if e.file and e.line:
        return f"{e.file}:{e.line}"
    return e.file or e.query or e.source


@dataclass(slots=True)
class _CauseView:
    label: str
    cause: Cause


@dataclass(slots=True)
class _SymptomRow:
    time: str
    category: str
    count: int
    nodes: str
    ranks: str
    note: str  # "", "unexplained" or "by <category>"


@dataclass(slots=True)
class _LeadRow:
    kind: str
    nodes: str
    ranks: str
    summary: str
    time: str | None
    refs: list[str]


@dataclass(slots=True)
class _UnrecRow:
    template: str
    count: int
    nodes: str
    first_where: str | None
    first_text: str | None


@dataclass(slots=True)
class _Content:
    domain: str
    headline: list[tuple[str, bool]]  # (text, is a category or kind: code in Markdown)
    workload: str
    window: str
    causes: list[_CauseView]
    secondary: list[Cause]
    affected: str | None
    why: list[str]
    symptoms_head: str
    symptoms: list[_SymptomRow]
    leads: list[_LeadRow]
    leads_more: int
    unrec: list[_UnrecRow]
    unrec_more: int
    evidence: list[EvidenceItem]
    evidence_total: int
    coverage: list[tuple[str, str]]  # (status, sentence) per shown source
    coverage_complete: list[str]
    errors: list[str]
    errors_more: int
    facts: list[str] = field(default_factory=list)  # enrichment
    footer: str | None = None


def _top_evidence(v: Verdict, verbose: bool) -> tuple[list[EvidenceItem], int]:
    """Each line once (the same file:line twice is one line), in the verdict's order. The short form
    keeps the cause and candidate lines, the leads' lines, then the first line of each other symptom
    family, then more lines, up to SHORT_EVIDENCE (never fewer than the cause lines)."""
    first_of: dict[tuple[object, ...], int] = {}
    rep: dict[int, int] = {}  # evidence index -> index of the line shown for it
    for i, e in enumerate(v.evidence):
        key: tuple[object, ...] = (e.file, e.line) if e.file and e.line else (e.file, e.query, e.text)
        rep[i] = first_of.setdefault(key, i)
    unique = sorted(first_of.values())
    if verbose:
        return [v.evidence[i] for i in unique], len(unique)
    causal = [i for i in unique if v.evidence[i].role in ("cause", "candidate")]
    chosen = list(causal)
    for lead in getattr(v, "leads", None) or []:
        for i in _get(lead, "evidence", None) or []:
            if isinstance(i, int) and i in rep and rep[i] not in chosen:
                chosen.append(rep[i])
    families = {v.evidence[i].category for i in chosen}
    for i in unique:
        if i not in chosen and v.evidence[i].category not in families:
            families.add(v.evidence[i].category)
            chosen.append(i)
    chosen += [i for i in unique if i not in chosen]
    keep = set(chosen[:max(SHORT_EVIDENCE, len(causal))])
    return [v.evidence[i] for i in unique if i in keep], len(unique)


def _content(v: Verdict, verbose: bool, enrichment: Enrichment | None) -> _Content:
    full = verbose
    dom = v.attributed_domain
    causes: list[_CauseView] = []
    if v.root_cause:
        causes.append(_CauseView("Root cause", v.root_cause))
    causes += [_CauseView(f"Candidate {i}", c) for i, c in enumerate(v.candidates, 1)]
    leads_all = list(getattr(v, "leads", None) or [])
    unrec_all = list(getattr(v, "unrecognized", None) or [])
    if not full and (v.root_cause is not None or dom == "none"):
        # What the catalog missed matters where it found no cause: the short form of a
        # definitive verdict leaves it to --verbose and the JSON.
        unrec_all = []

    def on(nodes: Sequence[str]) -> str:
        return f" on {nodes_text(nodes)}" if nodes else ""

    headline: list[tuple[str, bool]] = []
    if v.root_cause:
        headline = [(v.root_cause.category, True), (on(v.root_cause.nodes), False)]
    elif v.candidates:
        headline = [(f"{len(v.candidates)} candidate causes: ", False)]
        for i, cand in enumerate(v.candidates):
            headline += [("; " if i else "", False), (cand.category, True), (on(cand.nodes), False)]
    elif dom == "none":
        headline = [(f"no failure to attribute (outcome {v.outcome})", False)]
    else:
        headline = [("no cause established", False)]
        if leads_all:
            first = leads_all[0]
            headline += [("; lead: ", False), (str(_get(first, "kind", "lead")), True),
                         (on(list(_get(first, "nodes", []) or [])), False)]
        elif v.symptoms:
            headline.append(("; symptoms: ", False))
            for i, cat in enumerate(dict.fromkeys(sym.category for sym in v.symptoms)):
                headline += [(", " if i else "", False), (cat, True)]
    headline = [(t, code) for t, code in headline if t]

    w = v.workload
    name = f" {w.name}" if w.name else ""
    workload = (f"workload {w.id}{name}, attempt {w.attempt} ({w.scheduler}): "
                f"{v.terminal_state or 'end state not recorded'} -> {v.outcome}")
    if v.provisional:
        workload += " (provisional: the attempt still runs)"
    for sup in v.supersedes:
        workload += (f"; supersedes the provisional {sup.category}{on(sup.nodes)}: "
                     f"{'it held' if sup.held else 'it did not hold'}")
    win = w.window
    window = ""
    if win.start or win.end:
        day = (win.start or win.end or "").split("T", 1)[0]
        end_day = (win.end or "").split("T", 1)[0]
        end = clock(win.end) if not end_day or end_day == day else f"{end_day} {clock(win.end)}"
        window = f"window {day} {clock(win.start)} - {end} UTC, "
    window += f"catalog {v.catalog.version}"

    cause_nodes = sorted({n for cv in causes for n in cv.cause.nodes})
    affected = None
    if v.affected_nodes and (full or sorted(v.affected_nodes) != cause_nodes):
        affected = nodes_text(v.affected_nodes, full=full)

    rows: list[_SymptomRow] = []
    rc_cat = v.root_cause.category if v.root_cause else None
    for s in v.symptoms:
        note = "unexplained" if s.explained_by is None else "" if s.explained_by == rc_cat else f"by {s.explained_by}"
        rows.append(_SymptomRow(clock(s.first_seen), s.category, s.count, nodes_text(s.nodes, full=full),
                                ranks_text(s.ranks, None if full else 8), note))
    n_events = sum(s.count for s in v.symptoms)
    head = (f"{len(v.symptoms)} {'family' if len(v.symptoms) == 1 else 'families'}, "
            f"{n_events} {'event' if n_events == 1 else 'events'}")
    if rows and rc_cat and all(s.explained_by == rc_cat for s in v.symptoms):
        head += ", all explained by the root cause"
    elif rows and all(s.explained_by is None for s in v.symptoms):
        head += ", none explained"
        for r in rows:
            r.note = ""

    leads: list[_LeadRow] = []
    for lead in leads_all if full else leads_all[:SHORT_LEADS]:
        refs = []
        for i in _get(lead, "evidence", None) or []:
            if isinstance(i, int) and 0 <= i < len(v.evidence):
                refs.append(where(v.evidence[i]))
        kind = str(_get(lead, "kind", "lead"))
        leads.append(_LeadRow(kind, nodes_text(list(_get(lead, "nodes", []) or []), full=full),
                              ranks_text(list(_get(lead, "ranks", []) or []), None if full else 8),
                              clean(_get(lead, "summary", "") or ""), _get(lead, "first_seen"),
                              list(dict.fromkeys(refs))))

    unrec: list[_UnrecRow] = []
    for g in unrec_all if full else unrec_all[:SHORT_UNRECOGNIZED]:
        first = _get(g, "first", None)
        fw = ft = None
        if first is not None:
            f, ln = _get(first, "file"), _get(first, "line")
            fw = f"{f}:{ln}" if f and ln else f
            ft = clean(_get(first, "text", "") or "") or None
        unrec.append(_UnrecRow(clean(_get(g, "template", "") or ""), int(_get(g, "count", 0) or 0),
                               nodes_text(list(_get(g, "nodes", []) or []), full=full), fw, ft))

    evidence, ev_total = _top_evidence(v, verbose)

    cov: list[tuple[str, str]] = []
    complete: list[str] = []
    for item in v.coverage:
        if item.status == "complete" and not full:
            complete.append(item.source)
            continue
        line = f"{item.source} {item.status}: {item.nodes_seen} of {item.nodes_expected} nodes"
        if full:
            line += f", {item.files} files, {item.lines} lines"
        if item.missing_nodes and item.status != "complete" and item.nodes_seen:
            line += f"; none from {nodes_text(item.missing_nodes, full=full)}"
        if item.note:
            line += f" ({clean(item.note)})"
        cov.append((item.status, line))

    errs = []
    for x in v.errors if full else v.errors[:2]:
        loc = f"{x.file}:{x.line}" if x.file and x.line else x.file
        errs.append(f"{x.source}" + (f" {loc}" if loc else "") + f": {clean(x.message)}")

    facts: list[str] = []
    if enrichment is not None:
        facts = [f"{k} {val}" for k, val in (("cluster", enrichment.cluster), ("owner", enrichment.owner)) if val]
        facts += [f"{k}: {url}" for k, url in sorted(enrichment.links.items())]
        if enrichment.previous_attempts:
            facts.append("previous attempts: " + ", ".join(enrichment.previous_attempts))

    footer = f"analyzed {v.analyzed_at}; catalog {v.catalog.version} sha256 {v.catalog.sha256}" if full else None
    return _Content(
        domain=dom, headline=headline, workload=workload, window=window,
        causes=causes, secondary=list(v.secondary_causes), affected=affected,
        why=[clean(x) for x in v.explanation], symptoms_head=head, symptoms=rows,
        leads=leads, leads_more=len(leads_all) - len(leads), unrec=unrec, unrec_more=len(unrec_all) - len(unrec),
        evidence=evidence, evidence_total=ev_total, coverage=cov, coverage_complete=complete, errors=errs,
        errors_more=len(v.errors) - len(errs), facts=facts, footer=footer,
    )


def _cause_facts(c: Cause, *, with_category: bool = True) -> list[str]:
    out = [f"category {c.category}"] if with_category else []
    out.append(f"rule {c.rule}")
    out.append(f"first at {clock(c.first_seen)}" if c.first_seen else "no timestamp")
    if c.count > 1:
        out.append(f"{c.count} events")
    if c.devices:
        out.append("devices " + ", ".join(c.devices))
    elif c.nodes:
        out.append("nodes " + nodes_text(c.nodes))
    return out


# --------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------


class _Lines:
    """Lines no wider than `width`, with hanging indents; words are never split unless one is wider
    than the whole line (rich folds it then)."""

    def __init__(self, console: Console, width: int) -> None:
        self.console = console
        self.width = width
        self.out: list[Text] = []

    def blank(self) -> None:
        from rich.text import Text

        if self.out and self.out[-1].plain:
            self.out.append(Text(""))

    def para(self, body: Text | str, *, first: Text | str = "", indent: int = 0, hang: int | None = None,
             max_lines: int | None = None) -> None:
        """`first` then `body` wrapped to the width; continuation lines start at column `hang`
        (default: where the body starts); past `max_lines` the rest is cut and marked with "…"."""
        from rich.text import Text

        first_t = first if isinstance(first, Text) else Text(first)
        body_t = body if isinstance(body, Text) else Text(body)
        start = indent + first_t.cell_len
        hang = start if hang is None else hang
        if start > self.width - 20:  # the label leaves no room: the body goes under it
            for ln in first_t.wrap(self.console, self.width - indent, overflow="fold"):
                ln.rstrip()
                self.out.append(Text(" " * indent) + ln)
            if not body_t.plain:
                return
            start = hang = min(hang, indent + 4)
            first_t, indent = Text(""), start
        avail_first = self.width - start
        avail_rest = self.width - hang
        lines = list(body_t.wrap(self.console, avail_first, overflow="fold")) or [Text("")]
        if len(lines) > 1 and avail_rest != avail_first:
            plain, n = body_t.plain, len(lines[0].plain)
            while n < len(plain) and plain[n] == " ":
                n += 1
            lines = [lines[0], *body_t[n:].wrap(self.console, avail_rest, overflow="fold")]
        if max_lines is not None and len(lines) > max_lines:
            lines = lines[:max_lines]
            last = lines[-1]
            last.rstrip()
            last.truncate((avail_first if max_lines == 1 else avail_rest) - 1)
            last.append("…")
        for i, ln in enumerate(lines):
            ln.rstrip()
            pre = Text(" " * indent) + first_t if i == 0 else Text(" " * hang)
            self.out.append(pre + ln)

    def labelled(self, label: str, body: Text | str, *, style: str = "bold", max_lines: int | None = None) -> None:
        from rich.text import Text

        self.para(body, first=Text(label.ljust(LABEL_W - 1) + " ", style=style), hang=LABEL_W, max_lines=max_lines)

    def clipped(self, text: str, indent: int, style: str = "") -> None:
        from rich.text import Text

        t = Text(clean(text), style=style)
        t.truncate(self.width - indent, overflow="ellipsis")
        t.rstrip()
        self.out.append(Text(" " * indent) + t)


def _join(parts: Iterable[str | tuple[str, str]]) -> Text:
    from rich.text import Text

    t = Text()
    for p in parts:
        t.append(p) if isinstance(p, str) else t.append(p[0], style=p[1])
    return t


def text_lines(v: Verdict, console: Console, *, verbose: bool = False,
               enrichment: Enrichment | None = None) -> list[Text]:
    """The text view as lines, each at most `console.width` cells."""
    from rich.text import Text

    c = _content(v, verbose, enrichment)
    out = _Lines(console, console.width)
    cap = None if verbose else 3  # lines of prose per item in the short form
    badge = Text.assemble((c.domain.upper(), DOMAIN_STYLE.get(c.domain, "bold")), ": ")
    out.para(Text("".join(t for t, _ in c.headline), style="bold"), first=badge)
    out.para(Text(c.workload))
    out.para(Text(c.window, style="dim"))
    if c.facts:
        for f in c.facts:
            out.para(Text(f, style="dim"))
    out.blank()

    for cv in c.causes:
        style = "bold red" if cv.label == "Root cause" else "bold"
        out.labelled(cv.label, Text(clean(cv.cause.summary), style=style), max_lines=cap)
        # the headline names the root cause's category already
        facts = _cause_facts(cv.cause, with_category=cv.label != "Root cause" or verbose)
        out.para(Text(", ".join(facts), style="dim"), indent=LABEL_W)
        if cv.cause.recommended_action:
            out.para(Text(clean(cv.cause.recommended_action)), first=Text("action ", style="dim"), indent=LABEL_W,
                     hang=LABEL_W + 2, max_lines=cap)
    for s in c.secondary:
        out.labelled("Also", Text(clean(s.summary)), max_lines=cap)
        out.para(Text(", ".join(_cause_facts(s)), style="dim"), indent=LABEL_W)
    if c.affected:
        out.labelled("Affected", c.affected)
    for i, line in enumerate(c.why):
        out.para(Text(line), first=Text(("Why" if i == 0 else "").ljust(LABEL_W), style="bold") + Text("- "),
                 hang=LABEL_W + 2, max_lines=None if verbose else 4)

    if c.symptoms:
        out.blank()
        out.labelled("Symptoms", Text(c.symptoms_head, style="dim"))
        cat_w = max(len(r.category) for r in c.symptoms)
        cnt_w = max(len(str(r.count)) for r in c.symptoms)
        # time  category  count  nodes; ranks: the detail wraps under itself, or goes on its own line
        prefix_w = 2 + 12 + 2 + cat_w + 2 + cnt_w + 2
        for r in c.symptoms:
            detail = "; ".join(x for x in (r.nodes, r.ranks, r.note) if x)
            first = _join([(r.time.ljust(12), "dim"), "  ", (r.category.ljust(cat_w), "bold"), "  ",
                           str(r.count).rjust(cnt_w), "  "])
            if prefix_w + 20 <= out.width:
                out.para(Text(detail), first=first, indent=2)
            else:  # narrow: the category and count on a line of their own, the rest under them
                out.para(Text(""), first=_join([(r.category, "bold"), f"  {r.count}"]), indent=2)
                out.para(_join([(r.time, "dim"), f"  {detail}" if detail else ""]), indent=6)

    if c.leads:
        out.blank()
        out.labelled("Leads", Text(f"{len(c.leads) + c.leads_more} (where the evidence points)", style="dim"))
        for ld in c.leads:
            who = ", ".join(x for x in (ld.nodes, ld.ranks) if x)
            body = _join([(ld.kind, "bold"), f" on {who}: " if who else ": ", ld.summary])
            out.para(body, indent=2, hang=4, max_lines=cap)
            where_from = [f"first at {clock(ld.time)}"] if ld.time else []
            where_from += ["see " + ", ".join(ld.refs)] if ld.refs else []
            if where_from:
                out.para(Text(", ".join(where_from), style="dim"), indent=4)
        if c.leads_more:
            out.para(Text(f"+{c.leads_more} more (--verbose)", style="dim"), indent=2)

    if c.unrec:
        out.blank()
        out.labelled("Unrecognized", Text("error-looking lines no rule understood", style="dim"))
        for u in c.unrec:
            out.para(Text(u.template), first=Text(f"{u.count}x ", style="bold"), indent=2, hang=4,
                     max_lines=None if verbose else 2)
            loc = ", ".join(x for x in (f"first {u.first_where}" if u.first_where else "", u.nodes) if x)
            if loc:
                out.para(Text(loc, style="dim"), indent=4)
            if verbose and u.first_text:
                out.clipped(u.first_text, 6)
        if c.unrec_more:
            out.para(Text(f"+{c.unrec_more} more templates (--verbose)", style="dim"), indent=2)

    if c.evidence:
        out.blank()
        shown = f"{len(c.evidence)} of {c.evidence_total} lines, --verbose for all" \
            if len(c.evidence) < c.evidence_total else _n(c.evidence_total, "line")
        out.labelled("Evidence", Text(shown, style="dim"))
        for e in c.evidence:
            meta: list[str] = [e.role] if verbose or e.role in ("cause", "candidate") else []
            if e.category:
                meta.append(e.category)
            if e.node and (verbose or e.rank is not None or not e.file or e.node not in e.file):
                meta.append(e.node + (f" rank {e.rank}" if e.rank is not None else ""))
            if verbose:
                meta.append(clock(e.time))
            out.para(Text(" ".join(meta) if not verbose else ", ".join(meta), style="dim"),
                     first=Text(where(e) + "  ", style="cyan"), indent=2, hang=6)
            out.clipped(e.text, 4)

    out.blank()
    if c.coverage_complete:
        out.labelled("Coverage", Text("complete: " + ", ".join(c.coverage_complete), style="dim")
                     if not c.coverage else Text("complete: " + ", ".join(c.coverage_complete)))
    elif not c.coverage:
        out.labelled("Coverage", Text("no sources read", style="yellow"))
    for i, (status, gap) in enumerate(c.coverage):
        label = "Coverage" if i == 0 and not c.coverage_complete else ""
        out.para(Text(gap, style=COVERAGE_STYLE.get(status, "red")), first=Text(label.ljust(LABEL_W), style="bold"),
                 hang=LABEL_W + 2)
    for i, err in enumerate(c.errors):
        out.para(Text(err), first=Text(("Errors" if i == 0 else "").ljust(LABEL_W), style="bold red"),
                 hang=LABEL_W + 2)
    if c.errors_more:
        out.para(Text(f"+{c.errors_more} more read errors (--verbose)", style="dim"), indent=LABEL_W)
    if c.footer:
        for part in c.footer.split("; "):
            out.para(Text(part, style="dim"), hang=2)
    return out.out


def render_verdict(v: Verdict, console: Console, *, verbose: bool = False,
                   enrichment: Enrichment | None = None) -> None:
    """Print the text view (short form unless `verbose`) to `console`, laid out for its width."""
    for line in text_lines(v, console, verbose=verbose, enrichment=enrichment):
        console.print(line, no_wrap=True, overflow="crop", crop=True)


# --------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------

def _md(s: str) -> str:
    """Free text for Markdown: escape only what would turn into markup (code, emphasis, HTML),
    so that node-[01-04] and NETIR_LINK_EVT read the same in the source and the rendering."""
    s = re.sub(r"([\\`*<])", r"\\\1", clean(s))
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", s)


def _code(s: str) -> str:
    s = clean(s)
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def render_markdown(v: Verdict, *, verbose: bool = False, enrichment: Enrichment | None = None) -> str:
    """The same content as the text view as one Markdown block: a heading with the domain and the
    cause, bullet lists, the evidence lines in a fenced code block. Deterministic (no clock)."""
    c = _content(v, verbose, enrichment)
    if c.footer:
        c.footer = f"catalog {v.catalog.version} sha256 {v.catalog.sha256}"  # no analyzed_at: same bytes each time
    md: list[str] = []
    head = "".join(_code(t) if code else _md(t) for t, code in c.headline)
    md.append(f"### {c.domain.upper()}: {head}")
    md.append("")
    md.append(f"{_md(c.workload)}; {_md(c.window)}")
    if c.facts:
        md.append("")
        md += [f"- {_md(f)}" for f in c.facts]

    for cv in c.causes:
        md += ["", f"**{cv.label}:** {_md(cv.cause.summary)}", ""]
        facts = _cause_facts(cv.cause, with_category=False)
        facts[0] = f"rule {_code(cv.cause.rule)}"
        md.append(f"- category {_code(cv.cause.category)}, " + ", ".join(
            f if f.startswith("rule ") else _md(f) for f in facts))
        if cv.cause.recommended_action:
            md.append(f"- action: {_md(cv.cause.recommended_action)}")
    for s in c.secondary:
        md += ["", f"**Also:** {_md(s.summary)} (category {_code(s.category)}, rule {_code(s.rule)})"]
    if c.affected:
        md += ["", f"**Affected nodes:** {_md(c.affected)}"]
    if c.why:
        md += ["", "**Why**", ""]
        md += [f"- {_md(x)}" for x in c.why]
    if c.symptoms:
        md += ["", f"**Symptoms** ({_md(c.symptoms_head)})", ""]
        for r in c.symptoms:
            detail = "; ".join(x for x in (r.nodes, r.ranks, r.note) if x)
            md.append(f"- {_code(r.category)} x{r.count} from {r.time}" + (f": {_md(detail)}" if detail else ""))
    if c.leads:
        md += ["", "**Leads**", ""]
        for ld in c.leads:
            who = ", ".join(x for x in (ld.nodes, ld.ranks) if x)
            meta = ([f"first at {clock(ld.time)}"] if ld.time else []) + (
                [f"see {', '.join(_code(r) for r in ld.refs)}"] if ld.refs else [])
            refs = f" ({', '.join(meta)})" if meta else ""
            md.append(f"- {_code(ld.kind)}" + (f" on {_md(who)}" if who else "") + f": {_md(ld.summary)}{refs}")
        if c.leads_more:
            md.append(f"- +{c.leads_more} more")
    if c.unrec:
        md += ["", "**Unrecognized lines** (error-looking lines no rule understood)", ""]
        for u in c.unrec:
            loc = ", ".join(x for x in (f"first {_code(u.first_where)}" if u.first_where else "", _md(u.nodes)) if x)
            md.append(f"- {u.count}x {_code(u.template)}" + (f" ({loc})" if loc else ""))
        if c.unrec_more:
            md.append(f"- +{c.unrec_more} more templates")
    if c.evidence:
        shown = f"{len(c.evidence)} of {c.evidence_total} lines" if len(c.evidence) < c.evidence_total \
            else _n(c.evidence_total, "line")
        body = [f"{where(e)}: {clean(e.text)}" for e in c.evidence]
        run = max((len(m) for b in body for m in re.findall(r"`{3,}", b)), default=2)
        fence = "`" * (run + 1)
        md += ["", f"**Evidence** ({shown})", "", f"{fence}text", *body, fence]
    md.append("")
    if not c.coverage:
        md.append("**Coverage:** " + ("complete: " + ", ".join(c.coverage_complete) if c.coverage_complete
                                      else "no sources read"))
    else:
        md.append("**Coverage**" + (" (complete: " + ", ".join(c.coverage_complete) + ")"
                                    if c.coverage_complete else ""))
        md.append("")
        md += [f"- {_md(s)}" for _, s in c.coverage]
    if c.errors:
        md += ["", "**Errors while reading evidence**", ""]
        md += [f"- {_md(e)}" for e in c.errors]
        if c.errors_more:
            md.append(f"- +{c.errors_more} more")
    if c.footer:
        md += ["", _md(c.footer)]
    return "\n".join(md) + "\n"


# --------------------------------------------------------------------------
# One entry point for the commands and the stdout sink
# --------------------------------------------------------------------------


def write(v: Verdict, fmt: str, stream: TextIO, *, width: int | None = None, verbose: bool = False,
          enrichment: Enrichment | None = None, color: bool | None = None) -> None:
    """`fmt` text, markdown or json (the verdict document, exactly `analyze --format json`)."""
    if fmt == "json":
        stream.write(records.dumps(v, indent=2) + "\n")
    elif fmt == "markdown":
        stream.write(render_markdown(v, verbose=verbose, enrichment=enrichment))
    elif fmt == "text":
        render_verdict(v, make_console(stream, width, color=color), verbose=verbose, enrichment=enrichment)
    else:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    stream.flush()
