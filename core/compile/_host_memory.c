/* Host memory for psc_jit's compiled calls (optional: without a compiler psc_jit does the
 * same in Python, slower or not at all):
 *
 * 1. `writable_array`: an XLA result buffer as a writable ndarray, with no copy (the
 *    result object as its base, keeping the buffer alive): what `hostmemory.ResultView` does
 *    with ctypes in about 0.6 microseconds more, on every output of every call.
 *
 * 2. NumPy's data allocations, 64-byte aligned: a NumPy memory handler (NEP 49) whose blocks
 * start on a 64-byte boundary, the alignment XLA's CPU client needs to read an input in
 * place (NumPy's own blocks are usually 16-byte aligned, so jaxlib copies them on every
 * compiled call). Installed by `hostmemory.align_new_arrays`; NumPy keeps the handler of
 * each array with it, so arrays made before or after are freed by their own handler.
 *
 * Each block is a malloc'd block ALIGNMENT bytes longer than asked for; the data starts at
 * the first boundary after its first byte, and the byte before the data holds how far in it
 * starts (1 to ALIGNMENT). calloc's blocks stay lazily zeroed (one byte is written).
 *
 * 3. `router`: a method in front of jaxlib's C++ dispatcher. A call whose arguments the CPU
 * client all reads in place goes to the dispatcher (a FastPath runs it in C++); a call with
 * a large argument it would copy (misaligned, or not C-contiguous) goes to the Python path,
 * which stages it: one memcpy into a reused aligned buffer, where jaxlib would allocate and
 * fill a fresh one on every call. So does a call with an argument of a subclass (a masked
 * array, a matrix, a float subclass), which the dispatcher would take for its base type and
 * the Python path refuses to compile. The dispatcher cannot tell these apart (its key is the
 * arguments' shapes and dtypes), and a Python check before it would cost microseconds. It
 * also checks the guards the instance lists (a global or closure value, and attributes from
 * it, that the hits' traces read: `np`, `np.sum`, a helper function) by identity, so that a
 * function reading them keeps a FastPath; when one fails, the Python path checks and
 * retraces as it always does.
 *
 * 4. `from_boundaries`: large inputs off the 64-byte boundary as 1-d arrays starting on the
 * boundary before their data (compile/offsets.py's variants read them in place): what
 * `offsets.widened` does with ctypes, in a microsecond instead of a dozen per call. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

#define ALIGNMENT 64

static void *
place(unsigned char *raw)
{
    if (raw == NULL) {
        return NULL;
    }
    uintptr_t start = ((uintptr_t)raw + ALIGNMENT) & ~(uintptr_t)(ALIGNMENT - 1);
    size_t offset = start - (uintptr_t)raw;
    raw[offset - 1] = (unsigned char)offset;
    return raw + offset;
}

static unsigned char *
raw_of(void *data)
{
    unsigned char *bytes = data;
    return bytes - bytes[-1];
}

static void *
aligned_malloc(void *ctx, size_t size)
{
    (void)ctx;
    if (size > SIZE_MAX - ALIGNMENT) {
        return NULL;
    }
    return place(malloc(size + ALIGNMENT));
}

static void *
aligned_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    if (elsize != 0 && nelem > (SIZE_MAX - ALIGNMENT) / elsize) {
        return NULL;
    }
    return place(calloc(nelem * elsize + ALIGNMENT, 1));
}

static void *
aligned_realloc(void *ctx, void *data, size_t new_size)
{
    if (data == NULL) {
        return aligned_malloc(ctx, new_size);
    }
    if (new_size > SIZE_MAX - ALIGNMENT) {
        return NULL;
    }
    unsigned char *raw = raw_of(data);
    size_t old_offset = (unsigned char *)data - raw;
    unsigned char *moved = realloc(raw, new_size + ALIGNMENT);
    if (moved == NULL) {
        return NULL;
    }
    uintptr_t start = ((uintptr_t)moved + ALIGNMENT) & ~(uintptr_t)(ALIGNMENT - 1);
    size_t offset = start - (uintptr_t)moved;
    if (offset != old_offset) {
        /* the old data is at old_offset; new_size bytes from there stay inside the block */
        memmove(moved + offset, moved + old_offset, new_size);
    }
    moved[offset - 1] = (unsigned char)offset;
    return moved + offset;
}

static void
aligned_free(void *ctx, void *data, size_t size)
{
    (void)ctx;
    (void)size;
    if (data != NULL) {
        free(raw_of(data));
    }
}

static PyDataMem_Handler aligned_handler = {
    "psc_jit_aligned_64",
    1,
    {NULL, aligned_malloc, aligned_calloc, aligned_realloc, aligned_free},
};

