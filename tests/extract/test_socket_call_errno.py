"""The errno table applied to a socket library's report of its own call, a UCX binding's exception that carries a
peer's status, and a C++ library's failed CHECK right after its stream reported a peer's loss (extract/traceback.py
`socket_call_failed`, extract/excclass.py `ucx_peer_status`, extract/exceptions.py `_bare_check`).

Lines as the programs print them: rabit's `Socket::Error` (dmlc/dask-xgboost#5), LightGBM's `Log::Fatal` in
socket_wrapper.hpp (LightGBM#6197), DGL's TCPSocket::Receive and its CHECK after it (awslabs/dgl-ke#229), the RAPIDS
Accelerator for Spark's UCX shuffle (NVIDIA/spark-rapids#7940) and UCX-Py's UCXError.
"""

from __future__ import annotations

from firstfault.extract.base import Draft
from tests.extract import helpers

DGL = [
    "/dgl_workspace/dgl/src/graph/network/tcp_socket.cc:180: recv error: Resource temporarily unavailable",
    "terminate called after throwing an instance of 'dmlc::Error'",
    "  what():  [04:04:56] /dgl_workspace/dgl/src/graph/network/socket_communicator.cc:282: Check failed: "
    "tmp != -1 (-1 vs. -1) : ",
]


def _read(lines: list[str]) -> list[Draft]:
    return helpers.scan(helpers.APPLICATION, lines, "application")


def _kinds(lines: list[str]) -> list[tuple[str, bool]]:
    return [(d.kind, bool(d.fields.get("setup") or d.fields.get("envelope"))) for d in _read(lines)]


def test_a_socket_call_with_a_local_errno_is_the_jobs_set_up() -> None:
    (d,) = _read(["Socket Connect Error:Invalid argument"])
    assert (d.kind, d.fields.get("setup"), d.fields.get("errno")) == ("app.exception", True, "EINVAL")
    (d,) = _read(["Socket Bind Error:Address already in use"])
    assert (d.kind, d.fields.get("errno")) == ("app.exception", "EADDRINUSE")


def test_a_socket_call_a_peer_reset_is_the_peers_loss() -> None:
    assert _kinds(["[LightGBM] [Fatal] Socket recv error, Connection reset by peer (code: 104)"]) == [
        ("nccl.remote_error", False)]


def test_eagain_on_a_receive_is_the_sockets_timeout() -> None:
    assert _kinds(DGL[:1]) == [("nccl.timeout", False)]


def test_near_miss_errnos_that_decide_nothing_on_a_socket_call() -> None:
    # EAGAIN on a connect (no timeout of a wait), ENOMEM (no buffers pinned by a socket), a file's errno
    for line in ("Socket Connect Error:Resource temporarily unavailable", "Socket Recv Error:Cannot allocate memory",
                 "Socket Connect Error:No such file or directory"):
        assert _read([line]) == [], line


def test_near_miss_the_words_in_prose_are_no_call_report() -> None:
    assert _read(["the recv error: Connection reset by peer was seen"]) == []


def test_a_ucx_exception_with_a_peer_status_is_the_peers_loss() -> None:
    assert _kinds(["ucp._libs.exceptions.UCXError: <stream_recv>: Endpoint timeout"]) == [("nccl.remote_error", False)]
    line = ("23/03/27 00:08:01 ERROR UCX: UcpListener detected an error for executorId 2: "
            "UCXError(-80,Endpoint timeout)")
    assert {k for k, _ in _kinds([line])} == {"nccl.remote_error"}


def test_near_miss_a_ucx_exception_of_another_status_or_another_class_stays_the_programs() -> None:
    assert _kinds(["ucp._libs.exceptions.UCXError: <stream_recv>: Message truncated"]) == [("app.exception", False)]
    assert "nccl.remote_error" not in {k for k, _ in _kinds(["MyError: Endpoint timeout"])}


def test_a_failed_check_after_the_streams_peer_loss_is_its_reaction() -> None:
    assert _kinds(DGL) == [("nccl.timeout", False), ("app.exception", True)]


def test_near_miss_the_same_check_alone_is_the_programs_exception() -> None:
    (d,) = _read(DGL[1:])
    assert d.kind == "app.exception" and not d.fields.get("envelope")
