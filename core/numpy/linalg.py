"""np.linalg's factorizations and solvers on tracers: cholesky, qr, eigh, eigvalsh, svd,
svdvals, solve, inv, det, slogdet, lstsq, pinv, matrix_power, tensorsolve, tensorinv.

NumPy's rules, kept here: every operand is computed in float64 (complex128 if any is complex;
NumPy does so even for float32 operands) and the results are cast to the operands' common type
(float32 stays float32, integers become float64, float16 is NumPy's TypeError); stacks of
matrices broadcast their leading axes; the results are NumPy's named tuples. NumPy's
LinAlgError for a singular matrix (solve, inv), a matrix that is not positive definite
(cholesky) or a failed convergence (eigh, svd) is raised by the run (a run-time check,
before anything is written back). Empty operands give NumPy's own (constant) result.
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives import (cholesky_p, eigh_p, geqrf_p, householder_apply_p,
                          householder_product_p, lu_p, pad_p, svd_p, triangular_solve_p)
from ..tracing import DataDependentShapeError, Tracer, bind, caller_source, current_trace, source_line
from ..tree_util import flatten, unflatten
from .base import (as_array, as_kind, broadcast_to, convert, ensure_tracer, implements,
                   kind_of_result, refusing, reshape, transpose, unsupported)
from .matrices import diagonal_last, np_triu
from .products import matmul
from .reductions import np_all, np_any, np_max, np_prod, np_sum
from .sorting import _along_axis, np_argsort
from .ufuncs import call_ufunc, np_where

LinAlgError = np.linalg.LinAlgError
_TINY = np.eye(1)
SlogdetResult = type(np.linalg.slogdet(_TINY))
EighResult = type(np.linalg.eigh(_TINY))
SVDResult = type(np.linalg.svd(_TINY))
QRResult = type(np.linalg.qr(_TINY))


# -- NumPy's operand rules --------------------------------------------------------------------

def common_type(*arrays) -> tuple[np.dtype, np.dtype]:
    """(the dtype NumPy computes in, the dtype of its results): np.linalg's `_commonType`."""
    result, is_complex = np.dtype(np.float32), False
    for a in arrays:
        dtype = a.dtype
        if dtype.kind in "fc":
            is_complex = is_complex or dtype.kind == "c"
            real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
            if real == np.float64:
                result = np.dtype(np.float64)
            elif real != np.float32:
                raise TypeError(f"array type {dtype.name} is unsupported in linalg")
        else:
            result = np.dtype(np.float64)
    if is_complex:
        return np.dtype(np.complex128), np.result_type(result, np.complex64)
    return np.dtype(np.float64), result


def real_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype


def assert_stacked_2d(*arrays) -> None:
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")


def assert_stacked_square(*arrays) -> None:
    for a in arrays:
        if a.shape[-1] != a.shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def matrix_transpose(x: Tracer) -> Tracer:
    return transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def conj_transpose(x: Tracer) -> Tracer:
    x = matrix_transpose(x)
    return call_ufunc(np.conjugate, x) if x.dtype.kind == "c" else x


def cast(x: Tracer, dtype) -> Tracer:
    return as_kind(convert(x, dtype), kind_of_result(x.ndim))


def numpy_constant(fn, *arrays, **kwargs):
    """fn on arrays that have no elements: NumPy's own result, a constant (every result leaf
    entered as a tracer, the structure kept: named tuples stay named tuples)."""
    stand_ins = [np.zeros(a.shape, a.dtype) for a in arrays]
    leaves, structure = flatten(fn(*stand_ins, **kwargs))
    return unflatten(structure, [ensure_tracer(leaf) if isinstance(leaf, (np.ndarray, np.generic))
                                 else leaf for leaf in leaves])


def require(ok: Tracer, message: str, error: type = LinAlgError) -> None:
    """Ask the run to raise error(message) where ok is false (see `tracing.RuntimeCheck`)."""
    current_trace().require(np_all(ok), ensure_tracer(np.int64(0)), message, error)


def _no_nan(x: Tracer) -> Tracer:
    return call_ufunc(np.logical_not, call_ufunc(np.isnan, x))


# -- cholesky ---------------------------------------------------------------------------------

def _square_stack(a):
    """a as a stack of square matrices (NumPy's LinAlgError otherwise), with the type the
    factorization computes in and the type NumPy returns."""
    a = as_array(a)
    assert_stacked_2d(a)
    assert_stacked_square(a)
    t, result_t = common_type(a)
    return a, t, result_t


