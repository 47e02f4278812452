"""Typed records that flow through firstfault: events in, verdicts out.

Events are internal (plain slotted dataclasses: thousands are built per
analysis and they never cross a process boundary). The verdict is the
public contract of spec/verdict.md: its records are `records.Record`s
(msgspec Structs: validated, written as JSON and described as JSON Schema by
records.py), so the Service, the sinks and the CLI write it the same way.
"""

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Literal, get_args

from firstfault.records import UNSET, Record, UnsetType, field

FieldValue = str | int | float | bool | None

API_VERSION = "firstfault/v1"

# The kinds of evidence a source holds (spec/evidence-bundle.md `kind`): declared here once; the tuples below, the
# workload.yaml record (bundle.SourceSpec) and the readers take them from here.
LineSource = Literal["kernel", "syslog", "fabricmanager", "application"]  # read line by line by the scanner
DocumentSource = Literal["scheduler", "metrics", "flight_recorder", "stack_dump", "fabric"]  # read whole
SourceKind = Literal[LineSource, DocumentSource]
SOURCE_KINDS: tuple[str, ...] = get_args(SourceKind)
LINE_SOURCES: tuple[str, ...] = get_args(LineSource)


@dataclass(slots=True, frozen=True)
class Evidence:
    """Where an event was read: enough to open the file at the exact line."""

    source: str  # source kind (kernel, application, ...)
    file: str | None  # bundle-relative path, or None for non-file sources
    line: int | None  # 1-based line number in that file
    text: str  # the line (or sample) as read, clipped to a sane length
    query: str | None = None  # for metric sources: the query or series


# An address a node owns, as NCCL's bootstrap and out-of-band interface lines name it (`Bootstrap : Using
# ib0:10.0.0.2<0>`, extract/nccl.py): a fact about the bundle, not an event of the failure. The extractor gives it as
# a draft of kind ADDRESS, which the event store keeps beside its events, never as one (collect/events.py), and the
# engine learns which node owns the address from it (engine/normalise.py NodeMapper.learn_addresses, engine/fabric.py).
# (addr, iface, node, host, rank): the address, its interface, and the node, host and rank of the line that named it.
ADDRESS = "net.address"
Address = tuple[str, str, str | None, str | None, int | None]

# The RDMA ports a program of the job named as its traffic's (NCCL's `NET/IB : Using [0]mlx5_0:1/IB`, perftest's
# `Device : mlx5_0`: extract/nccl.py PortsUsedExtractor), a fact about the job as an address is: its drafts are kept
# beside the events (collect/events.py EventStore.ports_used), once for each node, host and ports however many ranks
# print them, and engine/normalise.py `unused_ports` reads them. (ports, by, node, host, rank): the ports (`mlx5_0:1
# mlx5_2:1`), the program (`nccl`, `perftest`), and the node and host of the line that named them, with its rank only
# where the line's file is of no node (where the node is known, a rank names no other).
PORTS_USED = "net.ports_used"
PortsUsed = tuple[str, str, str | None, str | None, int | None]
# NCCL's word that a communicator has its network (`NCCL INFO Using network IB`: extract/nccl.py NcclNetReadyExtractor),
# a fact about the job's start as its ports are: kept beside the events (EventStore.net_ready), the first 32 of a file,
# node, rank and GPU as events are, with its line's place and time, since engine/normalise.py `net_found_after` reads
# where it stands (after a net plugin's failure in the same file: NCCL went on). (network, file, line, time, node,
# host, rank).
NET_READY = "nccl.net_ready"
NetReady = tuple[str, str | None, int | None, datetime | None, str | None, str | None, int | None]
# The kinds whose drafts are facts kept beside the events, never events.
FACT_KINDS = frozenset({ADDRESS, PORTS_USED, NET_READY})


