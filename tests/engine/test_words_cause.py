"""The last resort of a failed attempt: the words of an error line no rule understood (extract/traceback.py
`words_cause`, analysis/analyze.py `Analysis._worded`).

When the attempt's terminal state says it failed and nothing established a cause, the error-looking lines
that no extractor read are read for the words every stack shares for a cause: an errno only a file system
says (ENOSPC, EDQUOT, EROFS, ESTALE; the others beside a path), an object store's own code on the store's
side, a port or address the job's set-up could not have. Positive lines are real output quoted from public
material outside the corpus (provenance above each); the near misses are the same words where they must
not decide: in a warning, in a job that succeeded or whose end is not recorded, beside a specific cause,
in a transport's report without a path.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.extract import traceback as tb
from tests.conftest import XID79, BundleMaker, workload_ending

POSITIVE = [
    # Azure/Batch#47 (https://github.com/Azure/Batch/issues/47): a task's failure message, the exception's repr
    ("Message: OSError(28, 'No space left on device')", "storage.error", "ENOSPC"),
    # Android's DropBoxManagerService on a read-only /data (public logcat, the search index's id 8993914253)
    ("11-17 18:31:00.262   960  4204 E DropBoxManagerService: java.io.FileNotFoundException: "
     "/data/system/dropbox/drop88.tmp: open failed: EROFS (Read-only file system)", "storage.error", "EROFS"),
    # kubectl proxy's fatal log when its port is taken (Kubernetes dashboard docs, the search index's id 208344093)
    ("F0612 21:49:22.459111   59621 proxy.go:137] listen tcp 127.0.0.1:8001: bind: address already in use",
     "app.exception", "EADDRINUSE"),
    # Docker's port publisher (a WSO2 compose README's troubleshooting, the search index's id 33134448633)
    ("Error starting userland proxy: listen tcp 0.0.0.0:9446: bind: address already in use", "app.exception",
     "EADDRINUSE"),
    # S3's error body as aws-sdk-kotlin's 200-error test quotes it (the search index's id 43039672747), on one line
    ("S3 request failed: <Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message>"
     "<RequestId>K2H6N7ZGQT6WHCEG</RequestId></Error>", "storage.error", None),
]

NEAR_MISS = [
    # parted goes on read-only (the search index's id 57078320768): a warning, what it says was gone on from
    "Warning: Unable to open /dev/sr0 read-write (Read-only file system).  /dev/sr0 has been opened read-only.",
    # libfabric's cxi provider's completion error: EIO's words in a transport's report, no path
    # (ofiwg/libfabric#10072, https://github.com/ofiwg/libfabric/issues/10072)
    "MPIDI_OFI_handle_cq_error(1075): OFI poll failed (ofi_events.c:1077:MPIDI_OFI_handle_cq_error:Input/output "
    "error - PTLTE_NOT_FOUND)",
    # the Chia plotter's copy that will be retried (quoted by a log parser, the search index's id 31307791831)
    "Could not copy \"/chia/plottemp4/plot-k32-2021-05-26-02-29-422d6204f0e59df87f48bb9778b79194b656868bafeae9c9e731"
    "87ec670a1aa9.plot.2.tmp\" to \"/chia/plots/205/plot-k32-2021-05-26-02-29-422d6204f0e59df87f48bb9778b79194b6568"
    "68bafeae9c9e73187ec670a1aa9.plot.2.tmp\". Error No space left on device. Retrying in five minutes.",
    # a peer's errno is a symptom (Node's S3 client after the throttling, uwazi, the corpus's b10 thread's line)
    "Error: connect ECONNREFUSED 10.0.0.5:443",
    # an HTTP status alone names no object store
    "HTTP Error 503: Service Unavailable",
]


@pytest.mark.parametrize(("line", "kind", "errno"), POSITIVE)
def test_the_shared_cause_words_are_read(line: str, kind: str, errno: str | None) -> None:
    d = tb.words_cause(line)
    assert d is not None and d.kind == kind
    assert d.fields.get("errno") == errno
    if kind == "app.exception":
        assert d.fields.get("setup") is True
    if errno is None:
        assert d.fields.get("fs") == "object_store" and d.fields.get("store_code") == "SlowDown"


@pytest.mark.parametrize("line", NEAR_MISS)
def test_the_same_words_where_they_name_no_cause(line: str) -> None:
    assert tb.words_cause(line) is None


# A line no extractor reads (the Azure and Android lines above spell an exception, which the traceback model reads
# itself: tests/extract/test_spelled_exception.py), so only the words can decide.
KUBECTL = POSITIVE[2][0] + "\n"


def test_a_failed_attempt_with_nothing_else_takes_the_words(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": KUBECTL}, workload_ending("FAILED"))))
    assert v.attributed_domain == "software" and v.root_cause is not None
    assert v.root_cause.category == "app.exception.setup"
    assert "words of an error line no rule understood" in (v.root_cause.why or "")


@pytest.mark.parametrize("state", ["COMPLETED", None])
def test_words_decide_nothing_where_the_attempt_did_not_fail_or_its_end_is_unknown(
        make_bundle: BundleMaker, state: str | None) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": KUBECTL}, workload_ending(state))))
    assert v.root_cause is None and not v.candidates


def test_a_specific_cause_stands_over_the_words(make_bundle: BundleMaker) -> None:
    files = {"app/rank-2.log": KUBECTL, "nodes/node-02/kern.log": XID79}
    v = analyze(str(make_bundle(files, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"


def test_a_warning_with_the_words_leaves_the_failure_unknown(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": NEAR_MISS[0] + "\n"}, workload_ending("FAILED"))))
    assert v.attributed_domain == "unknown"


# ------------------------------------------------------------------ a program's own start-up limit

STARTUP_LIMIT = [
    # paiml/aprender#362 (https://github.com/paiml/aprender/issues/362), the error as its QA harness printed it
    "Command failed (exit 1): Server failed to become ready within 120s",
    # ollama/ollama#4131 (https://github.com/ollama/ollama/issues/4131): the error its title quotes, a load that ran
    # past OLLAMA_LOAD_TIMEOUT, in the scheduler's slog record around it (format: ollama server/sched.go, the
    # thread's `time=... level=INFO source=...` lines; the time and line number are ours)
    'time=2024-07-10T17:48:09.214Z level=ERROR source=sched.go:480 msg="error loading llama server" '
    'error="timed out waiting for llama runner to start: "',
]

STARTUP_NEAR_MISS = [
    # the limit met and gone on from: a warning (synthetic, the same words at WARNING)
    "WARNING: Server failed to become ready within 120s, retrying",
    # a readiness the words give no limit for (synthetic): what failed is not said
    "ERROR: worker 3 did not become ready",
    # a wait that is no start-up (synthetic): a lock, not what the program started
    "ERROR: timed out waiting for the lock on /data/index",
]


@pytest.mark.parametrize("line", STARTUP_LIMIT)
def test_a_programs_own_start_up_limit_is_the_workloads(line: str) -> None:
    d = tb.words_cause(line)
    assert d is not None and d.kind == "app.exception" and not d.fields.get("setup")


@pytest.mark.parametrize("line", STARTUP_NEAR_MISS)
def test_near_miss_no_start_up_limit(line: str) -> None:
    assert tb.words_cause(line) is None


def test_a_failed_run_whose_server_did_not_come_up_in_time_is_software(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": STARTUP_LIMIT[0] + "\n"}, workload_ending("FAILED"))))
    assert v.attributed_domain == "software" and v.root_cause is not None
    assert v.root_cause.category == "app.exception"
    assert "words of an error line no rule understood" in (v.root_cause.why or "")


def test_an_oom_kill_stands_over_the_start_up_limit(make_bundle: BundleMaker) -> None:
    # the load that ran out of host memory: the kernel's kill (format: mm/oom_kill.c) is the cause, not the limit
    kern = ("Nov  2 10:01:00 node-01 kernel: Out of memory: Killed process 4242 (ollama) total-vm:90000000kB, "
            "anon-rss:80000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:160000kB oom_score_adj:0\n")
    files = {"app/rank-0.log": STARTUP_LIMIT[1] + "\n", "nodes/node-01/kern.log": kern}
    v = analyze(str(make_bundle(files, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "host.oom"
