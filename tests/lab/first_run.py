"""Lab faults whose verdict was wrong on their first run, before any change to firstfault (issue 25).

Each entry names what the verdict got wrong and the lines that should have decided it. The expectation
stays the fault's own (lab/faults.py); the tests mark these runs as expected failures, strictly for the
captured runs (tests/lab/captured/: the same bytes every time, so a fix makes them pass and the entry must
go) and leniently for the fresh runs of test_lab.py (a fresh run's output may differ in timing and order).
Owners of extractors and rules: remove an entry once its fault passes.
"""

from __future__ import annotations

WRONG: dict[str, str] = {
    # seventh round (lab breadth, issue 25): 5 of 10 wrong on the first run; dataloader_parquet_corrupt,
    # dataloader_timeout and filelock_timeout fixed since (lab/README.md), these two left
    # (deepspeed_host_unresolvable and mpirun_host_unresolvable fixed since: pass launch98, lab/README.md)
    # eighth round (lab breadth, issue 25): 2 of 8 wrong on the first run, at b5975228; slurm_task_prolog_failed fixed
    # since (lab/README.md), this one left
    "mpirun_rsh_agent_failed": (
        "unknown, want software/app.exception.setup on vm: Open MPI's help text `ORTE was unable to reliably start one "
        "or more daemons.` ([failed-daemon-launch], with its `This usually is caused by:` list) is all mpirun "
        "printed: the launch agent the job's configuration named (`--mca plm_rsh_agent false`) failed for host "
        "127.0.0.2 without a word; the line was not read"),
    # ninth round (lab breadth, issue 25): 2 of 8 wrong on the first run, at e1c2a250 (mpirun_x_pythonhome,
    # slurm_array_task_failed); both fixed since (lab/README.md)
    # tenth round (lab breadth, issue 25: storage through h5py, netCDF4, orbax): 2 of 7 wrong on the first run, at
    # ac43f989; orbax_step_exists fixed since (lab/README.md), this one left (the evidence does not hold the cause)
    "netcdf_enospc": (
        "software/app.exception, want storage/storage.filesystem on vm: rank 0's `RuntimeError: NetCDF: HDF error` "
        "writing 4 MiB into the full 1 MiB tmpfs is all the job printed (netCDF-C keeps its HDF5 layer's error stack, "
        "which holds the errno, to itself); NC_EHDFERR names no layer's failure by design"),
    # eleventh round (lab breadth, issue 25: Dask, torchrun's elastic restarts): 2 of 7 wrong on the first run, at
    # 6f45411d (dask_killed_worker, dask_worker_memory_limit); both fixed since (lab/README.md)
    # twelfth round, TensorFlow (issue 25): 1 of 5 wrong on the first run, at b2587bb5 (tf_port_in_use); fixed since
    # (lab/README.md)
    # twelfth round (lab breadth, issue 25: Grid Engine): 2 of 5 wrong on the first run, at 9da18228; sge_h_rt fixed
    # since (lab/README.md), this one left (the evidence does not hold the cause)
    "sge_qdel": (
        "unknown, want scheduler/scheduler.cancelled: qacct's `failed 100 : assumedly after job`, `exit_status 137 "
        "(Killed)` and the qmaster's `job 5.1 failed on host vm assumedly after job because: job 5.1 died through "
        "signal KILL (9)` are all Grid Engine 8.1.9 keeps of a qdel at its default log level (log_warning): its qacct "
        "has no `deleted_by`, the qmaster logs the deletion only at log_info; the same words follow a kill from "
        "outside"),
}


# Faults whose verdict is right (`unknown`) but whose first run gave no lead, or another, than the one the
# fault decides (tests/lab/test_captured.py's LEADS): strict expected failures of the lead test.
LEADS_WRONG: dict[str, str] = {}
