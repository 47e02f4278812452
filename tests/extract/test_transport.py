"""The transports' statuses and events spelled by each stack (catalog/transport.yaml), and the MPI launchers' word
on the rank that exited.

Lines marked with a thread are verbatim from that public report; lines marked as real output were printed by
the software named, run here; the few marked synthetic follow the format string of the source named.
"""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.catalog import tables
from firstfault.catalog.tables import ib_wc_status_table, transport_table
from firstfault.catalog.vocab import CatalogTableError
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract import launcher, verbs
from firstfault.extract.base import Candidate
from firstfault.extract.prefix import split_prefixes
from firstfault.extract.verbs import async_event_of, read_completion
from firstfault.model import Event
from tests.extract import helpers


def feed(lines: list[str], source: str = "application") -> list[Event]:
    return helpers.events(lines, source)


def claimed(lines: list[str], source: str = "application") -> list[bool]:
    """Whether each line was understood (an event, or claimed without one)."""
    ex = Extraction(all_line_extractors())
    out = []
    for i, text in enumerate(lines, 1):
        drafts, ctx = ex.drafts(Candidate(source, "app.log", i, None, None, None, text))
        out.append(bool(drafts) or (ctx is not None and ctx.claimed))
    return out


def only(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.kind == kind]


# ---------------------------------------------------------------- the table


def test_the_table_holds_each_stacks_numbering_and_the_ibv_view_is_unchanged() -> None:
    t = transport_table()
    assert sorted(ib_wc_status_table()) == list(range(1, 22))
    mlx5 = {r.code: r for r in t.completions if r.stack == "mlx5"}
    # an mlx5 syndrome takes the class of the ibv status it reports
    assert mlx5[0x15].same_as == 12 and mlx5[0x15].wc_class == "path"
    assert mlx5[0x13].wc_class == "remote_access"
    efa = {r.code: r for r in t.completions if r.stack == "efa"}
    assert efa[15].wc_class == "path" and efa[1].wc_class == "flush" and efa[5].wc_class == "local_access"
    assert {e.means for e in t.async_events} == {"link_down", "device_fatal", "queue_error", "info"}
    assert {p.stack for p in t.peers} == {"ucx", "ompi", "orte", "pmix", "mpich", "nccl", "btl_tcp", "nixl"}


def _build_with(monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any]) -> object:
    real = tables._document

    def fake(name: str) -> Any:
        return doc if name == "transport.yaml" else real(name)

    monkeypatch.setattr(tables, "_document", fake)
    build = transport_table.__wrapped__.__wrapped__  # type: ignore[attr-defined]  # lru_cache, then _kept
    return build()


GOOD_IBV = {"stack": "ibv", "code": 12, "name": "IBV_WC_RETRY_EXC_ERR", "class": "path"}


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([GOOD_IBV, {**GOOD_IBV}], "completion_statuses[1]: duplicate code 12 for stack ibv"),
        ([GOOD_IBV, {"stack": "mlx5", "code": 21, "name": "MLX5_X", "same_as": 99}],
         "completion_statuses[1]: same_as 99 is no ibv status"),
        ([{**GOOD_IBV, "same_as": 12}], "completion_statuses[0]: give exactly one of `class` and `same_as`"),
        ([{"stack": "efa", "code": 15, "name": "EFA_X"}], "completion_statuses[0]: give exactly one"),
        ([{**GOOD_IBV, "class": "broken"}], "completion_statuses[0].class"),
    ],
)
def test_a_bad_row_is_named(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], problem: str) -> None:
    doc = {"completion_statuses": rows, "async_events": [], "peer_statuses": []}
    with pytest.raises(CatalogTableError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        _build_with(monkeypatch, doc)


# ---------------------------------------------------------------- completion statuses


@pytest.mark.parametrize(
    ("line", "status", "stack", "hca"),
    [
        # openucx/ucx#6000: newer UCX, the mlx5 syndrome (0x15) decides
        ("[compute001:31180:0:31180] ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_0:1/RoCE (synd 0x15 "
         "vend 0x81 hw_synd 0/0)", 12, "ucx", "mlx5_0"),
        # openucx/ucx#2545: older UCX's words, under Open MPI's --timestamp-output tag
        ("Sun Apr 22 11:13:01 2018[1,305]<stderr>:[hpc-arm-hp03:94092:0:94092] ib_mlx5_log.c:113  FATAL: Error on QP "
         "0x2396e wqe[001]: Transport retry count exceeded (synd 0x15 vend 0x81) opcode RDMA_READ", 12, "ucx", None),
        # UCX's rc_verbs transport prints libibverbs' words (synthetic, rc_verbs_iface.c's format string)
        ("[node-07:4242:0:4242] rc_verbs_iface.c:124 UCX  ERROR send completion with error: transport retry counter "
         "exceeded [qpn 0x1a2 wrid 0x9 vendor_err 0x81]", 12, "verbs", None),
        # aws/aws-ofi-nccl#346: the EFA provider gives the status by its number, (7)
        ("libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address "
         "My EFA addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:1072483550 My host id: i-0db7083f3fcbebb65 Peer EFA "
         "addr: fi_addr_efa://[fe80::b8:aff:fe44:425]:0:947699476 Peer host id: i-0ce6d3d57139f053c (7)", 7, "efa",
         None),
        # linux-rdma/opensm#38: libibverbs' example program (rdma-core libibverbs/examples/rc_pingpong.c
        # parse_single_wc: `Failed status %s (%d) for wr_id %d`), the work request's id its only verbs word
        ("Failed status transport retry counter exceeded (12) for wr_id 2", 12, "verbs", None),
    ],
)
def test_each_stacks_completion_words(line: str, status: int, stack: str, hca: str | None) -> None:
    [e] = only(feed([line]), "nccl.ib_completion_error")
    assert (e.fields["status"], e.fields["stack"], e.fields.get("hca")) == (status, stack, hca)


@pytest.mark.parametrize(
    "line",
    [
        # libfabric's EFA provider by its words only: efa_dgram_cq.c's `Work completion status: %s` (synthetic)
        "libfabric:4242:1708520807::efa:cq:efa_dgram_cq_readerr():64<warn> Work completion status: Unreachable remote "
        "(never received a response)",
        # ... and its EQ error with the number: efa_base_ep.c's `err: %s (%zd) prov_errno: %s (%zd)` (synthetic)
        "libfabric:4242:1708520807::efa:ep_ctrl:efa_base_ep_write_eq_error():835<warn> Writing error to EQ: err: No "
        "route to host (113) prov_errno: Unreachable remote (never received a response) (15)",
    ],
)
def test_an_efa_status_by_its_words_or_its_number(line: str) -> None:
    f = read_completion(line)
    assert f is not None and (f["status"], f["status_class"], f["stack"]) == (15, "path", "efa")


@pytest.mark.parametrize(
    ("line", "status", "status_class", "stack"),
    [
        # ofiwg/libfabric#4283 (https://github.com/ofiwg/libfabric/issues/4283): rxm over the verbs provider, whose
        # error entry's prov_errno is the ibv status, in ibv_wc_status_str()'s words with its number; no device or
        # queue pair is named on the line
        ("libfabric:ofi_rxm:cq:rxm_cq_read_write_error():819<warn> fi_cq_readerr: err: 5, prov_err: remote access "
         "error (10)", 10, "remote_access", "verbs"),
        # ... rxm's later format, the libfabric errno in words too (synthetic: v1.15.2 prov/rxm/src/rxm_cq.c)
        ("libfabric:4242:1668017255:ofi_rxm:cq:rxm_handle_comp_error():1726<warn> fi_cq_readerr: err: Input/output "
         "error (5), prov_err: transport retry counter exceeded (12)", 12, "path", "verbs"),
        # libfabric 1.14-1.15's EFA provider put ibv_wc.status into both numbers and printed it through strerror()
        # (synthetic: v1.15.2 prov/efa/src/rxr/rxr_cq.c's format string, rxr_ep.c's `err = prov_errno =
        # ibv_wc.status`); 21, the number aws/aws-ofi-nccl#161's plugin passed on (`RC: 21`), is IBV_WC_GENERAL_ERR
        ("libfabric:462:1673041636::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err: 21, "
         "prov_err: Is a directory (21)", 21, "other", "efa"),
        # ... and rdma-core's EFA provider reports an unresponsive or unreachable remote as IBV_WC_RESP_TIMEOUT_ERR
        ("libfabric:462:1673041636::efa:cq:rxr_cq_write_rx_error():121<warn> rxr_cq_write_rx_error: err: 20, "
         "prov_err: Not a directory (20)", 20, "path", "efa"),
        # libfabric 1.16's EFA provider: the EFA status in its own words (synthetic, v1.16.1 rxr_cq.c)
        ("libfabric:462:1673041636::efa:cq:rxr_cq_write_tx_error():227<warn> rxr_cq_write_tx_error: err: 5, "
         "prov_err: Unresponsive remote (13)", 13, "path", "efa"),
    ],
)
def test_a_providers_completion_queue_error_entry_in_its_numbering(line: str, status: int, status_class: str,
                                                                   stack: str) -> None:
    [e] = only(feed([line]), "nccl.ib_completion_error")
    assert (e.fields["status"], e.fields["status_class"], e.fields["stack"]) == (status, status_class, stack)


@pytest.mark.parametrize(
    "line",
    [
        # the EFA provider's other reports put a libfabric errno into both numbers (a post that failed: ENOMEM),
        # so a number that is one is no completion status (synthetic: v1.15.2 rxr_ep.c's `-ret, -ret`)
        "libfabric:462:1673041636::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err: 12, "
        "prov_err: Cannot allocate memory (12)",
        # ... and two numbers that differ are no status put into both
        "libfabric:462:1673041636::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err: 5, "
        "prov_err: Not a directory (20)",
        # mercury-hpc/mercury#313 (https://github.com/mercury-hpc/mercury/issues/313): the sockets provider's entry
        # holds errnos, no verbs status
        " # na_ofi_cq_read(): fi_cq_readerr got err: 5(Input/output error), prov_errno: -5(Input/output error).",
        # ibv_wc_status_str()'s words with a number that is not theirs are no ibv status (rxm over tcp)
        "libfabric:4242:1668017255:ofi_rxm:cq:rxm_handle_comp_error():1726<warn> fi_cq_readerr: err: Input/output "
        "error (5), prov_err: remote access error (104)",
    ],
)
def test_an_error_entry_whose_number_is_an_errno_is_no_completion_status(line: str) -> None:
    assert only(feed([line]), "nccl.ib_completion_error") == []


@pytest.mark.parametrize(
    "line",
    [
        # EFA's words for statuses 6 and 10 are everyday words: without the EFA provider on the line, nothing
        "OSError: [Errno 90] Message too long",
        "Receiver not ready, retrying in 5s",
        # UCX's words without UCX: an HTTP client's retry log
        "WARNING urllib3: Retrying after connection broken: Remote access error",
        # a work request's id without a completion status's words (a program's own progress record)
        "Failed status check for wr_id 2, retrying",
    ],
)
def test_a_stacks_words_without_the_stack_are_not_read(line: str) -> None:
    assert read_completion(split_prefixes(line).body) is None
    assert only(feed([line]), "nccl.ib_completion_error") == []


def _ibv_spellings() -> list[tuple[str, int]]:
    return [(t, row.code) for row in ib_wc_status_table().values() for t in row.texts]


# The line forms that print ibv_wc_status_str()'s words (synthetic, each after its program's format string): libibverbs'
# example programs (rdma-core libibverbs/examples/rc_pingpong.c parse_single_wc `Failed status %s (%d) for wr_id %d`),
# a program printing the number with the words (uccl-project/uccl#799's `status=12(transport retry counter
# exceeded)`), libfabric's rxm over verbs (`fi_cq_readerr: err: %s (%d), prov_err: %s (%d)`), UCX's rc_verbs
# transport (openucx/ucx src/uct/ib/rc/verbs/rc_verbs_iface.c `send completion with error: %s [qpn ...]`, and its
# older ucs_fatal `Send completion with error: %s`, the words at the line's end).
_IBV_FORMS = [
    "Failed status {t} ({n}) for wr_id 2",
    "CQE ERROR wr_id=3 status={n}({t}) opcode=1 byte_len=0 vendor_err=0xa qp_num=0x2c10",
    "libfabric:4242:1708520807::ofi_rxm:cq:rxm_cq_write_error():212<warn> fi_cq_readerr: err: Input/output error (5), "
    "prov_err: {t} ({n})",
    "[node-07:4242:0:4242] rc_verbs_iface.c:124 UCX  ERROR send completion with error: {t} [qpn 0x1a2 wrid 0x9 "
    "vendor_err 0x81]",
    "[node-07:4242:0:4242] rc_verbs_iface.c:67   Fatal: Send completion with error: {t}",
]


@pytest.mark.parametrize("form", _IBV_FORMS)
@pytest.mark.parametrize(("text", "status"), _ibv_spellings())
def test_every_ibv_status_is_read_by_its_words_in_each_line_form(form: str, text: str, status: int) -> None:
    [e] = only(feed([form.format(t=text, n=status)]), "nccl.ib_completion_error")
    assert (e.fields["status"], e.fields["status_class"]) == (status, ib_wc_status_table()[status].wc_class)


@pytest.mark.parametrize(("text", "status"), [(t, c) for t, c in _ibv_spellings()
                                              if not ib_wc_status_table()[c].numbered])
def test_a_status_of_its_own_words_is_read_on_a_verbs_line_without_its_number(text: str, status: int) -> None:
    f = read_completion(f"ibv_poll_cq on mlx5_0 port 1: wc status {text}, vendor_err 0x81")
    assert f is not None and f["status"] == status


@pytest.mark.parametrize(
    "line",
    [
        # the everyday words alone, even on a line that names a device: no status (synthetic)
        "mlx5_0: fatal error in firmware health poll, recovering",
        "ibv_devinfo: general error while reading mlx5_1 counters",
        "QP 0x1a2 teardown: aborted error handler registration",
        # beside another status's number: not its own
        "Failed status fatal error (21) for wr_id 7",
        # UCX's form, the words followed by more prose
        "[node-07:4242:0:4242] rc_verbs_iface.c:67   Fatal: Send completion with error: fatal error in worker",
        # a member's name or words inside a longer identifier or word
        "mlx5_0: IBV_WC_GENERAL_ERR_COUNT=0 IBV_WC_FATAL_ERR_HANDLER installed",
        "mlx5_0: counters reset, remote access errors=0 local length errors=0",
    ],
)
def test_everyday_words_and_names_inside_longer_ones_are_no_status(line: str) -> None:
    assert read_completion(split_prefixes(line).body) is None
    assert only(feed([line]), "nccl.ib_completion_error") == []


def test_a_numbered_row_needs_its_words(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = {"completion_statuses": [{**GOOD_IBV, "numbered": True}], "async_events": [], "peer_statuses": []}
    with pytest.raises(CatalogTableError, match=r"completion_statuses\[0\]: `numbered` words need `texts`"):
        _build_with(monkeypatch, doc)


# ---------------------------------------------------------------- adapter async events


@pytest.mark.parametrize(
    ("line", "iface", "port"),
    [
        # NVIDIA/nccl#905, NCCL <= 2.22
        ("node-1:100:200 [0] NCCL WARN NET/IB : Got async event : port error", "ib", None),
        # NCCL 2.23-2.27 and 2.28+ (synthetic, net_ib's format strings)
        ("node-1:100:200 [0] NCCL WARN NET/IB : mlx5_3:1 Got async error event: port error", "mlx5_3", 1),
        ("node-1:100:200 [0] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_3:1 Got non-fatal async event: "
         "port error(10)", "mlx5_3", 1),
        # UCX (synthetic, ib_device.c's format string)
        ("[node-1:4242:0:4242] ib_device.c:530 UCX DIAG IB Async event on mlx5_2: port error on port 1", "mlx5_2", 1),
    ],
)
def test_a_port_or_adapter_going_away_is_the_link_going_down(line: str, iface: str, port: int | None) -> None:
    [e] = feed([line])
    assert (e.kind, e.fields["state"], e.fields["iface"], e.fields.get("port")) == ("net.link", "down", iface, port)


def test_the_adapters_catastrophic_error_is_the_adapters_failure() -> None:
    # IBV_EVENT_DEVICE_FATAL: the adapter itself failed (its firmware or hardware), not its link
    [e] = feed(["node-1:100:200 [0] NCCL WARN NET/IB : mlx5_0:1 async fatal event: local catastrophic error"])
    assert (e.kind, e.fields["state"], e.fields["iface"], e.fields.get("port"), e.fields["fault"]) == (
        "net.link", "adapter", "mlx5_0", 1, "local catastrophic error")


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # a queue pair's own failure names no link: a symptom
        ("node-1:100:200 [0] NCCL WARN NET/IB : mlx5_0:1 async fatal event on QP (0x55d) qpn=12 handle=1 send_cq=2 "
         "recv_cq=3 state=6 sq_psn=1 rq_psn=2: local work queue catastrophic error", "nccl.error"),
        ("node-1:100:200 [0] NCCL WARN NET/IB : Got async event : local access violation work queue error",
         "nccl.error"),
        # routine events: nothing, and understood
        ("gpu-l40s-12:8791:8931 [1] NCCL WARN NET/IB : Got async event : GID table change", None),
        ("node-1:100:200 [0] NCCL WARN NET/IB : mlx5_0:1 GID table changed", None),
        ("node-1:100:200 [0] NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: port active(9)", None),
    ],
)
def test_other_async_events(line: str, kind: str | None) -> None:
    assert [e.kind for e in feed([line])] == ([kind] if kind else [])
    assert claimed([line]) == [True]


