"""Every timestamp form of spec/evidence-bundle.md, on one line at a time.

Only lines that passed the prefilter (and their nearest stamped neighbours)
are parsed, so clarity beats micro-optimisation here; the regexes are
anchored so a miss is cheap.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Final, NamedTuple

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)

_MONTHS = {
    m: i + 1
    for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"))
}

# A banner rule a harness printed without its newline, glued to the line after it (MTT's `=====...=====` before
# `Tue Jun 12 18:14:48 2018[1,15]<stderr>:`, or before UCX's own header): 8 or more of one rule character, then a
# character that is neither it nor a space. A rule alone, or one a space follows (`==== backtrace ====`), is the
# line itself. Linear: a run of one character, then one look at the next. (extract/prefix.py peels it too.)
BANNER_RULE: Final = r"={8,}(?=[^=\s])|-{8,}(?=[^-\s])|\*{8,}(?=[^*\s])|#{8,}(?=[^#\s])|~{8,}(?=[^~\s])"

# Launcher prefixes that stand before a timestamp: torchrun --tee "[default3]:",
# PyTorch 2.x "[rank3]:".
_PREFIX = re.compile(r"^\[[A-Za-z]+\d+\]:")
# What else a writer or a collector may put before a line's own stamp (tried only when the line does not start
# with one; a few rounds, each followed by the stamp forms again; the layers are those of extract/prefix.py, whose
# hosts and ranks this module does not need). Every alternative is linear: a character class, then its end.
_LEADS = re.compile(
    r"<\d{1,3}>(?:1 )?"  # a forwarded syslog message's PRI (RFC 3164), and RFC 5424's version
    r"|\[\d+,\d+\]<std(?:out|err)>: ?"  # Open MPI --tag-output
    r"|\[[A-Za-z_]+\d+(?:\|\d+)?\]: ?"  # [rank3]:, [default3]:, MPICH's [cli_3]:, a torchrun template's [trainer3|3]:
    # a terminal's colour code (before Ray's tag), or its pasted residue
    r"|\x1b\[[\d;]{0,12}m ?|\[\d{1,3}(?:;\d{1,3}){0,3}m(?=\()"
    r"|(?:kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7]) *:"
    r"(?:emerg|alert|crit|err|warn|notice|info|debug) *: "  # dmesg --decode
    r"|(?=[\w.\-/]*[\d./])[\w.\-/]+(?::\d+:|-\d+-|: ?|-)(?=[\d\[<A-Z])"  # grep -H FILE: / FILE:N: / FILE-N-, pdsh
    r"|\d+[:\-]"  # grep -n
    r"|> "  # a quote
    r"|\{\"(?:timestamp|time|ts|@timestamp|asctime)\": ?\"(?=\d{4}-\d\d-\d\d[T ])"  # a JSON record's stamp
    r"|\[(?=\d{4}-\d\d-\d\d[T ])"  # NCCL_DEBUG_TIMESTAMP_FORMAT's bracket: `[2026-11-02 10:03:07] host:pid:tid`
    # Ray's / vLLM's worker (Ray 1.x's `pid=None`: a file its log monitor follows whose name holds no pid)
    r"|\((?:[A-Za-z_][\w.\-]*(?: |, ))?(?:rank=\d+(?: |, ))?pid=(?:\d+|None)(?:, ip=[\w.:\-]+)?\) ?"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?=\d\d-\d\d \d\d:\d\d:\d\d)"  # vLLM's level, before its stamp
    r"|" + BANNER_RULE  # a banner the line was glued to
)
_BAR_COUNT = re.compile(r"\s*[\d.]+[kMG]?(?:/(?:[\d.]+[kMG]?|\?))?\s*")  # tqdm's `1/801` between its bar and stats


def progress_bar_end(text: str) -> int:
    """Where a tqdm progress bar that starts the text ends (`  0%|####      | 1/801 [00:00<06:40,  2.00it/s]`,
    after the `]`), or -1: its rate's `it/s]` / `s/it]`, the `[` that opens its stats, the `|` that closes the bar
    and an opening `|` before it, by position, so the reading is linear."""
    at = text.find("it/s]")
    if at < 0:
        at = text.find("s/it]")
    if at < 0 or at > 500:
        return -1
    stats = text.rfind("[", 0, at)
    close = text.rfind("|", 0, stats) if stats > 0 else -1
    if close <= 0 or text.rfind("|", 0, close) < 0 or not _BAR_COUNT.fullmatch(text, close + 1, stats):
        return -1
    return text.index("]", at) + 1


_MAX_LEADS: Final = 4
# The Unix time some libraries stamp their own lines with: UCX's `[1506867524.064665] [host:pid:tid]`, libfabric's
# `libfabric:451707:1708520807::efa:cq:...` (process id, then seconds).
_EPOCH_UCX = re.compile(r"^\[(\d{10})\.(\d{1,9})\] +\[[\w.\-]+: *\d+")
_EPOCH_LIBFABRIC = re.compile(r"^libfabric:\d+:(\d{10})::")
# gcsfuse's JSON log line, its time first as seconds and nanoseconds since the epoch (GoogleCloudPlatform/gcsfuse
# internal/logger/slog_helper.go customiseTimeFormat): `{"timestamp":{"seconds":1704697907,"nanos":553918512},...`.
_EPOCH_JSON = re.compile(r'^\{"timestamp":\{"seconds":(\d{9,10}),"nanos":(\d{1,9})\}')
# ... and before v1, its Unix time last (GoogleCloudPlatform/gcsfuse#516: `{"name":"root","levelname":"ERROR",
# "severity":"ERROR","message":"fuse: ...","timestampSeconds":1618078232,"timestampNanos":397649044}`): searched for
# in a JSON line (a fixed word, then digits: linear).
_EPOCH_JSON_LEGACY = re.compile(r'"timestampSeconds":(\d{9,10}),"timestampNanos":(\d{1,9})\b')
# ctime(3) with the weekday, as Open MPI's --timestamp-output glues it before its tag: `Sun Apr 22 11:13:01 2018[1,3]`;
# also with a zone's abbreviation before the year (date(1)'s and Go's UnixDate form, blobfuse2's log header
# `Tue Mar 14 14:49:09 GMT 2023 : blobfuse2[1429] : LOG_ERR ...`: UTC or GMT is UTC, another abbreviation names no
# offset, so the bundle's zone is taken, as for a stamp without one).
# Also with milliseconds before the year: IBM Storage Scale's (GPFS) earlier mmfs.log stamp, `Www Mmm DD hh:mm:ss.sss
# YYYY` (`Mon May 09 15:12:20.603 2016: [E] ...`; IBM Spectrum Scale 4.2.2 docs, "Time stamp in GPFS log entries").
_CTIME = re.compile(r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})"
                    r"(?:\.(\d{1,9}))? (?:([A-Z]{2,5}) )?(\d{4})")
# gcsfuse's text log (GoogleCloudPlatform/gcsfuse internal/logger/slog_helper.go customiseTimeFormat, Go's layout
# `02/01/2006 03:04:05.000000`): `time="08/09/2023 09:24:54.437193" severity=ERROR message="..."`, day before month,
# local time on a 12-hour clock with no AM/PM (Go's `03`), so each stamp names two times 12 hours apart.
_CLOCK12 = re.compile(r'^time="(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"')
_CLOCK12_SLACK: Final = timedelta(hours=1)  # how far outside the window a reading of such a stamp may fall

# An uptime this large is a Unix time in brackets (UCX's), not seconds since boot.
_UPTIME_MAX: Final = 1e9

# `_` between date and time: IBM Storage Scale's (GPFS) mmfs.log stamp since 4.2.2, `YYYY-MM-DD_hh:mm:ss.sss+hhmm`
# (`2016-05-09_15:12:20.603-0500: [E] ...`; IBM Spectrum Scale 4.2.2 docs, "Time stamp in GPFS log entries").
_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T _](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\s?(Z|[+-]\d{2}:?\d{2}|UTC)?"
)
_ISO_TAIL = re.compile(r"(?:[.,](\d{1,9}))?\s?(Z|[+-]\d{2}:?\d{2}|UTC)?")  # _ISO after its 19 characters
_BSD = re.compile(r"^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s")
_DMESG_T = re.compile(r"^\[(?:[A-Z][a-z]{2}) ([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})\]")
_FM = re.compile(r"^\[([A-Z][a-z]{2}) (\d{1,2}) (\d{4}) (\d{2}):(\d{2}):(\d{2})\]")
# vLLM's logger stamp (`%m-%d %H:%M:%S`, after its level: `ERROR 08-23 08:25:25 multiproc_worker_utils.py:226]`).
_MONTH_DAY = re.compile(r"^(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))? \[?[\w.\-]+:\d+\]")
_GLOG = re.compile(r"^\[?[IWEF](\d{1,2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s")
# slurmstepd's banner carries its own (local, zone-less) time after "AT".
_SLURM_BANNER = re.compile(
    r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT (\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})"
)
_UPTIME = re.compile(r"\[\s*(\d{1,10}\.\d{3,9})\]")


# The times the analysis holds: a stamp outside is read as no stamp (counted: TimeParser.out_of_range), a window
# outside is refused, an event outside is dropped (engine/normalise.py). Far enough inside datetime's own range
# (years 1-9999) that no sum the analysis makes with one (a window's grace, a rule's window, a dmesg uptime of up
# to 10^10 s: 317 years) can overflow; far enough out that no log of a real clock is refused (1970 included).
TIME_MIN: Final = datetime(1000, 1, 1, tzinfo=UTC)
TIME_MAX: Final = datetime(9000, 1, 1, tzinfo=UTC)


def in_range(t: datetime) -> bool:
    """Is `t` (aware) between TIME_MIN and TIME_MAX?"""
    return TIME_MIN <= t < TIME_MAX


_UNSEEN: datetime | None = datetime.min  # a cache miss (None is a cached "no such minute")
_MINUTES_MAX = 65536

# The hot path's switch (extract/memo.py owns it and sets this one too): FIRSTFAULT_FASTPATH=0 parses every
# stamp by the general path below.
_fast: list[bool] = [os.environ.get("FIRSTFAULT_FASTPATH", "1").strip().lower() not in ("0", "false", "no", "off")]


def set_fast(on: bool) -> None:
    _fast[0] = on


class Stamp(NamedTuple):  # a tuple: built for every stamped candidate, at half a frozen dataclass's cost
    wall: datetime | None  # aware, UTC
    uptime: float | None  # seconds since boot (dmesg)


_new_stamp: Final = tuple.__new__

# Building a timedelta costs ten times what adding one does, and a line adds its seconds to its minute.
_SECONDS: Final = tuple(timedelta(seconds=i) for i in range(60))
_HALF_YEAR: Final = timedelta(days=180)


def _offset(s: int, us: int) -> timedelta:
    """timedelta(seconds=s, microseconds=us) for 0 <= s < 60, the whole seconds built once."""
    return timedelta(0, s, us) if us else _SECONDS[s]


def _frac(s: str | None) -> int:
    if not s:
        return 0
    return int((s + "000000")[:6])


class Counts(NamedTuple):
    """A TimeParser's counts and 12-hour clock (TimeParser.counts)."""

    out_of_range: int
    unread: int
    clock12_last: datetime | None


