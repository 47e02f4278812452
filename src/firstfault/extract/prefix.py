"""The launcher-prefix layer: what launchers and collectors put in front of a line.

One process's line reaches a log through several writers, each of which may
prepend its own tag, and they stack:

    2026-11-02T10:03:07.123Z stderr F [1,2]<stderr>:[rank2]: Traceback ...
    worker-3: [default1]:ValueError: bad shape

| layer | example | yields |
|---|---|---|
| container runtime (CRI, docker, `kubectl logs --timestamps`) | `2026-11-02T10:03:07.123456789Z stderr F ` | - |
| a log console's row copied (Cloud Logging): local stamp, zone glued to the line | `2022-05-20 06:14:58.902 EDT` | - |
| mpirun `--tag-output` | `[1,2]<stderr>:` | rank 2 |
| PyTorch rank prefix (`TORCH_...`, >= 2.2) | `[rank2]:` | rank 2 |
| MPICH's PMI client | `[cli_2]:` | rank 2 |
| torchrun `--tee` / `--redirects`; a prefix template's | `[default1]:`; `[trainer1|1]:` | local rank 1 (a stream) |
| pdsh / DeepSpeed multi-node runner | `worker-3: ` | host worker-3 |
| Ray's log monitor (workers, the raylet) | `(RayTrainWorker pid=4331, ip=10.0.0.7) ` | host 10.0.0.7, pid 4331 |
| ... its own processes (daemons, idle workers) | `(raylet) `, `(autoscaler +1m2s) `, `(pid=7) ` | program ray-raylet |
| ... its colour codes (SGR) around the tag | `\x1b[36m(...)\x1b[0m `, pasted `[36m(` | - |
| ... its deduplication, after the line | ` [repeated 14x across cluster]` | - |
| SGLang's scheduler processes | `[2025-04-01 09:58:02 TP0] `, `[... DP1 TP3] ` | process TP0 |
| vLLM's workers | `(VllmWorker rank=3 pid=406) ` | rank 3, pid 406 |
| vLLM's logger | `ERROR 07-23 19:34:51 [multiproc_executor.py:487] ` | - |
| `kubectl logs --prefix` | `[pod/trainer-0/pytorch] ` | process pod/trainer-0/pytorch |
| docker compose | `trainer-1`, padded, then a bar | process trainer-1 |
| Open MPI `--timestamp-output` | `Sun Apr 22 11:13:01 2018` before mpirun's tag | - |
| a Markdown / e-mail quote (text pasted by people) | `> ` | - |
| Markdown emphasis or a code span around a pasted line or after its tag; a bullet | `**...**`, `` `...` ``, `- ` | - |
| forwarded syslog (RFC 5424; 3164 behind a PRI) | `<12>1 2026-11-02T10:03:07Z node-02 kernel - - - ` | host node-02 |
| a syslog file's header (rsyslog), its host an allocation node | `Nov  2 10:03:07 node-02 kernel: ` | host node-02 |
| `dmesg --decode` | `kern  :warn  : ` (its ISO stamp is the runtime's layer) | - |
| `grep -H` / `-n` / `-C` over log files | `nodes/node-02/kern.log:12:`, `kern.log-13-` | - |
| a progress bar the line was glued to (tqdm; a carriage return) | `  0%|          | 0/801 [00:00<?, ?it/s]` | - |
| a harness's banner rule printed without its newline | `========` (8+ of one of `= - * # ~`) | - |
| pytest's failure report (its `E` marker, then the source's indentation) | `E           ` | - |
| a JSON log record, one object a line (TGI's `--json-output`) | `{"timestamp":"...","fields":{"message":"..."}}` | - |
| a harness relaying output (LISA, Airflow, NVFLARE) | `[DEBUG] lisa.cmd[9].stdout `, `{subprocess.py:93} INFO - ` | - |

A tracker's automatic links in pasted text (`[net_ib.cc:101](http://net_ib.cc:101/)`,
a link whose target is its own text) are put back to their text.

The scanner strips the layers once per candidate line, before any extractor
sees it, so every extractor reads the line as its process wrote it, and the
multi-line records (tracebacks, torchrun summaries) of interleaved processes
stay apart: their per-stream state is keyed by what the layers name.

A host tag is only taken for a word that names a node of the allocation, or
that looks like a host name (it has a digit, or a dot and no capital)
and not like anything a program prints before a colon (an exception class,
a log level, a logger or a program name, among them those the catalog's rows
read by the name they print: enroot's helpers, `enroot-aufs2ovlfs: ...`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Final, Literal, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import container_errors
from firstfault.extract.memo import ON as _memo_on
from firstfault.extract.memo import digits_zeroed
from firstfault.hostlist import NodeNames
from firstfault.timeparse import BANNER_RULE, progress_bar_end

# The container runtime's stamp: RFC 3339 with a `T`, then CRI's stream and tag.
_RUNTIME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+(?:(?:stdout|stderr)\s+[FP]\s+)?"
)
# A row of a log console (Google Cloud's Logs Explorer) copied as text: the entry's time in the viewer's own zone, to
# the millisecond, then the zone's abbreviation glued to the payload, no space between (the console's spans pasted
# without theirs; its severity, where copied, on a line of its own before): `2022-05-20 06:14:58.902 EDTfailed to
# verify GPU driver installation` (GoogleCloudPlatform/container-engine-accelerators#237), `2024-05-31 21:59:39.905
# GETThe requested driver does not exist.` (#382: Georgia's zone, UTC+4, four hours after the `17:59:39` of wget's
# own stamp in the same paste; not an HTTP method). The zones are data: the abbreviations a console prints for the
# zones of the tz database (the Americas', Europe's, Asia's and Oceania's in common use), or an offset from GMT/UTC.
# Only glued, and not inside a capitalised word: a zone word with a space after it (`... 21:59:39.905 GET /api 200`),
# or one that begins a word in capitals (`ESTABLISHED`, `ARTIFACT`), is the line's own word.
_CONSOLE_ZONES: Final = (
    "UTC", "GMT", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT", "AKST", "AKDT", "HST", "AST", "ADT", "NST",
    "NDT", "BRT", "ART", "CLT", "CLST", "WET", "WEST", "BST", "IST", "CET", "CEST", "EET", "EEST", "MSK", "GET", "AMT",
    "GST", "PKT", "NPT", "ICT", "WIB", "SGT", "HKT", "PHT", "JST", "KST", "AWST", "ACST", "ACDT", "AEST", "AEDT",
    "NZST", "NZDT",
)
_CONSOLE = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (?:(?:GMT|UTC)[+-]\d{1,2}(?::?\d\d)?|"
    + "|".join(sorted(_CONSOLE_ZONES, key=lambda z: (-len(z), z))) + r")(?=[^\sA-Z]|[A-Z](?![A-Z]))"
)
# Open MPI's `--tag-output` (`[1,2]<stderr>:`, the job id then the rank) and Horovod's own runner, which tags each
# line of a rank's stream with the rank alone (horovod/runner/common/util/safe_shell_exec.py prefix_stream:
# `{time}[{rank}]<{prefix}>:{line}`, the time only under --prefix-output-with-timestamp: `[1]<stderr>:`).
_MPI = re.compile(r"\[(?:\d+,)?(?P<rank>\d+)\]<std(?:out|err)>:\s?")
_RANK = re.compile(r"\[rank(?P<rank>\d+)\]:\s?")
# torchrun's default `[default1]:`, and a TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE that adds a number after a bar
# (`[${role_name}${local_rank}|${rank}]:` gives `[trainer1|1]:`; what that number is, the template says).
_TEE = re.compile(r"\[(?P<name>[A-Za-z_][\w\-]*?)(?<!\d)(?P<local>\d++)(?:\|\d+)?\]:\s?")
# (The name ends before a digit: the shortest name leaves the longest number, so no other split can match;
# a split inside the number, each followed by a read of the rest of it, made `[a` and 2,000 digits cost 0.3 s.)
# MPICH's PMI client, before its own lines: `[cli_1]: aborting job:` (the client's id is the rank).
_CLI = re.compile(r"\[cli_(?P<rank>\d+)\]:\s?")
_HOST = re.compile(r"(?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]{0,252}):\s")
_BRACKET_HOST = re.compile(r"\[(?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]{0,252})\]:?\s")
_RANK_WORD = re.compile(r"rank(?P<rank>\d+)")
# Ray prints a worker's line behind its actor or task name, pid and (on another node) ip; the raylet and
# other daemons by name (ray-project/ray python/ray/_private/log_monitor.py publishes a file's `worker_pid`: `raylet`,
# `gcs_server`, `autoscaler`, `runtime_env`, else the worker's pid; worker.py prints the autoscaler's with the time
# since it started, `(autoscaler +1m23s)`). vLLM's own worker processes take the form with their rank (`(VllmWorker
# rank=3 pid=406)`, `(VllmWorkerProcess pid=232)`). A bare `(word) ` is not one (a conda prompt `(base) user@host$`).
# A file the log monitor follows whose name holds no worker pid (Ray 1.x log_monitor.py: `worker_pid` None for a file
# that is not `worker-...-<pid>.out`, a process the job started itself) is published with `pid=None` (mars-project/
# mars#2816: `(RayMainPool pid=None, ip=172.16.210.21) `): the name then keeps the process apart.
_RAY = re.compile(
    r"\((?:(?P<name>[A-Za-z_][\w.\-]*)(?: |, ))?(?:rank=(?P<rank>\d+)(?: |, ))?pid=(?:(?P<pid>\d+)|None)"
    r"(?:, ip=(?P<ip>[\w.:\-]+))?\)\s?"
    r"|\((?P<daemon>raylet|gcs_server|autoscaler|monitor|dashboard_agent|runtime_env|log_monitor)"
    r"(?: \+[\dhms.]{1,16})?(?:, ip=(?P<dip>[\w.:\-]+))?\)\s?"
)


# The platform program a bare `(pid=N)` names (catalog/platform.yaml `platform_programs`): Ray's idle worker, where
# the log's Ray names its tasks and actors in their tags (collect/scan.py Extraction reads the log's evidence).
RAY_IDLE_WORKER: Final = "ray-idle-worker"


@lru_cache(maxsize=64)
def _ray_program(daemon: str | None) -> str | None:
    """The platform program (catalog/platform.yaml `platform_programs`, part `cluster`) a Ray tag names: a daemon by
    its name, a worker whose tag names no actor, task or rank (`(pid=N)`: a worker Ray keeps idle, running nothing
    of the job) as Ray's idle worker. None: the workload's own process (an actor or task it named)."""
    from firstfault.catalog.tables import platform_program_of

    row = platform_program_of(daemon or RAY_IDLE_WORKER)
    return row.program if row is not None else None
_KUBECTL = re.compile(r"\[(?P<proc>pod/[\w.\-]+/[\w.\-]+)\]\s?")
# SGLang's scheduler processes log behind their stamp and parallel ranks (`[2025-04-01 09:58:02 TP0] `, `[... DP1
# TP3] `; some builds without the stamp, `[TP0] `): a process of its own (the stamp is timeparse's).
_SGLANG = re.compile(
    r"\[(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? )?(?P<proc>(?:DP|TP|PP|EP)\d+(?: (?:DP|TP|PP|EP)\d+)*)\] ?"
)
# A terminal's colour codes (SGR) a program printed around its tag: Ray colours its worker tag (`\x1b[36m(RayTrainWorker
# pid=6806)\x1b[0m `); text pasted from a terminal keeps them without the escape character (`[36m(RayWorkerWrapper
# pid=4009) `), read so only before a Ray tag or right after one.
_SGR = re.compile(r"\x1b\[[\d;]{0,12}m")
_SGR_RESIDUE = re.compile(r"\[\d{1,3}(?:;\d{1,3}){0,3}m(?=\()")
# The reset after a Ray tag: `\x1b[0m`, `\x1b[m`, or pasted without the escape `[0m`; a `[m` without it only before a
# space or the end (`(pid=3900) [mutex.cc : 1908] RAW: ...`: absl's raw record, whose `[m` is its file's name).
_SGR_RESET = re.compile(r"(?:\x1b\[0?m|\[0m|\[m(?=\s|$)) ?")
# ... and Ray's log deduplication, after the line (`... step 5 loss 0.6745\x1b[32m [repeated 14x across cluster] (Ray
# deduplicates logs by default. Set RAY_DEDUP_LOGS=0 ...)\x1b[0m`): the line stands for copies on other workers.
_RAY_REPEATED = re.compile(
    r"(?:\x1b\[[\d;]{0,12}m|\[\d{1,3}m)? ?\[repeated \d+x across cluster\](?: \(Ray deduplicates logs[^)]{0,400}\))?"
    r"(?:\x1b\[0?m|\[0m)?\s*$"
)
# compose names its containers `<service>-<N>` (v2) or `<project>_<service>_<N>` (v1), then pads to a column.
_COMPOSE = re.compile(r"(?<![A-Za-z0-9])(?P<proc>[A-Za-z0-9][\w.\-]*[-_]\d+)\s+\|\s?")
# Text pasted by people: a Markdown / e-mail quote marker (`> `, nested `> > `) in front of the log line.
_QUOTE = re.compile(r">(?: |$)")
# ... and the automatic links a tracker writes into pasted text (`[net_ib.cc:101](http://net_ib.cc:101/)`): only a
# link whose target is its own text, so a real Markdown link keeps its words.
_AUTOLINK = re.compile(r"\[(?P<text>[^\[\]\s]+)\]\(https?://(?P=text)/?\)")
# Markdown around a line pasted into a thread (a person's, not a program's): strong emphasis (`**RuntimeError: NCCL
# error in: ..., invalid usage, ...**`, facebookresearch/fairseq#2924) or a code span (`` `CUDA error: out of
# memory` ``) around the whole line, and a list item's bullet (`- `, `* `) before either or before a stamped line.
# The markers are taken only in pairs that open at the line's start (or after a tag's `: `) and close at its end,
# around words that start and end without a space: `**/*.py` (a glob), `**kwargs)` (a source line) and `a ** b`
# (Python's power) open no pair that closes. A fence (```` ``` ````) has nothing inside.
_BULLET = re.compile(r"[-*] (?=\*\*\S|`[^`]|\d)")


def _pair(body: str, at: int) -> str | None:
    """The words inside a `**...**` or `` `...` `` pair that opens at body[at] and closes at the body's end."""
    mark = "**" if body.startswith("**", at) else "`" if body.startswith("`", at) else None
    if mark is None:
        return None
    end = len(body.rstrip())
    inner = body[at + len(mark):end - len(mark)]
    if mark == "`":
        inner = inner.rstrip()  # a code span keeps the spaces its text ended with (a table's padded cells)
    if (end - at < 2 * len(mark) + 1 or not body.startswith(mark, end - len(mark)) or not inner
            or inner[:1].isspace() or inner[-1:].isspace() or mark in inner or inner[:1] in "*`"
            or (mark == "**" and inner[-1:] == ":")):
        return None  # (`**Error log of rank 3:**`: a post's bold heading over the log, no line of it)
    return inner


