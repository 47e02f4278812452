"""How the scheduler or the container runtime ended a job, as the job's own output says it.

Two extractors. `SchedulerReasonExtractor` reads every spelling of catalog/scheduler.yaml that a job's
output, a pasted e-mail or a pasted `kubectl` line can hold (extract/reasons.py): LSF's job report
(`TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.`), PBS's `=>> PBS: job killed:
walltime 3610 exceeded limit 3600`, Moab's `job exceeded wallclock limit`, SGE's `qmaster enforced h_rt
limit`, Flux's `job.exception type=timeout ... resource allocation expired`, the kubelet's `The node was
low on resource: memory.`, a managed service's status reason (AWS Batch's `Job attempt duration exceeded timeout`,
Google Cloud Batch's `Task state is updated from RUNNING to FAILED on ... with exit code 50001.`, whose reserved exit
code says why); each becomes the event its reason calls for. `MemoryLimitExtractor` reads
the memory-limit kills that are not a scheduler's reason word: slurmstepd's and srun's, Ray's memory
monitor, a memory cgroup at its limit.

`LsfReportExtractor` reads the report LSF appends to a job's output (or mails): its end (`Successfully
completed.`, `Exited with exit code 1.`, a TERM_ reason) becomes the job's record (`sched.job`).
`SgeFailureExtractor` reads the qmaster's word on a job that failed on a host before it ran (`job 84.1 failed
on host ubuntu general opening input/output file because: ...`), whose errno says whose the failure was.

Slurm's own `*** JOB ... CANCELLED AT ... DUE TO TIME LIMIT ***` banner is read in signals.py with the other
slurmstepd lines; its `DUE TO` words are the same normalised reasons.
"""

from __future__ import annotations

import errno as _errno
import signal as _signal
from collections.abc import Iterator, Mapping
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import batch_tables, storage_tables
from firstfault.catalog.vocab import CLOUD_SCHEDULERS
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.batch import SGE_DIED, sge_signal
from firstfault.extract.codes import by_whom, errno_of, exit_signum, path_of, signal_name, signal_of_text
from firstfault.extract.endstate import excessive_use, leading_pair, line_reading, policy_expression
from firstfault.extract.endstate import literals as endstate_literals
from firstfault.extract.kuberows import pod_row
from firstfault.extract.kubetext import event_row, event_row_node, pod_row_fields
from firstfault.extract.nccl import clip, split_rank_prefix
from firstfault.extract.reasons import (
    k8s_pending,
    k8s_reason,
    kube_status_words,
    line_literals,
    reason_anchors,
    scheduler_words,
    setup_refusal,
    state_of,
    text_reasons,
    word_reason,
)
from firstfault.extract.traceback import EXEC_WHY_TEXTS, exec_failure
from firstfault.model import FieldValue

# --------------------------------------------------------------------------
# A scheduler's reason in the job's output
# --------------------------------------------------------------------------

# Reasons the scheduler ended the job for, told as its signal to the job (process.signal `due_to`): the
# rules read `due_to`, and the engine takes the job's end state from it where no record gives one
# (engine/normalise.banner_state).
# A batch scheduler's eviction (LSF's host load, Gadi's jobfs quota) is its signal too; the kubelet's is the pod's.
_SIGNALLED: Final = frozenset({"time_limit", "count_limit", "preemption", "node_failure", "cancelled",
                               "admin_cancelled", "eviction", "host_maintenance"})


# Where a cloud's record names the VM it acted on, that VM is the node (GCE and GKE name a node as its instance): GCE's
# resource path (`us-central1-a/instances/NAME` in `gcloud compute operations list`'s TARGET, `"resourceName":
# ".../zones/Z/instances/NAME"` in the audit log), an Azure Scheduled Event's one resource (`"Resources": ["NAME"]`;
# several name no one node). EC2 names an instance id, no host. Each part one run of a class: linear.
_VM_NAMED: Final = {
    "gcp": re.compile(r"(?<![\w.\-])instances/(?P<vm>[a-z](?:[a-z0-9\-]{0,61}[a-z0-9])?)(?![\w\-])"),
    "azure": re.compile(r"\"Resources\"\s*:\s*\[\s*\"(?P<vm>[^\"\s,]{1,80})\"\s*\]"),
}


# EC2's Spot interruption notice as the instance's own metadata serves it (IMDS `spot/instance-action`, AWS's "Spot
# Instance interruption notices": `{"action": "terminate", "time": "2017-09-18T08:22:00Z"}`, also stop or hibernate,
# two minutes ahead), printed by whatever polls it (a runner agent, a handler script), also inside another JSON
# record's string with its quotes escaped (`"message":"Spot interruption payload received: {\"action\":\"terminate\",
# \"time\":\"2025-03-31T16:34:24Z\"}"`). The document's two keys together, in its order: an `action` key alone is
# any program's.
_IMDS_ACTION: Final = re.compile(r'\{\s{0,4}\\?"action\\?"\s{0,4}:\s{0,4}\\?"(?:terminate|stop|hibernate)\\?"\s{0,4},'
                                 r'\s{0,4}\\?"time\\?"\s{0,4}:\s{0,4}\\?"\d{4}-\d\d-\d\dT')
_IMDS_WORD: Final = '"action'

# HTCondor's shadow quoting its starter's error in a hold or remove reason names the slot it ran in, and so its
# execute host: `Error from slot1_6@e231.chtc.wisc.edu: Failed to execute ...` (ChristinaLK/chtc-htc
# _episodes/06-troubleshoot.md's `condor_q -af holdreason`), `Error from slot1_3@e327.chtc.wisc.edu: Docker job has
# gone over memory limit ...` (catalog/scheduler.yaml's CHTC row). The line is the submit side's (a job log, DAGMan's,
# condor_q): what it reports happened on that host. Each part one run of a class: linear.
_HTCONDOR_SLOT: Final = re.compile(r"\bError from [\w.\-]+@(?P<host>[A-Za-z0-9][\w.\-]*[A-Za-z0-9]):")


def slot_host(body: str) -> str | None:
    """The execute host an HTCondor `Error from SLOT@HOST:` names in a line, or None."""
    m = _HTCONDOR_SLOT.search(body)
    return m.group("host") if m is not None else None


