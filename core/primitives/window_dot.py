"""window_dot: the dot product of two vectors over a span whose bounds are traced integers,
the `L[i, :i] @ x[:i]` of a rolled loop (core/numpy/windows.py).

    window_dot(a, b, lo, hi, *at, lines=(None, None))
        = sum(u[k] * v[k] for k in [lo, hi))     (bounds clipped to the vectors; 0 if empty)

where u is `a` itself (`lines[0]` None), or a line of the matrix `a` read in place: its row
`at` (`lines[0] == 1`, the vector runs along axis 1) or its column `at` (`lines[0] == 0`);
v likewise of `b`; `at` holds the int64 row or column index of each matrix operand, in order.

Why a primitive: as a masked dot of the whole vectors (zero outside the span, by a select),
every pass of a triangular loop multiplies the whole row, and a row read out of a matrix is
copied whole first: forward substitution over 2000 rows ran at 0.7x NumPy. The lowering
instead loops over the span in chunks of CHUNK elements, each read straight out of the matrix
(`rewrite` turns a dot of a row or column sliced out of a matrix into a dot of that line of
the matrix), so a pass costs what its span holds, and the whole loop half of the full rows.
"""
from __future__ import annotations

import numpy as np

from ..ir import Eqn, Literal, ShapedArray, Var
from .autodiff import is_linear
from .elementwise import logical_and_p
from .record import Primitive, register
from .structural import dynamic_slice_p, reshape_p

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
INT = np.dtype(np.int64)
# Elements a chunk multiplies. Measured on trisolv (n = 2000, L aligned, interleaved, best of
# 12, two runs): chunks of 32, 64, 128, 256, 512 took 1.85-1.96, 1.83-1.96, 1.96-2.12,
# 1.97-2.05, 2.19-2.30 ms, the masked whole rows 3.29-3.37, NumPy 3.99-4.04.
CHUNK = 64


# -- rules ------------------------------------------------------------------------------------

def _line_shape(aval, line) -> tuple[int, ...]:
    if line is None:
        if aval.ndim != 1:
            raise TypeError(f"window_dot: a vector operand, got shape {aval.shape}")
        return aval.shape
    if aval.ndim != 2 or line not in (0, 1):
        raise TypeError(f"window_dot: line {line} of a matrix, got shape {aval.shape}")
    return (aval.shape[line],)


def _shape_rule(a, b, lo, hi, *at, lines):
    if _line_shape(a, lines[0]) != _line_shape(b, lines[1]):
        raise TypeError(f"window_dot: vectors of one length, got {a.shape} and {b.shape} "
                        f"(lines {lines})")
    if len(at) != sum(line is not None for line in lines):
        raise TypeError("window_dot: one index per matrix operand")
    if any(i.shape != () or i.dtype != INT for i in (lo, hi, *at)):
        raise TypeError("window_dot: the bounds and line indices are int64 scalars")
    return ()


def _dtype_rule(a, b, *_, lines):
    if a.dtype != b.dtype or a.dtype not in FLOATS:
        raise TypeError(f"window_dot: float32 or float64 operands of one dtype, got "
                        f"{a.dtype} and {b.dtype}")
    return a.dtype


def _lines_of(a, b, at, lines) -> tuple[np.ndarray, np.ndarray]:
    """The two vectors (a line index clamped into the matrix, as dynamic_slice clamps)."""
    at = list(at)
    vectors = []
    for x, line in ((np.asarray(a), lines[0]), (np.asarray(b), lines[1])):
        if line is not None:
            index = min(max(int(at.pop(0)), 0), x.shape[1 - line] - 1)
            x = x[index] if line == 1 else x[:, index]
        vectors.append(x)
    return vectors[0], vectors[1]


def _impl(a, b, lo, hi, *at, lines):
    u, v = _lines_of(a, b, at, lines)
    n = u.shape[0]
    lo, hi = min(max(int(lo), 0), n), min(max(int(hi), 0), n)
    return np.asarray(np.dot(u[lo:hi], v[lo:hi]) if hi > lo else 0, u.dtype)


# -- lowering ---------------------------------------------------------------------------------

SCALAR_INT = ShapedArray((), INT)


def _lowering(ctx, a, b, lo, hi, *at, lines):
    """A loop over chunks of the span (a masked dot of the whole vectors when they are short)."""
    a_aval, b_aval = ctx.avals_in[:2]
    n = _line_shape(a_aval, lines[0])[0]
    out = ctx.avals_out[0]
    lo, hi = _clipped(ctx, lo, 0, n), _clipped(ctx, hi, 0, n)
    ats = iter(at)
    operands = [(a, a_aval, lines[0], next(ats) if lines[0] is not None else None),
                (b, b_aval, lines[1], next(ats) if lines[1] is not None else None)]
    if n <= 2 * CHUNK:
        return [_masked_chunk(ctx, operands, ctx.constant(np.int64(0), SCALAR_INT), lo, hi,
                              n, out)]
    return [_chunk_loop(ctx, operands, lo, hi, n, out)]


