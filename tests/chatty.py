"""Chatty evidence bundles for the fold (collect/fold.py): thousands of copies of a few lines, with the one
line that matters somewhere among them, each built to break one of the fold's rules.

Every builder returns the bundle directory and what its verdict must hold, decided from the construction:
the fold must find the same thing reading every line finds (tests/collect/test_fold.py,
tests/analysis/test_parallel.py). The noise lines follow real wordings: a dataloader's retry warning, NCCL's
socket retry (NCCL 2.18 net_socket.cc), the NVRM Xid line, the srun --label prefix.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from firstfault import yamlio

T0 = datetime(2026, 11, 2, 10, 0, 0, tzinfo=UTC)


@dataclass
class Chatty:
    path: Path
    expect: dict[str, object] = field(default_factory=dict)  # what the verdict must hold


def _workload(out: Path, sources: str, nodes: str = "[node-01]", ranks: str = "{node-01: 0-7}") -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\n"
        "workload:\n  id: '5150'\n  name: chatty\n  scheduler: slurm\n"
        "  window: {start: '2026-11-02T09:59:00Z', end: '2026-11-02T12:00:00Z'}\n"
        f"  nodes: {nodes}\n  ranks: {ranks}\n  timezone: UTC\n"
        f"sources:\n{sources}", encoding="utf-8")


def _central_syslog_workload(out: Path, names: list[str]) -> None:
    """A workload whose one source is a central syslog (rsyslog's `syslog/messages`) of these nodes, 8 ranks each."""
    _workload(out, "- {kind: syslog, path: 'syslog/messages'}\n", nodes="[" + ", ".join(names) + "]",
              ranks="{" + ", ".join(f"{n}: {8 * i}-{8 * i + 7}" for i, n in enumerate(names)) + "}")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def _bsd(t: datetime) -> str:
    return t.strftime("%b %e %H:%M:%S")


def _dataloader(rng: random.Random, t: datetime, i: int) -> str:
    return (f"{_iso(t)} WARNING [dataloader] Error fetching batch {i} from shard-{rng.randrange(100000):05d}.tar: "
            "ConnectionError: HTTPSConnectionPool(host='store.internal', port=443): Read timed out. (read timeout=30)")


def _nccl_retry(rng: random.Random, dev: int | None = None) -> str:
    d = rng.randrange(8) if dev is None else dev
    return (f"node-01:{41000 + rng.randrange(8)}:{41100 + rng.randrange(8)} [{d}] NCCL WARN NET/Socket : "
            "Call to connect returned Connection refused, retrying")


def _urllib3_retry(rng: random.Random, t: datetime) -> str:
    """urllib3's retry warning (connectionpool.py: "Retrying (%r) after connection broken by '%r': %s") for a
    dataset shard named by a UUID: its hex letters vary from copy to copy, not only its digits."""
    uuid = (f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-"
            f"{0x8000 | rng.getrandbits(14):04x}-{rng.getrandbits(48):012x}")
    return (f"{_iso(t)} WARNING urllib3.connectionpool: Retrying (Retry(total={rng.randrange(5)}, connect=None, "
            "read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool"
            "(host='store.internal', port=443): Read timed out. (read timeout=30)\")': "
            f"/datasets/{uuid}/shard-{rng.randrange(100000):05d}.tar")


def hex_ids_then_cuda_error(root: Path, before: int = 3000, after: int = 1500) -> Chatty:
    """noise_then_cuda_error with urllib3's retries for shards named by UUIDs (an unrecognized line whose hex
    letters vary: the shape masks them) among the NCCL retries, and a line of NCCL's that carries a 0x id."""
    out = root / "hex-ids-then-cuda-error"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    rng = random.Random(13)
    lines: list[str] = []
    t = T0

    def noise(i: int) -> str:
        k = i % 3
        if k == 0:
            return _urllib3_retry(rng, t)
        if k == 1:
            return _nccl_retry(rng)
        return (f"node-01:41003:{41100 + rng.randrange(8)} [{rng.randrange(8)}] NCCL INFO comm "
                f"0x{rng.getrandbits(40):x} rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0 - Init COMPLETE")

    for i in range(before):
        t += timedelta(milliseconds=7)
        lines.append(noise(i))
    fault_line = len(lines) + 2
    lines += [
        "Traceback (most recent call last):",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ]
    for i in range(before, before + after):
        t += timedelta(milliseconds=7)
        lines.append(noise(i))
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("app/rank-0.log", fault_line)})


def noise_then_cuda_error(root: Path, before: int = 3000, after: int = 2000) -> Chatty:
    """A rank's log of dataloader and NCCL retries, a CUDA error with its traceback among them, more noise."""
    out = root / "noise-then-cuda-error"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    rng = random.Random(11)
    lines: list[str] = []
    t = T0
    for i in range(before):
        t += timedelta(milliseconds=7)
        lines.append(_dataloader(rng, t, i) if i % 2 == 0 else _nccl_retry(rng))
    fault_line = len(lines) + 6  # the RuntimeError line, 1-based
    lines += [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 212, in <module>',
        "    loss = model(batch).loss",
        '  File "/workspace/model.py", line 88, in forward',
        "    out = self.attn(x)",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.",
    ]
    for i in range(before, before + after):
        t += timedelta(milliseconds=7)
        lines.append(_dataloader(rng, t, i) if i % 2 == 0 else _nccl_retry(rng))
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("app/rank-0.log", fault_line)})


