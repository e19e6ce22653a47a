"""Linear-algebra primitives: factorizations and triangular solves on (stacks of) matrices.

    cholesky          LAPACK potrf (NaN-filled where not positive definite)
    triangular_solve  LAPACK trsm
    lu                LAPACK getrf, then the pivots as a permutation (a while loop)
    eigh              LAPACK syevd / heevd
    svd               LAPACK gesdd
    geqrf             LAPACK geqrf (Householder QR, compact form, as np.linalg.qr's 'raw')
    householder_product  LAPACK orgqr / ungqr (Q from geqrf's reflectors)
    householder_apply    LAPACK ormqr / unmqr (Q^H c, Q never formed)

StableHLO has cholesky and triangular_solve ops, but XLA's CPU backend expands them into
loops whose compile time grows with the matrix (2.2 s for a 500x500 cholesky, 1.5 s for a
triangular solve, against 0.4 s for the LAPACK calls) and that run tens of times slower than
LAPACK; JAX calls LAPACK for both on CPU too.

The LAPACK kernels are the ones jaxlib's CPU client ships (`compile.xla` registers them),
called through `stablehlo.custom_call` with the typed FFI (api_version 4): matrices in
column-major layout (XLA transposes for them), a batch of matrices in one call. NumPy calls
the same LAPACK routines, so results match NumPy's up to rounding (and the signs of
eigenvectors and singular vectors, which LAPACK fixes the same way in both).

Every operand is float32, float64, complex64 or complex128, with at least 2 axes; the
leading axes are a batch. Each primitive's `impl` is NumPy's own routine where NumPy has one.
"""
from __future__ import annotations

import numpy as np

from ..ir import ShapedArray
from .batching import leading_batch
from .linalg_derivatives import (cholesky_jvp, eigh_jvp, lu_jvp, svd_jvp, triangular_solve_jvp,
                                 triangular_solve_transpose)
from .qr_derivatives import (geqrf_jvp, householder_apply_jvp, householder_apply_transpose,
                             householder_product_jvp)
from .record import Primitive, register

LINALG_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
INT32 = np.dtype(np.int32)


def _check_matrix(aval: ShapedArray, name: str, square: bool = False) -> None:
    if aval.dtype not in LINALG_DTYPES:
        raise TypeError(f"{name} takes float32/64 or complex64/128, got {aval.dtype}")
    if aval.ndim < 2:
        raise TypeError(f"{name} takes (a stack of) matrices, got {aval.shape}")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise TypeError(f"{name} takes square matrices, got {aval.shape}")


def real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in (np.float32, np.complex64) else np.dtype(np.float64)


def _never_weak(*_avals, **_params):
    return False


def _batches(a: np.ndarray):
    """(the matrices of a as one (B, m, n) array, a function restoring a's batch axes)."""
    batch = a.shape[:-2]
    flat = np.reshape(a, (-1,) + a.shape[-2:])
    return flat, lambda x: np.reshape(x, batch + x.shape[1:])


# -- lowering helpers: LAPACK through the typed FFI -------------------------------------------

_LAPACK_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def lapack_target(dtype: np.dtype, real_name: str, complex_name: str | None = None) -> str:
    """`lapack_dgetrf_ffi` and the like; complex routines may have their own name (heevd)."""
    name = complex_name if complex_name and dtype.kind == "c" else real_name
    return f"lapack_{_LAPACK_PREFIX[dtype.name]}{name}_ffi"


def _layout(aval: ShapedArray, matrix_ndim: int) -> str:
    """Column-major for the matrices (the operands with the most axes), row-major for the
    rest (pivots, eigenvalues, info)."""
    n = aval.ndim
    dims = ((n - 2, n - 1) + tuple(range(n - 3, -1, -1))) if n == matrix_ndim and n >= 2 else \
        tuple(range(n - 1, -1, -1))
    body = f"[{', '.join(map(str, dims))}]" if dims else ""
    return f"dense<{body}> : tensor<{n}xindex>"


