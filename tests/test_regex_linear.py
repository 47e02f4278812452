"""Every pattern the line path compiles runs in time linear in the line (issue 27, "Linear-time regexes").

The patterns are collected, not listed: in a fresh process, every module of firstfault.extract and
firstfault.collect (and timeparse) is imported, the tables they build on first use are built (each
zero-argument cached function of theirs is called), the showcase bundle is analysed, and then every
pattern is gathered from lazyre's live stand-ins, from `re`'s compiler as each is compiled (a hook on
`re._compile`, which counts only calls from firstfault's own code), and from a walk of those modules'
names (module globals, class attributes, the line extractors and what they hold). tests/regexattack.py
builds adversarial lines from each pattern's own structure and times `search` at n and 4n characters.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import regexattack, tier

ROOT = Path(__file__).resolve().parents[1]
N = 2000  # characters; the lines a scanner hands on go to 1 MiB (collect/scan.py MAX_LINE)
RATIO = 8.0  # linear: 4; quadratic: 16
# Seconds at 4n under which growth is not judged: a linear pattern takes microseconds to a few milliseconds
# there, a quadratic one tens to thousands; below this, a machine shared with other work decides the ratio.
FLOOR = 0.02
ABSOLUTE = 0.05  # seconds at 4n (8,000 characters) for any pattern

# Patterns this check finds super-linear under `search` that are not rewritten yet (issue 27 keeps them open):
# most are read with `match` or `fullmatch` at the start of a short field (a path glob, a prefix layer, a
# config value), where a run costs one pass, or run only on lines that hold their literal; each is to be
# rewritten (a start only where a run starts, possessive runs, word-by-word lazy runs, as nccl._IB_ASYNC and
# prefix._ELAPSED were) and taken off this list. A pattern not collected any more must leave it too.
KNOWN_SUPERLINEAR: frozenset[str] = frozenset({  # sha256(pattern)[:12], and how the pattern begins
    "ebf77d5af9b2",  # (?:(?P<type>[A-Z]\w*Error):\s*)?(?P<errno>\[Errno \d+\][^\n]*)
    "29df963d8e57",  # (?:Started|Dispatched)(?: \d+ Task\(s\))? on (?:Host\(s\) )?(?P<hosts>(?:<[^>]+>,? ?)+)|Di
    "e67cbdaf7ddb",  # (?:blk_update_request: )?I/O error, dev \S+.*|(?:blk_update_request|end_request|print_req_
    "fa41d499b803",  # (?P<host>[A-Za-z0-9][A-Za-z0-9_.\-]{0,252}):\s
    "73473317a02f",  # (?P<iface>[\w.]+): Port: (?P<port>\d+) Link (?P<st>DOWN|ACTIVE)\b
    "a66adf42a88e",  # (?P<k>[A-Za-z_][\w.]*)=(?P<v>\S*)
    "69b62751f583",  # (?P<k>[\w.\-]+)=(?:"(?P<q>(?:[^"\\]|\\.)*)"|(?P<v>\S*))
    "a4bbb0314fcd",  # (?P<memcg>Memory cgroup out of memory: )?Killed process (?P<pid>\d+) \((?P<proc>[^)]*)\)
    "5656ef522491",  # (?P<path>[A-Za-z]:[\\/][^\s;]*|[^\s;:]*/[^\s;]*)(?:; (?P<why>[^;]*))?\s*$
    "68af37ee3f71",  # (?P<proc>[^\s\[\]]{1,64})\[(?P<pid>\d+)\]:? (?P<what>segfault at|general protection fault|
    "59ff727470c8",  # <\d{1,3}>(?:1 )?|\[\d+,\d+\]<std(?:out|err)>: ?|\[[A-Za-z_]+\d+(?:\|\d+)?\]: ?|\x1b\[[\d;]
    "6166445e8a22",  # ={8,}(?=[^=\s])|-{8,}(?=[^-\s])|\*{8,}(?=[^*\s])|#{8,}(?=[^#\s])|~{8,}(?=[^~\s])
    "edb6a7eec121",  # EDAC .*?\b(?P<kind>UE|CE)\b
    "c285d27e1ed8",  # INFO: task (?P<proc>.+):(?P<pid>\d+) blocked for more than (?P<sec>\d+) seconds
    "9df027a76b2c",  # Loaded runtime CuDNN library: \S+.{0,40}? but source was compiled with|cuDNN version (?:in
    "3fb28c9f79af",  # Lustre: .*?(?:Connection to .*? was lost|lost connection)
    "0228204b0bd0",  # [\w.\-/]*?\.(?:log|out|err|txt)(?:\.\d+)?(?::\d+:|-\d+-|:)(?=\S)|[\w.\-]*/[\w.\-/]*?(?:\.(
    "a04a6d9f7512",  # [^/]*/(?>(?P<node>[^/]+)/)[^/]*\Z
    "6d7f0be2b2b9",  # [^/]*/(?>rank\-(?P<rank>\d+)\.log\Z)
    "a896233279b6",  # [^/]*/[^/]*\Z
    "7ab0c728961c",  # \*\*\* (?P<scope>STEP|JOB) (?P<id>\S+) (?:ON (?P<host>\S+) )?CANCELLED AT (?P<at>\S+)(?P<r
    "63ad5cfec3e5",  # \b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[[0-9a-fA-F:]*::[0-9a-fA-F:]*\](?::\d+)?
    "6e7ecd02fa7b",  # \b(?:message|prov_errno):.*\((?P<n>\d{1,5})\)\s*$|\bEFA internal error: \((?P<m>\d{1,5})\)
    "fdbc7e3a43bd",  # \b(?:mlx\d_\d+|hfi1_\d+|bnxt_re\d+|irdma\d+|qedr\d+|efa_?\d+|rxe\d+)\b|\bQP\b|\bibv_|\bIBV
    "76f9a38e349a",  # \b[a-z][a-z0-9_]* [0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] (?P<iface>[\w.\-]+
    "a32f75d7e1d0",  # \btask \d+(?: \(host (?P<host>[\w.\-]+)\))?: start failed: (?P<prog>[^:]+?): (?P<why>[^:]+
    "d792d4da6a9c",  # \s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\})
    "2186aa62ed07",  # \s*[\d.]+[kMG]?(?:/(?:[\d.]+[kMG]?|\?))?\s*
    "6a347ff90a9e",  # \{(?:[^"}]|"(?:[^"\\]|\\.)*")*\}
    "2448002b7c9e",  # \{(node|rank)\}|\*+|\?|\[[^\]]*\]
    "2e8256ba4068",  # ^#\s*Topology file: generated on (?P<when>.+?)\s*$
    "1dbbee217a4c",  # ^(.*?)(\d+)$
    "ae77f58efe02",  # ^(?:(?P<lguid>0x[0-9a-fA-F]+)\s+"\s*(?P<ldesc>[^"]*)"\s+)?(?:(?P<pguid>0x[0-9a-fA-F]+)\s+)
    "5e4c5dac208f",  # mmfsd?(?:\[\d+\])?: (?:\[[EX]\] |.*(?:[Ee]xpel|lease renewal|[Ll]ost membership)).*
})

COLLECT = r"""
import functools, importlib, json, os, pkgutil, re, sys, types
SRC = os.path.dirname(importlib.util.find_spec("firstfault").origin)
seen = {}
_compile = re._compile

