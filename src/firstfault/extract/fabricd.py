"""The InfiniBand fabric's management daemons in their own words, read through one table (catalog/transport.yaml
`fabric_daemon_messages`): the subnet manager's numbered errors and ibacm's.

OpenSM prints each error with its number after the function that printed it (OSM_LOG, opensm/osm_log.c), in its log
file or, under systemd, in the journal:

    165028 [F0D43740] 0x01 -> osm_vendor_bind: ERR 5426: Unable to register class 129 version 1
    165162 [F0D43740] 0x01 -> osm_sm_bind: ERR 2E10: SM MAD Controller bind failed (IB_ERROR)
    Oct 21 08:13:38 sm01 opensm[2187]: osm_sm_bind: ERR 2E10: SM MAD Controller bind failed (IB_ERROR)

and ibacm (rdma-core ibacm/src/acm.c, acm_log: the function, then the message) its endpoint that could not come up:

    acm_ep_up: ERROR - unable to assign EP name for pkey 0x123

A row of the table (its number, for OpenSM, and the fixed words of its message, both on the line) gives
`fabric.daemon` with the row's daemon and class (`daemon_class`), OpenSM's number (`code`), the P_Key ibacm names
(`pkey`) and the message. A number or message no row names (a healthy fabric's OpenSM prints ERR lines on every sweep
that meets a slow port) is not read. Every event is `standing`: a daemon's record of a state a healthy host is in as
well (ibacm logs each P_Key kept for a VM host's guests), which names a cause only in an attempt that failed
(analysis/analyze.py drops it otherwise, as it drops a thread's exception).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import FabricDaemonMessage, fabric_daemon_messages
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.nccl import clip
from firstfault.model import FieldValue

_SM_LITERAL: Final = ": ERR "
# OSM_LOG's `<function>: ERR <number>: <message>` (a C identifier, four hex digits as OpenSM writes them)
_SM = re.compile(r"(?<![\w])[A-Za-z_][A-Za-z0-9_]{0,63}: ERR (?P<code>[0-9A-F]{4}): (?P<msg>[^\n]*)")
# ibacm's P_Key: `for pkey 0x123`
_PKEY = re.compile(r"\bpkey (0x[0-9a-fA-F]{1,4})\b")


@lru_cache(maxsize=1)
def _by_code() -> Mapping[str, tuple[FabricDaemonMessage, ...]]:
    out: dict[str, list[FabricDaemonMessage]] = {}
    for row in fabric_daemon_messages():
        if row.code is not None:
            out.setdefault(row.code, []).append(row)
    return {code: tuple(rows) for code, rows in out.items()}


def _worded() -> tuple[FabricDaemonMessage, ...]:
    return tuple(row for row in fabric_daemon_messages() if row.code is None)


def daemon_message(line: str) -> tuple[FabricDaemonMessage, str] | None:
    """The table's row a line is, and the message from where its words begin; None where no row holds."""
    if _SM_LITERAL in line:
        m = _SM.search(line)
        if m is not None:
            msg = m.group("msg")
            for row in _by_code().get(m.group("code"), ()):
                if msg.startswith(row.words):
                    return row, f"ERR {row.code}: {msg}"
    for row in _worded():
        at = line.find(row.words)
        if at >= 0:
            return row, line[at:]
    return None


class FabricDaemonExtractor:
    """The subnet manager's (OpenSM's) numbered errors and ibacm's, by catalog/transport.yaml
    `fabric_daemon_messages`."""

    name = "fabric.daemon"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "fabric.daemon": frozenset({"daemon", "daemon_class", "code", "pkey", "message", "standing"}),
    }
    # the daemons' own logs, the journal, and a log posted as the job's
    sources: frozenset[str] = frozenset({"syslog", "kernel", "application"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = (_SM_LITERAL, *(row.words for row in _worded()))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        read = daemon_message(line)
        if read is None:
            return
        row, msg = read
        ctx.claimed = True
        fields: dict[str, FieldValue] = {"daemon": row.daemon, "daemon_class": row.daemon_class, "code": row.code,
                                         "message": clip(msg), "standing": True}
        if row.daemon == "ibacm" and (pk := _PKEY.search(msg)) is not None:
            fields["pkey"] = pk.group(1).lower()
        yield Draft("fabric.daemon", fields)


EXTRACTORS: tuple[LineExtractor, ...] = (FabricDaemonExtractor(),)