def _markup_inner(body: str) -> str | None:
    """The line without the Markdown a person put around it (a pair at its start, or a bullet), or None."""
    if body[:1] in "-*" and body[1:2] == " ":
        m = _BULLET.match(body)
        return body[m.end():] if m else None
    return _pair(body, 0)


# A program's error tag with a code span opened right after it: the raw line's words for such a line (a prefilter that
# searches the raw line finds the table's words split by the span's mark).
MARKUP_TAG_LITERALS: Final = ("error: `", "Error: `", "ERROR: `")


# bash's report of an error in a script names the script and the line before the message (error.c, `%s: line %d: `):
# `/home/u/.lsbatch/1724344190.9833039: line 8: **/rsrch5/.../o7cw6oj0.sh: No such file or directory**`, an LSF job's
# output with the message emphasised by its poster (ENCODE-DCC/atac-seq-pipeline#446).
_SHELL_LINE = re.compile(r": line \d{1,7}(?=:|$)")


def _tagged_markup(body: str) -> str | None:
    """`tag: **line**` (a host or job name the layers do not take, one word at the line's start, then the pasted line
    in a pair): the tag kept, the pair's markers gone. The tag may be words each ended by `: ` (a program's name and
    its level, `vllm: error: `unrecognized arguments: --x``, where a person put the span around the message after
    them); none may hold a space but a shell's `line N` (_SHELL_LINE)."""
    at = body.find(": **") if body.endswith("**") else body.find(": `")
    tag = body[:at]
    if ": line " in tag:  # a shell's place in its script, `<script>: line N` (bash's error.c): one word of the tag
        tag = _SHELL_LINE.sub("", tag)
    if at <= 0 or any(ch.isspace() or ch == "`" for ch in tag.replace(": ", "")):
        return None  # a tag is words at the line's start; emphasis after a sentence is the sentence's own
    inner = _pair(body, at + 2)
    return None if inner is None else body[:at + 2] + inner


