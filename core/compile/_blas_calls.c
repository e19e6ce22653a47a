/* Matrix-vector products for XLA programs, computed by the BLAS NumPy itself calls (its
 * bundled OpenBLAS): XLA:CPU's own matrix-vector kernel runs on one thread at a fraction of
 * OpenBLAS's speed (M @ v of 1500 x 1500 float64: 4x slower). NumPy's own library, not another
 * one: two OpenBLAS thread pools in one process spin against each other (measured: NumPy's
 * M @ v 40x slower while SciPy's pool was warm).
 *
 * Each product is an XLA FFI custom call (`stablehlo.custom_call @psc_gemv_n / _t`, typed
 * FFI): its operands are a row-major matrix A (m x n) and a vector x; psc_gemv_n gives
 * A @ x (m), psc_gemv_t gives A.T @ x (n). The BLAS functions (Fortran interface, 32- or
 * 64-bit integers) come from Python at registration (`set_blas`, core/compile/blas.py); the handlers
 * are handed to XLA as capsules (`targets`), registered by core/compile/xla.py. Built only
 * where jaxlib's FFI header is found (setup.py); optional like the other C module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "xla/ffi/api/c_api.h"

/* Fortran gemv, by the width of BLAS's integers */
typedef void gemv32_double(const char *, const int32_t *, const int32_t *, const double *,
                           const double *, const int32_t *, const double *, const int32_t *,
                           const double *, double *, const int32_t *);
typedef void gemv32_float(const char *, const int32_t *, const int32_t *, const float *,
                          const float *, const int32_t *, const float *, const int32_t *,
                          const float *, float *, const int32_t *);
typedef void gemv64_double(const char *, const int64_t *, const int64_t *, const double *,
                           const double *, const int64_t *, const double *, const int64_t *,
                           const double *, double *, const int64_t *);
typedef void gemv64_float(const char *, const int64_t *, const int64_t *, const float *,
                          const float *, const int64_t *, const float *, const int64_t *,
                          const float *, float *, const int64_t *);

static void *dgemv = NULL;
static void *sgemv = NULL;
static int wide_integers = 0;

static XLA_FFI_Error *
failure(const XLA_FFI_CallFrame *frame, const char *message)
{
    XLA_FFI_Error_Create_Args args;
    memset(&args, 0, sizeof(args));
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.message = message;
    args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return frame->api->XLA_FFI_Error_Create(&args);
}

/* XLA asks a handler, when it is registered, which FFI version it was built for. */
static int
answered_metadata(XLA_FFI_CallFrame *frame)
{
    XLA_FFI_Extension_Base *extension = frame->extension_start;
    if (extension == NULL || extension->type != XLA_FFI_Extension_Metadata) {
        return 0;
    }
    XLA_FFI_Metadata *metadata = ((XLA_FFI_Metadata_Extension *)extension)->metadata;
    metadata->api_version.major_version = XLA_FFI_API_MAJOR;
    metadata->api_version.minor_version = XLA_FFI_API_MINOR;
    metadata->traits = 0;
    return 1;
}

/* y = A @ x (transposed = 0) or A.T @ x (1), A row-major m x n: in BLAS's column-major
 * terms A is an n x m matrix with leading dimension n, and A @ x is its transpose times x. */
