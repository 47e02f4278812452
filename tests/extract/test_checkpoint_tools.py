"""A checkpoint/restore tool that refused (extract/checkpoint.py): CRIU's `Error (FILE:LINE): MESSAGE` records (the
`criu` level header, catalog/exceptions.yaml), each message read for its errno and words (traceback.words_cause), a
crash signal of a task it restored, and the tool's own words (catalog/exceptions.yaml `checkpoint_messages`); `Dumping
FAILED.` / `Restoring FAILED.` as the tool's end (catalog/ends.yaml); cuda-checkpoint's `Insufficient driver` and its
quoted `operation not permitted`. A warning record, a caller's `failed with -1`, and CRIU's timeout while the CUDA
plugin locks a task are no cause.

Lines: checkpoint-restore/criu#2547 (the CUDA plugin's checkpoint action past CRIU's timeout), #2470 and
NVIDIA/cuda-checkpoint#26 (the lock's timeout), checkpoint-restore/criu#2515 (a device mapping no plugin took),
NVIDIA/nvcf#465 (nvsnap: a descriptor on /dev/gdrdrv), NVIDIA/cuda-checkpoint#6 (a restored task's segfault),
ai-dynamo/snapshot#310 (a mount the restore pod lacked, copied without CRIU's headers), NVIDIA/cuda-checkpoint#22
(`Insufficient driver`), #25 (`operation not permitted`), checkpoint-restore/criu#2980 (a /dev/shm semaphore the
restored container lacked, each task's pid in the record). The near misses (a warning record, the same words with no
header or in prose, a signal that is no crash, a `CHECKPOINT_DEVICES failed` with no timeout before it, a stale NFS
handle under a mount point) are ours, in CRIU's formats as include/criu-log.h prints them.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.extract.checkpoint import CheckpointToolExtractor
from firstfault.extract.unrecognized import error_header
from tests.conftest import BundleMaker, workload_ending
from tests.extract.helpers import events, scan

EX = CheckpointToolExtractor()

# checkpoint-restore/criu#2547's dump.log (the PR description's 11 lines, abridged to the errors and the end)
LARGE_MODEL = [
    "cuda_plugin: Checkpointing CUDA devices on pid 84145 restore_tid 84202",
    "Error (criu/cr-dump.c:1791): Timeout reached. Try to interrupt: 0",
    "Error (cuda_plugin.c:139): cuda_plugin: Unable to read output of cuda-checkpoint: Interrupted system call",
    "Error (cuda_plugin.c:396): cuda_plugin: CHECKPOINT_DEVICES failed with",
    "cuda_plugin: finished cuda_plugin stage 0 err -1",
    "Error (criu/cr-dump.c:2111): Dumping FAILED.",
]
# NVIDIA/cuda-checkpoint#26's dump.log (CRIU's log times kept): the lock (PAUSE_DEVICES) timed out
LOCK_TIMEOUT = [
    "(00.020701) cuda_plugin: pausing devices on pid 1801089",
    "(10.004259) Error (criu/cr-dump.c:1791): Timeout reached. Try to interrupt: 0",
    "(10.004324) Error (cuda_plugin.c:139): cuda_plugin: Unable to read output of cuda-checkpoint: Interrupted system "
    "call",
    "(10.005493) Error (cuda_plugin.c:457): cuda_plugin: PAUSE_DEVICES failed with",
    "(11.005243) Error (cuda_plugin.c:472): cuda_plugin: Failed to unlock process status , pid 1801089 may hang",
    "(11.005364) Error (compel/src/lib/infect.c:418): Unable to detach from 1801089: No such process",
    "(11.005378) Error (criu/cr-dump.c:2111): Dumping FAILED.",
]
# checkpoint-restore/criu#2515's terminal
DEVICE_VMA = [
    "Error (criu/proc_parse.c:114): handle_device_vma plugin failed: No such file or directory",
    "Error (criu/proc_parse.c:629): Can't handle non-regular mapping",
    "Error (criu/cr-dump.c:1570): Collect mappings (pid: 78925) 78925's map 200200000 failed with -1",
    "Error (criu/cr-dump.c:2111): Dumping FAILED.",
]
# NVIDIA/nvcf#465's dump.log
GDRDRV = [
    "Error (criu/files-ext.c:98): Can't dump file 36 of that type [20666] (chr 506:0)",
    "Error (criu/cr-dump.c:1737): Dump files (pid: 78) failed with -1",
    "Error (criu/cr-dump.c:2170): Dumping FAILED.",
]
# NVIDIA/cuda-checkpoint#6's restore
RESTORE_SEGV = [
    "Error (criu/cr-restore.c:1480): 2001 killed by signal 11: Segmentation fault",
    "Error (criu/cr-restore.c:2447): Restoring FAILED.",
]
# ai-dynamo/snapshot#310's restore.log, as posted (no headers)
MOUNT = ["Can't stat mountpoint .../cache/vllm: No such file or directory", "Restoring FAILED"]
# checkpoint-restore/criu#2980's restore log (each forked task's pid after CRIU's time, criu/log.c log_init_by_pid):
# a semaphore the task held in the container's /dev/shm that the restored container's fresh tmpfs lacks
SHM_GHOST = [
    "(00.066977)    271: 13199: Link dev/shm/link_remap.383 -> dev/shm/sem.UX3r91",
    "(00.066989)    271: Warn  (criu/files-reg.c:1881): Can't link dev/shm/link_remap.383 -> dev/shm/sem.UX3r91",
    "(00.067001)    271: Error (criu/files-reg.c:2258): Can't link dev/shm/link_remap.383 -> dev/shm/sem.UX3r91: No "
    "such file or directory",
    "(00.067005)    271: Error (criu/mem.c:1467): `- Can't open vma",
    "(00.069099) Error (criu/cr-restore.c:2324): Restoring FAILED.",
]
# NVIDIA/cuda-checkpoint#25: the driver's checkpoint API refused (persistence mode off)
TOGGLE_EPERM = ['Error toggling CUDA in process ID 98145: "operation not permitted"']


def test_criu_error_records_are_a_level_header() -> None:
    assert error_header("(10.004259) Error (criu/cr-dump.c:1791): Timeout reached. Try to interrupt: 0")
    assert error_header("Error (cuda_plugin.c:396): cuda_plugin: CHECKPOINT_DEVICES failed with")
    # the restorer's own record (criu/pie), as a restore.log carries it
    assert error_header("pie: 34661: Error (criu/pie/restorer.c:317): Unable to drop capability 0: -1")
    # a task's own record on restore, its pid after the time
    assert error_header("(00.067832)      1: Error (criu/cr-restore.c:1258): 271 exited, status=1")
    # a warning record (pr_warn, two spaces), and a position that is no C source, are none
    assert not error_header("Warn  (criu/cr-dump.c:1297): Can't get parasite's core, skipping")
    assert not error_header("Error (train.py:12): loss diverged")


@pytest.mark.parametrize(("lines", "kind", "fields"), [
    (LARGE_MODEL, "app.exception", {"setup": True, "tool": "criu"}),
    (DEVICE_VMA, "app.exception", {"setup": True, "tool": "criu"}),
    (GDRDRV, "app.exception", {"setup": True, "tool": "criu"}),
    (RESTORE_SEGV, "process.signal", {"signal": "SIGSEGV", "by": "self"}),
    (MOUNT, "app.exception", {"setup": True, "tool": "criu"}),
    (["Insufficient driver"], "app.cuda_error", {"error": "driver", "tool": "cuda-checkpoint"}),
    (SHM_GHOST, "container.error", {"error": "node", "runtime": "criu"}),
    (TOGGLE_EPERM, "app.cuda_error", {"error": "driver", "tool": "cuda-checkpoint"}),
])
def test_the_first_error_that_names_a_cause(lines: list[str], kind: str, fields: dict[str, object]) -> None:
    drafts = scan(EX, lines, "application")
    assert len(drafts) == 1, drafts
    assert drafts[0].kind == kind
    assert fields.items() <= drafts[0].fields.items()


@pytest.mark.parametrize("lines", [
    LOCK_TIMEOUT,  # the lock's timeout: several decided causes print these lines alike
    LARGE_MODEL[2:],  # CHECKPOINT_DEVICES failed with no CRIU timeout before it in the log
    ["Warn  (criu/files-reg.c:1811): Can't dump file 36 of that type [20666] (chr 506:0)"],  # a warning
    ["the dump said Can't dump file 36 of that type, so we retried"],  # the words in prose, no header
    ["Error (criu/cr-restore.c:1480): 2001 killed by signal 9: Killed"],  # a kill, no crash of its own
    ["Driver check: Insufficient driver memory reported by the plugin"],  # not the tool's whole answer
    ["Error (criu/cr-dump.c:1570): Collect mappings (pid: 78925) 78925's map 200200000 failed with -1"],
    ["pie: 34661: Error (criu/pie/restorer.c:317): Unable to drop capability 0: -1"],  # no table's words
    SHM_GHOST[1:2],  # the same words as a warning: CRIU goes on
    ['Error toggling CUDA in process ID 98145: "out of memory"'],  # another quoted error: no row of the tool's
    ['cudaMemcpy failed: "operation not permitted"'],  # the words, not cuda-checkpoint's answer
])
def test_no_cause(lines: list[str]) -> None:
    assert scan(EX, lines, "application") == []


def test_a_storage_errno_under_a_mount_point_is_the_storage() -> None:
    drafts = scan(EX, ["Error (criu/mount-v2.c:628): Can't stat mountpoint /mnt/data/ckpt: Stale file handle"],
                  "application")
    assert [d.kind for d in drafts] == ["storage.error"]


def test_a_warning_record_is_claimed_not_unrecognized(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": "Warn  (criu/cr-dump.c:1297): Can't get parasite's core: "
                                                  "failed to parse\n"}, workload_ending("FAILED"))))
    assert v.unrecognized == [] and v.root_cause is None


def test_the_tool_s_end() -> None:
    ends = [e for e in events(GDRDRV + RESTORE_SEGV + MOUNT) if e.kind == "launcher.exit"]
    assert [(e.fields["system"], e.fields["state"], e.evidence.line) for e in ends] == [
        ("criu", "FAILED", 3), ("criu", "FAILED", 5), ("criu", "FAILED", 7)]


@pytest.mark.parametrize(("lines", "category"), [
    (LARGE_MODEL, "app.exception.setup"),
    (DEVICE_VMA, "app.exception.setup"),
    (GDRDRV, "app.exception.setup"),
    (RESTORE_SEGV, "app.crash"),
    (MOUNT, "app.exception.setup"),
    (["Insufficient driver"], "node.driver"),
    (SHM_GHOST, "node.container"),
    (TOGGLE_EPERM, "node.driver"),
    (LOCK_TIMEOUT, None),
])
def test_the_verdict(make_bundle: BundleMaker, lines: list[str], category: str | None) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"}, workload_ending("FAILED"))))
    got = v.root_cause.category if v.root_cause is not None else None
    assert got == category


def test_a_run_criu_finished_is_no_failure(make_bundle: BundleMaker) -> None:
    # CRIU's last record of a run that succeeded (criu/cr-dump.c `Dumping finished successfully`, as the zdtm logs
    # print it): an error record before it was one CRIU went on from; the run's end, where nothing else records it
    lines = ["(00.100000) Error (criu/files-ext.c:98): Can't dump file 36 of that type [20666] (chr 506:0)",
             "(00.170276) Dumping finished successfully"]
    v = analyze(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"}, workload_ending(None))))
    assert v.root_cause is None and v.outcome == "succeeded"
    ends = [e for e in events(lines) if e.kind == "launcher.exit"]
    assert [(e.fields["system"], e.fields["state"]) for e in ends] == [("criu", "SUCCEEDED")]
    # the words in prose are no end
    assert [e for e in events(["we grep for 'Dumping finished successfully' in dump.log"])
            if e.kind == "launcher.exit"] == []