_ASYNC_KIND = {"link_down": "net.link", "device_fatal": "net.link", "queue_error": "nccl.error", "info": None}


# Every adapter event by ibv_event_type_str()'s words (rdma-core libibverbs/enum_strs.c), in UCX's line (synthetic,
# openucx/ucx src/uct/ib/base/ib_device.c uct_ib_handle_async_event: `IB Async event on %s: %s`, then the port or
# the queue it was on) and NCCL 2.28's (synthetic, src/transport/net_ib/common.cc: `%s:%d Got non-fatal async
# event: %s(%d)`).
@pytest.mark.parametrize(("text", "code", "means"),
                         [(e.text, e.code, e.means) for e in transport_table().async_events])
@pytest.mark.parametrize("form", [
    "[node-1:4242:0:4242] ib_device.c:530 UCX DIAG IB Async event on mlx5_2: {t} on port 1",
    "node-1:100:200 [0] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_2:1 Got non-fatal async event: {t}({n})",
])
def test_every_async_event_is_read_by_its_words(form: str, text: str, code: int, means: str) -> None:
    line = form.format(t=text, n=code)
    kind = _ASYNC_KIND[means]
    assert [e.kind for e in feed([line])] == ([kind] if kind else [])
    assert claimed([line]) == [True]


def test_async_event_words_follow_ibv_event_type_str() -> None:
    row = async_event_of("port error(10)")
    assert row is not None and (row.code, row.means) == (10, "link_down")
    assert async_event_of("port errors") is None


# ---------------------------------------------------------------- peers that stopped answering


@pytest.mark.parametrize(
    ("line", "status", "peer", "host"),
    [
        # openucx/ucx#5159
        ("[jazz15:39570:0:39570]       ud_ep.c:248  Fatal: UD endpoint 0x3b9a060: unhandled timeout error",
         "UCS_ERR_ENDPOINT_TIMEOUT", None, "jazz15"),
        # openucx/ucx#6679 (its title, posted without UCX's header): the UD endpoint names its peer
        ("ud_ep.c:270 Fatal: UD endpoint 0x973660 to jazz25:70567: unhandled timeout error",
         "UCS_ERR_ENDPOINT_TIMEOUT", "jazz25", None),
        # openucx/ucx#6253 (Intel MPI; the pid padded in UCX's header)
        ("[compute-0-20:9358 :0:9358]    ud_iface.c:737  UCX Fatal: transport error: Endpoint timeout",
         "UCS_ERR_ENDPOINT_TIMEOUT", None, "compute-0-20"),
        # openucx/ucx#1881 (Open MPI --timestamp-output --tag-output, UCX's Unix time)
        ("Sun Oct  1 17:18:44 2017[1,7]<stdout>:[1506867524.064665] [clx-hercules-012:26727:0]     ucp_worker.c:373  "
         "UCX  ERROR Error Endpoint timeout was not handled for ep 0xac1510", "UCS_ERR_ENDPOINT_TIMEOUT", None,
         "clx-hercules-012"),
        # open-mpi/ompi#7735
        ("[ip-172-31-1-68:27726] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2257",
         "PMIX_ERR_UNREACH", None, "ip-172-31-1-68"),
    ],
)
def test_a_peer_that_stopped_answering_is_a_remote_error(line: str, status: str, peer: str | None,
                                                           host: str) -> None:
    [e] = feed([line])
    assert e.kind == "nccl.remote_error"
    assert (e.fields["peer_status"], e.fields.get("peer"), e.fields.get("host")) == (status, peer, host)


