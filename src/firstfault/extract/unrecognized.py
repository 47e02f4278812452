"""Error-looking lines that no extractor understood, grouped by a masked template.

A verdict that says `unknown` should still show what the catalog missed.
Every candidate line that yields no event (and that no extractor claimed as
part of a record it understood) is offered here; the error-looking ones are
masked (times, numbers, hex, addresses, paths, quoted text, host names) into
a template and counted per template, with the nodes that printed it and the
earliest line as an example. Memory is bounded: at most MAX_GROUPS distinct
templates are kept; lines of further templates are only counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Never, cast

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.catalog.tables import level_header_table, mca_verbose_records, mlx5_command_statuses
from firstfault.extract.base import LineContext
from firstfault.extract.codes import file_only_strerror_texts
from firstfault.extract.excclass import setup_errno_words, store_code_words
from firstfault.extract.memo import MAX_KEY, digits_zeroed, text_shape

if TYPE_CHECKING:
    from firstfault.extract.base import Candidate

# Lines that error reports carry around the fact an extractor reads (hints, headers, advice): known,
# never a cause, never "unrecognized".
KNOWN_CONTEXT: Final = re.compile(
    r"^\s*Last error:\s*$"  # NCCL's report: the quoted WARN follows
    r"|CUDA kernel errors might be asynchronously reported|For debugging consider passing CUDA_LAUNCH_BLOCKING"
    r"|Compile with `TORCH_USE_CUDA_DSA`|Search for `cudaError"
    r"|Stack trace of the failed collective not found|To avoid data inconsistency, we are taking the entire process"
    r"|Exception raised from \S+ at |error_file:\s|To enable traceback see:"
    r"|Please check rank \d+ logs for faulty rank"
    r"|^\s*\S+ FAILED\s*$"  # torchrun's summary title: `train.py FAILED`
    # Open MPI's help aggregation (opal/util/show_help.c, orte's and PRRTE's show_help): the count of copies of a help
    # message printed in full before it, `N more processes have sent help message help-mpi-btl-openib.txt / error in
    # device init`, and its advice, `Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error
    # messages`: the message itself is read where it was printed, the count adds no failure of its own
    r"|\bmore process(?:es have| has) sent help message \S+ / "
    r"|\bSet MCA parameter \S+ to 0 to see all help / error messages"
    # FFmpeg's log of a codec's or a demuxer's context (libavutil/log.c av_log_default_callback: `[NAME @ 0xADDR] `, the
    # context's item name and address, then the message: libavcodec/h264_refs.c `mmco: unref short failure`,
    # libavformat/mov.c `moov atom not found`, h264_slice.c `decode_slice_header error`), as the readers that decode
    # through it print (decord, PyAV, torchvision, OpenCV): the media's complaint about one input's bytes, which the
    # program concealed or skipped or turned into an error of its own (its exception is read where it is raised)
    r"|^\[[\w#/:.,-]{1,80} @ \dx[\da-f]{4,16}\] "
)


@lru_cache(maxsize=1)
def _refused_command() -> re.Pattern[str]:
    """A command the ConnectX firmware refused as one it does not offer, as mlx5_core reports it (drivers/net/ethernet/
    mellanox/mlx5/core/cmd.c mlx5_cmd_out_err, before Linux 5.18 mlx5_cmd_check: `ACCESS_REG(0x805) op_mod(0x1) failed,
    status bad operation(0x2), syndrome (0x9a6171), err(-22)`): the status words of catalog/transport.yaml
    `mlx5_command_statuses` whose reading is `refused`, the caller's question (a health monitor's register query),
    known and never unrecognized. Digits read only as a class (ErrorWords.known's cache keys on the digits zeroed);
    the words and their code are one row."""
    words = "|".join(re.escape(r.words) for r in mlx5_command_statuses().values() if r.reading == "refused")
    return re.compile(r"\bmlx5_cmd_(?:out_err|check):[0-9]{1,6}:\(pid [0-9]{1,10}\): [A-Z][A-Z0-9_]{1,64}"
                      rf"\(0x[0-9a-f]{{1,8}}\) op_mod\(0x[0-9a-f]{{1,8}}\) failed, status (?:{words})"
                      r"\(0x[0-9a-f]{1,2}\)")


@lru_cache(maxsize=1)
def _level_headers() -> tuple[tuple[re.Pattern[str], str, tuple[str, ...], tuple[str, ...]], ...]:
    """The loggers' one-letter level headers (catalog/exceptions.yaml `level_headers`): header, error letters, words,
    benign texts."""
    return tuple((re.compile(r.header, keep=True), r.error, r.literals, r.benign) for r in level_header_table())


def level_header_literals() -> tuple[str, ...]:
    """The prefilter words of the level headers at an error letter (catalog/exceptions.yaml `level_headers`)."""
    return tuple(dict.fromkeys(w for r in level_header_table() for w in r.literals))


def error_header(line: str) -> bool:
    """Does the line open with a logger's header whose letter says error or fatal (`level_headers`: TensorFlow's and
    XLA's `2024-07-29 17:14:59.920189: E file.cc:38] `, Ray's `[2023-08-09 22:39:16,002 E 209 223] `), or with a form
    only a program's reports of an error print (bash's `script: line 12: `)? Such a record
    is error-looking whatever its words, but for a record its program says is no failure (the row's `benign`). The
    header is looked for only where one of its row's words is."""
    for rx, error, words, benign in _level_headers():
        if any(w in line for w in words):
            m = rx.match(line)
            if m is not None and (not error or m.group("level") in error):
                return not any(b in line for b in benign)
    return False


def _mca_verbose(line: str) -> bool:
    """Is the line one of Open MPI's verbose component-selection records with a word of failure (catalog/transport.yaml
    `mca_verbose_records`: `select: init of component smcuda returned failure`)? A component left out, the framework
    going on with the others: known context. Its digits read only as a class (the known cache keys on them zeroed)."""
    return ("select" in line or "mca: base:" in line) and mca_verbose_records().search(line) is not None


def _refused(line: str) -> bool:
    """Is the line mlx5_core's report of a command its firmware does not offer (_refused_command)?"""
    return "mlx5_cmd_" in line and _refused_command().search(line) is not None


class ErrorWords:
    """Not an extractor of any event: the words that make a line error-looking put it through the
    prefilter, so that a line no extractor knows can still be listed as unrecognized."""

    name = "unrecognized"
    emits: Mapping[str, frozenset[str]] = {}  # it emits nothing: it collects what no extractor understood
    sources: frozenset[str] = frozenset({"kernel", "syslog", "fabricmanager", "application"})
    # ... and the strerror texts of the errnos only a file system says (catalog/exceptions.yaml `file_only`) and
    # of those on the job's own set-up side on any operation (`bind: address already in use`): a line that
    # holds one (`(errno 28) No space left on device`) is an error however it is worded.
    # ... and an object store's own codes on its side (`rateLimitExceeded`, `SlowDown`: excclass.store_code_words), so
    # a store's error body printed over several lines is read where its code stands alone on a line.
    # `failure` as a noun says a failure as `failed` does: a BMC's event log (`Power Supply #0xc4 | Failure detected ()
    # | Asserted`, openstreetmap/operations#513), the Kubernetes API's Status of a refused call (`"status":"Failure"`,
    # intelligent-machine-learning/dlrover#1436); a setting's value or a label's name that holds it is no failure
    # (_BENIGN: `restartPolicy: OnFailure`, `failure-domain.beta.kubernetes.io/zone`).
    literals: tuple[str, ...] = ("error", "ERROR", "Error", "failed", "FAILED", "Failed", "failure", "Failure",
                                 "FAILURE", "fatal", "Fatal", "FATAL", "Exception", "panic",
                                 *file_only_strerror_texts(),
                                 *sorted({v for w in setup_errno_words() if " " in w for v in (w, w.lower())}),
                                 *store_code_words())
    # ... and the words of a logger's header at an error letter (`: E `, Ray's `0 E `: level_header_literals): a record
    # at the error level whose words hold none of the above (`E ... rendezvous.cc:38] This thread has been waiting ...
    # and may be stuck`) is error-looking by its header; a line that holds such a word and no other, whose head is no
    # such header (`Channel 00 E ...`), is not (`known`).
    words: tuple[str, ...] = literals
    header_words: tuple[str, ...] = tuple(sorted(set(level_header_literals()) - set(literals)))
    literals = (*literals, *header_words)

    def extract(self, line: str, ctx: LineContext) -> Iterator[Never]:
        if self.known(line):
            ctx.claimed = True
        return iter(())

    @staticmethod
    def known(line: str) -> bool:
        """Is the line known context (KNOWN_CONTEXT)? What `extract` decides, from the line alone."""
        # KNOWN_CONTEXT holds no digit and reads digits only as \d / \S / \w, so its answer for a
        # line is its answer for the line with its digits zeroed: the thousands of copies of a
        # line that differ in times and counters cost one search. A line longer than memo.MAX_KEY is
        # searched, not kept: a megabyte key held per line of a configuration dump (a line the
        # template cache keys on its shape as well) is memory, where a copy of it is rare.
        if len(line) > MAX_KEY:
            return (KNOWN_CONTEXT.search(line) is not None or ErrorWords.header_only(line) or _refused(line)
                    or _mca_verbose(line))
        key = digits_zeroed(line)
        known = _KNOWN_CACHE.get(key)
        if known is None:
            # (header_only reads the header's digits as `\d` and its words in every digit: zeroed, the same answer;
            # _refused and _mca_verbose read digits as a class too)
            known = (KNOWN_CONTEXT.search(line) is not None or ErrorWords.header_only(line) or _refused(line)
                     or _mca_verbose(line))
            if len(_KNOWN_CACHE) < _CACHE_MAX:
                _KNOWN_CACHE[key] = known
        return known

    @staticmethod
    def header_only(line: str) -> bool:
        """Did only a level header's word (`header_words`) make the line a candidate, and is its head no header at an
        error letter? Then it is not error-looking: what `extract` claims."""
        return (any(w in line for w in ErrorWords.header_words) and not any(w in line for w in ErrorWords.words)
                and not error_header(line))


MAX_GROUPS: Final = 2000
MAX_OUTPUT: Final = 20
_TEXT_CLIP: Final = 500
# A template is made of a line's first TEMPLATE_SCAN characters: the verdict shows its first _TEXT_CLIP, and the
# masks (a dozen substitutions) cost a line of 1 MB 20 ms where its first 8 kB cost 0.2 ms. Whether a line is
# benign is still read over all of it (one search, linear).
TEMPLATE_SCAN: Final = 8192
_CACHE_MAX: Final = 20000

# Lines that look like errors and are not: counters at zero, "no errors", help text, and the names that hold
# `failure` as a setting's value or a label's name: Kubernetes' restart policy (PodSpec `restartPolicy: OnFailure`,
# a Job's or a training operator's `restartPolicy`) and its deprecated topology labels
# (`failure-domain.beta.kubernetes.io/zone`, kubernetes.io/docs/reference/labels-annotations-taints).
_BENIGN = re.compile(
    r"(?i)\b(?:no|0|zero) (?:errors?|failures?)\b|\berrors?[=:]\s*0\b|\bfailed[=:]\s*0\b"
    r"|--\w*(?:error|fail)\w*|\bignore[_ ]errors?\b|\bOnFailure\b|\bfailure-domain\."
)
# Where _BENIGN reads a digit's value (a count of 0), on a line with its digits zeroed: such a line's
# template is not shared with the lines of its key (`errors=0` is benign, `errors=5` is not). _BENIGN's
# count is one digit standing alone (`\b0 `, `=0\b`), and zeroing keeps lengths, so one `0` alone here:
# `0+` would also take a stamp's milliseconds (`10:00:07,000 ERROR`), and every Python-logging error line
# would be templated line by line. A hex id masked in the shape (memo.line_shape) is 8 or more `0` or
# follows `0x`: never a `0` standing alone.
# ... unless the line says something failed beside them: `Gloo connectFullMesh failed with [...pair.cc:144] no error`
# (the errno's text of a failure that set none) is a failure; `0 errors, 0 failures` alone is a count.
_FAILED_WORD = re.compile(r"(?i)\b(?:error|failed|failure|fatal|exception|panic)\b")
_BENIGN_ZERO = re.compile(r"(?i)\b0 (?:errors?|failures?)\b|\berrors?[=:]\s*0\b|\bfailed[=:]\s*0\b")
_MISS: Final = object()
_COUNTED: Final = object()  # the template cache's mark for a key that _BENIGN_ZERO finds
_MASKS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (re.compile(r"\b[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w./-]+:\d+\]"), "<GLOG>]"),
    (re.compile(r"\[\s*\d+\.\d+\]"), "[<UPTIME>]"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<TIME>"),
    (re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)?\s?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                r"\s+\d{1,2}\s+\d\d:\d\d:\d\d(?:\.\d+)?(?:\s+\d{4})?"), "<TIME>"),
    (re.compile(r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?"), "<TIME>"),
    (re.compile(r"'[^'\n]{0,300}'|\"[^\"\n]{0,300}\""), "<TEXT>"),
    (re.compile(r"(?<![\w>])(?:[A-Za-z]:)?(?:/[\w.\-+@%~]+){2,}/?|(?<![\w>])/[\w.\-+@%~]+\.\w+"), "<PATH>"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[[0-9a-fA-F:]*::[0-9a-fA-F:]*\](?::\d+)?"), "<ADDR>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-fA-F]{8,}\b|\b[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}"
                r"(?:\.[0-7])?\b"), "<HEX>"),
    (re.compile(r"\[rank\d+\]|\brank\s*\d+\b|\bRank\s*\d+\b"), "<RANK>"),
    (re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?"), "<N>"),
    (re.compile(r"\s+"), " "),
)
_KNOWN_CACHE: dict[str, bool] = {}
# The last line shaped and its key (one tuple, so threads never see a half-updated pair): the probe
# and then the template ask for the same line.
_last: tuple[str, str] = ("", "")


