"""Container runtimes and the launchers that start a job in a container, in their own words.

Slurm's pyxis and enroot, Apptainer, runc and containerd under Docker, CRI-O or the kubelet, the NVIDIA Container
Toolkit's hook and CDI: the texts and what each says (the node's plumbing, the registry, the job's own container
spec, or only that the container did not start) are catalog/platform.yaml's `container_errors`. The toolkit unable to
talk to the driver is NVML's table (extract/gpu.py, node.driver): a line that table reads is left to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import msgspec

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    ContainerError,
    ContainerLevel,
    container_contexts,
    container_errors,
    container_levels,
    container_retries,
    platform_program_of,
    platform_program_table,
    platform_words,
)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import storage_strerror_rx
from firstfault.extract.gpu import nvml_report
from firstfault.extract.kuberows import event_row_place, pod_row
from firstfault.model import FieldValue

_MESSAGE_CLIP = 400


@dataclass(frozen=True, slots=True)
class ContainerRead:
    """The row of catalog/platform.yaml that decides a line, and where the report starts."""

    row: ContainerError
    start: int


def container_report(text: str) -> ContainerRead | None:
    """The container error a text reports, or None.

    Every row whose text the line holds is found (a `quoted` row only after a container's words: a context of
    the table or a `start` row's text; a row with `after` only after those words). Of the rows that say why
    (node, registry, job) the one that ends last decides (the longer where two end together): a Go error chain
    prints its wrappers first and the deepest error last. A `start` row decides only where no such row stands.
    None also where NVML's table reads the line (the toolkit failing to reach the driver: node.driver).
    """
    found: list[tuple[int, ContainerError]] = []
    for row in container_errors():
        at = text.rfind(row.text)
        if at >= 0 and row.after is not None and not 0 <= text.find(row.after) < at:
            continue
        if at >= 0:
            found.append((at, row))
    tagged = runtime_level(text)
    if not found:
        if tagged is not None and _storage_errno_at(text) is not None and nvml_report(text) is None:
            # the runtime's own error line, no row's words, ending in a storage errno: its own read or write on the
            # node (the image's rootfs, its session directory or overlay), the node's container plumbing
            return ContainerRead(_level_row(tagged[1]), tagged[0])
        return None
    starts = [at for at, row in found if row.container_class == "start"]
    contexts = [i for i in (text.find(c) for c in container_contexts()) if i >= 0]
    if tagged is not None:
        contexts.append(tagged[0])  # the runtime's own level tag is a container's context for the words after it
    before = min(starts + contexts, default=len(text))
    kept = [(at, row) for at, row in found if not row.quoted or before < at]
    if not kept or nvml_report(text) is not None:
        return None
    decisive = [(at, row) for at, row in kept if row.container_class != "start"]
    if decisive:
        at, row = max(decisive, key=lambda d: (d[0] + len(d[1].text), len(d[1].text)))
    else:
        at, row = min(kept, key=lambda k: (k[0], -len(k[1].text)))
        if starts and (errno_at := _storage_errno_at(text)) is not None and errno_at > min(starts):
            # the runtime's own error quoting what failed inside its create (a hook's stderr, a helper's message) with
            # a storage errno: the node's container plumbing (the hook's or helper's mount, its scratch space), not
            # the job's storage
            row = msgspec.structs.replace(row, container_class="node")
    return ContainerRead(row, min([at, *starts, *contexts]))


def runtime_level(text: str) -> tuple[int, ContainerLevel] | None:
    """Where a container runtime's own level tag starts the text (catalog/platform.yaml `container_levels`: Apptainer's
    `FATAL:   `, its starter's and Singularity 2.x's `ERROR  : `), past any indentation (a workflow manager quoting the
    runtime's stderr indented, Nextflow's `message:`), and its row; None where no runtime's tag starts it."""
    body = text.lstrip()
    for level in container_levels():
        if body.startswith(level.prefix):
            return len(text) - len(body), level
    return None


@lru_cache(maxsize=8)
def _level_row(level: ContainerLevel) -> ContainerError:
    """The container_errors row a runtime's level tag stands for where its message ends in a storage errno: the node's
    container plumbing, the tag's words its `text`."""
    return ContainerError(text=level.prefix.rstrip(), runtime=level.runtime, container_class="node",
                          printed_by=level.printed_by)