def _config(attrs: dict) -> str:
    """The FFI attributes (`{uplo = 76 : ui8, left = true}`): LAPACK's character arguments as
    bytes, flags as booleans."""
    items = [f"{k} = {str(v).lower()}" if isinstance(v, bool) else f"{k} = {ord(v)} : ui8"
             for k, v in attrs.items()]
    return "{" + ", ".join(items) + "}"


def lapack_call(ctx, target: str, operands, in_avals, out_avals, config: dict | None = None,
                aliases: dict[int, int] | None = None) -> list[str]:
    """One LAPACK kernel call over a batch of matrices; `aliases` {result: operand} lets the
    kernel overwrite an operand in place (as LAPACK does)."""
    matrix_ndim = max(a.ndim for a in in_avals)
    alias_text = ", ".join(
        "#stablehlo.output_operand_alias<output_tuple_indices = "
        f"{[out] if len(out_avals) > 1 else []}, operand_index = {operand}, "
        "operand_tuple_indices = []>" for out, operand in (aliases or {}).items())
    attrs = {
        "call_target_name": f'"{target}"',
        "api_version": "4 : i32",
        "backend_config": _config(config or {}),
        "operand_layouts": "[" + ", ".join(_layout(a, matrix_ndim) for a in in_avals) + "]",
        "result_layouts": "[" + ", ".join(_layout(a, matrix_ndim) for a in out_avals) + "]",
        "output_operand_aliases": f"[{alias_text}]",
    }
    return ctx.op("stablehlo.custom_call", list(operands), in_avals, out_avals, attrs)


def _nan_where_failed(ctx, info: str, value: str, aval: ShapedArray, batch) -> str:
    """value, with NaN in every batch entry whose LAPACK info is not 0."""
    info_aval = ShapedArray(tuple(batch), INT32)
    zero = ctx.op("stablehlo.broadcast_in_dim", [ctx.constant(0, ShapedArray((), INT32))],
                  [ShapedArray((), INT32)], [info_aval], {"broadcast_dimensions": "array<i64>"})[0]
    ok = ctx.compare("EQ", info, zero, info_aval)
    dims = ", ".join(map(str, range(len(batch))))
    ok_full = ctx.op("stablehlo.broadcast_in_dim", [ok], [info_aval.update(dtype=np.dtype(bool))],
                     [aval.update(dtype=np.dtype(bool))],
                     {"broadcast_dimensions": f"array<i64{': ' + dims if dims else ''}>"})[0]
    nan = ctx.op("stablehlo.broadcast_in_dim", [ctx.constant(np.nan, ShapedArray((), aval.dtype))],
                 [ShapedArray((), aval.dtype)], [aval], {"broadcast_dimensions": "array<i64>"})[0]
    return ctx.select(ok_full, value, nan, aval)


# -- cholesky ---------------------------------------------------------------------------------

def cholesky_shape_rule(a):
    _check_matrix(a, "cholesky", square=True)
    return a.shape


def cholesky_impl(a):
    """L with a = L L^H from a's lower triangle; all NaN where a is not positive definite
    (np.linalg.cholesky raises there; the NumPy layer raises NumPy's error from the NaNs)."""
    flat, restore = _batches(np.asarray(a))
    out = np.empty_like(flat)
    for i, matrix in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            out[i] = np.nan
    return restore(out)


def _lower_triangle(ctx, x, aval) -> str:
    """x with the entries above the diagonal of each matrix set to zero."""
    n = aval.ndim
    index = aval.update(dtype=INT32)
    rows = ctx.op("stablehlo.iota", [], [], [index], {"iota_dimension": f"{n - 2} : i64"})[0]
    cols = ctx.op("stablehlo.iota", [], [], [index], {"iota_dimension": f"{n - 1} : i64"})[0]
    below = ctx.compare("GE", rows, cols, index)
    zeros = _broadcast(ctx, ctx.constant(0, ShapedArray((), aval.dtype)),
                       ShapedArray((), aval.dtype), aval, ())
    return ctx.select(below, x, zeros, aval)