def xid_behind_its_own_shape(root: Path, copies: int = 600) -> Chatty:
    """A kernel log of Xid 13 lines and, among them, one Xid 79 of the very same shape (digit for digit)."""
    out = root / "xid-behind-its-shape"
    _workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n")
    rng = random.Random(12)
    lines: list[str] = []
    t = T0
    at = copies // 2
    for i in range(copies):
        t += timedelta(milliseconds=900)
        xid = 79 if i == at else 13
        lines.append(f"{_bsd(t)} node-01 kernel: [{618000 + i}.{rng.randrange(1000000):06d}] NVRM: Xid "
                     f"(PCI:0000:3b:00): {xid}, pid={20000 + rng.randrange(9999)}, name=python3, Ch 00000008")
    (out / "nodes" / "node-01").mkdir(parents=True)
    (out / "nodes" / "node-01" / "kern.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("nodes/node-01/kern.log", at + 1), "xid79": True})


def _mlx5_cmd_err(rng: random.Random, t: datetime, host: str, uptime: int) -> str:
    """mlx5_core's failed firmware command (Linux drivers/net/ethernet/mellanox/mlx5/core/cmd.c, mlx5_cmd_out_err:
    "%s(0x%x) op_mod(0x%x) failed, status %s(0x%x), syndrome (0x%x), err(%d)"), the line bench/gen_bundle.py's
    kernel noise repeats on every node: no extractor reads it, the unrecognized lines group it."""
    return (f"{_bsd(t)} {host} kernel: [{uptime}.{rng.randrange(1000000):06d}] mlx5_core 0000:47:00.0: "
            f"mlx5_cmd_out_err:838:(pid {268000 + rng.randrange(999)}): ACCESS_REG(0x805) op_mod(0x1) failed, "
            "status bad parameter(0x3), syndrome (0x15c356), err(-22)")


def kernel_noise_on_every_node(root: Path, nodes: int = 4, copies: int = 400) -> Chatty:
    """Each node's kernel log: a block of Xid 13 (events: per file, past the store's cap), then the same mlx5 noise
    (bench shape b, issue 27: what the fold learns of it in one file holds in the next), a session line without
    a prefilter word after every fourth. Two files break the
    carrying: node-03's first Xid line is an Xid 79 of the Xid 13 lines' shape (read in full, found), and the last
    node's log holds node-01's lines (a collector's copy: the host its header names is not the file's node)."""
    names = [f"node-{i + 1:02d}" for i in range(nodes)]
    out = root / "kernel-noise-on-every-node"
    _workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n", nodes="[" + ", ".join(names) + "]",
              ranks="{" + ", ".join(f"{n}: {8 * i}-{8 * i + 7}" for i, n in enumerate(names)) + "}")
    rng = random.Random(37)
    for i, node in enumerate(names):
        host = names[0] if i == nodes - 1 else node
        t = T0 + timedelta(milliseconds=37 * i)
        lines: list[str] = []
        for j in range(40):
            t += timedelta(milliseconds=900)
            xid = 79 if (node == "node-03" and j == 0) else 13
            lines.append(f"{_bsd(t)} {host} kernel: [{618000 + j}.{rng.randrange(1000000):06d}] NVRM: Xid "
                         f"(PCI:0000:3b:00): {xid}, pid={20000 + rng.randrange(9999)}, name=python3, Ch 00000008")
        for j in range(copies):
            t += timedelta(milliseconds=300)
            lines.append(_mlx5_cmd_err(rng, t, host, 618100 + j // 4))
            if j % 4 == 3:  # systemd-logind's "New session %s of user %s." (src/login/logind-session.c): no word
                lines.append(f"{_bsd(t)} {host} systemd-logind[1344]: New session {4500 + j} of user root.")
        (out / "nodes" / node).mkdir(parents=True)
        (out / "nodes" / node / "kern.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("nodes/node-03/kern.log", 1), "xid79": True})


def aer_records_on_every_node(root: Path, nodes: int = 3, records: int = 300) -> Chatty:
    """Each node's kernel log: a root port's corrected AER record every few seconds (the kernel's four lines, as in
    GSConnect#1052 / pop-os/pop#751, Linux drivers/pci/pcie/aer.c; bench/gen_bundle.py's KERN_AER_CORRECTED), a
    session line without a prefilter word between records. Its `PCIe Bus Error` line is an event (pcie.aer) the
    store keeps 32 times a file with their own lines and times, and counts past that: the copies below the cap give
    the events of the ones read but for their line, time and text (LineFold.copy_events). One GPU falls off the bus
    on the last node."""
    names = [f"node-{i + 1:02d}" for i in range(nodes)]
    out = root / "aer-records-on-every-node"
    _workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n", nodes="[" + ", ".join(names) + "]",
              ranks="{" + ", ".join(f"{n}: {8 * i}-{8 * i + 7}" for i, n in enumerate(names)) + "}")
    rng = random.Random(44)
    fault = 0
    for i, node in enumerate(names):
        t = T0 + timedelta(milliseconds=53 * i)
        up = 77000 + 1000 * i
        lines: list[str] = []
        for j in range(records):
            t += timedelta(milliseconds=2900 + rng.randrange(200))
            k = f"{_bsd(t)} {node} kernel: [{up + 3 * j}.{rng.randrange(1000000):06d}] pcieport 0000:00:1c.5: AER:"
            lines += [f"{k} Corrected error received: 0000:00:1c.5",
                      f"{k} PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
                      f"{k}   device [8086:9d15] error status/mask=00000001/00002000",
                      f"{k}    [ 0] RxErr                  (First)",
                      f"{_bsd(t)} {node} systemd-logind[1344]: New session {4500 + j} of user root."]
            if i == nodes - 1 and j == records - 20:
                lines.append(f"{_bsd(t)} {node} kernel: [{up + 3 * j}.000100] NVRM: Xid (PCI:0000:3b:00): 79, "
                             "pid=1912, name=python3, GPU has fallen off the bus.")
                fault = len(lines)
        (out / "nodes" / node).mkdir(parents=True)
        (out / "nodes" / node / "kern.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": (f"nodes/{names[-1]}/kern.log", fault), "xid79": True})


def xid_pids_on_every_node(root: Path, nodes: int = 3, copies: int = 60) -> Chatty:
    """The near miss of aer_records_on_every_node: an Xid 13 line (NVRM's `Xid (PCI:%s): %d, pid=%s, name=%s, %s`,
    Linux's open GPU kernel modules) whose event holds the pid it names, which the signature does not. node-01's
    pids differ line by line (a lesson of wide pid ranges for the next files); node-02 and node-03 hold one pid for
    their first half and then others within node-01's ranges: a copy below the cap whose pid differs from those of
    the copies read in its file is read, not taken to give their events."""
    names = [f"node-{i + 1:02d}" for i in range(nodes)]
    out = root / "xid-pids-on-every-node"
    _workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n", nodes="[" + ", ".join(names) + "]",
              ranks="{" + ", ".join(f"{n}: {8 * i}-{8 * i + 7}" for i, n in enumerate(names)) + "}")
    rng = random.Random(45)
    for i, node in enumerate(names):
        t = T0 + timedelta(milliseconds=41 * i)
        lines: list[str] = []
        for j in range(copies):
            t += timedelta(milliseconds=700)
            pid = 20000 + rng.randrange(9999) if i == 0 or j >= copies // 2 else 24444
            lines.append(f"{_bsd(t)} {node} kernel: [{618000 + j}.{rng.randrange(1000000):06d}] NVRM: Xid "
                         f"(PCI:0000:3b:00): 13, pid={pid}, name=python3, Ch 00000008")
            lines.append(f"{_bsd(t)} {node} systemd-logind[1344]: New session {4500 + j} of user root.")
        (out / "nodes" / node).mkdir(parents=True)
        (out / "nodes" / node / "kern.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"min_folded": 0})


def many_hosts_in_one_syslog(root: Path, hosts: int = 48, rounds: int = 40) -> Chatty:
    """One central syslog (rsyslog's: every host's kernel lines in one file, issue 27's n1 shape) where each of
    `hosts` allocation nodes prints the same mlx5 noise (an unrecognized line whose place names the host the
    header names), interleaved, and one GPU falls off the bus (Xid 79) halfway. Near misses: `node-50`, whose
    digits lie among the others but which is no node of the allocation (its header is not peeled: another
    outcome), prints the same noise; and each host's first line of a round of its own is a real error of the
    same shape but another word (`ACCESS_REG` failed with another status: another template)."""
    names = [f"node-{10 + i:02d}" for i in range(hosts + 1) if 10 + i != 50]
    out = root / "many-hosts-in-one-syslog"
    _central_syslog_workload(out, names)
    rng = random.Random(38)
    t = T0
    lines: list[str] = []
    fault_line = 0
    for r in range(rounds):
        for host in [*names, "node-50"]:
            t += timedelta(milliseconds=7)
            lines.append(_mlx5_cmd_err(rng, t, host, 618100 + r))
            if r == rounds // 2 and host == names[len(names) // 3]:
                lines.append(f"{_bsd(t)} {host} kernel: [{618100 + r}.000100] NVRM: Xid (PCI:0000:3b:00): 79, "
                             "pid=1912, name=python3, GPU has fallen off the bus.")
                fault_line = len(lines)
            if r == 7 and host.endswith("3"):
                lines.append(_mlx5_cmd_err(rng, t, host, 618100 + r).replace("bad parameter(0x3)",
                                                                            "bad resource(0x5)"))
    (out / "syslog").mkdir(parents=True)
    (out / "syslog" / "messages").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("syslog/messages", fault_line), "xid79": True, "min_folded": 1000})


