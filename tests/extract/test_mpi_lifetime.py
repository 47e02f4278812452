"""An MPI call the program made outside the library's lifetime (before MPI_Init, after MPI_Finalize), refused in the
MPI library's own words (catalog/exceptions.yaml, the row after DDP's reducer): the program's own exception, read
in a line of its own.

Lines are verbatim from the public threads cited next to them unless marked `synthetic`.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker
from tests.extract import helpers


def _kinds(lines: list[str]) -> list[str]:
    return [e.kind for e in helpers.events(lines) if e.kind.startswith(("app.", "nccl."))]


@pytest.mark.parametrize("line", [
    # LLNL/lbann#717 (MVAPICH2 2.3rc2, MPICH's error handler): Elemental's exit handlers after LBANN finalized MPI
    "Attempting to use an MPI routine after finalizing MPICH",
    # MPICH 3.3 and later, the routine named (src/mpi/errhan/errutil.c; synthetic)
    "Attempting to use an MPI routine (internal_Comm_rank) before initializing or after finalizing MPICH",
    # Open MPI's (synthetic, its form)
    "*** The MPI_Comm_rank() function was called after MPI_FINALIZE was invoked.",
])
def test_an_mpi_call_outside_the_librarys_lifetime_is_the_programs_exception(line: str) -> None:
    assert _kinds([line]) == ["app.exception"]


def test_lbanns_end_is_its_own_exception(make_bundle: BundleMaker) -> None:
    # LLNL/lbann#717's srun output as posted: the two tasks' lines, then srun's report of their exit
    text = "".join(s + "\n" for s in [
        "Warning: MPI was finalized before Elemental.", "Warning: MPI was finalized before Elemental.",
        "Attempting to use an MPI routine after finalizing MPICH",
        "Attempting to use an MPI routine after finalizing MPICH",
        "srun: error: pascal10: tasks 0-1: Exited with exit code 1"])
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text})))
    assert (v.attributed_domain, v.root_cause.category if v.root_cause else None) == ("software", "app.exception")


@pytest.mark.parametrize("line", [
    # LLNL/lbann#717: Elemental's own warning before it, which the run survives
    "Warning: MPI was finalized before Elemental.",
    # Open MPI's help text on the rule (its help-mpi-api.txt), no refusal of a call
    "Calling any MPI-function after calling MPI_Finalize is erroneous.",
    # MPI_Finalized's manual (synthetic after Open MPI's man page): a routine that may be called after it
    "MPI_Finalized - Checks whether MPI has been finalized",
])
def test_near_miss_mpi_lifetime_words_that_refuse_no_call(line: str) -> None:
    assert _kinds([line]) == []
