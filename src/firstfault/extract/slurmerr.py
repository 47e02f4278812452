"""Slurm's own error words, read through one table (catalog/slurm.yaml): who failed, the job or the node's Slurm.

Slurm prints its errors as the text of its errno table (src/common/slurm_errno.c, what `%m` and `slurm_strerror`
print) after the words of the call that failed, in every program's voice:

    srun: error: Task launch for StepId=13.0 failed on node adas-ml: Invalid job credential
    sbatch: error: Batch job submission failed: Requested node configuration is not available
    slurmd[812]: error: Munge decode failed: Rewound credential
    [2024-01-01T10:00:00.000] error: slurmd error running JobId=4242 on Node(s)=node01: Kill task failed

and a few dozen messages of its own (a prolog that failed, a working directory or an output file the node could not
give, a step slurmstepd could not kill). One reader for all of them: a line a Slurm program printed at its error level
(`srun: error:`, `slurmstepd: error:`, `slurmd[42]: error:`, a daemon log's `[TIME] error:`) whose message begins
with one of the table's messages, or ends with one of its error texts (where `%m` prints it), is that row's, and the
row says who failed:

- `job`: the job's own request or set-up (an invalid partition, account or QOS, a node configuration that cannot be
  had, a working directory or output file the node cannot give): `app.exception` with `setup` (rule app-setup, weak);
- `node`: the node's or the cluster's Slurm plumbing below the job (a credential slurmd rejects, munge, a prolog that
  failed, slurmd and slurmctld unable to talk): `sched.error` (rules node-scheduler, node-scheduler-weak);
- `none`: understood, no cause (a race at the job's end, a retry, a state the scheduler waits out);
- a `reason`: the scheduler's policy, as its other words for it are read (extract/jobend.py).

The node is the one the words before the text name (`failed on node HOST`, `on Node(s)=HOST`: the table's
`contexts`), else the one whose log printed it. srun, sbatch and salloc run where the job was submitted or on its
first node: a `node` row they print without naming a node is weak, and is no event at all where the same text was
already read with the node named (srun's `Application launch failed: T` after its `Task launch ... failed on node
N: T`). A debug or retry line holds no error level and is not read.
"""

from __future__ import annotations

import errno as _errno
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    SlurmDaemon,
    SlurmError,
    SlurmMessage,
    SlurmNodeReason,
    SlurmPluginFunction,
    SlurmSpoolFile,
    SlurmSubmitter,
    slurm_tables,
)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import errno_of, path_of
from firstfault.extract.healthcheck import health_check_draft, read_health_message
from firstfault.extract.host import expand_hostlist
from firstfault.extract.jobend import said_by_scheduler
from firstfault.extract.nccl import clip, split_rank_prefix
from firstfault.model import FieldValue

# A Slurm program's tag before its message: `srun: error: `, `slurmstepd: error: `, `slurmd[812]: error: ` (syslog),
# `slurmstepd-node01: error: `; the level is optional here (a notice has none). Bounded runs: linear.
_TAG = re.compile(r"(?<![\w\-/])(?P<prog>srun|sbatch|salloc|slurmstepd|slurmd|slurmctld)(?:-[\w.\-]{1,64})?"
                  r"(?:\[\d{1,10}\])?: (?:(?P<level>error|fatal): )?")
