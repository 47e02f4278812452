"""A launch agent's failure (docs/verdict.md, "A launch agent's failure"), through the embedded engine on small
bundles: the remote shell's word that a host of the launch does not exist (catalog/transport.yaml `local_statuses`
`remote_host_unknown`, read by extract/verbs.py, kept by engine/normalise.py `unknown_hosts` only for a host outside
the job's known allocation), and DeepSpeed's passwordless-ssh check in the list spelling of its CalledProcessError.

Provenance: ssh's line is OpenSSH's ssh.c resolve_host format (`%s: Could not resolve hostname %.100s: %s`, the
strings of OpenSSH 9.2p1 here) with glibc's gai_strerror words; ORTE's box is Open MPI 4.1.4's help-errmgr-base.txt
[failed-daemon-launch] as the failure lab's mpirun_host_unresolvable printed it (tests/lab/captured); the older ORTE's
is help-plm-base.txt [daemon-died-no-signal]; Hydra's is MPICH's
tools/bootstrap/src/bsci_wait.c HYDU_ERR_POP as posted on the MPICH and Open MPI lists; the DeepSpeed lines are the
lab's deepspeed_host_unresolvable (DeepSpeed 0.19.8). Host names are ours. The near misses: volcano-sh/volcano#2745's
EAI_AGAIN line, volcano-sh/volcano#968's password prompts, curl's `Could not resolve host: ` (lib/url.c), ours."""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict

ORTE_BOX = [
    "-" * 74,
    "ORTE was unable to reliably start one or more daemons.",
    "This usually is caused by:",
    "",
    "* not finding the required libraries and/or binaries on",
    "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH",
    "  settings, or configure OMPI with --enable-orterun-prefix-by-default",
    "-" * 74,
]


def bundle(tmp: Path, lines: list[str], nodes: tuple[str, ...] | None = ("vm",)) -> Verdict:
    (tmp / "logs").mkdir(parents=True, exist_ok=True)
    (tmp / "logs" / "launch.log").write_text("\n".join(lines) + "\n")
    listed = "" if nodes is None else f"  nodes: [{', '.join(nodes)}]\n"
    (tmp / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n"
        "  window: {start: '2026-12-03T15:00:00Z', end: '2026-12-03T16:30:00Z'}\n"
        f"{listed}  terminal_state: FAILED\n  timezone: UTC\n"
        "sources:\n  - {kind: application, path: 'logs/launch.log'}\n")
    return Analyzer().analyze_path(str(tmp))


def category(v: Verdict) -> str | None:
    return None if v.root_cause is None else v.root_cause.category


@pytest.mark.parametrize(
    "lines",
    [
        # mpirun --hostfile naming a host that does not exist (the failure lab's mpirun_host_unresolvable)
        ["ssh: Could not resolve hostname trainer-07: Name or service not known", *ORTE_BOX],
        # glibc's EAI_NODATA, and the BSDs' and macOS's EAI_NONAME
        ["ssh: Could not resolve hostname gpu-17: No address associated with hostname", *ORTE_BOX],
        ["ssh: Could not resolve hostname gpu-17: nodename nor servname provided, or not known", *ORTE_BOX],
        # Open MPI 1.x-3: ssh's exit status in plm-base's [daemon-died-no-signal]
        ["ssh: Could not resolve hostname gpu-17: Name or service not known",
         "A daemon died unexpectedly with status 255 while attempting", "to launch so we are aborting."],
        # MPICH's Hydra over ssh
        ["ssh: Could not resolve hostname gpu-17: Name or service not known",
         "[mpiexec@vm] HYDT_bsci_wait_for_completion (tools/bootstrap/src/bsci_wait.c:23): launcher returned error "
         "waiting for completion"],
    ],
)
def test_a_host_list_naming_a_host_that_does_not_exist_is_the_jobs_setup(tmp_path: Path, lines: list[str]) -> None:
    v = bundle(tmp_path, lines)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("app.exception.setup", ["vm"])
    assert "Could not resolve hostname" in v.root_cause.summary


@pytest.mark.parametrize(
    ("lines", "nodes"),
    [
        # EAI_AGAIN: the resolver did not answer, nothing said of the name (volcano-sh/volcano#2745's line)
        (["ssh: Could not resolve hostname horovod-volcano-w1-0: Temporary failure in name resolution", *ORTE_BOX],
         ("vm",)),
        # ssh's word alone: no launcher gave up on it (a shell's own ssh, a retried one)
        (["ssh: Could not resolve hostname trainer-07: Name or service not known"], ("vm",)),
        # the host is one of the job's own nodes (its short name): a record not there yet reads alike
        (["ssh: Could not resolve hostname gpu-02: Name or service not known", *ORTE_BOX],
         ("gpu-01.cluster.local", "gpu-02.cluster.local")),
        # no allocation known: nothing tells a host the job was not given
        (["ssh: Could not resolve hostname trainer-07: Name or service not known", *ORTE_BOX], None),
        # the launcher's give-up alone (the failure lab's mpirun_rsh_agent_failed): it names no cause
        (ORTE_BOX, ("vm",)),
        # the give-up too far below ssh's word to be its
        (["ssh: Could not resolve hostname trainer-07: Name or service not known",
          *[f"step {i} loss 0.5" for i in range(40)], *ORTE_BOX], ("vm",)),
        # curl's word for a host it could not resolve, then a launcher's give-up: not ssh's line
        (["curl: (6) Could not resolve host: trainer-07", *ORTE_BOX], ("vm",)),
        # password prompts refused (volcano-sh/volcano#968: the scheduler's ssh plugin left no key): no set-up
        (["root@lm-mpi-job-mpiworker-0.lm-mpi-job's password: Permission denied, please try again.",
          "root@lm-mpi-job-mpiworker-1.lm-mpi-job's password: ", "Permission denied, please try again.", *ORTE_BOX],
         ("vm",)),
    ],
)
def test_an_agent_failing_for_a_reason_not_established_is_no_setup(
        tmp_path: Path, lines: list[str], nodes: tuple[str, ...] | None) -> None:
    assert category(bundle(tmp_path, lines, nodes)) != "app.exception.setup"


DS_CALLED = ("subprocess.CalledProcessError: Command '['ssh', '-o', 'PasswordAuthentication=no', {host}'trainer-07"
             ".invalid', 'hostname']' returned non-zero exit status {status}.")


@pytest.mark.parametrize("port", ["", "'-p', '2222', "])
def test_deepspeeds_ssh_check_in_its_list_spelling_is_the_jobs_setup(tmp_path: Path, port: str) -> None:
    lines = ["Traceback (most recent call last):",
             '  File "/usr/lib/python3.11/subprocess.py", line 413, in check_call',
             "    raise CalledProcessError(retcode, cmd)",
             DS_CALLED.format(host=port, status=255)]
    assert category(bundle(tmp_path, lines)) == "app.exception.setup"


def test_deepspeeds_ssh_check_command_that_ran_and_failed_is_no_setup(tmp_path: Path) -> None:
    # exit 1: ssh logged in and `hostname` failed there, not ssh's own failure (255)
    lines = ["Traceback (most recent call last):",
             '  File "/usr/lib/python3.11/subprocess.py", line 413, in check_call',
             "    raise CalledProcessError(retcode, cmd)",
             DS_CALLED.format(host="", status=1)]
    assert category(bundle(tmp_path, lines)) != "app.exception.setup"
