"""Storage that failed as Kubernetes and the file systems' own services report it: a volume that would not mount or
went stale in the kubelet's and a CSI driver's words, a CSI driver's pods crash-looping, a file-system client's
service that did not start, a file system's daemons not ready (catalog/platform.yaml `storage_clients`, `storage_words`,
`platform_programs` part storage; catalog/exceptions.yaml `errnos` `spellings`).

Lines copied from public threads say so where they stand; the others are ours, in the printing program's format."""

from __future__ import annotations

from firstfault.extract.codes import errno_of
from tests.extract.helpers import events

# kubernetes-csi/csi-driver-nfs#927 (https://github.com/kubernetes-csi/csi-driver-nfs/issues/927), the kubelet's
_NFS_927 = ("MountVolume.SetUp failed for volume \"pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc\" : applyFSGroup "
            "failed for vol 192.168.50.210#mnt/user/nfs-csi#pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc##: lstat "
            "/var/lib/kubelet/pods/9d3ce1f4-d0c8-4b5e-9994-a17e3267c57d/volumes/kubernetes.io~csi/pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc/"
            "mount: stale NFS file handle")


# --- ESTALE's older spelling: glibc before 2.18 (sysdeps/gnu/errlist.c) and Go's syscall table

def test_the_older_spelling_of_estale_is_estale() -> None:
    assert errno_of(_NFS_927) == "ESTALE"
    assert errno_of("cat: /mnt/nfs/a.txt: Stale NFS file handle") == "ESTALE"
    assert errno_of("open /mnt/nfs/a.txt: Stale file handle") == "ESTALE"


def test_words_about_nfs_handles_that_are_no_strerror_are_no_errno() -> None:
    # near miss: the words without the strerror's whole text
    assert errno_of("nfsd: refreshing the NFS file handle cache") is None


# --- a storage driver's pods crash-looping, a file system's client unit failing (platform_programs, part storage)

def _backoffs(lines: list[str]) -> list[tuple[str | None, str | None]]:
    return [(str(e.fields.get("program")) if "program" in e.fields else None,
             str(e.fields.get("part")) if "part" in e.fields else None)
            for e in events(lines) if e.kind == "k8s.backoff"]


def test_a_csi_drivers_pods_crash_looping_are_the_storage_drivers() -> None:
    # IBM/ibm-spectrum-scale-csi#767 (https://github.com/IBM/ibm-spectrum-scale-csi/issues/767): kubectl get pods
    rows = ["ibm-spectrum-scale-csi-attacher-58b7c87cdd-28mlw      0/1     CrashLoopBackOff   22 (3m57s ago)   110m",
            "ibm-spectrum-scale-csi-jt8r6                          2/3     CrashLoopBackOff   18 (32s ago)     100m"]
    assert _backoffs(rows) == [("spectrum-scale-csi", "storage")] * 2
    # ours, in the kubelet's BackOff event (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go), on
    # Rook's CephFS plugin and MDS (ceph/ceph-csi deploy/cephfs, rook/rook's rook-ceph-mds-<fs>-<id>)
    assert _backoffs(["  Warning  BackOff  2m (x9 over 6m)  kubelet  Back-off restarting failed container "
                      "csi-cephfsplugin in pod csi-cephfsplugin-5xq2z_rook-ceph(0b1c9c1e-7d1f-4a0e-9f55-1f6b0f3d2a11)",
                      "rook-ceph-mds-myfs-a-6d5c9f7b8-x2k4m    0/1     CrashLoopBackOff   7 (2m ago)   40m"]) == [
        ("ceph-csi", "storage"), ("rook-ceph-daemons", "storage")]


def test_a_workload_pod_named_like_a_file_system_is_the_workloads() -> None:
    # near miss: `nfs` and `ceph` as words of the job's own pod are no driver's run of words
    assert _backoffs(["nfs-trainer-0                 0/1     CrashLoopBackOff   22 (3m57s ago)   110m",
                      "ceph-bench-mds-loader-7d9    0/1     CrashLoopBackOff   3 (1m ago)       9m"]) == [
        (None, None)] * 2


