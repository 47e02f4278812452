"""A small on-disk cache of what is built once per catalog: keyed by sha256, never required.

Parsing and validating the rule catalog, compiling the prefilter's
Hyperscan databases, parsing the vendor tables' YAML (catalog/tables.py)
and generating the extractors' regex code (lazyre.py) take longer than
analysing a small bundle. All are pure functions of their inputs, so their
results are kept under the sha256
of those inputs (the catalog files, the code that reads them, the library
versions) in $FIRSTFAULT_CACHE_DIR, else $XDG_CACHE_HOME/firstfault, else
~/.cache/firstfault. A missing, unreadable, foreign or corrupt entry is
rebuilt; a cache that cannot be written is skipped. FIRSTFAULT_CACHE=off
turns it off. Verdicts do not depend on it.

Entries are only read from a directory of this user's own that no one else
may write to, as a vendor table's entry is a pickle (the catalog's is msgpack, decoded into its
records).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: updates are not serialised (a lost update costs a rebuild)
    fcntl = None  # type: ignore[assignment]


def cache_dir() -> Path | None:
    if os.environ.get("FIRSTFAULT_CACHE", "").lower() in ("off", "0", "no", "false"):
        return None
    explicit = os.environ.get("FIRSTFAULT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "firstfault"


def key(*parts: bytes | str) -> str:
    """The sha256 of the parts (each length-prefixed, so no two part lists collide)."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


@lru_cache(maxsize=16)
def stamp(package: str, file: str) -> bytes:
    """The bytes of `file` in the installed top-level `package`, found without importing the package: a
    key part that changes with its version (`stamp("pydantic", "version.py")`) where importing it to read
    the version would cost more than the entry saves. Empty when the package or file is not there."""
    from importlib.util import find_spec

    try:
        spec = find_spec(package)
    except (ImportError, ValueError):
        return b""
    for loc in (spec.submodule_search_locations or []) if spec is not None else []:
        try:
            return Path(loc, file).read_bytes()
        except OSError:
            continue
    return b""


def _private(path: Path) -> bool:
    try:
        st = path.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def get(name: str) -> bytes | None:
    d = cache_dir()
    if d is None or not _private(d):
        return None
    p = d / name
    if not _private(p):
        return None
    try:
        return p.read_bytes()
    except OSError:
        return None


def _writable() -> Path | None:
    """The cache's directory, made (private) where it is not there; None where the cache is off or not ours."""
    d = cache_dir()
    if d is None:
        return None
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    return d if _private(d) else None


def put(name: str, data: bytes) -> None:
    try:
        d = _writable()
        if d is None:
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=d)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, d / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


@contextlib.contextmanager
def _locked(d: Path, name: str) -> Iterator[None]:
    """An exclusive lock on `name`'s lock file in `d`, held while an entry is read, merged and written (flock: released
    when the process ends, whichever way)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(d / f".{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def update(name: str, merge: Callable[[bytes | None], bytes | None]) -> None:
    """Writes merge(the entry as it is now) as the entry, with no other process's update between the read and the
    write: processes that end together (the workers of `-j N`, each adding what it generated) lose none of each
    other's additions. merge returning None writes nothing."""
    try:
        d = _writable()
        if d is None:
            return
        with _locked(d, name):
            data = merge(get(name))
            if data is not None:
                put(name, data)
    except OSError:
        return
