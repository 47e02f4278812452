/* The line scanner's byte loops in C (firstfault/collect/scan.py).
 *
 * count: bytes.count(b"\n") walks a buffer one byte at a time (about 1 GB/s);
 * this walks it with memchr, which the C library vectorises.
 *
 * prev_stamped: the walk back from an unstamped candidate to the nearest line
 * with a stamp skips, in C, the lines that cannot hold one (a burst of NCCL INFO
 * lines), so that Python parses only the lines that may.
 *
 * fold_run: the fold's dense loop (collect/fold.py), over the copies of a chatty
 * file whose variants are known, counts them without a Python call each, and passes
 * over the lines whose shape holds none of the prefilter's words; an unstamped
 * unrecognized copy's time is the stamp of the line its walk back stops at, read here.
 *
 * The sparse path (issue 27: the per-line path in compiled code): may_stamp tells
 * the lines TimeParser.parse cannot find a stamp on, so they cost no parse; lines_of
 * groups the prefilter's matches by line; fold_hits is fold_run over the prefilter's
 * hit lines (a kernel log whose noise repeats: its copies are a few of its lines);
 * Matches is Hyperscan's match callback in C, so a match costs no Python call; the fold's
 * loops keep the shapes of recent lines by their digit-masked bytes (fold_shape).
 *
 * Optional: scan.py falls back to bytes.count and to parsing every line when
 * this module is not built; the results are the same.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* count(buffer, start, end) -> the number of b"\n" in buffer[start:end] (indices clamped like slices). */
static PyObject *
lines_count(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t start, end, n = 0;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "count(buffer, start, end) takes 3 arguments");
        return NULL;
    }
    start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    end = PyLong_AsSsize_t(args[2]);
    if (end == -1 && PyErr_Occurred()) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    if (start < 0) { start += view.len; if (start < 0) start = 0; }
    if (end < 0) { end += view.len; if (end < 0) end = 0; }
    if (end > view.len) end = view.len;
    if (start < end) {
        const char *p = (const char *)view.buf + start, *stop = (const char *)view.buf + end;
        Py_BEGIN_ALLOW_THREADS
        const char *q;
        while (p < stop && (q = memchr(p, '\n', (size_t)(stop - p))) != NULL) {
            n++;
            p = q + 1;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(n);
}


static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Whether line p[0:n] may hold a stamp TimeParser.parse reads: every form it knows has a
 * `DD:DD:DD` time of day (ISO, syslog, dmesg -T, fabric manager, glog, slurmstepd's banner)
 * or a `D.DDD` uptime (`[ 123.456]`, UCX's Unix time), but libfabric's Unix time
 * (`libfabric:451707:1708520807::`) and gcsfuse's JSON one (`{"timestamp":{"seconds":1704697907,`),
 * told by their names; a byte over 0x7f may be a digit or a space of another script, which the str
 * patterns also read. A superset: parse decides. */
static int may_hold_stamp(const unsigned char *p, Py_ssize_t n)
{
    if (n >= 10) {
        const unsigned char *q = p, *stop = p + n - 10;
        while (q <= stop && (q = memchr(q, 'l', (size_t)(stop - q + 1))) != NULL) {
            if (memcmp(q, "libfabric:", 10) == 0) return 1;
            q++;
        }
    }
    if (n >= 24) {
        const unsigned char *q = p, *stop = p + n - 24;
        while (q <= stop && (q = memchr(q, '{', (size_t)(stop - q + 1))) != NULL) {
            if (memcmp(q, "{\"timestamp\":{\"seconds\":", 24) == 0) return 1;
            q++;
        }
    }
    if (n >= 19 && p[0] == '{') {  /* gcsfuse's JSON before v1: `..."timestampSeconds":1618078232,...}` */
        const unsigned char *q = p, *stop = p + n - 19;
        while (q <= stop && (q = memchr(q, '"', (size_t)(stop - q + 1))) != NULL) {
            if (memcmp(q, "\"timestampSeconds\":", 19) == 0) return 1;
            q++;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c >= 0x80)
            return 1;
        if (c == ':') {
            if (i >= 2 && i + 5 < n && is_digit(p[i - 1]) && is_digit(p[i - 2]) && is_digit(p[i + 1])
                && is_digit(p[i + 2]) && p[i + 3] == ':' && is_digit(p[i + 4]) && is_digit(p[i + 5]))
                return 1;
        } else if (c == '.') {
            if (i >= 1 && i + 3 < n && is_digit(p[i - 1]) && is_digit(p[i + 1]) && is_digit(p[i + 2])
                && is_digit(p[i + 3]))
                return 1;
        }
    }
    return 0;
}

struct stamp_clock;
static long long stamp_local_us(const unsigned char *p, Py_ssize_t n, const struct stamp_clock *ck);
#define STAMP_NONE (-2LL)
#define STAMP_CUT 200         /* stamps.line_stamp parses a walked-back line's first 200 bytes */

/* A line test of a walk back: nonzero where the walk stops at the line p[0:n] (its newline excluded). */
typedef int (*walk_test)(const unsigned char *p, Py_ssize_t n, void *arg);

/* Where a walk back stopped: the line's start (-1: none), the end of its text, and how many lines it took. */
struct walk { Py_ssize_t start, text_end, lines; };

/* The walk back every prev_* call makes, in LineScanner._walk_back's order: the line that ends at end - 1, then the
 * one before, ..., over at most `limit` lines and none that starts at or before `stop`, to the first `ok` takes. */
static struct walk
walk_back(const unsigned char *buf, Py_ssize_t stop, Py_ssize_t end, Py_ssize_t limit, walk_test ok, void *arg)
{
    struct walk w = {-1, 0, 0};
    Py_ssize_t cur = end;
    while (cur > 0 && w.lines < limit) {
        Py_ssize_t s = cur - 2;  /* s = buf.rfind(b"\n", 0, cur - 1) + 1 */
        while (s >= 0 && buf[s] != '\n') s--;
        s += 1;
        if (s <= stop) break;
        Py_ssize_t e = buf[cur - 1] == '\n' ? cur - 1 : cur;
        w.lines++;
        if (ok(buf + s, e - s, arg)) {
            w.start = s;
            w.text_end = e;
            break;
        }
        cur = s;
    }
    return w;
}

/* The numbers a prev_* call takes after its buffer (stop, end, limit); -1 with an exception set if one is not. */
static int
walk_args(PyObject *const *args, Py_ssize_t *stop, Py_ssize_t *end, Py_ssize_t *limit)
{
    *stop = PyLong_AsSsize_t(args[1]);
    if (*stop == -1 && PyErr_Occurred()) return -1;
    *end = PyLong_AsSsize_t(args[2]);
    if (*end == -1 && PyErr_Occurred()) return -1;
    *limit = PyLong_AsSsize_t(args[3]);
    if (*limit == -1 && PyErr_Occurred()) return -1;
    return 0;
}

static int
stamped_test(const unsigned char *p, Py_ssize_t n, void *arg)
{
    int read = *(const int *)arg;
    return may_hold_stamp(p, n) && !(read && stamp_local_us(p, n < STAMP_CUT ? n : STAMP_CUT, NULL) == STAMP_NONE);
}

/* prev_stamped(buffer, stop, end, limit[, read]) -> (start, stop_of_text, lines)
 *
 * Walks the lines before offset `end` back, as LineScanner._walk_back does (the line that ends
 * at end - 1, then the one before, ...), over at most `limit` lines and none that starts at or
 * before `stop`, to the first that may hold a stamp: its start, the end of its text (its newline
 * excluded) and how many lines the walk took, that one included. start is -1 when there is none.
 * With `read` true, a line whose first STAMP_CUT bytes stamp_local_us reads as no stamp (STAMP_NONE:
 * stamps.line_stamp's reading of a line without an srun label, whatever the clock) is walked over too:
 * an mpirun output's tagged lines all hold a stamp's characters, and were each parsed in Python. */
static PyObject *
lines_prev_stamped(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t stop, end, limit;
    int read = 0;
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "prev_stamped(buffer, stop, end, limit[, read]) takes 4 or 5 arguments");
        return NULL;
    }
    if (nargs == 5 && (read = PyObject_IsTrue(args[4])) < 0) return NULL;
    if (walk_args(args, &stop, &end, &limit) < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    if (end > view.len) end = view.len;
    struct walk w = walk_back((const unsigned char *)view.buf, stop, end, limit, stamped_test, &read);
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnn)", w.start, w.text_end, w.lines);
}


/* The hex ids of a line whose digits are already '0' (memo.line_shape, the one definition): a token, the
 * longest run of word bytes ([0-9A-Za-z_] and any byte over 0x7f), that is HEX_MIN or more hex digits, or
 * "0x" and one or more hex digits, has its hex letters made '0', and so has a UUID (five such tokens of 8, 4,
 * 4, 4 and 12 hex digits joined by '-'). One pass; each byte is looked at a bounded number of times. */
#define HEX_MIN 8
static int is_word(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static int is_hex0(unsigned char c) {  /* a hex digit, the digits already '0' */
    return c == '0' || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int hex_run(const unsigned char *s, Py_ssize_t n, Py_ssize_t at, Py_ssize_t len) {
    if (at + len > n) return 0;
    for (Py_ssize_t j = at; j < at + len; j++)
        if (!is_hex0(s[j])) return 0;
    return 1;
}
/* The end of a UUID (8-4-4-4-12 hex digits joined by '-', a whole token each) that starts at a token's
 * start `a`, or -1. */
static Py_ssize_t uuid_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t a) {
    static const Py_ssize_t groups[5] = {8, 4, 4, 4, 12};
    Py_ssize_t p = a;
    for (int g = 0; g < 5; g++) {
        if (g > 0) {
            if (p >= n || s[p] != '-') return -1;
            p++;
        }
        if (!hex_run(s, n, p, groups[g])) return -1;
        p += groups[g];
    }
    return (p < n && is_word(s[p])) ? -1 : p;
}
/* Byte classes for the token loop below (is_word's and is_hex0's, one lookup each byte). */
#define CLS_WORD 1
#define CLS_HEX 2
static unsigned char byte_class[256];
static void byte_classes(void) {
    for (int c = 0; c < 256; c++)
        byte_class[c] = (unsigned char)((is_word((unsigned char)c) ? CLS_WORD : 0) | (is_hex0((unsigned char)c) ? CLS_HEX : 0));
}
/* A PCI address (domain:bus:device, then `.function` or not: `0000:3b:00.0`, `PCI:0000:3b:00`'s is not one, see
 * below) that starts a token at `a`: its 10 bytes, or 0. It stands after the line's start, a space, a tab, `(` or
 * `[`, and before the line's end or one of ` \t)],;` (`.`, one digit and then one of those or `:` where it has a
 * function): only where the unrecognized templates' <HEX> mask (extract/unrecognized.py) takes it whole, whatever
 * its hex letters, and no earlier mask reaches into it; a MAC-like `0000:3b:00:11` is not one. */
static int is_pci_end(unsigned char c) { return c == ' ' || c == '\t' || c == ')' || c == ']' || c == ',' || c == ';'; }
static Py_ssize_t pci_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t a) {
    if (a > 0 && s[a - 1] != ' ' && s[a - 1] != '\t' && s[a - 1] != '(' && s[a - 1] != '[') return 0;
    if (a + 10 > n || !hex_run(s, n, a, 4) || s[a + 4] != ':' || !hex_run(s, n, a + 5, 2) || s[a + 7] != ':'
            || !hex_run(s, n, a + 8, 2))
        return 0;
    Py_ssize_t j = a + 10;
    if (j == n || is_pci_end(s[j])) return 10;
    if (s[j] == '.' && j + 1 < n && s[j + 1] == '0' && (j + 2 == n || is_pci_end(s[j + 2]) || s[j + 2] == ':'))
        return 10;
    return 0;
}
static void shape_hex(unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    if (!byte_class['0']) byte_classes();
    while (i < n) {
        if (!(byte_class[s[i]] & CLS_WORD)) { i++; continue; }
        Py_ssize_t a = i, from;
        if (a + 10 <= n && s[a + 4] == ':' && pci_at(s, n, a)) {
            for (; i < a + 10; i++)
                if (s[i] != ':') s[i] = '0';
            continue;
        }
        if (a + 36 <= n && s[a + 8] == '-') {  /* a UUID is 36 bytes, its first '-' the ninth */
            Py_ssize_t u = uuid_end(s, n, a);
            if (u >= 0) {
                for (; i < u; i++)
                    if (s[i] != '-') s[i] = '0';
                continue;
            }
        }
        int hex = CLS_HEX;
        while (i < n && (byte_class[s[i]] & CLS_WORD)) { hex &= byte_class[s[i]]; i++; }
        if (hex && i - a >= HEX_MIN) from = a;
        else if (i - a >= 3 && s[a] == '0' && s[a + 1] == 'x') {
            Py_ssize_t j;
            for (j = a + 2; j < i && is_hex0(s[j]); j++)
                ;
            if (j < i) continue;
            from = a + 2;
        } else continue;
        for (Py_ssize_t j = from; j < i; j++) s[j] = '0';
    }
}

#define FOLD_MAX_LINE 2000
static PyObject *fold_shape(const unsigned char *line, Py_ssize_t n, int *ascii);

/* line_shape(bytes) -> bytes: memo.line_shape_py in one call (every digit '0', hex ids' letters '0'). An ASCII
 * line of at most FOLD_MAX_LINE bytes is shaped through fold_shape's memo, so that the shape the fold puts in
 * its table and quiet set (LineFold.table_add, quiet_add) is the object fold_run's and fold_hits' lookups of its
 * next copies get back from the memo: the dict and set find their key by identity, not by a compare of the
 * line's bytes, on every line of a dense log. */
static PyObject *
lines_line_shape(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len <= FOLD_MAX_LINE) {
        int ascii = 1;
        PyObject *memo = fold_shape((const unsigned char *)view.buf, view.len, &ascii);
        if (memo != NULL || ascii) {  /* the memo's shape, or an error */
            PyBuffer_Release(&view);
            return memo;
        }
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, view.len);
    if (out != NULL) {
        const unsigned char *src = (const unsigned char *)view.buf;
        unsigned char *s = (unsigned char *)PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < view.len; i++) {
            unsigned char c = src[i];
            s[i] = (c >= '0' && c <= '9') ? '0' : c;
        }
        shape_hex(s, view.len);
    }
    PyBuffer_Release(&view);
    return out;
}


