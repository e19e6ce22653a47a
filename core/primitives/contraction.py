"""dot_general: the one contraction primitive behind matmul, dot, einsum, tensordot, outer.

Result dimensions are the batch dimensions, then lhs's free dimensions, then rhs's.
"""
from __future__ import annotations

import dataclasses
import string

import numpy as np

from ..ir import ShapedArray
from .autodiff import is_linear, partials
from .batching import dot_general_batch
from .record import Primitive, register, same_dtype_rule
from .structural import transpose_p


def _free(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


def dot_general_shape_rule(lhs, rhs, *, contracting, batch):
    (lc, rc), (lb, rb) = contracting, batch
    for i, j in zip(lc, rc, strict=True):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"contracting dimensions differ: {lhs.shape} and {rhs.shape}")
    for i, j in zip(lb, rb, strict=True):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"batch dimensions differ: {lhs.shape} and {rhs.shape}")
    return (tuple(lhs.shape[i] for i in lb)
            + tuple(lhs.shape[i] for i in _free(lhs.ndim, lc, lb))
            + tuple(rhs.shape[i] for i in _free(rhs.ndim, rc, rb)))


def dot_general_impl(lhs, rhs, *, contracting, batch):
    (lc, rc), (lb, rb) = contracting, batch
    letters = iter(string.ascii_letters)
    lhs_sub = [next(letters) for _ in range(np.ndim(lhs))]
    rhs_sub = [next(letters) for _ in range(np.ndim(rhs))]
    for i, j in zip(lc, rc, strict=True):
        rhs_sub[j] = lhs_sub[i]
    for i, j in zip(lb, rb, strict=True):
        rhs_sub[j] = lhs_sub[i]
    out = ([lhs_sub[i] for i in lb] + [lhs_sub[i] for i in _free(np.ndim(lhs), lc, lb)]
           + [rhs_sub[i] for i in _free(np.ndim(rhs), rc, rb)])
    spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}"
    return np.asarray(np.einsum(spec, lhs, rhs))


def _dims(values) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


BLAS_FROM = 1 << 16      # matrix elements from which a matrix-vector product calls BLAS
GEMV_TARGETS = {1: "psc_gemv_n", 0: "psc_gemv_t"}    # by the matrix's contracted axis
GEMM_FROM = 1 << 12      # multiply-adds (m * n * k) from which a matrix product calls BLAS
# ... except a narrow product of a large matrix (the lhs not transposed), where XLA's dot ran
# 1.2-3x faster than OpenBLAS's gemm on two cores: from 2**19 lhs elements per matrix, up to
# 64 float64 or 16 float32 result columns (float32 from 32 to 64 columns ran either way, a
# transposed lhs up to 4x slower, square products of 64 to 256 1.15-1.4x slower)
NARROW_FROM_ELEMENTS = 1 << 19
NARROW_COLUMNS = {np.dtype(np.float64): 64, np.dtype(np.float32): 16}


def dot_general_lowering(ctx, lhs, rhs, *, contracting, batch):
    blas = (_blas_matrix_vector(ctx, lhs, rhs, contracting, batch)
            or _blas_matrix_product(ctx, lhs, rhs, contracting, batch))
    if blas is not None:
        return blas
    (lc, rc), (lb, rb) = contracting, batch
    dnums = (f"#stablehlo.dot<lhs_batching_dimensions = {_dims(lb)}, "
             f"rhs_batching_dimensions = {_dims(rb)}, "
             f"lhs_contracting_dimensions = {_dims(lc)}, "
             f"rhs_contracting_dimensions = {_dims(rc)}>")
    return ctx.op("stablehlo.dot_general", [lhs, rhs], ctx.avals_in, ctx.avals_out,
                  {"dot_dimension_numbers": dnums})


def _blas_matrix_vector(ctx, lhs, rhs, contracting, batch):
    """A large float matrix times a vector (`M @ v`, `M.T @ v`, `v @ M`) as a call of BLAS's
    gemv (XLA's own matrix-vector kernel runs on one thread at a fraction of its speed), where
    the program may call psc_jit's BLAS targets; None otherwise. A matrix with a transposed
    copy made before the loop (transposed_consts) is read through the copy."""
    found = _matrix_vector(ctx.avals_in, contracting, batch, ctx.module.targets)
    if found is None:
        return None
    position, axis = found
    names, avals = [lhs, rhs], ctx.avals_in
    matrix, vector = (names[position], avals[position]), (names[1 - position], avals[1 - position])
    copy = ctx.module.transposed_copy(ctx.eqn.inputs[position])
    if copy is not None:
        matrix, axis = (copy, _flipped(matrix[1])), 1 - axis
    return ctx.ffi_call(GEMV_TARGETS[axis], [matrix[0], vector[0]], [matrix[1], vector[1]],
                        ctx.avals_out)


