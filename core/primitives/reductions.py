"""Reductions, arg-reductions and cumulative reductions, along static axes (sorting is in
sorting.py).

Each reduction keeps its operand's dtype (the NumPy layer converts first where NumPy
accumulates in a wider type: `sum` of int8 is int64). `reduce_max`/`reduce_min`
propagate NaN and `argmax`/`argmin` return the first NaN, as NumPy does.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ..ir import ShapedArray
from ..lowering import i64_array
from .autodiff import linear_in
from .batching import shifted
from .elementwise import extremum, is_float, map_parts, ordered
from .record import Primitive, register


def reduce_shape_rule(aval, *, axes):
    if any(not 0 <= a < aval.ndim for a in axes):
        raise TypeError(f"axes {axes} out of range for {aval.ndim} dimensions")
    return tuple(d for i, d in enumerate(aval.shape) if i not in axes)


def _dtype_of(aval, **_):
    return aval.dtype


def _impl(reducer, x, *, axes):
    x = np.asarray(x)
    with np.errstate(all="ignore"):     # NumPy sums int8 as int64: back to the operand's type
        return np.asarray(reducer(x, axis=tuple(axes))).astype(x.dtype, copy=False)


def _init_value(kind: str, dtype: np.dtype):
    if kind == "sum" or kind == "or":
        return np.zeros((), dtype)
    if kind == "prod" or kind == "and":
        return np.ones((), dtype)
    if dtype == np.bool_:
        return np.array(kind == "min")
    if dtype.kind == "c":   # the ends of NumPy's lexicographic order
        end = -np.inf if kind == "max" else np.inf
        return np.array(complex(end, end), dtype)
    if dtype.kind == "f":
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if kind == "max" else info.max, dtype)


_REDUCE_OPS = {"sum": "stablehlo.add", "prod": "stablehlo.multiply", "max": "stablehlo.maximum",
               "min": "stablehlo.minimum", "and": "stablehlo.and", "or": "stablehlo.or"}


def _combine_region(ctx, kind: str, dtype: np.dtype) -> str:
    """The region combining two scalars: the reduction's op; NumPy's choice for complex
    max/min (a NaN wins, else the lexicographic larger), which StableHLO has no op for."""
    scalar = ShapedArray((), dtype)
    if kind in ("max", "min") and dtype.kind == "c":
        return ctx.region([scalar, scalar], lambda sub, args: [
            (extremum(sub, kind, *args, scalar), scalar)])
    op_name = _REDUCE_OPS[kind]
    if kind in ("max", "min") and dtype == np.bool_:
        op_name = "stablehlo.or" if kind == "max" else "stablehlo.and"
    return ctx.scalar_region(dtype, op_name)


def reduce_lowering(kind: str, ctx, x, *, axes):
    return [reduce_as_numpy(ctx, kind, x, axes, ctx.avals_in[0], ctx.avals_out[0])]


def reduce_as_numpy(ctx, kind: str, x, axes, aval, out):
    """x (of aval) reduced over `axes` to `out` as NumPy reduces: float16 sums and products
    in float32, a float sum's -0.0 made +0.0 where NumPy's is."""
    if kind in ("sum", "prod") and aval.dtype == np.float16:
        # NumPy adds and multiplies float16 numbers in float32, rounding once at the end.
        wide, wide_out = aval.update(dtype=np.dtype(np.float32)), out.update(dtype=np.float32)
        x = ctx.unary("stablehlo.convert", x, aval, wide)
        total = reduce_along(ctx, kind, x, axes, wide, wide_out)
        total = ctx.unary("stablehlo.convert", total, wide_out, out)
    else:
        total = reduce_along(ctx, kind, x, axes, aval, out)
    return _positive_zero(ctx, total, out) if kind == "sum" and is_float(out) else total


def _positive_zero(ctx, total, aval):
    """A zero sum as +0.0: NumPy's add.reduce starts from +0.0, so no sum of its is -0.0 (not
    even of [-0.0], of one element or of none); XLA folds a sum over one element into that
    element."""
    if aval.dtype.kind == "c":
        return map_parts(ctx, partial(_positive_zero, ctx), total, aval)
    zero = ctx.constant(np.zeros((), aval.dtype), aval)
    return ctx.select(ctx.compare("EQ", total, zero, aval), zero, total, aval)


# The dtypes whose NumPy functions (sorts, ufunc loops) the host kernels call: their table in
# core/compile/_host_kernels.c (a target is offered only when NumPy has its function for all).
HOST_KERNEL_DTYPES = frozenset(np.dtype(c) for c in "?bhilBHILefdFD")


def as_lines(ctx, x, aval, axis: int):
    """x read as (outer, n, inner) around `axis` (a reshape, no copy): the operand shape of
    psc_jit's host kernels that work along an axis. (x reshaped, its aval)."""
    outer = int(np.prod(aval.shape[:axis], dtype=np.int64))
    inner = int(np.prod(aval.shape[axis + 1:], dtype=np.int64))
    lines = aval.update(shape=(outer, aval.shape[axis], inner), weak_type=False)
    return ctx.op("stablehlo.reshape", [x], [aval], [lines])[0], lines