@pytest.mark.parametrize(
    ("line", "status", "host"),
    [
        # synthetic, in UCX's socket layer's format (openucx/ucx src/ucs/sys/sock.c ucs_socket_connect: `connect(fd=%d,
        # dest_addr=%s) failed: %m` under UCX's `[time] [host:pid:tid] sock.c:NNN UCX ERROR` head, as
        # NVIDIA/deepops#1199 shows it; host, numbers and address ours)
        ("[1700000000.123456] [gpu-07:31337:0]            sock.c:260  UCX  ERROR   connect(fd=52, "
         "dest_addr=10.1.2.3:41235) failed: Connection refused", "ECONNREFUSED", "gpu-07"),
        ("[1700000000.123456] [gpu-07:31337:0]            sock.c:260  UCX  ERROR   connect(fd=52, "
         "dest_addr=10.1.2.3:41235) failed: No route to host", "EHOSTUNREACH", "gpu-07"),
        # synthetic, Open MPI's UCX PML printing ucs_status_string() of ucp_ep_create (ompi/mca/pml/ucx/pml_ucx.c
        # mca_pml_ucx_add_proc: `ucp_ep_create(proc=%d) failed: %s`, under Open MPI's `[host:pid]` head)
        ("[gpu-07:31337] pml_ucx.c:419  Error: ucp_ep_create(proc=3) failed: Destination is unreachable",
         "UCS_ERR_UNREACHABLE", "gpu-07"),
    ],
)
def test_ucxs_socket_layer_and_open_mpis_ucx_pml_name_a_peer_that_did_not_answer(line: str, status: str,
                                                                                 host: str) -> None:
    [e] = feed([line])
    assert (e.kind, e.fields["stack"], e.fields["peer_status"]) == ("nccl.remote_error", "ucx", status)
    assert e.fields.get("host") == host


@pytest.mark.parametrize(
    "line",
    [
        # the same errno's words in another program's log, no UCX head or word (a client's own connect)
        "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. connect() failed: "
        "Connection refused",
        # an Open MPI component that is no UCX one, with UCX's status words (synthetic)
        "[gpu-07:31337] btl_vader.c:100  Error: something failed: Destination is unreachable",
    ],
)
def test_near_miss_socket_words_outside_ucx_are_not_ucxs(line: str) -> None:
    assert [e for e in feed([line]) if e.fields.get("stack") == "ucx"] == []


# Every PMIx peer status by each of its spellings (synthetic, after PMIX_ERROR_LOG's `[host:pid] PMIX ERROR: %s in file
# %s at line %d`).
@pytest.mark.parametrize(("text", "name"), [(t, r.name) for r in transport_table().peers
                                            if r.stack == "pmix" and r.means != "none"
                                            for t in r.texts])
def test_every_pmix_peer_status_is_a_remote_error(text: str, name: str) -> None:
    [e] = only(feed([f"[node-02:01234] {text} in file server/pmix_server.c at line 2257"]), "nccl.remote_error")
    assert e.fields["host"] == "node-02"
    assert e.fields["peer_status"] == name


@pytest.mark.parametrize("line", [
    # a PMIx status of no peer's (synthetic, PMIX_ERROR_LOG's form): a bad parameter
    "[node-02:01234] PMIX ERROR: BAD-PARAM in file client/pmix_client.c at line 225",
    # the words in prose, no PMIx record (synthetic)
    "the scheduler retried: node-down events are handled by the operator",
    # PMIx's own event name inside a longer one (synthetic)
    "[node-02:01234] PMIX ERROR: PROC-ABORTING in file x.c at line 1",
])
def test_pmix_statuses_of_no_peer_are_not_read(line: str) -> None:
    assert only(feed([line]), "nccl.remote_error") == []


def test_mpich_names_the_rank_it_lost() -> None:
    # microsoft/LightLDA#62
    [e] = feed(["MPID_nem_tcp_connpoll(1826): Communication error with rank 1: Connection reset by peer"])
    assert (e.kind, e.fields["stack"], e.fields["peer_rank"]) == ("nccl.remote_error", "mpich", 1)


def test_open_mpis_blocks_name_the_peer_on_a_later_line() -> None:
    # garyexplains/examples#13
    orte = ["ORTE has lost communication with a remote daemon.", "",
            "  HNP daemon   : [[64112,0],0] on node wmaster-desktop",
            "  Remote daemon: [[64112,0],1] on node 10.126.10.10", ""]
    [e] = feed(orte)
    assert (e.fields["stack"], e.fields["peer"]) == ("orte", "10.126.10.10")
    # aws/aws-parallelcluster#301: the older ORTE form
    old = ["ORTE has lost communication with its daemon located on node:", "",
           "  hostname:  ip-10-15-20-17.ec2.internal", ""]
    [e] = feed(old)
    assert e.fields["peer"] == "ip-10-15-20-17.ec2.internal"
    # Open MPI 5's launcher, PRRTE's src/mca/errmgr/base/help-errmgr-base.txt [node-died]
    prte = ["PRTE has lost communication with a remote daemon.", "",
            "  HNP daemon   : [prterun-gpu-01-4242@0,0] on node gpu-01",
            "  Remote daemon: [prterun-gpu-01-4242@0,1] on node gpu-07", ""]
    [e] = feed(prte)
    assert (e.kind, e.fields["stack"], e.fields["peer"]) == ("nccl.remote_error", "orte", "gpu-07")
    # ... its words for something else it lost are no daemon of the job's (synthetic)
    assert feed(["The scheduler has lost communication with a remote storage target."]) == []
    # open-mpi/ompi#7735
    ompi = ["An MPI communication peer process has unexpectedly disconnected.  This",
            "usually indicates a failure in the peer process (e.g., a crash or", "",
            "  Local host: ip-172-31-6-3", "  Local PID:  12741", "  Peer host:  ip-172-31-1-32"]
    [e] = feed(ompi)
    assert (e.fields["stack"], e.fields["peer"]) == ("ompi", "ip-172-31-1-32")


def test_pmix_repeating_itself_is_one_loss() -> None:
    line = "[ip-172-31-1-68:27726] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2257"
    assert len(feed([line, line, line])) == 1


@pytest.mark.parametrize(
    "lines",
    [
        # UCX's status words in another program's log
        ["requests.exceptions.ReadTimeout: Endpoint timeout after 30s"],
        # a `hostname:` line with no Open MPI block above it
        ["  hostname:  login-01"],
        # the block's peer line too far below its opening
        ["ORTE has lost communication with a remote daemon.", *[f"filler {i}" for i in range(15)],
         "  Remote daemon: [[64112,0],1] on node 10.126.10.10"],
    ],
)
def test_peer_words_out_of_place_are_not_read(lines: list[str]) -> None:
    assert only(feed(lines), "nccl.remote_error") == []


# ---------------------------------------------------------------- the MPI launchers' word on the rank that exited


def test_open_mpis_first_process_block_names_the_rank_and_its_exit_code() -> None:
    # tests/wild/sw-mpirun-horovod-shutdown-cuda-oom-uniter (its PROVENANCE names the thread)
    lines = ["Primary job  terminated normally, but 1 process returned",
             "a non-zero exit code. Per user-direction, the job has been aborted.",
             "mpirun detected that one or more processes exited with non-zero status, thus causing",
             "the job to be terminated. The first process to do so was:", "",
             "  Process name: [[50371,1],0]", "  Exit code:    1"]
    [e] = only(feed(lines), "process.signal")
    assert (e.rank, e.fields["exitcode"], e.fields["by"], "signal" in e.fields) == (0, 1, "launcher", False)


@pytest.mark.parametrize(
    ("lines", "rank", "fields"),
    [
        # real output: Open MPI 4.1.4's mpirun, run here, rank 1 of 2 exiting with code 137 (`exit 137`): one exit,
        # one event, with its rank (not also the generic exit-code reading's, without it)
        (["--------------------------------------------------------------------------",
          "Primary job  terminated normally, but 1 process returned",
          "a non-zero exit code. Per user-direction, the job has been aborted.",
          "--------------------------------------------------------------------------",
          "--------------------------------------------------------------------------",
          "mpirun detected that one or more processes exited with non-zero status, thus causing",
          "the job to be terminated. The first process to do so was:", "",
          "  Process name: [[10441,1],1]", "  Exit code:    137",
          "--------------------------------------------------------------------------"],
         1, {"exitcode": 137, "signal": "SIGKILL", "by": "launcher"}),
        # ... the same rank killed by SIGKILL (`kill -9 $$`)
        (["mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed)."],
         1, {"signal": "SIGKILL", "by": "launcher", "host": "vm"}),
        # open-mpi/ompi#10307 (https://github.com/open-mpi/ompi/issues/10307): srun's word on a task that exited 1
        (["srun: error: snowflake7: task 0: Exited with exit code 1"], 0,
         {"exitcode": 1, "by": "launcher", "host": "snowflake7"}),
        # Open MPI users list, "OpenMPI and SLURM" (Beat Rubischon, 2012, message 21113): a range of tasks names no
        # one rank
        (["srun: error: node30: tasks 0-1: Exited with exit code 1"], None,
         {"exitcode": 1, "by": "launcher", "host": "node30"}),
    ],
)
def test_a_launchers_word_on_an_exit_is_one_event_with_its_rank(lines: list[str], rank: int | None,
                                                                 fields: dict[str, object]) -> None:
    [e] = only(feed(lines), "process.signal")
    assert e.rank == rank and {k: e.fields.get(k) for k in fields} == fields