def _storage_errno_at(text: str) -> int | None:
    """Where a storage errno's strerror that ends the text stands, or None (codes.storage_strerror_rx)."""
    m = storage_strerror_rx().search(text)
    return m.start("text") if m is not None else None


# A runtime's `start` report whose line ends where the quoted output of what failed begins (runc's `error running
# createContainer hook #6: exit status 1, stdout: , stderr:`, posted with the hook's stderr on the lines after it):
# those next lines are that output, and a storage errno there is the hook's, inside the container's create (the
# node's container plumbing, as on one line: container_report).
_K_QUOTING: Final = "ff.container.quoting"
_QUOTED_LINES: Final = 4
_QUOTE_OPENS: Final = ("stderr:", "stdout:", "output:")


# A workflow manager's pull of the task's image, killed by its own time limit: Nextflow runs `singularity pull` (or
# `ch-image pull`) under `proc.waitForOrKill(pullTimeout)` and, where the status is not 0, prints its wrapper (a
# `start` row of runtime nextflow), then `  command: ...` and `  status : N` (SingularityCache.groovy,
# CharliecloudCache.groovy runCommand). Groovy's waitForOrKill ends the pull with Process.destroy(), SIGTERM: status
# 143 is Nextflow's own kill at the pullTimeout the job's configuration sets (nextflow-io/nextflow#4823: raising
# `singularity.pullTimeout` fixed it), the job's set-up; any other status is the runtime's own, whose lines under
# `message:` say why.
_K_PULLING: Final = "ff.container.pulling"
_PULL_LINES: Final = 3  # the wrapper, `command:` (one line, or wrapped once by a terminal), `status :`
_PULL_STATUS = re.compile(r"\s{0,16}status : (?P<status>\d{1,3})\s{0,8}$")
_PULL_KILLED: Final = 128 + 15  # SIGTERM, Process.destroy()
_STATUS_WORD: Final = "status : "


def _pull_killed(state: Mapping[str, object], line: str, lineno: int) -> Draft | None:
    """container.error (`job`) for the status line of a pull Nextflow killed at its own pullTimeout, within a few lines
    of its wrapper in the stream (_K_PULLING); None for any other line or status."""
    held = state.get(_K_PULLING)
    if not isinstance(held, tuple) or _STATUS_WORD not in line:
        return None
    at, row = held
    m = _PULL_STATUS.match(line)
    if not (isinstance(at, int) and 0 < lineno - at <= _PULL_LINES and isinstance(row, ContainerError) and m):
        return None
    if int(m.group("status")) != _PULL_KILLED:
        return None
    return Draft(kind="container.error", fields={
        "runtime": row.runtime, "error": "job", "text": row.text,
        "message": f"{row.text}: status {_PULL_KILLED} (SIGTERM: the pull killed at its pullTimeout)"})


def quoting_runtime(state: Mapping[str, object], lineno: int) -> ContainerError | None:
    """The `start` row whose report opened a quote of a failed step's output within the last few lines of the stream,
    or None."""
    held = state.get(_K_QUOTING)
    if not isinstance(held, tuple):
        return None
    at, row = held
    return row if isinstance(at, int) and 0 < lineno - at <= _QUOTED_LINES and isinstance(row, ContainerError) else None


def quoted_storage(row: ContainerError, body: str) -> Draft:
    """container.error for a storage errno in the quoted output of the runtime's failed step (quoting_runtime)."""
    message = body.strip()
    if len(message) > _MESSAGE_CLIP:
        message = message[:_MESSAGE_CLIP - 3] + "..."
    return Draft(kind="container.error", fields={"runtime": row.runtime, "error": "node", "text": row.text,
                                                 "message": message})


def container_owns(text: str) -> bool:
    """Whether a container runtime's own words read the line as the node's plumbing failing (a row of class node
    decides: container_report). The errno such a line ends with is the runtime's scratch space on the node (enroot's
    helpers writing the image's layers under /run/enroot, Apptainer unpacking a SIF into its temporary sandbox,
    mksquashfs under pyxis: `... : No space left on device`), not the job's storage: the application's reading of a
    storage errno leaves the line to the container.error it gives (extract/exceptions.py)."""
    read = container_report(text)
    return read is not None and read.row.container_class == "node"