def reduce_along(ctx, kind: str, x, axes, aval, out):
    scalar = ShapedArray((), aval.dtype)
    init = ctx.constant(_init_value(kind, aval.dtype), scalar)
    region = _combine_region(ctx, kind, aval.dtype)
    return ctx.op("stablehlo.reduce", [x, init], [aval, scalar], [out],
                  {"dimensions": i64_array(axes)}, regions=[region])[0]


def reduction(kind: str, reducer, **derivatives) -> Primitive:
    return register(Primitive(f"reduce_{kind}", reduce_shape_rule, _dtype_of,
                              partial(_impl, reducer), partial(reduce_lowering, kind),
                              doc=f"np.{reducer.__name__} over static axes",
                              batch=shifted("axes"), **derivatives))


def _kept(aval, axes) -> list[int]:
    return [d for d in range(aval.ndim) if d not in axes]


def reduce_sum_transpose(ctx, ct, x, *, axes):
    return [ctx.broadcast_in_dim(ct, x.aval.shape, _kept(x.aval, axes))]


def reduce_prod_jvp(ctx, primals, tangents, *, axes):
    """The sum of each tangent times the product of the other elements (exact at zeros)."""
    outs = ctx.primal_outs()
    others = _product_of_others(ctx, primals[0], axes)
    return outs, [ctx.reduce_sum(ctx.mul(tangents[0], others), axes)]


def _product_of_others(ctx, x, axes):
    """For each element of x, the product of the other elements along axes: the product of
    those before it times the product of those after it."""
    aval = x.aval
    kept = _kept(aval, axes)
    perm = kept + sorted(axes)
    n = int(np.prod([aval.shape[a] for a in axes], dtype=np.int64))
    shape = [aval.shape[d] for d in kept] + [n]
    moved = ctx.reshape(ctx.transpose(x, perm), shape)
    if n > 1:
        last = len(kept)
        before = _shift(ctx, ctx.cumprod(moved, last), last, forward=True)
        after = _shift(ctx, ctx.cumprod(moved, last, reverse=True), last, forward=False)
        moved = ctx.mul(before, after)
    else:
        moved = ctx.full_like(moved, 1)
    back = ctx.reshape(moved, [aval.shape[d] for d in perm])
    return ctx.transpose(back, np.argsort(perm))


def _shift(ctx, x, axis: int, forward: bool):
    """x moved one place along its last axis, a 1 coming in (exclusive cumulative products)."""
    shape = x.aval.shape
    ones = ctx.full(x.aval.update(shape=shape[:axis] + (1,), weak_type=False), 1)
    starts = [0] * len(shape)
    limits = list(shape)
    if forward:
        limits[axis] -= 1
        return ctx.concatenate([ones, ctx.slice(x, starts, limits)], axis)
    starts[axis] = 1
    return ctx.concatenate([ctx.slice(x, starts, limits), ones], axis)


def extremum_reduce_jvp(ctx, primals, tangents, *, axes):
    """The mean of the tangents of the elements equal to the result (JAX's choice on ties)."""
    outs = ctx.primal_outs()
    x, t = primals[0], tangents[0]
    spread = ctx.broadcast_in_dim(outs[0], x.aval.shape, _kept(x.aval, axes))
    picked = ctx.where_equal(x, spread, 1, 0)
    count = ctx.reduce_sum(picked, axes)
    return outs, [ctx.div(ctx.reduce_sum(ctx.mul(t, picked), axes), count)]


reduce_sum_p = reduction("sum", np.sum, jvp=linear_in(), linear=True,
                         transpose=reduce_sum_transpose)