def pci_noise_in_one_syslog(root: Path, hosts: int = 24, rounds: int = 40) -> Chatty:
    """One central syslog (issue 27's shape i) whose noise names a PCI address on a bus of its own line by line
    (mlx5's failed command and the AER port's corrected error, on any of 256 buses of any host: memo.line_shape
    masks the address's hex letters, so that each is one shape), interleaved, and one GPU falls off the bus. Near
    miss: one host's amdgpu reports correctable XGMI errors on two GPUs whose addresses differ in their hex letters
    alone (`0000:9d:00.0`, `0000:dd:00.0`, one shape): the address is the event's device, so they are two GPUs'."""
    names = [f"node-{10 + i:02d}" for i in range(hosts)]
    out = root / "pci-noise-in-one-syslog"
    _central_syslog_workload(out, names)
    rng = random.Random(39)
    t = T0
    lines: list[str] = []
    fault_line = 0
    for r in range(rounds):
        for host in names:
            t += timedelta(milliseconds=7)
            bus = rng.randrange(256)
            if rng.random() < 0.5:
                line = _mlx5_cmd_err(rng, t, host, 618100 + r).replace("0000:47:00.0", f"0000:{bus:02x}:00.0")
            else:  # Linux drivers/pci/pcie/aer.c: "AER: %s%s error message received from %s" (corrected, older)
                line = (f"{_bsd(t)} {host} kernel: [{618100 + r}.{rng.randrange(1000000):06d}] pcieport "
                        f"0000:{bus:02x}:01.0: AER: Corrected error received: 0000:{bus:02x}:00.0")
            lines.append(line)
            if host == names[5] and r % 2 == 0:
                # ROCm/ROCm#4021's XGMI count (tests/extract/test_accel.py), on two GPUs of one host
                gpu = "9d" if r % 4 == 0 else "dd"
                lines.append(f"{_bsd(t)} {host} kernel: [{618100 + r}.000200] amdgpu 0000:{gpu}:00.0: socket: 6, "
                             f"die: 1, {1000 + rng.randrange(999)} new correctable hardware errors detected in "
                             "xgmi_wafl block")
            if r == rounds // 2 and host == names[len(names) // 3]:
                lines.append(f"{_bsd(t)} {host} kernel: [{618100 + r}.000100] NVRM: Xid (PCI:0000:3b:00): 79, "
                             "pid=1912, name=python3, GPU has fallen off the bus.")
                fault_line = len(lines)
    (out / "syslog").mkdir(parents=True)
    (out / "syslog" / "messages").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("syslog/messages", fault_line), "xid79": True, "min_folded": 300})