/* ---- Stamps: TimeParser.parse's reading of one line (firstfault/timeparse.py, the one definition), in C
 * where it is sure of it. stamp_local_us answers with the line's time as local microseconds (those of
 * fold._local_us: since 0001-01-01, the bundle's local clock), STAMP_NONE where parse reads no stamp at all
 * (a walk back then goes on past the line), or STAMP_UNKNOWN where anything could differ (Python decides):
 * a byte over 0x7f (a digit or a space of another script, a character count unlike the byte count), a
 * stamp with a zone, an uptime (the file's Clock keeps the boot time from it), a date that does not exist,
 * a yearless stamp without the year's context or near where TimeParser._yearless moves it a year back, a
 * layer before the stamp other than the few read here, and any form not read here. */
#define STAMP_UNKNOWN (-1LL)
#define STAMP_NOMATCH (-3LL)  /* a form's pattern does not match (inside this section only) */
/* Local microseconds this far from the yearless cut decide the year without knowing the zone: two
 * instants' UTC offsets differ by less (offsets lie within -12 and +14 hours). */
#define STAMP_CUT_MARGIN (2LL * 86400 * 1000000)

/* The year context of the yearless stamps (glog's `MMDD`, syslog's `Mon DD`): TimeParser.year, and
 * window_end + 180 days as local microseconds, less and plus STAMP_CUT_MARGIN (a stamp later than that in
 * TimeParser.year is read in the year before). year 0: none (yearless stamps are left to Python). */
struct stamp_clock { long long year, cut_lo, cut_hi; int fixed; long long off_us; };
/* The clock of the C call in progress (fold_run's, copy_time's: each holds the GIL throughout, sets it first and
 * clears it last); copy_local_us reads it. */
static struct stamp_clock fold_clock;

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n'; }
/* A white space for str.lstrip and for the str patterns' \s, below 0x80: also the separators 0x1c-0x1f. */
static int is_pyspace(unsigned char c) { return is_space(c) || (c >= 0x1c && c <= 0x1f); }
static int is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static long long num(const unsigned char *p, int k) {
    long long v = 0;
    for (int i = 0; i < k; i++) {
        if (!is_digit(p[i])) return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}
static int has(const unsigned char *p, Py_ssize_t n, const char *what) {
    size_t k = strlen(what);
    for (Py_ssize_t i = 0; i + (Py_ssize_t)k <= n; i++)
        if (p[i] == (unsigned char)what[0] && memcmp(p + i, what, k) == 0) return 1;
    return 0;
}

/* The local microseconds of a date and time of day that exist (a year 1001-8998: always in the times the
 * analysis holds; seconds below 60), or STAMP_UNKNOWN (TimeParser._local reads none: no such date). */
static long long local_count(long long y, long long mo, long long d, long long h, long long mi, long long sec,
                             long long us)
{
    static const int before[13] = {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    static const int dim[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1001 || y > 8998 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0
            || sec > 59)
        return STAMP_UNKNOWN;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > dim[mo] + (mo == 2 && leap)) return STAMP_UNKNOWN;
    long long yy = y - 1;
    long long ordinal = yy * 365 + yy / 4 - yy / 100 + yy / 400 + before[mo] + (mo > 2 && leap) + d;
    return ((ordinal * 24 + h) * 60 + mi) * 60000000LL + sec * 1000000LL + us;
}

/* _frac: the first 6 of k fraction digits at p, as microseconds. */
static long long frac_us(const unsigned char *p, int k)
{
    long long us = 0;
    for (int i = 0; i < 6; i++) us = us * 10 + (i < k ? p[i] - '0' : 0);
    return us;
}

/* `(?:\.(\d{1,9}))?\s` at p[q:n] (glog's and syslog's end): the fraction's microseconds in *us, or -1 where
 * it does not match (more than 9 digits, none, no white space after). */
static int frac_space(const unsigned char *p, Py_ssize_t n, Py_ssize_t q, long long *us)
{
    *us = 0;
    if (q < n && p[q] == '.') {
        Py_ssize_t k = 0;
        while (q + 1 + k < n && is_digit(p[q + 1 + k])) k++;
        if (k < 1 || k > 9 || q + 1 + k >= n || !is_pyspace(p[q + 1 + k])) return -1;
        *us = frac_us(p + q + 1, (int)k);
        return 0;
    }
    return q < n && is_pyspace(p[q]) ? 0 : -1;
}

/* `HH:MM:SS` at p[q:n]: 0 and the fields, or -1. */
static int clock_time(const unsigned char *p, Py_ssize_t n, Py_ssize_t q, long long *h, long long *mi,
                      long long *sec)
{
    if (q + 8 > n || p[q + 2] != ':' || p[q + 5] != ':') return -1;
    *h = num(p + q, 2);
    *mi = num(p + q + 3, 2);
    *sec = num(p + q + 6, 2);
    return *h < 0 || *mi < 0 || *sec < 0 ? -1 : 0;
}

/* TimeParser._yearless: the stamp in TimeParser.year, or the year before where that is more than half a year
 * after the window's end; STAMP_UNKNOWN without the context, near the cut, or where no such date exists. */
static long long yearless_us(const struct stamp_clock *ck, long long mo, long long d, long long h, long long mi,
                             long long sec, long long us)
{
    if (ck == NULL || ck->year == 0) return STAMP_UNKNOWN;
    long long t = local_count(ck->year, mo, d, h, mi, sec, us);
    if (t < 0 || t <= ck->cut_lo) return t;
    if (t < ck->cut_hi) return STAMP_UNKNOWN;
    return local_count(ck->year - 1, mo, d, h, mi, sec, us);
}

/* timeparse._ISO at the start of p[0:n] where it reads a zone-less stamp: its local microseconds (a date
 * and time that exist); STAMP_UNKNOWN where the pattern does not match, reads a zone (`Z`, `UTC`, `+hh:mm`,
 * also behind one white space) or no time. */
static long long iso_head(const unsigned char *p, Py_ssize_t n)
{
    if (n < 19 || p[4] != '-' || p[7] != '-' || (p[10] != ' ' && p[10] != 'T') || p[13] != ':' || p[16] != ':')
        return STAMP_UNKNOWN;
    long long y = num(p, 4), mo = num(p + 5, 2), d = num(p + 8, 2), h = num(p + 11, 2), mi = num(p + 14, 2),
              sec = num(p + 17, 2);
    if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0) return STAMP_UNKNOWN;
    Py_ssize_t q = 19;
    long long us = 0;
    if (q + 1 < n && (p[q] == '.' || p[q] == ',') && is_digit(p[q + 1])) {  /* _frac: the first 6 digits */
        int k = 0;
        q++;
        while (q + k < n && k < 9 && is_digit(p[q + k])) k++;
        us = frac_us(p + q, k);
        q += k;
    }
    if (q < n && is_pyspace(p[q])) q++;
    if (q < n && (p[q] == 'Z' || ((p[q] == '+' || p[q] == '-') && q + 2 < n && is_digit(p[q + 1])
                                  && is_digit(p[q + 2]))))
        return STAMP_UNKNOWN;
    if (q + 2 < n && p[q] == 'U' && p[q + 1] == 'T' && p[q + 2] == 'C') return STAMP_UNKNOWN;
    return local_count(y, mo, d, h, mi, sec, us);
}

/* timeparse._GLOG (`[W1102 10:22:33.123456 `, the `[` optional) at the start of p[0:n]: STAMP_NOMATCH, or
 * what it reads (yearless_us). */
static long long glog_us(const unsigned char *p, Py_ssize_t n, const struct stamp_clock *ck)
{
    Py_ssize_t i = n > 0 && p[0] == '[' ? 1 : 0, k;
    long long mo, d, h, mi, sec, us;
    if (i >= n || (p[i] != 'I' && p[i] != 'W' && p[i] != 'E' && p[i] != 'F')) return STAMP_NOMATCH;
    for (k = i + 1; k < n && is_digit(p[k]); k++)
        ;
    if ((k - i - 1 != 3 && k - i - 1 != 4) || k >= n || p[k] != ' ') return STAMP_NOMATCH;
    mo = num(p + i + 1, (int)(k - i - 3));  /* (\d{1,2})(\d{2}): the day is the last two digits */
    d = num(p + k - 2, 2);
    if (clock_time(p, n, k + 1, &h, &mi, &sec) < 0 || frac_space(p, n, k + 9, &us) < 0) return STAMP_NOMATCH;
    return yearless_us(ck, mo, d, h, mi, sec, us);
}

/* timeparse._BSD (syslog's `Nov  2 10:00:07[.123] `) at the start of p[0:n]: STAMP_NOMATCH, or what it reads
 * (yearless_us; STAMP_UNKNOWN for a name that is no month, which TimeParser reads as no stamp). */
static long long bsd_us(const unsigned char *p, Py_ssize_t n, const struct stamp_clock *ck)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    Py_ssize_t q = 3, sp, dg;
    long long mo = 0, d, h, mi, sec, us;
    if (n < 4 || !is_upper(p[0]) || !is_lower(p[1]) || !is_lower(p[2])) return STAMP_NOMATCH;
    for (sp = 0; q < n && p[q] == ' '; q++) sp++;
    for (dg = 0; q < n && is_digit(p[q]); q++) dg++;
    if (sp < 1 || sp > 2 || dg < 1 || dg > 2 || q >= n || p[q] != ' ') return STAMP_NOMATCH;
    d = num(p + q - dg, (int)dg);
    if (clock_time(p, n, q + 1, &h, &mi, &sec) < 0 || frac_space(p, n, q + 9, &us) < 0) return STAMP_NOMATCH;
    for (int m = 0; m < 12; m++)
        if (memcmp(p, months + 3 * m, 3) == 0) mo = m + 1;
    if (mo == 0) return STAMP_UNKNOWN;
    return yearless_us(ck, mo, d, h, mi, sec, us);
}

/* Whether timeparse._UPTIME's form (`[ 123.456]`: spaces, 1-10 digits, a dot, 3-9 digits, `]`) stands at the `[`
 * of p[i], within p[0:lim]. */
static int uptime_form(const unsigned char *p, Py_ssize_t i, Py_ssize_t lim)
{
    Py_ssize_t j = i + 1, a, b;
    while (j < lim && is_pyspace(p[j])) j++;
    for (a = j; j < lim && is_digit(p[j]); j++)
        ;
    if (j - a < 1 || j - a > 10 || j >= lim || p[j] != '.') return 0;
    for (b = ++j; j < lim && is_digit(p[j]); j++)
        ;
    return j - b >= 3 && j - b <= 9 && j < lim && p[j] == ']';
}

/* Where timeparse._UPTIME (`[ 123.456]`) first matches in p[0:n], searched to offset 80 (parse's endpos), or -1. */
static Py_ssize_t uptime_at(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t lim = n < 80 ? n : 80;
    for (Py_ssize_t i = 0; i < lim; i++)
        if (p[i] == '[' && uptime_form(p, i, lim)) return i;
    return -1;
}

/* Whether one of timeparse._LEADS's layers (or a tqdm bar: progress_bar_end) may start p[0:n]: a superset, so
 * that a line where it says no reads no stamp behind a layer. */
static int may_lead(const unsigned char *p, Py_ssize_t n)
{
    static const char *const words[] = {"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp",
                                        "cron", "ftp", "local", "DEBUG ", "INFO ", "WARNING ", "ERROR ",
                                        "CRITICAL "};
    if (n == 0) return 0;
    if (has(p, n, "it/s]") || has(p, n, "s/it]")) return 1;  /* a progress bar */
    unsigned char c = p[0];
    /* PRI, a quote, Ray's tag, a colour, a banner rule, a JSON record's stamp key (`{"timestamp":"`) */
    if (strchr("<>(\x1b=-*#~{", c) != NULL) return 1;
    if (c == '[') {
        /* Open MPI's [1,3]<stdout>:, a colour's residue, NCCL's bracket: a digit first; [rank3]:, [cli_3]:,
         * [trainer3|3]: letters, then digits, then `]` or `|` */
        Py_ssize_t j = 1, k;
        if (n > 1 && is_digit(p[1])) return 1;
        while (j < n && (is_upper(p[j]) || is_lower(p[j]) || p[j] == '_')) j++;
        if (j == 1) return 0;
        for (k = j; k < n && is_digit(p[k]); k++)
            ;
        return k > j && k < n && (p[k] == ']' || p[k] == '|');
    }
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t k = strlen(words[w]);
        if ((Py_ssize_t)k <= n && memcmp(p, words[w], k) == 0) return 1;
    }
    /* grep -H FILE:, pdsh's host:, grep -n's N: (a run of [\w.\-/] holding a digit, `.` or `/`, then `:`, or
     * a `-` in it) */
    Py_ssize_t L = 0;
    int mark = 0, dash = 0;
    while (L < n && (is_upper(p[L]) || is_lower(p[L]) || is_digit(p[L]) || p[L] == '_' || p[L] == '.'
                     || p[L] == '-' || p[L] == '/')) {
        mark |= is_digit(p[L]) || p[L] == '.' || p[L] == '/';
        dash |= p[L] == '-';
        L++;
    }
    return L > 0 && mark && (dash || (L < n && p[L] == ':'));
}

/* timeparse._EPOCH_UCX (`[1506867524.064665] [host:pid:tid]`, UCX's Unix time) at the start of p[0:n]: STAMP_NOMATCH,
 * or its local microseconds where the zone has one UTC offset (the clock's `fixed`), else STAMP_UNKNOWN. */