def _matrix_vector(avals, contracting, batch, targets) -> tuple[int, int] | None:
    """(the matrix's position among the operands, its contracted axis) of a product that
    calls BLAS's gemv; None for any other."""
    if batch != ((), ()) or not set(GEMV_TARGETS.values()) <= targets or \
            avals[0].dtype != avals[1].dtype or avals[0].dtype not in (np.float32, np.float64):
        return None
    if (avals[0].ndim, avals[1].ndim) == (2, 1):
        position, axis = 0, contracting[0][0]
    elif (avals[0].ndim, avals[1].ndim) == (1, 2):
        position, axis = 1, contracting[1][0]
    else:
        return None
    return (position, axis) if avals[position].size >= BLAS_FROM else None


def _flipped(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[::-1], aval.dtype)


# A tall, narrow matrix that a loop multiplies with vectors on every iteration (the data of
# an iterative solver: X @ w, X.T @ r) is read through one transposed copy made before the
# loop: BLAS's gemv ran 1.3-4x faster on the wide copy, either product (float64: 100,000 x 50,
# 100,000 x 128, 100,000 x 8 and 20,000 x 50; even at 5,000 x 100 and 4,000 x 256), and the
# copy costs about ten such products.
TRANSPOSED_FROM_ELEMENTS = 1 << 20
TRANSPOSED_FROM_ASPECT = 16        # rows per column
TRANSPOSED_FROM_TRIPS = 32


def transposed_consts(body_graph, body_nconsts: int, trip_count: int | None,
                      targets) -> dict[int, ShapedArray]:
    """{position among a loop body's consts: the aval of its transpose} for the tall float
    matrices the body multiplies with vectors by BLAS, in a loop of TRANSPOSED_FROM_TRIPS
    iterations or more."""
    if trip_count is None or trip_count < TRANSPOSED_FROM_TRIPS:
        return {}
    consts = {var.id: k for k, var in enumerate(body_graph.in_vars[:body_nconsts])}
    found = {}
    for eqn in body_graph.eqns:
        if eqn.prim is not dot_general_p:
            continue
        avals = [a.aval for a in eqn.inputs]
        product = _matrix_vector(avals, eqn.params["contracting"], eqn.params["batch"], targets)
        if product is None:
            continue
        matrix, aval = eqn.inputs[product[0]], avals[product[0]]
        rows, cols = aval.shape
        if getattr(matrix, "id", None) in consts and aval.size >= TRANSPOSED_FROM_ELEMENTS \
                and rows >= TRANSPOSED_FROM_ASPECT * cols:
            found[consts[matrix.id]] = _flipped(aval)
    return found


def _blas_matrix_product(ctx, lhs, rhs, contracting, batch):
    """A float matrix product (`A @ B`, batched over shared leading axes, either operand
    transposed) as a call of BLAS's gemm on stacks of row-major matrices: XLA:CPU's kernel runs
    1.2-2x slower than OpenBLAS's from small to mid sizes. Each operand must read as a stack of
    matrices without moving data: its batch axes lead, and it contracts one axis that is its
    first or last after them (the others, its free axes, flatten to the matrix's other side).
    None otherwise, or below GEMM_FROM multiply-adds, or for a narrow product of a large matrix
    (NARROW_COLUMNS), or without psc_jit's BLAS targets."""
    (lhs_aval, rhs_aval), (out_aval,) = ctx.avals_in, ctx.avals_out
    if not {"psc_gemm_nn", "psc_gemm_nt", "psc_gemm_tn", "psc_gemm_tt"} <= ctx.module.targets \
            or lhs_aval.dtype != rhs_aval.dtype \
            or lhs_aval.dtype not in (np.float32, np.float64) or len(contracting[0]) != 1:
        return None
    lhs_side = _as_matrices(lhs_aval, contracting[0][0], batch[0], contracted_last=True)
    rhs_side = _as_matrices(rhs_aval, contracting[1][0], batch[1], contracted_last=False)
    if lhs_side is None or rhs_side is None:
        return None
    (count, m, k, lhs_flipped), (_, n, _, rhs_flipped) = lhs_side, rhs_side
    if m * n * k < (BLAS_FROM if min(m, n) == 1 else GEMM_FROM):   # a matrix-vector product
        return None
    dtype = lhs_aval.dtype
    if 1 < n <= NARROW_COLUMNS[dtype] and m * k >= NARROW_FROM_ELEMENTS and not lhs_flipped:
        return None
    lhs_3d = ShapedArray((count, k, m) if lhs_flipped else (count, m, k), dtype)
    rhs_3d = ShapedArray((count, n, k) if rhs_flipped else (count, k, n), dtype)
    out_3d = ShapedArray((count, m, n), dtype)
    operands = [ctx.op("stablehlo.reshape", [x], [aval], [shaped])[0]
                for x, aval, shaped in ((lhs, lhs_aval, lhs_3d), (rhs, rhs_aval, rhs_3d))]
    target = f"psc_gemm_{'nt'[lhs_flipped]}{'nt'[rhs_flipped]}"
    (product,) = ctx.ffi_call(target, operands, [lhs_3d, rhs_3d], [out_3d])
    return ctx.op("stablehlo.reshape", [product], [out_3d], [out_aval])