def _benign(body: str) -> bool:
    """Does the line only look like an error (_BENIGN's counts at zero, `no errors`, an option's name), with no word of
    a failure outside those words? Its answer for a line is its answer for the line with its digits zeroed but where
    _BENIGN_ZERO finds a count (the template cache keys such lines by their very text)."""
    if _BENIGN.search(body) is None:
        return False
    return _FAILED_WORD.search(_BENIGN.sub(" ", body)) is None


def zeroed(line: str) -> str:
    """The line's shape (memo.line_shape: every ASCII digit made `0`, and the hex letters of its hex ids): the
    key of the template caches here, the one the fold (collect/fold.py) keys a line's copies on.

    The same length, so lines that differ only in the values of their times, counters and hex ids share
    it, and a line whose counter grew a digit does not (the masks read lengths: `\\d{4}-`). One pass in C
    where the module is built: collapsing each digit run to one `0` as well took ten times as long on a
    kernel line as the rest of the key. (KNOWN_CONTEXT's cache keys on the digits alone: it reads letters.)"""
    global _last
    last = _last
    if line is last[0]:
        return last[1]
    key = text_shape(line)
    _last = (line, key)
    return key


@lru_cache(maxsize=4096)
def decided_by_count(key: str) -> bool:
    """Does a line's key (`zeroed`) hold a count whose value decides its template (`errors=0`)? Such lines are
    templated by their very text, one by one."""
    return _BENIGN_ZERO.search(key) is not None


