"""Node health checks in their own words (LBNL NHC and the checks built on it), read through one table
(catalog/health.yaml).

NHC's die() prints what a failed check said, and its helper gives the same words to the resource manager when it
drains the node:

    ERROR:  nhc:  Health check failed:  check_hw_ib:  No IB port is ACTIVE (LinkUp 100 Gb/sec).
    nhc[4242]: Health check failed:  check_fs_mount:  /scratch not mounted
    Node Health Check failed.  Check check_xid_errors returned 1
    Reason=NHC: check_fs_mount:  /scratch not mounted [root@2024-03-01T10:00:00]   (extract/slurmerr.py)

One reading for all of them (`read_health_message`): words that say the check could not run are no evidence about
the node (nothing), or, where they say what the check's own set-up lacks (a command, a dependency, an environment),
the checker's set-up on that node (part `setup`, the weak app.exception.setup); an Xid the check quotes is that
Xid (extract/gpu.py's reading of the driver's line); otherwise the check's row says which part of the node it
examines, and a failure of a check that examines a part is the weak `node.health_check` on that node (rules
health-check-*): the check's threshold may be wrong for the node, and any strong cause wins.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import HealthCheck, health_tables
from firstfault.extract.base import Draft, LineContext, LineExtractor, state_set
from firstfault.extract.gpu import quoted_xid
from firstfault.extract.nccl import clip, split_rank_prefix

# NHC's die() (`log "ERROR:  $NAME:  Health check failed:  $*"`, `syslog "Health check failed:  $*"`, the detached
# parent's `ERROR Health check failed:  $MSG`) and its fallback for a check that failed without calling die()
# (`log "Node Health Check failed.  Check $CHECK returned $RET"`): mej/nhc nhc; a wrapper's summary of the same
# (`ERROR : Node Health Checks failed - HOST - SERIAL - Check check_nvsmi_healthmon returned 127`).
_FAILED = re.compile(r"(?:\bHealth check failed:|\bNode Health Checks? failed\b[.:]?)\s+(?P<msg>\S.*)$")
# a check's name where the message names it: its own words begin with it (`check_hw_ib:  ...`), NHC's fallback
# names it (`Check check_xid_errors returned 1`); a reason cut by sinfo's column (`NHC: Check check_nv_`) keeps a part
_CHECK = re.compile(r"(?<![\w])(?P<check>check_[a-z0-9_]+)", re.IGNORECASE)
# NHC's count of the checks that failed when it runs them all (`log "ERROR:  $NAME:  $FAIL_CNT health checks failed."`):
# each was logged on its own line before it; understood, nothing more
_COUNTED = re.compile(r"(?<![\w])nhc:\s+\d+ health checks failed\.", re.IGNORECASE)
# a line of NHC's own where no check is named (its watchdog, a signal): the checker's name before its words
_NHC = re.compile(r"(?<![\w])nhc(?:\[\d+\])?:", re.IGNORECASE)


# The part a check's words give where they say what its own set-up lacks (catalog/health.yaml `unrun`, setup): the
# checker's set-up on the node, not a part of it (rule health-check-setup)
SETUP: Final = "setup"


class HealthRead(NamedTuple):
    """What a failed health check's words say: the check (if named), the part of the node it examines (None: the
    check could not run; SETUP: it could not run for what its own set-up lacks), the words."""

    check: str | None
    part: str | None
    message: str


@lru_cache(maxsize=1)
def _rows() -> tuple[tuple[HealthCheck, ...], tuple[HealthCheck, ...]]:
    """The exact rows (a refinement before the plain row it refines) and the prefix rows, longest first."""
    checks = health_tables().checks
    exact = tuple(sorted((r for r in checks if not r.check.endswith("*")), key=lambda r: r.says is None))
    prefixes = tuple(sorted((r for r in checks if r.check.endswith("*")), key=lambda r: -len(r.check)))
    return exact, prefixes


def _row(check: str, message: str) -> HealthCheck | None:
    exact, prefixes = _rows()
    for row in exact:
        if row.check == check and (row.says is None or row.says in message):
            return row
    return next((r for r in prefixes if check.startswith(r.check[:-1])), None)


def read_health_message(message: str) -> HealthRead | None:
    """A failed health check's words (what NHC's die() printed, the drain reason's after `NHC:`), read through
    catalog/health.yaml; None where they name no check and say nothing of the checker's own."""
    words = message.strip()
    unrun = [u for u in health_tables().unrun if u.text in words]
    if unrun:
        named = _CHECK.search(words)
        return HealthRead(named.group("check") if named else None, SETUP if any(u.setup for u in unrun) else None,
                          words)
    named = _CHECK.search(words)
    if named is None:
        return None
    check = named.group("check").lower()
    row = _row(check, words)
    return HealthRead(check, row.part if row is not None else "none", words)


def health_check_draft(read: HealthRead, host: str | None) -> Draft | None:
    """The weak event a failed check gives on its node (part SETUP: the checker's own set-up), or None where the check
    examines no part of it (or could not run for another reason: a time-out, a signal)."""
    if read.part is None or read.part == "none":
        return None
    return Draft("node.health_check", {"check": read.check, "part": read.part, "message": clip(read.message)},
                 host=host)


class HealthCheckExtractor:
    """A node health check that failed, as NHC logs it (its log file, syslog, the output a prolog or Slurm's
    HealthCheckProgram kept): catalog/health.yaml's reading, on the node whose log holds the line."""

    name = "node.health_check"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "node.health_check": frozenset({"check", "part", "message"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "scheduler"})
    literals: tuple[str, ...] = ("Health check failed:", "Node Health Check failed.", "Node Health Checks failed",
                                 "health checks failed.")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        m = _FAILED.search(body)
        if m is None:
            if _COUNTED.search(body) is not None:
                ctx.claimed = True
            return
        read = read_health_message(m.group("msg"))
        if read is None or (read.check is None and _NHC.search(body) is None):
            return  # another program's health check (a server's own), not a node's
        ctx.claimed = True
        quoted = quoted_xid(read.message, ctx)
        if quoted is not None:
            yield quoted
            return
        draft = health_check_draft(read, None)
        if draft is not None:
            yield draft