@pytest.mark.parametrize(
    ("lines", "aborted"),
    [
        # real output: Open MPI 4.1.4's mpirun, run here, ending the job when one of 3 ranks exited 3
        (["Primary job  terminated normally, but 1 process returned",
          "a non-zero exit code. Per user-direction, the job has been aborted."], True),
        # srun's own word on a step it is ending (Slurm's srun) is not mpirun's
        (["srun: Job step aborted: Waiting up to 32 seconds for job step to finish."], False),
        # ... and a job's own prose about an abort is no launcher's
        (["INFO training: the job has been aborted by the user, saving a checkpoint"], False),
    ],
)
def test_mpirun_ending_the_job_for_a_process_that_failed(lines: list[str], aborted: bool) -> None:
    got = [e for e in only(feed(lines), "launcher.exit") if e.fields.get("aborted") is True]
    assert [(e.fields["state"], e.fields["system"]) for e in got] == ([("FAILED", "mpirun")] if aborted else [])


def test_a_generic_exit_code_outside_a_launchers_block_is_still_read() -> None:
    # a trainer's own exit-code line is no launcher's block: FfDL's learner (IBM/FfDL#127,
    # https://github.com/IBM/FfDL/issues/127)
    [e] = only(feed(["136 | 1534166953118 | Training process finished. Exit code: 137"]), "process.signal")
    assert (e.rank, e.fields["signal"], e.fields["exitcode"]) == (None, "SIGKILL", 137)


@pytest.mark.parametrize(
    ("lines", "rank", "host", "pid", "signal", "exitcode"),
    [
        # bsc-performance-tools/extrae#101 (MPICH 4 / Intel MPI)
        (["===================================================================================",
          "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   RANK 6 PID 2447372 RUNNING AT node0009",
          "=   KILLED BY SIGNAL: 9 (Killed)"], 6, "node0009", 2447372, "SIGKILL", None),
        # IntelligentSoftwareSystems/Galois#37 (older Hydra: 139 is 128 + SIGSEGV)
        (["=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   PID 4774 RUNNING AT IIPLab-WS1",
          "=   EXIT CODE: 139", "=   CLEANING UP REMAINING PROCESSES"], None, "IIPLab-WS1", 4774, "SIGSEGV", 139),
        # ggml-org/llama.cpp#4792 (a user@ before the host)
        (["=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   PID 108257 RUNNING AT jetson@node1",
          "=   EXIT CODE: 134"], None, "node1", 108257, "SIGABRT", 134),
    ],
)
def test_hydras_banner_names_the_rank_host_and_how_it_ended(lines: list[str], rank: int | None, host: str,
                                                            pid: int, signal: str, exitcode: int | None) -> None:
    [e] = only(feed(lines), "process.signal")
    assert (e.rank, e.fields["host"], e.fields["pid"], e.fields["signal"], e.fields.get("exitcode")) == (
        rank, host, pid, signal, exitcode)
    assert all(c for c, text in zip(claimed(lines), lines, strict=True) if "=   " in text and "CLEANING" not in text)


@pytest.mark.parametrize(
    ("line", "rank", "fields"),
    [
        # pmodels/mpich#831 (mpd)
        ("  exit status of rank 59: killed by signal 9", 59, {"signal": "SIGKILL"}),
        ("  exit status of rank 42: return code 1", 42, {"exitcode": 1}),
        # ofiwg/libfabric#11307 (Cray MPICH names the rank and its node)
        ("MPICH ERROR [Rank 11122] [job id 41595204.0] [Thu Aug 14 08:27:11 2025] [nid006700] - Abort(2695311) (rank "
         "11122 in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, error stack:", 11122,
         {"host": "nid006700", "mpi_call": "PMPI_Allreduce", "by": "runtime"}),
        # pmodels/mpich#361 (MPICH's PMI client tag is the rank)
        ("[cli_1]: aborting job:", 1, {"by": "runtime"}),
        # open-mpi/ompi's MPI_ABORT help text (synthetic rank)
        ("MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD", 3, {"by": "launcher"}),
    ],
)
def test_mpich_and_open_mpi_exit_reports(line: str, rank: int, fields: dict[str, object]) -> None:
    [e] = only(feed([line]), "process.signal")
    assert e.rank == rank
    assert {k: e.fields.get(k) for k in fields} == fields


@pytest.mark.parametrize(
    "lines",
    [
        # the words of the blocks' detail lines, without the block
        ["  Exit code:    1"],
        ["=   EXIT CODE: 9"],
        ["=   PID 9665 RUNNING AT NeuroRTX6000"],
        # an exit code past the block's reach
        ["mpirun detected that one or more processes exited with non-zero status, thus causing",
         *[f"filler {i}" for i in range(10)], "  Exit code:    1"],
    ],
)
def test_an_exit_report_out_of_its_block_is_not_read(lines: list[str]) -> None:
    assert [e for e in only(feed(lines), "process.signal") if e.fields.get("by") in ("launcher", "runtime")] == []


def test_hydras_teardown_chatter_is_understood_without_an_event() -> None:
    # IntelligentSoftwareSystems/Galois#37
    lines = ["[proxy:0:1@IIPLab-WS2] HYD_pmcd_pmip_control_cmd_cb (pm/pmiserv/pmip_cb.c:878): assert (!closed) failed",
             "[mpiexec@IIPLab-WS2] HYDT_bscu_wait_for_completion (tools/bootstrap/utils/bscu_wait.c:75): one of the "
             "processes terminated badly; aborting"]
    assert feed(lines) == [] and claimed(lines) == [True, True]


def test_hydras_socket_write_to_a_peer_gone_is_teardown_too() -> None:
    # Hydra's utilities writing to a socket whose other end is gone, as a public LAMMPS note (`mpirun -np 10 LAMMPS <
    # in.shear` under an alias) and a public ssh debug session quote them: the launcher's reaction, no event
    lines = ["[proxy:0:0@node5] HYDU_sock_write (utils/sock/sock.c:256): write error (Broken pipe)",
             "[mpiexec@master_ubss3] HYDU_sock_write (utils/sock/sock.c:294): write error (Bad file descriptor)"]
    assert feed(lines) == [] and claimed(lines) == [True, True]
    # near miss: the same words without Hydra's tag are not its teardown (left to the readers of its errno)
    assert claimed(["HYDU_sock_write (utils/sock/sock.c:256): write error (Broken pipe)"]) == [False]


# ---------------------------------------------------------------- NCCL's socket layer failing to reach a peer


@pytest.mark.parametrize(
    ("line", "status", "peer"),
    [
        # NVIDIA/nccl-tests#166
        ("ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : "
         "Software caused connection abort", "ECONNABORTED", "10.0.0.2"),
        # NVIDIA/nccl#1618 (a site's own log format around NCCL's WARN)
        ("[03/16][2025-02-25 15:46:48,389] [misc/socket.cc:602] [s11gn1268:pid=3987720] NCCL WARN socketPollConnect "
         "poll() failed, ret 1, error Connection timed out, revents 8, connect to 172.16.30.229:39953", "ETIMEDOUT",
         "172.16.30.229"),
    ],
)
def test_a_socket_connect_that_fails_names_the_peer(line: str, status: str, peer: str) -> None:
    [e] = feed([line])
    assert (e.kind, e.fields["stack"], e.fields["peer_status"], e.fields["peer"]) == (
        "nccl.remote_error", "nccl", status, peer)


@pytest.mark.parametrize(
    "line",
    [
        # a local errno on connect is this node's own refusal, not a peer gone (synthetic, NCCL 2.4's wording)
        "node1:1:2 [0] NCCL WARN Net : Connect to 10.0.0.2<40811> failed : Permission denied",
        # NCCL's retry notice is INFO: it retries (Oneflow-Inc/oneflow#3586)
        "worker:101542:101934 [0] NCCL INFO Call to connect returned Connection timed out, retrying",
    ],
)
def test_a_socket_failure_that_is_no_lost_peer(line: str) -> None:
    assert only(feed([line]), "nccl.remote_error") == []


# ---------------------------------------------------------------- the job's own set-up in a transport's words


def setup_of(lines: list[str]) -> list[Event]:
    return [e for e in feed(lines) if e.kind == "nccl.error" and e.fields.get("setup") is True]


@pytest.mark.parametrize(
    ("lines", "fields"),
    [
        # NVIDIA/nccl#563 (https://github.com/NVIDIA/nccl/issues/563), behind pdsh's two host tags: the OFI plugin
        # could not pin the buffer (ENOMEM: the job's locked-memory limit)
        (["10.0.87.143: 10.0.87.143: ip-10-0-87-143:149:298 [5] register_mr_buffers:465 NCCL WARN NET/OFI Unable to "
          "register memory (type = 1) for device 0. RC: 12, Error: Cannot allocate memory"], {"errno": "ENOMEM"}),
        # awslabs/awsome-distributed-ai#203: the plugin and an old libfabric disagree (EINVAL)
        (["register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. RC: -22, "
          "Error: Invalid argument"], {"errno": "EINVAL"}),
        # NVIDIA/nccl-tests#14 (https://github.com/NVIDIA/nccl-tests/issues/14): NCCL 2.2's header, no `NCCL`; a
        # container without the host's network has no address family for NCCL's sockets
        (["e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not "
          "supported by protocol"], {"errno": "EAFNOSUPPORT"}),
        # vllm-project/vllm#2084 (https://github.com/vllm-project/vllm/issues/2084), behind Ray's worker tag:
        # NCCL_SOCKET_IFNAME=^lo,docker,veth left no interface
        (["(RayWorker pid=14391) pytorch-2-0-1-gpu-ml-g4dn-12xlarge-a1771cff5b2706f02b86883798ff:14391:14391 [0] "
          "bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found"], {"local_status": "no_interface"}),
        # NVIDIA/nccl#1837: the same, before NCCL said so, as PyTorch quotes the WARN after `Last error:`
        (["[trainer0|0]:ncclInternalError: Internal check failed.", "[trainer0|0]:Last error:",
          "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor "
          "AF_INET6(10)"], {"local_status": "no_interface"}),
        # awslabs/awsome-distributed-ai#647: the EFA provider's abort report; the libfabric errno (ENOMEM, the
        # locked-memory limit) comes on the line before its own status (4112)
        (["Libfabric EFA provider has encountered an internal error:", "", "Libfabric error: (-12) Cannot allocate "
          "memory", "EFA internal error: (4112) Failure to post internal receive buffers", "",
          "Your application will now abort()."],
         {"errno": "ENOMEM", "stack": "efa", "status": 4112, "status_name": "FI_EFA_ERR_INTERNAL_RX_BUF_POST"}),
    ],
)
def test_a_transport_saying_the_node_lacks_what_the_job_asked_is_its_set_up(
        lines: list[str], fields: dict[str, object]) -> None:
    [e] = setup_of(lines)
    assert {k: e.fields.get(k) for k in fields} == fields
    assert only(feed(lines), "nccl.remote_error") == [] and only(feed(lines), "nccl.ib_completion_error") == []