# A controller's structured record naming the node it acted on: Karpenter's interruption controller logs the node with
# the message's kind (`"messageKind": "SpotInterruptionKind", ..., "node": "ip-172-27-13-123...internal"` before v1:
# aws/karpenter-provider-aws#4772; `"Node":{"name":"ip-..."}` since, klog.KRef in pkg/controllers/interruption
# controller.go), a kubelet-side record its `nodeName`. A JSON key, then a string or a KRef's name. Linear.
_RECORD_NODE: Final = re.compile(r"\"(?:node|nodeName|Node)\"\s*:\s*(?:\{\s*\"name\"\s*:\s*)?"
                                 r"\"(?P<host>[A-Za-z0-9][\w.\-]{0,252})\"")


def record_node(body: str) -> str | None:
    """The node a structured record (a JSON log line) names by its `node` / `nodeName` / `Node` key, or None."""
    m = _RECORD_NODE.search(body)
    return m.group("host") if m is not None else None


# The NodeClaim (a Machine before Karpenter v0.32) a Karpenter record is about: `"nodeclaim": "default-4w54b"` before
# v1, `"NodeClaim":{"name":"default-4w54b"}` since (a klog.KRef), `"machine": "..."` before. Its records of the claim's
# life name the node it became (kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle registration.go:
# `"message":"registered nodeclaim",...,"NodeClaim":{"name":"default-c54z5"},...,"Node":{"name":"ip-...internal"}`),
# so a later record of the same claim that names no node (an interruption acted on before the Node was looked up) is
# about that node. Linear, as _RECORD_NODE.
_RECORD_CLAIM: Final = re.compile(r"\"(?:nodeclaim|NodeClaim|machine)\"\s*:\s*(?:\{\s*\"name\"\s*:\s*)?"
                                  r"\"(?P<claim>[A-Za-z0-9][\w.\-]{0,252})\"")
_CLAIM_WORDS: Final = ('"NodeClaim"', '"nodeclaim"', '"machine"')
_K_CLAIMS = "jobend.nodeclaims"  # per stream: NodeClaim -> the node its records named
_MAX_CLAIMS = 4096


def _claimed_node(body: str, ctx: LineContext) -> str | None:
    """Remember the node a record names for its NodeClaim; the node of a record that names only its NodeClaim."""
    m = _RECORD_CLAIM.search(body)
    if m is None:
        return None
    claims = ctx.state.get(_K_CLAIMS)
    if not isinstance(claims, dict):
        claims = ctx.state[_K_CLAIMS] = {}
    node = record_node(body)
    if node is not None:
        if len(claims) < _MAX_CLAIMS or m.group("claim") in claims:
            claims[m.group("claim")] = node
        return node
    known = claims.get(m.group("claim"))
    return known if isinstance(known, str) else None


class SchedulerReasonExtractor:
    """A scheduler's or the kubelet's word on why it ended the job, in the job's own output."""

    name = "sched.reason"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"message", "refusal", "setup"}),
        "host.oom_kill": frozenset({"by", "cgroup", "detail", "killer", "names_node", "pid", "proc", "storage_daemon"}),
        "k8s.event": frozenset({"due_to", "message", "reason", "pending"}),
        "k8s.pod": frozenset({"due_to", "message", "phase", "pod", "pressure", "reason", "restart"}),
        "process.signal": frozenset({"by", "by_uid", "detail", "due_to", "names_node", "scheduler", "signal",
                                     "taken"}),
        "sched.node_reason": frozenset({"reason", "text"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})

    def __init__(self) -> None:
        # The table's phrases and distinctive words are this extractor's prefilter words, and the Kubernetes
        # reasons a pasted `kubectl get pods` row shows as its STATUS.
        # The end-state pairs' words (extract/endstate.py) and `State:`, a describe container's state line.
        self.literals: tuple[str, ...] = tuple(sorted(set(line_literals()) | set(kube_status_words())
                                                      | set(endstate_literals())
                                                      | {"job.exception", "State:", _GCB_HEAD.strip()}
                                                      | {_CROMWELL_GCB_WORD.strip(), _SMK_SLURM_WORD}
                                                      | set(_CLAIM_WORDS) | {"Killed process ", _IMDS_WORD}
                                                      | set(_RAY_IP_WORDS)))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        if "ip: " in line and _ray_ip_field(line, ctx):
            return  # a Ray actor error's `ip:` field: the node of its death cause below
        _, body = split_rank_prefix(line)
        if any(w in body for w in _CLAIM_WORDS):
            # a Karpenter record of a NodeClaim's life: the node it became, for its later records
            _claimed_node(body, ctx)
        flux = _FLUX_EXCEPTION.search(body)
        if flux is not None:
            yield from _flux_exception(flux, body, ctx)
            return
        if _IMDS_WORD in body and _IMDS_ACTION.search(body):
            # the cloud's notice to the instance: the node that printed it is taken back
            yield from _said("preemption", "aws", None, None, body, ctx)
            return
        batch = _gcp_batch_event(body, ctx)
        if batch is not None:
            yield from _gcp_batch_task(*batch, ctx)
            return
        if _SMK_SLURM_WORD in body and (smk := _SMK_SLURM.search(body)) is not None:
            # a workflow manager's record of its Slurm job's end: the state it names, as Slurm's own words are read
            row = word_reason("slurm", smk.group("state"), "state")
            if row is None or row.reason is None:
                ctx.claimed = True  # FAILED, CANCELLED without its uid, the plugin's own ERROR: no cause named
                return
            yield from _said(row.reason, "slurm", None, None, body[smk.start():], ctx)
            return
        # The indentation says which container state a reason is under: read it off the whole line.
        event = event_row(body)
        if event is not None:
            # An Events row pasted into text (`Warning  OOMKilling  node/n  Memory cgroup out of memory: ...`,
            # `Warning  Evicted  60s  kubelet  The node was low on resource: ...`): its reason and message read as
            # the k8s-table and k8s-describe readers read them.
            due, resource = k8s_reason(event[0], event[1])
            if due is not None:
                # a node's event (`node/NAME`: Karpenter's `SpotInterrupted`) is about that node; a memory kill's
                # message may name its victim (the kubelet's `System OOM encountered, victim process: nginx, ...`)
                victim = (next((h.victim for h in text_reasons(event[1]) if h.victim is not None), None)
                          if due == "memory_limit" and event[1] else None)
                yield from _said(due, "kubernetes", event_row_node(body), resource, body, ctx, victim=victim)
                return
            if k8s_pending(event[0], event[1]):
                # a pod waiting for a place (`Warning  FailedScheduling  ...  0/3 nodes are available: ...`): no
                # cause, but the job did not start (sym-pod-unschedulable)
                yield Draft("k8s.event", {"reason": event[0], "message": clip(event[1] or body), "pending": True})
                return
        if _container_state(line if line.strip() == body.strip() else body, ctx):
            return
        reading = line_reading(body)
        if reading is not None:
            # A line that is a workload manager's (key, value) pair decides by its key (extract/endstate.py): a
            # reason, or a guard (a false flag, a comment, a reason that names no cause, a query's matcher).
            if reading.reason is None or _recovered(line if line.strip() == body.strip() else body, ctx):
                ctx.claimed = reading.scheduler != ""
                return
            yield from _said(reading.reason, reading.scheduler, reading.host, reading.resource, body, ctx,
                             reading.by_uid)
            return
        cells = pod_row(body)
        if cells is not None:
            # A `kubectl get pods` row pasted into text (`... 0/1  Evicted  0  7m9s`): its STATUS, when it is a
            # reason the table knows, is the pod's end, read as the k8s-table reader reads the row.
            fields = pod_row_fields(cells)
            if fields is not None and fields.get("due_to") is not None:
                draft = Draft("k8s.pod", {k: v for k, v in fields.items() if k != "node"})
                node = fields.get("node")
                draft.host = node if isinstance(node, str) else None
                yield draft
                return
        # Of the table's spellings on the line, the first that names a cause (a replica's bare exit status names none,
        # its termination reason after it may: `... exited with a non-zero status of 137. Termination reason:
        # OOMKilled.`), else the first, understood.
        hits = text_reasons(body, lines=True)
        hit = next((h for h in hits if h.reason is not None), hits[0] if hits else None)
        if hit is None:
            # A scheduler's own message in prose: an HTCondor policy that removed or held the job, a kill for
            # excessive use of a named resource (extract/endstate.py).
            said = policy_expression(body) or excessive_use(body)
            if said is not None and said.reason is not None:
                yield from _said(said.reason, said.scheduler, said.host, said.resource, body, ctx)
            elif said is not None:
                ctx.claimed = True
            return
        if hit.pending:
            # a pod waiting for a place in the scheduler's own words (`0/11 nodes are available: ...`, Volcano's
            # `tasks in gang unschedulable`): no cause, but the job did not start (sym-pod-unschedulable)
            yield Draft("k8s.event", {"message": clip(body), "pending": True})
            return
        if hit.symptom:
            # a node that failed to take or keep the job, no cause named (PBS's server unable to run it on a MOM)
            yield Draft("sched.node_reason", {"reason": clip(body), "text": hit.spelling}, host=hit.host)
            return
        yield from _said(hit.reason, hit.scheduler, hit.host, hit.resource, body, ctx, victim=hit.victim, at=hit.start)


