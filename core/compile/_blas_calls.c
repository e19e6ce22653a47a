/* Matrix products for XLA programs, computed by the BLAS NumPy itself calls (its bundled
 * OpenBLAS): XLA:CPU's own kernels run them at a fraction of OpenBLAS's speed (measured,
 * float64: M @ v of 1500 x 1500 4x slower; 1200 x 60 @ 60 x 60 1.7x, 64 x 64 @ 64 x 64 2x).
 * NumPy's own library, not another one: two OpenBLAS thread pools in one process spin against
 * each other (measured: NumPy's M @ v 40x slower while SciPy's pool was warm).
 *
 * Each product is an XLA FFI custom call (typed FFI) of row-major operands:
 * - psc_gemv_n / _t: a matrix A (m x n) and a vector x; A @ x (m) or A.T @ x (n).
 * - psc_gemm_nn / _nt / _tn / _tt: stacks of matrices a (b x m x k, or b x k x m when the
 *   first letter is t: each matrix is transposed) and c (b x k x n, or b x n x k for t);
 *   the b products op(a[i]) @ op(c[i]), b x m x n.
 * - psc_window_gemv_n / _t: A, x and four int64 bounds; the product over a window of A
 *   (window_matvec, core/primitives/window_products.py), zero outside it.
 * The BLAS functions (Fortran interface, 32- or 64-bit integers) come from Python at
 * registration (`set_blas`, core/compile/blas.py); the handlers are handed to XLA as capsules
 * (`targets`), registered by core/compile/xla.py. Built only where jaxlib's FFI header is
 * found (setup.py); optional like the other C module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "_ffi_handler.h"

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

/* Fortran gemm, by the width of BLAS's integers */
typedef void gemm32_double(const char *, const char *, const int32_t *, const int32_t *,
                           const int32_t *, const double *, const double *, const int32_t *,
                           const double *, const int32_t *, const double *, double *,
                           const int32_t *);
typedef void gemm32_float(const char *, const char *, const int32_t *, const int32_t *,
                          const int32_t *, const float *, const float *, const int32_t *,
                          const float *, const int32_t *, const float *, float *,
                          const int32_t *);
typedef void gemm64_double(const char *, const char *, const int64_t *, const int64_t *,
                           const int64_t *, const double *, const double *, const int64_t *,
                           const double *, const int64_t *, const double *, double *,
                           const int64_t *);
typedef void gemm64_float(const char *, const char *, const int64_t *, const int64_t *,
                          const int64_t *, const float *, const float *, const int64_t *,
                          const float *, const int64_t *, const float *, float *,
                          const int64_t *);

static void *dgemv = NULL;
static void *sgemv = NULL;
static void *dgemm = NULL;
static void *sgemm = NULL;
static int wide_integers = 0;

/* One BLAS gemv, y = op(A) @ x, in BLAS's own (column-major) terms: A is rows x cols with
 * leading dimension lda, op transposes it when trans is "T"; x and y have unit strides. */
static void
gemv_one(int is_double, const char *trans, int64_t rows, int64_t cols, const void *a,
         int64_t lda, const void *x, void *y)
{
    int64_t one = 1;
    double d_alpha = 1.0, d_beta = 0.0;
    float s_alpha = 1.0f, s_beta = 0.0f;
    if (wide_integers && is_double) {
        ((gemv64_double *)dgemv)(trans, &rows, &cols, &d_alpha, a, &lda, x, &one, &d_beta, y,
                                 &one);
    } else if (wide_integers) {
        ((gemv64_float *)sgemv)(trans, &rows, &cols, &s_alpha, a, &lda, x, &one, &s_beta, y,
                                &one);
    } else {
        int32_t rows32 = (int32_t)rows, cols32 = (int32_t)cols, one32 = 1;
        int32_t lda32 = (int32_t)lda;
        if (is_double) {
            ((gemv32_double *)dgemv)(trans, &rows32, &cols32, &d_alpha, a, &lda32, x, &one32,
                                     &d_beta, y, &one32);
        } else {
            ((gemv32_float *)sgemv)(trans, &rows32, &cols32, &s_alpha, a, &lda32, x, &one32,
                                    &s_beta, y, &one32);
        }
    }
}

