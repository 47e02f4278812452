"""The older c10d's one-line lookup failure on a rendezvous name that does not exist is the job's set-up (setup91).

torch <= 1.10's c10d (torch/lib/c10d/Utils.cpp tcputil::connect) looked the store's host name up once and threw
`std::invalid_argument("host not found: " + gai_strerror(err))` with no retry (pytorch/pytorch#73682, fixed by #74641
`c10d: retry dns lookup failures`): the resolver's answer and the client's giving up in one line. Where the answer is
one of the resolver's words for a name that does not exist (catalog/transport.yaml `name_not_found_words`), it is the
same reading as the newer c10d's `cannot be retrieved (gai error: -2 ...)` followed by its giving up
(extract/torchrun.py C10dUnresolvedExtractor): an nccl.error with `setup` and `local_status` `unresolved_address`.
EAI_AGAIN (`Temporary failure in name resolution`) says nothing of the name: the rendezvous symptom only.

Lines: pytorch/pytorch#73682 and kubeflow/pytorch-operator#333 (the ValueError), pytorch/elastic#31 (torchelastic's
`Detailed message:` wrapper); the near-misses ours, from the same format string with another gai_strerror, and a
Java-style `Host not found: <name>` (not c10d's words).
"""

from __future__ import annotations

import pytest

from firstfault.model import Event
from tests.extract import helpers

TB = "Traceback (most recent call last):"
# pytorch/pytorch#73682: the elastic c10d backend creating its TCPStore
_FRAMES_73682 = [
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", '
    "line 156, in _create_tcp_store",
    "    host, port, is_master=is_server, timeout=timedelta(seconds=read_timeout)",
]


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines)


def _setup(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == "nccl.error" and e.fields.get("local_status") == "unresolved_address"]


@pytest.mark.parametrize(
    "lines",
    [
        # pytorch/pytorch#73682
        [TB, *_FRAMES_73682, "ValueError: host not found: Name or service not known"],
        # pytorch/elastic#31 (torchelastic's etcd rendezvous, rank 1 told to reach the store at a pod's host name)
        ["Error: Rank -1 received an Exception. Detailed message: host not found: Name or service not known"],
        # ours: the same throw with glibc's EAI_NODATA words (a name with no address), the table's other row
        ["ValueError: host not found: No address associated with hostname"],
    ],
)
def test_a_rendezvous_name_that_does_not_exist_is_the_jobs_setup(lines: list[str]) -> None:
    events = feed(lines)
    found = _setup(events)
    assert len(found) == 1
    assert found[0].fields["setup"] is True
    assert "does not resolve" in str(found[0].fields["detail"])


@pytest.mark.parametrize(
    "line",
    [
        # ours: the same format string, the resolver not answering (EAI_AGAIN): no word on the name
        "ValueError: host not found: Temporary failure in name resolution",
        # ours: another program's `Host not found: <name>` (not gai_strerror's words after it)
        "java.net.UnknownHostException: Host not found: trainer-0.svc",
        # ours: the words without c10d's `host not found: ` (a resolver line of some other program)
        "ping: trainer-0: Name or service not known",
    ],
)
def test_other_lookup_words_are_not_the_set_up(line: str) -> None:
    assert _setup(feed([line])) == []


def test_one_setup_event_per_stream() -> None:
    line = "Error: Rank -1 received an Exception. Detailed message: host not found: Name or service not known"
    assert len(_setup(feed([line, line]))) == 1
