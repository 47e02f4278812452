"""The lab's Slurm: the test suite's real single-node Slurm harness, plus memory enforcement.

The harness (tests/harness/slurm_harness.py) configures proctrack/linuxproc,
task/none and jobacct_gather/none, so `--mem` is enforced by nothing there.
The lab's memory faults need a Slurm that enforces it; `start(base, profile)`
starts a fresh harness cluster whose slurm.conf is changed before the daemons
start. Two memory profiles, two real mechanisms with different evidence:

- "cgroup": task/cgroup + proctrack/cgroup with cgroup/v1 and
  ConstrainRAMSpace=yes, the usual production setup: the kernel's memcg OOM
  killer kills the task, slurmstepd reports "Detected 1 oom-kill event(s) in
  StepId=N.0", srun "task 1: Out Of Memory", sacct OUT_OF_MEMORY.
- "jobacct": jobacct_gather/linux with OverMemoryKill (no cgroups): slurmstepd
  polls every task's RSS each second and kills the step over its --mem
  ("StepId=N.0 exceeded memory limit (A > B), being killed"); sacct shows the
  job FAILED and the step "CANCELLED by 0".

A third profile, "admin", keeps the harness's configuration: it is a cluster of its own for the faults
that act on the node or the partition while a job runs (lab/faults.py, lane "slurm-admin"). Two more,
"epilog" and "prolog" (eighth round), give the node a site Epilog or Prolog that fails (`NODE_PROGRAMS`):
slurmctld then drains the node, so each is a cluster of its own for one fault.

"jobacct" and "cgroup" make memory a consumable resource (CR_Core_Memory, 1000M per CPU by
default) and let the node claim 16000M so that a few jobs run at once. Only one
"cgroup" cluster may run at a time on a host: cgroup paths are named after the
node (slurm_ffnode1).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.harness import slurm_harness as harness  # noqa: E402
from tests.harness.slurm_harness import SlurmCluster  # noqa: E402

COMMON = {
    "SelectTypeParameters": "CR_Core_Memory",
    "DefMemPerCPU": "1000",
}
PROFILES: dict[str, dict[str, str]] = {
    "jobacct": {
        **COMMON,
        "JobAcctGatherType": "jobacct_gather/linux",
        "JobAcctGatherParams": "OverMemoryKill",
        "JobAcctGatherFrequency": "task=1",
    },
    # the harness's own configuration, in a cluster of its own: its faults set the node DOWN or DRAIN, set the
    # partition DOWN or requeue the job, which must not touch the jobs of other faults
    "admin": {},
    # eighth round: the site's node-side programs, each failing on the node (a cluster of its own: slurmctld drains
    # the node). The scripts are written beside slurm.conf (`NODE_PROGRAMS`); {base} is the cluster's directory
    "epilog": {"Epilog": "{base}/epilog.sh"},
    "prolog": {"Prolog": "{base}/prolog.sh"},
    "cgroup": {
        **COMMON,
        "TaskPlugin": "task/cgroup",
        "ProctrackType": "proctrack/cgroup",
        "JobAcctGatherType": "jobacct_gather/cgroup",
    },
}
CGROUP_CONF = """\
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedSwapSpace=0
"""
NODE_MEMORY = "RealMemory=16000"
# the site's Prolog and Epilog of the "prolog" and "epilog" profiles, as a site's health check and clean-up fail:
# slurmd runs them as root on the node, their output goes nowhere the job sees
NODE_PROGRAMS = {
    "epilog": ("epilog.sh", "#!/bin/sh\n# the site's clean-up: unmount the job's scratch space\n"
                            "umount /local/scratch/job.$SLURM_JOB_ID\n"),
    "prolog": ("prolog.sh", "#!/bin/sh\n# the site's health check: the node's scratch file system must be there\n"
                            "mountpoint -q /local/scratch || { echo \"prolog: /local/scratch is not mounted\" >&2; "
                            "exit 1; }\n"),
}


def patch_conf(text: str, profile: str, base: Path | None = None) -> str:
    for key, value in PROFILES[profile].items():
        line = f"{key}={value.format(base=base) if base else value}"
        if re.search(rf"^{key}=", text, flags=re.M):
            text = re.sub(rf"^{key}=.*$", line, text, flags=re.M)
        else:
            text = text.replace("\nNodeName=", f"\n{line}\nNodeName=", 1)
    return re.sub(r"(?m)^(NodeName=.*?)RealMemory=\d+", rf"\g<1>{NODE_MEMORY}", text)


def cgroup_available() -> bool:
    return Path("/sys/fs/cgroup/memory/memory.limit_in_bytes").is_file() and Path("/sys/fs/cgroup/freezer").is_dir()


def start(base: Path, profile: str = "jobacct") -> SlurmCluster:
    """A fresh harness cluster whose slurm.conf carries the profile's settings from the start."""
    original = harness._configure

    def configure(c: SlurmCluster) -> None:
        original(c)
        c.conf.write_text(patch_conf(c.conf.read_text(), profile, c.base))
        if profile in NODE_PROGRAMS:
            name, body = NODE_PROGRAMS[profile]
            (c.base / name).write_text(body)
            (c.base / name).chmod(0o755)
        if profile == "cgroup":
            (c.base / "cgroup.conf").write_text(CGROUP_CONF)

    with mock.patch.object(harness, "_configure", configure):
        return harness.start_slurm(base)
