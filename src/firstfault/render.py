"""Human-readable verdicts for the terminal (rich)."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from firstfault.model import Cause, Verdict

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


def _short(t: str | None) -> str:
    """'2026-11-02T10:03:07.123456Z' -> '10:03:07.123' (the date is in the header)."""
    if not t:
        return "?"
    clock = t.split("T", 1)[-1].rstrip("Z")
    return clock[:12]


def _cause_block(c: Cause, label: str) -> Text:
    t = Text()
    t.append(f"{label}: ", style="bold")
    t.append(c.summary + "\n")
    t.append("  category ", style="dim")
    t.append(c.category)
    t.append("   rule ", style="dim")
    t.append(c.rule)
    t.append("   first seen ", style="dim")
    t.append(_short(c.first_seen) + "\n")
    if c.devices:
        t.append("  devices ", style="dim")
        t.append(", ".join(c.devices) + "\n")
    if c.recommended_action:
        t.append("  action ", style="dim")
        t.append(c.recommended_action + "\n")
    return t


def render_verdict(v: Verdict, console: Console) -> None:
    dom = v.attributed_domain
    head = Text()
    head.append(f" {dom.upper()} ", style=DOMAIN_STYLE.get(dom, "bold"))
    head.append(f"  workload {v.workload.id} (attempt {v.workload.attempt})  ")
    head.append(f"state {v.terminal_state or '?'} -> outcome {v.outcome}", style="dim")
    w = v.workload.window
    if w.start or w.end:
        day = (w.start or w.end or "").split("T", 1)[0]
        head.append(f"\nwindow {day} {_short(w.start)} - {_short(w.end)} UTC", style="dim")
    parts: list[object] = [head, Text("")]
    if v.root_cause:
        parts.append(_cause_block(v.root_cause, "Root cause"))
    for i, c in enumerate(v.candidates, 1):
        parts.append(_cause_block(c, f"Candidate {i}"))
    if v.affected_nodes:
        parts.append(Text.assemble(("Affected nodes: ", "bold"), ", ".join(v.affected_nodes)))
    if v.leads:
        leads = Text("Leads:\n", style="bold")
        for ld in v.leads:
            leads.append(f"  - {ld.kind}: ", style="bold")
            leads.append(f"{ld.summary} (first seen {_short(ld.first_seen)})\n")
        parts.append(leads)
    if v.explanation:
        why = Text("Why:\n", style="bold")
        for line in v.explanation:
            why.append(f"  - {line}\n")
        parts.append(why)
    console.print(Panel(Group(*parts), title="firstfault verdict", expand=True))  # type: ignore[arg-type]

    if v.symptoms:
        chain = Table(title="Cause -> symptoms, in time order", expand=True)
        chain.add_column("first seen")
        chain.add_column("category")
        chain.add_column("nodes")
        chain.add_column("ranks")
        chain.add_column("count", justify="right")
        chain.add_column("explained by")
        if v.root_cause:
            chain.add_row(_short(v.root_cause.first_seen), Text(v.root_cause.category, style="bold red"),
                          ", ".join(v.root_cause.nodes), "", str(v.root_cause.count), "(root cause)")
        for s in v.symptoms:
            ranks = ", ".join(str(r) for r in s.ranks[:12]) + (" ..." if len(s.ranks) > 12 else "")
            chain.add_row(_short(s.first_seen), s.category, ", ".join(s.nodes[:8]) +
                          (" ..." if len(s.nodes) > 8 else ""), ranks, str(s.count), s.explained_by or "-")
        console.print(chain)

    if v.evidence:
        ev = Table(title="Evidence", expand=True, show_lines=False)
        ev.add_column("role")
        ev.add_column("where")
        ev.add_column("time")
        ev.add_column("line", overflow="fold")
        for e in v.evidence:
            where = f"{e.file}:{e.line}" if e.file and e.line else (e.file or e.query or "?")
            ev.add_row(e.role, where, _short(e.time), e.text[:300])
        console.print(ev)

    cov = Table(title="Coverage", expand=False)
    for col in ("source", "status", "nodes", "files", "lines", "note"):
        cov.add_column(col)
    for item in v.coverage:
        style = "green" if item.status == "complete" else "yellow" if item.status == "partial" else "red"
        cov.add_row(item.source, Text(item.status, style=style), f"{item.nodes_seen}/{item.nodes_expected}",
                    str(item.files), str(item.lines), item.note or "")
    console.print(cov)
    if v.errors:
        err = Table(title="Errors while reading evidence", expand=True)
        err.add_column("source")
        err.add_column("where")
        err.add_column("message", overflow="fold")
        for x in v.errors:
            err.add_row(x.source, f"{x.file}:{x.line}" if x.line else (x.file or "-"), x.message)
        console.print(err)
    console.print(Text(f"catalog {v.catalog.version} sha256 {v.catalog.sha256[:16]}...", style="dim"))
