"""Storage that failed as Kubernetes and the file systems' own services report it: a volume that would not mount or
went stale in the kubelet's and a CSI driver's words, a CSI driver's pods crash-looping, a file-system client's
service that did not start, a file system's daemons not ready (catalog/platform.yaml `storage_clients`, `storage_words`,
`platform_programs` part storage_driver; catalog/exceptions.yaml `errnos` `spellings`).

Lines copied from public threads say so where they stand; the others are ours, in the printing program's format."""

from __future__ import annotations

from firstfault.extract.codes import errno_of
from tests.extract.helpers import events

# kubernetes-csi/csi-driver-nfs#927 (https://github.com/kubernetes-csi/csi-driver-nfs/issues/927), the kubelet's
_NFS_927 = ("MountVolume.SetUp failed for volume \"pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc\" : applyFSGroup "
            "failed for vol 192.168.50.210#mnt/user/nfs-csi#pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc##: lstat "
            "/var/lib/kubelet/pods/9d3ce1f4-d0c8-4b5e-9994-a17e3267c57d/volumes/kubernetes.io~csi/pvc-a8667b20-"
            "fb7f-4873-aa9d-18ec6f7fdccc/"
            "mount: stale NFS file handle")


# --- ESTALE's older spelling: glibc before 2.18 (sysdeps/gnu/errlist.c) and Go's syscall table

def test_the_older_spelling_of_estale_is_estale() -> None:
    assert errno_of(_NFS_927) == "ESTALE"
    assert errno_of("cat: /mnt/nfs/a.txt: Stale NFS file handle") == "ESTALE"
    assert errno_of("open /mnt/nfs/a.txt: Stale file handle") == "ESTALE"


def test_words_about_nfs_handles_that_are_no_strerror_are_no_errno() -> None:
    # near miss: the words without the strerror's whole text
    assert errno_of("nfsd: refreshing the NFS file handle cache") is None


# --- a storage driver's pods crash-looping, a file system's client unit failing (part storage_driver)

def _backoffs(lines: list[str]) -> list[tuple[str | None, str | None]]:
    return [(str(e.fields.get("program")) if "program" in e.fields else None,
             str(e.fields.get("part")) if "part" in e.fields else None)
            for e in events(lines) if e.kind == "k8s.backoff"]


def test_a_csi_drivers_pods_crash_looping_are_the_storage_drivers() -> None:
    # IBM/ibm-spectrum-scale-csi#767 (https://github.com/IBM/ibm-spectrum-scale-csi/issues/767): kubectl get pods
    rows = ["ibm-spectrum-scale-csi-attacher-58b7c87cdd-28mlw      0/1     CrashLoopBackOff   22 (3m57s ago)   110m",
            "ibm-spectrum-scale-csi-jt8r6                          2/3     CrashLoopBackOff   18 (32s ago)     100m"]
    assert _backoffs(rows) == [("spectrum-scale-csi", "storage_driver")] * 2
    # ours, in the kubelet's BackOff event (kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go), on
    # Rook's CephFS plugin and MDS (ceph/ceph-csi deploy/cephfs, rook/rook's rook-ceph-mds-<fs>-<id>)
    assert _backoffs(["  Warning  BackOff  2m (x9 over 6m)  kubelet  Back-off restarting failed container "
                      "csi-cephfsplugin in pod csi-cephfsplugin-5xq2z_rook-ceph(0b1c9c1e-7d1f-4a0e-9f55-1f6b0f3d2a11)",
                      "rook-ceph-mds-myfs-a-6d5c9f7b8-x2k4m    0/1     CrashLoopBackOff   7 (2m ago)   40m"]) == [
        ("ceph-csi", "storage_driver"), ("rook-ceph-daemons", "storage_driver")]


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
    assert _unit_errors(lines) == [("beegfs-client", "storage_driver")]
    # its helper daemon's, by its Description= alone (ThinkParQ/beegfs beegfs-helperd.service)
    assert _unit_errors(["Sep 17 15:08:01 gnode01 systemd[1]: Failed to start BeeGFS Helperd."]) == [
        ("beegfs-client", "storage_driver")]


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


# --- a volume that would not mount: k8s.io/mount-utils' report and the kubelet's MountVolume errors

def _mounts(lines: list[str], source: str = "application") -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for e in events(lines, source):
        if e.kind == "storage.error":
            out.append(("storage", str(e.fields["fs"]), str(e.fields.get("errno", ""))))
        elif e.kind == "container.error":
            out.append(("container", str(e.fields["runtime"]), str(e.fields["error"])))
    return out


