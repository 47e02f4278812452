"""Safe extraction of an evidence bundle sent as a .tar.gz.

Only regular files and directories are extracted, by copying their bytes
(never tarfile.extract): no member may name an absolute path or step out
with `..`, links, device files and sparse files are refused, and the member
count, the bytes extracted and the bytes inflated are capped, so a
decompression bomb stops at the limit instead of filling the disk.
"""

from __future__ import annotations

import gzip
import shutil
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from firstfault.service.errors import Problem, invalid

COPY_STEP = 1 << 20
MAX_NAME_BYTES = 4096  # a member name (PATH_MAX); a GNU long-name header longer than this is refused unread
MAX_PAX_BYTES = 64 << 10  # one pax extended header


class _BoundedTarInfo(tarfile.TarInfo):
    """tarfile reads a GNU long-name or pax header whole into memory: check its size first. And it expands a
    sparse member's map (GNU 'S' headers and their extension blocks, pax GNU.sparse.*) before the member is
    seen: a sparse member is refused there, unread (below)."""

    def _proc_gnulong(self, tf: tarfile.TarFile) -> tarfile.TarInfo:
        if self.size > MAX_NAME_BYTES:
            what = "long name" if self.type == tarfile.GNUTYPE_LONGNAME else "long link name"
            raise _header_too_large(f"a GNU {what} header of {self.size} bytes (limit {MAX_NAME_BYTES})")
        return super()._proc_gnulong(tf)  # type: ignore[misc,no-any-return]

    def _proc_pax(self, tf: tarfile.TarFile) -> tarfile.TarInfo:
        if self.size > MAX_PAX_BYTES:
            raise _header_too_large(f"a pax extended header of {self.size} bytes (limit {MAX_PAX_BYTES})")
        return super()._proc_pax(tf)  # type: ignore[misc,no-any-return]

    # Sparse members (`tar --sparse`): a few hundred bytes of archive stand for gigabytes of zeros once written
    # out, and tarfile reads a GNU map's extension blocks one after another as long as each says another
    # follows (memory without bound, then an IndexError at the end of the stream). An evidence bundle has no
    # use for holes: refused when the header is read, before any of it is expanded.
    def _proc_sparse(self, tf: tarfile.TarFile) -> tarfile.TarInfo:
        raise _sparse(self.name)

    def _proc_gnusparse_00(self, nxt: tarfile.TarInfo, pax: dict[str, str], *_: object) -> None:
        raise _sparse(pax.get("GNU.sparse.name", nxt.name))

    def _proc_gnusparse_01(self, nxt: tarfile.TarInfo, pax: dict[str, str], *_: object) -> None:
        raise _sparse(pax.get("GNU.sparse.name", nxt.name))

    def _proc_gnusparse_10(self, nxt: tarfile.TarInfo, pax: dict[str, str], *_: object) -> None:
        raise _sparse(pax.get("GNU.sparse.name", nxt.name))


def _sparse(name: str) -> Problem:
    return _refuse(name, "a sparse file (a GNU sparse header): its holes would be written out in full; "
                         "pack the bundle without --sparse")


def _header_too_large(what: str) -> Problem:
    return Problem(413, "archive_too_large", f"the archive holds {what}; refused before reading it")


@dataclass(frozen=True, slots=True)
class TarLimits:
    max_members: int
    max_bytes: int  # extracted file bytes, and inflated tar stream bytes


class _Capped:
    """A read-only stream that refuses to yield more than `limit` bytes (the inflated tar)."""

    def __init__(self, raw: IO[bytes], limit: int) -> None:
        self._raw = raw
        self._limit = limit
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        want = self._limit + 1 - self.count if n is None or n < 0 else min(n, self._limit + 1 - self.count)
        data = self._raw.read(max(want, 0))
        self.count += len(data)
        if self.count > self._limit:
            raise _bomb(self._limit)
        return data


def _bomb(limit: int) -> Problem:
    return Problem(413, "archive_too_large", f"the archive inflates to more than the {limit} byte limit")


def _refuse(name: str, why: str) -> Problem:
    return invalid(f"archive member {name!r}: {why}; refused")


def _safe_parts(name: str) -> tuple[str, ...]:
    if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        raise _refuse(name[:80] + "...", f"a name over {MAX_NAME_BYTES} bytes")
    if "\\" in name or "\0" in name:
        raise _refuse(name, "backslashes and NUL bytes are not allowed in member names")
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith("/"):
        raise _refuse(name, "absolute path")
    parts = tuple(x for x in p.parts if x not in ("", "."))
    if ".." in parts:
        raise _refuse(name, "path leaves the archive root")
    return parts


def extract(archive: IO[bytes], dest: Path, limits: TarLimits, check: Callable[[], None] | None = None) -> Path:
    """Extracts into `dest` (an empty directory) and returns the bundle root inside it.

    The root is `dest` itself when workload.yaml is at the top, or the one
    top-level directory holding it (`tar czf b.tgz mybundle/`). A path given
    twice (a second workload.yaml) is refused, naming both members. `check`
    is called before each member (the analysis deadline).
    """
    members = 0
    written = 0
    first_at: dict[tuple[str, ...], tuple[int, str]] = {}  # file path -> (member number, name as given)
    capped = _Capped(gzip.GzipFile(fileobj=archive, mode="rb"), limits.max_bytes)  # type: ignore[arg-type]
    try:
        with tarfile.open(fileobj=capped, mode="r|", tarinfo=_BoundedTarInfo) as tar:  # type: ignore[call-overload]
            for m in tar:
                if check is not None:
                    check()
                members += 1
                if members > limits.max_members:
                    raise invalid(f"the archive has more than {limits.max_members} members; refused")
                parts = _safe_parts(m.name)
                if m.issym() or m.islnk():
                    raise _refuse(m.name, f"a {'symbolic' if m.issym() else 'hard'} link")
                if not (m.isfile() or m.isdir()):
                    raise _refuse(m.name, "not a regular file or directory")
                if not parts:
                    continue
                target = dest.joinpath(*parts)
                if m.isfile():
                    if parts in first_at:
                        n, first = first_at[parts]
                        raise _refuse(m.name, f"member {members} names the same file as member {n} ({first!r})")
                    first_at[parts] = (members, m.name)
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if m.size < 0 or written + m.size > limits.max_bytes:
                    raise _bomb(limits.max_bytes)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_dir():
                    raise _refuse(m.name, "a file over a directory")
                src = tar.extractfile(m)
                assert src is not None  # regular files always have a stream
                with target.open("wb") as out:
                    shutil.copyfileobj(src, out, COPY_STEP)
                written += m.size
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise invalid(f"the body is not a readable .tar.gz: {exc}") from exc
    except OSError as exc:
        raise invalid(f"the body is not a readable .tar.gz: {exc.strerror or exc}") from exc
    return bundle_root(dest)


def bundle_root(dest: Path) -> Path:
    if (dest / "workload.yaml").is_file():
        return dest
    tops = [p for p in dest.iterdir()]
    if len(tops) == 1 and tops[0].is_dir() and (tops[0] / "workload.yaml").is_file():
        return tops[0]
    raise invalid("the archive holds no workload.yaml at its root or in its one top-level directory")
