"""NCCL's WARN lines as its releases print them, read by the file they name (bench/nccl_scan.py's pass over NCCL's
sources): the header of v2.30.7 with the warning function in it, the files of the IB transport since 2.29 split it
into a folder and of the headers whose inline functions WARN, the socket layer's words for a peer it could not
connect to since 2.19, and a WARN posted without its host prefix.

Every line is an NCCL format string (NVIDIA/nccl, the file and release each names) filled in by us; none comes
from tests/wild.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import nccl
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

ERROR = nccl.NcclErrorExtractor()
HEAD = "node-02:1234:1300 [2] "
# PyTorch's report of the failed call on the same rank (format: ProcessGroupNCCL's `NCCL error in:` line)
SYSTEM_ERROR = ("[rank2]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
                "version 2.30.7")


def _verdict(make_bundle: BundleMaker, lines: list[str]) -> tuple[str | None, str | None, list[str] | None]:
    root = make_bundle({"app/rank-2.log": "\n".join(lines) + "\n"}, copy.deepcopy(WORKLOAD))
    v = Analyzer().analyze_path(str(root))
    rc = v.root_cause
    return v.attributed_domain, rc.category if rc else None, rc.nodes if rc else None


# ------------------------------------------------------------------ v2.30.7's header: `file:line (func) NCCL WARN`


@pytest.mark.parametrize(("line", "source", "fields"), [
    # format: src/misc/argcheck.cc CommCheck (v2.30.7): the argument check's file decides, as before 2.30.7
    (HEAD + "misc/argcheck.cc:39 (CommCheck) NCCL WARN Recv : invalid root 3 (root should be in the 0..1 range)",
     "misc/argcheck.cc", {"setup": True, "local_status": "invalid_argument"}),
    # format: src/proxy.cc ncclProxyCallBlocking (v2.30.7): the proxy's file names its transport
    (HEAD + "proxy.cc:1111 (ncclProxyCallBlocking) NCCL WARN Proxy Call to rank 3 failed (Connect)",
     "proxy.cc", {"transport": "proxy"}),
    # a lambda's __func__ (format: src/proxy.cc, a WARN inside one)
    (HEAD + "proxy.cc:1874 (operator()) NCCL WARN [Service thread] Could not receive type from localRank 3, res=3, "
     "closed=0", "proxy.cc", {"transport": "proxy"}),
], ids=["argcheck", "proxy", "lambda"])
def test_the_function_in_v2_30_7s_header_leaves_the_file_the_source(line: str, source: str,
                                                                    fields: dict[str, object]) -> None:
    d = helpers.one(ERROR, line, "application")
    assert d.kind == "nccl.error" and d.host == "node-02" and d.device == "gpu2"
    helpers.assert_fields(d, {"nccl_source": source, **fields})


def test_a_phrase_in_parentheses_is_no_function_of_the_header() -> None:
    """Words with a space between the line and `NCCL WARN` are no __func__: the line has no source file."""
    line = HEAD + "misc/argcheck.cc:39 (see argcheck) NCCL WARN Recv : invalid root 3"
    assert not any(d.fields.get("setup") or d.fields.get("nccl_source") for d in helpers.scan(ERROR, [line],
                                                                                              "application"))


def test_v2_30_7s_argument_check_then_the_frameworks_error_is_the_jobs_setup(make_bundle: BundleMaker) -> None:
    line = HEAD + "misc/argcheck.cc:39 (CommCheck) NCCL WARN Recv : invalid root 3 (root should be in the 0..1 range)"
    assert _verdict(make_bundle, [line, SYSTEM_ERROR]) == ("software", "app.exception.setup", ["node-02"])


# ------------------------------------------------------------------ a WARN posted without its host prefix


def test_an_argument_checks_warn_without_its_host_prefix_is_still_the_jobs() -> None:
    # format: src/misc/argcheck.cc CommCheck (v2.21.5), the host prefix cut off by the poster
    (d,) = helpers.events(["misc/argcheck.cc:39 NCCL WARN Recv : invalid root 3 (root should be in the 0..1 range)"])
    assert (d.kind, d.fields.get("setup"), d.fields.get("local_status")) == ("nccl.error", True, "invalid_argument")


def test_the_same_words_from_another_file_without_the_prefix_are_no_setup() -> None:
    # format: the same message, from src/enqueue.cc's file (no argument check's file)
    (d,) = helpers.events(["enqueue.cc:39 NCCL WARN Recv : invalid root 3 (root should be in the 0..1 range)"])
    assert d.kind == "nccl.error" and "setup" not in d.fields


# ------------------------------------------------------------------ the IB transport's files, and headers'


@pytest.mark.parametrize(("line", "transport"), [
    # format: src/transport/net_ib/init.cc ncclIbInitDevices (v2.29 and later: net_ib.cc split into a folder)
    (HEAD + "transport/net_ib/init.cc:412 (ncclIbInitDevices) NCCL WARN NET/IB : Unable to open device mlx5_0", "ib"),
    # format: src/transport/net_ib/gdaki/gin_host_gdaki.cc (v2.30.7), a folder below it
    (HEAD + "transport/net_ib/gdaki/gin_host_gdaki.cc:35 (gdakiCheck) NCCL WARN DOCA failure 3", "ib"),
    # format: src/misc/mlx5dvwrap.cc (v2.23 and later)
    (HEAD + "misc/mlx5dvwrap.cc:40 NCCL WARN NET/MLX5: Call to mlx5dv_get_data_direct_sysfs_path failed with error "
     "Operation not supported", "ib"),
    # format: src/include/ibvwrap.h wrap_ibv_post_send (v2.21.5)
    (HEAD + "include/ibvwrap.h:75 NCCL WARN ibv_post_send() failed with error Invalid argument, Bad WR 0x7f3c5e00, "
     "First WR 0x7f3c5e00", "ib"),
    # format: src/include/socket.h (v2.7.8): the socket layer's inline functions, before misc/socket.cc
    (HEAD + "include/socket.h:415 NCCL WARN Net : Socket creation failed : Address family not supported by protocol",
     "socket"),
], ids=["net_ib-folder", "net_ib-subfolder", "mlx5dv", "ibvwrap-header", "socket-header"])
def test_the_transports_own_files_name_it(line: str, transport: str) -> None:
    d = helpers.one(ERROR, line, "application")
    assert d.fields.get("transport") == transport


def test_the_network_transports_generic_file_names_no_ib() -> None:
    """transport/net.cc is the network transport over whichever network NCCL uses (sockets, IB, a plugin)."""
    # format: src/transport/net.cc sendConnect (v2.21.5)
    line = HEAD + "transport/net.cc:346 NCCL WARN failed to peer with device 1: 801 operation not supported"
    assert "transport" not in helpers.one(ERROR, line, "application").fields


# format: src/transport/net_ib/connect.cc ncclIbCreateQp (v2.30.7), the QP the driver would not make
QP_UNSUPPORTED = (HEAD + "transport/net_ib/connect.cc:372 (ncclIbCreateQp) NCCL WARN NET/IB: mlx5dv_create_qp failed "
                  "to create QP: Operation not supported")


def test_the_rdma_stack_refusing_the_ib_transport_of_2_29_is_the_nodes(make_bundle: BundleMaker) -> None:
    assert _verdict(make_bundle, [QP_UNSUPPORTED, SYSTEM_ERROR]) == ("infrastructure", "node.driver.rdma",
                                                                     ["node-02"])


def test_the_same_errno_from_the_generic_network_transport_is_not_the_rdma_stack(make_bundle: BundleMaker) -> None:
    line = QP_UNSUPPORTED.replace("transport/net_ib/connect.cc:372 (ncclIbCreateQp)", "transport/net.cc:476 "
                                  "(sendConnect)")
    assert _verdict(make_bundle, [line, SYSTEM_ERROR])[1] != "node.driver.rdma"


# ------------------------------------------------------------------ the socket layer's peer, 2.19 and later


@pytest.mark.parametrize("line", [
    # format: src/misc/socket.cc socketConnectCheck (v2.21.5) and src/os/linux.cc (v2.30.7): the retries' end
    HEAD + "misc/socket.cc:577 NCCL WARN socketStartConnect: connect to 10.0.0.3<41877> returned Connection refused, "
    "exceeded error retry count after 35 attempts",
    HEAD + "os/linux.cc:288 (socketConnectCheck) NCCL WARN socketStartConnect: connect to 10.0.0.3<41877> returned "
    "Connection refused, exceeded error retry count after 35 attempts",
    # format: src/misc/socket.cc socketPollConnect (v2.21.5): the function's name run into the words
    HEAD + "misc/socket.cc:617 NCCL WARN socketPollConnect to 10.0.0.3<41877> failed with error Connection refused",
], ids=["retries-2.21", "retries-2.30", "poll"])
def test_the_peer_the_socket_layer_could_not_connect_to_is_named(line: str) -> None:
    d = helpers.one(ERROR, line, "application")
    assert d.kind == "nccl.remote_error"
    helpers.assert_fields(d, {"peer": "10.0.0.3", "peer_status": "ECONNREFUSED"})


def test_a_connect_retry_at_info_is_no_event() -> None:
    # format: src/os/linux.cc socketConnectCheck (v2.30.7), a retry NCCL goes on from
    line = (HEAD + "NCCL INFO socketStartConnect: connect to 10.0.0.3<41877> returned Connection refused, retrying "
            "(1/35) after sleep for 100 msec")
    assert helpers.events([line]) == []


# ------------------------------------------------------------------ NVLS's bind failing at INFO: NCCL goes on

# format: src/transport/nvls.cc nvlsAllocateMem (v2.27.3 to v2.28.9): the same words at INFO, then NCCL goes on
NVLS_INFO = (HEAD + "NCCL INFO Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 801 "
             "'operation not supported'. Proceeding without NVLS support.")


def test_nvls_failing_to_bind_at_info_is_no_event() -> None:
    assert helpers.events([NVLS_INFO]) == []


def test_the_same_words_quoted_without_a_header_are_still_nvls() -> None:
    """PyTorch's `Last error:` quotes the WARN's message without any header (the WARN of other releases)."""
    evs = helpers.events([NVLS_INFO.split(" NCCL INFO ", 1)[1]])
    assert [e.fields.get("transport") for e in evs if e.kind == "nccl.error"] == ["nvls"]


# ------------------------------------------------------------------ aws-ofi-nccl's functions outside its prefix

# format: aws/aws-ofi-nccl v1.9.1-aws src/nccl_ofi_ofiutils.c nccl_ofi_ofiutils_init_connection, a C build: its
# __PRETTY_FUNCTION__ is the bare name, where NCCL puts the file, outside the plugin's nccl_net_ofi prefix;
# fi_strerror(FI_EOPNOTSUPP)
OFI_ENDPOINT = (HEAD + "nccl_ofi_ofiutils_init_connection:257 NCCL WARN NET/OFI Couldn't allocate endpoint. RC: -95, "
                "ERROR: Operation not supported")


def test_the_plugins_words_name_its_transport_where_its_function_does_not(make_bundle: BundleMaker) -> None:
    d = helpers.one(ERROR, OFI_ENDPOINT, "application")
    helpers.assert_fields(d, {"nccl_source": "nccl_ofi_ofiutils_init_connection", "transport": "ofi"})
    assert _verdict(make_bundle, [OFI_ENDPOINT, SYSTEM_ERROR]) == ("infrastructure", "node.driver.rdma",
                                                                   ["node-02"])


def test_an_nccl_file_without_a_transport_and_without_its_words_names_none() -> None:
    # format: src/init.cc (v2.21.5), SYSCHECK's words with the same errno
    line = HEAD + "init.cc:1700 NCCL WARN Call to fopen failed : No data available"
    assert "transport" not in helpers.one(ERROR, line, "application").fields
