"""NCCL's INFO lines that hold a failure's words and are no failure of their own (catalog/transport.yaml
`nccl_info_lines`, and the `benign` rows of `nccl_node_warns` at INFO): understood, no event, never listed as
unrecognized; the same words in a WARN, or without NCCL's header, are not read so.

Every line is NCCL's (or aws-ofi-nccl's) format string filled in by us, printed as NCCL's src/debug.cc prints an INFO
line on node-02's GPU 2; the file and release each comes from is beside it (NVIDIA/nccl at 5067397c = v2.30.7+,
v2.27.3-1, v2.21.5-1; aws/aws-ofi-nccl at 2daf7d30). None comes from tests/wild.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog import tables
from firstfault.catalog.tables import nccl_info_lines, nccl_node_warns
from firstfault.catalog.vocab import CatalogTableError
from firstfault.extract import nccl
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

ERROR = nccl.NcclErrorExtractor()
HEAD = "node-02:1234:1300 [2] NCCL INFO "

# (row name, the message after `NCCL INFO `): one line for every start and text of the table.
INFO_LINES: list[tuple[str, str]] = [
    # src/ras/rasnet.cc (v2.24.3+): a peer's keep-alive timing out, RAS's own check, its socket closed
    ("ras", "RAS keep-alive timeout error (5.0s) on socket connection with 10.0.0.3<41877>"),
    ("ras", "RAS link 1: rasLinkConnAdd invoked with invalid peerIdx (pretend 0, insert 1) -- internal error?"),
    ("ras", "Unexpected error from ncclSocketReady; terminating the socket connection with 10.0.0.3<41877>"),
    # src/init.cc (v2.24.3+)
    ("ras", "Continuing in spite of a RAS initialization error"),
    # src/transport/net_ib/p2p_resiliency.cc, p2p_resiliency_recovery.cc (v2.29+), its function's name after `NET/IB: `
    ("ib_port_recovery", "NET/IB: ncclIbResiliencyHandleDeviceFailure: Marking device 1 as permanently failed (send "
                         "comm=0x7f3c5e00)"),
    ("ib_port_recovery", "NET/IB: ncclIbPortRecoveryHandleFailure: Port recovery failed for recv comm=0x7f3c5e00 "
                         "devIndex=1"),
    # src/transport/net_ib/p2p.cc ncclIbTest (v2.27.3+), after the completion WARN
    ("ib_completion_hint", "HINT: In many cases this error occurs when the NCCL_IB_TIMEOUT is set too short."),
    ("ib_completion_hint", "HINT: To confirm, try increasing the value of NCCL_IB_TIMEOUT and see if the error "
                           "persists."),
    ("ib_completion_hint", "HINT: Default value is 20, which is ~30 seconds before error."),
    # src/proxy.cc ncclProxyService
    ("proxy_teardown", "[Service thread] Accept failed Resource temporarily unavailable"),
    ("proxy_teardown", "[Service thread] Connection closed by localRank 3"),
    # src/misc/shmutils.cc ncclShmUnlink
    ("shm_teardown", "unlink shared memory /dev/shm/nccl-Xb2kQf failed, error: No such file or directory (2)"),
    # src/misc/socket.cc socketFinalizeAccept
    ("socket_accept_discarded", "socketFinalizeAccept: handshake receive from 10.0.0.3<41877> failed, discarding "
                                "peer connection"),
    # src/plugin/*.cc: plugins looked for and gone on without
    ("plugin_fallback", "TUNER/Plugin: Failed to find ncclTunerPlugin_v3 symbol."),
    ("plugin_fallback", "PROFILER/Plugin: failed to find ncclProfiler_v4"),
    ("plugin_fallback", "GIN/Plugin: Failed to initialize any GIN plugin"),
    ("plugin_fallback", "RMA/Plugin: Failed to initialize any plugin"),
    ("plugin_fallback", "Failed to initialize NET plugin IB"),
    ("plugin_fallback", "Profiler init failed with error '3': internal error. Continue without profiler."),
    ("plugin_fallback", "dlsym failed on ncclNetPlugin_v10, ignoring"),
    ("plugin_fallback", "ncclOsDlsym failed on ncclGin_v11, ignoring"),
    ("plugin_fallback", "ncclOsDlsym(ncclTunerPlugin_v5) failed: undefined symbol"),
    ("plugin_fallback", "ncclOsDlopen(libnccl-net.so) failed: libnccl-net.so: cannot open shared object file"),
    # src/misc/mlx5dvsymbols.cc, src/misc/mlx5dvwrap.cc (v2.27.3 and v2.30.7), aws-ofi-nccl src/nccl_ofi_gdrcopy.cpp
    ("library_fallback", "Failed to open libmlx5.so[.1]"),
    ("library_fallback", "NET/IB : Failed to open mlx5dv symbols. Advance features like CX-8 Direct-NIC will be "
                         "disabled."),
    ("library_fallback", "NET/MLX5: Call to mlx5dv_internal_get_data_direct_sysfs_path failed with error Operation "
                         "not supported errno 95"),
    ("library_fallback", "Call to mlx5dv_get_data_direct_sysfs_path failed with error Operation not supported errno "
                         "95"),
    ("library_fallback", "NET/OFI Failed to open gdr handle"),
    # src/register/*.cc, src/transport/net_ib/reg.cc, src/transport/nvls.cc, aws-ofi-nccl src/nccl_ofi_cuda.cpp
    ("registration_fallback", "rank 2 failed to NET register userbuff 0x7f3c5e00 buffSize 1048576 GDR flag 1"),
    ("registration_fallback", "rank 2 failed to IPC register userbuff 0x7f3c5e00 buffSize 1048576 nPeers 7 "
                              "isLegacyIpc 0 type collective"),
    ("registration_fallback", "rank 2 failed to NVLS register sendbuff 0x7f3c5e00 sendbuffSize 1048576 recvbuff "
                              "0x7f3c5e00 recvbuffSize 1048576"),
    ("registration_fallback", "rank 2 - COLLNET failed to register userbuff 0x7f3c5e00, buffSize 1048576, type "
                              "collective, GDR 1"),
    ("registration_fallback", "Failed to register memory with DMA-BUF, error=95. Trying a different method."),
    ("registration_fallback", "Failed to multicast-bind user buffer: CUDA error 801 'operation not supported'"),
    ("registration_fallback", "NET/OFI cuMemGetHandleForAddressRange failed with flags: 1, retrying with no flags"),
    ("registration_fallback", "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 801 "
                              "'operation not supported'. Proceeding without NVLS support."),
    # src/os/linux.cc ncclOsShmOpen, src/misc/ibvwrap.cc (v2.27.3), src/proxy.cc, src/graph/topo.cc
    ("retry_or_ignored", "fallocate: Failed to extend /dev/shm/nccl-Xb2kQf to 9637892 bytes, error: No space left "
                         "on device (28) - retrying"),
    ("retry_or_ignored", "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state "
                         "INIT, next state RTR, retrying 1/5 after 100 msec of sleep"),
    ("retry_or_ignored", "failed to decode NCCL_PROXY_CPUSET=0-3,x. Ignoring"),
    ("retry_or_ignored", "TOPO/NET : Tried merging multiple devices together and failed. vProps={ndevs=2, devs=[0 "
                         "1]}. Set NCCL_NET_MERGE_LEVEL=LOC to disable NIC fusion."),
]

# The `benign` rows of nccl_node_warns at INFO (their WARN lines: tests/extract/test_nccl_node_warns.py).
BENIGN_AT_INFO: list[str] = [
    "NET/Plugin: Failed to find ncclNetPlugin_v9 symbol.",  # src/plugin/net.cc (v2.27.3)
    "Failed to open libibverbs.so[.1]",  # src/misc/ibvwrap.cc
    "Could not find a path for pattern 4, falling back to simple order",  # src/graph/search.cc
    "NET/OFI aws-ofi-nccl initialization failed",  # aws-ofi-nccl src/nccl_ofi_net.cpp
]


def _understood(line: str) -> bool:
    """No event, and the line claimed (never offered to the unrecognized list)."""
    return helpers.scan(ERROR, [line], "application") == [] and helpers.claimed(line, "application")


def test_every_start_and_text_has_a_line_here() -> None:
    """A row or a word added to the table without a line here fails."""
    for row in nccl_info_lines():
        for start in row.starts:
            assert any(n == row.name and m.startswith(start) for n, m in INFO_LINES), (row.name, start)
        for text in row.texts:
            assert any(n == row.name and text in m for n, m in INFO_LINES), (row.name, text)
    assert {n for n, _ in INFO_LINES} == {r.name for r in nccl_info_lines()}


@pytest.mark.parametrize(("name", "msg"), INFO_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INFO_LINES)])
def test_an_aftermath_or_fallback_info_line_is_understood(name: str, msg: str) -> None:
    assert _understood(HEAD + msg)


@pytest.mark.parametrize("msg", BENIGN_AT_INFO)
def test_a_fallback_warn_row_is_read_at_info_too(msg: str) -> None:
    assert _understood(HEAD + msg)


@pytest.mark.parametrize(("name", "msg"), INFO_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INFO_LINES)])
def test_the_words_without_nccls_header_are_not_read_so(name: str, msg: str) -> None:
    """Posted alone, or another program's: the words are no NCCL INFO line."""
    assert not nccl._understood_info(msg)
    assert not nccl._understood_info("node-02:1234:1300 [2] " + msg)


