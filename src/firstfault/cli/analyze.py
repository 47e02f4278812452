"""`firstfault analyze` and `firstfault show`: a verdict built from a bundle, or read back, and printed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from firstfault import records
from firstfault.cli.base import (
    PATH,
    catalog,
    check_output,
    command,
    db_option,
    fail,
    must_exist,
    rules_option,
    view_options,
    write_atomic,
)

if TYPE_CHECKING:
    from firstfault.model import Enrichment, Verdict


@command()
@click.argument("bundle", type=PATH, help="Evidence bundle directory (with workload.yaml).")
@view_options
@click.option("--output", "-o", type=PATH, help="Also write the JSON verdict to this file (atomically).")
@rules_option
@click.option("--workers", "-j", type=click.IntRange(min=0), default=0,
              help="Processes that read the log files (0: one per CPU; 1: this process only). "
                   "The verdict is the same for any number.")
def analyze(bundle: Path, fmt: str, width: int | None, verbose: bool, output: Path | None, rules: Path | None,
            workers: int) -> None:
    """Analyse an evidence bundle and print its verdict.

    Exits 0 when a verdict was built (whatever it says), 2 when none could be
    (the message names the file and why).
    """
    from firstfault.analysis.analyze import Analyzer
    from firstfault.bundle import BundleError

    if output is not None:
        check_output(output, "--output")
    cat = catalog(rules)
    try:
        if workers == 0:
            from firstfault.analysis.parallel import default_workers

            workers = default_workers()
        verdict = Analyzer(cat).analyze_path(str(bundle), workers=workers)
    except BundleError as exc:
        raise fail(str(exc)) from exc
    doc = records.dumps(verdict, indent=2) + "\n" if output is not None or fmt == "json" else ""
    if output is not None:
        write_atomic(output, doc)
    if fmt == "json":  # render.write's json, without importing the text and markdown views
        sys.stdout.write(doc)
        sys.stdout.flush()
        return
    from firstfault.render import write

    write(verdict, fmt, sys.stdout, width=width, verbose=verbose)


@command()
@click.argument("verdict_file", type=PATH, required=False, metavar="[VERDICT.json]",
                help="A saved verdict (analyze -o, --format json, a webhook body or GET /v1/verdicts/ID); "
                     "- reads stdin.")
@db_option("Verdict store URL (sqlite:///PATH or postgresql://USER@HOST/DB), with --id.", required=False)
@click.option("--id", "vid", type=click.IntRange(min=1), help="Stored verdict id (the dashboard's).")
@view_options
def show(verdict_file: Path | None, db: str | None, vid: int | None, fmt: str, width: int | None,
         verbose: bool) -> None:
    """Print a saved or stored verdict as text, markdown or json, like analyze does.

    Exits 2 when there is no such verdict or it cannot be read.
    """
    from firstfault.render import write

    if (verdict_file is None) == (vid is None):
        raise fail("give a VERDICT.json file, or --db URL --id ID")
    if vid is not None:
        if not db:
            raise fail("--id needs --db URL (or FIRSTFAULT_DB)")
        verdict, enrichment = _stored(db, vid)
    else:
        assert verdict_file is not None
        verdict, enrichment = _saved(verdict_file)
    if fmt == "json" and enrichment is not None and _has_facts(enrichment):
        from firstfault.sinks.webhook import document

        sys.stdout.write(json.dumps(json.loads(document(verdict, enrichment)), indent=2, ensure_ascii=False) + "\n")
        return
    write(verdict, fmt, sys.stdout, width=width, verbose=verbose, enrichment=enrichment)


def _has_facts(e: Enrichment) -> bool:
    return bool(e.cluster or e.owner or e.links or e.previous_attempts)


def _saved(path: Path) -> tuple[Verdict, Enrichment | None]:
    """A verdict document, alone or as a webhook body ("enrichment") or a GET /v1/verdicts/ID record."""
    from firstfault.model import Enrichment, Verdict

    try:
        raw = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
        doc = json.loads(raw)
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise fail(f"{path}: not a JSON verdict: {exc}") from exc
    if not isinstance(doc, dict):
        raise fail(f"{path}: not a verdict (a JSON object with apiVersion, workload, ...)")
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
        return records.convert(doc, Verdict), enrichment
    except records.ValidationError as exc:
        loc, msg = records.location(exc)
        raise fail(f"{path}: not a verdict of this version ({'.'.join(str(p) for p in loc) or '(root)'}: {msg})"
                   ) from exc


def _stored(db: str, vid: int) -> tuple[Verdict, Enrichment | None]:
    """The verdict and its enrichment, read the way the dashboard's GET /v1/verdicts/ID reads them."""
    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.store import StoreError, VerdictStore

    try:
        must_exist(db)
        with VerdictStore.open(db, auto_migrate=False) as store:
            rec = store.get_record(vid)
    except (StoreError, SQLAlchemyError, ValueError) as exc:
        raise fail(f"cannot read the verdict store: {exc}") from exc
    if rec is None:
        raise fail(f"verdict {vid} is not in the store")
    return rec.verdict, rec.enrichment
