"""Storage clients and FUSE daemons in their own words (catalog/platform.yaml `storage_clients`, `storage_words`),
and the OOM killer ending a FUSE daemon (issue 25, family 5)."""

from __future__ import annotations

from datetime import UTC

import pytest

from firstfault.catalog.tables import storage_tables
from firstfault.extract import host
from tests.extract.helpers import events, scan

STORAGE = host.StorageExtractor()
OOM = host.OomKillExtractor()


def _kinds(lines: list[str], source: str = "syslog") -> list[tuple[str, dict[str, object]]]:
    return [(d.kind, dict(d.fields)) for d in scan(STORAGE, lines, source)]


# --- failures ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("line", "client"), [
    # Azure/azure-storage-fuse#1537 (https://github.com/Azure/azure-storage-fuse/issues/1537)
    ("Oct 09 06:03:58 openpai-000003 blobfuse2[3214717]: [/var/lib/kubelet/plugins/kubernetes.io/csi/"
     "blob.csi.azure.com/7457115dfa3ef0cc6da5c97af5af6ebd71d363cd1962130e7ae3f0564f920c21/globalmount] LOG_ERR "
     "[libfuse_handler.go (792)]: Libfuse::libfuse_write : error writing file "
     "iter_0020000/mp_rank_00/model_optim_rng.pt, handle: 162696 [staged block 52 has less data 3145728 for "
     "162696=>iter_0020000/mp_rank_00/model_optim_rng.pt", "blobfuse2"),
    # GoogleCloudPlatform/gcsfuse#516 (https://github.com/GoogleCloudPlatform/gcsfuse/issues/516)
    ('{"name":"root","levelname":"ERROR","severity":"ERROR","message":"fuse: *fuseops.SyncFileOp error: input/output '
     'error\\n","timestampSeconds":1618078232,"timestampNanos":397649044}', "gcsfuse"),
    # our own, in the format of s3fs's syslog (s3fs-fuse src/s3fs_logger.cpp) and curl.cpp RequestPerform's words
    ("Feb 14 17:00:17 ip-172-31-37-246 s3fs[22616]: curl.cpp:RequestPerform(2281): ### giving up", "s3fs"),
    # our own, in mountpoint-s3's fuse.rs format
    ("mount-s3[4242]: [WARN] read{req=1234 ino=17 fh=3 offset=0 size=131072 name=shard-00017.tar}: "
     "mountpoint_s3_fs::fuse: read failed with errno 5: get request failed: Client error: dispatch failure",
     "mountpoint-s3"),
    # our own, in JuiceFS's logger format (pkg/utils/logger.go) and writer.go's words
    ("2024/05/01 10:00:00.000000 juicefs[812] <ERROR>: upload inode: 1234 chunk: 5678 (length: 4194304) fail: "
     "timeout [writer.go:123]", "juicefs"),
])
def test_a_daemons_own_io_error_is_the_file_system(line: str, client: str) -> None:
    [(kind, fields)] = _kinds([line])
    assert kind == "storage.error"
    assert fields["fs"] == "fuse" and fields["client"] == client and "transient" not in fields


def test_lockd_not_responding_is_nfs() -> None:
    # our own, in sunrpc's call_timeout format (torvalds/linux net/sunrpc/clnt.c)
    [(kind, fields)] = _kinds(["kernel: lockd: server 10.0.0.5 not responding, still trying"], "kernel")
    assert kind == "storage.error" and fields["fs"] == "nfs"


def test_the_nfs_pattern_keeps_its_lines() -> None:
    [(kind, fields)] = _kinds(["kernel: nfs: server nfs01 not responding, timed out"], "kernel")
    assert kind == "storage.error" and fields == {"fs": "nfs", "detail": "nfs: server nfs01 not responding, timed out"}


def test_a_daemons_own_log_file_names_it() -> None:
    line = "Libfuse::libfuse_read : error reading file data/x.bin, handle: 7 [input/output error]"
    drafts = [d for d in events([line], "application", file="nodes/n1/blobfuse2.log") if d.kind == "storage.error"]
    assert drafts and drafts[0].fields["client"] == "blobfuse2"


