"""Why a scheduler or an orchestrator ended a job: each one's words and phrases read through one table.

catalog/scheduler.yaml maps every spelling (LSF's `TERM_MEMLIMIT`, PBS's `walltime 3610 exceeded limit
3600`, SGE's `qmaster enforced h_rt limit`, Flux's `timeout` exception, Kubernetes' `OOMKilled` and the
kubelet's `The node was low on resource: memory`) to one normalised reason (`time_limit`, `memory_limit`,
`preemption`, `node_failure`, `cancelled`, `admin_cancelled`, `eviction`, `backoff_limit`,
`resource_limit`). The record readers (batch.py, kube.py, kubetext.py) and the job-output extractor
(jobend.py) all ask here, so one spelling added to the table reaches every form.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import SchedText, SchedWord, kueue_end, sched_tables, state_of, storage_tables
from firstfault.catalog.vocab import SchedReasonName
from firstfault.model import Event

# A number with an optional unit, where a phrase of the table says `{n}`: `3610`, `105gb`, `38427376kb`,
# `0.5`. Linear: one class run, then letters.
_NUMBER = r"\d[\d.]*[A-Za-z]*"
# A host name, where a phrase says `{host}`: `elcap8767`, `gpu-2-17.cluster`.
_HOST = r"(?P<host>[A-Za-z0-9][\w.\-]*[A-Za-z0-9]|[A-Za-z0-9])"
# The victim a memory killer's phrase names, where it says `{proc}`: a name in double quotes as earlyoom prints a
# process's (`"python"`, `"Web Content"`), else one run without spaces (systemd-oomd's cgroup path,
# `/user.slice/.../app.scope`). Each a run of one class, bounded: linear.
_PROC = r'(?:"(?P<procq>[^"\n]{1,64})"|(?P<proc>[^\s"]{1,255}))'
# Another host a phrase holds, where it says `{peer}` (the one that reports the host the phrase is about): matched as
# a host, not kept.
_PEER = r"(?:[A-Za-z0-9][\w.\-]*[A-Za-z0-9]|[A-Za-z0-9])"
# A run of non-blank characters, where a phrase says `{word}` (an RPC with its argument: PALS's `ping(24c93b8c-...)`,
# `launch(...)`): bounded, one class run: linear.
_WORD = r"\S{1,200}"
# Each placeholder's pattern; `{host}` and `{proc}` are kept in their row's own groups (_pattern).
_PLACES = {"{n}": _NUMBER, "{peer}": _PEER, "{word}": _WORD}
# Every placeholder of a phrase, for its fixed pieces (the prefilter's literals, the anchors).
_PLACEHOLDERS = re.compile(r"\{(?:n|host|peer|word|proc)\}")
_PLACEHOLDER_SPLIT = re.compile(r"(\{(?:n|host|peer|word|proc)\})")


class ReasonHit(NamedTuple):
    """A phrase (or a distinctive word) of the table found in a text: which row, and where."""

    scheduler: str
    reason: str | None  # None: understood, names no cause
    spelling: str  # the table's text or word
    resource: str | None  # the node resource a kubelet eviction names
    start: int
    end: int
    host: str | None = None  # the host the phrase names (`{host}`)
    victim: str | None = None  # the process, unit or cgroup a memory killer's phrase names (`{proc}`)
    symptom: bool = False  # a node that failed to take or keep the job, no cause named (the table's `symptom`)
    refusal: str | None = None  # what refused the job's request, for a `setup` phrase (the table's `refusal`)
    pending: bool = False  # a pod waiting for a place, no cause named (the table's `pending`)


@lru_cache(maxsize=1)
def _words() -> Mapping[tuple[str, str, str], SchedWord]:
    return {(w.scheduler, w.field, w.word): w for w in sched_tables().words}


# A fully-qualified extended resource name (Kubernetes' IsExtendedResourceName: a DNS subdomain, `/`, a name), as a
# prefix row's value follows its word (`OutOf` + `nvidia.com/gpu`). From the start only; each part one run of a class:
# linear.
_EXTENDED_RESOURCE = re.compile(r"\A[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?/[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?")


@lru_cache(maxsize=1)
def _prefix_words() -> tuple[SchedWord, ...]:
    return tuple(w for w in sched_tables().words if w.extended)


def word_reason(scheduler: str, word: str | None, field: str = "reason") -> SchedWord | None:
    """The table's row for `word` as the value of `scheduler`'s `field` (exact, case as printed), or the prefix row
    (`extended`) it starts with where the rest is an extended resource's name (`OutOfnvidia.com/gpu`)."""
    if not word:
        return None
    word = word.strip()
    row = _words().get((scheduler, field, word))
    if row is not None:
        return None if row.extended else row  # (a prefix alone is no value)
    for w in _prefix_words():
        if (w.scheduler, w.field) == (scheduler, field) and word.startswith(w.word):
            rest = word[len(w.word):]
            if _EXTENDED_RESOURCE.fullmatch(rest) and not rest.split("/", 1)[0].endswith("kubernetes.io"):
                return w
    return None


