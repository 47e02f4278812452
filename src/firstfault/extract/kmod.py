"""Kernel modules the node could not load or build, read through one table of modules (catalog/platform.yaml
`kernel_modules`: the module -> the part of the node it belongs to) and one of the reasons' words
(`kernel_module_reasons`).

The words are the loaders' own, each naming the module:

    modprobe: ERROR: could not insert 'nv_peer_mem': Invalid argument                 (kmod tools/modprobe.c)
    insmod: ERROR: could not insert module gdrdrv/gdrdrv.ko: Invalid parameters       (kmod tools/insmod.c)
    FATAL: Error inserting nvidia (/lib/modules/.../nvidia.ko): No such device        (module-init-tools)
    nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)           (kernel/module/main.c)
    nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client  (kernel/module/version.c)
    gdrdrv:nvidia_p2p_get_pages(va=704fe0000 len=327680 ...) failed [ret = -22]       (a loaded module's own word)
    ERROR: Failed to run `/usr/sbin/dkms build -m nvidia -v 535.54.03 -k 6.2.0`: ...  (nvidia-installer)
    Consult /var/lib/dkms/nvidia/545.29.02/build/make.log for more information.       (DKMS, after a failed build)
    installed aws-neuron-dkms package post-installation script subprocess returned error exit status 101   (dpkg)
    warning: %post(efa-2.10.0-1.amzn2.x86_64) scriptlet failed, exit status 1                            (rpm)

The package manager's words name the package whose install script (its DKMS build and install) failed: the module
is the package's name less its `-dkms` part, or the name itself (`efa`, `efa-nv-peermem`).

A module of the table gives `node.kernel_module` on the node that printed it, with its part and the reason's words
and class; a module the table does not name is nobody's part here and gives nothing. The kernel's warning that a
module taints it (`loading out-of-tree module taints kernel`, `module verification failed: signature and/or
required key missing - tainting kernel`) says the module loaded: understood, no event. Words an install script
echoes or prints (`echo "could not insert ..."`) are the script's text, not a load.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import (
    KernelModule,
    kernel_module_failures,
    kernel_module_reasons,
    kernel_module_table,
)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.nccl import clip, split_rank_prefix
from firstfault.model import FieldValue

_NAME = r"[A-Za-z0-9_-]+"
# kmod's modprobe (`could not insert '%s': %s`) and insmod (`could not insert module %s: %s`, the file's path), and
# module-init-tools' modprobe before kmod (`Error inserting %s (%s): %s`, WARNING for a dependency, FATAL for the
# module asked for)
_INSERT = re.compile(rf"\bcould not insert '(?P<mod>{_NAME})': (?P<reason>\S.*)$")
_INSMOD = re.compile(r"\bcould not insert module (?:\S*/)?(?P<mod>[A-Za-z0-9_-]+)\.ko(?:\.\w+)?: (?P<reason>\S.*)$")
_MIT = re.compile(rf"\bError inserting (?P<mod>{_NAME}) \([^)]*\): (?P<reason>\S.*)$")
# the kernel's module loader: a symbol it could not resolve for the module (kernel 3.x on: ` (err %d)` after it), or
# one whose CRC differs from the running kernel's export (the module built against another kernel or OFED)
_LOADER = re.compile(rf"(?<![\w-])(?P<mod>{_NAME}): (?P<reason>Unknown symbol|disagrees about version of symbol)"
                     r" (?P<sym>[\w.]+)(?: \(err (?P<err>-?\d+)\))?")
# DKMS failing to build a module for the running kernel: nvidia-installer's report of its command, DKMS's pointer to
# the build's log (printed only after `Error! Bad return status for module build on kernel: ...`), and DKMS 3's
# summary of an autoinstall (`dkms autoinstall on 6.8.10-300.fc40.x86_64/x86_64 failed for nvidia(10)`)
_DKMS = re.compile(r"Failed to run `?\S*dkms (?:build|install) -m (?P<mod>[\w.-]+)"
                   r"|\bConsult \S*/dkms/(?P<logmod>[\w.-]+)/[^/\s]+/build/make\.log"
                   r"|\bdkms autoinstall on \S+ failed for (?P<automod>[\w.-]+)\(")
# the package manager running a DKMS package's install script and the script failing (the package's DKMS build or
# install of the module: dpkg's `installed aws-neuron-dkms package post-installation script subprocess returned error
# exit status 101`, src/main/script.c and lib/dpkg/subproc.c; rpm's `warning: %post(efa-2.10.0-1.amzn2.x86_64)
# scriptlet failed, exit status 1`, lib/rpmscript.c): the package by its name (dpkg: a `:arch` may follow; rpm:
# name-version-release.arch)
_PKG = re.compile(r"\binstalled (?P<deb>[a-z0-9][a-z0-9+.-]*)(?::[a-z0-9]+)? package post-installation script"
                  r" subprocess returned error exit status \d+"
                  r"|%post\((?P<rpm>[A-Za-z0-9][\w+.-]*)-[^-()\s]+-[^-()\s]+\) scriptlet failed, exit status \d+")
# a DKMS package's name after the module's (Debian's `<module>-dkms`, `nvidia-dkms-535`; AWS's `aws-neuronx-dkms`)
_DKMS_SUFFIX = re.compile(r"-dkms(?:-[\w.]+)?$")
# the kernel's taint warnings for a module it loaded (kernel/module/main.c, kernel/module/signing.c)
_TAINT = re.compile(rf"(?<![\w-]){_NAME}: (?:loading out-of-tree module taints kernel"
                    r"|module verification failed: signature and/or required key missing - tainting kernel"
                    r"|module license '[^']*' taints kernel)")
# the words inside a shell script's echo or printf (an install script's own message text)
_ECHOED = re.compile(r"\b(?:echo|printf)\b")


@lru_cache(maxsize=1)
def _reasons() -> tuple[tuple[str, str], ...]:
    return tuple((r.words.lower(), r.reason_class) for r in kernel_module_reasons())


def module_row(name: str) -> KernelModule | None:
    """The table's row of a module named as a loader or DKMS prints it (dashes read as underscores), or None."""
    return kernel_module_table().get(name.replace("-", "_").lower())


