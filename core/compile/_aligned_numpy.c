/* NumPy's data allocations, 64-byte aligned: a NumPy memory handler (NEP 49) whose blocks
 * start on a 64-byte boundary, the alignment XLA's CPU client needs to read an input in
 * place (NumPy's own blocks are usually 16-byte aligned, so jaxlib copies them on every
 * compiled call). Installed by `hostmemory.align_new_arrays`; NumPy keeps the handler of
 * each array with it, so arrays made before or after are freed by their own handler.
 *
 * Each block is a malloc'd block ALIGNMENT bytes longer than asked for; the data starts at
 * the first boundary after its first byte, and the byte before the data holds how far in it
 * starts (1 to ALIGNMENT). calloc's blocks stay lazily zeroed (one byte is written). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
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

static PyMethodDef methods[] = {
    {"install", install, METH_NOARGS,
     "Make this context's NumPy allocations 64-byte aligned; returns the handler it replaced."},
    {"restore", restore, METH_O, "Put back a handler that `install` returned."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_aligned_numpy",
    "NumPy data allocations aligned to 64 bytes (a NEP 49 memory handler).", -1, methods,
};

PyMODINIT_FUNC
PyInit__aligned_numpy(void)
{
    import_array();
    return PyModule_Create(&module_def);
}
