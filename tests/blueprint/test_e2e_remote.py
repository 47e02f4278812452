"""The remote path: `firstfault run` with `service.url` pointing at a real `firstfault serve`.

The Service is the venv's `firstfault serve` (uvicorn) in a subprocess on
127.0.0.1 and a free port, with bearer-token authentication on, stopped by
its PID. For the same evidence the remote verdict must equal the embedded
one byte for byte, apart from `analyzed_at`:

- a static window + the files connector over the scenario bundle
  tests/scenarios/hw-nvlink-xid149-showcase, through the CLI (window,
  nodes and --ranks-per-node). The CLI's static context has no job id or end
  state, so the same evidence is also run through the pipeline API with a
  StaticAttempts that has the bundle's id, ranks and end state, which is what
  lets the engine reach the scenario's expected verdict;
- a real Slurm job (sacct and scontrol documents from the real cluster)
  whose output holds a Python traceback.
"""

from __future__ import annotations

import gc
import json
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from firstfault import records
from firstfault.blueprint.pipeline import Pipeline
from firstfault.bundle import SourceSpec
from firstfault.client import FirstfaultClient
from firstfault.collect.files import FilesConnector
from firstfault.identify.static import StaticAttempts
from firstfault.model import Verdict
from tests.harness.e2e_util import SHOWCASE, Serve, closed_port, invoke, submit, unstamped, write_config
from tests.harness.slurm_harness import TERMINAL, SlurmCluster

pytestmark = pytest.mark.integration
TOKEN = "e2e-remote-token-0123456789abcdef"
WINDOW = ("2026-11-02T09:59:48Z", "2026-11-02T10:13:14Z")


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    tokens = [{"name": "blueprint-e2e", "secret": TOKEN}]
    s = Serve(tmp_path_factory.mktemp("e2e-serve"), {"FIRSTFAULT_TOKENS": json.dumps(tokens)})
    try:
        yield s
    finally:
        s.stop()


def _showcase() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((SHOWCASE / "workload.yaml").read_text())
    return doc


def _files_cfg() -> dict[str, Any]:
    return {"files": {"root": str(SHOWCASE), "sources": _showcase()["sources"]}}


def _run(args: list[str], env: dict[str, str]) -> Result:
    """`firstfault run` in process; gc at once so a leaked connection shows up in this test, not a later one."""
    res = invoke(args, env)
    gc.collect()
    return res


def _configs(tmp: Path, serve: Serve, logs: dict[str, Any], **extra: Any) -> tuple[Path, Path]:
    base = {"cluster": "fftest", "logs": logs, "outputs": {"stdout": {"format": "json"}}, **extra}
    write_config(tmp / "embedded.yaml", base)
    write_config(tmp / "remote.yaml", base | {"service": {"url": serve.url, "token": {"env": "FF_SERVICE_TOKEN"}}})
    return tmp / "embedded.yaml", tmp / "remote.yaml"


def test_cli_static_window_remote_equals_embedded(serve: Serve, tmp_path: Path) -> None:
    embedded_cfg, remote_cfg = _configs(tmp_path, serve, _files_cfg())
    args = ["--window", *WINDOW, "--nodes", "node-[01-04]", "--ranks-per-node", "8", "--format", "json"]
    env = {"FF_SERVICE_TOKEN": TOKEN}
    before = serve.log_text().count("/v1/analyze")
    emb = _run(["run", "-c", str(embedded_cfg), *args], env)
    rem = _run(["run", "-c", str(remote_cfg), *args], env)
    assert emb.exit_code == 0 and rem.exit_code == 0, (emb.stderr, rem.stderr)
    assert "analyze (embedded)" in emb.stderr and "analyze (service)" in rem.stderr
    assert serve.log_text().count("/v1/analyze") == before + 1  # the remote run really went to the Service
    assert unstamped(rem.stdout) == unstamped(emb.stdout)
    v = records.decode(rem.stdout, Verdict)
    # Without the job id (so the bundle's sacct rows are another job's) the NVLink fault on node-02 is still found.
    assert v.attributed_domain == "hardware"
    assert v.root_cause is not None and v.root_cause.category.startswith("gpu.nvlink")
    assert v.affected_nodes == ["node-02"]
    assert {c.source: c.status for c in v.coverage}["application"] == "complete"  # --ranks-per-node placed the ranks