# A Slurm daemon's own log line (SlurmdLogFile, SlurmctldLogFile): `[2020-12-14T09:44:56.002] [63532.0] error: `
# (`step`: slurmstepd's tag of the step it runs, which logs into slurmd's file). A paste that lost the line's first
# character (`2015-09-14T06:44:37.084] error: ...`) is the same line.
_LOG = re.compile(r"^\[?\d{4}-\d\d-\d\dT[\d:.]{8,16}\] (?P<step>\[[\w.+]{1,40}\] )?(?P<level>error|fatal): ")
# The same in a daemon's syslog or journal once the prefix layer took the syslog header (its program with it) off:
# `error: Munge decode failed: ...` (read only in the node's system log and the scheduler's own logs).
_BARE = re.compile(r"^(?P<step>\[[\w.+]{1,40}\] )?(?P<level>error|fatal): ")
_DAEMON_SOURCES: Final = frozenset({"syslog", "scheduler"})
# A daemon's log line names no daemon: read as slurmd's (a node's log; slurmctld's fatal is the same side)
_LOG_DAEMON: Final = "slurmd"
_CLIENTS: Final = frozenset({"srun", "sbatch", "salloc"})
# A client's words that it tries again (src/sbatch/sbatch.c: `Slurm temporarily unable to accept job, sleeping and
# retrying`, `Slurm job queue full, sleeping and retrying`): no error of the job's.
_RETRYING: Final = "retrying"
# ... and a client's own plumbing, which Slurm's library logs after the function's name (`error("%s: ...", __func__)`:
# `sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error`): what it
# means is read by the rows (its errno's text on the next line), not as the job's request.
_FUNCTION = re.compile(r"\A_?[a-z][a-z0-9]*_[a-z0-9_]*: ")
# Errnos that say a path the job named is not there or not the job's to use: its own set-up. Any other (a full, stale
# or failing file system) names no side this reader decides: the storage readers and the last resort read it.
_JOB_PATH_ERRNOS: Final = frozenset({"EACCES", "ENOENT", "ENOTDIR"})
_K_NAMED = "slurm.named"  # per stream: the error texts already read with the node they are about named
# A placeholder's pattern: a host (the node's name as Slurm prints it), an id, any other single value. Bounded.
_HOST = r"[A-Za-z0-9][\w.\-]{0,126}"
_ID = r"[\w.=+\-]{1,64}"
_ANY = r"[^\s]{1,64}"
_PLACEHOLDERS = re.compile(r"(\{host\}|\{id\}|\{any\})")


class _Read(NamedTuple):
    """What a line says in Slurm's words: the row, and the node the words name."""

    row: SlurmError | SlurmMessage | SlurmSubmitter | SlurmDaemon | SlurmPluginFunction
    rest: str  # the message after the program's tag and level
    host: str | None
    program: str | None  # srun, slurmstepd, ...; None: a daemon's log line


def _pattern(text: str, group: int) -> str:
    """A row's text as a pattern: its words as they are spelled, each placeholder its bounded pattern (the host in
    group `h<group>`)."""
    parts = _PLACEHOLDERS.split(text)
    out = []
    for p in parts:
        if p == "{host}":
            # a whole name: a hostlist (`n[01-04]`) or a longer word is no one node of this row
            out.append(f"(?P<h{group}>{_HOST})(?![\\[\\w.\\-])")
        elif p == "{id}":
            out.append(_ID)
        elif p == "{any}":
            out.append(_ANY)
        else:
            out.append(re.escape(p))
    return "".join(out)


class _Tables(NamedTuple):
    errors: Mapping[str, SlurmError]  # by text
    messages: re.Pattern[str]  # every message, longest first, each in its own group `m<i>`
    message_rows: tuple[SlurmMessage, ...]
    contexts: re.Pattern[str]  # every context, anchored at the end of the words before a text
    literals: tuple[str, ...]
    submitters: Mapping[str, SlurmSubmitter]  # by program
    daemons: Mapping[str, SlurmDaemon]  # by program
    functions: re.Pattern[str]  # a node plugin's function's name at a message's head: group `f`
    function_rows: tuple[SlurmPluginFunction, ...]  # longest prefix first
    spool: Mapping[str, SlurmSpoolFile]  # by file name


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    t = slurm_tables()
    rows = tuple(sorted(t.messages, key=lambda m: -len(m.text)))
    # anchored: a message begins where the program's tag and level end (read with `match`; `\A` keeps a search of it
    # from trying every place of a line)
    messages = re.compile(r"\A(?:" + "|".join(f"(?P<m{i}>{_pattern(m.text, i)})" for i, m in enumerate(rows)) + ")",
                          keep=True)
    contexts = re.compile("(?:" + "|".join(_pattern(c.text, i) for i, c in enumerate(t.contexts)) + r")$", keep=True)
    pieces = {max(_PLACEHOLDERS.split(m.text)[::2], key=len).strip() for m in t.messages}
    said = {f"{s.program}: error: " for s in t.submitters}
    # a daemon's fatal line: in its own tag (`slurmd: fatal: `), syslog's (`slurmd[42]: fatal: `) or its log file's
    fatal = {f"{d.program}: fatal: " for d in t.daemons} | {"]: fatal: ", "] fatal: "}
    function_rows = tuple(sorted(t.plugin_functions, key=lambda f: -len(f.prefix)))
    # the whole first word of the message: the function's name (`container_p_join`), perhaps with its plugin's
    # (`cli_filter_p_pre_submit/lua`), before `:`, a blank or `(`; bounded
    functions = re.compile(r"\A(?P<f>(?:" + "|".join(re.escape(f.prefix) for f in function_rows)
                           + r")[a-z0-9_]{0,64})(?:/\w{1,32})?(?=[:\s(]|\Z)")
    literals = tuple(sorted({e.text for e in t.errors} | pieces | said | fatal
                            | {f.prefix for f in t.plugin_functions}))
    return _Tables({e.text: e for e in t.errors}, messages, rows, contexts, literals,
                   {s.program: s for s in t.submitters}, {d.program: d for d in t.daemons},
                   functions, function_rows, {f.file: f for f in t.spool_files})


