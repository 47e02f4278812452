"""Evidence bundles (spec/evidence-bundle.md): workload.yaml and its sources.

Loading validates workload.yaml strictly (an unknown key is an error naming
its path and line) and resolves each source's path template to the files it
names, binding `{node}` / `{rank}` placeholders. Reading the files is the
scanner's job (collect/scan.py).
"""

import errno
import glob
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator

from firstfault import yamlio
from firstfault.timeparse import parse_rfc3339


class BundleError(Exception):
    """The bundle cannot be analysed at all (no verdict can be built)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


_TIME = {"format": "date-time"}
_TIME_DOC = "RFC 3339 time, e.g. 2026-11-02T10:00:00Z (no zone: UTC); end may not be before start"


class WindowSpec(_Strict):
    start: Annotated[str, Field(json_schema_extra=_TIME)] | None = Field(default=None, description=_TIME_DOC)
    end: Annotated[str, Field(json_schema_extra=_TIME)] | None = Field(default=None, description=_TIME_DOC)

    @field_validator("start", "end", mode="before")
    @classmethod
    def _rfc3339(cls, v: Any) -> Any:
        if isinstance(v, datetime):  # YAML parses unquoted timestamps itself
            v = v.isoformat()
        if v is not None:
            try:
                parse_rfc3339(str(v))
            except ValueError as exc:
                raise ValueError(f"not an RFC 3339 time: {v!r}") from exc
            return str(v)
        return v

    @field_validator("end")
    @classmethod
    def _after_start(cls, v: str | None, info: ValidationInfo) -> str | None:
        start = info.data.get("start")
        if v is not None and start is not None and parse_rfc3339(v) < parse_rfc3339(start):
            raise ValueError(f"{v!r} is before start {start!r} (reversed window)")
        return v


class WorkloadSpec(_Strict):
    id: str
    attempt: StrictInt = 0
    name: str | None = None
    scheduler: Literal["slurm", "kueue", "static"] = "static"
    window: WindowSpec = Field(default_factory=WindowSpec)
    nodes: list[str] = Field(default_factory=list)
    ranks: dict[str, str | int | list[int]] | None = None
    gpus: dict[str, dict[str, int]] | None = None
    terminal_state: str | None = None
    exit_code: str | None = None
    timezone: str = "UTC"

    @field_validator("id", mode="before")
    @classmethod
    def _id_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("exit_code", mode="before")
    @classmethod
    def _exit_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {v!r}") from exc
        return v


class SourceSpec(_Strict):
    kind: Literal["kernel", "syslog", "fabricmanager", "application", "scheduler", "metrics", "flight_recorder",
                  "stack_dump"]
    path: str
    rank_prefix: Literal["srun", "none"] = "none"
    format: str | None = None

    @field_validator("format")
    @classmethod
    def _fmt(cls, v: str | None) -> str | None:
        allowed = {"sacct", "scontrol", "kueue-workload", "k8s-pods", "k8s-events", "openmetrics", "prometheus-json",
                   "pickle", "json", "py-spy", "faulthandler"}  # the last four: optional, the readers sniff
        if v is not None and v not in allowed:
            raise ValueError(f"unknown format {v!r} (one of {', '.join(sorted(allowed))})")
        return v


class WorkloadFile(_Strict):
    apiVersion: Literal["firstfault/v1"]
    workload: WorkloadSpec
    sources: list[SourceSpec] = Field(default_factory=list)


MAX_RANKS = 1 << 20  # ranks in one rank map, all nodes together (docs/evidence-bundle.md)
MAX_WORKLOAD_BYTES = 4 << 20  # workload.yaml (about 700,000 node names); larger is refused unread


class SpecError(ValueError):
    """A field of the execution context is malformed; `loc` is its path under `workload`."""

    def __init__(self, loc: tuple[str, ...], reason: str) -> None:
        super().__init__(f"workload.{'.'.join(loc)}: {reason}")
        self.loc = loc
        self.reason = reason


class TooManyRanks(ValueError):
    """A rank spec names more ranks than the limit."""


def parse_ranges(spec: str | int | list[int], limit: int = MAX_RANKS) -> list[int]:
    """'0-7', '8,9,12-15', 3, [0, 1] -> sorted rank list.

    The ranks a spec names are counted before any is expanded: more than
    `limit` (overlaps counted twice) is a ValueError, so a short string
    never becomes gigabytes of integers.
    """
    if isinstance(spec, int):
        return [spec]
    if isinstance(spec, list):
        if len(spec) > limit:
            raise TooManyRanks(f"more than {limit} ranks")
        return sorted(int(x) for x in spec)
    bounds: list[tuple[int, int]] = []
    count = 0
    for part in str(spec).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if hi < lo:
                raise ValueError(f"bad rank range {part!r}")
        else:
            lo = hi = int(part)
        count += hi - lo + 1
        if count > limit:
            raise TooManyRanks(f"more than {limit} ranks")
        bounds.append((lo, hi))
    out: set[int] = set()
    for lo, hi in bounds:
        out.update(range(lo, hi + 1))
    return sorted(out)


def _escaped(name: str) -> str:
    """A file-system name as text: bytes that are not UTF-8 become \\xNN escapes (JSON cannot hold them)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", errors="backslashreplace")
    return name