def _as_matrices(aval, contracted, batch, contracted_last):
    """(count, free, contracted, flipped): aval read as `count` matrices whose rows are its
    free axes and columns its contracted one (an lhs of `A @ B`; `contracted_last=False`, an
    rhs: rows contracted, columns free), `flipped` when they are stored the other way round.
    None when its batch axes do not lead or the contracted axis is not first or last after
    them."""
    nb = len(batch)
    if tuple(batch) != tuple(range(nb)):
        return None
    rest = aval.shape[nb:]
    count = int(np.prod(aval.shape[:nb], dtype=np.int64))
    free = int(np.prod([d for i, d in enumerate(rest) if i != contracted - nb], dtype=np.int64))
    if contracted == aval.ndim - 1:
        flipped = not contracted_last
    elif contracted == nb:
        flipped = contracted_last
    else:
        return None
    if len(rest) == 1:          # a vector: its one axis is contracted; stored either way
        flipped = False
    return count, free, aval.shape[contracted], flipped


def fold_transposed_operands(eqn, producer):
    """dot_general of a transposed operand reads the operand itself, with its dimension
    numbers permuted (`M.T @ v` contracts M's first axis; no transpose is materialised), when
    that keeps the order of the result's dimensions. None when no operand can be folded."""
    (lc, rc), (lb, rb) = eqn.params["contracting"], eqn.params["batch"]
    (lhs, lc, lb, left), (rhs, rc, rb, right) = (
        _untransposed(atom, contracting, batch, producer)
        for atom, contracting, batch in ((eqn.inputs[0], lc, lb), (eqn.inputs[1], rc, rb)))
    if not (left or right):
        return None
    return dataclasses.replace(eqn, inputs=(lhs, rhs),
                               params={**eqn.params, "contracting": (lc, rc), "batch": (lb, rb)})


def _untransposed(atom, contracting, batch, producer):
    """(operand, contracting, batch, folded) reading through a transpose that produced atom."""
    source = producer(atom)
    if source is None or source.prim is not transpose_p:
        return atom, contracting, batch, False
    perm = source.params["permutation"]
    free = [perm[i] for i in _free(len(perm), contracting, batch)]
    if free != sorted(free):        # the free dimensions would come out in another order
        return atom, contracting, batch, False
    return (source.inputs[0], tuple(perm[i] for i in contracting),
            tuple(perm[i] for i in batch), True)


# -- derivatives: a bilinear map; its transposes are contractions of the cotangent -----------

def _ranges(*lengths):
    """Consecutive ranges of these lengths."""
    start, out = 0, []
    for n in lengths:
        out.append(list(range(start, start + n)))
        start += n
    return out


def _transpose_lhs(ctx, ct, lhs_aval, rhs, contracting, batch, swap_ans=False):
    """The cotangent of lhs (JAX's _dot_general_transpose_lhs): ct contracted with rhs over
    rhs's free dimensions, then put back into lhs's order."""
    (lc, rc), (lb, rb) = contracting, batch
    lhs_kept = _free(lhs_aval.ndim, lc, lb)
    rhs_kept = _free(rhs.aval.ndim, rc, rb)
    if swap_ans:
        ans_batch, ans_rhs, _ = _ranges(len(lb), len(rhs_kept), len(lhs_kept))
    else:
        ans_batch, _, ans_rhs = _ranges(len(lb), len(lhs_kept), len(rhs_kept))
    dims = ((tuple(ans_rhs), tuple(rhs_kept)), (tuple(ans_batch), tuple(rb)))
    lhs_contract_by_rhs = [lc[i] for i in np.argsort(rc)]
    out_axes = np.argsort(list(lb) + lhs_kept + lhs_contract_by_rhs)
    product = ctx.dot_general(ct, rhs, dims[0], dims[1])
    return ctx.transpose(product, out_axes)


def dot_general_transpose(ctx, ct, lhs, rhs, *, contracting, batch):
    if is_linear(lhs) and is_linear(rhs):
        raise TypeError("a contraction of two tangents is not linear")
    if is_linear(lhs):
        return [_transpose_lhs(ctx, ct, lhs.aval, rhs, contracting, batch), None]
    (lc, rc), (lb, rb) = contracting, batch
    swapped = _transpose_lhs(ctx, ct, rhs.aval, lhs, (rc, lc), (rb, lb), swap_ans=True)
    return [None, swapped]


dot_general_p = register(Primitive(
    "dot_general", dot_general_shape_rule, lambda lhs, rhs, **_: same_dtype_rule(lhs, rhs),
    dot_general_impl, dot_general_lowering, rewrite=fold_transposed_operands,
    doc="contraction over static dimensions (matmul, einsum, tensordot)",
    jvp=partials(lambda ctx, t, out, lhs, rhs, **dims: ctx.bind(dot_general_p, t, rhs, **dims),
                 lambda ctx, t, out, lhs, rhs, **dims: ctx.bind(dot_general_p, lhs, t, **dims)),
    linear=True, transpose=dot_general_transpose, batch=dot_general_batch))