def hook(pattern, flags):
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.endswith(("lazyre.py", os.sep + "re" + os.sep + "__init__.py")):
        f = f.f_back
    if isinstance(pattern, str) and f is not None and f.f_code.co_filename.startswith(SRC):
        seen.setdefault(pattern, int(flags))
    return _compile(pattern, flags)

re._compile = hook
from firstfault import lazyre
import firstfault.collect, firstfault.extract
modules = [importlib.import_module(p.__name__ + "." + m.name)
           for p in (firstfault.extract, firstfault.collect) for m in pkgutil.iter_modules(p.__path__)]
modules += [importlib.import_module("firstfault.timeparse"), lazyre]
for m in modules:  # the tables built on first use
    for name, fn in list(vars(m).items()):
        if getattr(fn, "__module__", None) == m.__name__ and hasattr(fn, "cache_info"):
            try:
                fn()
            except TypeError:
                pass  # takes arguments
from firstfault.extract import reasons
reasons.text_reasons("", lines=True)  # the line path's reasons alternation: built on first use, by its argument
from firstfault.collect.scan import all_line_extractors
from firstfault.analysis.analyze import Analyzer
Analyzer().analyze_path(sys.argv[1])

def walk(o, depth, visited):
    if depth > 6 or id(o) in visited:
        return
    visited[id(o)] = o  # held, so that no later object takes its id
    if isinstance(o, (re.Pattern, lazyre._Lazy)):
        if isinstance(o.pattern, str):
            seen.setdefault(o.pattern, int(o._flags if isinstance(o, lazyre._Lazy) else o.flags))
    elif isinstance(o, dict):
        for v in list(o.values()):
            walk(v, depth + 1, visited)
    elif isinstance(o, (list, tuple, set, frozenset)):
        for v in list(o):
            walk(v, depth + 1, visited)
    elif isinstance(o, type):
        if o.__module__.startswith("firstfault."):
            walk(dict(vars(o)), depth + 1, visited)
    elif type(o).__module__.startswith("firstfault."):
        for k in [*getattr(o, "__dict__", {}), *getattr(type(o), "__slots__", ())]:
            walk(getattr(o, k, None), depth + 1, visited)