static PyObject *
install(PyObject *module, PyObject *unused)
{
    PyObject *capsule = PyCapsule_New(&aligned_handler, "mem_handler", NULL);
    if (capsule == NULL) {
        return NULL;
    }
    PyObject *previous = PyDataMem_SetHandler(capsule);
    Py_DECREF(capsule);
    return previous;
}

static PyObject *
restore(PyObject *module, PyObject *previous)
{
    PyObject *ours = PyDataMem_SetHandler(previous);
    if (ours == NULL) {
        return NULL;
    }
    Py_DECREF(ours);
    Py_RETURN_NONE;
}

static PyObject *
writable_array(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    /* (owner, address, dtype, shape): a C-contiguous writable array of dtype and shape at
     * address, with owner as its base */
    if (nargs != 4 || !PyArray_DescrCheck(args[2]) || !PyTuple_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "writable_array(owner, address, dtype, shape)");
        return NULL;
    }
    void *data = PyLong_AsVoidPtr(args[1]);
    if (data == NULL && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t ndim = PyTuple_GET_SIZE(args[3]);
    if (ndim > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "too many dimensions");
        return NULL;
    }
    npy_intp dims[NPY_MAXDIMS];
    for (Py_ssize_t i = 0; i < ndim; i++) {
        dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(args[3], i));
        if (dims[i] == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    PyArray_Descr *descr = (PyArray_Descr *)args[2];
    Py_INCREF(descr);   /* stolen */
    PyObject *array = PyArray_NewFromDescr(&PyArray_Type, descr, (int)ndim, dims, NULL, data,
                                           NPY_ARRAY_CARRAY, NULL);
    if (array == NULL) {
        return NULL;
    }
    Py_INCREF(args[0]);
    if (PyArray_SetBaseObject((PyArrayObject *)array, args[0]) < 0) {  /* steals owner */
        Py_DECREF(array);
        return NULL;
    }
    return array;
}

static int
plain_argument(PyObject *item)
{
    /* whether the dispatcher's key types this argument as what it is: not an instance of a
     * strict subclass of ndarray, float or complex (a masked array, a matrix, a NumPy scalar, a
     * subclass of the user's), which its key would take for the base type; psc_jit compiles
     * none of them as their base (tracing.plain_base), so such a call takes the Python path */
    if (PyArray_CheckExact(item) || PyFloat_CheckExact(item) || PyComplex_CheckExact(item)) {
        return 1;
    }
    return !(PyArray_Check(item) || PyFloat_Check(item) || PyComplex_Check(item));
}

static int
read_in_place(PyObject *item, Py_ssize_t from_bytes)
{
    /* whether jaxlib's CPU client reads this argument in place, or it is not an ndarray of
     * at least from_bytes (the inputs psc_jit stages when they are not read in place) */
    if (!PyArray_Check(item) || PyArray_NBYTES((PyArrayObject *)item) < from_bytes) {
        return 1;
    }
    return PyArray_IS_C_CONTIGUOUS((PyArrayObject *)item) &&
           (uintptr_t)PyArray_DATA((PyArrayObject *)item) % ALIGNMENT == 0;
}

static PyObject *
large_ones_aligned(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    /* (arrays, from_bytes): whether every ndarray of the list or tuple that holds at least
     * from_bytes has C-contiguous data starting on a 64-byte boundary (jaxlib's CPU client
     * reads such an input in place) */
    Py_ssize_t from_bytes;
    if (nargs != 2 || (from_bytes = PyLong_AsSsize_t(args[1])) == -1) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "large_ones_aligned(arrays, from_bytes)");
        }
        return NULL;
    }
    PyObject *items = PySequence_Fast(args[0], "large_ones_aligned takes a list or tuple");
    if (items == NULL) {
        return NULL;
    }
    int aligned = 1;
    for (Py_ssize_t i = 0; aligned && i < PySequence_Fast_GET_SIZE(items); i++) {
        aligned = read_in_place(PySequence_Fast_GET_ITEM(items, i), from_bytes);
    }
    Py_DECREF(items);
    return PyBool_FromLong(aligned);
}