@pytest.mark.parametrize("line", [
    # the RAS words under NCCL's WARN header (synthetic: NCCL's RAS never WARNs them): a WARN is the WARN's to read
    "node-02:1234:1300 [2] ras/rasnet.cc:402 NCCL WARN RAS keep-alive timeout error (5.0s) on socket connection with "
    "10.0.0.3<41877>",
    # the port recovery's words at WARN (format: src/transport/net_ib/p2p_resiliency.cc's WARN of v2.30.7)
    "node-02:1234:1300 [2] transport/net_ib/p2p_resiliency.cc:512 NCCL WARN NET/IB: "
    "ncclIbResiliencyHandleDeviceFailure: No more devices to fail-over to (comm=0x7f3c5e00)",
], ids=["ras-warn", "recovery-warn"])
def test_the_same_words_in_a_warn_stay_a_failure(line: str) -> None:
    assert [d.kind for d in helpers.scan(ERROR, [line], "application")] == ["nccl.error"]


@pytest.mark.parametrize("msg", [
    # a start's words inside another message: only at the message's start (src/init.cc's INFO, v2.24.3+)
    "NCCL_RAS_ENABLE set by environment to 0; RAS keep-alive timeout error reporting off",
    # NCCL's IB transport, not its port recovery: `NET/IB: ` with another function (src/transport/net_ib/connect.cc)
    "NET/IB: ncclIbCreateQp: Failed to create QP on mlx5_0:1",
], ids=["start-mid-message", "other-ib-function"])
def test_near_misses_at_info_are_not_claimed(msg: str) -> None:
    assert not nccl._understood_info(HEAD + msg)