@implements(np.linalg.cholesky)
def linalg_cholesky(a, /, *, upper=False):
    a, t, result_t = _square_stack(a)
    if a.size == 0:
        return numpy_constant(np.linalg.cholesky, a, upper=upper)
    a = convert(a, t)
    # upper: U with a = U^H U from a's upper triangle, which is the lower one of a^H
    lower = bind(cholesky_p, conj_transpose(a) if upper else a)
    require(_no_nan(diagonal_last(lower, lower.ndim - 2, lower.ndim - 1)),
            "Matrix is not positive definite")
    return cast(conj_transpose(lower) if upper else lower, result_t)


# -- LU: solve, inv, det, slogdet -------------------------------------------------------------

def lu_factor(a: Tracer):
    """(packed L\\U, 0-based pivots, permutation) of a (in its compute dtype)."""
    return bind(lu_p, a)


def _diagonal(x: Tracer) -> Tracer:
    return diagonal_last(x, x.ndim - 2, x.ndim - 1)


def require_nonsingular(lu: Tracer) -> None:
    """NumPy's gesv raises on an exactly zero pivot (LAPACK's info > 0)."""
    require(call_ufunc(np.not_equal, _diagonal(lu), 0), "Singular matrix")


def lu_solve(lu: Tracer, perm: Tracer, b: Tracer) -> Tracer:
    """x with a x = b from a's LU (lu, perm: a[perm] = L U), b (..., m, k) of lu's batch."""
    rows = reshape(perm, perm.shape + (1,))
    permuted = _along_axis(b, rows, b.ndim - 2)
    y = bind(triangular_solve_p, lu, permuted, left_side=True, lower=True,
             transpose_a="NO_TRANSPOSE", unit_diagonal=True)
    return bind(triangular_solve_p, lu, y, left_side=True, lower=False,
                transpose_a="NO_TRANSPOSE", unit_diagonal=False)


def _solve_shapes(a: Tracer, b: Tracer):
    """(batch shape, b as a stack of matrices, whether b was one vector): NumPy 2's rule (b is
    a vector only when it is 1-d) and its gufunc's errors."""
    vector = b.ndim == 1
    b2 = reshape(b, b.shape + (1,)) if vector else b
    m = a.shape[-1]
    if b2.shape[-2] != m:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature (m,m),(m,n)->(m,n) (size {b2.shape[-2]} is "
                         f"different from {m})")
    batch = np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    return batch, b2, vector


@implements(np.linalg.solve)
def linalg_solve(a, b):
    a, b = as_array(a), as_array(b)
    assert_stacked_2d(a)
    assert_stacked_square(a)
    t, result_t = common_type(a, b)
    batch, b2, vector = _solve_shapes(a, b)
    m, k = a.shape[-1], b2.shape[-1]
    if a.size == 0 or b2.size == 0 or not all(batch):
        x = ensure_tracer(np.zeros(batch + (m, k), result_t))
    else:
        lu, _, perm = lu_factor(convert(a, t))
        require_nonsingular(lu)
        x = lu_solve(broadcast_to(lu, batch + (m, m)), broadcast_to(perm, batch + (m,)),
                     broadcast_to(convert(b2, t), batch + (m, k)))
    x = reshape(x, x.shape[:-1]) if vector else x
    return cast(x, result_t)


@implements(np.linalg.inv)
def linalg_inv(a):
    a, t, result_t = _square_stack(a)
    if a.size == 0:
        return numpy_constant(np.linalg.inv, a)
    lu, _, perm = lu_factor(convert(a, t))
    require_nonsingular(lu)
    eye = broadcast_to(ensure_tracer(np.eye(a.shape[-1], dtype=t)), a.shape)
    return cast(lu_solve(lu, perm, eye), result_t)


