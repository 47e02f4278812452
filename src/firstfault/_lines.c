/* Counting newlines at memory speed, for the line scanner (firstfault/scan.py).
 *
 * bytes.count(b"\n") walks a buffer one byte at a time (about 1 GB/s); this
 * walks it with memchr, which the C library vectorises. Optional: scan.py
 * falls back to bytes.count when this module is not built.
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

static PyMethodDef lines_methods[] = {
    {"count", (PyCFunction)(void (*)(void))lines_count, METH_FASTCALL,
     "count(buffer, start, end) -> number of newlines in buffer[start:end]"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lines_module = {
    PyModuleDef_HEAD_INIT, "firstfault._lines", "Newline counting in C for the line scanner.", -1, lines_methods,
};

PyMODINIT_FUNC
PyInit__lines(void)
{
    return PyModule_Create(&lines_module);
}