# --- transient and recovery -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # jade-hpc-gpu/jade-hpc-gpu.github.io#14 (https://github.com/jade-hpc-gpu/jade-hpc-gpu.github.io/issues/14)
    "[Mon Oct 16 09:54:43 2017] LNet: 2431:0:(o2iblnd_cb.c:3174:kiblnd_check_conns()) Timed out tx for "
    "172.31.126.87@o2ib: 403055 seconds",
    "[Mon Oct 16 10:00:12 2017] Lustre: 2449:0:(client.c:2141:ptlrpc_expire_one_request()) @@@ Request sent has "
    "failed due to network error: [sent 1508144508/real 1508144518]  req@ffff880eb14da700 x1570198182041824/t0(0) "
    "o250->MGC172.31.126.87@o2ib@172.31.126.87@o2ib:26/25 lens 520/544 e 0 to 1 dl 1508144563 ref 1 fl "
    "Rpc:eXN/0/ffffffff rc 0/-1",
])
def test_lustres_retried_requests_are_transient(line: str) -> None:
    [(kind, fields)] = _kinds([line], "kernel")
    assert kind == "storage.error" and fields["fs"] == "lustre" and fields["transient"] is True


def test_lustres_skipped_messages_note_is_nothing() -> None:
    # the same thread: the kernel's count of lines it did not print again
    line = ("[Mon Oct 16 09:54:43 2017] LNet: 2431:0:(o2iblnd_cb.c:3174:kiblnd_check_conns()) Skipped 24 previous "
            "similar messages")
    assert _kinds([line], "kernel") == []


def test_a_ceph_session_lost_is_transient() -> None:
    # our own, in net/ceph/mon_client.c's words
    [(kind, fields)] = _kinds(["libceph: mon0 (1)10.0.0.11:6789 session lost, hunting for new mon"], "kernel")
    assert kind == "storage.error" and fields["fs"] == "ceph" and fields["transient"] is True


@pytest.mark.parametrize("line", [
    "kernel: nfs: server nfs01 OK",
    "libceph: mon1 (1)10.0.0.12:6789 session established",
    "ceph: mds0 came back",
    "Lustre: scratch-OST0004-osc-ffff88103a5d4800: Connection restored to 10.0.0.21@o2ib (at 10.0.0.21@o2ib)",
])
def test_a_recovery_is_understood_and_never_a_cause(line: str) -> None:
    assert [k for k, _ in _kinds([line], "kernel")] == ["storage.recovered"]
    assert [e.kind for e in events([line], "kernel", file="nodes/n1/kern.log", node="n1")
            if e.kind.startswith("storage")] == ["storage.recovered"]


def test_a_wait_names_its_server_and_so_does_its_recovery() -> None:
    # our own, in sunrpc's call_timeout / call_decode formats (torvalds/linux net/sunrpc/clnt.c)
    [(_, lost), (_, back)] = _kinds(["kernel: nfs: server nfs01 not responding, still trying",
                                     "kernel: nfs: server nfs01 OK"], "kernel")
    assert lost["waits"] is True and lost["server"] == "nfs01" and back["server"] == "nfs01"
    # a soft mount's `timed out` fails the call: no wait to close
    [(_, failed)] = _kinds(["kernel: nfs: server nfs01 not responding, timed out"], "kernel")
    assert "waits" not in failed


# --- the job's request and the node's set-up --------------------------------------------------------------------

def test_a_bucket_the_mount_cannot_find_is_the_jobs() -> None:
    # our own, in s3fs's s3fs_check_service words
    line = ("s3fs[991]: s3fs.cpp:s3fs_check_service(4969): Failed to check bucket and directory for mount point : "
            "Bucket or directory not found(host=https://s3.amazonaws.com, message=The specified bucket does not exist)")
    [(kind, fields)] = _kinds([line])
    assert kind == "container.error" and fields["error"] == "job" and fields["runtime"] == "s3fs"


@pytest.mark.parametrize("line", [
    # wei/rclone#1 (https://github.com/wei/rclone/issues/1)
    "mount helper error: fusermount: fuse device not found, try 'modprobe fuse' first",
    # Azure/azure-storage-fuse#1083 (https://github.com/Azure/azure-storage-fuse/issues/1083): its title, in its
    # log's header
    "Tue Mar 14 14:49:09 GMT 2023 : blobfuse2[1429] : LOG_ERR [libfuse_handler.go (178)]: Libfuse::initFuse : failed "
    "to mount fuse",
])
def test_a_fuse_mount_the_node_cannot_make_is_the_nodes(line: str) -> None:
    [(kind, fields)] = _kinds([line], "application")
    assert kind == "container.error" and fields["error"] == "node"


