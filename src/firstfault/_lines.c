/* The line scanner's byte loops in C (firstfault/collect/scan.py).
 *
 * count: bytes.count(b"\n") walks a buffer one byte at a time (about 1 GB/s);
 * this walks it with memchr, which the C library vectorises.
 *
 * prev_stamped: the walk back from an unstamped candidate to the nearest line
 * with a stamp skips, in C, the lines that cannot hold one (a burst of NCCL INFO
 * lines), so that Python parses only the lines that may.
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

static PyMethodDef lines_methods[] = {
    {"count", (PyCFunction)(void (*)(void))lines_count, METH_FASTCALL,
     "count(buffer, start, end) -> number of newlines in buffer[start:end]"},
    {"prev_stamped", (PyCFunction)(void (*)(void))lines_prev_stamped, METH_FASTCALL,
     "prev_stamped(buffer, stop, end, limit) -> (start, text_end, lines): the nearest line before end "
     "that may hold a stamp"},
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
