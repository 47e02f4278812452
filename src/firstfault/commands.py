"""What `firstfault analyze` does, and the output helpers the commands share, without typer.

firstfault/cli.py wraps these in its typer commands; firstfault/entry.py calls `analyze` directly when it
has parsed the command line itself. A failure prints `error: ...` on stderr (rich) and exits with
SystemExit, which typer passes through unchanged: both callers exit the same way.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from firstfault.engine.catalog import Catalog


def err(msg: str) -> None:
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]error:[/] {msg}", highlight=False, markup=True)


def catalog(rules: Path | None) -> Catalog:
    from firstfault.engine.catalog import CatalogError, load_catalog, shipped_catalog

    try:
        return shipped_catalog() if rules is None else load_catalog(rules)
    except CatalogError as exc:
        err("the rule catalog is invalid:\n" + "\n".join(exc.problems))
        raise SystemExit(2) from exc


def _special(path: Path) -> bool:
    """Is `path` an existing file that is neither regular nor a directory (/dev/null, /dev/stdout, a FIFO)?"""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_output(path: Path, flag: str) -> None:
    """Exit 2 naming the path when `path` cannot be written: before any work, and creating nothing."""
    why = None
    if path.is_dir():
        why = "is a directory"
    elif _special(path):
        if not os.access(path, os.W_OK):
            why = "is not writable"
    elif not path.parent.is_dir():
        why = f"its directory {path.parent} does not exist"
    elif not os.access(path.parent, os.W_OK):
        why = f"its directory {path.parent} is not writable"
    if why:
        err(f"{flag} {path}: {why}")
        raise SystemExit(2)


def write_atomic(path: Path, data: str, flag: str = "--output") -> None:
    """Write-then-rename: a crash leaves the old file or the new one, never half of one.

    The directory must exist (it is never created); a failure exits 2 naming the path. A device or a
    FIFO (`-o /dev/stdout`, `-o /dev/null`) is written in place: renaming over it would replace the
    device node with a regular file (`-o /dev/null` run as root once did).
    """
    check_output(path, flag)
    try:
        if _special(path):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(data)
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        err(f"{flag} {path}: cannot write: {exc.strerror or exc}")
        raise SystemExit(2) from exc


def analyze(bundle: Path, fmt: str = "text", output: Path | None = None, rules: Path | None = None,
            width: int | None = None, verbose: bool = False, workers: int = 0) -> None:
    """`firstfault analyze`: its options' defaults are these (tests/test_entry.py checks them against cli's)."""
    from firstfault.analysis.analyze import Analyzer
    from firstfault.bundle import BundleError

    if output is not None:
        check_output(output, "--output")
    cat = catalog(rules)
    try:
        if workers == 0:
            from firstfault.analysis.parallel import default_workers

            workers = default_workers()
        verdict = Analyzer(cat).analyze_path(str(bundle), workers=workers)
    except BundleError as exc:
        err(str(exc))
        raise SystemExit(2) from exc
    doc = verdict.model_dump_json(indent=2) + "\n" if output is not None or fmt == "json" else ""
    if output is not None:
        write_atomic(output, doc)
    if fmt == "json":  # render.write's json, without importing the text and markdown views
        sys.stdout.write(doc)
        sys.stdout.flush()
        return
    from firstfault.render import write

    write(verdict, fmt, sys.stdout, width=width, verbose=verbose)