static long long ucx_epoch_us(const unsigned char *p, Py_ssize_t n, const struct stamp_clock *ck)
{
    Py_ssize_t q, k;
    if (n < 13 || p[0] != '[' || num(p + 1, 10) < 0 || p[11] != '.') return STAMP_NOMATCH;
    for (k = 0; 12 + k < n && is_digit(p[12 + k]); k++)
        ;
    if (k < 1 || k > 9 || 12 + k >= n || p[12 + k] != ']') return STAMP_NOMATCH;
    q = 13 + k;
    if (q >= n || p[q] != ' ') return STAMP_NOMATCH;
    while (q < n && p[q] == ' ') q++;
    if (q >= n || p[q] != '[') return STAMP_NOMATCH;  /* `\[[\w.\-]+: *\d+` */
    Py_ssize_t w = ++q;
    while (q < n && (is_upper(p[q]) || is_lower(p[q]) || is_digit(p[q]) || p[q] == '_' || p[q] == '.' || p[q] == '-'))
        q++;
    if (q == w || q >= n || p[q] != ':') return STAMP_NOMATCH;
    q++;
    while (q < n && p[q] == ' ') q++;
    if (q >= n || !is_digit(p[q])) return STAMP_NOMATCH;
    if (ck == NULL || !ck->fixed) return STAMP_UNKNOWN;
    return local_count(1970, 1, 1, 0, 0, 0, 0) + num(p + 1, 10) * 1000000LL + frac_us(p + 12, (int)k) + ck->off_us;
}

/* Whether any of timeparse._wall's forms could match somewhere in p[0:n] (after any layers _behind_leads peels, or
 * a carriage return): each holds a time of day `dd:dd:dd` (ISO, vLLM's, dmesg -T's, the fabric manager's, glog's,
 * syslog's, ctime's), or is UCX's `[` and 10 digits and `.`, libfabric's `libfabric:` or gcsfuse's JSON `{"timestamp":
 * {"seconds":`. A line with none reads
 * as no wall-clock stamp whatever layers stand before its text. */
static int may_hold_time(const unsigned char *p, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c == ':' && i >= 2 && i + 5 < n && is_digit(p[i - 1]) && is_digit(p[i - 2]) && is_digit(p[i + 1])
                && is_digit(p[i + 2]) && p[i + 3] == ':' && is_digit(p[i + 4]) && is_digit(p[i + 5]))
            return 1;
        if (c == '[' && i + 11 < n && num(p + i + 1, 10) >= 0 && p[i + 11] == '.') return 1;
        if (c == 'l' && i + 10 <= n && memcmp(p + i, "libfabric:", 10) == 0) return 1;
        /* gcsfuse's JSON record, its time as seconds and nanoseconds (timeparse._EPOCH_JSON) */
        if (c == '{' && i + 24 <= n && memcmp(p + i, "{\"timestamp\":{\"seconds\":", 24) == 0) return 1;
    }
    return 0;
}

/* Open MPI's --tag-output (`[1,3]<stdout>:`, then one space or none: the first of timeparse._LEADS that matches
 * such a line) at the start of p[0:n]: its length, or 0. */
static Py_ssize_t ompi_tag(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t q = 1, a;
    if (n < 1 || p[0] != '[') return 0;
    for (a = q; q < n && is_digit(p[q]); q++)
        ;
    if (q == a || q >= n || p[q] != ',') return 0;
    for (a = ++q; q < n && is_digit(p[q]); q++)
        ;
    if (q == a || q + 1 >= n || p[q] != ']' || p[q + 1] != '<') return 0;
    q += 2;
    if (q + 7 <= n && (memcmp(p + q, "stdout>", 7) == 0 || memcmp(p + q, "stderr>", 7) == 0)) q += 7;
    else return 0;
    if (q >= n || p[q] != ':') return 0;
    q++;
    if (q < n && p[q] == ' ') q++;
    return q;
}

/* timeparse._UPTIME's first match in p[0:n] (uptime_at) where parse takes it: not one of 10 digits that reads as
 * 1e9 or more (UCX's Unix time in brackets, which parse reads as no uptime). */
static Py_ssize_t uptime_taken(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t at = uptime_at(p, n), j;
    if (at < 0) return -1;
    for (j = at + 1; is_pyspace(p[j]); j++)
        ;
    return num(p + j, 10) >= 1000000000LL && p[j + 10] == '.' ? -1 : at;
}

static long long stamp_local_us(const unsigned char *p, Py_ssize_t n, const struct stamp_clock *ck)
{
    Py_ssize_t i, k;
    long long wall = STAMP_NOMATCH;
    for (i = 0; i < n; i++)
        if (p[i] >= 0x80) return STAMP_UNKNOWN;
    for (i = 0; i < n && is_pyspace(p[i]); i++)  /* text = line.lstrip() */
        ;
    p += i;
    n -= i;
    if (n > 0 && p[0] == '[') {  /* _PREFIX: [rank3]:, [default3]: */
        for (i = 1; i < n && (is_upper(p[i]) || is_lower(p[i])); i++)
            ;
        for (k = i; k < n && is_digit(p[k]); k++)
            ;
        if (i > 1 && k > i && k + 1 < n && p[k] == ']' && p[k + 1] == ':') {
            p += k + 2;
            n -= k + 2;
        }
    }
    unsigned char c = n > 0 ? p[0] : 0;
    if (is_digit(c)) {
        wall = iso_head(p, n);  /* or _MONTH_DAY, a layer, ...: Python */
        if (wall < 0) return STAMP_UNKNOWN;
    } else if (c == '[') {
        if (n >= 5 && is_upper(p[1]) && is_lower(p[2]) && is_lower(p[3]) && p[4] == ' ')
            return STAMP_UNKNOWN;  /* dmesg -T's or the fabric manager's */
        wall = glog_us(p, n, ck);
        if (wall == STAMP_NOMATCH) wall = ucx_epoch_us(p, n, ck);
        Py_ssize_t tag = wall == STAMP_NOMATCH ? ompi_tag(p, n) : 0;
        if (tag > 0) {
            /* Open MPI's tag: no form of _wall matches the line, and the first layer of _LEADS is the tag
             * (_behind_leads, where neither the banner nor a carriage return comes first): the stamp is read
             * from the text behind it, UCX's Unix time here; where none of _wall's forms may start it and no
             * further layer may, it reads as none (Python takes the rest). */
            const unsigned char *r = p + tag;
            Py_ssize_t m = n - tag;
            if (has(p, n, "*** ") || memchr(p, '\r', (size_t)n) != NULL) return STAMP_UNKNOWN;
            if (m > 0) {
                unsigned char c2 = r[0];
                wall = ucx_epoch_us(r, m, ck);
                if (wall == STAMP_NOMATCH && (is_digit(c2) || is_upper(c2) || c2 == '[' || c2 == 'l' || may_lead(r, m))
                        && may_hold_time(r, m))
                    return STAMP_UNKNOWN;
                if (wall != STAMP_NOMATCH && wall < 0) return STAMP_UNKNOWN;
            }
            Py_ssize_t up = uptime_taken(p, n);
            if (up >= 0) return STAMP_UNKNOWN;
            return wall >= 0 ? wall : STAMP_NONE;
        }
        if (wall == STAMP_NOMATCH && n > 1 && is_digit(p[1])) {
            /* A bracketed ISO stamp (NCCL's, DeepSpeed's `[2024-11-02 10:22:33,123]`): no form of _wall matches
             * (UCX's Unix time needs 10 digits, then `.`), and the first of _LEADS that does is the bracket;
             * the stamp is then read from the text behind it (_behind_leads, where neither the banner nor a
             * carriage return comes first). Any other `[` and a digit: Python. */
            if (n < 12 || num(p + 1, 4) < 0 || p[5] != '-' || num(p + 6, 2) < 0 || p[8] != '-' || num(p + 9, 2) < 0
                    || (p[11] != 'T' && p[11] != ' ') || has(p, n, "*** ") || memchr(p, '\r', (size_t)n) != NULL)
                return STAMP_UNKNOWN;
            wall = iso_head(p + 1, n - 1);
        }
        if (wall != STAMP_NOMATCH && wall < 0) return STAMP_UNKNOWN;
    } else if (is_upper(c)) {
        if (c == 'I' || c == 'W' || c == 'E' || c == 'F') wall = glog_us(p, n, ck);
        if (wall == STAMP_NOMATCH) wall = bsd_us(p, n, ck);
        if (wall == STAMP_NOMATCH && n >= 4 && p[3] == ' ') {
            static const char days[] = "MonTueWedThuFriSatSun";
            for (int w = 0; w < 7; w++)
                if (memcmp(p, days + 3 * w, 3) == 0) return STAMP_UNKNOWN;  /* ctime's */
        }
        if (wall != STAMP_NOMATCH && wall < 0) return STAMP_UNKNOWN;
    } else if (c == 'l' && n >= 10 && memcmp(p, "libfabric:", 10) == 0) {
        return STAMP_UNKNOWN;
    } else if (c == '{' && has(p, n, "\"timestampSeconds\":")) {
        return STAMP_UNKNOWN;  /* gcsfuse's JSON before v1, its Unix time last (timeparse._EPOCH_JSON_LEGACY) */
    } else if (c == 't' && n >= 6 && memcmp(p, "time=\"", 6) == 0) {
        return STAMP_UNKNOWN;  /* gcsfuse's 12-hour stamp (timeparse._CLOCK12): its reading needs the window */
    }
    Py_ssize_t up = uptime_taken(p, n);
    if (wall >= 0)  /* an uptime beside it: the file's Clock takes the boot time from the line (Python) */
        return up >= 0 && !(p[0] == '[' && up == 0) ? STAMP_UNKNOWN : wall;
    /* No form of _wall matches: the line reads as no stamp unless the banner, a layer or an uptime gives one. */
    if (up >= 0 || has(p, n, "*** ") || ((memchr(p, '\r', (size_t)n) != NULL || may_lead(p, n)) && may_hold_time(p, n)))
        return STAMP_UNKNOWN;
    return STAMP_NONE;
}

/* copy_local_us's answer where the copy and every line before it, back to `stop` or the buffer's start, read as no
 * stamp: the copy then takes the time of the line read before them (the caller's; a C loop reads it as -1). */
#define COPY_NO_STAMP (-4LL)

static int same_clock(const struct stamp_clock *a, const struct stamp_clock *b)
{
    return a->year == b->year && a->cut_lo == b->cut_lo && a->cut_hi == b->cut_hi && a->fixed == b->fixed
           && a->off_us == b->off_us;
}

/* The last walk back of copy_local_us (scan.py's walk_far, in C): the buffer (a bytes object, held), its stop
 * and clock, the line it started from and what the lines before that line gave. A walk from a later line, with
 * the same stop, reads the lines down to that one and then takes its answer: else the copies of an unstamped
 * line folded since the last line read in full each walk back over all of them (quadratic in a chunk: an mpirun
 * output whose UCX stamps stop reading as stamps, issue 27's shape j). `walk_buffer`: the bytes object of the C
 * call in progress (borrowed; NULL: none, and no memo). */
static struct {
    PyObject *buffer;
    Py_ssize_t stop, from;
    long long answer;
    struct stamp_clock ck;
    /* where the answer is a stamp: its line (start, end of text); and the lines walked from `from` to that line
     * (itself counted) or, where there is none, to `stop` or the buffer's start: prev_stamp_us answers a walk of
     * `limit` lines from it (stamps.walk_back: a held copy's walk after the C loop's, over the same lines) */
    Py_ssize_t a_start, a_end, lines;
} walk_memo;
static PyObject *walk_buffer;

/* Keep a walk back's answer (of the lines before `from`, down to `stop`) as walk_memo, for `buffer` (a bytes object,
 * borrowed; NULL: none kept). */
static void
walk_memo_keep(PyObject *buffer, Py_ssize_t stop, Py_ssize_t from, long long answer, const struct stamp_clock *ck,
               Py_ssize_t a_start, Py_ssize_t a_end, Py_ssize_t lines)
{
    if (buffer == NULL) return;
    if (walk_memo.buffer != buffer) {
        Py_INCREF(buffer);
        Py_XSETREF(walk_memo.buffer, buffer);
    }
    walk_memo.stop = stop;
    walk_memo.from = from;
    walk_memo.answer = answer;
    walk_memo.ck = *ck;
    walk_memo.a_start = a_start;
    walk_memo.a_end = a_end;
    walk_memo.lines = lines;
}
/* fold_run's `before`: the time of the line read before `stop` as fold_clock counts it (a copy that is
 * COPY_NO_STAMP takes it), BEFORE_NO_TIME where that line has none (such a copy is never earlier than a floor:
 * fold._Variant.after), or BEFORE_UNKNOWN (Python works such a copy out). Set for the call, as fold_clock. */
#define BEFORE_NO_TIME (-1LL)
#define BEFORE_UNKNOWN (-2LL)
static long long fold_before = BEFORE_UNKNOWN;

/* The time reading a copy at buf[pos:pos+n] would give it, as the local microseconds of stamp_local_us: its
 * own stamp's, where it holds one (parse reads its whole text), else the stamp of the nearest line before it,
 * after offset `stop` (the last line read in full) and within `limit` lines, that reads to one (its first
 * STAMP_CUT bytes, as stamps.line_stamp; lines that read to none are walked over, as stamps.walk_back does);
 * COPY_NO_STAMP where none before it does, back to `stop` or the buffer's start. -1 where any of them is not
 * read here, or past `limit` lines. The yearless stamps are read in fold_clock's year. */
