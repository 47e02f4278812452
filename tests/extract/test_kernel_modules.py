"""Kernel modules the node could not load or build, read through one table (catalog/platform.yaml `kernel_modules`,
`kernel_module_reasons`; extract/kmod.py): kmod's modprobe and insmod, module-init-tools' modprobe, the kernel's
module loader and DKMS, each naming the module; the module's row says which part of the node it is.

Lines marked with a source are verbatim from it, or follow its format where marked so (versions, paths and names are
this test's). The near misses: a module that found no device or was loaded already, the kernel's taint warnings for a
module it loaded, an install script's echo of the words, a module no row names.
"""

from __future__ import annotations

import pytest

from firstfault.model import Event
from tests.extract import helpers


def feed(lines: list[str], source: str = "application") -> list[Event]:
    return helpers.events(lines, source, file="nodes/node-1/job.log", node="node-1")


def modules(lines: list[str], source: str = "application") -> list[tuple[object, ...]]:
    return [(e.fields.get("module"), e.fields.get("part"), e.fields.get("reason"), e.fields.get("reason_class"))
            for e in feed(lines, source) if e.kind == "node.kernel_module"]


@pytest.mark.parametrize(("line", "source", "expected"), [
    # NVIDIA/gpu-operator#2868: the GPU operator's peermem container (kmod tools/modprobe.c's words)
    ("modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument", "application",
     ("nvidia_peermem", "gpudirect", "Invalid argument", "refused")),
    # ... and the kernel's loader before it (kernel/module/version.c, kernel/module/main.c), same thread
    ("[Tue Sep  8 17:16:02 2026] nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client",
     "kernel", ("nvidia_peermem", "gpudirect", "disagrees about version of symbol", "refused")),
    ("[Tue Sep  8 17:16:02 2026] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)", "kernel",
     ("nvidia_peermem", "gpudirect", "Unknown symbol", "refused")),
    # Mellanox/nv_peer_memory#84 (modprobe after OFED was reinstalled) and #80
    ("modprobe: ERROR: could not insert 'nv_peer_mem': Unknown symbol in module, or unknown parameter (see dmesg)",
     "application",
     ("nv_peer_mem", "gpudirect", "Unknown symbol in module, or unknown parameter (see dmesg)", "refused")),
    # Mellanox/nv_peer_memory#84: the loader's words as RHEL 7's kernel prints them (err 0)
    ("[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err 0)", "kernel",
     ("nv_peer_mem", "gpudirect", "Unknown symbol", "refused")),
    # NVIDIA/gdrcopy#13: insmod's words with the module's path (kmod tools/insmod.c)
    ("insmod: ERROR: could not insert module gdrdrv/gdrdrv.ko: Invalid parameters", "application",
     ("gdrdrv", "gpudirect", "Invalid parameters", "refused")),
    # a module Secure Boot refused (kmod's format; strerror(EKEYREJECTED), strerror(ENOKEY))
    ("modprobe: ERROR: could not insert 'nvidia': Required key not available", "application",
     ("nvidia", "driver", "Required key not available", "refused")),
    ("modprobe: ERROR: could not insert 'mlx5_ib': Key was rejected by service", "application",
     ("mlx5_ib", "rdma", "Key was rejected by service", "refused")),
    # module-init-tools' modprobe before kmod (its `Error inserting %s (%s): %s`, as Ubuntu forum threads of 2006-2009
    # quote it for other modules; the module here is this test's)
    ("FATAL: Error inserting nvidia (/lib/modules/2.6.32-5-amd64/nvidia/nvidia.ko): Invalid module format",
     "application", ("nvidia", "driver", "Invalid module format", "refused")),
    # DKMS's pointer to its build log (NVIDIA/open-gpu-kernel-modules#526), and its autoinstall summary (#635)
    ("Consult /var/lib/dkms/nvidia/390.157/build/make.log for more information.", "application",
     ("nvidia", "driver", "DKMS build failed", "not_built")),
    ("dkms autoinstall on 6.8.10-300.fc40.x86_64/x86_64 failed for nvidia(10)", "application",
     ("nvidia", "driver", "DKMS build failed", "not_built")),
    # GPUDirect Storage's module: its DKMS package's dashed name is the module's (NVIDIA/gds-nvidia-fs#64's shape)
    ("Consult /var/lib/dkms/nvidia-fs/2.26.6/build/make.log for more information.", "application",
     ("nvidia_fs", "gpudirect", "DKMS build failed", "not_built")),
    # the RDMA stack's module after an OFED built for another kernel (the loader's format)
    ("[    8.100200] mlx5_ib: Unknown symbol ib_register_device (err -22)", "kernel",
     ("mlx5_ib", "rdma", "Unknown symbol", "refused")),
    # the package manager's word that a DKMS package's install script failed: dpkg (aws-neuron/aws-neuron-sdk#661),
    # rpm (its lib/rpmscript.c format; the EFA installer's packages, amzn-drivers' efa and efa-nv-peermem), Debian's
    # versioned NVIDIA package
    (" installed aws-neuron-dkms package post-installation script subprocess returned error exit status 101",
     "application", ("neuron", "driver", "DKMS build failed", "not_built")),
    ("warning: %post(efa-nv-peermem-1.2.1-1.amzn2023.x86_64) scriptlet failed, exit status 1", "application",
     ("efa_nv_peermem", "gpudirect", "DKMS build failed", "not_built")),
    ("error: %post(efa-2.10.0-1.el9.x86_64) scriptlet failed, exit status 10", "application",
     ("efa", "rdma", "DKMS build failed", "not_built")),
    (" installed nvidia-dkms-535:amd64 package post-installation script subprocess returned error exit status 10",
     "application", ("nvidia", "driver", "DKMS build failed", "not_built")),
    # a module that found none of its hardware, and one loaded already (pobrn/qc71_laptop#8's words for gdrdrv here)
    ("modprobe: ERROR: could not insert 'nvidia_peermem': No such device", "application",
     ("nvidia_peermem", "gpudirect", "No such device", "no_device")),
    ("insmod: ERROR: could not insert module gdrdrv.ko: File exists", "application",
     ("gdrdrv", "gpudirect", "File exists", "loaded")),
])
def test_a_module_that_did_not_load(line: str, source: str, expected: tuple[object, ...]) -> None:
    assert modules([line], source) == [expected]


