"""Slurm hostlist syntax: 'node-[01-04,07]' <-> node names.

One parser for bundles, extractors and connectors. Expansion is bounded
(at most 100,000 hosts, counted before a range is built); compression is
what Slurm prints, so a node list can be shown back compactly.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping

__all__ = ["NodeNames", "hostlist_compress", "hostlist_expand", "machines"]

_TAIL_NUM_RE = re.compile(r"^(.*?)(\d+)$")
_MAX_HOSTS = 100_000



def hostlist_expand(expr: str) -> list[str]:
    """Expand a Slurm hostlist: 'node-[01-04,07]', 'gpu[1-2]-ib,login1', 'r[1-2]n[01-02]'.

    Zero padding of a range follows its lower bound ('[08-10]' -> 08, 09, 10).
    Slurm's empty markers ('', 'None assigned', '(null)') expand to nothing.
    Raises ValueError on unbalanced brackets or a malformed range.
    """
    expr = expr.strip()
    if expr.lower() in ("", "none", "none assigned", "(null)"):
        return []
    hosts: list[str] = []
    for item in _split_top_level(expr):
        if not item:
            continue
        hosts.extend(_expand_one(item))
        if len(hosts) > _MAX_HOSTS:
            raise ValueError(f"hostlist {expr[:80]!r} expands to more than {_MAX_HOSTS} hosts")
    return hosts


def _split_top_level(expr: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"hostlist {expr!r}: nested '['")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"hostlist {expr!r}: unbalanced ']'")
        elif ch == "," and depth == 0:
            parts.append(expr[start:i].strip())
            start = i + 1
    if depth != 0:
        raise ValueError(f"hostlist {expr!r}: unbalanced '['")
    parts.append(expr[start:].strip())
    return parts


def _expand_one(item: str) -> list[str]:
    open_at = item.find("[")
    if open_at < 0:
        return [item]
    close_at = item.index("]", open_at)
    prefix, body, rest = item[:open_at], item[open_at + 1 : close_at], item[close_at + 1 :]
    tails = _expand_one(rest)
    out: list[str] = []
    for piece in body.split(","):
        piece = piece.strip()
        lo, sep, hi = piece.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"hostlist item {item!r}: bad range {piece!r}")
        width = len(lo)
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            raise ValueError(f"hostlist item {item!r}: descending range {piece!r}")
        if len(out) + (last - first + 1) * len(tails) > _MAX_HOSTS:
            # Counted over all pieces together: `n[0-99999,0-99999,...]` is refused before it is built.
            raise ValueError(f"hostlist item {item!r}: more than {_MAX_HOSTS} hosts")
        for n in range(first, last + 1):
            head = prefix + str(n).zfill(width)
            out.extend(head + tail for tail in tails)
    return out


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


class NodeNames:
    """The allocation's node names, and the one rule for mapping a name written elsewhere onto one.

    A log line, a Loki or Prometheus label, a launcher prefix may spell a node
    as its FQDN or its short name, in any case: the whole name is tried first,
    then its first DNS label against each node's whole and short names (a
    node whose whole name is that label wins over one that merely starts
    with it). The extractors' prefix layer, the connectors and the engine's
    node mapping all use this class, so a name maps the same way everywhere.
    """

    __slots__ = ("_names", "nodes")

    def __init__(self, nodes: Iterable[str]) -> None:
        self.nodes = list(nodes)
        self._names: dict[str, str] = {}
        for n in self.nodes:
            self._names[n.lower()] = n
        for n in self.nodes:
            self._names.setdefault(n.split(".")[0].lower(), n)

    def lookup(self, name: str | None) -> str | None:
        """The allocation node `name` stands for, or None."""
        if not name:
            return None
        key = name.strip().lower()
        return self._names.get(key) or self._names.get(key.split(".")[0])

    def spelled_in(self, text: str) -> list[str]:
        """The substrings of `text` that `lookup` maps onto a node (an allocation name or short name, whole or
        followed by a DNS suffix, in any case), longest first: the values a `{node}` placeholder may bind in a
        path part (a name of a file or directory) whose other glob characters leave it ambiguous."""
        low = text.lower()
        lengths = sorted({len(k) for k in self._names}, reverse=True)
        found: set[str] = set()
        for i in range(len(low)):
            for n in lengths:
                if low[i : i + n] in self._names:
                    found.add(text[i : i + n])
                    if low[i + n : i + n + 1] == ".":
                        found.update(text[i:j] for j in range(i + n + 2, len(text) + 1))
        return sorted(found, key=lambda v: (-len(v), v))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.lookup(name) is not None


def _spelling_key(name: str) -> str | None:
    """What two spellings of one host name share (DNS names are case-insensitive; an absolute name's final dot says
    nothing), or None for what is no host name to group: an address (whose owner only the evidence can say: the
    engine's address learning) or a blank."""
    key = name.strip().lower().rstrip(".")
    if not key:
        return None
    try:
        ipaddress.ip_address(key.split("%")[0])
    except ValueError:
        return key
    return None


def machines(uses: Mapping[str, int]) -> dict[str, str]:
    """The machine each host-name spelling stands for where no allocation names the nodes: spelling -> the name
    of its machine, for every spelling of `uses` (a name the evidence places events on -> how many pieces of
    evidence use it) that is a host name; addresses and blanks are left out.

    Two spellings are one machine when they differ by case only, or when one is the other's leading labels (`gpu-07`
    and `gpu-07.cluster.local`; `gpu-07.cluster` too): a name joins the fullest name that extends it, provided the
    names that extend it form one chain. Where they do not (`gpu-07.a.com` and `gpu-07.b.com` both written in full:
    two machines of two domains that share a first label) the name they extend stays its own machine, as each of
    them does: nothing in a spelling says which one a bare `gpu-07` is. Labels are whole, so `node-1` is never
    `node-10`, and two full names are never one machine (a site's `gpu-07.ib.cluster` may be `gpu-07.cluster`'s
    other interface, but its spelling cannot tell it from another cluster's `gpu-07`).

    The machine is named by the spelling most evidence uses; a tie goes to the fuller name (more labels), then to
    the least string: the same names and counts give the same names whatever order they came in."""
    keys: dict[str, list[str]] = {}
    for name in uses:
        key = _spelling_key(name)
        if key is not None:
            keys.setdefault(key, []).append(name)
    longer: dict[str, list[str]] = {}  # key -> the keys it is the leading labels of
    for key in keys:
        labels = key.split(".")
        for i in range(1, len(labels)):
            head = ".".join(labels[:i])
            if head in keys:
                longer.setdefault(head, []).append(key)
    spellings: dict[str, list[str]] = {}  # the fullest key of a machine -> its spellings
    for key, names in keys.items():
        top = key
        ext = longer.get(key)
        if ext:
            full = max(ext, key=len)
            if all(full == e or full.startswith(e + ".") for e in ext):
                top = full
        spellings.setdefault(top, []).extend(names)
    out: dict[str, str] = {}
    for names in spellings.values():
        name = min(names, key=lambda n: (-uses[n], -n.count("."), n))
        for n in names:
            out[n] = name
    return out
