"""MPICH's family (MPICH, Intel MPI, Cray MPICH, MVAPICH) in its own error words: the connection-loss entries of its
error stack (catalog/transport.yaml `peer_statuses`, stack mpich), MPICH 5.0's spelling of a libfabric call that failed
(`OFI call fabric failed (default nic=hsn0: Invalid argument)`, `OFI poll failed (default nic=cxi0: Connection
refused)`) read by its errno, and the start-up rows (`local_statuses`, stack mpich) in that spelling.

Sources: pmodels/mpich at 6a79bf6575 (2026-08): src/mpi/errhan/errnames.txt, src/mpid/ch3/channels/sock/src/
errnames.txt, src/mpid/ch3/util/sock/errnames.txt, src/mpid/ch4/netmod/ofi/errnames.txt, maint/extracterrmsgs (the
`OFI call %s failed (default nic=%s: %s)` long names of MPIDI_OFI_CALL), src/mpid/ch4/netmod/ofi/ofi_events.c
MPIDI_OFI_handle_cq_error; commits 8c175ae517 and 19fe5bc611 (both first in v5.0.0b1) for the NIC spelling. Every
line here is synthetic, in the format those files give, unless its comment names a thread.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import transport_table
from firstfault.model import Event
from tests.extract import helpers


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines, "application")


def lost(lines: list[str]) -> list[Event]:
    return [e for e in feed(lines) if e.kind == "nccl.remote_error" and e.fields.get("stack") == "mpich"]


def setup(lines: list[str]) -> list[Event]:
    return [e for e in feed(lines) if e.kind == "nccl.error" and e.fields.get("setup")]


_NEW_PEER_ROWS = ("communication_error", "connect_tries_exceeded", "connection_refused", "connection_closed",
                  "connection_lost", "business_card_connect_failed")


# Each text of the mpich peer rows, as the innermost entry of an error stack (`FUNC(LINE)...: <errnames.txt words>`).
@pytest.mark.parametrize(("text", "name"), [(t, r.name) for r in transport_table().peers
                                            if r.stack == "mpich" for t in r.texts])
def test_every_mpich_connection_loss_entry_is_a_peers_loss(text: str, name: str) -> None:
    [e] = lost([f"MPIDI_CH3I_Progress(176)........: {text} 3 (set=0,sock=1)"])
    assert e.fields["peer_status"] == name


def test_the_table_holds_the_audited_rows() -> None:
    assert {r.name for r in transport_table().peers if r.stack == "mpich"} == set(_NEW_PEER_ROWS)


@pytest.mark.parametrize(("line", "rank"), [
    # microsoft/LightLDA#62 (nemesis tcp's **comm_fail)
    ("MPID_nem_tcp_connpoll(1826): Communication error with rank 1: Connection reset by peer", 1),
    # **exceeded_connect_tries %d
    ("MPIDI_CH3I_VC_post_sockconnect(1232): Unable to establish connection to rank 3", 3),
    # **ch3|sock|postconnect %d %d %s: the peer is the second rank
    ("MPIDI_CH3I_Sock_connect(380): [ch3:sock] rank 0 unable to connect to rank 2 using business card "
     "<port=41433 description=node-02 ifname=10.0.0.2 >", 2),
])
def test_the_rank_an_entry_names_is_the_peer(line: str, rank: int) -> None:
    [e] = lost([line])
    assert e.fields["peer_rank"] == rank


@pytest.mark.parametrize("line", [
    # the bare generic messages, everyday words without MPICH's rank or set (**comm_fail, **sock|connrefused,
    # **sock|connfailed, **sock_closed, **vc_in_error_state)
    "MPIR_Allreduce_impl(293): Communication error",
    "client: connection refused, retrying",
    "MPIDU_Sock_post_connect(1228): connection failure",
    "websocket closed by the browser",
    "MPIDI_CH3_iSendv(42): Connection is in error state",
    # MPI_Comm_connect's (**comm_connect_fail): a port the program named, no peer lost
    "MPIDI_Comm_connect(710): Unable to establish connection to process",
    # ch3's dynamic-process connect timing out (**ch3|conntimeout %d)
    "MPIDI_CH3I_Acceptq_dequeue(110): Connection timed out in 180 seconds",
    # another program's `connection closed by peer` without MPICH's set (synthetic)
    "paramiko.ssh_exception: connection closed by peer",
])
def test_what_only_resembles_an_mpich_connection_loss_is_none(line: str) -> None:
    assert lost([line]) == []


@pytest.mark.parametrize(("why", "errno"), [
    ("Connection refused", "ECONNREFUSED"),
    ("Connection reset by peer", "ECONNRESET"),
    ("Connection timed out", "ETIMEDOUT"),
    ("No route to host", "EHOSTUNREACH"),
])
def test_a_libfabric_call_failing_with_a_peers_errno_is_the_peers_loss(why: str, errno: str) -> None:
    """MPICH 5.0's MPIDI_OFI_handle_cq_error (`**ofid_poll %s %s`: `OFI poll failed (default nic=%s: %s)`, fi_strerror
    of the completion's err) and an MPIDI_OFI_CALL's long name (`OFI call %s failed (default nic=%s: %s)`)."""
    for line in (f"MPIDI_OFI_handle_cq_error(602): OFI poll failed (default nic=cxi0: {why})",
                 f"MPIDI_OFI_send_normal(371): OFI call tsenddata failed (default nic=cxi0: {why})"):
        [e] = lost([line])
        assert e.fields["peer_status"] == errno
    # ... once per process: every pending request reports the same loss
    assert len(lost([f"MPIDI_OFI_handle_cq_error(602): OFI poll failed (default nic=cxi0: {why})"] * 3)) == 1


@pytest.mark.parametrize("line", [
    # an errno of no peer's side (libfabric's FI_EIO, FI_ENODATA): neither a loss nor a set-up
    "MPIDI_OFI_handle_cq_error(602): OFI poll failed (default nic=cxi0: Input/output error)",
    "MPIDI_OFI_handle_cq_error(602): OFI poll failed (default nic=cxi0: No data available)",
    # the generic long name without the errno's words (**ofid_poll)
    "MPIDI_OFI_handle_cq_error(602): OFI poll failed",
    # another program's words about OFI (synthetic)
    "NET/OFI OFI poll failed: retrying with Connection refused",
])
def test_an_ofi_call_without_a_peers_errno_is_no_loss(line: str) -> None:
    assert lost([line]) == []
    assert setup([line]) == []


def test_mpich_5s_spelling_of_a_call_that_failed_with_a_set_up_errno_is_the_set_up() -> None:
    # pmodels/mpich#7853's entry (MPICH 5 over EFA, an RMA completion with EINVAL), the same reading as MPICH 4's
    # `(ofi_init.c:2253:create_vni_context:Invalid argument)` (tests/extract/test_b8pass.py)
    [e] = setup(["MPIDI_OFI_handle_cq_error(...): OFI poll failed (default nic=rdmap110s0-rdm: Invalid argument)"])
    assert (e.fields["local_status"], e.fields["errno"]) == ("ofi_call_failed", "EINVAL")


_HEAD = "Abort(1091215) on node 0 (rank 0 in comm 0): Fatal error in internal_Init: Other MPI error, error stack:"


@pytest.mark.parametrize(("entry", "status"), [
    # init_provider.c `MPIDI_OFI_CALL(fi_getinfo(...), getinfo)` (a libfabric without the provider asked for)
    ("find_provider(132).........: OFI call getinfo failed (default nic=(null): No data available)", "no_provider"),
    # ... and the bare **ofid_getinfo where no provider fits
    ("find_provider(138).........: OFI call getinfo failed", "no_provider"),
    # ofi_init.c `MPIDI_OFI_CALL(fi_fabric(...), fabric)`, `MPIDI_OFI_CALL(fi_domain(...), opendomain)`
    ("MPIDI_OFI_init_local(753): OFI call fabric failed (default nic=hsn0: No data available)",
     "provider_open_failed"),
    ("open_local_domain(1250): OFI call opendomain failed (default nic=hsn0: No data available)",
     "provider_open_failed"),
])
def test_mpich_5s_start_up_entries_name_what_the_node_lacked(entry: str, status: str) -> None:
    [e] = setup([_HEAD, "MPII_Init_thread(234)........:", entry])
    assert (e.fields["local_status"], e.fields["mpi_call"]) == (status, "MPI_Init")


def test_the_same_entries_after_start_up_are_no_set_up() -> None:
    # the fabric's call outside MPI_Init (synthetic): no start-up's
    lines = ["Fatal error in internal_Allreduce: Other MPI error, error stack:",
             "MPIDI_OFI_init_local(753): OFI call fabric failed (default nic=hsn0: No data available)"]
    assert setup(lines) == []


@pytest.mark.parametrize(("line", "status"), [
    # src/pm/hydra/lib/utils/sock.c HYDU_sock_get_iface_ip `unable to find interface %s` (HYDU_ERR_SETANDJUMP's
    # `[mpiexec@host] FUNC (FILE:LINE): ` head)
    ("[mpiexec@login01] HYDU_sock_get_iface_ip (lib/utils/sock.c:447): unable to find interface ib0",
     "interface_not_found"),
    # lib/tools/bootstrap/external/pbs_query_node_list.c, lsf_query_node_list.c, sge_query_node_list.c
    ("[mpiexec@n001] HYDT_bscd_pbs_query_node_list (lib/tools/bootstrap/external/pbs_query_node_list.c:22): No PBS "
     "nodefile found", "node_list_not_found"),
    ("[mpiexec@n001] HYDT_bscd_lsf_query_node_list (lib/tools/bootstrap/external/lsf_query_node_list.c:24): No LSF "
     "node list found", "node_list_not_found"),
    ("[mpiexec@n001] HYDT_bscd_sge_query_node_list (lib/tools/bootstrap/external/sge_query_node_list.c:57): No SGE "
     "nodefile found", "node_list_not_found"),
])
def test_hydra_refusing_the_launch_as_the_job_set_it_up(line: str, status: str) -> None:
    [e] = setup([line])
    assert (e.fields["stack"], e.fields["local_status"]) == ("hydra", status)


@pytest.mark.parametrize("line", [
    # Hydra's wrappers and teardown (lib/tools/bootstrap/utils/bscu_wait.c, lib/utils/sock.c, mpiexec/options.c at
    # 6a79bf6575): understood, no set-up
    "[mpiexec@n001] HYDT_bscu_wait_for_completion (lib/tools/bootstrap/utils/bscu_wait.c:110): one of the processes "
    "terminated badly; aborting",
    "[proxy:0:0@n002] HYDU_sock_write (lib/utils/sock.c:250): write error (Bad file descriptor)",
    "[mpiexec@n001] HYD_uii_mpx_get_parameters (mpiexec/options.c:315): error parsing hostfile",
    # the interface's words about another thing (synthetic)
    "WARNING: unable to find interfaces file /etc/network/interfaces",
    # a PBS word that is no Hydra's refusal (synthetic)
    "PBS_NODEFILE found at /var/spool/pbs/aux/4242.pbs01",
])
def test_hydras_other_words_are_no_set_up(line: str) -> None:
    assert setup([line]) == []


def test_mpichs_abort_head_names_the_world_rank_and_the_records_entries_carry_it() -> None:
    """src/mpid/ch4/src/ch4_globals.c MPID_Abort at 6a79bf6575: `Abort(%d)%s%s: %s%s`, ` on node %d` of
    MPIR_Process.rank (the rank in MPI_COMM_WORLD); the head as pmodels/mpich#7713 posts it (Aurora, MPICH 4.x),
    its innermost entry synthetic."""
    lines = ["Abort(271763599) on node 7 (rank 7 in comm 0): Fatal error in internal_Send: Other MPI error, error "
             "stack:",
             "internal_Send(126)............: MPI_Send(buf=0xff00000002800d10, count=262166, MPI_DOUBLE, 19, 7, "
             "MPI_COMM_WORLD) failed",
             "MPIDI_OFI_handle_cq_error(602): OFI poll failed (default nic=cxi0: Connection refused)"]
    events = feed(lines)
    assert [(e.kind, e.rank) for e in events] == [("process.signal", 7), ("nccl.remote_error", 7)]


def test_cray_mpichs_header_lends_its_rank_and_node_to_the_entries() -> None:
    # the header as launcher.py's comment quotes it (Cray MPICH on Frontier); the entry synthetic
    lines = ["MPICH ERROR [Rank 11122] [job id 41595204.0] [Thu Aug 14 08:27:11 2025] [nid006700] - Abort(2695311) "
             "(rank 11122 in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, error stack:",
             "MPID_nem_tcp_connpoll(1845): Communication error with rank 3: Connection reset by peer"]
    [e] = lost(lines)
    assert (e.rank, e.fields.get("host"), e.fields["peer_rank"]) == (11122, "nid006700", 3)


def test_an_entry_far_below_a_record_takes_nothing_from_it() -> None:
    # synthetic: the record's first line, then unrelated output past the record's reach, then a lone entry
    lines = ["Abort(1) on node 5 (rank 5 in comm 0): Fatal error in internal_Barrier: Other MPI error, error stack:",
             *[f"step {i}" for i in range(40)],
             "MPID_nem_tcp_connpoll(1845): Communication error with rank 3: Connection reset by peer"]
    [e] = lost(lines)
    assert e.rank is None


@pytest.mark.parametrize("line", [
    # no head of MPID_Abort's: a program's own words (synthetic)
    "Abort(3) requested by the user on node 4",
    "Fatal error in user code on node 2 (rank 2): aborting",
])
def test_what_only_resembles_mpichs_abort_head_names_no_rank(line: str) -> None:
    assert all(e.rank is None for e in feed([line]))


@pytest.mark.parametrize(("line", "status"), [
    # src/mpid/ch4/netmod/ucx/ucx_impl.h MPIDI_UCX_CHK_STATUS (**ucx_nm_status %s %d %s %s, ucs_status_string last)
    ("MPIDI_UCX_progress(85)........: ucx function returned with failed status(ucx_progress.h 85 MPIDI_UCX_progress "
     "Endpoint timeout)", "UCS_ERR_ENDPOINT_TIMEOUT"),
    # ... MPIDI_UCX_CHK_REQUEST (**ucx_nm_rq_error %s %d %s %s)
    ("MPIDI_UCX_send(69)............: returned failed request in UCX netmod(ucx_send.h 69 MPIDI_UCX_send Connection "
     "reset by remote peer)", "UCS_ERR_CONNECTION_RESET"),
])
def test_mpichs_ucx_netmod_relays_ucxs_peer_status(line: str, status: str) -> None:
    [e] = [e for e in feed([line]) if e.kind == "nccl.remote_error"]
    assert (e.fields["stack"], e.fields["peer_status"]) == ("ucx", status)


@pytest.mark.parametrize("line", [
    # a status of no peer's in the netmod's words (ucs_status_string of UCS_ERR_INVALID_PARAM)
    "MPIDI_UCX_init_worker(100)....: ucx function returned with failed status(ucx_init.c 100 MPIDI_UCX_init_worker "
    "Invalid parameter)",
    # UCX's status words in another program's sentence, no netmod's (synthetic)
    "rpc: function returned with failed status Endpoint timeout",
])
def test_the_ucx_netmods_other_words_are_no_peers_loss(line: str) -> None:
    assert [e for e in feed([line]) if e.kind == "nccl.remote_error"] == []


def test_the_older_spelling_of_a_call_that_failed_with_a_peers_errno_is_the_peers_loss_too() -> None:
    """MPICH 3.3-4.2's MPIDI_OFI_CALL long name `OFI %s failed (%s:%d:%s:%s)` (src/mpid/ch4/netmod/ofi/errnames.txt
    at v4.2.0 **ofid_tinject %s %d %s %s), which Intel MPI 2019-2021 prints too; the line synthetic in that format."""
    [e] = lost(["MPIDI_OFI_send_lightweight_request(108): OFI tagged inject failed (ofi_impl.h:108:"
                "MPIDI_OFI_send_lightweight_request:Connection reset by peer)"])
    assert e.fields["peer_status"] == "ECONNRESET"