# kubectl describe prints a container's `State:` above its `Last State:` (kubernetes/kubernetes#122256:
# `State: Running` / `Last State: Terminated` / `Reason: Error` / `Exit Code: 137` / `Restart Count: 1`): a reason
# under `Last State` of a container that is Running again is an earlier end its restart recovered from, no cause of
# the job's end. Per stream: where the last `State: Running` and `Last State:` were (line, indent).
_K_RUNNING = "endstate.running"
_K_LAST = "endstate.last"
_STATE_SPAN = 12  # lines from a container's State to its Last State's reason
_CONTAINER_STATES = frozenset({"Running", "Terminated", "Waiting"})


def _container_state(body: str, ctx: LineContext) -> bool:
    """Note a describe container's `State:` / `Last State:` line (True: the line was one)."""
    pair = leading_pair(body)
    if pair is None or pair.key not in ("state", "laststate") or pair.value.strip() not in _CONTAINER_STATES:
        return False
    if pair.key == "state":
        running = pair.value.strip() == "Running"
        ctx.state[_K_RUNNING] = (ctx.lineno, pair.indent) if running else None
    else:
        ctx.state[_K_LAST] = (ctx.lineno, pair.indent)
    ctx.claimed = True
    return True


def _recovered(body: str, ctx: LineContext) -> bool:
    """Whether this reason line is under a `Last State:` whose container's `State:` above it is Running."""
    last, running = ctx.state.get(_K_LAST), ctx.state.get(_K_RUNNING)
    pair = leading_pair(body)
    if not (isinstance(last, tuple) and isinstance(running, tuple) and pair is not None):
        return False
    (last_at, last_indent), (running_at, running_indent) = last, running
    # (`>=`: a line may reach here with its indentation taken off by a prefix layer)
    return bool(0 < ctx.lineno - last_at <= _STATE_SPAN and pair.indent >= last_indent
                and running_indent == last_indent and 0 < last_at - running_at <= _STATE_SPAN)


# The kernel OOM killer's record of its victim (mm/oom_kill.c __oom_kill_process: `Killed process %d (%s)`), as a
# scheduler's or a node monitor's message relays it (after a JSON string's escaped `\n`: no word boundary before it).
_RELAYED_KILL = re.compile(r"Killed process (?P<pid>\d+) \((?P<proc>[^()\s]{1,64})\)")


# Ray's error for an actor that died (python/ray/exceptions.py ActorDiedError / RayActorError: `The actor died
# unexpectedly before finishing this task.` then one `\t<field>: <value>` line each of class_name, actor_id, pid, name,
# namespace and ip, then the GCS's death cause): the `ip:` field is the node the actor ran on, and so the node a death
# cause of its node (`The actor is dead because its node has died. Node Id: <id>`: catalog/scheduler.yaml) is about;
# the cause names Ray's node id alone. The field on its own line (a tab, or the spaces a paste made of it: the
# prefilter's words; the prefix layer may have taken the indentation off), or before the cause on one line where a
# log flattened the block. An address, or a host name;
# a wildcard or loopback address names no node. Each part one bounded run of a class: linear.
_RAY_IP_WORDS: Final = ("\tip: ", "    ip: ")
_RAY_IP_LINE = re.compile(r"\s{0,16}ip: (?P<ip>[0-9A-Za-z][\w.:\-]{0,252})\s{0,8}")
_RAY_IP_BEFORE = re.compile(r"(?<![\w\-])ip: (?P<ip>[0-9A-Za-z][\w.:\-]{0,252}?)[\s,]")
_RAY_NO_NODE: Final = frozenset({"0.0.0.0", "127.0.0.1", "::", "::1", "localhost"})
_K_RAY_IP = "jobend.ray_ip"  # per stream: (line, ip) of the last actor error's `ip:` field
_RAY_IP_SPAN = 4  # lines from the `ip:` field to its death cause (the newer cause's second line is two below)


