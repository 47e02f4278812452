"""NCCL and PyTorch c10d lines: collective timeouts, NCCL errors, IB completion errors, addresses.

Lines arrive with whatever prefix the writer put on them: PyTorch's
`[rank3]:` (kept by the scanner), a glog header `[E1102 10:03:09.123456 4242
ProcessGroupNCCL.cpp:607]`, NCCL's `host:pid:tid [dev]`, a journald prefix
when a launcher pipes to syslog. Every regex therefore uses `search`.

One failure is often reported several times by one process: NCCL's WARN
line, then PyTorch's `DistBackendError` quoting it as `Last error:`, then the
`what():` of the abort. The per-stream state in `ctx.state` folds those
repeats so a rank's one failure counts once (see `_PytorchReportDedup` and
the SeqNum key of the watchdog extractor).
"""

from __future__ import annotations

import errno as _errno
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    NcclFork,
    NcclNodeWarn,
    bridge_kind,
    ib_wc_status_table,
    nccl_forks,
    nccl_info_lines,
    nccl_node_warns,
    nccl_transport_names,
    nccl_transports,
)
from firstfault.extract import prefix as _prefix
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import (
    collective_result,
    cuda_error_of,
    errno_of,
    hccl_literals,
    hccl_result_of,
    nccl_result_of,
)
from firstfault.extract.excclass import errno_limit, setup_errno
from firstfault.extract.memo import ON, Found, Memo, Spans, digit_blind, digit_free, digits_zeroed, value
from firstfault.extract.prefix import split_prefixes
from firstfault.extract.traceback import PEER_FAILURE_PATTERNS
from firstfault.extract.verbs import (
    async_drafts,
    async_event_of,
    local_literals,
    local_status,
    read_completion,
    socket_peer_status,
    verbs_path_errno,
)
from firstfault.model import ADDRESS, NET_READY, PORTS_USED, FieldValue

_DETAIL_CLIP: Final = 400

# --------------------------------------------------------------------------
# Prefixes shared with the application extractors
# --------------------------------------------------------------------------

def split_rank_prefix(line: str) -> tuple[int | None, str]:
    """`[rank3]: text` -> (3, "text"): the launcher-prefix layer (extract/prefix.py) without host names.

    The scanner strips the layers before extractors run; extractors call this
    too so that a line fed to them directly reads the same.
    """
    if line is _prefix.LAST_SETTLED[0]:  # a body the scanner proved settled: no layer (extract/prefix.py), no call
        return None, line
    p = split_prefixes(line)
    return p.rank, p.body


def clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _DETAIL_CLIP else text[: _DETAIL_CLIP - 3] + "..."


def recent(state: dict[str, object], key: str) -> dict[object, int]:
    """A per-stream map `key -> line number last seen` kept in ctx.state."""
    table = state.get(key)
    if not isinstance(table, dict):
        table = {}
        state[key] = table
    return table


# --------------------------------------------------------------------------
# NCCL line anatomy
# --------------------------------------------------------------------------

# `host:pid:tid [dev] file.cc:123 NCCL WARN msg`; the source location is
# missing from older NCCL and from INFO lines, the host may be an FQDN, and
# NCCL_DEBUG_TIMESTAMP_FORMAT can put `[2026-11-02 10:03:07]` in front. NCCL up
# to 2.2 printed no `NCCL` after the source file (`[0] include/socket.h:311 WARN
# Socket creation failed : ...`, `[0] misc/ibvwrap.cu:61 WARN ...`). A net or tuner plugin logs through NCCL's
# logger with its own function in the file's place: a C function's name (`nccl_net_ofi_create_plugin:334 NCCL
# WARN`), or C++'s __PRETTY_FUNCTION__, its return type and arguments with spaces in them (aws-ofi-nccl 1.16's
# tuner: `ncclResult_t nccl_ofi_tuner_init_v1(size_t, size_t, ncclDebugLogger_t):270 NCCL WARN`, aws/aws-ofi-nccl
# #982); tried last, where neither other form fits, so NCCL's own lines never pay for it. NCCL 2.30.7 puts the
# function that warned after the line (src/debug.cc: `[%d] %s:%d (%s) NCCL WARN %s`, C++'s __func__: `ncclIbTest`,
# `operator()` in a lambda): `transport/net_ib/p2p.cc:854 (ncclIbTest) NCCL WARN`, the file still the WARN's source.
# Libraries that print the same lines with their own word where NCCL's stands (`MSCCLPP WARN`, `CCOM WARN`) are
# catalog/transport.yaml `nccl_forks`: every reader here takes a line of any of their tags (_TAGS) as NCCL's.
PRINTERS: Final[tuple[NcclFork, ...]] = nccl_forks()
_BY_TAG: Final[Mapping[str, NcclFork]] = {row.tag: row for row in PRINTERS}
_TAGS: Final = "(?:" + "|".join(re.escape(row.tag) for row in PRINTERS) + ")"
# The words of a WARN line (`NCCL WARN`, `CCOM WARN`, ...): the prefilter's, and the bare WARN's anchor.
WARN_WORDS: Final[tuple[str, ...]] = tuple(f"{row.tag} WARN" for row in PRINTERS)
_NCCL_HEAD = re.compile(
    r"(?:^|[\s\]:])(?P<host>[A-Za-z0-9][\w.\-]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] "
    rf"(?:(?P<src>\S+):\d+(?: \((?:[\w~]{{1,200}}|operator\(\))\))? (?P<tag>{_TAGS}) |(?P<tag_b>{_TAGS}) "
    r"|(?P<old>[\w./\-]+\.(?:cu|h|cc)):\d+ "
    rf"|(?P<fn>[\w:<>*& ]{{1,200}}\([\w:<>*&, ]{{0,200}}\)(?: const)?):\d+ (?P<tag_f>{_TAGS}) )"
    r"(?P<level>WARN|INFO|ERROR|ABORT)\b ?(?P<msg>.*)$"
)
# A WARN without NCCL's header (posted alone, or by a library that prints no host: `pid:tid [dev] file.cc:N CCOM
# WARN`): the tag as a word of its own, never the end of another (`XMCCL WARN`).
_NCCL_WARN_BARE = re.compile(rf"\b{_TAGS} WARN (?P<msg>.*)$")
# Searched only in a line that holds this: the tags' alternation and its word boundary leave the pattern without
# the literal start the matcher skips ahead by (NCCL's one word had it), 40 times slower on a line without a WARN.
_WARN_WORD: Final = " WARN "


def _library(body: str, head: re.Match[str] | None) -> str | None:
    """The library that printed an NCCL-format line where it is not NCCL (catalog/transport.yaml `nccl_forks`):
    its tag in the header, else in a bare WARN; None for NCCL's own lines and for lines without a tag."""
    tag = None
    if head is not None:
        tag = head.group("tag") or head.group("tag_b") or head.group("tag_f")
    elif _WARN_WORD in body and (bare := _NCCL_WARN_BARE.search(body)) is not None:
        tag = bare.group(0).split(" ", 1)[0]
    row = _BY_TAG.get(tag) if tag is not None else None
    return row.library if row is not None and row is not PRINTERS[0] else None


def _nccl_head(body: str) -> tuple[re.Match[str] | None, str | None]:
    """(header match, WARN message) for an NCCL-printed line."""
    # Every header holds `] ` (its `[dev] `): a line without one holds none, and the search, which no literal start
    # speeds, tried every offset of it (each rank's `terminate called after throwing ...`: about 17 us, issue 27).
    m = _NCCL_HEAD.search(body) if "] " in body else None
    if m:
        return m, (m.group("msg") if m.group("level") == "WARN" else None)
    bare = _NCCL_WARN_BARE.search(body) if _WARN_WORD in body else None
    return None, (bare.group("msg") if bare else None)


def _place(draft: Draft, head: re.Match[str] | None) -> Draft:
    """Host and GPU from the NCCL header: `[dev]` is the local CUDA index, which
    on the clusters this tool targets is the GPU index."""
    if head is not None:
        draft.host = head.group("host")
        draft.device = f"gpu{head.group('dev')}"
    return draft


