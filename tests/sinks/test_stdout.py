"""StdoutSink: the rich text view and the verdict JSON, to an injected stream or sys.stdout."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis.analyze import Analyzer
from firstfault.model import Enrichment, Verdict
from firstfault.sinks import StdoutSink

EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "hw-nvlink-xid149-showcase"
ENRICH = Enrichment(cluster="eos", links={"job": "https://slurm.example/4242"}, owner="alice",
                    previous_attempts=["4242.0"])


@pytest.fixture(scope="module")
def verdict() -> Verdict:
    return Analyzer().analyze_path(str(EXAMPLE))


def test_text_shows_the_verdict_and_the_enrichment(verdict: Verdict) -> None:
    out = io.StringIO()
    StdoutSink("text", out).write(verdict, ENRICH)
    text = out.getvalue()
    assert "Root cause" in text and "gpu.nvlink.signal_integrity" in text and "node-02" in text
    assert "cluster eos" in text and "owner alice" in text
    assert "job: https://slurm.example/4242" in text and "previous attempts: 4242.0" in text
    assert "\x1b[" not in text  # not a terminal: no colour codes


def test_text_without_enrichment_prints_no_empty_lines_for_it(verdict: Verdict) -> None:
    out = io.StringIO()
    StdoutSink("text", out).write(verdict, Enrichment())
    assert "cluster" not in out.getvalue() and "owner" not in out.getvalue()


def test_json_is_the_verdict_document(verdict: Verdict) -> None:
    out = io.StringIO()
    StdoutSink("json", out).write(verdict, ENRICH)
    assert records.decode(out.getvalue(), Verdict) == verdict
    assert out.getvalue() == records.dumps(verdict, indent=2) + "\n"  # what `analyze --format json` prints


def test_json_with_enrichment(verdict: Verdict) -> None:
    out = io.StringIO()
    StdoutSink("json", out, with_enrichment=True).write(verdict, ENRICH)
    doc = json.loads(out.getvalue())
    assert doc.pop("enrichment")["owner"] == "alice"
    assert records.convert(doc, Verdict) == verdict


def test_default_stream_is_the_current_stdout(verdict: Verdict, capsys: pytest.CaptureFixture[str]) -> None:
    sink = StdoutSink(format="json")  # built before capture swaps sys.stdout is fine too
    sink.write(verdict, ENRICH)
    assert json.loads(capsys.readouterr().out)["workload"]["id"] == verdict.workload.id


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="yaml"):
        StdoutSink("yaml")