def _not_a_file(path: str | os.PathLike[str], st: os.stat_result | None = None) -> str | None:
    """Why `path` cannot be read as a regular file, or None when it can (`st`: its stat, when known)."""
    if st is None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return "a dangling symlink" if os.path.islink(path) else "gone"
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "a symlink loop"
            return f"cannot be examined ({exc.strerror or exc})"
    if stat.S_ISREG(st.st_mode):
        return None
    if stat.S_ISDIR(st.st_mode):
        return "a directory"
    if stat.S_ISFIFO(st.st_mode):
        return "a fifo"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    return "a device file"


def _real(path: str, dirs: dict[str, str]) -> tuple[str, os.stat_result | None]:
    """os.path.realpath(path), and the file's own stat when it is not a symlink (None: it is one, or it
    cannot be examined: _not_a_file says why).

    A directory's real path is worked out once (`dirs`), so a file costs one lstat, not one for every
    component of its path (18,000 rank files took 2 s). The same answer: a name that is not a symlink
    resolves to itself inside its directory's real path, and glob gives no `.` or `..` names."""
    d, name = os.path.split(path)
    rd = dirs.get(d)
    if rd is None:
        rd = dirs[d] = os.path.realpath(d)
    try:
        st = os.lstat(path)
    except OSError:
        return os.path.join(rd, name), None
    if stat.S_ISLNK(st.st_mode):
        return os.path.realpath(path), None
    return os.path.join(rd, name), st


@dataclass(slots=True)
class SourceFile:
    path: str  # the bundle root joined with rel's file-system name (opens the file)
    rel: str  # bundle-relative, as reported in evidence
    node: str | None
    rank: int | None


@dataclass(slots=True)
class ResolvedSource:
    index: int
    spec: SourceSpec
    files: list[SourceFile]
    expected_nodes: list[str]  # nodes this source should cover
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Context:
    """The execution context of one attempt, with what is derived from it once.

    A bundle's workload.yaml gives it; so does a Slurm, Kueue or static
    connector, or an analyze request to the Service.
    """

    workload: WorkloadSpec
    tz: tzinfo
    window_start: datetime | None
    window_end: datetime | None
    rank_to_node: dict[int, str]
    gpu_index: dict[tuple[str, str], int]  # (node, normalised pci) -> GPU index

    @classmethod
    def from_spec(cls, wl: WorkloadSpec) -> "Context":
        """Raises ValueError naming the field when the rank map is malformed."""
        from firstfault.pci import norm_pci

        rank_to_node: dict[int, str] = {}
        left = MAX_RANKS  # for all nodes together
        for node, ranks in (wl.ranks or {}).items():
            try:
                listed = parse_ranges(ranks, limit=left)
            except ValueError as exc:
                reason = str(exc)
                if isinstance(exc, TooManyRanks) and left < MAX_RANKS:
                    reason = f"more than {MAX_RANKS} ranks in the rank map (all nodes together)"
                raise SpecError(("ranks", node), reason) from exc
            left -= len(listed)
            for r in listed:
                rank_to_node[r] = node
        gpu_index = {
            (node, norm_pci(pci)): idx for node, m in (wl.gpus or {}).items() for pci, idx in m.items()
        }
        return cls(
            workload=wl,
            tz=ZoneInfo(wl.timezone),
            window_start=parse_rfc3339(wl.window.start) if wl.window.start else None,
            window_end=parse_rfc3339(wl.window.end) if wl.window.end else None,
            rank_to_node=rank_to_node,
            gpu_index=gpu_index,
        )


@dataclass(slots=True)
class Bundle:
    root: Path
    spec: WorkloadFile
    context: Context
    sources: list[ResolvedSource]

    @property
    def workload(self) -> WorkloadSpec:
        return self.spec.workload


