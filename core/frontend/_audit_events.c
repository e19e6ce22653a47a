/* Python's audit events while psc_jit traces (optional: without a compiler psc_jit finds host
 * calls by the function called alone, not those libraries make inside).
 *
 * An audit hook cannot be removed once added, and Python raises an event for every call of
 * `id()`, `sys._getframe()` and `object.__getattr__` of some types: a hook written in Python
 * added 150-400 ns to every `id()` in the whole process, for good (against about 60 without
 * a hook; CPython builds each event's arguments for any hook, which costs this one 40-60).
 * This hook is C: it returns at once unless a trace is being watched (`watching`, a count)
 * and the event's name starts with one of the prefixes it was given ("open", "os.",
 * "subprocess.", ...); only then does it call the Python callback (frontend/refusals.py),
 * which may raise to refuse the operation. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static PyObject *callback = NULL;      /* callback(event, args), or NULL before `watch` */
static PyObject *prefixes = NULL;      /* a tuple of str */
static long watching = 0;              /* traces being watched, in any thread */

static int
wanted(const char *event)
{
    Py_ssize_t n = PyTuple_GET_SIZE(prefixes);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t length;
        const char *prefix = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(prefixes, i), &length);
        if (prefix != NULL && strncmp(event, prefix, (size_t)length) == 0) {
            return 1;
        }
    }
    return 0;
}

static int
hook(const char *event, PyObject *args, void *data)
{
    (void)data;
    if (watching <= 0 || callback == NULL || !wanted(event)) {
        return 0;
    }
    PyObject *result = PyObject_CallFunction(callback, "sO", event, args);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

static PyObject *
watch(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    /* watch(callback, prefixes): install the hook (once per process) with these */
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "watch(callback, prefixes: tuple of str)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[1]); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(args[1], i))) {
            PyErr_SetString(PyExc_TypeError, "watch: the prefixes are str");
            return NULL;
        }
    }
    int first = callback == NULL;
    Py_XSETREF(callback, Py_NewRef(args[0]));
    Py_XSETREF(prefixes, Py_NewRef(args[1]));
    if (first && PySys_AddAuditHook(hook, NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
count(PyObject *module, PyObject *delta)
{
    /* count(+1 or -1): a watched trace starts or ends; returns the count */
    long d = PyLong_AsLong(delta);
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    watching += d;
    return PyLong_FromLong(watching);
}

static PyMethodDef methods[] = {
    {"watch", (PyCFunction)(void (*)(void))watch, METH_FASTCALL,
     "watch(callback, prefixes): call callback(event, args) for an audit event whose name "
     "starts with one of prefixes while a trace is watched (see count)."},
    {"count", count, METH_O, "count(delta): add delta to the traces being watched."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_audit_events",
    "Python's audit events while psc_jit traces, filtered in C.", -1, methods,
};

PyMODINIT_FUNC
PyInit__audit_events(void)
{
    return PyModule_Create(&module_def);
}
