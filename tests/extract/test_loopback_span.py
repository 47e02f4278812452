"""A loopback address in a job that spans nodes is the job's set-up (issue 25, family 2).

Two mechanisms, each with its near misses:

- how many nodes a job spans, from the evidence only (engine/normalise.py nodes_spanned): the allocation, the hosts
  its evidence came from, and a program's own word (extract/span.py `job.span`: NCCL's `nNodes`, torchrun's
  `--nnodes` and `min_nodes`, Slurm's `SLURM_NNODES`, an MPI launcher's host list);
- the address a rank dialled, in NCCL's, Gloo's and c10d's words (dialled_address): a loopback one in a job that
  spans two or more nodes is the job's set-up on the node that printed it (app.exception.setup); on one node, or
  where nothing says the job spans more, a refusal there is still the peer's or the store's (today's reading).

Lines: the programs' own format strings (gloo's tcp pair and error classes, NCCL's src/init.cc and misc/socket.cc,
c10d's socket.cpp, torch's launcher/api.py), and public threads' lines where named. None is a corpus bundle's.
"""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.engine.normalise import dialled_address
from firstfault.extract.span import span_of
from firstfault.model import Verdict
from tests.conftest import BundleMaker
from tests.extract.test_b7pass import feed

# ours, from gloo's tcp pair (`"connect " + peer.str() + ": " + strerror`), as PyTorch raises it
_GLOO_REFUSED = ("RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:799] connect "
                 "[127.0.1.1]:53175: Connection refused")
# ours: NCCL's socket layer as PyTorch quotes it (misc/socket.cc's `Connect to %s failed : %s`; the WARN of
# NVIDIA/nccl-tests#166 with a loopback address for its peer's)
_NCCL_ABORT = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1331, unhandled system error "
               "(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5 ncclSystemError: System call (e.g. socket, "
               "malloc) or external library call failed or device error. Last error: socketStartConnect: Connect to "
               "127.0.0.1<45763> failed : Software caused connection abort")
# ours: c10d's client socket (pytorch/pytorch#85300's line with `localhost` and ECONNREFUSED for its host and errno)
_C10D_REFUSED = ("torch.distributed.DistNetworkError: The client socket has failed to connect to [localhost]:29500 "
                 "(errno: 111 - Connection refused).")
# pytorch/pytorch#76367: torch elastic's launch configuration of a two-node torchrun
_ELASTIC_TWO = ("INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:\n"
                "  entrypoint       : launch_mnist.py\n  min_nodes        : 2\n  max_nodes        : 2\n"
                "  nproc_per_node   : 1\n")
# pytorch/pytorch#124380: the second node's torchrun command line, as `set -x` echoes it
_TORCHRUN_TWO = ("+ torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 --rdzv_id=456 --rdzv_backend=c10d "
                 "--rdzv_endpoint=10.12.3.162:10010 multinode.py 50 10\n")
# ours, from NCCL's src/init.cc (`comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d`)
_NCCL_TWO_NODES = ("gpu-a:7614:7691 [0] NCCL INFO comm 0x573f9cb382e0 rank 0 nRanks 16 nNodes 2 localRanks 8 "
                   "localRank 0 MNNVL 0\n")
_NCCL_ONE_NODE = ("gpu-a:7614:7691 [0] NCCL INFO comm 0x573f9cb382e0 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 "
                  "MNNVL 0\n")


def _workload(nodes: list[str] | None = None, state: str = "FAILED") -> dict[str, Any]:
    """A workload.yaml as a static job's: no allocation unless `nodes` (then one log per node)."""
    wl: dict[str, Any] = {"apiVersion": "firstfault/v1",
                          "workload": {"id": "t", "scheduler": "static", "terminal_state": state},
                          "sources": [{"kind": "application", "path": "app/{node}.log" if nodes else "app/train.log"}]}
    if nodes:
        wl["workload"]["nodes"] = nodes
    return wl


def _analyze(make_bundle: BundleMaker, text: str, wl: dict[str, Any] | None = None) -> Verdict:
    return Analyzer().analyze_path(str(make_bundle({"app/train.log": text}, wl or _workload())))


