"""ibverbs work-completion errors as the other verbs users word them (UCX, libibverbs' status strings).

NCCL prints a failed completion as `Got completion from peer ... with status=12`
(extract/nccl.py reads that). Open MPI, MPICH and other MPI stacks over UCX print
the same fact in UCX's words, behind UCX's `[host:pid:tid:tid]` header:

    [compute001:31180:0:31180] ib_mlx5_log.c:143  Transport retry count exceeded
        on mlx5_0:1/RoCE (synd 0x15 vend 0x81 hw_synd 0/0)

and programs that call `ibv_wc_status_str()` print libibverbs' text
("transport retry counter exceeded"). Which status each wording stands for is
data: the `texts` of catalog/platform.yaml's `ib_wc_status` rows, with the enum
names themselves (`IBV_WC_RETRY_EXC_ERR`). A wording is only read on a line
that also names a verbs device, queue pair or call (`mlx5_0`, `QP`, `ibv_`,
`/RoCE`), so "remote access error" in an HTTP client's log means nothing here.

The event is the same `nccl.ib_completion_error` the NCCL extractor emits (the
rules read the completion status, not who printed it), with `via: verbs`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import IbWcStatusInfo, ib_wc_status_table
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.prefix import split_prefixes
from firstfault.model import FieldValue

# Something on the line that makes it a verbs report: an RDMA device (`mlx5_0`, `hfi1_0`,
# `bnxt_re0`, `irdma1`, `qedr0`, `efa0`), a queue pair, an ibverbs call or constant, a port's link layer.
_VERBS_CONTEXT = re.compile(
    r"\b(?:mlx\d_\d+|hfi1_\d+|bnxt_re\d+|irdma\d+|qedr\d+|efa_?\d+|rxe\d+)\b|\bQP\b|\bibv_|\bIBV_|/(?:RoCE|IB)\b"
    r"|\bsynd 0x|\bwc[ _]status"
)
# UCX's line header `[host:pid:tid:tid]` (ucs_log_default_handler), ahead of the source file.
_UCX_HEAD = re.compile(r"^\[(?P<host>[A-Za-z0-9][\w.\-]*):(?P<pid>\d+):\d+(?::\d+)?\]\s+")
_DEVICE = re.compile(r"\b(?P<dev>(?:mlx\d_|hfi1_|bnxt_re|irdma|qedr|efa_?|rxe)\d+)(?::(?P<port>\d+))?")
_VENDOR = re.compile(r"\bvend(?:or)?(?:[ _]err(?:or)?)?[ =:]+(?P<v>0x[0-9a-fA-F]+|\d+)")
_SYNDROME = re.compile(r"\bsynd(?:rome)?[ =:]+(?P<s>0x[0-9a-fA-F]+|\d+)")
# NCCL's own completion report (extract/nccl.py owns it).
_NCCL_OWNED: Final = "Got completion"


@lru_cache(maxsize=1)
def _wordings() -> tuple[tuple[str, IbWcStatusInfo, int], ...]:
    """(wording, status row, code) for every name and text of the table, longest first."""
    out: list[tuple[str, IbWcStatusInfo, int]] = []
    for code, row in ib_wc_status_table().items():
        out.append((row.name, row, code))
        out.extend((t, row, code) for t in row.texts)
    return tuple(sorted(out, key=lambda w: (-len(w[0]), w[0])))


def verbs_literals() -> tuple[str, ...]:
    """The prefilter words: every wording the table holds (so the two never drift apart)."""
    return tuple(sorted({w for w, _, _ in _wordings()}))


def _number(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def read_completion(body: str) -> dict[str, FieldValue] | None:
    """The completion error one line states in a verbs user's words, or None."""
    if _NCCL_OWNED in body or not _VERBS_CONTEXT.search(body):
        return None
    hit = next(((row, code) for wording, row, code in _wordings() if wording in body), None)
    if hit is None:
        return None
    row, code = hit
    fields: dict[str, FieldValue] = {
        "status": code, "status_name": row.name, "status_class": row.wc_class, "peer": "unknown", "via": "verbs",
    }
    dev = _DEVICE.search(body)
    if dev:
        fields["hca"] = dev.group("dev")
    vendor = _VENDOR.search(body)
    if vendor:
        fields["vendor_err"] = _number(vendor.group("v"))
    synd = _SYNDROME.search(body)
    if synd:
        fields["syndrome"] = _number(synd.group("s"))
    fields["detail"] = body.strip()[:400]
    return fields


class VerbsCompletionExtractor:
    """Work-completion errors of UCX and other ibverbs users: nccl.ib_completion_error (via verbs)."""

    name = "verbs.completion"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "nccl.ib_completion_error": frozenset({
            "detail", "hca", "peer", "status", "status_class", "status_name", "syndrome", "vendor_err", "via"
        }),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = verbs_literals()

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        body = p.body
        host = p.host
        head = _UCX_HEAD.match(body)
        if head:
            host = host or head.group("host")
            body = body[head.end():]
        fields = read_completion(body)
        if fields is None:
            return
        yield Draft("nccl.ib_completion_error", fields, rank=p.rank, host=host)


EXTRACTORS: tuple[LineExtractor, ...] = (VerbsCompletionExtractor(),)