static long long copy_local_us(const unsigned char *buf, Py_ssize_t pos, Py_ssize_t n, Py_ssize_t stop,
                               Py_ssize_t limit)
{
    if (may_hold_stamp(buf + pos, n)) {
        long long t = stamp_local_us(buf + pos, n, &fold_clock);
        if (t != STAMP_NONE) return t < 0 ? -1 : t;
    }
    int memo = walk_buffer != NULL && walk_memo.buffer == walk_buffer && walk_memo.stop == stop
               && walk_memo.from <= pos && same_clock(&walk_memo.ck, &fold_clock);
    /* With the memo, each line between two lines read in full is walked over once, however far the walks go: no
     * limit then (the answer is the one Python's walk, which has none, gives: scan.py walk_far). A stampless run
     * of thousands of lines (an mpirun output whose stamps stop reading as stamps) stopped at `limit` and left
     * each later copy of the chunk to Python, and Python walked the same lines again. */
    if (walk_buffer != NULL) limit = PY_SSIZE_T_MAX;
    long long answer = -1;
    Py_ssize_t cur = pos, a_start = -1, a_end = 0, lines = 0;
    for (Py_ssize_t k = 0;; k++) {
        if (memo && cur == walk_memo.from) {  /* the lines before it gave the last walk's answer */
            answer = walk_memo.answer;
            a_start = walk_memo.a_start;
            a_end = walk_memo.a_end;
            lines = k + walk_memo.lines;
            break;
        }
        if (cur <= 0) {
            answer = COPY_NO_STAMP;
            lines = k;
            break;
        }
        if (k >= limit) break;
        Py_ssize_t s = cur - 2;
        while (s >= 0 && buf[s] != '\n') s--;
        s += 1;
        if (s <= stop) {
            answer = COPY_NO_STAMP;
            lines = k;
            break;
        }
        Py_ssize_t e = cur - 1;  /* buf[cur - 1] is the newline before the line that starts at cur */
        if (may_hold_stamp(buf + s, e - s)) {
            long long t = stamp_local_us(buf + s, e - s < STAMP_CUT ? e - s : STAMP_CUT, &fold_clock);
            if (t != STAMP_NONE) {
                answer = t < 0 ? -1 : t;
                a_start = s;
                a_end = e;
                lines = k + 1;
                break;
            }
        }
        cur = s;
    }
    walk_memo_keep(walk_buffer, stop, pos, answer, &fold_clock, a_start, a_end, lines);
    return answer;
}

/* A clock argument (None, or (TimeParser.year, window_end + 180 days in local microseconds): fold._clock) into
 * *ck; -1 with an error set where it is neither. */
static int clock_from(PyObject *o, struct stamp_clock *ck)
{
    long long year, cut;
    PyObject *off = Py_None;
    ck->year = ck->cut_lo = ck->cut_hi = 0;
    ck->fixed = 0;
    ck->off_us = 0;
    if (o == Py_None) return 0;
    if (!PyArg_ParseTuple(o, "LL|O", &year, &cut, &off)) return -1;
    if (off != Py_None) {  /* the zone's one UTC offset (fold.yearless_clock): a Unix time's local count */
        ck->off_us = PyLong_AsLongLong(off);
        if (ck->off_us == -1 && PyErr_Occurred()) return -1;
        ck->fixed = 1;
    }
    if (year >= 1002 && year <= 8998) {
        ck->year = year;
        ck->cut_lo = cut - STAMP_CUT_MARGIN;
        ck->cut_hi = cut + STAMP_CUT_MARGIN;
    }
    return 0;
}

#define FOLD_WALK 400  /* lines walked back from a copy whose time is read in C (scan.BACKWALK_LINES) */
#define FOLD_MAX_COUNTED 64

/* What a fold table says of one line: a copy it counts now, a line whose shape holds no prefilter word
 * (passed over), or another line (Python reads it). */
enum { FOLD_OTHER = 0, FOLD_COPY = 1, FOLD_QUIET = 2 };

/* The fold table's verdict on the line buf[pos:pos+n] (the one reading of a table, fold_run's and fold_hits'):
 * `table` maps a shape (memo.line_shape: digits and hex ids' letters made '0') to a list of
 * (lo, hi, lead_rep, variant, floor), the variants of that shape that LineFold.fold_copy would count now,
 * with their byte ranges. The line is a copy (FOLD_COPY, its variant in *variant, borrowed) where its shape
 * is a key of `table` and the first entry whose lo and hi hold its every byte lets C count it: its first
 * len(lead_rep) bytes are not less than lead_rep (else its stamp is earlier than the variant's first), and
 * where floor is an int (a timed variant's: fold._Variant.timed, an unrecognized line with no stamp it
 * starts with) the time reading it would give it is read here (copy_local_us: the stamp of the nearest line
 * before it, after offset `stop`) and is not earlier than floor (the same local microseconds). FOLD_QUIET:
 * its shape is in the set `quiet` (LineFold.quiet; NULL: none). FOLD_OTHER: anything else, a line longer
 * than FOLD_MAX_LINE or with a byte over 0x7f too (the Python check never folds those). -1: an error set
 * (a malformed table). */
/* The shapes of the lines the fold's loops looked up lately, by the line with its digits made '0' (of which the
 * shape is a function: shape_hex's): a line whose digits alone differ from one looked up before (a log's noise,
 * the next copy of a line) gets that line's shape object back, its hash kept, for a mask, a hash of 8 bytes at a
 * time and a memcmp, instead of the token walk, a new bytes object and its hash. Direct-mapped; a slot holds the
 * digit-masked line and a reference to its shape. Touched only by the fold's C loops, which hold the GIL
 * throughout; a forked worker has its own copy. */
#define SHAPE_SLOTS 1024
typedef struct {
    uint64_t h;
    Py_ssize_t n;
    unsigned char *masked;  /* PyMem: n bytes (NULL: an empty slot) */
    PyObject *shape;
    uint64_t quiet_call;  /* the fold_run call that found this shape quiet (0: none since the slot was filled) */
} ShapeSlot;
static ShapeSlot shape_cache[SHAPE_SLOTS];
static ShapeSlot *found_slot;  /* the slot fold_shape_masked's last answer is in (NULL: none) */
static uint64_t fold_calls;     /* fold_run's calls so far: each one's number tells its quiet shapes (quiet_call) */
static int shape_memo = 1;  /* fold_shape_memo(False): every shape worked out afresh (tests compare the two) */

/* p[n..n+8) must be readable and zero (fold_shape's buffer has the room): the last word is read whole. */
static uint64_t
masked_hash(const unsigned char *p, Py_ssize_t n)
{
    /* Four lanes of 8 bytes each, mixed apart and joined at the end: no lane waits for another's multiply, where
     * one chain over the line waited for each (a memo key only: any hash that mixes every byte will do). */
    uint64_t a = (uint64_t)n * 0x9E3779B97F4A7C15ULL, b = a ^ 0x2545F4914F6CDD1DULL, c = a ^ 0x6A09E667F3BCC909ULL,
             d = a ^ 0xBB67AE8584CAA73BULL, w, x, y, z;
    Py_ssize_t i = 0;
    for (; i + 32 <= n; i += 32) {
        memcpy(&w, p + i, 8);
        memcpy(&x, p + i + 8, 8);
        memcpy(&y, p + i + 16, 8);
        memcpy(&z, p + i + 24, 8);
        a = (a ^ w) * 0xFF51AFD7ED558CCDULL;
        b = (b ^ x) * 0xFF51AFD7ED558CCDULL;
        c = (c ^ y) * 0xFF51AFD7ED558CCDULL;
        d = (d ^ z) * 0xFF51AFD7ED558CCDULL;
        a ^= a >> 29;
        b ^= b >> 29;
        c ^= c >> 29;
        d ^= d >> 29;
    }
    uint64_t h = a ^ (b * 0xC2B2AE3D27D4EB4FULL) ^ (c * 0x165667B19E3779F9ULL) ^ (d * 0x27D4EB2F165667C5ULL);
    for (; i < n; i += 8) {  /* the last word's bytes past n are the zeros the caller put there */
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 29;
    }
    h *= 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 32);
}

/* The shape of line[0..n) (n <= FOLD_MAX_LINE) as a new reference, memo.line_shape's bytes; or NULL with *ascii 0
 * where a byte is over 0x7f (the fold's loops leave such a line to Python), or NULL with an error set. */
static PyObject *fold_shape_masked(unsigned char *masked, Py_ssize_t n);

static PyObject *
fold_shape(const unsigned char *line, Py_ssize_t n, int *ascii)
{
    unsigned char masked[FOLD_MAX_LINE + 8];  /* 8 more: masked_hash reads the last word whole */
    unsigned char any = 0;  /* every byte or'ed: its top bit says whether one is over 0x7f */
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = line[i];
        any |= c;
        masked[i] = (c >= '0' && c <= '9') ? '0' : c;
    }
    int a = any < 0x80;
    *ascii = a;
    if (!a) return NULL;
    return fold_shape_masked(masked, n);
}

/* fold_shape's memo lookup (and its miss's new shape) for an ASCII line whose digits `masked[0..n)` already holds
 * made '0' (n <= FOLD_MAX_LINE; the buffer has 8 bytes of room after them, zeroed here for masked_hash). */
static PyObject *
fold_shape_masked(unsigned char *masked, Py_ssize_t n)
{
    memset(masked + n, 0, 8);
    uint64_t h = masked_hash(masked, n);
    ShapeSlot *slot = &shape_cache[h & (SHAPE_SLOTS - 1)];
    if (shape_memo && slot->shape != NULL && slot->h == h && slot->n == n
            && memcmp(slot->masked, masked, (size_t)n) == 0) {
        Py_INCREF(slot->shape);
        found_slot = slot;
        return slot->shape;
    }
    found_slot = NULL;
    PyObject *key = PyBytes_FromStringAndSize((const char *)masked, n);
    if (key == NULL) return NULL;
    shape_hex((unsigned char *)PyBytes_AS_STRING(key), n);
    unsigned char *copy = PyMem_Realloc(slot->masked, n > 0 ? (size_t)n : 1);
    if (copy != NULL) {  /* else the slot keeps what it held: a memo only */
        memcpy(copy, masked, (size_t)n);
        slot->masked = copy;
        slot->h = h;
        slot->n = n;
        slot->quiet_call = 0;
        Py_INCREF(key);
        Py_XSETREF(slot->shape, key);
        found_slot = slot;
    }
    return key;
}

/* fold_shape(bytes) -> bytes | None: the shape the fold's loops look a line up by (fold_shape, through its memo):
 * memo.line_shape's, or None for a line longer than FOLD_MAX_LINE or with a byte over 0x7f (tests hold it to
 * memo.line_shape_py line after line, the memo's hits and misses). */
static PyObject *
lines_fold_shape(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    int ascii = 1;
    PyObject *out;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len > FOLD_MAX_LINE) {
        out = Py_None;
        Py_INCREF(out);
    } else {
        out = fold_shape((const unsigned char *)view.buf, view.len, &ascii);
        if (out == NULL && !ascii) {
            out = Py_None;
            Py_INCREF(out);
        }
    }
    PyBuffer_Release(&view);
    return out;
}

/* fold_shape_memo(on) -> bool: whether the fold's loops look up recent lines' shapes (fold_shape's memo), set to
 * `on`; the previous setting is returned (tests: the verdict bytes with the memo on and off). */
static PyObject *
lines_fold_shape_memo(PyObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    int was = shape_memo;
    shape_memo = on;
    return PyBool_FromLong(was);
}

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define FOLD_FUSED 1
/* fold_run's look at a line in one pass, 16 bytes at a time (SSE2: every x86-64): the line at p[0..avail) up to its
 * first '\n', its bytes with every digit made '0' written to masked[] (FOLD_MAX_LINE + 16 bytes of room), and
 * whether every byte of it is ASCII. Returns its length n, or -1 where no '\n' lies within its first
 * FOLD_MAX_LINE + 1 bytes (no newline, or a line longer than FOLD_MAX_LINE: fold_run stops at either). What memchr,
 * then fold_shape's masking loop, then its ASCII test gave in three passes over the line (on a kernel log of short
 * lines, memchr's call cost as much as the masking). */
static Py_ssize_t
line_masked(const unsigned char *p, Py_ssize_t avail, unsigned char *masked, int *ascii)
{
    Py_ssize_t lim = avail < FOLD_MAX_LINE + 1 ? avail : FOLD_MAX_LINE + 1, i = 0;
    unsigned int high = 0;  /* the top bits of the bytes seen: one set, a byte over 0x7f */
    const __m128i nl = _mm_set1_epi8('\n'), below = _mm_set1_epi8('0' - 1), above = _mm_set1_epi8('9' + 1),
                  zero = _mm_set1_epi8('0');
    for (; i + 16 <= lim; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        unsigned int at = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl));
        unsigned int top = (unsigned int)_mm_movemask_epi8(v);
        /* a digit: '0' - 1 < c < '9' + 1, signed (a byte over 0x7f is negative: never one) */
        __m128i d = _mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above));
        _mm_storeu_si128((__m128i *)(masked + i), _mm_or_si128(_mm_and_si128(d, zero), _mm_andnot_si128(d, v)));
        if (at) {
            unsigned int k = (unsigned int)__builtin_ctz(at);
            high |= top & ((1u << k) - 1u);
            *ascii = high == 0;
            return i + (Py_ssize_t)k;
        }
        high |= top;
    }
    for (; i < lim; i++) {
        unsigned char c = p[i];
        if (c == '\n') {
            *ascii = high == 0;
            return i;
        }
        high |= c & 0x80u;
        masked[i] = (c >= '0' && c <= '9') ? '0' : c;
    }
    *ascii = high == 0;
    return -1;
}
#endif

static int table_variant_key(PyObject *table, PyObject *quiet, PyObject *key, const unsigned char *buf,
                             Py_ssize_t pos, Py_ssize_t n, Py_ssize_t stop, PyObject **variant);

/* The last index lookups of one fold_run call (table_variant_key: a shape whose entries are indexed by the bytes
 * they hold fixed, a host's digits): by the shape's (offsets, index) value and the line's bytes there, the entries
 * list the index gave (borrowed; NULL: none). Valid only while the call runs: the loop runs no Python code, so
 * neither the table nor an index changes under it; fold_run empties it when it starts and when it returns
 * (index_memo_live 0: not used, as by fold_hits). A kernel log's copies name one host and a few devices: each
 * copy's lookup was a new bytes key, its hash and a dict probe. */
#define INDEX_MEMO 8
typedef struct {
    PyObject *value;    /* a shape's (offsets, index) in the table */
    PyObject *entries;  /* the list its last lookup gave */
} IndexMemo;
static IndexMemo index_memo[INDEX_MEMO];
static int index_memo_live = 0;

static void
index_memo_reset(int live)
{
    for (int i = 0; i < INDEX_MEMO; i++) {
        index_memo[i].value = NULL;
        index_memo[i].entries = NULL;
    }
    index_memo_live = live;
}