def _clipped(ctx, x, low: int, high: int) -> str:
    bounds = [ctx.constant(np.int64(v), SCALAR_INT) for v in (low, high)]
    return ctx.op("stablehlo.clamp", [bounds[0], x, bounds[1]], [SCALAR_INT] * 3,
                  [SCALAR_INT])[0]


def _chunk(ctx, x, aval, line, at, start, size: int) -> str:
    """`size` elements of the vector (x, or a line of the matrix x) from `start`."""
    vector = ShapedArray((size,), aval.dtype)
    if line is None:
        return ctx.op("stablehlo.dynamic_slice", [x, start], [aval, SCALAR_INT], [vector],
                      {"slice_sizes": f"array<i64: {size}>"})[0]
    starts, sizes = ([at, start], f"1, {size}") if line == 1 else ([start, at], f"{size}, 1")
    block = ShapedArray((1, size) if line == 1 else (size, 1), aval.dtype)
    (sliced,) = ctx.op("stablehlo.dynamic_slice", [x, *starts], [aval, SCALAR_INT, SCALAR_INT],
                       [block], {"slice_sizes": f"array<i64: {sizes}>"})
    return ctx.op("stablehlo.reshape", [sliced], [block], [vector])[0]


def _masked_chunk(ctx, operands, start, lo, hi, size: int, out) -> str:
    """The dot of `size` elements of both vectors from `start` (inside the vectors), those
    outside [lo, hi) zero (a select: 0 * NaN would be NaN)."""
    positions = ShapedArray((size,), INT)
    (iota,) = ctx.op("stablehlo.iota", [], [], [positions], {"iota_dimension": "0 : i64"})
    spread = [ctx.op("stablehlo.broadcast_in_dim", [v], [SCALAR_INT], [positions],
                     {"broadcast_dimensions": "array<i64>"})[0] for v in (start, lo, hi)]
    (position,) = ctx.op("stablehlo.add", [iota, spread[0]], [positions] * 2, [positions])
    bools = positions.update(dtype=np.dtype(bool))
    inside = ctx.op("stablehlo.and", [ctx.compare("GE", position, spread[1], positions),
                                      ctx.compare("LT", position, spread[2], positions)],
                    [bools, bools], [bools])[0]
    vector = ShapedArray((size,), out.dtype)
    zero = ctx.constant(np.zeros((size,), out.dtype), vector)
    u, v = (ctx.select(inside, _chunk(ctx, x, aval, line, at, start, size), zero, vector)
            for x, aval, line, at in operands)
    dnums = ("#stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
             "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>")
    return ctx.op("stablehlo.dot_general", [u, v], [vector, vector], [out],
                  {"dot_dimension_numbers": dnums})[0]


def _chunk_loop(ctx, operands, lo, hi, n: int, out) -> str:
    """while start < hi: total += the masked chunk at min(start, n - CHUNK) (a chunk stays
    inside the vectors; the elements before `start` it then covers again are masked);
    start += CHUNK. Operands ride along as loop values."""
    fixed = [(x, aval) for x, aval, _, _ in operands] + [
        (at, SCALAR_INT) for _, _, _, at in operands if at is not None] + [(hi, SCALAR_INT)]
    avals = [SCALAR_INT, out] + [aval for _, aval in fixed]

    def unpack(names):
        start, total, a, b, *rest = names
        ats = iter(rest[:-1])
        parts = [(x, aval, line, next(ats) if line is not None else None)
                 for x, (_, aval, line, _) in zip((a, b), operands, strict=True)]
        return start, total, parts, rest[-1]

    def test(sub, names):
        start, _, _, end = unpack(names)
        return [(sub.compare("LT", start, end, SCALAR_INT), ShapedArray((), np.dtype(bool)))]

    def step(sub, names):
        start, total, parts, end = unpack(names)
        last = sub.constant(np.int64(n - CHUNK), SCALAR_INT)
        (inside,) = sub.op("stablehlo.minimum", [start, last], [SCALAR_INT] * 2, [SCALAR_INT])
        dot = _masked_chunk(sub, parts, inside, start, end, CHUNK, out)
        (total,) = sub.op("stablehlo.add", [total, dot], [out, out], [out])
        size = sub.constant(np.int64(CHUNK), SCALAR_INT)
        (start,) = sub.op("stablehlo.add", [start, size], [SCALAR_INT] * 2, [SCALAR_INT])
        return [(v, aval) for v, aval in zip([start, total, *names[2:]], avals, strict=True)]
    zero = ctx.constant(np.zeros((), out.dtype), out)
    results = ctx.op("stablehlo.while", [lo, zero, *(x for x, _ in fixed)], avals, avals,
                     regions=[ctx.region(avals, test), ctx.region(avals, step)])
    return results[1]


# -- reading a line of a matrix in place ------------------------------------------------------