@pytest.mark.parametrize(("line", "source"), [
    # the kernel's taint warnings for a module it loaded (kernel/module/main.c, kernel/module/signing.c)
    ("[    5.101010] nvidia: loading out-of-tree module taints kernel.", "kernel"),
    ("[    5.101020] nvidia: module verification failed: signature and/or required key missing - tainting kernel",
     "kernel"),
    ("[    5.101030] nvidia: module license 'NVIDIA' taints kernel.", "kernel"),
    # an install script's echo of the words (its own text), traced by sh -x and as the script holds it
    ("+ echo \"modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument\"", "application"),
    ("    echo \"nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err -22)\" >&2", "application"),
    # modules no row names (dm-vdo/kvdo#27; xanmod/linux#46's DKMS modules; a sound card's under module-init-tools)
    ("[16324.089963] kvdo: Unknown symbol getByte (err 0)", "kernel"),
    ("Consult /var/lib/dkms/bbswitch/0.8/build/make.log for more information.", "application"),
    ("FATAL: Error inserting snd_intel8x0 (/lib/modules/2.6.10-5-386/kernel/sound/pci/snd-intel8x0.ko): Unknown "
     "symbol in module, or unknown parameter (see dmesg)", "application"),
    # another package's install script (the words' source threads: an NVIDIA demo package, docker-ce), a DKMS package
    # no row names, and a removal's script (%preun: the old module still in use, no build of the new one)
    (" installed vpi1-demos package post-installation script subprocess returned error exit status 1", "application"),
    ("warning: %post(docker-ce-selinux-17.03.1.ce-1.el7.centos.noarch) scriptlet failed, exit status 255",
     "application"),
    (" installed bbswitch-dkms package post-installation script subprocess returned error exit status 10",
     "application"),
    ("error: %preun(aws-neuronx-dkms-2.x-dkms.noarch) scriptlet failed, exit status 1", "application"),
    # DKMS's command as a log shows it running, with no failure
    ("make KERNELRELEASE=3.13.0-98-generic all && make DESTDIR=/var/lib/dkms/nv_peer_mem/1.0/build install....",
     "application"),
    # depmod's warning when it indexes a module (Mellanox/nv_peer_memory#84): no load was tried
    ("depmod: WARNING: /lib/modules/3.10.0-1127.19.1.el7.x86_64/extra/nv_peer_mem.ko needs unknown symbol "
     "ib_register_peer_memory_client", "application"),
])
def test_near_misses(line: str, source: str) -> None:
    assert modules([line], source) == []


def test_dashes_are_underscores() -> None:
    # modprobe takes `nvidia-peermem` for `nvidia_peermem` (kmod's modname normalisation)
    assert modules(["modprobe: ERROR: could not insert 'nvidia-peermem': Invalid argument"]) == [
        ("nvidia_peermem", "gpudirect", "Invalid argument", "refused")]


# ---------------------------------------------------------------- a loaded module's own word that it failed at its job


@pytest.mark.parametrize(("line", "source", "expected"), [
    # NVIDIA/gdrcopy#30 (https://github.com/NVIDIA/gdrcopy/issues/30): the module's dmesg line (src/gdrdrv/gdrdrv.c)
    ("gdrdrv:nvidia_p2p_get_pages(va=704fe0000 len=327680 p2p_token=0 va_space=0) failed [ret = -22]", "kernel",
     ("gdrdrv", "gpudirect", "gdrdrv:nvidia_p2p_get_pages", "failing")),
    # NVIDIA/gdrcopy#115 (https://github.com/NVIDIA/gdrcopy/issues/115): libgdrapi's word (src/gdrapi.c gdr_open)
    ("ERR:  Error getting the gdrdrv driver version with ioctl error (errno=22). gdrdrv might be too old.",
     "application", ("gdrdrv", "gpudirect", "Error getting the gdrdrv driver version with ioctl error", "failing")),
])
def test_a_loaded_module_that_fails_at_its_job(line: str, source: str, expected: tuple[object, ...]) -> None:
    assert modules([line], source) == [expected]


@pytest.mark.parametrize(("line", "source"), [
    # lines in the form of gdrdrv's own debug and info records around a pin that worked (src/gdrdrv/gdrdrv.c gdr_dbg,
    # gdr_info; the words and values are this test's)
    ("gdrdrv:gdrdrv_pin_buffer:invoking nvidia_p2p_get_pages(va=0x7f0000000000 len=65536 p2p_tok=0 va_tok=0)",
     "kernel"),
    ("gdrdrv:loading gdrdrv version 2.4 built for NVIDIA driver 535.104.05", "kernel"),
    # GDRCopy's sanity test reporting a test that failed: the test's word, not the module's (NVIDIA/gdrcopy#115)
    ("&&&& FAILED basic", "application"),
], ids=["invoking", "loading", "test-failed"])
def test_near_miss_no_failure_of_a_loaded_module(line: str, source: str) -> None:
    assert modules([line], source) == []