def _ray_ip_field(line: str, ctx: LineContext) -> bool:
    """Note a Ray actor error's `ip:` field standing on its own line (True: the line was one)."""
    m = _RAY_IP_LINE.fullmatch(line)
    if m is None:
        return False
    ctx.state[_K_RAY_IP] = (ctx.lineno, m.group("ip"))
    ctx.claimed = True
    return True


def _ray_actor_node(body: str, at: int, ctx: LineContext) -> str | None:
    """The node a Ray actor error's `ip:` field names for the death cause at `at` in `body`: before it on the line,
    else on a line just above; None where there is none, or it names no node."""
    ip = None
    for m in _RAY_IP_BEFORE.finditer(body, 0, at):
        ip = m.group("ip")
    if ip is None:
        seen = ctx.state.get(_K_RAY_IP)
        if isinstance(seen, tuple) and 0 < ctx.lineno - seen[0] <= _RAY_IP_SPAN:
            ip = seen[1]
    return ip if ip is not None and ip not in _RAY_NO_NODE else None


def _said(reason: str | None, scheduler: str, host: str | None, resource: str | None, body: str,
          ctx: LineContext, by_uid: int | None = None, victim: str | None = None, at: int = 0) -> Iterator[Draft]:
    """The event a scheduler's reason in the job's output calls for."""
    # The node another program's record names (a hold reason's execute host, a controller's record of the node it
    # acted on): the event is that node's, whichever node's file printed it.
    elsewhere = False
    if host is None and scheduler == "htcondor":
        host = slot_host(body)
        elsewhere = host is not None
    elif host is None and scheduler in ("kubernetes", "aws"):
        host = record_node(body) or _claimed_node(body, ctx)
        elsewhere = host is not None
    elif host is None and scheduler == "ray" and reason == "node_failure":
        # a death cause of an actor's node names Ray's id alone: the node is the actor error's `ip:`; without one the
        # words name no node, and a node Ray lost that no evidence names is no finding (as the id-only wordings of
        # the GCS's `marked dead`)
        host = _ray_actor_node(body, at, ctx)
        if host is None:
            ctx.claimed = True
            return
    if reason == "memory_limit":
        if any(rx.search(body) for _, rx in _MEM_LIMIT):
            # the kill's own words on the same line (Ray's `Worker exit type: NODE_OUT_OF_MEMORY Worker exit detail:
            # Task was killed due to the node running low on memory.`): MemoryLimitExtractor's one event
            ctx.claimed = True
            return
        oom = Draft("host.oom_kill", {"proc": scheduler, "cgroup": True, "by": "limit", "detail": clip(body)})
        if victim is not None:
            # the victim the killer's own phrase names (catalog/scheduler.yaml `{proc}`: systemd-oomd's cgroup,
            # earlyoom's process): the process killed, the killer beside it
            oom.fields["proc"], oom.fields["killer"] = victim, scheduler
            daemon = storage_tables().daemons.get(victim)
            if daemon is not None:
                oom.fields["storage_daemon"] = daemon
        relayed = _RELAYED_KILL.search(body) if "Killed process " in body else None
        if relayed is not None:
            # the kernel's own record relayed in the scheduler's message (node-problem-detector's OOMKilling event:
            # `Memory cgroup out of memory: Kill process 3460 (driver) ...\nKilled process 3810 (gcsfuse) ...`):
            # the process it names was killed, and a FUSE daemon's mount went with it (storage-fuse-daemon-killed)
            oom.fields["proc"], oom.fields["pid"] = relayed.group("proc"), int(relayed.group("pid"))
            daemon = storage_tables().daemons.get(relayed.group("proc"))
            if daemon is not None:
                oom.fields["storage_daemon"] = daemon
        if host is not None:
            # the execute host a hold reason names (`Error from slot1_3@HOST: ...`)
            oom.host = host
            oom.fields["names_node"] = True
        yield oom
    elif reason == "eviction" and scheduler == "kubernetes":
        said: dict[str, str | None] = {"reason": "Evicted", "phase": "Failed", "pressure": resource,
                                       "message": clip(body), "due_to": reason}
        yield Draft("k8s.pod", {k: v for k, v in said.items() if v is not None})
    elif reason == "device_plugin":
        # The kubelet refusing the pod at admission for its devices (a pasted Events row, a pod's message): the pod's
        # end, as the k8s readers read it (rule node-device-plugin).
        yield Draft("k8s.pod", {"phase": "Failed", "message": clip(body), "due_to": reason})
    elif reason == "placement":
        # The cluster's scheduler placing the pod where it could not run, or failing to place it for reasons of its
        # own (the kubelet's `Pod was rejected: Node didn't have enough resource: memory, ...`, the scheduler
        # framework's `Failed running Reserve plugin`, a ClusterQueue that names no quota for cpu): a pod event
        # whatever printed it (rule node-scheduler-placement); the pod may still be pending, so no phase.
        yield Draft("k8s.event", {"message": clip(body), "due_to": reason})
    elif reason == "setup":
        # The job's own request that its scheduler, cloud or provisioner refused (a quota or limit of its account or
        # node pool it is over, a pod spec the node's sharing set-up refuses): its set-up, in the service's words.
        fields: dict[str, FieldValue] = {"message": clip(body), "setup": True}
        refusal = setup_refusal(body)
        if refusal is not None:
            fields["refusal"] = refusal  # a quota it is over, a policy that denied it: what the verdict names
        yield Draft("app.exception", fields)
    elif reason == "backoff_limit":
        # The Job controller's word, pasted: its pods failed first (a symptom; sym-process-exited).
        yield Draft("k8s.event", {"reason": "BackoffLimitExceeded", "message": clip(body), "due_to": reason})
    elif reason in _SIGNALLED:
        draft = Draft("process.signal", {"signal": "SIGTERM", "by": "scheduler", "detail": clip(body),
                                         "due_to": reason, "scheduler": scheduler})
        if by_uid is not None:
            draft.fields["by_uid"] = by_uid  # who cancelled, where the record's qualifier says (Slurm's `by <uid>`)
        draft.host = host  # the node a scheduler says it lost (Flux's `on broker HOST`)
        if host is not None and (reason in ("node_failure", "host_maintenance") or elsewhere):
            draft.fields["names_node"] = True  # about that node, whichever node's file printed it
        named = _VM_NAMED.get(scheduler)
        if host is None and named is not None and (vm := named.search(body)) is not None:
            draft.host = host = vm.group("vm")
        if reason == "preemption" and (scheduler in CLOUD_SCHEDULERS or host is not None):
            # A cloud took a VM back (its notice in the guest, its handler's or its orchestrator's word naming the
            # node): the node that printed it or the one the line names was taken, not the whole job by a
            # scheduler's decision (rule scheduler-preempted-node).
            draft.fields["taken"] = "node"
        yield draft
    else:
        # Understood, but no cause: root deleting a job (for a failed node or a limit it does not name),
        # "a limit" of SGE's without the job's use to tell which.
        ctx.claimed = True