def _edac_ce(t: datetime, host: str, uptime: int, mc: int, page: str) -> str:
    """EDAC's corrected memory error (Linux drivers/edac/edac_mc.c, edac_raw_mc_handle_error: `EDAC MC%d: %d %s
    error%s %s on %s (%s page:0x%lx offset:0x%lx grain:%d syndrome:0x%lx ...)`), read by the machine-check
    extractor (an event per host), its page a hex id."""
    return (f"{_bsd(t)} {host} kernel: [{uptime}.000300] EDAC MC{mc}: 1 CE memory read error on "
            f"CPU_SrcID#{mc}_Ha#0_Chan#4_DIMM#0 (channel:4 slot:0 page:0x{page} offset:0x0 grain:32 syndrome:0x0)")


def hosts_folding_across_reads(root: Path, hosts: int = 40, rounds: int = 80) -> Chatty:
    """One central syslog (issue 27's shape i) whose copies must fold across the lines read in full among them:
    each host's mlx5 noise (read by its body alone: free of the per-stream state), every other round its EDAC
    corrected error (read with its stream's state), and one host's Xid 13 on two GPUs whose bus addresses differ in
    one digit (`3b`, `5b`: the bytes that vary are the event's device, two GPUs' events, a near miss of a host's
    digits). Lines read in full move the state late (EDAC lines whose page has another length: new shapes), and the
    clock goes back: at round 60 by 50 minutes (rsyslog's file after the hosts' clocks were set back), and at round 71
    one host's line lies 5 seconds before any other, which is then its group's earliest line (a copy earlier than
    every copy read to its variant is read). Two EDAC pages spell the literal `EDAC ` in upper-case hex (as no
    kernel prints them: lines whose hits differ from their shape's)."""
    names = [f"node-{10 + i:02d}" for i in range(hosts)]
    out = root / "hosts-folding-across-reads"
    _central_syslog_workload(out, names)
    rng = random.Random(40)
    t = T0 + timedelta(hours=1)
    lines: list[str] = []
    fault_line = earliest = 0
    for r in range(rounds):
        if r == 60:
            t -= timedelta(minutes=50)
        for k, host in enumerate(names):
            t += timedelta(milliseconds=7)
            at = t - timedelta(seconds=5) if (r == 71 and k == 7) else t
            lines.append(_mlx5_cmd_err(rng, at, host, 618100 + r))
            if at != t:
                earliest = len(lines)
            if r % 2 == 0:
                page = f"{rng.randrange(0x1000, 0x10000):x}"
                if r in (50, 64) and k == 9:
                    page = f"{rng.randrange(0x10000, 0x100000):x}"  # another length: a new shape, an epoch
                elif r in (30, 72) and k == 11:
                    page = "EDAC"
                lines.append(_edac_ce(t, host, 618100 + r, k % 4, page))
            if k == 3:
                for bus in ("3b", "5b"):
                    xid = 79 if (r == 75 and bus == "5b") else 13
                    lines.append(f"{_bsd(t)} {host} kernel: [{618100 + r}.000400] NVRM: Xid (PCI:0000:{bus}:00): "
                                 f"{xid}, pid={20000 + rng.randrange(9999)}, name=python3, Ch 00000008")
                    if xid == 79:
                        fault_line = len(lines)
    (out / "syslog").mkdir(parents=True)
    (out / "syslog" / "messages").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("syslog/messages", fault_line), "xid79": True,
                        "unrecognized_line": ("syslog/messages", earliest), "min_folded": 2000})


