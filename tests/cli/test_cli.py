"""The command line: exit codes, JSON per spec, determinism, atomic output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from firstfault import records
from firstfault.cli import COMMANDS, app

ROOT = Path(__file__).resolve().parents[2]
SHOWCASE = ROOT / "examples" / "nvlink-xid149"
runner = CliRunner()


def _json(args: list[str]) -> dict:  # type: ignore[type-arg]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_showcase_json_is_the_spec_shape() -> None:
    v = _json(["analyze", str(SHOWCASE), "--format", "json"])
    for key in ("apiVersion", "workload", "terminal_state", "outcome", "attributed_domain", "root_cause",
                "candidates", "affected_nodes", "symptoms", "evidence", "coverage", "errors", "catalog",
                "analyzed_at"):
        assert key in v
    assert v["attributed_domain"] == "hardware"
    assert v["root_cause"]["category"].startswith("gpu.nvlink")
    assert v["affected_nodes"] == ["node-02"]
    assert v["root_cause"]["devices"] == ["node-02/gpu3"]
    cause = [e for e in v["evidence"] if e["role"] == "cause"]
    assert cause and cause[0]["file"] == "nodes/node-02/kern.log" and cause[0]["line"] > 0
    line = (SHOWCASE / cause[0]["file"]).read_text().splitlines()[cause[0]["line"] - 1]
    assert line == cause[0]["text"] and "Xid" in line


def test_same_evidence_same_verdict_byte_for_byte() -> None:
    a = _json(["analyze", str(SHOWCASE), "--format", "json"])
    b = _json(["analyze", str(SHOWCASE), "--format", "json"])
    a.pop("analyzed_at")
    b.pop("analyzed_at")
    assert json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


def test_text_output_explains_itself() -> None:
    res = runner.invoke(app, ["analyze", str(SHOWCASE)])
    assert res.exit_code == 0
    assert "HARDWARE" in res.stdout and "node-02" in res.stdout and "Why" in res.stdout


def test_no_verdict_exits_2_and_names_the_file(tmp_path: Path) -> None:
    res = runner.invoke(app, ["analyze", str(tmp_path)])
    assert res.exit_code == 2
    assert "workload.yaml" in res.output


def test_output_file_is_written_whole(tmp_path: Path) -> None:
    out = tmp_path / "v" / "verdict.json"
    out.parent.mkdir()
    res = runner.invoke(app, ["analyze", str(SHOWCASE), "-f", "json", "-o", str(out)])
    assert res.exit_code == 0
    assert json.loads(out.read_text())["attributed_domain"] == "hardware"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]


def test_output_to_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path: Path) -> None:
    """A device or a FIFO (-o /dev/stdout, -o /dev/null) is written, not renamed over: a rename once
    replaced /dev/null itself with a regular file (analyze -o /dev/null, run as root)."""
    import os
    import stat
    import threading

    fifo = tmp_path / "verdict.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    res = runner.invoke(app, ["analyze", str(SHOWCASE), "-f", "json", "-o", str(fifo)])
    reader.join(timeout=60)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(got[0])["attributed_domain"] == "hardware"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verdict.fifo"]  # no temporary file left


def test_output_that_cannot_be_written_exits_2_naming_it(tmp_path: Path) -> None:
    """A directory, or a file in a directory that does not exist: exit 2 with the path, no traceback,
    and nothing created."""
    missing = tmp_path / "missing" / "dir" / "v.json"
    for target, fragment in ((tmp_path, "is a directory"), (missing, "does not exist")):
        res = runner.invoke(app, ["analyze", str(SHOWCASE), "-o", str(target)])
        assert res.exit_code == 2, res.output
        text = " ".join(res.output.split())  # rich wraps long paths
        assert fragment in text and "Traceback" not in text
        assert res.exception is None or isinstance(res.exception, SystemExit)
    assert not (tmp_path / "missing").exists()
    junit = tmp_path / "nope" / "rules.xml"
    res = runner.invoke(app, ["rules", "test", "--junit", str(junit)])
    assert res.exit_code == 2 and "does not exist" in " ".join(res.output.split())


def test_rules_commands(tmp_path: Path) -> None:
    assert runner.invoke(app, ["rules", "check"]).exit_code == 0
    junit = tmp_path / "rules.xml"
    res = runner.invoke(app, ["rules", "test", "--junit", str(junit)])
    assert res.exit_code == 0 and "0 failed" in res.stdout
    assert "<testsuite" in junit.read_text()
    listed = json.loads(runner.invoke(app, ["rules", "list", "-f", "json"]).stdout)
    assert any(r["id"] == "gpu-nvlink5-netir" for r in listed["rules"])
    words = runner.invoke(app, ["rules", "prefilter"]).stdout.split("\n")
    assert "NVRM: Xid" in words or any("Xid" in w for w in words)


def test_console_script_runs() -> None:
    res = subprocess.run([sys.executable, "-m", "firstfault.cli", "--help"], capture_output=True, text=True,
                         check=False)
    assert res.returncode == 0 and "analyze" in res.stdout


# --------------------------------------------------------------------------
# The text view, --format markdown and `show`
# --------------------------------------------------------------------------

FORMATS = [["-f", "text"], ["-f", "text", "--verbose"], ["-f", "text", "--width", "120"], ["-f", "markdown"],
           ["-f", "markdown", "-v"], ["-f", "json"]]


def _ok(args: list[str], **kw: object) -> str:
    res = runner.invoke(app, args, **kw)  # type: ignore[arg-type]
    assert res.exit_code == 0, res.output
    return res.stdout


def test_text_is_short_plain_and_80_wide_when_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    out = _ok(["analyze", str(SHOWCASE)])
    lines = out.splitlines()
    assert "\x1b[" not in out
    assert max(len(ln) for ln in lines) <= 80 and len(lines) < 40
    assert "gpu.nvlink.signal_integrity" in lines[0]
    wide = _ok(["analyze", str(SHOWCASE), "--width", "120"]).splitlines()
    assert max(len(ln) for ln in wide) > 80 and max(len(ln) for ln in wide) <= 120
    monkeypatch.setenv("COLUMNS", "100")
    assert max(len(ln) for ln in _ok(["analyze", str(SHOWCASE)]).splitlines()) <= 100
    verbose = _ok(["analyze", str(SHOWCASE), "--verbose"])
    assert len(verbose.splitlines()) > len(lines)
    assert runner.invoke(app, ["analyze", str(SHOWCASE), "--width", "10"]).exit_code == 2


def test_markdown_format() -> None:
    md = _ok(["analyze", str(SHOWCASE), "--format", "markdown"])
    assert md.startswith("### HARDWARE: `gpu.nvlink.signal_integrity` on node-02\n")
    assert "\n```text\n" in md and "\n```\n" in md
    assert "nodes/node-02/kern.log:5: " in md
    assert md == _ok(["analyze", str(SHOWCASE), "--format", "markdown"])  # stable, like the JSON


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: "-".join(a.strip("-") for a in f))
def test_show_of_a_saved_verdict_prints_what_analyze_printed(tmp_path: Path, fmt: list[str]) -> None:
    saved = tmp_path / "verdict.json"
    printed = _ok(["analyze", str(SHOWCASE), "-o", str(saved), *fmt])
    assert _ok(["show", str(saved), *fmt]) == printed
    assert _ok(["show", "-", *fmt], input=saved.read_text()) == printed


def test_show_from_the_store_by_id(tmp_path: Path) -> None:
    from firstfault.analysis.analyze import Analyzer
    from firstfault.model import Enrichment
    from firstfault.store import VerdictStore

    verdict = Analyzer().analyze_path(str(SHOWCASE))
    url = f"sqlite:///{tmp_path / 'verdicts.db'}"
    with VerdictStore.open(url) as store:
        vid = store.write(verdict, Enrichment(cluster="eos", owner="alice", links={"job": "https://slurm/4242"}))
    saved = tmp_path / "verdict.json"
    saved.write_text(records.dumps(verdict, indent=2))
    out = _ok(["show", "--db", url, "--id", str(vid)])
    assert "cluster eos" in out and "owner alice" in out and "job: https://slurm/4242" in out
    facts = ("cluster eos", "owner alice", "job: https://slurm/4242")
    assert [ln for ln in out.splitlines() if ln not in facts] == _ok(["show", str(saved)]).splitlines()
    md = _ok(["show", "--db", url, "--id", str(vid), "-f", "markdown"])
    assert md.replace("\n\n- cluster eos\n- owner alice\n- job: https://slurm/4242", "") \
        == _ok(["show", str(saved), "-f", "markdown"])
    doc = json.loads(_ok(["show", "--db", url, "--id", str(vid), "-f", "json"]))
    assert doc.pop("enrichment")["cluster"] == "eos"
    assert doc == json.loads(records.dumps(verdict))
    # the webhook body that JSON is, read back, is the same verdict again
    body = tmp_path / "body.json"
    body.write_text(json.dumps({**doc, "enrichment": {"cluster": "eos", "owner": "alice", "links": {},
                                                      "previous_attempts": []}}))
    assert "cluster eos" in _ok(["show", str(body)])
    # and so is a GET /v1/verdicts/{id} answer
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"id": vid, "created_at": "2026-11-02T10:20:00Z", "cluster": "eos", "owner": "alice",
                                  "links": {"job": "https://slurm/4242"}, "previous_attempts": [], "verdict": doc}))
    assert _ok(["show", str(record)]) == out
    missing = runner.invoke(app, ["show", "--db", url, "--id", "999"])
    assert missing.exit_code == 2 and "999" in missing.output
    nodb = runner.invoke(app, ["show", "--db", f"sqlite:///{tmp_path / 'typo.db'}", "--id", "1"])
    assert nodb.exit_code == 2 and "no such database file" in " ".join(nodb.output.split())
    assert not (tmp_path / "typo.db").exists()


def test_show_refuses_what_is_not_a_verdict(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    for args in (["show", str(bad)], ["show", str(tmp_path / "none.json")], ["show"],
                 ["show", str(bad), "--id", "1"], ["show", "--id", "1"]):
        res = runner.invoke(app, args, env={"FIRSTFAULT_DB": ""})
        assert res.exit_code == 2, args
        assert "error" in res.output
    notjson = tmp_path / "x.json"
    notjson.write_text("not json")
    assert runner.invoke(app, ["show", str(notjson)]).exit_code == 2


def test_readme_shows_the_current_short_form() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sample = readme.split("The verdict:\n\n```\n", 1)[1].split("\n```\n", 1)[0]
    out = _ok(["analyze", str(SHOWCASE), "--width", "80"])
    assert sample + "\n" == out, "README's sample is stale: paste `firstfault analyze examples/nvlink-xid149 -w 80`"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_its_help(name: str) -> None:
    res = runner.invoke(app, [name, "--help"], prog_name="firstfault")
    assert res.exit_code == 0, res.output
    cmd = app.get_command(click.Context(app), name)
    assert cmd is not None and cmd.help
    assert res.output.startswith(f"Usage: firstfault {name} ")
    assert " ".join(cmd.help.split("\n\n")[0].split()) in " ".join(res.output.split())


# `python -m firstfault ARGS` in a fresh interpreter; it reports the firstfault.cli modules it loaded.
LOADED = """
import json, runpy, sys
try:
    runpy.run_module("firstfault", run_name="__main__", alter_sys=True)