# --------------------------------------------------------------------------
# Classification shared by the NCCL error extractor and the Python one
# --------------------------------------------------------------------------

# Old (<=2.18): `with error 12, opcode 0, len 0, vendor err 129`; 2.19+:
# `with status=12 opcode=129 len=0 vendor err 129 (Recv) localGid ...`;
# newest: `with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV(128)
# vendor_err=129 ... hca mlx5_0`; NCCL 2.4 had no peer at all.
_IB_COMPLETION = re.compile(
    r"Got completion (?:from peer (?P<peer>\S+?)(?:<\d+>)? )?with "
    r"(?:status=(?:[^()=,]*?\()?(?P<status>\d+)\)?|error (?P<error>\d+)),?"
    r"(?:\s*opcode[= ](?:[^()=,]*?\()?(?P<opcode>\d+)\)?,?)?"
    r"(?:\s*len[= ](?P<len>\d+),?)?"
    r"(?:\s*vendor[ _]err[= ](?P<vendor>\d+))?"
    r"(?:.*?\bhca (?P<hca>[\w\-]+))?"
)
# An adapter's async event as each NCCL release words it (ibv_event_type_str(); catalog/transport.yaml says what
# each one means): `NET/IB : Got async event : port error` (to 2.22), `NET/IB : mlx5_0:1 Got async error event:
# port error` and `... async fatal event: local catastrophic error` / `... async fatal event on QP (0x..) qpn=..:
# <event>` (2.23-2.27), `... Got non-fatal async event: port error(10)` (2.28+), and its own `GID table changed`.
_IB_ASYNC = re.compile(
    r"NET/IB\s*:\s*(?:(?P<dev>[\w\-]+):(?P<port>\d+)\s+)?"
    r"(?:(?:Got (?:(?:non-fatal|error) )?async (?:error )?event|async fatal event(?: on (?:CQ|QP|SRQ)\b[^:]*)?)"
    r"\s*:\s*(?P<event>[^,\s]++(?:\s+[^,\s]++)*?)(?:\s++on (?:dev )?(?P<ondev>[\w\-]++))?\s*+$"
    r"|(?P<gid>GID table changed))"
)
# The event is taken word by word (it ends where a word does, before `on <dev>` or the end): a run of
# characters taken one at a time, each followed by a look at the spaces after it, was quadratic in a run of
# spaces (tests/test_regex_linear.py).
# `Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_3:1, curr state INIT, next state RTR`.
# Newer NCCL prints the errno number, older ones `failed with error <strerror>`.
_IBV_CALL = re.compile(
    r"Call to ibv_(?P<verb>\w+) failed with (?:(?P<err>\d+)\b|error (?P<text>[^,]+))[^,]*(?:, on dev (?P<dev>[\w\-]+))?"
)
# NCCL's socket layer failing to reach a peer, which it names: `Connect to 10.0.0.2<45763> failed : <strerror>`,
# `socketPollConnect poll() failed, ret 1, error <strerror>, revents 8, connect to 172.16.30.229:39953`.
# Since 2.19 the words also come after the function's name run into them (`socketPollConnect to 10.0.0.3<41877>
# failed with error Connection refused`) and as the retries' end (`socketStartConnect: connect to 10.0.0.3<41877>
# returned Connection refused, exceeded error retry count after 35 attempts`; os/linux.cc since 2.30).
_SOCKET_CONNECT = re.compile(
    r"(?:\b|(?<=[a-z]))[Cc]onnect to (?P<peer>[\w.\-]+|\[[0-9a-fA-F:.%\w]+\])(?:<\d+>|:\d+)?"
    r"(?: failed\b| returned\b|,|\s*$)"
)
# A peer dropping out, as NCCL's socket layer, gloo and PyTorch's store report it: one table, the
# traceback model's (extract/traceback.py).
PEER_LOSS = PEER_FAILURE_PATTERNS["nccl.remote_error"]
# Phrases that make a peer-loss phrase an NCCL one (a bare "Connection reset
# by peer" may come from a data loader or an HTTP client).
_NCCL_CONTEXT = ("NCCL", "nccl", "socketProgress", "Last error", "ProcessGroup")

# NCCL's words for its shared-memory segment (misc/shmutils.cc; since 2.2x os/linux.cc ncclOsShmOpen, which also
# says `Error: failed to create shared memory file /dev/shm/nccl-XXXXXX, error No space left on device (28)` where
# mkstemp(3) fails), with or without its WARN header (_SHM below).
SHM_SEGMENT_LITERALS: Final[tuple[str, ...]] = ("Error while creating shared memory segment",
                                                "failed to extend /dev/shm",
                                                "failed to create shared memory file")
# Literals the NCCL error extractor declares (every line it reads contains one).
NCCL_ERROR_LITERALS: Final[tuple[str, ...]] = (
    *WARN_WORDS,
    "NCCL error",
    # nccl-tests' check of an NCCL call (`Test NCCL failure common.cu:959 'internal error - please report this issue to
    # the NCCL developers / '`): ncclGetErrorString and ncclGetLastError of the result, as PyTorch's `NCCL error`
    "Test NCCL failure",
    # a glog CHECK of an NCCL call's result (Caffe's NCCL_CHECK, `CHECK_EQ(result, ncclSuccess) << " " <<
    # ncclGetErrorString(result)`: `F0118 ... parallel.cpp:135] Check failed: result == ncclSuccess (2 vs. 0)  unhandled
    # system error.`): NCCL's own result, as PyTorch's `NCCL error` report is
    "== ncclSuccess (",
    "Got completion ",
    "remote process exited or there was a network error",
    "communicator was aborted",
    "ncclCommAbort",
    "ncclRemoteError",
    "ncclSystemError",
    "ncclInternalError",
    "ncclUnhandledCudaError",
    "ncclInvalidArgument",
    "ncclInvalidUsage",
    "DistBackendError",
    # NCCL up to 2.2's WARN header, which had no `NCCL` (_NCCL_HEAD): `[0] include/socket.h:311 WARN`; its
    # sources' folders and top files right after the device's `]` (a CUDA kernel's own `Loss.cu:250:` stays out)
    "] include/",
    "] misc/",
    "] transport/",
    "] init.cu:",
    "] bootstrap.cu:",
    # its shared-memory segment's reports, also where they stand without the WARN header
    *SHM_SEGMENT_LITERALS,
)
# Watchdog progress lines (PyTorch >= 2.2): where each rank's queue stood when
# the watchdog fired, or when another rank's timeout asked it to dump.
STATUS_LITERALS: Final[tuple[str, ...]] = (
    "last enqueued NCCL work",
    "Last enqueued NCCL work",
    "last enqueued work:",
)
# Literals of the c10d watchdog extractor.
C10D_LITERALS: Final[tuple[str, ...]] = (
    "Watchdog caught collective operation timeout",
    "Some NCCL operations have failed or timed out",
    "watchdog got stuck",
    "Heartbeat monitor timed out",
    *STATUS_LITERALS,
)
# Hang reports of other c10d backends and debug modes (monitored barrier,
# gloo, desync debug), read by extract/hang.py: owned here too, so the
# Python-exception extractor never makes a hang's symptom an app.exception.
HANG_LITERALS: Final[tuple[str, ...]] = (
    "failed to pass monitoredBarrier",
    "successfully reached monitoredBarrier",
    "for recv operation to complete",
    "for send operation to complete",
    "are the lagging ranks",
    "but didn't finish collective #",
    "but didn't join collective #",
    "gathered or broadcasted by subset of ranks",
)


# classify_nccl is a pure function of the body (its tables are fixed once loaded): its memo key is the body.
# A WARN that one process prints ten thousand times (`NET/Socket : Call to connect returned Connection
# refused, retrying`) is classified once per distinct host:pid:tid [dev] header.
_CLASSIFIED: Memo[dict[str, dict[str, FieldValue]]] = Memo("nccl.classify")


