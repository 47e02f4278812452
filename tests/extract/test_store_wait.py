"""A store's client retrying its server (catalog/ends.yaml `stalls`, `wait` rows with the address they dial): a wait
that decides nothing, except at an address only its own host reaches in a job of nodes (the job's set-up, as a refused
dial there is: engine/normalise.py host_local_dialled) and on the port its own stream's server announced (a stall: its
own server unreachable at the address it dials). And a logged storage errno that a transport or a device says too
(EIO), alone with no path: no storage's.

Provenance: lines marked with a thread are as posted there (tests/wild bundles of the same number); `ours` lines are
composed from the printing program's format string (Paddle's tcp_utils.cc tcp_connect / tcp_listen) with made-up
addresses.
"""

from __future__ import annotations

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict
from tests.conftest import BundleMaker
from tests.extract.helpers import events
from tests.extract.test_loopback_span import _workload

# yeyupiaoling/PPASR#142: host B's TCPStore client dialling the loopback address host A advertised
_RETRY_142 = ("I0224 13:50:30.278173 1512912 tcp_utils.cc:107] Retry to connect to 127.0.1.1:63917 while the server "
              "is not yet listening.\n")
# PaddlePaddle/Paddle#54079: the store's own process listens, then cannot reach it at a stale address
_LISTEN_54079 = "I0524 11:30:40.681471  4352 tcp_utils.cc:181] The server starts to listen on IP_ANY:52031\n"
_RETRY_54079 = ("I0524 11:30:43.735888  4352 tcp_utils.cc:107] Retry to connect to 192.168.9.17:52031 while the server "
                "is not yet listening.\n")
# ours: a worker of two nodes waiting for the master's store at its real address
_RETRY_PEER = ("I0524 11:30:43.735888  4352 tcp_utils.cc:107] Retry to connect to 10.0.0.7:52031 while the server is "
               "not yet listening.\n")
_TWO_NODES = "+ python -m paddle.distributed.launch --nnodes 2 train.py\n"


def _analyze(make_bundle: BundleMaker, text: str, state: str | None = None) -> Verdict:
    wl = _workload()
    if state is None:
        del wl["workload"]["terminal_state"]
    else:
        wl["workload"]["terminal_state"] = state
    return Analyzer().analyze_path(str(make_bundle({"app/train.log": text}, wl)))


def test_a_store_retry_to_loopback_in_a_job_of_two_nodes_is_the_set_up(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _TWO_NODES + _RETRY_142 * 2)
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup", v.explanation
    assert "127.0.1.1 is a loopback address" in v.root_cause.summary


def test_a_store_retry_to_loopback_on_one_node_is_a_wait(make_bundle: BundleMaker) -> None:
    # near miss: one node, where loopback is the store's right address and the retry a start's wait
    v = _analyze(make_bundle, _RETRY_142 * 2)
    assert v.root_cause is None and v.attributed_domain == "none" and not v.symptoms, v.explanation


def test_a_store_retry_to_a_peers_address_is_a_wait(make_bundle: BundleMaker) -> None:
    # near miss: two nodes, a worker waiting for the master's store at an address other hosts reach
    v = _analyze(make_bundle, _TWO_NODES + _RETRY_PEER * 2)
    assert v.root_cause is None and v.attributed_domain == "none" and not v.symptoms, v.explanation


def test_a_retry_to_the_streams_own_servers_port_is_a_stall() -> None:
    kinds = [e.kind for e in events([_LISTEN_54079.strip(), _RETRY_54079.strip()])]
    assert "stall.report" in kinds and "rendezvous.wait" not in kinds


def test_a_retry_to_another_port_than_the_streams_server_is_a_wait() -> None:
    # near miss: the stream's own server listens on another port than the one it dials
    kinds = [e.kind for e in events([_LISTEN_54079.strip(), _RETRY_54079.replace(":52031", ":52032").strip()])]
    assert "stall.report" not in kinds and "rendezvous.wait" in kinds


def test_a_logged_eio_alone_names_no_storage() -> None:
    # mozilla/DeepSpeech#2004: the run's last line, no path, no traceback
    assert "storage.error" not in {e.kind for e in events(["E [Errno 5] Input/output error"])}


def test_a_logged_eio_on_a_file_is_the_storages() -> None:
    # near miss: the same errno on a file's path
    line = "E [Errno 5] Input/output error: '/data/clips/common_voice_1.wav'"
    assert "storage.error" in {e.kind for e in events([line])}


def test_a_logged_file_only_errno_alone_is_still_the_storages() -> None:
    # near miss: ENOSPC, which only a file system says
    assert "storage.error" in {e.kind for e in events(["E [Errno 28] No space left on device"])}
