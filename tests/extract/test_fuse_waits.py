"""FUSE mounts in the kernel's and the platform's words (issue: pass tfuse97): a task blocked on a request its FUSE
daemon never answered (catalog/platform.yaml `storage_wait_frames`), a container runtime that cannot make a bind
mount's source on a dead FUSE mount (`mount_source_words`, `dead_mount_errors`), and a FUSE daemon's sidecar killed
for memory that the kubelet restarted (extract/reasons.py recovered_or_clean)."""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import storage_wait_frames
from firstfault.extract import host
from tests.extract.helpers import scan

WAITS = host.StorageWaitExtractor()
MOUNTS = host.MountFailureExtractor()

# our own, in the kernel's hung-task format (kernel/hung_task.c check_hung_task: `INFO: task %s:%d blocked for more
# than %ld seconds.`, then the task's stack without addresses since 4.x, `[module]` after a module's function)
_HUNG = "INFO: task python3:4242 blocked for more than 120 seconds."


def _stack(frame: str) -> list[str]:
    return [_HUNG, "      Not tainted 5.15.0-1051-gcp #59~20.04.1-Ubuntu",
            '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
            "Call Trace:", " <TASK>", " __schedule+0x2cd/0x890", " schedule+0x69/0x110",
            f" {frame}+0x12f/0x210 [fuse]", " fuse_lookup_name+0xe8/0x220 [fuse]", " </TASK>"]


@pytest.mark.parametrize("frame", sorted(storage_wait_frames()))
def test_a_hung_task_blocked_on_its_fuse_daemon_is_the_file_system(frame: str) -> None:
    """Each row of `storage_wait_frames` (torvalds/linux fs/fuse/dev.c, file.c) in a hung-task report's stack."""
    [d] = scan(WAITS, _stack(frame), "kernel")
    assert d.kind == "storage.error" and d.fields["fs"] == "fuse"
    assert "python3:4242" in str(d.fields["detail"]) and frame in str(d.fields["detail"])


def test_a_proc_stack_copied_with_its_addresses_is_read_once() -> None:
    """Alluxio/alluxio#16827 (https://github.com/Alluxio/alluxio/issues/16827): a stuck dataloader's
    /proc/<pid>/stack, pasted as the application's output; one event for the stack."""
    lines = ["[<ffffffffac35a3a1>] request_wait_answer+0x101/0x210",
             "[<ffffffffac35a534>] __fuse_request_send+0x84/0x90",
             "[<ffffffffac35a567>] fuse_request_send+0x27/0x30",
             "[<ffffffffac364901>] fuse_direct_io+0x3e1/0x680",
             "[<ffffffffac2429d9>] __vfs_read+0xe9/0x160"]
    [d] = scan(WAITS, lines, "application")
    assert d.kind == "storage.error" and d.fields["fs"] == "fuse"


@pytest.mark.parametrize(("lines", "source"), [
    # the FUSE daemon's own thread waiting for the kernel's next request (fs/fuse/dev.c fuse_dev_do_read): an idle
    # daemon, in a hung-task report's shape (our own)
    (_stack("fuse_dev_do_read"), "kernel"),
    # a frame of the table in the kernel's log with no hung-task report above it (a SysRq dump of every task, our
    # own in kernel/sched/core.c sched_show_task's shape): a request in flight, answered in time
    (["task:python3         state:S stack:    0 pid: 4242 ppid:     1 flags:0x00000000", "Call Trace:",
      " __schedule+0x2cd/0x890", " request_wait_answer+0x12f/0x210 [fuse]"], "kernel"),
    # a hung task blocked elsewhere (our own: the journal on a local disk)
    (_stack("jbd2_log_wait_commit"), "kernel"),
    # a bare frame in the application's output, without the /proc form's address
    (["request_wait_answer+0x101/0x210"], "application"),
    # the function's name without a frame's offset (a log line that names it)
    (["debug: request_wait_answer took 3 ms"], "application"),
])
def test_near_misses_give_nothing(lines: list[str], source: str) -> None:
    assert scan(WAITS, lines, source) == []


def test_a_report_far_above_the_frame_does_not_reach_it() -> None:
    """A frame of the table more than the report's span below it is another stack's (our own)."""
    lines = [_HUNG, *["filler"] * (host._HUNG_LINES + 1), "[<0>] request_wait_answer+0x101/0x210"]
    assert scan(WAITS, lines, "kernel") == []


# --- the container runtime on a dead FUSE mount ----------------------------------------------------------------

