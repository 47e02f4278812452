"""first_exit leads for ranks stopped from outside or gone without a word (the lab's shapes).

Lines from the lab's real runs (lab/faults.py sigterm_external, early_exit_clean; tests/lab/captured/)."""

from __future__ import annotations

from typing import Any

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict
from tests.conftest import BundleMaker

API = "torch/distributed/elastic/multiprocessing/api.py"
CLOSED = ("[default{r}]:[rank{r}]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
          "pair.cc:553] Connection closed by peer [127.0.0.1]:158. This is typically caused by a remote worker "
          "crashing. Check the logs of the remote worker before reporting an error.")
TB = ("[default{r}]:2026-12-01 11:55:23,{ms:03d} INFO [rank{r}] train: step 3\n"
      "[default{r}]:[rank{r}]: Traceback (most recent call last):")


def _workload() -> dict[str, Any]:
    return {"apiVersion": "firstfault/v1",
            "workload": {"id": "lab", "scheduler": "static",
                         "window": {"start": "2026-12-01T11:54:00Z", "end": "2026-12-01T11:56:00Z"},
                         "nodes": ["vm"], "ranks": {"vm": "0-2"}, "terminal_state": "FAILED", "timezone": "UTC"},
            "sources": [{"kind": "application", "path": "nodes/{node}/torchrun.log"}]}


def _analyze(make_bundle: BundleMaker, lines: list[str]) -> Verdict:
    root = make_bundle({"nodes/vm/torchrun.log": "".join(x + "\n" for x in lines)}, _workload())
    return Analyzer().analyze_path(str(root))


def _agent(stopped: list[int], failed_pid: int, code: int, local: int) -> list[str]:
    return [*(f"W1201 11:55:23.299000 6732 {API}:1028] Sending process {p} closing signal SIGTERM" for p in stopped),
            f"E1201 11:55:23.657000 6732 {API}:1002] failed (exitcode: {code}) local_rank: {local} (pid: "
            f"{failed_pid}) of binary: /usr/bin/python"]


def test_rank_sigtermed_from_outside_is_the_first_exit(make_bundle: BundleMaker) -> None:
    # the peers fail after the agent saw rank 1 die (their lines stamped after its report)
    lines = [*_agent([7146, 7148], 7147, -15, 1), TB.format(r=0, ms=900), CLOSED.format(r=0),
             TB.format(r=2, ms=900), CLOSED.format(r=2)]
    v = _analyze(make_bundle, lines)
    assert v.attributed_domain == "unknown" and v.affected_nodes == []
    assert [(ld.kind, ld.ranks) for ld in v.leads][:1] == [("first_exit", [1])], v.leads
    assert "SIGTERM" in v.leads[0].summary


def test_the_agents_own_sigterm_names_no_first_exit(make_bundle: BundleMaker) -> None:
    # the agent stopped rank 1 itself (its pid is among those it signalled): collateral, no first exit from it
    lines = [*_agent([7146, 7147, 7148], 7147, -15, 1), TB.format(r=0, ms=900), CLOSED.format(r=0),
             TB.format(r=2, ms=900), CLOSED.format(r=2)]
    v = _analyze(make_bundle, lines)
    assert v.attributed_domain == "unknown"
    assert all("SIGTERM" not in ld.summary for ld in v.leads if ld.kind == "first_exit"), v.leads


def test_the_rank_that_left_silently_while_the_others_lost_it(make_bundle: BundleMaker) -> None:
    lines = ["[default1]:2026-12-01 11:55:20,100 INFO [rank1] train: step 3: done",
             TB.format(r=0, ms=400), CLOSED.format(r=0), TB.format(r=2, ms=400), CLOSED.format(r=2)]
    v = _analyze(make_bundle, lines)
    assert v.attributed_domain == "unknown" and v.affected_nodes == []
    (lead,) = [ld for ld in v.leads if ld.kind == "first_exit"]
    assert lead.ranks == [1] and "left first" in lead.summary


def test_no_silent_rank_when_every_rank_lost_a_peer(make_bundle: BundleMaker) -> None:
    lines = [x for r in range(3) for x in (TB.format(r=r, ms=400), CLOSED.format(r=r))]
    v = _analyze(make_bundle, lines)
    assert not [ld for ld in v.leads if ld.kind == "first_exit"], v.leads


# Real output: Open MPI 4.1.4's mpirun --tag-output, run here, 3 ranks of `sh -c`; one rank kill -9s itself (or
# exits 3) while the others sleep, and mpirun ends the job for it. The others say nothing: they were stopped.
_OMPI_RULE = "-" * 74
_OMPI_ABORT = [_OMPI_RULE, "Primary job  terminated normally, but 1 process returned",
               "a non-zero exit code. Per user-direction, the job has been aborted.", _OMPI_RULE]


