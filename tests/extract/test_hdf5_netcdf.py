"""Parallel I/O libraries' error reports: HDF5's error stack as one record (extract/traceback.py `hdf5_drafts`), the
errno HDF5 quotes from the system call that failed (`errno = N, error message = '...'`, extract/codes.py errno_of), a
file lock on a mount that does not lock (catalog/exceptions.yaml `errnos` `lock_setup`, `numbers`), HDF5's driver
message cut by ctime's newline, and netCDF's status texts that say the job's set-up (catalog/exceptions.yaml, the
rows under `NetCDF:`).

The stack's form is HDF5's own (HDFGroup/hdf5 src/H5Eint.c H5E__walk_cb: `HDF5-DIAG: Error detected in HDF5 (x.y.z)
MPI-process N:`, `  #000: <file> line <N> in <func>(): <message>`, `    major: ...`, `    minor: ...`); the system
call's errno is src/H5Eprivate.h HSYS_GOTO_ERROR's `"%s, errno = %d, error message = '%s'"`; netCDF's texts are
Unidata/netcdf-c libdispatch/derror.c nc_strerror's. Lines marked "written here" are ours, in those forms; the others
carry their thread.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.extract.codes import errno_of
from firstfault.extract.excclass import setup_errno
from tests.extract import helpers
from tests.extract.test_languages import ALL, cause, verdict


def drafts(text: str) -> list[tuple[str, bool]]:
    return [(d.kind, d.fields.get("setup") is True) for d in helpers.scan(ALL, text.splitlines(), "application")]


# --------------------------------------------------------------------------
# The errno HDF5 quotes
# --------------------------------------------------------------------------

@pytest.mark.parametrize(("message", "name"), [
    # HDFGroup/hdf5#3311: Cray DVS lets the kernel's ENOTSUPP (524) through for flock
    ("unable to lock file, errno = 524, error message = 'Unknown error 524'", "ENOTSUP"),
    # h5py's OSError on a mount without flock (the form many threads post)
    ("Unable to create file (file locking disabled on this file system (use HDF5_USE_FILE_LOCKING environment "
     "variable to override), errno = 38, error message = 'Function not implemented')", "ENOSYS"),
    # h5py/h5py#1120 (joined): the number decides where the strerror is lower-case or cut
    ("file write failed: time = Wed Oct 24 12:02:41 2018, filename = 'm.hdf5', file descriptor = 6, errno = 28, "
     "error message = 'no space left on device', buf = 0000000202e00000", "ENOSPC"),
    # h5py/h5py#1859: ftruncate's EACCES on NFS
    ("unable to extend file properly, errno = 13, error message = 'Permission denied'", "EACCES"),
])
def test_hdf5_errno_is_read_by_its_number(message: str, name: str) -> None:
    assert errno_of(message) == name


@pytest.mark.parametrize("message", [
    "errno = 524",  # no HDF5 form: a bare number is nobody's errno
    "unable to lock file, errno = 999, error message = 'Unknown error 999'",  # a number no table names
])
def test_a_number_outside_hdf5s_form_or_the_tables_names_no_errno(message: str) -> None:
    assert errno_of(message) is None


@pytest.mark.parametrize("message", [
    "unable to lock file, errno = 524, error message = 'Unknown error 524'",
    "Unable to open file (file locking disabled on this file system (use HDF5_USE_FILE_LOCKING environment variable "
    "to override), errno = 38, error message = 'Function not implemented')",
    "flock: [Errno 95] Operation not supported",  # written here: Python's fcntl.flock on such a mount
])
def test_a_lock_the_mount_does_not_support_is_the_jobs_set_up(message: str) -> None:
    assert setup_errno(message) in ("ENOTSUP", "ENOSYS")


@pytest.mark.parametrize("message", [
    # loss-landscape's ranks: another process holds the lock (EAGAIN), no mount's want
    "Unable to open file (unable to lock file, errno = 11, error message = 'Resource temporarily unavailable')",
    # the errno on a call that is no lock: the program's own call, as before
    "unable to read file: errno = 38, error message = 'Function not implemented'",
    "unable to extend file properly, errno = 13, error message = 'Permission denied'",
    # a word that holds `lock` but names no failed lock
    "clock_gettime: [Errno 95] Operation not supported",
])
def test_other_errnos_or_calls_are_not_a_lock_set_up(message: str) -> None:
    assert setup_errno(message) is None


# --------------------------------------------------------------------------
# The stack as one record
# --------------------------------------------------------------------------

# HDFGroup/hdf5#3311 (its frames posted without the header)
DVS_LOCK = """#006: H5Fint.c line 1898 in H5F_open(): unable to lock the file
#007: H5FD.c line 1625 in H5FD_lock(): driver lock request failed
#008: H5FDsec2.c line 1002 in H5FD__sec2_lock(): unable to lock file, errno = 524, error message = 'Unknown error 524'
"""

# ITA-Solar/rh#15: the library's own refusal (a zero-size dimension), the program's use of it
RH_CONSTANT = """HDF5-DIAG: Error detected in HDF5 (1.8.16) MPI-process 0:
  #000: H5O.c line 1061 in H5Oclose(): unable to close object
    major: Object header
    minor: Unable to release object
  #001: H5Omessage.c line 389 in H5O_msg_write_real(): unable to modify constant message
    major: Object header
    minor: Write failed