# The event a scheduler's reason calls for, for the other readers of a scheduler's words (extract/slurmerr.py).
said_by_scheduler = _said


# Google Cloud Batch's status event for a task that failed (cloud.google.com/batch/docs/troubleshooting#reserved-exit-
# codes: `Task state is updated from PRE-STATE to FAILED on zones/ZONE/instances/INSTANCE_ID due to Spot Preemption with
# exit code 50001.`; older events without the `due to` words; Nextflow's google-batch executor logs the task's
# `Task failed due to Spot VM preemption with exit code 50001.`, nextflow-io/nextflow GoogleBatchTaskHandlerTest), also
# quoted inside the job's own event (`Job failed due to task failure. Specifically, task with index 0 failed due to the
# following task event: "Task state is updated from ..."`). Its exit code is the service's (catalog/scheduler.yaml,
# field exit_code): a reserved one says why the service ended the task; any other is the task's own exit, no cause.
# Each part one bounded run of a class: linear.
_GCP_BATCH_TASK = re.compile(r"\bTask (?:state is updated from [\w-]{1,40} to FAILED on (?P<where>\S{1,300})"
                             r"(?: [^.\n]{1,200}?)?|failed(?: due to [^.\n]{1,200}?)?)"
                             r" with exit code (?P<code>\d{1,6})\b")
# `gcloud batch jobs describe` and `... tasks describe` print the event as YAML, which folds a long description over
# lines (`- description: 'Task state is updated from RUNNING to FAILED on zones/us-central1-b/instances/7282612962`,
# then `      due to Spot VM preemption with exit code 50001.'`): an event's head waits a few lines for the line that
# holds its exit code (a reserved one is a prefilter word), and the two are read as one.
_GCB_HEAD = "Task state is updated from "
# Cromwell's GCP Batch backend rendering the task's end in its failure message (broadinstitute/cromwell
# supportedBackends/google/batch GcpBatchAsyncBackendJobExecutionActor.StandardException: `Task W.C:0:1 failed. The
# job was stopped before the command finished. GCP Batch task exited with VMRecreatedDuringExecution(50006).`; the
# name is its GcpBatchExitCode's, the number Batch's reserved exit code, read through the same table). A non-reserved
# code (`Success(0)`, a task's own) names no cause. Where Cromwell says in the same message that it resubmits the task
# (`Task failed immediately due to a transient GCP Batch error and will be automatically resubmitted up to N more
# times.`, before the task ran; `Task W:C was preempted for the 1st time. The call will be restarted with another
# preemptible VM ...`), that try is no end of the task's: the line is left to the table's texts, which read Cromwell's
# restart words as they read them in its Pipelines API messages. Linear.
_CROMWELL_GCB = re.compile(r"\bGCP Batch task exited with (?P<name>[A-Za-z][A-Za-z0-9]{0,60})\((?P<code>\d{1,6})\)")
_CROMWELL_GCB_WORD = "GCP Batch task exited with "
_CROMWELL_RETRY: Final = ("will be automatically resubmitted", "The call will be restarted with")
_K_GCB = "jobend.gcp_batch"  # per stream: (line, text) of an event's head whose exit code was not on its line
_GCB_SPAN = 3
_GCB_KEEP = 600


def _gcp_batch_event(body: str, ctx: LineContext) -> tuple[re.Match[str], str] | None:
    """A Google Cloud Batch task event on this line, or ending on it after a head a few lines above (YAML folding):
    the match and the text it was found in."""
    m = _GCP_BATCH_TASK.search(body)
    if m is not None:
        ctx.state.pop(_K_GCB, None)
        return m, body
    if _CROMWELL_GCB_WORD in body and (m := _CROMWELL_GCB.search(body)) is not None:
        return None if any(w in body for w in _CROMWELL_RETRY) else (m, body)
    at = body.find(_GCB_HEAD)
    if at >= 0:
        ctx.state[_K_GCB] = (ctx.lineno, body[at:at + _GCB_KEEP].rstrip())
        return None
    pending = ctx.state.get(_K_GCB)
    if not (isinstance(pending, tuple) and 0 < ctx.lineno - pending[0] <= _GCB_SPAN):
        return None
    joined = f"{pending[1]} {body.strip()}"
    m = _GCP_BATCH_TASK.search(joined)
    if m is None:
        return None
    ctx.state.pop(_K_GCB, None)
    return m, joined


def _gcp_batch_task(m: re.Match[str], body: str, ctx: LineContext) -> Iterator[Draft]:
    """A Google Cloud Batch task's failure event: the reason its reserved exit code names (the VM named by the event's
    `zones/Z/instances/NAME` is the node, as for the other GCE records), else understood, no cause."""
    row = word_reason("gcp", m.group("code"), "exit_code")
    if row is None or row.reason is None:
        ctx.claimed = True  # the task's own exit code, or a reserved one that names no cause
        return
    yield from _said(row.reason, "gcp", None, None, body[m.start():], ctx)


# Snakemake's Slurm executor on a job sacct reports in a failed state (snakemake 7 snakemake/executors/slurm,
# snakemake-executor-plugin-slurm since 8: `SLURM-job '{id}' failed, SLURM status is: '{status}'`, then `. For further
# error details see the cluster/cloud log ...` in later releases; the message under `Error in rule NAME:`, also its
# JSON log's `"msg"`): the state is Slurm's own (sacct's State; its fail states BOOT_FAIL, CANCELLED, DEADLINE, FAILED,
# NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, TIMEOUT, and the plugin's ERROR), read through the same words as a pasted
# sacct row's (catalog/scheduler.yaml, field state). The job's end as the manager recorded it: a state that names a
# reason is the scheduler's, FAILED the job's own (its log says why). Linear.
_SMK_SLURM = re.compile(r"\bSLURM-job '[^'\s]{1,64}' failed, SLURM status is: '(?P<state>[A-Z_]{2,20})'")
_SMK_SLURM_WORD = "failed, SLURM status is: '"