def classify_nccl(body: str) -> dict[str, dict[str, FieldValue]]:
    """The nccl.* error kinds one line holds (timeouts excluded), kind -> fields.

    Stateless: the Python-exception extractor calls it to know which lines the
    NCCL extractors already own, so a line never counts twice. The answer is
    the caller's own (a copy of the memo's).
    """
    return {k: dict(v) for k, v in _classified(body).items()}


# Most lines the NCCL error reader is asked about hold none of its words (nccl_error_literals), and its answer is then
# "nothing" before anything else is read: remembered by the body's template too (its digits zeroed), only that answer,
# and only while no word holds a digit (memo.digit_free: then a body holds a word exactly when its template does).
# Each rank's watchdog line (`[Rank 86] Some NCCL operations have failed ...`) is one template, where the body memo
# above missed on every rank; so are each rank's NCCL INFO lines the reader is handed for its INFO words (`NCCL INFO
# TUNER/Plugin: ...`), whose header names the rank's host and pid: every reading of the words asks _without_words.
_QUIET: Memo[bool] = Memo("nccl.classify.zeroed")  # holds True only: a template without any of the words
_NOTHING: Final[dict[str, dict[str, FieldValue]]] = {}
_words_digit_free: list[bool] = []


def _without_words(body: str) -> bool:
    """Does `body` hold none of nccl_error_literals? With the fast paths on and every word digit-free, a template
    found without them is remembered (_QUIET) and each later copy answered from it (a 90-word test is 4-9 us a
    line, the template's lookup under 1)."""
    if not ON[0]:
        return not any(lit in body for lit in nccl_error_literals())
    if not _words_digit_free:
        _words_digit_free.append(digit_free(nccl_error_literals()))
    if not _words_digit_free[0]:
        return not any(lit in body for lit in nccl_error_literals())
    key = digits_zeroed(body)
    if _QUIET.find(key) is not None:
        return True
    if any(lit in body for lit in nccl_error_literals()):
        return False
    _QUIET.put(key, True)
    return True


def _classified(body: str) -> dict[str, dict[str, FieldValue]]:
    """classify_nccl's answer as the memo holds it: read it, never change it."""
    if not ON[0]:
        return _classify_nccl(body)
    got = _CLASSIFIED.find(body)
    if got is not None:
        return got
    if _without_words(body):
        return _NOTHING
    got = _classify_worded(body)
    _CLASSIFIED.put(body, got)
    return got


@lru_cache(maxsize=1)
def nccl_error_literals() -> tuple[str, ...]:
    """The NCCL error extractor's words: NCCL's and PyTorch's report words, the words of the local statuses
    of NCCL's socket layer and of its node's set-up (catalog/transport.yaml `local_statuses`, `nccl_node_warns`),
    which PyTorch quotes after `Last error:` without them, and NCCL's own names of its transports
    (catalog/platform.yaml), which its reports quoted the same way hold, and Habana HCCL's results' names and words
    (catalog/cuda.yaml `hccl_results`, codes.hccl_result_of). Kept: built from the catalog's tables
    (themselves kept), and asked again by classify_nccl for every line it reads (20 us a time)."""
    setup = {w for row in nccl_node_warns() if row.reading in ("setup", "platform") and not row.header
             for w in row.texts}
    return tuple(sorted(set(NCCL_ERROR_LITERALS) | set(local_literals("nccl")) | setup | set(nccl_transport_names())
                        | set(hccl_literals())))


def _node_warn(head: re.Match[str] | None, warn: str | None, body: str) -> NcclNodeWarn | None:
    """The row of catalog/transport.yaml `nccl_node_warns` whose words a line's WARN holds (a `benign` row's
    first: a fallback's line is never also a failure), or, for a `setup` row not tied to NCCL's header, the words
    of a line with no NCCL header at all (PyTorch quoting the WARN after `Last error:`); never an INFO line."""
    if warn is None and head is not None:
        return None  # an NCCL INFO line: a setting it reports, not a failure
    text = warn if warn is not None else body
    src = head.group("src") if head is not None and warn is not None else None
    if src is None and warn is not None and (bare := _BARE_SOURCE.search(body)) is not None:
        src = bare.group("src")  # `misc/argcheck.cc:39 NCCL WARN ...` posted without its host prefix
    hits = [row for row in nccl_node_warns()
            if any(t in text for t in row.texts) or (src is not None and src in row.files)]
    if warn is not None and (benign := next((r for r in hits if r.reading == "benign"), None)) is not None:
        return benign
    # a set-up row before an `internal` one: the settings a WARN names explain the check it failed (`No
    # algorithm/protocol available for function ... NCCL_ALGO was set to ...`); an `internal` row only in a WARN
    for readings in (("setup", "platform"), ("internal",)):
        row = next((r for r in hits if r.reading in readings and (warn is not None or not r.header)), None)
        if row is not None:
            return row
    return None


# NCCL's report of a CUDA call failing, in its two spellings: CUDACHECK's `Cuda failure 1 'invalid argument'` and
# the NVLS setup's own `CUDA error 401 'the operation ...'`.
_NCCL_CUDA_WORDS: Final = ("Cuda failure", "CUDA error")


def _named_transport(text: str) -> str | None:
    """The transport an NCCL message names in its own words (catalog/platform.yaml `nccl_transport_names`)."""
    return next((t for name, t in nccl_transport_names().items() if name in text), None)


def _report_head(body: str) -> tuple[re.Match[str] | None, str | None]:
    """_nccl_head, and NCCL's report of a CUDA failure in a transport it names (`Failed to bind NVLink SHARP (NVLS)
    Multicast memory ...: CUDA error 401 ...`) without its WARN header, quoted after `Last error:` or posted alone:
    the WARN's message all the same. Not under NCCL's INFO header: 2.27.3-2.28.9 say the same words at INFO and go
    on (src/transport/nvls.cc: `... CUDA error 801 'operation not supported'. Proceeding without NVLS support.`)."""
    head, warn = _nccl_head(body)
    if (warn is None and head is None and any(w in body for w in _NCCL_CUDA_WORDS)
            and _named_transport(body) is not None):
        warn = body
    return head, warn


def _classify_nccl(body: str) -> dict[str, dict[str, FieldValue]]:
    return {} if _without_words(body) else _classify_worded(body)