@pytest.mark.parametrize(("lines", "client"), [
    # fluid-cloudnative/fluid#1345 (https://github.com/fluid-cloudnative/fluid/issues/1345): the JuiceFS FUSE pod's
    # restart, the quote wrapped in YAML
    (["'error while creating mount source path ''/runtime-mnt/juicefs/default/jfsdemo/juicefs-fuse'':",
      "          mkdir /runtime-mnt/juicefs/default/jfsdemo/juicefs-fuse: file exists'"], "juicefs"),
    # our own, in moby volume/mounts/mounts.go MountPoint.Setup's words, on one line
    (["Error response from daemon: error while creating mount source path '/mnt/gcsfuse/bucket-a': mkdir "
      "/mnt/gcsfuse/bucket-a: transport endpoint is not connected"], "gcsfuse"),
])
def test_a_mount_source_on_a_dead_fuse_mount_is_the_clients(lines: list[str], client: str) -> None:
    [d] = scan(MOUNTS, lines, "application")
    assert d.kind == "storage.error" and d.fields["client"] == client and d.fields["fs"] == "fuse"


@pytest.mark.parametrize("lines", [
    # a path that names no storage client (a public post's stale CIFS mount: which server is not said)
    ["Error response from daemon: error while creating mount source path '/mnt/media': mkdir /mnt/media: file exists"],
    # a client's path, but the host's permissions (our own, in moby's words)
    ["Error response from daemon: error while creating mount source path '/mnt/s3fs/data': mkdir /mnt/s3fs/data: "
     "permission denied"],
    # the error on a line too far below the runtime's words
    ["error while creating mount source path '/runtime-mnt/juicefs/default/x/juicefs-fuse':", "a", "b",
     "mkdir /runtime-mnt/juicefs/default/x/juicefs-fuse: file exists"],
])
def test_mount_source_near_misses_give_nothing(lines: list[str]) -> None:
    assert scan(MOUNTS, lines, "application") == []


# --- a FUSE daemon's sidecar killed for memory, restarted ------------------------------------------------------

_DESCRIBE = """Name:         trainer-0
Namespace:    default
Node:         gke-pool-1-abcd/10.0.0.5
Status:       Pending
Init Containers:
  {name}:
    Container ID:    containerd://a1fa8f6c349f
    Image:           gke.gcr.io/gcs-fuse-csi-driver-sidecar-mounter:v1.4.2-gke.0
    State:          Running
      Started:      Wed, 17 Jul 2024 20:42:10 -0700
    Last State:     Terminated
      Reason:       StartError
      Message:      {message}
      Exit Code:    128
      Started:      Wed, 31 Dec 1969 16:00:00 -0800
      Finished:     Wed, 17 Jul 2024 20:41:19 -0700
    Ready:          True
    Restart Count:  4
"""

_MESSAGE = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
            "failed: unable to start container process: container init was OOM-killed (memory limit too low?): "
            "unknown")


@pytest.mark.parametrize(("container", "due_to"), [
    # GoogleCloudPlatform/gcs-fuse-csi-driver#314: the gcsfuse sidecar OOM-killed at its start, Running again
    ("gke-gcsfuse-sidecar", "memory_limit"),
    # the same state of the job's own container: its restart recovered from it (kubernetes/kubernetes#122256)
    ("trainer", None),
])
def test_a_fuse_sidecars_memory_kill_stays_a_cause_after_its_restart(container: str, due_to: str | None) -> None:
    from datetime import UTC

    from firstfault.extract.scheduler import read_scheduler

    text = _DESCRIBE.replace("{name}", container).replace("{message}", _MESSAGE)
    res = read_scheduler(text.encode(), "k8s-describe", "describe-pod.txt", job_id=None, tz=UTC)
    [ev] = [e for e in res.events if e.kind == "k8s.pod" and e.fields.get("container") == container]
    assert ev.fields.get("due_to") == due_to


# --- libfuse's own refusals (catalog/platform.yaml `storage_words`, client libfuse) ---------------------------

@pytest.mark.parametrize(("line", "error"), [
    # libfuse/libfuse util/fusermount.c open_fuse_device (3.x, e8d407ce), in fusermount3's own words
    ("fusermount3: fuse device /dev/fuse not found. Kernel module not loaded?", "node"),
    # libfuse/libfuse lib/mount.c fuse_kern_mount (3.x)
    ("fuse: device /dev/fuse not found. Kernel module not loaded?", "node"),
    # libfuse/libfuse util/fuser_conf.c check_nonroot_mount_count
    ("fusermount3: too many FUSE filesystems mounted; mount_max=N can be set in /etc/fuse.conf", "node"),
    # libfuse/libfuse util/fusermount.c (the job's allow_other without the node's user_allow_other)
    ("fusermount: option allow_other only allowed if 'user_allow_other' is set in /etc/fuse.conf", "job"),
    # libfuse/libfuse util/fusermount.c check_perm
    ("fusermount3: mountpoint /scratch/mnt not owned by user", "job"),
    # libfuse/libfuse lib/mount_util.c fuse_mnt_check_empty (fuse-2.9.9)
    ("fuse: mountpoint is not empty", "job"),
])
def test_libfuses_refusals_are_read_by_whose(line: str, error: str) -> None:
    from tests.extract.helpers import events

    [ev] = [e for e in events([line]) if e.kind == "container.error"]
    assert ev.fields["runtime"] == "libfuse" and ev.fields["error"] == error


