"""Slurm drain: `scontrol update nodename=N state=drain reason="firstfault: <category> <verdict id>"`.

Node states come from `sinfo -a -h -N` (one line per node and partition,
hidden partitions included), read once per decision under the ledger's lock.
Draining lets running jobs finish (the node shows `draining`, then
`drained`); an operator brings it back with `scontrol update nodename=N
state=resume`.
"""

from __future__ import annotations

import shlex
import subprocess

from firstfault.actions.policy import ActionError, Inventory, NodeState

# sinfo's long state names (%T) that mean "not taking jobs", and the flag
# suffixes it appends (`*` not responding, `~` powered off, `#` powering up,
# `!` powering down, `%` powered down, `$` maintenance reservation, `@` reboot
# pending, `^` reboot issued, `-` planned by the backfill scheduler).
_OUT = frozenset({"drain", "drained", "draining", "down", "fail", "failing", "maint", "inval", "unknown", "unk",
                  "future", "reboot_issued", "reboot_requested", "powered_down", "powering_down", "power_down",
                  "not_responding"})
_DRAIN = frozenset({"drain", "drained", "draining"})
_FLAGS = "*~#!%$@^-"
_OUT_FLAGS = frozenset("*~#!%$@^")  # every flag but `-` (planned) takes the node out


def parse_sinfo(text: str) -> Inventory:
    """`%N|%P|%T` lines -> the nodes, their partitions and whether each is out / drained."""
    groups: dict[str, list[str]] = {}
    states: dict[str, str] = {}
    for ln in text.splitlines():
        if not ln.strip():
            continue
        parts = ln.split("|")
        if len(parts) < 3:
            raise ActionError(f"sinfo: unexpected line {ln!r} (wanted NODE|PARTITION|STATE)")
        node, part, state = parts[0].strip(), parts[1].strip().rstrip("*"), parts[2].strip().lower()
        groups.setdefault(node, [])
        if part and part not in groups[node]:
            groups[node].append(part)
        states[node] = state
    inv = Inventory()
    for node, state in states.items():
        base = state.rstrip(_FLAGS)
        words = set(base.replace("+", " ").split())
        flags = set(state[len(base):])
        inv.nodes[node] = NodeState(name=node, groups=tuple(groups[node]), out=bool(words & _OUT or flags & _OUT_FLAGS),
                                    acted=bool(words & _DRAIN), state=state)
    return inv


class SlurmDrain:
    kind = "drain"
    group_word = "partition"

    def __init__(self, *, scontrol: str = "scontrol", sinfo: str = "sinfo", timeout: float = 30.0) -> None:
        self.scontrol = scontrol
        self.sinfo = sinfo
        self.timeout = timeout

    def _run(self, argv: list[str]) -> str:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout, check=False)
        except FileNotFoundError as exc:
            raise ActionError(f"{argv[0]} not found: {exc}") from exc
        except subprocess.TimeoutExpired as exc:
            raise ActionError(f"{shlex.join(argv)} gave no answer in {self.timeout:g}s (is slurmctld up?)") from exc
        if proc.returncode != 0:
            msg = (proc.stderr.strip() or proc.stdout.strip() or "no message")[:500]
            raise ActionError(f"{shlex.join(argv)} exited {proc.returncode}: {msg}")
        return proc.stdout

    def inventory(self) -> Inventory:
        return parse_sinfo(self._run([self.sinfo, "-a", "-h", "-N", "-o", "%N|%P|%T"]))

    def argv(self, node: str, reason: str) -> list[str]:
        return [self.scontrol, "update", f"nodename={node}", "state=drain", f"reason={reason}"]

    def command(self, node: str, reason: str, category: str = "") -> str:
        return shlex.join(self.argv(node, reason))

    def act(self, node: str, reason: str, category: str, verdict_id: int | None) -> str:
        self._run(self.argv(node, reason))
        return f"ran {self.command(node, reason)}"


class SlurmJob:
    """`scontrol requeue JOB` or `scancel JOB` (a provisional verdict's job, once its broken nodes are out of
    service): requeued, Slurm starts it again on other nodes; cancelled, it stops burning the allocation."""

    group_word = "job"

    def __init__(self, kind: str, *, scontrol: str = "scontrol", scancel: str = "scancel",
                 timeout: float = 30.0) -> None:
        if kind not in ("requeue", "cancel"):
            raise ValueError(f"job action {kind!r}: requeue or cancel")
        self.kind = kind
        self.scontrol, self.scancel, self.timeout = scontrol, scancel, timeout
        self._runner = SlurmDrain(scontrol=scontrol, timeout=timeout)

    def argv(self, job: str) -> list[str]:
        return [self.scontrol, "requeue", job] if self.kind == "requeue" else [self.scancel, job]

    def command(self, job: str) -> str:
        return shlex.join(self.argv(job))

    def act(self, job: str) -> str:
        self._runner._run(self.argv(job))
        return f"ran {self.command(job)}"