def _read_in_place(eqn: Eqn, producer) -> Eqn | None:
    """window_dot of a vector that is a row or column sliced out of a matrix (reshape of a
    dynamic_slice of the whole line) reads that line of the matrix instead, in place."""
    lines, operands, ats = list(eqn.params["lines"]), list(eqn.inputs[:2]), []
    given = iter(eqn.inputs[4:])
    changed = False
    for k in range(2):
        if lines[k] is not None:
            ats.append(next(given))
            continue
        found = _line_read(operands[k], producer)
        if found is not None:
            operands[k], lines[k], at = found
            ats.append(at)
            changed = True
    if not changed:
        return None
    return Eqn(eqn.prim, (*operands, *eqn.inputs[2:4], *ats), {"lines": tuple(lines)},
               eqn.outs, eqn.source)


def _line_read(vector, producer):
    """(matrix, line, index) when `vector` is matrix[index, :] or matrix[:, index] read by a
    dynamic_slice of the whole line (from 0) and a reshape; else None."""
    reshaped = producer(vector)
    if reshaped is None or reshaped.prim is not reshape_p:
        return None
    sliced = producer(reshaped.inputs[0])
    if sliced is None or sliced.prim is not dynamic_slice_p or sliced.inputs[0].aval.ndim != 2:
        return None
    matrix, starts = sliced.inputs[0], sliced.inputs[1:]
    n = vector.aval.shape[0]
    for line in (0, 1):
        fixed = 1 - line
        if sliced.params["slice_sizes"][line] == n == matrix.aval.shape[line] and \
                _is_zero(starts[line]) and starts[fixed].aval.dtype == INT:
            return matrix, line, starts[fixed]
    return None


def _is_zero(atom) -> bool:
    return isinstance(atom, Literal) and atom.value.shape == () and int(atom.value) == 0


# -- derivatives and batching: by the operations the product is made of -----------------------

def as_operations(ctx, a, b, lo, hi, *at, lines):
    """The product by other primitives (`ctx`'s operations): the lines read by dynamic_slice,
    zero outside the span, their dot."""
    u, v = (_vector_of(ctx, x, line, i) for x, line, i in _with_indices(a, b, at, lines))
    n = u.aval.shape[0]
    position = ctx.iota((n,), INT, 0)
    inside = ctx.bind(logical_and_p, ctx.ge(position, ctx.broadcast_in_dim(lo, (n,), ())),
                      ctx.lt(position, ctx.broadcast_in_dim(hi, (n,), ())))
    u, v = (ctx.select(inside, w, ctx.zeros_like(w)) for w in (u, v))
    return ctx.reduce_sum(ctx.mul(u, v), (0,))


def _with_indices(a, b, at, lines):
    at = iter(at)
    return [(x, line, next(at) if line is not None else None)
            for x, line in ((a, lines[0]), (b, lines[1]))]


def _vector_of(ctx, x, line, at):
    if line is None:
        return x
    return ctx.index_at(x, at, axis=1 - line)


def _transpose(ctx, ct, a, b, lo, hi, *at, lines):
    """The linear operand's cotangent: ct times the other vector inside the span, zero
    elsewhere (and in the matrix outside its line)."""
    if is_linear(a) and is_linear(b):
        raise TypeError("a product of two tangents is not linear")
    k = 0 if is_linear(a) else 1
    pairs = _with_indices(a, b, at, lines)
    x, line, index = pairs[k]
    other = _vector_of(ctx, *pairs[1 - k])
    n = other.aval.shape[0]
    position = ctx.iota((n,), INT, 0)
    inside = ctx.bind(logical_and_p, ctx.ge(position, ctx.broadcast_in_dim(lo, (n,), ())),
                      ctx.lt(position, ctx.broadcast_in_dim(hi, (n,), ())))
    scaled = ctx.mul(ctx.broadcast_in_dim(ct, (n,), ()), other)
    grad = ctx.select(inside, scaled, ctx.zeros_like(scaled))
    if line is not None:
        grad = ctx.update_at(ctx.zeros(x.aval.update(weak_type=False)), index, grad,
                             axis=1 - line)
    cts = [None] * (4 + len(at))
    cts[k] = grad
    return cts


def _batch(ctx, operands, batched, *, lines):
    """Each member's product: the operations above, batched by their own rules."""
    sub = ctx.new()
    in_vars = [Var(ShapedArray(o.aval.shape[1:] if is_batched else o.aval.shape, o.aval.dtype))
               for o, is_batched in zip(operands, batched, strict=True)]
    out = as_operations(sub, *in_vars, lines=lines)
    graph, _ = ctx.batch_graph(sub.graph(in_vars, [out]), batched, instantiate=True)
    return ctx.inline(graph, operands), [True]


def _jvp(ctx, primals, tangents, *, lines):
    """Bilinear in the two vectors: the product with each tangent in turn."""
    a, b, *rest = primals
    total = None
    if tangents[0] is not None:
        total = ctx.bind(window_dot_p, tangents[0], b, *rest, lines=lines)
    if tangents[1] is not None:
        total = ctx.add_any(total, ctx.bind(window_dot_p, a, tangents[1], *rest, lines=lines))
    return ctx.primal_outs(), [total]


window_dot_p = register(Primitive(
    "window_dot", _shape_rule, _dtype_rule, _impl, _lowering,
    doc="a dot product over a span of traced bounds (rolled triangular loops)",
    jvp=_jvp,
    linear=True, transpose=_transpose, batch=_batch, rewrite=_read_in_place))