@dataclass(slots=True)
class Event:
    """A typed fact extracted from one observation.

    `kind` is a dotted family name (gpu.xid, nccl.timeout, sched.job, ...);
    `fields` holds the family's typed attributes (docs/events.md lists them).
    `t_lo` is the earliest moment the fact could have happened: equal to
    `time` for log lines, the previous sample for metric changes.
    """

    kind: str
    time: datetime | None
    node: str | None
    evidence: Evidence
    rank: int | None = None
    device: str | None = None
    fields: dict[str, FieldValue] = dataclasses.field(default_factory=dict)
    t_lo: datetime | None = None

    def earliest(self) -> datetime | None:
        return self.t_lo if self.t_lo is not None else self.time

    def get(self, name: str) -> FieldValue:
        """Field lookup that also exposes the event's own attributes to rules."""
        if name == "kind":
            return self.kind
        if name == "node":
            return self.node
        if name == "rank":
            return self.rank
        if name == "device":
            return self.device
        if name == "source":
            return self.evidence.source
        if name == "text":
            return self.evidence.text
        return self.fields.get(name)


def iso(t: datetime | None) -> str | None:
    """RFC 3339 in UTC with microseconds and a Z: one stable form for output."""
    if t is None:
        return None
    return _iso(t, t.fold)


@lru_cache(maxsize=1 << 16)
def _iso(t: datetime, _fold: int) -> str:
    # Cached: events share times. Equal keys are one instant (aware; with the fold, as datetimes of one zone compare
    # wall times) or one naive value, so they share the string.
    return _utc(t).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _utc(t: datetime) -> datetime:
    """`t` as the instant `iso` writes: in UTC, a naive time taken as UTC."""
    if t.tzinfo is UTC:
        return t
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def iso_order(t: datetime) -> tuple[str, datetime]:
    """A sort key of times that orders and equates them as their `iso` strings do, without writing the strings (the
    engine sorts a 16k-rank job's events by time: formatting 16k distinct times cost more than the sorts).

    The string is the year's digits, then `-` and the rest at fixed width, so it orders by the year's digits and `-`
    (strftime writes a year before 1000 with fewer digits: `999-` sorts after `2026-`), then, in one year, by the
    instant: the key is that prefix and the instant in UTC (datetimes of one zone compare their wall times). Callers
    put the two in their own key tuple, not as a tuple of their own: a nested tuple compares at about a third of the
    speed, and one year's prefix is one string, compared by identity."""
    u = _utc(t)
    y = _YEARS.get(u.year)
    if y is None:
        y = _YEARS[u.year] = f"{u.year}-"
    return y, u


_YEARS: dict[int, str] = {}  # year -> its prefix in iso_order (at most 9,999)


# --------------------------------------------------------------------------
# Verdict (spec/verdict.md). Field order here is the output order; a
# record's docstring is its description in the JSON schema (OpenAPI).
# --------------------------------------------------------------------------

Outcome = Literal[
    "succeeded",
    "failed",
    "timeout",
    "cancelled",
    "preempted",
    "node_fail",
    "out_of_memory",
    "running",
    "unknown",
]

Domain = Literal[
    "hardware",
    "network",
    "software",
    "storage",
    "infrastructure",
    "scheduler",
    "ambiguous",
    "unknown",
    "none",
]

CAUSE_DOMAINS: tuple[str, ...] = (
    "hardware",
    "network",
    "software",
    "storage",
    "infrastructure",
    "scheduler",
)


class Window(Record, kw_only=True):
    """When the attempt ran (RFC 3339, UTC)."""

    start: str | None = None
    end: str | None = None


class WorkloadRef(Record, kw_only=True):
    """Which attempt of which job, where it ran."""

    id: str
    attempt: int = 0
    name: str | None = None
    scheduler: str = "static"
    window: Window
    nodes: list[str]


class Cause(Record, kw_only=True):
    """A finding that says where the failure began."""

    category: str
    domain: str
    summary: str
    nodes: list[str]
    devices: list[str]
    first_seen: str | None
    rule: str
    recommended_action: str | None = None
    count: int = 1
    why: str | None = None


class Symptom(Record, kw_only=True):
    """Events that follow a failure, grouped by category."""

    category: str
    nodes: list[str]
    ranks: list[int]
    count: int
    first_seen: str | None
    explained_by: str | None


class Cable(Record, kw_only=True):
    """The cable of the port an evidence item names, from a fabric source.

    The switch end, and the other end: a host (`node-03`, `mlx5_0:1`) or, for a cable between
    switches, another switch and its port."""

    switch: str
    switch_port: str
    node: str
    port: str


def switch_port_key(switch: str, port: str) -> str:
    """How a verdict's devices and the fleet name a switch port: `leaf01/3`."""
    return f"{switch}/{port}"


