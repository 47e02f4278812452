"""Bundles on the recorded fabric (tests/fabric/recorded/): the real tools' topology, and failures placed on it.

The topology, LIDs and counters are the real output of ibsim, opensm, ibnetdiscover, iblinkinfo and
perfquery (tests/fabric/record.py); the switch port whose link the simulator took down is leaf01 port 3,
cabled to node-03's mlx5_0 port 1, at the time of the second perfquery run (DOWN).

Log lines are real wordings placed on these hosts (host names, addresses and times changed):
- NCCL's bootstrap line `NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:ADDR<0>` (NCCL's INFO output, as in
  tests/extract/test_nccl.py), which maps a peer address to its host;
- NCCL's completion error `NET/IB : Got completion from peer ADDR<PORT> with error 12, opcode 1, len 0,
  vendor err 129` (NVIDIA/nccl#733, https://github.com/NVIDIA/nccl/issues/733: "error 12 is a timeout. It
  means the NICs can't talk to each other");
- mlx5's port state change `mlx5_core BDF mlx5_0: Port: 1 Link DOWN` (drivers/net/ethernet/mellanox/mlx5;
  the INIT/ACTIVE forms of the same message are quoted in leptonai/gpud#1209).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

RECORDED = Path(__file__).parent / "recorded"
NODES = [f"node-0{i}" for i in range(1, 9)]
ADDR = {n: f"10.0.0.{10 + i}" for i, n in enumerate(NODES, 1)}  # node-01 -> 10.0.0.11
# The second perfquery run, after the simulator set the counters and unlinked the port: the fault's time.
DOWN = datetime.fromisoformat([line for line in (RECORDED / "perfquery-leaf01-p3.txt").read_text().splitlines()
                               if line[:1].isdigit()][-1])


def _py(t: datetime) -> str:
    """Python logging's stamp (the spec's `2026-11-02 10:03:07,123`)."""
    return t.strftime("%Y-%m-%d %H:%M:%S,000")


def _syslog(t: datetime) -> str:
    return f"{t:%b} {t.day:2d} {t:%H:%M:%S}"


def workload(nodes: list[str], sources: list[dict[str, Any]], down: datetime = DOWN) -> dict[str, Any]:
    ranks = {n: str(i) for i, n in enumerate(nodes)}
    return {
        "apiVersion": "firstfault/v1",
        "workload": {"id": "29", "scheduler": "static",
                     "window": {"start": (down - timedelta(minutes=10)).isoformat(),
                                "end": (down + timedelta(minutes=10)).isoformat()},
                     "nodes": nodes, "ranks": ranks, "terminal_state": "FAILED"},
        "sources": sources,
    }


FABRIC_SOURCE = {"kind": "fabric", "path": "fabric/ibnetdiscover.txt", "format": "ibnetdiscover"}
APP_SOURCE = {"kind": "application", "path": "nodes/{node}/nccl.log"}
KERNEL_SOURCE = {"kind": "kernel", "path": "nodes/{node}/kern.log"}
PERFQUERY_SOURCE = {"kind": "metrics", "path": "fabric/perfquery-leaf01-p3.txt", "format": "perfquery"}


def bootstrap(node: str, down: datetime = DOWN) -> str:
    return (f"{_py(down - timedelta(minutes=1))} INFO start\n"
            f"{node}:91:91 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:{ADDR[node]}<0>\n")


def completion_error(node: str, peer: str, after: int, down: datetime = DOWN) -> str:
    """`after` seconds after the fault."""
    return (f"{_py(down + timedelta(seconds=after))} INFO step\n"
            f"{node}:91:123 [0] transport/net_ib.cc:881 NCCL WARN NET/IB : Got completion from peer "
            f"{ADDR[peer]}<49577> with error 12, opcode 1, len 0, vendor err 129\n")


def link_down(node: str, iface: str = "mlx5_0: Port: 1 Link DOWN", down: datetime = DOWN) -> str:
    return f"{_syslog(down)} {node} kernel: [4242.000001] mlx5_core 0000:0c:00.0 {iface}\n"


def write(root: Path, wl: dict[str, Any], files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "workload.yaml").write_text(yaml.safe_dump(wl, sort_keys=False))
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def pairs_bundle(root: Path, pairs: list[tuple[str, str]], nodes: list[str], *, fabric: bool = True,
                 extra: dict[str, str] | None = None, sources: list[dict[str, Any]] | None = None,
                 down: datetime = DOWN, topology: str | None = None, topology_format: str = "ibnetdiscover") -> Path:
    """Each (reporter, peer) pair: the reporter's NCCL reports a retry-exceeded completion from the peer,
    seconds after `down`. `topology`: the fabric tool's output (default: the recorded ibnetdiscover)."""
    logs: dict[str, str] = {n: bootstrap(n, down) for n in nodes}
    for i, (a, b) in enumerate(pairs):
        logs[a] += completion_error(a, b, 5 + i, down)
    files = {f"nodes/{n}/nccl.log": text for n, text in logs.items()}
    srcs = [APP_SOURCE, *(sources or [])]
    if fabric:
        files["fabric/ibnetdiscover.txt"] = topology or (RECORDED / "ibnetdiscover.txt").read_text()
        srcs.append({**FABRIC_SOURCE, "format": topology_format})
    files.update(extra or {})
    return write(root, workload(nodes, srcs, down), files)
