"""A failed attempt whose only error is one uncaught exception line, without its traceback (spec: verdict.md).

It is attributed as the traceback would be, on that line's node, and the
cause's `why` says the traceback was not in the evidence. The guards: the line
is the last word of its stream (only the exit reports may follow it), the
attempt failed, and no cause read from fuller evidence stands (a lone line's
finding is weak). Each guard has its near miss below.
"""

from __future__ import annotations

import copy

from firstfault.analysis.analyze import Analyzer
from firstfault.engine.normalise import terminal_lines
from firstfault.model import Event, Evidence
from tests.conftest import WORKLOAD, XID79, BundleMaker

# The lab's real KeyError (tests/lab/captured/key_error/nodes/vm/torchrun.log), printed alone as a launcher
# that keeps only the last line of a worker's traceback would.
KEY_ERROR = "KeyError: 'warmup_steps'"
# mosaicml/composer#3543: the user reported the last line only
S3 = ("boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/tmpn7sa44l2/26aecfcf-aa70-4385-951a-0ab28f00bf8c to "
      "data-force-one-datasets/mosaicml-internal-checkpoints/jacob/lora/atnmlp-r16-lr0.0001-mlp-ep-4-a-32-sd-17/"
      "ep1-ba193-rank0.pt: An error occurred (SlowDown) when calling the CreateMultipartUpload operation (reached max "
      "retries: 4): Please reduce your request rate.")
STEPS = [f"2026-11-02 10:0{m}:00,000 INFO step {m}" for m in range(5)]


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def test_a_lone_last_line_is_attributed_as_its_traceback_would_be(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app([*STEPS, KEY_ERROR])})))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert v.root_cause.nodes == ["node-02"]
    assert v.root_cause.why is not None and "the traceback was not in the evidence" in v.root_cause.why
    assert "app/rank-2.log:6" in v.root_cause.why


def test_an_object_stores_error_alone_is_the_object_store(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app([*STEPS, S3])})))
    assert v.attributed_domain == "storage"
    assert v.root_cause is not None and v.root_cause.category == "storage.object_store"
    assert v.root_cause.nodes == ["node-01"]


def test_the_launchers_report_of_the_exit_may_follow(make_bundle: BundleMaker) -> None:
    # srun's report of the task's exit (its form in tests/scenarios/sch-scancel-user) and of its kill of the
    # other tasks (the form tests/extract/test_torchrun.py reads); host names of this bundle
    lines = [*STEPS, KEY_ERROR, "srun: error: node-02: task 2: Exited with exit code 1",
             "srun: error: node-01: task 0: Killed"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_near_miss_the_job_went_on_after_the_line(make_bundle: BundleMaker) -> None:
    # an exception line the rank logged and went on from: a later error of the same stream supersedes it
    # (the watchdog's line of tests/wild/unk-ofa-allreduce-watchdog-single-node-271, as this file's rank 2 says it)
    lines = [*STEPS[:2], KEY_ERROR, *STEPS[2:],
             "[E ProcessGroupNCCL.cpp:737] [Rank 2] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before "
             "timing out."]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app(lines)})))
    assert v.attributed_domain == "unknown" and v.root_cause is None


def test_near_miss_a_completed_run(make_bundle: BundleMaker) -> None:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["terminal_state"] = "COMPLETED"
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app([*STEPS, KEY_ERROR])}, wl)))
    assert v.attributed_domain == "none" and v.root_cause is None


def test_near_miss_a_cause_read_from_fuller_evidence_stands(make_bundle: BundleMaker) -> None:
    # the lone line on node-01 comes first, yet the Xid 79 on node-02 is the root: a lone line's finding is weak
    files = {"nodes/node-02/kern.log": XID79,
             "app/rank-0.log": _app([*STEPS, "2026-11-02 10:04:30,000 INFO saving", KEY_ERROR])}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "hardware"
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"


