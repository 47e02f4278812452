"""The `firstfault` command line."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from firstfault import commands

# The output helpers are typer-free (firstfault/commands.py): entry.py runs `analyze` without typer.
from firstfault.commands import catalog as _catalog
from firstfault.commands import check_output as _check_output
from firstfault.commands import err as _err
from firstfault.commands import write_atomic as _write_atomic

# rich (tables, colour) is imported where a command prints with it: `analyze` does not.
if TYPE_CHECKING:
    from firstfault.model import Enrichment, Verdict

app = typer.Typer(
    name="firstfault",
    help="Find where a failed distributed GPU workload began.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
rules_app = typer.Typer(help="Inspect, validate and test the rule catalog.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")


RulesOpt = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs Optional here
    typer.Option("--rules", help="Catalog directory (catalog.yaml + rules/); default: the shipped catalog."),
]


class Fmt(str, Enum):
    text = "text"
    json = "json"


class ViewFmt(str, Enum):
    """How a verdict is printed (firstfault.render)."""

    text = "text"
    markdown = "markdown"
    json = "json"


ViewFmtOpt = Annotated[
    ViewFmt,
    typer.Option("--format", "-f", help="text (readable, short unless --verbose), markdown (for tickets and chat) "
                                        "or json (the verdict document of spec/verdict.md)."),
]
WidthOpt = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option("--width", "-w", min=40,
                 help="Text width; default: COLUMNS, else the terminal's, else 80 (piped or redirected)."),
]
VerboseOpt = Annotated[
    bool, typer.Option("--verbose", "-v", help="Every evidence line, lead and coverage row, not the short form."),
]


@app.command()
def analyze(
    bundle: Annotated[Path, typer.Argument(help="Evidence bundle directory (with workload.yaml).")],
    fmt: ViewFmtOpt = ViewFmt.text,
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--output", "-o", help="Also write the JSON verdict to this file (atomically)."),
    ] = None,
    rules: RulesOpt = None,
    width: WidthOpt = None,
    verbose: VerboseOpt = False,
    workers: Annotated[
        int,
        typer.Option("--workers", "-j", min=0,
                     help="Processes that read the log files (0: one per CPU; 1: this process only). "
                          "The verdict is the same for any number."),
    ] = 0,
) -> None:
    """Analyse an evidence bundle and print its verdict.

    Exits 0 when a verdict was built (whatever it says), 2 when none could be
    (the message names the file and why).
    """
    commands.analyze(bundle, fmt.value, output, rules, width, verbose, workers)


@app.command()
def show(
    verdict_file: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Argument(metavar="[VERDICT.json]",
                       help="A saved verdict (analyze -o, --format json, a webhook body or GET /v1/verdicts/ID); "
                            "- reads stdin."),
    ] = None,
    db: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--db", envvar="FIRSTFAULT_DB",
                     help="Verdict store URL (sqlite:///PATH or postgresql://USER@HOST/DB), with --id."),
    ] = None,
    vid: Annotated[Optional[int], typer.Option("--id", min=1, help="Stored verdict id (the dashboard's).")] = None,  # noqa: UP045
    fmt: ViewFmtOpt = ViewFmt.text,
    width: WidthOpt = None,
    verbose: VerboseOpt = False,
) -> None:
    """Print a saved or stored verdict as text, markdown or json, like analyze does.

    Exits 2 when there is no such verdict or it cannot be read.
    """
    from firstfault.render import write

    if (verdict_file is None) == (vid is None):
        _err("give a VERDICT.json file, or --db URL --id ID")
        raise typer.Exit(2)
    if vid is not None:
        if not db:
            _err("--id needs --db URL (or FIRSTFAULT_DB)")
            raise typer.Exit(2)
        verdict, enrichment = _stored(db, vid)
    else:
        assert verdict_file is not None
        verdict, enrichment = _saved(verdict_file)
    if fmt is ViewFmt.json and enrichment is not None and _has_facts(enrichment):
        from firstfault.sinks.webhook import document

        sys.stdout.write(json.dumps(json.loads(document(verdict, enrichment)), indent=2, ensure_ascii=False) + "\n")
        return
    write(verdict, fmt.value, sys.stdout, width=width, verbose=verbose, enrichment=enrichment)


def _has_facts(e: Enrichment) -> bool:
    return bool(e.cluster or e.owner or e.links or e.previous_attempts)


def _saved(path: Path) -> tuple[Verdict, Enrichment | None]:
    """A verdict document, alone or as a webhook body ("enrichment") or a GET /v1/verdicts/ID record."""
    from pydantic import ValidationError

    from firstfault.lazymodel import model_errors
    from firstfault.model import Enrichment, Verdict

    try:
        raw = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
        doc = json.loads(raw)
    except OSError as exc:
        _err(f"cannot read {path}: {exc.strerror or exc}")
        raise typer.Exit(2) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        _err(f"{path}: not a JSON verdict: {exc}")
        raise typer.Exit(2) from exc
    if not isinstance(doc, dict):
        _err(f"{path}: not a verdict (a JSON object with apiVersion, workload, ...)")
        raise typer.Exit(2)
    enrichment = None
    if "verdict" in doc and "apiVersion" not in doc and isinstance(doc["verdict"], dict):  # GET /v1/verdicts/ID
        enrichment = Enrichment(cluster=doc.get("cluster") or None, owner=doc.get("owner"),
                                links=dict(doc.get("links") or {}),
                                previous_attempts=list(doc.get("previous_attempts") or []))
        doc = doc["verdict"]
    elif isinstance(doc.get("enrichment"), dict):  # a webhook body
        doc.pop("delivery", None)
        e = doc.pop("enrichment")
        enrichment = Enrichment(cluster=e.get("cluster"), owner=e.get("owner"), links=dict(e.get("links") or {}),
                                previous_attempts=list(e.get("previous_attempts") or []))
    try:
        return Verdict.model_validate(doc), enrichment
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                             for e in model_errors(exc)[:5])
        _err(f"{path}: not a verdict of this version ({problems})")
        raise typer.Exit(2) from exc


def _stored(db: str, vid: int) -> tuple[Verdict, Enrichment | None]:
    """The verdict and its enrichment, read the way the dashboard's GET /v1/verdicts/ID reads them."""
    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.store import StoreError, VerdictStore, must_exist

    try:
        must_exist(db)
        with VerdictStore.open(db, auto_migrate=False) as store:
            rec = store.get_record(vid)
    except (StoreError, SQLAlchemyError, ValueError) as exc:
        _err(f"cannot read the verdict store: {exc}")
        raise typer.Exit(2) from exc
    if rec is None:
        _err(f"verdict {vid} is not in the store")
        raise typer.Exit(2)
    return rec.verdict, rec.enrichment


