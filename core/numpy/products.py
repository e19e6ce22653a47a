"""NumPy's products on tracers: matmul, dot, vdot, inner, outer, tensordot and kron, each
one `dot_general` (or a broadcast multiply) with NumPy's promotion and shape errors; convolve
and correlate, one `correlate` of the zero-padded longer vector.
"""
from __future__ import annotations

import numpy as np

from ..primitives import correlate_p, pad_p, rev_p
from ..tracing import Tracer, bind
from .base import (as_array, as_kind, assign_into, convert, dot_general, ensure_tracer,
                   implements, is_weak, kind_of_result, normalize_axes, reshape, result_type,
                   transpose, unsupported)
from .ufuncs import call_ufunc


def _promote_pair(a, b):
    """dot, inner, outer, tensordot take Python scalars as arrays (np.asarray), not weakly."""
    a, b = (v if not is_weak(v) else v.with_kind("array") if isinstance(v, Tracer) else
            np.asarray(v) for v in (a, b))
    dtype = result_type(a, b)
    return ensure_tracer(convert(a, dtype)), ensure_tracer(convert(b, dtype))


@implements(np.matmul)
def matmul(a, b, out=None, **kwargs):
    if kwargs:
        raise unsupported(f"np.matmul(..., {', '.join(kwargs)}=...)")
    if out is not None:
        target = out[0] if isinstance(out, tuple) else out
        result = matmul(a, b)
        if tuple(target.shape) != result.shape:
            raise ValueError(f"matmul: Output operand 0 has a mismatch in its core dimension "
                             f"(shape {tuple(target.shape)} instead of {result.shape})")
        return assign_into(target, result, "np.matmul(..., out=...)")
    a, b = _promote_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    if a.dtype == np.bool_:
        counts = matmul(convert(a, np.int64), convert(b, np.int64))
        return as_kind(convert(counts, bool), counts.kind)
    k_a, k_b = a.shape[-1], b.shape[-2 if b.ndim > 1 else 0]
    if k_a != k_b:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {k_b} is different from {k_a})")
    plan = _MatmulPlan(a.shape[:-2], b.shape[:-2], a.ndim == 1, b.ndim == 1)
    a2, b2 = reshape(a, plan.a_shape(a.shape)), reshape(b, plan.b_shape(b.shape))
    out = dot_general(a2, b2, ((a2.ndim - 1,), (b2.ndim - 1 - (b.ndim > 1),)),
                      (plan.a_batch, plan.b_batch))
    out = reshape(transpose(out, plan.permutation()), plan.result_shape(a.shape, b.shape))
    return as_kind(out, kind_of_result(out.ndim))


class _MatmulPlan:
    """How `a @ b` becomes one dot_general with no operand broadcast (as jax.numpy does it).

    Each axis of the broadcast batch shape is either batched in both operands (same size in
    both: a batch dimension of the dot_general), or carried by one operand alone (the other
    has no such axis or size 1, which is squeezed): then it is a free dimension of that
    operand, so `(B, m, k) @ (k, n)` is a plain matrix product over B*m rows. The result's
    dimensions (batch, then a's free, then b's free) are transposed into NumPy's order only
    when an axis carried by b alone comes before one that is not."""

    def __init__(self, a_batch, b_batch, a_vector: bool, b_vector: bool):
        self.batch_shape = np.broadcast_shapes(a_batch, b_batch)
        self.a_vector, self.b_vector = a_vector, b_vector
        n = len(self.batch_shape)
        a_at = {p: p - (n - len(a_batch)) for p in range(n - len(a_batch), n)}
        b_at = {p: p - (n - len(b_batch)) for p in range(n - len(b_batch), n)}
        a_size = {p: a_batch[i] for p, i in a_at.items()}
        b_size = {p: b_batch[i] for p, i in b_at.items()}
        self.shared = [p for p in range(n) if a_size.get(p, 1) == b_size.get(p, 1) != 1]
        self.a_only = [p for p in range(n) if a_size.get(p, 1) != 1 and p not in self.shared]
        self.b_only = [p for p in range(n) if b_size.get(p, 1) != 1 and p not in self.shared]
        self.a_kept = [p for p in a_at if p in self.shared or p in self.a_only]
        self.b_kept = [p for p in b_at if p in self.shared or p in self.b_only]
        self.a_batch = tuple(self.a_kept.index(p) for p in self.shared)
        self.b_batch = tuple(self.b_kept.index(p) for p in self.shared)

    def a_shape(self, shape) -> tuple[int, ...]:
        core = shape[-1:] if self.a_vector else shape[-2:]
        return tuple(self.batch_shape[p] for p in self.a_kept) + tuple(core)

    def b_shape(self, shape) -> tuple[int, ...]:
        core = shape[-1:] if self.b_vector else shape[-2:]
        return tuple(self.batch_shape[p] for p in self.b_kept) + tuple(core)

    def permutation(self) -> tuple[int, ...]:
        """From dot_general's order (shared, a's free, b's free) to NumPy's (batch, m, n)."""
        order = self.shared + self.a_only + ([] if self.a_vector else ["m"]) \
            + self.b_only + ([] if self.b_vector else ["n"])
        wanted = sorted(self.shared + self.a_only + self.b_only) \
            + ([] if self.a_vector else ["m"]) + ([] if self.b_vector else ["n"])
        return tuple(order.index(label) for label in wanted)

    def result_shape(self, a_shape, b_shape) -> tuple[int, ...]:
        return tuple(self.batch_shape) + (() if self.a_vector else (a_shape[-2],)) \
            + (() if self.b_vector else (b_shape[-1],))


