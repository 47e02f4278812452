"""A tool's output pasted with the command above it (extract/structured.py `command_line`, `outputs`), as every
structured reader takes it: the prompt and the command are no output, several outputs share a file.

The command lines are as people posted them (each names its thread); the readers' tests with whole records are in
test_batch.py, test_scheduler.py and test_kubetext.py.
"""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from firstfault.extract.scheduler import read_scheduler
from firstfault.extract.structured import command_line, outputs

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "scheduler"


@pytest.mark.parametrize(("line", "command"), [
    # StatFunGen/xqtl-protocol#571: bash's `user@host:dir$`
    ("hs3163@csglogin:/mnt/vast/hpc/csg/cl4215/ROSMAP/knight/output/test$ qacct -j 5473097", "qacct -j 5473097"),
    # PacificBiosciences/SMRT-Analysis#213: `user@host dir $`
    ("gdval@head2 /gpfs1/smrtanalysis/userdata/jobs/016/016537/log $ qacct -j 24930", "qacct -j 24930"),
    # hbs-rcs/hbsgrid-docs (tests/fixtures/scheduler/bhist-l-hbs-memlimit.txt): `[user@host:dir]$`
    ("[jharvard@rhrcscli01:~]$ bhist -a –l", "bhist -a –l"),
    # flux-framework/flux-core#6892: two spaces after the prompt
    ("[garlick@fluke2:t]$  flux run -N1 /g/g0/garlick/nosuchcommand", "flux run -N1 /g/g0/garlick/nosuchcommand"),
    # openpbs/openpbs#1183; nauhpc/jobstats#14 (a space before the bracket closes)
    ("[saritah@nx15 jobs]$ qstat -s", "qstat -s"),
    ("[zzz@wind ~ ]$ sacct -j 20459692 -o reqmem,maxrss", "sacct -j 20459692 -o reqmem,maxrss"),
    # nebius/soperator#321: root's prompt that shows the directory alone
    ("~# sacct --format=JobID,JobName,AllocCPUS,MaxRSS,MaxVMSize,TotalCPU,State",
     "sacct --format=JobID,JobName,AllocCPUS,MaxRSS,MaxVMSize,TotalCPU,State"),
    # marbl/canu#1279: a lone `$`
    ("$ qacct -j 3192235", "qacct -j 3192235"),
    # kubeflow/trainer#301 (tests/wild/sw-k8s-evicted-node-memory-tfjob): a quote's `>` before a tool's command
    ("> kubectl describe pod -n rl agents-ppo-ant-feedforward-93168c9e-master-3ti2-0-9st9r",
     "kubectl describe pod -n rl agents-ppo-ant-feedforward-93168c9e-master-3ti2-0-9st9r"),
    # PennLINC/babs (tests/fixtures/scheduler/qacct-h_rt-babs.txt): the command without a prompt
    ("qacct -j 9638568 -u rbc", "qacct -j 9638568 -u rbc"),
])
def test_a_command_line_is_read_without_its_prompt(line: str, command: str) -> None:
    assert command_line(line) == command


@pytest.mark.parametrize("line", [
    # Lines of the tools' own output that start alike (tests/fixtures/scheduler/), and comments and quotes.
    "qstat: Unknown Job Id 7082041.hal-sched1.local",
    "owner        hs3163",
    "Job: 7537771.pbs02",
    "flux-shell[0]: FATAL: task 0: start failed: stress: No such file or directory",
    "    kubectl.kubernetes.io/last-applied-configuration: {}",
    "# the nodes of the second rack",
    "> the job was requeued twice",
    "11/06/2019 14:54:53  S    Job Rerun at request of Scheduler@pbs02.palmetto.clemson.edu",
    "  Type             Status    LastHeartbeatTime                 LastTransitionTime",
])
def test_a_line_of_output_is_no_command(line: str) -> None:
    assert command_line(line) is None


def test_outputs_split_a_file_at_its_command_lines() -> None:
    text = "\n".join(["❯ flux job info ƒNNzkJm7 R", '{"version": 1}', "", "❯ flux job info ƒNNzkJm7 eventlog",
                      '{"timestamp":1611769317.9,"name":"submit"}', "hs3163@csglogin:~$"])
    got = [(o.command, o.line, [n for n, _ in o.lines]) for o in outputs(text)]
    assert got == [("flux job info ƒNNzkJm7 R", 1, [2, 3]), ("flux job info ƒNNzkJm7 eventlog", 4, [5]),
                   ("", 6, [])]
    # A file without a command line is one output, numbered from 1.
    assert [(o.command, [n for n, _ in o.lines]) for o in outputs("a\nb")] == [(None, [1, 2])]


def test_sacct_pasted_with_its_prompt_and_command() -> None:
    # nebius/soperator#321 (https://github.com/nebius/soperator/pull/321), its description: `~# sacct
    # --format=...` and the fixed-width table under it. The command line holds `JobID` too; it is no header.
    raw = (FIX / "sacct-prompt-soperator-321.txt").read_bytes()
    res = read_scheduler(raw, "sacct", "sacct.txt", job_id=None, tz=UTC)
    assert res.issues == []
    got = [(e.fields["job_id"], e.fields.get("step"), e.fields["state"], e.evidence.line) for e in res.events]
    assert got[:3] == [("19", "0", "COMPLETED", 4), ("20", None, "FAILED", 5), ("20", "0", "FAILED", 6)]
    assert len(got) == 7