# ------------------------------------------------------------------ the table


def _build_with(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]]) -> object:
    real = tables._document

    def fake(name: str) -> Any:
        doc = real(name)
        return {**doc, "nccl_info_lines": rows} if name == "transport.yaml" else doc

    monkeypatch.setattr(tables, "_document", fake)
    build = nccl_info_lines.__wrapped__.__wrapped__  # type: ignore[attr-defined]  # lru_cache, then _kept
    return build()


GOOD = {"name": "ras", "reading": "aftermath", "source": "src/ras/rasnet.cc", "starts": ["RAS "]}


@pytest.mark.parametrize(("rows", "problem"), [
    ([GOOD, {**GOOD, "name": "other"}], "appears twice"),
    ([{**GOOD, "starts": [], "texts": ["falling back to simple order"]}], "meets a WARN row's"),
    ([{**GOOD, "starts": [], "texts": ["Connection timed out"]}], "meets a WARN row's"),
    ([{**GOOD, "reading": "benign"}], "reading"),
    ([{**GOOD, "source": "rasnet.cc"}], "source"),
    ([{**GOOD, "starts": []}], "starts"),
], ids=["twice", "warn-row-word", "peer-word", "reading", "uncited", "no-words"])
def test_the_table_refuses(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(CatalogTableError, match=problem):
        _build_with(monkeypatch, rows)


def test_no_benign_warn_word_is_repeated_here() -> None:
    """One definition of each fallback: the INFO reader takes nccl_node_warns' benign rows as they are."""
    benign = {t for r in nccl_node_warns() if r.reading == "benign" for t in r.texts}
    assert not benign & {w for r in nccl_info_lines() for w in (*r.starts, *r.texts)}


# ------------------------------------------------------------------ through the engine

# NCCL's adapter event at WARN (format: src/transport/net_ib/common.cc, v2.30.7) and PyTorch's report of the result.
LINK = "node-02:1234:1300 [2] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: " \
       "port error(10)"
SYSTEM_ERROR = ("[rank2]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.30.7")
END = [
    "node-02:1234:1300 [2] NCCL INFO NET/IB: ncclIbResiliencyHandleDeviceFailure: Marking device 0 as permanently "
    "failed (send comm=0x7f3c5e00)",
    "node-02:1234:1300 [2] NCCL INFO RAS keep-alive timeout error (5.0s) on socket connection with 10.0.0.3<41877>",
    "node-02:1234:1300 [2] NCCL INFO [Service thread] Connection closed by localRank 3",
    "node-02:1234:1300 [2] NCCL INFO [Service thread] Accept failed Resource temporarily unavailable",
    "node-02:1234:1300 [2] NCCL INFO comm 0x55d5c8a0 rank 2 nranks 8 cudaDev 2 busId 3b000 - Abort COMPLETE",
]


def _verdict(make_bundle: BundleMaker, files: dict[str, str]) -> Any:
    return Analyzer().analyze_path(str(make_bundle(files, copy.deepcopy(WORKLOAD), "b")))


def test_a_failing_runs_last_info_lines_leave_the_port_error_the_cause_and_list_nothing(
        make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, {"app/rank-2.log": "\n".join([LINK, *END, SYSTEM_ERROR]) + "\n"})
    assert (v.attributed_domain, v.root_cause.category if v.root_cause else None) == ("network", "network.link")
    assert v.unrecognized == []


def test_the_last_info_lines_alone_name_no_cause_and_are_not_unrecognized(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, {"app/rank-2.log": "\n".join(END) + "\n"})
    assert v.root_cause is None
    assert v.unrecognized == []