@rules_app.command("check")
def rules_check(rules: RulesOpt = None) -> None:
    """Validate the catalog: schema, unique ids, references that resolve, tests present."""
    from rich.console import Console

    cat = _catalog(rules)
    Console().print(f"catalog {cat.version}: {len(cat.rules)} rules OK (sha256 {cat.sha256})")


@rules_app.command("test")
def rules_test(
    rules: RulesOpt = None,
    junit: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--junit", help="Write JUnit XML results to this file."),
    ] = None,
    rule: Annotated[Optional[str], typer.Option("--rule", help="Only this rule id.")] = None,  # noqa: UP045
) -> None:
    """Run every rule's own positive and negative test cases."""
    from rich.console import Console

    from firstfault.analysis.ruletest import junit_xml, run_all

    if junit is not None:
        _check_output(junit, "--junit")
    cat = _catalog(rules)
    results = run_all(cat, only=rule)
    console = Console()
    for r in results:
        if not r.ok:
            console.print(f"[red]FAIL[/] {r.rule}: {r.name}: {r.message}", highlight=False)
    failed = sum(not r.ok for r in results)
    console.print(f"{len(results) - failed} passed, {failed} failed", highlight=False)
    if junit is not None:
        _write_atomic(junit, junit_xml(results), "--junit")
    if failed or not results:
        raise typer.Exit(1)


@rules_app.command("list")
def rules_list(rules: RulesOpt = None, fmt: Annotated[Fmt, typer.Option("--format", "-f")] = Fmt.text) -> None:
    """Show the catalog's rules."""
    from rich.console import Console
    from rich.table import Table

    cat = _catalog(rules)
    rows = [
        {"id": r.id, "title": r.title, "status": r.status, "role": r.role, "domain": r.domain,
         "category": r.category, "version": r.version, "weak": r.weak}
        for r in (lr.rule for lr in cat.rules)
    ]
    if fmt is Fmt.json:
        sys.stdout.write(json.dumps({"version": cat.version, "sha256": cat.sha256, "rules": rows}, indent=2) + "\n")
        return
    t = Table(title=f"catalog {cat.version} ({len(rows)} rules)")
    for col in ("id", "role", "domain", "category", "status", "title"):
        t.add_column(col)
    for r in rows:
        t.add_row(str(r["id"]), str(r["role"]), str(r["domain"] or "-"), str(r["category"]), str(r["status"]),
                  str(r["title"]))
    Console().print(t)


