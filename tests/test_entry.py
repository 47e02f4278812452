"""The `firstfault` program (firstfault/entry.py): `analyze` read without typer behaves as through typer.

entry.py parses `analyze`'s command line itself when it can (entry.ANALYZE, one place) and otherwise hands
it to the typer app. Checked three ways: the parser's knowledge against the typer command's declaration;
the parser's choice (read or decline) on single command lines; and whole runs of `python -m firstfault`,
each command line once as it goes and once forced through typer, which must print, write and exit alike.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from firstfault import commands, entry

ROOT = Path(__file__).resolve().parents[1]
SHOWCASE = ROOT / "examples" / "nvlink-xid149"
CATALOG = ROOT / "src" / "firstfault" / "catalog"


# --------------------------------------------------------------------------
# entry.ANALYZE is what cli.py declares
# --------------------------------------------------------------------------

def differences(spec: tuple[entry.Opt, ...]) -> list[str]:
    """How `spec` differs from the typer command `analyze` (names, spellings, kinds, limits, defaults)."""
    import typer.main

    from firstfault import cli

    group = typer.main.get_command(cli.app)
    cmd = group.commands["analyze"]  # type: ignore[attr-defined]
    out = []
    if cmd.context_settings or not cmd.allow_interspersed_args or cmd.ignore_unknown_options \
            or cmd.allow_extra_args:
        out.append(f"command settings {cmd.context_settings}")
    # cli.analyze hands its parameters to commands.analyze in order: the same names, the same defaults.
    body = inspect.signature(commands.analyze).parameters
    if list(inspect.signature(cli.analyze).parameters) != list(body):
        out.append("cli.analyze and commands.analyze name their parameters differently")
    by_name = {o.name: o for o in spec}
    seen = set()
    for p in cmd.params:
        desc = p.type_descriptor
        ann, info = desc.annotation, desc.parameter_info
        common = (p.nargs, p.multiple, p.envvar, p.callback, p.is_eager, info.parser, getattr(p, "count", False),
                  getattr(p, "secondary_opts", []))
        if common != (1, False, None, None, False, None, False, []):
            out.append(f"{p.name}: {common}")
        default = p.default.value if isinstance(p.default, Enum) else p.default
        if p.name not in body or body[p.name].default != (inspect.Parameter.empty if p.required else default):
            out.append(f"{p.name}: default {default!r}")
        if p.param_type_name == "argument":
            if p.name != "bundle" or not p.required or ann is not Path:
                out.append(f"argument {p.name}")
            kind = "path"
        else:
            opt = by_name.get(p.name)
            seen.add(p.name)
            if opt is None or tuple(p.opts) != opt.flags:
                out.append(f"{p.name}: spelled {p.opts}, the parser has {opt and opt.flags}")
                continue
            if p.is_flag:
                kind = "flag" if ann is bool and p.default is False else "?"
            elif isinstance(ann, type) and issubclass(ann, Enum):
                kind = "choice"
                if tuple(e.value for e in ann) != opt.choices or not info.case_sensitive:
                    out.append(f"{p.name}: choices {[e.value for e in ann]}")
            elif ann is int:
                kind = "int"
                if (info.min, info.max, info.clamp) != (opt.min, None, False):
                    out.append(f"{p.name}: range {info.min}..{info.max} clamp {info.clamp}")
            else:
                kind = "path" if ann is Path else "?"
            if kind != opt.kind:
                out.append(f"{p.name}: {kind}, the parser has {opt.kind}")
        if kind == "path" and (info.exists, info.file_okay, info.dir_okay, info.readable, info.writable,
                               info.resolve_path, info.allow_dash, info.path_type) \
                != (False, True, True, True, False, False, False, None):
            out.append(f"{p.name}: path checks")
    out += [f"{name}: not an option of the command" for name in set(by_name) - seen]
    return out


def test_the_parser_knows_the_options_the_typer_command_declares() -> None:
    assert differences(entry.ANALYZE) == []
    # ... and would say so if it did not
    doctored = [o._replace(flags=("--workers",)) if o.name == "workers" else o for o in entry.ANALYZE]
    assert differences(tuple(doctored)) == ["workers: spelled ['--workers', '-j'], the parser has ('--workers',)"]
    doctored = [o._replace(min=1) if o.name == "width" else o for o in entry.ANALYZE]
    assert differences(tuple(doctored)) == ["width: range 40..None clamp False"]
    doctored = [*entry.ANALYZE, entry.Opt("color", ("--color",), "flag")]
    assert differences(tuple(doctored)) == ["color: not an option of the command"]


# --------------------------------------------------------------------------
# What the parser reads and what it leaves to typer
# --------------------------------------------------------------------------

B = str(SHOWCASE)
READ = [
    ([B], {}),
    ([B, "--format", "json", "-j", "1"], {"fmt": "json", "workers": 1}),
    (["--format=markdown", "--width=100", "-v", "--workers=2", B], {"fmt": "markdown", "width": 100,
                                                                     "verbose": True, "workers": 2}),
    ([B, "-vw120", "-j1", "-ojson.out"], {"verbose": True, "width": 120, "workers": 1, "output": Path("json.out")}),
    (["-j", "2", "-f", "text", "-f", "json", "-j", "007", "--", B], {"fmt": "json", "workers": 7}),
    (["--", "-j"], {"bundle": Path("-j")}),
    (["-"], {"bundle": Path("-")}),
    ([B, "--rules", str(CATALOG), "-o", "v.json"], {"rules": CATALOG, "output": Path("v.json")}),
]
DECLINED = [[], [B, B], [B, "--help"], [B, "-h"], [B, "--bogus"], [B, "--format", "yaml"], [B, "-f", "JSON"],
            [B, "-j", "-1"], [B, "-j", "+1"], [B, "-j", "1.0"], [B, "-j"], [B, "-w", "39"], [B, "--verbose=1"],
            [B, "-v1"], [B, "-j=1"], [B, "-o", ""], [B, "--output="], [B, "-o", "-"], [""], [B, "--form", "json"],
            ["x\udcff"], [B, "-x"]]


@pytest.mark.parametrize(("args", "want"), READ, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_the_parser_reads(args: list[str], want: dict[str, Any]) -> None:
    assert entry.parse_analyze(args) == {"bundle": SHOWCASE, **want}


@pytest.mark.parametrize("args", DECLINED, ids=repr)
def test_the_parser_leaves_to_typer(args: list[str]) -> None:
    assert entry.parse_analyze(args) is None


def test_a_completion_request_goes_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert entry.parse_analyze([B]) is not None
    monkeypatch.setenv("_FIRSTFAULT_COMPLETE", "bash_complete")
    assert entry.parse_analyze([B]) is None


def test_an_unreadable_path_goes_to_typer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0o200)
    if os.geteuid() == 0:  # root reads every file: the permission check says what it would say to a user
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == locked else real(p, mode))
    assert entry.parse_analyze([B, "-o", str(locked)]) is None  # typer refuses it: "is not readable"
    assert entry.parse_analyze([B, "-o", str(tmp_path / "new.json")]) is not None


# --------------------------------------------------------------------------
# Whole runs: as it goes, and forced through typer
# --------------------------------------------------------------------------

# `python -m firstfault ARGS` (runpy is what -m runs), optionally with the parser switched off (every
# command line then goes to typer) or a failure injected into the command; it reports its modules.
PROBE = """
import json, os, runpy, sys
import firstfault.commands as commands, firstfault.entry as entry
if os.environ.get("PROBE_TYPER"):
    entry.parse_analyze = lambda args: None