class TimeParser:
    """Parses one bundle's lines: the window gives missing years, `tz` missing zones."""

    def __init__(self, tz: tzinfo, window_start: datetime | None, window_end: datetime | None) -> None:
        self.tz = tz
        ref = window_start or window_end or datetime.now(UTC)
        self.year = ref.astimezone(tz).year
        self.ref = ref
        self.window_end = window_end or ref
        self._minutes: dict[tuple[int, int, int, int, int], datetime | None] = {}
        # A file's lines share their stamp's form and most of its digits: a zone-less ISO or a syslog stamp's
        # text to the minute is read once (its minute), then each line adds its seconds.
        self._iso_minutes: dict[str, datetime | None] = {}
        self._iso_seconds: dict[str, datetime] = {}  # `2026-11-02 10:00:07` -> that second (zone-less)
        self._bsd_seconds: dict[str, datetime] = {}  # `Nov  2 10:00:07` (then a space) -> that second
        self._bsd_minutes: dict[str, tuple[datetime | None, int, int, int, int]] = {}
        self._glog_minutes: dict[str, tuple[datetime | None, int, int, int, int]] = {}  # `1102 11:10` (glog's)
        self._clock12_last: datetime | None = None  # the last 12-hour stamp read (_clock12)
        self.out_of_range = 0  # stamps read as no stamp: outside TIME_MIN..TIME_MAX (a minute's all count)
        # Stamps a form matched that read as no time: those out_of_range counts, and a date or time that does not
        # exist (a month 13, a 25th hour, 30 February; not counted in the verdict). A folded copy's stamp is not
        # read: its digits lie within those of the copies read to its outcome (collect/fold.py), so the fold reads
        # every copy of a shape one of whose lines read so (LineFold.unstable), and no copy it counts has a stamp
        # outside the years, whose count must be the same read or counted.
        self.unread = 0

    def counts(self) -> Counts:
        """What reading stamps leaves behind: the counts of stamps read as no time and the 12-hour clock's last stamp,
        to be put back (put_back) after a reading that counts nothing (a walk back, a look ahead at a copy)."""
        return Counts(self.out_of_range, self.unread, self._clock12_last)

    def put_back(self, saved: Counts, clock12: bool = False) -> None:
        """The counts as `saved` holds them; with `clock12`, the 12-hour clock's last stamp too."""
        self.out_of_range, self.unread = saved.out_of_range, saved.unread
        if clock12:
            self._clock12_last = saved.clock12_last

    def _local(self, y: int, mo: int, d: int, h: int, mi: int, s: int, us: int) -> datetime | None:
        # A log's lines fall in few minutes: the zone is applied once per minute, and a line adds its
        # seconds. Only for a minute whose UTC offset is the same at its first and last microsecond
        # (a zone change inside it, or a leap second, takes the full path).
        minute = self._minutes.get((y, mo, d, h, mi), _UNSEEN)
        if minute is _UNSEEN:
            minute = self._minute(y, mo, d, h, mi)
            if len(self._minutes) < 65536:
                self._minutes[(y, mo, d, h, mi)] = minute
        if minute is not None and s < 60:
            return minute + _offset(s, us)
        try:
            return self._bounded(datetime(y, mo, d, h, mi, s, us, tzinfo=self.tz).astimezone(UTC))
        except OverflowError:  # a year 1 or 9999 stamp that its zone takes past datetime's limits
            self.out_of_range += 1
            self.unread += 1
            return None
        except ValueError:  # no such date (31 February), or year 0
            if y < 1:
                self.out_of_range += 1
            self.unread += 1
            return None

    def _bounded(self, t: datetime) -> datetime | None:
        if in_range(t):
            return t
        self.out_of_range += 1
        self.unread += 1
        return None

    def _minute(self, y: int, mo: int, d: int, h: int, mi: int) -> datetime | None:
        """The minute in UTC, or None where the general path must read each line (a zone change inside the
        minute, no such date, a time outside TIME_MIN..TIME_MAX: that path counts them line by line)."""
        if not TIME_MIN.year < y < TIME_MAX.year - 1:
            return None
        try:
            first = datetime(y, mo, d, h, mi, 0, 0, tzinfo=self.tz)
        except ValueError:
            return None
        if first.utcoffset() != first.replace(second=59, microsecond=999999).utcoffset():
            return None
        return first.astimezone(UTC)

    def _yearless(self, mo: int, d: int, h: int, mi: int, s: int, us: int) -> datetime | None:
        t = self._local(self.year, mo, d, h, mi, s, us)
        # A window that crosses New Year: December lines belong to the year before.
        if t is not None and t - self.window_end > _HALF_YEAR:
            t = self._local(self.year - 1, mo, d, h, mi, s, us)
        return t

    def parse(self, line: str) -> Stamp | None:
        text = line.lstrip()
        m0 = _PREFIX.match(text) if text[:1] == "[" else None  # the pattern starts with `[`
        if m0:
            text = text[m0.end() :]
        wall = self._wall(text)
        if wall is None and "*** " in text:
            mb = _SLURM_BANNER.search(text)
            if mb:
                y, mo, d, h, mi, s = (int(mb.group(i)) for i in range(1, 7))
                wall = self._local(y, mo, d, h, mi, s, 0)
        if wall is None:
            wall = self._behind_leads(text)
        up: float | None = None
        mu = _UPTIME.search(text, 0, 80)
        if mu and not (text[:1] == "[" and wall is not None and mu.start() == 0):
            up = float(mu.group(1))
            if up >= _UPTIME_MAX:
                up = None
        if wall is None and up is None:
            return None
        return _new_stamp(Stamp, (wall, up))  # Stamp(wall, up) without the named tuple's own __new__ (a Python call)

    def _behind_leads(self, text: str) -> datetime | None:
        """The stamp behind the layers a writer or collector put first (_LEADS, a progress bar the line overwrote
        or was glued to), or None."""
        if "\r" in text:
            cut = text.rfind("\r", 0, len(text.rstrip()))
            text = text[cut + 1 :]
            wall = self._wall(text)
            if wall is not None:
                return wall
        for _ in range(_MAX_LEADS):
            m = _LEADS.match(text)
            end = m.end() if m is not None else progress_bar_end(text)
            if end <= 0 or end >= len(text):
                return None
            text = text[end:]
            wall = self._wall(text)
            if wall is not None:
                return wall
        return None

    def _wall(self, text: str) -> datetime | None:
        """The wall-clock stamp a line starts with (every form but the Slurm banner), or None."""
        wall: datetime | None = None
        c = text[:1]
        if c.isdigit():
            wall = self._iso_second(text) if _fast[0] else None
            if wall is None:
                m = _ISO.match(text)
                if m:
                    wall = self._iso(m)
                elif (m := _MONTH_DAY.match(text)) is not None and 1 <= int(m.group(1)) <= 12:
                    wall = self._yearless(int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)),
                                          int(m.group(5)), _frac(m.group(6)))
        elif c == "[":
            m = _DMESG_T.match(text)
            if m:
                mo = _MONTHS.get(m.group(1))
                if mo:
                    wall = self._local(
                        int(m.group(6)), mo, int(m.group(2)), int(m.group(3)), int(m.group(4)),
                        int(m.group(5)), 0,
                    )
            else:
                m = _FM.match(text)
                if m:
                    mo = _MONTHS.get(m.group(1))
                    if mo:
                        wall = self._local(
                            int(m.group(3)), mo, int(m.group(2)), int(m.group(4)), int(m.group(5)),
                            int(m.group(6)), 0,
                        )
                else:
                    m = _GLOG.match(text)
                    if m:
                        wall = self._glog(m)
                    else:
                        m = _EPOCH_UCX.match(text)
                        if m:
                            wall = _epoch(int(m.group(1)), _frac(m.group(2)))
        elif c.isupper():
            m = _GLOG.match(text) if c in "IWEF" else None
            if m:
                wall = self._glog(m)
            else:
                wall = self._bsd_second(text) if _fast[0] else None
                if wall is None:
                    m = _BSD.match(text)
                    if m and _fast[0]:
                        wall = self._bsd(m)
                    elif m:
                        mo = _MONTHS.get(m.group(1))
                        if mo:
                            wall = self._yearless(
                                mo, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                                _frac(m.group(6)),
                            )
                    else:
                        m = _CTIME.match(text)
                        mo = _MONTHS.get(m.group(1)) if m else None
                        if m and mo:
                            wall = self._ctime(m, mo)
        elif c == "t":
            m = _CLOCK12.match(text)
            if m:
                wall = self._clock12(m)
        elif c == "l":
            m = _EPOCH_LIBFABRIC.match(text)
            if m:
                wall = _epoch(int(m.group(1)), 0)
        elif c == "{":
            m = _EPOCH_JSON.match(text) or _EPOCH_JSON_LEGACY.search(text)
            if m:
                wall = _epoch(int(m.group(1)), int(m.group(2)) // 1000)
        return wall

    def _ctime(self, m: re.Match[str], mo: int) -> datetime | None:
        """A ctime stamp: in UTC where its zone says UTC or GMT, else in the bundle's zone."""
        y, d, h, mi, s = int(m.group(8)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
        us = _frac(m.group(6))
        if m.group(7) not in ("UTC", "GMT"):
            return self._local(y, mo, d, h, mi, s, us)
        try:
            return self._bounded(datetime(y, mo, d, h, mi, s, us, tzinfo=UTC))
        except ValueError:  # no such date, or year 0
            self.out_of_range += int(y < 1)
            self.unread += 1
            return None

    def _clock12(self, m: re.Match[str]) -> datetime | None:
        """A 12-hour stamp with no AM/PM (gcsfuse's text log): of its two readings, 12 hours apart, the one that
        falls in the window (an hour's slack either side); where neither does, the nearer to it; where both do (a
        window longer than 12 hours), the one nearer the last such stamp read, and with none read yet, no stamp
        (the line then takes the time of the nearest earlier stamped line of its file)."""
        d, mo, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        h, mi, s, us = int(m.group(4)), int(m.group(5)), int(m.group(6)), _frac(m.group(7))
        if not 1 <= h <= 12:
            self.unread += 1
            return None
        readings = [t for t in (self._local(y, mo, d, h % 12, mi, s, us), self._local(y, mo, d, h % 12 + 12, mi, s, us))
                    if t is not None]
        if not readings:
            return None
        lo, hi = min(self.ref, self.window_end) - _CLOCK12_SLACK, max(self.ref, self.window_end) + _CLOCK12_SLACK
        inside = [t for t in readings if lo <= t <= hi]
        if len(inside) == 1:
            chosen: datetime | None = inside[0]
        elif not inside:
            chosen = min(readings, key=lambda t: (lo - t) if t < lo else (t - hi))
        elif self._clock12_last is not None:
            last = self._clock12_last
            chosen = min(inside, key=lambda t: abs(t - last))
        else:
            chosen = None
        if chosen is not None:
            self._clock12_last = chosen
        return chosen

    def _iso_second(self, text: str) -> datetime | None:
        """A zone-less ISO stamp whose second an earlier line's match read, without the pattern (None:
        not known, or not zone-less). The pattern's head is 19 fixed-width characters with one way to
        match them, so they key the second; its optional tail (fraction, zone) is matched after them."""
        base = self._iso_seconds.get(text[:19])
        if base is None:
            return None
        tail = _ISO_TAIL.match(text, 19)  # all optional: it always matches
        if tail is None or tail.group(2) is not None:
            return None
        us = _frac(tail.group(1))
        return base + timedelta(0, 0, us) if us else base

    def _bsd_second(self, text: str) -> datetime | None:
        """A syslog stamp without a fraction (`Nov  2 10:00:07 `) whose second or minute an earlier line's
        match read, without the pattern (None: not known). The pattern's groups 1-4 are the first 12
        characters (anchored, one way to match them), `:SS ` after them the rest of such a match."""
        if text[15:16] != " ":
            return None
        wall = self._bsd_seconds.get(text[:15])
        if wall is not None:
            return wall
        got = self._bsd_minutes.get(text[:12]) if text[12:13] == ":" else None
        sec = text[13:15]
        if got is None or not (sec.isdigit() and sec.isascii()):
            return None
        wall = self._bsd_wall(got, int(sec), 0)
        if wall is not None and len(self._bsd_seconds) < _MINUTES_MAX:
            self._bsd_seconds[text[:15]] = wall
        return wall

    def _bsd(self, m: re.Match[str]) -> datetime | None:
        """A syslog stamp (`Nov  2 10:00:08[.123456]`) as the general path reads it, its minute read once:
        the stamp's text to the minute keys `_local`'s minute, each line adds its seconds (`_iso` too)."""
        key = m.string[m.start() : m.end(4)]
        got = self._bsd_minutes.get(key)
        if got is None:
            mo = _MONTHS.get(m.group(1))
            if not mo:
                return None
            d, h, mi = int(m.group(2)), int(m.group(3)), int(m.group(4))
            got = (self._minute_of(self.year, mo, d, h, mi), mo, d, h, mi)
            if len(self._bsd_minutes) < _MINUTES_MAX:
                self._bsd_minutes[key] = got
        return self._bsd_wall(got, int(m.group(5)), _frac(m.group(6)))

    def _bsd_wall(self, got: tuple[datetime | None, int, int, int, int], s: int, us: int) -> datetime | None:
        minute, mo, d, h, mi = got
        if minute is None or s >= 60:
            return self._yearless(mo, d, h, mi, s, us)
        t: datetime | None = minute + _offset(s, us)  # _local's own sum
        # _yearless: a window that crosses New Year puts December lines in the year before.
        if t is not None and t - self.window_end > _HALF_YEAR:
            t = self._local(self.year - 1, mo, d, h, mi, s, us)
        return t

    def _minute_of(self, y: int, mo: int, d: int, h: int, mi: int) -> datetime | None:
        """`_local`'s minute (and its cache), for the callers above that add the seconds themselves."""
        minute = self._minutes.get((y, mo, d, h, mi), _UNSEEN)
        if minute is _UNSEEN:
            minute = self._minute(y, mo, d, h, mi)
            if len(self._minutes) < 65536:
                self._minutes[(y, mo, d, h, mi)] = minute
        return minute

    def _iso(self, m: re.Match[str]) -> datetime | None:
        zone = m.group(8)
        if zone is None and _fast[0]:
            start = m.start()
            key = m.string[start : start + 16]  # fixed width: `2026-11-02 10:00`
            minute = self._iso_minutes.get(key, _UNSEEN)
            if minute is _UNSEEN:
                y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
                minute = self._minute_of(y, mo, d, h, mi)
                if len(self._iso_minutes) < _MINUTES_MAX:
                    self._iso_minutes[key] = minute
            s = int(m.group(6))
            if minute is not None and s < 60:
                second = minute + _SECONDS[s]
                if len(self._iso_seconds) < _MINUTES_MAX:
                    self._iso_seconds[m.string[start : start + 19]] = second
                us = _frac(m.group(7))
                return second + timedelta(0, 0, us) if us else second  # _local's own sum
        y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
        us = _frac(m.group(7))
        if zone is None:
            return self._local(y, mo, d, h, mi, s, us)
        try:
            if zone in ("Z", "UTC"):
                tz: tzinfo = UTC
            else:
                sign = 1 if zone[0] == "+" else -1
                digits = zone[1:].replace(":", "")
                tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))
            return self._bounded(datetime(y, mo, d, h, mi, s, us, tzinfo=tz).astimezone(UTC))
        except OverflowError:  # a year 1 or 9999 stamp that its offset takes past datetime's limits
            self.out_of_range += 1
            self.unread += 1
            return None
        except ValueError:  # no such date, or zone
            self.unread += 1
            return None

    def _glog(self, m: re.Match[str]) -> datetime | None:
        if _fast[0]:
            # `_bsd`'s way: the stamp's text to the minute (`1102 11:10`: the month's one or two digits are told by
            # the run's length) keys its minute, read once; each line adds its seconds (_bsd_wall: _yearless's sum).
            key = m.string[m.start(1) : m.end(4)]
            got = self._glog_minutes.get(key)
            if got is None:
                mo, d, h, mi = int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))
                got = (self._minute_of(self.year, mo, d, h, mi), mo, d, h, mi)
                if len(self._glog_minutes) < _MINUTES_MAX:
                    self._glog_minutes[key] = got
            return self._bsd_wall(got, int(m.group(5)), _frac(m.group(6)))
        return self._yearless(
            int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
            _frac(m.group(6)),
        )


def _epoch(seconds: int, us: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC) + timedelta(0, 0, us)


def parse_rfc3339(value: str) -> datetime:
    """Strict-enough RFC 3339 for workload.yaml; naive values are UTC. A ValueError for a time outside
    TIME_MIN..TIME_MAX (a window there could not be computed with)."""
    t = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    try:
        t = t.astimezone(UTC)
    except OverflowError:  # its offset takes it past datetime's own limits
        t = TIME_MAX if t.year > 5000 else datetime.min.replace(tzinfo=UTC)
    if not in_range(t):
        raise TimeRangeError(f"{value.strip()!r} is outside the times firstfault reads (years {TIME_MIN.year} "
                             f"to {TIME_MAX.year - 1})")
    return t


class TimeRangeError(ValueError):
    """A well-formed time outside TIME_MIN..TIME_MAX."""