@pytest.mark.parametrize("line", [
    # the same words from another program (kmod's modprobe, in its shape: our own)
    "modprobe: FATAL: Module nvidia not found. Kernel module not loaded?",
    # the words without libfuse's tag
    "the mountpoint is not empty yet, waiting",
    # fusermount's ENOTCONN on a dead mount is the errno's, read as any path's (no container.error)
    "fusermount: failed to access mountpoint /mnt/data: Transport endpoint is not connected",
])
def test_libfuse_near_misses_are_no_refusal(line: str) -> None:
    from tests.extract.helpers import events

    assert [e for e in events([line]) if e.kind == "container.error"] == []


def test_fusermount3s_tag_is_its_own_not_a_host() -> None:
    """A storage program's name with a digit before `: ` (libfuse 3's fusermount3) stays on its line, no pdsh host
    tag (extract/prefix.py _looks_like_host); a node's name does not."""
    from firstfault.extract.prefix import PrefixLayer

    layer = PrefixLayer()
    assert layer.split("fusermount3: mountpoint /x not owned by user").host is None
    assert layer.split("node01: mountpoint /x not owned by user").host == "node01"


# --- JuiceFS's fatal records (juicedata/juicefs at a6a0299bd) ---------------------------------------------------

_JFS = "2024/05/01 10:00:00.000000 juicefs[812] <FATAL>: "


@pytest.mark.parametrize(("line", "kind", "error"), [
    # cmd/mount_unix.go: SIGHUP's flush of buffered writes before a restart failed (our own, in its logger's format,
    # pkg/utils/logger.go)
    (_JFS + "flush buffered data failed: put chunks/0/1/1_0_4194304: timeout [mount_unix.go:955]", "storage.error",
     None),
    # pkg/meta/base.go Load, as the mount's fatal record quotes it
    (_JFS + "Meta: database is not formatted, please run `juicefs format ...` first [main.go:31]", "container.error",
     "job"),
    # cmd/mount_unix.go prepareMp
    (_JFS + 'Do not have write permission on "/jfs" [mount_unix.go:640]', "container.error", "job"),
    (_JFS + 'current user should own "/jfs" [mount_unix.go:633]', "container.error", "job"),
    # cmd/mount.go
    (_JFS + "should not mount on the root directory [mount.go:572]", "container.error", "job"),
])
def test_juicefs_fatal_records_are_read_by_whose(line: str, kind: str, error: str | None) -> None:
    from tests.extract.helpers import events

    [ev] = [e for e in events([line]) if e.kind in ("storage.error", "container.error")]
    assert ev.kind == kind and ev.fields.get("error") == error
    assert ev.fields.get("client", ev.fields.get("runtime")) == "juicefs"


@pytest.mark.parametrize("line", [
    # the mount not ready in time says no reason of its own (cmd/mount_unix.go)
    _JFS + "The mount point is not ready in 10 seconds (/jfs), exit it [mount_unix.go:343]",
    # the words without JuiceFS's tag
    "flush buffered data failed: timeout",
])
def test_juicefs_near_misses_give_nothing(line: str) -> None:
    from tests.extract.helpers import events

    assert [e for e in events([line]) if e.kind in ("storage.error", "container.error")] == []


# --- blobfuse2's refusals of what the job asked (Azure/azure-storage-fuse at 74098e3da) -------------------------

_B2 = "Tue Mar 14 14:49:09 GMT 2023 : blobfuse2[1429] : LOG_ERR [libfuse_handler.go (174)]: "


@pytest.mark.parametrize("line", [
    # component/libfuse/libfuse_handler.go initFuse (our own, in its base_logger.go format)
    _B2 + "Libfuse::initFuse : Failed to parse fuse arguments",
    # component/libfuse/libfuse_handler.go libfuse_open
    _B2 + "Libfuse::libfuse_open : Flags: (8241)O_WRONLY|O_APPEND not supported to open data/x.log when write back "
    "cache is on. Pass --disable-writeback-cache=true or --ignore-open-flags=true via CLI",
])
def test_blobfuse2s_refusals_are_the_jobs(line: str) -> None:
    from tests.extract.helpers import events

    [ev] = [e for e in events([line]) if e.kind == "container.error"]
    assert ev.fields["runtime"] == "blobfuse2" and ev.fields["error"] == "job"


