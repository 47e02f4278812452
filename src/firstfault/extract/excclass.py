"""What an exception's class, status word, errno and object-store code say, as data (catalog/exceptions.yaml).

The traceback model (extract/traceback.py) asks this module about a
traceback's last line, and about a lone uncaught exception line, the same
questions: which family the class belongs to (`class_row`), which family a
status word at the head of its message makes (`status_family`), whether the
status is about one file (`file_status`: TensorFlow's I/O errors), which row a
line of its own says (`logged_row`: the rows whose message decides alone), which library
the dynamic loader's words name (`loader_library`), whether its
errno is on the job's own set-up side (`setup_errno`) or a peer's
(`peer_errno`), and for an object store's error whose side its code is on
(`store_code`, `store_side`). No answer here builds an event; each is a
lookup in one of the tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    ExceptionClassInfo,
    errno_table,
    exception_class_table,
    object_store_code_table,
    status_anchors,
    status_word_table,
    transport_table,
)
from firstfault.extract.codes import errno_of


class _Row(NamedTuple):
    """A class row made ready to test: how its `match` is read, and its message regex."""

    kind: str  # "any", "prefix", "suffix", "qual", "name"
    text: str  # the prefix, suffix, qualified or bare name
    message: re.Pattern[str] | None
    info: ExceptionClassInfo


@lru_cache(maxsize=1)
def _rows() -> tuple[_Row, ...]:
    out: list[_Row] = []
    for info in exception_class_table():
        m = info.match
        if m == "*":
            kind, text = "any", ""
        elif m.endswith(".*"):
            kind, text = "prefix", m[:-1]  # `pkg.*` -> `pkg.`
        elif m.startswith("*"):
            kind, text = "suffix", m[1:]
        elif "." in m:
            kind, text = "qual", m
        else:
            kind, text = "name", m
        out.append(_Row(kind, text, re.compile(info.message) if info.message else None, info))
    # The classes that stand for a status word (`status_words` `classes`: TensorFlow's errors_impl classes), after
    # every row of the class table, so that a row of its own (ResourceExhaustedError's, CancelledError's) decides.
    for word, status in status_word_table().items():
        for cls in status.classes:
            out.append(_Row("name", cls, None, ExceptionClassInfo(match=cls, family="status", status=word)))
    # An object store's own message for a code (`object_store_codes` `message`), whatever class carries it (s3fs's
    # OSError): the store's answer, read as a store client's class is (its code: `message_store_code`).
    out.append(_Row("any", "", _STORE_MESSAGE, ExceptionClassInfo(match="*", family="object_store")))
    return tuple(out)


def _fits(row: _Row, qual: str, cls: str) -> bool:
    if row.kind == "any":
        return True
    if row.kind == "prefix":
        return qual.startswith(row.text)
    if row.kind == "suffix":
        return qual.endswith(row.text)
    if row.kind == "qual":
        return qual == row.text
    return cls == row.text


@lru_cache(maxsize=1)
def _logged_rows() -> tuple[_Row, ...]:
    return tuple(r for r in _rows() if r.info.logged)


@lru_cache(maxsize=1)
def logged_words() -> tuple[str, ...]:
    """The words of the rows whose message decides in a line of its own (the prefilter's words for them)."""
    return tuple(sorted({w for r in _logged_rows() for w in r.info.logged}))


@lru_cache(maxsize=1)
def class_words() -> tuple[str, ...]:
    """The class names of the table's rows that hold neither `Error` nor `Exception` (Dask's `KilledWorker`, Ray's
    `ActorPlacementGroupRemoved`): the prefilter's words for a traceback's last line that names one, which the
    suffixes it knows every other class by would not offer. A lower-case class named with its module (the standard
    library's `struct.error`, `socket.timeout`) offers its qualified name: its own name alone is a common word."""
    return tuple(sorted({r.text if r.kind == "qual" and r.text.rsplit(".", 1)[-1][:1].islower()
                         else r.text.rsplit(".", 1)[-1] for r in _rows() if r.kind in ("name", "qual", "suffix")
                         and "Error" not in r.text and "Exception" not in r.text}))


@lru_cache(maxsize=1)
def _named_classes() -> tuple[frozenset[str], frozenset[str]]:
    """The classes the table's rows name one by one: by their own name, and fully qualified."""
    rows = _rows()
    return (frozenset(r.text for r in rows if r.kind == "name"), frozenset(r.text for r in rows if r.kind == "qual"))


def named_class(qual: str, cls: str) -> bool:
    """The exception table names this class itself (a row's `match` is its name, or its qualified name), not only a
    module or suffix it has: a class it vouches for (Toil's `InsufficientSystemResources`, google-api-core's
    `InvalidArgument`), whatever its name's shape."""
    names, quals = _named_classes()
    return cls in names or qual in quals


def logged_row(body: str) -> ExceptionClassInfo | None:
    """The row whose message a line of its own (no exception around it) says, if one does: a framework's logger
    (`Worker proc VllmWorker-1 died unexpectedly`), an exception's message posted without its class line (`No
    OpKernel was registered to support Op 'NcclAllReduce' ...`), an object store client's error printed by a
    program that is no Python (`storage: service returned error: StatusCode=503, ErrorCode=ServerBusy`)."""
    for row in _logged_rows():
        if any(w in body for w in row.info.logged) and row.message is not None and row.message.search(body):
            return row.info
    return None


def loader_library(msg: str) -> str | None:
    """The shared object the dynamic loader's words name (a `loader` row's `lib` group: the file it could not open,
    or whose symbol or version it could not find), as printed (a name or a path); None where no row says it."""
    for row in _rows():
        if row.info.family == "loader" and row.message is not None:
            m = row.message.search(msg)
            if m is not None:
                return m.group("lib")
    return None


@lru_cache(maxsize=1)
def _envelope_rows() -> tuple[_Row, ...]:
    return tuple(r for r in _rows() if r.info.family == "envelope")


def envelope(qual: str, cls: str, msg: str) -> bool:
    """Whether the exception only wraps others (the table's `envelope` rows: a launcher's summary of its workers'
    exceptions, a DataLoader's word that a worker exited), whatever the other rows say."""
    return any(_fits(row, qual, cls) and (row.message is None or row.message.search(msg) is not None)
               for row in _envelope_rows())


def class_row(qual: str, cls: str, msg: str) -> ExceptionClassInfo | None:
    """The first row of the class table that fits the exception (its class, then its message)."""
    for row in _rows():
        if _fits(row, qual, cls) and (row.message is None or row.message.search(msg) is not None):
            return row.info
    return None


@lru_cache(maxsize=1)
def _status_index() -> tuple[dict[str, str], re.Pattern[str]]:
    """Each spelling of a status word -> its family, and one pattern of them all followed by `:`."""
    by_text: dict[str, str] = {}
    for row in status_word_table().values():
        for text in (row.word, *row.texts):
            by_text.setdefault(text, row.family)
    return by_text, re.compile(rf"\b(?P<word>{re.alternation(by_text)}):", keep=True)


def status_family(msg: str, implied: str | None = None) -> str | None:
    """The family of the status word a message begins with (or the one the class stands for), if listed:
    `DEADLINE_EXCEEDED: Barrier timed out`, `UNAVAILABLE: Socket closed` at the head of XLA's, JAX's and
    TensorFlow's messages."""
    by_text, rx = _status_index()
    if implied is not None:
        return by_text.get(implied)
    m = rx.match(msg.lstrip())
    return by_text[m.group("word")] if m else None


# gRPC's spelling of a status in an exception's message or on a line of its own (Python's `<_InactiveRpcError of RPC
# that terminated with:` then `status = StatusCode.UNAVAILABLE`; older `(StatusCode.UNAVAILABLE, Connect Failed)`).
_GRPC_STATUS = re.compile(r"\bStatusCode\.(?P<word>[A-Z][A-Z_]{2,30})\b")
GRPC_STATUS_LITERAL: Final = "StatusCode."
_CALL_FIELD: Final = "status = "  # the field gRPC Python's RPC error prints its status in


# Words before a status that still make it the message's own (the status word after them heads the error, also after
# a status word of the workload's own family at the message's head): JAX's about a backend that did not start
# (jax-ml/jax jax/_src/xla_bridge.py: `Unable to initialize backend 'tpu': DEADLINE_EXCEEDED: ...`, `Backend 'cuda'
# failed to initialize: ...`), TensorFlow's and XLA's TF_CHECK_OK, a status a fatal record ends on (tensorflow/
# tensorflow tensorflow/core/platform/status.cc TfCheckOpHelperOutOfLine: `Non-OK-status: <the call> status: UNKNOWN:
# Stream removed`), and the coordination service failing a barrier for a task in error (openxla/xla coordination_
# service.cc SetTaskError -> LeaveOngoingBarriers: `INTERNAL: Barrier failed because: task is set to ERROR:
# UNAVAILABLE: Task 1 heartbeat timeout`); and a StatusOr read while it held an error, the exception C++ code raises
# into Python (abseil/abseil-cpp absl/status/statusor.cc BadStatusOrAccess::what(): `Bad StatusOr access: <status>`;
# TensorFlow's stream_executor/lib/statusor.cc before it: `Attempting to fetch value instead of handling error
# <status>`).
_STATUS_LEAD = re.compile(r"^\s*(?:[A-Z][A-Z_]+: )?(?:Unable to initialize backend '[\w-]+': "
                          r"|Backend '[\w-]+' failed to initialize: |Non-OK-status: .{0,300}? status: "
                          r"|Barrier failed because: task is set to ERROR: |Bad StatusOr access: "
                          r"|Attempting to fetch value instead of handling error )")
_LEAD_WORDS: Final = ("backend", "Backend", "Non-OK-status", "task is set to ERROR", "Bad StatusOr access",
                      "instead of handling error")


def _inner_status(msg: str) -> str | None:
    """The family of the status after one of _STATUS_LEAD's leads, if the message has one."""
    lead = _STATUS_LEAD.match(msg) if any(w in msg for w in _LEAD_WORDS) else None
    return status_family(msg[lead.end():]) if lead is not None else None


def message_status(msg: str) -> str | None:
    """The family of the status word an exception's message holds, whatever its class: at the message's head
    (`UNKNOWN: Gloo AllGather failed`), after JAX's words about a backend that did not start or TF_CHECK_OK's
    (`_STATUS_LEAD`), or in gRPC's spelling anywhere in it (`StatusCode.UNAVAILABLE`)."""
    family = status_family(msg)
    if family is None or family == "exception":
        inner = _inner_status(msg)
        if inner is not None:
            return inner
    if family is not None:
        return family
    if GRPC_STATUS_LITERAL not in msg:
        return None
    m = _GRPC_STATUS.search(msg)
    if m is None:
        return None
    row = status_word_table().get(m.group("word"))
    if row is not None and row.call is not None and msg[max(m.start() - len(_CALL_FIELD), 0):m.start()] == _CALL_FIELD:
        # the status field of gRPC Python's RPC error (`status = StatusCode.INTERNAL`): the code the server or the
        # transport gave the call, and no more; a client library's exception that quotes the server's own message
        # with it (tritonclient's `[StatusCode.INTERNAL] Failed to process the request(s) ...: Stub process is not
        # healthy.`) is that server's report of its own failure, read by the word's family
        return row.call
    return status_family("", m.group("word"))


# A file's path as TensorFlow's file systems print it (a word with a `/`, or a Windows drive's), then at most
# the strerror that TF 2 appends after `; `.
_FILE = r"(?P<path>[A-Za-z]:[\\/][^\s;]*|[^\s;:]*/[^\s;]*)(?:; (?P<why>[^;]*))?\s*$"
_PATH_ONLY = re.compile(_FILE)


@lru_cache(maxsize=1)
def _file_status_rx() -> re.Pattern[str]:
    by_text, _ = _status_index()
    return re.compile(rf"\b(?P<word>{re.alternation(by_text)}): ?" + _FILE, keep=True)


class FileStatus(NamedTuple):
    """A status about one file: TensorFlow's report of a failed file operation (catalog/exceptions.yaml)."""

    word: str  # the canonical status word (RESOURCE_EXHAUSTED)
    path: str
    why: str | None  # the strerror TF 2 appends, if any
    on_write: str | None  # what the status is about a file being written (the table's `on_write`)


def file_status(msg: str, implied: str | None = None) -> FileStatus | None:
    """The status a message gives about a file and nothing else: `...: Resource exhausted: /home/u/model.ckpt-6.
    tempstate...` (TensorFlow before 2.x), `/ckpt/model.data-00000-of-00001; No space left on device` from a class
    that stands for the status (`ResourceExhaustedError`). None: the message says more than a file's status."""
    by_text, _ = _status_index()
    m = _file_status_rx().search(msg)
    if m is not None:
        text = m.group("word")
    elif implied is not None and implied in by_text:
        m = _PATH_ONLY.match(msg.strip())
        text = implied
    if m is None:
        return None
    word = next(w for w, row in status_word_table().items() if text == w or text in row.texts)
    return FileStatus(word, m.group("path"), m.group("why"), status_word_table()[word].on_write)


# An ERROR record of glog / absl logging (`E0410 21:04:57.403257 30715 file.cc:310] `, absl's `E0000
# 00:00:1712345678.12 12345 file.cc:310] `) or of TensorFlow's own logger (`2020-11-25 09:06:12.391615: E
# tensorflow/core/x.cc:328] `, before TF 1.0 without the date), at the line's head: the workload's process says
# something failed. W and I records are not.
_ERROR_RECORD = re.compile(
    r"^\s*(?:E\d{4} \d\d:\d\d:\d+(?:\.\d+)?\s+\d+ |(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?: )?E )"
    r"[\w.@/\\-]+:\d+\] ")


def error_record(body: str) -> bool:
    """Whether a line is a C++ library's ERROR log record (glog / absl / TensorFlow's form)."""
    return "] " in body and _ERROR_RECORD.match(body) is not None


@lru_cache(maxsize=1)
def symptom_status_texts() -> tuple[str, ...]:
    """The spellings of the status words that name another's failure (peer, timeout, aborted): the prefilter's
    words for an ERROR record that logs one."""
    return tuple(sorted({t for row in status_word_table().values() if row.family in ("peer", "timeout", "aborted")
                         for t in (row.word, *row.texts)}))


# A status's canonical word at a line's head (absl's Status::ToString, `UNAVAILABLE: ...`).
_CANONICAL_HEAD = re.compile(r"^\s*([A-Z][A-Z_]{4,18}): ")


def status_head(body: str) -> str | None:
    """The canonical status word a line begins with (absl's Status::ToString: `RESOURCE_EXHAUSTED: ...`), if it is
    one of the table's."""
    head = _CANONICAL_HEAD.match(body)
    return head.group(1) if head is not None and head.group(1) in status_word_table() else None


def logged_status(body: str) -> str | None:
    """The family of a status a line logs outside any exception about the coordination service or a collective
    (catalog/exceptions.yaml `status_anchors`: `has been set to ERROR in coordination service: UNAVAILABLE: Task ...
    heartbeat timeout`, `Aborting RingReduce with Unavailable: Socket closed`), or in an ERROR record of its own
    (glog / absl / TensorFlow: `E ... client.cc:96] Coordination service agent in error status: DEADLINE_EXCEEDED:
    Deadline Exceeded`). The line's first status word decides (absl prints it before the message or after
    `status:`); a W or I record without an anchor decides nothing. A line that is an absl status alone, its
    canonical word at its head (`INTERNAL: Barrier failed because: task is set to ERROR: UNAVAILABLE: Task 1 heartbeat
    timeout`, the message a multi-line ERROR record goes on with), decides as an exception's message would."""
    if not any(a in body for a in status_anchors()) and not error_record(body):
        head = _CANONICAL_HEAD.match(body)
        return message_status(body.lstrip()) if head is not None and head.group(1) in status_word_table() else None
    by_text, rx = _status_index()
    m = rx.search(body)
    if m is None:
        return None
    family = by_text[m.group("word")]
    if family == "exception":  # the workload's own word, unless a lead says whose status follows (_STATUS_LEAD)
        return _inner_status(body[m.start():]) or family
    return family


# The coordination service's own words that name the task that failed (openxla/xla xla/tsl/distributed_runtime/
# coordination/coordination_service.cc, the same in TensorFlow's tsl before it): `CheckHeartbeatTimeout`'s `Task
# /job:jax_worker/replica:0/task:3 heartbeat timeout. This indicates that the remote task has failed, got preempted,
# or crashed unexpectedly.` (UNAVAILABLE; newer XLA names the task by its index alone, `Task 1 heartbeat timeout`, as
# JAX 0.10 prints it in tests/lab/captured/jax_sigkill_external), `RegisterTaskAsync`'s `/job:jax_worker/replica:0/
# task:3 unexpectedly tried to connect with a different incarnation. It has likely restarted.` (ABORTED). The task's
# index in its job is JAX's process_id (the process's rank) only in JAX's job, `jax_worker` (TensorFlow's jobs,
# `worker`, `ps`, `chief`, number their tasks apart: no rank). The lists the service prints on lines after its words
# (the tasks that stopped sending heartbeats, a barrier's timed-out task names) are not read here: a line of a task's
# name alone holds no word the scanner dispatches on.
TASK_LITERAL: Final = "/task:"
_FAILED_TASK = re.compile(r"\bTask (?:/job:jax_worker/replica:\d+/task:)?(?P<a>\d+) heartbeat timeout\b"
                          r"|/job:jax_worker/replica:\d+/task:(?P<b>\d+) unexpectedly tried to connect with a "
                          r"different incarnation\b")


def failed_task(text: str) -> int | None:
    """The task (its index in its job) that the coordination service says failed, where a line names it."""
    if TASK_LITERAL not in text and "heartbeat timeout" not in text:
        return None
    m = _FAILED_TASK.search(text)
    return int(m.group("a") or m.group("b")) if m else None


# A network operation, where an errno such as EACCES is about a socket rather than a file.
_NETWORK_OP = re.compile(r"\b(?:bind|listen|socket|connect)\b", re.IGNORECASE)
# A socket's own end (a server's bind or listen) against a client's connect: a client tries each address its
# resolver gave and logs each failed try (c10d's socket.cpp `[W socket.cpp:601] [c10d] The client socket has failed
# to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).`, an IPv6 loopback a container
# lacks, then the IPv4 one connects); what the client ends with is a line of its own (`failed to connect to any
# network address`, a timeout: extract/torchrun.py).
_SERVER_OP = re.compile(r"\b(?:bind|listen)\b", re.IGNORECASE)
# A socket endpoint a message names as the address of the call that failed: ZeroMQ's transports' URLs (zmq_tcp(7),
# zmq_ipc(7), zmq_pgm(7), zmq_udp(7): `tcp://host:port`), as pyzmq's Socket.bind and Socket.connect append them to
# the error (`No such device (addr='tcp://...')`).
_ENDPOINT = re.compile(r"\b(?:tcp|udp|ipc|e?pgm|ws|wss|tipc|vmci)://")
_CLIENT_OP = re.compile(r"\bconnect\b", re.IGNORECASE)


# A file lock as the call that failed, in the words of the programs that take one: HDF5's (src/H5FDsec2.c
# H5FD__sec2_lock `unable to lock file`, `unable to unlock file`; its older `file locking disabled on this file system
# (use HDF5_USE_FILE_LOCKING environment variable to override)`), TensorStore's (`Failed to acquire lock on file`),
# the C calls by name (flock, lockf, fcntl's F_SETLK / F_SETLKW). Linear: fixed words, bounded alternations.
_LOCK_CALL = re.compile(r"\b(?:[Uu]nable to|[Ff]ailed to|[Cc]annot|[Cc]an't|[Cc]ould not) (?:acquire (?:a |the )?)?"
                        r"(?:un)?lock\b|\bfile locking\b|\b(?:flock|lockf|F_SETLKW?)\b")
LOCK_LITERALS: Final = ("lock", "Lock", "LOCK", "F_SETLK")


def lock_call(msg: str) -> bool:
    """The message names a file lock as the call that failed (_LOCK_CALL)."""
    return any(w in msg for w in LOCK_LITERALS) and _LOCK_CALL.search(msg) is not None


def setup_errno(msg: str, transport: bool = False, on_socket: bool = False, network: bool = False) -> str | None:
    """The errno of a message when it is on the job's own set-up side (a port in use, an address the node
    does not have, a privileged port): `errno: 98 - Address already in use`, `name: EADDRINUSE`; with
    `transport`, the message is a transport's own report, where the table's `transport_only` rows count too
    (`Unable to register memory ... RC: -22, Error: Invalid argument`). `on_socket`: only where the message
    names a socket's operation (a line that no exception frames), and one of its own end, not a client's connect.
    `network`: the exception's frames say the call that failed was a network operation (a row's `network_setup`)."""
    if on_socket and _NETWORK_OP.search(msg) is None:
        return None  # before the errno: the cheaper test, on every line of its own that reaches this
    if on_socket and _CLIENT_OP.search(msg) is not None and _SERVER_OP.search(msg) is None:
        return None  # a client's try at one of its addresses (above), not the job's own endpoint
    name = errno_of(msg)
    row = errno_table().get(name) if name else None
    if row is not None and row.lock_setup and not on_socket and lock_call(msg):
        return name  # a mount that does not lock, asked to by the job's library (catalog/exceptions.yaml `lock_setup`)
    if row is not None and row.network_setup:
        # the set-up side only on a network operation (ENODEV: an interface the node does not have); its other side
        # (ENODEV's storage on mmap) is the storage reader's
        return name if network or _NETWORK_OP.search(msg) or _ENDPOINT.search(msg) else None
    if row is None or row.side != "setup" or (row.transport_only and not transport):
        return None
    if row.network_only and not on_socket and _NETWORK_OP.search(msg) is None:
        return None
    return name


def errno_limit(name: str | None) -> str | None:
    """The limit of the job's processes a set-up errno says was hit (catalog/exceptions.yaml `errnos` `limit`: EMFILE
    the open files, `ulimit -n`; ENOMEM in a transport's report the locked memory, `ulimit -l`), if it is one."""
    row = errno_table().get(name) if name else None
    return row.limit if row is not None else None


@lru_cache(maxsize=1)
def setup_errno_words() -> tuple[str, ...]:
    """The strerror texts and names of the set-up errnos that are the set-up's on any operation (the prefilter's
    words for a logged bind failure: `(errno: 98 - Address already in use)`)."""
    import errno
    import os

    names = [name for name, row in errno_table().items()
             if row.side == "setup" and not row.network_only and not row.transport_only]
    return tuple(sorted({*names, *(os.strerror(getattr(errno, n)) for n in names if hasattr(errno, n))}))


# UCX's exception classes in the bindings that raise a UCX status to the program: UCX-Py's (rapidsai/ucx-py
# ucp/_libs/exceptions.py: UCXError, UCXCanceled, UCXConnectionReset, ...), UCXX's (rapidsai/ucxx, UCXXError and its
# status classes), JUCX's (openucx/ucx bindings/java, org.openucx.jucx.UcxException), and the RAPIDS Accelerator for
# Spark's shuffle (NVIDIA/spark-rapids UCX.scala, `UCXError(-80,Endpoint timeout)`: the UCS status and its words).
_UCX_CLASS = re.compile(r"^(?:UCXX?|Ucx)[A-Z]\w*$")


@lru_cache(maxsize=1)
def _ucx_peer_words() -> tuple[tuple[str, str], ...]:
    return tuple((t, row.name) for row in transport_table().peers if row.stack == "ucx" for t in row.texts)


def ucx_peer_status(cls: str, msg: str) -> str | None:
    """The UCX status a UCX binding's exception carries where it is a peer's (catalog/transport.yaml `peer_statuses`,
    stack ucx: `Endpoint timeout`, `Connection reset by remote peer`): the peer's loss, never the program's own."""
    if _UCX_CLASS.match(cls) is None:
        return None
    return next((name for text, name in _ucx_peer_words() if text in msg), None)


def peer_errno(msg: str, transport: bool = False) -> str | None:
    """The errno of a network error on a peer's side (refused, reset, timed out), if the message has one. With
    `transport`, the message is a transport's own report of a call on its link (MPICH's `OFI poll failed (default
    nic=cxi0: Connection refused)`), which names no socket's operation and needs none."""
    if not transport and _NETWORK_OP.search(msg) is None:
        return None
    name = errno_of(msg)
    row = errno_table().get(name) if name else None
    return name if row is not None and row.side == "peer" else None


# Where an object store's client puts the error code (catalog/exceptions.yaml `object_store_codes` lists the SDKs):
# boto3 / botocore `An error occurred (SlowDown) when calling the PutObject operation`, MinIO `S3 operation failed;
# code: SlowDown` and minio-java `ErrorResponse(code = XMinioStorageFull, ...`, Azure `ErrorCode:ServerBusy` /
# `ErrorCode=ServerBusy` / `X-Ms-Error-Code: [OperationTimedOut]` and azcore's `ERROR CODE: ServerBusy`, the AWS SDK
# for Java's `(Service: Amazon S3; Status Code: 503; Error Code: SlowDown; ...)`, the REST error document
# `<Code>SlowDown</Code>` (also JSON-escaped, `<Code>SlowDown<\/Code>`), urllib `HTTP Error 503: Slow Down`, requests
# `404 Client Error`, google-api-core `429 POST https://...`, a Rust or Go client's `HTTP error status (status: 503,
# ...`, the AWS SDK for Go v2's `api error SlowDown:`, for C++ `ExceptionName: SlowDown`, `Exception name: SlowDown`,
# `AWSError 'SlowDown'`, for Ruby `Aws::S3::Errors::SlowDown`, for PHP `SlowDown (server): ...`, Google's Go client
# `googleapi: Error 429: <message>, rateLimitExceeded` (the reason after the last comma, else the status), the
# JSON API's error body `"reason": "rateLimitExceeded"`, and gcsfs's HttpError (the body's message, then `, 429` at its
# end; only a class of an object store's reaches this).
_STORE_CODE = re.compile(
    r"An error occurred \((?P<a>\w+)\) when calling"
    r"|\bcode(?::| =) (?P<b>\w+)"
    r"|\b(?i:error[ -]?code)[:=]\s*\[?(?P<c>\w+)"
    r"|<Code>(?P<d>\w+)<"
    r"|HTTP Error (?P<e>\d{3})\b"
    r"|\b(?P<f>\d{3}) (?:Client|Server) Error\b"
    r"|^\s*(?P<g>\d{3}) (?:GET|POST|PUT|PATCH|DELETE|HEAD)\b"
    r"|\bstatus(?: code)?: (?P<h>\d{3})\b"
    r"|\bapi error (?P<i>\w+):"
    r"|\b(?:ExceptionName|Exception name): (?P<j>\w+)|\bAWSError '(?P<k>\w+)'"
    r"|\bS3::Errors::(?P<m>\w+)"
    r"|\b(?P<n>[A-Z]\w+) \((?:server|client)\): "
    r"|\bgoogleapi: Error (?P<o>\d{3}): (?P<said>[^\n]*)"
    r"|\"reason\": ?\"(?P<p>\w+)\""
    r"|, (?P<gc>[1-5]\d\d)\s*$"
)
_HTTP_STATUS = re.compile(r"\d{3}")


def _code_of(m: re.Match[str]) -> str:
    """The code a match of _STORE_CODE / _STORE_SPELLED names: Google's Go client's reason after the last comma
    where the table lists it (`googleapi: Error 403: User Rate Limit Exceeded, userRateLimitExceeded`), else its
    status; any other spelling's one group; the AWS SDK for C++'s enum name as the code it spells (SLOW_DOWN ->
    SlowDown)."""
    groups = m.groupdict()
    if groups.get("o") is not None:
        reason = (groups.get("said") or "").rpartition(", ")[2].strip()
        return reason if reason in object_store_code_table() else str(groups["o"])
    if groups.get("x") is not None:
        return "".join(p.capitalize() for p in str(groups["x"]).split("_"))
    if groups.get("xn") is not None:  # pyarrow's older `AWS Error [code 15]`: the SDK's CoreErrors number
        return _aws_cpp_codes().get(int(groups["xn"]), f"aws_cpp{groups['xn']}")
    if groups.get("crtd") is not None:  # the CRT's description of its error, or its name, in its log's parentheses
        return _crt_said().get(str(groups["crtd"]), str(groups["crtd"]))
    for curl in ("cu", "cv", "cw"):
        if groups.get(curl) is not None:
            return f"curl{groups[curl]}"  # libcurl's CURLcode, as the table keys it
    return next(str(v) for k, v in groups.items() if v is not None and k not in ("said", "qt"))


# The stores' own messages for their codes (`object_store_codes` `message`: S3's `Please reduce your request rate.`),
# each whole: not inside a longer word, in any case at its first letter (a client's wrapper may lower it).
_MESSAGES: Final = {r.message: c for c, r in object_store_code_table().items() if r.message is not None}
_STORE_MESSAGE: Final = re.compile(r"(?<![\w])(?:" + re.alternation(_MESSAGES) + r")(?![\w])")


# ... and the messages a store shares with other services (`shared_message`: the AWS-wide InternalError sentence), which
# name the code only in an error already read as an object store's (store_code's `shared`: traceback._object_store),
# never alone: no row of _rows reads them.
_SHARED: Final = {r.shared_message: c for c, r in object_store_code_table().items() if r.shared_message is not None}
_SHARED_MESSAGE: Final = re.compile(r"(?<![\w])(?:" + re.alternation(_SHARED) + r")(?![\w])")


def message_store_code(msg: str, *, shared: bool = False) -> str | None:
    """The code whose own message (`object_store_codes` `message`) an error quotes without the code, if one does;
    else, where `shared` (the error is an object store's already), the code whose shared message (`shared_message`)
    it quotes."""
    m = _STORE_MESSAGE.search(msg)
    if m is not None:
        return _MESSAGES.get(m.group(0))
    if not shared:
        return None
    m = _SHARED_MESSAGE.search(msg)
    return _SHARED.get(m.group(0)) if m is not None else None


def store_code(cls: str, msg: str, *, shared: bool = False) -> str | None:
    """The error code or HTTP status an object store's error names: in its message, else its class's name
    where the table knows it (google-api-core's `TooManyRequests`, MinIO's `NoSuchKey`). `shared`: the error is read
    as an object store's already, so that a message the store shares with other services names its code too."""
    phrased = _phrased_code(msg)  # a store's own status line names its code (`HTTP Error 503: Slow Down`)
    if phrased is not None:
        return phrased
    m = _STORE_CODE.search(msg) or _STORE_SPELLED.search(msg)
    if m is not None:
        code = _code_of(m)
        if code in object_store_code_table() or not _ONLY_LISTED.intersection(k for k, v in m.groupdict().items()
                                                                             if v is not None):
            return code
        # a CRT name or a C++ SDK number the table does not list decides nothing, as no code did (the store's)
        return spelled_store_code(msg)
    if cls in object_store_code_table():
        return cls
    return message_store_code(msg, shared=shared)  # the store's message alone (s3fs's OSError: the code dropped)


@lru_cache(maxsize=1)
def _aws_cpp_codes() -> Mapping[int, str]:
    """The AWS SDK for C++'s CoreErrors number -> the code (catalog/exceptions.yaml `aws_cpp`)."""
    return {r.aws_cpp: c for c, r in object_store_code_table().items() if r.aws_cpp is not None}


@lru_cache(maxsize=1)
def _crt_said() -> Mapping[str, str]:
    """A library's own description of a code -> the code (catalog/exceptions.yaml `said`: the AWS CRT's)."""
    return {r.said: c for c, r in object_store_code_table().items() if r.said is not None}


# The spellings that name a code only where the table lists it: another CRT name (AWS_ERROR_S3_INVALID_RESPONSE_STATUS)
# or C++ SDK number (`[code 100]`, UNKNOWN) decides nothing, as no code at all (store_code).
_ONLY_LISTED: Final = frozenset({"xn", "crtd", "crt"})


# The spellings of an object store's code that only a store's client writes, whatever exception (or line) carries
# them: boto's `An error occurred (SlowDown) when calling`, the REST error document's `<Code>SlowDown</Code>`, the AWS
# SDK for C++'s `AWS Error SLOW_DOWN during PutObject operation` (pyarrow's and TensorFlow's S3 file systems raise it
# as an OSError or a status; its enum name is read as the code it spells), `ExceptionName: SlowDown` and `AWSError
# 'SlowDown'`, the SDK for Java's `(Service: Amazon S3; Status Code: 503; Error Code: SlowDown; ...)`, for Go v2
# `api error SlowDown:`, for Ruby `Aws::S3::Errors::SlowDown`, minio-java's `ErrorResponse(code = ...`, Google's Go
# client `googleapi: Error 429: ...`, and botocore's parsed error response as a program prints it (boto3's "Error
# handling" guide: `err.response` is `{'Error': {'Code': 'SlowDown', 'Message': '...'}, 'ResponseMetadata': ...}`;
# in JSON `{"Error": {"Code": "SlowDown", ...`), and the SDK for C++'s request that got no answer, `curlCode: 28,
# Timeout was reached` (libcurl's CURLcode, keyed `curl28`), and TensorFlow's cloud file system's (tsl
# curl_http_request.cc, under TF's and JAX's `gs://` I/O) `Error executing an HTTP request: HTTP response code 429`,
# and the same client's request that got no answer, `Error executing an HTTP request: libcurl code 28 meaning 'Timeout
# was reached'` (its test, curl_http_request_test.cc), and tensorstore's HTTP transport under its `gs://` and `s3://`
# drivers (tensorstore/internal/http curl_transport.cc, curl_wrappers.cc: `Error [28]=Timeout was reached in curl
# operation`): libcurl's CURLcode in C++ clients' spellings, keyed `curlN` as the AWS SDK's.
# ... and the AWS CRT's: its log names an error by its number and, in parentheses, its name or description (aws-c-common
# aws_error_str / aws_error_name: `Incoming body callback raised error 26 (AWS_ERROR_DEST_COPY_TOO_SMALL).`, `could
# not append to response body due to error 26 (Destination of copy is too small.)`); its name stands alone in
# mountpoint-s3-crt's `CRT error 14339: aws-c-s3: AWS_ERROR_S3_SLOW_DOWN, ...` and awscrt's `AwsCrtError:
# AWS_ERROR_S3_SLOW_DOWN: ...` (whole: not inside a longer identifier).
_SAID: Final = re.alternation(_crt_said())
_STORE_SPELLED = re.compile(r"An error occurred \((?P<a>\w+)\) when calling|<Code>(?P<d>\w+)<"
                            r"|\bAWS Error (?P<x>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)\b"
                            r"|\bAWS Error \[code (?P<xn>\d{1,3})\]"
                            r"|\berror(?: code)? \d{1,6} \((?P<crtd>AWS_ERROR_[A-Z0-9_]+|" + _SAID + r")\)"
                            r"|(?<![\w$])(?P<crt>AWS_ERROR_[A-Z0-9_]*[A-Z0-9])(?![\w$])"
                            r"|\bStatus Code: \d{3}; Error Code: (?P<c>\w+)"
                            r"|\bapi error (?P<i>\w+):"
                            r"|\b(?:ExceptionName|Exception name): (?P<j>\w+)|\bAWSError '(?P<k>\w+)'"
                            r"|\bS3::Errors::(?P<m>\w+)"
                            r"|ErrorResponse\(code = (?P<b>\w+)"
                            r"|\bgoogleapi: Error (?P<o>\d{3}): (?P<said>[^\n]*)"
                            r"|(?P<qt>['\"])Error(?P=qt): \{(?P=qt)Code(?P=qt): (?P=qt)(?P<q>\w+)(?P=qt)"
                            r"|\bcurlCode: (?P<cu>\d{1,3}), "
                            r"|\bError executing an HTTP request: HTTP response code (?P<tf>\d{3})\b"
                            r"|\bError executing an HTTP request: libcurl code (?P<cv>\d{1,3}) meaning\b"
                            r"|\bError \[(?P<cw>\d{1,3})\]=[^\n\]\[]{0,120}? in curl operation\b")
# A store's own HTTP reason phrase beside its status (`object_store_codes` `status_line`: S3's `503 Slow Down`), as the
# HTTP clients quote the status line in their errors without the store's code (audited against each client's source):
# urllib's HTTPError (CPython Lib/urllib/error.py: `HTTP Error %s: %s` % (code, msg), the server's reason), requests'
# raise_for_status (requests/models.py: `%s Server Error: %s for url: %s`, the reason as sent), aiohttp's
# ClientResponseError (aiohttp/client_exceptions.py: `{status}, message={message!r}, url=...`), and the status line
# whole as httpx (`Server error '503 Slow Down' for url ...`), Go's net/http `Response.Status` and reqwest (`HTTP status
# server error (503 Slow Down) for url ...`) print it. botocore and google-api-core print no reason phrase of the
# server's (botocore's message for a bodiless answer is http.client's standard phrase, `An error occurred (503) when
# calling the HeadObject operation: Service Unavailable`; google-api-core's `503 GET <url>: <the body's message>`):
# their classes and codes decide there. A status with a standard phrase (`503 Service Unavailable`) is any server's.
_STATUS_LINES: Final = {r.status_line: c for c, r in object_store_code_table().items() if r.status_line is not None}
# The stores' own reason phrases (`Slow Down`): a line that holds one reaches the exception extractor.
STORE_PHRASES: Final = tuple(sorted({line.partition(" ")[2] for line in _STATUS_LINES}))
_PHRASED: Final = re.compile(r"(?:\bHTTP Error (?P<s>\d{3}): |\b(?P<s2>\d{3}) (?:Client|Server) Error: "
                             r"|\b(?P<s3>\d{3}), message=['\"]|\b(?P<s4>\d{3}) )(?P<phrase>"
                             + re.alternation(STORE_PHRASES) + r")\b")


def _phrased_code(msg: str) -> str | None:
    """The code whose status line (`object_store_codes` `status_line`) an HTTP client's error quotes (_PHRASED)."""
    if not any(p in msg for p in STORE_PHRASES):
        return None
    for m in _PHRASED.finditer(msg):
        status = m.group("s") or m.group("s2") or m.group("s3") or m.group("s4")
        code = _STATUS_LINES.get(f"{status} {m.group('phrase')}")
        if code is not None:
            return code
    return None


# The words every spelling of _STORE_SPELLED holds: a line of its own that holds one reaches the exception extractor
# (extract/exceptions.py's prefilter), which reads a listed code in it (traceback._logged).
STORE_SPELLED_WORDS: Final = ("An error occurred (", "<Code>", "AWS Error ", "; Error Code: ", "api error ",
                              "ExceptionName: ", "Exception name: ", "AWSError '", "S3::Errors::",
                              "ErrorResponse(code = ", "googleapi: Error ", "'Error': {'Code': '",
                              '"Error": {"Code": "', "curlCode: ", "Error executing an HTTP request: ",
                              " in curl operation", "AWS_ERROR_", *sorted(_crt_said()), *STORE_PHRASES)

# The spellings of _STORE_SPELLED whose code is a number (libcurl's, the C++ SDK's, an HTTP status): a line that holds
# one is read by its digits' value, so it is never remembered by its digits made `0` (extract/exceptions.py
# _DIGIT_WORDS: `AWS Error [code 99]`, which names nothing, is not `AWS Error [code 15]`).
STORE_DIGIT_WORDS: Final = ("AWS Error [code ", "curlCode: ", "libcurl code ", "HTTP response code ",
                            " in curl operation", *STORE_PHRASES)


def spelled_store_code(msg: str) -> str | None:
    """A listed object-store code (catalog/exceptions.yaml `object_store_codes`) that a message spells in a store
    client's own words (_STORE_SPELLED), whatever the exception's class; None for a code the table does not list
    (`AWS Error NETWORK_CONNECTION`: the client's own failure, which says nothing of the store, unless the
    libcurl code that follows it does)."""
    for m in _STORE_SPELLED.finditer(msg):  # the first listed: pyarrow's `AWS Error NETWORK_CONNECTION during
        code = _code_of(m)                   # HeadObject operation: curlCode: 28, ...` names the curl code after
        if code in object_store_code_table():
            return code
    return _phrased_code(msg)


def store_cause(code: str | None) -> str | None:
    """What a store-side code says of the store (`throttled`, `full`, ...; catalog/exceptions.yaml `cause`)."""
    row = object_store_code_table().get(code) if code is not None else None
    return row.cause if row is not None else None


def store_setup(code: str | None) -> bool:
    """Whether a workload-side code says the store refused the job's own credentials or permissions (its set-up:
    catalog/exceptions.yaml `setup`)."""
    row = object_store_code_table().get(code) if code is not None else None
    return row is not None and row.setup


def store_code_words() -> tuple[str, ...]:
    """The object-store codes on the store's side that a store spells as a word (`object_store_codes`: `SlowDown`,
    `rateLimitExceeded`; not an HTTP status, which any service answers, nor a libcurl code): a line that holds one is
    error-looking (extract/unrecognized.py), so that a store's error body printed over several lines (Google's JSON
    `"reason": "rateLimitExceeded",` on a line of its own) reaches the last resort's reading (traceback.words_cause),
    which takes the code only in a store's own spelling."""
    return tuple(sorted(c for c, r in object_store_code_table().items()
                        if r.side == "store" and not c.isdigit() and not c.startswith("curl")))


def store_side(code: str | None) -> str:
    """`store` (throttling, the service's errors and timeouts) or `workload` (the job's request)."""
    if code is None:
        return "store"  # no answer at all: the connection or the read timed out, the store's side
    row = object_store_code_table().get(code)
    if row is not None:
        return row.side
    return "store" if _HTTP_STATUS.fullmatch(code) and code.startswith("5") else "workload"


# What a family makes of a traceback's last line where it names a symptom kind.
SYMPTOM_KINDS: Final[dict[str, str]] = {
    "peer": "nccl.remote_error",
    "timeout": "nccl.timeout",
    "collective": "nccl.error",
    "aborted": "nccl.communicator_aborted",
}


def says_little(kind: str, fields: Mapping[str, object]) -> bool:
    """A reading that any message no table knows gives: the workload's own exception with nothing read from its
    message (no errno, set-up, limit, file or store code), or a CUDA error whose message named no code of CUDA's.
    A wrapped line that says little is read joined too (collect/scan.py); a lone exception line that says little
    supersedes no earlier lone line that says more (engine/normalise.py `terminal_lines`)."""
    if kind == "app.exception":
        return not any(k in fields for k in ("errno", "setup", "limit", "path", "store_code", "shm", "signal"))
    return kind == "app.cuda_error" and "cuda_code" not in fields