def mpirun_output_whose_stamps_stop_reading(root: Path, ranks: int = 64, rounds: int = 1400) -> Chatty:
    """One `mpirun --tag-output` file (issue 27's shape j): behind each rank's tag, UCX's warning stamped with its
    Unix time (`[1733300000.993108] [host:pid:tid]`, read in C where the zone has one offset), torch's unstamped
    UserWarning (a copy's time is the stamp before it, walked back to in C) and step lines of no stamp. Halfway the
    Unix time grows an eleventh digit, which no form reads: from there on a copy's walk back finds no stamp back to
    the line read last and takes that line's time (once per walk: the C walk's memo). Near miss: early on one UCX
    stamp steps 1,000 s back (a clock set back): the UserWarning after it is its group's earliest line by time, and
    must be read, not counted."""
    out = root / "mpirun-output-whose-stamps-stop-reading"
    _workload(out, "- {kind: application, path: 'mpirun.out'}\n", ranks=f"{{node-01: 0-{ranks - 1}}}")
    rng = random.Random(40)
    lines: list[str] = []
    early = 0
    epoch = 1762077600  # 2025-11-02T10:00:00Z
    for r in range(rounds):
        for _ in range(3):
            rank = rng.randrange(ranks)
            k = rng.random()
            if k < 0.4:
                sec = epoch + r if r < rounds // 2 else 10 * epoch + r
                if r == rounds // 5 and not early:
                    sec -= 1000
                # bench/shapes.py's gen_mpirun_ranks: UCX's ib_iface.c warning (ucx/src/uct/ib/base/ib_iface.c)
                lines.append(f"[1,{rank}]<stderr>:[{sec}.{rng.randrange(10**6):06d}] [gpu-{rank // 8:04d}:"
                             f"{rng.randrange(10000, 99999)}:0]      ib_iface.c:{rng.randrange(900, 1100)} UCX  WARN  "
                             f"failed to get port {rng.randrange(1, 3)} state on mlx5_{rng.randrange(8)}: Connection "
                             "timed out, retrying")
                if r == rounds // 5 and not early:
                    lines.append(f"[1,{rank}]<stderr>:/opt/conda/lib/python3.11/site-packages/torch/nn/modules/"
                                 "module.py:1859: UserWarning: error-prone path taken for module 2715")
                    early = len(lines)
            elif k < 0.7:
                lines.append(f"[1,{rank}]<stderr>:/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py:"
                             f"{rng.randrange(1000, 2000)}: UserWarning: error-prone path taken for module "
                             f"{rng.randrange(9999)}")
            else:
                lines.append(f"[1,{rank}]<stdout>:iter {r} | loss {rng.random() * 3:.5f} | grad_norm "
                             f"{rng.random():.4f} | {rng.randrange(100, 200)} TFLOPS")
    lines.append("[1,7]<stderr>:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a "
                 "total capacity of 79.15 GiB of which 1.02 GiB is free.")
    (out / "mpirun.out").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"unrecognized_line": ("mpirun.out", early), "min_folded": 1500})


def many_ranks_in_one_mpirun_output(root: Path, ranks: int = 40, rounds: int = 60) -> Chatty:
    """One `mpirun --tag-output` file (issue 27's n3 shape): every rank's NCCL retries behind `[1,N]<stderr>:`
    (events of the rank the tag names, each rank's past the store's cap after 32), interleaved; then rank 5 alone
    reports a remote error. Near miss: rank 13's retries name device 3 where the others name 0 (another event
    signature: the device is no part the tag names)."""
    out = root / "many-ranks-in-one-mpirun-output"
    _workload(out, "- {kind: application, path: 'mpirun.out'}\n", ranks=f"{{node-01: 0-{ranks - 1}}}")
    rng = random.Random(39)
    lines: list[str] = []
    fault_line = 0
    for r in range(rounds):
        for rank in range(ranks):
            lines.append(f"[1,{rank}]<stderr>:" + _nccl_retry(rng, dev=3 if rank == 13 else 0))
        if r == rounds // 2:
            lines.append("[1,5]<stderr>:node-01:41005:41105 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
                         "completion from peer 10.0.0.2<41565> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
            fault_line = len(lines)
    (out / "mpirun.out").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("mpirun.out", fault_line), "rank": 5, "min_folded": 900})


def srun_labelled_ranks(root: Path, rounds: int = 500) -> Chatty:
    """One srun --label file for 8 ranks: every rank's NCCL retries (the rank is in the label's digits), then
    rank 5 alone reports a remote error, then more retries."""
    out = root / "srun-labelled"
    _workload(out, "- {kind: application, path: 'slurm-5150.out', rank_prefix: srun}\n")
    rng = random.Random(13)
    lines: list[str] = []
    for r in range(rounds):
        for rank in range(8):
            lines.append(f"{rank}: " + _nccl_retry(rng, dev=rank))
        if r == rounds // 2:
            lines.append("5: node-01:41005:41105 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
                         "from peer 10.0.0.2<41565> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
            fault_line = len(lines)
    (out / "slurm-5150.out").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("slurm-5150.out", fault_line), "rank": 5})


def count_of_zero(root: Path, copies: int = 600) -> Chatty:
    """`errors=0` (benign) hundreds of times, then `errors=7` of the same shape once: the one to list."""
    out = root / "count-of-zero"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    rng = random.Random(14)
    lines: list[str] = []
    t = T0
    at = copies * 2 // 3
    for i in range(copies):
        t += timedelta(milliseconds=250)
        n = 7 if i == at else 0
        lines.append(f"{_iso(t)} WARNING [health] link check {i % 10} done: errors={n} drops={rng.randrange(90) + 10}")
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"unrecognized_line": ("app/rank-0.log", at + 1)})


