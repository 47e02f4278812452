"""The Blueprint's `fabric:`: a file or a command, read once per attempt, with its time (collect/fabric.py)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from firstfault.analysis.analyze import Analyzer
from firstfault.blueprint.config import ConfigError, load_config
from firstfault.bundle import Context, SourceSpec, workload_spec
from firstfault.collect import fabric as fabric_mod
from firstfault.collect.fabric import FabricConnector
from firstfault.collect.files import FilesConnector
from firstfault.model import Verdict
from tests.fabric.bundles import KERNEL_SOURCE, NODES, RECORDED, link_down, workload
from tests.harness.e2e_util import write_config

TOPOLOGY = RECORDED / "ibnetdiscover.txt"


def _context() -> Context:
    return Context.from_spec(workload_spec(workload(NODES[:4], [])["workload"]))


def _analyse(tmp_path: Path, conn: FabricConnector) -> Verdict:
    """node-03's host port goes down; the kernel log comes from logs.files, the cables from `conn`."""
    (tmp_path / "nodes" / "node-03").mkdir(parents=True)
    (tmp_path / "nodes" / "node-03" / "kern.log").write_text(link_down("node-03"))
    ctx = _context()
    analysis = Analyzer().start(ctx)
    FilesConnector([SourceSpec(**KERNEL_SOURCE)], tmp_path).collect(ctx, (), analysis)
    conn.collect(ctx, (), analysis)
    return analysis.finish()


def test_a_file_gives_the_cables_and_its_modification_time(tmp_path: Path) -> None:
    copy = tmp_path / "ibnetdiscover.txt"
    copy.write_bytes(TOPOLOGY.read_bytes())
    os.utime(copy, (1_700_000_000, 1_700_000_000))
    v = _analyse(tmp_path, FabricConnector("ibnetdiscover", file=copy))
    assert v.root_cause is not None and v.root_cause.devices == ["node-03/mlx5_0", "leaf01/3"]
    (cov,) = [c for c in v.coverage if c.source == "fabric"]
    assert cov.status == "complete" and cov.note == "ibnetdiscover taken at 2023-11-14T22:13:20.000000Z"


def test_a_command_gives_the_cables_and_the_time_it_ran(tmp_path: Path) -> None:
    when = datetime(2026, 12, 3, 16, 0, tzinfo=UTC)
    conn = FabricConnector("ibnetdiscover", command=["cat", str(TOPOLOGY)], clock=lambda: when)
    v = _analyse(tmp_path, conn)
    assert v.root_cause is not None and v.root_cause.devices == ["node-03/mlx5_0", "leaf01/3"]
    (cov,) = [c for c in v.coverage if c.source == "fabric"]
    assert cov.note == "ibnetdiscover taken at 2026-12-03T16:00:00.000000Z"


@pytest.mark.parametrize("command,timeout,message", [
    (["false"], 10.0, "the command exited 1"),
    (["sleep", "5"], 0.3, "ran past 0.3 s"),
    (["/nonexistent/ibnetdiscover"], 10.0, "could not start"),
])
def test_a_command_that_fails_is_an_error_and_the_rest_is_read(tmp_path: Path, command: list[str], timeout: float,
                                                               message: str) -> None:
    v = _analyse(tmp_path, FabricConnector("ibnetdiscover", command=command, timeout=timeout))
    assert v.root_cause is not None and v.root_cause.devices == ["node-03/mlx5_0"]  # the kernel's own
    (err,) = [e for e in v.errors if e.source == "fabric"]
    assert message in err.message
    assert [c.status for c in v.coverage if c.source == "fabric"] == ["error"]


def test_a_command_that_prints_without_end_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fabric_mod, "MAX_STRUCTURED_BYTES", 1 << 20)
    v = _analyse(tmp_path, FabricConnector("ibnetdiscover", command=["yes"], timeout=20))
    (err,) = [e for e in v.errors if e.source == "fabric"]
    assert "over the 1048576 byte limit" in err.message


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    v = _analyse(tmp_path, FabricConnector("ibnetdiscover", file=tmp_path / "nope.txt"))
    (err,) = [e for e in v.errors if e.source == "fabric"]
    assert err.message.startswith("cannot read: No such file")


@pytest.mark.parametrize("fabric,message", [
    ({"format": "ibnetdiscover"}, "exactly one of `file` or `command`"),
    ({"format": "ibnetdiscover", "file": "/x", "command": ["ibnetdiscover"]}, "exactly one of"),
    ({"format": "lldp-json", "file": "/x"}, "format"),
    ({"format": "ibnetdiscover", "command": []}, "command"),
])
def test_fabric_config_errors_name_the_field(tmp_path: Path, fabric: dict[str, object], message: str) -> None:
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"cluster": "c", "fabric": fabric}))
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "c.yaml")


def test_fabric_config_loads(tmp_path: Path) -> None:
    write_config(tmp_path / "c.yaml", {"cluster": "c", "fabric": {"format": "iblinkinfo",
                                                                  "command": ["iblinkinfo"], "timeout": 30}})
    cfg = load_config(tmp_path / "c.yaml")
    assert cfg.fabric is not None and cfg.fabric.command == ["iblinkinfo"]


def test_firstfault_run_collects_the_fabric_and_stores_the_cables(tmp_path: Path) -> None:
    """`firstfault run` with logs.files (node-03's kernel log) and `fabric: {command: [cat, ...]}`: the stored
    verdict names leaf01 port 3 and its evidence the cable."""
    from firstfault.store import VerdictStore
    from tests.fabric.bundles import DOWN
    from tests.harness.e2e_util import invoke

    logs = tmp_path / "logs"
    (logs / "nodes" / "node-03").mkdir(parents=True)
    (logs / "nodes" / "node-03" / "kern.log").write_text(link_down("node-03"))
    url = f"sqlite:///{tmp_path / 'v.db'}"
    write_config(tmp_path / "c.yaml", {
        "cluster": "ib", "logs": {"files": {"root": str(logs), "sources": [KERNEL_SOURCE]}},
        "fabric": {"format": "ibnetdiscover", "command": ["cat", str(TOPOLOGY)]},
        "outputs": {"stdout": None, "database": {"url": url}}})
    start, end = (DOWN.replace(minute=0, second=0), DOWN.replace(minute=59, second=0))
    res = invoke(["run", "-c", str(tmp_path / "c.yaml"), "--window", start.isoformat(), end.isoformat(),
                  "--nodes", "node-[01-04]", "-q"])
    assert res.exit_code == 0, res.output
    with VerdictStore.open(url) as store:
        (row,) = store.list()
        v = store.get(row.id)
    assert v is not None and v.root_cause is not None
    assert v.root_cause.devices == ["node-03/mlx5_0", "leaf01/3"]
    assert any(e.cable and e.cable.switch_port == "3" for e in v.evidence)
    (cov,) = [c for c in v.coverage if c.source == "fabric"]
    assert cov.status == "complete" and cov.note is not None and cov.note.startswith("ibnetdiscover taken at ")