def _classify_worded(body: str) -> dict[str, dict[str, FieldValue]]:
    """_classify_nccl of a body that holds one of nccl_error_literals."""
    if "terminate called after throwing" in body and "what()" not in body:
        return {}  # the type alone; its what() line says what failed
    head, warn = _report_head(body)
    detail = clip(warn if warn is not None else body)
    node = _node_warn(head, warn, body)
    if node is not None and node.reading == "benign":
        return {}  # a fallback NCCL takes and goes on from, or the announcement of the next line
    found: dict[str, dict[str, FieldValue]] = {}

    ae = _IB_ASYNC.search(body) if "NET/IB" in body else None
    event = async_event_of(ae.group("event") or ae.group("gid")) if ae else None
    if ae is not None and event is not None:
        dev = ae.group("dev") or ae.group("ondev")
        out = {d.kind: d.fields for d in async_drafts(event, dev, ae.group("port"), detail, None, None)}
        if "nccl.error" in out:
            out["nccl.error"].update(_where_in_nccl(head, warn, body))
        return out
    sock = _SOCKET_CONNECT.search(warn) if warn is not None else None
    peer = socket_peer_status(warn) if sock is not None and warn is not None else None
    if sock is not None and peer is not None:
        # The peer could not be reached: it may be gone, or the path to it; a symptom, with the peer it names.
        fields: dict[str, FieldValue] = {"detail": detail, "stack": "nccl", "peer_status": peer.name,
                                         "peer": sock.group("peer")}
        fields.update(_where_in_nccl(head, warn, body))
        return {"nccl.remote_error": fields}
    vb = _IBV_CALL.search(body)
    if vb:
        name = _errno.errorcode.get(int(vb.group("err"))) if vb.group("err") else errno_of(vb.group("text"))
        if verbs_path_errno(vb.group("verb"), name):
            # An ibverbs call whose errno says the address does not reach the peer (extract/verbs.py): on QP setup
            # (ibv_modify_qp INIT -> RTR) a RoCE route, or a GID index whose entry is empty or has no net device.
            return {"net.ib_verbs_error": {"verb": vb.group("verb"), "errno": name, "dev": vb.group("dev") or "",
                                           "detail": detail}}
    ib = _IB_COMPLETION.search(body)
    if ib:
        status = ib.group("status") or ib.group("error")
        ib_fields: dict[str, FieldValue] = {
            "status": int(status),
            "peer": ib.group("peer") or "unknown",
        }
        wc = ib_wc_status_table().get(int(status))
        if wc is not None:
            ib_fields["status_name"] = wc.name
            ib_fields["status_class"] = wc.wc_class
        if ib.group("vendor"):
            ib_fields["vendor_err"] = int(ib.group("vendor"))
        if ib.group("opcode"):
            ib_fields["opcode"] = int(ib.group("opcode"))
        if ib.group("hca"):
            ib_fields["hca"] = ib.group("hca")
        found["nccl.ib_completion_error"] = ib_fields
        if warn is not None:
            # NCCL's own completion WARN is one fact; the remote error PyTorch
            # raises from it is reported on its own line.
            return found

    if "communicator was aborted" in body or "ncclCommAbort" in body:
        found["nccl.communicator_aborted"] = {"detail": detail}

    result = nccl_result_of(body)
    peer_loss = PEER_LOSS.search(body) is not None and (warn is not None or any(c in body for c in _NCCL_CONTEXT))
    local = local_status("nccl", warn if warn is not None else body)
    local_name = local.name if local is not None else node.name if node is not None else None
    if local is None and node is not None and node.reading == "platform":
        # A service of the node's platform under NCCL is not working (the IMEX domain of a multi-node NVLink
        # system): the node's, not the job's set-up (rule node-mnnvl-unavailable reads the status).
        fields = {"detail": detail, "local_status": node.name}
        fields.update(_where_in_nccl(head, warn, body))
        fields.pop("setup", None)
        fields.pop("limit", None)
        found["nccl.error"] = fields
    elif local is None and node is not None and node.reading == "internal":
        # A consistency check of NCCL's own failed (its rings, its trees, its schedule: ncclInternalError) with
        # nothing of the node's or the job's settings named: NCCL's defect, or ranks whose NCCL builds computed
        # another topology (catalog/transport.yaml: the symptom names the check; no rule makes it a cause).
        fields = {"detail": detail, "local_status": node.name, "internal": True}
        fields.update(_where_in_nccl(head, warn, body))
        fields.pop("setup", None)
        fields.pop("limit", None)
        found["nccl.error"] = fields
    elif local_name is not None:
        # The node, as the job set it up, has no interface of the name or kind asked, or cannot give NCCL the
        # topology, GPUs or network it needs (`nccl_node_warns`): the job's set-up, whatever result PyTorch wraps
        # it in; also where PyTorch quotes the WARN after `Last error:`.
        fields = {"detail": detail, "setup": True, "local_status": local_name}
        fields.update(_where_in_nccl(head, warn, body))
        found["nccl.error"] = fields
    elif result == "ncclRemoteError" or peer_loss:
        found["nccl.remote_error"] = {"detail": detail}
    elif not found and (warn is not None or result is not None or "NCCL error" in body or "DistBackendError:" in body
                       or "Test NCCL failure" in body or "== ncclSuccess (" in body):
        fields = {"detail": detail}
        if result is not None:
            fields["nccl_result"] = result
        fields.update(_where_in_nccl(head, warn, body))
        found["nccl.error"] = fields
    elif not found and result is None and (hccl := hccl_result_of(body)) is not None:
        # Habana's HCCL reporting a call's result (catalog/cuda.yaml `hccl_results`): the collective library failed,
        # as NCCL's result says, a peer's where the result is a peer's (HCCL's program results stay its symptom too:
        # no rule of the job's set-up reads HCCL's `invalid usage`)
        whose = collective_result(body)
        kind = "nccl.remote_error" if whose is not None and whose.whose == "peer" else "nccl.error"
        found[kind] = {"detail": detail} if kind == "nccl.remote_error" else {
            "detail": detail, "nccl_result": hccl, "library": "hccl"}
    return found


def _where_in_nccl(head: re.Match[str] | None, warn: str | None, body: str) -> dict[str, FieldValue]:
    """The NCCL source file and transport a WARN came from (catalog/platform.yaml), and the
    CUDA error class of a `Cuda failure` it reports: `transport/nvls.cc` + `invalid argument`
    is NVLink SHARP setup failing, a platform state, not a communication error."""
    out: dict[str, FieldValue] = {}
    src = head.group("src") if head is not None else None
    if src is None and warn is not None:
        bare = _BARE_SOURCE.search(body)  # `misc/ibvwrap.cc:288 NCCL WARN ...` posted without its host prefix
        src = bare.group("src") if bare else None
    if src:
        out["nccl_source"] = src
        transport = _transport_of(src)
        if transport is not None:
            out["transport"] = transport
    if "transport" not in out and warn is not None and (named := _named_transport(warn)) is not None:
        # no source file, or one that names no transport (aws-ofi-nccl's functions outside its nccl_net_ofi
        # prefix: `ofi_fabric_result nccl_ofi_ofiutils_fabric_create(fi_info*):233 NCCL WARN NET/OFI ...`): the
        # transport as the message names it
        out["transport"] = named
    cuda = warn is not None and any(w in warn for w in _NCCL_CUDA_WORDS)
    if cuda and warn is not None:
        err = cuda_error_of(warn)
        if err is not None:
            out["cuda_class"] = err.cls
    if warn is not None:
        name = errno_of(warn)
        if name is not None:
            out["errno"] = name
            if not cuda and setup_errno(warn, transport=True) is not None and read_completion(warn) is None:
                # An errno of the job's set-up (catalog/exceptions.yaml): a port held, an address family the
                # node lacks, memory it may not pin, an argument of its configuration. A CUDA error's words
                # (`Cuda failure 'invalid argument'`) are the CUDA table's, never an errno's; a status of the
                # transports' table on the line (an address vector insert that failed, `RC: Invalid argument`)
                # says what failed, the errno it returned does not.
                out["setup"] = True
                limit = errno_limit(name)
                if limit is not None:
                    out["limit"] = limit  # a limit of the job's processes: open files, memory it may not pin
    return out


_BARE_SOURCE = re.compile(
    rf"(?:^|\s)(?P<src>[\w./\-]+\.(?:cc|cu|c|h)):\d+(?: \((?:[\w~]{{1,200}}|operator\(\))\))? {_TAGS} WARN\b")


def _transport_of(src: str) -> str | None:
    """The transport a source file belongs to: by name, by path suffix, or by a `prefix*` entry."""
    table = nccl_transports()
    if src in table:
        return table[src]
    for file, name in table.items():
        if file.endswith("*"):
            if src.startswith(file[:-1]) or ("/" + file[:-1]) in src:
                return name
        elif src.endswith("/" + file):
            return name
    return None


def nccl_owns(body: str) -> bool:
    """True when an NCCL extractor reads this line (any nccl.* kind)."""
    return (
        any(lit in body for lit in C10D_LITERALS)
        or any(lit in body for lit in HANG_LITERALS)
        or bool(_classified(body))
    )


# --------------------------------------------------------------------------
# c10d watchdog: nccl.timeout
# --------------------------------------------------------------------------

_SEQ = re.compile(r"SeqNum=(\d+)")
_OP = re.compile(r"OpType=(\w+)")
_NUMEL_IN = re.compile(r"NumelIn=(\d+)")
_NUMEL_OUT = re.compile(r"NumelOut=(\d+)")
# `[PG ID 0 PG GUID 0(default_pg) Rank 7]` (2.4+; the GUID is the same on every
# rank, and may be a hash), `[PG 1 Rank 0]`, `[PG 0 (default_pg) Rank 12]` (2.3).
_PG = re.compile(r"\[PG ID (?P<id>\d+) PG GUID (?P<guid>[^\s(\]]+)(?:\((?P<name>[^)]*)\))?"
                 r"|\[PG (?P<id2>\d+)(?: \((?P<name2>[^)]*)\))? Rank")
