"""PCI addresses in the forms drivers, Fabric Manager and nvidia-smi print them, made comparable."""

from __future__ import annotations

import re
from functools import lru_cache

_PCI_RE = re.compile(
    r"(?:PCI:)?(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})(?:\.(?P<fn>[0-7]))?"
)

@lru_cache(maxsize=4096)
def norm_pci(text: str) -> str:
    """`PCI:0000:3B:00`, `0000:3b:00.0`, `3b:00.0`, `00000000:3B:00.0` -> `0000:3b:00`.

    Fabric Manager and nvidia-smi print an 8-digit domain; NVRM prints four.
    The function is applied to both sides of every comparison (workload.gpus
    keys included) so the forms meet.
    """
    m = _PCI_RE.search(text.strip())
    if not m:
        return text.strip().lower()
    dom = (m.group("dom") or "0000").lower()
    if len(dom) > 4:
        dom = dom[-4:]
    return f"{dom}:{m.group('bus').lower()}:{m.group('dev').lower()}"