def _function(rest: str) -> SlurmPluginFunction | None:
    """The node plugin whose function's name begins the message (catalog/slurm.yaml `plugin_functions`), if any."""
    tables = _tables()
    m = tables.functions.match(rest)
    if m is None:
        return None
    name = m.group("f")
    return next((f for f in tables.function_rows if name.startswith(f.prefix)), None)


def _message(rest: str) -> tuple[SlurmMessage, str | None] | None:
    """The message of the table `rest` begins with (the longest), and the host it names."""
    tables = _tables()
    m = tables.messages.match(rest)
    if m is None:
        return None
    i = next(int(k[1:]) for k, v in m.groupdict().items() if k[0] == "m" and v is not None)
    row = tables.message_rows[i]
    return row, m.group(f"h{i}") if "{host}" in row.text else None


def _text_row(errors: Mapping[str, SlurmError], text: str) -> SlurmError | None:
    """The error text `text` is, as `%m` prints it; or with one full stop after it, where a workflow manager's log or
    a post quoting the line ended it as a sentence (ENCODE-DCC/chip-seq-pipeline2#150, Caper's Slurm backend: `sbatch:
    error: Batch job submission failed: Socket timed out on send/recv operation.`). slurm_errno.c's texts end without
    one but for the few the table spells with it, which match as they are."""
    row = errors.get(text)
    if row is None and text.endswith(".") and not text.endswith(".."):
        row = errors.get(text[:-1])
    return row


def _error(rest: str) -> tuple[SlurmError, str | None] | None:
    """The error text of the table `rest` ends with (where `%m` prints it, the whole message or after the call's
    words and `: `), and the host the words before it name."""
    tables = _tables()
    text = rest.rstrip()
    row = _text_row(tables.errors, text)
    if row is not None:
        return row, None
    head, _, tail = text.rpartition(": ")
    row = _text_row(tables.errors, tail) if head else None
    if row is None:
        return None
    ctx = tables.contexts.search(head + ": ")
    host = next((v for v in ctx.groupdict().values() if v is not None), None) if ctx is not None else None
    return row, host


def read_slurm_error(body: str, daemon_log: bool = False) -> _Read | None:
    """The table's row a Slurm program's error line holds, if any (a debug or retry line holds none). `daemon_log`:
    the line is from a node's system log or the scheduler's own, where a bare `error: ` is a daemon's."""
    tag = _TAG.search(body)
    if tag is not None and tag.group("level") is None:
        # the journal's tag, then the daemon's own (`slurmd[12912]: slurmd: fatal: ...`: slurmd in the foreground
        # under systemd prefixes its program name to each line, and the journal adds its tag before it)
        tag = _TAG.match(body, tag.end()) or tag
    log = None if tag is not None else _LOG.match(body) or (_BARE.match(body) if daemon_log else None)
    gate = tag or log
    if gate is None:
        # words slurmd writes into the job's own output without a tag (catalog/slurm.yaml `tag: false`)
        bare = _message(body)
        return _Read(bare[0], body, bare[1], None) if bare is not None and not bare[0].tag else None
    level = gate.group("level")
    program = tag.group("prog") if tag is not None else None
    rest = body[gate.end():].strip()
    msg = _message(rest)
    if msg is not None and (level is not None or not msg[0].level):
        return _Read(msg[0], rest, msg[1], program)
    if level is None:
        return None
    err = _error(rest)
    if err is None and (function := _function(rest)) is not None:
        return _Read(function, rest, None, program)
    if err is None and level == "fatal":
        # a daemon ending itself (catalog/slurm.yaml `daemons`): named by its tag, or a daemon's log line that is not
        # a step's
        daemon = (_tables().daemons.get(program) if program is not None
                  else _tables().daemons.get(_LOG_DAEMON) if daemon_log and gate.group("step") is None else None)
        return _Read(daemon, rest, None, program) if daemon is not None else None
    if err is None:
        # a client that only submits the job: any error of its is the submission's (catalog/slurm.yaml `submitters`),
        # but for its own retries
        submitter = _tables().submitters.get(program) if program is not None and level == "error" else None
        if submitter is None or _RETRYING in rest or _FUNCTION.match(rest):
            return None
        return _Read(submitter, rest, None, program)
    return _Read(err[0], rest, err[1], program)


