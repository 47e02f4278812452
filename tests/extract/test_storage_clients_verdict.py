"""A parallel file system's client failing under the job, through the whole analysis (issue 25, family 5): the
client's own words (IBM Storage Scale's mmfs.log, BeeGFS's kernel module) are the cause on their node, and the
ESTALE / ENOTCONN / EIO that the job's own process then meets there is its symptom; the same errno on a node whose
client said nothing stays what it was, and a client's informational line is nothing."""

from __future__ import annotations

import copy

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker

_STEPS = "".join(f"2026-11-02 10:0{m}:00,000 INFO step {m}\n" for m in range(5))
# the job's own read on node-02 after its file system went away (Python's OSError for ESTALE, errno 116)
_ESTALE = ("2026-11-02 10:05:10,000 ERROR step 5 failed\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/train.py", line 40, in load\n'
           '    with open(path, "rb") as f:\n'
           "OSError: [Errno 116] Stale file handle: '/gpfs/data/shard-00017.tar'\n")
# our own, in mmfs.log's form (IBM Spectrum Scale docs, "Time stamp in GPFS log entries") and the words of a node
# that lost its quorum (IBM Storage Scale docs, "Quorum loss": file systems unmounted, access answers ESTALE)
_MMFS_LOST = ("2026-11-02_09:58:01.004+0000: [I] Command: mount gpfs1\n"
              "2026-11-02_09:58:01.912+0000: [I] Command: successful mount gpfs1\n"
              "2026-11-02_10:05:02.211+0000: [E] Unable to contact any quorum nodes during cluster probe.\n"
              "2026-11-02_10:05:02.213+0000: [E] Lost membership in cluster gpfs.example.com. Unmounting file "
              "systems.\n")
_MMFS_QUIET = ("2026-11-02_09:58:01.004+0000: [I] Command: mount gpfs1\n"
               "2026-11-02_09:58:01.912+0000: [I] Command: successful mount gpfs1\n")


def _analyze(make_bundle: BundleMaker, files: dict[str, str]) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "kernel", "path": "nodes/{node}/kern.log"},
                     {"kind": "syslog", "path": "nodes/{node}/mmfs.log.latest"},
                     {"kind": "application", "path": "app/rank-{rank}.log"}]
    ranks = {f"app/rank-{r}.log": _STEPS for r in range(6)}
    return Analyzer().analyze_path(str(make_bundle({**ranks, **files}, wl)))


def test_gpfs_lost_membership_is_the_cause_and_the_jobs_estale_its_symptom(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, {"nodes/node-02/mmfs.log.latest": _MMFS_LOST, "app/rank-2.log": _STEPS + _ESTALE})
    assert v.root_cause is not None and v.root_cause.category == "storage.filesystem"
    assert v.root_cause.nodes == ["node-02"]
    cause = [e.file for e in v.evidence if e.role == "cause"]
    assert cause[0] == "nodes/node-02/mmfs.log.latest", v.evidence
    assert v.root_cause.first_seen is not None and v.root_cause.first_seen.startswith("2026-11-02T10:05:02")


def test_estale_without_a_client_failure_stays_what_it_was(make_bundle: BundleMaker) -> None:
    # near miss: the same ESTALE where GPFS's log holds only its mount: the errno alone (storage.filesystem, from
    # the job's own line), as before these rows
    v = _analyze(make_bundle, {"nodes/node-02/mmfs.log.latest": _MMFS_QUIET, "app/rank-2.log": _STEPS + _ESTALE})
    assert v.root_cause is not None and v.root_cause.category == "storage.filesystem"
    assert [e.file for e in v.evidence if e.role == "cause"] == ["app/rank-2.log"]


def test_a_gpfs_mount_alone_is_nothing(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, {"nodes/node-02/mmfs.log.latest": _MMFS_QUIET})
    assert v.root_cause is None or v.root_cause.domain != "storage"


def test_beegfs_communication_errors_then_the_jobs_eio_are_the_file_system(make_bundle: BundleMaker) -> None:
    # our own, in printk_fhgfs's form (ThinkParQ/beegfs client_module/source/common/Common.h) and the words of
    # FhgfsOpsCommKit.c / MessagingTk.c; the job's read then fails with EIO on its path
    kern = ("Nov  2 10:05:01 node-02 kernel: beegfs: python(7781): Communication error. Node: storage02 [ID: 2]\n"
            "Nov  2 10:05:01 node-02 kernel: beegfs: python(7781): Retrying communication with node: storage02 "
            "[ID: 2]\n")
    eio = _ESTALE.replace("[Errno 116] Stale file handle", "[Errno 5] Input/output error").replace("/gpfs", "/beegfs")
    v = _analyze(make_bundle, {"nodes/node-02/kern.log": kern, "app/rank-2.log": _STEPS + eio})
    assert v.root_cause is not None and v.root_cause.category == "storage.filesystem"
    assert v.root_cause.nodes == ["node-02"]


def test_beegfs_communication_errors_alone_are_weak(make_bundle: BundleMaker) -> None:
    # near miss: retried communication errors and nothing else: a transient loss, never a strong cause
    kern = "Nov  2 10:05:01 node-02 kernel: beegfs: python(7781): Communication error. Node: storage02 [ID: 2]\n"
    v = _analyze(make_bundle, {"nodes/node-02/kern.log": kern})
    assert v.root_cause is None or v.root_cause.category == "storage.filesystem.transient"
