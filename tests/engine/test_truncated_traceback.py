"""A traceback cut before its exception line (extract/traceback.py `TracebackModel.open_ends`, extract/exceptions.py
`at_end`, collect/scan.py `Extraction.open_ends`, rule app-exception-truncated).

A rank's log that ends inside a Python traceback (its header and frames printed, the exception line never: the
process was stopped while printing it, or the posted log was cut) says that an exception propagated, not which. In a
failed attempt where nothing else established a cause or showed a symptom, it is read as an uncaught exception of a
class the evidence does not hold: `app.exception`, weak, on the rank's node, and the `why` says the traceback stops
early. The near misses: the same traceback with its last line (the ordinary reading), frames without a header (a
stack dump of a live process, py-spy's or gdb's), a run that did not fail or whose end is unknown, a hardware fault
beside it, a symptom beside it (the launcher's own report of a killed rank), more of the stream after it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from firstfault import records
from firstfault.analysis import parallel
from firstfault.analysis.analyze import Analyzer, analyze
from firstfault.bundle import load_bundle
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.base import Candidate, Draft, LineContext
from tests.conftest import XID79, BundleMaker, workload_ending

# hzwer/ECCV2022-RIFE#52 (https://github.com/hzwer/ECCV2022-RIFE/issues/52): the reporter's block ends at the frame
# that raises; the `ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable
# MASTER_ADDR expected, but not set` that PyTorch prints after it is not in the post.
CUT = (
    "Traceback (most recent call last):\n"
    '  File "train_WIP.py", line 11, in <module>\n'
    '    torch.distributed.init_process_group(backend="nccl", world_size=4)\n'
    '  File "/home/u/rife/env/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 423, in '
    "init_process_group\n"
    "    store, rank, world_size = next(rendezvous_iterator)\n"
    '  File "/home/u/rife/env/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 166, in '
    "_env_rendezvous_handler\n"
    '    raise _env_error("MASTER_ADDR")\n'
)
LAST = ("ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR "
        "expected, but not set\n")
# gdb's `py-bt` on a hung rank (the frames of a live process, innermost first; no exception was raised)
DUMP = (
    "Traceback (most recent call first):\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 1206, in '
    "all_reduce\n"
    "    work = group.allreduce([tensor], opts)\n"
)
# torchrun's report of its worker killed (PyTorch's elastic agent's words, in the unk-torchrun-sigkill thread of
# the wild corpus, its stamp moved into the window; a symptom: process.killed)
KILLED = ("[2026-11-02 10:05:00,544] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) "
          "local_rank: 0 (pid: 62498) of binary: /usr/bin/python\n")


NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def test_a_failed_rank_whose_log_ends_inside_a_traceback_raised_an_uncaught_exception(
        make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": "step 1\n" + CUT}, workload_ending("FAILED"))))
    assert v.attributed_domain == "software" and v.root_cause is not None
    assert v.root_cause.category == "app.exception" and v.root_cause.rule == "app-exception-truncated"
    assert v.root_cause.nodes == ["node-02"]
    assert "stops before its exception line" in (v.root_cause.why or "")
    cause = [e for e in v.evidence if e.role == "cause"]
    assert [(e.file, e.line) for e in cause] == [("app/rank-2.log", 2)]  # the header's line


def test_the_same_traceback_with_its_exception_line_is_read_whole(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": CUT + LAST}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.rule != "app-exception-truncated"
    assert v.root_cause.category.startswith("app.exception")


def test_frames_without_a_raised_header_are_a_stack_dump_not_an_exception(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": DUMP}, workload_ending("FAILED"))))
    assert v.root_cause is None and v.attributed_domain == "unknown"


@pytest.mark.parametrize("state", ["COMPLETED", None])
def test_a_cut_traceback_decides_nothing_where_the_run_did_not_fail_or_its_end_is_unknown(
        make_bundle: BundleMaker, state: str | None) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": CUT}, workload_ending(state))))
    assert v.root_cause is None and not v.candidates


def test_a_hardware_fault_stands_over_a_cut_traceback(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": CUT, "nodes/node-02/kern.log": XID79}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert not v.candidates


def test_a_symptom_beside_a_cut_traceback_leaves_the_cause_unknown(make_bundle: BundleMaker) -> None:
    # the launcher's traceback cut after its worker was killed: the kill is the telling line, not the launcher's
    # exception (which would be its ChildFailedError)
    v = analyze(str(make_bundle({"app/rank-2.log": KILLED + CUT}, workload_ending("FAILED"))))
    assert v.root_cause is None and v.attributed_domain == "unknown"
    assert v.symptoms


def test_a_traceback_whose_stream_goes_on_to_another_event_is_not_its_last_word(make_bundle: BundleMaker) -> None:
    # the traceback is left open (its last line not written), then the rank's log goes on to a NCCL error:
    # the cut traceback is no cause
    nccl = ("node-02:1:2 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> "
            "with status=12 opcode=0 len=0 vendor err 129 (Recv)\n")
    v = analyze(str(make_bundle({"app/rank-2.log": CUT + nccl}, workload_ending("FAILED"))))
    assert v.root_cause is None or v.root_cause.rule != "app-exception-truncated"
    assert all(c.rule != "app-exception-truncated" for c in v.candidates)


def test_one_process_and_two_workers_read_a_cut_traceback_alike(make_bundle: BundleMaker,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # the workers read the files and send the end of each stream's traceback with the file's events
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    b: Path = make_bundle({"app/rank-2.log": "step 1\n" + CUT, "app/rank-4.log": "step 1\nstep 2\n"},
                          workload_ending("FAILED"))
    an = Analyzer()
    out = [records.dumps(an.analyze_bundle(load_bundle(str(b)), now=NOW, workers=n), indent=2) for n in (1, 2)]
    assert out[0] == out[1]
    assert '"app-exception-truncated"' in out[0]


def test_a_files_stream_ends_are_read_from_its_own_streams_only() -> None:
    # a worker asks after each of its files; a walk over every stream it had read cost a 16k-rank job's workers a
    # time that grew with the square of their files (bench/README.md, "night")
    ex = Extraction(all_line_extractors())
    for f in range(50):
        ex.events(Candidate("application", f"app/rank-{f}.log", 1, None, None, None, CUT.splitlines()[0]))
    asked: list[dict[str, object]] = []

    class Counting:
        def at_end(self, state: dict[str, object]) -> list[tuple[Draft, LineContext, str]]:
            asked.append(state)
            return []

    ex._enders = (Counting(),)
    ex.open_ends("app/rank-7.log")
    assert len(asked) == 1
    ex.open_ends()
    assert len(asked) == 51
