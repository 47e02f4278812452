"""What every command of the `firstfault` program shares: the click classes, the one error printer,
the options several commands declare alike, and the checks on the files and stores they name.

Commands exit 0 when they did their work, 1 when they did it but something they report failed, 2 when
they could not (a usage error, a file or store that cannot be read or written, an invalid catalog).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from firstfault.engine.loader import Catalog

F = TypeVar("F", bound=Callable[..., Any])

# The optional dependency -> the extra that installs it (pyproject's optional-dependencies).
EXTRA_OF = {
    "fastapi": "service", "uvicorn": "service", "starlette": "service", "pydantic_settings": "service",
    "prometheus_client": "service", "httpx": "blueprint", "tenacity": "blueprint",
    "sqlalchemy": "blueprint", "alembic": "blueprint", "pydantic": "blueprint", "pydantic_core": "blueprint",
    "jinja2": "dashboard", "kubernetes": "kubernetes", "psycopg": "postgres",
}


def err(msg: str) -> None:
    """The one error printer: `error: MSG` on stderr (the word in bold red on a terminal)."""
    click.echo(f"{click.style('error:', fg='red', bold=True)} {msg}", err=True)


def fail(msg: str, code: int = 2) -> SystemExit:
    """Print `msg` as an error; the exit to raise (`raise fail(...) from exc`)."""
    err(msg)
    return SystemExit(code)


class Command(click.Command):
    """A command that says which extra to install when its body needs an optional dependency that is not
    installed (exit 2), and exits 130 on Ctrl-C without a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise SystemExit(130) from None
        except ModuleNotFoundError as exc:
            extra = EXTRA_OF.get((exc.name or "").split(".")[0])
            if extra is None:
                raise
            raise fail(f"{ctx.command_path}: needs the optional dependency {exc.name!r}; "
                       f"install it with: pip install 'firstfault[{extra}]'") from None


def _first_paragraph(cmd: click.Command) -> str:
    return " ".join((cmd.help or "").split("\n\n", 1)[0].split())


class Group(click.Group):
    """A group whose --help lists its commands in the order they were declared, each with the first
    paragraph of its help (not cut to a few words)."""

    command_class = Command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, _first_paragraph(cmd)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def command(name: str | None = None, **attrs: Any) -> Callable[[Callable[..., Any]], Command]:
    """A top-level command (firstfault/cli/__init__.py names the module that declares it)."""
    return click.command(name, cls=Command, **attrs)


# --------------------------------------------------------------------------
# Options several commands declare alike
# --------------------------------------------------------------------------

PATH = click.Path(path_type=Path)  # a path that exists must be readable; one that does not is taken as it is
VIEW_FORMATS = ("text", "markdown", "json")


def rules_option(f: F) -> F:
    return click.option("--rules", type=PATH,
                        help="Catalog directory (catalog.yaml + rules/); default: the shipped catalog.")(f)


width_option = click.option("--width", "-w", type=click.IntRange(min=40),
                            help="Text width; default: COLUMNS, else the terminal's, else 80 (piped or redirected).")
verbose_option = click.option("--verbose", "-v", is_flag=True,
                              help="Every evidence line, lead and coverage row, not the short form.")


def view_options(f: F) -> F:
    """--format, --width and --verbose: how a verdict is printed (firstfault.render)."""
    f = width_option(verbose_option(f))
    return click.option("--format", "-f", "fmt", type=click.Choice(VIEW_FORMATS), default="text",
                        help="text (readable, short unless --verbose), markdown (for tickets and chat) "
                             "or json (the verdict document of spec/verdict.md).")(f)


def db_option(help: str, required: bool = True) -> Callable[[F], F]:
    """--db URL, also from FIRSTFAULT_DB."""
    return click.option("--db", envvar="FIRSTFAULT_DB", show_envvar=True, required=required, help=help)


# --------------------------------------------------------------------------
# The catalog, output files and stores the commands name
# --------------------------------------------------------------------------

def catalog(rules: Path | None) -> Catalog:
    """The shipped catalog, or the one at `rules`; an invalid one exits 2 with its file:line problems."""
    from firstfault.engine.loader import CatalogError, load_catalog, shipped_catalog

    try:
        return shipped_catalog() if rules is None else load_catalog(rules)
    except CatalogError as exc:
        raise fail("the rule catalog is invalid:\n" + "\n".join(exc.problems)) from exc


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
        raise fail(f"{flag} {path}: {why}")


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
        raise fail(f"{flag} {path}: cannot write: {exc.strerror or exc}") from exc


def must_exist(url: str) -> None:
    """A command that reads a store must not create an empty SQLite file because of a typo in the path
    (the store's own check, imported when a command runs: SQLAlchemy stays out of start-up)."""
    from firstfault.store.db import must_exist as check

    check(url)