def cholesky_lowering(ctx, a):
    """potrf leaves the upper triangle as it was and stops at the first non-positive pivot:
    the upper triangle zeroed, a failed matrix all NaN (as the impl gives)."""
    aval = ctx.avals_in[0]
    info_aval = ShapedArray(aval.shape[:-2], INT32)
    factor, info = lapack_call(ctx, lapack_target(aval.dtype, "potrf"), [a], [aval],
                               [aval, info_aval], {"uplo": "L"}, aliases={0: 0})
    lower = _lower_triangle(ctx, factor, aval)
    return [_nan_where_failed(ctx, info, lower, aval, aval.shape[:-2])]


cholesky_p = register(Primitive(
    "cholesky", cholesky_shape_rule, lambda a: a.dtype, cholesky_impl, cholesky_lowering,
    weak_type_rule=_never_weak, doc="np.linalg.cholesky: the lower Cholesky factor",
    jvp=cholesky_jvp, batch=leading_batch))


# -- triangular_solve -------------------------------------------------------------------------

TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


def triangular_solve_shape_rule(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    _check_matrix(a, "triangular_solve", square=True)
    _check_matrix(b, "triangular_solve")
    if a.dtype != b.dtype or a.shape[:-2] != b.shape[:-2]:
        raise TypeError(f"triangular_solve: {a} and {b} differ in dtype or batch")
    if transpose_a not in TRANSPOSES:
        raise TypeError(f"transpose_a must be one of {TRANSPOSES}")
    if a.shape[-1] != b.shape[-2 if left_side else -1]:
        raise TypeError(f"triangular_solve: {a.shape} does not fit {b.shape}")
    return b.shape


def _triangle(a, lower: bool, unit_diagonal: bool, transpose_a: str):
    a = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        a = a.copy()
        idx = np.arange(a.shape[-1])
        a[..., idx, idx] = 1
    if transpose_a != "NO_TRANSPOSE":
        a = np.swapaxes(a, -1, -2)
        a = np.conj(a) if transpose_a == "ADJOINT" else a
    return a


def _substitute(a, b, lower: bool):
    """x with a x = b for triangular a (B, n, n), b (B, n, k), by substitution (so that a
    zero on the diagonal gives inf/NaN, as trsm does, not an error)."""
    n = a.shape[-1]
    x = np.zeros(b.shape, np.result_type(a, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in order:
            done = slice(0, i) if lower else slice(i + 1, n)
            partial = np.einsum("bj,bjk->bk", a[:, i, done], x[:, done, :])
            x[:, i, :] = (b[:, i, :] - partial) / a[:, i, i, None]
    return x


def triangular_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    tri = _triangle(np.asarray(a), lower, unit_diagonal, transpose_a)
    lower = lower != (transpose_a != "NO_TRANSPOSE")       # the triangle of op(a)
    flat_a, _ = _batches(tri)
    flat_b, restore = _batches(np.asarray(b))
    if left_side:
        return restore(_substitute(flat_a, flat_b, lower).astype(b.dtype))
    # x op(a) = b  <=>  op(a)^T x^T = b^T
    x_t = _substitute(np.swapaxes(flat_a, -1, -2), np.swapaxes(flat_b, -1, -2), not lower)
    return restore(np.swapaxes(x_t, -1, -2).astype(b.dtype))


_TRANS = {"NO_TRANSPOSE": "N", "TRANSPOSE": "T", "ADJOINT": "C"}


def triangular_solve_lowering(ctx, a, b, *, left_side, lower, transpose_a, unit_diagonal):
    aval = ctx.avals_in[0]
    config = {"side": "L" if left_side else "R", "uplo": "L" if lower else "U",
              "trans_x": _TRANS[transpose_a], "diag": "U" if unit_diagonal else "N"}
    return lapack_call(ctx, lapack_target(aval.dtype, "trsm"), [a, b], ctx.avals_in,
                       ctx.avals_out, config, aliases={0: 1})


triangular_solve_p = register(Primitive(
    "triangular_solve", triangular_solve_shape_rule, lambda a, b, **_: b.dtype,
    triangular_solve_impl, triangular_solve_lowering, weak_type_rule=_never_weak,
    doc="x with op(a) x = b (or x op(a) = b) for triangular a",
    jvp=triangular_solve_jvp, linear=True, transpose=triangular_solve_transpose,
    batch=leading_batch))


# -- lu ---------------------------------------------------------------------------------------

def lu_shape_rule(a):
    _check_matrix(a, "lu")
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return [a.shape, batch + (min(m, n),), batch + (m,)]


def lu_dtype_rule(a):
    return [a.dtype, INT32, INT32]


def _lu_one(a: np.ndarray):
    """getrf's partial pivoting (the largest magnitude, |re| + |im| for complex, first wins)."""
    lu = a.copy()
    m, n = lu.shape
    pivots = np.zeros(min(m, n), INT32)
    perm = np.arange(m, dtype=INT32)
    for j in range(min(m, n)):
        column = lu[j:, j]
        size = np.abs(column.real) + np.abs(column.imag) if lu.dtype.kind == "c" else np.abs(column)
        p = j + int(np.argmax(size))
        pivots[j] = p
        if lu[p, j] == 0:
            continue
        lu[[j, p]] = lu[[p, j]]
        perm[[j, p]] = perm[[p, j]]
        lu[j + 1:, j] /= lu[j, j]
        lu[j + 1:, j + 1:] -= np.outer(lu[j + 1:, j], lu[j, j + 1:])
    return lu, pivots, perm


def lu_impl(a):
    """(L and U packed as getrf packs them, 0-based pivots, the permutation: a[perm] = L U)."""
    flat, restore = _batches(np.asarray(a))
    results = [_lu_one(matrix) for matrix in flat]
    batch = np.shape(a)[:-2]
    lu = restore(np.stack([r[0] for r in results]) if results else flat)
    pivots = np.reshape(np.stack([r[1] for r in results]) if results else
                        np.zeros((0, min(np.shape(a)[-2:])), INT32), batch + (-1,))
    perm = np.reshape(np.stack([r[2] for r in results]) if results else
                      np.zeros((0, np.shape(a)[-2]), INT32), batch + (-1,))
    return [lu, pivots.astype(INT32), perm.astype(INT32)]


def lu_lowering(ctx, a):
    aval = ctx.avals_in[0]
    lu_aval, pivots_aval, perm_aval = ctx.avals_out
    info_aval = ShapedArray(aval.shape[:-2], INT32)
    lu, pivots, _ = lapack_call(ctx, lapack_target(aval.dtype, "getrf"), [a], [aval],
                                [lu_aval, pivots_aval, info_aval], aliases={0: 0})
    one = ctx.op("stablehlo.broadcast_in_dim", [ctx.constant(1, ShapedArray((), INT32))],
                 [ShapedArray((), INT32)], [pivots_aval], {"broadcast_dimensions": "array<i64>"})[0]
    pivots = ctx.binary("stablehlo.subtract", pivots, one, pivots_aval)     # 1-based -> 0-based
    return [lu, pivots, pivots_to_permutation(ctx, pivots, pivots_aval, perm_aval)]


def _broadcast(ctx, x, aval_in, aval_out, dims) -> str:
    return ctx.op("stablehlo.broadcast_in_dim", [x], [aval_in], [aval_out],
                  {"broadcast_dimensions": f"array<i64{': ' if dims else ''}"
                                           f"{', '.join(map(str, dims))}>"})[0]


def pivots_to_permutation(ctx, pivots, pivots_aval, perm_aval) -> str:
    """Apply the row swaps j <-> pivots[..., j] in turn to 0..m-1: a while loop over j."""
    batch = perm_aval.shape[:-1]
    nb = len(batch)
    scalar = ShapedArray((), INT32)
    column = ShapedArray(batch + (1,), INT32)
    flat = ShapedArray(batch, INT32)
    iota = ctx.op("stablehlo.iota", [], [], [perm_aval], {"iota_dimension": f"{nb} : i64"})[0]
    avals = [pivots_aval, scalar, perm_aval]

    def cond(sub, names):
        k = sub.constant(pivots_aval.shape[-1], scalar)
        return [(sub.compare("LT", names[1], k, scalar), ShapedArray((), np.dtype(bool)))]

    def body(sub, names):
        pivots_, j, perm = names
        zero = sub.constant(0, scalar)
        starts = [zero] * nb + [j]
        sizes = {"slice_sizes": f"array<i64: {', '.join(map(str, batch + (1,)))}>"}
        p = sub.op("stablehlo.dynamic_slice", [pivots_, *starts],
                   [pivots_aval] + [scalar] * (nb + 1), [column], sizes)[0]
        perm_j = sub.op("stablehlo.dynamic_slice", [perm, *starts],
                        [perm_aval] + [scalar] * (nb + 1), [column], sizes)[0]
        all_dims = tuple(range(nb + 1))
        positions = sub.op("stablehlo.iota", [], [], [perm_aval],
                           {"iota_dimension": f"{nb} : i64"})[0]
        at_j = sub.compare("EQ", positions, _broadcast(sub, j, scalar, perm_aval, ()), perm_aval)
        at_p = sub.compare("EQ", positions, _broadcast(sub, p, column, perm_aval, all_dims),
                           perm_aval)
        zeros = _broadcast(sub, zero, scalar, perm_aval, ())
        picked = sub.select(at_p, perm, zeros, perm_aval)
        perm_p = sub.op("stablehlo.reduce", [picked, zero], [perm_aval, scalar], [flat],
                        {"dimensions": f"array<i64: {nb}>"},
                        regions=[sub.scalar_region(INT32, "stablehlo.add")])[0]
        perm_p = _broadcast(sub, perm_p, flat, perm_aval, tuple(range(nb)))
        swapped = sub.select(at_p, _broadcast(sub, perm_j, column, perm_aval, all_dims), perm,
                             perm_aval)
        swapped = sub.select(at_j, perm_p, swapped, perm_aval)
        j_next = sub.binary("stablehlo.add", j, sub.constant(1, scalar), scalar)
        return list(zip([pivots_, j_next, swapped], avals, strict=True))

    start = ctx.constant(0, scalar)
    regions = [ctx.region(avals, cond), ctx.region(avals, body)]
    results = ctx.op("stablehlo.while", [pivots, start, iota], avals, avals, regions=regions)
    return results[2]


lu_p = register(Primitive(
    "lu", lu_shape_rule, lu_dtype_rule, lu_impl, lu_lowering, multiple_results=True,
    weak_type_rule=lambda a: [False] * 3,
    doc="LU with partial pivoting (getrf): packed L\\U, pivots, permutation",
    jvp=lu_jvp, batch=leading_batch))


# -- eigh -------------------------------------------------------------------------------------

def eigh_shape_rule(a, *, lower, compute_v):
    _check_matrix(a, "eigh", square=True)
    w = a.shape[:-1]
    return [w, a.shape, a.shape[:-2]] if compute_v else [w, a.shape[:-2]]


def eigh_dtype_rule(a, *, lower, compute_v):
    w = real_dtype(a.dtype)
    return [w, a.dtype, INT32] if compute_v else [w, INT32]


def eigh_impl(a, *, lower, compute_v):
    """(eigenvalues ascending, [eigenvectors as columns], LAPACK's info: 0)."""
    uplo = "L" if lower else "U"
    info = np.zeros(np.shape(a)[:-2], INT32)
    if compute_v:
        w, v = np.linalg.eigh(a, UPLO=uplo)
        return [w, v, info]
    return [np.linalg.eigvalsh(a, UPLO=uplo), info]


def eigh_lowering(ctx, a, *, lower, compute_v):
    aval = ctx.avals_in[0]
    w_aval = ShapedArray(aval.shape[:-1], real_dtype(aval.dtype))
    info_aval = ShapedArray(aval.shape[:-2], INT32)
    v, w, info = lapack_call(ctx, lapack_target(aval.dtype, "syevd", "heevd"), [a], [aval],
                             [aval, w_aval, info_aval],
                             {"mode": "V" if compute_v else "N", "uplo": "L" if lower else "U"},
                             aliases={0: 0})
    return [w, v, info] if compute_v else [w, info]


eigh_p = register(Primitive(
    "eigh", eigh_shape_rule, eigh_dtype_rule, eigh_impl, eigh_lowering, multiple_results=True,
    weak_type_rule=lambda a, **p: [False] * (3 if p["compute_v"] else 2),
    doc="eigenvalues (ascending) and eigenvectors of Hermitian matrices (syevd/heevd)",
    jvp=eigh_jvp, batch=leading_batch))


# -- svd --------------------------------------------------------------------------------------

def _svd_shapes(shape, full_matrices):
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    u = batch + (m, m if full_matrices else k)
    vt = batch + (n if full_matrices else k, n)
    return batch + (k,), u, vt


def svd_shape_rule(a, *, full_matrices, compute_uv):
    _check_matrix(a, "svd")
    s, u, vt = _svd_shapes(a.shape, full_matrices)
    return [s, u, vt, a.shape[:-2]] if compute_uv else [s, a.shape[:-2]]


def svd_dtype_rule(a, *, full_matrices, compute_uv):
    s = real_dtype(a.dtype)
    return [s, a.dtype, a.dtype, INT32] if compute_uv else [s, INT32]


def svd_impl(a, *, full_matrices, compute_uv):
    info = np.zeros(np.shape(a)[:-2], INT32)
    if compute_uv:
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
        return [s, u, vt, info]
    return [np.linalg.svd(a, compute_uv=False), info]


def svd_lowering(ctx, a, *, full_matrices, compute_uv):
    aval = ctx.avals_in[0]
    # the kernel takes u and vt buffers even without vectors: the small ones then (an (m, m)
    # u of a tall matrix would be m * m numbers for nothing)
    s_shape, u_shape, vt_shape = _svd_shapes(aval.shape, full_matrices and compute_uv)
    s_aval = ShapedArray(s_shape, real_dtype(aval.dtype))
    u_aval, vt_aval = ShapedArray(u_shape, aval.dtype), ShapedArray(vt_shape, aval.dtype)
    info_aval = ShapedArray(aval.shape[:-2], INT32)
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    _, s, u, vt, info = lapack_call(ctx, lapack_target(aval.dtype, "gesdd"), [a], [aval],
                                    [aval, s_aval, u_aval, vt_aval, info_aval], {"mode": mode},
                                    aliases={0: 0})
    return [s, u, vt, info] if compute_uv else [s, info]


svd_p = register(Primitive(
    "svd", svd_shape_rule, svd_dtype_rule, svd_impl, svd_lowering, multiple_results=True,
    weak_type_rule=lambda a, **p: [False] * (4 if p["compute_uv"] else 2),
    doc="singular values (descending) and vectors (gesdd)",
    jvp=svd_jvp, batch=leading_batch))


# -- geqrf, householder_product ---------------------------------------------------------------

def geqrf_shape_rule(a):
    _check_matrix(a, "geqrf")
    return [a.shape, a.shape[:-2] + (min(a.shape[-2:]),)]


def geqrf_impl(a):
    """(R above the diagonal and the reflectors below it, the reflectors' scale factors):
    np.linalg.qr(a, mode='raw'), whose first result is transposed (Fortran order)."""
    h, tau = np.linalg.qr(a, mode="raw")
    return [np.swapaxes(h, -1, -2).astype(a.dtype), tau.astype(a.dtype)]


def geqrf_lowering(ctx, a):
    aval = ctx.avals_in[0]
    return lapack_call(ctx, lapack_target(aval.dtype, "geqrf"), [a], [aval], ctx.avals_out,
                       aliases={0: 0})


geqrf_p = register(Primitive(
    "geqrf", geqrf_shape_rule, lambda a: [a.dtype, a.dtype], geqrf_impl, geqrf_lowering,
    multiple_results=True, weak_type_rule=lambda a: [False, False],
    doc="Householder QR in LAPACK's compact form (np.linalg.qr's 'raw')",
    jvp=geqrf_jvp, batch=leading_batch))


def householder_product_shape_rule(a, taus):
    _check_matrix(a, "householder_product")
    m, n = a.shape[-2:]
    if m < n or taus.shape != a.shape[:-2] + (taus.shape[-1],) or taus.shape[-1] > n:
        raise TypeError(f"householder_product: {a.shape} and {taus.shape} do not fit")
    return a.shape


def _reflected(matrix, tau, q):
    """H_1 H_2 ... H_k q, H_i = I - tau_i v_i v_i^H, v_i below the diagonal of column i."""
    q = q.copy()
    for i in range(len(tau) - 1, -1, -1):
        v = np.concatenate([np.zeros(i, matrix.dtype), [1], matrix[i + 1:, i]])
        q -= tau[i] * np.outer(v, v.conj() @ q)
    return q


def householder_product_impl(a, taus):
    """The first n columns of H_1 H_2 ... H_k (orgqr)."""
    flat, restore = _batches(np.asarray(a))
    flat_taus = np.reshape(taus, (-1, np.shape(taus)[-1]))
    m, n = flat.shape[-2:]
    out = np.empty_like(flat)
    for b, (matrix, tau) in enumerate(zip(flat, flat_taus, strict=True)):
        out[b] = _reflected(matrix, tau, np.eye(m, n, dtype=flat.dtype))
    return restore(out)


def householder_product_lowering(ctx, a, taus):
    aval = ctx.avals_in[0]
    return lapack_call(ctx, lapack_target(aval.dtype, "orgqr", "ungqr"), [a, taus],
                       ctx.avals_in, ctx.avals_out, aliases={0: 0})


householder_product_p = register(Primitive(
    "householder_product", householder_product_shape_rule, lambda a, taus: a.dtype,
    householder_product_impl, householder_product_lowering, weak_type_rule=_never_weak,
    doc="Q from Householder reflectors (orgqr/ungqr)",
    jvp=householder_product_jvp, batch=leading_batch))


def householder_apply_shape_rule(a, taus, c):
    _check_matrix(a, "householder_apply")
    if c.shape[:-2] != a.shape[:-2] or c.shape[-2] != a.shape[-2] or c.dtype != a.dtype:
        raise TypeError(f"householder_apply: {a} and {c} do not fit")
    if taus.shape != a.shape[:-2] + (taus.shape[-1],) or taus.shape[-1] > min(a.shape[-2:]):
        raise TypeError(f"householder_apply: {a.shape} and {taus.shape} do not fit")
    return c.shape


def householder_apply_impl(a, taus, c):
    """Q^H c, Q = H_1 ... H_k from geqrf's reflectors (ormqr/unmqr, left, transposed)."""
    flat, _ = _batches(np.asarray(a))
    flat_c, restore = _batches(np.asarray(c))
    flat_taus = np.reshape(taus, (-1, np.shape(taus)[-1]))
    m = flat.shape[-2]
    out = np.empty_like(flat_c)
    for b, (matrix, tau) in enumerate(zip(flat, flat_taus, strict=True)):
        q = _reflected(matrix, tau, np.eye(m, dtype=flat.dtype))
        out[b] = q.conj().T @ flat_c[b]
    return restore(out)


def householder_apply_lowering(ctx, a, taus, c):
    aval = ctx.avals_in[0]
    return lapack_call(ctx, lapack_target(aval.dtype, "ormqr", "unmqr"), [a, taus, c],
                       ctx.avals_in, ctx.avals_out, {"left": True, "transpose": True},
                       aliases={0: 2})


householder_apply_p = register(Primitive(
    "householder_apply", householder_apply_shape_rule, lambda a, taus, c: c.dtype,
    householder_apply_impl, householder_apply_lowering, weak_type_rule=_never_weak,
    doc="Q^H c for Q from Householder reflectors, Q never formed (ormqr/unmqr)",
    jvp=householder_apply_jvp, linear=True, transpose=householder_apply_transpose,
    batch=leading_batch))
