"""NumPy's products on tracers: matmul, dot, vdot, inner, outer, tensordot and kron, each
one `dot_general` (or a broadcast multiply) with NumPy's promotion and shape errors.
"""
from __future__ import annotations

import numpy as np

from ..tracing import Tracer
from .base import (as_array, as_kind, assign_into, broadcast_to, convert, dot_general,
                   ensure_tracer, implements, is_weak, kind_of_result, normalize_axes, reshape,
                   result_type, unsupported)
from .ufuncs import call_ufunc


def _promote_pair(a, b):
    """dot, inner, outer, tensordot take Python scalars as arrays (np.asarray), not weakly."""
    a, b = (v if not is_weak(v) else v.with_kind("array") if isinstance(v, Tracer) else
            np.asarray(v) for v in (a, b))
    dtype = result_type(a, b)
    return ensure_tracer(convert(a, dtype)), ensure_tracer(convert(b, dtype))


@implements(np.matmul)
def matmul(a, b, **kwargs):
    if kwargs:
        raise unsupported(f"np.matmul(..., {', '.join(kwargs)}=...)")
    a, b = _promote_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    if a.dtype == np.bool_:
        return convert(matmul(convert(a, np.int64), convert(b, np.int64)), bool)
    a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2.shape[-2]} is different from {a2.shape[-1]})")
    batch_shape = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a3 = broadcast_to(a2, batch_shape + a2.shape[-2:])
    b3 = broadcast_to(b2, batch_shape + b2.shape[-2:])
    nb = len(batch_shape)
    out = dot_general(a3, b3, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    shape = batch_shape + (a2.shape[-2] if a.ndim > 1 else (),) + (b2.shape[-1] if b.ndim > 1 else (),)
    shape = tuple(d for part in shape for d in ((part,) if isinstance(part, int) else part))
    return as_kind(reshape(out, shape), kind_of_result(len(shape), [a, b]))


@implements(np.dot)
def np_dot(a, b, out=None):
    if out is not None:
        raise unsupported("np.dot(..., out=...)")
    a, b = _promote_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return call_ufunc(np.multiply, a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    contract_b = b.ndim - 2 if b.ndim >= 2 else 0
    if a.shape[-1] != b.shape[contract_b]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim "
                         f"{a.ndim - 1}) != {b.shape[contract_b]} (dim {contract_b})")
    out = dot_general(a, b, ((a.ndim - 1,), (contract_b,)), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


@implements(np.vdot)
def np_vdot(a, b):
    a, b = _promote_pair(a, b)
    if a.size != b.size:
        raise ValueError("cannot reshape array: vdot needs two arrays of one size")
    if a.dtype == np.bool_:
        return as_kind(convert(np_vdot(convert(a, np.int64), convert(b, np.int64)), bool),
                       "scalar")
    a = reshape(a, (a.size,))
    if a.dtype.kind == "c":
        a = call_ufunc(np.conjugate, a)
    return as_kind(dot_general(a, reshape(b, (b.size,)), ((0,), (0,)), ((), ())), "scalar")


@implements(np.inner)
def np_inner(a, b):
    a, b = _promote_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return call_ufunc(np.multiply, a, b)
    out = dot_general(a, b, ((a.ndim - 1,), (b.ndim - 1,)), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


@implements(np.outer)
def np_outer(a, b, out=None):
    a, b = _promote_pair(a, b)
    a, b = reshape(a, (a.size, 1)), reshape(b, (1, b.size))
    result = call_ufunc(np.multiply, a, b)
    return assign_into(out, result, "np.outer(..., out=...)") if out is not None else result


@implements(np.tensordot)
def np_tensordot(a, b, axes=2):
    a, b = _promote_pair(a, b)
    if isinstance(axes, (int, np.integer)):
        axes_a = tuple(range(a.ndim - axes, a.ndim))
        axes_b = tuple(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = normalize_axes(axes_a, a.ndim)
        axes_b = normalize_axes(axes_b, b.ndim)
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j]
                                         for i, j in zip(axes_a, axes_b, strict=True)):
        raise ValueError("shape-mismatch for sum")
    out = dot_general(a, b, (axes_a, axes_b), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


@implements(np.kron)
def np_kron(a, b):
    b = as_array(b)
    a = as_array(a)
    if a.ndim < b.ndim:
        a = reshape(a, (1,) * (b.ndim - a.ndim) + a.shape)
    if a.ndim == 0 or b.ndim == 0:
        return call_ufunc(np.multiply, a, b)
    nd = max(a.ndim, b.ndim)
    a_shape = (1,) * (nd - a.ndim) + a.shape
    b_shape = (1,) * (nd - b.ndim) + b.shape
    a_open = reshape(a, tuple(d for s in a_shape for d in (s, 1)))
    b_open = reshape(b, tuple(d for s in b_shape for d in (1, s)))
    product = call_ufunc(np.multiply, a_open, b_open)
    return as_kind(reshape(product, tuple(x * y for x, y in zip(a_shape, b_shape, strict=True))), "array")