# An offer a fold counts again (collect/fold.py): the body and key of a line read in full, its host, node, rank.
_Repeat = tuple[str, str, str | None, str | None, int | None]


@dataclass(slots=True)
class _Group:
    """The lines of one template, as they come: how many, where, and the earliest."""

    count: int = 0
    where: set[tuple[str | None, str | None, int | None]] = field(default_factory=set)  # node, host, rank
    first: tuple[str, int, str] | None = None  # file, line and text of the earliest line
    first_time: datetime | None = None
    first_source: str = ""  # the source kind of its file


@dataclass(slots=True, frozen=True)
class UnrecognizedGroup:
    """One template of error-looking lines no extractor understood, for the verdict's `unrecognized`."""

    template: str
    count: int
    nodes: list[str]
    file: str
    line: int
    time: datetime | None
    text: str
    source: str = ""  # the source kind of its file (kernel, application, ...)


def _earlier(c: Candidate, time: datetime | None, first: tuple[str, int, str]) -> bool:
    """Is `c` before the group's first line? By time (no time sorts last), then file and line."""
    return _earlier_than(c.time is None, c.time, c.file, c.line, time, first)


def _earlier_than(no_time: bool, t: datetime | None, file: str, line: int, time: datetime | None,
                  first: tuple[str, int] | tuple[str, int, str]) -> bool:
    """_earlier for a line given by its parts (`no_time`: t is None)."""
    if no_time != (time is None):
        return not no_time
    if t is not None and time is not None and t != time:
        return t < time
    return (file, line) < first[:2]