/* y = A @ x (transposed = 0) or A.T @ x (1), A row-major m x n: in BLAS's column-major
 * terms A is an n x m matrix with leading dimension n, and A @ x is its transpose times x. */
static XLA_FFI_Error *
gemv(XLA_FFI_CallFrame *frame, int transposed)
{
    if (!runs(frame)) {
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
    int64_t m = a->dims[0], n = a->dims[1], lda = n > 1 ? n : 1;
    if (x->dims[0] != (transposed ? m : n) || y->dims[0] != (transposed ? n : m)) {
        return failure(frame, "psc_gemv: the vector's length is not the matrix's");
    }
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
    gemv_one(is_double, trans, n, m, a->data, lda, x->data, y->data);
    return NULL;
}

/* A bound of a window: the int64 scalar of buffer b, clipped to [0, n]. */
static int64_t
bound(XLA_FFI_Buffer *b, int64_t n)
{
    int64_t value = *(const int64_t *)b->data;
    return value < 0 ? 0 : value > n ? n : value;
}

/* y = A[out_lo:out_hi, k_lo:k_hi] @ x[k_lo:k_hi] in y[out_lo:out_hi] (transposed = 0), or
 * A[k_lo:k_hi, out_lo:out_hi].T @ x[k_lo:k_hi] (1); zero elsewhere in y. The bounds are int64
 * scalars, clipped to A. The window is a row-major sub-matrix of A with A's leading
 * dimension: BLAS reads it in place, the call NumPy makes on that slice of A. */
static XLA_FFI_Error *
window_gemv(XLA_FFI_CallFrame *frame, int transposed)
{
    if (!runs(frame)) {
        return NULL;
    }
    if (frame->args.size != 6 || frame->rets.size != 1) {
        return failure(frame, "psc_window_gemv takes a matrix, a vector and four bounds and "
                              "gives a vector");
    }
    XLA_FFI_Buffer *a = frame->args.args[0], *x = frame->args.args[1];
    XLA_FFI_Buffer *y = frame->rets.rets[0];
    if (a->rank != 2 || x->rank != 1 || y->rank != 1 || a->dtype != x->dtype ||
            a->dtype != y->dtype) {
        return failure(frame, "psc_window_gemv: operands of the wrong rank or dtype");
    }
    for (int i = 2; i < 6; i++) {
        XLA_FFI_Buffer *b = frame->args.args[i];
        if (b->rank != 0 || b->dtype != XLA_FFI_DataType_S64) {
            return failure(frame, "psc_window_gemv: the bounds are int64 scalars");
        }
    }
    int is_double = a->dtype == XLA_FFI_DataType_F64;
    if (!is_double && a->dtype != XLA_FFI_DataType_F32) {
        return failure(frame, "psc_window_gemv: float32 or float64 only");
    }
    int64_t rows = a->dims[0], cols = a->dims[1];
    int64_t out_n = transposed ? cols : rows, k_n = transposed ? rows : cols;
    if (x->dims[0] != k_n || y->dims[0] != out_n) {
        return failure(frame, "psc_window_gemv: the vector's length is not the matrix's");
    }
    if (!wide_integers && (rows > INT32_MAX || cols > INT32_MAX)) {
        return failure(frame, "psc_window_gemv: the matrix is too large for 32-bit BLAS");
    }
    size_t item = is_double ? 8 : 4;
    memset(y->data, 0, (size_t)out_n * item);
    int64_t out_lo = bound(frame->args.args[2], out_n), out_hi = bound(frame->args.args[3], out_n);
    int64_t k_lo = bound(frame->args.args[4], k_n), k_hi = bound(frame->args.args[5], k_n);
    if (out_hi <= out_lo || k_hi <= k_lo) {
        return NULL;
    }
    /* the window's first element, and its extent: m rows by n columns, row-major */
    int64_t first = transposed ? k_lo * cols + out_lo : out_lo * cols + k_lo;
    int64_t m = transposed ? k_hi - k_lo : out_hi - out_lo;
    int64_t n = transposed ? out_hi - out_lo : k_hi - k_lo;
    gemv_one(is_double, transposed ? "N" : "T", n, m, (const char *)a->data + first * item,
             cols > 1 ? cols : 1, (const char *)x->data + k_lo * item,
             (char *)y->data + out_lo * item);
    return NULL;
}

/* the handlers of both matrix-vector products, each way round */
#define GEMV_HANDLER(name, kernel, transposed)                                                 \
    static XLA_FFI_Error *name(XLA_FFI_CallFrame *frame) { return kernel(frame, transposed); }
GEMV_HANDLER(gemv_n, gemv, 0)
GEMV_HANDLER(gemv_t, gemv, 1)
GEMV_HANDLER(window_gemv_n, window_gemv, 0)
GEMV_HANDLER(window_gemv_t, window_gemv, 1)

/* One BLAS gemm in row-major terms: C (m x n, leading dimension n) = op(A) @ op(B), op
 * transposing a matrix whose flag is set (A is then stored k x m, B n x k). Column-major BLAS
 * sees each row-major matrix as its transpose, so it computes C.T = op(B).T @ op(A).T: the
 * operands swap, and each keeps its flag. */
static void
gemm_one(int is_double, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
         const void *a, const void *b, void *c)
{
    const char *ta = trans_a ? "T" : "N", *tb = trans_b ? "T" : "N";
    int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n;
    lda = lda > 1 ? lda : 1;
    ldb = ldb > 1 ? ldb : 1;
    ldc = ldc > 1 ? ldc : 1;
    double d_alpha = 1.0, d_beta = 0.0;
    float s_alpha = 1.0f, s_beta = 0.0f;
    if (wide_integers && is_double) {
        ((gemm64_double *)dgemm)(tb, ta, &n, &m, &k, &d_alpha, b, &ldb, a, &lda, &d_beta, c,
                                 &ldc);
    } else if (wide_integers) {
        ((gemm64_float *)sgemm)(tb, ta, &n, &m, &k, &s_alpha, b, &ldb, a, &lda, &s_beta, c,
                                &ldc);
    } else {
        int32_t m32 = (int32_t)m, n32 = (int32_t)n, k32 = (int32_t)k;
        int32_t lda32 = (int32_t)lda, ldb32 = (int32_t)ldb, ldc32 = (int32_t)ldc;
        if (is_double) {
            ((gemm32_double *)dgemm)(tb, ta, &n32, &m32, &k32, &d_alpha, b, &ldb32, a, &lda32,
                                     &d_beta, c, &ldc32);
        } else {
            ((gemm32_float *)sgemm)(tb, ta, &n32, &m32, &k32, &s_alpha, b, &ldb32, a, &lda32,
                                    &s_beta, c, &ldc32);
        }
    }
}

/* c[i] = op(a[i]) @ op(b[i]) for each matrix of the stacks (see the header). */
static XLA_FFI_Error *
gemm(XLA_FFI_CallFrame *frame, int trans_a, int trans_b)
{
    if (!runs(frame)) {
        return NULL;
    }
    if (frame->args.size != 2 || frame->rets.size != 1) {
        return failure(frame, "psc_gemm takes two stacks of matrices and gives one");
    }
    XLA_FFI_Buffer *a = frame->args.args[0], *b = frame->args.args[1];
    XLA_FFI_Buffer *c = frame->rets.rets[0];
    if (a->rank != 3 || b->rank != 3 || c->rank != 3 || a->dtype != b->dtype ||
            a->dtype != c->dtype) {
        return failure(frame, "psc_gemm: operands of the wrong rank or dtype");
    }
    int is_double = a->dtype == XLA_FFI_DataType_F64;
    if (!is_double && a->dtype != XLA_FFI_DataType_F32) {
        return failure(frame, "psc_gemm: float32 or float64 only");
    }
    int64_t count = a->dims[0];
    int64_t m = trans_a ? a->dims[2] : a->dims[1], k = trans_a ? a->dims[1] : a->dims[2];
    int64_t n = trans_b ? b->dims[1] : b->dims[2];
    int64_t k_b = trans_b ? b->dims[2] : b->dims[1];
    if (b->dims[0] != count || c->dims[0] != count || k_b != k || c->dims[1] != m ||
            c->dims[2] != n) {
        return failure(frame, "psc_gemm: the operands' shapes do not match");
    }
    if (!wide_integers && (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)) {
        return failure(frame, "psc_gemm: a matrix is too large for 32-bit BLAS");
    }
    size_t item = is_double ? 8 : 4;
    if (m == 0 || n == 0 || count == 0) {
        return NULL;
    }
    if (k == 0) {
        memset(c->data, 0, (size_t)(count * m * n) * item);
        return NULL;
    }
    for (int64_t i = 0; i < count; i++) {
        gemm_one(is_double, trans_a, trans_b, m, n, k, (const char *)a->data + i * m * k * item,
                 (const char *)b->data + i * k * n * item, (char *)c->data + i * m * n * item);
    }
    return NULL;
}

/* the four handlers, one per pair of transpose flags */
#define GEMM_HANDLER(name, trans_a, trans_b)                                                   \
    static XLA_FFI_Error *name(XLA_FFI_CallFrame *frame) { return gemm(frame, trans_a, trans_b); }
GEMM_HANDLER(gemm_nn, 0, 0)
GEMM_HANDLER(gemm_nt, 0, 1)
GEMM_HANDLER(gemm_tn, 1, 0)
GEMM_HANDLER(gemm_tt, 1, 1)

static PyObject *
set_blas(PyObject *module, PyObject *args)
{
    unsigned long long dv, sv, dm, sm;
    int wide;
    if (!PyArg_ParseTuple(args, "KKKKp", &dv, &sv, &dm, &sm, &wide)) {
        return NULL;
    }
    dgemv = (void *)(uintptr_t)dv;
    sgemv = (void *)(uintptr_t)sv;
    dgemm = (void *)(uintptr_t)dm;
    sgemm = (void *)(uintptr_t)sm;
    wide_integers = wide;
    Py_RETURN_NONE;
}

static PyObject *
targets(PyObject *module, PyObject *unused)
{
    /* {name: capsule of the handler}, for xla_client.register_custom_call_target */
    if (dgemv == NULL || sgemv == NULL || dgemm == NULL || sgemm == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_blas first");
        return NULL;
    }
    static const struct { const char *name; XLA_FFI_Error *(*handler)(XLA_FFI_CallFrame *); }
    handlers[] = {{"psc_gemv_n", gemv_n}, {"psc_gemv_t", gemv_t}, {"psc_gemm_nn", gemm_nn},
                  {"psc_gemm_nt", gemm_nt}, {"psc_gemm_tn", gemm_tn}, {"psc_gemm_tt", gemm_tt},
                  {"psc_window_gemv_n", window_gemv_n}, {"psc_window_gemv_t", window_gemv_t}};
    PyObject *result = PyDict_New();
    for (size_t i = 0; result != NULL && i < sizeof(handlers) / sizeof(handlers[0]); i++) {
        PyObject *capsule = PyCapsule_New((void *)handlers[i].handler,
                                          "xla._CUSTOM_CALL_TARGET", NULL);
        if (capsule == NULL || PyDict_SetItemString(result, handlers[i].name, capsule) < 0) {
            Py_CLEAR(result);
        }
        Py_XDECREF(capsule);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"set_blas", set_blas, METH_VARARGS,
     "set_blas(dgemv, sgemv, dgemm, sgemm, wide): the Fortran BLAS functions (addresses) "
     "the products call; wide: their integers are 64-bit."},
    {"targets", targets, METH_NOARGS, "{custom call target name: handler capsule}."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_blas_calls",
    "Matrix products of XLA programs computed by BLAS (XLA FFI custom calls).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__blas_calls(void)
{
    return PyModule_Create(&module_def);
}
