"""Lab faults whose verdict was wrong on their first run, before any change to firstfault (issue 25).

Each entry names what the verdict got wrong and the lines that should have decided it. The expectation
stays the fault's own (lab/faults.py); the tests mark these runs as expected failures, strictly for the
captured runs (tests/lab/captured/: the same bytes every time, so a fix makes them pass and the entry must
go) and leniently for the fresh runs of test_lab.py (a fresh run's output may differ in timing and order).
Owners of extractors and rules: remove an entry once its fault passes.
"""

from __future__ import annotations

WRONG: dict[str, str] = {
    # sixth round (lab breadth, issue 25): 8 of 12 right on the first run
    "compile_no_cxx": "app.exception, want app.exception.setup: Inductor's `torch._inductor.exc.InductorError: "
                      "InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, "
                      "'/usr/local/bin/g++-12')` on every rank names a compiler the job's environment gives and the "
                      "host lacks (the job's set-up), not a bug of the workload's",
    "env_cpu_limit": "unknown with no node, want app.exception.setup on the node: torchrun's `failed (exitcode: -24) "
                     "local_rank: 1`, `exitcode  : -24 (pid: N)  (SIGXCPU)` and `Signal 24 (SIGXCPU) received by PID "
                     "N`: SIGXCPU is the kernel's signal for a process past its RLIMIT_CPU (a limit the job's "
                     "environment gives it), read as an unexplained death",
    "env_fsize_limit": "app.exception.io, want app.exception.setup: rank 0's `OSError: [Errno 27] File too large` "
                       "(EFBIG) writing its checkpoint: a write past the process's RLIMIT_FSIZE (Python ignores "
                       "SIGXFSZ, so the write fails with EFBIG), the job's environment's limit, not the workload's "
                       "I/O going wrong",
    "lightning_gpu_missing": "app.exception, want app.exception.setup: Lightning's `lightning.fabric.utilities."
                             "exceptions.MisconfigurationException: No supported gpu backend found!` from "
                             "`Trainer(accelerator='gpu')` (accelerator_connector.py `_choose_gpu_accelerator_"
                             "backend`) on a host without GPUs: a device the job asks for and the host lacks",
}


# Faults whose verdict is right (`unknown`) but whose first run gave no lead, or another, than the one the
# fault decides (tests/lab/test_captured.py's LEADS): strict expected failures of the lead test.
LEADS_WRONG: dict[str, str] = {
}