_AT_WORK = re.compile(r"(?:detected by watchdog at work(?: sequence id)?|Timeout at NCCL work): (\d+)")
_LAST_ENQ = re.compile(r"[Ll]ast enqueued (?:NCCL )?work: (\d+)")
_LAST_DONE = re.compile(r"last completed (?:NCCL )?work: (\d+)")
_DUMP_FROM = re.compile(r"dump signal due to a collective timeout from\s+(?:rank (\d+)|(this local rank))")
_TIMEOUT = re.compile(r"Timeout\(ms\)=(\d+)")
_RAN = re.compile(r"ran for (\d+) milliseconds")
_MSG_RANK = re.compile(r"\bRank (\d+)\]")
_STUCK_SECONDS = re.compile(r"watchdog got stuck for (\d+) seconds")
# Lines a "Some NCCL operations have failed or timed out" may trail and still
# be the same failure (the watchdog prints the pair back to back).
_FOLLOWUP_LINES: Final = 10
NCCL_MARK: Final = "ff.nccl.last_event"  # rank -> line of the last nccl.* event
_ANY: Final = "*"  # key for "any rank" in the per-stream tables


def mark_failure(ctx: LineContext, rank: int | None) -> None:
    """Note that the stream reported a collective's failure at this line (an nccl.* event, whichever extractor read
    it: NCCL's own lines, or a traceback's exception that names a peer's loss): what the rank does after it, an abort
    of its own among them (extract/signals.py), is its reaction."""
    marks = recent(ctx.state, NCCL_MARK)
    marks[rank] = ctx.lineno
    marks[_ANY] = ctx.lineno


def marked_before(ctx: LineContext, rank: int | None) -> bool:
    """The stream reported a collective's failure or a peer's loss (mark_failure) within the few lines before this
    one: what the rank reports right after is its reaction to it."""
    last = _last_mark(ctx, rank)
    return last is not None and ctx.lineno - last <= _FOLLOWUP_LINES


def _last_mark(ctx: LineContext, rank: int | None) -> int | None:
    """A line with no rank of its own (pre-2.2 PyTorch in an unlabelled file)
    follows whatever the stream reported last."""
    return recent(ctx.state, NCCL_MARK).get(rank if rank is not None else _ANY)


def _present(**kw: FieldValue) -> dict[str, FieldValue]:
    """The fields a line gave (None: the line did not say)."""
    return {k: v for k, v in kw.items() if v is not None}


def _int(m: re.Match[str] | None) -> int | None:
    return int(m.group(1)) if m else None


def _pg_fields(body: str) -> dict[str, FieldValue]:
    """`pg` (the GUID, or the id where no GUID is printed) and `pg_name`."""
    m = _PG.search(body)
    if not m:
        return {}
    out: dict[str, FieldValue] = {"pg": m.group("guid") or m.group("id2") or m.group("id")}
    name = m.group("name") or m.group("name2")
    if name:
        out["pg_name"] = name
    return out


# The watchdog's lines, read where their patterns match (memo.Spans): every rank prints each of them, alike but for
# its rank, sequence numbers and sizes, so a line's template is searched once and each copy's own digits are read at
# the same places. Every pattern here is digit-blind (memo.digit_blind, checked at the first use): what they find,
# and where, is the template's. The state (marks, repeats seen) is read per line as before.
_TIMEOUT_SPANS: Final = Spans("nccl.timeout.spans", (_SEQ, _OP, _TIMEOUT, _RAN, _NUMEL_IN, _NUMEL_OUT, _PG))
_STATUS_SPANS: Final = Spans("nccl.status.spans", (_LAST_ENQ, _LAST_DONE, _AT_WORK, _DUMP_FROM, _PG))


def _num(body: str, found: Found) -> int | None:
    """_int of a Spans reading: its first group's number."""
    return None if found is None else int(body[found[1][0]:found[1][1]])


@lru_cache(maxsize=1)
def _pg_groups() -> tuple[int, int, int, int, int]:
    """The numbers of _PG's groups guid, id2, id, name, name2 (in a Spans reading's `regs`)."""
    g = _PG.groupindex
    return g["guid"], g["id2"], g["id"], g["name"], g["name2"]


def _pg_read(body: str, found: Found) -> dict[str, FieldValue]:
    """_pg_fields of a Spans reading of _PG."""
    if found is None:
        return {}
    guid, id2, id_, name, name2 = (value(body, found[i]) for i in _pg_groups())
    out: dict[str, FieldValue] = {"pg": guid or id2 or id_}
    pg_name = name or name2
    if pg_name:
        out["pg_name"] = pg_name
    return out


def _who(prefix_rank: int | None, ctx: LineContext, body: str) -> int | None:
    """The rank a repeat is keyed by: the line's prefix, the stream's rank, else
    the `[Rank N]` PyTorch writes into the message (the abort's `what():` is
    printed by the C++ runtime without the `[rankN]:` prefix)."""
    if prefix_rank is not None:
        return prefix_rank
    if ctx.rank is not None:
        return ctx.rank
    return _int(_MSG_RANK.search(body))