def cable_key(switch: str, switch_port: str, node: str, port: str) -> str:
    """How the fleet names a cable: its switch port, then its other end (`leaf01/3 - node-03/mlx5_0:1`)."""
    return f"{switch_port_key(switch, switch_port)} - {node}/{port}"


class EvidenceItem(Record, kw_only=True):
    """One line (or sample) the verdict cites."""

    role: Literal["cause", "candidate", "symptom", "secondary", "context", "lead"]
    source: str
    node: str | None
    file: str | None
    line: int | None
    time: str | None
    event: str
    text: str
    query: str | None = None
    rank: int | None = None
    category: str | None = None
    # The host or switch port the event names (engine/ports.py): `mlx5_5:1`, `ibp94s0`, `nvswitch2:30`.
    port: str | None = None
    # The cable that port is on, when a fabric source says (engine/fabric.py); absent otherwise.
    cable: Cable | UnsetType = UNSET


LeadKind = Literal["laggard_rank", "desync", "first_exit", "stuck_frame", "common_switch"]


class Lead(Record, kw_only=True):
    """Where the evidence points when it does not establish a cause (spec: Leads)."""

    kind: LeadKind
    nodes: list[str]
    ranks: list[int]
    summary: str
    first_seen: str | None
    evidence: list[int] = field(default_factory=list)  # indexes into Verdict.evidence
    # The lead ranks' GPUs ("node-02/gpu3": local rank i on GPU i, as NCCL's [dev]), when the rank map gives them.
    devices: list[str] = field(default_factory=list)


class CoverageItem(Record, kw_only=True):
    """How much of one source kind was read."""

    source: str
    status: Literal["complete", "partial", "missing", "empty", "error"]
    # Validation is strict: a JSON `false` or "3" is refused, not read as 0 or 3 (the schema says integer).
    nodes_seen: int
    nodes_expected: int
    lines: int
    files: int = 0
    missing_nodes: list[str] = field(default_factory=list)
    note: str | None = None


class ErrorItem(Record, kw_only=True):
    """A source that could not be read (in part)."""

    source: str
    file: str | None = None
    line: int | None = None
    message: str


class UnrecognizedLine(Record, kw_only=True):
    """The earliest line of an unrecognized group."""

    file: str | None
    line: int | None
    time: str | None
    text: str


class Unrecognized(Record, kw_only=True):
    """Error-looking lines that no extractor understood, grouped by masked template."""

    template: str
    count: int
    nodes: list[str]
    first: UnrecognizedLine


class CatalogRef(Record, kw_only=True):
    """The rule catalog that judged."""

    version: str
    sha256: str


class Superseded(Record, kw_only=True):
    """A provisional verdict sent while the attempt ran, as its final verdict judges it (spec: Provisional)."""

    category: str
    nodes: list[str]
    first_seen: str | None
    sent_at: str | None  # when the provisional verdict was sent
    delivery: str  # its webhook delivery id (X-Firstfault-Delivery)
    held: bool  # the final verdict names the same cause on those nodes


class Verdict(Record, kw_only=True):
    """The verdict document (docs/verdict.md)."""

    apiVersion: str = API_VERSION
    workload: WorkloadRef
    terminal_state: str | None
    outcome: Outcome
    attributed_domain: Domain
    root_cause: Cause | None
    candidates: list[Cause]
    affected_nodes: list[str]
    symptoms: list[Symptom]
    leads: list[Lead] = field(default_factory=list)
    evidence: list[EvidenceItem]
    coverage: list[CoverageItem]
    errors: list[ErrorItem]
    catalog: CatalogRef
    analyzed_at: str
    secondary_causes: list[Cause] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    # Built while the attempt still runs (outcome `running`), from a cause alone (docs/verdict.md).
    provisional: bool = False
    # The final verdict's word on the provisional verdicts it replaces.
    supersedes: list[Superseded] = field(default_factory=list)


@dataclass(slots=True)
class Enrichment:
    """What the Blueprint adds to a verdict before writing it (not part of the verdict document)."""

    cluster: str | None = None
    links: dict[str, str] = dataclasses.field(default_factory=dict)
    owner: str | None = None
    previous_attempts: list[str] = dataclasses.field(default_factory=list)