def test_a_loggers_line_of_the_exception_is_read_as_the_lone_line_would_be(make_bundle: BundleMaker) -> None:
    # the same words behind a logger's level and name (Python's logging default format): the exception spelled
    # after the logger's own words (extract/traceback.py `spelled_exception`), under the same guards
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app([*STEPS, f"ERROR:root:{KEY_ERROR}"])})))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert v.root_cause.why is not None and "the traceback was not in the evidence" in v.root_cause.why


def test_near_miss_a_loggers_info_or_warning_line_is_no_exception_line(make_bundle: BundleMaker) -> None:
    # the same words in a record that calls itself an info or a warning: reported, then gone on from
    for level in ("INFO", "WARNING"):
        v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app([*STEPS, f"{level}:root:{KEY_ERROR}"])},
                                                    name=level)))
        assert v.attributed_domain == "unknown", level


def test_near_miss_a_spelled_exception_in_a_completed_run(make_bundle: BundleMaker) -> None:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["terminal_state"] = "COMPLETED"
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app([*STEPS, f"ERROR:root:{KEY_ERROR}"])}, wl)))
    assert v.attributed_domain == "none" and v.root_cause is None


def test_near_miss_a_spelled_exception_the_rank_went_on_from(make_bundle: BundleMaker) -> None:
    # logged mid-run, then more of the stream's own errors: not its last word
    lines = [*STEPS[:2], f"ERROR:root:{KEY_ERROR}", *STEPS[2:],
             "[E ProcessGroupNCCL.cpp:737] [Rank 2] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before "
             "timing out."]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": _app(lines)})))
    assert v.attributed_domain == "unknown" and v.root_cause is None


def _ev(kind: str, line: int, terminal: bool = False, rank: int | None = 0, file: str = "f.log") -> Event:
    fields: dict[str, str | int | float | bool | None] = {"terminal": True} if terminal else {}
    return Event(kind=kind, time=None, node="n1", rank=rank, fields=fields,
                 evidence=Evidence(source="application", file=file, line=line, text=kind))


def test_only_the_last_word_of_each_stream_stands() -> None:
    events = [
        _ev("app.exception", 3, terminal=True),  # superseded by the later lone line
        _ev("app.exception", 9, terminal=True),
        _ev("torch.child_failed", 12),  # an exit report may follow
        _ev("app.exception", 4, terminal=True, rank=1),  # another rank: its own stream
        _ev("nccl.timeout", 20, rank=1),  # ... which went on to another error
        _ev("app.exception", 2, terminal=True, file="g.log"),  # another file
    ]
    kept = [(e.evidence.file, e.rank, e.evidence.line) for e in terminal_lines(events) if e.fields.get("terminal")]
    assert kept == [("f.log", 0, 9), ("g.log", 0, 2)]


def test_a_later_lone_line_that_says_less_supersedes_no_lone_line_that_says_more() -> None:
    store = Event(kind="storage.error", time=None, node="n1", rank=0, fields={"terminal": True, "fs": "object_store"},
                  evidence=Evidence(source="application", file="f.log", line=3, text="SlowDown"))
    events = [
        store,
        _ev("app.exception", 5, terminal=True),  # a caller's re-raise that names no cause
        _ev("nccl.remote_error", 7, terminal=True),  # a lone line read as a peer's death: says less than line 5
        _ev("app.exception", 4, terminal=True, rank=1),  # says little, then its stream says as little again
        _ev("app.exception", 6, terminal=True, rank=1),
        _ev("nccl.timeout", 8, terminal=True, rank=1),  # ... and then a wait that ran out: less still
        _ev("nccl.remote_error", 2, terminal=True, rank=2),  # a peer's death, then a wait: the last symptom stands
        _ev("nccl.timeout", 5, terminal=True, rank=2),
    ]
    kept = [(e.evidence.file, e.rank, e.evidence.line) for e in terminal_lines(events) if e.fields.get("terminal")]
    assert kept == [("f.log", 0, 3), ("f.log", 0, 5), ("f.log", 0, 7), ("f.log", 1, 6), ("f.log", 1, 8),
                    ("f.log", 2, 5)]


