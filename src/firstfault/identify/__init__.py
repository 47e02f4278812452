"""Attempt sources (the Blueprint's identify step): where a workload attempt is found.

Each turns a reference (a Slurm job id, a Kueue Workload 'namespace/name', or
nothing for a static window) into an Identified: the attempt's WorkloadSpec,
the scheduler documents read on the way, links and an owner. An unknown
workload or an unreachable scheduler raises IdentifyError with the reason.

The connectors are resolved on first use: importing `identify.slurm` (every
Slurm `watch` and `run` does) must not import the Kubernetes client, which
`identify.kueue` needs and which costs seconds to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firstfault.identify.kueue import KueueAttempts
    from firstfault.identify.slurm import SlurmAttempts
    from firstfault.identify.static import StaticAttempts

_WHERE = {"KueueAttempts": "kueue", "SlurmAttempts": "slurm", "StaticAttempts": "static"}

__all__ = ["KueueAttempts", "SlurmAttempts", "StaticAttempts"]


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value