boom = os.environ.get("PROBE_RAISE")
if boom:
    def catalog(rules):
        raise {"eof": EOFError(), "interrupt": KeyboardInterrupt(), "epipe": BrokenPipeError(32, "Broken pipe"),
               "other": OSError(5, "I/O error")}[boom]
    commands.catalog = catalog
try:
    runpy.run_module("firstfault", run_name="__main__", alter_sys=True)
finally:
    with open(os.environ["PROBE_OUT"], "w") as fh:
        json.dump(sorted(sys.modules), fh)
"""

STAMP = re.compile(r'"analyzed_at": "[^"]*"|analyzed \d{4}-\d\d-\d\dT\S*')  # the JSON's, the verbose text's


class Run(NamedTuple):
    """What a run did (the analysis time left out) and whether it loaded typer."""

    rc: int
    stdout: str
    stderr: str
    files: dict[str, str]  # written under out/
    typer: bool

    def seen(self) -> tuple[int, str, str, dict[str, str]]:
        return self.rc, self.stdout, self.stderr, self.files


def _run(tmp: Path, args: list[str], *, typer: bool, boom: str = "") -> Run:
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    for f in out.iterdir():
        f.unlink()
    env = {**os.environ, "PROBE_OUT": str(tmp / "modules.json"), "PROBE_RAISE": boom, "COLUMNS": "100"}
    env.pop("PROBE_TYPER", None)
    if typer:
        env["PROBE_TYPER"] = "1"
    r = subprocess.run([sys.executable, "-c", PROBE, "analyze", *args], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=120)
    files = {f.name: STAMP.sub("", f.read_text()) for f in sorted(out.iterdir())}
    loaded = "typer" in json.loads((tmp / "modules.json").read_text())
    return Run(r.returncode, STAMP.sub("", r.stdout), r.stderr, files, loaded)


def _same(tmp_path: Path, args: list[str]) -> Run:
    fast = _run(tmp_path, args, typer=False)
    slow = _run(tmp_path, args, typer=True)
    assert slow.typer
    assert fast.seen() == slow.seen(), args
    return fast


def _cases(tmp: str) -> list[list[str]]:
    o = f"{tmp}/out/v.json"
    return [
        [B, "--format", "json", "-j", "1"],
        [B, "-f", "markdown", "-j1"],
        [B, "-j", "1"],  # text, COLUMNS wide
        ["--format=text", "--width=120", "-v", "--workers=1", B],
        ["examples/nvlink-xid149", "-vw60", "-j", "1"],  # relative to the working directory
        [B, "-o", o, "-j", "1"],  # text out, JSON to the file
        [B, "--output", o, "-f", "json", "-j", "1"],
        [B, f"--output={o}", "-f", "markdown", "-j2"],
        ["-j", "2", "-f", "text", "-f", "json", "-j", "1", "--", B],  # the last wins; `--` ends the options
        [B, "--rules", str(CATALOG), "-f", "json", "-j", "1"],
        [f"{tmp}/no-such-bundle", "-j", "1"],  # exit 2: not a directory
        [tmp, "-j", "1"],  # exit 2: no workload.yaml
        [B, "-o", f"{tmp}/no-such-dir/v.json"],  # exit 2 before any work
        [B, "-o", tmp],  # exit 2: a directory
        [B, "--rules", tmp, "-j", "1"],  # exit 2: not a catalog
        ["--", "-j"],  # a bundle named -j
    ]


TYPER_ONLY = [[], [SHOWCASE.name, SHOWCASE.name], ["--help"], [B, "--bogus"], [B, "--format", "yaml"],
              [B, "-j", "-1"], [B, "-j", "x"], [B, "-j", "+1", "-f", "json"], [B, "-w", "10"], [B, "-j"],
              [B, "--verbose=1"], [B, "-o", ""]]


def test_analyze_read_here_does_what_typer_does(tmp_path: Path) -> None:
    for args in _cases(str(tmp_path)):
        run = _same(tmp_path, args)
        assert not run.typer, args  # the fast path ran
        assert (run.rc == 0) == (run.stderr == ""), (args, run.stderr)
        if "-o" in args or any(a.startswith("--output") for a in args):
            assert (run.rc == 0) == ("v.json" in run.files), args  # written exactly when a verdict was built


def test_every_other_analyze_command_line_runs_typer_as_before(tmp_path: Path) -> None:
    for args in TYPER_ONLY:
        run = _same(tmp_path, args)
        assert run.typer, args
        assert (run.rc == 0) == ("--help" in args or "+1" in args), (args, run.rc, run.stderr)


@pytest.mark.parametrize("boom", ["eof", "interrupt", "epipe", "other"])
def test_a_command_that_fails_midway_ends_as_under_typer(tmp_path: Path, boom: str) -> None:
    fast = _run(tmp_path, [B, "-f", "json"], typer=False, boom=boom)
    slow = _run(tmp_path, [B, "-f", "json"], typer=True, boom=boom)
    assert fast.typer == (boom == "eof")  # the fast path ran; only typer's "Aborted" needs typer
    if boom == "other":  # an unexpected error: the same traceback but for the frames of typer's machinery
        assert fast.rc == slow.rc == 1
        assert fast.stderr.splitlines()[-1] == slow.stderr.splitlines()[-1] == "OSError: [Errno 5] I/O error"
        return
    assert fast.seen() == slow.seen()
    assert fast.rc == {"eof": 1, "interrupt": 130, "epipe": 1}[boom]


# The console script: firstfault.entry:main, called as `sys.exit(main())` with argv[0] "firstfault".
SCRIPT = """
import sys, firstfault.entry as entry
if sys.argv[1] == "typer":
    entry.parse_analyze = lambda args: None
