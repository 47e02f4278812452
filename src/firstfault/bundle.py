"""Evidence bundles (spec/evidence-bundle.md): workload.yaml and its sources.

Loading validates workload.yaml strictly (an unknown key is an error naming
its path and line) and resolves each source's path template to the files it
names, binding `{node}` / `{rank}` placeholders. Reading the files is the
scanner's job (collect/scan.py).
"""

import contextlib
import errno
import glob
import io
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from firstfault import records
from firstfault.formats import Format
from firstfault.hostlist import NodeNames
from firstfault.model import SourceKind
from firstfault.records import Record, convert
from firstfault.timeparse import TimeRangeError, parse_rfc3339


class BundleError(Exception):
    """The bundle cannot be analysed at all (no verdict can be built)."""


_TIME_DOC = "RFC 3339 time, e.g. 2026-11-02T10:00:00Z (no zone: UTC); end may not be before start"
# An RFC 3339 time as text: its JSON Schema says so; WindowSpec checks that it parses.
Time = Annotated[str, msgspec.Meta(description=_TIME_DOC, extra_json_schema={"format": "date-time"})]


def _check_time(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_rfc3339(value)
    except TimeRangeError as exc:
        raise ValueError(f"{name}: {exc}") from exc
    except ValueError as exc:
        raise ValueError(f"{name}: not an RFC 3339 time: {value!r}") from exc


class WindowSpec(Record):
    """When the attempt ran (RFC 3339 strings; end not before start)."""

    start: Time | None = None
    end: Time | None = None

    def __post_init__(self) -> None:
        start, end = _check_time("start", self.start), _check_time("end", self.end)
        if start is not None and end is not None and end < start:
            raise ValueError(f"end: {self.end!r} is before start {self.start!r} (reversed window)")


class WorkloadSpec(Record):
    """The execution context: which attempt of which job, where it ran, its rank and GPU maps."""

    id: str
    attempt: int = 0
    name: str | None = None
    scheduler: Literal["slurm", "kueue", "static"] = "static"
    window: WindowSpec = records.field(default_factory=WindowSpec)
    nodes: list[str] = records.field(default_factory=list)
    ranks: dict[str, str | int | list[int]] | None = None
    gpus: dict[str, dict[str, int]] | None = None
    terminal_state: str | None = None
    exit_code: str | None = None
    timezone: str = "UTC"

    def __post_init__(self) -> None:
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError, OSError) as exc:  # "America" is a directory of zones
            raise ValueError(f"timezone: unknown time zone {self.timezone!r}") from exc


class SourceSpec(Record):
    """One kind of evidence and the path template of its files."""

    kind: SourceKind
    path: str
    rank_prefix: Literal["srun", "none"] = "none"
    format: Format | None = None


class WorkloadFile(Record):
    """workload.yaml as a whole."""

    apiVersion: Literal["firstfault/v1"]
    workload: WorkloadSpec
    sources: list[SourceSpec] = records.field(default_factory=list)


def plain_workload(workload: Any) -> Any:
    """A workload mapping as its record takes it: YAML's own dates and timestamps (an unquoted window time) as
    their ISO text, and an int `id` or `exit_code` as its digits (a job id reads as a number in YAML and JSON)."""
    if not isinstance(workload, dict):
        return workload
    out = dict(workload)
    for key in ("id", "exit_code"):
        if type(out.get(key)) is int:
            out[key] = str(out[key])
    window = out.get("window")
    if isinstance(window, dict) and any(isinstance(v, date) for v in window.values()):
        out["window"] = {k: v.isoformat() if isinstance(v, date) else v for k, v in window.items()}
    return out


def workload_spec(data: Any) -> WorkloadSpec:
    """The execution context in parsed JSON or YAML (the Service's context record); records.ValidationError
    naming the key path otherwise."""
    return convert(plain_workload(data), WorkloadSpec)


def workload_file(data: Any) -> WorkloadFile:
    """A parsed workload.yaml as its record; records.ValidationError naming the key path otherwise."""
    if isinstance(data, dict) and "workload" in data:
        data = {**data, "workload": plain_workload(data["workload"])}
    return convert(data, WorkloadFile)


