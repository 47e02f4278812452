"""How many nodes a job spans, in the words of the programs that launched or joined it (`job.span`).

A fact about the job, not a failure: no rule names it a cause or a symptom. The engine reads it beside the
allocation and the hosts the evidence came from (engine/normalise.py nodes_spanned): an address that reaches only
the host that dials it (a loopback one) is the job's set-up only where the job spans two or more nodes.

The spellings, each its program's own (read in their sources, never copied):

- torch elastic's launch configuration (torch/distributed/launcher/api.py logs `min_nodes        : 2` under
  `Starting elastic_operator with launch configs:`), and torchrun's or DeepSpeed's own argument as a command line
  echoes it (`--nnodes=2`, `--nnodes 2`, `--nnodes=2:4`: an elastic range, of which the least is what the job
  spans at least) or DeepSpeed's launcher logs it (`nnodes=2, num_local_procs=8, node_rank=0`).
- Slurm's environment as a job prints it (`SLURM_NNODES=2`, `SLURM_JOB_NUM_NODES=2`).
- An MPI launcher's host list on its command line (`mpirun -np 4 -H server1:2,server2:2`, `--host a,b`,
  horovodrun's `-H`): the distinct hosts it names.

NCCL's communicator summary says it too (src/init.cc: `comm 0x.. rank 3 nRanks 16 nNodes 2 localRanks 8 ...`), but
in every rank's log: read, it made each rank's line a candidate, 7% of the CPU of a 16k-rank job (bench/shapes.py
shape a) for a count that the launcher's words and the hosts the evidence came from give once. Not read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.base import Draft, LineContext
from firstfault.extract.nccl import split_rank_prefix

# The most nodes a line may say a job spans (a number past it is no count of nodes: a misread, never kept).
MAX_SPAN: Final = 1 << 20

_ELASTIC_MIN = re.compile(r"(?:^|\s)min_nodes\s*:\s*(?P<nodes>\d{1,7})\s*$")
_NNODES_ARG = re.compile(r"(?:(?<![\w-])--nnodes[= ]\s*|\bnnodes=)(?P<nodes>\d{1,7})(?::\d{1,7})?(?![\w.])")
_SLURM_NODES = re.compile(r"\bSLURM_(?:JOB_NUM_NODES|NNODES)=(?P<nodes>\d{1,7})\b")
_MPI_HOSTS = re.compile(r"\b(?:mpirun|mpiexec|horovodrun|orterun)\b[^\n]*?\s(?:-H|-hosts?|--hosts?)[= ]"
                        r"(?P<hosts>[\w.\-]+(?::\d+)?(?:,[\w.\-]+(?::\d+)?)*)")


def _mpi_hosts(listed: str) -> int:
    """The distinct hosts of an MPI launcher's host list (`a:2,b:2`, `a,a,b`)."""
    return len({h.split(":", 1)[0].lower() for h in listed.split(",") if h})


def span_of(body: str) -> tuple[int, str] | None:
    """(nodes, whose words) where the line says how many nodes the job spans; None where it says nothing of it."""
    for rx, by in ((_ELASTIC_MIN, "torchrun"), (_NNODES_ARG, "launcher"),
                   (_SLURM_NODES, "slurm")):
        m = rx.search(body)
        if m is not None:
            n = int(m.group("nodes"))
            return (n, by) if 0 < n <= MAX_SPAN else None
    m = _MPI_HOSTS.search(body)
    return (_mpi_hosts(m.group("hosts")), "mpirun") if m is not None else None


class SpanExtractor:
    """A launcher's or Slurm's word of how many nodes the job spans (see the module's doc)."""

    name = "job.span"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {"job.span": frozenset({"nodes", "by"})}
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = ("min_nodes", "nnodes", "SLURM_NNODES=", "SLURM_JOB_NUM_NODES=",
                                 "mpirun ", "mpiexec ", "horovodrun ", "orterun ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        got = span_of(body)
        if got is not None:
            yield Draft("job.span", {"nodes": got[0], "by": got[1]}, rank=rank)


EXTRACTORS: Final = (SpanExtractor(),)