def test_near_miss_a_later_line_that_says_as_much_or_fuller_evidence_still_supersedes() -> None:
    def store(line: int) -> Event:
        return Event(kind="storage.error", time=None, node="n1", rank=0, fields={"terminal": True, "fs": "posix"},
                     evidence=Evidence(source="application", file="f.log", line=line, text="ENOSPC"))
    later_lone = terminal_lines([store(3), _ev("app.exception", 5, terminal=True),
                                 Event(kind="app.exception", time=None, node="n1", rank=0,
                                       fields={"terminal": True, "errno": "EACCES"},
                                       evidence=Evidence(source="application", file="f.log", line=8, text="EACCES"))])
    assert [e.evidence.line for e in later_lone if e.fields.get("terminal")] == [8]
    fuller = terminal_lines([store(3), _ev("nccl.timeout", 9)])
    assert [e.evidence.line for e in fuller] == [9]


def test_a_wrappers_lone_line_after_the_stores_error_leaves_the_store_the_cause(make_bundle: BundleMaker) -> None:
    # the shape of a Ray job's driver (marin-community/marin#2574's posted lines): the Hub's error, then the
    # driver's own RuntimeError that names no cause
    lines = [*STEPS, S3, "RuntimeError: Job 42 failed with status failed and error: ray::run_on_pod() (pid=11, "
             "ip=10.0.0.1)"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "storage.object_store"


# NEURON: aws-neuron/aws-neuron-sdk#1369's posted lines (vLLM on Trainium, tests/wild's
# sw-vllm-neuron-trn2-tp64-cold-compile-...-1369): the worker's own exception, then gloo's peer closed, then the
# engine's report that the worker failed.
NEURON = ["ERROR [v1/executor/multiproc_executor.py:962] RuntimeError: neuronx-cc compilation failed with 70. Check "
          "compiler logs.",
          'ERROR   File ".../vllm_neuron/parallel/neuron_parallel_state.py", line 1318, in tp_barrier',
          "ERROR RuntimeError: [gloo/transport/tcp/pair.cc:547] Connection closed by peer [<ip>]:22947",
          "ERROR [v1/engine/core.py:1140] RuntimeError: Worker failed"]


def test_a_peers_death_after_the_workloads_own_exception_leaves_the_exception_the_cause(
        make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(NEURON)})))
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")
    assert "neuronx-cc" in (v.root_cause.summary or "")


def test_near_miss_a_peers_death_alone_after_a_relayed_failure_is_still_only_symptoms(
        make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(NEURON[2:])})))
    assert v.root_cause is None and v.attributed_domain == "unknown"


# The kernel OOM killer's header stands for the kill only where its file goes no further (engine/normalise.py
# _answered_headers): lines in the kernel's format (mm/oom_kill.c dump_header and __oom_kill_process).
OOM_HEADER = ("[ 3046.116403] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, "
              "oom_score_adj=0")
OOM_KILL = ("[ 3046.116589] Out of memory: Killed process 4242 (python) total-vm:98765432kB, anon-rss:87654321kB, "
            "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:190000kB oom_score_adj:0")


