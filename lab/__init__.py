"""The failure lab: real multi-process PyTorch jobs (gloo, CPU) with one injected fault each.

Each run is launched for real (bare torchrun, or sbatch + srun on a real Slurm),
what the software wrote is captured into an evidence bundle, and the bundle's
expected.yaml is written from the fault's definition before the job starts,
never from firstfault's answer. `python -m lab run` writes bundles,
`python -m lab check` compares firstfault's verdicts with them.
"""

from lab.faults import FAULTS, Fault

__all__ = ["FAULTS", "Fault"]