def _slogdet(a: Tracer, t: np.dtype):
    """(sign, log|det|) in t and its real type, from a's LU, as NumPy's umath_linalg does."""
    lu, pivots, _ = lu_factor(convert(a, t))
    diag = _diagonal(lu)
    swaps = np_sum(call_ufunc(np.not_equal, pivots, np.arange(pivots.shape[-1], dtype=np.int32)),
                   axis=-1)
    parity_sign = call_ufunc(np.subtract, 1.0, call_ufunc(
        np.multiply, 2.0, convert(call_ufunc(np.remainder, swaps, 2), np.float64)))
    magnitude = call_ufunc(np.absolute, diag)
    logdet = np_sum(call_ufunc(np.log, magnitude), axis=-1)
    if t.kind == "c":
        phases = call_ufunc(np.divide, diag, convert(magnitude, t))
        sign = call_ufunc(np.multiply, np_prod(phases, axis=-1), convert(parity_sign, t))
    else:
        sign = call_ufunc(np.multiply, np_prod(call_ufunc(np.sign, diag), axis=-1), parity_sign)
    singular = np_any(call_ufunc(np.equal, diag, 0), axis=-1)
    sign = np_where(singular, np.zeros((), t), sign)
    logdet = np_where(singular, -np.inf, logdet)
    return sign, logdet


@implements(np.linalg.slogdet)
def linalg_slogdet(a):
    a, t, result_t = _square_stack(a)
    if a.size == 0:
        return numpy_constant(np.linalg.slogdet, a)
    sign, logdet = _slogdet(a, t)
    return SlogdetResult(cast(sign, result_t), cast(logdet, real_of(result_t)))


@implements(np.linalg.det)
def linalg_det(a):
    a, t, result_t = _square_stack(a)
    if a.size == 0:
        return numpy_constant(np.linalg.det, a)
    sign, logdet = _slogdet(a, t)
    det = call_ufunc(np.multiply, sign, convert(call_ufunc(np.exp, logdet), t))
    return cast(det, result_t)


# -- eigh, svd --------------------------------------------------------------------------------

def _uplo(UPLO) -> bool:     # noqa: N803  (NumPy's name)
    uplo = str(UPLO).upper()
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return uplo == "L"


def _require_converged(info: Tracer, what: str) -> None:
    require(call_ufunc(np.equal, info, 0), f"{what} did not converge")


@implements(np.linalg.eigh)
def linalg_eigh(a, UPLO="L"):     # noqa: N803
    lower = _uplo(UPLO)
    a, t, result_t = _square_stack(a)
    if a.size == 0:
        return numpy_constant(np.linalg.eigh, a, UPLO=UPLO)
    w, v, info = bind(eigh_p, convert(a, t), lower=lower, compute_v=True)
    _require_converged(info, "Eigenvalues")
    return EighResult(cast(w, real_of(result_t)), cast(v, result_t))


@implements(np.linalg.eigvalsh)
def linalg_eigvalsh(a, UPLO="L"):     # noqa: N803
    lower = _uplo(UPLO)
    a, t, result_t = _square_stack(a)
    if a.size == 0:
        return numpy_constant(np.linalg.eigvalsh, a, UPLO=UPLO)
    w, info = bind(eigh_p, convert(a, t), lower=lower, compute_v=False)
    _require_converged(info, "Eigenvalues")
    return cast(w, real_of(result_t))


def _hermitian_svd(a: Tracer, compute_uv: bool):
    """NumPy's svd(..., hermitian=True): from eigh, by decreasing |eigenvalue|."""
    if not compute_uv:
        s = call_ufunc(np.absolute, linalg_eigvalsh(a))
        return reverse_last(np.sort(s, axis=-1))
    w, u = linalg_eigh(a)
    signs, s = call_ufunc(np.sign, w), call_ufunc(np.absolute, w)
    order = reverse_last(np_argsort(s, axis=-1))
    signs, s = _along_axis(signs, order, s.ndim - 1), _along_axis(s, order, s.ndim - 1)
    u = _along_axis(u, reshape(order, order.shape[:-1] + (1,) + order.shape[-1:]), u.ndim - 1)
    scaled = call_ufunc(np.multiply, u, reshape(signs, signs.shape[:-1] + (1,) + signs.shape[-1:]))
    return SVDResult(u, s, conj_transpose(scaled))


def reverse_last(x: Tracer) -> Tracer:
    return x[..., ::-1]


@implements(np.linalg.svd)
def linalg_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = as_array(a)
    assert_stacked_2d(a)
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    t, result_t = common_type(a)
    if a.size == 0:
        return numpy_constant(np.linalg.svd, a, full_matrices=full_matrices,
                              compute_uv=compute_uv)
    results = bind(svd_p, convert(a, t), full_matrices=bool(full_matrices),
                   compute_uv=bool(compute_uv))
    _require_converged(results[-1], "SVD")
    s = cast(results[0], real_of(result_t))
    if not compute_uv:
        return s
    return SVDResult(cast(results[1], result_t), s, cast(results[2], result_t))