def scheduler_words(scheduler: str, field: str = "reason") -> tuple[str, ...]:
    """Every word of `scheduler`'s `field` the table knows (LSF's TERM_ reasons, Kubernetes' reasons)."""
    return tuple(sorted(w.word for (sched, fld, _), w in _words().items() if sched == scheduler and fld == field))


def kube_status_words() -> tuple[str, ...]:
    """The Kubernetes reasons a `kubectl get pods` row can show as its STATUS (`Evicted`, `OOMKilled`, ...)."""
    return scheduler_words("kubernetes")


def _edge(piece: str, at_start: bool) -> str:
    ch = piece[0] if at_start else piece[-1]
    if not (ch.isalnum() or ch == "_"):
        return ""
    return r"(?<![\w])" if at_start else r"(?![\w])"


def _pattern(phrase: str, group: int) -> str:
    places = {**_PLACES, "{host}": _HOST.replace("(?P<host>", f"(?P<host{group}>"),
              "{proc}": _PROC.replace("(?P<procq>", f"(?P<procq{group}>").replace("(?P<proc>", f"(?P<proc{group}>")}
    body = "".join(places.get(p) or re.escape(p) for p in _PLACEHOLDER_SPLIT.split(phrase))
    plain = (phrase.replace("{n}", "0").replace("{host}", "h").replace("{peer}", "h").replace("{word}", "w")
             .replace("{proc}", "p"))
    return _edge(plain, True) + body + _edge(plain, False)


class _Matcher(NamedTuple):
    rows: tuple[SchedText | SchedWord, ...]  # the alternative in group `r<i>` is rows[i]
    # each row's longest fixed piece, which every match of it holds verbatim ("" where it has none)
    anchors: tuple[str, ...]


def _row_text(row: SchedText | SchedWord) -> str:
    return row.text if isinstance(row, SchedText) else row.word


def _anchor(phrase: str) -> str:
    """The longest piece of a phrase between its placeholders, as every match holds it (blanks at its ends left
    out): a text without it holds no match of the phrase."""
    return max((q.strip() for q in _PLACEHOLDERS.split(phrase)), key=len)


@lru_cache(maxsize=2)
def _matcher(lines: bool) -> _Matcher:
    """Every phrase (and distinctive word) in the alternation's order: longest first, so that at one place the
    longer, more specific spelling wins; each in its own group, so the match says which row it was."""
    tables = sched_tables()
    rows: list[SchedText | SchedWord] = [t for t in tables.texts if t.lines or not lines]
    rows += [w for w in tables.words if w.text]
    rows.sort(key=lambda r: (-len(_row_text(r)), r.scheduler))
    return _Matcher(tuple(rows), tuple(_anchor(_row_text(r)) for r in rows))


@lru_cache(maxsize=512)
def _alternation(lines: bool, rows: tuple[int, ...]) -> re.Pattern[str]:
    """The alternation of the rows `rows` (indexes into `_matcher(lines).rows`, in its order), each in its group
    `r<i>`. A text is searched with the rows whose anchor it holds only: a row whose anchor is not in the text
    matches nowhere in it, so leaving it out changes no match, while each alternative is tried at every place of
    the text (270 of them, with a word edge's lookbehind first, took 9 ms on a line of 111 characters)."""
    table = _matcher(lines).rows
    return re.compile("|".join(f"(?P<r{i}>{_pattern(_row_text(table[i]), i)})" for i in rows))


@cache
def reason_anchors(reason: str) -> tuple[str, ...]:
    """For each row of `reason` that `text_reasons(..., lines=True)` reads, the longest piece of its text that
    every match holds verbatim (the pieces between placeholders are matched as they are spelled), or its
    word: a line that holds none of them holds no spelling of `reason`, and the table's pattern need not run."""
    tables = sched_tables()
    out: set[str] = set()
    for t in tables.texts:
        if t.lines and t.reason == reason:
            out.add(_anchor(t.text))
    out.update(w.word for w in tables.words if w.text and w.reason == reason)
    return tuple(sorted(out))


