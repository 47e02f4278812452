"""Gloo's and Horovod's own error words (catalog/exceptions.yaml, the rows after Horovod's shutdown notice).

Every row's every spelling, in the forms its program prints: as the message of the exception PyTorch's gloo
backend re-raises (`RuntimeError: [<file>:<line>] <words>`, a traceback's last line), as the `what():` of the
C++ abort an uncaught gloo::IoException or std::runtime_error makes, and, where the row says it is logged, in a
line of its own. Lines are from the public threads cited beside them, or built from the printing program's
source where no thread shows the spelling (pytorch/gloo at 70dc3602: GLOO_ERROR_MSG puts `[file:line] ` first and
Address::str() prints the peer as `[ip]:port`; horovod/horovod at 2626dc87). Near misses: the same words without
the program's form around them.
"""

from __future__ import annotations

import pytest

from tests.extract.helpers import APP_AND_NCCL, alone, last_line, scan

# pytorch/gloo gloo/transport/tcp/pair.cc, buffer.cc (Read/Write timeout), pair.h (Connect timeout),
# unbound_buffer.cc (Application timeout), rendezvous/file_store.cc (Wait timeout for key(s)); the path is the one
# PyTorch's build prints (its third_party/gloo submodule)
GLOO = "[../third_party/gloo/gloo/transport/tcp/pair.cc:598]"
GLOO_TIMEOUTS = [
    f"RuntimeError: {GLOO} Read timeout [10.1.2.3]:41234",
    f"RuntimeError: {GLOO} Write timeout [10.1.2.3]:41234",
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.h:311] Connect timeout [fe80::1%eth0]:29500",
    "RuntimeError: Application timeout caused pair closure",
    "RuntimeError: [../third_party/gloo/gloo/rendezvous/file_store.cc:152] Wait timeout for key(s): "
    "[rank_0, rank_1]",
    # Horovod's HTTP store's key wait (horovod/common/gloo/http_store.cc:57, its words as ray-project/ray#25866 shows
    # them), re-raised by a Python binding
    "RuntimeError: [/tmp/pip-install-43a3uo3a/horovod_33a452dfb1f34b4e998a6265ba22cf83/horovod/common/gloo/"
    "http_store.cc:57] Wait timeout after 30 seconds for key(s): 0. You may want to increase the timeout via "
    "HOROVOD_GLOO_TIMEOUT_SECONDS",
]
GLOO_PEERS = [
    f"RuntimeError: {GLOO} Socket closed [10.1.2.3]:41234",
    f"RuntimeError: {GLOO} Socket unexpectedly closed [10.1.2.3]:41234",
    # horovod/horovod/runner/http/http_client.py (put_data_into_kvstore), as Python prints its tuple of arguments
    "RuntimeError: ('Put data input KVStore server failed.', URLError(timeout('timed out')))",
    "RuntimeError: ('Read data from KVStore server failed.', URLError(timeout('timed out')))",
]


@pytest.mark.parametrize("line", GLOO_TIMEOUTS)
def test_gloos_and_horovods_waits_that_ran_out_are_timeouts(line: str) -> None:
    assert [d.kind for d in last_line(line)] == ["nccl.timeout"]


@pytest.mark.parametrize("line", GLOO_PEERS)
def test_gloos_closed_sockets_and_horovods_store_are_a_peers_loss(line: str) -> None:
    assert [d.kind for d in last_line(line)] == ["nccl.remote_error"]


@pytest.mark.parametrize(("what", "kind"), [
    # ray-project/ray#25866, as libstdc++'s terminate prints the uncaught gloo::IoException
    ("[/tmp/pip-install-43a3uo3a/horovod_33a452dfb1f34b4e998a6265ba22cf83/horovod/common/gloo/http_store.cc:57] Wait "
     "timeout after 30 seconds for key(s): 0. You may want to increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS",
     "nccl.timeout"),
    (f"{GLOO} Read timeout [10.1.2.3]:41234", "nccl.timeout"),
    (f"{GLOO} Socket unexpectedly closed [10.1.2.3]:41234", "nccl.remote_error"),
])
def test_the_cpp_abort_of_an_uncaught_gloo_exception_reads_the_same(what: str, kind: str) -> None:
    lines = ["terminate called after throwing an instance of 'gloo::IoException'", f"  what():  {what}"]
    assert [d.kind for d in scan(APP_AND_NCCL, lines, "application")] == [kind]


@pytest.mark.parametrize("line", [
    # horovod/horovod#2746 (under Ray) and #2955 (under Spark, behind mpirun's rank prefix): the store's GET tries ran
    # out, logged before the std::runtime_error is thrown
    "(pid=11118) [2021-03-26 08:37:42.910981: E /tmp/pip-install-1br0pr96/horovod_284c8b944a414cd09d36e9484ace2798/"
    "horovod/common/gloo/http_store.cc:96] HTTP GET request failed too many times, aborting. See exception message "
    "above.",
    "Mon Jun  7 11:51:57 2021[1]<stderr>:[2021-06-07 11:51:57.963853: E /tmp/pip-install-s04s9x1l/"
    "horovod_dec38af3351c4b6299f67ee18a371ab0/horovod/common/gloo/http_store.cc:96] HTTP GET request failed too many "
    "times, aborting. See exception message above.",
])
def test_horovods_store_that_did_not_answer_is_a_peers_loss_in_a_line_of_its_own(line: str) -> None:
    assert [d.kind for d in alone(line)] == ["nccl.remote_error"]


@pytest.mark.parametrize("line", [
    # requests' read timeout: the words without gloo's `[ip]:port`
    "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. "
    "(read timeout=10)",
    # a socket closed with no peer address after it: not gloo's pair
    "RuntimeError: Socket closed by the client before the handshake",
])
def test_near_miss_the_words_without_gloos_form_are_not_gloos(line: str) -> None:
    kinds = [d.kind for d in last_line(line)]
    assert "nccl.timeout" not in kinds and "nccl.remote_error" not in kinds


@pytest.mark.parametrize("line", [
    # Horovod's retry notice (http_store.cc PerformHTTP, LOG(WARNING)): a try it repeats
    "[2021-06-07 11:51:55.123456: W /tmp/horovod/common/gloo/http_store.cc:83] HTTP response not OK, got 500",
    # gloo's store wait words in a line of their own, not an exception's message: the row is not `logged`
    "waiting; gloo would say Wait timeout for key(s): 0 after the timeout",
])
def test_near_miss_a_retry_or_the_words_in_prose_are_nothing(line: str) -> None:
    assert [d.kind for d in alone(line) if d.kind.startswith("nccl.")] == []