# --- near misses ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # s3fs-fuse/s3fs-fuse#23 (https://github.com/s3fs-fuse/s3fs-fuse/issues/23): a retry is no failure yet
    "Mar  7 10:06:15 vm s3fs: ### retrying...",
    # the words without their client: another program's session, another program's write error
    "sshd[991]: pam_unix(sshd:session): session established for user alice",
    "app.py: error writing file /tmp/x: disk quota exceeded (libfuse_write : error writing file is blobfuse2's)",
    # mountpoint-s3: an errno other than EIO is the job's request, not the store (doc/TROUBLESHOOTING.md)
    "mount-s3[4242]: [WARN] mountpoint_s3_fs::fuse: rename failed with errno 38: inode error: rename is not "
    "supported on this bucket",
    # an NFS line that ends in OK only by chance is not a recovery of a kernel client without its prefix
    "training step 100 OK",
])
def test_near_misses_give_nothing(line: str) -> None:
    assert [k for k, _ in _kinds([line])] == []


# --- the OOM killer and FUSE daemons ----------------------------------------------------------------------------

def test_a_fuse_daemon_killed_names_its_client() -> None:
    # awslabs/mountpoint-s3#1089 (https://github.com/awslabs/mountpoint-s3/issues/1089)
    line = ("[Mon Oct 28 20:46:38 2024] Out of memory: Killed process 3470 (mount-s3) total-vm:925588kB, "
            "anon-rss:282932kB, file-rss:0kB, shmem-rss:0kB, UID:33 pgtables:752kB oom_score_adj:0")
    [d] = scan(OOM, [line])
    assert d.fields["storage_daemon"] == "mountpoint-s3"


@pytest.mark.parametrize("proc", ["python", "rclone"])  # rclone copies and syncs too: its comm names no mount
def test_the_workloads_own_process_killed_names_no_daemon(proc: str) -> None:
    [d] = scan(OOM, [f"Out of memory: Killed process 1234 ({proc}) total-vm:123456kB, anon-rss:120000kB"])
    assert "storage_daemon" not in d.fields


# --- the kernel's fault report of a storage daemon --------------------------------------------------------------
# Each row's comm, in the kernel's report (torvalds/linux arch/x86/mm/fault.c show_signal_msg: `comm[pid]: segfault at
# ADDR ip IP sp SP error N in OBJECT[BASE+SIZE]`), written here; nfs-ganesha/nfs-ganesha#914 is the ganesha.nfsd form
# (its library libganesha_nfsd.so). The comms are each project's binary, as catalog/platform.yaml cites them.

FAULT = host.UserFaultExtractor()
_DAEMONS = sorted(storage_tables().daemons.items())


@pytest.mark.parametrize(("comm", "client"), _DAEMONS)
def test_a_storage_daemons_segfault_names_its_client(comm: str, client: str) -> None:
    line = f"{comm}[23271]: segfault at 118 ip 00007f9d8c2a1b2e sp 00007f9d6bffe9d0 error 4 in libc.so.6[7f9d+1a6000]"
    [d] = scan(FAULT, [line])
    assert d.kind == "process.signal" and d.fields["signal"] == "SIGSEGV"
    assert d.fields["storage_daemon"] == client


def test_the_file_servers_are_listed() -> None:
    daemons = storage_tables().daemons
    assert daemons["ganesha.nfsd"] == "nfs-ganesha" and daemons["ceph-osd"] == "ceph-daemons"
    assert daemons["glusterfsd"] == "glusterfs" and daemons["mmfsd"] == "gpfs"
    assert daemons["beegfs-storage"] == "beegfs" and daemons["rbd-nbd"] == "rbd-nbd"


@pytest.mark.parametrize("comm", [
    "python",  # the workload's own
    "rclone",  # copies and syncs too: its comm names no mount
    "ganesha",  # a part of a daemon's name is not it: the comm is compared whole
    "ceph",  # the CLI, no daemon
    "nfsd",  # the kernel's own server threads never fault in user space: no row
])
def test_another_process_s_segfault_names_no_storage_daemon(comm: str) -> None:
    line = f"{comm}[3551]: segfault at 1378 ip 00007fff859dbeff sp 00007fff3b60ce60 error 4 in libc.so.6[7fff+dec000]"
    [d] = scan(FAULT, [line])
    assert "storage_daemon" not in d.fields