def container_fields(text: str) -> dict[str, FieldValue] | None:
    """container.error's fields for a text that reports a container error (container_report), or None; `reported_by`
    `kubelet` where the line is the kubelet's report of one try, which it retries (catalog/platform.yaml)."""
    read = container_report(text)
    if read is None:
        return None
    message = text[read.start:].strip()
    if len(message) > _MESSAGE_CLIP:
        message = message[:_MESSAGE_CLIP - 3] + "..."
    fields: dict[str, FieldValue] = {"runtime": read.row.runtime, "error": read.row.container_class,
                                     "text": read.row.text, "message": message}
    if any(w in text for w in container_retries()):
        fields["reported_by"] = "kubelet"  # one try of the kubelet, which retries it
    return fields


class ContainerErrorExtractor:
    """A container that could not be made or started, in its runtime's or launcher's words (catalog/platform.yaml)."""

    name = "container"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "container.error": frozenset({"runtime", "error", "text", "message", "reported_by"}),
    }
    # `kernel` too: a node's copied /var/log/messages or syslog is a kernel source (docs/evidence-bundle.md), and the
    # daemons that start containers log there (slurmd's SPANK prolog and epilog with pyxis's words, containerd)
    sources: frozenset[str] = frozenset({"application", "syslog", "kernel", "scheduler"})
    # the rows' words, and the runtimes' own level tags (a line under one may be the runtime's alone: runtime_level)
    literals: tuple[str, ...] = (tuple(row.text for row in container_errors())
                                 + tuple(level.prefix for level in container_levels()) + (_STATUS_WORD,))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        killed = _pull_killed(ctx.state, line, ctx.lineno)
        if killed is not None:
            yield killed
            return
        fields = container_fields(line)
        if fields is not None and fields["runtime"] == "nextflow" and fields["error"] == "start":
            read = container_report(line)
            if read is not None:
                ctx.state[_K_PULLING] = (ctx.lineno, read.row)  # its `status : N` follows (_pull_killed)
        if fields is not None:
            if fields["error"] == "start" and line.rstrip().endswith(_QUOTE_OPENS):
                read = container_report(line)
                if read is not None:
                    ctx.state[_K_QUOTING] = (ctx.lineno, read.row)  # its output follows on the next lines
            yield Draft(kind="container.error", fields=fields)


# --------------------------------------------------------------------------
# The kubelet backing off a container that keeps failing
# --------------------------------------------------------------------------

# The kubelet's words (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff): the error it
# returns, `back-off %s restarting failed container=%s pod=%s` (the pod as format.Pod prints it, `name_namespace(uid)`;
# `Back-off 1m20s ...` before 1.16), which its pod worker logs (`"Error syncing pod, skipping" err="failed to
# \"StartContainer\" for \"C\" with CrashLoopBackOff: \"back-off 5m0s restarting failed container=C pod=P\""`) and
# the container's waiting message holds; and its BackOff event, `Back-off restarting failed container %s in pod %s`
# (`Back-off restarting failed container` alone before 1.26). The container's and the pod's names are DNS labels;
# each part is one run of one class, so the match is linear.
_BACKOFF = re.compile(
    r"[Bb]ack-off(?: (?P<delay>\d[\dhms.]*))? restarting failed (?:docker )?container"
    r"(?:[= ](?P<container>[a-z0-9][a-z0-9.-]*)(?: pod=| in pod )?(?P<pod>[a-z0-9][a-z0-9.-]*)?)?")
# `failed to "StartContainer" for "C" with CrashLoopBackOff` (the pod worker's wrapper, its quotes escaped or not)
_START_FOR = re.compile(r'StartContainer\\?" for \\?"(?P<container>[a-z0-9][a-z0-9.-]*)\\?" with CrashLoopBackOff')
_BACKOFF_REASON = "CrashLoopBackOff"


