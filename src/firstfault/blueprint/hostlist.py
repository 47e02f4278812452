"""Slurm hostlist syntax for the Blueprint: 'node-[01-04,07]' <-> node names.

Expansion is the extractor's own (one parser for bundles and connectors);
compression is what Slurm prints, so a node list can be shown back compactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from firstfault.extract.scheduler import hostlist_expand

__all__ = ["hostlist_compress", "hostlist_expand"]

_TAIL_NUM_RE = re.compile(r"^(.*?)(\d+)$")


def hostlist_compress(hosts: Iterable[str]) -> str:
    """['node-01', 'node-02', 'node-04', 'login'] -> 'login,node-[01-02,04]' (sorted, duplicates dropped).

    Only a trailing number is folded, and only among names of the same prefix
    and digit width, so expanding the result gives back exactly the input set.
    """
    groups: dict[tuple[str, int], list[int]] = {}
    plain: set[str] = set()
    for h in set(hosts):
        m = _TAIL_NUM_RE.match(h)
        if m is None:
            plain.add(h)
        else:
            groups.setdefault((m.group(1), len(m.group(2))), []).append(int(m.group(2)))
    parts: list[tuple[str, str]] = [(h, h) for h in plain]
    for (prefix, width), nums in groups.items():
        nums.sort()
        if len(nums) == 1:
            parts.append((prefix, f"{prefix}{nums[0]:0{width}d}"))
            continue
        ranges: list[str] = []
        lo = prev = nums[0]
        for n in [*nums[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            ranges.append(f"{lo:0{width}d}" if lo == prev else f"{lo:0{width}d}-{prev:0{width}d}")
            if n is not None:
                lo = prev = n
        parts.append((prefix, f"{prefix}[{','.join(ranges)}]"))
    return ",".join(text for _, text in sorted(parts))