static PyObject *
from_boundaries(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    /* (arrays, large): each large array of the list read from the 64-byte boundary before
     * its data (4. above): (offsets, arrays) with each one's offset in elements and, for an
     * array off the boundary, the 1-d array of its elements and the `offset` before them
     * (its base the array); the others as they are. None when none is off the boundary, or
     * a large one is not a C-contiguous ndarray starting on a multiple of its item size. */
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "from_boundaries(arrays, large)");
        return NULL;
    }
    PyObject *items = PySequence_Fast(args[0], "from_boundaries takes a list or tuple");
    if (items == NULL) {
        return NULL;
    }
    PyObject *large = PySequence_Fast(args[1], "from_boundaries takes a list or tuple");
    if (large == NULL) {
        Py_DECREF(items);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    PyObject *offsets = NULL, *views = NULL, *result = NULL;
    if (PySequence_Fast_GET_SIZE(large) != n) {
        PyErr_SetString(PyExc_ValueError, "from_boundaries: one flag per array");
        goto done;
    }
    offsets = PyTuple_New(n);
    views = PyList_New(n);
    if (offsets == NULL || views == NULL) {
        goto done;
    }
    int any = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(items, i);
        Py_ssize_t offset = 0;
        int is_large = PyObject_IsTrue(PySequence_Fast_GET_ITEM(large, i));
        if (is_large < 0) {
            goto done;
        }
        if (is_large) {
            if (!PyArray_CheckExact(item) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)item)) {
                result = Py_None;
                goto done;
            }
            PyArrayObject *array = (PyArrayObject *)item;
            Py_ssize_t itemsize = PyArray_ITEMSIZE(array);
            uintptr_t past = (uintptr_t)PyArray_DATA(array) % ALIGNMENT;
            if (itemsize <= 0 || past % (uintptr_t)itemsize) {
                result = Py_None;
                goto done;
            }
            offset = (Py_ssize_t)(past / (uintptr_t)itemsize);
            if (offset) {
                npy_intp length = PyArray_SIZE(array) + offset;
                PyArray_Descr *descr = PyArray_DESCR(array);
                Py_INCREF(descr);
                PyObject *view = PyArray_NewFromDescr(
                    &PyArray_Type, descr, 1, &length, NULL,
                    (char *)PyArray_DATA(array) - past, NPY_ARRAY_C_CONTIGUOUS |
                    NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE, NULL);
                if (view == NULL) {
                    goto done;
                }
                Py_INCREF(item);
                if (PyArray_SetBaseObject((PyArrayObject *)view, item) < 0) {
                    Py_DECREF(view);
                    goto done;
                }
                PyList_SET_ITEM(views, i, view);
                any = 1;
            }
        }
        if (!offset) {
            Py_INCREF(item);
            PyList_SET_ITEM(views, i, item);
        }
        PyObject *number = PyLong_FromSsize_t(offset);
        if (number == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(offsets, i, number);
    }
    result = any ? PyTuple_Pack(2, offsets, views) : Py_None;
done:
    if (result == Py_None) {
        PyErr_Clear();
        Py_INCREF(Py_None);
    }
    Py_XDECREF(offsets);
    Py_XDECREF(views);
    Py_DECREF(items);
    Py_DECREF(large);
    return result;
}

/* The router (3. above): a method object, called with the instance first. */
typedef struct {
    PyObject_HEAD
    PyObject *dispatch;
    PyObject *python_call;
    PyObject *guards_name;
    Py_ssize_t from_bytes;
    vectorcallfunc vectorcall;
} Router;

/* Whether one guard (container, name, attribute names, expected) holds: the value of `name`
 * in a dict (a function's globals) or the contents of a cell (a closure variable), then its
 * attributes in turn, is `expected` itself. -1 with a Python error only for a bad guard. */
static int
guard_holds(PyObject *guard)
{
    if (!PyTuple_Check(guard) || PyTuple_GET_SIZE(guard) != 4 ||
            !PyTuple_Check(PyTuple_GET_ITEM(guard, 2))) {
        PyErr_SetString(PyExc_TypeError, "a router guard is (container, name, attributes, "
                                         "expected)");
        return -1;
    }
    PyObject *container = PyTuple_GET_ITEM(guard, 0), *name = PyTuple_GET_ITEM(guard, 1);
    PyObject *attributes = PyTuple_GET_ITEM(guard, 2);
    PyObject *value;
    if (PyDict_Check(container)) {
        value = PyDict_GetItemWithError(container, name);       /* borrowed */
        if (value == NULL) {
            PyErr_Clear();
            return 0;
        }
    } else if (PyCell_Check(container)) {
        value = PyCell_GET(container);                          /* borrowed */
        if (value == NULL) {
            return 0;
        }
    } else {
        PyErr_SetString(PyExc_TypeError, "a router guard reads a dict or a cell");
        return -1;
    }
    Py_INCREF(value);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(attributes); i++) {
        PyObject *next = PyObject_GetAttr(value, PyTuple_GET_ITEM(attributes, i));
        Py_DECREF(value);
        if (next == NULL) {
            PyErr_Clear();
            return 0;
        }
        value = next;
    }
    int holds = value == PyTuple_GET_ITEM(guard, 3);
    Py_DECREF(value);
    return holds;
}

