"""Storage that failed as Kubernetes and the file systems' own services report it: a volume that would not mount or
went stale in the kubelet's and a CSI driver's words, a CSI driver's pods crash-looping, a file-system client's
service that did not start, a file system's daemons not ready (catalog/platform.yaml `storage_clients`, `storage_words`,
`platform_programs` part storage; catalog/exceptions.yaml `errnos` `spellings`).

Lines copied from public threads say so where they stand; the others are ours, in the printing program's format."""

from __future__ import annotations

from firstfault.extract.codes import errno_of


# --- ESTALE's older spelling: glibc before 2.18 (sysdeps/gnu/errlist.c) and Go's syscall table

def test_the_older_spelling_of_estale_is_estale() -> None:
    # kubernetes-csi/csi-driver-nfs#927 (https://github.com/kubernetes-csi/csi-driver-nfs/issues/927), the kubelet's
    line = ("MountVolume.SetUp failed for volume \"pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc\" : applyFSGroup failed "
            "for vol 192.168.50.210#mnt/user/nfs-csi#pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc##: lstat /var/lib/kubelet/"
            "pods/9d3ce1f4-d0c8-4b5e-9994-a17e3267c57d/volumes/kubernetes.io~csi/pvc-a8667b20-fb7f-4873-aa9d-18ec6f7fdccc/"
            "mount: stale NFS file handle")
    assert errno_of(line) == "ESTALE"
    assert errno_of("cat: /mnt/nfs/a.txt: Stale NFS file handle") == "ESTALE"
    assert errno_of("open /mnt/nfs/a.txt: Stale file handle") == "ESTALE"


def test_words_about_nfs_handles_that_are_no_strerror_are_no_errno() -> None:
    # near miss: the words without the strerror's whole text
    assert errno_of("nfsd: refreshing the NFS file handle cache") is None
