"""The interpreter that could not start for want of its own standard library (catalog/exceptions.yaml, the rows for
`encodings` and `site`, family setup): the job's environment (a PYTHONHOME or PYTHONPATH naming no install of the
node), never the program's own missing module.

Sources: the lab's mpirun_x_pythonhome run (Python 3.11.7 under Open MPI 4.1.4, `mpirun -x PYTHONHOME=...`:
tests/lab/captured/mpirun_x_pythonhome, each line behind Open MPI's `[1,0]<stderr>:` tag); CPython's start-up
(Python/pylifecycle.c init_fs_encoding, 3.8+; Py_Initialize's locale encoding before 3.8; Python 2's
Python/pythonrun.c initsite, `ImportError: No module named site`); the same three lines in public reports of a broken
PYTHONHOME or base install (a tox run with `sys.prefix = '/install'`, an embedded python-build-standalone). The
near-misses are ours: a submodule of `encodings`, modules whose names start with `site`, the program's own module
(the lab's env_module_missing)."""

from __future__ import annotations

import pytest

from tests.extract.helpers import events


def _read(lines: list[str]) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("setup"), e.fields.get("message")) for e in events(lines)
            if e.kind == "app.exception"]


@pytest.mark.parametrize(("line", "message"), [
    ("ModuleNotFoundError: No module named 'encodings'", "No module named 'encodings'"),
    ("[1,0]<stderr>:ModuleNotFoundError: No module named 'encodings'", "No module named 'encodings'"),
    ("ImportError: No module named 'encodings'", "No module named 'encodings'"),
    ("ImportError: No module named site", "No module named site"),
])
def test_the_interpreters_own_start_up_module_missing_is_the_jobs_environment(line: str, message: str) -> None:
    assert _read([line]) == [("app.exception", True, message)]


def test_the_start_up_lines_together() -> None:
    said = _read(["Fatal Python error: init_fs_encoding: failed to get the Python codec of the filesystem encoding",
                  "Python runtime state: core initialized",
                  "ModuleNotFoundError: No module named 'encodings'",
                  "",
                  "Current thread 0x00007fd7c9664b80 (most recent call first):",
                  "  <no Python frame>"])
    assert said == [("app.exception", True, "No module named 'encodings'")]


def test_in_a_traceback_too() -> None:
    said = _read(["Traceback (most recent call last):",
                  '  File "/opt/app/boot.py", line 3, in <module>',
                  "    import encodings",
                  "ModuleNotFoundError: No module named 'encodings'"])
    assert [s[:2] for s in said] == [("app.exception", True)]


@pytest.mark.parametrize("line", [
    "ModuleNotFoundError: No module named 'encodings.idna'",
    "ModuleNotFoundError: No module named 'sitecustomize'",
    "ModuleNotFoundError: No module named 'site_packages'",
    "ModuleNotFoundError: No module named 'lab_fasttok'",
])
def test_near_miss_any_other_module_is_the_programs_own(line: str) -> None:
    assert [s[:2] for s in _read([line])] == [("app.exception", None)]
