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
