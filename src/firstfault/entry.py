"""The `firstfault` command: the console script and `python -m firstfault`.

Most runs are `firstfault analyze BUNDLE`, and for a small bundle most of that is start-up, much of it
typer's: it imports pydantic and rich and builds a pydantic adapter per option before it runs anything.
So this module reads `analyze`'s command line itself when every argument is one it reads exactly as
typer would (ANALYZE; tests/test_entry.py checks it against the typer command) and runs
commands.analyze, the body of the typer command too. Anything else (--help, an unknown or malformed
option, a value typer would refuse, another command) goes to the typer app (firstfault/cli.py) as it
is, which prints its usual help and errors.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TextIO, cast


class Opt(NamedTuple):
    """An option of `analyze`: commands.analyze's keyword, its spellings, and what its value is."""

    name: str
    flags: tuple[str, ...]
    kind: str  # "flag" (no value), "choice" (one of `choices`), "int" (decimal, at least `min`), "path"
    choices: tuple[str, ...] = ()
    min: int = 0


# `analyze`'s options as firstfault/cli.py declares them; their defaults are commands.analyze's.
ANALYZE = (
    Opt("fmt", ("--format", "-f"), "choice", choices=("text", "markdown", "json")),
    Opt("output", ("--output", "-o"), "path"),
    Opt("rules", ("--rules",), "path"),
    Opt("width", ("--width", "-w"), "int", min=40),
    Opt("verbose", ("--verbose", "-v"), "flag"),
    Opt("workers", ("--workers", "-j"), "int", min=0),
)
_BY_FLAG = {flag: opt for opt in ANALYZE for flag in opt.flags}
_NO = object()  # a value typer would refuse, or might read otherwise


def _path(value: str) -> Any:
    # typer: a path that exists must be readable; one that does not is taken as it is.
    try:
        os.stat(value)
    except OSError:
        return Path(value)
    return Path(value) if os.access(value, os.R_OK) else _NO


def _value(opt: Opt, value: str) -> Any:
    if not value or value[0] == "-":
        return _NO
    if opt.kind == "choice":
        return value if value in opt.choices else _NO
    if opt.kind == "int":  # typer (pydantic) also takes "+5", " 5", "1_0", "5.0": those go to typer
        if not (value.isascii() and value.isdigit() and len(value) <= 18) or int(value) < opt.min:
            return _NO
        return int(value)
    return _path(value)


def parse_analyze(args: list[str]) -> dict[str, Any] | None:
    """commands.analyze's arguments for `firstfault analyze ARGS`, or None: typer should read ARGS.

    Reads options as click's parser (typer's copy) does: `--opt VALUE`, `--opt=VALUE`, `-oVALUE`, short
    flags run together (`-vj1`), options before or after the bundle, the last of a repeated option wins,
    `--` ends the options. Declines an unknown option (--help too), a missing or extra argument, a value
    that is empty, starts with "-", is not a choice or a plain decimal in range, a path that exists but
    cannot be read, an argument that is not valid text, and a shell-completion request.
    """
    if any(k[:1] == "_" and k.endswith("_COMPLETE") and v for k, v in os.environ.items()):
        return None
    for arg in args:
        if not arg.isascii():
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:  # bytes that are not UTF-8, kept as surrogates
                return None
    kw: dict[str, Any] = {}
    positional: list[str] = []
    i, n = 0, len(args)
    while i < n:
        arg = args[i]
        i += 1
        if arg == "--":
            positional += args[i:]
            break
        if arg[:1] != "-" or arg == "-":
            positional.append(arg)
            continue
        if arg[:2] == "--":
            name, eq, value = arg.partition("=")
            opt = _BY_FLAG.get(name)
            if opt is None or (opt.kind == "flag" and eq):
                return None
            if opt.kind == "flag":
                kw[opt.name] = True
                continue
            if not eq:
                if i == n:
                    return None
                value, i = args[i], i + 1
        else:  # one dash: single-letter options, the last of them may take the rest or the next argument
            for j in range(1, len(arg)):
                opt = _BY_FLAG.get("-" + arg[j])
                if opt is None:
                    return None
                if opt.kind == "flag":
                    kw[opt.name] = True
                    continue
                if j + 1 < len(arg):
                    value = arg[j + 1:]
                elif i < n:
                    value, i = args[i], i + 1
                else:
                    return None
                break
            else:
                continue
        got = _value(opt, value)
        if got is _NO:
            return None
        kw[opt.name] = got
    if len(positional) != 1 or not positional[0]:
        return None
    bundle = _path(positional[0])
    if bundle is _NO:
        return None
    return {"bundle": bundle, **kw}


class _Pacified:
    """A stream whose flush ignores a closed pipe (click's PacifyFlushWrapper)."""

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.wrapped, attr)


def _run_analyze(kw: dict[str, Any]) -> None:
    """commands.analyze, ending as typer ends a command: the same exit codes and messages."""
    from firstfault.commands import analyze

    try:
        analyze(**kw)
    except EOFError:
        sys.stderr.write("\n")
        sys.stderr.flush()
        _aborted()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        sys.stdout = cast(TextIO, _Pacified(sys.stdout))
        sys.stderr = cast(TextIO, _Pacified(sys.stderr))
        raise SystemExit(1) from None


def _aborted() -> NoReturn:
    # What typer prints for an Abort; it happens only if a command meets an EOFError.
    from typer import core

    if core.HAS_RICH and core.DEFAULT_MARKUP_MODE is not None:
        from typer import rich_utils

        rich_utils.rich_abort_error()
    else:
        print("Aborted!", file=sys.stderr, flush=True)
    raise SystemExit(1)


# The optional dependency -> the extra that installs it (pyproject's optional-dependencies).
EXTRA_OF = {
    "fastapi": "service", "uvicorn": "service", "starlette": "service", "pydantic_settings": "service",
    "prometheus_client": "service", "httpx": "blueprint", "tenacity": "blueprint",
    "sqlalchemy": "blueprint", "alembic": "blueprint",
    "jinja2": "dashboard", "kubernetes": "kubernetes", "psycopg": "postgres",
}

# Commands that run once and exit. pydantic looks for its plugins (the "pydantic" entry-point group) when
# it builds its first model: it imports importlib.metadata and reads every installed distribution's
# metadata, about 5% of the showcase's instructions. These commands load no plugin unless the user set
# PYDANTIC_DISABLE_PLUGINS (empty: load them all); the long-running ones (serve, run, ...) load them.
ONE_SHOT = ("analyze", "show", "rules")


@contextmanager
def _pydantic_plugins_off(argv: list[str]) -> Iterator[None]:
    if not argv or argv[0] not in ONE_SHOT or "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        yield
        return
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        yield
    finally:
        os.environ.pop("PYDANTIC_DISABLE_PLUGINS", None)


def main() -> None:
    argv = sys.argv[1:]
    try:
        with _pydantic_plugins_off(argv):
            kw = parse_analyze(argv[1:]) if argv[:1] == ["analyze"] else None
            if kw is not None:
                _run_analyze(kw)
            else:
                from firstfault.cli import app_for

                app_for(argv)()
    except ModuleNotFoundError as exc:
        extra = EXTRA_OF.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        command = " ".join(a for a in sys.argv[1:3] if not a.startswith("-")) or "this command"
        print(f"firstfault {command}: needs the optional dependency {exc.name!r}; "
              f"install it with: pip install 'firstfault[{extra}]'", file=sys.stderr)
        raise SystemExit(2) from None
