"""`firstfault run --window`: each static attempt gets its own identity, and a refused store write says so."""

from __future__ import annotations

from pathlib import Path

from firstfault.store import VerdictStore
from tests.harness.e2e_util import invoke, write_config

W1 = ("2026-11-02T10:00:00Z", "2026-11-02T10:05:00Z")
W2 = ("2026-11-02T11:00:00Z", "2026-11-02T11:05:00Z")


def _config(tmp_path: Path) -> tuple[Path, str]:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    write_config(tmp_path / "c.yaml", {"cluster": "fftest", "outputs": {"database": {"url": url}}})
    return tmp_path / "c.yaml", url


def _run(cfg: Path, window: tuple[str, str], nodes: str, *extra: str) -> tuple[int, str]:
    res = invoke(["run", "-c", str(cfg), "--window", *window, "--nodes", nodes, "-q", *extra])
    return res.exit_code, " ".join((res.stderr or "").split())


def test_two_static_runs_are_both_stored(tmp_path: Path) -> None:
    cfg, url = _config(tmp_path)
    assert _run(cfg, W1, "node-[01-02]")[0] == 0
    assert _run(cfg, W2, "node-[03-04]")[0] == 0
    assert _run(cfg, W1, "node-[01-02]")[0] == 0  # the same attempt again: idempotent, not a new row
    with VerdictStore.open(url) as store:
        rows = store.list()
    assert len(rows) == 2
    assert len({r.workload_id for r in rows}) == 2 and all(r.workload_id.startswith("static-") for r in rows)


def test_a_given_id_that_names_another_attempt_is_refused_loudly(tmp_path: Path) -> None:
    cfg, url = _config(tmp_path)
    assert _run(cfg, W1, "node-01", "--id", "run-7")[0] == 0
    code, err = _run(cfg, W2, "node-01", "--id", "run-7")
    assert code == 1
    assert "run-7" in err and "stored already" in err and "not stored" in err, err
    with VerdictStore.open(url) as store:
        (row,) = store.list()
    assert row.workload_id == "run-7"


def test_id_needs_window(tmp_path: Path) -> None:
    cfg, _ = _config(tmp_path)
    res = invoke(["run", "-c", str(cfg), "--job", "42", "--id", "x"])
    assert res.exit_code == 2 and "--id" in " ".join((res.stderr or "").split())