sys.argv = ["firstfault", *sys.argv[2:]]
sys.exit(entry.main())
"""


@pytest.mark.parametrize("args", [["analyze", B, "-f", "json", "-j", "1"], ["analyze", "no-such-dir"],
                                  ["analyze", B, "-j", "-1"], ["analyze"]], ids=" ".join)
def test_the_console_script_prints_what_typer_prints(args: list[str]) -> None:
    fast, slow = (subprocess.run([sys.executable, "-c", SCRIPT, how, *args], capture_output=True, text=True,
                                 cwd=ROOT, timeout=120) for how in ("fast", "typer"))
    assert (fast.returncode, STAMP.sub("", fast.stdout), fast.stderr) \
        == (slow.returncode, STAMP.sub("", slow.stdout), slow.stderr)
    assert fast.returncode == (0 if "-f" in args else 2)


def test_python_m_firstfault_analyze_imports_no_typer_click_or_rich() -> None:
    code = ("import json, runpy, sys\ntry:\n    runpy.run_module('firstfault', run_name='__main__', alter_sys=True)\n"
            "finally:\n    sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n")
    r = subprocess.run([sys.executable, "-c", code, "analyze", B, "--format", "json", "-j", "1"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["affected_nodes"] == ["node-02"]
    mods = {m.split(".")[0] for m in json.loads(r.stderr.split("MODULES ", 1)[1])}
    assert {"typer", "click", "rich"} & mods == set()
    # the text view uses rich, and a command line the parser leaves alone loads typer: the check can fail
    for extra in (["-f", "text"], ["-j", "+1"]):
        r = subprocess.run([sys.executable, "-c", code, "analyze", B, *extra], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
        mods = {m.split(".")[0] for m in json.loads(r.stderr.split("MODULES ", 1)[1])}
        assert r.returncode == 0 and ("rich" if extra[0] == "-f" else "typer") in mods