def test_pipeline_static_context_with_ranks_remote_equals_embedded(serve: Serve) -> None:
    """The CLI cannot give a static context ranks; the pipeline API can, and then the remote path must still agree."""
    wl = _showcase()["workload"]
    ctx = StaticAttempts(start=WINDOW[0], end=WINDOW[1], nodes=wl["nodes"], id=wl["id"], name=wl["name"],
                        ranks=wl["ranks"], terminal_state="FAILED", exit_code="1:0")
    files = FilesConnector([SourceSpec(**s) for s in _showcase()["sources"]], SHOWCASE)
    embedded = Pipeline(context=ctx, logs=[files]).run("4242").verdict
    with FirstfaultClient(serve.url, TOKEN) as client:
        remote = Pipeline(context=ctx, logs=[files], client=client).run("4242").verdict
    assert unstamped(records.dumps(remote)) == unstamped(records.dumps(embedded))
    expected = yaml.safe_load((SHOWCASE / "expected.yaml").read_text())
    assert (remote.outcome, remote.attributed_domain) == (expected["outcome"], expected["domain"])
    assert remote.root_cause is not None and remote.root_cause.category.startswith(expected["category"])
    assert remote.affected_nodes == expected["affected_nodes"]
    cov = {c.source: c.status for c in remote.coverage}
    assert cov["application"] == "complete"  # with ranks every rank file has its node


def test_slurm_job_remote_equals_embedded(serve: Serve, slurm_cluster: SlurmCluster,
                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    c = slurm_cluster
    root = tmp_path_factory.mktemp("e2e-remote-jobs")
    job = submit(c, root, "ff-e2e-remote", "#!/bin/sh\n/usr/bin/env python3 -c 'raise KeyError(\"rank_map\")'\n")
    c.wait_state(job, TERMINAL, 30)
    # slurmdbd may briefly list a just-ended job under the name "allocation" before the
    # real one arrives; both runs must read the settled record.
    deadline = time.monotonic() + 20
    while "ff-e2e-remote" not in c.run("sacct", "-P", "-n", "-X", "-j", job, "-o", "JobName").stdout:
        assert time.monotonic() < deadline, "sacct never showed the job's name"
        time.sleep(0.3)
    logs = {"files": {"root": f"{root}/{{job}}", "sources": [{"kind": "application", "path": "slurm.out"}]}}
    tmp = tmp_path_factory.mktemp("e2e-remote-cfg")
    embedded_cfg, remote_cfg = _configs(tmp, serve, logs, scheduler={"slurm": {"timeout": 20}})
    env = {"SLURM_CONF": str(c.conf), "FF_SERVICE_TOKEN": TOKEN}
    emb = _run(["run", "-c", str(embedded_cfg), "--job", job], env)
    rem = _run(["run", "-c", str(remote_cfg), "--job", job], env)
    assert emb.exit_code == 0 and rem.exit_code == 0, (emb.stderr, rem.stderr)
    assert unstamped(rem.stdout) == unstamped(emb.stdout)
    v = records.decode(rem.stdout, Verdict)
    assert (v.workload.id, v.terminal_state, v.attributed_domain) == (job, "FAILED", "software")
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


@pytest.mark.parametrize("case", ["unreachable", "bad-token"])
def test_service_failure_is_a_clean_exit_2(serve: Serve, tmp_path: Path, case: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}" if case == "unreachable" else serve.url
    cfg = {"cluster": "fftest", "logs": _files_cfg(),
           "service": {"url": url, "token": {"env": "FF_SERVICE_TOKEN"}, "timeout": 5}}
    write_config(tmp_path / "c.yaml", cfg)
    res = _run(["run", "-c", str(tmp_path / "c.yaml"), "--window", *WINDOW, "--nodes", "node-[01-04]"],
                 {"FF_SERVICE_TOKEN": "wrong-token" if case == "bad-token" else TOKEN})
    assert res.exit_code == 2, (res.exit_code, res.stderr, repr(res.exception))
    assert "error:" in res.stderr and url in res.stderr


def test_cli_closes_its_service_client(serve: Serve, tmp_path: Path) -> None:
    _, remote_cfg = _configs(tmp_path, serve, _files_cfg())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = invoke(["run", "-c", str(remote_cfg), "--window", *WINDOW, "--nodes", "node-[01-04]", "-q"],
                     {"FF_SERVICE_TOKEN": TOKEN})
        gc.collect()
    assert res.exit_code == 0, res.stderr
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []
