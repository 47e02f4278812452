"""A stop signal the torchrun agent did not send came from outside (extract/torchrun.py `unprompted`).

Lines from the lab's own real runs (lab/faults.py sigterm_external, tests/lab/captured/): the agent
SIGTERMs the survivors, then reports the rank that had been SIGTERMed from outside."""

from __future__ import annotations

from firstfault.extract import torchrun
from tests.extract.helpers import scan

TORCHRUN = torchrun.TorchrunExtractor()
API = "torch/distributed/elastic/multiprocessing/api.py"
SENT = [
    f"W1201 11:55:23.299000 6732 {API}:1028] Sending process 7146 closing signal SIGTERM",
    f"W1201 11:55:23.300000 6732 {API}:1028] Sending process 7148 closing signal SIGTERM",
]


def _failed(code: int, local: int, pid: int) -> str:
    return (f"E1201 11:55:23.657000 6732 {API}:1002] failed (exitcode: {code}) local_rank: {local} (pid: {pid}) "
            "of binary: /work/main/.venv/bin/python")


def _summary(rank: int, code: int, pid: int) -> list[str]:
    return ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "Failures:",
            "  host      : vm", f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : {code} (pid: {pid})"]


def test_a_sigterm_the_agent_never_sent_is_unprompted() -> None:
    drafts = scan(TORCHRUN, [*SENT, _failed(-15, 1, 7147), *_summary(1, -15, 7147)], source="application")
    failed = [d for d in drafts if d.kind == "process.signal" and d.fields.get("local_rank") == 1]
    assert len(failed) == 1 and failed[0].fields.get("unprompted") is True
    (child,) = [d for d in drafts if d.kind == "torch.child_failed"]
    assert child.fields.get("signal") == "SIGTERM" and child.fields.get("unprompted") is True


def test_the_agents_own_sigterm_is_not_unprompted() -> None:
    drafts = scan(TORCHRUN, [*SENT, _failed(-15, 0, 7146), *_summary(0, -15, 7146)], source="application")
    assert drafts and all("unprompted" not in d.fields for d in drafts)


def test_only_stop_signals_are_marked() -> None:
    # a SIGKILL or SIGSEGV the agent never sends is an exit anyway; the mark is for SIGTERM / SIGINT only
    drafts = scan(TORCHRUN, [*SENT, _failed(-9, 1, 7147), *_summary(1, -11, 7147)], source="application")
    assert drafts and all("unprompted" not in d.fields for d in drafts)


def test_sigint_from_outside_is_unprompted() -> None:
    drafts = scan(TORCHRUN, [*SENT, *_summary(1, -2, 7147)], source="application")
    (child,) = [d for d in drafts if d.kind == "torch.child_failed"]
    assert child.fields.get("signal") == "SIGINT" and child.fields.get("unprompted") is True
