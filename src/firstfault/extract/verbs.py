"""The transports' statuses in the words of the stacks other than NCCL: UCX, libibverbs programs, AWS EFA, MPI.

NCCL prints a failed completion as `Got completion from peer ... with status=12`
(extract/nccl.py reads that). The same facts reach a log in other words, and
which fact each wording stands for is data (catalog/transport.yaml):

- a work completion that failed. UCX over mlx5, behind its `[host:pid:tid:tid]`
  header:

      [compute001:31180:0:31180] ib_mlx5_log.c:143  Transport retry count exceeded
          on mlx5_0:1/RoCE (synd 0x15 vend 0x81 hw_synd 0/0)

  (the mlx5 syndrome decides when it is printed, else UCX's words), programs that
  call `ibv_wc_status_str()` ("transport retry counter exceeded") or name the
  `IBV_WC_*` constant, and libfabric's EFA provider (`err: 5, message: ... (15)`,
  its `prov_errno`, or the words its releases gave the status). A wording is only
  read on a line that also names a verbs device, queue pair or call (`mlx5_0`,
  `QP`, `ibv_`, `/RoCE`), or for EFA's, the EFA provider or the OFI plugin, so
  "remote access error" in an HTTP client's log means nothing here. The event is
  the same `nccl.ib_completion_error` the NCCL extractor emits (the rules read the
  completion status, not who printed it), with `via: verbs` and the `stack` whose
  numbering `status` is in;
- an event on the adapter or its port, as UCX logs it (`IB Async event on mlx5_0:
  port error on port 1`): the port going down is `net.link`, a queue pair's
  failure an `nccl.error`, the routine ones nothing;
- a peer that stopped answering or went away (UCX's `Endpoint timeout`, Open MPI's
  "peer process has unexpectedly disconnected", ORTE losing a daemon, PMIx's
  `UNREACHABLE`, MPICH's "Communication error with rank 1"): `nccl.remote_error`,
  a symptom, with the peer the line (or the lines of its block) names.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    AsyncEvent,
    CompletionStatus,
    LocalStatus,
    PeerStatus,
    UcxStatus,
    help_topics,
    libfabric_errnos,
    name_not_found_words,
    nccl_forks,
    port_phys_states,
    port_state_key,
    transport_table,
    ucx_statuses,
)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.codes import errno_of
from firstfault.extract.excclass import errno_limit, peer_errno, setup_errno
from firstfault.extract.launcher import MPI_FATAL_WORDS, mpi_fatal
from firstfault.extract.prefix import split_prefixes
from firstfault.extract.slingshot import CXI_RECORD
from firstfault.extract.traceback import clip, exception_shape
from firstfault.model import FieldValue

# Something on the line that makes it a verbs report: an RDMA device (`mlx5_0`, `hfi1_0`,
# `bnxt_re0`, `irdma1`, `qedr0`, `efa0`), a queue pair, an ibverbs call or constant, a port's link layer.
_VERBS_CONTEXT = re.compile(
    r"\b(?:mlx\d_\d+|hfi1_\d+|bnxt_re\d+|irdma\d+|qedr\d+|efa_?\d+|rxe\d+)\b|\bQP\b|\bibv_|\bIBV_|/(?:RoCE|IB)\b"
    r"|\bsynd 0x|\bwc[ _]status|\b(?:rc|ud|dc)_(?:verbs|mlx5)\b"
)
# A work request's id names a work completion too: libibverbs' example programs print a failed one as `Failed status
# transport retry counter exceeded (12) for wr_id 2` (rdma-core libibverbs/examples/rc_pingpong.c parse_single_wc, and
# the other pingpong examples: `"Failed status %s (%d) for wr_id %d\n", ibv_wc_status_str(...)`; linux-rdma/opensm#38).
_WR_ID: Final = " for wr_id "
# UCX's verbs transports reporting a failed completion by ibv_wc_status_str()'s words, to the line's end or before
# the work request's details (openucx/ucx src/uct/ib/rc/verbs/rc_verbs_iface.c `send completion with error: %s`,
# later `... %s [qpn 0x%x wrid 0x%lx vendor_err 0x%x]`; ud_verbs and uct/ib/base/ib_iface.h `Receive completion
# with error: %s`): where the words stand alone between those, even the everyday ones (`numbered`) are the status.
_WITH_ERROR_WORD: Final = "ompletion with error: "
_WITH_ERROR = re.compile(r"ompletion with error: (?P<text>[A-Za-z][A-Za-z ]{2,60}?) ?(?:\[|$)")
# ... and a line of the EFA provider (libfabric's `libfabric:PID:EPOCH::efa:cq:...` header, its `fi_addr_efa://`
# addresses, `prov_errno`) or of the OFI plugin NCCL loads for it.
_EFA_CONTEXT = re.compile(r"(?i:\befa\b)|fi_addr_efa|\bprov_errno\b|NET/OFI")
# ... and a line of the CXI provider (HPE Slingshot): libfabric's log header naming it or one of its functions
# (extract/slingshot.py `CXI_RECORD`). Its words for a status are the table's cxi rows that say more than a code's
# name (catalog/transport.yaml, C_RC_NO_SPACE's flow control).
# UCX's line header `[host:pid:tid:tid]` (ucs_log_default_handler; the pid may be padded, `[h:9358 :0:9358]`),
# with the Unix time it puts in front of it in some builds (`[1506867524.064665] [host:pid:tid]`).
_UCX_HEAD = re.compile(
    r"^(?:\[\d{9,10}\.\d+\]\s+)?\[(?P<host>[A-Za-z0-9][\w.\-]*):(?P<pid>\d+)\s*:\d+(?::\d+)?\]\s+"
)
# ... or, where a paste lost the header, UCX's name or one of its source files (`ud_ep.c:270`, `ucp_worker.c:373`).
# UCX's own word or source file, or an Open MPI component over UCX that prints UCX's statuses (ompi/mca/pml/ucx
# pml_ucx.c: `pml_ucx.c:419  Error: ucp_ep_create(proc=0) failed: Destination is unreachable`; osc/ucx, oshmem's
# spml/ucx). MPICH's ch4 UCX netmod prints ucs_status_string() in its own words (src/mpid/ch4/netmod/ucx/errnames.txt
# at pmodels/mpich 6a79bf6575, ucx_impl.h MPIDI_UCX_CHK_STATUS: **ucx_nm_status `ucx function returned with failed
# status(%s %d %s %s)`, the status last; MPIDI_UCX_CHK_REQUEST's **ucx_nm_rq_error `... in UCX netmod(...)` holds the
# name).
_UCX_WORD = re.compile(r"\bUCX\b|\b(?:ud|rc|dc|ucp|uct|ucs)_\w+\.c:\d+|\b(?:pml|osc|spml)_ucx\w*\.c:\d+"
                       r"|\bucx function returned with failed status\(")
_DEVICE = re.compile(r"\b(?P<dev>(?:mlx\d_|hfi1_|bnxt_re|irdma|qedr|efa_?|rxe)\d+)(?::(?P<port>\d+))?")
_VENDOR = re.compile(r"\bvend(?:or)?(?:[ _]err(?:or)?)?[ =:]+(?P<v>0x[0-9a-fA-F]+|\d+)")
_SYNDROME = re.compile(r"\bsynd(?:rome)?[ =:]+(?P<s>0x[0-9a-fA-F]+|\d+)")
# The EFA provider's completion error (`err: 5, message: <text> (15)`) and EQ error (`prov_errno: <text> (15)`):
# the number in brackets is the EFA status (efa_errno.h); its abort report puts it first (`EFA internal error:
# (4112) Failure to post internal receive buffers`).
_EFA_ERRNO = re.compile(r"\b(?:message|prov_errno):.*\((?P<n>\d{1,5})\)\s*$|\bEFA internal error: \((?P<m>\d{1,5})\)")
# A provider's report of a completion queue's error entry (libfabric's `fi_cq_err_entry`): its `err` (a libfabric
# errno, by its number, or its words and number) and its `prov_errno`, in the provider's words and number:
#   fi_cq_readerr: err: 5, prov_err: remote access error (10)                       (rxm over verbs)
#   fi_cq_readerr: err: Input/output error (5), prov_err: remote access error (10)  (rxm, later releases)
#   rxr_cq_write_tx_error: err: 20, prov_err: Not a directory (20)                  (EFA, libfabric 1.14-1.15)
# Each class excludes the character that ends it: linear.
_CQ_ENTRY = re.compile(
    r"\berr: (?:[A-Za-z][^,()]*\()?(?P<err>-?\d{1,5})\)?, prov_err(?:no)?: (?P<text>[^()]*)\((?P<n>-?\d{1,5})\)"
)
# A work completion's status given by its number with ibv_wc_status_str()'s words for it beside (a verbs program's own
# print: UCCL's `CQE ERROR wr_id=3 status=12(transport retry counter exceeded) opcode=1 ... vendor_err=0xa
# qp_num=0x2c10`, uccl-project/uccl#799): the number and the words agreeing make the line a verbs report with no device
# named; a number whose words are another status's, or words of no status, are none. Linear: bounded classes.
_STATUS_WORDS = re.compile(r"\bstatus[ =:]{1,3}(?P<n>0x[0-9a-fA-F]{1,2}|\d{1,2}) ?\((?P<text>[^()]{3,60})\)")
# MPICH's OFI netmod reporting a failed completion (src/mpid/ch4/netmod/ofi/ofi_events.c MPIDI_OFI_handle_cq_error:
# `OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:Input/output error - UNDELIVERABLE)`): the libfabric
# errno's words, then the provider's fi_cq_strerror() of its `prov_errno`, which for the CXI provider (HPE Slingshot)
# is the Cassini return code's name (catalog/transport.yaml, stack cxi). The provider's words are looked up whole,
# among the libfabric providers' rows (cxi, efa); a record without them (older MPICH: the errno's words alone) is
# none. Each class excludes the character that ends it: linear.
_OFI_POLL_WORD: Final = "OFI poll failed ("
_OFI_POLL = re.compile(r"\bOFI poll failed \([^()]{0,300}? - (?P<prov>[^()]{1,120})\)")
# The libfabric errno the EFA provider's abort report gives on the line before its own (`Libfabric error: (-12)
# Cannot allocate memory`): remembered for the report's status line (_EFA_REPORT_LINES below it at most).
_FI_ERRNO = re.compile(r"^Libfabric error: \((?P<n>-?\d{1,5})\)")
# The EFA provider's report of an error it wrote (or could not write) to the endpoint's event or completion queue,
# whose `err` is a libfabric errno where no EFA status stands beside it: libfabric's calls return it negated
# (-FI_ENOMEM), and libfabric 1.8-1.13's rxr printed it so through fi_strerror(), which has no words for a negative
# number (prov/efa/src/rxr/rxr.h rxr_eq_write_error: `Unable to write to EQ: Missing or unavailable event queue.
# err: %s (%zd) prov_errno: %s (%zd) %s:%d`, aws/aws-ofi-nccl#107: `err: Unknown error -12 (-12) prov_errno: Unknown
# error -12 (-12) prov/efa/src/rxr/rxr.h:993`); later releases the same number unsigned (`err: 12, prov_err: Cannot
# allocate memory (12)`). FI_E* under 256 are the system's errnos (rdma/fi_errno.h); which of them are the job's
# set-up in a transport's report is catalog/exceptions.yaml `errnos` (ENOMEM: memory the process may not pin under its
# locked-memory limit). A number that is no libfabric errno is no reading here. Linear: bounded classes.
_EFA_ERR_REPORT = re.compile(r"\berr: (?:[^(),\n]{0,80}\()?(?P<n>-?\d{1,5})\)?,? prov_err(?:no)?: ")

_EFA_REPORT_LINES: Final = 4
_EFA_ABORT: Final = "Libfabric EFA provider has encountered an internal error"
# A verbs call that failed on the local adapter's resources, with its errno: UCX's `ib_iface.c:1035 UCX ERROR
# ibv_create_cq(cqe=4096) failed: Cannot allocate memory`, a program's `ibv_reg_mr(...) failed: ...`. Which errnos
# are the job's set-up (ENOMEM: memory the process may not pin under its locked-memory limit; EINVAL: an argument
# its configuration gave) is catalog/exceptions.yaml's; the rest is no reading here.
_VERBS_CALL_WORDS: Final = ("ibv_create_", "ibv_reg_", "ibv_alloc_", "ibv_open_device", "ibv_modify_qp")
# The errnos with which a verbs call says that the queue pair's address does not reach the peer (the fabric's path, the
# RoCE GID the job's NCCL_IB_GID_INDEX or the library's own choice named), not the node's RDMA stack nor the job's
# memory: on any call, a network's own errno (ibv_modify_qp INIT -> RTR timing out, 110, where the route or the GID
# does not reach the peer); on ibv_modify_qp, whose move to RTR resolves the address handle's source GID in the kernel,
# its answers about that GID table entry (Linux drivers/infiniband/core/verbs.c _ib_modify_qp: rdma_fill_sgid_attr,
# then ib_resolve_eth_dmac for a connected RoCE QP): ENODATA, no GID at that index (core/cache.c rdma_get_gid_attr,
# since 5.10; EINVAL before, which a queue pair's other attributes say too and is none here), ENODEV, a GID whose net
# device is gone, down or outside the process's network namespace (cache.c rdma_read_gid_attr_ndev_rcu: `ERR_PTR(
# -ENODEV)` unless the entry is valid and its netdev IFF_UP). NCCL prints them as `Call to ibv_modify_qp failed with
# error No such device` (NVIDIA/nccl#718, a GID index set for every pod of RoCE tables that differ; tests/wild's
# rdma-shared containers whose GID table does not start at 0). ENODEV on any other call (a device not opened, not
# there) stays the node's RDMA stack (rule node-rdma-stack).
_PATH_ERRNOS: Final = frozenset({"ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH", "ENETDOWN", "EHOSTDOWN"})
_GID_ERRNOS: Final = frozenset({"ENODEV", "ENODATA"})
_GID_CALLS: Final = frozenset({"modify_qp"})


@lru_cache(maxsize=1)
def _nccl_warn_words() -> tuple[str, ...]:
    """`NCCL WARN` and its forks' (catalog/transport.yaml `nccl_forks`): a line extract/nccl.py reads."""
    return tuple(f"{row.tag} WARN" for row in nccl_forks())


