"""A launcher that could not start the workload's program (extract/traceback.py `_EXEC_FAILED`).

The lines are what the real programs print here: slurmstepd from the lab's slurm_bad_interpreter run
(tests/lab/captured/), bash, env and python run on a missing path on this machine."""

from __future__ import annotations

import pytest

from firstfault.extract import exceptions
from tests.extract.helpers import assert_fields, holds_literal, scan

EXC = exceptions.ExceptionExtractor()


@pytest.mark.parametrize(
    ("line", "exc_type", "path"),
    [
        ("1: slurmstepd-ffnode1: error: execve(): /opt/venvs/train/bin/python3: No such file or directory",
         "FileNotFoundError", "/opt/venvs/train/bin/python3"),
        ("/var/spool/slurmd/job00042/slurm_script: line 7: /opt/venvs/train/bin/python3: No such file or directory",
         "FileNotFoundError", "/opt/venvs/train/bin/python3"),
        ("s.sh: line 3: pythn: command not found", "FileNotFoundError", "pythn"),
        ("/usr/bin/env: \u2018python9\u2019: No such file or directory", "FileNotFoundError", "python9"),
        ("/root/.pyenv/versions/3.11.7/bin/python3: can't open file '/nonexist/train.py': [Errno 2] No such file or "
         "directory", "FileNotFoundError", "/nonexist/train.py"),
        ("bash: line 89: ./s.sh: Permission denied", "PermissionError", "./s.sh"),
        # bash -c over ssh or pdsh: shell_execve's file_error, no script line (pdsh's host tag before it)
        ("172.16.0.18: bash: /home/u/envs/py37/bin/python: No such file or directory", "FileNotFoundError",
         "/home/u/envs/py37/bin/python"),
    ],
)
def test_a_program_that_could_not_start(line: str, exc_type: str, path: str) -> None:
    assert holds_literal(EXC, line)
    (d,) = scan(EXC, [line], source="application")
    assert d.kind == "app.exception"
    assert_fields(d, {"exc_type": exc_type, "path": path, "exec": True})


@pytest.mark.parametrize(
    "line",
    [
        "ls: cannot access '/nonexist': No such file or directory",
        "2026-12-01 12:00:00 INFO cache miss for /data/shard-07 (No such file or directory), fetching",
        "cp: cannot stat 'ckpt/latest': No such file or directory",
        "which: no python9 in (/usr/bin:/bin)",
    ],
)
def test_other_missing_files_are_no_exec_failure(line: str) -> None:
    assert all(not d.fields.get("exec") for d in scan(EXC, [line], source="application"))


# The shell's own record of a working directory or an output file the job's script named that the node could not give
# it (extract/traceback.py `_SHELL_SETUP`): bash's cd builtin (`cd: DIR: No such file or directory` after its
# `line N: ` prolog), dash's (`N: cd: can't cd to DIR`) and dash's redirection (`cannot create FILE: Directory
# nonexistent`), as bash 5 and dash 0.5 print them.
@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("10.0.0.18: bash: line 0: cd: /data/run/src: No such file or directory", "/data/run/src"),
        ("/tmp/job/run_master.sh: 15: cd: can't cd to /tmp/mount/job/code", "/tmp/mount/job/code"),
        ("/tmp/job/run_master.sh: 16: /tmp/job/run_master.sh: cannot create /tmp/job/out/stdout: Directory "
         "nonexistent", "/tmp/job/out/stdout"),
    ],
)
def test_a_working_directory_or_output_file_the_node_lacks_is_the_jobs_set_up(line: str, path: str) -> None:
    assert holds_literal(EXC, line)
    (d,) = scan(EXC, [line], source="application")
    assert d.kind == "app.exception"
    assert_fields(d, {"path": path, "setup": True})


@pytest.mark.parametrize(
    "line",
    [
        "bash: line 3: cd: /data/run/train.py: Not a directory",  # a path that is there, but no directory
        "Cannot create /data/out: Directory nonexistent, making it",  # a program's own words, no shell prolog
        "bash: cd: too many arguments",
        "sh: python3: not found in the image's cache, pulling",
    ],
)
def test_a_shell_record_that_names_nothing_the_node_lacks_is_no_set_up(line: str) -> None:
    assert all(not d.fields.get("setup") and not d.fields.get("exec") for d in scan(EXC, [line], source="application"))


# A language runtime's report that the program it was asked to start could not be executed (catalog/exceptions.yaml,
# the `Cannot run program` / `spawn ... ENOENT` / `Os { code: 2, kind: NotFound` row): the job's set-up, in a line of
# its own as on an exception's line. Java's and Node's messages as their sources build them (OpenJDK
# ProcessBuilder.start, Node lib/internal/child_process.js), Rust's io::Error under Debug as Azure ML's runtime
# printed it (Azure/AzureML-Containers#209).
@pytest.mark.parametrize(
    "line",
    [
        "UserError: Failed to spawn child process 'mpirun' because: Os { code: 2, kind: NotFound, message: \"No such "
        "file or directory\" }",
        "Failed to spawn child process 'torchrun' because: Os { code: 13, kind: PermissionDenied, message: "
        "\"Permission denied\" }",
        'java.io.IOException: Cannot run program "mpirun": error=2, No such file or directory',
        'Cannot run program "nextflow" (in directory "/work/run"): error=13, Permission denied',
        "Error: spawn mpirun ENOENT",
    ],
)
def test_a_runtime_that_could_not_spawn_the_program_is_the_jobs_set_up(line: str) -> None:
    ds = [d for d in scan(EXC, [line], source="application") if d.kind == "app.exception"]
    assert ds and ds[0].fields.get("setup") is True


@pytest.mark.parametrize(
    "line",
    [
        # another errno: no program missing (ENOMEM), a limit on threads (the nproc row's, not this one's)
        'java.io.IOException: Cannot run program "mpirun": error=12, Cannot allocate memory',
        # a file the program opened, not a program it started
        "Error: ENOENT: no such file or directory, open '/data/x.json'",
        # Rust's error for another call than a spawn
        "Error: failed to read config: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }",
    ],
)
def test_a_runtimes_other_errors_are_no_spawn_failure(line: str) -> None:
    assert all(not d.fields.get("setup") for d in scan(EXC, [line], source="application"))