# vLLM's logger before each line of its record, the traceback's too: level, a yearless stamp, the source file and
# line (`ERROR 08-23 08:25:25 multiproc_worker_utils.py:226] `, bracketed since 0.7: `ERROR 07-23 19:34:51
# [multiproc_executor.py:487] `); one space after the `]` is the logger's, the rest the line's own (a frame's).
_VLLM_LOG = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:\[[\w.\-]+:\d+\]|[\w.\-]+:\d+\]) ?"
)
# A harness that runs another program and logs each line of its output as a record of its own logger: the record's
# level is the harness's choice for the stream, not the program's word on the line (a traceback relayed at INFO is
# still a traceback). Two shapes, from their sources:
# - Python's logging with a logger named after the stream: Microsoft LISA (lisa/util/process.py: each command's
#   output through loggers `<parent>.stdout` at INFO (DEBUG with no_info_log) and `<parent>.stderr` at ERROR;
#   lisa/util/logger.py's format `%(asctime)s.%(msecs)03d %(levelname)s %(name)s %(message)s`, earlier
#   `...[%(thread)d][%(levelname)s] %(name)s ...`): `2023-06-27 06:27:41.764[18188][DEBUG]
#   lisa.env[generated_4].node[0].cmd[384].stdout <line>`.
# - Apache Airflow's task log (`[%(asctime)s] {%(filename)s:%(lineno)d} %(levelname)s - %(message)s`; MWAA doubles
#   the braces) where the module is one that relays a child's or the task's own stream: subprocess.py
#   (SubprocessHook, BashOperator: `log.info("%s", line)`), bash_operator.py (1.10's BashOperator), process_utils.py
#   (execute_in_subprocess: PythonVirtualenvOperator), logging_mixin.py (the task's own stdout at INFO and stderr at
#   WARNING), docker.py (DockerOperator: the container's log) and pod_manager.py / pod_launcher.py
#   (KubernetesPodOperator: the pod's log, `[<container>] ` before each line since provider 5). Another module's
#   record (taskinstance.py, standard_task_runner.py) is Airflow's own words, not relayed.
# - NVIDIA FLARE's SubprocessLauncher (the Client API's ScriptRunner with launch_external_process): each line of the
#   training script's merged stdout and stderr through the launcher's own logger at INFO (nvflare/app_common/launchers/
#   subprocess_launcher.py `log_subprocess_output`: `logger.info(line)`; nvflare/utils/process_utils.py since 2.7),
#   in NVFLARE's format `%(asctime)s - %(name)s - %(levelname)s - %(message)s` with the logger's base name (fuel/utils/
#   log_utils.py BaseFormatter; since 2.6 an `%(fl_ctx)s - ` before the message, empty or bracketed, and a form with
#   `%(identity)s - %(fullName)s`): `2025-04-07 14:57:43,399 - SubprocessLauncher - INFO - <line>`
#   (NVIDIA/NVFlare#3360). Another logger's record is NVFLARE's own words, not relayed.
# One space after the tag is the harness's; the rest is the line's own (a frame's indentation).
_RELAY_LEVELS = r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|NOTSET)"
_AIRFLOW_STAMP = r"(?:\[\d{4}-\d\d-\d\d[ ,T][^\]\n]{0,30}\] )?"
_RELAY = re.compile(
    r"(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? ?(?:\[\d+\])?"
    r"(?:\[" + _RELAY_LEVELS + r"\]|" + _RELAY_LEVELS + r") "
    r"(?:[A-Za-z_][\w\-]{0,63}(?:\[[^\]\s]{0,64}\]){0,4}\.){1,12}std(?:out|err) "
    r"|" + _AIRFLOW_STAMP + r"\{\{?(?:subprocess|bash_operator|process_utils|logging_mixin|docker)\.py:\d+\}\}? "
    + _RELAY_LEVELS + r" - "
    r"|" + _AIRFLOW_STAMP + r"\{\{?pod_(?:manager|launcher)\.py:\d+\}\}? " + _RELAY_LEVELS + r" - "
    r"(?:\[[a-z0-9][a-z0-9.\-]{0,62}\] (?=\S))?"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - (?:[\w\-]{1,64} - )?(?:[A-Za-z_]\w{0,63}\.){0,12}"
    r"SubprocessLauncher - INFO - (?:\[[^\]\n]{0,300}\] - | - )?"
    r")"
)
# Where a relay's tag can stand: its first character, and a literal its head must hold.
_RELAY_FIRST: Final = frozenset("0123456789[{")
_RELAY_HEAD: Final = 320
_NVFLARE_RELAY: Final = "SubprocessLauncher - INFO - "