reduce_prod_p = reduction("prod", np.prod, jvp=reduce_prod_jvp)
reduce_max_p = reduction("max", np.max, jvp=extremum_reduce_jvp)
reduce_min_p = reduction("min", np.min, jvp=extremum_reduce_jvp)
reduce_and_p = reduction("and", np.all, differentiable=False)
reduce_or_p = reduction("or", np.any, differentiable=False)


# -- argmax / argmin --------------------------------------------------------------------------

def arg_shape_rule(aval, *, axis, index_dtype):
    return tuple(d for i, d in enumerate(aval.shape) if i != axis)


def arg_impl(fn, x, *, axis, index_dtype):
    return np.asarray(fn(np.asarray(x), axis=axis)).astype(index_dtype)


def _pick_first_region(ctx, kind: str, dtype: np.dtype, index_dtype: np.dtype) -> str:
    """(value, index) pairs: NaN beats numbers, then the larger (smaller), then the lower index."""
    val, idx = ShapedArray((), dtype), ShapedArray((), index_dtype)
    flag = ShapedArray((), np.dtype(bool))
    direction = "GT" if kind == "max" else "LT"

    def body(sub, args):
        a, ia, b, ib = args
        both = partial(sub.binary, aval=flag)
        better = ordered(sub, direction, a, b, val)
        tie = ordered(sub, "EQ", a, b, val)
        if dtype.kind in "fc":
            a_nan, b_nan = ordered(sub, "NE", a, a, val), ordered(sub, "NE", b, b, val)
            not_b_nan = sub.unary("stablehlo.not", b_nan, flag)
            better = both("stablehlo.or", both("stablehlo.and", a_nan, not_b_nan),
                          both("stablehlo.and", better, not_b_nan))
            tie = both("stablehlo.or", tie, both("stablehlo.and", a_nan, b_nan))
        lower = ordered(sub, "LT", ia, ib, idx)
        pick_a = both("stablehlo.or", better, both("stablehlo.and", tie, lower))
        sel_v = sub.op("stablehlo.select", [pick_a, a, b], [flag, val, val], [val])[0]
        sel_i = sub.op("stablehlo.select", [pick_a, ia, ib], [flag, idx, idx], [idx])[0]
        return [(sel_v, val), (sel_i, idx)]
    return ctx.region([val, idx, val, idx], body)


def arg_lowering(kind: str, ctx, x, *, axis, index_dtype):
    kernel = _arg_by_kernel(kind, ctx, x, axis)
    if kernel is not None:
        return [kernel]
    if ctx.avals_in[0].dtype.kind == "c":
        return _arg_by_pairs(kind, ctx, x, axis=axis, index_dtype=index_dtype)
    return [_arg_by_extremum(kind, ctx, x, axis)]


def _arg_by_kernel(kind: str, ctx, x, axis: int):
    """argmax/argmin by psc_jit's host kernel (core/compile/_host_kernels.c), one pass over x
    read as (outer, n, inner) in place, where the program may call it: XLA ran the two
    reductions of `_arg_by_extremum` 20x slower than NumPy on large arrays (the compare-select
    between them is materialised). The kernel hands rows (axis last) to NumPy's own function
    of the dtype and scans slabs itself, for the real dtypes but float16; complex rows too
    (2000 x 300 complex128 along rows, executable alone: XLA's pairs 1764 us, the kernel 772,
    NumPy 755). None for an empty axis, for complex slabs, and for float16 (XLA's code
    then: NumPy's float16 argmax is the slow one, 3085 us against XLA's 365 on 2000 x 300)."""
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    if f"psc_arg{kind}" not in ctx.module.targets or aval.shape[axis] == 0 or \
            aval.dtype == np.float16 or \
            aval.dtype.kind == "c" and any(d > 1 for d in aval.shape[axis + 1:]):
        return None
    x, stacked = as_lines(ctx, x, aval, axis)
    outer, _, inner = stacked.shape
    positions = out.update(shape=(outer, inner), dtype=np.dtype(np.int64), weak_type=False)
    (first,) = ctx.ffi_call(f"psc_arg{kind}", [x], [stacked], [positions])
    flat = out.update(dtype=np.dtype(np.int64), weak_type=False)
    first = ctx.op("stablehlo.reshape", [first], [positions], [flat])[0]
    return first if out.dtype == np.int64 else ctx.unary("stablehlo.convert", first, flat, out)