static XLA_FFI_Error *
gemv(XLA_FFI_CallFrame *frame, int transposed)
{
    if (answered_metadata(frame) || frame->stage != XLA_FFI_ExecutionStage_EXECUTE) {
        return NULL;
    }
    if (frame->args.size != 2 || frame->rets.size != 1) {
        return failure(frame, "psc_gemv takes a matrix and a vector and gives a vector");
    }
    XLA_FFI_Buffer *a = frame->args.args[0], *x = frame->args.args[1];
    XLA_FFI_Buffer *y = frame->rets.rets[0];
    if (a->rank != 2 || x->rank != 1 || y->rank != 1 || a->dtype != x->dtype ||
            a->dtype != y->dtype) {
        return failure(frame, "psc_gemv: operands of the wrong rank or dtype");
    }
    int64_t m = a->dims[0], n = a->dims[1], one = 1, lda = n > 1 ? n : 1;
    if (!wide_integers && (m > INT32_MAX || n > INT32_MAX)) {
        return failure(frame, "psc_gemv: the matrix is too large for 32-bit BLAS");
    }
    const char *trans = transposed ? "N" : "T";
    int is_double = a->dtype == XLA_FFI_DataType_F64;
    if (!is_double && a->dtype != XLA_FFI_DataType_F32) {
        return failure(frame, "psc_gemv: float32 or float64 only");
    }
    if (m == 0 || n == 0) {
        memset(y->data, 0, (size_t)(transposed ? n : m) * (is_double ? 8 : 4));
        return NULL;
    }
    double d_alpha = 1.0, d_beta = 0.0;
    float s_alpha = 1.0f, s_beta = 0.0f;
    if (wide_integers && is_double) {
        ((gemv64_double *)dgemv)(trans, &n, &m, &d_alpha, a->data, &lda, x->data, &one,
                                 &d_beta, y->data, &one);
    } else if (wide_integers) {
        ((gemv64_float *)sgemv)(trans, &n, &m, &s_alpha, a->data, &lda, x->data, &one,
                                &s_beta, y->data, &one);
    } else {
        int32_t m32 = (int32_t)m, n32 = (int32_t)n, one32 = 1, lda32 = (int32_t)lda;
        if (is_double) {
            ((gemv32_double *)dgemv)(trans, &n32, &m32, &d_alpha, a->data, &lda32, x->data,
                                     &one32, &d_beta, y->data, &one32);
        } else {
            ((gemv32_float *)sgemv)(trans, &n32, &m32, &s_alpha, a->data, &lda32, x->data,
                                    &one32, &s_beta, y->data, &one32);
        }
    }
    return NULL;
}

static XLA_FFI_Error *
gemv_n(XLA_FFI_CallFrame *frame)
{
    return gemv(frame, 0);
}

static XLA_FFI_Error *
gemv_t(XLA_FFI_CallFrame *frame)
{
    return gemv(frame, 1);
}

static PyObject *
set_blas(PyObject *module, PyObject *args)
{
    unsigned long long d, s;
    int wide;
    if (!PyArg_ParseTuple(args, "KKp", &d, &s, &wide)) {
        return NULL;
    }
    dgemv = (void *)(uintptr_t)d;
    sgemv = (void *)(uintptr_t)s;
    wide_integers = wide;
    Py_RETURN_NONE;
}

static PyObject *
targets(PyObject *module, PyObject *unused)
{
    /* {name: capsule of the handler}, for xla_client.register_custom_call_target */
    if (dgemv == NULL || sgemv == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_blas first");
        return NULL;
    }
    PyObject *n = PyCapsule_New((void *)gemv_n, "xla._CUSTOM_CALL_TARGET", NULL);
    PyObject *t = PyCapsule_New((void *)gemv_t, "xla._CUSTOM_CALL_TARGET", NULL);
    PyObject *result = (n && t) ? Py_BuildValue("{sOsO}", "psc_gemv_n", n, "psc_gemv_t", t)
                                : NULL;
    Py_XDECREF(n);
    Py_XDECREF(t);
    return result;
}

static PyMethodDef methods[] = {
    {"set_blas", set_blas, METH_VARARGS,
     "set_blas(dgemv, sgemv, wide): the Fortran BLAS functions (addresses) the products "
     "call; wide: their integers are 64-bit."},
    {"targets", targets, METH_NOARGS, "{custom call target name: handler capsule}."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_blas_calls",
    "Matrix-vector products of XLA programs computed by BLAS (XLA FFI custom calls).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__blas_calls(void)
{
    return PyModule_Create(&module_def);
}