# Flux's job exception as `flux run` and `flux job attach` print it (flux-framework/flux-core#4195, #5304):
# `0.784s: job.exception type=exec severity=0 task 0: start failed: stress: No such file or directory`, with the
# job's id before the type since (#6892: `job.exception fdsPAmQhXV1 type=exec severity=0 task 0 (host fluke120):
# start failed: ...`). Its type is a word of the table (`timeout`, `cancel`, `node-failure`, `exec`), its note
# says more; only severity 0 ends the job.
_FLUX_EXCEPTION = re.compile(r"\bjob\.exception(?: [^\s=]+)? type=(?P<type>[\w.\-]+) severity=(?P<sev>\d+)"
                             r"(?: (?P<note>.*))?$")
# An `exec` exception's note when a task could not start: the job shell's `task 0 (host fluke120): start failed:
# PROG: strerror` (the host since #6892).
_FLUX_START_FAILED = re.compile(r"\btask \d+(?: \(host (?P<host>[\w.\-]+)\))?: start failed: (?P<prog>[^:]+?): "
                                r"(?P<why>[^:]+?)\s*$")


def _flux_exception(m: re.Match[str], body: str, ctx: LineContext) -> Iterator[Draft]:
    """A Flux job exception in the job's output: its note's phrase of the table where it has one (`lost contact
    with job shell on broker HOST` is a node lost, whatever the type), else the table's word for its type. An
    `exec` one whose task could not start the program the job named (missing, not executable) is the job's own
    set-up; one whose note says neither names no cause."""
    note = m.group("note") or ""
    body = body[m.start():]  # what came before (`0.784s: `, `flux-job: `) is the relay's
    row = word_reason("flux", m.group("type"))
    if m.group("sev") != "0" or row is None:
        ctx.claimed = True  # a non-fatal exception, or a type no table row names a cause for
        return
    hit = next((h for h in text_reasons(note) if h.scheduler == "flux" and h.reason is not None), None)
    if hit is not None:
        yield from _said(hit.reason, "flux", hit.host, None, body, ctx)
        return
    if row.reason == "setup":
        start = _FLUX_START_FAILED.search(note)
        if start is None or start.group("why") not in EXEC_WHY_TEXTS:
            ctx.claimed = True  # the shell could not exec, for a reason it does not say is the program's
            return
        draft = exec_failure(start.group("prog"), start.group("why"), body)
        draft.host = start.group("host")
        yield draft
        return
    yield from _said(row.reason, "flux", None, None, body, ctx)


# --------------------------------------------------------------------------
# Memory limits enforced by srun, Ray or a memory cgroup
# --------------------------------------------------------------------------

# The memory-limit kills whose words no row of catalog/scheduler.yaml reads (slurmstepd's are its rows, as the other
# schedulers', the kubelet's and the userspace killers' are: SchedulerReasonExtractor).
_MEM_LIMIT: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    # srun names the host whose task the limit ended: `srun: error: node17: task 3: Out Of Memory`.
    # (The task list starts with its digit: a run of spaces is the separator's alone, so the pattern stays linear.)
    ("srun", re.compile(r"error:\s+(?P<host>[A-Za-z0-9][\w.\-]*):\s+tasks?\s+\d[\d\-, ]*:\s+Out Of Memory")),
    # Ray's memory monitor, as the driver re-raises it (`ray.exceptions.OutOfMemoryError: Task was killed due to
    # the node running low on memory.`) and as the raylet sums it up (src/ray/raylet/node_manager.cc, the worker
    # kill summary: `2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other
    # reasons at node (ID: ..., IP: ...) over the last time period.`). The summary is printed for crashes alone too
    # (`0 Workers ... killed due to memory pressure (OOM), 3 Workers crashed due to other reasons`): a count of 0
    # kills nothing (a line a terminal wrapped before `actors)` still reads as the kill it sums up).
    # Its own account of one kill (the worker killing policy's message, which the driver's error and the worker's
    # exit detail carry on a line of their own when the first is cut: `Memory on the node (IP: ..., ID: ...) where
    # the task (...) was running was 12.49GB / 13.15GB (0.950003), which exceeds the memory usage threshold of 0.95.
    # Ray killed this worker (ID: ...) because it was the most recently scheduled task; ...`).
    ("ray", re.compile(r"killed due to the node running low on memory"
                       r"|(?<!\b0 Workers \(tasks / actors\) )killed due to memory pressure \(OOM\)"
                       r"|exceeds the memory usage threshold of \d+(?:\.\d+)?\. Ray killed this worker\b")),
)


def reason_owned(body: str) -> bool:
    """Whether this extractor reads the line as its own event where an exception's reader would read it too: a kill
    for memory (memory_limit_kill), or a request the job's scheduler, cloud or provisioner refused (a `setup` row of
    catalog/scheduler.yaml: a quota, the API server's refusal) that a client raised as its exception (botocore's
    `ClientError: An error occurred (ResourceLimitExceeded) ...`). One line, one event: the reason's."""
    if memory_limit_kill(body) is not None:
        return True
    if not any(a in body for a in reason_anchors("setup")):
        return False
    return any(hit.reason == "setup" for hit in text_reasons(body, lines=True))


def memory_limit_kill(body: str) -> str | None:
    """Who killed a process for memory on this line (a scheduler, the kubelet, Slurm, Ray), if anyone."""
    for proc, rx in _MEM_LIMIT:
        if rx.search(body):
            return proc
    if not any(a in body for a in reason_anchors("memory_limit")):
        return None  # none of the memory-limit rows can match: the whole table's pattern is not run
    for hit in text_reasons(body, lines=True):
        if hit.reason == "memory_limit":
            return hit.scheduler
    return None


_MEMCG_FULL = re.compile(r"memory: usage (?P<usage>\d+)kB, limit (?P<limit>\d+)kB, failcnt (?P<failcnt>\d+)")


