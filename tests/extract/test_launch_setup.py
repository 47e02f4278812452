"""A launch the job set up so that its launcher could not start it: Slurm refusing a step's GRES the job's allocation
does not hold (catalog/slurm.yaml `messages`), Open MPI's mpirun finding no srun to start its daemons under Slurm
(catalog/transport.yaml `local_statuses`, stack ompi), srun refusing the MPI plugin type the job's `--mpi=` names
(catalog/slurm.yaml `messages`). The job's own set-up, each with a near miss.

Provenance: the srun line is skypilot-org/skypilot#10522 (Slurm 21.08-23.02's src/common/gres.c _validate_step_counts,
`Step requested GRES (%s:%s) not found in the job`); the Open MPI help text is hpc/charliecloud#1010 (Open MPI's
orte/mca/plm/slurm help-plm-slurm.txt, as plm_slurm_module.c prints it); the `--mpi` lines are geoschem/geos-chem#822
(srun's LONG_OPT_MPI case, src/srun/libsrun/opt.c and src/common/slurm_opt.c; `fatal` before 17.11, src/srun/opt.c).
The near misses are ours."""

from __future__ import annotations

from firstfault.model import Event
from tests.extract import helpers


def _setups(lines: list[str]) -> list[tuple[str, object]]:
    events: list[Event] = helpers.events(lines, "application", file="slurm-77.out")
    return [(e.kind, e.fields.get("local_status")) for e in events if e.fields.get("setup") or e.kind == "sched.error"]


def test_a_step_asking_for_gres_the_job_does_not_hold() -> None:
    # Slurm's `job` side: the job's own request, app.exception with setup (extract/slurmerr.py)
    assert _setups(["srun: error: Step requested GRES (gpu:(null)) not found in the job"]) == [
        ("app.exception", None)]
    assert _setups(["srun: error: Step requested GRES (gpu:a100) not found in the job"]) == [("app.exception", None)]


def test_near_miss_the_gres_words_outside_an_error() -> None:
    # the same words in a step's debug record or the job's own echo are no error of Slurm's
    assert _setups(["srun: debug:  Step requested GRES (gpu:(null)) not found in the job"]) == []
    assert _setups(["# if you see 'Step requested GRES (gpu) not found in the job', drop --gpus-per-node"]) == []


# geoschem/geos-chem#822: GCHP's sample script's `srun --mpi=pmix` on a Slurm built without the PMIx plugin
MPI_TYPE = [
    "srun: error: Couldn't find the specified plugin name for mpi/pmix looking at all files",
    "srun: error: cannot find mpi plugin for mpi/pmix",
    "srun: error: cannot create mpi context for mpi/pmix",
    'srun: error: "--mpi=pmix" -- long invalid MPI type, --mpi=list for acceptable types.',
]


def test_an_mpi_type_the_sites_slurm_has_no_plugin_for() -> None:
    assert _setups(MPI_TYPE) == [("app.exception", None)]
    # srun before 17.11 ended on the same words at its fatal level
    assert _setups(['srun: fatal: "--mpi=pmi2" -- long invalid MPI type, --mpi=list for acceptable types.']) == [
        ("app.exception", None)]


def test_near_miss_the_plugin_loader_alone() -> None:
    # the loader's lines before it name a plugin, not who asked for it (slurmd prints them for slurm.conf's too)
    assert _setups(MPI_TYPE[:3]) == []
    # the job's own echo of the option is no error of Slurm's
    assert _setups(['echo "--mpi=pmix" -- long invalid MPI type? try --mpi=list']) == []


SRUN_MISSING = [
    "--------------------------------------------------------------------------",
    "The SLURM process starter for OpenMPI was unable to locate a",
    'usable "srun" command in its path. Please check your path',
    "and try again.",
    "--------------------------------------------------------------------------",
]


def test_mpirun_under_slurm_without_srun() -> None:
    assert _setups(SRUN_MISSING) == [("nccl.error", "launcher_not_found")]
    # the sentence whole on one line, as a launcher that joins the help text prints it
    assert _setups(['The SLURM process starter for OpenMPI was unable to locate a usable "srun" command in its '
                    "path. Please check your path and try again."]) == [("nccl.error", "launcher_not_found")]


def test_near_miss_the_internal_error_after_it_alone() -> None:
    # ORTE's report that follows it names nothing of the set-up by itself
    assert _setups(["An internal error has occurred in ORTE:", "",
                    "[[56714,0],0] FORCE-TERMINATE AT (null):1 - error plm_slurm_module.c(471)"]) == []
    # another help topic of the same starter (help-plm-slurm.txt [no-hosts-in-list]) is no launcher missing
    assert _setups(["The SLURM process starter for Open MPI didn't find any hosts in",
                    "the map for this application."]) == []
