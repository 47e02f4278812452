"""Property tests for the line scanner and the traceback model (issue 12, item 9).

The scanner must find the same candidate lines, with the same numbers and
texts, whatever the chunk size (so wherever a chunk boundary falls), and the
traceback model must never fail on arbitrary input and never emit more than
one event for one chain of tracebacks.
"""

from __future__ import annotations

import builtins
from datetime import UTC
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firstfault.collect import scan
from firstfault.collect.scan import Extraction, LineScanner, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.extract.codes import CUDA_ANCHORS
from firstfault.timeparse import TimeParser

LINES = [
    "2026-11-02T10:03:07.123456+00:00 node-02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1912, GPU has fallen "
    "off the bus.",
    "Traceback (most recent call last):",
    '  File "/opt/train.py", line 12, in <module>',
    "ValueError: shapes do not match",
    "The above exception was the direct cause of the following exception:",
    "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
    "node-1:100:200 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with status=12 opcode=0",
    "step 100 | loss 2.31 | lr 1e-4",
    "lm loss: nan",
    "",
    "plain noise line without any word",
]
_BUILTIN_EXCEPTIONS = frozenset(n for n, v in vars(builtins).items()
                                if isinstance(v, type) and issubclass(v, BaseException))
line = st.one_of(st.sampled_from(LINES), st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=80))


def _scan(path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    monkeypatch.setattr(scan, "CHUNK", chunk)
    out: list[Candidate] = []
    LineScanner("kernel", all_line_extractors()).scan_file(
        str(path), "f.log", node="n1", rank=None, srun_prefix=False, tp=TimeParser(UTC, None, None),
        emit=out.append)
    return [(c.line, c.text) for c in out]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(line, min_size=1, max_size=60), cut=st.integers(min_value=16, max_value=300))
def test_the_same_candidates_whatever_the_chunk_size(lines: list[str], cut: int, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    whole = _scan(path, 8 << 20, monkeypatch)
    assert _scan(path, cut, monkeypatch) == whole
    # the line numbers are the file's own
    text_lines = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    for n, t in whole:
        assert text_lines[n - 1].replace("\x00", "") == t


@settings(max_examples=200, deadline=None, derandomize=True)
@given(lines=st.lists(line, max_size=80))
def test_the_traceback_model_takes_any_input(lines: list[str]) -> None:
    ex = Extraction(all_line_extractors())
    events = []
    for i, text in enumerate(lines, 1):
        events += ex.events(Candidate("application", "a.log", i, None, None, None, text))
    # A traceback's last line, or a built-in exception's name alone or first on its line (a lone uncaught
    # exception: what a launcher prints of a traceback; random text can spell one, e.g. `OSError`).
    closers = sum(1 for t in lines if t.startswith(("ValueError", "[rank3]: RuntimeError"))
                  or t.strip().split(":", 1)[0] in _BUILTIN_EXCEPTIONS)
    kinds = [e.kind for e in events if e.kind in ("app.exception", "app.cuda_error")]
    # ... and a line holding one of the words a CUDA error report is anchored by (codes.CUDA_ANCHORS: `CUDA error`,
    # `cudaError`, ...; Hypothesis draws the code's own string constants, so an anchor alone can be an example)
    assert len(kinds) <= closers + sum(1 for t in lines if any(a in t for a in CUDA_ANCHORS))


@settings(max_examples=100, deadline=None, derandomize=True)
@given(n=st.integers(min_value=2, max_value=6), noise=st.lists(st.sampled_from(LINES[6:]), max_size=5))
def test_a_chain_of_tracebacks_is_one_event(n: int, noise: list[str]) -> None:
    chain: list[str] = []
    for i in range(n):
        if i:
            chain += ["", "During handling of the above exception, another exception occurred:", ""]
        chain += ["Traceback (most recent call last):", '  File "/opt/x.py", line 3, in f', f"KeyError: 'k{i}'"]
    ex = Extraction(all_line_extractors())
    events = []
    for i, text in enumerate([*noise, *chain], 1):
        events += ex.events(Candidate("application", "a.log", i, None, None, None, text))
    assert [e.fields.get("message") for e in events if e.kind == "app.exception"] == ["'k0'"]