class MemoryLimitExtractor:
    """A rank killed for memory by srun's task limit, Ray's memory monitor or its memory cgroup (host.oom_kill)."""

    name = "host.memory_limit"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "host.oom_kill": frozenset({"by", "cgroup", "detail", "names_node", "proc"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "kernel"})
    literals: tuple[str, ...] = (
        "Out Of Memory", "failcnt", "running low on memory", "memory pressure (OOM)", "Ray killed this worker",
    )

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        m = _MEMCG_FULL.search(body)
        if m:
            # A memory cgroup at its limit that failed allocations: the report of a cgroup OOM kill.
            usage, limit, failcnt = (int(m.group(k)) for k in ("usage", "limit", "failcnt"))
            if failcnt > 0 and limit > 0 and usage >= limit:
                yield Draft("host.oom_kill", {"proc": "memcg", "cgroup": True, "by": "limit", "detail": clip(body)})
            else:
                ctx.claimed = True
            return
        for proc, rx in _MEM_LIMIT:
            if (hit := rx.search(body)) is not None:
                draft = Draft("host.oom_kill", {"proc": proc, "cgroup": True, "by": "limit", "detail": clip(body)})
                if "host" in rx.groupindex:
                    draft.host = hit.group("host")
                yield draft
                return


# --------------------------------------------------------------------------
# LSF's job report in the job's output
# --------------------------------------------------------------------------

# The report LSF appends to the job's output file (or mails) when the job ends (FredslundMagnus/Myretuen's
# outputs/*.md, ncbi/fcs#81, nextflow-io/nextflow#1592):
#
#   Sender: LSF System <lsfadmin@n-62-20-14>
#   Subject: Job 8451045: <UUncertainty...> in cluster <dcc> Exited
#   Job was executed on host(s) <n-62-20-14>, in queue <gpuv100>, as user <s183914> in cluster <dcc> at ...
#   ...                                   (the times, `Your job looked like:` and the job's script)
#   TERM_RUNLIMIT: job killed after reaching LSF run time limit.      (when LSF ended it)
#   Exited with exit code 140.            (or `Successfully completed.`, `Exited with signal termination: 7, and
#                                          core dumped.`, `... termination: Alarm clock.`)
#
#   Resource usage summary:
#
# The end line counts only where `Resource usage summary:` follows it at once (srun says `Exited with exit code`
# too, and a program may print `Successfully completed.`); the report is then the job's record.
_LSF_SUBJECT = re.compile(r"^Subject: Job (?P<id>[\w\[\].]+): <.*> (?:in cluster <[^>]*> )?(?:Done|Exited)\s*$")
_LSF_EXECUTED = re.compile(r"^Job was executed on host\(s\) (?P<hosts>(?:<[^>]+>,? ?)+)")
_LSF_END = re.compile(r"^(?:(?P<ok>Successfully completed)|Exited with exit code (?P<code>\d+)"
                      r"|Exited with signal termination: (?P<sig>[^,.]+?)(?:, and core dumped)?)\.\s*$")
_LSF_TERM_LINE = re.compile(r"^(?P<word>TERM_[A-Z_]+): ")
_LSF_SUMMARY = "Resource usage summary:"
_K_LSF = "sched.lsf_report"  # per stream: what the report said so far (its id, hosts, TERM_ word, end line)
# How far `Resource usage summary:` may follow the end line (a blank line between them), and the end line the
# TERM_ line it follows.
_LSF_GAP = 3


class LsfReportExtractor:
    """LSF's job report in the job's output: how the job ended, as a job record (`sched.job`)."""

    name = "sched.lsf_report"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "sched.job": frozenset({"due_to", "exit_code", "job_id", "nodelist", "raw_state", "reason", "scheduler",
                                "scope", "signal", "state"}),
    }
    sources: frozenset[str] = frozenset({"application"})

    def __init__(self) -> None:
        self.literals: tuple[str, ...] = (
            "Subject: Job ", "Job was executed on host(s)", "Successfully completed.", "Exited with exit code ",
            "Exited with signal termination: ", _LSF_SUMMARY, *scheduler_words("lsf"))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        text = body.strip()
        report = ctx.state.get(_K_LSF)
        seen: dict[str, object] = report if isinstance(report, dict) else {}
        if (m := _LSF_SUBJECT.match(text)) is not None:
            ctx.state[_K_LSF] = {"job": m.group("id")}  # a new report starts
        elif (m := _LSF_EXECUTED.match(text)) is not None:
            seen["hosts"] = [h.split("*", 1)[-1] for h in re.findall(r"<([^>]+)>", m.group("hosts"))]
            ctx.state[_K_LSF] = seen
        elif (m := _LSF_TERM_LINE.match(text)) is not None:
            seen["term"] = (ctx.lineno, m.group("word"))
            ctx.state[_K_LSF] = seen
        elif (m := _LSF_END.match(text)) is not None:
            seen["end"] = (ctx.lineno, m, text)
            ctx.state[_K_LSF] = seen
        elif text == _LSF_SUMMARY:
            ctx.state.pop(_K_LSF, None)
            draft = _lsf_record(seen, ctx.lineno)
            if draft is not None:
                yield draft


def _lsf_record(seen: Mapping[str, object], lineno: int) -> Draft | None:
    """The job record of a report whose end line `Resource usage summary:` (at `lineno`) follows."""
    end = seen.get("end")
    if not isinstance(end, tuple) or not 0 < lineno - end[0] <= _LSF_GAP:
        return None
    at, m, said = end
    fields: dict[str, str | int] = {"scope": "job", "scheduler": "lsf"}
    term = seen.get("term")
    raw = said
    if isinstance(term, tuple) and 0 < at - term[0] <= _LSF_GAP - 1:
        row = word_reason("lsf", term[1])
        fields["reason"] = term[1]
        raw = f"{term[1]} {said}"
        if row is not None and row.reason is not None:
            fields["due_to"] = row.reason
    if m.group("code") is not None:
        code = int(m.group("code"))
        fields["exit_code"] = code
        signum = exit_signum("lsf", code)
        if signum is not None:
            fields["signal"] = signum
    elif m.group("sig") is not None:
        # A number (`7`) or strsignal's text (`Alarm clock`).
        sig = m.group("sig").strip()
        name = signal_of_text(sig)
        if sig.isdigit():
            fields["signal"] = int(sig)
        elif name is not None:
            fields["signal"] = _signal.Signals[name].value
    due = fields.get("due_to")
    state = "COMPLETED" if m.group("ok") else (state_of(str(due)) if due is not None else None) or "FAILED"
    fields["state"] = state
    fields["raw_state"] = clip(raw)
    job = seen.get("job")
    if isinstance(job, str):
        fields["job_id"] = job
    hosts = seen.get("hosts")
    if isinstance(hosts, list) and hosts:
        fields["nodelist"] = ",".join(dict.fromkeys(str(h) for h in hosts))
    return Draft("sched.job", dict(fields))