def verbs_path_errno(call: str, name: str | None) -> bool:
    """Whether a verbs call (`ibv_modify_qp` or `modify_qp`) that failed with errno `name` says the queue pair's
    address does not reach the peer (_PATH_ERRNOS, _GID_ERRNOS): the network's path, never the node's stack."""
    if name is None:
        return False
    return name in _PATH_ERRNOS or (name in _GID_ERRNOS and call.removeprefix("ibv_") in _GID_CALLS)


_VERBS_CALL_FAILED = re.compile(r"\b(?P<call>ibv_\w{1,40})(?:\([^()]{0,256}\))?:? (?:failed|returned)\b")
# MLX's distributed backends' own report of a call that failed, with the errno it got (ml-explore/mlx
# mlx/distributed/ring/ring.cpp, its TCP ring: `[ring] Sending to socket 3 failed with errno 22`, ml-explore/mlx#4280;
# mlx/distributed/jaccl, its RDMA over Thunderbolt: `[jaccl] Changing queue pair to RTR failed with errno 22`,
# ml-explore/mlx#3467): a transport's own report, so an errno of the job's set-up there (EINVAL: an argument the
# backend was given or gave the call; ENOMEM: memory it could not register) is the set-up's (catalog/exceptions.yaml
# `errnos`, `transport_only`), as a verbs call's is. The line whole; any other errno (a peer's reset) is not read here.
_MLX_CALL_FAILED = re.compile(r"^\s*\[(?P<backend>jaccl|ring)\] (?P<what>[^\[\]]{1,200}?) failed with errno "
                              r"(?P<num>\d{1,4})\s*$")
_MLX_TAGS: Final = ("[jaccl] ", "[ring] ")
_SHARED_ERRNO_MAX: Final = 34  # ERANGE: the errnos whose numbers Linux, macOS and the BSDs share
_K_FI_ERRNO = "ff.transport.fi_errno"  # (lineno, the errno's line) of the report's libfabric errno
# UCX opens every device it finds and goes on with the transports left where one fails (uct's iface open for
# that device fails; ucp leaves the device out): a UCX report of a verbs call that failed on a device is the job's
# set-up only where the layer above then says it could not start, within _UCX_CONFIRM_LINES lines: Open MPI's
# pml/ucx (ompi/mca/pml/ucx/pml_ucx.c `Failed to create UCP worker`), its common UCX layer
# (opal/mca/common/ucx `ucp_worker_create failed`), its MPI_Init help texts (ompi/runtime/help-mpi-runtime.txt
# [mpi_init:startup:internal-failure] `It looks like MPI_INIT failed for some reason; your parallel process is ...`,
# [mpi_init:startup:pml-add-procs-fail] `PML add procs failed`). Open MPI's own openib BTL, which goes on the same
# way, is no set-up either (catalog/transport.yaml `local_statuses`). Until then the report is held, understood; also
# where UCX adds its advice on the locked-memory limit (src/uct/ib/base/ib_log.c uct_ib_memlock_limit_msg: `... failed:
# Cannot allocate memory : Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)`), which it
# prints for a device it then leaves out as well (openucx/ucx#8746: a run that went on over the devices left).
_UCX_START_FAILED: Final = ("Failed to create UCP worker", "ucp_worker_create failed",
                            "failed for some reason; your parallel process is", "PML add procs failed")
_UCX_CONFIRM_LINES: Final = 50
# UCX's worker opening a transport's interface on a device at start-up and failing with one of its status codes
# (src/ucp/core/ucp_worker.c: `uct_iface_open(rc_mlx5/mlx5_0:1) failed: Unsupported operation`), read by the status's
# words (catalog/transport.yaml `ucx_statuses`) and held as UCX's other device reports are.
# (The status's words run to the line's end; read greedily and stripped after: a lazy run before `\s*$` went back over
# every blank of a line padded with them, superlinear in its length.)
_UCX_IFACE_OPEN: Final = re.compile(r"\buct_iface_open\((?P<res>[^()\s]{1,100})\) failed: (?P<why>\S[^\r\n]{0,99})")
_UCX_IFACE_WORD: Final = "uct_iface_open("
_K_UCX_HELD = "ff.transport.ucx_held"  # (lineno, the held draft) of a UCX device's failed verbs call
# NCCL's own completion report (extract/nccl.py owns it).
_NCCL_OWNED: Final = "Got completion"
# UCX's async event (uct_ib_handle_async_event): `IB Async event on mlx5_0: port error on port 1`,
# `... on QPN 0x1a2`, `... on CQ 0x...`.
_UCX_ASYNC = re.compile(
    r"IB Async event on (?P<dev>[\w\-]+): (?P<what>.+?)(?: on (?:port (?P<port>\d+)|QPN|CQ|SRQ)\b.*)?$"
)


