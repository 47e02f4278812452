"""The node's own services failing, in systemd's words about their units: one grammar, one table.

systemd logs the same few records about any unit it runs (src/core/service.c, unit.c, job.c):

    slurmd.service: Main process exited, code=exited, status=1/FAILURE
    slurmd.service: Failed with result 'exit-code'.
    Failed to start Slurm node daemon.             (systemd 250 and later: `slurmd.service - Slurm node daemon`)
    Dependency failed for Slurm node daemon.
    munge.service: Start operation timed out. Terminating.
    Unit slurmd.service entered failed state.                (before systemd 236)

and in systemctl status's record of the unit (`● munge.service - MUNGE authentication service`, then `Active: failed
(Result: exit-code) since ...`), and in the words of what asked for the unit's start: systemctl (`Job for
slurmd.service failed because the control process exited with error code.`) and Chef's service resource
(`service[nvidia-fabricmanager] (cookbook::recipe line 35) had an error: ...`).

and, when the unit comes back or is stopped, `Started Slurm node daemon.`, `Stopped Slurm node daemon.`,
`slurmd.service: Deactivated successfully.`. Which units are the node's services a GPU job needs, and what part of the
node each is (the scheduler's daemon, the driver stack's), is catalog/platform.yaml `platform_programs` (`units`,
`descriptions`): a failed unit of one is `platform.error` with the program's `part` and `unit`, which the part's rule
reads (scheduler: node-scheduler; driver: node-driver). A unit the table does not name (a display manager, snapd, the
job's own service) is not read here, and a unit that stopped (status 0, SIGTERM, `Deactivated successfully`) says
nothing. One failure prints several records: it is one event per unit until the unit starts again. A `Started` record
of a failed unit is `platform.started`, never a cause: engine/normalise.py drops a unit's failure that a later start
of it in the same file, on the same node, closes (its Restart= policy brought it back). A line another table reads
(Fabric Manager's unit: `fabric_manager_messages`, extract/gpu.py) is that table's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import PlatformProgram, platform_program_table
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.gpu import fabric_manager_message

_MESSAGE_CLIP: Final = 400
_K_UNITS = "services.units"  # per stream: unit -> "failed" (reported) or "started"

# A unit's own records: its name, then what happened to it (systemd src/core/service.c service_sigchld_event,
# service_enter_dead via unit_log_failure, service_dispatch_timer). Bounded runs: linear.
_UNIT = r"(?<![\w@.:\-])(?P<unit>[a-z0-9][a-z0-9_.\-]{1,80})\.service"
_RECORD = re.compile(
    _UNIT + r": (?:Failed with result '(?P<result>[a-z\-]{1,32})'"
    r"|(?:Main|Control) process exited, code=(?P<code>exited|killed|dumped), status=(?P<status>\w{1,16})(?:/\w{1,16})?"
    r"|(?P<timeout>Start operation timed out)"
    r"|(?P<repeated>Start request repeated too quickly))"
)
# systemd before 236: `Unit slurmd.service entered failed state.`
_LEGACY = re.compile(r"\bUnit " + _UNIT + r" entered failed state")
# systemctl's word that the start or restart it asked for failed (src/shared/bus-wait-for-jobs.c
# log_job_error_with_service_result: `Job for slurmd.service failed because the control process exited with error
# code.`, `... failed because a timeout was exceeded.`), which configuration tools relay (Ansible's systemd module:
# `Unable to start service slurmd: Job for slurmd.service failed ...`)
_SYSTEMCTL = re.compile(r"\bJob for " + _UNIT + r" failed\b")
# Chef's word that a service resource failed (chef lib/chef/resource.rb custom_exception_message: `#{self}
# (#{defined_at}) had an error: #{e.class.name}: #{e.message}`: `service[nvidia-fabricmanager]
# (aws-parallelcluster-platform::nvidia_config line 35) had an error: Mixlib::ShellOut::CommandTimeout: ...`); one it
# was told to ignore (`...; ignore_failure is set, continuing`) is not
_CHEF = re.compile(r"\bservice\[(?P<unit>[a-z0-9][a-z0-9_.\-]{1,80}?)(?:\.service)?\] \([^()\n]{1,200}\) "
                   r"had an error: ")
_CHEF_IGNORED: Final = "ignore_failure is set"
# `systemctl status`'s record of a unit (src/systemctl/systemctl-show.c print_status_info): a head line, the unit's
# state glyph (`●`, since systemd 248 `×` for a failed unit, `○` inactive, `↻` reloading; `*`, `x`, `o` outside
# UTF-8), its name and ` - ` its description, then `Loaded: ...`, any `Drop-In:` lines, and `Active: <state>
# (<sub-state>)`, after which it prints ` (Result: <result>)` only where the result is not `success`: `Active: failed
# (Result: exit-code) since ...`, `Active: activating (auto-restart) (Result: exit-code)` (a unit failing and started
# again by its Restart=). The Active line names no unit: it is the head line's, within a few lines of it.
_STATUS_HEAD = re.compile(r"^\s{0,8}(?:[●×○↻*xo]\s{1,4})?" + _UNIT + r" - ")
_STATUS_RESULT = re.compile(r"^\s{0,16}Active: [a-z\-]{1,24}(?: \([a-z\-]{1,32}\))? "
                            r"\(Result: (?P<result>[a-z\-]{1,32})\)")
_STATUS_SPAN: Final = 12  # the most lines from a head line to its Active line (Loaded, Drop-In's files, a Transient)
_K_STATUS = "services.status_head"  # per stream: (unit, line number) of systemctl status's last head line
# A job's result (src/core/job.c job_done's status messages): the unit's description, or since systemd 250 its name
# and description (`Failed to start slurmd.service - Slurm node daemon.`).
_JOB = re.compile(r"\b(?P<verb>Failed to start|Dependency failed for|Started) (?:(?P<named>[a-z0-9][a-z0-9_.\-@]{1,80})"
                  r"\.service(?: - |\.)|)(?P<desc>[^\n]{0,160}?)\.?\s*$")
# Results that are not the unit failing: the OOM killer's (host.oom_kill reads `Failed with result 'oom-kill'`)
_NOT_FAILED_RESULTS: Final = frozenset({"success", "oom-kill"})
# Signals a unit's main process ends on when it is stopped (systemd's default SuccessExitStatus= takes these)
_STOP_SIGNALS: Final = frozenset({"TERM", "INT", "HUP", "PIPE", "15", "2", "1", "13"})


class _Units(NamedTuple):
    by_unit: Mapping[str, PlatformProgram]
    by_description: Mapping[str, PlatformProgram]
    literals: tuple[str, ...]


@lru_cache(maxsize=1)
def _units() -> _Units:
    by_unit: dict[str, PlatformProgram] = {}
    by_description: dict[str, PlatformProgram] = {}
    literals: set[str] = set()
    for row in platform_program_table():
        for unit in row.units:
            by_unit[unit] = row
            literals.update({f"{unit}.service: ", f"Unit {unit}.service entered failed state",
                             f"Failed to start {unit}.service", f"Dependency failed for {unit}.service",
                             f"Started {unit}.service", f"Job for {unit}.service failed", f"service[{unit}]",
                             f"{unit}.service - "})
        for desc in row.descriptions:
            by_description[desc] = row
            literals.update({f"Failed to start {desc}", f"Dependency failed for {desc}", f"Started {desc}"})
    literals.add("(Result: ")
    return _Units(by_unit, by_description, tuple(sorted(literals)))


class UnitRead(NamedTuple):
    """A record of one of the table's units: the program, its unit, whether it failed (else it started), the words."""

    row: PlatformProgram
    unit: str
    failed: bool
    text: str
    at: int