def _setup(v: Verdict) -> bool:
    return v.root_cause is not None and v.root_cause.category == "app.exception.setup"


# ---------------------------------------------------------------- how many nodes the job spans, in a program's words


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("I0618 15:59:02.634000 139633870123008 torch/distributed/launcher/api.py:188]   min_nodes        : 2",
         (2, "torchrun")),
        (_TORCHRUN_TWO, (2, "launcher")),
        # an elastic range: at least its least
        ("+ torchrun --nnodes=2:4 --nproc_per_node=8 train.py", (2, "launcher")),
        ("python -m torch.distributed.launch --nproc_per_node 4 --nnodes 2 --master_addr p9r1n16 train.py",
         (2, "launcher")),
        # DeepSpeed's launcher
        ("[2023-08-01 10:00:00,000] [INFO] [launch.py:163:main] nnodes=2, num_local_procs=8, node_rank=0",
         (2, "launcher")),
        ("SLURM_NNODES=4", (4, "slurm")),
        ("SLURM_JOB_NUM_NODES=3", (3, "slurm")),
        # ours, the shape of Horovod's documented mpirun launch: two hosts of two slots each
        ("mpirun -np 4 -H server1:2,server2:2 -bind-to none -map-by slot python train.py", (2, "mpirun")),
        ("horovodrun -np 4 -H localhost:4 python train.py", (1, "mpirun")),
    ],
)
def test_a_program_says_how_many_nodes_the_job_spans(line: str, expected: tuple[int, str]) -> None:
    assert span_of(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "+ torchrun --nnodes=$NNODES --nproc_per_node=8 train.py",  # a variable: no number said
        "set --nnodes to the number of machines",  # prose
        "  min_nodes        : 0",  # no count of nodes
        "NCCL INFO comm 0x7fa42c00a3b0 rank 0 nranks 2",  # NCCL before 2.19: ranks only
        "mpirun --version",
    ],
)
def test_words_that_name_no_span_are_none(line: str) -> None:
    assert span_of(line) is None


# ---------------------------------------------------------------- the address a connect failure dialled


@pytest.mark.parametrize(
    ("text", "addr"),
    [
        (_GLOO_REFUSED, "[127.0.1.1]"),
        (_NCCL_ABORT, "127.0.0.1"),
        (_C10D_REFUSED, "[localhost]"),
        # ours, from gloo's SystemError (tcp/error.cc: `<syscall>: <strerror>, remote=<addr>`)
        ("timed out connecting: SO_ERROR: Connection refused, remote=[::1]:41234", "[::1]"),
        # c10d's timeout (pytorch/pytorch#79388's words with localhost for its host)
        ("The client socket has timed out after 60s while trying to connect to (localhost, 29500).", "localhost"),
        ("NCCL WARN Connect to 10.38.10.112<21724> failed : Connection refused", "10.38.10.112"),
        # ours, gloo's connect logger (tcp/debug_logger.cc) names the dialled end after its own
        ("failed to connect, willRetry=0, retry=3, retryLimit=3, rank=1, size=2, local=[10.0.0.2]:4321, "
         "remote=[127.0.1.1]:1234, error=Connection refused", "[127.0.1.1]"),
    ],
)
def test_the_address_a_rank_dialled(text: str, addr: str) -> None:
    assert dialled_address(text) == addr


@pytest.mark.parametrize(
    "text",
    [
        "Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:152]",
        "The client socket has failed to connect to any network address of (node-01, 29500).",
        "could not connect to localhost, retrying",  # a name without its port: prose
        "Call to connect returned Connection refused, retrying",
        # a connection c10d had made, described by its ends (its recv failed): no dial
        ("[c10d] recvValue failed on SocketImpl(fd=96, addr=[localhost]:10006, remote=[localhost]:10197): failed to "
         "recv"),
    ],
)
def test_words_without_a_dialled_address_name_none(text: str) -> None:
    assert dialled_address(text) is None


# ---------------------------------------------------------------- the reading: set-up on several nodes, else today's