@pytest.mark.parametrize("line", [
    # a lookup of a path that is not there (libfuse_handler.go libfuse_getattr): routine, no row
    _B2 + "Libfuse::libfuse_getattr : Failed to get attributes of data/missing.bin [no such file or directory]",
    # the words without blobfuse2's tag
    "Failed to parse fuse arguments",
])
def test_blobfuse2_near_misses_give_nothing(line: str) -> None:
    from tests.extract.helpers import events

    assert [e for e in events([line]) if e.kind in ("container.error", "storage.error")] == []


# --- GKE's Cloud Storage FUSE CSI driver refusing the volume (gcs-fuse-csi-driver pkg/csi_driver/node.go) -------

_SETUP = ("  Warning  FailedMount  2m (x3 over 6m)  kubelet  MountVolume.SetUp failed for volume "
          '"gcs-fuse-csi-ephemeral" : rpc error: ')


@pytest.mark.parametrize("line", [
    # our own, in NodePublishVolume's words (at 5fcdc04a) with GCS's 404 and 403 answers, as a FailedMount event
    _SETUP + 'code = NotFound desc = failed to get GCS bucket "my-bucket": googleapi: Error 404: The specified bucket '
    "does not exist., notFound",
    _SETUP + 'code = PermissionDenied desc = failed to get GCS bucket "my-bucket": googleapi: Error 403: Caller does '
    "not have storage.objects.list access to the Google Cloud Storage bucket., forbidden",
    _SETUP + "code = Unauthenticated desc = failed to prepare storage service: oauth2: cannot fetch token",
    _SETUP + "code = FailedPrecondition desc = failed to find the sidecar container in Pod spec",
])
def test_the_gcsfuse_csi_drivers_refusals_are_the_jobs(line: str) -> None:
    from tests.extract.helpers import events

    [ev] = [e for e in events([line]) if e.kind in ("container.error", "storage.error")]
    assert ev.kind == "container.error" and ev.fields["runtime"] == "gcsfuse" and ev.fields["error"] == "job"


@pytest.mark.parametrize("line", [
    # the bucket check's other answer, the store's 5xx under code Internal: no row of the driver's
    _SETUP + 'code = Internal desc = failed to get GCS bucket "my-bucket": googleapi: Error 503: Backend Error, '
    "backendError",
    # GCS's words in the job's own exception, without the driver's
    "ValueError: The specified bucket does not exist",
])
def test_gcsfuse_csi_near_misses_are_no_refusal(line: str) -> None:
    from tests.extract.helpers import events

    assert [e for e in events([line]) if e.kind == "container.error"] == []


# --- rclone mount's VFS cache (rclone/rclone vfs/vfscache at 64ab1ac32) ------------------------------------------

_RC = "2024/05/01 10:00:00 ERROR : shards/shard-0001.tar: "


@pytest.mark.parametrize(("line", "transient"), [
    # vfs/vfscache/downloaders/downloaders.go: the downloads gave up, the readers get the last error (our own, in
    # rclone's log format)
    (_RC + "vfs cache: too many errors 11/10: last error: read tcp 10.0.0.5:443: connection reset by peer", False),
    (_RC + "vfs cache: cache is out of space 1/10: last error: write /cache/vfs/x: disk quota exceeded", False),
    # vfs/vfscache/writeback/writeback.go: an upload the queue retries with a growing delay
    (_RC + "vfs cache: failed to upload try #3, will retry in 40s: vfs cache: failed to transfer file from cache to "
     "remote: 503 Service Unavailable", True),
    # downloaders.go: one chunk's download, which the downloaders restart
    (_RC + "vfs cache: failed to download: vfs reader: failed to write to cache file: context deadline exceeded",
     True),
])
def test_rclones_vfs_cache_errors(line: str, transient: bool) -> None:
    from tests.extract.helpers import events

    evs = [e for e in events([line]) if e.kind == "storage.error" and e.fields.get("client") == "rclone"]
    assert len(evs) == 1 and bool(evs[0].fields.get("transient")) is transient


@pytest.mark.parametrize("line", [
    # vfs/vfscache/cache.go: the cache's housekeeping fails no call
    '2024/05/01 10:00:00 ERROR : vfs cache: failed to remove empty directories from cache path "/cache": denied',
    # the words without rclone's VFS prefix
    "uploader: too many errors 11/10",
])
def test_rclone_near_misses_give_nothing(line: str) -> None:
    from tests.extract.helpers import events

    assert [e for e in events([line]) if e.kind == "storage.error"] == []
