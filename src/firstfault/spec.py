"""The verdict contract's tables (docs/verdict.md), in one place.

- CATEGORY_DOMAINS: the root-cause category families and the domain each
  belongs to; the catalog validator `spec-domain` holds every cause rule to it.
- STATE_OUTCOMES: a scheduler's terminal state (Slurm's upper-case form, and
  Kubernetes' OOMKilled / Succeeded) -> the verdict's `outcome`.
- NOT_FAILED: the outcomes for which nothing is attributed (domain `none`).
- PROVISIONAL_AT_ONCE / PROVISIONAL_CONFIRM: which causes a provisional verdict
  (an attempt that still runs) may name, and what the others need first.
- category_matches: whether a category pattern (`nccl.*`, `gpu.memory`) covers a
  category; rules, recovery policies and followers' expectations all name
  categories so.
"""

from __future__ import annotations

from typing import Final, get_args

from firstfault.model import CAUSE_DOMAINS, Outcome

__all__ = ["CATEGORY_DOMAINS", "NOT_FAILED", "PROVISIONAL_AT_ONCE", "PROVISIONAL_CONFIRM", "STATE_OUTCOMES",
           "category_matches", "is_failure", "outcome_of"]

# A cause category must sit under one of these prefixes with the domain given here.
CATEGORY_DOMAINS: Final[dict[str, str]] = {
    "gpu.fallen_off_bus": "hardware",
    "gpu.memory": "hardware",
    "gpu.nvlink": "hardware",
    "gpu.nvswitch": "hardware",
    "gpu.firmware": "hardware",
    "gpu.pcie": "hardware",
    "gpu.thermal": "hardware",
    "host.hardware": "hardware",
    "network.link": "network",
    "network.transport": "network",
    "network.fabric": "network",
    "app": "software",
    "host.oom": "software",
    "storage": "storage",
    "node": "infrastructure",
    "scheduler": "scheduler",
}

STATE_OUTCOMES: Final[dict[str, str]] = {
    "COMPLETED": "succeeded",
    "SUCCEEDED": "succeeded",
    "FAILED": "failed",
    "BOOT_FAIL": "failed",
    "DEADLINE": "timeout",
    "TIMEOUT": "timeout",
    "CANCELLED": "cancelled",
    "PREEMPTED": "preempted",
    "NODE_FAIL": "node_fail",
    "OUT_OF_MEMORY": "out_of_memory",
    "OOMKILLED": "out_of_memory",
    "RUNNING": "running",
    "PENDING": "running",
    "REQUEUED": "running",
    "RESIZING": "running",
    "SUSPENDED": "running",
    "COMPLETING": "running",
}

NOT_FAILED: Final = frozenset({"succeeded", "running"})

# Provisional verdicts (docs/verdict.md): while an attempt runs, a cause that a strong rule of one of these
# domains established stands at once: the device, link or node is broken whatever the workload does next.
PROVISIONAL_AT_ONCE: Final = frozenset({"hardware", "network", "infrastructure"})
# Any other cause (software, storage, or a weak rule's) stands only once it explains a symptom of one of these
# families: the launcher gave up on the workers, or a collective timed out. A caught exception logged with its
# traceback, a worker group that torchrun restarts, a thermal slowdown are not yet a failure of the attempt.
# Scheduler causes never stand while the attempt runs.
PROVISIONAL_CONFIRM: Final = ("torch.child_failed", "nccl.timeout")

assert set(CATEGORY_DOMAINS.values()) <= set(CAUSE_DOMAINS)
assert set(STATE_OUTCOMES.values()) | NOT_FAILED <= set(get_args(Outcome))


def outcome_of(state: str | None) -> str:
    """The verdict outcome of a terminal state ("CANCELLED by 0" -> cancelled); `unknown` if none fits."""
    if not state:
        return "unknown"
    return STATE_OUTCOMES.get(state.split()[0].upper(), "unknown")


def is_failure(outcome: str) -> bool:
    return outcome not in NOT_FAILED


def ended_in_failure(state: str | None) -> bool:
    """Does the terminal state say the attempt failed (not: succeeded, or its end not recorded)?"""
    outcome = outcome_of(state)
    return outcome != "unknown" and is_failure(outcome)


def category_matches(pattern: str, category: str) -> bool:
    """`nccl.*` and `nccl` both cover `nccl.timeout`; `app.cuda_oom` covers itself."""
    base = pattern[:-2] if pattern.endswith(".*") else pattern
    return category == base or category.startswith(base + ".")