static int
table_variant(PyObject *table, PyObject *quiet, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t n,
              Py_ssize_t stop, PyObject **variant)
{
    int ascii;
    if (n > FOLD_MAX_LINE) return FOLD_OTHER;
    PyObject *key = fold_shape(buf + pos, n, &ascii);
    if (key == NULL) return ascii ? -1 : FOLD_OTHER;
    return table_variant_key(table, quiet, key, buf, pos, n, stop, variant);
}

/* What the entries list `entries` of a line's shape (and host) says of the line buf[pos:pos+n]: the first entry whose
 * ranges hold it decides (FOLD_COPY, its variant in *variant; or FOLD_OTHER); FOLD_NONE where none holds it; -1: an
 * error set (a malformed entry). */
#define FOLD_NONE 3
static int
entries_verdict(PyObject *entries, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t n, Py_ssize_t stop,
                PyObject **variant)
{
    const unsigned char *line = buf + pos;
    Py_ssize_t i;
    if (!PyList_Check(entries)) {
        PyErr_SetString(PyExc_TypeError, "fold table: a value must be a list or (offsets, index)");
        return -1;
    }
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(entries); j++) {
        PyObject *entry = PyList_GET_ITEM(entries, j);
        Py_ssize_t size = PyTuple_Check(entry) ? PyTuple_GET_SIZE(entry) : 0;
        PyObject *kin = size == 7 ? PyTuple_GET_ITEM(entry, 6) : NULL;
        if (size < 5 || size > 7
                || !PyBytes_Check(PyTuple_GET_ITEM(entry, 0)) || !PyBytes_Check(PyTuple_GET_ITEM(entry, 1))
                || !PyBytes_Check(PyTuple_GET_ITEM(entry, 2))
                || (size >= 6 && !PyTuple_Check(PyTuple_GET_ITEM(entry, 5))
                    && !(size == 7 && PyTuple_GET_ITEM(entry, 5) == Py_None))
                || (kin != NULL && (!PyTuple_Check(kin) || PyTuple_GET_SIZE(kin) != 4
                                    || !PyByteArray_Check(PyTuple_GET_ITEM(kin, 0))
                                    || !PyByteArray_Check(PyTuple_GET_ITEM(kin, 1))
                                    || !PyBytes_Check(PyTuple_GET_ITEM(kin, 2))
                                    || !PyByteArray_Check(PyTuple_GET_ITEM(kin, 3))))) {
            PyErr_SetString(PyExc_TypeError,
                            "fold table: an entry must be (lo, hi, lead_rep, variant, floor[, risk[, (lo, hi, own, lead)]])");
            return -1;
        }
        PyObject *lo_o = PyTuple_GET_ITEM(entry, 0), *hi_o = PyTuple_GET_ITEM(entry, 1);
        PyObject *lead_o = PyTuple_GET_ITEM(entry, 2), *floor_o = PyTuple_GET_ITEM(entry, 4);
        if (PyBytes_GET_SIZE(lo_o) != n || PyBytes_GET_SIZE(hi_o) != n || PyBytes_GET_SIZE(lead_o) > n)
            continue;
        const unsigned char *lo = (const unsigned char *)PyBytes_AS_STRING(lo_o);
        const unsigned char *hi = (const unsigned char *)PyBytes_AS_STRING(hi_o);
        /* Without a branch per byte (the compiler's vector loop): most lines looked up are copies, in range. */
        unsigned char out = 0;
        for (i = 0; i < n; i++)
            out |= (unsigned char)((line[i] < lo[i]) | (line[i] > hi[i]));
        if (out && kin != NULL) {
            /* kin: (pool lo, pool hi, own, pool lead): the variant's own bytes (0xff in `own`: its host's or rank's, which it
             * holds fixed) from its ranges, the others from its kin pool's, which widen in place as the pool does
             * (fold.LineFold.table_add: a shape whose every variant is a kin of that pool, each fixed at those
             * bytes, so no other variant holds such a line). A syslog's time bytes grow with every line: each
             * host's variant borrowed the pool's ranges anew in Python, a call per host and second. */
            PyObject *klo_o = PyTuple_GET_ITEM(kin, 0), *khi_o = PyTuple_GET_ITEM(kin, 1);
            PyObject *own_o = PyTuple_GET_ITEM(kin, 2);
            if (PyByteArray_GET_SIZE(klo_o) == n && PyByteArray_GET_SIZE(khi_o) == n && PyBytes_GET_SIZE(own_o) == n) {
                const unsigned char *klo = (const unsigned char *)PyByteArray_AS_STRING(klo_o);
                const unsigned char *khi = (const unsigned char *)PyByteArray_AS_STRING(khi_o);
                const unsigned char *own = (const unsigned char *)PyBytes_AS_STRING(own_o);
                out = 0;
                for (i = 0; i < n; i++) {
                    unsigned char m = own[i];
                    unsigned char l = (unsigned char)((lo[i] & m) | (klo[i] & ~m));
                    unsigned char h = (unsigned char)((hi[i] & m) | (khi[i] & ~m));
                    out |= (unsigned char)((line[i] < l) | (line[i] > h));
                }
            }
        }
        if (out) continue;
        /* within this variant's ranges: C counts it, or Python decides (the first such entry says which). Its
         * stamp not earlier than the variant's earliest, or with kin, than the pool's earliest (which is not later:
         * fold_copy takes it for the variant's where a host's clock went back). */
        if (kin != NULL) {
            PyObject *klead = PyTuple_GET_ITEM(kin, 3);
            if (PyByteArray_GET_SIZE(klead) > n) return FOLD_OTHER;
            if (memcmp(line, PyByteArray_AS_STRING(klead), (size_t)PyByteArray_GET_SIZE(klead)) < 0) return FOLD_OTHER;
        } else if (memcmp(line, PyBytes_AS_STRING(lead_o), (size_t)PyBytes_GET_SIZE(lead_o)) < 0) return FOLD_OTHER;
        if (size >= 6 && PyTuple_GET_ITEM(entry, 5) != Py_None) {
            /* risk: ((offset, literal), ...), where a hex id of the shape may spell a prefilter literal: a line that
             * spells one there may have other hits than the variant's (fold.LineFold._at_risk): Python reads it */
            PyObject *risk = PyTuple_GET_ITEM(entry, 5);
            for (Py_ssize_t r = 0; r < PyTuple_GET_SIZE(risk); r++) {
                PyObject *pair = PyTuple_GET_ITEM(risk, r), *lit;
                if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyBytes_Check(lit = PyTuple_GET_ITEM(pair, 1))) {
                    PyErr_SetString(PyExc_TypeError, "fold table: a risk must be ((offset, literal), ...)");
                    return -1;
                }
                Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0)), k = PyBytes_GET_SIZE(lit);
                if (at == -1 && PyErr_Occurred()) return -1;
                if (at >= 0 && at + k <= n && memcmp(line + at, PyBytes_AS_STRING(lit), (size_t)k) == 0)
                    return FOLD_OTHER;
            }
        }
        if (floor_o != Py_None) {
            long long floor = PyLong_AsLongLong(floor_o);
            if (floor == -1 && PyErr_Occurred()) return -1;
            long long t = copy_local_us(buf, pos, n, stop, FOLD_WALK);
            if (t == COPY_NO_STAMP) t = fold_before == BEFORE_NO_TIME ? floor : fold_before;
            if (t < 0 || t < floor) return FOLD_OTHER;  /* not read here, or earlier: Python works it out */
        }
        *variant = PyTuple_GET_ITEM(entry, 3);
        return FOLD_COPY;
    }
    return FOLD_NONE;
}

/* table_variant for the line buf[pos:pos+n] whose shape `key` (a new reference, consumed) is known. */
static int
table_variant_key(PyObject *table, PyObject *quiet, PyObject *key, const unsigned char *buf, Py_ssize_t pos,
                  Py_ssize_t n, Py_ssize_t stop, PyObject **variant)
{
    const unsigned char *line = buf + pos;
    PyObject *entries = PyDict_GetItemWithError(table, key);  /* borrowed */
    int r;
    if (entries == NULL) {
        int q = 0;
        if (!PyErr_Occurred() && quiet != NULL) q = PySet_Contains(quiet, key);
        Py_DECREF(key);
        if (PyErr_Occurred() || q < 0) return -1;
        return q ? FOLD_QUIET : FOLD_OTHER;
    }
    Py_DECREF(key);
    if (PyTuple_Check(entries)) {
        /* (offsets, index): the entries by the bytes of the line at `offsets` (2 bytes each, little-endian), bytes
         * every entry of the shape holds fixed (lo == hi there: a host's or a rank's digits), so only the entries
         * under the line's own bytes there can hold it (fold.LineFold.table_add). */
        PyObject *offsets, *index, *value = entries;
        if (PyTuple_GET_SIZE(entries) != 2 || !PyBytes_Check(offsets = PyTuple_GET_ITEM(entries, 0))
                || !PyDict_Check(index = PyTuple_GET_ITEM(entries, 1)) || PyBytes_GET_SIZE(offsets) % 2) {
            PyErr_SetString(PyExc_TypeError, "fold table: an indexed value must be (offsets, {bytes: entries})");
            return -1;
        }
        IndexMemo *im = NULL;
        PyObject *tried = NULL;
        if (index_memo_live) {
            /* The list this shape's last lookup in this call gave: an entry of it that holds the line holds the
             * bytes at `offsets` fixed at the values of its key (lo == hi there), so the line's key is that list's
             * and its lookup would give the same list. A kernel log's copies name one host: their lookups were each
             * a gather of those bytes, a new bytes key, its SipHash and the index's probe. Where none holds it, the
             * line is looked up as ever. */
            im = &index_memo[((uintptr_t)value >> 4) & (INDEX_MEMO - 1)];
            if (im->value == value) {
                r = entries_verdict(im->entries, buf, pos, n, stop, variant);
                if (r != FOLD_NONE) return r;
                tried = im->entries;
            }
        }
        const unsigned char *off = (const unsigned char *)PyBytes_AS_STRING(offsets);
        Py_ssize_t m = PyBytes_GET_SIZE(offsets) / 2;
        unsigned char at[FOLD_MAX_LINE];
        for (Py_ssize_t i = 0; i < m; i++) {
            Py_ssize_t o = off[2 * i] | (Py_ssize_t)off[2 * i + 1] << 8;
            if (o >= n) return FOLD_OTHER;  /* (the shape's length is the line's: never) */
            at[i] = line[o];
        }
        PyObject *k = PyBytes_FromStringAndSize((const char *)at, m);
        if (k == NULL) return -1;
        entries = PyDict_GetItemWithError(index, k);  /* borrowed */
        Py_DECREF(k);
        if (entries == NULL) return PyErr_Occurred() ? -1 : FOLD_OTHER;
        if (im != NULL) {
            im->value = value;
            im->entries = entries;
        }
        if (entries == tried) return FOLD_OTHER;  /* (the same list: none of it holds the line) */
    }
    r = entries_verdict(entries, buf, pos, n, stop, variant);
    return r == FOLD_NONE ? FOLD_OTHER : r;
}

/* The copies a C loop holds and counts as it goes (fold_run's and fold_hits'): the last copy seen is held (read
 * in full later, not counted); when another comes, the one held before it is counted on its variant. */
typedef struct {
    Py_ssize_t s, e, line_no;  /* the held copy's place, when variant is not NULL */
    PyObject *variant;         /* borrowed (the table holds it) */
    PyObject *cv[FOLD_MAX_COUNTED];
    Py_ssize_t cn[FOLD_MAX_COUNTED];
    int k;
} Held;

/* Held from the caller's `held`: None or (s, e, line_no, variant). 0, or -1 with an error set. */
static int
held_from(Held *h, PyObject *held, const char *who)
{
    h->variant = NULL;
    h->k = 0;
    h->s = h->e = h->line_no = 0;
    if (held == Py_None) return 0;
    if (!PyTuple_Check(held) || PyTuple_GET_SIZE(held) != 4) {
        PyErr_Format(PyExc_TypeError, "%s: held must be None or (s, e, line_no, variant)", who);
        return -1;
    }
    h->s = PyLong_AsSsize_t(PyTuple_GET_ITEM(held, 0));
    h->e = PyLong_AsSsize_t(PyTuple_GET_ITEM(held, 1));
    h->line_no = PyLong_AsSsize_t(PyTuple_GET_ITEM(held, 2));
    if (PyErr_Occurred()) return -1;
    h->variant = PyTuple_GET_ITEM(held, 3);
    return 0;
}

/* A copy of `variant` at buf[s:e], line line_no, comes: the copy held before it is counted, and it is held.
 * 0: no room to count one more variant (FOLD_MAX_COUNTED), nothing changed: the caller leaves the line. */
static int
held_take(Held *h, Py_ssize_t s, Py_ssize_t e, Py_ssize_t line_no, PyObject *variant)
{
    if (h->variant != NULL) {
        int c;
        for (c = 0; c < h->k && h->cv[c] != h->variant; c++)
            ;
        if (c == h->k) {
            if (h->k == FOLD_MAX_COUNTED) return 0;
            h->cv[h->k] = h->variant;
            h->cn[h->k++] = 0;
        }
        h->cn[c]++;
    }
    h->s = s;
    h->e = e;
    h->line_no = line_no;
    h->variant = variant;
    return 1;
}

/* The held copy, (s, e, line_no, variant) or None, and [(variant, count), ...]: a new 2-tuple, or NULL. */
static PyObject *
held_result(Held *h)
{
    PyObject *counts = PyList_New(h->k);
    if (counts == NULL) return NULL;
    for (int c = 0; c < h->k; c++) {
        PyObject *pair = Py_BuildValue("(On)", h->cv[c], h->cn[c]);
        if (pair == NULL) { Py_DECREF(counts); return NULL; }
        PyList_SET_ITEM(counts, c, pair);
    }
    if (h->variant != NULL)
        return Py_BuildValue("(nnnO)N", h->s, h->e, h->line_no, h->variant, counts);
    return Py_BuildValue("ON", Py_None, counts);
}