def _mpirun(make_bundle: BundleMaker, lines: list[str]) -> Verdict:
    wl = _workload()
    wl["sources"] = [{"kind": "application", "path": "nodes/{node}/mpirun.log"}]
    stamped = [f"[1,{r}]<stdout>:2026-12-01 11:55:2{r},000 INFO step 1 of rank {r}" for r in range(3)]
    root = make_bundle({"nodes/vm/mpirun.log": "".join(x + "\n" for x in [*stamped, *lines])}, wl)
    return Analyzer().analyze_path(str(root))


def test_the_one_exit_mpirun_aborted_the_job_for_is_the_first_exit(make_bundle: BundleMaker) -> None:
    v = _mpirun(make_bundle, [*_OMPI_ABORT, _OMPI_RULE,
                              "mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed).",
                              _OMPI_RULE])
    assert v.attributed_domain == "unknown"
    assert [(ld.kind, ld.ranks, ld.nodes) for ld in v.leads] == [("first_exit", [2], ["vm"])]
    assert "aborted the job" in v.leads[0].summary


def test_an_abort_that_names_no_rank_gives_no_lead(make_bundle: BundleMaker) -> None:
    # the same mpirun when the rank exited 3: its help text is all there is, and names no rank
    assert _mpirun(make_bundle, _OMPI_ABORT).leads == []


def test_an_exit_without_the_launchers_abort_gives_no_lead(make_bundle: BundleMaker) -> None:
    # the rank's death without the launcher's word that it ended the job for it: nothing failed after it
    assert _mpirun(make_bundle, [
        "mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed)."]).leads == []


# Open MPI's help text for a rank that called MPI_Abort (ompi/mpi/help-mpi-api.txt [mpi-abort]), as mpirun 4.1.4
# printed it for the lab's mpirun_abort (tests/lab/captured/mpirun_abort, run here): mpirun then kills every process.
_OMPI_MPI_ABORT = [_OMPI_RULE, "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD",
                   "with errorcode 3.", "",
                   "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
                   "You may or may not see output from other processes, depending on",
                   "exactly when Open MPI kills them.", _OMPI_RULE]


def test_the_rank_that_called_mpi_abort_is_the_first_exit(make_bundle: BundleMaker) -> None:
    v = _mpirun(make_bundle, _OMPI_MPI_ABORT)
    assert v.attributed_domain == "unknown"
    assert [(ld.kind, ld.ranks, ld.nodes) for ld in v.leads] == [("first_exit", [1], ["vm"])]
    assert "aborted the job" in v.leads[0].summary


def test_mpi_aborts_note_alone_gives_no_lead(make_bundle: BundleMaker) -> None:
    # near miss: the note without the line naming the rank (the block cut, as Open MPI's show_help sometimes leaves it)
    assert _mpirun(make_bundle, [_OMPI_RULE, "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
                                 _OMPI_RULE]).leads == []


def test_mpi_aborts_note_quoted_in_a_sentence_gives_no_lead(make_bundle: BundleMaker) -> None:
    # near miss: the rank's line, but the note only quoted inside a person's sentence: no word of the launcher's
    quoted = "the FAQ says: NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes. Then it retries"
    assert _mpirun(make_bundle, ["MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD", quoted]).leads == []


def test_prrtes_two_line_signal_sentence_is_the_same_first_exit(make_bundle: BundleMaker) -> None:
    # Open MPI 5's mpirun prints PRRTE's help text (help-prun.txt [prun:proc-aborted-strsignal]), which breaks the
    # sentence after `exited on` (synthetic, that text over the run above)
    v = _mpirun(make_bundle, [*_OMPI_ABORT, _OMPI_RULE,
                              "prterun noticed that process rank 2 with PID 0 on node vm exited on",
                              "signal 9 (Killed).", _OMPI_RULE])
    assert [(ld.kind, ld.ranks, ld.nodes) for ld in v.leads] == [("first_exit", [2], ["vm"])]



def test_fluxs_shell_on_the_first_task_that_exited_is_the_first_exit(make_bundle: BundleMaker) -> None:
    # the other ranks lost their peer; Flux's doom plugin names the task that exited first (flux-core src/shell/doom.c,
    # as flux-framework/flux-core#7037 prints it; synthetic rank, host and command)
    lines = [x for r in (0, 2) for x in (TB.format(r=r, ms=400), CLOSED.format(r=r))]
    lines.append("flux-shell[0]: FATAL: doom: python: rank 1 on host vm exited and exit-timeout=30s has expired")
    v = _analyze(make_bundle, lines)
    assert [(ld.kind, ld.ranks, ld.nodes) for ld in v.leads] == [("first_exit", [1], ["vm"])]