# Open MPI's `--timestamp-output`: a ctime stamp glued to the `[1,N]<stderr>:` tag that follows it (and Horovod's
# --prefix-output-with-timestamp, time.asctime before its `[N]<stderr>:`).
_MPI_STAMP = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d "
    r"\d\d:\d\d:\d\d \d{4}(?=\[(?:\d+,)?\d+\]<std(?:out|err)>:)"
)

# A forwarded syslog message: the PRI, then RFC 5424's version, stamp, host, app, procid, msgid and structured data
# (util-linux logger: `<12>1 2026-12-03T15:31:35.530881+00:00 vm kernel - - [timeQuality tzKnown="1"] msg`), or
# RFC 3164's stamp (BSD or, rsyslog's forward format, RFC 3339), host and tag (`<12>Dec  3 15:31:35 vm kernel: msg`).
_SYSLOG_5424 = re.compile(
    r"<\d{1,3}>1 \S+ (?P<host>\S+) \S+ \S+ \S+ (?:-|(?:\[[^\]]*\])+) ?"
)
_SYSLOG_3164 = re.compile(
    r"<\d{1,3}>(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) (?P<host>[\w.\-]+) [^\s:\[]+(?:\[\d+\])?: ?"
)
# A syslog file's own header (a storage daemon's tag stays on its line: _keeps_tag), as rsyslog and syslog-ng write
# /var/log/messages (RFC 3164's layout without the PRI:
# a BSD stamp or, with RSYSLOG_FileFormat, an RFC 3339 one; then the host and the tag). A file that one collector
# fills from many hosts names the node on each line; the host is taken only when it names a node of the
# allocation (a per-node file's own name changes nothing, and an unknown word is no layer).
_SYSLOG_FILE = re.compile(
    r"(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)) "
    r"(?P<host>[\w.\-]{1,253}) (?P<tag>[^\s:\[]{1,64})(?:\[\d{1,10}\])?: ?"
)


@lru_cache(maxsize=1)
def _storage_tags() -> tuple[frozenset[str], tuple[str, ...]]:
    """The syslog tags of the storage daemons (catalog/platform.yaml `storage_clients`: their processes, and their
    anchors that are one word), which stay on their lines: a storage client's words count only after its anchor
    (extract/host.py storage_word), and on a node's own syslog the tag is that anchor (`mmfs[8812]: [E] ...`,
    `blobfuse2[3214717]: ... LOG_ERR`)."""
    from firstfault.catalog.tables import storage_tables

    clients = storage_tables().clients.values()
    words = tuple(a for c in clients for a in c.anchors if a.replace("-", "").replace("_", "").isalnum())
    return frozenset(p for c in clients for p in c.processes) | frozenset(words), words


def _keeps_tag(tag: str) -> bool:
    """Does a syslog header's tag stay on the line (_storage_tags)?"""
    names, words = _storage_tags()
    return tag in names or tag.startswith(words)