/* fold_run(buffer, pos, line_no, table, held, quiet, stop[, clock]) -> (pos, line_no, folded, held, counts, passed)
 *
 * The fold's dense loop (collect/scan.py, collect/fold.py) over the copies it already knows. From offset
 * `pos` (a line's start), each line that table_variant finds a copy in `table` is held and the copy held
 * before it counted; a line whose shape is in the set `quiet` holds none of the prefilter's words (its shape
 * tells: LineFold.quiet): it is passed over, as the prefilter would. The loop stops at the first other line
 * (or a line with no newline): its offset is returned, with the line number of the last line passed, how many
 * lines folded, the held copy (s, e, line_no, variant) or None, [(variant, count), ...] and how many quiet
 * lines were passed. `stop`: the offset of the last line read in full, where a timed copy's walk back ends;
 * `clock`: the year and cut for yearless stamps (clock_from; None: C leaves them to Python). */
static PyObject *
lines_fold_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t pos, line_no, folded = 0, passed = 0, stop;
    PyObject *table, *quiet, *result = NULL;
    struct stamp_clock ck;
    Held h;
    long long before = BEFORE_UNKNOWN;
    if (nargs < 7 || nargs > 9) {
        PyErr_SetString(PyExc_TypeError,
                        "fold_run(buffer, pos, line_no, table, held, quiet, stop[, clock[, before]]) takes 7 to 9 "
                        "arguments");
        return NULL;
    }
    if (clock_from(nargs >= 8 ? args[7] : Py_None, &ck) < 0) return NULL;
    if (nargs == 9) {
        before = PyLong_AsLongLong(args[8]);
        if (before == -1 && PyErr_Occurred()) return NULL;
        if (before < 0 && before != BEFORE_NO_TIME) before = BEFORE_UNKNOWN;
    }
    pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    line_no = PyLong_AsSsize_t(args[2]);
    if (line_no == -1 && PyErr_Occurred()) return NULL;
    table = args[3];
    quiet = args[5];
    stop = PyLong_AsSsize_t(args[6]);
    if (stop == -1 && PyErr_Occurred()) return NULL;
    if (!PyDict_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "fold_run: table must be a dict");
        return NULL;
    }
    if (!PyAnySet_Check(quiet)) {
        PyErr_SetString(PyExc_TypeError, "fold_run: quiet must be a set");
        return NULL;
    }
    if (held_from(&h, args[4], "fold_run") < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    fold_clock = ck;  /* copy_local_us's, until the call returns */
    fold_before = before;
    index_memo_reset(1);
    uint64_t call = ++fold_calls;
    walk_buffer = PyBytes_CheckExact(args[0]) ? args[0] : NULL;
    {
        const unsigned char *buf = (const unsigned char *)view.buf;
        Py_ssize_t len = view.len;
#ifdef FOLD_FUSED
        unsigned char masked[FOLD_MAX_LINE + 16];
#endif
        while (pos < len) {
            PyObject *found = NULL;
            int ascii, what;
#ifdef FOLD_FUSED
            /* the line's end, its digits masked and its ASCII test in one pass; then table_variant's lookup */
            Py_ssize_t n = line_masked(buf + pos, len - pos, masked, &ascii);
            if (n < 0 || !ascii) break;  /* no newline, a line too long for a shape, or not ASCII: FOLD_OTHER */
            PyObject *key = fold_shape_masked(masked, n);
            if (key == NULL) goto fail;
#else
            const unsigned char *nl = memchr(buf + pos, '\n', (size_t)(len - pos));
            if (nl == NULL) break;
            Py_ssize_t n = nl - (buf + pos);
            if (n > FOLD_MAX_LINE) break;  /* FOLD_OTHER */
            PyObject *key = fold_shape(buf + pos, n, &ascii);
            if (key == NULL) {
                if (ascii) goto fail;
                break;  /* not ASCII: FOLD_OTHER */
            }
#endif
            /* A shape this call found quiet (in `quiet`, no key of `table`) is quiet for the rest of the call: no
             * Python runs in it, so neither changes. Its memo slot says so: a kernel log's noise, two lines in three,
             * costs no table probe and no set probe after its shape's first line in the call. */
            ShapeSlot *slot = found_slot;
            if (slot != NULL && slot->shape == key && slot->quiet_call == call) {
                Py_DECREF(key);
                what = FOLD_QUIET;
            } else {
                what = table_variant_key(table, quiet, key, buf, pos, n, stop, &found);
                if (what == FOLD_QUIET && slot != NULL && slot->shape == key) slot->quiet_call = call;
            }
            if (what < 0) goto fail;
            if (what == FOLD_QUIET) {
                line_no++;
                passed++;
                pos += n + 1;
                continue;
            }
            if (what != FOLD_COPY || !held_take(&h, pos, pos + n, line_no + 1, found)) break;
            line_no++;
            folded++;
            pos += n + 1;
        }
    }
    {
        PyObject *hc = held_result(&h);
        if (hc == NULL) goto fail;
        result = Py_BuildValue("(nnnOOn)", pos, line_no, folded, PyTuple_GET_ITEM(hc, 0), PyTuple_GET_ITEM(hc, 1),
                               passed);
        Py_DECREF(hc);
    }
fail:
    fold_clock.year = 0;
    walk_buffer = NULL;
    fold_before = BEFORE_UNKNOWN;
    index_memo_reset(0);
    PyBuffer_Release(&view);
    return result;
}

/* unquiet(buffer, quiet, sample) -> None | (kept, at, starts)
 *
 * The lines of `buffer` (whole lines, each ending in '\n') whose shape is not in the set `quiet` (LineFold.quiet:
 * shapes every line of which holds none of the prefilter's words), for the prefilter to scan instead of the whole
 * buffer: `kept` those lines joined in order, `at` the offset of each in `kept` and `starts` its offset in
 * `buffer`. A line fold_run would not look up (no newline, longer than FOLD_MAX_LINE, a byte over 0x7f) is kept.
 * The quiet test is fold_run's (fold_shape through its memo, then the set; a shape found quiet once is quiet for
 * the rest of the call, by its memo slot). None where, after the first `sample` lines, quiet lines hold less than
 * half of their bytes, or where no line is quiet: the prefilter then scans the buffer itself. */
static PyObject *
lines_unquiet(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    PyObject *quiet, *result = NULL, *kept = NULL, *at = NULL, *starts = NULL;
    Py_ssize_t sample, *spans = NULL, nspans = 0, cap = 0, seen = 0, quiet_bytes = 0, kept_bytes = 0;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "unquiet(buffer, quiet, sample) takes 3 arguments");
        return NULL;
    }
    quiet = args[1];
    if (!PyAnySet_Check(quiet)) {
        PyErr_SetString(PyExc_TypeError, "unquiet: quiet must be a set");
        return NULL;
    }
    sample = PyLong_AsSsize_t(args[2]);
    if (sample == -1 && PyErr_Occurred()) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    uint64_t call = ++fold_calls;
    {
        const unsigned char *buf = (const unsigned char *)view.buf;
        Py_ssize_t len = view.len, pos = 0;
#ifdef FOLD_FUSED
        unsigned char masked[FOLD_MAX_LINE + 16];
#endif
        while (pos < len) {
            int ascii, q = 0;
            Py_ssize_t n, end;
#ifdef FOLD_FUSED
            n = line_masked(buf + pos, len - pos, masked, &ascii);
            if (n >= 0 && ascii) {
                PyObject *key = fold_shape_masked(masked, n);
                if (key == NULL) goto fail;
#else
            const unsigned char *nl = memchr(buf + pos, '\n', (size_t)(len - pos));
            n = nl == NULL ? -1 : nl - (buf + pos);
            PyObject *key = NULL;
            if (n >= 0 && n <= FOLD_MAX_LINE) {
                key = fold_shape(buf + pos, n, &ascii);
                if (key == NULL && ascii) goto fail;
            }
            if (key != NULL) {
#endif
                ShapeSlot *slot = found_slot;
                if (slot != NULL && slot->shape == key && slot->quiet_call == call) {
                    q = 1;
                } else {
                    q = PySet_Contains(quiet, key);
                    if (q < 0) {
                        Py_DECREF(key);
                        goto fail;
                    }
                    if (q && slot != NULL && slot->shape == key) slot->quiet_call = call;
                }
                Py_DECREF(key);
            }
            if (n < 0) {  /* the line's end, past FOLD_MAX_LINE or none (the buffer's last line: kept whole) */
                const unsigned char *nl2 = memchr(buf + pos, '\n', (size_t)(len - pos));
                end = nl2 == NULL ? len : (nl2 - buf) + 1;
            } else {
                end = pos + n + 1;
            }
            if (q) {
                quiet_bytes += end - pos;
            } else {
                if (nspans == cap) {
                    Py_ssize_t ncap = cap ? cap * 2 : 256;
                    Py_ssize_t *grown = PyMem_Realloc(spans, (size_t)ncap * 2 * sizeof(Py_ssize_t));
                    if (grown == NULL) {
                        PyErr_NoMemory();
                        goto fail;
                    }
                    spans = grown;
                    cap = ncap;
                }
                spans[2 * nspans] = pos;
                spans[2 * nspans + 1] = end;
                nspans++;
                kept_bytes += end - pos;
            }
            pos = end;
            if (++seen == sample && quiet_bytes * 2 < pos) break;
        }
        if (pos < len || quiet_bytes == 0) {
            result = Py_None;
            Py_INCREF(result);
            goto fail;
        }
        kept = PyBytes_FromStringAndSize(NULL, kept_bytes);
        at = PyList_New(nspans);
        starts = PyList_New(nspans);
        if (kept == NULL || at == NULL || starts == NULL) goto fail;
        char *out = PyBytes_AS_STRING(kept);
        Py_ssize_t o = 0;
        for (Py_ssize_t i = 0; i < nspans; i++) {
            Py_ssize_t s = spans[2 * i], e = spans[2 * i + 1];
            PyObject *a = PyLong_FromSsize_t(o), *b = PyLong_FromSsize_t(s);
            if (a == NULL || b == NULL) {
                Py_XDECREF(a);
                Py_XDECREF(b);
                goto fail;
            }
            PyList_SET_ITEM(at, i, a);
            PyList_SET_ITEM(starts, i, b);
            memcpy(out + o, buf + s, (size_t)(e - s));
            o += e - s;
        }
        result = PyTuple_Pack(3, kept, at, starts);
    }
fail:
    Py_XDECREF(kept);
    Py_XDECREF(at);
    Py_XDECREF(starts);
    PyMem_Free(spans);
    PyBuffer_Release(&view);
    return result;
}

/* ---- The sparse path (issue 27): the prefilter's hits, stamps, and the fold's copies among the hits ---- */

/* may_stamp(bytes) -> bool: may_hold_stamp, whether TimeParser.parse may find a stamp on this line (a
 * superset: parse decides), for a candidate line itself. */
static PyObject *
lines_may_stamp(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    int yes;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    yes = may_hold_stamp((const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyBool_FromLong(yes);
}

/* The offset of the last '\n' in buf[0..s] (s included), or -1: memrchr where the C library has it (it reads a
 * word or a vector at a time; a hit line's start is found from its match's end, tens of bytes back). */
static Py_ssize_t
prev_newline(const char *buf, Py_ssize_t s)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    if (s < 0) return -1;
    const char *p = memrchr(buf, '\n', (size_t)(s + 1));
    return p == NULL ? -1 : p - buf;
#else
    while (s >= 0 && buf[s] != '\n') s--;
    return s;
#endif
}

/* The line a match ending at `to` lies on, as scan._lines_of_py finds it: `to` read as a slice's index (negative:
 * from the end), *start the offset after the last '\n' before it (rfind + 1), *end that of the first '\n' at or
 * after it, or n (find). lines_of and Matches.lines group matches by it. */
static void
hit_line(const char *buf, Py_ssize_t n, Py_ssize_t to, Py_ssize_t *start, Py_ssize_t *end)
{
    Py_ssize_t t = to < 0 ? (to + n < 0 ? 0 : to + n) : (to > n ? n : to);
    *start = prev_newline(buf, t - 1) + 1;
    const char *e = t < n ? memchr(buf + t, '\n', (size_t)(n - t)) : NULL;
    *end = e == NULL ? n : e - buf;
}

/* lines_of(buffer, matches) -> (starts, ids): scan._lines_of_py in one call. `matches` is a list of
 * (literal index, end offset) pairs in order of their end offsets; a match that ends inside the current
 * line (at or before its newline) belongs to it. */
static PyObject *
lines_lines_of(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    PyObject *matches, *starts = NULL, *ids = NULL, *cur = NULL, *result = NULL;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "lines_of(buffer, matches) takes 2 arguments");
        return NULL;
    }
    matches = args[1];
    if (!PyList_Check(matches)) {
        PyErr_SetString(PyExc_TypeError, "lines_of: matches must be a list");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    starts = PyList_New(0);
    ids = PyList_New(0);
    cur = PyList_New(0);  /* the Python's first `cur`: a match before any line start goes nowhere */
    if (starts == NULL || ids == NULL || cur == NULL) goto done;
    {
        const char *buf = (const char *)view.buf;
        Py_ssize_t n = view.len, last_end = -1;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(matches); j++) {
            PyObject *m = PyList_GET_ITEM(matches, j);
            if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 2) {
                PyErr_SetString(PyExc_TypeError, "lines_of: a match must be (index, end)");
                goto done;
            }
            PyObject *i = PyTuple_GET_ITEM(m, 0);
            Py_ssize_t to = PyLong_AsSsize_t(PyTuple_GET_ITEM(m, 1));
            if (to == -1 && PyErr_Occurred()) goto done;
            if (to <= last_end) {
                if (PyList_Append(cur, i) < 0) goto done;
                continue;
            }
            Py_ssize_t s;
            hit_line(buf, n, to, &s, &last_end);
            PyObject *start = PyLong_FromSsize_t(s);
            if (start == NULL) goto done;
            int bad = PyList_Append(starts, start) < 0;
            Py_DECREF(start);
            if (bad) goto done;
            Py_XDECREF(cur);
            cur = PyList_New(1);
            if (cur == NULL) goto done;
            Py_INCREF(i);
            PyList_SET_ITEM(cur, 0, i);
            if (PyList_Append(ids, cur) < 0) goto done;
        }
        result = PyTuple_Pack(2, starts, ids);
    }
done:
    Py_XDECREF(cur);
    Py_XDECREF(starts);
    Py_XDECREF(ids);
    PyBuffer_Release(&view);
    return result;
}