@pytest.mark.parametrize(
    ("span", "failure"),
    [
        (_ELASTIC_TWO, _GLOO_REFUSED),
        (_TORCHRUN_TWO, _C10D_REFUSED),
        (_ELASTIC_TWO, _NCCL_ABORT),
    ],
)
def test_a_loopback_dial_in_a_job_said_to_span_two_nodes_is_its_set_up(make_bundle: BundleMaker, span: str,
                                                                       failure: str) -> None:
    v = _analyze(make_bundle, span + failure + "\n")
    assert _setup(v), v.explanation
    assert v.root_cause is not None
    assert "is a loopback address" in v.root_cause.summary and "spans 2 nodes" in v.root_cause.summary


def test_a_loopback_dial_in_a_job_whose_evidence_comes_from_two_hosts_is_its_set_up(make_bundle: BundleMaker) -> None:
    wl = _workload(["node-01", "node-02"])
    v = Analyzer().analyze_path(str(make_bundle({"app/node-01.log": "2026-11-02 10:00:00,000 INFO waiting for peers\n",
                                                 "app/node-02.log": _GLOO_REFUSED + "\n"}, wl)))
    assert _setup(v), v.explanation
    assert v.root_cause is not None and v.root_cause.nodes == ["node-02"]
    assert "127.0.1.1 is a loopback address" in v.root_cause.summary


@pytest.mark.parametrize("span", ["", _NCCL_ONE_NODE, "  min_nodes        : 1\n"])
@pytest.mark.parametrize("failure", [_GLOO_REFUSED, _C10D_REFUSED])
def test_a_loopback_dial_on_one_node_keeps_todays_reading(make_bundle: BundleMaker, span: str, failure: str) -> None:
    # near miss: on one node (or where nothing says more) the loopback is the right address: the peer or the store
    # that went away
    v = _analyze(make_bundle, span + failure + "\n")
    assert not _setup(v)
    assert "nccl.remote_error" in [s.category for s in v.symptoms]


def test_a_routable_address_refused_in_a_two_node_job_stays_the_peers(make_bundle: BundleMaker) -> None:
    # near miss: espnet/espnet#1940's WARN (a four-node job): the peer or the path, the words cannot tell
    v = _analyze(make_bundle, _ELASTIC_TWO + "tj1-asr-train-v100-11:41449:43711 [6] include/socket.h:390 NCCL WARN "
                 "Connect to 10.38.10.112<21724> failed : Connection refused\n")
    assert not _setup(v)


def test_nccl_choosing_lo_in_a_job_that_ran_fine_is_nothing(make_bundle: BundleMaker) -> None:
    # near miss: NCCL's interface INFO lines (horovod/horovod#584's spelling) name an address it will use, no dial
    text = (_ELASTIC_TWO + "gpu-a:4152:4206 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>\n"
            "gpu-a:4152:4206 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
            "gpu-a:4152:4206 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n")
    v = _analyze(make_bundle, text, _workload(state="COMPLETED"))
    assert v.root_cause is None and not v.candidates and not v.symptoms


def test_a_loopback_word_in_prose_or_a_web_uis_address_is_nothing(make_bundle: BundleMaker) -> None:
    # near miss: Ray's dashboard banner and a note that names localhost, in a two-node job that failed otherwise
    text = (_ELASTIC_TWO + "2026-11-02 10:00:00,000\tINFO worker.py:1621 -- Started a local Ray instance. View the "
            "dashboard at http://127.0.0.1:8265\n"
            "note: connect to localhost to see the TensorBoard UI\n")
    v = _analyze(make_bundle, text)
    assert not _setup(v)


def test_the_span_words_are_no_event_of_the_rules() -> None:
    # the fact is read by the engine, never a cause nor a symptom; the extractor does emit it
    assert [(e.kind, e.fields.get("nodes")) for e in feed(_ELASTIC_TWO.splitlines())] == [("job.span", 2)]


def test_nccls_own_count_is_not_read() -> None:
    # near miss by design: NCCL's communicator summary is in every rank's log (extract/span.py's doc: its cost)
    assert feed([_NCCL_TWO_NODES.rstrip("\n")]) == []
