"""Streaming line scanner: large chunks, a literal prefilter, then extractors.

Files are read in chunks of several MiB and never held whole. A multi-literal
prefilter (`_Matcher`: Hyperscan when installed, else an Aho-Corasick automaton,
else one alternation regex) finds the few lines that contain a word some
extractor declared; only those lines are decoded, stamped and handed to the
extractors. A line without a timestamp
takes the nearest earlier stamped line of its file, found by walking back
from it, so unmatched lines are never parsed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import sys
import threading
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property, lru_cache
from itertools import pairwise
from typing import IO, TYPE_CHECKING, Any, Final, Protocol, cast, runtime_checkable

from firstfault.bundle import open_evidence_sized
from firstfault.collect.bugreport import Splitter, ThisBoot, opens_report
from firstfault.collect.chunks import BINARY_SHARE, CHUNK, chunks, decoded, reader
from firstfault.collect.chunks import MAX_LINE as MAX_LINE
from firstfault.collect.chunks import FileStats as FileStats
from firstfault.collect.chunks import binary_share as binary_share
from firstfault.collect.chunks import count_newlines as count_newlines
from firstfault.collect.events import EventCopy, EventStore, draft_to_event
from firstfault.collect.fold import Lessons, LineFold, Reading, Signature
from firstfault.collect.stamps import SRUN, Clock, c_clock, c_time, walk_back, walk_back_py
from firstfault.collect.stamps import prev_stamped as _prev_stamped  # tests also ask whether C is built
from firstfault.extract.base import Candidate, Draft, LineContext, LineExtractor
from firstfault.extract.excclass import says_little
from firstfault.extract.memo import ZERO_DIGITS, hex_literals, hex_words
from firstfault.extract.traceback import exception_shape
from firstfault.extract.unrecognized import decided_by_count, zeroed
from firstfault.model import FACT_KINDS, Event
from firstfault.timeparse import TIME_MAX, TIME_MIN, Stamp, TimeParser, _fast

if TYPE_CHECKING:
    from firstfault.extract.prefix import Prefixed

TEXT_CLIP = 2000  # evidence text kept per line
_HEAD: Final = 8192  # a file's first bytes, read before its lines: text or binary (chunks.binary_share), a bug report
BACKWALK_LINES = 400  # how far back to look for a stamp inside a chunk

# The prefilter's engines, fastest first (`_Matcher`). FIRSTFAULT_MATCHER names the fastest one that may be used
# (a test or a benchmark blocks the faster ones with it: `aho-corasick` blocks Hyperscan, `re` both); it is read
# here and nowhere else.
MATCHER_ENGINES: Final = ("hyperscan", "aho-corasick", "re")
MATCHER_ENV: Final = "FIRSTFAULT_MATCHER"


def _allowed_engines() -> tuple[str, ...]:
    name = os.environ.get(MATCHER_ENV, "").strip().lower() or MATCHER_ENGINES[0]
    if name not in MATCHER_ENGINES:
        raise SystemExit(f"{MATCHER_ENV}={name!r}: expected one of {', '.join(MATCHER_ENGINES)}")
    return MATCHER_ENGINES[MATCHER_ENGINES.index(name) :]


_ALLOWED = _allowed_engines()
HAVE_HYPERSCAN = False
HAVE_AHOCORASICK = False
if "hyperscan" in _ALLOWED:
    try:  # Hyperscan: a multi-literal matcher at memory speed (wheels for x86_64 and aarch64).
        import hyperscan as _hs

        HAVE_HYPERSCAN = True
    except ImportError:  # pragma: no cover - depends on the platform
        pass
if not HAVE_HYPERSCAN and "aho-corasick" in _ALLOWED:
    # Rust's aho-corasick crate (the `fallback` extra), imported by its engine when one is built.
    HAVE_AHOCORASICK = importlib.util.find_spec("ahocorasick_rs") is not None
# The engine every _Matcher uses in this process.
MATCHER_ENGINE: Final = "hyperscan" if HAVE_HYPERSCAN else "aho-corasick" if HAVE_AHOCORASICK else "re"

try:  # the fold's dense loop in C, and its reading of a timed copy's time (an older build of the module lacks them)
    from firstfault._lines import copy_time as _copy_time
    from firstfault._lines import fold_run as _fold_run
except ImportError:  # pragma: no cover - depends on the build
    _fold_run = None  # type: ignore[assignment]
    _copy_time = None  # type: ignore[assignment]
# The variants one call of _lines.fold_run or fold_hits counts copies on, at most (_lines.c's FOLD_MAX_COUNTED): a
# call that counted that many may have stopped at a copy of one more, which the next call takes. Python took such a
# copy itself: in a file that multiplexes hundreds of hosts, one line in 64, each a host's borrow of its kin's ranges.
_FOLD_MAX_COUNTED: Final = 64
_NO_STAMP: Final = -4  # _lines.copy_time's answer where the copy and every line back to the stop read as no stamp
try:  # the sparse path's loops in C (_lines.c; an older build lacks them): the same answers as the Python here
    from firstfault._lines import fold_hits as _fold_hits
    from firstfault._lines import lines_of as _lines_of_c
    from firstfault._lines import may_stamp as _may_stamp
except ImportError:  # pragma: no cover - depends on the build
    _fold_hits = _lines_of_c = _may_stamp = None  # type: ignore[assignment]
try:  # the stamp a line reads to, in C (_lines.c); -2: TimeParser.parse reads none from it, whatever the clock
    from firstfault._lines import stamp_local_us as _stamp_local_us
except ImportError:  # pragma: no cover - depends on the build
    _stamp_local_us = None  # type: ignore[assignment]
_STAMP_NONE: Final = -2
try:  # a candidate line's time (its stamp's, or the walk back's) in one C call (_lines.c; an older build lacks it)
    from firstfault._lines import line_time_us as _line_time_us
except ImportError:  # pragma: no cover - depends on the build
    _line_time_us = None  # type: ignore[assignment]
try:  # the lines of a chunk whose shapes are not quiet, for the prefilter (_lines.c; an older build lacks it)
    from firstfault._lines import unquiet as _unquiet
except ImportError:  # pragma: no cover - depends on the build
    _unquiet = None  # type: ignore[assignment]
# The lines _lines.unquiet looks at before it says whether passing the quiet ones over pays (their bytes half).
UNQUIET_SAMPLE: Final = 256
try:  # Hyperscan's match callback in C (_lines.c; an older build lacks it): no Python call per match
    from firstfault._lines import Matches as _Matches
except ImportError:  # pragma: no cover - depends on the build
    _Matches = None  # type: ignore[assignment,misc]


def all_line_extractors() -> tuple[LineExtractor, ...]:
    from firstfault.extract import registry

    return registry.line_extractors()


def prefilter_words(source: str | None = None) -> list[str]:
    """The literal words that any line an extractor can match contains.

    This is the catalog's prefilter: the Service publishes it and the
    Blueprint drops every line that contains none of these words.
    """
    words: set[str] = set()
    for ex in all_line_extractors():
        if source is None or source in ex.sources:
            words.update(ex.literals)
    return sorted(words)


_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}  # each word list once (never dropped: its id names it)


def _hs_database(literals: list[bytes]) -> Any:
    """The Hyperscan block database of these literals (id = index), from the on-disk cache when
    one was compiled before for the same words and the same Hyperscan (firstfault/cache.py)."""
    from firstfault import cache

    name = "hs-" + cache.key(str(getattr(_hs, "__version__", "")), _hs.__file__ or "", *literals) + ".db"
    data = cache.get(name)
    if data is not None:
        try:
            return _hs.loadb(data, _hs.HS_MODE_BLOCK)
        except Exception:  # a corrupt or foreign entry: compile it again
            pass
    db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
    db.compile(
        expressions=[re.escape(w) for w in literals],
        ids=list(range(len(literals))),
        elements=len(literals),
        flags=[0] * len(literals),
    )
    with contextlib.suppress(Exception):  # the cache is an optimisation only
        cache.put(name, _hs.dumpb(db))
    return db


def _lines_of_py(buf: bytes, matches: Iterable[tuple[int, int]]) -> tuple[list[int], list[list[int]]]:
    """The sorted start offsets of the lines of `buf` holding a match, and the literal indices of each line's
    matches, from (literal index, end offset) pairs in order of their end offsets: a match that ends inside the
    current line belongs to it (literals hold no newline). _lines_of is this in one C call (_lines.lines_of)
    where the module is built (tests/collect/test_scan_sparse.py holds the two equal)."""
    starts: list[int] = []
    ids: list[list[int]] = []
    rfind, find = buf.rfind, buf.find
    n = len(buf)
    last_end = -1
    cur: list[int] = []
    for i, to in matches:
        if to <= last_end:
            cur.append(i)
            continue
        starts.append(rfind(b"\n", 0, to) + 1)
        cur = [i]
        ids.append(cur)
        e = find(b"\n", to)
        last_end = n if e < 0 else e
    return starts, ids


def _lines_of(buf: bytes, matches: list[tuple[int, int]]) -> tuple[list[int], list[list[int]]]:
    """_lines_of_py, in C where the module is built."""
    return _lines_of_py(buf, matches) if _lines_of_c is None else _lines_of_c(buf, matches)


class _Engine(Protocol):
    """What a _Matcher's engine does: its literals' matches in a buffer of lines, and on one line."""

    def line_hits(self, buf: bytes) -> tuple[list[int], Sequence[list[int]] | None]: ...

    def line_ids(self, line: bytes) -> list[int] | None: ...


class _HyperscanEngine:
    """One Hyperscan database, shared by threads: each thread scans with its own scratch space (Hyperscan's rule
    for concurrent scans). The matches of a buffer come to a _lines.Matches, a callback in C that keeps them in a
    C array and groups them by line (no Python call and no object per match: on a kernel log whose noise repeats,
    a third of its lines hit, the Python callback and its tuples were most of the scan's time); without the C
    module, to a Python callback, one call each."""

    def __init__(self, literals: list[bytes]) -> None:
        self._db = _hs_database(literals)
        self._local = threading.local()

    def _scratch(self) -> Any:
        s = getattr(self._local, "scratch", None)
        if s is None:
            s = _hs.Scratch(self._db)
            self._local.scratch = s
        return s

    def line_ids(self, line: bytes) -> list[int]:
        found: list[int] = []
        self._db.scan(line, match_event_handler=lambda i, _f, _t, _fl, _c: found.append(i), scratch=self._scratch())
        return found

    def line_hits(self, buf: bytes) -> tuple[list[int], Sequence[list[int]]]:
        # Hyperscan reports matches in order of their end offsets, as _lines_of (and Matches.lines) wants them.
        if _Matches is not None:
            found = _Matches()
            self._db.scan(buf, match_event_handler=found, scratch=self._scratch())
            return found.lines(buf), found
        matches: list[tuple[int, int]] = []
        add = matches.append
        self._db.scan(buf, match_event_handler=lambda i, _f, to, _fl, _c: add((i, to)), scratch=self._scratch())
        return _lines_of(buf, matches)


class _AhoCorasickEngine:
    """Rust's aho-corasick automaton (ahocorasick_rs), as a DFA: every match, overlapping ones too, in one call
    that returns them all in order of their ends, as Hyperscan reports them (the order of two matches that end
    at the same byte may differ: the hits are read as a set, tests/collect/test_matcher.py)."""

    def __init__(self, literals: list[bytes]) -> None:
        import ahocorasick_rs as ac

        self._ac = ac.BytesAhoCorasick(literals, implementation=ac.Implementation.DFA)

    def line_ids(self, line: bytes) -> list[int]:
        return [i for i, _s, _e in self._ac.find_matches_as_indexes(line, overlapping=True)]

    def line_hits(self, buf: bytes) -> tuple[list[int], list[list[int]]]:
        return _lines_of(buf, [(i, e) for i, _s, e in self._ac.find_matches_as_indexes(buf, overlapping=True)])


def _trie_pattern(literals: list[bytes]) -> bytes:
    """One regex that matches where any of `literals` starts, its alternatives nested by common prefix
    (`ab(?:c|d)?` for ab, abc, abd): Python's engine tries one branch per distinct next byte at each position,
    not one per word, which made a flat alternation of the catalog's words about 20 times slower."""
    trie: dict[int, Any] = {}
    for w in literals:
        node = trie
        for b in w:
            node = node.setdefault(b, {})
        node[-1] = {}  # a word ends here

    def pattern(node: dict[int, Any]) -> bytes:
        alts = [re.escape(bytes([b])) + pattern(node[b]) for b in sorted(node) if b >= 0]
        ends = -1 in node  # a word ends before these: what follows is optional
        if not alts or (len(alts) == 1 and not ends):
            return alts[0] if alts else b""
        return b"(?:" + b"|".join(alts) + (b")?" if ends else b")")

    return pattern(trie)


class _AlternationEngine:
    """The last resort, pure Python: one regex of every word, nested by common prefix, finds the lines (a few
    MB/s with the catalog's words: for a platform without the other two engines' wheels); which words a line
    holds is left to _Matcher.ids_in."""

    def __init__(self, literals: list[bytes]) -> None:
        self._rx = re.compile(_trie_pattern(literals))

    def line_ids(self, line: bytes) -> list[int] | None:
        return None if self._rx.search(line) else []

    def line_hits(self, buf: bytes) -> tuple[list[int], None]:
        starts: list[int] = []
        rfind, find, search = buf.rfind, buf.find, self._rx.search
        pos = 0
        while True:
            m = search(buf, pos)
            if m is None:
                break
            starts.append(rfind(b"\n", 0, m.start()) + 1)
            e = find(b"\n", m.end())
            if e < 0:
                break
            pos = e + 1
        return starts, None


_ENGINE_TYPES: Final[dict[str, Callable[[list[bytes]], _Engine]]] = {
    "hyperscan": _HyperscanEngine, "aho-corasick": _AhoCorasickEngine, "re": _AlternationEngine}


# One engine per word list (a source's scanner and its extraction's dispatch search for the same words); an
# engine is immutable once built and safe to share between threads. A few MB each: a process that meets more word
# lists (catalogs reloaded) keeps the latest MAX_ENGINES.
_ENGINES: dict[tuple[str, ...], _Engine] = {}
MAX_ENGINES: Final = 16


class _Matcher:
    """Finds the lines of a buffer, or the literals of a line, among a set of literals.

    The engine (MATCHER_ENGINE) is chosen once per process; every engine finds the same lines with the same
    literals on each (tests/collect/test_matcher.py), so the verdict does not depend on it.
    """

    def __init__(self, literals: list[str]) -> None:
        self.literals = [w.encode() for w in literals]
        # What a literal index means: scanners and extractions compare it. One tuple object per word
        # list (interned), so the comparison is an identity test.
        key = tuple(literals)
        self.key = _KEYS.setdefault(key, key)
        engine = _ENGINES.get(self.key)
        if engine is None and self.literals:
            engine = _ENGINE_TYPES[MATCHER_ENGINE](self.literals)
            # Without a lock (a worker forked while another thread held it would wait forever): two threads may
            # build the same engine once each, and what one drops the other's pop finds gone.
            for old in list(_ENGINES)[: max(0, len(_ENGINES) + 1 - MAX_ENGINES)]:
                _ENGINES.pop(old, None)
            _ENGINES[self.key] = engine
        self._engine = engine

    def ids_in(self, data: bytes) -> set[int]:
        """Indices of the literals that occur in `data` (one line)."""
        ids = self.line_ids(data)
        if ids is None:
            return {i for i, w in enumerate(self.literals) if w in data}
        return set(ids)

    @cached_property
    def digit_words(self) -> tuple[bytes, ...]:
        """The literals that hold a digit, their digits zeroed: a line whose shape holds none of these has the
        hits of every line of its shape (collect/fold.py)."""
        return tuple(sorted({w.translate(ZERO_DIGITS) for w in self.literals if w.translate(None, b"0123456789") != w}))

    @cached_property
    def hex_words(self) -> tuple[bytes, ...]:
        """The literals a hex id could hold in part (memo.hex_words; collect/fold.py)."""
        return hex_words(self.literals)

    @cached_property
    def hex_literals(self) -> dict[bytes, tuple[bytes, ...]]:
        """hex_words' literals themselves, by their form in hex_words (collect/fold.py: where a hex id may spell one
        of them, a copy folds only where it spells none)."""
        return hex_literals(self.literals, self.hex_words)

    def line_ids(self, line: bytes) -> list[int] | None:
        """The literal indices found on one line, as line_hits finds them in a buffer (in the order of their
        matches' ends; empty: none), or None when the engine does not tell them and the line holds one."""
        return [] if self._engine is None else self._engine.line_ids(line)

    def line_hits(self, buf: bytes) -> tuple[list[int], Sequence[list[int]] | None]:
        """The sorted start offsets of the lines of `buf` holding a literal and the literal indices found on
        each of them, from the same scan (no second pass per line), or None when the engine does not tell them."""
        return ([], []) if self._engine is None else self._engine.line_hits(buf)


@dataclass(slots=True, frozen=True)
class _Dispatch:
    """For one source kind: its extractors, and which extractors own each literal."""

    extractors: tuple[LineExtractor, ...]
    matcher: _Matcher
    owners: tuple[tuple[int, ...], ...]  # literal index -> extractor indices
    error_words: int  # the index of the unrecognized-lines word list among `extractors` (-1: none)
    # The probe only marks lines as understood (claimed); when it runs last, running it only for a
    # line that nothing else read or claimed gives the same result, and most lines never need it.
    defer_probe: bool
    # The probe is ErrorWords, whose answer is the body's alone (ErrorWords.known): a line only it reads
    # needs no per-stream state and no context.
    probe_alone: bool
    # The extractors that claim some lines quietly (_Quiet), by index, with the literal indices of their
    # `quiet_literals`.
    quiet: dict[int, frozenset[int]]
    # Those of them whose quiet lines are read to nothing without being claimed (`quiet_claims` False): such a line
    # is still offered by the probe where its words hit, and read joined to a wrapped message's next line.
    unclaimed: frozenset[int]


@runtime_checkable
class _Quiet(Protocol):
    """An extractor that reads some lines to nothing whatever the stream holds, only claiming them
    (extract/exceptions.py: a line of a C++ exception's stack): `quiet_literals` are the prefilter words such a line
    holds one of, and
    `quiet_claim(body, state, rank)` says whether `extract(body, ctx)` would claim the line, give nothing and change
    nothing in `ctx.state` but what it makes where missing (for a `ctx` of that state and rank, whatever its other
    fields); where it says so, it has made those. Where it says no, it has changed nothing that reading the line in
    full would not change the same way (Extraction.read_quiet).

    An extractor whose `quiet_claims` is False (extract/gpu.py: nvidia-smi's keys, `Total`, on another program's
    line) says by `quiet_claim` that `extract` gives nothing, claims nothing and changes nothing but what it makes
    where missing: such a line is read quietly only where no probe reads it after (quiet_hits) and it wraps onto no
    next line (read_quiet's `wraps`)."""

    quiet_literals: tuple[str, ...]

    def quiet_claim(self, body: str, state: dict[str, object], rank: int | None) -> bool: ...


@lru_cache(maxsize=16)
def _dispatch_for(source: str, extractors: tuple[LineExtractor, ...]) -> _Dispatch:
    exs = tuple(ex for ex in extractors if source in ex.sources)
    by_word: dict[str, list[int]] = {}
    for i, ex in enumerate(exs):
        for w in dict.fromkeys(ex.literals):
            by_word.setdefault(w, []).append(i)
    words = sorted(by_word)
    owners = tuple(tuple(by_word[w]) for w in words)
    from firstfault.extract.unrecognized import ErrorWords

    error_words = next((i for i, ex in enumerate(exs) if ex.name == "unrecognized"), -1)
    index = {w: i for i, w in enumerate(words)}
    quiet = {i: frozenset(index[w] for w in ex.quiet_literals if w in index)
             for i, ex in enumerate(exs) if isinstance(ex, _Quiet)}
    unclaimed = frozenset(i for i in quiet if getattr(exs[i], "quiet_claims", True) is False)
    return _Dispatch(exs, _Matcher(words), owners, error_words, error_words >= 0 and error_words == len(exs) - 1,
                     error_words >= 0 and isinstance(exs[error_words], ErrorWords), quiet, unclaimed)


@runtime_checkable
class _Ender(Protocol):
    """An extractor with something to say where a stream ends (extract/exceptions.py: a traceback left open)."""

    def at_end(self, state: dict[str, object]) -> list[tuple[Draft, LineContext, str]]: ...


# A message wrapped at a line's end (a terminal's or a tracker's width; a log line pasted into a thread): `E ...
# local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out ` / `of memory while trying to allocate
# 5520758552 bytes.` (jax-ml/jax#788). The line ends mid-sentence (a letter or digit, or a space after one, no closing
# mark) and the next starts in lower case with a word of its own (no `tag:`, no `key=`, no indentation, no stamp: a
# stamp or a prefix starts with a digit, a capital or a bracket). One or two such lines, each short of a log line's
# length; read joined only where the line alone gives nothing, or says little and the joined text says more
# (Extraction.drafts).
_CONT_START = re.compile(rb"[a-z][a-z'\-]{0,30}(?=[ ,.;)]|$)(?!:)")
_CONT_LINES: Final = 2
# What _CONT_START needs of the line after a candidate, read in the buffer at its start (no slice, no call): a
# lower-case word that ends where _CONT_START's may (`$` being the line's end: a newline, a CR before it, the
# buffer's). A superset of _CONT_START's lines: where it does not match, continuation() answers None. An NCCL line
# after an NCCL line (`node-135:...`) is the common near miss.
_CONT_NEXT = re.compile(rb"[a-z][a-z'\-]{0,30}(?:[ ,.;)\r\n]|\Z)")
_CONT_MAX: Final = 400
# ... and a message wrapped onto an indented line, where the page's column, the terminal or the mail client hung the
# rest under the message: `srun: error: Unable to create step for job 4203072: Invalid generic` / `<18 spaces>resource
# (gres) specification` (LUMI's user guide quoting Slurm's ESLURM_INVALID_GRES, slurm/src/common/slurm_errno.c). The
# next line is the same lower-case word (_CONT_START) behind an indentation deeper than the column where the line's
# message starts (_message_col: past its first tag, `srun: `, `] `), so a traceback's source line under its exception
# or a glog record's (`E ...cc:672] ...` / `    of memory`: 4 columns, the message at 33) stays a line of its own; not
# a traceback's frame (`at pkg.f(...)` under Java's exception; the line itself `File "..."`, whose source line is
# indented below it); a second continuation line at the same indentation. At the message's column itself only under
# an exception's line (traceback.exception_shape: the tag is its class), whose rest a poster or a formatter hangs
# under the message (`ValueError: The output_size of gate's and up's weight = 96 is not` / `<12 spaces>divisible by
# weight quantization block_n = 128.`, tests/wild sw-vime-vllm-...-186); under any other line that column is a
# list's or a code block's own (every line at one indentation). What may_wrap looks for: _CONT_INDENT.
_CONT_INDENT = re.compile(rb"[ \t]{1,64}[a-z][a-z'\-]{0,30}(?:[ ,.;)\r\n]|\Z)")
_MSG_TAG = re.compile(r"(?::|\]) ")
_FRAME_HEAD = ("File \"", "at ")
# A message wrapped after a colon, where the printer (or the paste) put the value it reports on the next line: the
# container toolkit's error chain `... failed to initialize NVML:` / `Driver/library version mismatch` (Azure/AKS#5871's
# pod events), NCCL's `Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:` / `CUDA error 401 '...'`
# (pytorch/ci-infra#541), Python's OSError repr `[Errno 13] Permission denied:` / `  '/usr/...'` wrapped by its
# poster (ai-dynamo/modelexpress#549). The next line is the value: a word (any case) or a quoted value;
# not another record's start, which is what a colon's next line most often is: a stamp (digits, a month's name, a
# glog `E0101`), a level word, a `tag:` or `key=` (an NCCL `host:pid:tid`, `kernel:`), a bracket, a traceback's
# `Traceback`/`File "`, an indented line (a list under its heading: `Device to NUMA mapping:` / `  GPU 0 -> node
# 1`) but for an indented quoted value. One line only: a colon's value is the message's end (bounded: _CONT_MAX).
_COLON_NEXT = re.compile(
    rb"""(?:[ \t]{1,8}(?=['"][\w/.~-])"""
    rb"""|(?![IWEF]\d{4}|[A-Z][a-z]{2}[ ]+\d|(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL|CRITICAL|TRACE|NOTICE)\b"""
    rb"""|Traceback\b|File[ ]")(?=['"]?[A-Za-z/])(?![\w./-]{1,40}[:=\]]))""")


# A CUDA call's place line under the error's words, indented: `\tcudaStreamSynchronize(...) at f (x.cu:28)` under
# `Runtime error: an illegal memory access was encountered` (HugeCTR's exceptions, NVIDIA-Merlin/HugeCTR#417): the call
# the error came from, which says the words before it are CUDA's (extract/codes.py `_AT_SOURCE`). One line.
_CALL_PLACE = re.compile(rb"[ \t]{1,8}cu(?:da)?[A-Z]\w{0,60}\(")

# A record printed as a heading and its fields: a line ending in `:` with, under it, indented `Name: value` lines at
# one indentation, each field's name a capitalised word or up to three words. The error-check macro of Fan's "CUDA
# Programming" book (brucefan1983/CUDA-Programming error.cuh CHECK, copied into GPUMD and NEP, into TensorRT
# programs' common headers and many a course's code: `printf("CUDA Error:\n"); printf("    File:       %s\n", ...);
# ... printf("    Error code: %d\n", error_code); printf("    Error text: %s\n", cudaGetErrorString(error_code));`,
# brucefan1983/GPUMD#1634): the heading says what failed, the fields below it say which error. Read joined, the
# fields after the heading, as one line (`CUDA Error: File: force/neighbor.cu Line: 748 Error code: 700 Error text:
# an illegal memory access was encountered`), where the heading alone says little (Extraction.drafts). A list under a
# heading (`  GPU 0 -> node 1`), a traceback's `  File "..."`, a field named in lower case or padded before its colon
# (torchelastic's `  exitcode  : 1`) is no such field. At most _FIELD_LINES fields.
_FIELD_LINE = re.compile(rb"([ \t]{1,8})[A-Z][A-Za-z]{0,20}(?: [A-Za-z]{1,20}){0,2}:[ \t]{1,16}(?=\S)")
_FIELD_LINES: Final = 8


# A bordered table's cell that its printer wrapped over the rows after it: Triton's model and backend tables
# (triton-inference-server/common TablePrinter, through core's server.cc: a cell's text broken at the column's width
# and at its own newlines, the rest on the next rows under the same column, the other columns blank), and any table
# drawn in the same way (`| a | b |` rows between `+---+` rules). A row goes on onto the next where the next line has
# its column marks at the same places and a blank first cell (a row of its own names its first column: a model, a
# GPU). The continuation's rows are joined cell by cell into the row (bounded: _TABLE_ROWS rows, _CONT_MAX each),
# and the joined row is read in its place (Extraction.drafts): the cell's message whole, wherever its words fell.
TABLE_JOINED: Final = "\x1e"  # (ASCII RS) heads a continuation that is the whole joined row, not words to append
_TABLE_ROWS: Final = 8
_TABLE_NEXT = re.compile(rb"[^|\n]{0,40}\|[ \t]+\|")


def _row_end(buf: bytes, e: int) -> bool:
    """Whether the line that ends at buf[e] ends with a table's column mark (`|`, a CR after it allowed)."""
    j = e - 1 if buf[e - 1:e] == b"\r" else e
    return buf[j - 1:j] == b"|"


def table_continuation(buf: bytes, e: int, text: str) -> str | None:
    """The row `text` (which ends at buf[e]) with the cells of the continuation rows after it joined into its own
    (TABLE_JOINED, then the row), or None where no such row follows it or `text` is no row whose first cell names
    something."""
    row = text.rstrip()
    bars = [i for i, ch in enumerate(row) if ch == "|"]
    if len(bars) < 3:
        return None
    cells = [row[a + 1:b].strip() for a, b in pairwise(bars)]
    if not cells[0]:
        return None  # a continuation row itself
    joined = False
    at, n = e, len(buf)
    for _ in range(_TABLE_ROWS):
        if at >= n or buf[at:at + 1] != b"\n":
            break
        start = at + 1
        end = buf.find(b"\n", start, start + len(row) + _CONT_MAX + 1)
        if end < 0:
            end = n if n - start <= len(row) + _CONT_MAX else -1
        if end < 0:
            break
        try:
            line = buf[start:end].decode("utf-8").rstrip()
        except UnicodeDecodeError:
            break
        if len(line) != len(row) or any(line[i] != "|" for i in bars):
            break
        parts = [line[a + 1:b].strip() for a, b in pairwise(bars)]
        if parts[0] or any("|" in p for p in parts):
            break  # the next row of its own, or a row of other columns
        for i, part in enumerate(parts):
            if part:
                cells[i] = f"{cells[i]} {part}" if cells[i] else part
        joined = True
        at = end
    if not joined:
        return None
    return TABLE_JOINED + row[:bars[0]] + "| " + " | ".join(cells) + " |"


def joined_text(text: str, cont: str) -> str:
    """A candidate's line read with its continuation: a table's joined row as it stands (table_continuation), or the
    wrapped message's next words after the line."""
    return cont[1:] if cont.startswith(TABLE_JOINED) else text.rstrip() + " " + cont


def may_wrap(buf: bytes, e: int) -> bool:
    """Whether the line that ends at buf[e] (its newline) may go on onto the next (what continuation joins is a subset
    of these): a lower-case word there (_CONT_NEXT), a value after a closing `:` (_COLON_NEXT), an indented CUDA
    call's place (_CALL_PLACE), or a table's row whose next row has a blank first cell (_TABLE_NEXT). A byte test or
    two for most lines."""
    last = buf[e - 1] if e > 0 else 0
    if (last == 124 or (last == 13 and _row_end(buf, e))) and _TABLE_NEXT.match(buf, e + 1) is not None:
        return True  # (124: `|`, 13: a CR before the newline; one index per candidate)
    nxt = buf[e + 1:e + 2]
    if b"a" <= nxt <= b"z":
        return _CONT_NEXT.match(buf, e + 1) is not None
    if buf[e - 1:e] == b":" and e > 0:
        return _COLON_NEXT.match(buf, e + 1) is not None or _FIELD_LINE.match(buf, e + 1) is not None
    return (nxt == b"\t" or nxt == b" ") and (_CALL_PLACE.match(buf, e + 1) is not None
                                             or _CONT_INDENT.match(buf, e + 1) is not None)


def _message_col(text: str) -> int:
    """The column where the message of the line `text` starts: past its first tag (`srun: `, `error: `, a glog
    record's `] `) within its first 120 characters, else at its first word (tabs at 8 columns)."""
    m = _MSG_TAG.search(text, 0, 120)
    if m is not None:
        return len(text[:m.end()].expandtabs(8))
    lead = text[:len(text) - len(text.lstrip(" \t"))]
    return len(lead.expandtabs(8))


def _colon_value(buf: bytes, e: int) -> str | None:
    """The value a line ending in `:` at buf[e-1] carries on its next line (_COLON_NEXT), stripped, or None."""
    if buf[e:e + 1] != b"\n" or _COLON_NEXT.match(buf, e + 1) is None:
        return None
    return _colon_value_line(buf, e)


def _colon_value_line(buf: bytes, e: int) -> str | None:
    """The line after the newline at buf[e], stripped, where it is at most _CONT_MAX long; None where not."""
    start = e + 1
    if buf[e:start] != b"\n":
        return None
    end = buf.find(b"\n", start, start + _CONT_MAX + 1)
    if end < 0:
        end = len(buf) if len(buf) - start <= _CONT_MAX else -1
    if end < 0:
        return None
    try:
        value = buf[start:end].decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    return value or None


def _field_block(buf: bytes, e: int) -> str | None:
    """The `Name: value` fields under the heading that ends at buf[e] (its newline), at one indentation (_FIELD_LINE),
    joined by spaces, or None where the next line is no such field."""
    parts: list[str] = []
    indent: bytes | None = None
    at = e
    n = len(buf)
    for _ in range(_FIELD_LINES):
        if at >= n or buf[at:at + 1] != b"\n":
            break
        m = _FIELD_LINE.match(buf, at + 1)
        if m is None or (indent is not None and m.group(1) != indent):
            break
        indent = m.group(1)
        end = buf.find(b"\n", at + 1, at + 2 + _CONT_MAX)
        if end < 0:
            end = n if n - at - 1 <= _CONT_MAX else -1
        if end < 0:
            break
        try:
            parts.append(" ".join(buf[at + 1:end].decode("utf-8").split()))
        except UnicodeDecodeError:
            break
        at = end
    return " ".join(parts) if parts else None


def continuation(buf: bytes, e: int, text: str) -> str | None:
    """The lines after buf[:e] that continue its wrapped message, joined by spaces, or None: the lower-case words
    of a message wrapped mid-sentence (_CONT_START), or the value a line ending in `:` carries on the next line
    (_COLON_NEXT), or the fields a heading ending in `:` has under it (_FIELD_LINE)."""
    if text.endswith(":") and buf[e + 1:e + 2] in (b" ", b"\t"):
        fields = _field_block(buf, e)
        if fields is not None:
            return fields
    if len(text) < 24:
        return None
    tail = text.rstrip()[-1:]
    if tail == "|":
        return table_continuation(buf, e, text)
    if tail == ":":
        return _colon_value(buf, e)
    if not tail.isalnum():
        return None
    # the continuation's indentation in columns: 0 (none), or deeper than the line's message (_CONT_INDENT; at its
    # column under an exception's line)
    want = 0
    if buf[e + 1:e + 2] in (b"\t", b" "):
        if _CALL_PLACE.match(buf, e + 1) is not None:
            return _colon_value_line(buf, e)  # (the call's place: one line)
        if text.lstrip().startswith(_FRAME_HEAD):
            return None
        want = -1  # (the first continuation line's indentation, past the message's column)
    parts: list[str] = []
    at = e
    n = len(buf)
    for _ in range(_CONT_LINES):
        if at >= n or buf[at:at + 1] != b"\n":
            break
        start = at + 1
        end = buf.find(b"\n", start, start + _CONT_MAX + 1)
        if end < 0:
            end = n if n - start <= _CONT_MAX else -1
        if end < 0 or end == start:
            break
        line = buf[start:end].rstrip(b"\r")
        if want:
            body = line.lstrip(b" \t")
            col = len(line[:len(line) - len(body)].expandtabs(8))
            if want < 0:
                at_col = _message_col(text)
                if col < at_col or (col == at_col and exception_shape(text) is None):
                    break
                want = col
            elif col != want:
                break
            if body.startswith(b"at "):
                break  # a Java frame under its exception
            line = body
        if _CONT_START.match(line) is None:
            break
        try:
            parts.append(line.decode("utf-8").strip())
        except UnicodeDecodeError:
            break
        if not line.rstrip()[-1:].isalnum():
            break  # the message ended on that line
        at = end
    return " ".join(parts) if parts else None


# A line that holds several log lines a person pasted flat (a tracker's text box that lost the newlines, a terminal
# that wrapped and padded them): a traceback's lines each behind PyTorch's `[rankN]: ` tag on one line
# (Physical-Intelligence/openpi#868: `ERROR MESSAGE [rank2]: Traceback (most recent call last): [rank2]: File
# "...", line 332, in train_loop ... [rank2]: FileNotFoundError: ...`), or vLLM's records after a message, each
# behind a run of spaces (`HIP out of memory. ... (https://...)<32 spaces>ERROR 07-04 14:53:23 [engine.py:458]
# Traceback ...`, nlzy/vllm-gfx906#14). The pieces are read in order as lines of their own at the line's place, so
# the deciding words are not read with the later lines' (a traceback's head that opens a record after them). A cut: a
# record's head (a level word, then a stamp: vLLM's `MM-DD HH:MM:SS` or an ISO date and time) after a run of 8 spaces
# or more behind words (a bare stamp is a table's cell: sacct's padded columns); or a `[rankN]: ` tag behind words,
# where the line holds two such tags or more (one tag after words is a message that names a rank). At most
# _FLAT_MAX pieces.
_FLAT_GAP = re.compile(r"(?<=\S) {8,}(?=(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?:\d\d|\d{4}-\d\d)-\d\d[ T]"
                       r"\d\d:\d\d:\d\d)")
_FLAT_TAG = re.compile(r"(?<=\S) (?=\[rank\d{1,6}\]: )")
_FLAT_MAX: Final = 64


def flat_pieces(text: str) -> list[str] | None:
    """The log lines a line pasted flat holds, in order (see _FLAT_GAP, _FLAT_TAG), or None for a line of one."""
    cuts: list[int] = []
    if "        " in text:
        cuts = [m.end() for m in _FLAT_GAP.finditer(text)]
    if " [rank" in text:
        tags = [m.end() for m in _FLAT_TAG.finditer(text)]
        if len(tags) >= 2:
            cuts.extend(tags)
    if not cuts:
        return None
    pieces: list[str] = []
    at = 0
    for cut in sorted(set(cuts))[:_FLAT_MAX - 1]:
        piece = text[at:cut].strip()
        if piece:
            pieces.append(piece)
        at = cut
    pieces.append(text[at:].strip())
    return pieces if len(pieces) > 1 else None


class Extraction:
    """Runs the extractors of each source kind over candidates, in stream order.

    Each candidate first loses its launcher prefixes (extract/prefix.py).
    Multi-line records (tracebacks, torchrun blocks) keep their state per
    stream: the file, its rank, and the host and local rank the prefixes
    name, so interleaved `srun --label`, pdsh or torchrun `--tee` output
    stays apart. Error-looking lines that no extractor understood are kept,
    grouped, for the verdict's `unrecognized` list.
    """

    def __init__(self, extractors: Iterable[LineExtractor], hosts: Iterable[str] = ()) -> None:
        from firstfault.extract.memo import enabled
        from firstfault.extract.prefix import RAY_IDLE_WORKER, PrefixLayer, note_settled
        from firstfault.extract.traceback import job_frame
        from firstfault.extract.unrecognized import ErrorWords, Unrecognized

        # The fast paths (extract/memo.py) are chosen once per extraction.
        self._fast = enabled()
        self._note_settled = note_settled

        self._by_source: dict[str, _Dispatch] = {}
        exs = list(extractors)
        for src in sorted({s for ex in exs for s in ex.sources}):
            self._by_source[src] = _dispatch_for(src, tuple(exs))
        self._states: dict[tuple[object, ...], dict[str, object]] = {}
        self._file_streams: dict[str, list[tuple[object, ...]]] = {}  # each file's stream keys, in their order
        # The extractors that say something where a stream ends (`at_end`: a traceback cut before its last line).
        self._enders: tuple[_Ender, ...] = tuple(
            {id(ex): ex for ex in exs if isinstance(ex, _Ender)}.values())
        self._prefix = PrefixLayer(hosts)
        # The files whose bare Ray tags (`(pid=N)`) carry the job's own work (_program): there no idle worker's.
        self._ray_job_files: set[str] = set()
        self._idle_worker, self._job_frame = RAY_IDLE_WORKER, job_frame
        self._known = ErrorWords.known
        self.unrecognized = Unrecognized(hosts)
        self._same: dict[tuple[int, int], bool] = {}
        self._hits: dict[tuple[str, tuple[int, ...]], list[int]] = {}
        self._quiet: dict[tuple[str, tuple[int, ...]], int] = {}  # quiet_hits' answers: the extractor's index, or -1
        self._keep: list[tuple[str, ...]] = []
        self._offered: tuple[str, str | None] | None = None  # the last line drafts() offered: body, host
        self._raised = False  # the last line drafts() read stopped on an extractor's error (its state: unknown)
        self._held: list[tuple[Candidate, str, str | None]] | None = None  # offers held while a wrapped line is read
        # What the folds of the files read through this extraction learned, per scanner kind (collect/fold.py):
        # a line's outcome is its text's and these extractors', so a file's fold starts with the others' lessons.
        self.fold_lessons: dict[object, Lessons] = {}

    def _same_words(self, key: tuple[str, ...], dispatch: _Dispatch) -> bool:
        """Do a scanner's literal indices mean the same words as this dispatch's? (Checked once per pair.)"""
        mkey = dispatch.matcher.key
        if key is mkey:
            return True
        known = self._same.get((id(key), id(mkey)))
        if known is None:
            known = key == mkey
            self._same[(id(key), id(mkey))] = known
            self._keep.extend((key, mkey))  # the ids stay those of live tuples
        return known

    def open_ends(self, file: str | None = None) -> list[Event]:
        """What the streams of `file` (or of every file) tell where they end (an extractor's `at_end`): a traceback
        whose exception line never came. Reading them changes no stream (a follower's next lines may still come)."""
        out: list[Event] = []
        # (a worker asks after each of its files: by the file's own keys, not a walk over every stream it has read)
        keys = self._states.keys() if file is None else self._file_streams.get(file, ())
        for key in keys:
            state = self._states[key]
            for ex in self._enders:
                out.extend(draft_to_event(d, ctx, text[:TEXT_CLIP]) for d, ctx, text in ex.at_end(state))
        return out

    def _flat(self, c: Candidate) -> list[Candidate] | None:
        """The lines a candidate pasted flat holds (flat_pieces), each a candidate at its place, or None."""
        if not (" [rank" in c.text or "        " in c.text):
            return None
        pieces = flat_pieces(c.text)
        if pieces is None:
            return None
        last = len(pieces) - 1
        return [Candidate(c.source, c.file, c.line, c.node, c.rank, c.time, piece, None, None,
                          c.cont if i == last else None) for i, piece in enumerate(pieces)]

    def events(self, c: Candidate) -> list[Event]:
        if (flat := self._flat(c)) is not None:
            return [ev for piece in flat for ev in self.events(piece)]
        drafts, ctx = self.drafts(c)
        if not drafts or ctx is None:
            return []
        text = c.text[:TEXT_CLIP]
        return [draft_to_event(d, ctx, text) for d in drafts if d.kind not in FACT_KINDS]  # (a fact is no event)

    def add_events(self, c: Candidate, store: EventStore) -> None:
        """`store.add(ev)` for each of `events(c)`, the ones that only count never built."""
        if (flat := self._flat(c)) is not None:
            for piece in flat:
                self.add_events(piece, store)
            return
        drafts, ctx = self._drafts(c) if c.cont is None else self.drafts(c)  # (drafts' first step, no call)
        if drafts and ctx is not None:
            store.add_drafts(drafts, ctx, c.text[:TEXT_CLIP])

    def add_events_read(self, c: Candidate, store: EventStore) -> Reading:
        """add_events, and what the line gave (collect/fold.py compares the copies of a line by it)."""
        if (flat := self._flat(c)) is not None:
            # a line pasted flat: its pieces read in order; no copy of it folds (a stream of its own, not foldable)
            sigs_all: list[Signature] = []
            for piece in flat:
                sigs_all.extend(self.add_events_read(piece, store).signatures)
            return Reading((tuple(sigs_all), True, None), None, False, object(), ())
        self._offered, self._raised = None, False
        drafts, ctx = self.drafts(c)
        sigs: list[Signature] = []
        copies: list[EventCopy] = []
        if drafts and ctx is not None:
            store.add_drafts(drafts, ctx, c.text[:TEXT_CLIP])
            key = EventStore._key
            for d in drafts:
                rank = d.rank if d.rank is not None else ctx.rank
                sig = (key(d.kind, ctx.source, ctx.file, ctx.node, rank, d.device, d.fields),
                       int(d.fields.get("repeat") or 1))
                sigs.append(sig)
                # The event less its line, time and text (draft_to_event's), for the copies below the store's cap
                # that the fold adds without reading them (collect/fold.py, LineFold.copy_events).
                host = d.host or ctx.host
                copies.append((*sig, d.kind, ctx.node, rank, d.device,
                               dict(d.fields, **({"host": host} if host else {})), ctx.source, ctx.file))
        offer = None
        offered = self._offered
        foldable = True
        if offered is not None:
            body, host = offered
            zkey = zeroed(body)
            offer = (body, zkey, host, c.node, c.rank)
            foldable = not decided_by_count(zkey)
        if ctx is not None and ctx.keyed:
            foldable = False  # its outcome hangs on its digits' value in the stream's state (LineContext.keyed)
        # Past the store's cap a copy is its signatures and weights, whatever its other fields (a pid).
        outcome = (tuple(sigs), ctx.claimed if ctx is not None else False, None if offer is None else offer[1:])
        # The per-stream state the extractors were given; none where the line was read by its body alone, and one
        # no other line has where an extractor stopped on an error (what it wrote before is not known).
        stream = ctx.state if ctx is not None else object() if self._raised else None
        return Reading(outcome, offer, foldable, stream, tuple(copies))

    def drafts(self, c: Candidate) -> tuple[list[Draft], LineContext | None]:
        """What the extractors found on one line (see _drafts); a line that gives nothing alone and whose message
        the scanner saw wrapped onto the next line (`Candidate.cont`) is read joined to it, and listed as an
        unrecognized line only where the joined text gives nothing either. A line that alone says little (the
        workload's own exception or a CUDA error of no known code: what any message no table knows gives,
        excclass.says_little) is read joined too, and the joined reading is taken where it says more: the words that
        decide may be the ones the wrap put on the next line (`...OutOfMemoryError: Task was killed due to the` /
        `node running low on memory.`; `CUDA error: an illegal memory access was` / `encountered`)."""
        if c.cont is None:
            return self._drafts(c)
        if c.cont.startswith(TABLE_JOINED):
            # a table's row with its cell's continuation rows: the row as the table holds it, read joined
            joined_row = joined_text(c.text, c.cont)
            return self._drafts(Candidate(c.source, c.file, c.line, c.node, c.rank, c.time, joined_row))
        self._held = []
        try:
            out, ctx = self._drafts(c)
        finally:
            held, self._held = self._held, None
        generic = bool(out) and all(says_little(d.kind, d.fields) for d in out)
        if (out and not generic) or (ctx is not None and ctx.claimed and not generic):
            for args in held:
                self.unrecognized.offer(*args)
            return out, ctx
        alone = self._isolated(c, c.cont)
        if alone is not None:
            # the next line reads alone (an event, or understood): a message of its own, which the scanner reads in
            # its turn, unless the joined line gives a kind it does not, whose words then span the join (NCCL's NVLS
            # bind failure over CUDA's error 401). Decided on streams of their own, so that a join refused leaves
            # the stream's state as it was for the next line's own reading (a repeat's memory: gpu.py `_recent`)
            both = self._isolated(c, joined_text(c.text, c.cont))
            if both is None or both <= alone:
                for args in held:
                    self.unrecognized.offer(*args)
                return out, ctx
        offered, self._offered = self._offered, None  # a line read joined is offered as no unrecognized line
        joined = Candidate(c.source, c.file, c.line, c.node, c.rank, c.time, joined_text(c.text, c.cont))
        self._held = []  # the joined text's own offers are dropped: the line is listed as it stands
        try:
            out2, ctx2 = self._drafts(joined)
        finally:
            self._held = None
        if out2 and (not generic or not all(says_little(d.kind, d.fields) for d in out2)):
            return out2, ctx2
        if not out2 and not out and ctx2 is not None and ctx2.claimed:
            # joined, an extractor understood the line as no cause (slurm.yaml's `none` rows: `Job/step already
            # completing or completed`): no unrecognized line, as the whole line would be none
            return out2, ctx2
        if generic:
            self._offered = offered
            for args in held:
                self.unrecognized.offer(*args)
            return out, ctx
        self._offered = offered
        for args in held:  # the joined text read to nothing either: the line stands as it was
            self.unrecognized.offer(*args)
        return out, ctx

    def _isolated(self, c: Candidate, text: str) -> set[str] | None:
        """The kinds `text` read at the line `c`'s place gives, on streams of its own (no state of the file's is
        touched, nothing is offered): a set, empty where an extractor understood it as no event (claimed); None where
        it reads to nothing. A text of no literal the extractors look for is answered by the matcher alone."""
        states, streams, held, offered, raised = (self._states, self._file_streams, self._held, self._offered,
                                                  self._raised)
        ray_job = c.file in self._ray_job_files
        self._states, self._file_streams, self._held = {}, {}, []
        try:
            out, ctx = self._drafts(Candidate(c.source, c.file, c.line, c.node, c.rank, c.time, text))
        finally:
            self._states, self._file_streams, self._held, self._offered, self._raised = (states, streams, held,
                                                                                          offered, raised)
            if not ray_job:
                self._ray_job_files.discard(c.file)
        if not out and not (ctx is not None and ctx.claimed):
            return None
        return {d.kind for d in out}

    def _bare_ray_tag(self, file: str, body: str) -> str | None:
        """The printer a bare Ray tag (`(pid=N)`) names in `file`. Ray before 1.7 tagged every task's and actor's
        output so (ray-project/ray#18105 added the task's or actor's name: `(f pid=N)`, `(Actor pid=N)`), and an
        actor that fails while it is created prints under it still (#19967): where a bare-tagged line of the file is
        a traceback's frame in the job's own code (traceback.job_frame), the file's bare tags from there on are the
        job's processes, not Ray's idle worker; else they are that worker (RAY_IDLE_WORKER)."""
        if file in self._ray_job_files:
            return None
        if self._job_frame(body):
            self._ray_job_files.add(file)
            return None
        return self._idle_worker

    def _offer(self, c: Candidate, body: str, host: str | None) -> None:
        if self._held is not None:
            self._held.append((c, body, host))
        else:
            self.unrecognized.offer(c, body, host)

    def _hit_of(self, source: str, ids: tuple[int, ...], dispatch: _Dispatch) -> list[int]:
        """The extractors that literal hits `ids` reach, in order (remembered: a few literal sets recur)."""
        hit = sorted({e for i in ids for e in dispatch.owners[i]})
        if len(self._hits) < 4096:
            self._hits[(source, ids)] = hit
        return hit

    def _state_of(self, file: str, rank: int | None, p: Prefixed) -> dict[str, object]:
        """The per-stream state of a line of `file` (the file's rank: `rank`) with layers `p`, made where missing."""
        # (p.stream's own tuple, without the property's call where no layer named a host, local rank or process)
        skey = (file, rank, None, None, None) if p.host is None and p.local is None and p.proc is None \
            else (file, rank, *p.stream)
        state = self._states.get(skey)
        if state is None:
            state = self._states[skey] = {}
            self._file_streams.setdefault(file, []).append(skey)
        return state

    def quiet_hits(self, source: str, ids: tuple[int, ...], key: tuple[str, ...]) -> bool:
        """May a line of `source` whose literal hits are `ids` (indices into the words `key`) be read by read_quiet:
        are the fast paths on, is one of the hits a `quiet_literals` word of an extractor that claims lines quietly
        (_Quiet), and is that extractor the only one the hits reach, but for the error words' probe where it runs
        only for a line nothing else read or claimed (defer_probe) and the extractor claims its quiet lines? Then
        reading the line in full runs that extractor alone, and where it says the line is quiet, nothing else
        happens (_drafts). Or do the hits reach the probe alone (probe_alone: _drafts reads such a line by its body
        alone, and a line of known context is read to nothing)?"""
        got = self._quiet.get((source, ids))
        if got is not None and got < 0:
            return False  # (an answer is kept only where the tests below passed; a no holds whatever they say)
        dispatch = self._by_source.get(source)
        if (dispatch is None or not (dispatch.quiet or dispatch.probe_alone) or not self._fast
                or not (key is dispatch.matcher.key or self._same_words(key, dispatch))):
            return False
        if got is None:
            got = -1
            hit = self._hits.get((source, ids)) or self._hit_of(source, ids, dispatch)
            probe = dispatch.error_words
            rest = [e for e in hit if not (dispatch.defer_probe and e == probe)]
            if len(rest) == 1 and not dispatch.quiet.get(rest[0], frozenset()).isdisjoint(ids) \
                    and (rest[0] not in dispatch.unclaimed or probe not in hit):
                got = rest[0]
            elif len(hit) == 1 and hit[0] == probe and dispatch.probe_alone:
                got = probe
            if len(self._quiet) < 4096:
                self._quiet[(source, ids)] = got
        return got >= 0

    def read_quiet(self, source: str, file: str, rank: int | None, text: str, ids: tuple[int, ...],
                   wraps: bool = False) -> bool:
        """Read a line that quiet_hits let through (`rank`: its file's), where its extractor says it is quiet
        (_Quiet.quiet_claim), or where the hits reach the error words' probe alone and the line is known context
        (ErrorWords.known, _drafts' own reading of such a line): what add_events does with it, less the context, the
        extractor's call and its empty answer. `wraps`: the next line may continue its message (the scanner's test
        before `continuation`), where a line read to nothing without its context (the probe's) or without being
        claimed (_Quiet.quiet_claims False) would be read again joined to it (drafts): then not quiet. True: read
        so (no event, nothing offered). False: not such a line, a line of Ray's idle worker (_bare_ray_tag's own
        reading), or one whose prefixes the split cannot read (_drafts offers it); nothing done that add_events
        would not do the same way: read it so."""
        dispatch = self._by_source[source]
        e = self._quiet.get((source, ids))
        if e is None or e < 0:
            return False
        probe = e == dispatch.error_words
        if wraps and (probe or e in dispatch.unclaimed):
            return False
        try:
            p, settled = self._prefix.split_settled(text)
        except (ValueError, OverflowError, RecursionError):
            return False  # (_drafts' reading of the line: it gives nothing and is offered)
        if probe:
            return self._known(p.body)  # (_drafts' probe_alone reading: the body alone, no state, no context)
        if p.program is not None and p.program == self._idle_worker:
            return False
        if settled:
            self._note_settled(p.body)
        quiet = cast(_Quiet, dispatch.extractors[e])  # (_dispatch_for's isinstance: each call's cost a line here)
        return quiet.quiet_claim(p.body, self._state_of(file, rank, p), p.rank if p.rank is not None else rank)

    def _drafts(self, c: Candidate) -> tuple[list[Draft], LineContext | None]:
        """What the extractors found on one line, and the context they saw, before it becomes events.

        `events` is built on it; the extractor tests read the drafts through it, so they feed
        lines the way production does (dispatch by literal, prefix layer, per-stream state).
        A line no extractor can read without failing (a rank of 5,000 digits that int() refuses) gives
        nothing and is listed as an unrecognized line, with its file and line: one hostile line never
        stops the analysis or hides the rest of the evidence.
        """
        try:
            dispatch = self._by_source.get(c.source)
            if dispatch is None:
                return [], None
            text = c.text
            hk = c.hits_key
            ids = c.hits if c.hits is not None and hk is not None and (hk is dispatch.matcher.key
                                                                       or self._same_words(hk, dispatch)) \
                else dispatch.matcher.ids_in(text.encode("utf-8", "replace"))
            if isinstance(ids, tuple):  # the scanner's hits: a few literal sets recur line after line
                hit = self._hits.get((c.source, ids))
                if hit is None:
                    hit = self._hit_of(c.source, ids, dispatch)
            else:
                hit = sorted({e for i in ids for e in dispatch.owners[i]})
            if self._fast:
                # Split once: the extractors split the body again (so that one fed directly reads the same);
                # a settled body answers that for one identity test (extract/prefix.py).
                p, settled = self._prefix.split_settled(text)
                if len(hit) == 1 and hit[0] == dispatch.error_words and dispatch.probe_alone:
                    # Only the error words' probe reads this line (most error-looking lines of a kernel log):
                    # it reads the body alone (ErrorWords.known), so no state and no context are needed.
                    if not self._known(p.body):
                        self._offer(c, p.body, p.host)
                        self._offered = (p.body, p.host)
                    return [], None
                if settled:
                    self._note_settled(p.body)
            else:
                p = self._prefix.split(text)
            rank = p.rank if p.rank is not None else c.rank
            state = self._state_of(c.file, c.rank, p)
            # (positional: LineContext's fields in their order; a call by keywords cost a microsecond more a line)
            program = p.program
            if program is not None and program == self._idle_worker:
                program = self._bare_ray_tag(c.file, p.body)
            ctx = LineContext(c.source, c.file, c.line, c.node, rank, c.time, state, p.host, program, p.proc)
            out: list[Draft] = []
            probe = dispatch.error_words
            defer = dispatch.defer_probe
            for e in hit:
                if defer and e == probe:
                    continue
                out.extend(dispatch.extractors[e].extract(p.body, ctx))
            if defer and not out and not ctx.claimed and probe in hit:
                for _ in dispatch.extractors[probe].extract(p.body, ctx):
                    pass
            if not out and not ctx.claimed and dispatch.error_words in hit:
                # Error-looking is decided by the prefilter's own literal hits (ErrorWords'), so it costs
                # nothing more, and a Service given unfiltered lines lists what one given candidates does.
                self._offer(c, p.body, p.host)
                self._offered = (p.body, p.host)
            return out, ctx
        except (ValueError, OverflowError, RecursionError):
            self._offered, self._raised = None, True
            self._offer(c, c.text, None)
            return [], None


def feed_store(lines: Iterable[Candidate], extractors: Iterable[LineExtractor] | None = None,
               hosts: Iterable[str] = (), *, ends: bool = False) -> EventStore:
    """The events and facts (model.FACT_KINDS: addresses, ports) of candidate lines, through the production path
    (tests, rule tests, tools), in a store that keeps every copy. `ends`: the streams end after them, and what the
    extractors tell there comes too (Extraction.open_ends: a traceback cut before its exception line, a `dcgmi diag`
    result held for the reasons under it)."""
    ex = Extraction(all_line_extractors() if extractors is None else extractors, hosts)
    store = EventStore(cap=sys.maxsize)
    for c in lines:
        ex.add_events(c, store)
    if ends:
        for ev in ex.open_ends():
            store.add(ev)
    return store


def feed_lines(lines: Iterable[Candidate], extractors: Iterable[LineExtractor] | None = None,
               hosts: Iterable[str] = (), *, ends: bool = False) -> list[Event]:
    """The events of feed_store."""
    return feed_store(lines, extractors, hosts, ends=ends).events


class LineScanner:
    """Finds the candidate lines of one source kind's files.

    The prefilter words are the extractors' own literals for this source, or
    `words` when given (the Service's published prefilter, which a Blueprint
    must use even when its own catalog differs).
    """

    def __init__(self, source: str, extractors: Iterable[LineExtractor],
                 words: Iterable[str] | None = None) -> None:
        self.source = source
        extractors = tuple(extractors)
        if words is not None:
            words = tuple(words)
        # (a bug report's sections are read by the scanners of their own kinds, built alike when one is met)
        self._made = (extractors, words)
        self._siblings: dict[str, LineScanner] = {source: self}
        if words is None:
            words = {w for e in extractors if source in e.sources for w in e.literals}
        self.matcher = _Matcher(sorted({w for w in words if w}))

    def sibling(self, kind: str) -> LineScanner:
        """The scanner of another line kind, built from this one's extractors and words (once)."""
        found = self._siblings.get(kind)
        if found is None:
            found = self._siblings[kind] = LineScanner(kind, *self._made)
        return found

    def scan_file(
        self,
        path: str,
        rel: str,
        *,
        node: str | None,
        rank: int | None,
        srun_prefix: bool,
        tp: TimeParser,
        emit: Callable[[Candidate], None],
        check: Callable[[], None] | None = None,
        fold: LineFold | None = None,
        ident: tuple[int, int] | None = None,
    ) -> FileStats:
        """Scan one file, handing each candidate to `emit`; with `fold` (a sink that is an analysis: it keeps the
        events), copies of a chatty line are counted through it instead and the others read through it
        (collect/fold.py), when the fast paths are on. The file is opened by bundle.open_evidence_sized: no link
        followed, and with `ident` (SourceFile.ident) no other file than the one the bundle held."""
        stats = FileStats()
        try:
            raw, size = open_evidence_sized(path, ident)
        except OSError as exc:
            stats.errors.append((None, f"cannot open: {exc.strerror or exc}"))
            return stats
        with raw, decoded(raw, rel) as fh:
            # A regular file's size at its open (open_evidence's fstat): the reads ask for what it holds, not for a
            # whole chunk (chunks).
            left: int | None = size if fh is raw else None
            try:
                read = reader(fh)
                first = read(CHUNK if left is None else min(CHUNK, left + 1))  # the first piece (chunks)
                # A compressed stream's read may give its first block alone: the head that tells text from binary and
                # a bug report from a log (its opening's line) is read on to _HEAD bytes, within the chunk's size.
                while 0 < len(first) < min(_HEAD, CHUNK) and fh is not raw:
                    try:
                        more = read(min(_HEAD, CHUNK) - len(first))
                    except (EOFError, OSError, zlib.error):
                        break  # (a stream cut short: what it gave is read, and the next read says where it stopped)
                    if not more:
                        break
                    first += more
            except (EOFError, OSError, zlib.error) as exc:
                stats.errors.append((None, f"cannot read: {exc}"))
                return stats
            head = first[:_HEAD]
            share = binary_share(head)
            if share > BINARY_SHARE:
                stats.errors.append((None, f"binary content ({share:.0%} of the first {len(head)} bytes, runs "
                                           "of zeros aside, are not text): skipped"))
                return stats
            unplaced = tp.out_of_range
            if opens_report(head):
                # NVIDIA's bug report: each section read by its own kind's readers, or not at all (collect/bugreport.py)
                self._scan_report(fh, first, None if left is None else left - len(first), stats, rel, node, rank, tp,
                                  emit, check)
                self._unplaced(stats, tp, unplaced)
                return stats
            if fold is not None and not _fast[0]:
                fold = None
            if fold is not None:
                # What a line's outcome may hang on, besides its text and its file's node: the extractors of the
                # source kind and the prefilter's words (hits), the zone and year stamps are read in, srun labels.
                # The words by their interned key's identity (_KEYS keeps each key alive: one id, one word list): a
                # tuple of the catalog's 2,000 words was hashed again for each file's lookup of its lessons.
                fold.start_file(self.matcher.digit_words, self.matcher.hex_words, tp.tz, tp.year, tp.window_end,
                                (self.source, id(self.matcher.key), tp.tz, tp.year, srun_prefix),
                                self.matcher.hex_literals)
            self._scan(fh, stats, rel, node, rank, srun_prefix, tp, emit, check, first, fold,
                       left=None if left is None else left - len(first))
            self._unplaced(stats, tp, unplaced)
        return stats

    def hit_lines(self, buf: bytes, fold: LineFold | None) -> tuple[list[int], Sequence[list[int]] | None]:
        """matcher.line_hits(buf): the hit lines' starts and each one's literal indices. With the fold (the fast
        paths on), the lines of the kind's quiet shapes (LineFold.quiet: every line of such a shape holds none of
        the prefilter's words, quiet_add) are passed over in C before the prefilter scans the rest
        (`_lines.unquiet`, fold_run's quiet test), and its answers are put back at their lines' places: a rank
        log's training steps, nine lines in ten of it, were each scanned for the catalog's 3,000 words, at a
        third of grep's speed. The same hits either way (literals hold no newline). The quiet shapes are taught
        from lines that hold no word: a sample of a chunk scanned whole (quiet_spread), the first lines of the
        rest (quiet_from)."""
        if fold is None or _unquiet is None:
            return self.matcher.line_hits(buf)
        kept = _unquiet(buf, fold.quiet, UNQUIET_SAMPLE) if fold.quiet else None
        if kept is None:
            starts, hit_ids = self.matcher.line_hits(buf)
            fold.quiet_spread(buf, starts)
            return starts, hit_ids
        joined, at, origin = kept
        hits, hit_ids = self.matcher.line_hits(joined)
        if len(hits) == len(at):
            # Every kept line is a hit line (hits are kept lines' starts, each once): their places are the kept
            # lines' own, and no line is left to teach quiet_from (a rank log past its first: its 17 hit lines).
            return list(origin), hit_ids
        fold.quiet_from(joined, hits)  # (a kept line without a hit: a shape not yet known quiet)
        k = 0
        starts = []
        for h in hits:  # (both sorted)
            while at[k] != h:
                k += 1
            starts.append(origin[k])
        return starts, hit_ids

    @staticmethod
    def _unplaced(stats: FileStats, tp: TimeParser, before: int) -> None:
        if tp.out_of_range > before:
            stats.errors.append((None, f"{tp.out_of_range - before} time stamp(s) outside the years "
                                       f"{TIME_MIN.year}-{TIME_MAX.year - 1} read as none (such a line takes "
                                       "the time of the nearest earlier stamped line)"))

    def _scan_report(self, fh: IO[bytes], first: bytes, left: int | None, stats: FileStats, rel: str,
                     node: str | None, rank: int | None, tp: TimeParser, emit: Callable[[Candidate], None],
                     check: Callable[[], None] | None) -> None:
        """An NVIDIA bug report, buffer by buffer: each piece of a section that is the node's evidence is read by its
        kind's scanner (a kernel log's, nvidia-smi's records as an application source's), with the file's line
        numbers; a section's unstamped lines take the time of its own stamped lines only (the stamp carried from a
        piece before is the same section's). No fold: the copies of a line are each read."""
        split = Splitter()
        this = ThisBoot()
        carried: tuple[int, Stamp | None] = (-1, None)
        nuls = 0
        for buf, before in chunks(fh, stats, None, first, CHUNK, left):
            if check is not None:
                check()
            if b"\x00" in buf:
                nuls += buf.count(b"\x00")
                buf = buf.replace(b"\x00", b"")  # (every newline kept: the line numbers stay the file's)
            for piece in split.feed(buf, before):
                scanner = self.sibling(piece.kind)
                part = FileStats()
                last: list[Stamp | None] = [carried[1] if carried[0] == piece.section else None]
                data = buf[piece.start:piece.end]
                # this boot's dmesg dated by a message it shares with this boot's journal (bugreport.py ThisBoot)
                boot = this.read(piece, data, tp) if piece.boot and piece.kind == "kernel" else None
                scanner._scan(io.BytesIO(data), part, rel, node, rank, False, tp, emit,
                              check, line_base=piece.line, carried=last[0], last_stamp=last, boot=boot)
                carried = (piece.section, last[0])
                stats.candidates += part.candidates
                stats.bad_utf8 += part.bad_utf8
                stats.errors.extend(part.errors)
                if part.last_time is not None and (stats.last_time is None or part.last_time > stats.last_time):
                    stats.last_time = part.last_time
        if nuls:
            stats.errors.append((None, f"{nuls} NUL byte(s) in the text (a log cut by a crash?): read around them"))
        stats.notes.append(split.note(rel))
        undated = this.note(rel)
        if undated is not None:
            stats.notes.append(undated)

    def scan_bytes(self, data: bytes, rel: str, *, node: str | None, rank: int | None, srun_prefix: bool,
                   tp: TimeParser, emit: Callable[[Candidate], None], line_base: int = 0,
                   carried: Stamp | None = None) -> tuple[FileStats, Stamp | None]:
        """Scan `data`, whole lines that follow line `line_base` of a file (what a followed file grew by:
        collect/follow.py), as scan_file scans a file; `carried` is the last stamp before them, for their
        unstamped lines. Returns the stats (`lines`: of `data`) and the last stamp read, else `carried`."""
        stats = FileStats()
        out: list[Stamp | None] = [carried]
        self._scan(io.BytesIO(data), stats, rel, node, rank, srun_prefix, tp, emit, line_base=line_base,
                   carried=carried, last_stamp=out)
        return stats, out[0]

    def _scan(self, fh: IO[bytes], stats: FileStats, rel: str, node: str | None, rank: int | None,
              srun_prefix: bool, tp: TimeParser, emit: Callable[[Candidate], None],
              check: Callable[[], None] | None = None, first: bytes = b"", fold: LineFold | None = None,
              line_base: int = 0, carried: Stamp | None = None,
              last_stamp: list[Stamp | None] | None = None, left: int | None = None,
              boot: tuple[datetime, float] | None = None) -> None:
        """`carried`: the last stamp of the lines before (the previous chunk's, then); `line_base`: the lines
        before `fh`'s first; `last_stamp[0]` is set to the last stamp read; `left`: the bytes of a regular file past
        `first` (chunks); `boot`: a (wall, uptime) that dates uptime stamps before any line with both (Clock)."""
        clock = Clock(tp, srun_prefix, boot)
        wall_of = clock.wall_of

        def strip(raw: bytes) -> tuple[bytes, int | None]:
            if srun_prefix:
                m = SRUN.match(raw)
                if m:
                    return raw[m.end() :], int(m.group(1))
            return raw, None

        key = self.matcher.key
        wraps = may_wrap
        may_stamp = _may_stamp if _fast[0] else None
        # A line with a stamp form's characters that no form reads (an NCCL INFO line's `host:pid:tid`, a C++ frame's
        # address) is told in C too (_lines.stamp_local_us's -2: parse reads none, tests/collect/test_fold.py).
        no_stamp = _stamp_local_us if may_stamp is not None else None
        # And a stamp it reads where its answer becomes a time without the zone's rules (stamps.c_clock) is not
        # parsed: a rank log's glog and ISO stamps, its own and those its walks back find.
        cclock = c_clock(tp) if no_stamp is not None else None
        read_clock = cclock[0] if cclock is not None else None
        # A candidate's time in one C call (line_time_us: time_of's own stamp and walk back, where C reads them both),
        # for a line without an srun label; -1 leaves it to time_of.
        line_time = _line_time_us if cclock is not None and not srun_prefix else None
        # The last whole walk back (walk_far): its buffer, stop, start and the stamp it found (a walk back counts no
        # stamp read as none: stamps.walk_back).
        walked: list[Any] = [None, -1, -1, None]

        def walk_far(buf: bytes, s: int, stop: int) -> Stamp | None:
            """walk_back(buf, s, ..., stop) with no limit, as a copy's time (and a held copy's) takes it: over the
            copies folded since the last line read, in C and Python alike. A copy's walk after another's, with the
            same stop, reads the lines between the two and, where none has a stamp, takes the other's answer: one mpirun
            output's copies of unstamped lines walked back over the same thousands of lines each (issue 27's n3)."""
            w = walked
            if w[0] is buf and w[1] == stop and stop < w[2] <= s:
                st = walk_back(buf, s, tp, srun_prefix, w[2] - 1, 1 << 30, cclock)
                if st is None:
                    st = w[3]
            else:
                st = walk_back(buf, s, tp, srun_prefix, stop, 1 << 30, cclock)
            walked[:] = [buf, stop, s, st]
            return st

        def unstamped(prev_t: datetime | None, have_prev: bool, carried: Stamp | None) -> datetime | None:
            """The time of a line with no stamp of its own nor any back to its walk's stop: the previous candidate's,
            else the stamp carried from the lines before the chunk."""
            return prev_t if have_prev else wall_of(carried)

        def time_of(buf: bytes, s: int, raw: bytes, text: str, prev_start: int, prev_t: datetime | None,
                    have_prev: bool, carried: Stamp | None, limit: int | None) -> datetime | None:
            """The time of the line at buf[s:] whose text is `text` (`raw` its bytes, the srun prefix peeled): its own
            stamp's or the nearest earlier one's."""
            # A line that holds none of the stamp forms' characters costs no parse (_lines.may_stamp).
            if may_stamp is None or no_stamp is None:
                st = None if may_stamp is not None and not may_stamp(raw) else tp.parse(text)
            elif not may_stamp(raw):
                st = None
            else:
                us = no_stamp(raw, read_clock)
                if us >= 0 and cclock is not None:
                    return c_time(us, cclock)
                st = None if us == _STAMP_NONE else tp.parse(text)
            # wall_of's own answer for a wall-clock stamp without uptime, without its call. An uptime alone takes
            # the boot time of the nearest line with both before this one (stamps.Clock): where it walked back to a
            # stamp, none lies between.
            t = st.wall if st is not None and st.uptime is None else wall_of(st, buf, s)
            if t is None:
                t = wall_of(walk_back(buf, s, tp, srun_prefix, prev_start, BACKWALK_LINES, cclock) if limit is None
                            else walk_far(buf, s, prev_start), buf, s)
                if t is None:
                    t = unstamped(prev_t, have_prev, carried)
            return t

        def copy_time(buf: bytes, s: int, e: int) -> tuple[bool, datetime | None]:
            """The time reading the copy buf[s:e] would give it (as read_held reads a held copy: the walk back goes
            over the copies not read), for a variant that counts a copy only when it is not earlier than its
            floor (fold._Variant.timed), and whether it was worked out without a stamp read as none (outside the
            years: such a copy is read, and the count of such stamps is left to that reading)."""
            saved = tp.counts()
            if _prev_stamped is not None and _prev_stamped(buf, -1, e + 1, 1)[0] != s:
                # None of the stamp forms' characters on the copy itself (_lines.c may_hold_stamp): its own parse
                # would read none, and the walk back starts at once.
                t = wall_of(walk_far(buf, s, prev_start), buf, s)
                if t is None:
                    t = unstamped(prev_t, have_prev, carried)
            else:
                raw = strip(buf[s:e])[0] if srun_prefix else buf[s:e]
                t = time_of(buf, s, raw, raw.decode("utf-8", errors="replace"), prev_start, prev_t, have_prev,
                            carried, 1 << 30)
            sure = tp.out_of_range == saved.out_of_range
            tp.put_back(saved)  # (a look ahead: the copy's reading, if any, counts them)
            return sure, t

        def copy_after(buf: bytes, s: int, e: int, v: Any) -> bool:
            """May the copy buf[s:e] of the timed variant `v` be counted: does reading it give it a time not earlier
            than v's floor (fold._Variant.after), and no stamp read as none? The time read in C where _lines.c
            reads it (the dense loop's reading, `_lines.copy_time`), with v's floor in the same count; else
            copy_time's."""
            assert fold is not None
            if _copy_time is not None and _fast[0]:
                floor = fold.floor_count(v)
                if floor is not None:
                    us = _copy_time(buf, s, e, prev_start, fold.clock)
                    if us >= 0:
                        return us >= floor
                    if us == _NO_STAMP:  # no line back to prev_start has a stamp: copy_time's own answer then
                        return bool(v.after(unstamped(prev_t, have_prev, carried)))
            ok, t = copy_time(buf, s, e)
            return ok and v.after(t)

        def time_at(buf: bytes, s: int, e: int, raw: bytes, text: str, prev_start: int, prev_t: datetime | None,
                    have_prev: bool, carried: Stamp | None, limit: int | None) -> datetime | None:
            """A candidate's time (candidate's): in one C call where it reads the line's stamp and its walk back,
            else time_of's."""
            if line_time is not None and limit is None:
                us = line_time(buf, s, e, prev_start, BACKWALK_LINES, read_clock)
                if us >= 0:
                    return c_time(us, cclock)  # type: ignore[arg-type]
                if us == _NO_STAMP:  # (time_of's answer where the line and its walk back read as no stamp)
                    return unstamped(prev_t, have_prev, carried)
            return time_of(buf, s, raw, text, prev_start, prev_t, have_prev, carried, limit)

        def candidate(buf: bytes, s: int, e: int, line_no: int, hits: tuple[int, ...] | None,
                      prev_start: int, prev_t: datetime | None, have_prev: bool, carried: Stamp | None,
                      limit: int | None = None) -> Candidate:
            """The candidate of the line buf[s:e], its time its own stamp's or the nearest earlier one's: walking
            back from it stops at the previous candidate read (prev_start), whose time (prev_t) stands for
            what lies before it, or the previous chunk's last stamp (carried)."""
            if srun_prefix:
                raw, prank = strip(buf[s:e])
            else:
                raw, prank = buf[s:e], None
            # The chunk scan's literal hits stand for the line as decoded when the line is the
            # raw bytes, valid UTF-8; otherwise the extraction looks again.
            if prank is not None:
                hits = None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                stats.bad_utf8 += 1
                text = raw.decode("utf-8", errors="replace")
                hits = None
            t = time_at(buf, s, e, raw, text, prev_start, prev_t, have_prev, carried, limit)
            # (a wrapped message's next line starts with a lower-case letter, or follows a closing `:`, or is an
            # indented CUDA call's place: may_wrap, whose first bytes tell most candidates apart)
            cont = continuation(buf, e, text) if e > s and wraps(buf, e) else None
            return Candidate(self.source, rel, line_no, node, prank if prank is not None else rank, t, text,
                             hits, key if hits is not None else None, cont)

        nuls = 0
        seen = [0]
        count = count_newlines
        # With a fold, the last copy it would count is held back, and read in full when a line that does not
        # fold comes or the chunk ends (collect/fold.py): its variant, its place, line number and hits.
        held: tuple[Any, ...] | None = None
        held_variant: Any = None
        # A held copy's time, where its variant is below the store's cap (not past_cap): when the next copy comes,
        # its events are added at its line and time (LineFold.copy_events), not counted.
        held_time: datetime | None = None
        # The previous candidate read's start and resolved time: walking back from a line stops at the
        # previous candidate, so a burst of unstamped lines (NCCL's) is parsed once, not once per line.
        prev_start, prev_t, have_prev = -1, None, False

        def below_cap(buf: bytes, s: int, e: int) -> tuple[bool, datetime | None]:
            """May the copy buf[s:e] of a variant below the store's cap (fold() gave it, its signatures not all past
            the cap) be added as its variant's events (LineFold.copy_events), and its time: the time reading it gives
            (copy_time's), where no stamp was read as none; an ASCII line, no srun label (its rank and text are
            then the line's bytes)."""
            if srun_prefix or not buf[s:e].isascii():
                return False, None
            return copy_time(buf, s, e)

        def settle_held(buf: bytes) -> None:
            """Another copy follows the held one: count it on its variant, or where the variant is below the store's
            cap, add its events at its own line and time (what reading it adds)."""
            assert fold is not None and held is not None
            if held_variant.past_cap:
                held_variant.counted += 1
            else:
                s, e, line_no, _ = held
                fold.copy_events(held_variant, line_no, held_time, buf[s:e].decode("ascii")[:TEXT_CLIP])

        def read_held(buf: bytes) -> None:
            """Read the held copy in full. The copies folded before it were not read: the walk back to a stamp
            goes over all of them (at most a chunk), as reading each would have."""
            nonlocal held, held_variant, prev_start, prev_t, have_prev
            assert fold is not None and held is not None
            s, e, line_no, ids = held
            hits = tuple(ids) if ids is not None else None
            # prev_* are still what they were when the copy was held: no line was read since.
            unread = tp.unread
            c = candidate(buf, s, e, line_no, hits, prev_start, prev_t, have_prev, carried, limit=1 << 30)
            fold.read(c, buf[s:e], ids)
            if tp.unread != unread:
                fold.unstable(buf[s:e])
            prev_start, prev_t, have_prev = s, c.time, True
            held = held_variant = None

        def take(buf: bytes, s: int, e: int, line_no: int, ids: list[int] | None, tried: bool = False) -> None:
            """A candidate that does not fold: counted, or read in full (`tried`: the fold already said no)."""
            nonlocal held, held_variant, held_time, prev_start, prev_t, have_prev
            if plain[0]:  # none of this chunk's lines can be counted (LineFold.may_count)
                assert fold is not None
                unread = tp.unread
                c = candidate(buf, s, e, line_no, tuple(ids) if ids is not None else None, prev_start, prev_t,
                              have_prev, carried)
                fold.pass_on(c)
                if tp.unread != unread:
                    fold.unstable(buf[s:e])
                prev_start, prev_t, have_prev = s, c.time, True
                return
            if fold is not None:
                v = None if tried else fold.fold(buf[s:e], ids)
                if v is not None and v.timed and not copy_after(buf, s, e, v):
                    v = None
                t: datetime | None = None
                if v is not None and not v.past_cap:
                    ok, t = below_cap(buf, s, e)
                    if not ok:
                        v = None
                if v is not None:
                    if held_variant is not None:
                        settle_held(buf)
                    held_variant = v
                    held = (s, e, line_no, ids)
                    held_time = t
                    return
                if held is not None:  # the candidate before this one
                    read_held(buf)
            hits = tuple(ids) if ids is not None else None
            unread = tp.unread
            c = candidate(buf, s, e, line_no, hits, prev_start, prev_t, have_prev, carried)
            if fold is not None:
                fold.read(c, buf[s:e], ids)
                if tp.unread != unread:
                    fold.unstable(buf[s:e])
            else:
                emit(c)
            prev_start, prev_t, have_prev = s, c.time, True

        def counted_in_c(n: int, h: tuple[int, int, int, Any] | None, counts: list[tuple[Any, int]]) -> int:
            """Take in what a C loop (_lines.fold_run, fold_hits) folded: `n` copies, the copy it holds `h`, the
            copies it counted on each variant. Returns n."""
            nonlocal held, held_variant
            if n and h is not None:
                for v, k in counts:
                    v.counted += k
                held_variant = h[3]
                held = (h[0], h[1], h[2], held_variant.hits)
            return n

        # This chunk's candidates are read in full outside the fold: none of them could be counted (may_count).
        plain = [False]
        # This chunk's lines are read one by one (most of the last chunk's folded; or, for a file's first, of the
        # last file of its kind, and its first lines are of shapes the kind knows: LineFold.looks_dense).
        dense = False
        first_chunk = fold is not None
        backoff = wait = 0  # chunks to wait before the next try of the dense loop, after one that did not pay
        for buf, before in chunks(fh, stats, seen, first, CHUNK, left):
            if check is not None:
                check()  # a deadline: one chunk of work at most after it passes
            walked[0] = None  # (the last chunk's buffer is not kept alive past it)
            # `in` is a memchr (many GB/s); count() walks byte by byte, so it runs only when a NUL is there.
            n = buf.count(b"\x00") if b"\x00" in buf else 0
            if n:
                # Dropping them keeps every newline, so line numbers stay exact; a word a NUL cut in two
                # ("NVRM: \0Xid") is whole again for the prefilter.
                nuls += n
                buf = buf.replace(b"\x00", b"")
            if first_chunk:
                first_chunk = False
                dense = fold is not None and fold.looks_dense(buf)
            line_no = before + line_base
            prev_start, prev_t, have_prev = -1, None, False
            folded = quiet = cands = 0
            plain[0] = False
            if dense and fold is not None:
                # Most lines are copies the fold counts: a copy is known by its shape alone, so each line is
                # looked up, and only the others are searched for the prefilter's words, one by one.
                ids_of, fold_copy = self.matcher.line_ids, fold.fold_copy
                run = _fold_run if _fast[0] else None
                s, end = 0, len(buf)  # the buffer ends with a newline
                while s < end:
                    if run is not None and (fold.table or fold.quiet):
                        # The copies of variants already found ready, and the lines known to hold no word, in C, up
                        # to the first other line. A copy no stamp lies before takes the time of the line read last,
                        # or before any in this chunk, the previous chunk's last stamp's (copy_time's): C compares
                        # either with a floor (a chunk of stampless lines left each timed copy to Python).
                        # (a held copy below the store's cap is not C's to count: it adds events when a copy follows)
                        s, line_no, n, h, counts, passed = run(
                            buf, s, line_no, fold.table,
                            None if held is None or not held_variant.past_cap else (*held[:3], held_variant),
                            fold.quiet, prev_start, fold.clock,
                            fold.before_count(unstamped(prev_t, have_prev, carried)))
                        quiet += passed
                        if n and held is not None and not held_variant.past_cap:
                            settle_held(buf)
                        folded += counted_in_c(n, h, counts)
                        if s >= end:
                            break
                        if len(counts) >= _FOLD_MAX_COUNTED:
                            continue  # (it stopped at a copy of one more variant than it counts in one call)
                    e = buf.index(b"\n", s)
                    raw = buf[s:e]
                    line_no += 1
                    v = fold_copy(raw)
                    tried = False
                    if v is not None and v.timed and not copy_after(buf, s, e, v):
                        v, tried = None, True
                    t = None
                    if v is not None and not v.past_cap:
                        ok, t = below_cap(buf, s, e)
                        if not ok:
                            v, tried = None, True
                    if v is not None:
                        folded += 1
                        if held_variant is not None:
                            if held_variant.past_cap:
                                held_variant.counted += 1  # LineFold.count, without the call
                            else:
                                settle_held(buf)
                        held_variant = v
                        held = (s, e, line_no, v.hits)
                        held_time = t
                        if run is not None and v.past_cap:  # (below the cap, each copy adds its events: not C's)
                            fold.table_add(raw, v)
                    else:
                        ids = ids_of(raw)
                        if ids is None or ids:
                            stats.candidates += 1
                            take(buf, s, e, line_no, ids, tried)
                        elif run is not None:
                            fold.quiet_add(raw)
                    s = e + 1
                stats.candidates += folded
            else:
                starts, hit_ids = self.hit_lines(buf, fold)
                line_no += 1
                pos = 0
                cands = len(starts)
                stats.candidates += cands
                # A file's first chunk, when none of its candidates could be counted, is read outside the fold;
                # the fold starts on the next one (at most WARM more reads of a shape than it would have made).
                plain[0] = fold is not None and not before and not fold.may_count(buf, starts)
                # The copies of variants already found ready, among the hit lines, are counted in C
                # (_lines.fold_hits, fold_run's counterpart) up to the next hit line that is not one.
                hits_run = _fold_hits if fold is not None and _fast[0] else None
                k, n_starts = 0, len(starts)
                if plain[0] and fold is not None and held is None:
                    # take's plain reading of each candidate, in order, without the fold's steps between them (no
                    # copy is held or counted in such a chunk, and its table is empty: start_file emptied it, and
                    # pass_on adds nothing to it): a rank log's 17 candidates, 300k on a 16k-rank job.
                    pass_on, unstable = fold.pass_on, fold.unstable
                    # A line its only reader reads to nothing quietly (Extraction.quiet_hits, read_quiet: each rank's
                    # C++ stack under its abort, a line of known context only the error words' probe reads, an
                    # nvidia-smi key's word on NCCL's line) is read without its candidate: its time (the walk back of
                    # the next line stops at it) and the fold's epoch as pass_on leaves them; an ASCII line without
                    # an srun label (its text and hits the candidate's).
                    ex = fold.extraction
                    qx = ex if isinstance(ex, Extraction) and hit_ids is not None and not srun_prefix else None
                    quiet_hits = qx.quiet_hits if qx is not None else None
                    for k in range(n_starts):
                        s = starts[k]
                        line_no += count(buf, pos, s)
                        pos = s
                        e = buf.find(b"\n", s)
                        ids = hit_ids[k] if hit_ids is not None else None
                        unread = tp.unread
                        hits = tuple(ids) if ids is not None else None
                        if quiet_hits is not None and hits is not None and quiet_hits(self.source, hits, key) \
                                and qx is not None and (qraw := buf[s:e]).isascii() \
                                and qx.read_quiet(self.source, rel, rank, qtext := qraw.decode("ascii"), hits,
                                                  wraps(buf, e)):
                            prev_t = time_at(buf, s, e, qraw, qtext, prev_start, prev_t, have_prev, carried, None)
                            fold.passed()
                            if tp.unread != unread:
                                unstable(qraw)
                            prev_start, have_prev = s, True
                            continue
                        c = candidate(buf, s, e, line_no, hits, prev_start, prev_t, have_prev, carried)
                        pass_on(c)
                        if tp.unread != unread:
                            unstable(buf[s:e])
                        prev_start, prev_t, have_prev = s, c.time, True
                    k = n_starts
                while k < n_starts:
                    if hits_run is not None and fold is not None and fold.table:
                        k, pos, line_no, n, h, counts = hits_run(
                            buf, starts, k, pos, line_no, fold.table,
                            None if held is None or not held_variant.past_cap else (*held[:3], held_variant),
                            prev_start, fold.clock)
                        if n and held is not None and not held_variant.past_cap:
                            settle_held(buf)
                        folded += counted_in_c(n, h, counts)
                        if k >= n_starts:
                            break
                        if len(counts) >= _FOLD_MAX_COUNTED:
                            continue
                    s = starts[k]
                    line_no += count(buf, pos, s)
                    pos = s
                    e = buf.find(b"\n", s)
                    take(buf, s, e, line_no, hit_ids[k] if hit_ids is not None else None)
                    if held is not None:
                        folded += 1
                        if hits_run is not None and fold is not None and held_variant.past_cap:
                            fold.table_add(buf[s:e], held_variant)
                    k += 1
                line_no += count(buf, pos, len(buf)) - 1
            if held is not None:  # read before the chunk's last stamp, as in order
                read_held(buf)
            lines = line_no - before - line_base
            seen[0] = lines
            if fold is None or not lines:
                dense = False
            elif dense:
                # Read line by line: stay while most lines were copies or lines passed over in C as holding no
                # word (`quiet`); else wait twice as many chunks as the last time before trying again.
                dense = (folded + quiet) * 2 >= lines
                if not dense:
                    backoff = backoff * 2 or 1
                    wait = backoff
            elif wait:
                wait -= 1
            else:
                # Most lines copies; or, where a line in four or more is a candidate (whose Python call the dense
                # loop may spare it), most candidates copies.
                dense = folded * 2 >= lines or (folded * 2 >= cands and cands * 4 >= lines)
                if dense and not before and fold is not None and _fold_run is not None and _fast[0]:
                    # The first lines that hold no word are the kind's quiet shapes, as the dense loop would have
                    # found them: the next file of the kind may start in it (LineFold.looks_dense).
                    fold.quiet_from(buf, starts)
            last = walk_back(buf, len(buf), tp, srun_prefix, -1, BACKWALK_LINES, cclock)  # (_last_stamp's, in C)
            clock.end_chunk(buf)
            if last is not None:
                carried = last
                # (an uptime alone: the boot time this chunk carries into the next, as the next reads `carried`)
                stats.last_time = wall_of(last) or stats.last_time
        # The last chunk's buffer, held by `walked`: the nested functions above and their cells are a cycle that only
        # the collector frees, and with its young generation larger while lines are read (extract/memo.py scan_gc)
        # a large file's last buffer outlived the file by thousands of allocations.
        walked[0] = None
        clock.end_file()
        if fold is not None:
            fold.dense = dense
            fold.end_file()
        if last_stamp is not None:
            last_stamp[0] = carried
        if nuls:
            stats.errors.append((None, f"{nuls} NUL byte(s) in the text (a log cut by a crash?): read around them"))

    @staticmethod
    def _walk_back(buf: bytes, end: int, tp: TimeParser, srun_prefix: bool, stop: int = -1,
                   limit: int | None = None) -> Stamp | None:
        """collect/stamps.walk_back, `limit` BACKWALK_LINES by default."""
        return walk_back(buf, end, tp, srun_prefix, stop, BACKWALK_LINES if limit is None else limit)

    @staticmethod
    def _walk_back_py(buf: bytes, end: int, tp: TimeParser, srun_prefix: bool, stop: int = -1,
                      limit: int | None = None) -> Stamp | None:
        """collect/stamps.walk_back_py (the walk without the C module), `limit` BACKWALK_LINES by default."""
        return walk_back_py(buf, end, tp, srun_prefix, stop, BACKWALK_LINES if limit is None else limit)

    def _last_stamp(self, buf: bytes, tp: TimeParser, srun_prefix: bool) -> Stamp | None:
        return self._walk_back(buf, len(buf), tp, srun_prefix)