def test_a_lustre_mount_failing_in_the_csi_drivers_report_is_lustres() -> None:
    # kubernetes-sigs/aws-fsx-csi-driver#437 (https://github.com/kubernetes-sigs/aws-fsx-csi-driver/issues/437):
    # mount-utils' report, one line each, the output on the line after the arguments
    lines = ["E0616 13:36:05.816731       1 mount_linux.go:272] Mount failed: exit status 22",
             "Mounting command: mount",
             "Mounting arguments: -t lustre fs-FS_ID.fsx.us-east-1.amazonaws.com@tcp:/MOUNT_NAME /var/lib/kubelet/pods/"
             "b159d19e-b4ab-49b6-9126-d1be35544b02/volumes/kubernetes.io~csi/pvc-5ca82a9a-aa31-470b-8542-b2cf6e2274a1/"
             "mount",
             "Output: mount.lustre: mount fs-FS_ID.fsx.us-east-1.amazonaws.com@tcp:/MOUNT_NAME at "
             "/var/lib/kubelet/pods/"
             "b159d19e-b4ab-49b6-9126-d1be35544b02/volumes/kubernetes.io~csi/pvc-5ca82a9a-aa31-470b-8542-b2cf6e2274a1/"
             "mount failed: Invalid argument"]
    assert _mounts(lines) == [("storage", "lustre", "")]


def test_a_weka_mount_failing_on_one_line_is_wekas() -> None:
    # weka/csi-wekafs#616 (https://github.com/weka/csi-wekafs/issues/616), the pod's event
    line = ("mounting arguments: -t wekafs -o sync_on_close,writecache FILESYSTEM /run/weka-fs-mounts/FILESYSTEM-pkaqp4"
            "aet6rn5zqpvttbe43s  bxeoqybm  output: mount: "
            "/run/weka-fs-mounts/FILESYSTEM-pkaqp4aet6rn5zqpvttbe43sbxeoqybm: "
            "wrong fs type, bad option, bad superblock on FILESYSTEM, missing codepage or helper program, or other "
            "error.  dmesg(1) may have more information after failed mount system call.")
    assert _mounts([line]) == [("storage", "weka", "")]


def test_a_mount_of_no_listed_file_system_is_no_storage() -> None:
    # near miss: ours, mount-utils' report of a Secret's tmpfs and a local disk's ext4 (no type of the table)
    assert _mounts(["Mounting arguments: -t tmpfs tmpfs /var/lib/kubelet/pods/0b1c/volumes/kubernetes.io~secret/tok",
                    "Output: mount: /var/lib/kubelet/pods/0b1c/volumes/kubernetes.io~secret/tok: mount point busy.",
                    "Mounting arguments: -t ext4 -o defaults /dev/nvme1n1 "
                    "/var/lib/kubelet/plugins/kubernetes.io/csi/pv/"
                    "pvc-1/globalmount output: mount: wrong fs type, bad option, bad superblock on /dev/nvme1n1"]) == []
    # and an output line with no arguments' line before it (another program's `Output:`)
    assert _mounts(["Output: mount point /data created"]) == []


def test_the_jobs_or_the_nodes_refusal_of_an_nfs_mount_is_not_the_file_systems() -> None:
    # ours, in the MountError form the kubelet quotes (k8s.io/mount-utils) with nfs-utils' ENOENT answer
    # (utils/mount/error.c): the export path the job's volume names is not on the server
    job = ("MountVolume.SetUp failed for volume \"data\" : mount failed: exit status 32 Mounting command: mount "
           "Mounting arguments: -t nfs 10.0.0.5:/exports/typo "
           "/var/lib/kubelet/pods/0b1c/volumes/kubernetes.io~nfs/data "
           "Output: mount.nfs: mounting 10.0.0.5:/exports/typo failed, reason given by server: No such file "
           "or directory")
    assert _mounts([job]) == [("container", "nfs", "job")]
    # the node lacks the helper program (util-linux's words, as a kubelet's post quotes them)
    node = ("Mounting arguments: -t nfs 10.0.0.5:/exports/data "
            "/var/lib/kubelet/pods/0b1c/volumes/kubernetes.io~nfs/data "
            "Output: mount: /var/lib/kubelet/pods/0b1c/volumes/kubernetes.io~nfs/data: bad option; for several "
            "filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program.")
    assert _mounts([node]) == [("container", "nfs", "node")]


def test_the_kubelets_mount_error_ending_in_a_storage_errno_is_the_mounts() -> None:
    # kubernetes-csi/csi-driver-nfs#927 (above)
    assert _mounts(["> " + _NFS_927]) == [("storage", "posix", "ESTALE")]
    # ours: the kubelet naming a CSI driver whose node plugin is not registered on the node
    # (kubernetes/kubernetes pkg/volume/csi/csi_client.go `driver name %s not found in the list of registered CSI
    # drivers`), Rook's prefixed CephFS driver
    assert _mounts(["MountVolume.MountDevice failed for volume \"pvc-1\" : kubernetes.io/csi: attacher.MountDevice "
                    "failed to create newCsiDriverClient: driver name rook-ceph.cephfs.csi.ceph.com not found in the "
                    "list of registered CSI drivers"]) == [("storage", "ceph", "")]


def test_the_kubelets_mount_error_of_a_configmap_or_token_is_no_storage() -> None:
    # near miss: the kubelet's errors for the node's own volumes (kubernetes/kubernetes pkg/volume/configmap,
    # pkg/kubelet/util/manager: `object %q/%q not registered`)
    assert _mounts(["MountVolume.SetUp failed for volume \"config\" : configmap \"trainer-config\" not found",
                    "MountVolume.SetUp failed for volume \"kube-api-access-7x2kq\" : object \"default\"/"
                    "\"kube-root-ca.crt\" not registered"]) == []