@implements(np.linalg.svdvals)
def linalg_svdvals(x, /):
    return linalg_svd(x, compute_uv=False)


# -- qr ---------------------------------------------------------------------------------------

@implements(np.linalg.qr)
def linalg_qr(a, mode="reduced"):
    a = as_array(a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise unsupported(f"np.linalg.qr(..., mode={mode!r})", "use mode='reduced' or "
                          "'complete' (NumPy has deprecated the others)")
    assert_stacked_2d(a)
    t, result_t = common_type(a)
    m, n = a.shape[-2:]
    if a.size == 0:
        return numpy_constant(np.linalg.qr, a, mode=mode)
    h, taus = bind(geqrf_p, convert(a, t))
    if mode == "raw":
        return cast(matrix_transpose(h), result_t), cast(taus, result_t)
    k = min(m, n)
    r = np_triu(h if mode == "complete" else h[..., :k, :])
    if mode == "r":
        return cast(r, result_t)
    if mode == "complete" and m > n:
        padding = [(0, 0)] * (h.ndim - 1) + [(0, m - n)]
        reflectors = bind(pad_p, h, np.zeros((), t), low=tuple(p[0] for p in padding),
                          high=tuple(p[1] for p in padding), interior=(0,) * h.ndim)
    else:
        reflectors = h[..., :, :m] if mode == "complete" else h[..., :, :k]
    q = bind(householder_product_p, reflectors, taus)
    return QRResult(cast(q, result_t), cast(r, result_t))


# -- least squares, pseudo-inverse ------------------------------------------------------------

def _require_rank(rank: Tracer, n: int, shape) -> None:
    """NumPy's residuals are empty unless the rank is full: the program's have `shape`, so a
    rank-deficient matrix makes the run fall back (the result would have another shape)."""
    source = caller_source()
    where = f"line {source.line}: '{source_line(source)}': " if source else ""
    message = (f"{where}np.linalg.lstsq: the matrix has rank {{}} < {n}, so NumPy returns no "
               f"residuals (an empty array), while the compiled program has residuals of shape "
               f"{shape}")
    current_trace().require(call_ufunc(np.equal, rank, np.int32(n)), convert(rank, np.int64),
                            message, DataDependentShapeError)


@implements(np.linalg.lstsq)
def linalg_lstsq(a, b, rcond=None):
    a, b = as_array(a), as_array(b)
    vector = b.ndim == 1
    b2 = reshape(b, b.shape + (1,)) if vector else b
    for x in (a, b2):
        if x.ndim != 2:
            raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    (m, n), (m2, k) = a.shape, b2.shape
    if m != m2:
        raise LinAlgError("Incompatible dimensions")
    t, result_t = common_type(a, b)
    real_t = real_of(result_t)
    if rcond is None:
        rcond = np.finfo(t).eps * max(n, m)
    a_t, b_t = convert(a, t), convert(b2, t)
    if a.size == 0:
        return _lstsq_empty(a, b, b_t, rcond, vector, result_t)
    if m >= n:        # as LAPACK's gelsd: QR first, then the SVD of the small R
        h, taus = bind(geqrf_p, a_t)
        b_t = bind(householder_apply_p, h, taus, b_t)          # Q^H b
        a_t, tail = np_triu(h[:n]), b_t[n:]
        b_t = b_t[:n]
    s, u, vt, info = bind(svd_p, a_t, full_matrices=False, compute_uv=True)
    _require_converged(info, "SVD")
    cutoff = np.finfo(t).eps if rcond < 0 else rcond
    kept = call_ufunc(np.greater, s, call_ufunc(np.multiply, cutoff, np_max(s)))
    inverse = convert(np_where(kept, call_ufunc(np.divide, 1.0, s), 0.0), t)
    scaled = call_ufunc(np.multiply, reshape(inverse, s.shape + (1,)),
                        matmul(conj_transpose(u), b_t))
    x = matmul(conj_transpose(vt), scaled)
    rank = as_kind(np_sum(kept, dtype=np.int32), "scalar")
    if m > n and k:
        residuals = _squared_norms(tail)         # |b - a x|^2 is |(Q^H b) below row n|^2
        _require_rank(rank, n, residuals.shape)
    else:
        residuals = ensure_tracer(np.zeros((0,), real_t))
    x = reshape(x, (n,)) if vector else x
    return cast(x, result_t), cast(residuals, real_t), rank, cast(s, real_t)


def _squared_norms(columns: Tracer) -> Tracer:
    magnitude = call_ufunc(np.absolute, columns)
    return np_sum(call_ufunc(np.multiply, magnitude, magnitude), axis=0)


def _lstsq_empty(a, b, b_t, rcond, vector, result_t):
    """lstsq of a matrix with no elements: NumPy's constants, but for (m, 0) with m > 0 the
    residuals are |b|^2 (rank 0 is full rank there)."""
    x, residuals, rank, s = numpy_constant(np.linalg.lstsq, a, b, rcond=rcond)
    m, n = a.shape
    if m > n and b_t.shape[-1]:
        residuals = cast(_squared_norms(b_t), real_of(result_t))
    return x, residuals, rank, s


@implements(np.linalg.pinv)
def linalg_pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    a = as_array(a)
    if rcond is None:
        if rtol is np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    assert_stacked_2d(a)
    if a.size == 0:
        return numpy_constant(np.linalg.pinv, a)
    conj = call_ufunc(np.conjugate, a) if a.dtype.kind == "c" else a
    u, s, vt = linalg_svd(conj, full_matrices=False, hermitian=hermitian)
    rcond = as_array(rcond)
    cutoff = call_ufunc(np.multiply, reshape(rcond, rcond.shape + (1,)),
                        np_max(s, axis=-1, keepdims=True))
    large = call_ufunc(np.greater, s, cutoff)
    inverse = np_where(large, call_ufunc(np.divide, 1, s), np.zeros((), s.dtype))
    inverse = convert(inverse, s.dtype)
    scaled = call_ufunc(np.multiply, reshape(inverse, inverse.shape + (1,)), matrix_transpose(u))
    return matmul(matrix_transpose(vt), scaled)


# -- matrix_power, tensorsolve, tensorinv -----------------------------------------------------

@implements(np.linalg.matrix_power)
def linalg_matrix_power(a, n):
    a = as_array(a)
    assert_stacked_2d(a)
    assert_stacked_square(a)
    if isinstance(n, Tracer):
        raise unsupported("np.linalg.matrix_power with a traced exponent",
                          "pass the exponent as a static value (--static NAME)")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError("exponent must be an integer") from err
    if n == 0:
        eye = np.eye(a.shape[-2], dtype=a.dtype)
        return as_kind(broadcast_to(ensure_tracer(eye), a.shape), "array")
    if n < 0:
        a, n = linalg_inv(a), -n
    if n == 1:
        return a
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:                    # NumPy's order of products, so the same rounding
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@implements(np.linalg.tensorsolve)
def linalg_tensorsolve(a, b, axes=None):
    a, b = as_array(a), as_array(b)
    if axes is not None:
        order = [i for i in range(a.ndim) if i not in [ax % a.ndim for ax in axes]]
        order += [ax % a.ndim for ax in axes]
        a = transpose(a, order)
    old_shape = a.shape[-(a.ndim - b.ndim):]
    prod = int(np.prod(old_shape, dtype=np.int64))
    if a.size != prod ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = linalg_solve(reshape(a, (prod, prod)), reshape(b, (prod,)))
    return as_kind(reshape(x, old_shape), "array")


@implements(np.linalg.tensorinv)
def linalg_tensorinv(a, ind=2):
    a = as_array(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    inv_shape = a.shape[ind:] + a.shape[:ind]
    prod = int(np.prod(a.shape[ind:], dtype=np.int64))
    inverse = linalg_inv(reshape(a, (int(np.prod(a.shape[:ind], dtype=np.int64)), prod)))
    return as_kind(reshape(inverse, inv_shape), "array")


# -- refused ----------------------------------------------------------------------------------

for _fn in (np.linalg.eig, np.linalg.eigvals):
    implements(_fn)(refusing(
        f"np.linalg.{_fn.__name__} (its result dtype depends on the data: complex only when "
        "some eigenvalue is)", "for a symmetric or Hermitian matrix use np.linalg.eigh / "
        "eigvalsh; otherwise compute it outside the cell", f"linalg_{_fn.__name__}"))