def test_every_word_names_a_listed_client_and_every_class_is_read() -> None:
    tables = storage_tables()
    assert {w.word_class for w in tables.words} == {"failure", "transient", "recovery", "job", "node"}
    assert all(w.client in tables.clients for w in tables.words)


def test_the_server_is_read_from_the_clients_words_not_the_syslog_host() -> None:
    [(_, lost)] = _kinds(["Nov  2 10:03:07 server kernel: nfs: server nfs01 not responding, still trying"], "kernel")
    assert lost["server"] == "nfs01"


def test_the_gcsfuse_sidecar_oomkilled_is_marked_a_storage_daemon() -> None:
    # our own pod object, the sidecar's name as GKE's Cloud Storage FUSE CSI driver injects it
    # (GoogleCloudPlatform/gcs-fuse-csi-driver#314)
    import json

    from firstfault.engine.normalise import terminal_lines
    from firstfault.extract.scheduler import read_scheduler

    def status(name: str, reason: str) -> dict[str, object]:
        return {"name": name, "restartCount": 1, "state": {"running": {"startedAt": "2026-11-02T10:03:00Z"}},
                "lastState": {"terminated": {"reason": reason, "exitCode": 137,
                                             "startedAt": "2026-11-02T10:00:00Z",
                                             "finishedAt": "2026-11-02T10:02:58Z"}}}

    pod = {"apiVersion": "v1", "kind": "PodList", "items": [{
        "metadata": {"name": "trainer-0", "namespace": "default"},
        "spec": {"nodeName": "node-02"},
        "status": {"phase": "Running",
                   "initContainerStatuses": [status("gke-gcsfuse-sidecar", "OOMKilled")],
                   "containerStatuses": [status("trainer", "OOMKilled")]}}]}
    res = read_scheduler(json.dumps(pod).encode(), "k8s-pods", "pods.json", job_id=None, tz=UTC)
    marked = {str(e.fields.get("container")): e.fields.get("storage_daemon")
              for e in terminal_lines([e for e in res.events if e.kind == "k8s.pod"])}
    assert marked == {"trainer": None, "gke-gcsfuse-sidecar": "gcsfuse"}


def test_the_gcsfuse_mounters_cut_comm_is_a_storage_daemon() -> None:
    # GoogleCloudPlatform/gcsfuse#2682 (https://github.com/GoogleCloudPlatform/gcsfuse/issues/2682)
    line = ("Memory cgroup out of memory: Killed process 2960932 (gcs-fuse-csi-dr) total-vm:1340248kB, "
            "anon-rss:100796kB, file-rss:26844kB")
    [d] = scan(OOM, [line])
    assert d.fields["storage_daemon"] == "gcsfuse" and d.fields["cgroup"] is True


def test_gcsfuses_json_line_in_its_sidecars_log_is_read_and_timed() -> None:
    # our own, in gcsfuse's JSON format (internal/logger/slog_helper.go) and error_mapping.go's words
    line = ('{"timestamp":{"seconds":1793613787,"nanos":12345678},"severity":"ERROR","message":"ReadFile: '
            'input/output error, fh.reader.ReadAt: readFull: context deadline exceeded"}')
    [ev] = [e for e in events([line], "application", file="pods/trainer-0/gke-gcsfuse-sidecar.log")
            if e.kind == "storage.error"]
    assert ev.fields["client"] == "gcsfuse" and ev.fields["fs"] == "fuse"
    # without its file naming it, the line names no client: not read
    assert [e for e in events([line], "application", file="app.log") if e.kind == "storage.error"] == []


# --- parallel file systems' clients: IBM Storage Scale (GPFS), BeeGFS, the NFSv4 state manager --------------------

# our own, in mmfs.log's form (IBM Spectrum Scale 4.2.2 docs, "Time stamp in GPFS log entries": the stamp, then the
# severity tag) and the words of a node that lost its quorum (IBM Storage Scale docs, "Quorum loss")
_MMFS = "nodes/n2/mmfs.log.latest"


@pytest.mark.parametrize(("line", "transient"), [
    ("2026-11-02_10:03:04.211+0000: [E] Unable to contact any quorum nodes during cluster probe.", False),
    ("2026-11-02_10:03:04.213+0000: [E] Lost membership in cluster gpfs.example.com. Unmounting file systems.", False),
    ("Mon Nov 02 10:03:05.001 2026: [E] File System gpfs1 unmounted by the system with return code 5 reason code 0",
     False),
    ("2026-11-02_10:02:35.100+0000: [E] Disk lease period expired 0.360 seconds ago in cluster gpfs.example.com. "
     "Attempting to reacquire the lease.", True),
])
def test_gpfs_in_its_own_log_file(line: str, transient: bool) -> None:
    [ev] = [e for e in events([line], "application", file=_MMFS, node="n2") if e.kind == "storage.error"]
    assert ev.fields["fs"] == "gpfs" and ev.fields["client"] == "gpfs"
    assert ev.fields.get("transient", False) is transient


