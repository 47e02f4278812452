"""Catalog replay on SQLite: capture through the Blueprint pipeline, changed catalogs, the CLI gate, the cap.

The same-catalog round trip runs on SQLite and PostgreSQL in contract.py
(test_replay_with_the_same_catalog_changes_nothing).
"""

from __future__ import annotations

import json
import shutil
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from firstfault import records
from firstfault.analysis.analyze import Analyzer, analyze_request
from firstfault.bundle import load_bundle
from firstfault.cli import app
from firstfault.engine.loader import load_catalog, shipped_catalog
from firstfault.model import Enrichment
from firstfault.replay import CODEC, ReplayError, capture_bundle, pack, replay, unpack
from firstfault.store import VerdictStore

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
CATALOG = Path(__file__).resolve().parents[2] / "src" / "firstfault" / "catalog"
SHOWCASE = "hw-nvlink-xid149-showcase"  # Xid 149 on node-02: rule gpu-nvlink5-netir, gpu.nvlink.signal_integrity
OTHERS = ("sw-segfault", "net-ib-port-down-mlx5", "amb-xid48-hostoom")
runner = CliRunner()


def _fill(url: str, names: tuple[str, ...], cap: int | None = None) -> dict[str, int]:
    analyzer = Analyzer()
    now = datetime.now(UTC) - timedelta(hours=2)
    ids = {}
    with (VerdictStore.open(url) if cap is None else VerdictStore.open(url, replay_cap=cap)) as store:
        for name in names:
            v, captured = capture_bundle(analyzer, load_bundle(str(SCENARIOS / name)), now=now)
            ids[name] = store.write(v, Enrichment(cluster=name), evidence=captured)  # job ids repeat across scenarios
    return ids