"""

# written here: a collective write whose sec2 write failed with ENOSPC, the ctime newline inside the innermost frame
H5_ENOSPC = """HDF5-DIAG: Error detected in HDF5 (1.14.3) thread 0:
  #000: H5D.c line 1390 in H5Dwrite(): can't synchronously write data
    major: Dataset
    minor: Write failed
  #001: H5FDsec2.c line 808 in H5FD__sec2_write(): file write failed: time = Tue Mar  5 10:02:41 2024
, filename = '/scratch/out.h5', file descriptor = 5, errno = 28, error message = 'No space left on device', buf = 0x1
    major: Low-level I/O
    minor: Write failed
"""


def test_headless_frames_innermost_lock_errno_decides_set_up(tmp_path: Path) -> None:
    v = verdict(tmp_path, DVS_LOCK)
    assert cause(v) == ("app.exception.setup", ["node-a"])
    assert v.evidence[0].line == 3
    assert not v.unrecognized


def test_library_refusal_is_the_programs_exception_and_every_stack_line_is_claimed(tmp_path: Path) -> None:
    v = verdict(tmp_path, RH_CONSTANT)
    assert cause(v) == ("app.exception", ["node-a"])
    assert v.root_cause is not None and "unable to modify constant message" in v.root_cause.summary
    assert not v.unrecognized


def test_innermost_frame_cut_by_ctime_is_joined_and_its_errno_decides(tmp_path: Path) -> None:
    v = verdict(tmp_path, H5_ENOSPC)
    assert cause(v) == ("storage.filesystem", ["node-a"])
    assert not v.unrecognized


# h5py/h5py#1120: the lone OSError line, cut by ctime's newline
H5PY_ENOSPC = """OSError: Can't prepare for writing data (File write failed: time = wed oct 24 12:02:41 2018
, filename = 'ten_cross_validation/model3/roi_01-0.52-0.60.hdf5', file descriptor = 6, errno = 28, error message = 'no space left on device', buf = 0000000202e00000, total write size = 38720000, bytes this sub-write = 38720000, bytes actually written = 18446744073709551615, offset = 40574416)
"""  # noqa: E501


def test_lone_exception_cut_by_ctime_is_joined(tmp_path: Path) -> None:
    assert cause(verdict(tmp_path, H5PY_ENOSPC)) == ("storage.filesystem", ["node-a"])


def test_a_filename_line_after_no_cut_is_not_joined() -> None:
    text = "OSError: Can't prepare for writing data (File write failed)\n, filename = 'a.h5', errno = 28, " \
           "error message = 'No space left on device'\n"
    assert "storage.error" not in [k for k, _ in drafts(text)]


@pytest.mark.parametrize("line", [
    "#0 0x00007f in H5Dwrite () from /usr/lib/libhdf5.so",  # gdb's frame: no HDF5 stack's
    "major: version bump",  # a class line with no stack before it
    "  #000: H5D.c line 1069 in my_read(): can't read data",  # a function that is none of HDF5's
])
def test_near_misses_are_no_hdf5_record(line: str) -> None:
    assert drafts(line) == []


# --------------------------------------------------------------------------
# netCDF's status texts
# --------------------------------------------------------------------------

# geoschem/GCHP#461: MAPL's own line around nf90_strerror's text
GCHP = """ CB NetCDF4_FileFormatter.F90 file=Restarts/gcchem_internal_checkpoint
 CB NetCDF4_FileFormatter.F90 err=NetCDF: File exists && NC_NOCLOBBER
pe=00000 FAIL at line=00181    NetCDF4_FileFormatter.F90                <status=-35>
"""


@pytest.mark.parametrize("text", [
    GCHP,
    # written here: netCDF4-python's OSError for the same code, and a build without a feature
    "OSError: [Errno -35] NetCDF: File exists && NC_NOCLOBBER: b'/scratch/out.nc'\n",
    "RuntimeError: NetCDF: Attempt to use feature that was not turned on when netCDF was built.\n",
])
def test_netcdf_texts_of_the_jobs_set_up(text: str) -> None:
    assert ("app.exception", True) in drafts(text)


@pytest.mark.parametrize("text", [
    # NOAA-EMC/global-workflow#1256: the HDF5 layer failed, whose failure the text does not say
    "1219:  file: module_write_netcdf.F90 line:          663 NetCDF: HDF error\n",
    "OSError: [Errno -101] NetCDF: HDF error: b'/scratch/in.nc'\n",
])
def test_netcdf_hdf_error_is_no_set_up(text: str) -> None:
    assert ("app.exception", True) not in drafts(text)