def unstamped_burst(root: Path, copies: int = 1500) -> Chatty:
    """A stamped line, unstamped NCCL retries, another stamped line, a thousand more retries, then an unstamped
    NCCL error: its time is the second stamped line's, found by walking back over every copy the fold did not
    read (the walk's own limit is 400 lines)."""
    out = root / "unstamped-burst"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    rng = random.Random(15)
    stamp = T0 + timedelta(minutes=3, seconds=7, milliseconds=250)
    lines = [f"{_iso(stamp)} INFO [trainer] step 1200 started"]
    for i in range(copies):
        lines.append(_nccl_retry(rng))
        if i == copies // 3:
            lines.append(f"{_iso(stamp + timedelta(seconds=1))} INFO [trainer] step 1201 started")
    lines.append("node-01:41002:41106 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
                 "10.0.0.2<41565> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"evidence_line": ("app/rank-0.log", len(lines)),
                        "evidence_time": (stamp + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")})


def clock_steps_back(root: Path, copies: int = 1500) -> Chatty:
    """An unrecognized error repeated every 100 ms from 10:10:05, and one copy, late in the file, stamped 10:10:01.5
    (the collector's clock stepped back): every digit of it lies within the values its position had, but it is the
    group's earliest line by time, so it must be read, not counted."""
    out = root / "clock-steps-back"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    t = T0 + timedelta(minutes=10, seconds=5)
    lines: list[str] = []
    early = 0
    for i in range(copies):
        t += timedelta(milliseconds=100)
        if i == copies * 2 // 3:
            lines.append(f"{_iso(T0 + timedelta(minutes=10, seconds=1, milliseconds=500))} ERROR [telemetry] export "
                         f"to collector returned status 13, dropping batch {i % 40:02d}")
            early = len(lines)
        lines.append(f"{_iso(t)} ERROR [telemetry] export to collector returned status 13, dropping batch {i % 40:02d}")
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"unrecognized_line": ("app/rank-0.log", early)})


# DDP's warning (torch/csrc/distributed/c10d/reducer.cpp, as PyTorch 2.x prints it through c10's warning
# handler): the word `error` makes it error-looking, no extractor reads it, and it carries no stamp of its own.
GRAD_STRIDES = (
    "[W reducer.cpp:1389] Warning: Grad strides do not match bucket view strides. This may indicate grad was not "
    "created according to the gradient layout contract, or that the param's strides changed since DDP was "
    "constructed.  This is not an error, but may impair performance.\n"
    "grad.sizes() = [{a}, {b}], strides() = [{b}, 1]\n"
    "bucket_view.sizes() = [{a}, {b}], strides() = [{b}, 1] (function operator())")


def unstamped_warning_clock_steps_back(root: Path, copies: int = 1500) -> Chatty:
    """DDP's unstamped grad-strides warning after each stamped step line: a copy's time is the step line's before
    it. The first copies come before any stamp (no time: sorted after every time), then the steps count up from
    10:20:00, until, late in the file, one step line is stamped 10:19:30 (the clock stepped back): the warning
    after it is the group's earliest line by time, though its bytes are those of every other copy, so it must be
    read, not counted."""
    out = root / "unstamped-warning-clock-steps-back"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    rng = random.Random(17)
    t = T0 + timedelta(minutes=20)
    lines: list[str] = []
    early = 0

    def warning() -> None:
        a, b = rng.choice((1024, 2048, 4096)), rng.choice((1024, 4096, 14336))
        lines.extend(GRAD_STRIDES.format(a=a, b=b).split("\n"))

    for _ in range(20):
        warning()
    for i in range(copies):
        t += timedelta(milliseconds=100)
        if i == copies * 2 // 3:
            lines.append(f"{_iso(T0 + timedelta(minutes=19, seconds=30))} INFO [trainer] step {9000 + i} started")
            early = len(lines) + 1
            warning()
        lines.append(f"{_iso(t)} INFO [trainer] step {10000 + i} started")
        warning()
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"unrecognized_line": ("app/rank-0.log", early)})


