"""gRPC's own words for what ended a call or a connection (catalog/exceptions.yaml, the rows before `status_words`
and the status words' `call` family): the job's set-up where they name it (a message over the configured maximum, a
keepalive policy the server refused, a certificate the channel refused), a peer's where the call's status is the
server's or the transport's, nothing where they cannot tell. Lines from the public threads cited beside them, or the
sources' format strings filled in (said so).
"""

from __future__ import annotations

import pytest

from firstfault.extract.base import Draft
from tests.extract.helpers import alone, last_line


def _read(drafts: list[Draft]) -> list[tuple[str, object]]:
    return [(d.kind, d.fields.get("setup")) for d in drafts]


@pytest.mark.parametrize("line", [
    # flwrlabs/flower#3006, verbatim (Python's RPC error flattened on one line)
    'grpc._channel._MultiThreadedRendezvous: <_MultiThreadedRendezvous of RPC that terminated with:         status = '
    'StatusCode.RESOURCE_EXHAUSTED         details = "Sent message larger than max (544715979 vs. 536870912)"',
    # the same error's details line of its own (gRPC Python's multi-line form)
    '\tdetails = "Received message larger than max (8388608 vs. 4194304)"',
    # grpc-go rpc_util.go's format string filled in, as Go's status prints it
    "rpc error: code = ResourceExhausted desc = grpc: received message larger than max (5242880 vs. 4194304)",
    # grpc-java MessageDeframer's, as StatusRuntimeException prints it
    "io.grpc.StatusRuntimeException: RESOURCE_EXHAUSTED: gRPC message exceeds maximum size 51000000: 99265809",
    # flwrlabs/flower#2197, verbatim (gRPC core's chttp2 record)
    'Received a GOAWAY with error code ENHANCE_YOUR_CALM and debug data equal to "too_many_pings".',
    # grpc-go http2_client.go's record, verbatim from its source
    '2023/07/22 12:43:55 ERROR: [transport] Client received GoAway with error code ENHANCE_YOUR_CALM and debug data '
    'equal to ASCII "too_many_pings".',
    # NVIDIA/NVFlare#128, verbatim (gRPC core's ssl_transport_security.cc)
    "E0120 10:25:20.267690287   12242 ssl_transport_security.cc:1468] Handshake failed with fatal error SSL_ERROR_SSL: "
    "error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED.",
])
def test_grpcs_words_for_the_jobs_own_settings_are_its_set_up(line: str) -> None:
    drafts = alone(line)
    assert _read(drafts) == [("app.exception", True)], drafts


@pytest.mark.parametrize("line", [
    # londonaicentre/FLIP#171, verbatim: the peer spoke no TLS (an ALB ending TLS in the path, or a plain server)
    "I0000 00:00:1773322792.532760      99 ssl_transport_security.cc:1884] Handshake failed with error SSL_ERROR_SSL: "
    "error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER: Invalid certificate verification context",
    # Python's own ssl on a download: a node's CA store or a proxy's as well (synthetic)
    "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local "
    "issuer certificate (_ssl.c:1006)",
    # a GOAWAY of a server going away (NO_ERROR): the peer's, no set-up (synthetic, grpc-go's words)
    "[transport] Client received GoAway with error code NO_ERROR and debug data equal to ASCII \"max_age\".",
    # a person's words about the limit (synthetic)
    "we raised grpc_max_message_length because the message larger than max error kept coming back",
])
def test_near_miss_other_tls_and_transport_words_are_not_the_set_up(line: str) -> None:
    assert all(not d.fields.get("setup") for d in alone(line))


def test_a_calls_internal_status_is_the_servers_not_the_callers() -> None:
    # FederatedAI/FATE#1402 (verbatim lines): eggroll's storage service answered INTERNAL; the caller did nothing wrong
    drafts = alone("status = StatusCode.INTERNAL")
    assert [d.kind for d in drafts] == ["nccl.remote_error"]


def test_near_miss_internal_in_absls_words_stays_the_workloads() -> None:
    # XLA's own INTERNAL (a compile of the program) is the workload's exception, as before
    drafts = last_line("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: ptxas exited with non-zero error code 65280")
    assert [d.kind for d in drafts] == ["app.exception"]


def test_a_calls_unknown_status_stays_the_servers_own_exception() -> None:
    # securefederatedai/openfl (b104's bundle): the aggregator's handler raised, gRPC Python's words for it (the
    # error's lines joined on one, as a post flattens them)
    drafts = alone("grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with: status = "
                       'StatusCode.UNKNOWN details = "Exception calling application: Aggregator does not have an '
                       'aggregated tensor"')
    assert [d.kind for d in drafts] == ["app.exception"]


def test_a_rendezvous_class_reads_its_calls_status() -> None:
    # gRPC Python's streaming call error, its lines joined: UNAVAILABLE is a peer it could not reach
    drafts = alone("grpc._channel._MultiThreadedRendezvous: <_MultiThreadedRendezvous of RPC that terminated with: "
                   'status = StatusCode.UNAVAILABLE details = "failed to connect to all addresses"')
    assert [d.kind for d in drafts] == ["nccl.remote_error"]


def test_a_logged_call_error_reads_its_status() -> None:
    # Fed-BioMed's logger before gRPC aio's error (b104's bundle, verbatim): INTERNAL is the server's
    drafts = alone("Unexpected error raised by researcher gRPC server in Sender <AioRpcError of RPC that terminated "
                   "with: status = StatusCode.INTERNAL")
    assert [d.kind for d in drafts] == ["nccl.remote_error"]


def test_near_miss_a_call_errors_class_line_without_its_status_is_nothing() -> None:
    # the multi-line form's first line: the status line under it decides
    assert alone("grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:") == []


def test_near_miss_a_client_librarys_exception_quoting_the_servers_words_stays_its_exception() -> None:
    # triton-inference-server/server#3678 (b25's bundle), verbatim: the server's own report of its failed backend stub
    drafts = last_line("tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] Failed to process the "
                       "request(s) for model instance 'damage_0', message: Stub process is not healthy.")
    assert [d.kind for d in drafts] == ["app.exception"]