def load_workload(root: Path) -> WorkloadFile:
    wf = root / "workload.yaml"
    if wf.is_symlink() and not wf.resolve().is_relative_to(root.resolve()):
        raise BundleError(f"{wf}: a symlink to a file outside the bundle root; refused")
    if not wf.exists() and not wf.is_symlink():
        raise BundleError(f"{wf}: no workload.yaml at the bundle root")
    why = _not_a_file(wf)
    if why is not None:
        raise BundleError(f"{wf}: cannot read: {why}, not a regular file")
    size = wf.stat().st_size
    if size > MAX_WORKLOAD_BYTES:
        raise BundleError(f"{wf}: {size} bytes is over the {MAX_WORKLOAD_BYTES} byte limit; not read")
    return yamlio.load_model(wf, WorkloadFile, BundleError)


def _template_regex(template: str) -> re.Pattern[str]:
    out = []
    i = 0
    for m in re.finditer(r"\{(node|rank)\}|[*?]|\[[^\]]*\]", template):
        out.append(re.escape(template[i : m.start()]))
        tok = m.group(0)
        if tok == "{node}":
            out.append(r"(?P<node>[^/]+)")
        elif tok == "{rank}":
            out.append(r"(?P<rank>\d+)")
        elif tok == "*":
            out.append(r"[^/]*")
        elif tok == "?":
            out.append(r"[^/]")
        else:
            out.append(tok)
        i = m.end()
    out.append(re.escape(template[i:]))
    # A template may name the same placeholder twice; later ones must repeat the first.
    pattern = "".join(out)
    for name in ("node", "rank"):
        first = pattern.find(f"(?P<{name}>")
        if first >= 0:
            head, tail = pattern[: first + 1], pattern[first + 1 :]
            tail = tail.replace(f"(?P<{name}>[^/]+)", f"(?P={name})").replace(
                f"(?P<{name}>\\d+)", f"(?P={name})"
            )
            pattern = head + tail
    return re.compile(pattern + r"\Z")


def resolve_source(root: Path, index: int, spec: SourceSpec, nodes: list[str],
                   rank_to_node: dict[int, str]) -> ResolvedSource:
    src = ResolvedSource(index=index, spec=spec, files=[], expected_nodes=[])
    template = spec.path
    if os.path.isabs(template) or template.startswith("~") or ".." in Path(template).parts:
        src.errors.append(f"source {index} ({spec.kind}): path {template!r} leaves the bundle root; refused")
        return src
    per_node = "{node}" in template
    per_rank = "{rank}" in template
    if per_node:
        src.expected_nodes = list(nodes)
    elif per_rank:
        src.expected_nodes = sorted(set(rank_to_node.values())) if rank_to_node else list(nodes)
    pattern = glob.escape(str(root)) + "/" + re.sub(r"\{(node|rank)\}", "*", template)
    rx = _template_regex(template)
    head = str(root) + "/"  # what every name glob returns starts with
    inside = os.path.realpath(root).rstrip("/") + "/"
    dirs: dict[str, str] = {}
    for p in sorted(glob.glob(pattern, recursive=False)):
        raw_rel = p[len(head):] if p.startswith(head) else Path(p).relative_to(root).as_posix()
        m = rx.match(raw_rel)
        if not m:
            continue
        rel = _escaped(raw_rel)  # what evidence and errors show; `path` still opens the file
        try:
            real, st = _real(p, dirs)
        except (OSError, ValueError) as exc:
            src.errors.append(f"{rel}: cannot resolve ({getattr(exc, 'strerror', None) or exc}); skipped")
            continue
        if not real.startswith(inside) and real != inside[:-1]:
            src.errors.append(f"{rel}: symlink points outside the bundle root; refused")
            continue
        why = _not_a_file(p, st)
        if why is not None:
            src.errors.append(f"{rel}: cannot read: {why}, not a regular file; skipped")
            continue
        gd = m.groupdict()
        node = _escaped(gd["node"]) if gd.get("node") is not None else None
        rank = int(gd["rank"]) if gd.get("rank") is not None else None
        if node is None and rank is not None:
            node = rank_to_node.get(rank)
        src.files.append(SourceFile(path=p, rel=rel, node=node, rank=rank))
    return src


def load_bundle(path: str | os.PathLike[str]) -> Bundle:
    root = Path(path)
    if not root.is_dir():
        raise BundleError(f"{root}: not a directory (an evidence bundle is a directory with workload.yaml)")
    spec = load_workload(root)
    try:
        ctx = Context.from_spec(spec.workload)
    except ValueError as exc:
        raise BundleError(f"{root / 'workload.yaml'}: {exc}") from exc
    sources = [
        resolve_source(root, i, s, spec.workload.nodes, ctx.rank_to_node) for i, s in enumerate(spec.sources)
    ]
    return Bundle(root, spec, ctx, sources)