@pytest.mark.parametrize("line", [
    # a mount and the daemon's start are the client's informational lines: nothing
    "2026-11-02_09:58:01.004+0000: [I] Command: mount gpfs1",
    "2026-11-02_09:58:01.912+0000: [I] Command: successful mount gpfs1",
    "2026-11-02_09:57:40.120+0000: [N] mmfsd ready",
])
def test_gpfs_informational_lines_are_nothing(line: str) -> None:
    assert [e for e in events([line], "application", file=_MMFS, node="n2") if e.kind.startswith("storage")] == []


def test_gpfs_words_outside_its_log_and_without_its_tag_are_nothing() -> None:
    # near miss: the same words in the job's own output, with neither mmfs's tag nor its log file
    line = "2026-11-02 10:03:04,213 INFO Lost membership in cluster of workers; re-forming the rendezvous"
    assert [e for e in events([line], "application", file="app/rank-0.log") if e.kind.startswith("storage")] == []


def test_gpfs_in_syslog_under_its_tag() -> None:
    # our own, in syslog's form under mmfs's tag (IBM docs, "Message severity tags": [E] and above reach syslog)
    line = "Nov  2 10:03:04 n2 mmfs[8812]: [E] Lost membership in cluster gpfs.example.com. Unmounting file systems."
    [(kind, fields)] = _kinds([line], "syslog")
    assert kind == "storage.error" and fields["fs"] == "gpfs"


@pytest.mark.parametrize(("line", "kind", "transient"), [
    # our own, in printk_fhgfs's form (ThinkParQ/beegfs client_module/source/common/Common.h) and the words of
    # net/filesystem/FhgfsOpsCommKit.c and common/toolkit/MessagingTk.c
    ("[Mon Nov  2 10:03:04 2026] beegfs: flush(5043): Communication error. Node: storage02 [ID: 2]", "storage.error",
     True),
    ("[Mon Nov  2 10:03:04 2026] beegfs: python(7781): Unable to connect to server: storage02 [ID: 2]",
     "storage.error", True),
    ("[Mon Nov  2 10:03:05 2026] beegfs: python(7781): Retrying communication with node: meta01 [ID: 1]",
     "storage.error", True),
    ("[Mon Nov  2 10:03:06 2026] beegfs: python(7781): Communication with inactive node. Node: storage02 [ID: 2]",
     "storage.error", False),
])
def test_beegfs_kernel_client(line: str, kind: str, transient: bool) -> None:
    [(k, fields)] = _kinds([line], "kernel")
    assert k == kind and fields["fs"] == "beegfs" and fields["client"] == "beegfs"
    assert fields.get("transient", False) is transient


@pytest.mark.parametrize("line", [
    # ThinkParQ/beegfs#89 (https://github.com/ThinkParQ/beegfs/issues/89): the module's banner at mount
    "[12964845.755104] beegfs: mount(1516568): Built without NVFS RDMA support.",
    # the words without the module's prefix: another program's
    "worker 3: Communication error with the parameter server, retrying",
])
def test_beegfs_near_misses_give_nothing(line: str) -> None:
    assert [k for k, _ in _kinds([line], "kernel")] == []


@pytest.mark.parametrize("line", [
    # our own, in the NFSv4 state manager's words (torvalds/linux fs/nfs/nfs4state.c nfs4_state_manager,
    # nfs4_reclaim_open_state)
    "kernel: NFS: state manager failed on NFSv4 server nfs01 with error -5",
    "kernel: NFS: nfs4_reclaim_open_state: unhandled error -10052",
    "kernel: NFS: nfs4_reclaim_open_state: lost 2 locks",
])
def test_the_nfsv4_state_manager_giving_up_is_a_failure(line: str) -> None:
    [(kind, fields)] = _kinds([line], "kernel")
    assert kind == "storage.error" and fields["fs"] == "nfs" and "transient" not in fields