def reason_class(words: str) -> str:
    """What a reason's words say (catalog/platform.yaml `kernel_module_reasons`); words no row holds: refused."""
    low = words.lower()
    return next((cls for text, cls in _reasons() if text in low), "refused")


class KernelModuleExtractor:
    """A kernel module of the node's accelerator, GPUDirect or RDMA stack that did not load or build."""

    name = "node.kernel_module"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "node.kernel_module": frozenset({"module", "part", "reason", "reason_class", "symbol", "message"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "kernel"})
    def __init__(self) -> None:
        # the loaders' and DKMS's words, and the loaded modules' own (catalog/platform.yaml `kernel_module_failures`)
        self.literals: tuple[str, ...] = (
            "could not insert", "Error inserting", "Unknown symbol", "disagrees about version", "dkms build -m",
            "dkms install -m", "/dkms/", "dkms autoinstall on ", "taints kernel", "tainting kernel",
            "package post-installation script subprocess", ") scriptlet failed",
            *(row.text for row in kernel_module_failures()))

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        _, body = split_rank_prefix(line)
        for failure in kernel_module_failures():
            at = body.find(failure.text)
            if at >= 0:
                # a loaded module's (or its library's) own word that it failed at its job
                own = kernel_module_table()[failure.module]
                ctx.claimed = True
                yield Draft("node.kernel_module", {"module": own.module, "part": own.part,
                                                   "reason": failure.text.rstrip("(: "), "reason_class": "failing",
                                                   "message": clip(body[at:])})
                return
        if _TAINT.search(body) is not None:
            ctx.claimed = True  # the module loaded; the kernel notes the taint
            return
        fields: dict[str, FieldValue] = {}
        m = _INSERT.search(body) or _INSMOD.search(body) or _MIT.search(body)
        if m is not None:
            mod, reason = m.group("mod"), m.group("reason").strip()
        elif (m := _LOADER.search(body)) is not None:
            mod, reason = m.group("mod"), m.group("reason")
            fields["symbol"] = m.group("sym")
        elif (m := _DKMS.search(body)) is not None:
            mod = m.group("mod") or m.group("logmod") or m.group("automod")
            reason = "DKMS build failed"
        elif (m := _PKG.search(body)) is not None:
            mod = _DKMS_SUFFIX.sub("", m.group("deb") or m.group("rpm"))
            reason = "DKMS build failed"
        else:
            return
        row = module_row(mod)
        if row is None or _ECHOED.search(body, 0, m.start()) is not None:
            return  # another module's, or a script's own text
        ctx.claimed = True
        cls = "not_built" if reason == "DKMS build failed" else reason_class(reason)
        fields.update({"module": row.module, "part": row.part, "reason": clip(reason), "reason_class": cls,
                       "message": clip(body[m.start():])})
        yield Draft("node.kernel_module", fields)


EXTRACTORS: tuple[LineExtractor, ...] = (KernelModuleExtractor(),)
