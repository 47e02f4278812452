"""The `firstfault` command line."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

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


def _err(msg: str) -> None:
    Console(stderr=True).print(f"[bold red]error:[/] {msg}", highlight=False, markup=True)


def _catalog(rules: Path | None):  # type: ignore[no-untyped-def]
    from firstfault.engine.catalog import CatalogError, load_catalog, shipped_catalog

    try:
        return shipped_catalog() if rules is None else load_catalog(rules)
    except CatalogError as exc:
        _err("the rule catalog is invalid:\n" + "\n".join(exc.problems))
        raise typer.Exit(2) from exc


def _check_output(path: Path, flag: str) -> None:
    """Exit 2 naming the path when `path` cannot be written: before any work, and creating nothing."""
    why = None
    if path.is_dir():
        why = "is a directory"
    elif not path.parent.is_dir():
        why = f"its directory {path.parent} does not exist"
    elif not os.access(path.parent, os.W_OK):
        why = f"its directory {path.parent} is not writable"
    if why:
        _err(f"{flag} {path}: {why}")
        raise typer.Exit(2)


def _write_atomic(path: Path, data: str, flag: str = "--output") -> None:
    """Write-then-rename: a crash leaves the old file or the new one, never half of one.

    The directory must exist (it is never created); a failure exits 2 naming the path.
    """
    _check_output(path, flag)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        _err(f"{flag} {path}: cannot write: {exc.strerror or exc}")
        raise typer.Exit(2) from exc


@app.command()
def analyze(
    bundle: Annotated[Path, typer.Argument(help="Evidence bundle directory (with workload.yaml).")],
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="text (readable) or json (spec/verdict.md).")] = Fmt.text,
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--output", "-o", help="Also write the JSON verdict to this file (atomically)."),
    ] = None,
    rules: RulesOpt = None,
) -> None:
    """Analyse an evidence bundle and print its verdict.

    Exits 0 when a verdict was built (whatever it says), 2 when none could be
    (the message names the file and why).
    """
    from firstfault.analyze import Analyzer
    from firstfault.bundle import BundleError

    if output is not None:
        _check_output(output, "--output")
    cat = _catalog(rules)
    try:
        verdict = Analyzer(cat).analyze_path(str(bundle))
    except BundleError as exc:
        _err(str(exc))
        raise typer.Exit(2) from exc
    doc = verdict.model_dump_json(indent=2)
    if output is not None:
        _write_atomic(output, doc + "\n")
    if fmt is Fmt.json:
        sys.stdout.write(doc + "\n")
    else:
        from firstfault.render import render_verdict

        render_verdict(verdict, Console())


@rules_app.command("check")
def rules_check(rules: RulesOpt = None) -> None:
    """Validate the catalog: schema, unique ids, references that resolve, tests present."""
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
    from firstfault.engine.ruletest import junit_xml, run_all

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
    from firstfault.scan import prefilter_words

    words = prefilter_words(source)
    if fmt is Fmt.json:
        sys.stdout.write(json.dumps({"words": words}, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(words) + "\n")


from firstfault.service.cli import serve as _serve  # noqa: E402 - light; heavy imports happen inside serve()

app.command("serve")(_serve)

from firstfault.blueprint.cli import run as _run  # noqa: E402
from firstfault.blueprint.cli import watch as _watch  # noqa: E402
from firstfault.dashboard.cli import demo as _demo  # noqa: E402
from firstfault.dashboard.cli import fleet as _fleet  # noqa: E402

app.command("run")(_run)
app.command("watch")(_watch)
app.command("fleet")(_fleet)
app.command("demo")(_demo)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