class SlurmErrorExtractor:
    """Slurm's error words (catalog/slurm.yaml): the job's set-up (`app.exception`, setup), the node's Slurm plumbing
    (`sched.error`), the scheduler's policy (`process.signal` with `due_to`), or understood and no cause."""

    name = "sched.slurm_error"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"errno", "exc_type", "message", "names_node", "path", "setup"}),
        "sched.error": frozenset({"message", "name", "names_node", "program", "side", "text", "weak"}),
        "process.signal": frozenset({"by", "detail", "due_to", "scheduler", "signal"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "scheduler"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = _tables().literals

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        read = read_slurm_error(body, ctx.source in _DAEMON_SOURCES)
        if read is None:
            return
        row = read.row
        if isinstance(row, SlurmError) and row.reason is not None:
            yield from said_by_scheduler(row.reason, "slurm", None, None, body, ctx)
            return
        side = row.side
        if side == "none":
            ctx.claimed = True
            return
        if side == "job":
            assert not isinstance(row, SlurmDaemon | SlurmPluginFunction)  # (their job rows: none)
            draft = self._job(row, read)
            if draft is not None:
                yield draft
            return
        assert not isinstance(row, SlurmSubmitter)  # (a submitter's side is the job's, above)
        text = row.text if isinstance(row, SlurmError) else read.rest
        named = ctx.state.setdefault(_K_NAMED, set())
        assert isinstance(named, set)
        client = read.host is None and read.program in _CLIENTS
        if client and isinstance(row, SlurmError) and row.text in named:
            ctx.claimed = True  # srun's sum-up of the launch failures it already named the nodes of
            return
        if read.host is not None and isinstance(row, SlurmError):
            named.add(row.text)
        name = (row.name if isinstance(row, SlurmError) else "function" if isinstance(row, SlurmPluginFunction)
                else "message")
        fields: dict[str, FieldValue] = {"name": name,
                                         "side": "node", "text": clip(text), "message": clip(read.rest)}
        if read.program is not None:
            fields["program"] = read.program
        if row.weak or client:
            fields["weak"] = True  # one try, the aftermath of the job's end, or no node named
        if read.host is not None:
            fields["names_node"] = True
        yield Draft("sched.error", fields, host=read.host)

    @staticmethod
    def _job(row: SlurmError | SlurmMessage | SlurmSubmitter, read: _Read) -> Draft | None:
        """The job's own set-up, as the app-setup rule reads it; a path row only where its errno is the path's, and
        the node's where the path is a file slurmd wrote into its spool directory that the errno says the node may
        not give (catalog/slurm.yaml `spool_files`)."""
        fields: dict[str, FieldValue] = {"message": clip(read.rest), "setup": True}
        if isinstance(row, SlurmMessage) and row.errno:
            name = errno_of(read.rest[len(row.text):])
            path = path_of(read.rest)
            spool = _tables().spool.get(path.rpartition("/")[2]) if path else None
            if spool is not None and name in spool.errnos:
                node: dict[str, FieldValue] = {"name": "spool_file", "side": "node", "text": spool.file,
                                               "message": clip(read.rest)}
                if read.program is not None:
                    node["program"] = read.program
                if read.host is not None:
                    node["names_node"] = True
                return Draft("sched.error", node, host=read.host)
            if name is not None and name not in _JOB_PATH_ERRNOS:
                return None  # a full, stale or failing file system: not the job's set-up (the storage readers')
            if path:
                fields["path"] = path
            if name is not None:
                fields["errno"] = name
                fields["exc_type"] = type(OSError(getattr(_errno, name), "")).__name__
            else:
                fields["exc_type"] = "OSError"
        else:
            fields["exc_type"] = row.name if isinstance(row, SlurmError) else "SlurmError"
        if read.host is not None:
            fields["names_node"] = True
        return Draft("app.exception", fields, host=read.host)


# --------------------------------------------------------------------------
# A node's reason: why Slurm set it DOWN or DRAIN (catalog/slurm.yaml `node_reasons`), in every form that prints it
# --------------------------------------------------------------------------

# `scontrol show node`'s `Reason=Not responding [slurm@2023-05-02T10:00:01]`: the reason, then who set it and when
# (src/api/node_info.c). The same suffix after a reason pasted alone (`Node unexpectedly rebooted [slurm@...]`).
_SET_BY = re.compile(r" ?\[(?P<who>[\w.\-]{1,64})@(?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown)\]")
_REASON_KEY = re.compile(r"(?<![\w])Reason=")
# the record's node: `NodeName=gpu-07 Arch=x86_64 CoresPerSocket=32` (scontrol show node's first line)
_NODE_NAME = re.compile(r"(?<![\w])NodeName=(?P<host>[A-Za-z0-9][\w.\-]{0,126})(?![\w.\-\[])")
# `sinfo -R` (its default `%20E %9u %19H %N`: SINFO_REASON_WIDTH): the reason, who set it, when, the nodes (a
# hostlist). Bounded runs.
_SINFO = re.compile(r"^\s{0,8}(?P<r>\S.{0,199}?)\s{1,64}(?P<who>[\w.\-]{1,32})\s{1,64}"
                    r"(?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown)\s{1,64}(?P<nodes>[\w.\-\[\],]{1,4000})\s*$")
# slurmctld's log of a reason it set (src/slurmctld/node_mgr.c: update_node's `update_node: node %s reason set to:
# %s`; validate_node_specs' `Setting node %s state to INVAL with reason:%s`) and of an unexpected reboot
# (`validate_node_specs: Node %s unexpectedly rebooted boot_time=%u last response=%u`; its reason is the table's).
_LOGGED = re.compile(
    r"(?:update_node: node (?P<h1>[A-Za-z0-9][\w.\-]{0,126}) reason set to: "
    r"|Setting node (?P<h2>[A-Za-z0-9][\w.\-]{0,126}) state to INVAL with reason:)(?P<r>.{1,400})$"
    r"|[Nn]ode (?P<h3>[A-Za-z0-9][\w.\-]{0,126}) unexpectedly rebooted"
    r"|Node (?P<h4>[A-Za-z0-9][\w.\-]{0,126}) has low (?P<low>real_memory size|tmp_disk size|cpu count"
    r"|socket\*core\*thread count) \("
)
_REBOOTED: Final = "Node unexpectedly rebooted"
# validate_node_specs' debug line before the reason it sets (`Node %s has low real_memory size (%lu / %lu) < %.2f%%`,
# `... has low tmp_disk size (%u < %u)`, `... has low cpu count (%u < %u)`, `... has low socket*core*thread count`):
# the reason's own row
_LOW: Final = {"real_memory size": "Low RealMemory", "tmp_disk size": "Low TmpDisk", "cpu count": "Low CPUs",
               "socket*core*thread count": "Low socket*core*thread count"}
_K_NODE_RECORD = "slurm.node_record"  # per stream: the node of the `scontrol show node` record being read
# what a reason's parts say, the most telling first
_RANK: Final = {"lost": 0, "node": 1, "health_check": 2, "symptom": 3, "none": 4}


# `sinfo -R` prints the reason in a cell of 20 columns and cuts a longer one there (src/sinfo/opts.c: `--list-reasons`
# is `%20E %9u %19H %N`, with `--long` `%20E %12U %19H %6t %N`; the sinfo man page's format table): `gres/gpu count
# repor` is `gres/gpu count reported lower than configured (0 < 4)` cut (SlinkyProject/slurm-operator#14).
SINFO_REASON_WIDTH: Final = 20


def _reason_pattern(text: str) -> str:
    return "".join(_ANY if p == "{any}" else re.escape(p) for p in re.split(r"(\{any\})", text))


@lru_cache(maxsize=1)
def _reasons() -> tuple[re.Pattern[str], tuple[SlurmNodeReason, ...], tuple[str, ...]]:
    rows = tuple(sorted(slurm_tables().node_reasons, key=lambda r: -len(r.text)))  # a refinement before what it refines
    # a part's first words, compared without case (sinfo and scripts print them as slurmctld set them; a person's
    # paste may not), as whole words
    rx = re.compile(r"\A(?:" + "|".join(f"(?P<n{i}>{_reason_pattern(r.text)})" for i, r in enumerate(rows))
                    + r")(?![\w*])", re.IGNORECASE, keep=True)
    literals = {max(re.split(r"\{any\}", r.text), key=len).strip() for r in rows}
    # and what a reason cut at sinfo's column (SINFO_REASON_WIDTH) still holds of each: its first fixed words
    literals.update(r.text.split("{any}", 1)[0][:SINFO_REASON_WIDTH].strip() for r in rows)
    return rx, rows, tuple(sorted(w for w in literals if w))


def _cut_pattern(text: str) -> str:
    """A row's words as a pattern of any of their beginnings: each character (and each `{any}` value) optional from
    there on, so that a reason cut anywhere inside the row's words matches it whole (bounded: the row's length)."""
    out = ""
    for piece in reversed(re.split(r"(\{any\})", text)):
        for unit in ([_ANY] if piece == "{any}" else [re.escape(ch) for ch in reversed(piece)]):
            out = f"(?:{unit}{out})?"
    return out


@lru_cache(maxsize=1)
def _cut_reasons() -> tuple[tuple[re.Pattern[str], SlurmNodeReason], ...]:
    """Each row's pattern of its beginnings (_cut_pattern), compared without case as _reasons' are."""
    return tuple((re.compile(_cut_pattern(r.text), re.IGNORECASE, keep=True), r) for r in _reasons()[1])


def _read_cut(part: str) -> SlurmNodeReason | None:
    """The row a reason cut at sinfo's column width begins, where every row it could begin means the same (the
    longest of them); None where it begins none, or rows that mean different things."""
    hits = [row for rx, row in _cut_reasons() if rx.fullmatch(part)]
    if not hits or len({(h.means, h.weak) for h in hits}) > 1:
        return None
    return hits[0]


def read_node_reason(reason: str, *, cut: bool = False) -> SlurmNodeReason | None:
    """The table's row a node's reason says most with (its ` : `-joined parts each read as a row's first words; the
    most telling of them: lost, node, symptom, none), or None where no part is Slurm's own. `cut`: the reason may
    have been cut at sinfo's column (SINFO_REASON_WIDTH), so its last part may be the beginning of a row's words."""
    rx, rows, _ = _reasons()
    best: SlurmNodeReason | None = None
    parts = reason.split(" : ")
    for i, part in enumerate(parts):
        m = rx.match(part.strip())
        if m is not None:
            row: SlurmNodeReason | None = rows[next(int(k[1:]) for k, v in m.groupdict().items() if v is not None)]
        else:
            row = _read_cut(part.strip()) if cut and i == len(parts) - 1 else None
        if row is None:
            continue
        if best is None or _RANK[row.means] < _RANK[best.means]:
            best = row
    return best


class NodeReasonExtractor:
    """Why Slurm set a node DOWN or DRAIN, in its own reason words (catalog/slurm.yaml `node_reasons`), from every
    form that prints them: `scontrol show node`'s `Reason=` (the record's `NodeName=` names the node), `sinfo -R`'s
    rows (their hostlist), a reason pasted alone with its `[slurm@TIME]`, slurmctld's log of a reason it set. A node
    lost is `sched.node_down`; the node's Slurm plumbing or registration `sched.error` (side node); a reason that
    names no cause (an unexpected reboot) the symptom `sched.node_reason`; what followed the job's end, understood and
    nothing."""

    name = "sched.node_reason"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "sched.node_down": frozenset({"host", "reason"}),
        "sched.error": frozenset({"message", "name", "names_node", "side", "text", "weak"}),
        "sched.node_reason": frozenset({"reason", "text"}),
        "node.health_check": frozenset({"check", "part", "message"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "scheduler"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = tuple(sorted({"Reason=", "NodeName=", "reason set to: ", "with reason:",
                                                      "unexpectedly rebooted", " has low ", *_reasons()[2]}))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        named = _NODE_NAME.search(body)
        if named is not None:
            ctx.state[_K_NODE_RECORD] = named.group("host")
        for reason, hosts, cut in self._forms(body, ctx):
            row = read_node_reason(reason, cut=cut)
            if row is None:
                return
            if row.means == "none":
                ctx.claimed = True
                return
            targets: list[str | None] = list(hosts) if hosts else [None]
            if row.means == "health_check":
                yield from self._health_check(row, reason.strip(), targets)
                return
            for host in targets:
                yield self._draft(row, reason.strip(), host)
            return

    @staticmethod
    def _health_check(row: SlurmNodeReason, reason: str, targets: list[str | None]) -> Iterator[Draft]:
        """A node health check's drain: its check's words after the row's, read as its own log's are
        (catalog/health.yaml); a check that examines no part of the node, or words that name none, the symptom."""
        at = reason.lower().find(row.text.lower())
        read = read_health_message(reason[at + len(row.text):] if at >= 0 else reason)
        if read is not None and read.part is None:
            return  # the check could not run (a time-out, a signal): nothing about the node
        for host in targets:
            draft = health_check_draft(read, host) if read is not None else None
            yield draft if draft is not None else Draft(
                "sched.node_reason", {"reason": clip(reason), "text": row.text}, host=host)

    @staticmethod
    def _forms(body: str, ctx: LineContext) -> Iterator[tuple[str, list[str], bool]]:
        """The reason a line holds, the nodes it is about and whether the reason may be cut (sinfo's 20-column cell
        filled), in the first form that reads it."""
        logged = _LOGGED.search(body)
        if logged is not None:
            host = logged.group("h1") or logged.group("h2") or logged.group("h3") or logged.group("h4")
            low = logged.group("low")
            reason = logged.group("r") if logged.group("r") is not None else _LOW[low] if low else _REBOOTED
            yield reason, [host], False
            return
        key = _REASON_KEY.search(body)
        if key is not None:
            rest = body[key.end():]
            by = _SET_BY.search(rest)
            record = ctx.state.get(_K_NODE_RECORD)
            if by is None and not isinstance(record, str) and body[:key.start()].strip():
                # a job's `Reason=` (scontrol show job prints it after JobState= on one line), not a node's; a node's
                # stands on a line of its own (src/api/node_info.c `   Reason=%s`), also where the paste left out
                # the record's NodeName= line and the reason's [who@when] (`scontrol show node | grep Reason`)
                return
            yield (rest[:by.start()] if by is not None else rest), [record] if isinstance(record, str) else [], False
            return
        sinfo = _SINFO.match(body)
        if sinfo is not None:
            reason = sinfo.group("r").strip()
            yield reason, expand_hostlist(sinfo.group("nodes")), len(reason) == SINFO_REASON_WIDTH
            return
        by = _SET_BY.search(body)
        if by is not None and by.end() >= len(body.rstrip()):
            yield body[:by.start()], [], False

    @staticmethod
    def _draft(row: SlurmNodeReason, reason: str, host: str | None) -> Draft:
        if row.means == "lost":
            return Draft("sched.node_down", {"host": host or "", "reason": clip(reason)}, host=host)
        if row.means == "symptom":
            return Draft("sched.node_reason", {"reason": clip(reason), "text": row.text}, host=host)
        fields: dict[str, FieldValue] = {"name": "node_reason", "side": "node", "text": row.text,
                                         "message": clip(reason)}
        if row.weak:
            fields["weak"] = True
        if host is not None:
            fields["names_node"] = True
        return Draft("sched.error", fields, host=host)


EXTRACTORS: tuple[LineExtractor, ...] = (SlurmErrorExtractor(), NodeReasonExtractor())