# dmesg --decode's facility and level (`kern  :warn  : `), names from syslog(3).
_DMESG_DECODE = re.compile(
    r"(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7]) *:"
    r"(?:emerg|alert|crit|err|warn|notice|info|debug) *: "
)
# grep -H over log files: a path and, with -n, the line number (`-N-` on -A/-B/-C context lines), glued to the line
# it found. A log file's name (`.log`, `.out`, `.err`, `.txt`, a rotation's number) takes any line; another path
# (`/var/log/syslog`) only one that starts with a syslog, ISO or dmesg stamp, so a Python warning's
# `/usr/lib/x.py:42:` stays.
_GREP = re.compile(
    r"[\w.\-/]*?\.(?:log|out|err|txt)(?:\.\d+)?(?::\d+:|-\d+-|:)(?=\S)"
    r"|[\w.\-]*/[\w.\-/]*?(?:\.(?:log|out|err|txt)(?:\.\d+)?-|:\d+:|-\d+-|:|-)"
    r"(?=[A-Z][a-z]{2} [ \d]\d \d\d:|\d{4}-\d\d-\d\d[T ]\d\d:|\[\s*\d+\.\d+\]|\[[A-Z][a-z]{2} [A-Z][a-z]{2} )"
)
# pytest's report of a failed test marks each line of the exception with `E` in the first column of the source's
# indentation (`E           RuntimeError: Unable to JIT load the async_io op ...`, `E       torch.OutOfMemoryError:
# CUDA out of memory.`): three spaces at least, then the line. glog's `E1029 03:56:30.380349` has none.
_PYTEST = re.compile(r"E {3,}(?=\S)")
# A banner rule a harness printed without its newline, glued to the line after it (timeparse.BANNER_RULE).
_BANNER = re.compile(BANNER_RULE)
# A tqdm progress bar the line was printed right after (`desc:  45%|####     | 7361/16384 [05:43<06:50, 21.99it/s]`)
# is read by position (timeparse.progress_bar_end).

# A structured logger's JSON record of an error, one object a line: Rust's tracing-subscriber (Hugging Face TGI's
# launcher and router with `--json-output`: `{"timestamp":"...","level":"ERROR","fields":{"message":"Shard 0 failed
# to start"},"target":"text_generation_launcher"}`, later `"message"` at the top), python-json-logger and structlog
# (`message`, `msg`, `event`, the level in `level`, `levelname` or `severity`); and docker's json-file driver, whose
# record holds nothing but the line (`{"log":"...\n","stream":"stderr","time":"..."}`). The record's message is the
# line as the program wrote it (its first line, where it holds several). Only a record at an error's level, or
# docker's: a controller's record below it may carry what it is about in fields of its own (Karpenter's
# `"Node":{"name":...}`, extract/jobend.py), which the raw line keeps. A record past _JSON_MAX characters, or one that
# does not parse, is no layer. The error a Go logger records beside its message, in a key of its own (zap's
# `zap.Error(err)` and logr's zapr `log.Error(err, msg)`: `"error"`, the key of every Kubernetes controller built on
# controller-runtime, Karpenter's `{"level":"ERROR",...,"message":"failed to create instance",...,"error":"googleapi:
# Error 400: ..."}`, cloudpilot-ai/karpenter-provider-gcp#167; logrus' ErrorKey `"error"`; klog's JSON format
# `"err"`), is read after the message as Go wraps an error, `message: error`: the message alone says only what failed.
_JSON_MESSAGE_KEYS: Final = ("message", "msg", "log", "event")
_JSON_ERROR_KEYS: Final = ("error", "err")
_JSON_ERROR_LEVELS: Final = frozenset({"error", "err", "fatal", "critical", "crit", "panic", "alert", "emerg"})
_DOCKER_JSON_KEYS: Final = frozenset({"log", "stream", "time", "attrs"})
_JSON_MAX: Final = 100_000


def _json_record(body: str) -> str | None:
    """The message of a one-line JSON log record of an error (or docker's json-file record); None: no such record."""
    text = body.rstrip()
    if not text.endswith("}") or len(text) > _JSON_MAX:
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    level = next((obj[k] for k in ("level", "levelname", "severity") if isinstance(obj.get(k), str)), None)
    if not ((level is not None and level.lower() in _JSON_ERROR_LEVELS)
            or (isinstance(obj.get("log"), str) and set(obj) <= _DOCKER_JSON_KEYS)):
        return None
    fields = obj.get("fields")
    msg = next((obj[k] for k in _JSON_MESSAGE_KEYS if isinstance(obj.get(k), str)), None)
    if msg is None and isinstance(fields, dict) and isinstance(fields.get("message"), str):
        msg = fields["message"]
    if msg is None:
        return None
    err = next((obj[k] for k in _JSON_ERROR_KEYS if isinstance(obj.get(k), str) and obj[k].strip()), None)
    if err is not None and err.strip() not in msg:
        msg = f"{msg.rstrip()}: {err.strip()}"
    return next((part for part in msg.split("\n") if part.strip()), None)


# Words a program itself prints before `: ` that are never host names.
_NOT_HOSTS: Final = frozenset(
    w.lower() for w in (
        "INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL", "FATAL", "NOTICE", "TRACE", "Note",
        "Traceback", "File", "kernel", "slurmstepd", "srun", "sbatch", "salloc", "mpirun", "torchrun",
        "python", "python3", "bash", "sh", "NCCL", "pdsh", "deepspeed", "Error", "Exception", "what",
        "Warning", "Message", "Reason", "Hint", "Root Cause", "Failures", "ncclUnhandledCudaError",
    )
)
_EXC_TAIL: Final = ("error", "exception", "warning", "exit", "interrupt", "failure", "fault", "timeout")
# Programs that print their own name joined to the node's by a hyphen before `: `: slurmstepd and slurmd (their
# log's argv0 `slurmstepd-%s` / `slurmd-%s` with the node's name, src/slurmd/slurmstepd/slurmstepd.c and
# slurmd.c, Slurm 21.08 on: `slurmstepd-gpu07: error: ...` in a job's output and slurmd's log; the lab's Slurm 22.05
# prints `slurmstepd-ffnode1: error: --task-prolog failed status=1`). The word is the program's tag, which the
# Slurm readers read (extract/slurmerr.py `_TAG`), not a host's: its digits are the node name's.
_NODE_SUFFIXED_PROGRAMS: Final = ("slurmstepd-", "slurmd-")
_PRINTER = re.compile(r"([A-Za-z][\w.\-]{1,63}): ")


@lru_cache(maxsize=1)
def _printers() -> frozenset[str]:
    """The programs the catalog's rows read by the name they print before `: ` (err(3)'s and warn(3)'s `progname: `:
    enroot's helpers, `enroot-aufs2ovlfs: failed to set capabilities: ...`; catalog/platform.yaml `container_errors`):
    a word a program prints as its own name is no host's tag, though it holds a digit (only such a word could be
    taken for one: _looks_like_host)."""
    return frozenset(m.group(1).lower() for row in container_errors()
                     if (m := _PRINTER.match(row.text)) and any(c.isdigit() for c in m.group(1)))
