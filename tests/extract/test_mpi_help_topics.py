"""MPI libraries' own help texts and selection records (catalog/transport.yaml `help_topics`, `mca_verbose_records`,
and the GPU-support rows of `local_statuses`).

Sources: open-mpi/ompi branches v4.1.x (dadb5bfe) and v5.0.x (b962e8a6), openpmix/prrte main (52d5e4bb); petsc/petsc
src/sys/objects (the `PetscErrorPrintf` lines of its GPU-aware MPI check, 3.14 through main). Lines marked with a
thread are verbatim from that public report; the others marked synthetic follow the source's format string
(opal/util/show_help.c's count line: `%d more process%s sent help message %s / %s`).
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import help_topics, mca_verbose_records
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.extract.unrecognized import ErrorWords
from firstfault.model import Event
from tests.extract import helpers


def setup_of(lines: list[str]) -> list[Event]:
    return [e for e in helpers.events(lines, "application") if e.kind == "nccl.error" and e.fields.get("setup") is True]


def claimed(line: str) -> bool:
    ex = Extraction(all_line_extractors())
    drafts, ctx = ex.drafts(Candidate("application", "app.log", 1, None, None, None, line))
    return bool(drafts) or (ctx is not None and ctx.claimed)


_READ = sorted((k, v.name) for k, v in help_topics().items() if v is not None)
_NONE = sorted(k for k, v in help_topics().items() if v is None)


def _count(file: str, topic: str, n: int = 3) -> str:
    """Synthetic: mpirun's count line as opal/util/show_help.c (and PRRTE's) prints it, behind its `[host:pid]`."""
    many = "es have" if n > 1 else " has"
    return f"[hostname:87478] {n} more process{many} sent help message {file} / {topic}"


@pytest.mark.parametrize(("key", "status"), _READ, ids=[f"{f}/{t}" for (f, t), _ in _READ])
def test_a_count_line_names_its_topics_set_up_where_the_text_is_not_there(key: tuple[str, str], status: str) -> None:
    file, topic = key
    [e] = setup_of([_count(file, topic)])
    assert e.fields["local_status"] == status and e.node is None  # mpirun's line: no node of the process


@pytest.mark.parametrize("key", _NONE, ids=[f"{f}/{t}" for f, t in _NONE])
def test_a_count_line_of_a_warning_the_run_survives_is_understood_and_no_cause(key: tuple[str, str]) -> None:
    # open-mpi/ompi#3244 (verbatim for cuIpcCloseMemHandle): the text says `This is a warning and the program will
    # continue to run.`
    line = _count(*key, n=1)
    assert setup_of([line]) == [] and claimed(line)


@pytest.mark.parametrize(
    "line",
    [
        # a topic of the file that is no row (help-mpi-runtime.txt [mpi_init:warn-fork]: a warning) decides nothing
        "[node1:1234] 1 more process has sent help message help-mpi-runtime.txt / mpi_init:warn-fork",
        # a row's topic with more words after it is another topic
        "[node1:1234] 3 more processes have sent help message help-mpi-runtime.txt / no cuda support at all",
        # a row's file with another's topic
        "[node1:1234] 3 more processes have sent help message help-orterun.txt / no cuda support",
        # the words quoted in prose, no count before them
        "mpirun says it sent help message help-mpi-runtime.txt / no cuda support",
    ],
)
def test_a_count_line_whose_topic_is_no_row_decides_nothing(line: str) -> None:
    assert setup_of([line]) == []


def test_a_count_after_its_text_is_the_same_set_up_once() -> None:
    # conda-forge/openmpi-feedstock#83 (the text, verbatim) and the count line Open MPI prints after it (synthetic)
    lines = ["--------------------------------------------------------------------------",
             "The user requested CUDA support with the --mca mpi_cuda_support 1 flag",
             "but the library was not compiled with any support.",
             "--------------------------------------------------------------------------",
             "[WCS-164320:29456] 1 more process has sent help message help-mpi-runtime.txt / no cuda support"]
    [e] = setup_of(lines)
    assert e.fields["local_status"] == "gpu_support_not_built"


@pytest.mark.parametrize(
    ("lines", "stack", "status"),
    [
        # conda-forge/openmpi-feedstock#83: Open MPI 4.1.0 built without CUDA, asked for it (help-mpi-runtime.txt
        # [no cuda support], wrapped where the file wraps it)
        (["The user requested CUDA support with the --mca mpi_cuda_support 1 flag",
          "but the library was not compiled with any support."], "ompi", "gpu_support_not_built"),
        # ... behind mpirun's --tag-output (synthetic)
        (["[1,3]<stderr>:The user requested CUDA support with the --mca mpi_cuda_support 1 flag but the library was "
          "not compiled with any support."], "ompi", "gpu_support_not_built"),
        # LLNL/smith#1158: PETSc's check behind its own `[rank]PETSC ERROR: ` header
        (["[3]PETSC ERROR: PETSc is configured with GPU support, but your MPI is not GPU-aware. For better "
          "performance, please use a GPU-aware MPI."], "petsc", "gpu_aware_mpi_missing"),
    ],
)
def test_an_mpi_without_the_gpu_support_the_job_asked_for_is_its_set_up(lines: list[str], stack: str,
                                                                        status: str) -> None:
    [e] = setup_of(lines)
    assert (e.fields["stack"], e.fields["local_status"]) == (stack, status)


@pytest.mark.parametrize(
    "line",
    [
        # help-mpi-common-cuda.txt [dlopen failed] (v4.1.x): CUDA-aware support disabled, the run goes on
        "The library attempted to open the following supporting CUDA libraries,",
        # PETSc's advice line after the check, alone: no claim of what the MPI lacks
        "[3]PETSC ERROR: If you do not care, add option -use_gpu_aware_mpi 0. To not see the message again, add the "
        "option to your .petscrc, OR add it to the env var PETSC_OPTIONS.",
        # a user's statement that their PETSc has GPU support (no word of the MPI)
        "PETSc is configured with GPU support, and the solve ran on the device",
    ],
)
def test_words_near_the_gpu_support_checks_are_no_set_up(line: str) -> None:
    assert setup_of([line]) == []


# Each format of `mca_verbose_records` filled in as Open MPI fills it (synthetic), and one verbatim.
_VERBOSE = [
    "mca: base: components_register: component hcoll register function failed",
    "mca: base: components_register: component mxm / mtl register function failed",
    "[node1:04512] mca: base: components_open: component pmix open function failed",
    "mca: base: components_open: component openib / btl open function failed",
    "[node1:04512] mca:base:select:(  pml) Skipping component [ucx]. Query failed to return a module",
    # open-mpi/ompi#13354, verbatim
    "select: init of component smcuda returned failure",
    "[node1:04512] select: init returned failure for component cm",
]


@pytest.mark.parametrize("line", _VERBOSE)
def test_open_mpis_verbose_selection_records_are_known_context(line: str) -> None:
    assert ErrorWords.known(line) and setup_of([line]) == []


@pytest.mark.parametrize(
    "line",
    [
        # the component repository's own failure to load a component (a library missing): an error, not a record
        "mca: base: component_find: unable to open /usr/lib/openmpi/mca_btl_openib: libibverbs.so.1: cannot open "
        "shared object file: No such file or directory (ignored)",
        # a program's own line about an init that failed, no framework record
        "init of component returned failure",
        # the record's words with something after them (another message run into it)
        "select: init of component smcuda returned failure: fatal error in MPI_Init",
    ],
)
def test_lines_like_the_selection_records_are_not_known(line: str) -> None:
    assert mca_verbose_records().search(line) is None and not ErrorWords.known(line)
