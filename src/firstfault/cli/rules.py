"""`firstfault rules ...`: inspect, validate, test and replay the rule catalog."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from firstfault.cli.base import (
    PATH,
    Group,
    catalog,
    check_output,
    db_option,
    fail,
    must_exist,
    rules_option,
    write_atomic,
)


@click.group(cls=Group)
def rules() -> None:
    """Inspect, validate and test the rule catalog."""


@rules.command("check")
@rules_option
def rules_check(rules: Path | None) -> None:
    """Validate the catalog: schema, unique ids, references that resolve, tests present."""
    cat = catalog(rules)
    click.echo(f"catalog {cat.version}: {len(cat.rules)} rules OK (sha256 {cat.sha256})")


@rules.command("test")
@rules_option
@click.option("--junit", type=PATH, help="Write JUnit XML results to this file.")
@click.option("--rule", help="Only this rule id.")
def rules_test(rules: Path | None, junit: Path | None, rule: str | None) -> None:
    """Run every rule's own positive and negative test cases."""
    from firstfault.analysis.ruletest import junit_xml, run_all

    if junit is not None:
        check_output(junit, "--junit")
    cat = catalog(rules)
    results = run_all(cat, only=rule)
    for r in results:
        if not r.ok:
            click.echo(f"{click.style('FAIL', fg='red')} {r.rule}: {r.name}: {r.message}")
    failed = sum(not r.ok for r in results)
    click.echo(f"{len(results) - failed} passed, {failed} failed")
    if junit is not None:
        write_atomic(junit, junit_xml(results), "--junit")
    if failed or not results:
        raise SystemExit(1)


@rules.command("list")
@rules_option
@click.option("--format", "-f", "fmt", type=click.Choice(("text", "json")), default="text")
def rules_list(rules: Path | None, fmt: str) -> None:
    """Show the catalog's rules."""
    cat = catalog(rules)
    rows = [
        {"id": r.id, "title": r.title, "status": r.status, "role": r.role, "domain": r.domain,
         "category": r.category, "version": r.version, "weak": r.weak}
        for r in (lr.rule for lr in cat.rules)
    ]
    if fmt == "json":
        sys.stdout.write(json.dumps({"version": cat.version, "sha256": cat.sha256, "rules": rows}, indent=2) + "\n")
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"catalog {cat.version} ({len(rows)} rules)")
    for col in ("id", "role", "domain", "category", "status", "title"):
        t.add_column(col)
    for r in rows:
        t.add_row(*(escape(str(v)) for v in (r["id"], r["role"], r["domain"] or "-", r["category"], r["status"],
                                             r["title"])))
    Console().print(t)


@rules.command("prefilter")
@click.option("--format", "-f", "fmt", type=click.Choice(("text", "json")), default="text")
@click.option("--source", help="Only words for this source kind.")
def rules_prefilter(fmt: str, source: str | None) -> None:
    """Print the literal words a line must contain for any extractor to match it."""
    from firstfault.collect.scan import prefilter_words

    words = prefilter_words(source)
    if fmt == "json":
        sys.stdout.write(json.dumps({"words": words}, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(words) + "\n")


@rules.command("replay")
@db_option("Verdict store URL (sqlite:///PATH or postgresql://...).")
@rules_option
@click.option("--since", default="7d", help="Verdicts analysed since: a duration back from now (90m, 24h, 7d, 2w) "
                                            "or an ISO 8601 date or time.")
@click.option("--format", "-f", "fmt", type=click.Choice(("table", "json")), default="table",
              help="table (readable) or json.")
@click.option("--max-changed-share", type=click.FloatRange(0.0, 1.0),
              help="Exit 1 when more than this share (0-1) of the verdicts with evidence would change "
                   "or could not be replayed.")
def rules_replay(db: str, rules: Path | None, since: str, fmt: str, max_changed_share: float | None) -> None:
    """Judge the stored verdicts' evidence again with a catalog; print every verdict that would change.

    Each verdict's stored evidence (the candidate lines and documents its
    analysis used) is re-attributed with --rules (default: the shipped
    catalog); a change is a different domain, cause categories or affected
    nodes. Exit codes: 0 done (and within --max-changed-share), 1 more than
    that share would change or could not be replayed (a verdict that failed
    to replay is not known to stay), 2 the store or the catalog cannot be read.
    """
    from datetime import UTC, datetime

    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.dashboard.params import resolve
    from firstfault.replay import replay
    from firstfault.store import StoreError, VerdictStore

    try:
        start = resolve(since, datetime.now(UTC))
    except ValueError as exc:
        raise fail(f"--since: {exc}") from exc
    cat = catalog(rules)
    try:
        must_exist(db)
        with VerdictStore.open(db, auto_migrate=False) as store:
            report = replay(store, cat, since=start)
    except (StoreError, SQLAlchemyError, ValueError) as exc:
        raise fail(f"cannot read the verdict store: {exc}") from exc
    over = max_changed_share is not None and report.unsure_share > max_changed_share
    if fmt == "json":
        doc = report.as_dict() | {"since": start.isoformat() if start else None,
                                  "max_changed_share": max_changed_share, "over": over}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

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
                t.add_row(*(escape(cell) for cell in (
                    str(c.id) + (" (truncated)" if c.truncated else ""), f"{c.workload}#{c.attempt}",
                    c.cluster or "-", arrow(c.before.domain, c.after.domain), arrow(*cats), arrow(*nodes))))
            console.print(t)
        for vid, msg in report.failed:
            console.print(f"[red]verdict {vid}: cannot replay:[/] {escape(msg)}", highlight=False)
        console.print(f"{report.replayed} replayed, {len(report.changed)} would change ({report.share:.1%}); "
                      f"{report.truncated} from truncated evidence, {report.without_evidence} stored without "
                      f"evidence, {len(report.failed)} failed", highlight=False)
        if over:
            console.print(f"[bold red]more than {max_changed_share:.1%} would change or could not be replayed "
                          f"({report.unsure_share:.1%})[/]", highlight=False)
    if over:
        raise SystemExit(1)