def backoff_fields(text: str | None, reason: str | None = None, container: str | None = None,
                   pod: str | None = None) -> dict[str, FieldValue] | None:
    """k8s.backoff's fields where the kubelet backs off a container that keeps failing: the text holds its back-off
    words, or `reason` (a container's waiting reason, a pod's STATUS, an event's reason) is CrashLoopBackOff or the
    BackOff of a message in those words. `container` and `pod` are what the record itself names (its container
    status, its object); the text's own names fill what they leave. `program` and `part`: the platform program the
    container, else the pod, is (catalog/platform.yaml); absent for the workload's own. None where nothing says so."""
    m = _BACKOFF.search(text) if text else None
    # the pod worker's wrapper alone names the container too (a line cut after it)
    start = _START_FOR.search(text) if text and _BACKOFF_REASON in text else None
    crash = reason is not None and reason.rpartition(":")[2] == _BACKOFF_REASON  # `Init:CrashLoopBackOff` too
    if m is None and start is None and not crash:
        return None
    if m is not None:
        container = container or m.group("container")
        pod = pod or m.group("pod")
    if start is not None:
        container = container or start.group("container")
    if crash or (reason and (m is not None or start is not None)):
        said = reason
    else:
        said = _BACKOFF_REASON if start is not None or (text and _BACKOFF_REASON in text) else "BackOff"
    fields: dict[str, FieldValue] = {"reason": said}
    if container:
        fields["container"] = container
    if pod:
        fields["pod"] = pod
    if m is not None and m.group("delay"):
        fields["delay"] = m.group("delay")
    if text:
        at = min(x.start() for x in (m, start) if x is not None) if m is not None or start is not None else 0
        message = text[at:].strip()
        fields["message"] = message if len(message) <= _MESSAGE_CLIP else message[:_MESSAGE_CLIP - 3] + "..."
    row = platform_program_of(container, pod)
    if row is not None:
        fields["program"], fields["part"] = row.program, row.part
    return fields


_BACKOFF_FIELDS = frozenset({"reason", "container", "pod", "delay", "message", "program", "part"})


class BackOffExtractor:
    """The kubelet backing off a container that keeps failing, in a line of its own log (the journal's `kubelet[N]:`),
    an event pasted as text, or a `kubectl get pods` row whose STATUS is CrashLoopBackOff (backoff_fields)."""

    name = "backoff"
    emits: Mapping[str, frozenset[str]] = {"k8s.backoff": _BACKOFF_FIELDS}
    sources: frozenset[str] = frozenset({"application", "syslog", "scheduler"})
    literals: tuple[str, ...] = ("restarting failed", _BACKOFF_REASON)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        fields = backoff_fields(line)
        host: str | None = None
        if fields is not None and "pod" not in fields and "container" not in fields:
            # an Events row pasted into text whose message names neither (`Back-off restarting failed container`, the
            # kubelet before 1.26): its object cell names the pod (`pod/NAME`), a describe row's From the node
            pod, host = event_row_place(line)
            if pod is not None:
                fields = backoff_fields(line, pod=pod)
        if fields is None and _BACKOFF_REASON in line:
            cells = pod_row(line)
            if cells is not None and cells.get("STATUS", "").rpartition(":")[2] == _BACKOFF_REASON:
                fields = backoff_fields(None, cells["STATUS"], pod=cells.get("NAME"))
                node = cells.get("NODE")
                host = node if node and node not in ("<none>", "<unknown>") else None
        if fields is not None:
            yield Draft(kind="k8s.backoff", fields=fields, host=host)


def _failed_step(line: str, start: int, words: str) -> bool:
    """The exit status printed after `words` (from `start` on) is a number other than 0: a step that failed."""
    at = line.find(words, start)
    if at < 0:
        return False
    tail = line[at + len(words):].lstrip()
    n = len(tail) - len(tail.lstrip("0123456789"))
    return 0 < n <= 6 and int(tail[:n]) != 0


class PlatformWordsExtractor:
    """A platform program's own words that it failed at its job on the node (catalog/platform.yaml `platform_words`:
    the device plugin unable to register with the kubelet), as `platform.error` with the program's `part`."""

    name = "platform"
    emits: Mapping[str, frozenset[str]] = {"platform.error": frozenset({"program", "part", "text", "message", "said"})}
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = tuple(row.text for row in platform_words())

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        for row in platform_words():
            at = line.find(row.text)
            if at < 0 or (row.code_after is not None and not _failed_step(line, at + len(row.text), row.code_after)):
                continue
            part = next(p.part for p in platform_program_table() if p.program == row.program)
            message = line[at:].strip()
            if len(message) > _MESSAGE_CLIP:
                message = message[:_MESSAGE_CLIP - 3] + "..."
            # `said`: the program's own words that it failed at its job (a rule's `text` is the line's)
            yield Draft(kind="platform.error", fields={"program": row.program, "part": part, "text": row.text.strip(),
                                                       "message": message, "said": True})
            return


EXTRACTORS: tuple[LineExtractor, ...] = (ContainerErrorExtractor(), BackOffExtractor(), PlatformWordsExtractor())