def read_unit_record(line: str) -> UnitRead | None:
    """The record systemd printed in `line` about a unit of catalog/platform.yaml's `platform_programs`: it failed
    (the words say how) or it started; None for any other line, for a unit the table does not name, and for a stop."""
    units = _units()
    if ".service" in line:
        m = _RECORD.search(line)
        if m is not None:
            row = units.by_unit.get(m.group("unit"))
            if row is None:
                return None
            if m.group("result") is not None:
                if m.group("result") in _NOT_FAILED_RESULTS:
                    return None
            elif m.group("code") is not None:
                status, code = m.group("status"), m.group("code")
                if (code == "exited" and status in ("0", "SUCCESS")) or (code == "killed" and status in _STOP_SIGNALS):
                    return None
            return UnitRead(row, m.group("unit"), True, line[m.end("unit") + len(".service: "):m.end()], m.start())
        m = _LEGACY.search(line)
        if m is not None:
            row = units.by_unit.get(m.group("unit"))
            return UnitRead(row, m.group("unit"), True, "entered failed state", m.start()) if row else None
        m = _SYSTEMCTL.search(line)
        if m is not None:
            row = units.by_unit.get(m.group("unit"))
            return UnitRead(row, m.group("unit"), True, "systemctl: job failed", m.start()) if row else None
    if "service[" in line and _CHEF_IGNORED not in line:
        m = _CHEF.search(line)
        if m is not None:
            row = units.by_unit.get(m.group("unit"))
            return UnitRead(row, m.group("unit"), True, "chef: service resource had an error",
                            m.start()) if row else None
    j = _JOB.search(line)
    if j is None:
        return None
    named = j.group("named")
    # the description ends the sentence (a console's `See 'systemctl status slurmd.service' for details.` may follow)
    desc = j.group("desc").split(". ", 1)[0].strip()
    row = units.by_unit.get(named) if named else units.by_description.get(desc)
    if row is None:
        return None
    unit = named or row.units[0]
    return UnitRead(row, unit, j.group("verb") != "Started", j.group("verb"), j.start())


