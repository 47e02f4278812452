"""`firstfault fleet` and `firstfault demo` (registered by firstfault/cli.py).

fleet: the Fleet page's figures from the command line, as tables or JSON
(the same document as GET /v1/fleet).

demo: analyses the shipped sample bundles (examples/ and, in a source
checkout, tests/scenarios/) into a local SQLite file, starts the Service
with the dashboard on 127.0.0.1 and prints the URL. No network is used.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
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
    from firstfault.store import StoreError, VerdictStore

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
        _must_exist(db)
        with VerdictStore.open(db, auto_migrate=False) as store:
            report = fleet_report(store, params, now)
    except (StoreError, SQLAlchemyError, ValueError) as exc:  # bad URL, server down, database never written
        _err(f"cannot read the verdict store: {exc}")
        raise typer.Exit(2) from exc
    if fmt is Fmt.json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2))
        return
    _print_tables(report)


def _must_exist(url: str) -> None:
    """A read-only command must not create an empty SQLite file because of a typo in the path."""
    from sqlalchemy.engine import make_url

    u = make_url(url)
    local = u.get_backend_name() == "sqlite" and u.database not in (None, "", ":memory:")
    if local and not Path(str(u.database)).expanduser().is_file():
        raise ValueError(f"{u.database}: no such database file")


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


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------


def sample_dirs(roots: list[Path] | None = None) -> list[Path]:
    """Bundle directories under examples/ and tests/scenarios/ of the checkout (or the given roots)."""
    if not roots:
        here = Path(__file__).resolve()
        for base in (Path.cwd(), *here.parents):
            if (base / "examples").is_dir():
                roots = [base / "examples", base / "tests" / "scenarios"]
                break
        else:
            return []
    found: list[Path] = []
    for root in roots:
        if (root / "workload.yaml").is_file():
            found.append(root)
        elif root.is_dir():
            found += sorted(p.parent for p in root.glob("*/workload.yaml"))
    return found


def load_samples(store_url: str, bundles: list[Path], echo: bool = True) -> int:
    """Analyse each bundle into the store; returns how many distinct verdicts went in.

    Some scenarios are copies of an example (the same workload, window and
    verdict): those are skipped. Each sample is stored as its own "cluster"
    (its directory name) because several samples reuse a job id such as 4242,
    and the store keeps one verdict per (job, attempt, catalog, cluster).
    """
    from firstfault.analysis.analyze import Analyzer
    from firstfault.model import Enrichment
    from firstfault.store import VerdictStore

    analyzer = Analyzer()
    seen: set[tuple[object, ...]] = set()
    written = 0
    with VerdictStore.open(store_url) as store:
        for b in bundles:
            try:
                v = analyzer.analyze_path(str(b))
            except Exception as exc:  # one bad sample must not stop the demo
                _err(f"{b}: skipped: {exc}")
                continue
            rc = v.root_cause
            key = (v.workload.id, v.workload.attempt, v.workload.window.start, v.workload.window.end,
                   v.attributed_domain, rc.category if rc else None)
            if key in seen:
                continue
            seen.add(key)
            store.write(v, Enrichment(cluster=b.name))
            written += 1
            if echo:
                typer.echo(f"  {v.attributed_domain:<14} {b.name}", err=True)
    return written


def free_port(host: str) -> int:
    import socket  # here: every `firstfault` command imports this module

    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def demo_app(store_url: str):  # type: ignore[no-untyped-def]
    """The Service app with the dashboard over `store_url` (added here if the Service did not add it)."""
    from fastapi import FastAPI

    from firstfault.dashboard import make_router
    from firstfault.store import VerdictStore

    store = VerdictStore.open(store_url)
    try:
        from firstfault.service.app import create_app
        from firstfault.service.settings import ServiceSettings

        app = create_app(ServiceSettings())
    except ImportError:  # an install without the Service: the dashboard alone
        app = FastAPI(title="firstfault dashboard")
    if not any(getattr(r, "path", None) == "/fleet" for r in app.routes):
        app.include_router(make_router(lambda: store))
    return app


def demo(
    db: Annotated[Path, typer.Option(help="SQLite file the samples are analysed into.")] = Path("firstfault-demo.db"),
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free port).")] = 8080,
    samples: Annotated[Optional[list[Path]], typer.Option(  # noqa: UP045
        "--samples", help="Bundle directory, or a directory of bundles (repeat); default examples/ and "
                          "tests/scenarios/ of the checkout.")] = None,
    reset: Annotated[bool, typer.Option(help="Start from an empty database file.")] = False,
) -> None:
    """Analyse the shipped samples into a local SQLite store and serve the dashboard on it."""
    bundles = sample_dirs(list(samples) if samples else None)
    if not bundles:
        _err("no sample bundles found: run from the firstfault checkout or pass --samples DIR")
        raise typer.Exit(2)
    db = db.resolve()
    if reset:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    typer.echo(f"analysing {len(bundles)} sample bundle(s) into {db}", err=True)
    n = load_samples(url, bundles)
    if port == 0:
        port = free_port(host)
    import uvicorn

    app = demo_app(url)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"{n} verdict(s) stored. Dashboard: http://{shown}:{port}/   (Ctrl-C stops it)")
    sys.stdout.flush()
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


def _main() -> None:
    """`python -m firstfault.dashboard.cli fleet|demo` (the same commands `firstfault` registers)."""
    app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)
    app.command()(fleet)
    app.command()(demo)
    app()


if __name__ == "__main__":
    _main()