/* Whether the dispatcher may take a call: the instance's guards all hold (what its hits read
 * beyond the arguments), every argument is of the type the dispatcher's key takes it for and
 * the CPU client reads every argument in place. -1 on error. */
static int
dispatchable_call(Router *router, PyObject *const *args, Py_ssize_t count)
{
    for (Py_ssize_t i = 1; i < count; i++) {
        if (!plain_argument(args[i]) || !read_in_place(args[i], router->from_bytes)) {
            return 0;
        }
    }
    PyObject *guards = PyObject_GetAttr(args[0], router->guards_name);
    if (guards == NULL) {
        PyErr_Clear();
        return 1;
    }
    int holds = 1;
    if (PyTuple_Check(guards)) {
        for (Py_ssize_t i = 0; holds == 1 && i < PyTuple_GET_SIZE(guards); i++) {
            holds = guard_holds(PyTuple_GET_ITEM(guards, i));
        }
    }
    Py_DECREF(guards);
    return holds;
}

static PyObject *
route(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Router *router = (Router *)self;
    Py_ssize_t count = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    int dispatched = count > 0 ? dispatchable_call(router, args, count) : 1;
    if (dispatched < 0) {
        return NULL;
    }
    return PyObject_Vectorcall(dispatched ? router->dispatch : router->python_call, args,
                               nargsf, kwnames);
}

static PyObject *
router_get(PyObject *self, PyObject *instance, PyObject *owner)
{
    if (instance == NULL || instance == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, instance);
}

static int
router_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((Router *)self)->dispatch);
    Py_VISIT(((Router *)self)->python_call);
    Py_VISIT(((Router *)self)->guards_name);
    return 0;
}

static int
router_clear(PyObject *self)
{
    Py_CLEAR(((Router *)self)->dispatch);
    Py_CLEAR(((Router *)self)->python_call);
    Py_CLEAR(((Router *)self)->guards_name);
    return 0;
}

static void
router_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    router_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject RouterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "psc_jit.core.compile._host_memory.Router",
    .tp_basicsize = sizeof(Router),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "Routes a method call to the C++ dispatcher or to the Python path (see router).",
    .tp_vectorcall_offset = offsetof(Router, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = router_get,
    .tp_traverse = router_traverse,
    .tp_clear = router_clear,
    .tp_dealloc = router_dealloc,
};

static PyObject *
router(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t from_bytes;
    if (nargs != 4 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1]) ||
            (from_bytes = PyLong_AsSsize_t(args[2])) == -1 || !PyUnicode_Check(args[3])) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError,
                            "router(dispatch, python_call, from_bytes, guards_name)");
        }
        return NULL;
    }
    Router *self = PyObject_GC_New(Router, &RouterType);
    if (self == NULL) {
        return NULL;
    }
    self->dispatch = Py_NewRef(args[0]);
    self->python_call = Py_NewRef(args[1]);
    self->guards_name = Py_NewRef(args[3]);
    self->from_bytes = from_bytes;
    self->vectorcall = route;
    PyObject_GC_Track((PyObject *)self);
    return (PyObject *)self;
}

static PyMethodDef methods[] = {
    {"large_ones_aligned", (PyCFunction)(void (*)(void))large_ones_aligned, METH_FASTCALL,
     "large_ones_aligned(arrays, from_bytes): whether each ndarray of at least from_bytes "
     "is C-contiguous and 64-byte aligned."},
    {"router", (PyCFunction)(void (*)(void))router, METH_FASTCALL,
     "router(dispatch, python_call, from_bytes, guards_name): a method that calls python_call "
     "when an ndarray argument of at least from_bytes is not C-contiguous and 64-byte "
     "aligned, or a guard of the instance's attribute guards_name fails, else dispatch."},
    {"writable_array", (PyCFunction)(void (*)(void))writable_array, METH_FASTCALL,
     "writable_array(owner, address, dtype, shape): the memory at address as a writable "
     "C-contiguous array, owner its base."},
    {"from_boundaries", (PyCFunction)(void (*)(void))from_boundaries, METH_FASTCALL,
     "from_boundaries(arrays, large): (offsets, arrays) with each large array off the 64-byte "
     "boundary read from the boundary before it, or None."},
    {"install", install, METH_NOARGS,
     "Make this context's NumPy allocations 64-byte aligned; returns the handler it replaced."},
    {"restore", restore, METH_O, "Put back a handler that `install` returned."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_host_memory",
    "XLA's result buffers as writable arrays; NumPy data allocations aligned to 64 bytes.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__host_memory(void)
{
    import_array();
    if (PyType_Ready(&RouterType) < 0) {
        return NULL;
    }
    return PyModule_Create(&module_def);
}