@rules_app.command("prefilter")
def rules_prefilter(
    fmt: Annotated[Fmt, typer.Option("--format", "-f")] = Fmt.text,
    source: Annotated[Optional[str], typer.Option("--source", help="Only words for this source kind.")] = None,  # noqa: UP045
) -> None:
    """Print the literal words a line must contain for any extractor to match it."""
    from firstfault.collect.scan import prefilter_words

    words = prefilter_words(source)
    if fmt is Fmt.json:
        sys.stdout.write(json.dumps({"words": words}, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(words) + "\n")


class ReplayFmt(str, Enum):
    table = "table"
    json = "json"


@rules_app.command("replay")
def rules_replay(
    db: Annotated[
        str, typer.Option("--db", envvar="FIRSTFAULT_DB", help="Verdict store URL (sqlite:///PATH or postgresql://...).")
    ],
    rules: RulesOpt = None,
    since: Annotated[
        str, typer.Option("--since", help="Verdicts analysed since: a duration back from now (90m, 24h, 7d, 2w) "
                                          "or an ISO 8601 date or time.")
    ] = "7d",
    fmt: Annotated[ReplayFmt, typer.Option("--format", "-f", help="table (readable) or json.")] = ReplayFmt.table,
    max_changed_share: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option("--max-changed-share", min=0.0, max=1.0,
                     help="Exit 1 when more than this share (0-1) of the verdicts with evidence would change "
                          "or could not be replayed."),
    ] = None,
) -> None:
    """Judge the stored verdicts' evidence again with a catalog; print every verdict that would change.

    Each verdict's stored evidence (the candidate lines and documents its
    analysis used) is re-attributed with --rules (default: the shipped
    catalog); a change is a different domain, cause categories or affected
    nodes. Exit codes: 0 done (and within --max-changed-share), 1 more than
    that share would change or could not be replayed (a verdict that failed
    to replay is not known to stay), 2 the store or the catalog cannot be read.
    """
    from datetime import UTC, datetime

    from rich.console import Console
    from rich.table import Table
    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.dashboard.params import resolve
    from firstfault.replay import replay
    from firstfault.store import StoreError, VerdictStore, must_exist

    try:
        start = resolve(since, datetime.now(UTC))
    except ValueError as exc:
        _err(f"--since: {exc}")
        raise typer.Exit(2) from exc
    cat = _catalog(rules)
    try:
        must_exist(db)
        with VerdictStore.open(db, auto_migrate=False) as store:
            report = replay(store, cat, since=start)
    except (StoreError, SQLAlchemyError, ValueError) as exc:
        _err(f"cannot read the verdict store: {exc}")
        raise typer.Exit(2) from exc
    over = max_changed_share is not None and report.unsure_share > max_changed_share
    if fmt is ReplayFmt.json:
        doc = report.as_dict() | {"since": start.isoformat() if start else None,
                                  "max_changed_share": max_changed_share, "over": over}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        console = Console()
        if report.changed:
            t = Table(title=f"would change with catalog {cat.version} ({cat.sha256[:12]})")
            for col in ("id", "workload", "cluster", "domain", "category", "nodes"):
                t.add_column(col)

            def arrow(a: str, b: str) -> str:
                return a if a == b else f"{a} -> {b}"

            for c in report.changed:
                cats = (", ".join(c.before.categories) or "-", ", ".join(c.after.categories) or "-")
                nodes = (",".join(c.before.nodes) or "-", ",".join(c.after.nodes) or "-")
                t.add_row(str(c.id) + (" (truncated)" if c.truncated else ""), f"{c.workload}#{c.attempt}",
                          c.cluster or "-", arrow(c.before.domain, c.after.domain), arrow(*cats), arrow(*nodes))
            console.print(t)
        for vid, msg in report.failed:
            console.print(f"[red]verdict {vid}: cannot replay:[/] {msg}", highlight=False)
        console.print(f"{report.replayed} replayed, {len(report.changed)} would change ({report.share:.1%}); "
                      f"{report.truncated} from truncated evidence, {report.without_evidence} stored without "
                      f"evidence, {len(report.failed)} failed", highlight=False)
        if over:
            console.print(f"[bold red]more than {max_changed_share:.1%} would change or could not be replayed "
                          f"({report.unsure_share:.1%})[/]", highlight=False)
    if over:
        raise typer.Exit(1)


from firstfault.service.cli import serve as _serve  # noqa: E402 - light; heavy imports happen inside serve()

app.command("serve")(_serve)

from firstfault.blueprint.cli import run as _run  # noqa: E402
from firstfault.blueprint.cli import watch as _watch  # noqa: E402
from firstfault.dashboard.cli import fleet as _fleet  # noqa: E402
from firstfault.demo import demo as _demo  # noqa: E402

app.command("run")(_run)
app.command("watch")(_watch)
app.command("fleet")(_fleet)
app.command("demo")(_demo)

from firstfault.store.cli import store_app as _store_app  # noqa: E402

app.add_typer(_store_app, name="store")


def app_for(argv: list[str]) -> typer.Typer:
    """The app that runs `firstfault ARGV`: for one of the top-level commands, an app of that command
    alone (the same function, options and help), since typer builds every registered command's
    options (a pydantic adapter each) before it runs one: 5% of the showcase's instructions."""
    name = argv[0] if argv else ""
    info = next((c for c in app.registered_commands
                 if (c.name or (c.callback.__name__ if c.callback else "")).replace("_", "-") == name), None)
    if info is None:
        return app
    one = typer.Typer(name=app.info.name, help=app.info.help, no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False)
    one.registered_commands = [info]
    # A callback keeps it a group, so the command is still named on the command line (typer runs a
    # single command without one as the program itself).
    one.callback()(_group)
    return one


def _group() -> None:
    """Find where a failed distributed GPU workload began."""


if __name__ == "__main__":  # `python -m firstfault.cli`: the typer app (`firstfault`, firstfault/entry.py, runs it too)
    app()