@implements(np.dot)
def np_dot(a, b, out=None):
    if out is not None:
        result = np_dot(a, b)
        if tuple(np.shape(out)) != result.shape or getattr(out, "dtype", None) != result.dtype:
            raise ValueError("output array is not acceptable (must have the right datatype, "
                             "number of dimensions, and be a C-Array)")
        return assign_into(out, result, "np.dot(..., out=...)")
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
    return as_kind(out, kind_of_result(out.ndim))


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
    return as_kind(out, kind_of_result(out.ndim))


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
    return as_kind(out, kind_of_result(out.ndim))


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


@implements(np.convolve)
def np_convolve(a, v, mode="full"):
    a, v = _promote_pair(a, v)
    a, v = (reshape(x, (1,)) if x.ndim == 0 else x for x in (a, v))
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    if a.ndim > 1 or v.ndim > 1:
        raise ValueError("object too deep for desired array")
    return _correlate(a, bind(rev_p, v, dimensions=(0,)), _mode_number(mode))


@implements(np.correlate)
def np_correlate(a, v, mode="valid"):
    mode = _mode_number(mode)
    a, v = _promote_pair(a, v)
    for x in (a, v):
        if x.ndim == 0:
            raise ValueError("object of too small depth for desired array")
        if x.ndim > 1:
            raise ValueError("object too deep for desired array")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{'first' if a.shape[0] == 0 else 'second'} array argument "
                         f"cannot be empty")
    if v.dtype.kind == "c":
        v = call_ufunc(np.conjugate, v)
    if v.shape[0] <= a.shape[0]:
        return _correlate(a, v, mode)
    return bind(rev_p, _correlate(v, a, mode), dimensions=(0,))


_MODES = {"valid": 0, "same": 1, "full": 2}


def _mode_number(mode) -> int:
    """NumPy's mode of convolve/correlate, with its errors: 0 valid, 1 same, 2 full."""
    if isinstance(mode, str):
        if mode in _MODES:
            return _MODES[mode]
        if mode[:1].lower() in ("v", "s", "f"):
            raise ValueError("Use one of 'valid', 'same', or 'full' for convolve/correlate mode")
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    if isinstance(mode, (int, np.integer)) and not isinstance(mode, bool):
        if mode not in (0, 1, 2):
            raise ValueError("integer convolve/correlate mode must be 0, 1, or 2")
        return int(mode)
    raise TypeError("convolve/correlate mode not understood")


def _correlate(a, v, mode: int):
    """`correlate` of a (the longer) zero-padded as NumPy pads it for mode, and v. Booleans
    are correlated as integers (any product true), float16 in float32 (NumPy's float16 dot
    sums in float)."""
    dtype = a.dtype
    if dtype in (np.bool_, np.float16):
        wide = np.int64 if dtype == np.bool_ else np.float32
        out = _correlate(convert(a, wide), convert(v, wide), mode)
        return as_kind(convert(out, dtype) if dtype == np.float16 else
                       call_ufunc(np.not_equal, out, 0), "array")
    taps = v.shape[0]
    low = (0, taps // 2, taps - 1)[mode]
    high = (0, taps - 1 - taps // 2, taps - 1)[mode]
    if low or high:
        a = bind(pad_p, a, np.zeros((), dtype), low=(low,), high=(high,), interior=(0,))
    return as_kind(bind(correlate_p, a, v), "array")