MAX_RANKS = 1 << 20  # ranks in one rank map, all nodes together (docs/evidence-bundle.md)
# The greatest rank: ranks are 32-bit ints (NCCL's, MPI's, torch.distributed's world), and the verdict store keeps
# them in INTEGER columns (PostgreSQL's are 32-bit). A larger number is no rank of any job.
MAX_RANK = (1 << 31) - 1
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
        return [_rank(spec)]
    if isinstance(spec, list):
        if len(spec) > limit:
            raise TooManyRanks(f"more than {limit} ranks")
        return sorted(_rank(int(x)) for x in spec)
    bounds: list[tuple[int, int]] = []
    count = 0
    for part in str(spec).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = _rank(a), _rank(b)
            if hi < lo:
                raise ValueError(f"bad rank range {part!r}")
        else:
            lo = hi = _rank(part)
        count += hi - lo + 1
        if count > limit:
            raise TooManyRanks(f"more than {limit} ranks")
        bounds.append((lo, hi))
    out: set[int] = set()
    for lo, hi in bounds:
        out.update(range(lo, hi + 1))
    return sorted(out)


_RANK_DIGITS = len(str(MAX_RANK))


def _rank(value: int | str) -> int:
    """A rank, from an int or its digits; a ValueError naming it past MAX_RANK (read without building a number
    of thousands of digits)."""
    if isinstance(value, str):
        digits = value.strip()
        if len(digits) > _RANK_DIGITS and digits.lstrip("+").isdigit():
            raise ValueError(f"rank {digits[:24]}{'...' if len(digits) > 24 else ''} is over {MAX_RANK}, the "
                             "greatest rank")
        value = int(digits)
    if not 0 <= value <= MAX_RANK:
        raise ValueError(f"rank {value} is not a rank (0 to {MAX_RANK})")
    return value


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
        rd = _real_dir(d, dirs)
    # os.path.join(rd, name), spelled out (a 16k-rank bundle joins 18k names): rd is absolute, name has no `/`
    real = rd + name if rd.endswith("/") else rd + "/" + name
    try:
        st = os.lstat(path)
    except OSError:
        return real, None
    if stat.S_ISLNK(st.st_mode):
        return os.path.realpath(path), None
    return real, st


def _real_dir(d: str, dirs: dict[str, str]) -> str:
    """os.path.realpath(d), through `dirs`: a directory whose name is not a symlink is its parent's real path and
    its name (what realpath finds, one component at a time), so a bundle of 2,048 node directories costs one lstat
    each, not one for every component of each path."""
    parent, name = os.path.split(d)
    if not parent or parent == d or name in ("", ".", ".."):
        rd = os.path.realpath(d)
    else:
        rp = dirs.get(parent)
        if rp is None:
            rp = _real_dir(parent, dirs)
        joined = rp + name if rp.endswith("/") else rp + "/" + name
        try:
            is_link = stat.S_ISLNK(os.lstat(joined).st_mode)
        except OSError:
            is_link = False  # realpath (not strict) keeps a name it cannot examine
        rd = os.path.realpath(d) if is_link else joined
    dirs[d] = rd
    return rd


@dataclass(slots=True)
class SourceFile:
    """One file a source's path template names, with the node and rank its placeholders bound."""

    path: str  # the file's real path, found inside the bundle root when the source was resolved (opens the file)
    rel: str  # bundle-relative, as reported in evidence
    node: str | None
    rank: int | None
    ident: tuple[int, int] | None = None  # (st_dev, st_ino) of the file found there: open_evidence opens no other
    # Its size when the source was resolved (that stat's): how the parallel reader shares files out between its
    # workers (analysis/parallel.py), never how much of it is read (the scanner sizes its reads at the open).
    size: int | None = None


def open_evidence(path: str, ident: tuple[int, int] | None = None) -> io.FileIO:
    """open_evidence_sized's file alone."""
    return open_evidence_sized(path, ident)[0]