class C10dTimeoutExtractor:
    """ProcessGroupNCCL watchdog timeouts and heartbeat-monitor aborts."""

    name = "nccl.timeout"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "nccl.timeout": frozenset({"numel_in", "numel_out", "op", "pg", "pg_name", "ran_ms", "seq", "stuck",
            "timeout_ms"}),
        "nccl.watchdog_status": frozenset({"at_seq", "dump_signal", "from_rank", "last_completed",
            "last_enqueued", "pg", "pg_name", "self_timeout"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = C10D_LITERALS

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        who = _who(rank, ctx, body)
        ctx.claimed = True  # every line with these literals is one of the watchdog's, repeats included
        if "Watchdog caught collective operation timeout" in body:
            yield from self._timeout(body, rank, who, ctx)
        elif any(lit in body for lit in STATUS_LITERALS):
            yield from self._status(body, rank, who, ctx)
        elif "watchdog got stuck" in body or "Heartbeat monitor timed out" in body:
            yield from self._stuck(body, rank, who, ctx)
        elif "Some NCCL operations have failed or timed out" in body:
            # PyTorch <= 2.0 prints this after a "Watchdog caught" line and
            # also before raising a plain NCCL error: only a timeout whose
            # watchdog line is missing counts here, and a line that carries
            # the NCCL error itself belongs to the error extractor.
            if _classified(body):
                return
            last = _last_mark(ctx, who)
            if last is not None and ctx.lineno - last <= _FOLLOWUP_LINES:
                return
            mark_failure(ctx, who)
            yield Draft("nccl.timeout", {"stuck": False}, rank=rank)

    def _timeout(self, body: str, rank: int | None, who: int | None, ctx: LineContext) -> Iterator[Draft]:
        seq_f, op_f, timeout_f, ran_f, in_f, out_f, pg_f = _TIMEOUT_SPANS.of(body)
        seq = _num(body, seq_f)
        op = None if op_f is None else value(body, op_f[1])
        timeout_ms = _num(body, timeout_f)
        mark_failure(ctx, who)
        if seq is not None:
            # The abort's `what():` and Python's RuntimeError repeat the same
            # WorkNCCL: one collective timing out on one rank is one event.
            key = (who, seq, op, _num(body, in_f), timeout_ms)
            seen = recent(ctx.state, "ff.nccl.timeouts")
            if key in seen:
                return
            seen[key] = ctx.lineno
        fields: dict[str, FieldValue] = {"stuck": False, **_present(
            op=op, seq=seq, timeout_ms=timeout_ms, ran_ms=_num(body, ran_f),
            numel_in=_num(body, in_f), numel_out=_num(body, out_f))}
        fields.update(_pg_read(body, pg_f))
        yield Draft("nccl.timeout", fields, rank=rank)

    def _status(self, body: str, rank: int | None, who: int | None, ctx: LineContext) -> Iterator[Draft]:
        """`last enqueued NCCL work: X, last completed NCCL work: Y` lines: nccl.watchdog_status."""
        enq_f, done_f, at_f, dump, pg_f = _STATUS_SPANS.of(body)
        enq = _num(body, enq_f)
        done = _num(body, done_f)
        if enq is None and done is None:
            return
        at = _num(body, at_f)
        fields = _present(last_enqueued=enq, last_completed=done, at_seq=at)
        if dump is not None:
            fields["dump_signal"] = True
            if dump[1][0] >= 0:
                fields["from_rank"] = int(body[dump[1][0]:dump[1][1]])
            else:
                fields["self_timeout"] = True
        fields.update(_pg_read(body, pg_f))
        key = ("status", who, fields.get("pg"), at, enq, done)
        seen = recent(ctx.state, "ff.nccl.status")
        if key in seen:
            return
        seen[key] = ctx.lineno
        yield Draft("nccl.watchdog_status", fields, rank=rank)

    def _stuck(self, body: str, rank: int | None, who: int | None, ctx: LineContext) -> Iterator[Draft]:
        # 2.3 prints "Heartbeat monitor timed out!" then "watchdog got stuck";
        # 2.4+ only the latter. The monitor kills the process: once per rank.
        key = ("stuck", who)
        seen = recent(ctx.state, "ff.nccl.stuck")
        mark_failure(ctx, who)
        if key in seen:
            return
        seen[key] = ctx.lineno
        fields: dict[str, FieldValue] = {"stuck": True}
        seconds = _int(_STUCK_SECONDS.search(body))
        if seconds is not None:
            fields["timeout_ms"] = seconds * 1000
        fields.update(_pg_fields(body))
        yield Draft("nccl.timeout", fields, rank=rank)


# --------------------------------------------------------------------------
# NCCL errors: remote_error, communicator_aborted, ib_completion_error, error
# --------------------------------------------------------------------------

# NCCL's shared-memory transport failing to create or grow its segment in /dev/shm. Its own words for the
# segment (`Error while creating shared memory segment /dev/shm/nccl-X (size N)`, `failed to extend
# /dev/shm/nccl-X to N bytes`, misc/shmutils.cc) say so with or without the errno after them, and are often
# posted alone or quoted after PyTorch's `Last error:` without NCCL's header; the older calls name the errno.
# Attaching to a peer's segment that is gone (`Error while attaching to shared memory segment`) is not one: the
# segment was made, the peer's side of it is what failed.
_SHM = re.compile(r"Error while creating shared memory segment|failed to extend /dev/shm"
                  r"|failed to create shared memory file"
                  r"|(?:posix_fallocate failed|unable to allocate shared memory|shm_open).*?(?:No space left on"
                  r" device|Cannot allocate memory|\(28\)|\(12\))|(?:No space left on device|\(28\)).*?/dev/shm")


# PyTorch's report of one NCCL failure spans adjacent lines (`NCCL error in:`,
# `ncclRemoteError: ...`, `Last error:`, the quoted WARN) and the abort repeats
# it as `what():` after the C++ frames: a repeat of a kind on the same rank
# this close to the previous one is the same report.
_REPORT_LINES: Final = 60


# The header and WARN message of a line, and whether a WARN reports /dev/shm: pure functions of their text,
# remembered by it (a match object is read only).
_ErrorRead = tuple[dict[str, dict[str, FieldValue]], re.Match[str] | None, str | None]
_READS: Memo[_ErrorRead] = Memo("nccl.read")
_SHMS: Memo[bool] = Memo("nccl.shm")


def _read_error_uncached(body: str) -> _ErrorRead:
    found = _classify_nccl(body)
    if not found:
        return found, None, None
    head, warn = _report_head(body)
    return found, head, warn


def _read_error(body: str) -> _ErrorRead:
    """classify_nccl's answer and, for a line it classifies, the NCCL header and WARN message."""
    if not ON[0]:
        return _read_error_uncached(body)
    return _READS.get(body, lambda: _read_error_uncached(body))


def _shm_in(warn: str) -> bool:
    if not ON[0]:
        return _SHM.search(warn) is not None
    return _SHMS.get(warn, lambda: _SHM.search(warn) is not None)


_ANNOUNCED = "ff.nccl.announced"


def _announced(body: str) -> NcclNodeWarn | None:
    """The `announced` row of catalog/transport.yaml `nccl_node_warns` whose words an NCCL INFO line holds."""
    rows = [row for row in nccl_node_warns() if row.announced and any(t in body for t in row.texts)]
    if not rows:
        return None
    head, warn = _nccl_head(body)
    return rows[0] if head is not None and warn is None else None


# _no_failure's answers by a line's template (digits_zeroed), while every pattern it reads is digit-blind
# (memo.digit_blind) and for a template that holds none of its words with a digit, zeroed (_digit_words_zeroed): then
# a line holds each of its words exactly where its template does, and its patterns match its template at the same
# places, so the answer is the template's. Each rank's `NCCL INFO TUNER/Plugin: ...` lines, alike but for the host,
# pid and device in their header, are read once (issue 27).
_NO_FAILURE: Memo[NcclNodeWarn | bool] = Memo("nccl.no_failure.zeroed")
_NO_FAILURE_GUARD: list[tuple[str, ...] | None] = []


def _digit_words_zeroed() -> tuple[str, ...] | None:
    """The words _no_failure reads (the error words, the rows' texts and files of `nccl_node_warns`, the starts and
    words of `nccl_info_lines`) that hold a digit, with their digits made `0`; None where a pattern it reads is not
    digit-blind (then nothing is remembered)."""
    if not all(digit_blind(p) for p in (_NCCL_HEAD, _NCCL_WARN_BARE, _BARE_SOURCE, _IB_ASYNC)):
        return None
    starts, texts = _info_words()
    words = (*nccl_error_literals(), *starts, *texts, *(w for row in nccl_node_warns() for w in (*row.texts,
                                                                                                 *row.files)))
    return tuple(sorted({digits_zeroed(w) for w in words if not digit_free((w,))}))


def _no_failure(body: str) -> NcclNodeWarn | bool:
    """How NcclErrorExtractor reads a line that holds none of NCCL's error kinds and no /dev/shm report: the
    `announced` row of an NCCL release's INFO that says what will fail (the stream's later errors are the row's),
    True where the line is understood as no failure (a routine adapter event, a `benign` WARN, an INFO line of
    `nccl_info_lines`: claimed), False where it is left to the others. One decision for extract and quiet_claim;
    remembered by the line's template where the fast paths are on (_NO_FAILURE)."""
    if not ON[0]:
        return _no_failure_read(body)
    if not _NO_FAILURE_GUARD:
        _NO_FAILURE_GUARD.append(_digit_words_zeroed())
    guard = _NO_FAILURE_GUARD[0]
    if guard is None:
        return _no_failure_read(body)
    key = digits_zeroed(body)
    got = _NO_FAILURE.find(key)
    if got is None:
        got = _no_failure_read(body)
        if not any(w in key for w in guard):
            _NO_FAILURE.put(key, got)
    return got


def _no_failure_read(body: str) -> NcclNodeWarn | bool:
    """_no_failure's reading of `body` itself."""
    if (row := _announced(body)) is not None:
        return row
    if "NET/IB" in body and _IB_ASYNC.search(body):
        return True  # a routine adapter event (a GID table change): understood, nothing failed
    # a fallback NCCL goes on from (catalog/transport.yaml `nccl_node_warns`), or an INFO line of a failure's
    # aftermath or a fallback (`nccl_info_lines`)
    return _benign_warn(body) or _understood_info(body)


def _shm_report(body: str, warn: str | None) -> str | None:
    """The WARN message of a line that reports NCCL's /dev/shm segment failing (_shm_in), or None: the WARN a header
    gave, or the whole line where NCCL's segment words stand without one (posted alone, or quoted after `Last
    error:`)."""
    if warn is None and any(lit in body for lit in SHM_SEGMENT_LITERALS):
        warn = body
    return warn if warn is not None and _shm_in(warn) else None


def _benign_warn(body: str) -> bool:
    """Whether the line is an NCCL WARN whose words are a `benign` row's: understood, no event."""
    if _without_words(body):
        return False
    head, warn = _nccl_head(body)
    row = _node_warn(head, warn, body) if warn is not None else None
    return row is not None and row.reading == "benign"


@lru_cache(maxsize=1)
def _info_words() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(message starts, words) of NCCL's INFO lines that are no failure of their own: catalog/transport.yaml
    `nccl_info_lines`, and the `benign` rows of `nccl_node_warns` (a fallback whatever the level NCCL says it at)."""
    starts = tuple(w for row in nccl_info_lines() for w in row.starts)
    texts = tuple(w for row in nccl_info_lines() for w in row.texts)
    benign = tuple(w for row in nccl_node_warns() if row.reading == "benign" for w in row.texts)
    return starts, texts + benign


@lru_cache(maxsize=1)
def info_literals() -> tuple[str, ...]:
    """The prefilter words of those INFO lines: each start after every printer's `TAG INFO ` (a start alone, `RAS `,
    is too plain a word to search every line for), and the words."""
    starts, texts = _info_words()
    return tuple(sorted({f"{row.tag} INFO {s}" for row in PRINTERS for s in starts} | set(texts)))


def _understood_info(body: str) -> bool:
    """Is the line an INFO line of NCCL's (or a fork's) whose message a row of `nccl_info_lines` or a `benign` row of
    `nccl_node_warns` names: a failure's aftermath or a fallback, understood, no event (never unrecognized)?"""
    starts, texts = _info_words()
    head, warn = _nccl_head(body)
    if head is None or warn is not None or head.group("level") != "INFO":
        return False
    msg = head.group("msg")
    return msg.startswith(starts) or any(t in msg for t in texts)


