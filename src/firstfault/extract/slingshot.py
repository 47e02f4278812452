"""HPE Slingshot's CXI stack in its own words: a job that found no CXI service on its node, read through one table
(catalog/transport.yaml `cxi_service_failures`).

A process uses a Cassini NIC only through a CXI service that the scheduler's Slingshot integration makes for the job
on the node (or a default one the site enabled). Where there is none, the CXI provider cannot open its domain and
says so, a program over libfabric reports the call that failed, or the scheduler's own helper says it could not make
the service:

    libfabric:53673:1693359811::cxi:core:cxip_domain():1984<warn> cxip_gen_auth_key failed: -38:Function not
        implemented
    *** FATAL ERROR (proc 0): in gasnetc_ofi_init() at .../gasnet_ofi.c:946: fi_domain failed: -38(Function not
        implemented)
    flux-slingshot: cxi0: cxil_alloc_svc: Invalid argument

Each is `sched.error` with side `node` and name `cxi_service` (rule node-scheduler-cxi-service: infrastructure
node.scheduler, on the node that printed it). A program's report of the call (a row of printer `consumer`) is read
only with the CXI stack in reach (`CXI_STACK`): on its line, on an earlier line of its stream, or on one of the
_HELD_LINES lines after it (until then it waits, unclaimed); the same call failing on another provider (verbs, EFA)
is no CXI service's. A row's errnos decide: the provider's ENOSYS is "no service for this process", its EINVAL a key
the program passed.
"""

from __future__ import annotations

import errno as _errno
from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import CxiServiceFailure, cxi_service_failures
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import errno_of
from firstfault.extract.prefix import split_prefixes
from firstfault.extract.traceback import clip
from firstfault.model import FieldValue

# A record of the CXI provider itself: libfabric's log header naming it (ofi_log's `libfabric:PID:EPOCH:PROV:SUBSYS:
# FUNC():LINE<LEVEL> `, an empty field for a domain name where one is printed: `libfabric:47445:1656625588:cxi:core:
# cxip_ux_onload_cb():2444<warn> ...`, `libfabric:53673:1693359811::cxi:mr:cxip_do_map():90<warn> ...`) or one of
# its functions called (`cxip_*(`). extract/verbs.py reads a status's words only on such a line.
CXI_RECORD = re.compile(r"\blibfabric:\d{1,10}:\d{1,20}:(?:[^:\s]{0,64}:)?cxi:|\bcxip_\w{1,64}\(")
# The CXI stack in reach of a program's report of a libfabric call: the provider's record or any of its functions
# (`cxip_gen_auth_key`), libcxi's (`cxil_alloc_svc`), a CXI device (`cxi0`; Cray MPICH's `default nic=cxi0`), the
# provider by name (`FI_PROVIDER=cxi`, fi_info's `provider: cxi`, `prov/cxi`) or its settings (`FI_CXI_RX_MATCH_MODE`).
CXI_STACK = re.compile(
    r"\blibfabric:\d{1,10}:\d{1,20}:(?:[^:\s]{0,64}:)?cxi:|\bcxi[pl]_[a-z]|\bcxi\d{1,2}\b|\bprov/cxi\b|\bFI_CXI_[A-Z*]"
    r"|(?i:\bprovider\b|\bprov_name\b|\bFI_PROVIDER\b)[ \t]{0,3}[:=(]?[ \t]{0,3}[\"']?cxi\b"
)
# the literals CXI_STACK needs one of (the scanner hands a line to an extractor only where one stands)
_STACK_WORDS: Final = (":cxi:", "cxip_", "cxil_", "prov/cxi", "FI_CXI_", "cxi0", "cxi1", "cxi2", "cxi3", "cxi4",
                       "cxi5", "cxi6", "cxi7", "=cxi", ": cxi", "(cxi", "'cxi", '"cxi', "provider cxi")
# the number a row's text is followed by (`: -38`, `-38:Function ...`, `: -38(Function ...)`) and libfabric's names
_NUMBER = re.compile(r"^[\s:]{0,3}-(?P<n>\d{1,4})\b")
_FI_NAME = re.compile(r"\bFI_(?P<name>E[A-Z0-9]{2,15})\b")
_HELD_LINES: Final = 20
_K_SEEN: Final = "ff.slingshot.seen"  # the stream has shown the CXI stack
_K_HELD: Final = "ff.slingshot.held"  # (lineno, draft) of a consumer's report waiting for the CXI stack


def _errno_after(rest: str) -> str | None:
    """The errno the words after a row's text give: the negated number right after it, libfabric's FI_E* name, or
    an errno's name or strerror words (extract/codes.py errno_of)."""
    m = _NUMBER.match(rest)
    if m is not None:
        return _errno.errorcode.get(int(m.group("n")))
    f = _FI_NAME.search(rest)
    if f is not None and hasattr(_errno, f.group("name")):
        return f.group("name")
    return errno_of(rest)


def service_failure(body: str) -> tuple[CxiServiceFailure, str, str | None] | None:
    """The row a line is, the message from where its words begin and the errno they give; None where no row holds
    (a row whose errnos the line's are not)."""
    for row in cxi_service_failures():
        at = body.find(row.text)
        if at < 0:
            continue
        start = at
        if row.after is not None:
            start = body.rfind(row.after, 0, at)
            if start < 0:
                continue
        name = _errno_after(body[at + len(row.text):])
        if row.errnos and name not in row.errnos:
            continue
        return row, body[start:], name
    return None


class CxiServiceExtractor:
    """A job that found no CXI service on its node, in the CXI stack's words (catalog/transport.yaml
    `cxi_service_failures`): `sched.error` with side node, name `cxi_service`."""

    name = "transport.cxi_service"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "sched.error": frozenset({"name", "side", "text", "message", "program", "printer", "errno"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "scheduler"})

    def __init__(self) -> None:
        rows = cxi_service_failures()
        self.literals: tuple[str, ...] = (*sorted({row.text for row in rows}), *_STACK_WORDS)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        body = p.body
        stack = CXI_STACK.search(body) is not None
        if stack:
            ctx.state[_K_SEEN] = True
            held = ctx.state.pop(_K_HELD, None)
            if isinstance(held, tuple) and ctx.lineno - held[0] <= _HELD_LINES and isinstance(held[1], Draft):
                yield held[1]  # the report that waited for the CXI stack
        read = service_failure(body)
        if read is None:
            return
        row, message, name = read
        fields: dict[str, FieldValue] = {"name": "cxi_service", "side": "node", "text": row.text.strip(" :"),
                                         "message": clip(message), "printer": row.printer}
        if row.program is not None:
            fields["program"] = row.program
        if name is not None:
            fields["errno"] = name
        draft = Draft("sched.error", fields, rank=p.rank, host=p.host)
        if row.printer == "consumer" and not (stack or ctx.state.get(_K_SEEN) is True):
            ctx.state[_K_HELD] = (ctx.lineno, draft)  # no CXI stack in reach yet: it waits, unclaimed
            return
        ctx.claimed = True
        yield draft


EXTRACTORS: tuple[LineExtractor, ...] = (CxiServiceExtractor(),)