def open_evidence_sized(path: str, ident: tuple[int, int] | None = None) -> tuple[io.FileIO, int]:
    """The one way an evidence file is opened: for reading, unbuffered, following no symbolic link.

    `path` is the real path the file had when its source was resolved, so a link in its last part
    means the file was swapped after the check: O_NOFOLLOW refuses it. The opened descriptor is
    then checked (fstat): it must be a regular file (a FIFO swapped in is opened without blocking,
    then refused) and, with `ident` (SourceFile.ident), the very file found inside the bundle: a
    directory above it swapped for a link to /etc between the check and the open leads the open
    to another file, and that is refused too. Raises OSError, its strerror saying why. With the file, its size
    at that fstat (a scanner sizes its reads by it: no second fstat).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, "a symbolic link now, where the bundle had a file when it was read; "
                                     "refused") from exc
        raise
    try:
        st = os.fstat(fd)
        why = _not_a_file(path, st)
        if why is not None:
            raise OSError(errno.EINVAL, f"{why}, not a regular file (it changed after the bundle was read); "
                                        "refused")
        if ident is not None and (st.st_dev, st.st_ino) != ident:
            raise OSError(errno.ESTALE, "another file than the one the bundle held when it was read (a file or a "
                                        "directory on its path was swapped, for a link say); refused")
        # O_NONBLOCK only kept a FIFO from blocking the open; reads of a regular file never wait on it.
        return io.FileIO(fd, "rb", closefd=True), st.st_size
    except BaseException:
        os.close(fd)
        raise


@dataclass(slots=True)
class ResolvedSource:
    """A source of workload.yaml with the files its path template names (and why any could not be)."""

    index: int
    spec: SourceSpec
    files: list[SourceFile]
    expected_nodes: list[str]  # nodes this source should cover
    errors: list[str] = field(default_factory=list)
    outside: list[tuple[str, str]] = field(default_factory=list)  # (rel, host): files `{node}` bound to another host


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
    """A loaded evidence bundle: its root, its workload.yaml, the execution context and the resolved sources."""

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
    return records.load_yaml(wf, workload_file, BundleError)


# Bounds on a source's path template (docs/evidence-bundle.md): glob walks one directory level per path part
# (recursively: 1,100 parts were a RecursionError), and the placeholders are bound by a regex whose backtracking
# grows with the `*` and placeholders that share a path part (eight `{rank}*` in one part: a minute per name).
MAX_TEMPLATE_CHARS = 4096  # PATH_MAX
MAX_TEMPLATE_PARTS = 32
MAX_TEMPLATE_WILDCARDS = 16  # `*` (a run of them is one), `?`, `[...]`, `{node}`, `{rank}`, all parts together
MAX_PART_SPANS = 2  # `*` and placeholders in a path part that holds a placeholder

_TEMPLATE_TOKEN = re.compile(r"\{(node|rank)\}|\*+|\?|\[[^\]]*\]")


def template_problem(template: str) -> str | None:
    """Why a path template is refused (over the bounds above), or None."""
    parts = template.split("/")
    if len(parts) > MAX_TEMPLATE_PARTS:
        return f"has {len(parts)} path parts; at most {MAX_TEMPLATE_PARTS}"
    wildcards = 0
    for part in parts:
        tokens = [m.group(0) for m in _TEMPLATE_TOKEN.finditer(part)]
        wildcards += len(tokens)
        spans = sum(1 for t in tokens if t[0] in "*{")
        if spans > MAX_PART_SPANS and any(t[0] == "{" for t in tokens):
            return (f"path part {part[:80]!r} holds {spans} of `*`, `{{node}}` and `{{rank}}`; a part with a "
                    f"placeholder holds at most {MAX_PART_SPANS}")
    if wildcards > MAX_TEMPLATE_WILDCARDS:
        return f"holds {wildcards} glob characters and placeholders; at most {MAX_TEMPLATE_WILDCARDS}"
    if len(template) > MAX_TEMPLATE_CHARS:
        return f"is {len(template)} characters long; at most {MAX_TEMPLATE_CHARS}"
    return None


def _template_regex(template: str, node: str | None = None) -> re.Pattern[str]:
    """The regex that binds a template's placeholders in a name glob found (so it matches glob's pattern).

    Glob has decided the wildcards, so a part without a placeholder is any part here; a part with one is
    matched whole, atomically (backtracking never re-enters a part already matched: a placeholder's value is
    the first binding its part allows, the longest), and a placeholder named again must repeat its value.
    With `node`, `{node}` binds that value only."""
    parts = template.split("/")
    out = []
    named: set[str] = set()
    for n, part in enumerate(parts):
        end = "/" if n < len(parts) - 1 else r"\Z"
        if "{node}" not in part and "{rank}" not in part:
            out.append(r"[^/]*" + end)
            continue
        rx = []
        i = 0
        for m in _TEMPLATE_TOKEN.finditer(part):
            rx.append(re.escape(part[i : m.start()]))
            tok = m.group(0)
            if tok[0] == "{":
                name = m.group(1)
                value = r"[^/]+" if node is None else re.escape(node)
                rx.append(f"(?P={name})" if name in named else
                          f"(?P<{name}>{value})" if name == "node" else rf"(?P<{name}>\d+)")
                named.add(name)
            elif tok[0] == "*":
                rx.append(r"[^/]*")
            elif tok == "?":
                rx.append(r"[^/]")
            else:
                rx.append(tok)
            i = m.end()
        rx.append(re.escape(part[i:]))
        out.append("(?>" + "".join(rx) + end + ")")
    return re.compile("".join(out))


def resolve_source(root: Path, index: int, spec: SourceSpec, nodes: list[str],
                   rank_to_node: dict[int, str]) -> ResolvedSource:
    src = ResolvedSource(index=index, spec=spec, files=[], expected_nodes=[])
    template = spec.path
    if os.path.isabs(template) or template.startswith("~") or ".." in Path(template).parts:
        src.errors.append(f"source {index} ({spec.kind}): path {template!r} leaves the bundle root; refused")
        return src
    problem = template_problem(template)
    if problem is not None:
        src.errors.append(f"source {index} ({spec.kind}): path template {template[:120]!r} {problem}; refused")
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
    names = NodeNames(nodes) if per_node and nodes else None
    ambiguous = per_node and any("{node}" in part and len(_TEMPLATE_TOKEN.findall(part)) > 1
                                 for part in template.split("/"))
    for p in sorted(glob.glob(pattern, recursive=False)):
        raw_rel = p[len(head):] if p.startswith(head) else Path(p).relative_to(root).as_posix()
        m = rx.match(raw_rel)
        if names is not None and ambiguous and (m is None or names.lookup(m.group("node")) is None):
            # The other glob characters of `{node}`'s part leave its value open (`*{node}`, `{node}*`): the
            # longest value that is an allocation node's (the guard below refuses any other).
            values = sorted({v for part in raw_rel.split("/") for v in names.spelled_in(part)},
                            key=lambda v: (-len(v), v))
            m = next((mv for mv in (_template_regex(template, v).match(raw_rel) for v in values) if mv is not None), m)
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
        if st is None:  # a symlink (inside the bundle): its target is the file
            with contextlib.suppress(OSError):  # _not_a_file says why
                st = os.stat(p)
        why = None if st is not None and stat.S_ISREG(st.st_mode) else _not_a_file(p, st)
        if why is not None:
            src.errors.append(f"{rel}: cannot read: {why}, not a regular file; skipped")
            continue
        assert st is not None  # _not_a_file found a regular file
        ident = (st.st_dev, st.st_ino)
        gd = m.groupdict()
        rank = None
        if gd.get("rank") is not None:
            try:
                rank = _rank(gd["rank"])
            except ValueError as exc:  # a number in the name that is no rank of any job: not bound, not read
                src.errors.append(f"{rel}: {exc}; refused as a rank, not read")
                continue
        node = _escaped(gd["node"]) if gd.get("node") is not None else None
        if node is not None and names is not None:
            # The allocation guard: `{node}` binds a node of the allocation (by any spelling NodeNames knows), never
            # another host's directory in a site's per-host log tree.
            alloc = names.lookup(node)
            if alloc is None:
                src.outside.append((rel, node))
                continue
            node = alloc
        if node is None and rank is not None:
            node = rank_to_node.get(rank)
        src.files.append(SourceFile(path=real, rel=rel, node=node, rank=rank, ident=ident, size=st.st_size))
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
