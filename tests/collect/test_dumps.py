"""The Blueprint collects flight-recorder and stack dumps from its files sources, and the
Service request carries them (a pickle as base64) to the same leads as a bundle analysis."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime
from pathlib import Path

import yaml

from firstfault import records
from firstfault.analysis.analyze import Analyzer, analyze_request
from firstfault.blueprint.config import FilesConfig
from firstfault.bundle import load_bundle
from firstfault.collect.files import FilesConnector
from firstfault.collect.wire import AnalyzeRequest, RequestBuilder
from tests.extract.test_flightrec import PYSPY, dump

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _bundle(root: Path) -> Path:
    wl = {
        "apiVersion": "firstfault/v1",
        "workload": {"id": "9", "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"},
                     "nodes": ["n0", "n1"], "ranks": {"n0": "0-3", "n1": "4-7"}, "terminal_state": "FAILED"},
        "sources": [{"kind": "flight_recorder", "path": "fr/rank-{rank}.pkl"},
                    {"kind": "stack_dump", "path": "stacks/rank-{rank}.txt"}],
    }
    root.mkdir()
    (root / "workload.yaml").write_text(yaml.safe_dump(wl))
    (root / "fr").mkdir()
    (root / "stacks").mkdir()
    for r in range(8):
        (root / f"fr/rank-{r}.pkl").write_bytes(pickle.dumps(dump(r, 41 if r == 6 else 42, 41)))
    (root / "stacks/rank-6.txt").write_text(PYSPY)
    return root


def test_config_accepts_the_dump_kinds() -> None:
    cfg = FilesConfig.model_validate({"root": "/evidence/{job}", "sources": [
        {"kind": "flight_recorder", "path": "fr/rank-{rank}.pkl"},
        {"kind": "stack_dump", "path": "stacks/{node}-*.txt", "format": "py-spy"},
    ]})
    assert [s.kind for s in cfg.sources] == ["flight_recorder", "stack_dump"]


def test_dumps_through_the_request_give_the_bundles_leads(tmp_path: Path) -> None:
    bundle = load_bundle(_bundle(tmp_path / "b"))
    analyzer = Analyzer()
    direct = analyzer.analyze_bundle(bundle, now=NOW)
    assert [(ld.kind, ld.ranks) for ld in direct.leads][:2] == [("laggard_rank", [6]), ("stuck_frame", [6])]

    rec = RequestBuilder(bundle.workload)
    FilesConnector(bundle.spec.sources, bundle.root).collect(bundle.context, (), rec)
    req = records.decode(records.dumps(rec.request()), AnalyzeRequest)  # over the wire
    assert {d.encoding for d in req.documents if d.source == "flight_recorder"} == {"base64"}
    via = analyze_request(analyzer, req, now=NOW)
    assert via.leads == direct.leads
    assert via.evidence == direct.evidence
