"""Folding a chatty file's copies of a line: the ten-thousandth copy costs a lookup, not an extraction.

A dataloader that prints "Error fetching batch N" two million times, an NCCL
socket retrying every few milliseconds, a NIC driver's harmless warning on
every poll: each copy passes the prefilter and used to go through the whole
extraction (prefix layers, timestamp, a dozen extractors, the unrecognized
templates) only to add one to a count the verdict already holds. This module
lets the line scanner count such copies instead, under rules that keep the
verdict what reading every copy gives:

- A line's *shape* is memo.line_shape: its bytes with every digit made `0`,
  and the hex letters of its hex ids (a hash, a UUID, `0x...`, a PCI address
  where the template's <HEX> takes it whole) too (the same length; the other
  letters the line's). It is the one masking the
  unrecognized-line templates key on too. Shapes are followed per file, so
  per stream of state.
- The first copies of a shape are read in full, and each reading's *outcome*
  is kept: the event signatures its drafts have (kind, source, file, node,
  rank, device and the key field: EventStore's) with their weights, whether
  an extractor claimed the line, and the unrecognized group it was offered
  to. Copies that read to one outcome form a variant of the shape (one per
  GPU of an NCCL line, say). A variant folds only after WARM copies read to
  its outcome, and only while every signature of that outcome is past the
  EventStore's cap: a copy is then counted on the last kept event of each
  (an address's signature only counted: EventStore.addresses),
  exactly as a copy read in full past the cap is, and its other fields (a
  pid) are never seen, whether read or not.
- Each digit (and hex digit of a hex id) of a folded copy must lie between
  the least and the greatest value that byte had in the copies read to the
  outcome (tracked byte by byte). A copy with any other digit (an Xid 79 after thirty Xid 13 of the
  same shape, a rank outside the ones seen, an exit code, a count of 0) is
  read in full; if its outcome is the same the range grows to take it in,
  else it reads to another variant. Two variants whose ranges meet at every
  byte could both claim a line, so their shape is then read line by line.
- Extractors keep per-stream state keyed by line numbers (the last NCCL
  report, a traceback in progress). So the last folded copy before a line
  that does not fold, and the file's last, are read in full instead of
  counted: the state then holds what the last copy wrote, as when every
  copy is read. A line an extractor claimed (a traceback's header or frame,
  a torchrun block: a record followed across lines) is never folded. And
  any line read in full whose outcome is new for its shape (a new shape, a
  real error) or that was claimed may have changed the state the folded
  shapes were checked against: each shape is read in full once more, with
  the same outcome, before it folds again (an *epoch*). Not a variant whose
  line was read by its body alone (`_Variant.free`): no copy of it is given
  that state, so its outcome does not hang on it. A line whose reading looked
  a value its digits spell up in that state (a GHES record's number while a
  record is open: `LineContext.keyed`) is not foldable, nor, from then on in
  its file, is the variant it read to: a copy with other digits may not read
  as it did.
- A folded copy's time is not read where the line starts with a stamp whose
  bytes order as its times (zone-less ISO, syslog): an unrecognized line's
  copies then fold only where their stamp is not earlier than the variant's
  first copy's (the earliest of the copies read to the variant or to its kin,
  whose offers differ in the host alone and share its group: a copy read
  with an earlier stamp, in a log whose clock was set back, lowers it). Any
  other unrecognized line (no stamp of its own: DDP's
  grad-strides warning after a stamped step line; or another form) is
  `timed`: a copy's time is worked out as reading it would (its own stamp,
  else the walk back to the nearest one, in C), and it folds only where it is
  not earlier than every copy read to the variant (in the dense loop in C
  too, where _lines.c reads that stamp as TimeParser does: zone-less and
  bracketed ISO, glog's and syslog's in the year `clock` gives, UCX's Unix
  time in a zone of one offset, behind Open MPI's tag too, and tells the
  lines that read as none: `_lines.stamp_local_us`; a copy no stamp lies
  before, back to the line read last, takes that line's time: fold_run's
  `before`). Either way none of
  them can be its group's earliest line.
- A copy is counted only where its stamp reads as a time: a shape one of whose lines read to no time (a stamp
  outside the years, or of no such date: TimeParser.unread) is read line by line in its file (`unstable`). The
  copies read before had stamps of years 1000-8999 (a thousands digit 1-8), and a counted copy's digits lie within
  theirs: so the stamps outside the years are counted (`errors`) where every candidate is read and where copies
  are counted alike. (Not at the range's very edge: 1000-01-01 or 8999-12-31 in a zone whose offset takes it
  across.)
- Lines found to hold none of the prefilter's words make their shape quiet
  where the shape tells that every line of it holds none (`quiet_add`): the
  dense loop passes over them in C, as the prefilter would.
- A copy is known by its shape alone (no search for the prefilter's words) where every line of the shape has
  its variant's hits (`same_hits`), or where the shape's hex ids may spell a word with hex letters alone (EDAC's
  `page:0x...` and `EDAC `) and the copy spells none of them there (`_at_risk`, `_Variant.risk`: the first copy
  spelled none either, and no other place of the shape holds a word in one line and not in another).
- The ready variants are put in `table`, which the C loops read, as their copies come (`table_add`): it stays
  across lines read in full while the epoch stays (a read takes out the entry of the variant whose ranges, floor
  or lead it changed, which an entry narrower than its variant would otherwise keep from C, and the entries of
  a shape no longer stable), its free variants across epochs too, and each shape's entries are indexed by the
  bytes all of them hold fixed (`_Tabled`: a host's digits, where a shape has an entry per host), so a line is
  compared with the entries of its own host's bytes only (a variant that would put many entries under one key
  stays out: MAX_BUCKET).
- A file's first chunk in which no shape has more than WARM candidate lines
  cannot fold a copy: its candidates are read in full without the shapes'
  bookkeeping (`may_count`, `pass_on`), and the fold starts on the next
  chunk. A rank log of a many-rank job holds each of its few templates once.

- What a file's fold learned of a variant (WARM copies, or more, of the shape with these hits read to one
  outcome, their digits in these ranges) is kept for the analysis (`Lessons`: per Extraction, so per process,
  and per scanner kind: source, prefilter words, zone, year, srun labels), its outcome *relative to the file*
  (`relative`: the file and node an event's signature and an offer name are the file's own, and an offer's
  host that is the file's node reads as that; a rank, a device, any other host stay as read). A later file
  still reads the shape's first copy in full (its first line is never folded, and its state, floor and stamp
  are its own); where that copy's relative outcome is a lesson's, the new variant starts with the lesson's
  reads and digit ranges, less the bytes where the copy lies outside them (a host's digits: those hold the
  copy's value alone), and its next copies fold from the second on (past the store's cap, which is per file:
  the signatures name the file). A shape found unstable in a file, or whose lessons of two outcomes could
  both claim a line, is not taught again (`Lessons.spoiled`): each file learns it anew. The quiet shapes
  (`quiet_add`: a property of the shape and the prefilter's words) are the kind's too, and a file starts in the
  scanner's dense loop where the last file of its kind ended in it and most of its first lines are of shapes the
  kind knows (`LineFold.looks_dense`: speed alone). A first chunk read through the prefilter that ends so
  teaches the kind the quiet shapes of its first lines (`quiet_from`: a line at no hit's start holds no word), as
  the dense loop would have: else a kind whose files are each one chunk never learned any, and never started
  in the dense loop. The sparse path's prefilter passes the quiet shapes' lines over too (scan.py's
  `hit_lines`, `_lines.unquiet`: the same hits), and a chunk it scans whole teaches a sample spread over it
  (`quiet_spread`: a rank log's set-up first, its training steps after).

- One file that multiplexes many hosts or ranks (a central syslog's `Dec  4 10:00:01 node-0123 kernel: ...`, an
  mpirun output's `[1,N]<stderr>:`) holds a shape's lines with one outcome per host or rank the line names, far
  more than MAX_VARIANTS, each to be warmed on its own. Outcomes that differ only in the host (an offer's) or the
  ranks (a signature's, an offer's) that the line itself spells (`_own`: those values made `_LINE`, with the bytes
  that spell them) are *kin*: their reads and digit ranges are pooled per shape (`_Variant.kin`), and a new host's
  variant (its first copy read in full, as ever: its place, its state) starts with them, less the bytes that spell
  its own host or rank, which hold its copy's alone (`_borrow`; again when the pool's ranges grew and hold a later
  copy): no copy of another host or rank lies within it, so each copy still counts on its own host's variant and
  signatures. Kin are bounded by MAX_KIN per shape (MAX_VARIANTS bounds the others), and a shape's ranges are
  compared only within an index key (variants of two keys differ at a byte both hold fixed).
- A line read by its body alone (no per-stream state given to an extractor: `Reading.stream` None) moved no state
  the folded shapes were checked against: a new shape or outcome of such a line does not make them read again,
  nor does a kin's whose line was given the same stream's state.

Off with the other fast paths (`FIRSTFAULT_FASTPATH=0`): tests/collect/test_fold.py
compares the two on chatty files built to break each rule above.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import TYPE_CHECKING, Final, Protocol

from firstfault.extract.memo import ALL_HEX_ZERO, hex_spans, line_shape
from firstfault.extract.memo import ZERO_DIGITS as _ZERO

if TYPE_CHECKING:
    from firstfault.collect.events import EventCopy, EventStore
    from firstfault.extract.base import Candidate
    from firstfault.extract.unrecognized import Unrecognized

WARM: Final = 16  # copies read in full to one outcome before that variant of the shape folds
# Copies read in full in the file, to one outcome and to the same events but for their line, time and text, before
# that variant's copies below the store's cap are added as those events (LineFold.copy_events) instead of read.
SAME_READS: Final = 4
MAX_SHAPES: Final = 4096  # shapes followed per file; lines of further shapes are read in full
MAX_VARIANTS: Final = 16  # outcomes followed per shape
MAX_KIN: Final = 4096  # outcomes followed per shape that differ only in the host or rank the line names (_own)
MAX_BYTES: Final = 8 << 20  # the shapes' and variants' line bytes kept per file (each holds one line or two)
MAX_LINE: Final = 2000  # bytes: longer lines are read in full (their shape is not kept)
MAX_BUCKET: Final = 32  # table entries C compares a line with, under one key of a shape's index (_Tabled)
MAX_RISK: Final = 32  # places and literals at which a shape's hex ids may spell a prefilter word, checked per copy

# An EventStore signature with the weight a copy adds to it.
Signature = tuple[tuple[object, ...], int]
# The outcome of reading one line, to compare copies: what a copy past the store's cap leaves (its
# signatures with their weights), claimed, and the unrecognized offer (its key, host, node, rank) or None.
Outcome = tuple[tuple[Signature, ...], bool, tuple[object, ...] | None]


class Reader(Protocol):
    """What the folder reads a line through (collect/scan.py's Extraction): the folder sits below the scanner
    and knows the extraction by this alone."""

    @property
    def unrecognized(self) -> Unrecognized: ...

    def add_events(self, c: Candidate, store: EventStore) -> None: ...

    def add_events_read(self, c: Candidate, store: EventStore) -> Reading: ...


@dataclass(slots=True)
class Reading:
    """What the extraction reports about one line it read in full (Extraction.add_events_read)."""

    outcome: Outcome
    offer: tuple[str, str, str | None, str | None, int | None] | None  # body, key, host, node, rank
    foldable: bool  # False: copies of this line must each be read (a count of 0 decides its template)
    # The per-stream state the extractors were given (the very dict: Extraction keeps one per stream), or None:
    # none was (the line was read by its body alone). Two lines with one stream moved the same state.
    stream: object = None
    # Its events less their line, time and text (one per signature, in order): a copy of the line below the store's
    # cap adds these at its own place (LineFold.copy_events).
    events: tuple[EventCopy, ...] = ()

    @property
    def signatures(self) -> tuple[Signature, ...]:
        return self.outcome[0]


@dataclass(slots=True)
class _Variant:
    """Copies of one shape that read to one outcome (a shape may have several: one per GPU of an NCCL line)."""

    rep: int  # the bytes of the first copy read to this outcome, as one integer
    hits: list[int] | None  # the prefilter's literal hits on it
    reading: Reading
    reads: int  # copies read in full to this outcome
    size: int  # the line's length in bytes (the shape's)
    epoch: int  # the file's epoch when a copy was last read to this outcome
    same_hits: bool  # every line of its shape has its prefilter hits (the shape holds no digit-bearing literal)
    # Where not (a hex id of the shape may spell a literal: LineFold._at_risk), and its first copy spelled none
    # there: each place and literal; a copy that spells none of them there has its hits too (None: not so).
    risk: tuple[tuple[int, bytes], ...] | None = None
    past_cap: bool = False  # every signature of the outcome is past the store's cap (once true, always)
    counted: int = 0  # copies counted and not yet added to the store and the unrecognized groups
    ready: int = -1  # the epoch in which it was last found ready to fold (WARM reads, past the cap, ...)
    tabled: int = -1  # the LineFold.table generation it is in (-1: none)
    entry: tuple[_Tabled, _Entry] | None = None  # its entry there, and its shape's _Tabled (while tabled)
    # Byte by byte, the least and the greatest value each digit had in the copies read to this outcome (the
    # other bytes are the shape's, the same in every copy); and 0x80 in every byte.
    lo: int = 0
    hi: int = 0
    top: int = 0
    hi_top: int = 0  # hi | top
    fixed: int = 0  # 0xff in the bytes where lo == hi (a digit that never varied), 0 elsewhere
    # For an unrecognized line: the length of the stamp it starts with, whose bytes order as its times do (0:
    # none such, and its copies are all read), and the earliest stamp of the copies read to it (of its kin's too,
    # which share its group: a kin pool's lead_rep is theirs). A copy whose stamp is earlier is read: it may be
    # its group's earliest line, and a folded copy's time is not read.
    lead: int = 0
    lead_rep: bytes = b""
    # For an unrecognized line without such a stamp (`timed`): the earliest time a copy read to this outcome
    # had (None sorts last, as in the groups; `floor_set` False: none read yet). A copy's time is then worked
    # out as reading it would (its own stamp, else the walk back to one: LineFold.fold's caller), and a copy
    # earlier than the floor is read.
    timed: bool = False
    floor: datetime | None = None
    floor_set: bool = False
    # The floor in _lines.c's count (LineFold.floor_count), and the floor it was worked out from.
    floor_us: int | None = None
    floor_of: object = None
    # The variants of its shape whose outcomes differ from this one's in the host or rank the line itself names
    # alone (_own: a file that multiplexes hosts or ranks), pooled: their reads and digit ranges (a _Variant that
    # is in no index, its `own` 0; None while this one is the first and only of them), and the bytes of the line
    # that name this variant's own host or rank (0xff).
    kin: _Variant | None = None
    own: int = 0
    # Its line was read by its body alone (Reading.stream None: no extractor was given per-stream state), and so is
    # every copy (the same hits, the same dispatch): its outcome does not hang on that state, so the epochs (moves
    # of the state) do not make it read again. Its `epoch` and `ready` are then 0, not the file's epoch.
    free: bool = False
    # A kin pool's lo and hi as bytes that change in place as it widens (None until a table entry reads them: the
    # entry's `kin`, which _lines.c holds a copy within where it lies outside the variant's own ranges).
    lo_b: bytearray | None = None
    hi_b: bytearray | None = None
    lead_b: bytearray | None = None  # its lead_rep, the same way (_pool_lead)
    # The copies read to it in this file whose events were its first's but for their line, time and text (-1: one
    # was not, or its line gives no event, or an offer, or a claim: its copies below the cap are each read), and
    # 0xff in the bytes in which they all had its first copy's (rep's) value: the digits its events were seen not
    # to hang on are the others. Once SAME_READS were read, a copy it holds (its ranges: lessons' included) that has
    # rep's value in those bytes gives those events at its own place (LineFold.copy_events) while its signatures
    # are below the store's cap.
    same: int = 0
    same_keep: int = 0

    def __post_init__(self) -> None:
        self.free = self.reading.stream is None
        if self.free:
            self.epoch = 0
        self.lo = self.hi = self.rep
        self.top = int.from_bytes(b"\x80" * self.size)
        self.hi_top = self.hi | self.top
        self.fixed = (1 << 8 * self.size) - 1
        r = self.reading
        if r.events and r.offer is None and not r.outcome[1] and r.foldable:
            self.same, self.same_keep = 1, self.fixed
        else:
            self.same = -1

    def same_again(self, r: Reading, x: int) -> None:
        """A copy with bytes `x` was read to this outcome, giving `r`: are its events the first's but for their line,
        time and text? The bytes in which it differs from the first are then ones they were seen not to hang on."""
        if self.same <= 0:
            return
        if r.events != self.reading.events:
            self.same = -1
            return
        self.same += 1
        # 0xff in each byte where x differs from rep: the two differ below 0x80 (a digit or a hex id's letter; the
        # other bytes are the shape's), so adding 0x7f sets a byte's 0x80 exactly where it is not 0, with no carry.
        d = x ^ self.rep
        self.same_keep &= ~(((d + (self.top >> 7) * 0x7F) & self.top) >> 7) * 0xFF

    def gives_same(self, x: int) -> bool:
        """May the copy with bytes `x` (one the variant holds) be taken to give its first copy's events at its own
        line, time and text: SAME_READS copies read in this file gave them, and x has the first copy's value in every
        byte in which those all had it."""
        return self.same >= SAME_READS and not (x ^ self.rep) & self.same_keep

    def widen(self, x: int) -> None:
        """Take in a copy read to this outcome (its bytes `x`): each of its digits is now a value its position
        had. Byte by byte, with the sign trick of holds(), in a few operations on the whole line."""
        top, full = self.top, (1 << 8 * self.size) - 1
        lower = ((((self.lo | top) - x) & top) >> 7) * 0xFF  # 0xff where x <= lo
        self.lo = (x & lower) | (self.lo & (full ^ lower))
        higher = ((((x | top) - self.hi) & top) >> 7) * 0xFF  # 0xff where x >= hi
        self.hi = (x & higher) | (self.hi & (full ^ higher))
        self.hi_top = self.hi | top
        self.fixed = ((((self.lo | top) - self.hi) & top) >> 7) * 0xFF  # 0xff where lo >= hi: lo == hi
        if self.lo_b is not None and self.hi_b is not None:  # (a pool whose ranges table entries read)
            self.lo_b[:] = self.lo.to_bytes(self.size)
            self.hi_b[:] = self.hi.to_bytes(self.size)

    def after(self, t: datetime | None) -> bool:
        """May a copy of time `t` be counted: is it not earlier than every copy read to this outcome (a group's
        earliest line is by time, None last, then by file and line: a later line of this file with the floor's
        time is not earlier either)?"""
        if t is None:
            return True
        return self.floor is not None and t >= self.floor

    def take_time(self, t: datetime | None) -> None:
        """A copy of time `t` was read to this outcome: the floor is the earliest such time."""
        if not self.floor_set:
            self.floor, self.floor_set = t, True
        elif t is not None and (self.floor is None or t < self.floor):
            self.floor = t

    def holds(self, x: int) -> bool:
        """Is every byte of the copy with bytes `x` within the values its position had (lo <= x <= hi, byte by
        byte: with 0x80 set in every byte of the greater side, a byte's difference keeps its 0x80 exactly when
        it is not negative, and never borrows from the next; every byte of a line here is below 0x80 or the
        same in lo, hi and x, the shape's)."""
        top = self.top
        return ((x | top) - self.lo) & (self.hi_top - x) & top == top


# Stamps at the very start of a line (its shape's bytes) whose bytes, in lines of one shape, order as their
# times do: zone-less ISO with or without a fraction (the bundle's one zone), and syslog's (one month: the
# letters are the shape's).
_MONTHS: Final = (b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec")
_LEADING: Final = (b"0000-00-00 00:00:00", b"0000-00-00T00:00:00",
                   *(m + day + b" 00:00:00" for m in _MONTHS for day in (b" 00", b"  0")))


def _leading_stamp(shape: bytes) -> int:
    """The length of the stamp a shape starts with, when its bytes order as its times (0: none such)."""
    for head in _LEADING:
        if shape.startswith(head):
            n = len(head)
            if shape[n:n + 1] in (b",", b".") and shape[n + 1:n + 2] == b"0":  # a fraction: its digits too
                n += 1
                while shape[n:n + 1] == b"0":
                    n += 1
            # A zone or another digit after it would order otherwise (`+02:00` is earlier than `+01:00`).
            return n if shape[n:n + 1] in (b" ", b"\t", b"]", b"|") else 0
    return 0


# An entry of LineFold.table: a ready variant's lo and hi (its byte ranges), lead_rep, the variant and its floor in
# _lines.c's count (a timed variant's; None: not timed); and for a variant whose hits a hex id may change, its risk
# (a copy that spells one of those literals at its place is not its copy: Python looks it up and searches it), else
# None where a seventh follows: for a variant of a shape whose every variant is a kin of one pool (_Shape.mux), the
# pool's lo and hi (bytearrays it widens in place), the bytes of the variant's own host or rank (0xff) and the pool's
# lead_rep (a bytearray too: _pool_lead): a copy that lies within the pool's ranges there and the variant's own bytes
# elsewhere is its copy, as fold_copy's borrow of its kin's ranges would find, and so is one whose stamp is not
# earlier than the pool's earliest (fold_copy takes the pool's lead for the variant's: a clock that went back).
_Risk = tuple[tuple[int, bytes], ...]
_Entry = (tuple[bytes, bytes, bytes, "_Variant", int | None]
          | tuple[bytes, bytes, bytes, "_Variant", int | None, _Risk]
          | tuple[bytes, bytes, bytes, "_Variant", int | None, _Risk | None,
                  tuple[bytearray, bytearray, bytes, bytearray]])
# bytes.translate table: 0xff for the byte `0` (a shape's digit or hex id letter), 0 for every other.
_ZERO_AT: Final = bytes(0xFF if b == 0x30 else 0 for b in range(256))


@lru_cache(maxsize=1024)
def _places(fixed: int, size: int) -> tuple[tuple[int, ...], list[tuple[int, int]], bytes]:
    """The places 0xff in `fixed` (a line of `size` bytes) holds, those places as runs of consecutive ones, and as
    _lines.c reads them (2 bytes each, little-endian): once per analysis for a shape's table entries, which each
    file's table builds again (a kernel log's shapes on every node). The runs' list is shared: read, never changed."""
    at = tuple(i for i, b in enumerate(fixed.to_bytes(size)) if b)
    runs: list[tuple[int, int]] = []
    for i in at:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return at, runs, b"".join(i.to_bytes(2, "little") for i in at)


class _Tabled:
    """One shape's entries in LineFold.table, by the bytes of a line at the places where every entry holds its
    digit (or hex letter) fixed (lo == hi: the digits of the host or rank a line of a multiplexed file names, of
    which a shape holds one entry per host): `_lines.c` looks a line up by them, so that it compares its ranges
    with the one or few entries a line of that host can be a copy of, not with the shape's hundreds. Every entry
    that holds a line is under that line's key (its bytes there are the entry's lo, which is its hi)."""

    __slots__ = ("at", "fixed", "index", "n", "refused", "runs", "shape", "value", "zero")

    def __init__(self, key: bytes, fixed: int) -> None:
        self.shape = key
        self.n = 0  # entries
        self.refused: set[int] = set()  # the ids of variants kept out (LineFold.table_add; variants outlive this)
        self.zero = int.from_bytes(key.translate(_ZERO_AT))  # 0xff where the shape has a `0`: the bytes that vary
        self.index: dict[bytes, list[_Entry]] = {}
        self.fixed = -1
        self.at: list[int] = []
        self.runs: list[tuple[int, int]] = []  # `at` as runs of consecutive places (a host's digits: one run)
        self.value: tuple[bytes, dict[bytes, list[_Entry]]] = (b"", self.index)
        self.rekey(fixed, len(key))

    def rekey(self, fixed: int, size: int) -> None:
        """Index by the bytes 0xff in `fixed` holds (within the shape's `0` bytes), from now on: the entries again
        under their keys; `value` is the new (offsets, index) for LineFold.table."""
        fixed &= self.zero
        self.fixed = fixed
        at, self.runs, offsets = _places(fixed, size)
        self.at = list(at)
        entries = [e for es in self.index.values() for e in es]
        self.index = {}
        for e in entries:
            self.index.setdefault(self.key(e[0]), []).append(e)
        self.value = (offsets, self.index)

    def key(self, line: bytes) -> bytes:
        """The index key of a line (or an entry's lo) of this shape: its bytes at `at`, a slice per run (a line of a
        multiplexed file is looked up again at each borrow of its kin's ranges: fold_copy)."""
        runs = self.runs
        if len(runs) == 1:
            a, b = runs[0]
            return line[a:b]
        return b"".join([line[a:b] for a, b in runs])


class _Shape:
    """The variants of one shape, indexed by the bits none of them lets vary."""

    __slots__ = ("born", "by_outcome", "fixed", "index", "kin", "kin_tabled", "last", "mux", "mux_b", "stable",
                 "variants")

    def __init__(self) -> None:
        self.variants: list[_Variant] = []
        self.by_outcome: dict[Outcome, list[_Variant]] = {}  # the variants, by outcome (each of one hits)
        self.kin: dict[tuple[object, ...], _Variant] = {}  # _Variant.kin, by _own's outcome and the hits
        self.born = 0  # the variants that are kin of an earlier one (MAX_KIN; MAX_VARIANTS bounds the others)
        self.fixed = -1  # the bytes no variant lets vary (their fixed, together)
        self.index: dict[int, list[_Variant]] = {}
        self.last: _Variant | None = None  # the variant a copy was last counted on (looked at first)
        # False: copies with the same bits read to different outcomes (the outcome hangs on the state, or the
        # time, not on the line alone): the shape's copies are all read, in this file.
        self.stable = True
        # Where every variant is a kin (of one pool: one family, LineFold.table_add checks) with the same own bytes,
        # each holding them fixed: those bytes (their `own`), as bytes in mux_b; 0 where not so (for good, in this
        # file); -1 before the first variant. Two such variants differ at a byte each holds fixed (they name two
        # hosts or ranks there), so no range of one, nor its borrow of the pool's, meets another: _lines.c may
        # then hold a copy within the pool's ranges as the variant's (the borrow fold_copy would make), and
        # `kin_tabled` says an entry was so put in the table (taken out when `mux` becomes 0).
        self.mux = -1
        self.mux_b = b""
        self.kin_tabled = False

    def reindex(self) -> None:
        fixed = -1
        for v in self.variants:
            fixed &= v.fixed
        self.fixed = fixed
        self.last = None
        self.index = {}
        for v in self.variants:
            self.index.setdefault(v.lo & fixed, []).append(v)
        # Two variants whose copies could be one line (their ranges meet at every byte): which outcome such a
        # line reads to is not told by its bytes. Two of different index keys differ at a byte each holds fixed,
        # so they cannot meet: only those of one key are compared (a shape with a variant per host the line
        # names has hundreds, each under a key of its own).
        for vs in self.index.values():
            if len(vs) > 1 and any(_meet(v, w) for i, v in enumerate(vs) for w in vs[i + 1:]):
                self.stable = False
                self.index = {}
                return

    def add(self, v: _Variant) -> None:
        """Take in a new variant `v` (reindex, for one more: where the bytes no variant lets vary stay those, `v`
        goes under its key, and only that key's variants can meet it)."""
        self.variants.append(v)
        self.by_outcome.setdefault(v.reading.outcome, []).append(v)
        if self.mux == -1:
            self.mux = v.own if v.own and v.fixed & v.own == v.own else 0
            self.mux_b = self.mux.to_bytes(v.size) if self.mux else b""
        elif self.mux and (v.own != self.mux or len(self.kin) > 1):  # (another family: LineFold._read adds it first)
            self.mux = 0
        self.changed(v)

    def changed(self, v: _Variant) -> None:
        """Variant `v` is new or its ranges grew: reindex. Where the bytes no variant lets vary stay those, the
        index key of the others, and of `v` (its bytes there were fixed and still are), stay theirs."""
        if self.mux and v.fixed & self.mux != self.mux:
            self.mux = 0
        fixed = self.fixed & v.fixed
        if fixed != self.fixed:
            self.reindex()
            return
        self.last = None
        vs = self.index.setdefault(v.lo & fixed, [])
        if not any(w is v for w in vs):
            vs.append(v)
        if any(w is not v and _meet(v, w) for w in vs):
            self.stable = False
            self.index = {}
            self.index = {}


def _count(lt: datetime) -> int:
    """A local date and time of day as _lines.c counts it: microseconds since 0001-01-01."""
    return (lt.toordinal() * 86400 + lt.hour * 3600 + lt.minute * 60 + lt.second) * 1_000_000 + lt.microsecond


# Zone names of one UTC offset (IANA's aliases of UTC; Etc/GMT+N is N hours behind it, its sign POSIX's).
_UTC_NAMES: Final = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/GMT", "GMT", "Etc/GMT0", "GMT0",
                               "Etc/GMT+0", "Etc/GMT-0", "GMT+0", "GMT-0", "Etc/Greenwich", "Greenwich",
                               "Etc/Universal", "Universal", "Etc/Zulu", "Zulu"})


def fixed_offset_us(tz: tzinfo | None) -> int | None:
    """The one UTC offset of a zone that has one (a `datetime.timezone`, UTC's aliases, `Etc/GMT+N`), in
    microseconds, else None: _lines.c then reads a Unix time (UCX's `[1506867524.064665]`) as the local count
    fold._local_us gives its instant (a zone with two offsets leaves such stamps to Python)."""
    if tz is None:
        return None
    if isinstance(tz, timezone):
        off = tz.utcoffset(None)
        return (off.days * 86400 + off.seconds) * 1_000_000 + off.microseconds
    name = str(getattr(tz, "key", ""))
    if name in _UTC_NAMES:
        return 0
    if name.startswith("Etc/GMT") and name[7:8] in ("+", "-") and name[8:].isdigit() and name[8:].isascii():
        hours = int(name[8:])
        return (-hours if name[7] == "+" else hours) * 3600 * 1_000_000 if hours <= 14 else None
    return None


@lru_cache(maxsize=64)  # asked once per file, of the same three values for all of an analysis's files
def yearless_clock(tz: tzinfo | None, year: int | None,
                   window_end: datetime | None) -> tuple[int, int, int | None] | None:
    """The year context _lines.c reads a yearless stamp with (its `clock`): TimeParser.year, and window_end plus
    half a year (TimeParser._yearless's cut: a stamp after it, read in that year, is read in the year before) as
    local microseconds (_count); C decides only where a stamp is two days or more away from the cut, so that the
    zone's offset at either instant does not matter. Third, the zone's one UTC offset (fixed_offset_us) or None.
    None where any of the first two is unknown."""
    if tz is None or year is None or window_end is None:
        return None
    try:
        return year, _count((window_end + timedelta(days=180)).astimezone(tz)), fixed_offset_us(tz)
    except OverflowError:  # a window's end near datetime's own limits: Python reads such stamps
        return None


def _spells_none(raw: bytes, risk: tuple[tuple[int, bytes], ...]) -> bool:
    """Does line `raw` spell none of `risk`'s literals at their places (LineFold._at_risk)?"""
    return all(not raw.startswith(lit, i) for i, lit in risk)


def _meet(v: _Variant, w: _Variant) -> bool:
    """Do the byte ranges of two variants of one shape meet at every byte (v.lo <= w.hi and w.lo <= v.hi)?"""
    top = v.top
    return ((w.hi | top) - v.lo) & top == top and ((v.hi | top) - w.lo) & top == top


# What relative() puts where an outcome names the file's own node (an offer's host that is it).
_OWN: Final = ("the file's node",)  # a tuple: no host an extractor reads is one


def relative(outcome: Outcome) -> tuple[object, ...]:
    """`outcome` as any file would have it, for Lessons: an event signature's file and node, and an offer's node,
    are always the file's own (the line's context), so they are left out; an offer's host that is the file's node
    is `_OWN`. The rest (a rank, a device, another host) stays as read: a lesson with it fits no other value."""
    sigs, claimed, offer = outcome
    rel_sigs = tuple(((k[0], k[1], *k[4:]), w) for k, w in sigs)
    if offer is None:
        return rel_sigs, claimed, None
    key, host, node, rank = offer
    return rel_sigs, claimed, (key, _OWN if host is not None and host == node else host, rank)


# What _own puts where an outcome names a host or rank that the line itself spells.
_LINE: Final = ("the line's own",)  # a tuple: no host or rank an extractor reads is one


def _spans(raw: bytes, text: bytes, number: bool) -> int:
    """0xff in the bytes of every place `raw` spells `text` (a number's: not inside a longer number), 0 elsewhere
    (int.from_bytes's order: the line's first byte the most significant)."""
    mask, n, size = 0, len(text), len(raw)
    i = raw.find(text)
    while i >= 0:
        # (raw[-1:0], before the first byte, is empty: no digit)
        if not number or not (raw[i - 1:i].isdigit() or raw[i + n:i + n + 1].isdigit()):
            mask |= ((1 << 8 * n) - 1) << 8 * (size - i - n)
        i = raw.find(text, i + 1)
    return mask


def _pooled(v: _Variant, x: int) -> bool:
    """Would variant `v` hold the copy `x` after borrowing its kin pool's ranges (fold_copy's borrow, which _lines.c
    makes for a table entry that carries the pool)?"""
    kin = v.kin
    return kin is not None and kin.reads >= WARM and not (x ^ v.lo) & v.own and kin.holds(x)


def _pool_lead(kin: _Variant, rep: bytes) -> None:
    """A kin pool's earliest stamp is now `rep` (its lead_rep; and lead_b, which table entries read, where made)."""
    kin.lead_rep = rep
    if kin.lead_b is not None:
        kin.lead_b[:] = rep


def _borrow(v: _Variant, kin: _Variant, x: int) -> None:
    """Variant `v` (its copy `x` just read) starts with its kin's reads and digit ranges, less the bytes that spell
    its own host or rank (v.own), which hold x's alone: so no copy of another host or rank lies within it."""
    own = v.own
    v.lo = (kin.lo & ~own) | (x & own)
    v.hi = (kin.hi & ~own) | (x & own)
    v.hi_top = v.hi | v.top
    v.fixed = ((((v.lo | v.top) - v.hi) & v.top) >> 7) * 0xFF
    v.reads = max(v.reads, kin.reads)


def _own(outcome: Outcome, raw: bytes) -> tuple[tuple[object, ...], int]:
    """`outcome` of the line `raw` with the host and the ranks the line itself spells made `_LINE` (an offer's
    host, an event signature's or an offer's rank), and the bytes that spell them (0xff; 0: none does). One file
    that multiplexes many hosts or ranks (a central syslog, an mpirun output) holds a shape's lines with as many
    outcomes as it names hosts or ranks, which differ there alone: LineFold.read pools them (_Variant.kin)."""
    sigs, claimed, offer = outcome
    mask = 0
    spans: dict[object, int] = {}

    def own(value: object) -> object:
        nonlocal mask
        if value is None or isinstance(value, bool) or not isinstance(value, (str, int)):
            return value
        m = spans.get(value)
        if m is None:
            text = str(value).encode()
            m = spans[value] = _spans(raw, text, isinstance(value, int)) if text else 0
        if not m:
            return value
        mask |= m
        return _LINE

    rel_sigs = tuple(((*k[:4], own(k[4]), *k[5:]), w) for k, w in sigs)
    if offer is None:
        return (rel_sigs, claimed, None), mask
    key, host, node, rank = offer
    return (rel_sigs, claimed, (key, own(host), node, own(rank))), mask


@dataclass(slots=True)
class _Lesson:
    """A variant a file's fold found ready: its hits, its relative outcome, reads and digit ranges."""

    hits: list[int] | None
    outcome: tuple[object, ...]
    reads: int
    lo: int
    hi: int


class Lessons:
    """What the folds of one analysis learned of the variants of each shape, for one scanner kind: kept per
    Extraction (its `fold_lessons`, by the kind LineFold.start_file names), so per process; a file's fold starts
    warm with them (the module's docstring says what is carried and what stays per file)."""

    __slots__ = ("bytes", "dense", "quiet", "shapes", "spoiled")

    def __init__(self) -> None:
        self.shapes: dict[bytes, list[_Lesson]] = {}
        self.spoiled: set[bytes] = set()  # shapes not taught: each file learns them anew
        self.bytes = 0
        # The shapes whose every line holds none of the kind's prefilter words (LineFold.quiet_add: a property of
        # the shape and the words alone), and whether the last file's last chunk told the next to be read line by
        # line (the scanner's dense loop: a file of the kind starts in it).
        self.quiet: set[bytes] = set()
        self.dense = False

    def spoil(self, key: bytes) -> None:
        """Teach shape `key` no more (past MAX_SHAPES such shapes, learn() takes no new shape: none is taught
        that a file found unstable)."""
        self.shapes.pop(key, None)
        if len(self.spoiled) < MAX_SHAPES:
            self.spoiled.add(key)

    def learn(self, key: bytes, v: _Variant) -> None:
        """Keep what a file learned of variant `v` of shape `key` (ready: WARM reads or more, foldable)."""
        if key in self.spoiled:
            return
        lessons = self.shapes.get(key)
        if lessons is None:
            if len(self.shapes) >= MAX_SHAPES or len(self.spoiled) >= MAX_SHAPES or self.bytes > MAX_BYTES:
                return
            lessons = self.shapes[key] = []
            self.bytes += len(key)
        rel = relative(v.reading.outcome)
        top = v.top
        for ls in lessons:
            if ls.hits != v.hits:
                continue  # a copy folds only on its own hits: these could never claim one line
            if ls.outcome == rel:
                return  # known: the first file's ranges stay (another's would widen them by its own bytes)
            if ((v.hi | top) - ls.lo) & top == top and ((ls.hi | top) - v.lo) & top == top:
                self.spoil(key)  # two outcomes could both claim one line: its bytes do not tell which
                return
        if len(lessons) < MAX_VARIANTS:
            lessons.append(_Lesson(v.hits, rel, v.reads, v.lo, v.hi))
            self.bytes += 2 * v.size

    def teach(self, key: bytes, v: _Variant, x: int) -> None:
        """`v`, a new variant of shape `key` in this file whose first copy (bytes `x`) was just read: where a
        lesson has its hits and relative outcome, it starts with the lesson's reads and ranges, except at the
        bytes where `x` lies outside them (a host's digits, a later hour): there it holds x's values alone."""
        lessons = self.shapes.get(key)
        if lessons is None:
            return
        rel = relative(v.reading.outcome)
        for ls in lessons:
            if ls.hits == v.hits and ls.outcome == rel:
                break
        else:
            return
        top, full = v.top, (1 << 8 * v.size) - 1
        at_least = ((((x | top) - ls.lo) & top) >> 7) * 0xFF  # 0xff where x >= lo
        at_most = ((((ls.hi | top) - x) & top) >> 7) * 0xFF  # 0xff where x <= hi
        inside = at_least & at_most
        outside = full ^ inside
        v.lo = (ls.lo & inside) | (x & outside)
        v.hi = (ls.hi & inside) | (x & outside)
        v.hi_top = v.hi | top
        v.fixed = ((((v.lo | top) - v.hi) & top) >> 7) * 0xFF
        v.reads = max(v.reads, ls.reads)


class LineFold:
    """One file's shapes, for the scanner (collect/scan.py): `fold` says whether a copy may be counted,
    `read` reads a line in full and keeps its outcome, `count` counts a copy."""

    __slots__ = ("_before_of", "_before_us", "_bound", "_bytes", "_digit_words", "_epoch", "_gen", "_hex_words",
                 "_lessons", "_lessons_by_kind", "_once", "_risk", "_same", "_shape_of", "_shapes", "_tabled",
                 "_taught", "_tz", "clock", "extraction", "hex_literals", "quiet", "store", "table")

    def __init__(self, extraction: Reader, store: EventStore) -> None:
        self.extraction = extraction
        self.store = store
        # What the analysis's folds learned, by scanner kind (the extraction's: per process), and this file's
        # kind's (None: a file that names no kind learns alone); `_taught` its shapes.
        by_kind: dict[object, Lessons] | None = getattr(extraction, "fold_lessons", None)
        self._lessons_by_kind: dict[object, Lessons] = {} if by_kind is None else by_kind
        self._lessons: Lessons | None = None
        self._taught: dict[bytes, list[_Lesson]] = {}
        self._shapes: dict[bytes, _Shape] = {}
        self._once: set[bytes] = set()  # shapes read once: followed from their second line
        self._epoch = 0
        self._bytes = 0
        self._digit_words: tuple[bytes, ...] = ()
        self._hex_words: tuple[bytes, ...] = ()
        # The variants a line not searched for the prefilter's words folds on now (ready, same_hits), by shape,
        # as (lo, hi, lead_rep, variant, floor): for the dense loop in C (_lines.fold_run; floor: a timed
        # variant's, in _lines.stamp_local_us's count, else None), each shape's indexed by the bytes its entries
        # hold fixed (_Tabled: the value is its (offsets, index)). Emptied whenever the epoch moves (a variant is
        # ready only within its epoch); a line read in full that moves none drops the entry of a variant whose
        # ranges or floor it changed (one narrower than its variant counts fewer copies, never another's: it is
        # put back at its next copy), and its shape's where the shape is no longer stable. `_gen` tells the
        # variants it holds.
        self.table: dict[bytes, tuple[bytes, dict[bytes, list[_Entry]]]] = {}
        self._tabled: dict[bytes, _Tabled] = {}
        self._bound: list[_Variant] = []  # the tabled variants that are not free (_new_epoch takes them out)
        self._gen = 0
        # The last line fold_copy looked up and its shape (table_add puts the variant it gave under that shape).
        self._shape_of: tuple[bytes, bytes] = (b"", b"")
        # The shapes of lines found to hold none of the prefilter's words whose shape tells that every line of
        # it holds none (quiet_add): the dense loop passes over them, as the prefilter would. Kept for the file,
        # and for the analysis's files of its kind (Lessons.quiet).
        self.quiet: set[bytes] = set()
        self._tz: tzinfo | None = None  # the zone a zone-less stamp is read in (TimeParser.tz)
        self._same: dict[bytes, tuple[bool, bool]] = {}  # _same_shape by shape, for this file's prefilter words
        self._risk: dict[bytes, tuple[tuple[int, bytes], ...] | None] = {}  # _at_risk by shape, the same
        # The prefilter's literals a hex id could hold in part, by their form in `_hex_words` (memo.hex_literals).
        self.hex_literals: dict[bytes, tuple[bytes, ...]] = {}
        self._before_of: datetime | None = None  # before_count's last time and its count
        self._before_us = -2
        # The year a yearless stamp (glog's, syslog's) is read in, for the dense loop in C (_lines.fold_run's
        # clock): TimeParser.year, and the local time after which TimeParser._yearless takes the year before.
        self.clock: tuple[int, int, int | None] | None = None

    def _untable(self) -> None:
        self.table = {}
        self._tabled = {}
        self._bound = []
        self._gen += 1

    def _new_epoch(self) -> None:
        """The epoch moved: take out of the table the variants whose outcome may hang on the per-stream state
        (those read by their body alone stay: _Variant.free)."""
        if not self._bound:  # (every candidate of a chunk read outside the fold: nothing tabled)
            return
        bound, self._bound = self._bound, []
        for v in bound:
            self._untable_variant(v)

    def _untable_variant(self, v: _Variant) -> None:
        """Take `v`'s entry out of the table (its ranges or floor changed: its next copy puts it back)."""
        if v.tabled != self._gen:
            return
        v.tabled = -1
        got, v.entry = v.entry, None
        assert got is not None
        t, entry = got
        k = t.key(entry[0])
        bucket = t.index[k]
        for i, e in enumerate(bucket):
            if e is entry:
                del bucket[i]
                t.n -= 1
                break
        if not bucket:
            del t.index[k]
            if not t.index and self._tabled.get(t.shape) is t:  # (its lines then look up as no table shape's)
                del self._tabled[t.shape], self.table[t.shape]

    def _untable_shape(self, key: bytes) -> None:
        """Take shape `key`'s entries out of the table (it is no longer stable: its copies are read)."""
        t = self._tabled.pop(key, None)
        if t is None:
            return
        del self.table[key]
        for bucket in t.index.values():
            for e in bucket:
                e[3].tabled, e[3].entry = -1, None

    def start_file(self, digit_words: tuple[bytes, ...] = (), hex_words: tuple[bytes, ...] = (),
                   tz: tzinfo | None = None, year: int | None = None, window_end: datetime | None = None,
                   kind: object = None, hex_literals: dict[bytes, tuple[bytes, ...]] | None = None) -> None:
        """A new file, whose scanner's prefilter words that hold a digit are `digit_words` (their digits zeroed), and
        those a hex id could hold in part are `hex_words` (memo.hex_words); `tz` is the zone its zone-less stamps
        are read in (None: a timed variant's copies are never counted in C); `year` and `window_end` those its
        yearless stamps are read with (TimeParser.year and .window_end; None: such stamps are left to Python).
        `kind` (hashable) names what a line's outcome may hang on besides its text and its file's node: the
        lessons of files of the same kind are taught to this one (None: none, and it teaches none)."""
        if kind is None:
            self._lessons, self._taught = None, {}
        else:
            lessons = self._lessons_by_kind.get(kind)
            if lessons is None:
                lessons = self._lessons_by_kind[kind] = Lessons()
            self._lessons, self._taught = lessons, lessons.shapes
        self._shapes = {}
        self.quiet = set() if self._lessons is None else self._lessons.quiet
        self._tz = tz
        self._before_of, self._before_us = None, -2
        self.clock = yearless_clock(tz, year, window_end)
        self._once = set()
        self._epoch = 0
        self._bytes = 0
        self._digit_words = digit_words
        self._hex_words = hex_words
        self.hex_literals = {} if hex_literals is None else hex_literals
        self._same = {}
        self._risk = {}
        self._untable()

    def end_file(self) -> None:
        """Add the counted copies to the store and the unrecognized groups. Adding them once a file gives what
        adding each as it came gives: they add to counts and to signatures past the cap (nothing a later line's
        reading looks at but the cap, which they are past), and to places their groups already hold."""
        self._untable()
        lessons = self._lessons
        if lessons is not None:
            for shape, sh in self._shapes.items():
                if not sh.stable:
                    lessons.spoil(shape)
                    continue
                for v in sh.variants:
                    if v.reads >= WARM and v.reading.foldable:
                        lessons.learn(shape, v)
        put = self.store.repeat
        for sh in self._shapes.values():
            for v in sh.variants:
                n, v.counted = v.counted, 0
                if not n:
                    continue
                for key, weight in v.reading.signatures:
                    put(key, weight * n, n)
                if v.reading.offer is not None:
                    self.extraction.unrecognized.repeat(*v.reading.offer, n)

    @property
    def dense(self) -> bool:
        """Did the last file of this kind end read line by line (the scanner's dense loop; False where the file
        names no kind)? Its next file starts so: a choice of speed, the bytes are the same either way."""
        return self._lessons is not None and self._lessons.dense

    @dense.setter
    def dense(self, value: bool) -> None:
        if self._lessons is not None:
            self._lessons.dense = value

    def looks_dense(self, buf: bytes, sample: int = 64) -> bool:
        """Is the dense loop worth starting a file's first chunk `buf` in: did the last file of this kind end in
        it (`dense`), and are most of the chunk's first `sample` lines of shapes the kind knows (quiet, or taught
        a lesson)? A file of other lines (distinct words, say) would otherwise be looked at line by line in Python
        for a whole chunk before the scanner gives up."""
        if not self.dense:
            return False
        quiet, taught, find = self.quiet, self._taught, buf.find
        known = seen = s = 0
        while seen < sample:
            e = find(b"\n", s)
            if e < 0:
                break
            key = line_shape(buf[s:e])
            known += key in quiet or key in taught
            seen += 1
            s = e + 1
        return seen > 0 and known * 2 >= seen

    def may_count(self, buf: bytes, starts: list[int]) -> bool:
        """Could any of the candidate lines of `buf` that start at `starts` be counted? Not where the fold has read
        nothing of its file yet and no shape (read's key) has more than WARM of them: a variant folds only after
        WARM copies were read to its outcome, so each line would be read in full, and the fold's bookkeeping
        (each shape kept, each copy's outcome compared) would buy nothing. A rank log of a 16k-rank job holds
        each of its templates once, a node's kernel log a few dozen lines of a few shapes (issue 27). The
        caller then reads them with pass_on."""
        if self._shapes or self._once:
            return True
        taught = self._taught  # a shape a lesson tells: its second line may be counted
        least = 1 if taught else WARM  # a shape of more lines than this may count
        if len(starts) <= least:
            return False
        # A shape has its lines' length (memo.line_shape changes bytes, never their number): lines of one shape are
        # lines of one length, so a line whose length no more than `least` lines have is of no shape that may
        # count, and its shape is not worked out. A rank log's few templates are of as many lengths, mostly.
        find = buf.find
        spans = [(s, find(b"\n", s)) for s in starts]
        lengths: dict[int, int] = {}
        for s, e in spans:
            n = len(buf[s:e]) if e < 0 else e - s  # (the slice's length: a last line without its newline)
            lengths[n] = lengths.get(n, 0) + 1
        if max(lengths.values()) <= least:
            return False
        seen: dict[bytes, int] = {}
        for s, e in spans:
            if e - s > MAX_LINE:
                continue  # read's key is None: read in full
            if lengths[len(buf[s:e]) if e < 0 else e - s] <= least:
                continue  # no other line of its shape's length beyond `least`
            key = line_shape(buf[s:e])
            n = seen.get(key, 0) + 1
            if n > WARM or (n == 2 and key in taught):
                return True
            seen[key] = n
        return False

    def pass_on(self, c: Candidate) -> None:
        """Read candidate `c` in full, outside the shapes (may_count said none of its chunk's lines could be
        counted): what read() does with the first line of a shape, less keeping the shape."""
        self.extraction.add_events(c, self.store)
        self.passed()

    def passed(self) -> None:
        """A candidate was read outside the shapes (pass_on; or by Extraction.read_quiet, a line its reader claimed
        quietly, without its candidate): the per-stream state may have moved."""
        self._epoch += 1
        self._new_epoch()

    def fold(self, raw: bytes, hits: list[int] | None) -> _Variant | None:
        """The variant whose outcome a copy `raw` (its prefilter hits `hits`) has, when it may be counted."""
        v = self.fold_copy(raw, False)
        return v if v is not None and hits == v.hits else None

    def fold_copy(self, raw: bytes, unscanned: bool = True) -> _Variant | None:
        """fold() for a line not searched for the prefilter's words (`unscanned`): it may be counted only where
        its shape tells its hits."""
        # A line longer than MAX_LINE has no shape here (read() keeps none): the lookup misses.
        key = line_shape(raw)
        self._shape_of = (raw, key)
        sh = self._shapes.get(key)
        if sh is None:
            return None
        x = int.from_bytes(raw)
        epoch = self._epoch
        v = sh.last
        if v is not None and v.ready == (0 if v.free else epoch) and (v.same_hits or not unscanned or (
                v.risk is not None and _spells_none(raw, v.risk))):
            top = v.top  # v.holds(x), without the call: each difference keeps 0x80 in every byte
            if ((x | top) - v.lo) & (v.hi_top - x) & top == top and (not v.lead or raw[:v.lead] >= v.lead_rep):
                return v
        return self._fold_in(sh, key, raw, x, unscanned)

    def _fold_in(self, sh: _Shape, key: bytes, raw: bytes, x: int, unscanned: bool) -> _Variant | None:
        """fold_copy's look at the variants of `raw`'s shape `sh` (its key; x: raw as one integer) under raw's index
        key, after its last variant's (sh.last)."""
        epoch = self._epoch
        for v in sh.index.get(x & sh.fixed, ()):
            top = v.top
            if ((x | top) - v.lo) & (v.hi_top - x) & top != top:
                kin = v.kin
                if kin is not None and kin.reads >= WARM and not (x ^ v.lo) & v.own and kin.holds(x):
                    # Its kin's ranges grew since it was born (another host's or rank's copies): it takes them in.
                    _borrow(v, kin, x)
                    sh.changed(v)
                    self._untable_variant(v)  # (put back, its ranges the wider, by the caller's table_add)
                    if not sh.stable or (sh.kin_tabled and not sh.mux):
                        self._untable_shape(key)
                    # (sh.last is None now: fold_copy's look again, less the shape's lookup)
                    return self._fold_in(sh, key, raw, x, unscanned)
                continue
            if v.lead and raw[:v.lead] < v.lead_rep:
                kin = v.kin
                if kin is None or not kin.lead_rep or raw[:v.lead] < kin.lead_rep:
                    return None
                # A kin's copy read with that stamp or an earlier one stands in their group (one template: the
                # offers differ in the host alone) for any later copy not earlier than it: the lead is the pool's.
                v.lead_rep = kin.lead_rep
                self._untable_variant(v)
            same = v.same_hits or not unscanned or (v.risk is not None and _spells_none(raw, v.risk))
            e = 0 if v.free else epoch
            if v.ready == e and same:
                sh.last = v
                return v
            if v.epoch != e or v.reads < WARM or not v.reading.foldable or not same:
                return None
            if not v.past_cap:
                counts, cap = self.store.counts, self.store.cap
                if any(counts.get(k, 0) < cap for k, _ in v.reading.signatures):
                    # Below the cap each copy is an event of its own: the caller adds its events (copy_events), or
                    # reads it, where v is not past the cap.
                    return v if v.gives_same(x) else None
                if not self.extraction.unrecognized.can_repeat(v.reading.offer):
                    return None
                v.past_cap = True
            v.ready = e
            sh.last = v
            return v
        return None

    def table_add(self, raw: bytes, v: _Variant) -> None:
        """Put `v`, which fold_copy(raw) just gave (past the store's cap), in the table, so that its next copies fold
        in C."""
        if v.tabled != self._gen and (v.same_hits or v.risk is not None):
            floor = None
            if v.timed:
                floor = self.floor_count(v)
                if floor is None:  # C could not tell a copy of no time, nor compare with this floor
                    return
            got = self._shape_of
            key = got[1] if got[0] is raw else line_shape(raw)
            sh = self._shapes.get(key)
            kin = v.kin
            # A shape whose variants are all one pool's kin (_Shape.mux) is indexed by their own bytes alone (a host's
            # digits, which each holds fixed): its lines' other bytes (a syslog's hour, an uptime's high digits) stay
            # the same for hours and then change in every line, and each entry, whose pool's ranges take the new
            # value in, would else be looked up under a key of the old one and missed (borrowed again in Python).
            mux = sh.mux if sh is not None and sh.mux > 0 and len(sh.kin) == 1 and sh.stable else 0
            fixed = v.fixed & mux if mux else v.fixed
            t = self._tabled.get(key)
            if t is None:
                t = self._tabled[key] = _Tabled(key, fixed)
                self.table[key] = t.value
            elif fixed & t.fixed != t.fixed:  # v lets a byte vary that the others hold: index by fewer bytes
                if id(v) in t.refused:
                    return
                was = t.fixed
                t.rekey(fixed & was, v.size)
                if t.n > MAX_BUCKET and max(map(len, t.index.values())) > MAX_BUCKET:
                    # Not where that puts many entries under one key (v's bytes there vary where the others' name
                    # their host): C would compare a line with each. v stays out, the index as it was.
                    t.rekey(was, v.size)
                    t.refused.add(id(v))
                    return
                self.table[key] = t.value
            entry: _Entry = (v.lo.to_bytes(v.size), v.hi.to_bytes(v.size), v.lead_rep, v, floor)
            risk = v.risk if not v.same_hits else None
            if (kin is not None and kin.reads >= WARM and sh is not None and mux and mux == v.own
                    and len(kin.lead_rep) == len(v.lead_rep)):
                if kin.lo_b is None or kin.hi_b is None or kin.lead_b is None:
                    kin.lo_b, kin.hi_b = bytearray(kin.lo.to_bytes(v.size)), bytearray(kin.hi.to_bytes(v.size))
                    kin.lead_b = bytearray(kin.lead_rep)
                entry = (*entry, risk, (kin.lo_b, kin.hi_b, sh.mux_b, kin.lead_b))
                sh.kin_tabled = True
            elif risk is not None:
                entry = (*entry, risk)
            bucket = t.index.setdefault(t.key(entry[0]), [])
            if len(bucket) >= MAX_BUCKET:  # entries that hold no byte apart: C would compare a line with each
                return
            bucket.append(entry)
            t.n += 1
            v.tabled, v.entry = self._gen, (t, entry)
            if not v.free:
                self._bound.append(v)

    def floor_count(self, v: _Variant) -> int | None:
        """The floor of the timed variant `v` as _lines.c counts times (_local_us), worked out once per floor."""
        if v.floor_of is not v.floor or v.floor is None:
            v.floor_us, v.floor_of = self._local_us(v.floor), v.floor
        return v.floor_us

    def before_count(self, t: datetime | None) -> int:
        """_lines.fold_run's `before`: the time `t` of the line read last (a copy that no stamp lies before, back
        to that line, takes it) as _lines.c counts it, -1 where it is None (such a copy is never earlier than a
        floor), -2 where C cannot count it (Python then works such a copy out). Worked out once per line read."""
        if t is None:
            return -1
        if t is not self._before_of:
            us = self._local_us(t)
            self._before_of, self._before_us = t, -2 if us is None else us
        return self._before_us

    def _local_us(self, t: datetime | None) -> int | None:
        """`t` as _lines.stamp_local_us counts the stamp that reads to it (its local date and time of day, in
        microseconds since 0001-01-01), or None: no time, no zone known, or a local time that a zone-less stamp
        does not read to (the second pass of an hour the clock went back over). A stamp of a later local time
        then reads to a time not earlier than `t` (a clock that follows its zone prints no hour it skips)."""
        tz = self._tz
        if t is None or tz is None:
            return None
        lt = t.astimezone(tz)
        if datetime(lt.year, lt.month, lt.day, lt.hour, lt.minute, lt.second, lt.microsecond,
                    tzinfo=tz).astimezone(UTC) != t:
            return None
        return _count(lt)

    def quiet_add(self, raw: bytes) -> None:
        """`raw` holds none of the prefilter's words: so does every line of its shape, where the shape holds no
        word with a digit nor one a masked hex id could hold (what `same_hits` says of a variant); its lines are
        then passed over in C."""
        if len(raw) > MAX_LINE or len(self.quiet) >= MAX_SHAPES or self._bytes > MAX_BYTES:
            return
        key = line_shape(raw)
        if self._same_hits(key, raw):
            self.quiet.add(key)
            self._bytes += len(key)

    def quiet_from(self, buf: bytes, starts: list[int], sample: int = 64) -> None:
        """Teach quiet_add the first `sample` lines of a file's first chunk `buf` read through the prefilter, where
        it ended as the dense loop's (its copies folded): a line that does not start at one of `starts` (the hit
        lines, sorted) holds none of the prefilter's words, as the dense loop's own look at it would say. The dense
        loop learns the quiet shapes, and the sparse path never did: the next file of the kind then found none of
        its first lines' shapes known (looks_dense) and was read through the prefilter again, Hyperscan calling
        back on each hit, where the dense loop would have passed over its noise in C."""
        find = buf.find
        k, n_starts, s = 0, len(starts), 0
        for _ in range(sample):
            e = find(b"\n", s)
            if e < 0:
                break
            while k < n_starts and starts[k] < s:
                k += 1
            if k >= n_starts or starts[k] != s:
                self.quiet_add(buf[s:e])
            s = e + 1

    def quiet_spread(self, buf: bytes, starts: list[int], sample: int = 64) -> None:
        """quiet_from's teaching from `sample` lines spread over the chunk `buf` that the prefilter scanned whole
        (`starts`: its hit lines, sorted), not its first lines alone: a rank log's first lines are its set-up, and
        the noise that fills the rest of it (a training step's line) begins further on. The sparse path then passes
        the lines of the shapes it learned over before the prefilter (`_lines.unquiet`: scan.py's `hit_lines`)."""
        n = len(buf)
        if not n:
            return
        find, rfind = buf.find, buf.rfind
        step = max(1, n // sample)
        k, n_starts, last = 0, len(starts), -1
        for at in range(0, n, step):
            s = rfind(b"\n", 0, at) + 1 if at else 0  # the line that holds byte `at`
            if s <= last:
                continue
            e = find(b"\n", s)
            if e < 0:
                break
            last = s
            while k < n_starts and starts[k] < s:
                k += 1
            if k >= n_starts or starts[k] != s:
                self.quiet_add(buf[s:e])

    def _same_hits(self, key: bytes, raw: bytes) -> bool:
        """Does every line of the shape `key` (of the line `raw`) have raw's prefilter hits? A literal with a digit
        may differ where the shape has one; one that a hex id could hold in part (memo.hex_words) only where its
        place in the shape (every hex letter made `0`) meets a hex id of the shape (memo.hex_spans: the only bytes
        that hold a hex letter in one line of the shape and another byte in another). Elsewhere the shape's letters
        are every line's: a host's digits (`node-0123 `) beside a word of hex letters (`Dec `) are no hex id. Once
        per shape and file. As before that check, a line none of whose hex ids had a letter (its shape its digits
        made `0`) is taken to have its shape's hits: such a run of digits (an audit line's `auid=4294967295 `)
        would else make a kernel log's noise read through Python (another line of the shape could spell a word
        of hex letters there, `EDAC `; the byte ranges keep such a copy from folding, not from a quiet shape)."""
        got = self._same.get(key)
        if got is None:
            got = self._same[key] = self._same_shape(key)
        digits_ok, hex_ok = got
        return digits_ok and (hex_ok or key == raw.translate(_ZERO))

    def _at_risk(self, key: bytes) -> tuple[tuple[int, bytes], ...] | None:
        """Where shape `key`'s lines may differ in their hits only through a hex id that spells a word (_same_shape:
        no digit-bearing literal in it, a hex word meets a hex id), each place such a word meets one, with each
        literal of that form (memo.hex_literals): a line that spells none of them at its place has the hits of
        every other such line of the shape (no other place holds a literal in one line and not in another). None
        where that is not so (a digit-bearing literal; a hex word whose literals are not known; more than
        MAX_RISK places). Once per shape and file."""
        got = self._risk.get(key, ())
        if got != ():
            return got
        risk: list[tuple[int, bytes]] | None = []
        if any(w in key for w in self._digit_words):
            risk = None
        else:
            spans = hex_spans(key)
            full = key.translate(ALL_HEX_ZERO)
            for w in self._hex_words:
                i = full.find(w)
                while i >= 0 and risk is not None:
                    if any(a < i + len(w) and i < b for a, b in spans):
                        lits = self.hex_literals.get(w)
                        if not lits or len(risk) + len(lits) > MAX_RISK:
                            risk = None
                            break
                        risk.extend((i, lit) for lit in lits)
                    i = full.find(w, i + 1)
                if risk is None:
                    break
        out = self._risk[key] = None if risk is None else tuple(risk)
        return out

    def _same_shape(self, key: bytes) -> tuple[bool, bool]:
        """Whether no digit-bearing literal lies in shape `key`, and no hex word meets one of its hex ids."""
        if any(w in key for w in self._digit_words):
            return False, False
        if not self._hex_words:
            return True, True
        spans = hex_spans(key)
        if not spans:
            return True, True
        full = key.translate(ALL_HEX_ZERO)
        for w in self._hex_words:
            i = full.find(w)
            while i >= 0:
                if any(a < i + len(w) and i < b for a, b in spans):
                    return True, False
                i = full.find(w, i + 1)
        return True, True

    def unstable(self, raw: bytes) -> None:
        """Read every later copy of `raw`'s shape in this file: its stamp was read as none (TimeParser.unread:
        outside the years the analysis holds, or no such date or time). A folded copy's stamp is not read, and its
        digits need only lie within those of the copies read: after a stamp of no such date, a copy of year 0026
        could (an unread stamp outside the years, which reading every line counts)."""
        key = line_shape(raw) if len(raw) <= MAX_LINE else None
        if key is None:
            return
        sh = self._shapes.get(key)
        if sh is None:
            if len(self._shapes) >= MAX_SHAPES:
                return
            sh = self._shapes[key] = _Shape()
            self._bytes += len(key)
        sh.stable = False
        sh.index = {}
        self._untable_shape(key)

    def count(self, v: _Variant) -> None:
        """One more copy of `v`'s line, counted as reading it would count it (added at the file's end)."""
        v.counted += 1

    def copy_events(self, v: _Variant, line: int, time: datetime | None, text: str) -> None:
        """A copy of `v`'s line that fold() gave while some signature of `v` is below the store's cap (v.past_cap
        false), at line `line`, of time `time` (its own stamp's, or the walk back's: as reading it gives) and text
        `text`: its events, as reading it adds them. Its outcome is v's, as for a counted copy; below the cap each
        event is kept with its own line, time and text, and the rest of it is what every copy of v read in this
        file gave (same_again)."""
        self.store.add_copy(v.reading.events, time, line, text)

    def read(self, c: Candidate, raw: bytes, hits: list[int] | None) -> None:
        """Read candidate `c` (whose line is `raw`) in full, and keep its outcome for its shape (from the shape's
        second line on: most lines of a log are the only one of their shape). The table keeps what stays true:
        all of it where the epoch did not move, less the variant whose ranges or floor the line changed, and its
        shape where the shape is no longer stable."""
        epoch = self._epoch
        key = line_shape(raw) if len(raw) <= MAX_LINE else None
        self._read(c, raw, hits, key)
        if self._epoch != epoch:
            self._new_epoch()
        if key is not None and key in self._tabled:  # (a free variant's entry stays across epochs)
            sh = self._shapes.get(key)
            if sh is None or not sh.stable or (sh.kin_tabled and not sh.mux):
                self._untable_shape(key)

    def _read(self, c: Candidate, raw: bytes, hits: list[int] | None, key: bytes | None) -> None:
        sh = self._shapes.get(key) if key is not None else None
        if key is None or (sh is not None and not sh.stable):
            # Whatever this line did to the per-stream state, the variants were checked against the state before.
            self.extraction.add_events(c, self.store)
            self._epoch += 1
            return
        if sh is None and key not in self._once and key not in self._taught:
            # The first line of its shape: the same, unless it was read by its body alone (no per-stream state).
            r = self.extraction.add_events_read(c, self.store)
            if r.stream is not None or r.outcome[1]:
                self._epoch += 1
            if len(self._once) < MAX_SHAPES and self._bytes <= MAX_BYTES:
                self._once.add(key)
                self._bytes += len(key)
            return
        r = self.extraction.add_events_read(c, self.store)
        if not raw.isascii():
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:  # each copy counts in the file's bad-UTF-8 lines: all are read
                r.foldable = False
        if r.outcome[1]:
            # Claimed: a line of a record an extractor follows across lines (a traceback's header or frame, a
            # torchrun block, a terminate awaiting its what()). Its copies are read, and the state it moved on
            # is not the one the shapes were checked against.
            r.foldable = False
            self._epoch += 1
        x = int.from_bytes(raw)
        if sh is not None:
            for v in sh.by_outcome.get(r.outcome, ()):
                if hits == v.hits:
                    if v.timed:
                        floor = v.floor
                        v.take_time(c.time)
                        if v.floor is not floor:
                            self._untable_variant(v)
                    elif v.lead and raw[:v.lead] < v.lead_rep:
                        # An earlier stamp than every copy read to it (a file whose stamps go back: hosts' clocks,
                        # a log that wraps): it is its group's earliest line for now, so the later copies are not.
                        v.lead_rep = raw[:v.lead]
                        self._untable_variant(v)
                    v.reads += 1
                    if not r.foldable and v.reading.foldable:
                        # A copy keyed on the stream's state (LineContext.keyed: a GHES record's number while a
                        # record is open) reads to this outcome now, and another copy's digits might not: the
                        # variant's copies are each read from here on in this file.
                        v.reading.foldable = False
                        self._untable_variant(v)
                    v.same_again(r, x)
                    if not v.free:
                        v.epoch = self._epoch
                    if not v.holds(x):
                        v.widen(x)
                        sh.changed(v)
                        self._untable_variant(v)
                    kin = v.kin
                    if kin is not None:
                        kin.reads += 1
                        if not kin.holds(x):
                            kin.widen(x)
                        if v.lead and raw[:v.lead] < kin.lead_rep:
                            _pool_lead(kin, raw[:v.lead])
                        if v.reads < WARM <= kin.reads:  # its kin got warm after it was born: it is now
                            _borrow(v, kin, x)
                            sh.changed(v)
                            self._untable_variant(v)
                    return
        # A new outcome for this shape. Where it is another's but for the host or rank the line names (_own: a
        # file of many hosts or ranks), of a line that moved the same per-stream state as the others (or none),
        # it is that one's kin; else whatever it did to the per-stream state, the other variants were checked
        # against the state before it.
        kin, family, own = None, None, 0
        if r.foldable:
            rel, own = _own(r.outcome, raw)
            if own:
                family = (rel, None if hits is None else tuple(hits))
                kin = sh.kin.get(family) if sh is not None else None
                if kin is not None and r.stream is not None and r.stream is not kin.reading.stream:
                    kin = None
        if kin is None and r.stream is not None:  # (a line read by its body alone moved no per-stream state)
            self._epoch += 1
        if self._bytes > MAX_BYTES:
            return
        if sh is None:
            if len(self._shapes) >= MAX_SHAPES:
                return
            sh = self._shapes[key] = _Shape()
            self._bytes += len(key)
        if any(v.holds(x) for v in sh.index.get(x & sh.fixed, ())) or (
                kin is None and sh.kin_tabled and sh.mux > 0 and any(_pooled(v, x) for v in sh.variants)):
            # Bits another outcome was read for: this shape's outcome hangs on more than its line. (A variant that
            # holds x is under x's key: the bytes every variant holds fixed are x's.) Where C counted copies within a
            # variant's kin pool's ranges, those are its bits too (the borrow it did not make in Python): an outcome
            # of no kin there (once per shape: it ends `mux`) is looked for among every variant.
            sh.stable = False
            sh.index = {}
        elif len(sh.variants) - sh.born < MAX_VARIANTS or (kin is not None and sh.born < MAX_KIN):
            v = _Variant(x, hits, r, 1, len(raw), self._epoch, self._same_hits(key, raw))
            if not v.same_hits:
                risk = self._at_risk(key)
                if risk is not None and _spells_none(raw, risk):
                    v.risk = risk
            if r.offer is not None:
                v.lead = _leading_stamp(key)
                v.lead_rep = raw[:v.lead]
                if not v.lead:
                    v.timed = True
                    v.take_time(c.time)
            if r.foldable and key in self._taught:
                assert self._lessons is not None
                self._lessons.teach(key, v, x)
            if kin is not None:
                if kin.own:  # the family's first variant stood for it: its pool starts as that one's reads, ranges
                    assert family is not None
                    first = kin
                    kin = _Variant(first.rep, first.hits, first.reading, first.reads, first.size, first.epoch,
                                   first.same_hits)
                    kin.lo, kin.hi, kin.hi_top, kin.fixed = first.lo, first.hi, first.hi_top, first.fixed
                    kin.lead_rep = first.lead_rep
                    first.kin = sh.kin[family] = kin
                    self._bytes += 5 * len(raw)
                # Its kin's copies tell its bytes but those that spell its own host or rank, which hold x's alone.
                kin.reads += 1
                if not kin.holds(x):
                    kin.widen(x)
                if v.lead and v.lead_rep < kin.lead_rep:
                    _pool_lead(kin, v.lead_rep)
                v.kin, v.own = kin, own
                if kin.reads >= WARM:
                    _borrow(v, kin, x)
                sh.born += 1
            elif family is not None and family not in sh.kin:
                sh.kin[family] = v  # the first of a family stands for its pool until a second comes (no copy kept)
                v.own = own
            self._bytes += 5 * len(raw)  # rep, lo, hi, top, fixed
            sh.add(v)
