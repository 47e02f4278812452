"""`firstfault fleet` (registered by firstfault/cli.py): the Fleet page's figures from the command line, as
tables or JSON (the same document as GET /v1/fleet).

`firstfault demo`, which analyses samples and starts the Service with the dashboard, is firstfault/demo.py:
the dashboard imports neither the engine nor the Service.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Optional

import typer


class Fmt(str, Enum):
    table = "table"
    json = "json"


def _err(msg: str) -> None:
    typer.echo(f"error: {msg}", err=True)


def fleet(
    db: Annotated[str, typer.Option("--db", envvar="FIRSTFAULT_DB",
                                    help="Verdict store URL: sqlite:///PATH or postgresql://USER@HOST/DB.")],
    since: Annotated[str, typer.Option(help="Window start: 7d, 24h, 90m or an ISO 8601 time.")] = "7d",
    until: Annotated[Optional[str], typer.Option(help="Window end (exclusive); default now.")] = None,  # noqa: UP045
    domain: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--domain", help="Cause domain that counts (repeat); default hardware, network, infrastructure.")] = None,
    limit: Annotated[int, typer.Option(help="Rows per table.")] = 20,
    cluster: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--cluster", help="Count only this cluster's verdicts (repeat); default all.")] = None,
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="table or json (the GET /v1/fleet document).")] = Fmt.table,
    by: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--by", help="Rank only these (repeat): node, device, host-port, switch-port, switch, cable "
                     "(switches, their ports and cables come from fabric sources); default all.")] = None,
) -> None:
    """Nodes, GPUs, host ports, switch ports, switches and cables most often where failures began, with repeat
    offenders.

    The window is of failure time (each attempt's window end), not of analysis time.
    """
    from pydantic import ValidationError
    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.dashboard.params import FleetParams
    from firstfault.dashboard.router import fleet_report
    from firstfault.store import StoreError, VerdictStore, must_exist

    try:
        params = FleetParams(since=since, until=until, domain=domain or [], limit=limit, cluster=cluster or [],
                             by=by or [])  # type: ignore[arg-type]  # validated by the model
        now = datetime.now(UTC)
        params.span(now)
    except ValidationError as exc:
        _err("; ".join(f"--{'.'.join(str(p) for p in e['loc'] if not isinstance(p, int))}: {e['msg']}"
                       for e in exc.errors(include_url=False)))
        raise typer.Exit(2) from exc
    except ValueError as exc:
        _err(str(exc))
        raise typer.Exit(2) from exc
    try:
        must_exist(db)
        with VerdictStore.open(db, auto_migrate=False) as store:
            report = fleet_report(store, params, now)
    except (StoreError, SQLAlchemyError, ValueError) as exc:  # bad URL, server down, database never written
        _err(f"cannot read the verdict store: {exc}")
        raise typer.Exit(2) from exc
    if fmt is Fmt.json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2))
        return
    _print_tables(report)


def _print_tables(report: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from firstfault.dashboard.fleet import FleetReport

    assert isinstance(report, FleetReport)
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
            table.add_row(str(i), e.key, e.node if e.node and e.node != e.key else "", str(e.root),
                          str(e.candidate or ""), str(e.lead or ""), str(e.jobs or ""),
                          f"{e.ratio:.1f}" if e.ratio else "", trend, "REPEAT OFFENDER" if e.repeat_offender else "")
        if t.entries:
            out.print(table)
        else:
            out.print(f"{t.title}: none in this window", highlight=False)
    out.print(f"[dim]{report.rule}[/]", highlight=False)


def _main() -> None:
    """`python -m firstfault.dashboard.cli fleet` (the command `firstfault` registers)."""
    app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)
    app.command()(fleet)
    app.callback()(_group)  # a group still: the command is named on the command line, as before
    app()


def _group() -> None:
    """The dashboard's command line."""


if __name__ == "__main__":
    _main()