# A health monitor's state as its JSON prints it (leptonai/gpud's apiv1.HealthState, indented or not): the component
# the state is of, and a state whose health is Unhealthy
_COMPONENT = re.compile(r'"component": ?"(?P<component>[a-z][a-z0-9-]{1,80})"')
_UNHEALTHY: Final = ('"health": "Unhealthy"', '"health":"Unhealthy"')
_K_COMPONENT = "health.monitor.component"  # (component, lineno) of the last `"component": ...` seen
# How far a state's health may trail the component it is of (the indented state's own lines: time, component, name)
_STATE_LINES: Final = 12


@lru_cache(maxsize=4)
def _components(monitor: str) -> dict[str, str]:
    """catalog/health.yaml `monitor_components` of one monitor: component -> part."""
    return {row.component: row.part for row in health_tables().components if row.monitor == monitor}


class MonitorStateExtractor:
    """A health monitor's component whose state it says is Unhealthy (catalog/health.yaml `monitor_components`,
    leptonai/gpud's states): the weak `node.health_check` of the part it examines, as NHC's failed check is; a
    component of part `none` is understood and nothing."""

    name = "node.monitor_state"
    emits: Mapping[str, frozenset[str]] = {
        "node.health_check": frozenset({"check", "part", "message"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = ('"component": "', '"component":"', *_UNHEALTHY)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        m = _COMPONENT.search(line)
        if m is not None:
            ctx.state[_K_COMPONENT] = (m.group("component"), ctx.lineno)
        if not any(u in line for u in _UNHEALTHY):
            return
        seen = ctx.state.get(_K_COMPONENT)
        if not isinstance(seen, tuple) or ctx.lineno - seen[1] > _STATE_LINES:
            return
        component = str(seen[0])
        part = _components("gpud").get(component)
        if part is None:
            return  # a component the table does not know: its state is no evidence we can place
        ctx.claimed = True
        if part == "none":
            return
        yield Draft("node.health_check", {"check": component, "part": part, "message": f"{component}: Unhealthy"})


# NVIDIA NVSentinel's node condition, one per check (fault-quarantine; `kubectl get node -o json` prints it as JSON,
# `describe` as a row): its reason `<check>IsNotHealthy`, and its message, each event's `ErrorCode:<code>
# <entity>:<value> <words> Recommended Action=<ACTION>;` (NVIDIA/NVSentinel#1716: `ErrorCode:issm NIC:mlx5_3 NICPort:1
# Device mlx5_3 port 1: issm character device missing ... Recommended Action=REPLACE_VM;`), wrapped over as many lines
# as it takes
_NVS_REASON = re.compile(r"\b(?P<check>[A-Z][A-Za-z0-9]{2,80}?)IsNotHealthy\b")
_NVS_CODE = re.compile(r"\bErrorCode:(?P<code>[A-Za-z0-9_.\-]{1,80})")
_K_NVS = "health.nvsentinel.check"  # (check, lineno) of the condition's reason, or of its message's last line read
_NVS_LINES: Final = 40  # how far a condition's message may trail its reason, or one of its lines the one before
_K_NVS_SEEN = "health.nvsentinel.seen"  # checks whose finding this stream gave


def _read_elsewhere(code: str) -> bool:
    """An NVSentinel error code another table reads: DCGM's (catalog/accel.yaml `dcgm_errors`, by name) or an Xid
    number (the syslog monitor's and the Xid callback's)."""
    return code.startswith("DCGM_FR_") or code.isdigit()


class MonitorConditionExtractor:
    """NVIDIA NVSentinel's node condition of a check (catalog/health.yaml `monitor_components`, monitor nvsentinel):
    a code on its message that another table reads is read there (a DCGM code of a check that could not run is
    nothing, NVIDIA/NVSentinel#1471); otherwise the check's part, the weak `node.health_check` as NHC's failed check
    is, once per check; a check of part `none` (a device file's node, InfiniBandCharDeviceCheck) is understood and
    nothing. A condition of a check the table does not know is no evidence we can place."""

    name = "node.monitor_condition"
    emits: Mapping[str, frozenset[str]] = {
        "node.health_check": frozenset({"check", "part", "message"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = ("IsNotHealthy", "ErrorCode:")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        checks = _components("nvsentinel")
        m = _NVS_REASON.search(line)
        if m is not None and m.group("check") in checks:
            ctx.state[_K_NVS] = (m.group("check"), ctx.lineno)
            ctx.claimed = True
        codes = [c.group("code") for c in _NVS_CODE.finditer(line)]
        seen = ctx.state.get(_K_NVS)
        if not codes or not isinstance(seen, tuple) or ctx.lineno - seen[1] > _NVS_LINES:
            return
        if any(_read_elsewhere(c) for c in codes):
            return
        check = str(seen[0])
        ctx.state[_K_NVS] = (check, ctx.lineno)
        ctx.claimed = True
        part = checks[check]
        given = state_set(ctx.state, _K_NVS_SEEN)
        if part == "none" or check in given:
            return
        given.add(check)
        yield Draft("node.health_check", {"check": check, "part": part, "message": clip(line.strip())})


EXTRACTORS: tuple[LineExtractor, ...] = (HealthCheckExtractor(), MonitorStateExtractor(), MonitorConditionExtractor())
