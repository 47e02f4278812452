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
 * Optional: scan.py falls back to bytes.count and to parsing every line when
 * this module is not built; the results are the same.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
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
 * or a `D.DDD` uptime (`[ 123.456]`); a byte over 0x7f may be a digit or a space of another
 * script, which the str patterns also read. A superset: parse decides. */
static int may_hold_stamp(const unsigned char *p, Py_ssize_t n)
{
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

/* prev_stamped(buffer, stop, end, limit) -> (start, stop_of_text, lines)
 *
 * Walks the lines before offset `end` back, as LineScanner._walk_back does (the line that ends
 * at end - 1, then the one before, ...), over at most `limit` lines and none that starts at or
 * before `stop`, to the first that may hold a stamp: its start, the end of its text (its newline
 * excluded) and how many lines the walk took, that one included. start is -1 when there is none. */
static PyObject *
lines_prev_stamped(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t stop, end, limit, n = 0, start = -1, text_end = 0;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "prev_stamped(buffer, stop, end, limit) takes 4 arguments");
        return NULL;
    }
    stop = PyLong_AsSsize_t(args[1]);
    if (stop == -1 && PyErr_Occurred()) return NULL;
    end = PyLong_AsSsize_t(args[2]);
    if (end == -1 && PyErr_Occurred()) return NULL;
    limit = PyLong_AsSsize_t(args[3]);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    if (end > view.len) end = view.len;
    {
        const unsigned char *buf = (const unsigned char *)view.buf;
        Py_ssize_t cur = end;
        while (cur > 0 && n < limit) {
            /* s = buf.rfind(b"\n", 0, cur - 1) + 1 */
            Py_ssize_t s = cur - 2;
            while (s >= 0 && buf[s] != '\n') s--;
            s += 1;
            if (s <= stop) break;
            Py_ssize_t e = buf[cur - 1] == '\n' ? cur - 1 : cur;
            n++;
            if (may_hold_stamp(buf + s, e - s)) {
                start = s;
                text_end = e;
                break;
            }
            cur = s;
        }
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnn)", start, text_end, n);
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
static void shape_hex(unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        if (!is_word(s[i])) { i++; continue; }
        Py_ssize_t a = i, from, u = uuid_end(s, n, i);
        if (u >= 0) {
            for (; i < u; i++)
                if (s[i] != '-') s[i] = '0';
            continue;
        }
        int hex = 1;
        while (i < n && is_word(s[i])) { hex &= is_hex0(s[i]); i++; }
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

/* line_shape(bytes) -> bytes: memo.line_shape_py in one call (every digit '0', hex ids' letters '0'). */
static PyObject *
lines_line_shape(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
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


/* The time, in microseconds since 0001-01-01 of the bundle's local clock, of a zone-less ISO stamp
 * (`2026-11-02 10:00:07[.,]fraction`) that line p[0:n] starts with, when TimeParser.parse reads that
 * very stamp from the line and nothing else it does depends on the line: a year 1001-8998 (always in
 * the times the analysis holds), a real date and time of day, no zone after it (`Z`, `UTC`, `+hh:mm`,
 * also behind one white space), no `[` then a digit in its first 80 bytes (an uptime: the line's stamp
 * would then carry one). -1 otherwise (Python decides). */
static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n'; }
static long long num(const unsigned char *p, int k) {
    long long v = 0;
    for (int i = 0; i < k; i++) {
        if (!is_digit(p[i])) return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}
static long long iso_local_us(const unsigned char *p, Py_ssize_t n)
{
    static const int before[13] = {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    static const int dim[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (n < 19 || p[4] != '-' || p[7] != '-' || (p[10] != ' ' && p[10] != 'T') || p[13] != ':' || p[16] != ':')
        return -1;
    long long y = num(p, 4), mo = num(p + 5, 2), d = num(p + 8, 2), h = num(p + 11, 2), mi = num(p + 14, 2),
              sec = num(p + 17, 2);
    if (y < 1001 || y > 8998 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0
            || sec > 59)
        return -1;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > dim[mo] + (mo == 2 && leap)) return -1;
    Py_ssize_t q = 19;
    long long us = 0;
    if (q + 1 < n && (p[q] == '.' || p[q] == ',') && is_digit(p[q + 1])) {  /* _frac: the first 6 digits */
        int k = 0;
        q++;
        while (q < n && k < 9 && is_digit(p[q])) {
            if (k < 6) us = us * 10 + (p[q] - '0');
            k++;
            q++;
        }
        for (; k < 6; k++) us *= 10;
    }
    if (q < n && is_space(p[q])) q++;
    if (q < n && (p[q] == 'Z' || ((p[q] == '+' || p[q] == '-') && q + 2 < n && is_digit(p[q + 1])
                                  && is_digit(p[q + 2]))))
        return -1;
    if (q + 2 < n && p[q] == 'U' && p[q + 1] == 'T' && p[q + 2] == 'C') return -1;
    for (Py_ssize_t i = 0; i < n && i < 80; i++) {
        if (p[i] == '[') {
            Py_ssize_t j = i + 1;
            while (j < n && is_space(p[j])) j++;
            if (j < n && is_digit(p[j])) return -1;
        }
    }
    long long yy = y - 1;
    long long ordinal = yy * 365 + yy / 4 - yy / 100 + yy / 400 + before[mo] + (mo > 2 && leap) + d;
    return ((ordinal * 24 + h) * 60 + mi) * 60000000LL + sec * 1000000LL + us;
}

/* The time reading a copy at buf[pos:pos+n] would give it, as the local microseconds of iso_local_us, where
 * the copy holds no stamp of its own (may_hold_stamp: none of the forms' characters) and the nearest line
 * before it that may hold one, after offset `stop` (the last line read in full) and within `limit` lines, starts
 * with a stamp iso_local_us reads: that line's stamp is what the walk back parses first. -1 otherwise. */
static long long copy_local_us(const unsigned char *buf, Py_ssize_t pos, Py_ssize_t n, Py_ssize_t stop,
                               Py_ssize_t limit)
{
    if (may_hold_stamp(buf + pos, n)) return -1;
    Py_ssize_t cur = pos;
    for (Py_ssize_t k = 0; cur > 0 && k < limit; k++) {
        Py_ssize_t s = cur - 2;
        while (s >= 0 && buf[s] != '\n') s--;
        s += 1;
        if (s <= stop) return -1;
        Py_ssize_t e = cur - 1;  /* buf[cur - 1] is the newline before the line that starts at cur */
        if (may_hold_stamp(buf + s, e - s)) return iso_local_us(buf + s, e - s);
        cur = s;
    }
    return -1;
}

#define FOLD_WALK 400  /* lines walked back from a copy whose time is read in C (scan.BACKWALK_LINES) */

/* fold_run(buffer, pos, line_no, table, held, quiet, stop) -> (pos, line_no, folded, held, counts, passed)
 *
 * The fold's dense loop (collect/scan.py, collect/fold.py) over the copies it already knows.
 * `table` maps a shape (memo.line_shape: digits and hex ids' letters made '0') to a list of
 * (lo, hi, lead_rep, variant, floor): the variants of that shape that LineFold.fold_copy would
 * count now, with their byte ranges. From offset `pos` (a line's start), each line whose
 * shape is a key of `table` and whose every byte lies between an entry's lo and hi (and
 * whose first len(lead_rep) bytes are not less than lead_rep) is such a copy: it is held
 * (the last copy seen is read in full later, not counted) and the copy held before it is
 * counted. An entry whose floor is an int is a timed variant's (fold._Variant.timed: an
 * unrecognized line with no stamp it starts with): its copy is counted only where the time
 * reading it would give it is read here (copy_local_us: the stamp of the nearest line before
 * it, after offset `stop`) and is not earlier than floor (the same local microseconds).
 * A line whose shape is in the set `quiet` holds none of the prefilter's words (its shape
 * tells: LineFold.quiet): it is passed over, as the prefilter would. The loop stops at the
 * first other line (and at a line longer than MAX_LINE, a byte over 0x7f: the Python check
 * never folds those, or a line with no newline): its offset is returned, with the line number
 * of the last line passed, how many lines folded, the held copy (s, e, line_no, variant) or
 * None, [(variant, count), ...] and how many quiet lines were passed. */
#define FOLD_MAX_LINE 2000
#define FOLD_MAX_COUNTED 64
static PyObject *
lines_fold_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer view;
    Py_ssize_t pos, line_no, folded = 0, passed = 0, hs = 0, he = 0, hl = 0, stop;
    PyObject *table, *held, *quiet, *hv = NULL, *result = NULL;
    PyObject *cv[FOLD_MAX_COUNTED];
    Py_ssize_t cn[FOLD_MAX_COUNTED];
    int k = 0;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "fold_run(buffer, pos, line_no, table, held, quiet, stop) takes 7 arguments");
        return NULL;
    }
    pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    line_no = PyLong_AsSsize_t(args[2]);
    if (line_no == -1 && PyErr_Occurred()) return NULL;
    table = args[3];
    held = args[4];
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
    if (held != Py_None) {
        if (!PyTuple_Check(held) || PyTuple_GET_SIZE(held) != 4) {
            PyErr_SetString(PyExc_TypeError, "fold_run: held must be None or (s, e, line_no, variant)");
            return NULL;
        }
        hs = PyLong_AsSsize_t(PyTuple_GET_ITEM(held, 0));
        he = PyLong_AsSsize_t(PyTuple_GET_ITEM(held, 1));
        hl = PyLong_AsSsize_t(PyTuple_GET_ITEM(held, 2));
        if (PyErr_Occurred()) return NULL;
        hv = PyTuple_GET_ITEM(held, 3);
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    {
        const unsigned char *buf = (const unsigned char *)view.buf;
        Py_ssize_t len = view.len;
        while (pos < len) {
            const unsigned char *line = buf + pos;
            const unsigned char *nl = memchr(line, '\n', (size_t)(len - pos));
            if (nl == NULL) break;
            Py_ssize_t n = nl - line, i;
            if (n > FOLD_MAX_LINE) break;
            PyObject *key = PyBytes_FromStringAndSize(NULL, n);
            if (key == NULL) goto fail;
            unsigned char *shape = (unsigned char *)PyBytes_AS_STRING(key);
            int ascii = 1;
            for (i = 0; i < n; i++) {
                unsigned char c = line[i];
                ascii &= c < 0x80;
                shape[i] = (c >= '0' && c <= '9') ? '0' : c;
            }
            if (!ascii) { Py_DECREF(key); break; }
            shape_hex(shape, n);
            PyObject *entries = PyDict_GetItemWithError(table, key);  /* borrowed */
            if (entries == NULL) {
                int q;
                if (PyErr_Occurred()) { Py_DECREF(key); goto fail; }
                q = PySet_Contains(quiet, key);
                Py_DECREF(key);
                if (q < 0) goto fail;
                if (!q) break;
                line_no++;
                passed++;
                pos += n + 1;
                continue;
            }
            Py_DECREF(key);
            if (!PyList_Check(entries)) {
                PyErr_SetString(PyExc_TypeError, "fold_run: a table value must be a list");
                goto fail;
            }
            PyObject *found = NULL;
            int late = 0;  /* within a variant's ranges, but its stamp or time is earlier than the variant's */
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(entries) && found == NULL; j++) {
                PyObject *entry = PyList_GET_ITEM(entries, j);
                if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 5
                        || !PyBytes_Check(PyTuple_GET_ITEM(entry, 0)) || !PyBytes_Check(PyTuple_GET_ITEM(entry, 1))
                        || !PyBytes_Check(PyTuple_GET_ITEM(entry, 2))) {
                    PyErr_SetString(PyExc_TypeError,
                                    "fold_run: an entry must be (lo, hi, lead_rep, variant, floor)");
                    goto fail;
                }
                PyObject *lo_o = PyTuple_GET_ITEM(entry, 0), *hi_o = PyTuple_GET_ITEM(entry, 1);
                PyObject *lead_o = PyTuple_GET_ITEM(entry, 2), *floor_o = PyTuple_GET_ITEM(entry, 4);
                if (PyBytes_GET_SIZE(lo_o) != n || PyBytes_GET_SIZE(hi_o) != n || PyBytes_GET_SIZE(lead_o) > n)
                    continue;
                const unsigned char *lo = (const unsigned char *)PyBytes_AS_STRING(lo_o);
                const unsigned char *hi = (const unsigned char *)PyBytes_AS_STRING(hi_o);
                for (i = 0; i < n; i++)
                    if (line[i] < lo[i] || line[i] > hi[i]) break;
                if (i < n) continue;
                if (memcmp(line, PyBytes_AS_STRING(lead_o), (size_t)PyBytes_GET_SIZE(lead_o)) < 0) {
                    late = 1;
                    break;
                }
                if (floor_o != Py_None) {
                    long long floor = PyLong_AsLongLong(floor_o);
                    if (floor == -1 && PyErr_Occurred()) goto fail;
                    long long t = copy_local_us(buf, pos, n, stop, FOLD_WALK);
                    if (t < 0 || t < floor) {  /* not read here, or earlier: Python works it out */
                        late = 1;
                        break;
                    }
                }
                found = PyTuple_GET_ITEM(entry, 3);
            }
            if (found == NULL || late) break;
            if (hv != NULL) {  /* the copy held before this one is counted */
                int c;
                for (c = 0; c < k && cv[c] != hv; c++)
                    ;
                if (c == k) {
                    if (k == FOLD_MAX_COUNTED) break;  /* leave this line to the caller */
                    cv[k] = hv;
                    cn[k++] = 0;
                }
                cn[c]++;
            }
            line_no++;
            hs = pos;
            he = pos + n;
            hl = line_no;
            hv = found;
            folded++;
            pos = he + 1;
        }
    }
    {
        PyObject *counts = PyList_New(k);
        if (counts == NULL) goto fail;
        for (int c = 0; c < k; c++) {
            PyObject *pair = Py_BuildValue("(On)", cv[c], cn[c]);
            if (pair == NULL) { Py_DECREF(counts); goto fail; }
            PyList_SET_ITEM(counts, c, pair);
        }
        if (hv != NULL)
            result = Py_BuildValue("(nnn(nnnO)Nn)", pos, line_no, folded, hs, he, hl, hv, counts, passed);
        else
            result = Py_BuildValue("(nnnONn)", pos, line_no, folded, Py_None, counts, passed);
    }
fail:
    PyBuffer_Release(&view);
    return result;
}