def steps_and_warnings(root: Path, ops: list[tuple[str, int]], filler: int = 0) -> Path:
    """DDP's unstamped grad-strides warning after each line of random runs (`ops`: (kind, k), each line repeated
    k * 3 + 1 times so that it folds): stamped step lines (zone-less ISO) going forward ("step") or back
    ("back": the clock stepped back), glog-stamped lines behind a rank prefix ("glog"; "wglog": `[WW`, a near
    miss that reads as no stamp), syslog-stamped lines ("syslog"), DeepSpeed's bracketed ISO stamp ("ds") and
    lines of no stamp ("none"); `filler` lines of no prefilter word before each warning (a chunk of them stays on
    the prefilter's sparse loop). The bundle's directory; the verdict is whatever reading every line gives."""
    rng = random.Random(len(ops))
    t = T0 + timedelta(minutes=20)
    lines: list[str] = []
    for op, k in ops:
        for _ in range(1 + k * 3):
            if op == "step":
                t += timedelta(milliseconds=37 * (k + 1))
                lines.append(f"{_iso(t)} INFO [trainer] step {rng.randrange(10**5)} started")
            elif op == "back":
                t -= timedelta(seconds=k + 1)
                lines.append(f"{_iso(t)} INFO [trainer] step {rng.randrange(10**5)} started")
            elif op == "glog":
                lines.append(f"[rank0]:[W1102 10:2{k}:{rng.randrange(60):02d}.{rng.randrange(10**9):09d} "
                             "ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 0] using GPU 0 to perform barrier")
            elif op == "wglog":  # shapes.py's shape c writes its barrier line so: no stamp form reads it
                lines.append(f"[rank0]:[WW1102 10:2{k}:{rng.randrange(60):02d}.{rng.randrange(10**6):06d} "
                             "ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank 0] using GPU 0 to perform barrier")
            elif op == "syslog":
                lines.append(f"Nov  2 10:{20 + k}:{rng.randrange(60):02d} node-01 trainer[311]: step "
                             f"{rng.randrange(10**5)} started")
            elif op == "ds":
                lines.append(f"[2026-11-02 10:{20 + k}:{rng.randrange(60):02d},{rng.randrange(1000):03d}] [WARNING] "
                             f"[stage3.py:1850:step] {rng.randrange(1, 9)} pytorch allocator cache flushes since last "
                             "step. this happens when there is high memory pressure")
            elif op == "none":
                lines.append(f"loss scale {rng.randrange(1, 9)}.0")
            lines.extend(f"throughput {rng.randrange(100, 999)} samples/s" for _ in range(filler))
            a, b = rng.choice((1024, 2048)), rng.choice((1024, 4096))
            lines.extend(GRAD_STRIDES.format(a=a, b=b).split("\n"))
    out = root / "steps-and-warnings"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def two_ranks_and_a_kernel(root: Path) -> Chatty:
    """Three files (for the parallel reader): two ranks' chatty logs, one with the CUDA error, and the node's
    kernel log of Xid 13 copies with the one Xid 79 among them."""
    out = root / "two-ranks-and-a-kernel"
    _workload(out, "- {kind: kernel, path: 'nodes/{node}/kern.log'}\n"
                   "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-1}")
    one = noise_then_cuda_error(root / "parts")
    xid = xid_behind_its_own_shape(root / "parts")
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_bytes((one.path / "app" / "rank-0.log").read_bytes())
    rng = random.Random(16)
    t = T0
    lines = []
    for i in range(4000):
        t += timedelta(milliseconds=5)
        lines.append(_dataloader(rng, t, i) if i % 3 else _nccl_retry(rng))
    (out / "app" / "rank-1.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "nodes" / "node-01").mkdir(parents=True)
    (out / "nodes" / "node-01" / "kern.log").write_bytes((xid.path / "nodes" / "node-01" / "kern.log").read_bytes())
    return Chatty(out, {"evidence_line": xid.expect["evidence_line"], "xid79": True})


def what_after_terminate(root: Path, copies: int = 800) -> Chatty:
    """`what():` lines printed again and again with no terminate before them (unrecognized), then the line
    `terminate called after throwing an instance of ...`: the `what():` right after it is that exception's
    message, read with the state the terminate line left, not counted as one more copy."""
    out = root / "what-after-terminate"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    lines: list[str] = []
    at = copies // 2
    t = T0
    for i in range(copies):
        # Every line stamped by the log collector (its stamp orders the copies: collect/fold.py folds an
        # unrecognized line's copies only then).
        t += timedelta(milliseconds=10)
        if i == at:
            lines.append(f"{_iso(t)} terminate called after throwing an instance of 'c10::DistBackendError'")
            fault_line = len(lines) + 1
        # The counters cycle: every digit value the line after the terminate holds was read, and folded, before.
        lines.append(f"{_iso(t)}   what():  [PG ID 0 PG GUID 0(default_pg) Rank 0] Error: request {1000 + i % 64} "
                     f"failed with code 1 after {2000 + i * 7 % 100} ms")
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # After the terminate the copies read to other outcomes for a while (the state it left): the shape is then
    # read line by line, so only the copies before it fold.
    return Chatty(out, {"evidence_line": ("app/rank-0.log", fault_line), "min_folded": copies // 3})


def not_utf8(root: Path, copies: int = 600) -> Chatty:
    """Chatty lines with a Latin-1 byte (a file written by a tool that is not UTF-8): every copy counts among the
    file's lines that are not valid UTF-8, so none is folded."""
    out = root / "not-utf8"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    t = T0
    lines: list[bytes] = []
    for i in range(copies):
        t += timedelta(milliseconds=100)
        lines.append(f"{_iso(t)} ERROR [io] Fehler beim Lesen von Datei {1000 + i}: ".encode() + "Zugriff verweigert"
                     .replace("u", "\u00fc", 1).encode("latin-1"))
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_bytes(b"\n".join(lines) + b"\n")
    return Chatty(out, {"bad_utf8": copies, "min_folded": 0})


def _corpus_lines(roots: list[Path], kind: str) -> list[str]:
    """The lines of the corpora's log files of one source kind (as their workload.yaml declares them): a copy of
    what one read of them gave in this process (the corpora hold some 1,450 workload.yaml files; each test that draws
    from them read and parsed them all again, about 3 s a draw)."""
    return list(_corpus_lines_read(tuple(roots), kind))


@functools.lru_cache(maxsize=8)
def _corpus_lines_read(roots: tuple[Path, ...], kind: str) -> tuple[str, ...]:
    out: list[str] = []
    for wl in sorted(p for root in roots for p in root.glob("*/workload.yaml")):
        spec = yamlio.load(wl.read_text(encoding="utf-8"))  # the tool's own loader (libyaml's, where built)
        for src in spec.get("sources", []):
            if src.get("kind") != kind:
                continue
            pattern = src["path"].replace("{node}", "*").replace("{rank}", "*")
            for f in sorted(wl.parent.glob(pattern)):
                if f.is_file():
                    out.extend(f.read_text(encoding="utf-8", errors="replace").splitlines())
    return tuple(ln for ln in out if ln.strip())


def _mutate(rng: random.Random, line: str, p: float, hex_ids: bool = False) -> str:
    """The line with each digit replaced by a random one with probability p (lengths kept), but for the stamp it
    starts with, if any, whose last digit of the seconds and fraction only change: a log's stamps are times (no
    hour 43, no second 84). With `hex_ids`, each hex digit of a hex id (memo.line_shape's: 8 or more hex digits
    as one token, `0x...`, a UUID) is replaced by a random hex digit of its case with probability p too."""
    head = _STAMP_HEAD.match(line)
    keep = head.end() if head else 0
    body = line[keep:]
    if hex_ids:
        body = _HEX_ID.sub(lambda m: "".join(
            rng.choice("0123456789ABCDEF" if ch.isupper() else "0123456789abcdef") if ch in _HEXDIGITS
            and rng.random() < p else ch for ch in m.group()), body)
    return line[:keep] + "".join(rng.choice("0123456789") if ch.isdigit() and rng.random() < p else ch
                                 for ch in body)


_HEXDIGITS = frozenset("0123456789abcdefABCDEF")
_HEX_ID = re.compile(r"(?<![\w\x80-\U0010ffff])(?:0x[0-9a-fA-F]+|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
                     r"|[0-9a-fA-F]{8,})(?![\w\x80-\U0010ffff])", re.ASCII)


# A leading ISO or syslog stamp to its tens of seconds (what _mutate leaves as it is: any other digit of it
# may change and it stays a time).
_STAMP_HEAD = re.compile(r"^(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d)")


def from_corpus(root: Path, corpora: list[Path], kind: str, seed: int, chatty_lines: int = 12,
                copies: int = 250, singles: int = 400, hex_ids: bool = False, nodes: int = 1) -> Chatty:
    """A chatty file made of real lines: `chatty_lines` lines of the corpora repeated `copies` times each, their
    digits changed at random (none, a few, or most: each line its own rate), interleaved with `singles` other
    corpus lines in their order. What the verdict must be is what reading every line gives. With `nodes` > 1
    (kernel and syslog), each node's file holds the same chatty lines, their digits changed anew, among its own
    other lines: what the fold learns in one file is taught to the next (collect/fold.py's Lessons)."""
    lines = _corpus_lines(corpora, kind)
    rng = random.Random(seed)
    noisy = [(rng.choice(lines), rng.choice((0.0, 0.05, 0.3, 0.9))) for _ in range(chatty_lines)]
    names = [f"node-{i + 1:02d}" for i in range(nodes)]
    d = root / f"corpus-{kind}-{seed}{'-hex' if hex_ids else ''}{f'-{nodes}' if nodes > 1 else ''}"
    path = {"application": "app/rank-0.log", "kernel": "nodes/node-01/kern.log", "syslog": "nodes/node-01/syslog"}[kind]
    _workload(d, f"- {{kind: {kind}, path: '{path.replace('0.log', '{rank}.log').replace('node-01', '{node}')}'}}\n",
              nodes="[" + ", ".join(names) + "]",
              ranks="{" + ", ".join(f"{n}: {i}-{i}" for i, n in enumerate(names)) + "}")
    for node in names:
        start = rng.randrange(max(1, len(lines) - singles))
        others = lines[start:start + singles]
        pool = [i for i in range(chatty_lines) for _ in range(copies)]
        rng.shuffle(pool)
        step = max(1, len(pool) // max(1, len(others)))
        out: list[str] = []
        for n, i in enumerate(pool):
            if n % step == 0 and others:
                out.append(others.pop(0))
            line, p = noisy[i]
            out.append(_mutate(rng, line, p, hex_ids))
        out.extend(others)
        file = d / path.replace("node-01", node)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("\n".join(out) + "\n", encoding="utf-8")
    return Chatty(d, {"min_folded": 0})


def repeated_traceback(root: Path, copies: int = 400) -> Chatty:
    """A worker's retry warning, then its traceback, hundreds of times: a record followed across lines (header,
    frames, exception) whose lines are each claimed or read with the state the lines before it left."""
    out = root / "repeated-traceback"
    _workload(out, "- {kind: application, path: 'app/rank-{rank}.log'}\n", ranks="{node-01: 0-0}")
    rng = random.Random(17)
    t = T0
    lines: list[str] = []
    for i in range(copies):
        t += timedelta(milliseconds=137)
        lines += [f"{_iso(t)} WARNING [worker] batch {1000 + i} failed, retrying",
                  "Traceback (most recent call last):",
                  f'  File "/workspace/data.py", line {100 + rng.randrange(9)}, in __getitem__',
                  "    blob = self.store.get(key)",
                  f'  File "/usr/lib/python3/dist-packages/store.py", line {300 + rng.randrange(50)}, in get',
                  "    raise TimeoutError(key)",
                  f"TimeoutError: shard-{rng.randrange(100000):05d}"]
    (out / "app").mkdir()
    (out / "app" / "rank-0.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Chatty(out, {"min_folded": 0})


def count_in(mp: Any, module: Any, name: str, tally: Callable[[Any], int]) -> list[int]:
    """Wrap `module.name` (a C loop of the fold: `_fold_run`, `_fold_hits`, `_copy_time`) with `mp` (a
    MonkeyPatch) so that each call adds tally(its result) to the one-item list returned: how much it did, so that
    a test comparing bytes can also show the C path was taken."""
    real, done = getattr(module, name), [0]

    def wrapped(*args: Any) -> Any:
        out = real(*args)
        done[0] += tally(out)
        return out

    mp.setattr(module, name, wrapped)
    return done
