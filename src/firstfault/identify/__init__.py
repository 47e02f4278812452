"""Execution-context connectors (the Blueprint's identify step).

Each turns a reference (a Slurm job id, a Kueue Workload 'namespace/name', or
nothing for a static window) into an Identified: the attempt's WorkloadSpec,
the scheduler documents read on the way, links and an owner. An unknown
workload or an unreachable scheduler raises ContextError with the reason.
"""

from __future__ import annotations

from firstfault.identify.kueue import KueueContext
from firstfault.identify.slurm import SlurmContext
from firstfault.identify.static import StaticContext

__all__ = ["KueueContext", "SlurmContext", "StaticContext"]