def _whole(word: str, body: str) -> bool:
    """Whether `word` stands in `body` as a whole, no letter, digit or `_` against either end: a status's name or
    words, not part of a longer identifier (`IBV_WC_GENERAL_ERR_COUNT`) or word (`remote access errors`)."""
    at = body.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or not _word_char(body[at - 1])) and (end == len(body) or not _word_char(body[end])):
            return True
        at = body.find(word, at + 1)
    return False


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _number(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


# --------------------------------------------------------------------------
# The table, by the keys each reader looks it up by
# --------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _completion_words() -> tuple[tuple[str, CompletionStatus], ...]:
    """(wording, row) for every verbs and UCX word of a status (the ibv names too), longest first."""
    out: list[tuple[str, CompletionStatus]] = []
    for row in transport_table().completions:
        if row.stack == "ibv":
            out.append((row.name, row))
        if row.stack in ("ibv", "mlx5") and not row.numbered:
            out.extend((t, row) for t in row.texts)
    return tuple(sorted(out, key=lambda w: (-len(w[0]), w[0])))


@lru_cache(maxsize=1)
def _numbered_words() -> tuple[tuple[str, CompletionStatus], ...]:
    """(`words (N)`, row) for the ibv statuses whose words are everyday ones (`numbered`: `fatal error (19)`), read
    only beside their own number: a program's `Failed status %s (%d)`, a provider's `prov_err: %s (%d)`."""
    return tuple((f"{t} ({row.code})", row) for row in transport_table().completions
                 if row.stack == "ibv" and row.numbered for t in row.texts)


def _numbered_literals() -> frozenset[str]:
    """The prefilter words of the `numbered` statuses: their words with the number after (`fatal error (19)`) or
    before them (`status=19(fatal error)`), never the everyday words alone."""
    rows = [row for row in transport_table().completions if row.stack == "ibv" and row.numbered]
    return frozenset({w for w, _ in _numbered_words()} | {f"({t})" for row in rows for t in row.texts})


@lru_cache(maxsize=1)
def _efa_words() -> tuple[tuple[str, CompletionStatus], ...]:
    out = [(t, row) for row in transport_table().completions if row.stack == "efa" for t in row.texts]
    return tuple(sorted(out, key=lambda w: (-len(w[0]), w[0])))


@lru_cache(maxsize=1)
def _cxi_words() -> tuple[tuple[str, CompletionStatus], ...]:
    """The CXI provider's own sentences for a status (the cxi rows' texts that are no cxi_rc_to_str() name)."""
    out = [(t, row) for row in transport_table().completions if row.stack == "cxi" for t in row.texts if " " in t]
    return tuple(sorted(out, key=lambda w: (-len(w[0]), w[0])))


@lru_cache(maxsize=1)
def _provider_words() -> Mapping[str, CompletionStatus]:
    """A libfabric provider's fi_cq_strerror() words for a status (the cxi and efa rows), as a whole text."""
    return {t: row for row in transport_table().completions if row.stack in ("cxi", "efa") for t in row.texts}


@lru_cache(maxsize=1)
def _by_code() -> Mapping[tuple[str, int], CompletionStatus]:
    return {(row.stack, row.code): row for row in transport_table().completions}


@lru_cache(maxsize=1)
def _libfabric_numbers() -> frozenset[int]:
    """The numbers of libfabric's own errnos (catalog/transport.yaml `libfabric_errnos`, by this platform's errno
    module; a name it lacks is no number here)."""
    import errno

    return frozenset(getattr(errno, n) for n in libfabric_errnos() if hasattr(errno, n))


@lru_cache(maxsize=1)
def _async_by_text() -> Mapping[str, AsyncEvent]:
    return {e.text.lower(): e for e in transport_table().async_events}


def async_event_of(text: str) -> AsyncEvent | None:
    """The adapter event ibv_event_type_str() words as `text` (any case; NCCL's `port error(10)` and its
    `GID table changed` read too), or None."""
    key = text.strip().rstrip(".").lower()
    key = re.sub(r"\(\d+\)$", "", key).strip()
    table = _async_by_text()
    hit = table.get(key)
    if hit is None and key.endswith("d"):
        hit = table.get(key[:-1])  # NCCL's own `GID table changed`
    return hit


@lru_cache(maxsize=1)
def _peer_words() -> tuple[tuple[str, PeerStatus], ...]:
    """The words of every stack this module reads (NCCL's socket layer is extract/nccl.py's), longest first."""
    out = [(t, row) for row in transport_table().peers if row.stack != "nccl" for t in row.texts]
    return tuple(sorted(out, key=lambda w: (-len(w[0]), w[0])))


@lru_cache(maxsize=1)
def _nccl_socket_words() -> tuple[tuple[str, PeerStatus], ...]:
    return tuple((t, row) for row in transport_table().peers if row.stack == "nccl" for t in row.texts)


def socket_peer_status(message: str) -> PeerStatus | None:
    """The peer status NCCL's socket layer words in a WARN about a connection (catalog/transport.yaml)."""
    return next((row for w, row in _nccl_socket_words() if w in message), None)


def verbs_literals() -> tuple[str, ...]:
    """The prefilter words of the completion reader: every wording the table holds for it, and UCX's async
    event (so the two never drift apart)."""
    words = ({w for w, _ in _completion_words()} | {w for w, _ in _efa_words()} | {w for w, _ in _cxi_words()}
             | {_OFI_POLL_WORD})
    words |= _numbered_literals() | {_WITH_ERROR_WORD}
    # the EFA provider's own lines, which may give the status by its number only (`err: 5, message: ... (7)`),
    # and its abort report's two lines
    return tuple(sorted(words | {"IB Async event on ", "::efa:", "prov_errno", "EFA internal error: (",
                                 "Libfabric error: (", _EFA_ABORT, ", prov_err: ", *_VERBS_CALL_WORDS,
                                 *_UCX_START_FAILED, *local_literals("ucx"), _UCX_IFACE_WORD, *_MLX_TAGS}))


@lru_cache(maxsize=8)
def _local_words(stack: str) -> tuple[tuple[str, LocalStatus], ...]:
    return tuple((t, row) for row in transport_table().local if row.stack == stack for t in row.texts)


def local_status(stack: str, text: str) -> LocalStatus | None:
    """The local status (catalog/transport.yaml `local_statuses`) of `stack` that `text` words, if any."""
    return next((row for w, row in _local_words(stack) if w in text), None)


def local_literals(stack: str) -> tuple[str, ...]:
    """The words of a stack's local statuses (prefilter words of its reader)."""
    return tuple(sorted({w for w, _ in _local_words(stack)}))


def peer_literals() -> tuple[str, ...]:
    """The prefilter words of the peer-status reader: the table's words and the lines of the blocks that name
    the peer after them."""
    return tuple(sorted({w for w, _ in _peer_words()} | set(_PEER_DETAIL_WORDS)))


# --------------------------------------------------------------------------
# Completion statuses
# --------------------------------------------------------------------------

def _fields(row: CompletionStatus, stack: str) -> dict[str, FieldValue]:
    """The event's status fields: an mlx5 syndrome reports the ibv status it stands for (rules read one
    numbering), the EFA status keeps its own."""
    ref = _by_code().get(("ibv", row.same_as)) if row.same_as is not None else row
    assert ref is not None  # transport_table() checked every same_as
    assert ref.wc_class is not None
    return {"status": ref.code, "status_name": ref.name, "status_class": ref.wc_class, "peer": "unknown",
            "via": "verbs", "stack": stack}


def _entry_ibv(entry: re.Match[str]) -> CompletionStatus | None:
    """The ibv status a completion-queue error entry gives in ibv_wc_status_str()'s words with its own number (the
    verbs provider's `prov_err: remote access error (10)`), or None."""
    row = _by_code().get(("ibv", int(entry.group("n"))))
    text = entry.group("text").strip().lower()
    return row if row is not None and any(t.lower() == text for t in row.texts) else None


def _entry_legacy_efa(entry: re.Match[str], body: str) -> CompletionStatus | None:
    """The ibv status libfabric 1.14-1.15's EFA provider put into both numbers of an error entry and printed
    through strerror() (`err: 20, prov_err: Not a directory (20)`): only a number that is no libfabric errno (its
    other reports put one of those into both), whose words are none of the EFA provider's (catalog/transport.yaml
    `libfabric_errnos`)."""
    n = int(entry.group("n"))
    if int(entry.group("err")) != n or n in _libfabric_numbers() or any(w in body for w, _ in _efa_words()):
        return None
    return _by_code().get(("ibv", n))


def read_completion(body: str, ucx: bool = False) -> dict[str, FieldValue] | None:
    """The completion error one line states in a verbs user's words, or None; `ucx`: the line had UCX's header
    (UCX's transports are verbs users: its line is a verbs report)."""
    if _NCCL_OWNED in body:
        return None
    fields: dict[str, FieldValue] | None = None
    if ucx or _WR_ID in body or _VERBS_CONTEXT.search(body):
        synd = _SYNDROME.search(body)
        row = _by_code().get(("mlx5", _number(synd.group("s")))) if synd else None
        if row is None:
            row = next((r for w, r in _completion_words() if w in body and _whole(w, body)), None)
        if row is None and "(" in body:
            row = next((r for w, r in _numbered_words() if w in body and _whole(w, body)), None)
        if row is None and _WITH_ERROR_WORD in body and (said := _WITH_ERROR.search(body)) is not None:
            text = said.group("text")
            row = next((r for r in transport_table().completions if r.stack == "ibv" and text in r.texts), None)
        if row is not None:
            fields = _fields(row, "ucx" if row.stack == "mlx5" else "verbs")
            if synd:
                fields["syndrome"] = _number(synd.group("s"))
    if fields is None and "status" in body and (said := _STATUS_WORDS.search(body)) is not None:
        row = _by_code().get(("ibv", _number(said.group("n"))))
        if row is not None and any(t.lower() == said.group("text").strip().lower() for t in row.texts):
            fields = _fields(row, "verbs")
    entry = _CQ_ENTRY.search(body) if fields is None and "prov_err" in body else None
    if entry is not None and (row := _entry_ibv(entry)) is not None:
        fields = _fields(row, "verbs")
    if fields is None and _OFI_POLL_WORD in body:
        poll = _OFI_POLL.search(body)
        row = _provider_words().get(poll.group("prov").strip()) if poll else None
        if row is not None:
            fields = _fields(row, row.stack)
    if fields is None and any(w in body for w, _ in _cxi_words()) and CXI_RECORD.search(body):
        row = next((r for w, r in _cxi_words() if w in body), None)
        if row is not None:
            fields = _fields(row, "cxi")
    if fields is None and _EFA_CONTEXT.search(body):
        num = _EFA_ERRNO.search(body)
        row = _by_code().get(("efa", int(num.group("n") or num.group("m")))) if num else None
        if row is None:
            row = next((r for w, r in _efa_words() if w in body), None)
        if row is None and entry is not None:
            row = _entry_legacy_efa(entry, body)
        if row is not None:
            fields = _fields(row, "efa")
    if fields is None:
        return None
    dev = _DEVICE.search(body)
    if dev:
        fields["hca"] = dev.group("dev")
    vendor = _VENDOR.search(body)
    if vendor:
        fields["vendor_err"] = _number(vendor.group("v"))
    fields["detail"] = clip(body)
    return fields


def _ucx_head(body: str, host: str | None) -> tuple[str, str | None, bool]:
    """The body without UCX's `[host:pid:tid]` header, the host (a prefix's first), whether the header was there."""
    head = _UCX_HEAD.match(body)
    if head is None:
        return body, host, False
    return body[head.end():], host or head.group("host"), True


@lru_cache(maxsize=1)
def _ucx_status_by_text() -> Mapping[str, UcxStatus]:
    return {row.text: row for row in ucx_statuses()}


def _iface_open(body: str, rank: int | None, host: str | None) -> Draft | None:
    """UCX's worker failing to open a transport's interface with a status of the table's `setup` or `platform` side:
    the job's settings (memory it may not pin, a parameter it gave) or the node's RDMA stack (a transport, operation
    or device its driver does not give); any other status names neither."""
    m = _UCX_IFACE_OPEN.search(body)
    row = _ucx_status_by_text().get(m.group("why").rstrip()) if m else None
    if row is None or row.side == "none" or row.errno is None:
        return None
    fields: dict[str, FieldValue] = {"detail": clip(body), "stack": "ucx", "status_name": row.name,
                                     "errno": row.errno}
    if row.side == "setup":
        fields["setup"] = True
        limit = errno_limit(row.errno)
        if limit is not None:
            fields["limit"] = limit  # memory it may not pin: the locked-memory limit
    else:
        fields["transport"] = "ucx"  # the node's RDMA stack (node-rdma-stack reads the errno)
    return Draft("nccl.error", fields, rank=rank, host=host)


class VerbsCompletionExtractor:
    """Work-completion errors and adapter events of UCX, ibverbs programs and EFA: nccl.ib_completion_error
    (via verbs), net.link, nccl.error."""

    name = "verbs.completion"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "nccl.ib_completion_error": frozenset({
            "detail", "hca", "peer", "stack", "status", "status_class", "status_name", "syndrome", "vendor_err", "via"
        }),
        "net.link": frozenset({"detail", "iface", "port", "state", "async_event", "fault"}),
        "nccl.error": frozenset({"detail", "async_event", "stack", "status", "status_name", "errno", "setup",
                                 "limit", "local_status", "transport"}),
        "net.ib_verbs_error": frozenset({"detail", "dev", "errno", "verb"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = verbs_literals()

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        body, host, ucx = _ucx_head(p.body, p.host)
        if "IB Async event on " in body:
            yield from self._async(body, p.rank, host, ctx)
            return
        if _EFA_ABORT in body:
            ctx.claimed = True  # the EFA provider's abort report opens: its status line says what failed
            return
        if _FI_ERRNO.match(body):
            ctx.claimed = True
            ctx.state[_K_FI_ERRNO] = (ctx.lineno, body)
            return
        if any(w in body for w in _UCX_START_FAILED):
            held = ctx.state.pop(_K_UCX_HELD, None)
            if isinstance(held, tuple) and ctx.lineno - held[0] <= _UCX_CONFIRM_LINES:
                yield held[1]
            return
        opened = _iface_open(body, p.rank, host) if _UCX_IFACE_WORD in body else None
        if opened is not None:
            ctx.claimed = True  # held until the layer above says it could not start
            ctx.state[_K_UCX_HELD] = (ctx.lineno, opened)
            return
        # UCX's line by its header, or, where a paste lost the header (a CI viewer's gutter before it), by UCX's word
        # or source file: its device reports are held alike either way
        said_ucx = ucx or _UCX_WORD.search(body) is not None
        local = local_status("ucx", body) if said_ucx else None
        if local is not None:
            # ucp_init() found nothing of what UCX_TLS / UCX_NET_DEVICES asked: held like a device's failed call,
            # the layer above may go on without UCX
            ctx.claimed = True
            ctx.state[_K_UCX_HELD] = (ctx.lineno, Draft(
                "nccl.error", {"detail": clip(body), "stack": "ucx", "local_status": local.name, "setup": True},
                rank=p.rank, host=host))
            return
        fields = read_completion(body, ucx)
        if fields is None and "err: " in body and _EFA_CONTEXT.search(body):
            efa = self._efa_errno(body, p.rank, host)
            if efa is not None:
                yield efa
                return
        if fields is None:
            for d in self._call(body, p.rank, host):
                if said_ucx:
                    ctx.claimed = True  # understood: held until the layer above says it could not start
                    ctx.state[_K_UCX_HELD] = (ctx.lineno, d)
                else:
                    yield d
            return
        if fields["status_class"] == "resource":
            yield from self._resource(fields, body, p.rank, host, ctx)
            return
        yield Draft("nccl.ib_completion_error", fields, rank=p.rank, host=host)

    @staticmethod
    def _call(body: str, rank: int | None, host: str | None) -> Iterator[Draft]:
        """A verbs call on the local adapter that failed with an errno of the job's set-up (_VERBS_CALL_FAILED), or
        a call one of MLX's distributed backends reports failed so (_MLX_CALL_FAILED)."""
        if body.lstrip().startswith(_MLX_TAGS) and (x := _MLX_CALL_FAILED.match(body)) is not None:
            num = int(x.group("num"))
            # MLX runs on macOS too, whose errno numbers past 34 are not Linux's (48 is EADDRINUSE there): only the
            # numbers Unix's first errnos share everywhere (1-34: EPERM to ERANGE) are read by this host's table
            errname = errno.errorcode.get(num) if num <= _SHARED_ERRNO_MAX else None
            mlx = setup_errno(errname, transport=True) if errname else None
            if mlx is not None:
                out: dict[str, FieldValue] = {"detail": clip(body), "stack": x.group("backend"),
                                              "status_name": x.group("what"), "errno": mlx, "setup": True}
                limit = errno_limit(mlx)
                if limit is not None:
                    out["limit"] = limit
                yield Draft("nccl.error", out, rank=rank, host=host)
            return
        if not any(w in body for w in _VERBS_CALL_WORDS):
            return
        m = _VERBS_CALL_FAILED.search(body)
        if (m is not None and not any(w in body for w in _nccl_warn_words())
                and verbs_path_errno(m.group("call"), path := errno_of(body[m.end():]))):
            # the address the queue pair was given does not reach the peer; posted without NCCL's WARN header too
            # (`Call to ibv_modify_qp failed with error No such device errno 19`): an NCCL WARN is extract/nccl.py's,
            # which reads its header's host
            yield Draft("net.ib_verbs_error", {"verb": m.group("call").removeprefix("ibv_"), "errno": path,
                                               "dev": "", "detail": clip(body)}, rank=rank, host=host)
            return
        name = setup_errno(body[m.end():], transport=True) if m else None
        if m is None or name is None:
            return
        fields: dict[str, FieldValue] = {"detail": clip(body), "stack": "verbs", "status_name": m.group("call"),
                                         "errno": name, "setup": True}
        limit = errno_limit(name)
        if limit is not None:
            fields["limit"] = limit  # memory it may not pin (ENOMEM): the locked-memory limit
        yield Draft("nccl.error", fields, rank=rank, host=host)

    @staticmethod
    def _efa_errno(body: str, rank: int | None, host: str | None) -> Draft | None:
        """The EFA provider's queue error report whose libfabric errno is one of the job's set-up (_EFA_ERR_REPORT)."""
        m = _EFA_ERR_REPORT.search(body)
        num = abs(int(m.group("n"))) if m else 0
        if num not in _libfabric_numbers():
            return None
        name = setup_errno(errno.errorcode[num], transport=True)
        if name is None:
            return None
        fields: dict[str, FieldValue] = {"detail": clip(body), "stack": "efa", "errno": name, "setup": True}
        limit = errno_limit(name)
        if limit is not None:
            fields["limit"] = limit
        return Draft("nccl.error", fields, rank=rank, host=host)

    @staticmethod
    def _resource(fields: dict[str, FieldValue], body: str, rank: int | None, host: str | None,
                  ctx: LineContext) -> Iterator[Draft]:
        """A status of the local provider's resources: with an errno of the job's set-up (on the line, or the
        libfabric errno its abort report gave just before), the set-up's; else what it is."""
        said = body
        before = ctx.state.pop(_K_FI_ERRNO, None)
        if isinstance(before, tuple) and ctx.lineno - before[0] <= _EFA_REPORT_LINES:
            said = f"{before[1]} {body}"
        name = setup_errno(said, transport=True)
        if name is None:
            yield Draft("nccl.ib_completion_error", fields, rank=rank, host=host)
            return
        out: dict[str, FieldValue] = {"detail": clip(said), "stack": fields["stack"], "status": fields["status"],
                                      "status_name": fields["status_name"], "errno": name, "setup": True}
        limit = errno_limit(name)
        if limit is not None:
            out["limit"] = limit
        yield Draft("nccl.error", out, rank=rank, host=host)

    @staticmethod
    def _async(body: str, rank: int | None, host: str | None, ctx: LineContext) -> Iterator[Draft]:
        m = _UCX_ASYNC.search(body)
        event = async_event_of(m.group("what")) if m else None
        if m is None or event is None:
            return
        ctx.claimed = True  # an adapter event of the table: understood, whatever it means
        yield from async_drafts(event, m.group("dev"), m.group("port"), clip(body), rank, host)


def async_drafts(event: AsyncEvent, dev: str | None, port: str | None, detail: str, rank: int | None,
                 host: str | None) -> Iterator[Draft]:
    """What an adapter's async event means (catalog/transport.yaml): its port going away is the link going down,
    the adapter's own catastrophic error (IBV_EVENT_DEVICE_FATAL) the adapter's failure (`state` `adapter`, as its
    driver's health words are: extract/host.py), a queue's failure an NCCL-side symptom, the routine ones nothing."""
    if event.means in ("link_down", "device_fatal"):
        fields: dict[str, FieldValue] = {"state": "down", "iface": dev or "ib", "detail": detail,
                                         "async_event": event.name}
        if event.means == "device_fatal":
            fields["state"], fields["fault"] = "adapter", event.text
        if port is not None:
            fields["port"] = int(port)
        yield Draft("net.link", fields, device=dev, rank=rank, host=host)
    elif event.means == "queue_error":
        yield Draft("nccl.error", {"detail": detail, "async_event": event.name}, rank=rank, host=host)


# --------------------------------------------------------------------------
# Peers that stopped answering
# --------------------------------------------------------------------------

# The lines of a multi-line report that name the peer, after the table's words that open it (Open MPI's help
# texts): `  Peer host:  ip-172-31-1-32`, `  Remote daemon: [[64112,0],1] on node 10.126.10.10`, and the
# old ORTE form's `   hostname:  ip-10-15-20-17.ec2.internal`.
_PEER_DETAIL: Final = re.compile(
    r"^\s*(?:Peer host:\s+(?P<peer>\S+)|Remote daemon\s*:\s*\S+ on node (?P<daemon>\S+)|hostname:\s+(?P<old>\S+))\s*$"
)
_PEER_DETAIL_WORDS: Final = ("Peer host:", "Remote daemon", "hostname:")
_BLOCK_LINES: Final = 12  # how far below its opening line a block's peer line may be
_K_PENDING = "ff.transport.peer_block"  # (lineno, row, detail) of a block waiting for its peer line
_K_SEEN = "ff.transport.peer_seen"
# UCX's UD endpoint names its peer: `UD endpoint 0x973660 to jazz25:70567: unhandled timeout error`.
_UCX_PEER = re.compile(r"\bto (?P<peer>[A-Za-z0-9][\w.\-]*):\d+:")
# MPICH's error stack: `MPID_nem_tcp_connpoll(1845): Communication error with rank 1: Connection refused`, `Unable to
# establish connection to rank 3`, `[ch3:sock] rank 0 unable to connect to rank 2 using business card <...>` (the
# peer is the rank after `to`).
_MPICH_RANK = re.compile(r"\b(?:error with|connection to|connect to) rank (?P<rank>\d+)")
# PMIx's own head: `[ip-172-31-1-68:27726] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2257`; Open
# MPI's (opal_output's) the same: `[mlperf1:1207478] pml_ucx.c:419  Error: ucp_ep_create(proc=0) failed: ...`.
_PMIX_HEAD = re.compile(r"^\[(?P<host>[A-Za-z0-9][\w.\-]*):\d+\]\s")
# Open MPI's TCP BTL before 2017: `[node2][[25,1],3][btl_tcp_endpoint.c:807:mca_btl_tcp_endpoint_complete_connect]
# connect() to 10.0.0.3 failed: No route to host (113)`.
_BTL_TCP_PEER = re.compile(r"\] connect\(\) to (?P<peer>[\w.\-]{1,253}|\[[0-9a-fA-F:.]{2,64}\])(?::\d{1,5})? failed")
# The blocks whose peer comes on a later line.
_BLOCKS: Final = frozenset({"ompi", "orte"})


class PeerStatusExtractor:
    """A peer that stopped answering, in UCX's, Open MPI's, PMIx's or MPICH's words: nccl.remote_error."""

    name = "transport.peer"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "nccl.remote_error": frozenset({"detail", "stack", "peer_status", "peer", "peer_rank"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = (*peer_literals(), _MPICH_OFI_WORD)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        body, host, ucx_head = _ucx_head(p.body, p.host)
        hit = next(((w, row) for w, row in _peer_words() if w in body), None)
        if hit is None:
            if _MPICH_OFI_WORD in body:
                yield from self._ofi_call(body, p.rank, host, ctx)
            yield from self._detail(body, p.rank, host, ctx)
            return
        _, row = hit
        if row.stack == "ucx" and not (ucx_head or _UCX_WORD.search(body)):
            return  # the same words in another program's log are not UCX's
        if row.means == "none":
            ctx.claimed = True  # a message the stack could not read: understood, no peer lost
            return
        if row.stack == "nixl" and exception_shape(body) is not None:
            return  # the binding's exception (`nixlRemoteDisconnectError: ...`): its class is read as a peer's loss
        fields: dict[str, FieldValue] = {"detail": clip(body), "stack": row.stack, "peer_status": row.name}
        rank = p.rank
        if row.stack in _BLOCKS:
            ctx.claimed = True
            ctx.state[_K_PENDING] = (ctx.lineno, row.stack, row.name, clip(body))
            return
        if row.stack == "ucx":
            peer = _UCX_PEER.search(body)
            if peer:
                fields["peer"] = peer.group("peer")
            head = _PMIX_HEAD.match(body) if not ucx_head else None  # Open MPI's own head over its UCX PML's line
            host = host or (head.group("host") if head else None)
        elif row.stack == "mpich":
            m = _MPICH_RANK.search(body)
            if m:
                fields["peer_rank"] = int(m.group("rank"))
            rank, host = _in_record(rank, host, ctx)
        elif row.stack == "btl_tcp":
            m = _BTL_TCP_PEER.search(body)
            if m:
                fields["peer"] = m.group("peer")
        elif row.stack == "pmix":
            head = _PMIX_HEAD.match(body)
            host = host or (head.group("host") if head else None)
        key = (row.name, fields.get("peer"), fields.get("peer_rank"), rank, host)
        seen = ctx.state.setdefault(_K_SEEN, set())
        if isinstance(seen, set):
            if key in seen:
                ctx.claimed = True  # the same loss again (PMIx prints it once per request)
                return
            seen.add(key)
        yield Draft("nccl.remote_error", fields, rank=rank, host=host)

    @staticmethod
    def _ofi_call(body: str, rank: int | None, host: str | None, ctx: LineContext) -> Iterator[Draft]:
        """MPICH's ch4/OFI netmod reporting a libfabric call or completion that failed with an errno of a peer's
        side (_MPICH_OFI: `OFI poll failed (default nic=cxi0: Connection refused)`): the peer's loss, stack mpich,
        the errno its status."""
        ofi = _MPICH_OFI.search(body)
        name = peer_errno(ofi.group("why"), transport=True) if ofi else None
        if name is None:
            return
        ctx.claimed = True
        rank, host = _in_record(rank, host, ctx)
        key = (name, None, None, rank, host)
        seen = ctx.state.setdefault(_K_SEEN, set())
        if isinstance(seen, set):
            if key in seen:
                return  # the same loss again (every pending request reports it)
            seen.add(key)
        yield Draft("nccl.remote_error", {"detail": clip(body), "stack": "mpich", "peer_status": name},
                    rank=rank, host=host)

    @staticmethod
    def _detail(body: str, rank: int | None, host: str | None, ctx: LineContext) -> Iterator[Draft]:
        pending = ctx.state.get(_K_PENDING)
        if not isinstance(pending, tuple):
            return
        m = _PEER_DETAIL.match(body)
        if m is None:
            return
        start, stack, name, detail = pending
        if not isinstance(start, int) or ctx.lineno - start > _BLOCK_LINES:
            ctx.state.pop(_K_PENDING, None)
            return
        ctx.state.pop(_K_PENDING, None)
        peer = m.group("peer") or m.group("daemon") or m.group("old")
        yield Draft("nccl.remote_error", {"detail": detail, "stack": stack, "peer_status": name, "peer": peer},
                    rank=rank, host=host)


def _in_record(rank: int | None, host: str | None, ctx: LineContext) -> tuple[int | None, str | None]:
    """The rank and host of an MPICH error stack's entry: its own prefix's, else those its record's first line named
    (`Abort(N) on node 7 ...`, Cray MPICH's `MPICH ERROR [Rank 7] ... [nid001]`), within _STACK_LINES of it
    (LocalStatusExtractor notes the record: _K_STACK)."""
    record = ctx.state.get(_K_STACK)
    if not isinstance(record, tuple) or not isinstance(record[0], int) or ctx.lineno - record[0] > _STACK_LINES:
        return rank, host
    return (rank if rank is not None else record[3]), (host or record[4])


# --------------------------------------------------------------------------
# The node, as the job set it up, lacking what a transport needs
# --------------------------------------------------------------------------

# A help text (Open MPI's, PMIx's, PRRTE's) names the node a few lines below its opening, on the line of the
# label its row gives (catalog/transport.yaml `host_label`): `Host:      snowflake` (then `Framework: psec`),
# `Node: vm`.
_LABELLED_HOST: Final = re.compile(r"^\s*(?P<label>[A-Z][A-Za-z ]*:)\s+(?P<host>[A-Za-z0-9][\w.\-]*)\s*$")
_K_LOCAL = "ff.transport.local_block"  # (lineno, status name, stack, label, detail, host) of a help text's sentence
_K_WRAP = "ff.transport.help_wrap"  # (lineno, ((rest, row), ...), first line) of a sentence a line began
_K_STACK = "ff.transport.mpich_stack"  # (lineno, call, class, rank, host) of an MPICH error stack's first line
_K_CONFIRM = "ff.transport.mpich_confirm"  # (lineno, row, detail, rank, host) of an entry waiting for its words
# NCCL's are extract/nccl.py's, MPICH's read in a record, UCX's held by VerbsCompletionExtractor
_LOCAL_STACKS: Final = ("mca", "ompi", "impi", "cray", "gloo", "hydra", "ssh", "nixl", "mooncake", "ccl", "ofi",
                        "petsc", "pslite")
_HELP_STACKS: Final = frozenset({"mca", "ompi"})  # the help texts', read sentence by sentence
# Hydra's proxy tag, which names the node it runs on: `[proxy:0:1@node2] HYDU_create_process (...): ...`.
_HYDRA_PROXY: Final = re.compile(r"^\[proxy:[\d:]{1,20}@(?P<host>[A-Za-z0-9][\w.\-]{0,253})\]")
# Intel MPI's Hydra (i_hydra, 2019 and later) unable to start its bootstrap proxy on a host, with the wait status of
# the bootstrap command it ran there (its check_exit_codes, hydra_demux_poll.c: `[mpiexec@hb120v3-3] check_exit_codes
# (...): unable to run bstrap_proxy on hb120v3-3.internal.cloudapp.net (pid 12608, exit code 256)`; 2021.x: `[mpiexec@
# runner-0] Error: Unable to run bstrap_proxy on localhost:2 (pid 13546, exit code 65280)`). The status is waitpid's,
# 255 << 8 = 65280 where the remote shell itself failed (ssh(1): 255 if an error occurred, the command's own status
# otherwise). Only ssh's own failure on the launching node itself (localhost, or the host of the `[mpiexec@HOST]` tag)
# is the job's launch set-up: the default ssh bootstrap where no sshd runs or no key lets the node log into itself (a
# container: I_MPI_HYDRA_BOOTSTRAP=fork, or the scheduler's bootstrap, is what the job lacked). Another host (a node
# down or not reachable), another status (the proxy ran and failed, exit code 256) decide nothing.
_IMPI_BSTRAP: Final = re.compile(
    r"^\[mpiexec@(?P<self>[A-Za-z0-9][\w.\-]{0,253})\] (?:[\w]{1,60} \([^()\n]{0,300}\): |Error: )[Uu]nable to run "
    r"bstrap_proxy on (?P<host>[A-Za-z0-9][\w.\-]{0,253})(?::\d{1,6})? \(pid \d{1,10}, exit code (?P<status>\d{1,6})\)")
_IMPI_BSTRAP_WORD: Final = "able to run bstrap_proxy on "
_SSH_FAILED_STATUS: Final = 255 << 8


def bootstrap_self_refused(body: str) -> bool:
    """Intel MPI's Hydra saying its ssh bootstrap could not log into the launching node itself (_IMPI_BSTRAP)."""
    m = _IMPI_BSTRAP.match(body) if _IMPI_BSTRAP_WORD in body else None
    if m is None or int(m.group("status")) != _SSH_FAILED_STATUS:
        return False
    host = m.group("host").split(".")[0].lower()
    return host in ("localhost", "127") or host == m.group("self").split(".")[0].lower()
# How far below an error stack's first line its entries (and the words an entry waits for) may be.
_STACK_LINES: Final = 24
# A row that waits for a later line's words (`confirm`, outside MPICH's stack: Mooncake's device left out, which is a
# failure only once the transport says no device was left; a remote shell's failure, until its launcher gives up):
# (lineno, row, detail, rank, host, peer) of the first such line still waiting; the words must come within
# _HELD_LINES lines of it (Mooncake prints them at once, one device after another: `Disable device mlx5_0`, then
# `RdmaTransport: No available RNIC`; ORTE's help text comes on the line after ssh's).
_K_HELD = "ff.transport.local_held"
_HELD_LINES: Final = 32


# MPICH's ch4/OFI netmod reporting a libfabric call that failed, in its error stack: the call, then where and
# fi_strerror() of what libfabric returned (`MPIDI_OFI_init_local(580): OFI fi_fabric failed (ofi_init.c:580:
# MPIDI_OFI_init_local:Invalid argument)`, `create_vni_context(2253).....: OFI endpoint open failed (ofi_init.c:
# 2253:create_vni_context:Invalid argument)`). With an errno of the set-up side in a transport's report (EINVAL: a
# provider the node does not have or the configuration does not fit; ENOMEM: memory it could not register) it is the
# job's set-up; any other (`No data available`) leaves the entry to the table's rows (`no_provider` inside MPI_Init).
# MPICH 5.0 prints the libfabric NIC in place of the source's place (pmodels/mpich 8c175ae517 and 19fe5bc611, both in
# v5.0.0b1: `**ofid_%s %s %s` `OFI call fabric failed (default nic=%s: %s)`, maint/extracterrmsgs for the calls of
# MPIDI_OFI_CALL, src/mpid/ch4/netmod/ofi/errnames.txt `OFI poll failed (default nic=%s: %s)` for the rest): the same
# errno after the NIC's name. An errno of a peer's side (a connection it refused or reset, a host not answering:
# catalog/exceptions.yaml `errnos`, side peer) is the peer's loss, a symptom (PeerStatusExtractor).
_MPICH_OFI: Final = re.compile(r"\bOFI [\w ()]{1,40}? failed \((?:(?P<where>[\w.\-]+:\d+:\w+)|default nic="
                               r"(?P<nic>[^():\s]{1,64})): ?(?P<why>[^()]{1,80})\)")
_MPICH_OFI_WORD: Final = "OFI "


@lru_cache(maxsize=1)
def _local_rows() -> tuple[tuple[str, LocalStatus], ...]:
    return tuple((w, row) for stack in _LOCAL_STACKS if stack not in _HELP_STACKS for w, row in _local_words(stack))


def unresolved_host(body: str, text: str) -> str | None:
    """The host a `resolver` row's line (OpenSSH's `ssh: Could not resolve hostname NAME: ANSWER`) names, where the
    resolver's answer is its word that the name does not exist (catalog/transport.yaml `name_not_found_words`); None
    for any other answer (EAI_AGAIN's `Temporary failure in name resolution`: the resolver did not answer)."""
    at = body.find(text)
    if at < 0:
        return None
    host, sep, answer = body[at + len(text):].partition(": ")
    host = host.strip()
    if not sep or not host or len(host) > 255 or any(c.isspace() for c in host):
        return None
    return host if answer.strip().rstrip(".") in name_not_found_words() else None


# --------------------------------------------------------------------------
# Help texts, sentence by sentence
# --------------------------------------------------------------------------

# A sentence of fewer words is read whole only (`orted: command not found`): its edges would be common words.
_SHORT: Final = 6


class _Sentence(NamedTuple):
    """A help text's sentence (its words one space apart), and the words of its head and tail that bring a line
    holding them to the reader."""

    text: str
    row: LocalStatus
    head: str
    tail: str


def _edge(words: list[str], least: int, chars: int) -> int:
    """How many words from the edge make a prefilter word: `least` at least, and `chars` characters."""
    n = least
    while n < len(words) and len(" ".join(words[:n])) < chars:
        n += 1
    return min(n, len(words))


@lru_cache(maxsize=1)
def _sentences() -> tuple[_Sentence, ...]:
    """The help texts' sentences. A sentence Open MPI wraps leaves its head on the first line and its tail on the
    second, each whole unless the break falls inside it; then the other line holds all but those few words."""
    out: list[_Sentence] = []
    for stack in sorted(_HELP_STACKS):
        for t, row in _local_words(stack):
            words = t.split()
            text = " ".join(words)
            if len(words) < _SHORT:
                out.append(_Sentence(text, row, text, text))  # short enough never to be wrapped: read whole
                continue
            head = " ".join(words[:_edge(words, 3, 18)])
            tail = " ".join(words[len(words) - _edge(words[::-1], 2, 14):])
            out.append(_Sentence(text, row, head, tail))
    return tuple(out)


def help_literals() -> tuple[str, ...]:
    """The prefilter words of the help texts' sentences: each one's head and tail."""
    return tuple(sorted({w for s in _sentences() for w in (s.head, s.tail)}))


Waiting = tuple[tuple[str, LocalStatus], ...]


def read_help_sentence(body: str, waiting: Waiting = ()) -> tuple[LocalStatus | None, Waiting]:
    """The help-text row (catalog/transport.yaml, stacks mca and ompi) whose sentence this line holds: whole; the
    end of one the line before began (`waiting`: the rests it left, with their rows); or the beginning or the end of
    one, when only one row's sentences fit it and the line holds the larger part, or the other line cannot hold a
    prefilter word of the sentence (so never comes here). Else the rests of the sentences whose beginnings end this
    line, for the next."""
    norm = " ".join(body.split())
    sentences = _sentences()
    for s in sentences:
        if s.text in norm:
            return s.row, ()
    for rest, waited in waiting:
        if norm.startswith(rest) and (len(norm) == len(rest) or not norm[len(rest)].isalnum()):
            return waited, ()
    began: list[tuple[str, _Sentence]] = []  # (rest, sentence): sentences this line ends with the beginning of
    ended: list[tuple[str, _Sentence]] = []  # (what it lacks, sentence): sentences this line starts with the end of
    for s in sentences:
        i = norm.find(s.head)
        while i >= 0:
            part = norm[i:]
            if len(part) < len(s.text) and s.text.startswith(part) and s.text[len(part)] == " ":
                began.append((s.text[len(part) + 1:], s))
            i = norm.find(s.head, i + 1)
        j = norm.find(s.tail)
        if j >= 0:
            lead = norm[:j + len(s.tail)]
            if len(lead) < len(s.text) and s.text.endswith(lead) and s.text[-len(lead) - 1] == " ":
                ended.append((s.text[:-len(lead) - 1], s))
    if began:
        one = _one_row(began)
        if one is not None and any(len(rest) < len(s.tail) or 2 * len(rest) <= len(s.text) for rest, s in began):
            return one, ()
        return None, tuple((rest, s.row) for rest, s in began)
    one = _one_row(ended)
    if one is not None and all(s.head not in lacks for lacks, s in ended):
        return one, ()
    return None, ()


# Open MPI's count of a help text's copies, which names the text by file and topic (catalog/transport.yaml
# `help_topics`): `3 more processes have sent help message help-mpi-runtime.txt / no cuda support`.
_HELP_COUNT_WORD: Final = "sent help message "
_HELP_COUNT: Final = re.compile(
    r"\b[0-9]{1,9} more process(?:es have| has) sent help message (?P<file>help-[\w.\-]{1,80}\.txt) / "
    r"(?P<topic>[^\[\]\n]{1,120}?)\s*$")
_K_HELP_SAID = "ff.transport.help_said"  # the (stack, status) of the help texts this stream's lines already read


def help_count_topic(body: str) -> tuple[bool, LocalStatus | None]:
    """Whether the line is Open MPI's count of a help text's copies whose topic catalog/transport.yaml `help_topics`
    holds, and that topic's local status (None: `none`, or no count line / no row)."""
    m = _HELP_COUNT.search(body) if _HELP_COUNT_WORD in body else None
    if m is None:
        return False, None
    key = (m.group("file"), m.group("topic"))
    table = help_topics()
    return key in table, table.get(key)


def _one_row(found: list[tuple[str, _Sentence]]) -> LocalStatus | None:
    """The row of these sentences, if they are all one row's."""
    return found[0][1].row if found and len({(s.row.stack, s.row.name) for _, s in found}) == 1 else None


class LocalStatusExtractor:
    """A transport's or launcher's word that its node, as the job set it up, lacks what the job asked for or cannot
    run it as asked (catalog/transport.yaml `local_statuses`; NCCL's are extract/nccl.py's): nccl.error with
    `setup`, the job's own set-up, on the node that printed it and, where a help text names one below (its
    `host_label` line), on that node too. Open MPI's, PMIx's and PRRTE's help texts are read sentence by sentence,
    framed by their rules or not, a sentence whole or wrapped over two lines; MPICH's error stack as one record,
    its first line (the call that failed, the class) with the innermost entry that says what the node lacked."""

    name = "transport.local"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "nccl.error": frozenset({"detail", "stack", "local_status", "setup", "errno", "mpi_call", "mpi_class",
                                 "names_node", "peer"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        rows = [row for row in transport_table().local if row.stack in _LOCAL_STACKS or row.stack == "mpich"]
        labels = {row.host_label for row in rows if row.host_label}
        mpich = {w for row in rows if row.stack == "mpich" for w in (*row.texts, *row.confirm)}
        confirm = {w for _, row in _local_rows() for w in row.confirm}
        self.literals: tuple[str, ...] = (*sorted({w for w, _ in _local_rows()}), *sorted(confirm), *help_literals(),
                                          *sorted(labels), *sorted(mpich), _MPICH_OFI_WORD, MPI_FATAL_WORDS,
                                          _IMPI_BSTRAP_WORD, _HELP_COUNT_WORD)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        body = p.body
        if MPI_FATAL_WORDS in body or _K_STACK in ctx.state:
            found = list(self._stack(body, p.rank, p.host, ctx))
            if found or ctx.claimed:
                # (an event leaves the line unclaimed: the stack's first line, where a paste joined the entries to
                # it, is the rank's exit too, extract/launcher.py's)
                yield from found
                return
        if _HELP_COUNT_WORD in body:
            listed, counted = help_count_topic(body)
            if listed:
                ctx.claimed = True  # the count's topic, read by its table (the count itself is known context)
                said = ctx.state.get(_K_HELP_SAID)
                if counted is not None and not (isinstance(said, set) and (counted.stack, counted.name) in said):
                    # the text itself not read before it: the count names it (mpirun's line, so no node)
                    yield Draft("nccl.error", {"detail": clip(body), "stack": counted.stack,
                                               "local_status": counted.name, "setup": True}, rank=p.rank)
                return
        if _IMPI_BSTRAP_WORD in body and bootstrap_self_refused(body):
            ctx.claimed = True
            yield Draft("nccl.error", {"detail": clip(body), "stack": "impi", "local_status": "bootstrap_self_refused",
                                       "setup": True}, rank=p.rank, host=p.host)
            return
        if _MPICH_OFI_WORD in body:
            ofi = _MPICH_OFI.search(body)
            name = setup_errno(ofi.group("why"), transport=True) if ofi else None
            if name is not None:
                ctx.claimed = True
                yield Draft("nccl.error", {"detail": clip(body), "stack": "mpich", "local_status": "ofi_call_failed",
                                           "errno": name, "setup": True}, rank=p.rank, host=p.host)
                return
        hit = next(((w, r) for w, r in _local_rows() if w in body), None)
        row = None if hit is None else hit[1]
        detail = clip(body)
        peer: str | None = None
        if hit is not None and hit[1].resolver:
            peer = unresolved_host(body, hit[0])
            if peer is None:
                row = None  # the resolver did not say the name does not exist: no set-up
        if row is not None and row.confirm:
            ctx.claimed = True
            held = ctx.state.get(_K_HELD)
            if not (isinstance(held, tuple) and ctx.lineno - held[0] <= _HELD_LINES):
                # the first reason still waiting; a resolver's line is the launching node's own ssh (pdsh tags it with
                # the host it could not reach, `gpu-17: ssh: Could not resolve hostname gpu-17: ...`): no host
                ctx.state[_K_HELD] = (ctx.lineno, row, detail, p.rank, None if row.resolver else p.host, peer)
            return
        if _K_HELD in ctx.state:
            confirmed = self._confirmed(body, ctx)
            if confirmed is not None:
                ctx.claimed = True
                yield confirmed
                return
        if row is None:
            wrap = ctx.state.pop(_K_WRAP, None)
            waiting: Waiting = ()
            if isinstance(wrap, tuple) and wrap[0] == ctx.lineno - 1:
                waiting = wrap[1]
            row, began = read_help_sentence(body, waiting)
            if row is not None and waiting:
                detail = clip(f"{wrap[2]} {body.strip()}") if isinstance(wrap, tuple) else detail
            elif began:
                ctx.claimed = True
                ctx.state[_K_WRAP] = (ctx.lineno, began, body.strip())
                return
        if row is not None:
            ctx.claimed = True
            fields: dict[str, FieldValue] = {"detail": detail, "stack": row.stack, "local_status": row.name,
                                             "setup": True}
            proxy = _HYDRA_PROXY.match(body) if row.stack == "hydra" else None
            if proxy is not None:
                fields["names_node"] = True  # the proxy's node, whichever node's file holds mpiexec's output
            yield Draft("nccl.error", fields, rank=p.rank, host=proxy.group("host") if proxy else p.host)
            if row.stack in _HELP_STACKS:
                said = ctx.state.setdefault(_K_HELP_SAID, set())
                if isinstance(said, set):
                    said.add((row.stack, row.name))
            if row.host_label is not None:
                ctx.state[_K_LOCAL] = (ctx.lineno, row.name, row.stack, row.host_label, detail, p.host)
            return
        pending = ctx.state.get(_K_LOCAL)
        m = _LABELLED_HOST.match(body)
        if m is None or not isinstance(pending, tuple):
            return
        start, name, stack, label, detail, said = pending
        if m.group("label") != label:
            return
        del ctx.state[_K_LOCAL]
        if not isinstance(start, int) or ctx.lineno - start > _BLOCK_LINES:
            return
        ctx.claimed = True
        host = p.host or m.group("host")
        if host != said:  # the node the text names, where the line that said it came from elsewhere or nowhere
            yield Draft("nccl.error", {"detail": detail, "stack": stack, "local_status": name, "setup": True},
                        rank=p.rank, host=host)

    @staticmethod
    def _confirmed(body: str, ctx: LineContext) -> Draft | None:
        """The held row's event, where this line holds its `confirm` words within _HELD_LINES of it."""
        held = ctx.state.get(_K_HELD)
        if not isinstance(held, tuple):
            return None
        start, row, detail, rank, host, peer = held
        if not isinstance(start, int) or ctx.lineno - start > _HELD_LINES:
            ctx.state.pop(_K_HELD, None)
            return None
        if not any(w in body for w in row.confirm):
            return None
        ctx.state.pop(_K_HELD, None)
        fields: dict[str, FieldValue] = {"detail": detail, "stack": row.stack, "local_status": row.name, "setup": True}
        if isinstance(peer, str):
            fields["peer"] = peer  # the host the launch named (engine/normalise.py unknown_hosts reads it)
        return Draft("nccl.error", fields, rank=rank, host=host)

    @staticmethod
    def _stack(body: str, rank: int | None, host: str | None, ctx: LineContext) -> Iterator[Draft]:
        """An MPICH-family error stack, read as one record: its first line (`Fatal error in PMPI_Init_thread: Other
        MPI error, error stack:`) gives the call and the class, a later entry (or the same line, where a paste
        joined them) the innermost message; a row of catalog/transport.yaml's stack mpich decides, within the
        calls its `during` names and once a line holds its `confirm` words."""
        read = mpi_fatal(body)
        if read is not None:
            ctx.state[_K_STACK] = (ctx.lineno, read.call, read.mpi_class, rank if read.rank is None else read.rank,
                                   host or read.host)
            ctx.state.pop(_K_CONFIRM, None)
        record = ctx.state.get(_K_STACK)
        if not isinstance(record, tuple):
            return
        start, call, cls, rank0, host0 = record
        if not isinstance(start, int) or ctx.lineno - start > _STACK_LINES:
            ctx.state.pop(_K_STACK, None)
            ctx.state.pop(_K_CONFIRM, None)
            return
        rank = rank if rank is not None else rank0
        host = host or host0
        waiting = ctx.state.get(_K_CONFIRM)
        if isinstance(waiting, tuple):
            _, row, detail, wrank, whost = waiting
            if any(w in body for w in row.confirm):
                ctx.state.pop(_K_CONFIRM, None)
                yield _mpich_draft(row, detail, call, cls, wrank, whost)
                return
        row = next((r for r in _mpich_rows() if any(_holds(body, t) for t in r.texts)), None)
        if row is None or (row.during and call not in row.during):
            return
        if row.confirm and not any(w in body for w in row.confirm):
            ctx.state[_K_CONFIRM] = (ctx.lineno, row, clip(body), rank, host)
            ctx.claimed = True
            return
        yield _mpich_draft(row, clip(body), call, cls, rank, host)


def _holds(body: str, text: str) -> bool:
    """Whether an error stack's line holds a row's text. A text that is an entry's function name (it ends with `(`:
    `MPIDI_OFI_mpi_init_hook(`) counts only on an entry that says nothing more (`MPIDI_OFI_mpi_init_hook(1473):`): an
    entry with a message of its own (`MPIDI_OFI_init_local(580): OFI fi_fabric failed (...:Invalid argument)`) is
    read by that message."""
    at = body.find(text)
    if at < 0:
        return False
    if not text.endswith("("):
        return True
    _, colon, message = body[at + len(text):].partition("):")
    return bool(colon) and not message.strip()


@lru_cache(maxsize=1)
def _mpich_rows() -> tuple[LocalStatus, ...]:
    return tuple(row for row in transport_table().local if row.stack == "mpich")


def _mpich_draft(row: LocalStatus, detail: str, call: str, cls: str | None, rank: int | None,
                 host: str | None) -> Draft:
    fields: dict[str, FieldValue] = {"detail": detail, "stack": "mpich", "local_status": row.name, "setup": True,
                                     "mpi_call": call}
    if cls is not None:
        fields["mpi_class"] = cls
    return Draft("nccl.error", fields, rank=rank, host=host)


# --------------------------------------------------------------------------
# A port's state in a snapshot of the port-state tools
# --------------------------------------------------------------------------

# iproute2's `rdma link` (rdma/link.c: `link %s/%u `, then its attributes, `state %s physical_state %s`, on one line).
_RDMA_LINK = re.compile(r"^\s*link (?P<dev>[A-Za-z0-9][\w\-]{0,63})/(?P<port>\d{1,3}) ")
_RDMA_PHYS = re.compile(r"\bphysical_state (?P<phys>[A-Za-z_]{2,40})\b")
# The tools that print a port's record over several lines, each with the line that names its device (and port) before
# it: ibstat's `CA 'mlx5_1'` ... `Physical state: Disabled`; ibstatus's `Infiniband device 'mlx5_0' port 1 status:`
# ... `phys state:  3: Disabled`; ibv_devinfo's `hca_id:  mlx5_0` ... `phys_state:  POLLING (2)`.
_PORT_DEVICE = re.compile(
    r"^\s*(?:CA '(?P<ca>[^'\s]{1,64})'\s*$|Infiniband device '(?P<dev>[^'\s]{1,64})' port (?P<port>\d{1,3}) status:"
    r"|hca_id:\s{1,16}(?P<hca>[A-Za-z0-9][\w\-]{0,63})\s*$)"
)
_PORT_PHYS = re.compile(
    r"^\s*(?:Physical state:|phys state:|phys_state:)\s{0,16}(?:\d{1,2}: ?)?(?P<phys>[A-Za-z][A-Za-z_ ]{0,39}?)"
    r"(?: ?\(\d{1,2}\))?\s*$"
)
# ... and its JSON (`rdma -j link`: one array of the links, each an object with the same keys, print_string(PRINT_ANY,
# "physical_state", ...)): each object read alone.
_RDMA_JSON_LINK = re.compile(r"\{[^{}]{1,4000}\}")
_RDMA_JSON_KEYS = re.compile(
    r'"(?P<key>ifname|port|physical_state)":\s?(?:"(?P<text>[^"\\]{1,64})"|(?P<num>\d{1,3})\b)'
)
_PORT_WORDS: Final = ('"physical_state"', "physical_state ", "Physical state:", "phys state:", "phys_state:", "CA '",
                      "Infiniband device '", "hca_id:")
_K_PORT_DEVICE = "ff.transport.port_device"  # (device, port or None) of the record being read


class PortStateExtractor:
    """An RDMA port's physical state in a snapshot of the port-state tools (`rdma link`, ibstat, ibstatus,
    ibv_devinfo), read by catalog/transport.yaml `port_phys_states`: a port not physically up is `net.link` down on
    the device the snapshot names, one whose link trained `net.link` up, both with `snapshot` (no time of its own,
    and a host's unused ports are down in it too: rule network-link-snapshot, weak); the lines that name the device
    are understood."""

    name = "transport.port_state"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "net.link": frozenset({"state", "iface", "port", "detail", "phys_state", "snapshot"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = _PORT_WORDS

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        p = split_prefixes(line)
        body = p.body
        dev: str | None
        port: str | None
        if '"physical_state"' in body:
            for obj in _RDMA_JSON_LINK.finditer(body):
                keys = {k.group("key"): k.group("text") or k.group("num")
                        for k in _RDMA_JSON_KEYS.finditer(obj.group())}
                if "physical_state" in keys:
                    yield from self._state(keys["physical_state"], keys.get("ifname"), keys.get("port"),
                                           clip(obj.group()), p.rank, p.host, ctx)
            return
        if "physical_state " in body:
            m = _RDMA_LINK.match(body)
            phys = _RDMA_PHYS.search(body) if m is not None else None
            if m is None or phys is None:
                return
            dev, port, word = m.group("dev"), m.group("port"), phys.group("phys")
        else:
            named = _PORT_DEVICE.match(body)
            if named is not None:
                ctx.state[_K_PORT_DEVICE] = (named.group("ca") or named.group("dev") or named.group("hca"),
                                             named.group("port"))
                ctx.claimed = True
                return
            m2 = _PORT_PHYS.match(body)
            if m2 is None:
                return
            held = ctx.state.get(_K_PORT_DEVICE)
            dev, port = held if isinstance(held, tuple) else (None, None)
            word = m2.group("phys")
        yield from self._state(word, dev, port, clip(body.strip()), p.rank, p.host, ctx)

    @staticmethod
    def _state(word: str, dev: str | None, port: str | None, detail: str, rank: int | None, host: str | None,
               ctx: LineContext) -> Iterator[Draft]:
        row = port_phys_states().get(port_state_key(word))
        if row is None:
            return
        ctx.claimed = True
        if row.means == "none":
            return
        fields: dict[str, FieldValue] = {"state": row.means, "iface": dev or "ib", "detail": detail,
                                         "phys_state": row.name, "snapshot": True}
        if port is not None and port.isdigit():
            fields["port"] = int(port)
        yield Draft("net.link", fields, device=dev, rank=rank, host=host)


EXTRACTORS: tuple[LineExtractor, ...] = (VerbsCompletionExtractor(), PeerStatusExtractor(), LocalStatusExtractor(),
                                         PortStateExtractor())
