"""`firstfault store prune`: retention for the verdict store."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import click

from firstfault.cli.base import Group, db_option, fail, must_exist

_AGE = re.compile(r"^(\d{1,6})([hdw])$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def parse_age(value: str) -> timedelta:
    """36h, 90d, 13w: a positive number of hours, days or weeks."""
    m = _AGE.match(value.strip())
    if not m or int(m.group(1)) == 0:
        raise click.BadParameter(f"{value!r} is not an age: use a number of hours, days or weeks (36h, 90d, 13w)")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


@click.group(cls=Group)
def store() -> None:
    """Maintain the verdict store (retention)."""


@store.command("prune")
@db_option("Verdict store URL: sqlite:///PATH or postgresql://USER@HOST/DB.")
@click.option("--older-than", "age", required=True, callback=lambda _ctx, _param, value: parse_age(value),
              help="Drop verdicts whose attempt failed longer ago than this: 36h, 90d, 13w.")
@click.option("--batch", type=click.IntRange(1, 100_000), default=1000, help="Verdicts per delete transaction.")
@click.option("--pause", type=click.FloatRange(0.0, 60.0), default=0.0, help="Seconds between batches.")
@click.option("--dry-run", is_flag=True, help="Count what would go; delete nothing.")
def prune_cmd(db: str, age: timedelta, batch: int, pause: float, dry_run: bool) -> None:
    """Drop verdicts older than N days (by failure time) in small batches, without locking writers out.

    Child rows and fleet rows go with their verdict; the watch daemon's ledger keeps its marks, so a
    pruned attempt is never attributed again. Safe to run while the Service and watch daemons write.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from firstfault.store import StoreError, VerdictStore
    from firstfault.store.retention import count_older, prune

    cutoff = datetime.now(UTC) - age
    try:
        must_exist(db)
        with VerdictStore.open(db) as vs:
            if dry_run:
                click.echo(f"would prune {count_older(vs, cutoff)} verdict(s) that failed before "
                           f"{cutoff.isoformat(timespec='seconds')}")
                return
            res = prune(vs, cutoff, batch=batch, pause=pause)
    except (StoreError, SQLAlchemyError, ValueError) as exc:
        raise fail(f"cannot prune the verdict store: {exc}") from exc
    click.echo(f"pruned {res.deleted} verdict(s) that failed before {cutoff.isoformat(timespec='seconds')} "
               f"in {res.batches} batch(es)")
