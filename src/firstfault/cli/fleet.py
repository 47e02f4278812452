"""`firstfault fleet`: the Fleet page's figures from the command line, as tables or JSON (the same
document as GET /v1/fleet)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from firstfault.cli.base import command, db_option, fail, must_exist

if TYPE_CHECKING:
    from firstfault.dashboard.fleet import FleetReport


@command()
@db_option("Verdict store URL: sqlite:///PATH or postgresql://USER@HOST/DB.")
@click.option("--since", default="7d", help="Window start: 7d, 24h, 90m or an ISO 8601 time.")
@click.option("--until", help="Window end (exclusive); default now.")
@click.option("--domain", multiple=True,
              help="Cause domain that counts (repeat); default hardware, network, infrastructure.")
@click.option("--limit", type=int, default=20, help="Rows per table.")
@click.option("--cluster", multiple=True, help="Count only this cluster's verdicts (repeat); default all.")
@click.option("--format", "-f", "fmt", type=click.Choice(("table", "json")), default="table",
              help="table or json (the GET /v1/fleet document).")
@click.option("--by", multiple=True, help="Rank only these (repeat): node, device, host-port, switch-port, switch, "
                                          "cable (switches, their ports and cables come from fabric sources); "
                                          "default all.")
def fleet(db: str, since: str, until: str | None, domain: tuple[str, ...], limit: int, cluster: tuple[str, ...],
          fmt: str, by: tuple[str, ...]) -> None:
    """Nodes, GPUs, host ports, switch ports, switches and cables most often where failures began, with repeat
    offenders.

    The window is of failure time (each attempt's window end), not of analysis time.
    """
    from datetime import UTC, datetime

    from pydantic import ValidationError
    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.dashboard.params import FleetParams
    from firstfault.dashboard.router import fleet_report
    from firstfault.store import StoreError, VerdictStore

    try:
        params = FleetParams(since=since, until=until, domain=list(domain), limit=limit, cluster=list(cluster),
                             by=list(by))  # type: ignore[arg-type]  # validated by the model
        now = datetime.now(UTC)
        params.span(now)
    except ValidationError as exc:
        raise fail("; ".join(f"--{'.'.join(str(p) for p in e['loc'] if not isinstance(p, int))}: {e['msg']}"
                             for e in exc.errors(include_url=False))) from exc
    except ValueError as exc:
        raise fail(str(exc)) from exc
    try:
        must_exist(db)
        with VerdictStore.open(db, auto_migrate=False) as store:
            report = fleet_report(store, params, now)
    except (StoreError, SQLAlchemyError, ValueError) as exc:  # bad URL, server down, database never written
        raise fail(f"cannot read the verdict store: {exc}") from exc
    if fmt == "json":
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2))
        return
    _print_tables(report)


def _print_tables(report: FleetReport) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    out = Console()
    out.print(f"[bold]Fleet[/] {report.since:%Y-%m-%d %H:%M} -> {report.until:%Y-%m-%d %H:%M} UTC  "
              f"causes in {', '.join(report.domains)}: {sum(report.failures)} failure(s) "
              f"in {report.verdicts} verdict(s), {report.node_jobs} node-job(s)", highlight=False)
    bars = " .:-=+*#%@"
    top = max([*report.failures, 1])
    for t in report.tables:
        table = Table(title=f"{t.title} ({len(t.entries)} implicated of {t.seen} seen)", title_justify="left")
        for col, just in (("#", "right"), ("name", "left"), ("node", "left"), ("root", "right"),
                          ("cand.", "right"), ("leads", "right"), ("jobs", "right"), ("x fleet", "right"),
                          ("trend", "left"), ("flag", "left")):
            table.add_column(col, justify=just)  # type: ignore[arg-type]
        for i, e in enumerate(t.entries, 1):
            trend = "".join(bars[min(9, round(9 * v / top))] if v else " " for v in e.trend)
            table.add_row(str(i), escape(e.key), escape(e.node) if e.node and e.node != e.key else "", str(e.root),
                          str(e.candidate or ""), str(e.lead or ""), str(e.jobs or ""),
                          f"{e.ratio:.1f}" if e.ratio else "", trend, "REPEAT OFFENDER" if e.repeat_offender else "")
        if t.entries:
            out.print(table)
        else:
            out.print(f"{t.title}: none in this window", highlight=False)
    out.print(f"[dim]{report.rule}[/]", highlight=False)
