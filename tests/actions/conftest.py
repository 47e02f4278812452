"""Verdicts to act on, and a Slurm of the actions tests' own.

The verdicts are real analyses of small bundles written here, each naming the
actions Slurm's node (`ffact1`): a GPU that fell off the bus (Xid 79, the
kernel's own wording) is a hardware verdict; a CUDA out-of-memory error on
rank 0 is a software one. Their expected verdicts follow from the catalog's
categories (gpu.fallen_off_bus, app.cuda_oom), not from running the tool.

The Slurm is a second stack beside the session's (tests/conftest.py), so
draining its one node and configuring its EpilogSlurmctld can never disturb
the other Slurm tests: cluster `ffact`, node `ffact1` in partition `debug`,
`EpilogSlurmctld` = a wrapper that points the shipped epilog script at an
env file under the stack's directory (tests/actions/test_epilog.py writes
the cluster.yaml it names).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

import firstfault
from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict
from tests.harness.slurm_harness import SlurmCluster, missing_binaries, start_slurm

NODE = "ffact1"
NOW = datetime(2026, 12, 1, 11, 0, tzinfo=UTC)
EPILOG = Path(firstfault.__file__).parent / "actions" / "epilog.sh"
SRC = Path(firstfault.__file__).resolve().parents[1]

XID79 = ("Dec  1 10:20:00 {node} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, "
         "GPU has fallen off the bus.\n")
CUDA_OOM = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 79.15 GiB of which 1.02 GiB is free.\n")


def bundle(root: Path, wid: str, *, kernel: str = "", app: str = "", nodes: tuple[str, ...] = (NODE,)) -> Path:
    doc = {
        "apiVersion": "firstfault/v1",
        "workload": {"id": wid, "scheduler": "slurm",
                     "window": {"start": "2026-12-01T10:00:00Z", "end": "2026-12-01T10:30:00Z"},
                     "nodes": list(nodes), "ranks": {n: str(i) for i, n in enumerate(nodes)},
                     "terminal_state": "FAILED"},
        "sources": [{"kind": "kernel", "path": "nodes/{node}/kern.log"},
                    {"kind": "application", "path": "app/rank-{rank}.log"}],
    }
    b = root / wid
    (b / "nodes" / nodes[0]).mkdir(parents=True)
    (b / "app").mkdir()
    (b / "workload.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (b / "nodes" / nodes[0] / "kern.log").write_text(kernel)
    (b / "app" / "rank-0.log").write_text(app)
    return b


@functools.cache
def _analyzer() -> Analyzer:
    return Analyzer()  # the catalog loads once per session


class Verdicts:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.analyzer = _analyzer()

    def hardware(self, wid: str = "hw-1", node: str = NODE) -> Verdict:
        v = self.analyzer.analyze_path(str(bundle(self.root, wid, kernel=XID79.format(node=node), nodes=(node,))),
                                       now=NOW)
        assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus", v.explanation
        assert v.root_cause.nodes == [node]
        return v

    def software(self, wid: str = "sw-1") -> Verdict:
        v = self.analyzer.analyze_path(str(bundle(self.root, wid, app=CUDA_OOM)), now=NOW)
        assert (v.attributed_domain, v.root_cause and v.root_cause.category) == ("software", "app.cuda_oom")
        return v


@pytest.fixture
def verdicts(tmp_path: Path) -> Verdicts:
    return Verdicts(tmp_path / "bundles")


def epilog_env(base: Path) -> Path:
    return base / "epilog.env"


@pytest.fixture(scope="session")
def action_slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm test stack not installed (missing {', '.join(missing)}); "
                    "scripts/ci/install-servers.sh installs it")
    base = tmp_path_factory.mktemp("slurm-actions")
    # slurmctld gives the epilog no environment of ours: the wrapper names the env file, then
    # runs the shipped script itself (what an operator's EpilogSlurmctld line points at).
    wrapper = base / "epilog-wrapper.sh"
    wrapper.write_text(f"#!/bin/sh\nFIRSTFAULT_EPILOG_ENV={epilog_env(base)} exec {EPILOG} \"$@\"\n")
    wrapper.chmod(0o755)
    write_epilog_env(base, base / "cluster.yaml")
    cluster = start_slurm(base, node=NODE, cluster="ffact", extra_conf=f"EpilogSlurmctld={wrapper}\n")
    try:
        yield cluster
    finally:
        cluster.stop()


def write_epilog_env(base: Path, config: Path) -> None:
    epilog_env(base).write_text(
        f"FIRSTFAULT='{sys.executable} -m firstfault'\n"
        f"FIRSTFAULT_CONFIG={config}\n"
        f"FIRSTFAULT_LOG={base}/log/firstfault-epilog.log\n"
        f"FIRSTFAULT_RUN_DIR={base}/run/firstfault\n"
        "FIRSTFAULT_TIMEOUT=120\n"
        "FIRSTFAULT_WAIT=60\n"
        f"SLURM_CONF={base}/slurm.conf\n"
        f"PYTHONPATH={SRC}\n"
    )


@pytest.fixture
def idle_node(action_slurm: SlurmCluster) -> Iterator[SlurmCluster]:
    """The actions Slurm with its node idle, and idle again after the test (whatever it drained)."""
    c = action_slurm
    c.run("scontrol", "update", f"nodename={NODE}", "state=resume", check=False)
    c.wait_node(["idle"])
    yield c
    c.run("scontrol", "update", f"nodename={NODE}", "state=resume", check=False)
    c.wait_node(["idle"])


def node_state(c: SlurmCluster) -> tuple[str, str]:
    """(state, reason) of the actions node as sinfo prints them."""
    out = c.run("sinfo", "-h", "-N", "-n", NODE, "-o", "%T|%E").stdout.strip().splitlines()[0]
    state, reason = out.split("|", 1)
    return state.rstrip("*~#!%$@^-"), reason


# A job whose node's kernel log gets a real Xid 79 line (as the NVIDIA driver prints it), stamped now.
XID79_JOB = """#!/bin/sh
mkdir -p {base}/kern/$SLURM_JOB_ID/{node}
echo "$(date -u +%Y-%m-%dT%H:%M:%S.%6N+00:00) {node} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=$$, name=python, \\
GPU has fallen off the bus." > {base}/kern/$SLURM_JOB_ID/{node}/kern.log
sleep 1
exit 1
"""


def job_config(c: SlurmCluster, db: Path, *, dry_run: bool) -> dict[str, object]:
    """cluster.yaml for jobs on the actions Slurm: their output files and kernel logs, a SQLite store, drain."""
    return {
        "cluster": "ffact",
        "scheduler": {"slurm": {"timeout": 20}},
        "logs": {"files": {"root": str(c.base), "sources": [
            {"kind": "application", "path": "out/{job}.out"},
            {"kind": "kernel", "path": "kern/{job}/{node}/kern.log"},
        ]}},
        "outputs": {"stdout": None, "database": {"url": f"sqlite:///{db}"}},
        "actions": {"max_per_hour": 5, "max_share": 1.0, "drain": {"dry_run": dry_run, "timeout": 20}},
    }