def test_an_oom_header_posted_alone_is_the_oom_kill(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": OOM_HEADER + "\n"})))
    assert v.root_cause is not None and v.root_cause.category == "host.oom"
    assert v.root_cause.nodes == ["node-02"]


def test_an_oom_header_with_its_kill_is_one_kill_cited_at_the_kill(make_bundle: BundleMaker) -> None:
    lines = [OOM_HEADER, "[ 3046.116410] CPU: 7 PID: 4242 Comm: python Not tainted 5.15.0-91-generic", OOM_KILL]
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": "".join(x + "\n" for x in lines)})))
    assert v.root_cause is not None and v.root_cause.category == "host.oom"
    assert "ended python on node-02" in (v.root_cause.summary or "")
    cited = [e.line for e in v.evidence if e.category == "host.oom"]
    assert cited == [3]  # the header is the kill's own record's first line, not a second kill


# The summary line between them (mm/oom_kill.c dump_oom_summary: `oom-kill:constraint=%s,...,task=%s,pid=%d,uid=%d`)
# names the victim: alone (an excerpt cut after it) it is the kill, with the victim; before its `Killed process`, that
# line's to cite.
OOM_SUMMARY = ("[ 3046.116580] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
               "task_memcg=/user.slice/user-1000.slice/session-3.scope,task=python,pid=4242,uid=1000")


def test_an_oom_summary_posted_alone_is_the_kill_of_the_victim_it_names(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": OOM_HEADER + "\n" + OOM_SUMMARY + "\n"})))
    assert v.root_cause is not None and v.root_cause.category == "host.oom"
    assert "ended python on node-02" in (v.root_cause.summary or "")
    assert [e.line for e in v.evidence if e.category == "host.oom"] == [2]


def test_an_oom_summary_with_its_kill_is_one_kill_cited_at_the_kill(make_bundle: BundleMaker) -> None:
    lines = [OOM_HEADER, OOM_SUMMARY, OOM_KILL]
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/kern.log": "".join(x + "\n" for x in lines)})))
    assert v.root_cause is not None and v.root_cause.category == "host.oom"
    assert [e.line for e in v.evidence if e.category == "host.oom"] == [3]


def test_another_nodes_kill_in_one_central_syslog_does_not_answer_a_header(make_bundle: BundleMaker) -> None:
    # near miss: one rsyslog file of two hosts; node-02's header stands, node-03's kill is node-03's own
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "syslog", "path": "syslog/messages"}]
    lines = ["Nov  2 10:05:00 node-02 kernel: [ 3046.116403] python invoked oom-killer: gfp_mask=0x100cca"
             "(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
             "Nov  2 10:05:01 node-03 kernel: [ 3047.000001] Out of memory: Killed process 77 (java) total-vm:1kB, "
             "anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0"]
    v = Analyzer().analyze_path(str(make_bundle({"syslog/messages": "".join(x + "\n" for x in lines)}, wl)))
    cited = sorted((e.line, e.node) for e in v.evidence if e.category == "host.oom")
    assert cited == [(1, "node-02"), (2, "node-03")]


# horovod/horovod#2907 (tests/wild/sw-horovod-elastic-torch-test-injected-kill-survivors-abort-uncaught-gloo-
# ioexception-2907): horovodrun's own runner tags each rank's lines `[N]<stderr>:`, so rank 0's lone line is the last
# word of rank 0's stream, whatever the other ranks print after it in the same file.
HOROVOD = ["[0]<stderr>:RuntimeError: check_rank and exit epoch=1 batch=0 start_rank=0 rank=0",
           "[0]<stderr>:Killed",
           "[1]<stderr>:terminate called after throwing an instance of 'gloo::IoException'",
           "[1]<stderr>:  what():  [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error "
           "[127.0.0.1]:3977: Connection reset by peer",
           "[1]<stderr>:Aborted (core dumped)"]


def _horovod_run() -> dict[str, object]:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "application", "path": "app/horovodrun.log"}]
    return wl


def test_horovods_rank_tags_keep_each_ranks_last_word_apart(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/horovodrun.log": _app(HOROVOD)}, _horovod_run())))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_near_miss_the_same_lines_untagged_are_one_stream(make_bundle: BundleMaker) -> None:
    # without the tags the file is one stream: the exception line is followed by another process's words
    untagged = [line.split(">:", 1)[1] for line in HOROVOD]
    v = Analyzer().analyze_path(str(make_bundle({"app/horovodrun.log": _app(untagged)}, _horovod_run())))
    assert v.root_cause is None