_Where = tuple[str | None, str | None, int | None]  # node, host, rank
_WHERE_MAX: Final = 256  # (node, host, rank) places kept per group


class Folded(NamedTuple):
    """One line shape of a file, as OfferFold folded its offers."""

    seq: int  # the place of its first line among the file's offers
    body: str  # that line's body: the one whose template the cache keeps
    key: str  # zeroed(body)
    lines: int  # how many
    same: bool  # did all its lines have that body?
    where: tuple[tuple[_Where, int], ...]  # distinct places, each with its first line's seq (_WHERE_MAX at most)
    first: tuple[bool, datetime | None, str, int, str, str]  # its earliest line: no time?, time, file, line, text,
    # and its source kind


MAX_FOLDED: Final = _CACHE_MAX  # line shapes one file's OfferFold holds; past them, FoldFull


class FoldFull(Exception):
    """A file offered more line shapes than an OfferFold holds (MAX_FOLDED): the parent reads it instead."""


class OfferFold:
    """Stands in for Unrecognized in a parallel reader's worker (analysis/parallel.py): it folds a file's
    offers by line shape (the template cache's key), so the parent takes a few entries, not a line
    each, and Unrecognized.merge gives what offering the lines one by one would have.

    Lines of one shape get their first line's template (Unrecognized.template), so a shape's count,
    its places and its earliest line are all the parent needs. A shape that _BENIGN_ZERO finds is
    decided line by line (by its text), so its lines fold by their very text. At most MAX_FOLDED shapes
    per file (a million distinct error-looking lines held 1.6 GB here): one more raises FoldFull."""

    def __init__(self) -> None:
        self._entries: dict[str, list[Any]] = {}
        self._n = 0

    def offer(self, c: Candidate, body: str, host: str | None = None) -> None:
        key = zeroed(body)
        counted = decided_by_count(key)
        n = self._n
        self._n = n + 1
        w = (c.node, host, c.rank)
        fold = body if counted else key
        e = self._entries.get(fold)
        if e is None:  # Folded's fields: seq, body, key, lines, same, where, first
            if len(self._entries) >= MAX_FOLDED:
                self._entries, self._n = {}, 0
                raise FoldFull
            self._entries[fold] = [n, body, key, 1, True, {w: n},
                                   (c.time is None, c.time, c.file, c.line, c.text[:_TEXT_CLIP], c.source)]
            return
        e[3] += 1
        if e[4] and body != e[1]:
            e[4] = False
        places = e[5]
        if w not in places and len(places) < _WHERE_MAX:
            places[w] = n
        first = e[6]
        if _earlier_than(c.time is None, c.time, c.file, c.line, first[1], first[2:4]):
            e[6] = (c.time is None, c.time, c.file, c.line, c.text[:_TEXT_CLIP], c.source)

    def can_repeat(self, offer: _Repeat | None) -> bool:
        """May a copy of the line that made `offer` be counted by `repeat`? (Always: entries fold by key.)"""
        return True

    def repeat(self, body: str, key: str, host: str | None, node: str | None, rank: int | None, n: int = 1) -> None:
        """`n` more lines of the shape `key` (a fold's copies of a line offered before, in this file, from the same
        place), their times not read: never the entry's earliest line."""
        e = self._entries[key]
        self._n += n
        e[3] += n
        e[4] = False  # their bodies may differ from the entry's in their digits and hex ids

    def take(self) -> list[Folded]:
        """The entries so far, in the order of their first lines, and a fresh start (the next file)."""
        # A dict keeps insertion order: that of the first lines.
        out = [Folded(e[0], e[1], e[2], e[3], e[4], tuple(e[5].items()), e[6]) for e in self._entries.values()]
        self._entries = {}
        self._n = 0
        return out


