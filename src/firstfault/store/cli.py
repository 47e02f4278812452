"""`firstfault store prune`: retention for the verdict store (registered by firstfault/cli.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

store_app = typer.Typer(help="Maintain the verdict store (retention).", no_args_is_help=True)

_AGE = re.compile(r"^(\d{1,6})([hdw])$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def parse_age(value: str) -> timedelta:
    m = _AGE.match(value.strip())
    if not m or int(m.group(1)) == 0:
        raise typer.BadParameter(f"{value!r} is not an age: use a number of hours, days or weeks (36h, 90d, 13w)",
                                 param_hint="--older-than")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


@store_app.command("prune")
def prune_cmd(
    db: Annotated[str, typer.Option("--db", envvar="FIRSTFAULT_DB",
                                    help="Verdict store URL: sqlite:///PATH or postgresql://USER@HOST/DB.")],
    older_than: Annotated[str, typer.Option("--older-than",
                                            help="Drop verdicts whose attempt failed longer ago than this: "
                                                 "36h, 90d, 13w.")],
    batch: Annotated[int, typer.Option(min=1, max=100_000, help="Verdicts per delete transaction.")] = 1000,
    pause: Annotated[float, typer.Option(min=0.0, max=60.0, help="Seconds between batches.")] = 0.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would go; delete nothing.")] = False,
) -> None:
    """Drop verdicts older than N days (by failure time) in small batches, without locking writers out.

    Child rows and fleet rows go with their verdict; the watch daemon's ledger keeps its marks, so a
    pruned attempt is never attributed again. Safe to run while the Service and watch daemons write.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.store import StoreError, VerdictStore, must_exist
    from firstfault.store.retention import count_older, prune

    age = parse_age(older_than)
    cutoff = datetime.now(UTC) - age
    try:
        must_exist(db)
        with VerdictStore.open(db) as store:
            if dry_run:
                typer.echo(f"would prune {count_older(store, cutoff)} verdict(s) that failed before "
                           f"{cutoff.isoformat(timespec='seconds')}")
                return
            res = prune(store, cutoff, batch=batch, pause=pause)
    except (StoreError, SQLAlchemyError, ValueError) as exc:
        typer.echo(f"error: cannot prune the verdict store: {exc}", err=True)
        raise typer.Exit(2) from exc
    typer.echo(f"pruned {res.deleted} verdict(s) that failed before {cutoff.isoformat(timespec='seconds')} "
               f"in {res.batches} batch(es)")