def _arg_by_extremum(kind: str, ctx, x, axis: int):
    """The first index where x is its max (min) along axis, or its first NaN: two plain
    reductions (the extremum, then the least position holding it) that XLA runs 2-5x faster
    than one reduction of (value, index) pairs."""
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    kept = tuple(d for d in range(aval.ndim) if d != axis)
    best = reduce_along(ctx, kind, x, (axis,), aval, out.update(dtype=aval.dtype))
    best = ctx.op("stablehlo.broadcast_in_dim", [best], [out.update(dtype=aval.dtype)], [aval],
                  {"broadcast_dimensions": i64_array(kept)})[0]
    hit = ctx.compare("EQ", x, best, aval)
    if aval.dtype.kind == "f":     # the extremum is NaN exactly when some x is: take the first
        hit = ctx.binary("stablehlo.or", hit, ctx.compare("NE", x, x, aval),
                         aval.update(dtype=np.dtype(bool)))
    # Positions as float64 (exact below 2**53): XLA's CPU code reduces floats several times
    # faster than 64-bit integers.
    position_aval = aval.update(dtype=np.dtype(np.float64), weak_type=False)
    iota = ctx.op("stablehlo.iota", [], [], [position_aval], {"iota_dimension": f"{axis} : i64"})[0]
    past_end = ctx.constant(np.float64(aval.shape[axis]), position_aval)
    candidates = ctx.select(hit, iota, past_end, position_aval)
    first = reduce_along(ctx, "min", candidates, (axis,), position_aval, out.update(dtype=np.float64))
    return ctx.unary("stablehlo.convert", first, out.update(dtype=np.float64), out)


def _arg_by_pairs(kind: str, ctx, x, *, axis, index_dtype):
    """(value, index) pairs reduced together: complex numbers, in NumPy's lexicographic order."""
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    index_aval = aval.update(dtype=np.dtype(index_dtype), weak_type=False)
    iota = ctx.op("stablehlo.iota", [], [], [index_aval], {"iota_dimension": f"{axis} : i64"})[0]
    val_scalar = ShapedArray((), aval.dtype)
    idx_scalar = ShapedArray((), np.dtype(index_dtype))
    init_v = ctx.constant(_init_value(kind, aval.dtype), val_scalar)
    init_i = ctx.constant(np.zeros((), index_dtype), idx_scalar)
    region = _pick_first_region(ctx, kind, aval.dtype, np.dtype(index_dtype))
    value_out = out.update(dtype=aval.dtype)
    results = ctx.op("stablehlo.reduce", [x, iota, init_v, init_i],
                     [aval, index_aval, val_scalar, idx_scalar], [value_out, out],
                     {"dimensions": i64_array([axis])}, regions=[region])
    return [results[1]]


def arg_reduction(kind: str, fn) -> Primitive:
    return register(Primitive(f"arg{kind}", arg_shape_rule,
                              lambda aval, *, axis, index_dtype: np.dtype(index_dtype),
                              partial(arg_impl, fn), partial(arg_lowering, kind),
                              weak_type_rule=lambda *a, **k: False, differentiable=False,
                              batch=shifted("axis")))


argmax_p = arg_reduction("max", np.argmax)
argmin_p = arg_reduction("min", np.argmin)


# -- cumulative reductions --------------------------------------------------------------------

def cumulative_impl(fn, x, *, axis, reverse):
    x = np.asarray(x)
    if reverse:
        return np.flip(fn(np.flip(x, axis), axis=axis), axis).astype(x.dtype)
    with np.errstate(all="ignore"):
        return fn(x, axis=axis).astype(x.dtype)


# Elements combined per while-loop step when the scan runs along a single line of elements:
# the steps stay one small loop XLA compiles inline (16 per step left the loop's body to the
# runtime, 50x slower); 8 ran 1M float64 at half the time of one per step and under jax.jit's
# reduce_window (measured, bench/overhead.py). Slices across other axes go one per step: a
# block of them (8 slices of 2 elements) also left the body to the runtime, 25x slower.
CUMULATIVE_BLOCK = 8


def _block_size(aval, axis: int) -> int:
    return CUMULATIVE_BLOCK if aval.size == aval.shape[axis] else 1