class NcclErrorExtractor:
    """NCCL WARN lines and PyTorch's NCCL error reports."""

    name = "nccl.error"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"errno", "exc_type", "message", "shm", "limit", "library"}),
        "nccl.communicator_aborted": frozenset({"detail", "library"}),
        "nccl.error": frozenset({"async_event", "detail", "nccl_result", "cuda_class", "errno", "nccl_source",
                                 "transport", "setup", "local_status", "limit", "library", "internal"}),
        "nccl.ib_completion_error": frozenset({"hca", "opcode", "peer", "status", "vendor_err", "status_class",
                                               "status_name", "library"}),
        "nccl.remote_error": frozenset({"detail", "stack", "peer_status", "peer", "errno", "nccl_source",
                                        "transport", "library"}),
        "net.ib_verbs_error": frozenset({"detail", "dev", "errno", "verb", "library"}),
        "net.link": frozenset({"async_event", "detail", "iface", "port", "state", "library"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})
    def __init__(self) -> None:
        # ... and the words of NCCL's INFO lines it claims as no failure (catalog/transport.yaml `nccl_info_lines`)
        self.literals: tuple[str, ...] = tuple(dict.fromkeys((*nccl_error_literals(), *info_literals())))
        # Such a line, where it is one (_no_failure True), is claimed and read to nothing whatever the stream holds:
        # the scanner reads it without its candidate where no other reader's words are on it (collect/scan.py
        # Extraction.read_quiet; each rank's `NCCL INFO TUNER/Plugin: Using internal tuner plugin.`, issue 27).
        self.quiet_literals: tuple[str, ...] = info_literals()

    def quiet_claim(self, body: str, state: dict[str, object], rank: int | None) -> bool:
        """Whether extract(body, ctx) claims the line, gives nothing and leaves `ctx.state` (`state`) as it is,
        whatever it holds: a line of none of NCCL's error kinds and no /dev/shm report that _no_failure understands
        (no `announced` row: that one is noted in the state). False: nothing done."""
        body = split_rank_prefix(body)[1]
        found, _, warn = _read_error(body)
        return not found and _shm_report(body, warn) is None and _no_failure(body) is True

    @staticmethod
    def _shm(rank: int | None, body: str, head: re.Match[str] | None, warn: str,
             ctx: LineContext) -> Iterator[Draft]:
        """NCCL could not make or size its shared-memory segment: the container's /dev/shm is too small for
        the job (or the host will not register it), a configuration of the workload, not a communication
        failure. One report per rank however many of its lines say it."""
        shm_seen = recent(ctx.state, "ff.nccl.shm")
        if _who(rank, ctx, body) in shm_seen:
            ctx.claimed = True
            return
        shm_seen[_who(rank, ctx, body)] = ctx.lineno
        errno = ("ENOSPC" if "No space left" in warn or "(28)" in warn else
                 "ENOMEM" if "Cannot allocate memory" in warn or "(12)" in warn else None)
        library = _library(body, head)
        fields: dict[str, FieldValue] = {"exc_type": f"{library or PRINTERS[0].library} shared memory",
                                         "message": clip(warn), "shm": True, "limit": "shm"}
        if errno is not None:
            fields["errno"] = errno
        if library is not None:
            fields["library"] = library
        yield _place(Draft("app.exception", fields, rank=rank), head)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        found, head, warn = _read_error(body)  # read only: each draft copies its fields
        if (shm := _shm_report(body, warn)) is not None:
            yield from self._shm(rank, body, head, shm, ctx)
            return
        if not found:
            reading = _no_failure(body)
            if reading is not False:
                if reading is not True:
                    # an NCCL release's INFO that says what will fail (catalog/transport.yaml `announced`): the
                    # stream's later NCCL errors are the row's, the line itself no event
                    recent(ctx.state, _ANNOUNCED)[reading.name] = ctx.lineno
                ctx.claimed = True
            return
        who = _who(rank, ctx, body)
        library = _library(body, head)  # a fork's line (catalog/transport.yaml `nccl_forks`): its events name it
        last = recent(ctx.state, "ff.nccl.report")
        ib_seen = recent(ctx.state, "ff.nccl.ib")
        mark_failure(ctx, who)
        for kind, fields in found.items():
            if kind == "nccl.ib_completion_error":
                # Stream-wide: a quote is never worth more than the WARN it quotes.
                key = (fields.get("peer"), fields.get("status"), fields.get("vendor_err"), fields.get("opcode"))
                if warn is None and key in ib_seen:
                    ctx.claimed = True
                    continue  # PyTorch quoting the WARN NCCL already printed
                ib_seen[key] = ctx.lineno
            elif warn is None:
                # A continuation line with no rank at all (`ncclRemoteError: ...`
                # in an unlabelled file) belongs to the stream's last report; the
                # quoted WARN that says the report was the job's set-up is news to it.
                said = (kind, bool(fields.get("setup")))
                prev = last.get((said, who if who is not None else _ANY))
                last[(said, who)] = ctx.lineno
                last[(said, _ANY)] = ctx.lineno
                if prev is not None and ctx.lineno - prev <= _REPORT_LINES:
                    ctx.claimed = True
                    continue
            draft = _place(Draft(kind, dict(fields), rank=rank), head)
            if library is not None:
                draft.fields["library"] = library
            announced = recent(ctx.state, _ANNOUNCED)
            if kind == "nccl.error" and announced and "local_status" not in fields:
                # the failure an INFO line of this stream announced (the first such row it saw)
                draft.fields["setup"] = True
                draft.fields["local_status"] = str(min(announced, key=lambda n: (announced[n], str(n))))
            if kind == "net.link" and fields.get("iface") != "ib":
                draft.device = str(fields["iface"])  # the adapter whose port went down, not the rank's GPU
            yield draft


# --------------------------------------------------------------------------
# net.address: which node owns which address (maps IB peers to nodes)
# --------------------------------------------------------------------------
# An address is a fact about the bundle, not an event of the failure: its draft (model.ADDRESS) is kept as an
# Address by the event store (collect/events.py), never as an event, and no rule reads it.