def _unit_errors(lines: list[str]) -> list[tuple[str, str]]:
    return [(str(e.fields["program"]), str(e.fields["part"]))
            for e in events(lines, "syslog", file="nodes/gnode01/journal.log", node="gnode01")
            if e.kind == "platform.error"]


def test_a_parallel_file_systems_client_unit_failing_is_storage() -> None:
    # ThinkParQ/beegfs#78 (https://github.com/ThinkParQ/beegfs/issues/78), the client's journal
    lines = ["Sep 17 15:08:01 gnode01 systemd[1]: beegfs-client.service: Main process exited, code=exited, "
             "status=32/n/a",
             "Sep 17 15:08:01 gnode01 systemd[1]: beegfs-client.service: Failed with result 'exit-code'.",
             "Sep 17 15:08:01 gnode01 systemd[1]: Failed to start beegfs-client.service - Start BeeGFS Client."]
    assert _unit_errors(lines) == [("beegfs-client", "storage")]
    # its helper daemon's, by its Description= alone (ThinkParQ/beegfs beegfs-helperd.service)
    assert _unit_errors(["Sep 17 15:08:01 gnode01 systemd[1]: Failed to start BeeGFS Helperd."]) == [
        ("beegfs-client", "storage")]


def test_a_file_system_servers_unit_stopping_is_no_failure() -> None:
    # near miss: the unit stopped (status 0) and a server daemon's unit the table does not name (beegfs-storage)
    assert _unit_errors(["Sep 17 15:08:01 gnode01 systemd[1]: beegfs-client.service: Main process exited, "
                         "code=exited, status=0/SUCCESS",
                         "Sep 17 15:08:01 gnode01 systemd[1]: beegfs-storage.service: Failed with result "
                         "'exit-code'."]) == []


# --- a file system's daemons not ready, in their own words (storage_clients, storage_words)

def _storage(lines: list[str], source: str = "application", file: str = "app.log") -> list[tuple[str, bool]]:
    return [(str(e.fields["fs"]), bool(e.fields.get("transient"))) for e in events(lines, source, file=file)
            if e.kind == "storage.error"]


def test_gpfs_not_ready_is_the_file_systems() -> None:
    # cBio/cbio-cluster#48 (https://github.com/cBio/cbio-cluster/issues/48), a manual mount's answer
    assert _storage([" mmremote: GPFS is not ready to handle commands yet."]) == [("gpfs", False)]


def test_gpfs_words_of_another_program_are_not_its_daemons() -> None:
    # near miss: the words without a GPFS command's tag before them, and a command's ordinary answer
    assert _storage(["checking: GPFS is not ready to handle commands yet", " mmremote: Command successfully "
                     "completed"]) == []


def test_an_mds_behind_on_trimming_is_cephfs_waiting() -> None:
    # rook/rook#13812 (https://github.com/rook/rook/issues/13812), ceph status as the post copies it
    assert _storage(["mds.myfs-a(mds.1) : behind on trimming (6378/128) max_segments:128, num_segments: 6378"],
                    file="ceph/ceph-status.txt") == [("ceph", True)]
    # ours, in Ceph's own spelling (ceph/ceph src/mds/Beacon.cc) as `ceph health detail` prints it
    assert _storage(["    mds.myfs-b(mds.0): Behind on trimming (512/128) max_segments: 128, num_segments: 512",
                     "    mds.myfs-b(mds.0): 12 slow requests are blocked > 30 secs"]) == [("ceph", True)] * 2


def test_trimming_words_of_no_mds_are_no_ceph() -> None:
    # near miss: another program's cache behind on trimming, and an MDS health metric the table does not list
    assert _storage(["cache: behind on trimming (12/10) entries", "    mds.myfs-b(mds.0): 1 clients failing to "
                     "respond to cache pressure"]) == []