# A time since the job started, as Flux's `flux run` puts it before each line it relays (`0.784s: flux-shell[1]:
# FATAL: ...`, `5.099s: job.exception ...`): a number and a unit is no host.
_ELAPSED = re.compile(r"(?<!\d)\d+(?:\.\d+)?(?:s|ms|us|m|h)")
MAX_LAYERS: Final = 6


class Prefixed(NamedTuple):
    """A line with its launcher layers taken off (a tuple: one is built for every candidate line)."""

    body: str
    host: str | None = None  # named by a pdsh / DeepSpeed tag
    rank: int | None = None  # global rank, named by mpirun or PyTorch
    local: int | None = None  # torchrun's local rank tag
    proc: str | None = None  # a process named by Ray (pid), kubectl --prefix (pod/container) or compose
    # The host came from a syslog file's header: it names the node, not a stream (a record's continuation
    # lines, which carry no header, stay in the stream of its first line).
    header_host: bool = False
    # A program of the platform under the workload that the layers name as the line's printer (catalog/platform.yaml
    # `platform_programs`: Ray's `(raylet)`, `(gcs_server)`, an idle worker's `(pid=N)`), not one of the job's ranks.
    program: str | None = None

    @property
    def stream(self) -> tuple[str | None, int | None, str | None]:
        return (self.host.lower() if self.host and not self.header_host else None, self.local, self.proc)


def _looks_like_host(word: str, hosts: NodeNames) -> bool:
    if word in hosts:
        return True
    low = word.lower()
    if low in _NOT_HOSTS or low.endswith(_EXC_TAIL) or word.isdigit() or _ELAPSED.fullmatch(word) or low in _printers():
        return False
    if low.startswith(_NODE_SUFFIXED_PROGRAMS):
        return False
    if any(c.isdigit() for c in word) and _keeps_tag(word):
        # a storage program's own name with its version's digit (libfuse 3's `fusermount3: ...`, `blobfuse2: ...`):
        # its tag, which stays on the line (_keeps_tag), not a host's
        return False
    if any(c.isdigit() for c in word):
        # `worker-3`, `node001`, `ip-10-0-0-1`, `10.0.0.7`; not `cuda:0`-like words (no colon here).
        return not word.isupper()
    # `login.example.org`: dotted, lower-case; Python loggers (`torch.distributed.run`) hold no digit
    # but are dotted too, so only dotted names whose parts look like DNS labels with a hyphen count.
    return "." in word and word == low and "-" in word