def cumulative_lowering(kind: str, ctx, x, *, axis, reverse):
    """NumPy's own loop: out[0] = x[0], then out[i] = out[i-1] (op) x[i], a whole slice across
    the other axes at a time, in NumPy's order (each step rounds as NumPy's does, float16
    included), so the result is NumPy's bit for bit. An XLA while loop takes a block of
    elements per step (one dynamic slice in, the block's running results out, one update;
    `_block_size`); the last n - 1 mod block elements follow at static positions."""
    aval = ctx.avals_in[0]
    n = aval.shape[axis]
    if n <= 1 or aval.size == 0:
        return [x]
    if not reverse and f"psc_cum{kind}" in ctx.module.targets and \
            aval.dtype in HOST_KERNEL_DTYPES and aval.size > n and \
            all(d == 1 for d in aval.shape[axis + 1:]):
        return [_accumulate_rows(kind, ctx, x, aval, axis)]
    scan = _Scan(kind, aval, axis, reverse)
    carry = scan.slice(ctx, x, scan.position(0), 1)
    blocks, tail = divmod(n - 1, scan.k)
    out = x
    if blocks:
        carry, out = scan.loop(ctx, x, carry, blocks)
    if tail:
        start = scan.start(blocks * scan.k, tail)
        piece = scan.slice(ctx, x, start, tail)
        carry, results = scan.block(ctx, carry, piece, tail)
        index = ShapedArray((), np.dtype(np.int64))
        starts = [ctx.constant(np.int64(start if d == axis else 0), index)
                  for d in range(aval.ndim)]
        out = ctx.op("stablehlo.dynamic_update_slice", [out, results, *starts],
                     [aval, scan.aval(tail)] + [index] * aval.ndim, [aval])[0]
    return [out]