@pytest.fixture
def netir_renamed(tmp_path: Path) -> Path:
    """The shipped catalog with the NVLink5 NETIR rule's category changed: only Xid 149 verdicts move."""
    d = tmp_path / "catalog"
    shutil.copytree(CATALOG, d, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    rule = d / "rules" / "gpu-nvlink5-netir.yaml"
    text = rule.read_text()
    assert "\ncategory: gpu.nvlink.signal_integrity\n" in text
    rule.write_text(text.replace("\ncategory: gpu.nvlink.signal_integrity\n", "\ncategory: gpu.nvlink.netir\n"))
    return d


def test_a_changed_catalog_shows_exactly_the_verdicts_it_changes(tmp_path: Path, netir_renamed: Path) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    ids = _fill(url, (SHOWCASE, *OTHERS))
    with VerdictStore.open(url) as store:
        report = replay(store, load_catalog(netir_renamed))
    assert report.replayed == 4 and report.failed == []
    (change,) = report.changed
    assert change.id == ids[SHOWCASE] and (change.workload, change.attempt, change.cluster) == ("4242", 0, SHOWCASE)
    assert change.before.categories == ("gpu.nvlink.signal_integrity",) and change.before.domain == "hardware"
    assert change.after == change.before.__class__("hardware", ("gpu.nvlink.netir",), ("node-02",))
    assert not change.truncated


def test_cli_table_json_and_the_share_gate(tmp_path: Path, netir_renamed: Path) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    _fill(url, (SHOWCASE, *OTHERS))
    same = runner.invoke(app, ["rules", "replay", "--db", url, "--max-changed-share", "0"])
    assert same.exit_code == 0, same.output
    assert "4 replayed, 0 would change (0.0%)" in " ".join(same.output.split())

    res = runner.invoke(app, ["rules", "replay", "--db", url, "--rules", str(netir_renamed), "-f", "json",
                              "--since", "1d"])
    assert res.exit_code == 0, res.output  # no gate given: a report, not a failure
    doc = json.loads(res.output)
    assert doc["replayed"] == 4 and doc["changed_share"] == 0.25 and doc["over"] is False
    (c,) = doc["changed"]
    assert c["before"] == {"domain": "hardware", "categories": ["gpu.nvlink.signal_integrity"], "nodes": ["node-02"]}
    assert doc["catalog"]["sha256"] == load_catalog(netir_renamed).sha256

    # The gate: 1 of 4 is more than 20 %, not more than 25 %.
    gate = ["rules", "replay", "--db", url, "--rules", str(netir_renamed)]
    over = runner.invoke(app, [*gate, "--max-changed-share", "0.2"], env={"COLUMNS": "200"})
    assert over.exit_code == 1 and "gpu.nvlink.signal_integrity -> gpu.nvlink.netir" in over.output
    assert "more than 20.0% would change" in " ".join(over.output.split())
    assert runner.invoke(app, [*gate, "--max-changed-share", "0.25"]).exit_code == 0

    # Outside the window: nothing is replayed.
    assert "0 replayed" in runner.invoke(app, [*gate, "--since", "2099-01-01"]).output


def test_verdicts_that_fail_to_replay_count_against_the_gate(tmp_path: Path) -> None:
    """Issue 26, item 14: with every record failing to replay, --max-changed-share 0 passed (0 of 0 changed)."""
    import sqlite3

    url = f"sqlite:///{tmp_path / 'v.db'}"
    ids = _fill(url, (SHOWCASE, *OTHERS))
    with sqlite3.connect(tmp_path / "v.db") as db:
        db.execute("UPDATE replay_evidence SET codec = 'zlib+json/lost'")
    res = runner.invoke(app, ["rules", "replay", "--db", url, "--max-changed-share", "0", "-f", "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    assert (doc["replayed"], len(doc["failed"]), doc["changed_share"]) == (0, 4, 0)
    assert doc["changed_or_failed_share"] == 1.0 and doc["over"] is True

    # The near miss: one record of four cannot be read, so 25 % are not known to stay.
    url = f"sqlite:///{tmp_path / 'w.db'}"
    ids = _fill(url, (SHOWCASE, *OTHERS))
    with sqlite3.connect(tmp_path / "w.db") as db:
        db.execute("UPDATE replay_evidence SET codec = 'zlib+json/lost' WHERE verdict_id = ?", (ids[SHOWCASE],))
    gate = ["rules", "replay", "--db", url, "--max-changed-share"]
    assert runner.invoke(app, [*gate, "0.25"]).exit_code == 0
    over = runner.invoke(app, [*gate, "0.2"])
    assert over.exit_code == 1
    assert "more than 20.0% would change or could not be replayed (25.0%)" in " ".join(over.output.split())


def test_cli_errors_name_what_is_wrong(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["rules", "replay", "--db", f"sqlite:///{tmp_path / 'typo.db'}"])
    assert missing.exit_code == 2 and "no such database file" in " ".join(missing.output.split())
    assert not (tmp_path / "typo.db").exists()
    url = f"sqlite:///{tmp_path / 'v.db'}"
    VerdictStore.open(url).close()
    bad = runner.invoke(app, ["rules", "replay", "--db", url, "--since", "last tuesday"])
    assert bad.exit_code == 2 and "--since" in bad.output
    assert runner.invoke(app, ["rules", "replay", "--db", url, "--max-changed-share", "1.5"]).exit_code == 2


def test_over_the_cap_the_evidence_is_cut_flagged_and_still_replays(tmp_path: Path) -> None:
    analyzer = Analyzer()
    v, captured = capture_bundle(analyzer, load_bundle(str(SCENARIOS / SHOWCASE)))
    whole = pack(captured, v)
    assert whole is not None and not whole.truncated and whole.lines_kept == whole.lines_total > 20
    cap = len(whole.data) // 3
    cut = pack(captured, v, cap)
    assert whole is not None and cut is not None
    assert len(cut.data) <= cap and cut.truncated
    assert 0 < cut.lines_kept < cut.lines_total == whole.lines_total
    req = unpack(cut.codec, cut.data)
    # What the verdict cites is kept first, and the scheduler record with it.
    kept = {(ln.file, ln.line) for ln in req.lines}
    cited = {(e.file, e.line) for e in v.evidence if e.source != "scheduler" and e.line is not None}
    assert cited <= kept
    assert [d.source for d in req.documents] == ["scheduler"]
    assert analyze_request(analyzer, req).root_cause == v.root_cause
    assert pack(captured, v, cap) == cut  # deterministic
    assert pack(captured, v, 64) is None  # not even the context fits: nothing rather than over the cap

    url = f"sqlite:///{tmp_path / 'v.db'}"
    _fill(url, (SHOWCASE,), cap=cap)
    with VerdictStore.open(url) as store:
        report = replay(store, shipped_catalog())
        (rec,) = list(store.replay_records())
    assert rec.evidence is not None and rec.evidence.truncated and report.truncated == 1
    _fill(f"sqlite:///{tmp_path / 'none.db'}", (SHOWCASE,), cap=0)
    with VerdictStore.open(f"sqlite:///{tmp_path / 'none.db'}") as store:
        assert replay(store, shipped_catalog()).without_evidence == 1


def test_unpack_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ReplayError, match="codec"):
        unpack("gzip", b"")
    with pytest.raises(ReplayError, match="corrupt"):
        unpack(CODEC, b"not zlib")
    with pytest.raises(ReplayError, match="not a request"):
        unpack(CODEC, zlib.compress(b'{"hello": 1}'))


def test_the_pipeline_stores_what_it_analysed(tmp_path: Path) -> None:
    """run's path: identify -> collect (files connector) -> embedded analysis -> DatabaseSink with evidence."""
    from firstfault.blueprint import build
    from firstfault.blueprint.config import BlueprintConfig

    bundle = SCENARIOS / SHOWCASE
    sources = [{"kind": "scheduler", "path": "scheduler/sacct.txt", "format": "sacct"},
               {"kind": "kernel", "path": "nodes/{node}/kern.log"},
               {"kind": "fabricmanager", "path": "nodes/{node}/fabricmanager.log"},
               {"kind": "application", "path": "app/rank-{rank}.log"}]
    db = tmp_path / "v.db"
    cfg = BlueprintConfig.model_validate({
        "cluster": "eos", "logs": {"files": {"root": str(bundle), "sources": sources}},
        "outputs": {"stdout": None, "database": {"url": f"sqlite:///{db}"}}})
    ranks = {f"node-0{i + 1}": f"{8 * i}-{8 * i + 7}" for i in range(4)}
    ctx = build.context_connector(cfg, "static", {"start": "2026-11-02T09:59:48Z", "end": "2026-11-02T10:13:14Z",
                                                  "nodes": "node-[01-04]", "ranks": ranks, "id": "4242"})
    pipe = build.pipeline(cfg, ctx)
    result = pipe.run("static")
    assert result.ok, result.sinks
    for s in pipe.sinks:
        close = getattr(s, "close", None)
        if close:
            close()
    with VerdictStore.open(f"sqlite:///{db}") as store:
        (rec,) = list(store.replay_records())
        assert rec.evidence is not None and rec.evidence.lines_kept > 0 and not rec.evidence.truncated
        assert rec.verdict.root_cause is not None and rec.verdict.root_cause.rule == "gpu-nvlink5-netir"
        report = replay(store, shipped_catalog())
    assert (report.replayed, report.changed) == (1, [])
    again = analyze_request(Analyzer(), unpack(rec.evidence.codec, rec.evidence.data))
    assert records.replace(again, analyzed_at="") == records.replace(rec.verdict, analyzed_at="")


def test_text_report_prints_stored_words_as_text_not_markup(tmp_path: Path) -> None:
    """A stored word that looks like rich markup (a cluster `[/gpu]`, a codec `[/lost]`) is printed as
    written: rich would read it as a closing tag and stop the report with a MarkupError."""
    import sqlite3

    url = f"sqlite:///{tmp_path / 'v.db'}"
    ids = _fill(url, (SHOWCASE, "sw-segfault"))
    with sqlite3.connect(tmp_path / "v.db") as db:
        db.execute("UPDATE replay_evidence SET codec = 'zlib+json/[/lost]' WHERE verdict_id = ?", (ids["sw-segfault"],))
        db.execute("UPDATE verdicts SET cluster = '[/gpu]' WHERE id = ?", (ids[SHOWCASE],))
    netir = tmp_path / "catalog"
    shutil.copytree(CATALOG, netir, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    rule = netir / "rules" / "gpu-nvlink5-netir.yaml"
    rule.write_text(rule.read_text().replace("\ncategory: gpu.nvlink.signal_integrity\n",
                                             "\ncategory: gpu.nvlink.netir\n"))
    res = runner.invoke(app, ["rules", "replay", "--db", url, "--rules", str(netir)], env={"COLUMNS": "250"})
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "[/lost]" in res.output and "[/gpu]" in res.output, res.output