@pytest.mark.parametrize("line", [
    # near misses: the same words without the NFS client's prefix, and the client's own informational line
    "worker 3: reclaim_state: lost 2 locks in the job's own lock table",
    "kernel: NFS: Registering the id_resolver key type",
])
def test_nfs_near_misses_give_nothing(line: str) -> None:
    assert [k for k, _ in _kinds([line], "kernel")] == []


def test_virtiofs_request_the_host_daemon_never_got_is_a_failure() -> None:
    # our own, in the guest kernel's words (torvalds/linux fs/fuse/virtio_fs.c virtio_fs_request_dispatch_work)
    [(kind, fields)] = _kinds(["[ 9012.345678] virtio-fs: virtio_fs_enqueue_req() failed -5"], "kernel")
    assert kind == "storage.error" and fields["fs"] == "virtiofs" and "transient" not in fields


def test_virtiofs_share_not_given_at_boot_is_nothing() -> None:
    # near miss, our own in virtio_fs.c's pr_info words: a share the VM was not given (printed at every boot), and
    # the driver's own informational line
    assert _kinds(["[    1.930390] virtio-fs: tag <share> not found"], "kernel") == []
    assert _kinds(["[    1.102000] virtio-fs: device supports notification queue"], "kernel") == []


def test_gcsfuses_text_line_in_its_log_is_read() -> None:
    # our own, in gcsfuse's text format (internal/logger/slog_helper.go: `time="02/01/2006 03:04:05.000000"`, a
    # 12-hour clock) and error_mapping.go's words
    line = ('time="02/11/2026 10:03:07.437193" severity=ERROR message="ReadFile: input/output error, '
            'fh.reader.ReadAt: readFull: context deadline exceeded" mount-id=bucket-1a2b3c4d')
    [ev] = [e for e in events([line], "application", file="nodes/n1/gcsfuse.log") if e.kind == "storage.error"]
    assert ev.fields["client"] == "gcsfuse"


def test_a_storage_daemons_syslog_tag_stays_on_its_line() -> None:
    # a node's own syslog file names the node in its header: the layer takes the stamp and the host, and keeps the
    # tag of a storage daemon (its anchor); our own line, in syslog's form under mmfs's tag
    line = "Nov  2 10:03:04 n2 mmfs[8812]: [E] Lost membership in cluster gpfs.example.com. Unmounting file systems."
    [ev] = [e for e in events([line], "syslog", file="nodes/n2/syslog", node="n2", hosts=("n2",))
            if e.kind == "storage.error"]
    assert ev.fields["fs"] == "gpfs" and str(ev.fields["detail"]).startswith("mmfs[8812]: ")


def test_another_programs_syslog_tag_is_still_taken() -> None:
    # near miss: sshd's tag goes with the header as before; its words say nothing of storage
    from firstfault.extract.prefix import PrefixLayer

    line = "Nov  2 10:03:04 n2 sshd[991]: pam_unix(sshd:session): session opened for user alice"
    assert PrefixLayer(hosts=("n2",)).split(line).body == "pam_unix(sshd:session): session opened for user alice"


# --- the Ceph cluster's health checks ----------------------------------------------------------------------------
# ceph/ceph src/osd/OSDMap.cc check_health and doc/rados/operations/health-checks.rst: the summary line of `ceph
# health` and, since Nautilus, `ceph health detail`'s `[ERR] CODE: summary` lines, written here in those formats.

@pytest.mark.parametrize("line", [
    "HEALTH_ERR 1 full osd(s); 2 pool(s) full",
    "[ERR] OSD_FULL: 1 full osd(s)",
    "[ERR] POOL_FULL: 2 pool(s) full",
])
def test_cephs_full_health_checks_are_the_storages_failure(line: str) -> None:
    [(kind, fields)] = _kinds([line], "application")
    assert kind == "storage.error" and fields["client"] == "ceph-health" and not fields.get("transient")


@pytest.mark.parametrize("line", [
    "HEALTH_WARN 1 nearfull osd(s); 1 backfillfull osd(s)",  # warnings: writes go on
    "[WRN] OSD_NEARFULL: 1 nearfull osd(s)",
    "[ERR] OSD_OUT_OF_ORDER_FULL: full ratio(s) out of order",  # thresholds misconfigured: no I/O stops
    "the runbook says: 1 full osd(s) needs more capacity",  # the words without the health report's anchor
])
def test_cephs_other_health_words_are_no_failure(line: str) -> None:
    assert [k for k, _ in _kinds([line], "application")] == []