def text_reasons(text: str, *, lines: bool = False) -> list[ReasonHit]:
    """Every spelling of the table in `text`, left to right (the longest where several start at one place).

    `lines`: only the rows the job-output extractor reads (`lines: true`), else every row (the record
    readers read their messages, notes and comments with all of them).
    """
    m = _matcher(lines)
    out: list[ReasonHit] = []
    rows = tuple(i for i, anchor in enumerate(m.anchors) if anchor in text)
    if not rows:
        return out
    for hit in _alternation(lines, rows).finditer(text):
        # The alternative's own group closes last (after a `{host}` group inside it).
        i = int((hit.lastgroup or "r0")[1:])
        row = m.rows[i]
        if isinstance(row, SchedText):
            host = hit.group(f"host{i}") if "{host}" in row.text else None
            victim = (hit.group(f"procq{i}") or hit.group(f"proc{i}")) if "{proc}" in row.text else None
            out.append(ReasonHit(row.scheduler, row.reason, row.text, row.resource, hit.start(), hit.end(), host,
                                 victim, row.symptom, row.refusal, row.pending))
        else:
            out.append(ReasonHit(row.scheduler, row.reason, row.word, None, hit.start(), hit.end(),
                                 pending=row.pending))
    return out


def setup_refusal(text: str) -> str | None:
    """What refused the job's request, where `text` says it in a `setup` phrase of the table that names it (a quota
    it is over, a policy that denied it: the table's `refusal`), else None."""
    return next((h.refusal for h in text_reasons(text) if h.refusal is not None), None)


def first_reason(text: str, *, lines: bool = False) -> ReasonHit | None:
    """The first spelling of the table in `text`, if any."""
    hits = text_reasons(text, lines=lines)
    return hits[0] if hits else None


def k8s_reason(word: str | None, message: str | None, field: str = "reason") -> tuple[str | None, str | None]:
    """A Kubernetes reason word (a container's, a pod's, an event's, a condition's) and its message, read
    together: (the normalised reason, the node resource an eviction names). The word decides; the message
    refines a generic eviction (`The node was low on resource: memory.` is the workload's memory) and
    speaks where there is no word."""
    row = word_reason("kubernetes", word, field)
    due = row.reason if row else None
    if row is None and field == "reason" and word is not None:
        due = kueue_evicted(word)
    if message and due in (None, "eviction"):
        for hit in text_reasons(message):
            if hit.scheduler == "kubernetes" and hit.reason is not None:
                return hit.reason, hit.resource
    return due, None


# Kueue's event for a workload it evicts (kubernetes-sigs/kueue pkg/workload/evict/evict.go reportEvictedWorkload:
# the reason `patching.ReasonWithCause(kueue.WorkloadEvicted, reason)`, `Evicted` + `DueTo` + the Evicted condition's
# reason, and for a deactivated workload `DueTo` + its underlying cause after it once more:
# `EvictedDueToPodsReadyTimeout`, `EvictedDueToPreempted`, `EvictedDueToDeactivatedDueToMaximumExecutionTimeExceeded`).
# Anchored, one class run: linear.
_KUEUE_EVICTED = re.compile(r"EvictedDueTo(?P<reason>[A-Z][A-Za-z]{1,80})")


def kueue_evicted(word: str) -> SchedReasonName | None:
    """Why Kueue evicted a workload, where `word` is its eviction event's reason (`EvictedDueToPodsReadyTimeout`):
    the Evicted condition's reason inside it read as the condition is (catalog/tables.py `kueue_end`: a Kubernetes
    word of catalog/scheduler.yaml says what its row says, any other is the queue's own eviction); None for any
    other word."""
    m = _KUEUE_EVICTED.fullmatch(word.strip())
    return kueue_end("Evicted", "True", m.group("reason"))[0] if m is not None else None


def k8s_pending(word: str | None, message: str | None) -> bool:
    """Whether a Kubernetes event's reason word and message say a pod waits for a place and name no cause (the
    scheduler's `FailedScheduling` with `0/3 nodes are available: 3 Insufficient nvidia.com/gpu.`, Volcano's
    `Unschedulable`): the job did not start. False where they name a cause (k8s_reason: a placement, a quota)."""
    if k8s_reason(word, message)[0] is not None:
        return False
    row = word_reason("kubernetes", word)
    if row is not None and row.pending:
        return True
    return message is not None and any(h.pending for h in text_reasons(message) if h.scheduler == "kubernetes")


def k8s_unstarted(word: str | None, message: str | None, *, read: bool = False) -> bool:
    """Whether a Kubernetes event's reason word says the kubelet could not start a pod it was given (its sandbox, the
    sandbox's network, its volumes, its devices: `FailedCreatePodSandBox`, `FailedMount`, catalog/scheduler.yaml
    `unstarted`) and neither the word nor the message names a cause: the attempt did not start. `read`: the reader
    read the message as a report of its own (a container runtime's or a CNI's words, NVML's), which stands for it."""
    if read or k8s_reason(word, message)[0] is not None:
        return False
    row = word_reason("kubernetes", word)
    return row is not None and row.unstarted