/* ---- Matches: the prefilter's matches gathered without a Python call each (issue 27) ----
 *
 * Hyperscan reports each match to a callable (collect/scan.py's _HyperscanEngine). A Python callback that
 * keeps an (index, end) tuple costs a frame and a tuple that lives until the scan ends: on a kernel log whose
 * noise repeats (a third of its lines hit) those were most of the scan's time, and the tuples (and lines_of's
 * list per line) kept the garbage collector busy. A Matches is that callable in C: called as
 * (index, from, to, flags, context), it keeps (index, to) in a C array and returns None (the scan goes on).
 * lines(buffer) then groups them by line as lines_of does, and the Matches is the sequence of each hit line's
 * literal indices (a new list for each item asked: the scanner asks for the few lines it reads in Python). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t n, cap;   /* matches kept, room */
    unsigned long *ids;  /* the literal index of each match */
    Py_ssize_t *ends;    /* its end offset */
    Py_ssize_t lines;    /* after lines(): the hit lines (0 before) */
    Py_ssize_t *first;   /* lines + 1 entries: line k's matches are first[k] .. first[k + 1] - 1 */
} MatchesObject;

static PyObject *
matches_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    MatchesObject *m = (MatchesObject *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 3 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
        PyErr_SetString(PyExc_TypeError, "Matches(index, from, to, ...) takes at least 3 positional arguments");
        return NULL;
    }
    unsigned long id = PyLong_AsUnsignedLong(args[0]);
    if (id == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    Py_ssize_t to = PyLong_AsSsize_t(args[2]);
    if (to == -1 && PyErr_Occurred()) return NULL;
    if (m->n == m->cap) {
        Py_ssize_t cap = m->cap ? m->cap * 2 : 1024;
        unsigned long *ids = PyMem_Realloc(m->ids, (size_t)cap * sizeof *ids);
        if (ids == NULL) return PyErr_NoMemory();
        m->ids = ids;
        Py_ssize_t *ends = PyMem_Realloc(m->ends, (size_t)cap * sizeof *ends);
        if (ends == NULL) return PyErr_NoMemory();
        m->ends = ends;
        m->cap = cap;
    }
    m->ids[m->n] = id;
    m->ends[m->n++] = to;
    Py_RETURN_NONE;
}

static PyObject *
matches_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) > 0 || (kwds != NULL && PyDict_GET_SIZE(kwds) > 0)) {
        PyErr_SetString(PyExc_TypeError, "Matches() takes no arguments");
        return NULL;
    }
    MatchesObject *m = (MatchesObject *)type->tp_alloc(type, 0);
    if (m == NULL) return NULL;
    m->vectorcall = matches_vectorcall;
    m->n = m->cap = m->lines = 0;
    m->ids = NULL;
    m->ends = m->first = NULL;
    return (PyObject *)m;
}

static void
matches_dealloc(MatchesObject *m)
{
    PyMem_Free(m->ids);
    PyMem_Free(m->ends);
    PyMem_Free(m->first);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

/* lines(buffer) -> starts: lines_of over the matches kept (in the order they came: Hyperscan's, by end offset),
 * the sorted start offsets of the lines that hold one; the Matches is then the sequence of their indices. */
static PyObject *
matches_lines(MatchesObject *m, PyObject *arg)
{
    Py_buffer view;
    PyObject *starts;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t *first = PyMem_Realloc(m->first, (size_t)(m->n + 1) * sizeof *first);
    if (first == NULL) { PyBuffer_Release(&view); return PyErr_NoMemory(); }
    m->first = first;
    m->lines = 0;
    starts = PyList_New(0);
    if (starts == NULL) { PyBuffer_Release(&view); return NULL; }
    {
        const char *buf = (const char *)view.buf;
        Py_ssize_t n = view.len, last_end = -1, k = 0;
        for (Py_ssize_t j = 0; j < m->n; j++) {
            Py_ssize_t to = m->ends[j];
            if (to <= last_end) continue;  /* the current line's (lines_of: before any line, none's) */
            Py_ssize_t s;
            hit_line(buf, n, to, &s, &last_end);
            PyObject *start = PyLong_FromSsize_t(s);
            if (start == NULL) goto fail;
            int bad = PyList_Append(starts, start) < 0;
            Py_DECREF(start);
            if (bad) goto fail;
            first[k++] = j;
        }
        first[k] = m->n;
        m->lines = k;
    }
    PyBuffer_Release(&view);
    return starts;
fail:
    m->lines = 0;
    Py_DECREF(starts);
    PyBuffer_Release(&view);
    return NULL;
}

static Py_ssize_t
matches_length(MatchesObject *m)
{
    return m->lines;
}

static PyObject *
matches_item(MatchesObject *m, Py_ssize_t k)
{
    if (k < 0 || k >= m->lines) {
        PyErr_SetString(PyExc_IndexError, "Matches index out of range");
        return NULL;
    }
    Py_ssize_t a = m->first[k], b = m->first[k + 1];
    PyObject *out = PyList_New(b - a);
    if (out == NULL) return NULL;
    for (Py_ssize_t j = a; j < b; j++) {
        PyObject *i = PyLong_FromUnsignedLong(m->ids[j]);
        if (i == NULL) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, j - a, i);
    }
    return out;
}

/* The lines' indices as a list of lists (a comparison's, a repr's). */
static PyObject *
matches_list(MatchesObject *m)
{
    PyObject *out = PyList_New(m->lines);
    if (out == NULL) return NULL;
    for (Py_ssize_t k = 0; k < m->lines; k++) {
        PyObject *item = matches_item(m, k);
        if (item == NULL) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k, item);
    }
    return out;
}

/* Equal to another Matches or a list with the same lines' indices (a test compares the engines' answers). */
static PyObject *
matches_richcompare(PyObject *a, PyObject *b, int op);

static PyTypeObject MatchesType;

static PyObject *
matches_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &MatchesType)) Py_RETURN_NOTIMPLEMENTED;
    if (!PyObject_TypeCheck(b, &MatchesType) && !PyList_Check(b)) Py_RETURN_NOTIMPLEMENTED;
    PyObject *la = matches_list((MatchesObject *)a), *lb;
    if (la == NULL) return NULL;
    if (PyObject_TypeCheck(b, &MatchesType)) {
        lb = matches_list((MatchesObject *)b);
        if (lb == NULL) { Py_DECREF(la); return NULL; }
    } else {
        Py_INCREF(b);
        lb = b;
    }
    PyObject *r = PyObject_RichCompare(la, lb, op);
    Py_DECREF(la);
    Py_DECREF(lb);
    return r;
}

static PyObject *
matches_repr(MatchesObject *m)
{
    PyObject *l = matches_list(m);
    if (l == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("Matches(%R)", l);
    Py_DECREF(l);
    return r;
}

static PyObject *
matches_count(MatchesObject *m, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromSsize_t(m->n);
}

static PyMethodDef matches_methods[] = {
    {"lines", (PyCFunction)matches_lines, METH_O,
     "lines(buffer) -> starts: the start offsets of the lines of buffer that hold a match kept (lines_of); the "
     "Matches is then the sequence of each one's literal indices"},
    {"matches", (PyCFunction)matches_count, METH_NOARGS, "matches() -> the number of matches kept"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods matches_as_sequence = {
    .sq_length = (lenfunc)matches_length,
    .sq_item = (ssizeargfunc)matches_item,
};

static PyTypeObject MatchesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "firstfault._lines.Matches",
    .tp_doc = "Matches(): a prefilter match callback in C (Hyperscan's match_event_handler), then, after "
              "lines(buffer), the sequence of the hit lines' literal indices",
    .tp_basicsize = sizeof(MatchesObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = matches_new,
    .tp_dealloc = (destructor)matches_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(MatchesObject, vectorcall),
    .tp_as_sequence = &matches_as_sequence,
    .tp_richcompare = matches_richcompare,
    .tp_repr = (reprfunc)matches_repr,
    .tp_methods = matches_methods,
    .tp_hash = PyObject_HashNotImplemented,
};

/* fold_hits(buffer, starts, k, pos, line_no, table, held, stop[, clock]) -> (k, pos, line_no, folded, held, counts)
 *
 * fold_run's counterpart for a chunk read through the prefilter (collect/scan.py's sparse loop): `starts`
 * are the offsets of the lines that hold a prefilter word (sorted), `pos` the offset up to which newlines
 * were counted and `line_no` the number of the line there. From starts[k], each hit line that table_variant
 * finds a copy (with fold_run's `stop`: the offset of the last line read in full) is held and the copy held
 * before it counted, as fold_run does; the loop stops at the first other hit line, whose index is returned
 * with `pos` and `line_no` as they were before it (the caller reads it), or at len(starts). The lines between
 * hits are not candidates and are passed over. held, counts and `clock` as fold_run's. */
static PyObject *
lines_fold_hits(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t k, pos, line_no, folded = 0, stop;
    PyObject *starts, *table, *result = NULL;
    struct stamp_clock ck;
    Held h;
    if (nargs != 8 && nargs != 9) {
        PyErr_SetString(PyExc_TypeError,
                        "fold_hits(buffer, starts, k, pos, line_no, table, held, stop[, clock]) takes 8 or 9 arguments");
        return NULL;
    }
    if (clock_from(nargs == 9 ? args[8] : Py_None, &ck) < 0) return NULL;
    starts = args[1];
    k = PyLong_AsSsize_t(args[2]);
    if (k == -1 && PyErr_Occurred()) return NULL;
    pos = PyLong_AsSsize_t(args[3]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    line_no = PyLong_AsSsize_t(args[4]);
    if (line_no == -1 && PyErr_Occurred()) return NULL;
    table = args[5];
    stop = PyLong_AsSsize_t(args[7]);
    if (stop == -1 && PyErr_Occurred()) return NULL;
    if (!PyList_Check(starts) || !PyDict_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "fold_hits: starts must be a list and table a dict");
        return NULL;
    }
    if (held_from(&h, args[6], "fold_hits") < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    fold_clock = ck;  /* copy_local_us's, until the call returns */
    walk_buffer = PyBytes_CheckExact(args[0]) ? args[0] : NULL;
    {
        const unsigned char *buf = (const unsigned char *)view.buf;
        Py_ssize_t len = view.len;
        for (; k < PyList_GET_SIZE(starts); k++) {
            Py_ssize_t s = PyLong_AsSsize_t(PyList_GET_ITEM(starts, k));
            if (s == -1 && PyErr_Occurred()) goto fail;
            if (s < pos || s >= len) break;
            const unsigned char *nl = memchr(buf + s, '\n', (size_t)(len - s));
            if (nl == NULL) break;
            Py_ssize_t n = nl - (buf + s), at = line_no;
            PyObject *found = NULL;
            int what = table_variant(table, NULL, buf, s, n, stop, &found);
            if (what < 0) goto fail;
            if (what != FOLD_COPY) break;
            /* its line number: line_no + the newlines in buf[pos:s] */
            for (const unsigned char *p = buf + pos, *end = buf + s, *q;
                 p < end && (q = memchr(p, '\n', (size_t)(end - p))) != NULL; p = q + 1)
                at++;
            if (!held_take(&h, s, s + n, at, found)) break;  /* leave this line to the caller */
            line_no = at;
            pos = s;
            folded++;
        }
    }
    {
        PyObject *hc = held_result(&h);
        if (hc == NULL) goto fail;
        result = Py_BuildValue("(nnnnOO)", k, pos, line_no, folded, PyTuple_GET_ITEM(hc, 0), PyTuple_GET_ITEM(hc, 1));
        Py_DECREF(hc);
    }
fail:
    fold_clock.year = 0;
    walk_buffer = NULL;
    PyBuffer_Release(&view);
    return result;
}

/* stamp_local_us(line, clock) -> int: stamp_local_us on one line (tests compare it with TimeParser.parse), the
 * yearless stamps in `clock`'s year (clock_from): -2 where parse reads no stamp, -1 where C leaves it to Python. */
static PyObject *
lines_stamp_local_us(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    struct stamp_clock ck;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "stamp_local_us(line, clock) takes 2 arguments");
        return NULL;
    }
    if (clock_from(args[1], &ck) < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    long long t = stamp_local_us((const unsigned char *)view.buf, view.len, &ck);
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(t);
}

/* copy_time(buffer, pos, end, stop, clock) -> int: copy_local_us for the copy at buffer[pos:end] (its newline at
 * end) as fold_run reads a timed copy's time, for the fold's checks in Python (scan.py): -1 where C leaves it, -4
 * where no line back to `stop` has a stamp (COPY_NO_STAMP: the copy takes the time of the line read before). */
static PyObject *
lines_copy_time(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    struct stamp_clock ck;
    Py_ssize_t pos, end, stop;
    long long t = -1;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "copy_time(buffer, pos, end, stop, clock) takes 5 arguments");
        return NULL;
    }
    pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    end = PyLong_AsSsize_t(args[2]);
    if (end == -1 && PyErr_Occurred()) return NULL;
    stop = PyLong_AsSsize_t(args[3]);
    if (stop == -1 && PyErr_Occurred()) return NULL;
    if (clock_from(args[4], &ck) < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    if (0 <= pos && pos <= end && end < view.len && ((const unsigned char *)view.buf)[end] == '\n') {
        fold_clock = ck;
        walk_buffer = PyBytes_CheckExact(args[0]) ? args[0] : NULL;
        t = copy_local_us((const unsigned char *)view.buf, pos, end - pos, stop, FOLD_WALK);
        walk_buffer = NULL;
        fold_clock.year = 0;
    }
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(t);
}


/* Whether line p[0:n] may hold both a wall-clock stamp and an uptime as TimeParser.parse reads them (stamps.Clock's
 * boot time): a byte over 0x7f in its first STAMP_CUT bytes (a digit or a space of another script), or
 * timeparse._UPTIME's form (`[`, spaces, 1-10 digits, `.`, 3-9 digits, `]`) there other than at its first byte
 * that is not a space: an uptime that starts the text is taken only where no wall-clock stamp is (parse), and
 * dmesg's own lines start so. A superset (an srun label or a `[rank3]:` before the uptime, UCX's Unix time):
 * stamps.line_stamp decides. */
static int may_hold_both(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t lim = n < STAMP_CUT ? n : STAMP_CUT, first = 0;
    while (first < lim && is_pyspace(p[first])) first++;
    if (first < lim && p[first] >= 0x80) return 1;
    for (Py_ssize_t i = first + 1; i < lim; i++) {  /* one pass: a byte over 0x7f, or the form at a `[` */
        if (p[i] >= 0x80) return 1;
        if (p[i] == '[' && uptime_form(p, i, lim)) return 1;
    }
    return 0;
}

/* prev_booted(buffer, stop, end, limit) -> (start, stop_of_text, lines)
 *
 * prev_stamped's walk back, to the nearest line that may hold both a wall-clock stamp and an uptime
 * (may_hold_both): the lines that cannot are walked over without a parse (stamps.Clock's boot time, looked for
 * behind an uptime-only stamp). start is -1 when there is none. */
static int
booted_test(const unsigned char *p, Py_ssize_t n, void *arg)
{
    (void)arg;
    return may_hold_both(p, n);
}

static PyObject *
lines_prev_booted(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t stop, end, limit;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "prev_booted(buffer, stop, end, limit) takes 4 arguments");
        return NULL;
    }
    if (walk_args(args, &stop, &end, &limit) < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    if (end > view.len) end = view.len;
    struct walk w = walk_back((const unsigned char *)view.buf, stop, end, limit, booted_test, NULL);
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnn)", w.start, w.text_end, w.lines);
}

