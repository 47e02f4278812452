"""The stall and hang detectors' own messages (catalog/ends.yaml `stalls`), matched in a line's body.

One table, two readers: extract/hang.py reads a log line that holds a `stall` row's words as `stall.report`;
extract/traceback.py reads an exception whose message holds them as the peer's hang (`nccl.timeout`), not the
program's own exception. The `wait` rows (a progress wait printed at healthy starts too) match nothing here, but
those that name the address the waiter dials (a store's client retrying its server: `addr` and `port` groups), which
read_wait reads, and their own server's announcement of its port (a row's `listen`), which read_listen reads; the
other `wait` rows are in the table so that it is the detectors' whole catalogue, and their tests say they decide
nothing.
"""

from __future__ import annotations

from functools import lru_cache

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import StallReport, stall_reports
from firstfault.extract.excclass import failed_task
from firstfault.model import FieldValue


@lru_cache(maxsize=1)
def _stall_rows() -> tuple[tuple[StallReport, re.Pattern[str]], ...]:
    return tuple((row, re.compile(row.pattern, keep=True)) for row in stall_reports() if row.reading == "stall")


@lru_cache(maxsize=1)
def _dial_rows() -> tuple[tuple[StallReport, re.Pattern[str], re.Pattern[str] | None], ...]:
    return tuple((row, re.compile(row.pattern, keep=True), re.compile(row.listen, keep=True) if row.listen else None)
                 for row in stall_reports() if row.reading == "wait" and "(?P<addr>" in row.pattern)


def _lead(rx: str) -> str:
    """The words a pattern starts with, up to its first metacharacter (a `listen` pattern's prefilter word)."""
    return rx[:next((i for i, ch in enumerate(rx) if ch in "\\[](){}.?*+|^$"), len(rx))]


def stall_literals() -> tuple[str, ...]:
    """The `stall` rows' literals, the dialling `wait` rows' and their servers' announcements: the words that bring a
    line to the reader."""
    return (tuple(row.literal for row in stall_reports() if row.reading == "stall")
            + tuple(row.literal for row, _, _ in _dial_rows())
            + tuple(_lead(row.listen) for row, _, listen in _dial_rows() if row.listen))


def read_wait(body: str) -> tuple[str, str, str] | None:
    """(detector, address, port) where the body is a dialling `wait` row's: a store's client retrying its server."""
    for row, pattern, _ in _dial_rows():
        if row.literal in body and (m := pattern.search(body)) is not None:
            return row.detector, m.group("addr"), m.group("port")
    return None


def read_listen(body: str) -> tuple[str, str] | None:
    """(detector, port) where the body is a dialling `wait` row's own server announcing the port it listens on."""
    for row, _, listen in _dial_rows():
        if listen is not None and (m := listen.search(body)) is not None:
            return row.detector, m.group("port")
    return None


def read_stall(body: str) -> dict[str, FieldValue] | None:
    """The `stall.report` fields of the first `stall` row whose literal and pattern the body holds; None if none."""
    for row, pattern in _stall_rows():
        if row.literal not in body:
            continue
        m = pattern.search(body)
        if m is None:
            continue
        fields: dict[str, FieldValue] = {"detector": row.detector}
        groups = m.groupdict()
        if groups.get("missing"):
            fields["missing"] = groups["missing"]
        if groups.get("seconds"):
            fields["seconds"] = int(groups["seconds"])
        if groups.get("what"):
            fields["waited_for"] = groups["what"].strip()
        task = failed_task(body)  # the coordination service's task index: a `first_exit` lead (engine/leads.py)
        if task is not None:
            fields["failed_task"] = task
        return fields
    return None