def test_the_component_framework_names_the_node_that_lacks_the_component() -> None:
    # Open MPI users list, "OpenMPI and SLURM" (Beat Rubischon, 2012, message 21113; open-mpi/ompi-www's archive):
    # Open MPI under srun, built without the grpcomm component the job asked for
    lines = [
        "--------------------------------------------------------------------------",
        "A requested component was not found, or was unable to be opened.  This",
        "means that this component is either not installed or is unable to be",
        "used on your system (e.g., sometimes this means that shared libraries",
        "that the component requires are unable to be found/loaded).  Note that",
        "Open MPI stopped checking at the first component that it did not find.",
        "",
        "Host:      node30.cluster",
        "Framework: grpcomm",
        "Component: hier",
    ]
    # read at its sentence (on the node that printed it: none here), and on the node its `Host:` line names
    first, named = setup_of(lines)
    assert (first.fields["local_status"], first.fields.get("host")) == ("component_not_found", None)
    assert (named.fields["stack"], named.fields["local_status"], named.fields["host"]) == ("mca", "component_not_found",
                                                                                           "node30.cluster")
    assert claimed(lines)[1] and claimed(lines)[7]


_RULE = "-" * 74


@pytest.mark.parametrize(
    ("lines", "status", "stack", "host"),
    [
        # real output: Open MPI 4.1.4's mpirun, run here as root with --allow-run-as-root, asked for 8 ranks of
        # `hostname` on a 2-core machine
        ([_RULE, "There are not enough slots available in the system to satisfy the 8",
          "slots that were requested by the application:", "", "  hostname", "",
          "Either request fewer slots for your application, or make more slots", "available for use.", _RULE],
         "not_enough_slots", "ompi", None),
        # ... the same mpirun run as root without the override
        ([_RULE, "mpirun has detected an attempt to run as root.", "",
          "Running as root is *strongly* discouraged as any mistake (e.g., in"], "run_as_root", "ompi", None),
        # ... and asked to start a program that is not there: the `Node:` line names the node
        ([_RULE, "mpirun was unable to launch the specified application as it could not access",
          "or execute an executable:", "", "Executable: /nonexistent/prog", "Node: vm", "",
          "while attempting to start process rank 0.", _RULE], "executable_not_launched", "ompi", "vm"),
        # UCL-ARC/rcps-buildscripts#50 (https://github.com/UCL-ARC/rcps-buildscripts/issues/50): STAR-CD's own Intel
        # MPI asked for the tmi fabric the cluster does not have
        (["[0] MPI startup(): tmi fabric is not available and fallback fabric is not enabled"],
         "fabric_not_available", "impi", None),
        # Azure/azure-bigcompute#1 (https://github.com/Azure/azure-bigcompute/issues/1): dapl, after a custom script
        # changed the image
        ([" [0] MPI startup(): dapl fabric is not available and fallback fabric is not enabled"],
         "fabric_not_available", "impi", None),
        # intel/MLSL#25 (https://github.com/intel/MLSL/issues/25): ofi with I_MPI_FALLBACK=0, behind mpirun -l's label
        (["[1] [1] MPI startup(): ofi fabric is not available and fallback fabric is not enabled"],
         "fabric_not_available", "impi", None),
    ],
)
def test_a_launcher_or_mpi_refusing_the_job_as_it_was_set_up(lines: list[str], status: str, stack: str,
                                                             host: str | None) -> None:
    events = setup_of(lines)
    # the sentence on the node that printed it, and where the text names a node, on that node too
    assert [e.fields.get("host") for e in events] == ([None, host] if host else [None])
    e = events[-1]
    assert (e.fields["local_status"], e.fields["stack"], e.fields.get("host")) == (status, stack, host)
    assert only(feed(lines), "nccl.remote_error") == []


@pytest.mark.parametrize(
    "lines",
    [
        # a simonsobs/sotodlib set-up note for Perlmutter (its `ERROR (solved)` block, verbatim): Cray MPICH asked for
        # GPU-aware transfers by a program built without the GPU Transport Layer
        ["MPICH ERROR [Rank 0] [job id ] [Thu Sep 21 06:09:17 2023] [login17] - Abort(-1) (rank 0 in comm 0): "
         "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked", " (Other MPI error)", "",
         "aborting job:"],
        # Alexander-Barth/Julia-HPC-examples, its MPI README (LUMI): the abort's second line alone
        ["MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked"],
    ],
)
def test_cray_mpich_without_its_gpu_transport_layer_is_the_jobs_build(lines: list[str]) -> None:
    [e] = setup_of(lines)
    assert (e.fields["stack"], e.fields["local_status"]) == ("cray", "gpu_transport_not_linked")


def test_a_linked_gpu_transport_layer_failing_a_transfer_is_no_set_up() -> None:
    # a public Perlmutter job script's comment quoting the GTL's run-time error (NERSC's guidance on managed memory):
    # the GTL is there and a transfer failed
    assert setup_of(["(GTL DEBUG: 0) cuIpcGetMemHandle: invalid argument, CUDA_ERROR_INVALID_VALUE, line no 101"]) == []


@pytest.mark.parametrize(
    "lines",
    [
        # open-mpi/ompi#10693 (https://github.com/open-mpi/ompi/issues/10693): the openib BTL declining a device
        # while the program runs on (over UCX) is no refusal of the job
        ([_RULE, "WARNING: There was an error initializing an OpenFabrics device.", "", "  Local host:   lxbk1039",
          "  Local device: mlx5_0", _RULE]),
        # UCL-ARC/rcps-buildscripts#224: Intel MPI saying which fabric it took
        (["[0] MPI startup(): libfabric provider: sockets"]),
        # a `Node:` line with no help text above it
        (["Node: vm"]),
    ],
)
def test_what_only_resembles_a_refused_set_up_is_not_one(lines: list[str]) -> None:
    assert setup_of(lines) == []


def test_a_label_other_than_the_help_texts_names_no_node() -> None:
    # a `Node:` line below the component framework's help text, whose label is `Host:`: the sentence is read, on
    # the node that printed it (none here), and the other label's host is not taken
    events = setup_of([_RULE, "A requested component was not found, or was unable to be opened.  This", "Node: vm"])
    assert [(e.fields["local_status"], e.fields.get("host")) for e in events] == [("component_not_found", None)]


@pytest.mark.parametrize(
    "lines",
    [
        # aws/aws-ofi-nccl#70 (https://github.com/aws/aws-ofi-nccl/issues/70): the same registration failing with a
        # code that is no errno says nothing of the set-up: an NCCL error, a symptom
        ["10.0.87.143: 10.0.78.113: ip-10-0-78-113:3234:3425 [5] register_mr_buffers:469 NCCL WARN NET/OFI Unable to "
         "register memory (type = 1) for device 0. RC: -736476143, Error:"],
        # NVIDIA/nccl-tests#14: the IB library missing is NCCL falling back to its sockets (the maintainer: to be
        # ignored), and nccl-tests' own report names no set-up
        ["e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]",
         "NCCL failure common.cu:874 'unhandled system error'"],
        # vllm-project/vllm#2084: the environment naming the interfaces is no failure
        ["(RayWorker pid=14391) pytorch-2-0-1-gpu-ml-g4dn-12xlarge-a1771cff5b2706f02b86883798ff:14391:14391 [0] NCCL "
         "INFO NCCL_SOCKET_IFNAME set by environment to ^lo,docker,veth"],
        # a `Host:` line with no component help text above it (Open MPI's peer-loss block prints one too)
        ["Host:      node30.cluster"],
        # ofiwg/libfabric#6249 (https://github.com/ofiwg/libfabric/issues/6249): an EFA report holding ENOMEM's
        # number as its provider errno, which names no status of the table
        ["Unable to write to EQ: Missing or unavailable event queue. err: Input/output error (5) prov_errno: Unknown "
         "error -12 (-12) prov/efa/src/rxr/rxr.h:1343"],
        # an address vector insert failing is the path to the peer (the EFA row of the table), whatever errno the
        # plugin returned (synthetic: aws-ofi-nccl's nccl_ofi_sendrecv.c format string, `RC: %s` of fi_strerror)
        ["ip-10-0-0-1:100:200 [0] nccl_net_ofi_connect:1123 NCCL WARN NET/OFI Unable to insert remote address into "
         "address vector for device 1. RC: Invalid argument"],
        # a CUDA error's words are the CUDA table's, never an errno's (NVIDIA/nccl#1488, tests/wild's
        # inf-fabricmanager-restart-nvls-invalid-argument: NVLS without its Fabric Manager)
        ["node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'"],
    ],
)
def test_what_names_no_set_up_is_not_read_as_one(lines: list[str]) -> None:
    assert setup_of(lines) == []


def test_an_address_the_efa_provider_cannot_reach_is_the_path() -> None:
    # aws/aws-ofi-nccl#663: PyTorch quoting the plugin's WARN after `Last error:` (a security group without EFA's
    # outbound rule); the format string's other spelling, above, reads the same
    [e] = only(feed(["[rank1]: ncclInternalError: Internal check failed.", "[rank1]: Last error:",
                     "[rank1]: NET/OFI Unable to insert remote address into address vector for device 1. RC: 0"]),
               "nccl.ib_completion_error")
    assert (e.fields["stack"], e.fields["status"], e.fields["status_class"]) == ("efa", 4110, "path")


