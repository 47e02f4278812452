"""A transport that cannot start, in each provider's words (catalog/transport.yaml `local_statuses`), read by the real
extractors and decided by the engine: the job's set-up where the provider's start-up failed and the layer above
could not go on without it; nothing where the layer above went on.

Lines marked `format` are the provider's format strings (the file cited) filled in by us. None comes from
tests/wild.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

# format: openucx/ucx src/ucp/core/ucp_context.c ucp_check_resources (UCX 1.7 and later; UCX_TLS=tcp where
# UCX_NET_DEVICES names only IB devices), its `[time] [host:pid:tid]` header with a time in the bundle's window
UCX_NONE = ("[1793613900.123456] [node-02:1234:0]     ucp_context.c:1770 UCX  ERROR no usable transports/devices "
            "(asked tcp on network:mlx5_ib0:1)")
# format: the same before 2019 (b8094d6c83 gave it today's words)
UCX_NONE_OLD = "[node-02:1234:0] ucp_context.c:604 UCX  ERROR No usable transports/devices, asked rc on mlx5_0:1"
# format: open-mpi/ompi ompi/mca/pml/ucx/pml_ucx.c (`Failed to create UCP worker`), as openucx/ucx#8229 shows it
OMPI_NO_WORKER = "[node-02:01234] pml_ucx.c:309  Error: Failed to create UCP worker"
# format: open-mpi/ompi ompi/runtime/help-mpi-runtime.txt [mpi_init:startup:internal-failure]
MPI_INIT_FAILED = ["It looks like MPI_INIT failed for some reason; your parallel process is",
                   "likely to abort.  There are many reasons that a parallel process can"]


def _verdict(make_bundle: BundleMaker, lines: list[str], name: str = "b",
             ) -> tuple[str | None, str | None, list[str] | None]:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": "\n".join(lines) + "\n"}, copy.deepcopy(WORKLOAD),
                                                name)))
    rc = v.root_cause
    return v.attributed_domain, rc.category if rc else None, rc.nodes if rc else None


def _setup(lines: list[str]) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("stack"), e.fields.get("local_status")) for e in helpers.events(lines)
            if e.fields.get("setup")]


# ------------------------------------------------------------------ UCX


def test_ucx_finding_nothing_it_was_asked_for_is_the_setup_once_mpi_could_not_start() -> None:
    assert _setup([UCX_NONE, *MPI_INIT_FAILED]) == [("nccl.error", "ucx", "no_usable_transports")]
    assert _setup([UCX_NONE_OLD, OMPI_NO_WORKER]) == [("nccl.error", "ucx", "no_usable_transports")]
    # a paste that lost UCX's header: its source file names it
    assert _setup([UCX_NONE.split("]     ", 1)[1], OMPI_NO_WORKER]) == [("nccl.error", "ucx", "no_usable_transports")]


def test_ucx_finding_nothing_is_the_setup_on_the_node_ucx_names(make_bundle: BundleMaker) -> None:
    assert _verdict(make_bundle, [UCX_NONE, *MPI_INIT_FAILED]) == ("software", "app.exception.setup", ["node-02"])


def test_ucx_finding_nothing_while_mpi_went_on_without_it_is_no_setup(make_bundle: BundleMaker) -> None:
    """Near miss: Open MPI's pml/ucx leaves UCX out and goes on with its own transports (ob1 and its TCP BTL);
    the run went on, and its end is another matter."""
    went_on = [UCX_NONE, "# OSU MPI Allreduce Latency Test v7.3", "# Size       Avg Latency(us)", "4   12.31"]
    assert _setup(went_on) == []
    assert _verdict(make_bundle, went_on)[1] != "app.exception.setup"
    # a start failure far below it does not reach back to it
    assert _setup([UCX_NONE, *["step"] * 60, OMPI_NO_WORKER]) == []


# format: openucx/ucx src/uct/ib/rc/base/rc_iface.c (`ibv_create_srq() failed: %m`), its header lost to a CI log
# viewer's gutter pasted with it (`  | `), UCX's source file and word left
UCX_SRQ_GUTTER = "  | [1649301077.318567] [hpc-23-16:55776:0]       rc_iface.c:499  UCX  ERROR ibv_create_srq() " \
                 "failed: Invalid argument"


def test_a_ucx_device_call_whose_header_a_paste_lost_is_held_as_ucxs() -> None:
    """UCX's failed verbs call known by its word and source file is held until the layer above says it could not start,
    as with its header: alone (MPICH's own init failure after it is no such word), nothing."""
    assert _setup([UCX_SRQ_GUTTER, "Abort(339332879) on node 0 (rank 0 in comm 0): Fatal error in "
                   "internal_Init_thread: Other MPI error, error stack:"]) == []
    assert _setup([UCX_SRQ_GUTTER, OMPI_NO_WORKER]) == [("nccl.error", "verbs", None)]


def test_a_verbs_call_of_a_program_that_is_not_ucx_is_read_at_once() -> None:
    """Near miss: a verbs user's own line, no UCX word nor source file (written here), is its set-up by its errno
    without waiting for a layer above."""
    assert _setup(["ibv_reg_mr(addr=0x7f, len=1048576) failed: Cannot allocate memory"]) == [
        ("nccl.error", "verbs", None)]


def test_the_words_outside_ucxs_own_line_are_no_status() -> None:
    """Near miss: a person's words, no UCX header nor source file (synthetic)."""
    assert _setup(["why do I get no usable transports/devices here?", *MPI_INIT_FAILED]) == []


# ------------------------------------------------------------------ MPICH's process manager interface

# An MPICH-family error stack whose innermost entry says the rank had no process manager to talk to (format:
# pmodels/mpich src/mpi/errhan/errnames.txt `**pmi_init %d:PMI_Init returned %d`, `**pmi_jobgetid %d:PMI2_Job_GetId
# returned %d`, under MPID_Init's and MPIR_Init_thread's entries).
PMI_STACKS = [
    ["Fatal error in PMPI_Init_thread: Other MPI error, error stack:", "MPIR_Init_thread(586): ",
     "MPID_Init(224).......: channel initialization failed", "MPID_Init(556).......: PMI_Init returned -1"],
    ["Fatal error in PMPI_Init_thread: Other MPI error, error stack:", "MPIR_Init_thread(474).: ",
     "MPID_Init(152).......: PMI2_Job_GetId returned 14"],
    # the same joined on one line, as Cray MPICH's users quote it (srun without --mpi=pmi2)
    ["Fatal error in PMPI_Init_thread: MPIR_pmi_init(115): PMI2_Job_GetId returned 14"],
]


def test_a_rank_without_its_process_manager_is_the_launchs_setup() -> None:
    for lines in PMI_STACKS:
        assert _setup(lines) == [("nccl.error", "mpich", "pmi_unavailable")], lines


def test_a_rank_without_its_process_manager_is_software_on_its_node(make_bundle: BundleMaker) -> None:
    for i, lines in enumerate(PMI_STACKS):
        assert _verdict(make_bundle, lines, f"b{i}") == ("software", "app.exception.setup", ["node-02"])


def test_the_process_managers_words_outside_mpi_init_or_its_error_stack_are_no_setup() -> None:
    """Near misses (synthetic): the words in a call other than MPI_Init's, and in a script's comment."""
    assert _setup(["Fatal error in PMPI_Barrier: Other MPI error, error stack:",
                   "PMPI_Barrier(414).....: MPI_Barrier(MPI_COMM_WORLD) failed",
                   "MPIR_Barrier_impl(289): PMI_Init failed"]) == []
    assert _setup(["# a bare run aborts with 'PMI2_Job_GetId returned 14': use srun --mpi=pmi2"]) == []


# ------------------------------------------------------------------ Open MPI's process manager

RULE = "-" * 74
OMPI_PMI = [
    # format: open-mpi/ompi v4.1.x orte/mca/ess/base/help-ess-base.txt (srun where Open MPI has not Slurm's PMI)
    [RULE, 'The application appears to have been direct launched using "srun",',
     "but OMPI was not built with SLURM's PMI support and therefore cannot",
     "execute. There are several options for building PMI support under", RULE],
    # format: open-mpi/ompi opal/mca/pmix/base/help-pmix-base.txt [pmix2-init-failed] (before dc61873fe4), the file's
    # own spelling
    [RULE, "PMI2_Init failed to intialize.  Return code: 14", RULE],
    # format: open-mpi/ompi ompi/runtime/help-mpi-runtime.txt [no-pmi] (Open MPI 5)
    ["PMIx_Init failed for the following reason:", "", "  NOT-SUPPORTED", "",
     "Open MPI requires access to a local PMIx server to execute. Please ensure",
     'that either you are operating in a PMIx-enabled environment, or use "mpirun"', "to execute the job."],
]


def test_open_mpi_without_its_process_manager_is_the_launchs_setup(make_bundle: BundleMaker) -> None:
    for i, lines in enumerate(OMPI_PMI):
        assert _setup(lines) == [("nccl.error", "ompi", "pmi_unavailable")], lines
        assert _verdict(make_bundle, lines, f"b{i}") == ("software", "app.exception.setup", ["node-02"])


def test_open_mpis_launch_words_that_are_no_failure_are_no_setup() -> None:
    """Near misses: Open MPI's documentation on Slurm's direct launch (docs/launching-apps/slurm.rst), and a run
    that reports its PMIx (synthetic)."""
    assert _setup(["#. Using Slurm's \"direct launch\" capability.",
                   "Unless there is a strong reason to use ``srun`` for direct launch, the"]) == []
    assert _setup(["[node-02:01234] PMIx_Init succeeded: PMIx server v4.2.6 at /run/pmix"]) == []


# ------------------------------------------------------------------ MPICH's launcher, Hydra

# format: pmodels/mpich src/pm/hydra/lib/utils/launch.c HYDU_create_process and proxy/pmip_cb.c launch_procs, under
# HYDU_error_printf's `[proxy:PG:ID@HOST] FUNC (FILE:LINE): ` tag
HYDRA_EXEC = ("[proxy:0:1@node-03] HYDU_create_process (lib/utils/launch.c:73): execvp error on file ./train (No such "
              "file or directory)")
HYDRA_WDIR = ("[proxy:0:0@node-01] launch_procs (proxy/pmip_cb.c:885): unable to change wdir to /scratch/run1 (No such "
              "file or directory)")


def test_a_proxy_that_could_not_start_the_rank_is_the_setup_on_the_proxys_node(make_bundle: BundleMaker) -> None:
    """mpiexec's output is in rank 2's file (node-02); the proxy's tag names the node the program could not start on."""
    assert _setup([HYDRA_EXEC]) == [("nccl.error", "hydra", "executable_not_launched")]
    assert _setup([HYDRA_WDIR]) == [("nccl.error", "hydra", "working_directory_not_found")]
    assert _verdict(make_bundle, [HYDRA_EXEC], "exec") == ("software", "app.exception.setup", ["node-03"])
    assert _verdict(make_bundle, [HYDRA_WDIR], "wdir") == ("software", "app.exception.setup", ["node-01"])


def test_hydras_teardown_and_a_proxy_it_could_not_reach_are_no_setup() -> None:
    """Near misses (format: src/pm/hydra/lib/tools/bootstrap/utils/bscu_wait.c, lib/utils/sock.c HYDU_sock_connect):
    the teardown after a rank died names no cause, and a node the launcher cannot reach is no setting of the job's."""
    assert _setup(["[mpiexec@node-01] HYDT_bscu_wait_for_completion (lib/tools/bootstrap/utils/bscu_wait.c:76): one "
                   "of the processes terminated badly; aborting"]) == []
    assert _setup(["[mpiexec@node-01] HYDU_sock_connect (lib/utils/sock.c:145): unable to connect from \"node-01\" to "
                   "\"node-03\" (No route to host)"]) == []


# ------------------------------------------------------------------ Open MPI's TCP BTL

# format: open-mpi/ompi opal/mca/btl/tcp/btl_tcp_endpoint.c mca_btl_tcp_endpoint_complete_connect's BTL_ERROR (before
# 0741fad479, 2017), under BTL_ERROR's `[host][[jobid,vpid]][file:line:func]` head
BTL_OLD = ("[node-02][[12345,1],2][btl_tcp_endpoint.c:807:mca_btl_tcp_endpoint_complete_connect] connect() to 10.0.0.3 "
           "failed: No route to host (113)")
# format: opal/mca/btl/tcp/help-mpi-btl-tcp.txt [client connect fail] (since 2017)
BTL_HELP = [RULE, "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This", "should not happen.", "",
            "Your Open MPI job may now hang or fail.", "", "  Local host: node-02", "  PID:        1234",
            "  Message:    connect() to 10.0.0.3:1024 failed", "  Error:      No route to host (113)", RULE]


def test_open_mpis_tcp_btl_unable_to_reach_a_peer_is_a_symptom(make_bundle: BundleMaker) -> None:
    """The peer's process died, or the path to it failed: the words cannot tell. Never the set-up, never a cause."""
    (old,) = helpers.events([BTL_OLD])
    assert (old.kind, old.fields["stack"], old.fields["peer"]) == ("nccl.remote_error", "btl_tcp", "10.0.0.3")
    assert [(e.kind, e.fields.get("peer_status")) for e in helpers.events(BTL_HELP)] == [
        ("nccl.remote_error", "tcp_connect_failed")]
    assert _verdict(make_bundle, BTL_HELP) == ("unknown", None, None)


def test_open_mpis_tcp_btl_words_that_are_no_failure_give_nothing() -> None:
    """Near miss (format: btl_tcp_endpoint.c's verbose output): a connect that completed."""
    assert helpers.events(["[node-02:01234] btl:tcp: connect() to 10.0.0.3:1024 completed (complete_connect), "
                           "sending connect ACK"]) == []


# ------------------------------------------------------------------ UCX's status codes at start-up

# format: openucx/ucx src/ucp/core/ucp_worker.c (`uct_iface_open(<tl>/<dev>) failed: %s`, ucs_status_string()),
# under UCX's `[host:pid:tid] file:line UCX  ERROR` record; Open MPI's pml/ucx then cannot create its worker
IFACE = "[node-02:1234:0]     ucp_worker.c:1498 UCX  ERROR uct_iface_open({tl}/mlx5_0:1) failed: {why}"


def test_the_ucx_status_table_is_ucxs_enum() -> None:
    from firstfault.catalog.tables import ucx_statuses
    rows = {r.name: r for r in ucx_statuses()}
    assert rows["UCS_ERR_NO_DEVICE"].code == -14 and rows["UCS_ERR_ENDPOINT_TIMEOUT"].code == -80
    assert {r.side for r in rows.values()} == {"setup", "platform", "none"}


def _ucx_rows() -> list[Any]:
    from firstfault.catalog.tables import ucx_statuses
    return list(ucx_statuses())


@pytest.mark.parametrize("row", _ucx_rows(), ids=lambda r: r.name)
def test_every_ucx_status_is_read_by_ucs_status_strings_words(row: Any) -> None:
    """Each member of ucs_status_t by ucs_status_string()'s words in the worker's line: a `setup` or `platform` one is
    the event with its errno, any other none here (a peer's status is a peer's symptom: `peer_statuses`)."""
    events = [e for e in helpers.events([IFACE.format(tl="rc_mlx5", why=row.text), OMPI_NO_WORKER])
              if e.kind != "nccl.remote_error"]
    if row.side == "none":
        assert events == []
    else:
        (e,) = events
        assert (e.kind, e.fields["status_name"], e.fields["errno"], bool(e.fields.get("setup"))) == (
            "nccl.error", row.name, row.errno, row.side == "setup")


def test_a_transport_the_nodes_rdma_stack_does_not_give_is_the_platform(make_bundle: BundleMaker) -> None:
    lines = [IFACE.format(tl="rc_mlx5", why="Unsupported operation"), OMPI_NO_WORKER]
    (e,) = helpers.events(lines)
    assert (e.fields["status_name"], e.fields["errno"], e.fields["transport"]) == ("UCS_ERR_UNSUPPORTED", "EOPNOTSUPP",
                                                                                  "ucx")
    assert _verdict(make_bundle, lines) == ("infrastructure", "node.driver.rdma", ["node-02"])


def test_memory_ucx_may_not_pin_is_the_setup(make_bundle: BundleMaker) -> None:
    lines = [IFACE.format(tl="rc_verbs", why="Out of memory"), OMPI_NO_WORKER]
    assert _setup(lines) == [("nccl.error", "ucx", None)]
    assert _verdict(make_bundle, lines) == ("software", "app.exception.setup", ["node-02"])


def test_a_ucx_status_that_names_no_side_or_a_run_that_went_on_gives_no_cause(make_bundle: BundleMaker) -> None:
    """Near misses: an I/O error names neither side (and UCX's device `rc_verbs/mlx5_0:1` is no path of a file
    system); the same report without the layer above failing (UCX went on without the device) is held, never a
    cause."""
    io = [IFACE.format(tl="rc_verbs", why="Input/output error"), OMPI_NO_WORKER]
    assert helpers.events(io) == []
    assert _verdict(make_bundle, io, "io") == ("unknown", None, None)
    went_on = [IFACE.format(tl="rc_mlx5", why="Unsupported operation"), "# OSU MPI Bandwidth Test v7.3", "1  0.52"]
    assert helpers.events(went_on) == []


# format: open-mpi/ompi ompi/mca/pml/ucx/pml_ucx.c (`ucp_ep_create(proc=%d) failed: %s`, ucs_status_string() of
# UCS_ERR_IO_ERROR), under opal_output's `[host:pid]` head
OMPI_EP_IO = "[node-02:01234] pml_ucx.c:431  Error: ucp_ep_create(proc=546) failed: Input/output error"


def test_a_ucx_status_an_open_mpi_component_prints_is_no_disks_errno() -> None:
    # UCX's status words are EIO's strerror too; after Open MPI's UCX component's head they are UCX's, no storage
    assert [e.kind for e in helpers.events([OMPI_EP_IO]) if e.kind == "storage.error"] == []


def test_near_miss_the_same_words_from_a_program_of_the_file_system() -> None:
    # written here: a copy's read error, and one that names a UCX file as its path: the disk's
    assert [e.kind for e in helpers.events(["cp: error reading 'ckpt.pt': Input/output error"])] == ["storage.error"]
    assert [e.kind for e in helpers.events(["cp: error reading '/scratch/pml_ucx.so': Input/output error"])] == [
        "storage.error"]