class PrefixLayer:
    """Strips the layers of one line; `hosts` are the allocation's node names."""

    def __init__(self, hosts: Iterable[str] = ()) -> None:
        self.hosts = NodeNames(hosts)
        # A line's digits made `0` (memo.digits_zeroed) -> where its layers lie (a _Cuts), or False where the split
        # read a value (see _split); filled by split_settled when the fast paths are on.
        self._cuts: dict[str, _Cuts | Literal[False]] = {}

    def split(self, line: str) -> Prefixed:
        return self._split(line)[0]

    def split_settled(self, line: str) -> tuple[Prefixed, bool]:
        """The layers of a line, and whether its body is settled: whether `split_prefixes(body)` (the
        layer without the allocation's names, which extractors call on the body they are given)
        is provably the body itself with no layer named.

        It is when the last round below stopped at the body's first character with no host and no
        process taken (the rounds' conditions are then those of a fresh split; a name of the
        allocation only ever adds a layer), the body does not start with a space (a fresh split
        strips it) and no link was put back to its text.

        With the fast paths on (extract/memo.py), the split is remembered by the line's digits made `0`
        (the same line of every rank, step or pid is one key): _split tests digits only as digits, so where it
        read no value (a repeated Open MPI tag, a link's text, a progress bar, a JSON record) the
        layers of every line of that key lie at the same places, and only the numbers they name are read
        again (`_Cuts.apply`). Its tests of a word by name (a node of the allocation, a host's looks, a storage
        daemon's tag) are kept with the entry, each with its place and answer (`_Cuts.guards`): a line of the key
        whose words there answer each alike took the same path (the same key, the same answers), any other is split
        afresh.
        """
        if not _memo_on[0] or len(line) > _MEMO_MAX_LINE:
            p, settled, _ = self._split(line)
            return p, settled
        key = digits_zeroed(line)
        cuts = self._cuts.get(key)
        if cuts is None:
            p, settled, cuts = self._split(line)
            if len(self._cuts) >= _MEMO_SIZE:
                self._cuts.clear()
            self._cuts[key] = False if cuts is None else cuts
            return p, settled
        if cuts is False:
            p, settled, _ = self._split(line)
            return p, settled
        if cuts.guards and not self._guards_hold(cuts.guards, line):
            p, settled, _ = self._split(line)  # (a name test answers otherwise: another path, split afresh)
            return p, settled
        return cuts.apply(line), cuts.settled

    def _split(self, line: str) -> tuple[Prefixed, bool, _Cuts | None]:
        """split_settled's answer, and where its layers lie in `line` (None where the split read a value: an Open
        MPI tag repeated in the body, a link whose target is its text, a progress bar, a JSON record; those may differ
        between two lines whose digits alone differ), with the name tests it made on the way (_guard)."""
        body = line.lstrip()
        valued = False  # a test read a value, not only the digits' places, that no guard records
        guards: list[tuple[int, int, int, bool]] = []  # the name tests the split made, in order (_Cuts.guards)
        rank_at: tuple[int, int] | None = None
        local_at: tuple[int, int] | None = None
        host_at: tuple[int, int] | None = None
        proc_at: tuple[int, int] | None = None
        n = len(line)
        host: str | None = None
        rank: int | None = None
        local: int | None = None
        proc: str | None = None
        program: str | None = None
        header_host = False
        stopped = True  # the rounds ended by a `break` (the body's first character starts no layer)
        if "\r" in body:  # a progress bar overwritten in place: the line is what follows the last return
            body = body[body.rfind("\r", 0, len(body.rstrip())) + 1:]
        bar = "it/s]" in body or "s/it]" in body
        valued = bar
        for _ in range(MAX_LAYERS):
            c = body[:1]
            if not c:
                break
            if c in _RELAY_FIRST:
                head = body[:_RELAY_HEAD]
                if ".py:" in head or ".stdout " in head or ".stderr " in head or _NVFLARE_RELAY in head:
                    m = _RELAY.match(body)
                    if m and m.end() < len(body):
                        body = body[m.end():]
                        continue
            if bar:
                end = progress_bar_end(body)
                if 0 < end < len(body):
                    body = body[end:]
                    continue
            if c == "<":
                valued = True  # (RFC 5424's version, `1`)
                m = _SYSLOG_5424.match(body) or _SYSLOG_3164.match(body)
                if m and host is None:
                    host = m.group("host")
                    at = n - len(body)
                    host_at = (at + m.start("host"), at + m.end("host"))
                    body = body[m.end():]
                    continue
                break
            if c == "{":
                # (the record's message is a string of its own, not a place in the line, and its level a value)
                valued = True
                got = _json_record(body)
                if got is None:
                    break
                body = got
                continue
            if c == "\x1b":
                m = _SGR.match(body)
                if m:
                    body = body[m.end():]
                    continue
                break
            if c == "(" and proc is None:
                m = _RAY.match(body)
                if m:
                    at = n - len(body)
                    ip = m.group("ip") or m.group("dip")
                    if ip and host is None:
                        host = ip
                        g = "ip" if m.group("ip") else "dip"
                        host_at = (at + m.start(g), at + m.end(g))
                    if m.group("rank") is not None and rank is None:
                        rank = int(m.group("rank"))
                        rank_at = (at + m.start("rank"), at + m.end("rank"))
                    g = "pid" if m.group("pid") else "daemon" if m.group("daemon") else "name"
                    proc = m.group(g)
                    if m.group("daemon") is not None or (m.group("name") is None and m.group("rank") is None):
                        # (decided by the tag's words, never its digits: the split's memo holds it for every pid)
                        program = _ray_program(m.group("daemon"))
                    if proc is not None:  # (a bare `(pid=None)` names no process)
                        proc_at = (at + m.start(g), at + m.end(g))
                    body = body[m.end():]
                    reset = None
                    if body[:1] in ("\x1b", "["):
                        valued = True  # (the reset's `0`)
                        reset = _SGR_RESET.match(body)
                    if reset is not None and reset.end() < len(body):
                        body = body[reset.end():]
                    continue
                break
            if c == "[":
                m = _SGR_RESIDUE.match(body)
                if m:
                    body = body[m.end():]
                    continue
                m = _SGLANG.match(body) if proc is None else None
                if m and m.end() < len(body):
                    proc = m.group("proc")
                    at = n - len(body)
                    proc_at = (at + m.start("proc"), at + m.end("proc"))
                    body = body[m.end():]
                    continue
                m = _KUBECTL.match(body)
                if m and proc is None:
                    proc = m.group("proc")
                    at = n - len(body)
                    proc_at = (at + m.start("proc"), at + m.end("proc"))
                    body = body[m.end():]
                    continue
                m = _MPI.match(body)
                if m:
                    rank = int(m.group("rank"))
                    tag = m.group().rstrip()
                    body = body[m.end():]
                    # Open MPI tags each write of a rank's stream: a line a program wrote in pieces
                    # (Python's traceback under load) holds the same tag again mid-line.
                    valued = True  # (the tag's own numbers: another rank's tag in the body stays)
                    if tag in body:
                        body = body.replace(tag, "")
                    continue
                m = _RANK.match(body) or _CLI.match(body)
                if m:
                    rank = int(m.group("rank"))
                    at = n - len(body)
                    rank_at = (at + m.start("rank"), at + m.end("rank"))
                    body = body[m.end():]
                    continue
                m = _TEE.match(body)
                if m and m.group("name").lower() not in ("e", "w", "i", "f"):
                    local = int(m.group("local"))
                    at = n - len(body)
                    local_at = (at + m.start("local"), at + m.end("local"))
                    body = body[m.end():]
                    continue
                m = _BRACKET_HOST.match(body)
                if m and host is None:
                    at = n - len(body)
                    if self._guard(guards, _G_HOST_ANY_CASE, m.group("host"), at + m.start("host")):
                        host = m.group("host")
                        host_at = (at + m.start("host"), at + m.end("host"))
                        body = body[m.end():]
                        continue
                break
            if host is None and self.hosts.nodes and (c.isdigit() or c in "JFMASOND"):
                m = _SYSLOG_FILE.match(body)
                if m and m.end() < len(body):
                    at = n - len(body)
                    if self._guard(guards, _G_HOST, m.group("host"), at + m.start("host")):
                        host, header_host = m.group("host"), True
                        host_at = (at + m.start("host"), at + m.end("host"))
                        keep = self._guard(guards, _G_KEEPS_TAG, m.group("tag"), at + m.start("tag"))
                        body = body[m.start("tag") if keep else m.end():]
                        continue
            if c.isdigit():
                m = _RUNTIME.match(body) or (_CONSOLE.match(body) if body[23:24] == " " else None)
                if m and m.end() < len(body):
                    body = body[m.end():]
                    continue
            if c in "=-*#~":
                m = _BANNER.match(body)
                if m:
                    body = body[m.end():]
                    continue
            if c in "*`-" and body[:2] != "--":
                inner = _markup_inner(body)
                if inner is not None:
                    valued = valued or not body.endswith(inner)  # (a pair's closing marks cut: no suffix of the line)
                    body = inner
                    continue
            if c == ">":
                m = _QUOTE.match(body)
                if m and m.end() < len(body):
                    body = body[m.end():]
                    continue
                break
            m = _MPI_STAMP.match(body) if c in "MTWFS" else None
            if m:
                body = body[m.end():]
                continue
            if c == "E":
                m = _PYTEST.match(body)
                if m:
                    body = body[m.end():]
                    continue
            m = _VLLM_LOG.match(body) if c in "DIWEC" else None
            if m and m.end() < len(body):
                body = body[m.end():]
                continue
            if c == "l" and body.startswith("local"):
                valued = True  # (the facilities local0-local7)
            m = _DMESG_DECODE.match(body) if c.islower() else None
            if m:
                body = body[m.end():]
                continue
            m = _GREP.match(body)
            if m:
                body = body[m.end():]
                continue
            m = _COMPOSE.match(body) if proc is None else None
            if m:
                proc = m.group("proc")
                at = n - len(body)
                proc_at = (at + m.start("proc"), at + m.end("proc"))
                body = body[m.end():]
                continue
            m = _HOST.match(body)
            if m and host is None:
                word = m.group("host")
                rw = _RANK_WORD.fullmatch(word)
                if rw:
                    rank = int(rw.group("rank"))
                    at = n - len(body) + m.start("host")
                    rank_at = (at + rw.start("rank"), at + rw.end("rank"))
                    body = body[m.end():]
                    continue
                at = n - len(body)
                if self._guard(guards, _G_LOOKS_LIKE_HOST, word, at + m.start("host")):
                    host = word
                    host_at = (at + m.start("host"), at + m.end("host"))
                    body = body[m.end():]
                    continue
            break
        else:
            stopped = False
        settled = stopped and host is None and proc is None and not body[:1].isspace()
        start = n - len(body)
        if "across cluster]" in body:
            valued = True  # (its colour codes' `0`)
            at = body.rfind(" [repeated ")
            m = _RAY_REPEATED.search(body, max(0, at - 8)) if at > 0 else None  # its colour code stands before
            if m is not None and m.start() > 0:
                body = body[:m.start()]
                settled = False
        if "](http" in body:
            body = _AUTOLINK.sub(r"\g<text>", body)
            settled = False
            valued = True
        if body.endswith(("**", "`")):
            tagged = _tagged_markup(body)
            if tagged is not None:
                body, settled = tagged, False
                valued = True  # (the tag and the words inside the pair joined: no place in the line)
        p = Prefixed(body, host, rank, local, proc, header_host, program)
        if valued:
            return p, settled, None
        return p, settled, _Cuts(start, start + len(body), host_at, rank_at, local_at, proc_at, settled, program,
                                 header_host, tuple(guards))

    def _guard(self, guards: list[tuple[int, int, int, bool]], kind: int, word: str, start: int) -> bool:
        """A name test of the split (`kind`, one of _GUARD_TESTS) on `word`, which stands at `start` in the line
        where the split's body is still a suffix of it (else the split has read a value and no entry is kept),
        recorded in `guards`."""
        answer = _GUARD_TESTS[kind](word, self.hosts)
        guards.append((start, start + len(word), kind, answer))
        return answer

    def _guards_hold(self, guards: tuple[tuple[int, int, int, bool], ...], line: str) -> bool:
        """Does every name test a memoised split made give `line` the answer it gave the line that filled the
        entry (their places are the same: the same key, the same path up to each test)?"""
        hosts = self.hosts
        return all(_GUARD_TESTS[kind](line[start:end], hosts) == answer for start, end, kind, answer in guards)


