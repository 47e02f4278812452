"""The command line: exit codes, JSON per spec, determinism, atomic output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from firstfault.cli import app

ROOT = Path(__file__).resolve().parent.parent
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