/* iso_local_us(line) -> int: iso_local_us on one line (tests compare it with TimeParser's reading). */
static PyObject *
lines_iso_local_us(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    long long t = iso_local_us((const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(t);
}

static PyMethodDef lines_methods[] = {
    {"count", (PyCFunction)(void (*)(void))lines_count, METH_FASTCALL,
     "count(buffer, start, end) -> number of newlines in buffer[start:end]"},
    {"prev_stamped", (PyCFunction)(void (*)(void))lines_prev_stamped, METH_FASTCALL,
     "prev_stamped(buffer, stop, end, limit) -> (start, text_end, lines): the nearest line before end "
     "that may hold a stamp"},
    {"line_shape", (PyCFunction)lines_line_shape, METH_O,
     "line_shape(bytes) -> bytes: every digit '0', and the hex letters of hex ids '0' (memo.line_shape)"},
    {"fold_run", (PyCFunction)(void (*)(void))lines_fold_run, METH_FASTCALL,
     "fold_run(buffer, pos, line_no, table, held, quiet, stop) -> (pos, line_no, folded, held, counts, passed): "
     "the fold's dense loop over the copies it already knows and the lines it knows hold no word"},
    {"iso_local_us", (PyCFunction)lines_iso_local_us, METH_O,
     "iso_local_us(line) -> int: the local microseconds of the zone-less ISO stamp a line starts with, where "
     "the C fold reads it (-1: not such a line)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lines_module = {
    PyModuleDef_HEAD_INIT, "firstfault._lines", "The line scanner's byte loops in C.", -1, lines_methods,
};

PyMODINIT_FUNC
PyInit__lines(void)
{
    return PyModule_Create(&lines_module);
}