def test_a_banner_glued_to_ucxs_line_hides_neither_the_status_nor_the_host() -> None:
    # openucx/ucx#4182: MTT's banner glued to the first line of the output
    [e] = feed(["=============================================================[clx-orion-084:24830:0:24830]    "
                "ud_iface.c:761  Fatal: transport error: Endpoint timeout"])
    assert (e.kind, e.fields["peer_status"], e.fields["host"]) == ("nccl.remote_error", "UCS_ERR_ENDPOINT_TIMEOUT",
                                                                   "clx-orion-084")



def test_a_vllm_workers_line_is_read_behind_its_tag_and_logger_with_its_rank() -> None:
    # vllm-project/vllm#17756 (https://github.com/vllm-project/vllm/issues/17756): vLLM 0.9's worker, rank 3
    [e] = feed(["(VllmWorker rank=3 pid=406) ERROR 07-23 19:34:51 [multiproc_executor.py:487] RuntimeError: NCCL "
                "error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"])
    assert (e.kind, e.rank, e.fields.get("nccl_result")) == ("nccl.error", 3, "ncclUnhandledCudaError")


@pytest.mark.parametrize(
    ("line", "errno"),
    [
        # constructed: an argument the configuration gave (a GID index the port does not have), no UCX header
        ("ibv_modify_qp failed: Invalid argument", "EINVAL"),
    ],
)
def test_a_verbs_call_that_failed_with_a_setup_errno_is_the_jobs_setup(line: str, errno: str) -> None:
    (e,) = feed([line])
    assert (e.kind, e.fields["errno"], e.fields["setup"]) == ("nccl.error", errno, True)


@pytest.mark.parametrize(
    "line",
    [
        # an errno that is no set-up's (a peer's, the adapter's), and a call's name without its failure
        "ibv_create_qp failed: Connection timed out",
        "using ibv_create_cq with 4096 entries",
        # a failed allocation that is no verbs call
        "E: shm.c: mmap() failed: Cannot allocate memory",
    ],
)
def test_other_verbs_call_lines_are_no_setup_failure(line: str) -> None:
    assert [e for e in feed([line]) if e.fields.get("setup")] == []


# ---------------------------------------------------------------- help texts, wherever they stand


@pytest.mark.parametrize(
    ("lines", "status", "hosts"),
    [
        # horovod/horovod#1812 (https://github.com/horovod/horovod/issues/1812): horovodrun printing mpirun's help
        # text without its rules, and the post stopping before its `Node:` line
        (["mpirun was unable to find the specified executable file, and therefore",
          "did not launch the job.  This error was first reported for process",
          "rank 0; it may have occurred for other processes as well.",
          "NOTE: A common cause for this error is misspelling a mpirun command"], "executable_not_launched", [None]),
        # PRRTE's src/mca/schizo/prte/help-prun.txt [prun:exe-not-found], which breaks the sentence elsewhere, behind
        # mpirun's --tag-output
        (["[1,0]<stderr>:prterun was unable to find the specified executable file, and therefore did",
          "[1,0]<stderr>:not launch the job.  This error was first reported for process rank"],
         "executable_not_launched", [None]),
        # ... [prun:exe-not-accessible]: the first line ends where the working-directory topic's does too, the
        # second says which; its `Node:` line, indented, names the node
        (["prterun was unable to launch the specified application as it could not", "access an executable:", "",
          "   Executable: /opt/app/train", "   Node: gpu-07", "", "while attempting to start process rank 3."],
         "executable_not_launched", [None, "gpu-07"]),
        # Open MPI 4's orte/tools/orterun/help-orterun.txt [orterun:wdir-not-found]
        (["mpirun was unable to launch the specified application as it could not", "change to the specified working "
          "directory:", "", "Working directory: /scratch/run7", "Node: gpu-07"],
         "working_directory_not_found", [None, "gpu-07"]),
        # help-prun.txt [prun:sys-limit-children]: the last word alone on the next line
        (["Error: system limit exceeded on number of processes that can be", "started", "", "   Node: gpu-07"],
         "system_limit", [None, "gpu-07"]),
        # PRRTE's src/mca/rmaps/round_robin/help-prte-rmaps-rr.txt [prte-rmaps-rr:not-enough-cpus], as printed
        (["There are not enough slots available in the system or not enough",
          "CPUs in the specified PE-LIST to map the number of processes requested", "by the application:"],
         "not_enough_slots", [None]),
        # orte/mca/rmaps/base/help-orte-rmaps-base.txt [orte-rmaps-base:oversubscribed], framed
        ([_RULE, "The requested number of processes exceeds the allocated", "number of slots:", _RULE],
         "not_enough_slots", [None]),
        # ... [rmaps:binding-overload]
        (["A request was made to bind to that would result in binding more", "processes than cpus on a resource:"],
         "binding_failed", [None]),
        # orte/util/hostfile/help-hostfile.txt [no-hostfile]
        (["Open RTE was unable to open the hostfile:", "    /home/u/hosts.txt",
          "Check to make sure the path and filename are correct."], "hostfile_invalid", [None]),
        # PRRTE's src/util/dash_host/help-dash-host.txt [not-all-mapped-alloc]
        (["At least one of the requested hosts is not included in the current", "allocation."],
         "hosts_outside_allocation", [None]),
        # help-orterun.txt [orterun:executable-not-specified]
        (["No executable was specified on the mpirun command line.", "", "Aborting."], "no_executable", [None]),
        # opal/mca/base/help-mca-var.txt [invalid-value-enum]
        (["An invalid value was supplied for an enum variable.", "", "  Variable     : hwloc_base_binding_policy"],
         "invalid_mca_value", [None]),
        # opal/mca/base/help-mca-base.txt [find-available:none found], its `Host:` line below
        (["No components were able to be opened in the pml framework.", "", "  Host:      gpu-07",
          "  Framework: pml"], "component_not_found", [None, "gpu-07"]),
    ],
)
def test_a_help_text_is_read_by_its_sentences_framed_or_not(lines: list[str], status: str,
                                                             hosts: list[str | None]) -> None:
    events = setup_of(lines)
    assert [(e.fields["local_status"], e.fields.get("host")) for e in events] == [(status, h) for h in hosts]
    assert only(feed(lines), "nccl.remote_error") == []


@pytest.mark.parametrize(
    "lines",
    [
        # a line ending where two topics' sentences both begin, then neither topic's words
        ["mpirun was unable to launch the specified application as it could not", "reach the license server"],
        # ... and the two lines of a topic apart (a line between them)
        ["mpirun was unable to launch the specified application as it could not", "",
         "access or execute an executable:"],
        # a sentence's head in other words
        ["the agent was unable to find the specified executable file in its image cache"],
        # opal/mca/btl/openib/help-mpi-btl-openib.txt [no active ports found]: a transport that could not start on
        # this node while the job goes on over another is a warning, no set-up refused
        [_RULE, "WARNING: There is at least one non-excluded one OpenFabrics device found,",
         "but there are no active ports detected (or Open MPI was unable to use",
         "them).  This is most certainly not what you wanted.  Check your",
         "cables, subnet manager configuration, etc.  The openib BTL will be", "ignored for this job.", "",
         "  Local host: gpu-07", _RULE],
        # orte/mca/errmgr help text of a daemon lost: a death, the leads', no set-up
        ["ORTE has lost communication with a remote daemon.", "", "  HNP daemon   : [[6227,0],0] on node gpu-01",
         "  Remote daemon: [[6227,0],1] on node gpu-07"],
    ],
)
def test_what_only_resembles_a_help_texts_sentence_is_not_read(lines: list[str]) -> None:
    assert setup_of(lines) == []


def test_the_sentence_reader_on_its_own() -> None:
    row, waiting = verbs.read_help_sentence("mpirun was unable to launch the specified application as it could not")
    assert row is None and {r.name for _, r in waiting} == {"executable_not_launched", "working_directory_not_found"}
    row, waiting = verbs.read_help_sentence("access or execute an executable:", waiting)
    assert row is not None and row.name == "executable_not_launched" and waiting == ()
    # a whole sentence needs no line before it; a line that only continues one needs its line before
    row, _ = verbs.read_help_sentence("  has detected an attempt to run as root.")
    assert row is not None and row.name == "run_as_root"
    assert verbs.read_help_sentence("access or execute an executable:") == (None, ())


# ---------------------------------------------------------------- MPICH's error stack, one record

# firemodels/fds#7868: the innermost entry of Intel MPI 2019's stack when the provider it picked is not on the node
_ADDRINFO = ("MPIDI_NM_mpi_init_hook(719): OFI addrinfo() failed (ofi_init.h:719:MPIDI_NM_mpi_init_hook:No data "
             "available)")