visited = {}
for p in lazyre.created():
    walk(p, 0, visited)
for m in modules:
    walk(dict(vars(m)), 0, visited)
walk(all_line_extractors(), 0, visited)
json.dump(sorted(seen.items()), sys.stdout)
"""


def _key(pattern: str) -> str:
    return hashlib.sha256(pattern.encode()).hexdigest()[:12]


def _patterns() -> list[tuple[str, int]]:
    out = subprocess.run([sys.executable, "-c", COLLECT, str(ROOT / "examples" / "nvlink-xid149")],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return [(p, f) for p, f in json.loads(out)]


@pytest.fixture(scope="module")
def patterns() -> list[tuple[str, int]]:
    return _patterns()


def test_the_collection_holds_the_line_paths_patterns(patterns: list[tuple[str, int]]) -> None:
    sources = {p for p, _ in patterns}
    assert len(sources) >= 250, len(sources)
    from firstfault.extract import codes, nccl, prefix

    # a module-level pattern, one built on first use by a cached function, one the prefix layers hold
    assert nccl._IB_ASYNC.pattern in sources
    assert codes._strerror_rx().pattern in sources
    assert prefix._COMPOSE.pattern in sources and prefix._TEE.pattern in sources


def test_every_pattern_is_linear_on_lines_built_from_its_structure(patterns: list[tuple[str, int]]) -> None:
    """Every collected pattern in the full tier (CI); in the quick tier a third of them, spread evenly over the
    collection (tests/tier.py): the check is a third of the quick run's heaviest test, and a new pattern that grows
    faster than its line still fails CI before it lands."""
    slow = []
    for pattern, flags in tier.sample(patterns, max(tier.QUICK_MIN, len(patterns) // 3)):
        if _key(pattern) in KNOWN_SUPERLINEAR:
            continue
        found = regexattack.check(pattern, flags, N, RATIO, FLOOR, ABSOLUTE)
        if found is not None:
            at = found.attack
            slow.append(f"{_key(pattern)} {pattern[:300]!r}\n    {at.kind}: {at.prefix[:60]!r} + {at.pump[:20]!r} x n"
                        f" + {at.tail[:40]!r}: {found.t_n:.4f} s at n={N}, {found.t_4n:.4f} s at 4n")
    assert not slow, f"{len(slow)} patterns grow faster than the line:\n" + "\n".join(slow)


def test_the_known_super_linear_patterns_are_still_collected(patterns: list[tuple[str, int]]) -> None:
    collected = {_key(p) for p, _ in patterns}
    assert collected >= KNOWN_SUPERLINEAR, KNOWN_SUPERLINEAR - collected


@pytest.mark.parametrize("pattern", [
    r"\d+(?:\.\d+)?(?:s|ms)",  # search restarts at each digit of a long run, and each start reads the run: n^2
    r"(?:a+)+b",  # nested repetition: 2^n
    r"x\s*(?P<v>[^,]+?)\s*$",  # a lazy run whose every end tries the spaces after it: n^2 in a run of spaces
])
def test_the_check_finds_a_super_linear_pattern(pattern: str) -> None:
    assert regexattack.check(pattern, 0, N, RATIO, FLOOR, ABSOLUTE) is not None


@pytest.mark.parametrize("pattern", [
    r"(?<!\d)\d+(?:\.\d+)?(?:s|ms)",  # the same, starting only where a run starts
    r"NCCL WARN (?P<msg>.*)$",
    r"Xid \(PCI:(?P<pci>[0-9a-f:.]+)\): (?P<code>\d+)",
])
def test_the_check_passes_a_linear_pattern(pattern: str) -> None:
    assert regexattack.check(pattern, 0, N, RATIO, FLOOR, ABSOLUTE) is None


def test_literals_match_as_the_sorted_alternation_does() -> None:
    from firstfault import lazyre

    words = ["No space left on device", "no such file", "No such file or directory", "Disk quota exceeded", "No"]
    lines = ["open: no SUCH FILE or directory now", "x: No space left on devic", "NO", "nothing", "Ö no such file",
             "disk quota exceededno such file or directory"]
    for flags in (0, re.IGNORECASE):
        plain = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), flags)
        fast = lazyre.Literals(words, flags)
        for line in lines:
            a, b = plain.search(line), fast.search(line)
            assert (a and (a.span(), a.group(0))) == (b and (b.span(), b.group(0))), (flags, line)
        alternation = lazyre.alternation([w.lower() for w in words] if flags else words)
        embedded = re.compile(rf"x: (?:{alternation})\b", flags)
        for line in lines:
            a = re.search(rf"x: (?:{plain.pattern})\b", line, flags)
            b = embedded.search(line)
            assert (a and a.span()) == (b and b.span()), (flags, line)