# --------------------------------------------------------------------------
# SGE: the qmaster's word on a job that failed on a host
# --------------------------------------------------------------------------

# The qmaster's messages file (and the execd's) when a job could not run on a host, and was rescheduled or set to
# an error state (kaldi-asr/kaldi#4358, TIGRLab/admin#227):
#   12/01/2020 22:46:24|worker|master|W|job 84.1 failed on host ubuntu general opening input/output file because:
#   12/02/2020 11:46:22 [1006:5837]: error: can't open output file "/home/.../q/test.log": Permission denied
# The words after the host are the `failed` code's (catalog/scheduler.yaml), what follows `because:` the shepherd's
# own error, whose errno says whose the failure was.
_SGE_FAILED = re.compile(r"\bjob (?P<job>\d+(?:\.\d+)?) failed on host (?P<host>[A-Za-z0-9][\w.\-]*) "
                         r"(?P<what>[^:]+?) because: (?P<why>.*)$")
# Errnos that say the path the job named is not there or not the job's to open: its own set-up. Any other names no
# side this reader decides: EPERM is a file system or a file's attribute refusing, not the path's permissions; a
# full or failing file system (ENOSPC, EIO) is the storage's, whose own reports say so.
_JOB_PATH_ERRNOS: Final = frozenset({"EACCES", "ENOENT", "ENOTDIR"})
# `qstat -j`'s message list of a task that could not start (gridengine/gridengine 6a5407d5,
# source/clients/common/show_job.c: `error reason %4d:          %s`), the shepherd's own message after its stamp:
#   error reason    1:          02/04/2020 12:21:50 [1116:435]: error: can't open output file "/tmp/x.log": No such ...
# whose words name the failure's state (catalog/batch.yaml `sge_shepherd`), read as the qmaster's `failed` text of it.
_QSTAT_REASON = re.compile(r"^\s{0,8}error reason\s{1,8}\d{1,10}:\s{1,40}(?P<why>\S.{0,800})$")
_SHEPHERD_STAMP = re.compile(r"^(?:\d\d/\d\d/\d{4} \d\d:\d\d:\d\d(?:\.\d+)? )?(?:\[[\d:]+\]: )?(?:error: )?")


class SgeFailureExtractor:
    """SGE's qmaster on a job that failed on a host for its own set-up (its output file, shell, working directory):
    `app.exception` (set-up) on that host, where the errno it names (if any) is the path's. And the shepherd's word
    on a job a signal ended (`job 9882833.1 died through signal KILL (9)`, after the qmaster's `failed on host H
    assumedly after job because:` or on a line of the job's mail): `process.signal`, the launcher's word on the
    job's exit, on the host the qmaster names."""

    name = "sched.sge_failure"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.exception": frozenset({"errno", "exc_type", "message", "path", "setup"}),
        "process.signal": frozenset({"by", "detail", "signal"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog"})
    literals: tuple[str, ...] = (" failed on host ", " died through signal ", "error reason ")

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        reason = _QSTAT_REASON.match(body)
        if reason is not None:
            yield from self._qstat(reason.group("why"), ctx)
            return
        m = _SGE_FAILED.search(body)
        hit = next((h for h in text_reasons(m.group("what")) if h.scheduler == "sge"), None) if m else None
        died = SGE_DIED.search(body)
        if died is not None and (hit is None or hit.reason in (None, "resource_limit")):
            # A failure whose words name no cause of their own (`assumedly after job`; `qmaster enforced h_rt,
            # h_cpu, or h_vmem limit`, three limits): the signal is the job's end as the execution host saw it.
            signum = sge_signal(died)
            if signum is not None:
                sig = signal_name(signum)
                yield Draft("process.signal", {"signal": sig, "by": by_whom(sig, "launcher"), "detail": clip(body)},
                            host=m.group("host") if m else None)
                return
        if m is None or hit is None or hit.reason != "setup":
            return
        # `12/02/2020 11:46:22 [1006:5837]: error: can't open ...`: the shepherd's stamp and ids are not the error.
        why = _SHEPHERD_STAMP.sub("", m.group("why").strip())
        yield from _sge_setup(m.group("what")[hit.start:hit.end], why, m.group("host"), ctx)

    @staticmethod
    def _qstat(why: str, ctx: LineContext) -> Iterator[Draft]:
        """`qstat -j`'s `error reason N:` row: the shepherd's words, read as the `failed` text of the state they name
        (catalog/batch.yaml `sge_shepherd`), where that text is the job's set-up (catalog/scheduler.yaml)."""
        why = _SHEPHERD_STAMP.sub("", why.strip())
        row = next((r for r in batch_tables().sge_shepherd if why.startswith(r.text)), None)
        if row is None:
            return
        hit = next((h for h in text_reasons(row.failed) if h.scheduler == "sge"), None)
        if hit is None or hit.reason != "setup":
            return
        yield from _sge_setup(row.failed, why, None, ctx)


def _sge_setup(failure: str, why: str, host: str | None, ctx: LineContext) -> Iterator[Draft]:
    """The job's own set-up that the shepherd could not give it (`failure`, the `failed` text; `why`, the shepherd's
    words), where the errno it names (if any) is the path's: `app.exception` with `setup`, on `host`."""
    name = errno_of(why)
    path = path_of(why)
    if name is not None and name not in _JOB_PATH_ERRNOS:
        ctx.claimed = True  # understood; the errno names no side the job's set-up could be blamed for
        return
    # The class Python gives the errno (OSError's own table): PermissionError, FileNotFoundError, ...
    exc = type(OSError(getattr(_errno, name), "")).__name__ if name else "OSError"
    fields: dict[str, str | bool] = {"exc_type": exc, "message": clip(f"{failure}: {why}"), "setup": True}
    if name:
        fields["errno"] = name
    if path:
        fields["path"] = path
    draft = Draft("app.exception", dict(fields))
    draft.host = host
    yield draft


EXTRACTORS: tuple[LineExtractor, ...] = (
    MemoryLimitExtractor(),
    SchedulerReasonExtractor(),
    LsfReportExtractor(),
    SgeFailureExtractor(),
)
