"""The launcher-prefix layer: what launchers and collectors put in front of a line.

One process's line reaches a log through several writers, each of which may
prepend its own tag, and they stack:

    2026-11-02T10:03:07.123Z stderr F [1,2]<stderr>:[rank2]: Traceback ...
    worker-3: [default1]:ValueError: bad shape

| layer | example | yields |
|---|---|---|
| container runtime (CRI, docker, `kubectl logs --timestamps`) | `2026-11-02T10:03:07.123456789Z stderr F ` | - |
| mpirun `--tag-output` | `[1,2]<stderr>:` | rank 2 |
| PyTorch rank prefix (`TORCH_...`, >= 2.2) | `[rank2]:` | rank 2 |
| torchrun `--tee` / `--redirects` | `[default1]:` | local rank 1 (a stream of its own) |
| pdsh / DeepSpeed multi-node runner | `worker-3: ` | host worker-3 |

The scanner strips the layers once per candidate line, before any extractor
sees it, so every extractor reads the line as its process wrote it, and the
multi-line records (tracebacks, torchrun summaries) of interleaved processes
stay apart: their per-stream state is keyed by what the layers name.

A host tag is only taken for a word that names a node of the allocation, or
that looks like a host name (it has a digit, or a dot and no capital)
and not like anything a program prints before a colon (an exception class,
a log level, a logger or a program name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from firstfault.hostlist import NodeNames

# The container runtime's stamp: RFC 3339 with a `T`, then CRI's stream and tag.
_RUNTIME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+(?:(?:stdout|stderr)\s+[FP]\s+)?"
)
_MPI = re.compile(r"\[\d+,(?P<rank>\d+)\]<std(?:out|err)>:\s?")
_RANK = re.compile(r"\[rank(?P<rank>\d+)\]:\s?")
_TEE = re.compile(r"\[(?P<name>[A-Za-z_][\w\-]*?)(?P<local>\d+)\]:\s?")
_HOST = re.compile(r"(?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]{0,252}):\s")
_BRACKET_HOST = re.compile(r"\[(?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]{0,252})\]:?\s")
_RANK_WORD = re.compile(r"rank(?P<rank>\d+)")

# Words a program itself prints before `: ` that are never host names.
_NOT_HOSTS: Final = frozenset(
    w.lower() for w in (
        "INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL", "FATAL", "NOTICE", "TRACE", "Note",
        "Traceback", "File", "kernel", "slurmstepd", "srun", "sbatch", "salloc", "mpirun", "torchrun",
        "python", "python3", "bash", "sh", "NCCL", "pdsh", "deepspeed", "Error", "Exception", "what",
        "Warning", "Message", "Reason", "Hint", "Root Cause", "Failures", "ncclUnhandledCudaError",
    )
)
_EXC_TAIL: Final = ("error", "exception", "warning", "exit", "interrupt", "failure", "fault", "timeout")
MAX_LAYERS: Final = 6


@dataclass(slots=True, frozen=True)
class Prefixed:
    """A line with its launcher layers taken off."""

    body: str
    host: str | None = None  # named by a pdsh / DeepSpeed tag
    rank: int | None = None  # global rank, named by mpirun or PyTorch
    local: int | None = None  # torchrun's local rank tag

    @property
    def stream(self) -> tuple[str | None, int | None]:
        return (self.host.lower() if self.host else None, self.local)


def _looks_like_host(word: str, hosts: NodeNames) -> bool:
    if word in hosts:
        return True
    low = word.lower()
    if low in _NOT_HOSTS or low.endswith(_EXC_TAIL) or word.isdigit():
        return False
    if any(c.isdigit() for c in word):
        # `worker-3`, `node001`, `ip-10-0-0-1`, `10.0.0.7`; not `cuda:0`-like words (no colon here).
        return not word.isupper()
    # `login.example.org`: dotted, lower-case; Python loggers (`torch.distributed.run`) hold no digit
    # but are dotted too, so only dotted names whose parts look like DNS labels with a hyphen count.
    return "." in word and word == low and "-" in word


class PrefixLayer:
    """Strips the layers of one line; `hosts` are the allocation's node names."""

    def __init__(self, hosts: Iterable[str] = ()) -> None:
        self.hosts = NodeNames(hosts)

    def split(self, line: str) -> Prefixed:
        body = line.lstrip()
        host: str | None = None
        rank: int | None = None
        local: int | None = None
        for _ in range(MAX_LAYERS):
            c = body[:1]
            if not c:
                break
            if c == "[":
                m = _MPI.match(body)
                if m:
                    rank = int(m.group("rank"))
                    body = body[m.end():]
                    continue
                m = _RANK.match(body)
                if m:
                    rank = int(m.group("rank"))
                    body = body[m.end():]
                    continue
                m = _TEE.match(body)
                if m and m.group("name").lower() not in ("e", "w", "i", "f"):
                    local = int(m.group("local"))
                    body = body[m.end():]
                    continue
                m = _BRACKET_HOST.match(body)
                if m and host is None and m.group("host").lower() in self.hosts:
                    host = m.group("host")
                    body = body[m.end():]
                    continue
                break
            if c.isdigit():
                m = _RUNTIME.match(body)
                if m and m.end() < len(body):
                    body = body[m.end():]
                    continue
            m = _HOST.match(body)
            if m and host is None:
                word = m.group("host")
                rw = _RANK_WORD.fullmatch(word)
                if rw:
                    rank = int(rw.group("rank"))
                    body = body[m.end():]
                    continue
                if _looks_like_host(word, self.hosts):
                    host = word
                    body = body[m.end():]
                    continue
            break
        return Prefixed(body, host, rank, local)


_DEFAULT = PrefixLayer()


def split_prefixes(line: str) -> Prefixed:
    """The layers of a line when the allocation is not known (tests, tools)."""
    return _DEFAULT.split(line)
