"""Verbs completion errors in other libraries' words, rendezvous failures, pasted-text prefixes.

Lines marked with a thread are verbatim from that public report (tests/wild
holds the whole block); the others follow the documented formats of the
software named.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import ib_wc_status_table
from firstfault.extract.prefix import split_prefixes
from firstfault.extract.verbs import read_completion, verbs_literals
from firstfault.model import Event
from tests.extract import helpers

TB = "Traceback (most recent call last):"


def feed(lines: list[str], hosts: tuple[str, ...] = ()) -> list[Event]:
    return helpers.events(lines, hosts=hosts)


# ---------------------------------------------------------------- verbs completions

# openucx/ucx#6000
UCX_ROCE = ("[compute001:31180:0:31180] ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_0:1/RoCE "
            "(synd 0x15 vend 0x81 hw_synd 0/0)")


def test_ucx_retry_exceeded_is_an_ib_completion_error_on_the_host_of_its_header() -> None:
    events = feed([UCX_ROCE], hosts=("compute001",))
    assert [e.kind for e in events] == ["nccl.ib_completion_error"]
    f = events[0].fields
    assert (f["status"], f["status_class"], f["hca"], f["vendor_err"], f["syndrome"], f["via"]) == (
        12, "path", "mlx5_0", 129, 0x15, "verbs")
    assert events[0].fields["host"] == "compute001"


@pytest.mark.parametrize(
    ("line", "status"),
    [
        # libibverbs' ibv_wc_status_str() wording, as a verbs program logs it
        ("rdma_client: ibv_poll_cq: wc status 12 (transport retry counter exceeded) on mlx5_1", 12),
        ("mlx5_0: completion error: RNR retry counter exceeded, QP 0x1a2", 13),
        ("error on QP 0x33945: IBV_WC_REM_ACCESS_ERR", 10),
        # openucx/ucx#2545: under Open MPI's --timestamp-output tag
        ("Sun Apr 22 11:13:01 2018[1,305]<stderr>:[hpc-arm-hp03:94092:0:94092] ib_mlx5_log.c:113  FATAL: Error on QP "
         "0x2396e wqe[001]: Transport retry count exceeded (synd 0x15 vend 0x81) opcode RDMA_READ", 12),
    ],
)
def test_verbs_wordings_map_to_their_status(line: str, status: int) -> None:
    events = [e for e in feed([line]) if e.kind == "nccl.ib_completion_error"]
    assert [e.fields["status"] for e in events] == [status]


@pytest.mark.parametrize(
    "line",
    [
        # the same words with nothing of verbs on the line: an HTTP client, a database
        "requests.exceptions.HTTPError: 403 Client Error: remote access error for url https://example.org/x",
        "WARNING retry: transport retry counter exceeded while uploading to s3://bucket/ckpt",
        # NCCL's own report is read once, by the NCCL extractor
        "n1:2201:2260 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<47913> with "
        "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV(128) len=0 vendor_err=129 hca mlx5_0",
    ],
)
def test_a_status_wording_without_verbs_context_or_owned_by_nccl_is_not_read_here(line: str) -> None:
    assert read_completion(split_prefixes(line).body) is None


def test_the_prefilter_words_are_the_tables_wordings() -> None:
    words = set(verbs_literals())
    for row in ib_wc_status_table().values():
        assert row.name in words
        if row.numbered:  # everyday words: only beside their number, never alone
            assert {f"{t} ({row.code})" for t in row.texts} <= words and not set(row.texts) & words
        else:
            assert set(row.texts) <= words


def test_a_responder_refusing_the_request_is_not_the_fabric_path() -> None:
    # NVIDIA/nccl#1710 (the quote marker and GitHub's autolinks as pasted)
    line = ("> node023:10214:10303 [0] transport/[net_ib.cc:1909](http://net_ib.cc:1909/) NCCL WARN NET/IB : Got "
            "completion from peer [10.1.3.201](http://10.1.3.201/)<33057> with status=9 opcode=0 len=0 vendor err 138 "
            "(Send) localGid ::ffff:[10.206.1.23](http://10.206.1.23/) remoteGids::ffff:[10.206.1.11](http://10.206.1.11/)")
    events = [e for e in feed([line], hosts=("node023",)) if e.kind == "nccl.ib_completion_error"]
    assert [(e.fields["status"], e.fields["status_class"], e.fields.get("host")) for e in events] == [
        (9, "remote_access", "node023")]
    assert ib_wc_status_table()[12].wc_class == "path"


# ---------------------------------------------------------------- rendezvous failures

_RDZV_FRAMES = [
    '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 423, in '
    "init_process_group",
    "    store, rank, world_size = next(rendezvous_iterator)",
    '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/rendezvous.py", line 172, in '
    "_env_rendezvous_handler",
    "    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)",
]


@pytest.mark.parametrize(
    ("last", "phase"),
    [
        # ours: the older c10d's lookup failure (Utils.cpp tcputil::connect, `"host not found: " + gai_strerror`)
        # with EAI_AGAIN, the resolver not answering; kubeflow/pytorch-operator#333's `Name or service not known`
        # is also the job's set-up (tests/extract/test_c10d_host_not_found.py)
        ("ValueError: host not found: Temporary failure in name resolution", "rendezvous"),
        # pytorch/pytorch#69197 (raised from the elastic c10d backend's TCPStore)
        ("RuntimeError: connect() timed out. Original timeout was 60000 ms.", "rendezvous"),
        # a peer phrase the peer-failure table already knows keeps its reading
        ("RuntimeError: Connection refused", None),
    ],
)
def test_a_store_that_cannot_be_reached_in_the_rendezvous_is_a_symptom(last: str, phase: str | None) -> None:
    events = feed([TB, *_RDZV_FRAMES, last])
    assert [(e.kind, e.fields.get("phase")) for e in events] == [("nccl.remote_error", phase)]


def test_a_rendezvous_error_about_the_workloads_own_settings_stays_its_exception() -> None:
    last = ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
            "MASTER_ADDR expected, but not set")
    events = feed([TB, *_RDZV_FRAMES, last])
    assert [e.kind for e in events] == ["app.exception"]


def test_a_timeout_outside_the_rendezvous_stays_the_workloads_exception() -> None:
    frames = ['  File "/app/fetch.py", line 12, in get', "    return session.get(url, timeout=5)"]
    events = feed([TB, *frames, "TimeoutError: connect() timed out"])
    assert [e.kind for e in events] == ["app.exception"]


# ---------------------------------------------------------------- pasted and timestamped prefixes


@pytest.mark.parametrize(
    ("line", "body", "rank"),
    [
        ("> node201:127799:127863 [0] NCCL WARN x", "node201:127799:127863 [0] NCCL WARN x", None),
        ("> > nested quote", "nested quote", None),
        ("Sun Apr 22 11:13:01 2018[1,305]<stderr>:payload", "payload", 305),
        # near misses: a Python prompt, a quote marker alone, a ctime stamp that no mpirun tag follows
        (">>> import torch", ">>> import torch", None),
        ("> ", "> ", None),
        ("Sun Apr 22 11:13:01 2018 job started", "Sun Apr 22 11:13:01 2018 job started", None),
        # a tracker's automatic link is put back to its text; a real Markdown link is left alone
        ("> h1:1:2 [0] transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN x",
         "h1:1:2 [0] transport/net_ib.cc:101 NCCL WARN x", None),
        ("see [the guide](https://docs.nvidia.com/nccl) for NCCL_IB_HCA",
         "see [the guide](https://docs.nvidia.com/nccl) for NCCL_IB_HCA", None),
    ],
)
def test_quote_markers_and_mpirun_timestamps(line: str, body: str, rank: int | None) -> None:
    p = split_prefixes(line)
    assert (p.body, p.rank) == (body, rank)