class _Cuts(NamedTuple):
    """Where the layers of a line lie (PrefixLayer._split): its body `line[start:end]`, and the places of the host,
    rank, local rank and process the layers name (None: not named). The same for every line whose digits alone
    differ, where the split read no value."""

    start: int
    end: int
    host: tuple[int, int] | None
    rank: tuple[int, int] | None
    local: tuple[int, int] | None
    proc: tuple[int, int] | None
    settled: bool
    program: str | None  # the platform program the layers name (decided by their words, not a place in the line)
    header_host: bool  # the host is a syslog header's (Prefixed.header_host)
    # The name tests the split made (start, end, test, answer), in order: the entry holds for a line of its key only
    # where each test gives that line's words at that place the same answer (PrefixLayer._guards_hold).
    guards: tuple[tuple[int, int, int, bool], ...]

    def apply(self, line: str) -> Prefixed:
        start, end, h, r, lo, pr, _, prog, hh, _ = self
        if h is None and r is None and lo is None and pr is None:
            return _new(Prefixed, (line[start:end], None, None, None, None, False, prog))
        # (tuple.__new__: Prefixed's own __new__ is a Python function, a microsecond a call)
        return _new(Prefixed, (line[start:end], None if h is None else line[h[0]:h[1]],
                               None if r is None else int(line[r[0]:r[1]]),
                               None if lo is None else int(line[lo[0]:lo[1]]),
                               None if pr is None else line[pr[0]:pr[1]], hh, prog))


_new = tuple.__new__


def _is_node(word: str, hosts: NodeNames) -> bool:
    return word in hosts


def _is_node_any_case(word: str, hosts: NodeNames) -> bool:
    return word.lower() in hosts


def _tag_kept(word: str, hosts: NodeNames) -> bool:
    return _keeps_tag(word)


# The tests of a word that _split makes by its value, not its digits' places (whether it names a node of the
# allocation, a storage daemon's syslog tag, a host's look): each is recorded with its place and answer
# (PrefixLayer._guard), so the memo's entry is proved for another line of its key by the same tests, not assumed.
_G_HOST: Final = 0
_G_HOST_ANY_CASE: Final = 1
_G_KEEPS_TAG: Final = 2
_G_LOOKS_LIKE_HOST: Final = 3
_GUARD_TESTS: Final = (_is_node, _is_node_any_case, _tag_kept, _looks_like_host)


# The split's memo (PrefixLayer.split_settled): lines longer than this are split each time; at this many keys the
# memo starts again.
_MEMO_MAX_LINE: Final = 2000
_MEMO_SIZE: Final = 8192


_DEFAULT = PrefixLayer()


# The last body the scanner's extraction proved settled (PrefixLayer.split_settled): the extractors it hands that very
# string to ask again get its answer (no layer: Prefixed(body)) for one identity test. One reference, so threads never
# see a half-updated value; a stale one only misses. (The answer is built when asked: most extractors ask
# split_rank_prefix, which needs none, and a candidate line paid a tuple and a Prefixed for it.)
LAST_SETTLED: list[str] = [""]


def note_settled(body: str) -> None:
    """Tell split_prefixes that `body` is settled (the caller proved it with split_settled)."""
    LAST_SETTLED[0] = body


def split_prefixes(line: str) -> Prefixed:
    """The layers of a line when the allocation is not known (tests, tools)."""
    if line is LAST_SETTLED[0]:
        # (Prefixed(line), its defaults spelled out: tuple.__new__ without Prefixed's own __new__)
        return _new(Prefixed, (line, None, None, None, None, False, None))
    return _DEFAULT.split(line)