@pytest.mark.parametrize(
    ("lines", "status", "call"),
    [
        # firemodels/fds#7868 (https://github.com/firemodels/fds/issues/7868): Intel MPI 2019 picking the psm2
        # provider on a node without Omni-Path
        (["Abort(1094799) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init_thread: Other MPI error, error stack:",
          "MPIR_Init_thread(666)......: ", "MPID_Init(922).............: ",
          _ADDRINFO],
         "no_provider", "MPI_Init_thread"),
        # JCSDA-internal/soca#682: the same under srun's task label, in MPI_Init
        (["3: Abort(1091215) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
          "3: MPIR_Init_thread(136)........:", "3: MPID_Init(1138)..............:",
          "3: MPIDI_OFI_mpi_init_hook(1061): OFI addrinfo() failed (ofi_init.c:1061:MPIDI_OFI_mpi_init_hook:No data "
          "available)"], "no_provider", "MPI_Init"),
        # pmodels/mpich#6612 (https://github.com/pmodels/mpich/issues/6612): MPICH 4.1's internal_Init_thread
        (["Abort(204069007): Fatal error in internal_Init_thread: Other MPI error, error stack:",
          "internal_Init_thread(45784): MPI_Init_thread(argc=(nil), argv=(nil), required=3, provided=0x7fff3aff24d4) "
          "failed", "MPII_Init_thread(263)......: ", "MPID_Init(516).............: ",
          "MPIDI_OFI_init_local(601)..: ", "MPIDI_OFI_find_provider(84): ",
          "find_provider(170).........: OFI fi_getinfo() failure"], "no_provider", "MPI_Init_thread"),
        # pmodels/mpich#6336 (https://github.com/pmodels/mpich/issues/6336): MPICH 4.0.3's find_provider, indented
        (["    Abort(2139535) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
          "    MPIR_Init_thread(176)........: ", "    MPID_Init(1538)..............: ",
          "    MPIDI_OFI_mpi_init_hook(1511): ", "    open_fabric(2565)............: ",
          "    find_provider(2683)..........: OFI fi_getinfo() failed (ofi_init.c:2683:find_provider:No data "
          "available)"],
         "no_provider", "MPI_Init"),
        # the whole stack on one line, as flux-framework/flux-core#5976 shows its launcher quoting it (that thread's
        # entry is fi_open domain's EINVAL; here mpich#6336's)
        (["MPI_Abort: Fatal error in PMPI_Init: Other MPI error, error stack: MPIR_Init_thread(176)........:  "
          "MPID_Init(1538)..............:  find_provider(2683)..........: OFI fi_getinfo() failed (ofi_init.c:2683:"
          "find_provider:No data available)"], "no_provider", "MPI_Init"),
        # the OFI netmod's init hook failing with the bare class as the innermost entry (Intel MPI 2021's form, as
        # mpi4py/mpi4py#281 posts it; here under pmodels/mpich#6336's first lines and hook entry, the innermost entry
        # synthetic): the provider that could not start on the node
        (["    Abort(2139535) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
          "    MPIR_Init_thread(176)........: ", "    MPID_Init(1538)..............: ",
          "    MPIDI_OFI_mpi_init_hook(1511): ", "    (unknown)(): Other MPI error"],
         "provider_init_failed", "MPI_Init"),
        # flux-framework/flux-core#5976 (https://github.com/flux-framework/flux-core/issues/5976): Cray MPICH under
        # Flux on Frontier, the provider's domain refused at start-up (the launch without its credentials), the stack
        # on one line as Flux quotes it (from its `MPI_Abort: `, the job.exception's words before it left out)
        (["MPI_Abort: Fatal error in PMPI_Init: Other MPI error, error "
          "stack: MPIR_Init_thread(170).......:  MPID_Init(501)..............:  MPIDI_OFI_mpi_init_hook(599): OFI "
          "fi_open domain failed (ofi_init.c:599:MPIDI_OFI_mpi_init_hook:Invalid argument)"],
         "provider_open_failed", "MPI_Init"),
        # ... the same entry with libfabric's FI_ENODATA (synthetic: MPICH's **ofid_opendomain format under
        # JCSDA-internal/soca#682's first lines), which no errno of the set-up side reads
        (["Abort(1091215) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
          "MPIR_Init_thread(136)........:", "MPID_Init(1138)..............:",
          "MPIDI_OFI_mpi_init_hook(1060): OFI fi_open domain failed (ofi_init.c:1060:MPIDI_OFI_mpi_init_hook:No data "
          "available)"], "provider_open_failed", "MPI_Init"),
        # firemodels/fds#5853 (https://github.com/firemodels/fds/issues/5853): Intel MPI's shared-memory copy refused
        # by Yama's ptrace_scope, its advice on the lines below
        (["Fatal error in PMPI_Testall: Other MPI error, error stack:",
          "PMPI_Testall(299)...............: MPI_Testall(count=36, req_array=0x2b1c9ffeec00, flag=0x7fffc44ce640, "
          "status_array=0x1) failed", "PMPIDI_CH3I_Progress(623).......: fail failed",
          "MPID_nem_lmt_dcp_start_recv(302): fail failed",
          "dcp_recv(165)...................: Internal MPI error!  Cannot read from remote process",
          " Two workarounds have been identified for this issue:", " 1) Enable ptrace for non-root users with:",
          "    echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope"], "ptrace_blocked", "MPI_Testall"),
    ],
)
def test_an_mpich_error_stack_naming_what_the_node_lacked_is_the_set_up(lines: list[str], status: str,
                                                                        call: str) -> None:
    [e] = setup_of(lines)
    assert (e.fields["stack"], e.fields["local_status"], e.fields["mpi_call"], e.fields["mpi_class"]) == (
        "mpich", status, call, "MPI_ERR_OTHER")
    # the rank's exit, as before, with the class its first line names
    [x] = only(feed(lines), "process.signal")
    assert (x.fields["by"], x.fields["mpi_class"]) == ("runtime", "MPI_ERR_OTHER")


@pytest.mark.parametrize(
    "lines",
    [
        # the provider's words outside MPI_Init (synthetic: the fds#7868 entry under another call) name no set-up
        ["Fatal error in PMPI_Allreduce: Other MPI error, error stack:",
         _ADDRINFO],
        # ... nor without the stack's first line
        [_ADDRINFO],
        # zer011b/fdtd3d#95 (https://github.com/zer011b/fdtd3d/issues/95): the same copy failing with no word of
        # ptrace after it names a peer and no more
        ["Fatal error in MPI_Recv: Other MPI error, error stack:",
         "MPID_nem_lmt_dcp_start_recv(288): fail failed",
         "dcp_recv(154)...................: Internal MPI error! cannot read from remote process"],
        # a peer refusing the connection inside MPI_Init is the peer's (synthetic, ch3's tcp netmod entry)
        ["Fatal error in MPI_Init: Other MPI error, error stack:", "MPIR_Init_thread(474)...........: ",
         "MPID_nem_tcp_connpoll(1845)....: Communication error with rank 1: Connection refused"],
        # the OFI init hook's bare entry, then a peer's words as the innermost (synthetic, under mpich#6336's first
        # line): no bare class confirms the provider
        ["Abort(2139535) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
         "MPIDI_OFI_mpi_init_hook(1511): ",
         "MPID_nem_tcp_connpoll(1845)....: Communication error with rank 1: Connection refused"],
        # ... and the same bare class outside MPI_Init (synthetic)
        ["Fatal error in PMPI_Allreduce: Other MPI error, error stack:", "MPIDI_OFI_mpi_init_hook(1511): ",
         "(unknown)(): Other MPI error"],
        # the provider's domain failing to open outside MPI_Init (synthetic: flux-core#5976's entry under another
        # call) is no start-up's
        ["Fatal error in PMPI_Comm_split: Other MPI error, error stack:",
         "MPIDI_OFI_mpi_init_hook(599): OFI fi_open domain failed (ofi_init.c:599:MPIDI_OFI_mpi_init_hook:No data "
         "available)"],
        # uxlfoundation/oneDAL#3741: an errno of no set-up side in an unknown class leaves the stack to the rest
        ["Abort(1614735) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Unknown error class, error stack:",
         "MPIR_Init_thread(192)........: ", "MPIDI_OFI_mpi_init_hook(1653): ",
         "create_vni_context(2253).....: OFI endpoint open failed (ofi_init.c:2253:create_vni_context:No such device)"],
    ],
)
def test_an_mpich_error_stack_that_names_no_lack_of_the_node_is_not_the_set_up(lines: list[str]) -> None:
    assert setup_of(lines) == []
    # the rank's exit its first line reports stays what it was
    assert len(only(feed(lines), "process.signal")) == sum("Fatal error in " in line for line in lines)


def test_the_error_stacks_class_is_read_by_its_words() -> None:
    # uxlfoundation/oneDAL#3741: `Unknown error class` (errutil.c); pmodels/mpich's errnames.txt for the others
    assert launcher.mpi_fatal("Abort(1614735) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Unknown error "
                              "class, error stack:")[:2] == ("MPI_Init", "unknown_class")
    assert launcher.mpi_fatal("Fatal error in PMPI_Comm_split: Invalid communicator, error stack:")[:5] == (
        "MPI_Comm_split", "MPI_ERR_COMM", None, None, True)
    assert launcher.mpi_fatal("Fatal error in MPI_Send: a sentence of our own")[:5] == ("MPI_Send", None, None, None,
                                                                                        False)
    # Cray MPICH's header names the rank and the node (flux-framework/flux-core#5976)
    assert launcher.mpi_fatal("MPICH ERROR [Rank 0] [job id fYSTCFMZH] [Thu May 16 17:41:46 2024] [frontier08676] - "
                              "Abort(1091983) (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error "
                              "stack:")[:5] == ("MPI_Init", "MPI_ERR_OTHER", 0, "frontier08676", False)
    assert launcher.mpi_fatal("a fatal error in the MPI layer") is None


@pytest.mark.parametrize("row", tables.mpich_classes(), ids=lambda r: r.name)
def test_every_mpi_class_is_read_by_mpichs_words_and_open_mpis_name(row: tables.MpichErrorClass) -> None:
    # synthetic, after MPICH's error stack's first line (src/mpi/errhan/errutil.c: `Fatal error in %s: %s, error
    # stack:`, the class's errnames.txt words) and Open MPI's fatal handler (ompi/errhandler/errhandler_predefined.c:
    # `*** %s: %s`, the class's name and MPI_Error_string's words)
    read = launcher.mpi_fatal(f"Abort(1) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Win_lock: {row.text}, "
                              "error stack:")
    assert read is not None and (read.mpi_class, read.argument) == (row.name, row.whose == "program")
    kinds = [e.kind for e in feed(["[n1:01234] *** An error occurred in MPI_Win_lock",
                                   f"[n1:01234] *** {row.name}: some words of its own"])]
    assert ("app.exception" in kinds) == (row.whose == "program")


def test_a_class_whose_words_begin_anothers_is_read_whole() -> None:
    read = launcher.mpi_fatal("Fatal error in PMPI_Info_set: Invalid MPI_Info value , error stack:")
    assert read is not None and read.mpi_class == "MPI_ERR_INFO_VALUE"
    # near miss: the words in prose, no error stack's first line (synthetic)
    assert launcher.mpi_fatal("note: Invalid topology given to the mesh builder; using the default") is None


def test_cray_mpichs_header_names_the_rank_and_node_of_the_stack() -> None:
    # flux-framework/flux-core#5976's Cray MPICH header over mpich#6336's innermost entry (synthetic join)
    lines = ["MPICH ERROR [Rank 3] [job id fYSTCFMZH] [Thu May 16 17:41:46 2024] [frontier08676] - Abort(1091983) "
             "(rank 3 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
             "MPIR_Init_thread(170).......:",
             "find_provider(2683)..........: OFI fi_getinfo() failed (ofi_init.c:2683:find_provider:No data available)"]
    [e] = setup_of(lines)
    assert (e.rank, e.fields["host"], e.fields["local_status"]) == (3, "frontier08676", "no_provider")