class Unrecognized:
    """Collects the error-looking lines no extractor understood (see module docstring)."""

    def __init__(self, hosts: Iterable[str] = ()) -> None:
        # The allocation's names as a trie (lazyre.alternation: the longest first, as the sorted alternation
        # matched): 2,048 names compiled in 19 ms, not 52, in the parent and in each reader process, and a
        # template's substitution 6x faster.
        names = {h for h in hosts if h}
        self._hosts = re.compile(r"\b(?:" + re.alternation(names) + r")\b") if names else None
        self._groups: dict[str, _Group] = {}
        self._cache: dict[str, object] = {}  # a template, None (benign) or _COUNTED
        self._cache_exact: dict[str, object] = {}  # keyed by the text itself (_BENIGN_ZERO)
        self.overflow = 0  # lines whose template was past MAX_GROUPS

    def template(self, body: str, key: str | None = None) -> str | None:
        """The masked template of a line, or None for a benign one; cached by the line's shape
        (`zeroed`: `key`, when the caller has it), so the ten-thousandth copy of a line costs one
        translation and a lookup.

        A key's template is its first line's (in reading order): lines that differ only in the values
        of their digits and hex ids group together, `eth0` and `eth1` under the first one's words. Whether a line
        is benign is never shared: a count of 0 makes one (`errors=0`, `0 errors`) where 5 does not,
        so a line whose key holds such a count is remembered by its very text. The masks read the line's
        first TEMPLATE_SCAN characters (the template's first _TEXT_CLIP are what a verdict shows)."""
        if key is None:
            key = zeroed(body)
        cache = self._cache
        got = cache.get(key, _MISS)
        if got is _COUNTED or (got is _MISS and _BENIGN_ZERO.search(key)):
            # A key of such lines holds _COUNTED itself, so the search runs once per key.
            if got is _MISS and len(cache) < _CACHE_MAX:
                cache[key] = _COUNTED
            key, cache = body, self._cache_exact
            got = cache.get(key, _MISS)
        if got is not _MISS:
            return cast("str | None", got)
        t: str | None = None
        if not _benign(body):
            t = body[:TEMPLATE_SCAN]
            if self._hosts is not None:
                t = self._hosts.sub("<HOST>", t)
            for rx, repl in _MASKS:
                t = rx.sub(repl, t)
            t = t.strip()[:_TEXT_CLIP]
        if len(cache) < _CACHE_MAX:
            cache[key] = t
        return t

    def offer(self, c: Candidate, body: str, host: str | None = None, key: str | None = None) -> None:
        """A line the scanner found error-looking (it holds one of ErrorWords' literals) and no extractor read.

        `key` is `zeroed(body)` when the caller has it (a parallel reader's worker)."""
        t = self.template(body, key)
        if t is None:
            return
        g = self._groups.get(t)
        if g is None:
            if len(self._groups) >= MAX_GROUPS:
                self.overflow += 1
                return
            g = self._groups[t] = _Group()
        g.count += 1
        if len(g.where) < _WHERE_MAX:
            g.where.add((c.node, host, c.rank))
        if g.first is None or _earlier(c, g.first_time, g.first):
            g.first, g.first_time, g.first_source = (c.file, c.line, c.text[:_TEXT_CLIP]), c.time, c.source

    def can_repeat(self, offer: _Repeat | None) -> bool:
        """May a copy of the line that made `offer` be counted by `repeat`: is its template the one the cache
        keeps for its key (the cache had room), not its own text's?"""
        return offer is None or offer[1] in self._cache

    def repeat(self, body: str, key: str, host: str | None, node: str | None, rank: int | None, n: int = 1) -> None:
        """`n` more lines like `body` (same key, same place), as `offer` counts them, their times not read: a
        fold's copies (collect/fold.py) are never their group's earliest line."""
        t = self.template(body, key)
        if t is None:
            return
        g = self._groups.get(t)
        if g is None:
            self.overflow += n  # past MAX_GROUPS when the line read in full came
            return
        g.count += n
        if len(g.where) < _WHERE_MAX:
            g.where.add((node, host, rank))

    def merge(self, entries: list[Folded]) -> bool:
        """Take one file's offers as an OfferFold folded them: the result of offering its lines one
        by one, in their order. False, with nothing taken, where a fold cannot stand for its lines:
        when the template cache may fill up during the file (a line shape it then does not hold gets
        the template of each of its lines, not its first line's) and a shape's lines differ."""
        if not entries:  # (most of a many-rank job's files offer nothing)
            return True
        cache = self._cache
        new = {e.key for e in entries if e.key not in cache}
        if len(cache) + len(new) > _CACHE_MAX and any(e.key in new and not e.same and e.lines > 1 for e in entries):
            return False
        where: dict[str, list[tuple[int, _Where]]] = {}
        for e in entries:  # in the order of their first lines: the cache and the groups fill as they would
            t = self.template(e.body, e.key)
            if t is None:
                continue
            g = self._groups.get(t)
            if g is None:
                if len(self._groups) >= MAX_GROUPS:
                    self.overflow += e.lines
                    continue
                g = self._groups[t] = _Group()
            g.count += e.lines
            where.setdefault(t, []).extend((seq, w) for w, seq in e.where)
            no_time, time, file, line, text, source = e.first
            if g.first is None or _earlier_than(no_time, time, file, line, g.first_time, g.first):
                g.first, g.first_time, g.first_source = (file, line, text), time, source
        for t, seen in where.items():
            # A place joins its group at its first line while the group holds fewer than _WHERE_MAX.
            places = self._groups[t].where
            for _, w in sorted(seen, key=lambda p: p[0]):
                if len(places) >= _WHERE_MAX:
                    break
                places.add(w)
        return True

    def places(self) -> Iterator[_Where]:
        """Each group's distinct places (node, host, rank): where its lines were printed, as `groups` reads them."""
        for g in self._groups.values():
            yield from g.where

    def groups(self, node_of: Callable[[str | None, str | None, int | None], str | None],
               limit: int = MAX_OUTPUT) -> list[UnrecognizedGroup]:
        out: list[UnrecognizedGroup] = []
        for t, g in self._groups.items():
            assert g.first is not None
            nodes = sorted({n for w in g.where if (n := node_of(*w))})
            file, line, text = g.first
            out.append(UnrecognizedGroup(t, g.count, nodes, file, line, g.first_time, text, g.first_source))
        out.sort(key=lambda u: (-u.count, u.template))
        return out[:limit]