class NodeServiceExtractor:
    """systemd's records of a node service's unit (catalog/platform.yaml `platform_programs` `units`): its failure as
    `platform.error` with the program's part and the unit, once per failure; its start as `platform.started`."""

    name = "platform.service"
    emits: Mapping[str, frozenset[str]] = {
        "platform.error": frozenset({"program", "part", "text", "message", "unit"}),
        "platform.started": frozenset({"program", "unit"}),
    }
    # the node's journal or syslog, its dmesg-and-journal collections, and an excerpt posted as a job's output
    sources: frozenset[str] = frozenset({"syslog", "kernel", "application"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = _units().literals

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        read = read_unit_record(line) or self._status_record(line, ctx)
        if read is None or fabric_manager_message(line) is not None:
            return  # not a record of the table's units, or Fabric Manager's own table's line
        seen = ctx.state.setdefault(_K_UNITS, {})
        assert isinstance(seen, dict)
        if not read.failed:
            seen[read.unit] = "started"
            yield Draft("platform.started", {"program": read.row.program, "unit": read.unit})
            return
        if seen.get(read.unit) == "failed":
            ctx.claimed = True  # the same failure's next record (its exit, its result, the job's)
            return
        seen[read.unit] = "failed"
        message = line[read.at:].strip()
        if read.unit not in message:
            message = f"{read.unit}.service {message}"  # systemctl status's Active line, which names no unit
        if len(message) > _MESSAGE_CLIP:
            message = message[:_MESSAGE_CLIP - 3] + "..."
        yield Draft("platform.error", {"program": read.row.program, "part": read.row.part, "unit": read.unit,
                                       "text": read.text.rstrip(". "), "message": message})

    @staticmethod
    def _status_record(line: str, ctx: LineContext) -> UnitRead | None:
        """`systemctl status`'s record of a table's unit: its head line (kept, with its line number) and its `Active:`
        line with a result that is no success (the unit failed), which is the head line's unit's when it stands
        within _STATUS_SPAN lines of it. None for the head line itself and for any other line."""
        head = _STATUS_HEAD.search(line) if ".service - " in line else None
        if head is not None:
            ctx.state[_K_STATUS] = (head.group("unit"), ctx.lineno)
            return None
        if "(Result: " not in line:
            return None
        m = _STATUS_RESULT.search(line)
        kept = ctx.state.get(_K_STATUS)
        if m is None or m.group("result") in _NOT_FAILED_RESULTS or not isinstance(kept, tuple):
            return None
        unit, at = kept
        row = _units().by_unit.get(unit)
        if row is None or not 0 < ctx.lineno - at <= _STATUS_SPAN:
            return None
        return UnitRead(row, unit, True, f"systemctl status: result {m.group('result')}", m.start())


EXTRACTORS: tuple[LineExtractor, ...] = (NodeServiceExtractor(),)