finally:
    sys.stderr.write("\\nMODULES " + json.dumps(sorted(m for m in sys.modules if m.startswith("firstfault.cli"))))
"""


def _cli_modules(*args: str) -> set[str]:
    r = subprocess.run([sys.executable, "-c", LOADED, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stderr.rsplit("MODULES ", 1)[1]))


def test_a_command_loads_only_its_own_module() -> None:
    base = {"firstfault.cli", "firstfault.cli.base"}
    assert _cli_modules("analyze", str(SHOWCASE), "-f", "json", "-j", "1") == base | {"firstfault.cli.analyze"}
    assert _cli_modules("store", "prune", "--help") == base | {"firstfault.cli.store"}
    # the top-level help lists every command with its help: it loads them all (the check can fail)
    every = {f"firstfault.cli.{target.split(':')[0].rsplit('.', 1)[1]}" for target in COMMANDS.values()}
    assert _cli_modules("--help") == base | every


# `python -m firstfault ARGS` with a failure raised where analyze loads its catalog.
FAILING = """
import runpy, sys
import firstfault.cli.analyze as analyze
boom = sys.argv.pop(1)
def catalog(rules):
    raise {"eof": EOFError(), "interrupt": KeyboardInterrupt(), "epipe": BrokenPipeError(32, "Broken pipe"),
           "other": OSError(5, "I/O error"), "extra": ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn"),
           "missing": ModuleNotFoundError("No module named 'numpy'", name="numpy")}[boom]
analyze.catalog = catalog
runpy.run_module("firstfault", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(("boom", "rc", "last"), [
    ("eof", 1, "Aborted!"),
    ("interrupt", 130, None),  # Ctrl-C: 128 + SIGINT, no traceback
    ("epipe", 1, None),  # the reader went away (firstfault analyze ... | head)
    ("other", 1, "OSError: [Errno 5] I/O error"),  # an unexpected error keeps its traceback
    # a command that needs an optional dependency names the extra that installs it ...
    ("extra", 2, "error: firstfault analyze: needs the optional dependency 'uvicorn'; "
                 "install it with: pip install 'firstfault[service]'"),
    # ... and a module that no extra installs is not passed off as one
    ("missing", 1, "ModuleNotFoundError: No module named 'numpy'"),
])
def test_how_a_command_that_fails_midway_ends(boom: str, rc: int, last: str | None) -> None:
    r = subprocess.run([sys.executable, "-c", FAILING, boom, "analyze", str(SHOWCASE), "-f", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == rc, r.stderr
    assert r.stdout == ""
    if last is None:
        assert r.stderr == ""
    else:
        assert r.stderr.splitlines()[-1] == last
        assert ("Traceback" in r.stderr) == (rc == 1 and boom != "eof")