def _accumulate_rows(kind: str, ctx, x, aval, axis: int):
    """A cumulative op along rows (axis last; more than one row) by psc_jit's host kernel
    (core/compile/_host_kernels.c), which hands each row to NumPy's own ufunc loop as NumPy's
    accumulate does: the while loop below takes one column per step there, strided (cumsum
    along rows of 2000 x 3000 float64: 74 ms, NumPy 24 ms). A single line keeps the loop,
    whose blocks of elements ran 1M float64 in 1.9 ms against NumPy's 3.3."""
    n = aval.shape[axis]
    rows = aval.update(shape=(aval.size // n, n), weak_type=False)
    x = ctx.op("stablehlo.reshape", [x], [aval], [rows])[0]
    (result,) = ctx.ffi_call(f"psc_cum{kind}", [x], [rows], [rows])
    return ctx.op("stablehlo.reshape", [result], [rows], [aval])[0]


class _Scan:
    """The pieces of one cumulative lowering: positions along the axis in processing order
    (the first element is 0, the rest 1..n-1, from the far end when reversed)."""

    def __init__(self, kind, aval, axis, reverse):
        self.kind, self.full, self.axis, self.reverse = kind, aval, axis, reverse
        self.n = aval.shape[axis]
        self.k = _block_size(aval, axis)

    def aval(self, length: int) -> ShapedArray:
        return self.full.update(shape=tuple(length if d == self.axis else s
                                            for d, s in enumerate(self.full.shape)))

    def position(self, step: int) -> int:
        return self.n - 1 - step if self.reverse else step

    def start(self, done: int, length: int) -> int:
        """Where the block of `length` elements after the first one and `done` more begins."""
        return self.n - 1 - done - length if self.reverse else 1 + done

    def slice(self, ctx, x, start: int, length: int):
        axis = self.axis
        return ctx.op("stablehlo.slice", [x], [self.full], [self.aval(length)], {
            "start_indices": i64_array(start if d == axis else 0 for d in range(self.full.ndim)),
            "limit_indices": i64_array(start + length if d == axis else size
                                       for d, size in enumerate(self.full.shape)),
            "strides": i64_array([1] * self.full.ndim)})[0]

    def block(self, ctx, carry, piece, length: int):
        """The running results of a block of `length` elements after `carry`, in position
        order, and the new carry."""
        one = self.aval(1)
        if length == 1:
            carry = _combine(ctx, self.kind, carry, piece, one)
            return carry, carry
        block_aval = self.aval(length)
        results = [None] * length
        for j in (range(length - 1, -1, -1) if self.reverse else range(length)):
            element = ctx.op("stablehlo.slice", [piece], [block_aval], [one], {
                "start_indices": i64_array(j if d == self.axis else 0
                                           for d in range(self.full.ndim)),
                "limit_indices": i64_array(j + 1 if d == self.axis else size
                                           for d, size in enumerate(block_aval.shape)),
                "strides": i64_array([1] * self.full.ndim)})[0]
            carry = _combine(ctx, self.kind, carry, element, one)
            results[j] = carry
        joined = ctx.op("stablehlo.concatenate", results, [one] * length, [block_aval],
                        {"dimension": self.axis})[0]
        return carry, joined

    def loop(self, ctx, x, carry, blocks: int):
        """A while loop over `blocks` blocks of self.k elements: (carry, out)."""
        k, full, one = self.k, self.full, self.aval(1)
        block_aval = self.aval(k)
        index = ShapedArray((), np.dtype(np.int64))
        state = [ctx.constant(np.int64(0), index), carry, x, x]     # step, carry, out, x
        avals = [index, one, full, full]

        def cond(sub, names):
            limit = sub.constant(np.int64(blocks), index)
            return [(sub.compare("LT", names[0], limit, index), ShapedArray((), np.dtype(bool)))]

        def body(sub, names):
            step, carried, out, operand = names
            offset = sub.binary("stablehlo.multiply", step, sub.constant(np.int64(k), index),
                                index)
            first = sub.constant(np.int64(self.n - 1 - k if self.reverse else 1), index)
            position = sub.binary("stablehlo.subtract" if self.reverse else "stablehlo.add",
                                  first, offset, index)
            zero = sub.constant(np.int64(0), index)
            starts = [position if d == self.axis else zero for d in range(full.ndim)]
            piece = sub.op("stablehlo.dynamic_slice", [operand, *starts],
                           [full] + [index] * full.ndim, [block_aval],
                           {"slice_sizes": i64_array(block_aval.shape)})[0]
            carried, results = self.block(sub, carried, piece, k)
            out = sub.op("stablehlo.dynamic_update_slice", [out, results, *starts],
                         [full, block_aval] + [index] * full.ndim, [full])[0]
            step = sub.binary("stablehlo.add", step, sub.constant(np.int64(1), index), index)
            return list(zip([step, carried, out, operand], avals, strict=True))

        regions = [ctx.region(avals, cond), ctx.region(avals, body)]
        outs = ctx.op("stablehlo.while", state, avals, avals, regions=regions)
        return outs[1], outs[2]


def _combine(ctx, kind: str, x, y, aval):
    """x (op) y elementwise, as NumPy's accumulate applies its ufunc (a NaN wins max/min)."""
    if kind in ("max", "min") and aval.dtype != np.bool_:
        return extremum(ctx, kind, x, y, aval)
    op_name = _REDUCE_OPS[kind]
    if kind in ("max", "min"):
        op_name = "stablehlo.or" if kind == "max" else "stablehlo.and"
    return ctx.binary(op_name, x, y, aval)


def cumulative(kind: str, fn, **derivatives) -> Primitive:
    return register(Primitive(f"cum{kind}", lambda aval, *, axis, reverse: aval.shape, _dtype_of,
                              partial(cumulative_impl, fn), partial(cumulative_lowering, kind),
                              batch=shifted("axis"), **derivatives))


def cumsum_transpose(ctx, ct, x, *, axis, reverse):
    return [ctx.cumsum(ct, axis, not reverse)]


def cumprod_jvp(ctx, primals, tangents, *, axis, reverse):
    """out * cumsum(t / x): exact where no element is zero (NaN where one is)."""
    outs = ctx.primal_outs()
    ratio = ctx.div(tangents[0], primals[0])
    return outs, [ctx.mul(outs[0], ctx.cumsum(ratio, axis, reverse))]


def cumulative_extremum_jvp(ctx, primals, tangents, *, axis, reverse):
    """The tangent of the element that is the running extremum: the last one so far equal to
    the running result (`records`), found by a running max of positions."""
    outs = ctx.primal_outs()
    x = primals[0]
    n = x.aval.shape[axis]
    iota = ctx.iota(x.aval.shape, np.int64, axis)
    records = ctx.select(ctx.eq(x, outs[0]), iota, ctx.full(iota.aval, n if reverse else -1))
    where = ctx.cummin(records, axis, True) if reverse else ctx.cummax(records, axis)
    return outs, [ctx.take_along_axis(tangents[0], where, axis)]


cumsum_p = cumulative("sum", np.cumsum, jvp=linear_in(), linear=True, transpose=cumsum_transpose)
cumprod_p = cumulative("prod", np.cumprod, jvp=cumprod_jvp)
cummax_p = cumulative("max", np.maximum.accumulate, jvp=cumulative_extremum_jvp)
cummin_p = cumulative("min", np.minimum.accumulate, jvp=cumulative_extremum_jvp)