_ADDRESS = (
    re.compile(r"Bootstrap ?: Using (?P<iface>[^\s:\[\]]+):(?P<addr>[^\s<]+)<\d+>"),
    re.compile(r"; OOB (?P<iface>[^\s:\[\]]+):(?P<addr>[^\s<]+)<\d+>"),
    re.compile(r"NET/Socket ?: Using \[\d+\](?P<iface>[^\s:\[\]]+):(?P<addr>[^\s<]+)<\d+>"),
    # iproute2's `ip addr` listing an IPv4 address of a container's or a VM's bridge (its label last: `    inet
    # 172.17.0.1/16 brd 172.17.255.255 scope global docker0`), read only for a bridge row of catalog/transport.yaml
    # `host_local_addresses` (engine/normalise.py host_local: the job's own lines naming the address on a bridge)
    re.compile(r"^\s*inet (?P<addr>\d{1,3}(?:\.\d{1,3}){3})/\d{1,2}\b[^\n]{0,120}? scope global (?:[a-z]+ )*"
               r"(?P<iface>[\w.\-]{1,30})\s*$"),
)
_IP_ADDR = _ADDRESS[-1]


class NcclAddressExtractor:
    """NCCL INFO lines naming the bootstrap / out-of-band interface and address, and `ip addr`'s of a bridge."""

    name = "net.address"
    # No event kind: its drafts (kind model.ADDRESS, fields `addr` and `iface`) are addresses (see above).
    emits: Mapping[str, frozenset[str]] = {}
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = ("Bootstrap : Using", "Bootstrap: Using", "; OOB ", "NET/Socket : Using",
                                 " scope global ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        for rx in _ADDRESS:
            m = rx.search(body)
            if m and rx is _IP_ADDR and bridge_kind(m.group("iface")) is None:
                return  # another interface's address: no bridge's, and no fact this reads
            if m:
                head, _ = _nccl_head(body)
                draft = Draft(ADDRESS, {"addr": m.group("addr"), "iface": m.group("iface")}, rank=rank)
                yield _place(draft, head)
                return


# --------------------------------------------------------------------------
# The RDMA ports a program said its traffic runs on
# --------------------------------------------------------------------------

# NCCL's IB transport once it has its devices (src/transport/net_ib.cc ncclIbInitDevices: `NET/IB : Using%s %s; OOB
# %s:%s`, the list one ` [%d]%s:%d/%s` per device, its name, port and link layer; a merged NIC's names joined by `+`;
# RCCL's and the forks' the same). NCCL keeps only ports whose state is ACTIVE (and those NCCL_IB_HCA selects): the list
# is the ports its traffic can take, and no port down when it started is in it.
_NCCL_IB_USING = re.compile(r"NET/IB ?: Using(?: \[\d{1,4}\][\w\-+]{1,255}:\d{1,3}/[A-Za-z]{1,8}(?:/SHARP)?){1,64}")
_NCCL_IB_DEV = re.compile(r"\[\d{1,4}\](?P<dev>[\w\-+]{1,255}):(?P<port>\d{1,3})/")
# perftest's banner (perftest_parameters.c ctx_print_test_info: ` Dual-port       : %s\t\tDevice         : %s\n`, the
# device its -d option or the first one found gave; older releases' `Device : %s`): the device the test ran on.
_PERFTEST_DEVICE = re.compile(
    r"^\s*Dual-port\s{0,16}: (?:ON|OFF)\s{1,32}Device\s{0,16}: (?P<dev>[A-Za-z0-9][\w\-]{0,63})\s*$")


# NCCL's device list (_NCCL_IB_USING's match) -> its ports as the fact's `ports` field, remembered by the list's exact
# text (memo.py's first key: a pure step's own input): every rank of a job prints its node's list, and a job's nodes
# have the same NICs (issue 27's shape a: 16k ranks, one list, each read in 8 regex matches and 8 joins before).
_PORTS: Memo[str] = Memo("nccl.ib_ports")


def _ib_ports_uncached(listed: str) -> str:
    return " ".join(f"{dev}:{d.group('port')}" for d in _NCCL_IB_DEV.finditer(listed)
                    for dev in d.group("dev").split("+") if dev)


def _ib_ports(listed: str) -> str:
    """The ports of NCCL's `NET/IB : Using [0]mlx5_0:1/IB ...` list (_NCCL_IB_USING's match), joined by spaces: each
    device's name and port, a merged NIC's names each with the port, in order ("" where none)."""
    if not ON[0]:
        return _ib_ports_uncached(listed)
    return _PORTS.get(listed, lambda: _ib_ports_uncached(listed))


class PortsUsedExtractor:
    """The RDMA devices (and ports) a program of the job said its traffic runs on: NCCL's `NET/IB : Using [0]mlx5_0:1/IB
    ...` and perftest's banner `Device : mlx5_0`, as drafts of kind model.PORTS_USED with `ports` (`mlx5_0:1 mlx5_1`,
    a device without a port where the line names none) and `by`. A fact about the job, never an event (the event store
    keeps it beside them, once per node, host and ports: collect/events.py): engine/normalise.py `unused_ports` reads
    it to tell a snapshot's down port the job's traffic never took (a host's spare port) from one it did."""

    name = "transport.ports_used"
    # No event kind: its drafts (model.PORTS_USED, fields `ports` and `by`) are facts (see above).
    emits: Mapping[str, frozenset[str]] = {}
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = ("NET/IB : Using [", "NET/IB: Using [", "Dual-port")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        head, _ = _nccl_head(body)
        by = "nccl"
        m = _NCCL_IB_USING.search(body)
        if m is not None:
            ports = _ib_ports(m.group())
        else:
            m2 = _PERFTEST_DEVICE.match(body)
            if m2 is None:
                return
            ports = m2.group("dev")
            by = "perftest"
        if ports:
            ctx.claimed = True
            draft = _place(Draft(PORTS_USED, {"ports": ports, "by": by}, rank=rank), head)
            draft.device = None  # the ports are the fact, not the rank's GPU
            yield draft



# --------------------------------------------------------------------------
# nccl.net_ready: NCCL found a network for a communicator
# --------------------------------------------------------------------------

# NCCL's INFO line once a communicator has its network (src/init.cc, since 2.4: `NCCL INFO Using network Socket`,
# `... Using network IB`, `... Using network AWS Libfabric`): whatever net plugin failed before it, NCCL went on.
# (The network's name runs to the line's end, read greedily and stripped after: a lazy run before `\s*$` went back over
# every blank of a line padded with them, superlinear in its length.)
_NET_READY = re.compile(rf"\b{_TAGS} INFO Using network (?P<net>\S[^\r\n]{{0,80}})")
# Its words after the tag, and the longest tag: a match holds the words right after its tag, so it starts no earlier
# than the longest tag before their first occurrence; the search starts there (`\b` still reads the character
# before: `re` looks behind a start position), not at every offset before it (the tags' alternation has no literal
# start to skip ahead by).
_NET_READY_WORDS: Final = " INFO Using network "
_TAG_MOST: Final = max(len(row.tag) for row in PRINTERS)


def _net_ready(body: str) -> re.Match[str] | None:
    """_NET_READY.search(body), started where a match can first start."""
    at = body.find(_NET_READY_WORDS)
    return _NET_READY.search(body, max(0, at - _TAG_MOST)) if at >= 0 else None


class NcclNetReadyExtractor:
    """NCCL's INFO line that a communicator has its network (engine/normalise.py `net_found_after`: a net plugin's
    failure before it was a fallback; never a cause nor a symptom itself): drafts of kind model.NET_READY with
    `network` (and `library`, a fork's name, where the header names one), facts the event store keeps beside the
    events (collect/events.py)."""

    name = "nccl.net_ready"
    # No event kind: its drafts (model.NET_READY) are facts (see above).
    emits: Mapping[str, frozenset[str]] = {}
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = tuple(f"{row.tag} INFO Using network " for row in PRINTERS)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        m = _net_ready(body)
        if m and not body[m.end():].strip():  # the name is the rest of the line
            head, _ = _nccl_head(body)
            fields: dict[str, FieldValue] = {"network": m.group("net").rstrip()}
            if (library := _library(body, head)) is not None:
                fields["library"] = library
            yield _place(Draft(NET_READY, fields, rank=rank), head)


EXTRACTORS: tuple[LineExtractor, ...] = (
    C10dTimeoutExtractor(),
    NcclErrorExtractor(),
    NcclAddressExtractor(),
    PortsUsedExtractor(),
    NcclNetReadyExtractor(),
)