def test_shared_memory_the_node_would_not_give_at_start_up_is_the_set_up() -> None:
    # flux-framework/flux-core#5203 (https://github.com/flux-framework/flux-core/issues/5203): flux quoting MPICH's
    # whole stack on one line; its innermost entry is errnames.txt's **alloc_shar_mem
    line = ("2.556s: job.exception type=exec severity=0 MPI_Abort: Fatal error in PMPI_Init: Other MPI error, error "
            "stack: MPIR_Init_thread(176)...:  MPID_Init(1516).........:  MPIDU_Init_shm_init(180): unable to "
            "allocate shared memory")
    [e] = setup_of([line])
    assert (e.fields["local_status"], e.fields["mpi_call"]) == ("shared_memory_unavailable", "MPI_Init")
    # the same words after start-up (synthetic: a window's allocation) are not the node's set-up
    assert setup_of(["Fatal error in PMPI_Win_allocate_shared: Other MPI error, error stack:",
                     "MPIDU_Init_shm_alloc(201): unable to allocate shared memory"]) == []


@pytest.mark.parametrize(
    ("lines", "mpi_class"),
    [
        # MPAS-Dev/compass#263 (https://github.com/MPAS-Dev/compass/issues/263): ch3's tcp netmod unable to resolve
        # the node's own name (errnames.txt **gethostbyname)
        (["Fatal error in MPI_Init: Other MPI error, error stack:", "MPIR_Init_thread(159)..............: ",
          "MPID_Init(164).....................: channel initialization failed", "MPIDI_CH3_Init(95).................: ",
          "MPID_nem_tcp_get_business_card(395): ",
          "GetSockInterfaceAddr(369)..........: gethostbyname failed, pn2034311.lanl.gov (errno 0)"], "MPI_ERR_OTHER"),
        # pmodels/mpich#4710 (https://github.com/pmodels/mpich/issues/4710): the same under the class `Invalid group`
        (["Fatal error in MPI_Init: Invalid group, error stack:", "MPIR_Init_thread(586)..............: ",
          "MPID_nem_tcp_init(373).............: gethostbyname failed, Mac-1594849612293 (errno 0)",
          "(unknown)(): Invalid group"], "MPI_ERR_GROUP"),
    ],
)
def test_a_name_the_node_cannot_resolve_at_start_up_is_the_set_up(lines: list[str], mpi_class: str) -> None:
    [e] = setup_of(lines)
    assert (e.fields["local_status"], e.fields["mpi_call"], e.fields["mpi_class"]) == ("no_interface", "MPI_Init",
                                                                                       mpi_class)


UCX_CQ_ENOMEM = ("[1652739463.054681] [cn0022:4071024:0]        ib_iface.c:1035 UCX  ERROR ibv_create_cq(cqe=4096) "
                 "failed: Cannot allocate memory")


def test_a_ucx_devices_failed_verbs_call_is_the_set_up_once_the_layer_above_could_not_start() -> None:
    """openucx/ucx#8229 (Open MPI 4.1.3, UCX 1.12.1), and microsoft/mscclpp's notes, which name the cause: the
    locked-memory limit (`ulimit -l`, docker's `--ulimit memlock=-1:-1`). UCX left the device out; Open MPI's pml/ucx
    then could not create its worker, so MPI_Init failed: the set-up, read from the held report."""
    (e,) = feed([UCX_CQ_ENOMEM, "[cn0022:4071024] pml_ucx.c:309  Error: Failed to create UCP worker"])
    assert (e.kind, e.fields["errno"], e.fields["setup"]) == ("nccl.error", "ENOMEM", True)
    assert "ibv_create_cq" in str(e.fields["detail"])


def test_a_ucx_device_left_out_while_the_job_went_on_is_no_set_up() -> None:
    """Near miss (openucx/ucx#8684: Open MPI 5 with `--mca pml ob1 --mca btl sm,self` on a node whose only mlx5
    port is down): UCX reports the device it could not open, and the benchmark runs to its result on shared
    memory. Nothing failed to start; the report is understood and held, never a cause."""
    lines = ["[1668693503.473099] [ampere:1188443:0]          ib_log.c:246  UCX  ERROR mlx5_0: ibv_create_cq() failed: "
             "Cannot allocate memory. Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)",
             "", "# OSU MPI Broadcast Latency Test v5.8", "# Size       Avg Latency(us)",
             "1                       0.23"]
    assert feed(lines) == []
    # ... and a start failure far below it (another run's, past the window) does not reach back to it
    far = [UCX_CQ_ENOMEM, *["step"] * 60, "[cn0022:4071024] pml_ucx.c:309  Error: Failed to create UCP worker"]
    assert [e for e in feed(far) if e.fields.get("setup")] == []



@pytest.mark.parametrize(
    "line",
    [
        # The Open MPI users list, Siegmar Gross's spawn_multiple_master under openmpi-v2.x-dev (2016): PMIx's server
        # unable to unpack what the spawned processes' client sent (PMIx_Error_string `UNPACK-PAST-END`)
        "[loki:24717] PMIX ERROR: UNPACK-PAST-END in file ../../../../../../openmpi-v2.x-dev-958-g7e94425/opal/mca/"
        "pmix/pmix112/pmix/src/server/pmix_server_ops.c at line 829",
        # the same status by its enum name, as PMIx 4 and later print it (composed from PMIX_ERROR_LOG's format)
        "[node018:12345] PMIX ERROR: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER in file base/gds_base_fns.c at line 133",
    ],
)
def test_pmix_unable_to_unpack_a_peers_message_is_understood_and_no_loss(line: str) -> None:
    # Versions of PMIx that do not agree: no peer lost, no event; the line is understood (not an unrecognized one).
    assert feed([line]) == []
    assert claimed([line]) == [True]


def test_near_miss_pmix_unreachable_is_still_a_loss() -> None:
    [e] = feed(["[ip-172-31-1-68:27726] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2257"])
    assert e.fields["peer_status"] == "PMIX_ERR_UNREACH"


# ---------------------------------------------------------------- a peer's queue pair gone, and EFA's own errnos


@pytest.mark.parametrize(
    ("line", "status", "status_class"),
    [
        # awslabs/awsome-distributed-training#312: aws-ofi-nccl's failed request, the destination's queue pair no
        # longer there (a peer killed by its container's memory limit): delivered, the responder's refusal
        ("[1,2]<stdout>:test-nccl-worker-0:199:263 [2] process_err_completion:1562 NCCL WARN NET/OFI Request "
         "0x7f08c0001d30 completed with error. RC: 5. Error: Invalid receiver queue pair number (QPN) My EFA addr: "
         "fi_addr_efa://[fe80::30:43ff:fe60:456b]:0:657145598 Peer host id: i-08d8a345a75ab52a0. Completed length: 0",
         9, "remote_access"),
        # ... efa_errno.h's later words for the same status, and for 14, a sender the remote has no address handle
        # for (synthetic: efa_base_ep.c's `err: %s (%zd) prov_errno: %s (%zd)`)
        ("libfabric:4242:1708520807::efa:ep_ctrl:efa_base_ep_write_eq_error():835<warn> Writing error to EQ: err: "
         "Transport endpoint is not connected (107) prov_errno: Bad queue pair (QP) number (QP does not exist or is "
         "in error state) (9)", 9, "remote_access"),
        ("libfabric:4242:1708520807::efa:ep_ctrl:efa_base_ep_write_eq_error():835<warn> Writing error to EQ: err: "
         "Transport endpoint is not connected (107) prov_errno: No valid address handle at remote side (required "
         "for RDMA operations) (14)", 14, "remote_access"),
        # near-miss: a remote that stopped answering is still the path's (network-transport keeps it)
        ("libfabric:4242:1708520807::efa:ep_ctrl:efa_base_ep_write_eq_error():835<warn> Writing error to EQ: err: "
         "Connection aborted (103) prov_errno: Unresponsive remote (was previously responsive) (13)", 13, "path"),
    ],
)
def test_a_destination_without_the_queue_pair_is_a_peer_gone_not_the_fabric(line: str, status: int,
                                                                            status_class: str) -> None:
    f = read_completion(line)
    assert f is not None and (f["status"], f["status_class"], f["stack"]) == (status, status_class, "efa")


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        # aws/aws-ofi-nccl#107 (https://github.com/aws/aws-ofi-nccl/issues/107), behind the launcher's rank tag:
        # libfabric 1.8-1.13's rxr_eq_write_error with the negated FI_ENOMEM, which fi_strerror() has no words for;
        # the fix was the container's memlock ulimit
        ("[0]:Unable to write to EQ: Missing or unavailable event queue. err: Unknown error -12 (-12) prov_errno: "
         "Unknown error -12 (-12) prov/efa/src/rxr/rxr.h:993", {"errno": "ENOMEM", "limit": "memlock", "stack": "efa"}),
        # ... a later release's error entry, the same errno unsigned (the number is a libfabric errno: no ibv status)
        ("libfabric:462:1673041636::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err: 12, "
         "prov_err: Cannot allocate memory (12)", {"errno": "ENOMEM", "limit": "memlock", "stack": "efa"}),
    ],
)
def test_an_efa_queue_error_whose_libfabric_errno_is_the_jobs_set_up(line: str, fields: dict[str, object]) -> None:
    [e] = setup_of([line])
    assert {k: e.fields.get(k) for k in fields} == fields


@pytest.mark.parametrize(
    "line",
    [
        # an errno that is no set-up's (EIO), negated
        "[0]:Unable to write to EQ: Missing or unavailable event queue. err: Unknown error -5 (-5) prov_errno: "
        "Unknown error -5 (-5) prov/efa/src/rxr/rxr.h:993",
        # a number that is no libfabric errno
        "[0]:Unable to write to EQ: Missing or unavailable event queue. err: Unknown error -4242 (-4242) prov_errno: "
        "Unknown error -4242 (-4242) prov/efa/src/rxr/rxr.h:993",
        # ENOMEM's words outside any EFA or libfabric report
        "ERROR worker: err: Unknown error -12 (-12) prov_err: out of memory",
    ],
)
def test_an_efa_queue_error_of_another_errno_is_no_set_up(line: str) -> None:
    assert setup_of([line]) == []