# The events that say a pod got its place after all (the scheduler's `Scheduled`, the kubelet's image pulls and the
# container's creation and start: kubernetes/kubernetes pkg/kubelet/events/event.go): a wait before them cleared.
_PLACED: frozenset[str] = frozenset({"Scheduled", "Pulling", "Pulled", "Created", "Started"})
# ... and the events that say the kubelet went on to its containers (it pulls their images and makes them only once the
# pod's volumes are mounted and its sandbox and the sandbox's network are up: pkg/kubelet/kuberuntime SyncPod): a
# sandbox, a mount or a device that failed before them was had on a later try.
_STARTED: frozenset[str] = frozenset({"Pulling", "Pulled", "Created", "Started"})


def clear_placed(events: list[Event]) -> None:
    """Take `pending` off the waits of a pod that one file's events also say was placed (its own `Scheduled`,
    `Started`, ...; where the wait or the placement names no object, any pod of the file): a FailedScheduling that
    cleared is no sign the job did not start. Take `unstarted` off the same way where the file shows the pod's
    containers pulled, made or started: a FailedCreatePodSandBox the kubelet's next try got past."""
    for flag, words in (("pending", _PLACED), ("unstarted", _STARTED)):
        placed: set[str | None] = set()
        for e in events:
            if e.kind == "k8s.event" and e.fields.get("reason") in words:
                name = e.fields.get("object_name")
                placed.add(name if isinstance(name, str) else None)
        if not placed:
            continue
        for e in events:
            if e.kind != "k8s.event" or not e.fields.get(flag):
                continue
            name = e.fields.get("object_name")
            if None in placed or not isinstance(name, str) or name in placed:
                del e.fields[flag]


def recovered_or_clean(due_to: str | None, exit_code: int | None, *, running_again: bool,
                       container: str | None = None) -> bool:
    """Whether a container's terminated state names no cause of an end although its reason is a word of the table:
    the container is running again (an earlier end its restart recovered from), or its process exited 0 under a
    memory-kill reason (kubernetes/kubernetes#131530: `Reason: OOMKilled` / `Exit Code: 0`, the pod Succeeded;
    cortexlabs/cortex#1806: "exit code 0 in container status with `reason` as OOMKilled and Job marked as
    Successful"): the kill the word names did not end it.

    A container that runs a FUSE daemon beside the job's (catalog/platform.yaml `storage_clients` `containers`) is
    not recovered by its restart: the mount it served is gone with the killed daemon (GoogleCloudPlatform/
    gcs-fuse-csi-driver docs/known-issues.md: the CSI driver hands the FUSE file descriptor to the sidecar once, and
    "if the Cloud Storage FUSE process is killed, the workload application will throw IO error `Transport endpoint
    is not connected`"; gcs-fuse-csi-driver#314: the sidecar OOM-killed at its start, Running again after 4
    restarts, the pods still failing)."""
    if running_again and container is not None and container in storage_tables().sidecars:
        running_again = False
    return due_to is not None and (running_again or (due_to == "memory_limit" and exit_code == 0))


@lru_cache(maxsize=1)
def line_literals() -> tuple[str, ...]:
    """Words every line the job-output extractor can match holds (its prefilter literals): the longest
    fixed piece of each phrase it reads, and each distinctive word."""
    tables = sched_tables()
    out: set[str] = set()
    for t in tables.texts:
        if t.lines:
            pieces = _PLACEHOLDERS.split(t.text)
            out.add(max(pieces, key=len).strip())
    out.update(w.word for w in tables.words if w.text)
    # A literal that holds another adds nothing to the prefilter: the shorter one hands the line over.
    return _holding_none(out)


def _holding_none(words: set[str]) -> tuple[str, ...]:
    """The words that hold no other of them, sorted. Each word is looked for in all of them joined (one search in C
    a word, its hits placed by their offsets), not in each of them one by one (the scheduler table's 300 words took
    90,000 tests, 6 ms of every start-up)."""
    order = sorted(words)
    text = "\n".join(order)
    starts: list[int] = []
    at = 0
    for w in order:
        starts.append(at)
        at += len(w) + 1
    holding: set[int] = set()
    for o in order:
        at = text.find(o)
        while at != -1:
            i = bisect_right(starts, at) - 1
            if order[i] != o and at + len(o) <= starts[i] + len(order[i]):  # inside another word, not across two
                holding.add(i)
            at = text.find(o, at + 1)
    return tuple(w for i, w in enumerate(order) if i not in holding)


__all__ = ["ReasonHit", "clear_placed", "first_reason", "k8s_pending", "k8s_reason", "k8s_unstarted",
           "kube_status_words", "kueue_evicted", "line_literals", "recovered_or_clean",
           "scheduler_words", "state_of", "text_reasons", "word_reason"]