/* digits_zeroed(str) -> str | None: an ASCII text with every digit made '0' (extract/memo.py digits_zeroed, the one
 * definition: ASCII digits only); None for a text that is not all ASCII (Python's path then). */
static PyObject *
lines_digits_zeroed(PyObject *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "digits_zeroed() takes a str");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(arg)) Py_RETURN_NONE;
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    PyObject *out = PyUnicode_New(n, 127);
    if (out == NULL) return NULL;
    const Py_UCS1 *src = PyUnicode_1BYTE_DATA(arg);
    Py_UCS1 *dst = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS1 c = src[i];
        dst[i] = (c >= '0' && c <= '9') ? '0' : c;
    }
    return out;
}

/* booted_starts(buffer) -> list[int]: the starts of the lines of buffer (whole lines, each ended by a newline, the
 * last perhaps not) that may hold both a wall-clock stamp and an uptime (may_hold_both): stamps.Clock's boot times
 * of one chunk, found in one pass where a stamp with an uptime alone first needs one (a dmesg chunk has none). */
static PyObject *
lines_booted_starts(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *out = PyList_New(0);
    if (out != NULL) {
        const unsigned char *buf = (const unsigned char *)view.buf;
        Py_ssize_t n = view.len, s = 0;
        while (s < n) {
            const unsigned char *nl = memchr(buf + s, '\n', (size_t)(n - s));
            Py_ssize_t e = nl == NULL ? n : (Py_ssize_t)(nl - buf);
            if (may_hold_both(buf + s, e - s)) {
                PyObject *v = PyLong_FromSsize_t(s);
                if (v == NULL || PyList_Append(out, v) < 0) {
                    Py_XDECREF(v);
                    Py_CLEAR(out);
                    break;
                }
                Py_DECREF(v);
            }
            s = e + 1;
        }
    }
    PyBuffer_Release(&view);
    return out;
}

/* prev_stamp_us(buffer, stop, end, limit, clock) -> (start, text_end, lines, us)
 *
 * prev_stamped(buffer, stop, end, limit, True) with the line it stops at read too: `us` is stamp_local_us of its
 * first STAMP_CUT bytes with `clock` (>= 0: its stamp's local microseconds; -1: Python reads it), one reading
 * where the walk and its caller each made one. start is -1 when there is none. */
struct stamp_us_arg { const struct stamp_clock *ck; long long us; };

static int
stamp_us_test(const unsigned char *p, Py_ssize_t n, void *arg)
{
    struct stamp_us_arg *a = (struct stamp_us_arg *)arg;
    if (!may_hold_stamp(p, n)) return 0;
    long long t = stamp_local_us(p, n < STAMP_CUT ? n : STAMP_CUT, a->ck);
    if (t == STAMP_NONE) return 0;
    a->us = t < 0 ? -1 : t;
    return 1;
}

/* prev_stamp_us's walk on buf[0:len] (`bytes`: the buffer's bytes object where it is one, for the memo; else NULL):
 * fills *w and returns the stamp's local microseconds (>= 0), or -1 (none, or Python reads the line it stops at). */
static long long
prev_stamp_us_walk(PyObject *bytes, const unsigned char *buf, Py_ssize_t len, Py_ssize_t stop, Py_ssize_t end,
                   Py_ssize_t limit, const struct stamp_clock *ck, struct walk *w)
{
    if (end > len) end = len;
    struct stamp_us_arg a = {ck, -1};
    w->start = -1;
    w->text_end = 0;
    w->lines = 0;
    /* walk_back's loop, with copy_local_us's memo: a walk from a line at or after the last walk's start, with its
     * stop and clock, reads the lines down to that start and takes its answer (where it is one: a stamp read here,
     * or none back to the stop), lines counted as walking them would count them. A held copy's walk (scan.py's
     * read_held, walk_far) went again over every line the C loop had just walked over to time the copies. */
    int memo = bytes != NULL && walk_memo.buffer == bytes && walk_memo.stop == stop && walk_memo.from <= end
               && walk_memo.answer != -1 && same_clock(&walk_memo.ck, ck);
    int done = 0;  /* the walk reached an answer (a stamp, or none back to `stop`): not `limit` */
    Py_ssize_t cur = end;
    while (cur > 0 && w->lines < limit) {
        if (memo && cur == walk_memo.from) {
            if (walk_memo.answer == COPY_NO_STAMP) {
                w->lines += walk_memo.lines;
                done = 1;
            } else if (w->lines + walk_memo.lines <= limit) {
                w->start = walk_memo.a_start;
                w->text_end = walk_memo.a_end;
                w->lines += walk_memo.lines;
                a.us = walk_memo.answer;
                done = 1;
            } else {
                w->lines = limit;
            }
            break;
        }
        Py_ssize_t s = cur - 2;
        while (s >= 0 && buf[s] != '\n') s--;
        s += 1;
        if (s <= stop) {
            done = 1;
            break;
        }
        Py_ssize_t e = buf[cur - 1] == '\n' ? cur - 1 : cur;
        w->lines++;
        if (stamp_us_test(buf + s, e - s, &a)) {
            w->start = s;
            w->text_end = e;
            done = 1;
            break;
        }
        cur = s;
    }
    if (cur <= 0) done = 1;
    if (done && (w->start < 0 || a.us >= 0))
        walk_memo_keep(bytes, stop, end, w->start < 0 ? COPY_NO_STAMP : a.us, ck, w->start, w->text_end, w->lines);
    return a.us;
}

static PyObject *
lines_prev_stamp_us(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t stop, end, limit;
    struct stamp_clock ck;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "prev_stamp_us(buffer, stop, end, limit, clock) takes 5 arguments");
        return NULL;
    }
    if (walk_args(args, &stop, &end, &limit) < 0) return NULL;
    if (clock_from(args[4], &ck) < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    struct walk w;
    long long us = prev_stamp_us_walk(PyBytes_CheckExact(args[0]) ? args[0] : NULL, (const unsigned char *)view.buf,
                                      view.len, stop, end, limit, &ck, &w);
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnnL)", w.start, w.text_end, w.lines, us);
}

/* line_time_us(buffer, start, end, stop, limit, clock) -> int
 *
 * A candidate line's time as scan.py's time_of reads it for a line without an srun label, in one call where C is
 * sure of every step: the line buffer[start:end] (its newline at end) read by stamp_local_us where it may hold a
 * stamp (may_hold_stamp), else, or where it reads as no stamp, prev_stamp_us's walk back from it (to `stop`, over
 * `limit` lines at most). The local microseconds of the stamp found (>= 0); COPY_NO_STAMP (-4) where the line and
 * the walk find none (the line takes the time of the line read before); -1 where Python reads it (the line's own
 * stamp or the walk's line not read in C). */
static PyObject *
lines_line_time_us(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t start, end, stop, limit;
    struct stamp_clock ck;
    long long t = -1;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "line_time_us(buffer, start, end, stop, limit, clock) takes 6 arguments");
        return NULL;
    }
    start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    if (walk_args(args + 1, &end, &stop, &limit) < 0) return NULL;
    if (clock_from(args[5], &ck) < 0) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    if (0 <= start && start <= end && end <= view.len) {
        t = STAMP_NONE;
        if (may_hold_stamp(buf + start, end - start))
            t = stamp_local_us(buf + start, end - start, &ck);
        if (t == STAMP_NONE) {
            struct walk w;
            long long us = prev_stamp_us_walk(PyBytes_CheckExact(args[0]) ? args[0] : NULL, buf, view.len, stop,
                                              start, limit, &ck, &w);
            t = w.start < 0 ? COPY_NO_STAMP : us;  /* (us -1: the walk's line is Python's to read) */
        } else if (t < 0) {
            t = -1;
        }
    }
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(t);
}

static PyMethodDef lines_methods[] = {
    {"count", (PyCFunction)(void (*)(void))lines_count, METH_FASTCALL,
     "count(buffer, start, end) -> number of newlines in buffer[start:end]"},
    {"prev_stamped", (PyCFunction)(void (*)(void))lines_prev_stamped, METH_FASTCALL,
     "prev_stamped(buffer, stop, end, limit) -> (start, text_end, lines): the nearest line before end "
     "that may hold a stamp"},
    {"prev_booted", (PyCFunction)(void (*)(void))lines_prev_booted, METH_FASTCALL,
     "prev_booted(buffer, stop, end, limit) -> (start, text_end, lines): the nearest line before end "
     "that may hold both a wall-clock stamp and an uptime"},
    {"digits_zeroed", (PyCFunction)lines_digits_zeroed, METH_O,
     "digits_zeroed(str) -> str | None: an ASCII text with every digit '0' (memo.digits_zeroed); None if not ASCII"},
    {"booted_starts", (PyCFunction)lines_booted_starts, METH_O,
     "booted_starts(buffer) -> list[int]: the starts of the lines that may hold both a wall-clock stamp and an "
     "uptime"},
    {"prev_stamp_us", (PyCFunction)(void (*)(void))lines_prev_stamp_us, METH_FASTCALL,
     "prev_stamp_us(buffer, stop, end, limit, clock) -> (start, text_end, lines, us): prev_stamped's walk with the "
     "line it stops at read in C (-1: Python reads it)"},
    {"line_time_us", (PyCFunction)(void (*)(void))lines_line_time_us, METH_FASTCALL,
     "line_time_us(buffer, start, end, stop, limit, clock) -> int: a candidate line's time, its own stamp's or "
     "prev_stamp_us's walk back's, as local microseconds (-4: none back to stop; -1: Python reads it)"},
    {"line_shape", (PyCFunction)lines_line_shape, METH_O,
     "line_shape(bytes) -> bytes: every digit '0', and the hex letters of hex ids '0' (memo.line_shape)"},
    {"fold_run", (PyCFunction)(void (*)(void))lines_fold_run, METH_FASTCALL,
     "fold_run(buffer, pos, line_no, table, held, quiet, stop[, clock]) -> (pos, line_no, folded, held, counts, "
     "passed): "
     "the fold's dense loop over the copies it already knows and the lines it knows hold no word"},
    {"unquiet", (PyCFunction)(void (*)(void))lines_unquiet, METH_FASTCALL,
     "unquiet(buffer, quiet, sample) -> None | (kept, at, starts): the lines whose shape is not quiet, joined, with "
     "their offsets there and in buffer (None: too few quiet lines to pay)"},
    {"copy_time", (PyCFunction)(void (*)(void))lines_copy_time, METH_FASTCALL,
     "copy_time(buffer, pos, end, stop, clock) -> int: the local microseconds of the time reading the copy at "
     "buffer[pos:end] would give it, as fold_run reads a timed copy's (-1: C leaves it to Python)"},
    {"stamp_local_us", (PyCFunction)(void (*)(void))lines_stamp_local_us, METH_FASTCALL,
     "stamp_local_us(line, clock) -> int: the local microseconds of the stamp TimeParser reads from a line, "
     "yearless ones in clock's year (-2: it reads none; -1: C leaves it to Python)"},
    {"fold_shape", (PyCFunction)lines_fold_shape, METH_O,
     "fold_shape(bytes) -> bytes | None: the shape the fold's C loops look a line up by (memo.line_shape's, "
     "through their memo of recent lines); None for a line they leave to Python (too long, a byte over 0x7f)"},
    {"fold_shape_memo", (PyCFunction)lines_fold_shape_memo, METH_O,
     "fold_shape_memo(on) -> bool: turn the fold loops' memo of recent shapes on or off; the previous setting"},
    {"may_stamp", (PyCFunction)lines_may_stamp, METH_O,
     "may_stamp(bytes) -> bool: whether TimeParser.parse may find a stamp on the line (a superset)"},
    {"lines_of", (PyCFunction)(void (*)(void))lines_lines_of, METH_FASTCALL,
     "lines_of(buffer, matches) -> (starts, ids): the lines of buffer that hold a match, and each one's "
     "literal indices (scan._lines_of_py)"},
    {"fold_hits", (PyCFunction)(void (*)(void))lines_fold_hits, METH_FASTCALL,
     "fold_hits(buffer, starts, k, pos, line_no, table, held, stop[, clock]) -> (k, pos, line_no, folded, held, "
     "counts): "
     "fold_run over the prefilter's hit lines"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lines_module = {
    PyModuleDef_HEAD_INIT, "firstfault._lines", "The line scanner's byte loops in C.", -1, lines_methods,
};

PyMODINIT_FUNC
PyInit__lines(void)
{
    if (PyType_Ready(&MatchesType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&lines_module);
    if (mod == NULL) return NULL;
    Py_INCREF(&MatchesType);
    if (PyModule_AddObject(mod, "Matches", (PyObject *)&MatchesType) < 0) {
        Py_DECREF(&MatchesType);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
