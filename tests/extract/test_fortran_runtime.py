"""Fortran runtimes' last lines, read by the one model a Python job's last line is read by: Intel's numbered
`forrtl:` record by its number (catalog/exceptions.yaml `fortran_runtime_errors`: an errno, a signal, or a read or
write that failed with no errno), GNU's `Fortran runtime error:` by its message's errno (extract/traceback.py
LANGUAGES `fortran`, `gfortran`).

Lines are verbatim from the public threads and posted logs cited next to them, or built from the runtime's documented
format (`forrtl: severity (number): message-text`, Intel's "Runtime Message Display and Format") where said.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import FortranRuntimeErrorInfo, fortran_runtime_error_table
from firstfault.extract import nccl
from firstfault.extract.base import LineExtractor
from tests.extract.helpers import APPLICATION, kinds
from tests.extract.helpers import scan_application as scan

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *APPLICATION)


def test_a_write_that_failed_on_a_file_systems_file_is_the_storages() -> None:
    # ufs-community/ufs-weather-model#972: a scratch file system over quota, the runtime's write with no errno
    drafts = scan(ALL, ["forrtl: severe (38): error during write, unit 50, file /scratch1/BMC/gmtb/Grant.Firl/FV3_RT/"
                        "stmp2/Grant.Firl/FV3_RT/rt_15495/control_c384gdas_wav/PET473.ESMF_LogFile"])
    assert kinds(drafts) == ["storage.error"], drafts
    assert drafts[0].fields["path"].endswith("PET473.ESMF_LogFile")


@pytest.mark.parametrize("line", [
    # a Windows program with no console writing to it (posted Wine and ArcGIS notes): no file system's
    "forrtl: severe (38): error during write, unit 6, file CONOUT$",
    # Open MPI users' list, 2006: a read from a terminal under mpirun
    "forrtl: severe (39): error during read, unit 5, file /dev/ptmx",
])
def test_a_read_or_write_on_a_terminal_or_device_is_the_programs_own(line: str) -> None:
    drafts = scan(ALL, [line])
    assert kinds(drafts) == ["app.exception"], drafts
    assert drafts[0].fields["exc_type"] == "forrtl"


def test_the_number_that_stands_for_a_signal_is_that_signal() -> None:
    # WRF's rsl.error as posted in a site's WRF notes; pyiron/pyiron_atomistics#1706 (VASP after Slurm's OOM kill)
    segv = scan(ALL, ["forrtl: severe (174): SIGSEGV, segmentation fault occurred"])
    term = scan(ALL, ["forrtl: error (78): process killed (SIGTERM)"])
    assert kinds(segv) == kinds(term) == ["process.signal"], (segv, term)
    assert (segv[0].fields["signal"], segv[0].fields["by"]) == ("SIGSEGV", "self")
    assert term[0].fields["signal"] == "SIGTERM" and term[0].fields["by"] != "self"


def test_the_number_that_stands_for_an_errno_is_read_by_the_errno_table() -> None:
    # a posted climate-data run: the OS's error first, then the numbered record; ENOENT is the job's missing input
    drafts = scan(ALL, ["forrtl: No such file or directory",
                        "forrtl: severe (29): file not found, unit 1, file /home/jepa/projects/def-wailung/Data/x.nc"])
    assert kinds(drafts) == ["app.exception"], drafts
    assert drafts[0].fields["errno"] == "ENOENT"


def test_the_os_error_before_the_record_decides_where_it_is_the_storages() -> None:
    # built from the runtime's format: the OS's strerror on its own `forrtl:` line before the numbered one
    drafts = scan(ALL, ["forrtl: No space left on device",
                        "forrtl: severe (38): error during write, unit 50, file /scratch1/run/out.nc"])
    assert set(kinds(drafts)) == {"storage.error"}, drafts


@pytest.mark.parametrize("line", [
    # a warning and an info record are no end (Intel's severities: execution continues); built from the documented
    # format with a warning's and an info's number
    "forrtl: warning (402): fort: (1): In call to I/O Write routine, an array temporary was created for argument #1",
    "forrtl: info (300): Program was terminated internally through abort().",
    # the runtime's errno line alone, an errno no table gives a side: nothing of its own
    "forrtl: Permission denied",
])
def test_a_warning_or_an_unnumbered_line_is_no_record(line: str) -> None:
    assert not [d for d in scan(ALL, [line]) if d.kind in ("app.exception", "process.signal", "storage.error")]


def test_gnu_fortrans_message_decides_by_its_errno() -> None:
    # built from libgfortran/runtime/error.c's `Fortran runtime error: ` and the OS's strerror
    missing = scan(ALL, ["At line 12 of file io.f90 (unit = 10)",
                         "Fortran runtime error: Cannot open file 'in.dat': No such file or directory"])
    full = scan(ALL, ["Fortran runtime error: No space left on device"])
    assert kinds(missing) == ["app.exception"], missing
    assert missing[0].fields["errno"] == "ENOENT"
    assert kinds(full) == ["storage.error"], full


def test_the_table_holds_the_documented_numbers_and_refuses_a_row_that_says_two_things() -> None:
    assert {9, 29, 38, 39, 41, 69, 78, 174} <= set(fortran_runtime_error_table())
    with pytest.raises(ValueError, match="at most one of errno, signal, io"):
        FortranRuntimeErrorInfo(code=38, text="error during write", errno="EIO", io="write")
    with pytest.raises(ValueError, match="no errno of that name"):
        FortranRuntimeErrorInfo(code=29, text="file not found", errno="ENOTAFILE")
