"""NumPy's contractions and matrix helpers on tracers: einsum, kron, trace, diag, diagonal,
triu, tril, cross and np.linalg.norm.

einsum is planned here (diagonals of repeated labels, sums of private labels, pairwise
dot_generals left to right, a final transpose) and checked by NumPy itself: NumPy's einsum
runs once on tiny stand-in arrays whose sizes keep every equality and every size-1 dimension
of the real operands, so errors, the result's dtype and its scalar-or-array type are NumPy's.
"""
from __future__ import annotations

import string

import numpy as np

from .numpy_api import (as_kind, assign_into, broadcast_to, call_ufunc, convert, dot_general,
                        ensure_tracer, implements, normalize_axes, reshape,
                        unsupported)
from .registry import primitive
from .tracing import Tracer, bind


def as_array(x) -> Tracer:
    """np.asarray(x) as a tracer: a Python scalar becomes a strong 0-d array."""
    if isinstance(x, Tracer):
        return x.with_kind("array") if x.kind == "python" else x
    return ensure_tracer(np.asarray(x)).with_kind("array")


def transpose(x: Tracer, permutation) -> Tracer:
    permutation = tuple(permutation)
    if permutation == tuple(range(x.ndim)):
        return x
    return bind(primitive("transpose"), x, permutation=permutation)


def static_slice(x: Tracer, starts, limits, strides=None) -> Tracer:
    strides = tuple(strides) if strides is not None else (1,) * x.ndim
    if tuple(starts) == (0,) * x.ndim and tuple(limits) == x.shape and strides == (1,) * x.ndim:
        return x
    return bind(primitive("slice"), x, start_indices=tuple(starts), limit_indices=tuple(limits),
                strides=strides)


def sum_axes(x: Tracer, axes) -> Tracer:
    axes = tuple(axes)
    return bind(primitive("reduce_sum"), x, axes=axes) if axes else x


def stand_in(shape, dtype) -> np.ndarray:
    """A zero array of this shape and dtype that takes no memory (never written)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


# -- diagonals --------------------------------------------------------------------------------

def diagonal_last(x: Tracer, axis1: int, axis2: int, offset: int = 0) -> Tracer:
    """np.diagonal(x, offset, axis1, axis2): the diagonal becomes the last axis. A strided
    slice of the flattened (rows, columns) block, no gather."""
    lead = [d for d in range(x.ndim) if d not in (axis1, axis2)]
    t = transpose(x, lead + [axis1, axis2])
    n, m = t.shape[-2:]
    row0, col0 = (0, offset) if offset >= 0 else (-offset, 0)
    row0, col0 = min(row0, n), min(col0, m)
    block = static_slice(t, (0,) * len(lead) + (row0, col0), t.shape)
    rows, cols = n - row0, m - col0
    length = max(0, min(rows, cols))
    lead_shape = t.shape[:-2]
    flat = reshape(block, lead_shape + (rows * cols,))
    limit = (length - 1) * (cols + 1) + 1 if length else 0
    return static_slice(flat, (0,) * flat.ndim, lead_shape + (limit,),
                        (1,) * len(lead_shape) + (cols + 1,))


@implements(np.diagonal)
def np_diagonal(a, offset=0, axis1=0, axis2=1):
    a = as_array(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = (normalize_axes(ax, a.ndim)[0] for ax in (axis1, axis2))
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return as_kind(diagonal_last(a, ax1, ax2, int(offset)), "array")


@implements(np.trace)
def np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    from .numpy_api import np_sum
    diag = np_diagonal(a, offset, axis1, axis2)
    result = np_sum(diag, axis=-1, dtype=dtype)
    return assign_into(out, result, "np.trace(..., out=...)") if out is not None else result


@implements(np.diag)
def np_diag(v, k=0):
    v = as_array(v)
    if v.ndim == 2:
        return np_diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    k = int(k)
    n = v.shape[0] + abs(k)
    rows = bind(primitive("pad"), v, np.zeros((), v.dtype), low=(max(-k, 0),),
                high=(max(k, 0),), interior=(0,))
    mask = np.eye(n, k=k, dtype=bool)
    values = broadcast_to(reshape(rows, (n, 1)), (n, n))
    zeros = np.zeros((n, n), v.dtype)
    return as_kind(bind(primitive("select"), mask, values, zeros), "array")


@implements(np.diagflat)
def np_diagflat(v, k=0):
    v = as_array(v)
    return np_diag(reshape(v, (v.size,)), k)


def _triangle(m, k, lower: bool):
    m = as_array(m)
    shape = m.shape[-2:]
    mask = np.tri(*shape, k=k if lower else k - 1, dtype=bool)
    zero = np.zeros((), m.dtype)
    out_shape = np.broadcast_shapes(mask.shape, m.shape)
    on_true, on_false = (m, zero) if lower else (zero, m)
    operands = [broadcast_to(ensure_tracer(o).with_kind("array"), out_shape)
                for o in (on_true, on_false)]
    pred = np.broadcast_to(mask, out_shape)
    return as_kind(bind(primitive("select"), pred, *operands), "array")


@implements(np.tril)
def np_tril(m, k=0):
    return _triangle(m, int(k), lower=True)


@implements(np.triu)
def np_triu(m, k=0):
    return _triangle(m, int(k), lower=False)


# -- kron, cross ------------------------------------------------------------------------------

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


def _component(x: Tracer, i: int) -> Tracer:
    from .indexing import getitem
    return getitem(x, (Ellipsis, i))


@implements(np.cross)
def np_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    from .shape_ops import np_moveaxis
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    a, b = as_array(a), as_array(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    a = np_moveaxis(a, normalize_axes(axisa, a.ndim)[0], -1)
    b = np_moveaxis(b, normalize_axes(axisb, b.ndim)[0], -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    dtype = np.promote_types(a.dtype, b.dtype)
    a, b = convert(a, dtype), convert(b, dtype)
    a0, a1, b0, b1 = _component(a, 0), _component(a, 1), _component(b, 0), _component(b, 1)
    z = call_ufunc(np.subtract, call_ufunc(np.multiply, a0, b1), call_ufunc(np.multiply, a1, b0))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return as_kind(z, "array")
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        a2, b2 = _component(a, 2), _component(b, 2)
        x = call_ufunc(np.subtract, call_ufunc(np.multiply, a1, b2),
                       call_ufunc(np.multiply, a2, b1))
        y = call_ufunc(np.subtract, call_ufunc(np.multiply, a2, b0),
                       call_ufunc(np.multiply, a0, b2))
    elif a.shape[-1] == 2:
        b2 = _component(b, 2)
        x = call_ufunc(np.multiply, a1, b2)
        y = call_ufunc(np.negative, call_ufunc(np.multiply, a0, b2))
    else:
        a2 = _component(a, 2)
        x = call_ufunc(np.negative, call_ufunc(np.multiply, a2, b1))
        y = call_ufunc(np.multiply, a2, b0)
    return _stack_last([x, y, z], axisc)


def _stack_last(parts, axisc):
    from .shape_ops import np_moveaxis, np_stack
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    stacked = np_stack([broadcast_to(p, shape) for p in parts], axis=-1)
    (axc,) = normalize_axes(axisc, stacked.ndim)
    return np_moveaxis(stacked, -1, axc) if axc != stacked.ndim - 1 else stacked


# -- einsum -----------------------------------------------------------------------------------

_SUBLIST_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _sublist_text(sublist) -> str:
    parts = []
    for s in sublist:
        if s is Ellipsis:
            parts.append("...")
        else:
            i = int(s)
            if not 0 <= i < len(_SUBLIST_LETTERS):
                raise ValueError(f"subscript is not within the valid range [0, 52), got {i}")
            parts.append(_SUBLIST_LETTERS[i])
    return "".join(parts)


def _einsum_arguments(args):
    """(subscripts text, operands) from either of NumPy's calling conventions."""
    if isinstance(args[0], str):
        return args[0].replace(" ", ""), list(args[1:])
    operands = list(args[0::2])
    sublists = list(args[1::2])
    output = None
    if len(args) % 2 == 1:
        output = operands.pop()
    text = ",".join(_sublist_text(s) for s in sublists)
    if output is not None:
        text += "->" + _sublist_text(output)
    return text, operands


def _tokens(term: str) -> list:
    """Labels of one subscript term; '...' stays one token."""
    out, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            out.append("...")
            i += 3
        else:
            out.append(term[i])
            i += 1
    return out


def _labels(tokens, ndim: int) -> list:
    """Per axis: a letter, or ('...', j) for the j-th broadcast axis counted from the right."""
    if "..." not in tokens:
        return list(tokens)
    at = tokens.index("...")
    n_ell = ndim - (len(tokens) - 1)
    return tokens[:at] + [("...", n_ell - 1 - j) for j in range(n_ell)] + tokens[at + 1:]


def _output_labels(text: str, input_labels) -> list:
    n_ell = max([label[1] + 1 for labels in input_labels for label in labels
                 if isinstance(label, tuple)] or [0])
    ellipsis = [("...", n_ell - 1 - j) for j in range(n_ell)]
    if "->" in text:
        tokens = _tokens(text.split("->")[1])
        return [lab for t in tokens for lab in (ellipsis if t == "..." else [t])]
    letters = [lab for labels in input_labels for lab in labels if not isinstance(lab, tuple)]
    once = sorted(lab for lab in set(letters) if letters.count(lab) == 1)
    return ellipsis + once


def _numpy_check(text, operands, kwargs):
    """Run NumPy's einsum on tiny stand-ins (sizes renumbered, equalities and 0s and 1s kept):
    NumPy raises its own errors; returns its result (for dtype and scalar-or-array type)."""
    sizes = sorted({d for op in operands for d in op.shape} | {0, 1})
    small = {d: i for i, d in enumerate(sizes)}
    stand_ins = [stand_in(tuple(small[d] for d in op.shape), op.dtype) for op in operands]
    checked = {k: v for k, v in kwargs.items() if k in ("dtype", "casting", "optimize")}
    return np.einsum(text, *stand_ins, **checked)


class _Operand:
    def __init__(self, value: Tracer, labels: list):
        self.value, self.labels = value, labels

    def take_diagonals(self):
        while len(set(self.labels)) != len(self.labels):
            label = next(lab for lab in self.labels if self.labels.count(lab) > 1)
            i = self.labels.index(label)
            j = self.labels.index(label, i + 1)
            self.value = diagonal_last(self.value, i, j)
            self.labels = [lab for k, lab in enumerate(self.labels) if k not in (i, j)] + [label]

    def drop_broadcast_axes(self, sizes):
        """A size-1 axis whose label is longer elsewhere: the operand is constant along it."""
        keep = [k for k, lab in enumerate(self.labels)
                if not (self.value.shape[k] == 1 and sizes[lab] != 1)]
        if len(keep) != len(self.labels):
            self.value = reshape(self.value, tuple(self.value.shape[k] for k in keep))
            self.labels = [self.labels[k] for k in keep]

    def sum_out(self, needed):
        axes = [k for k, lab in enumerate(self.labels) if lab not in needed]
        self.value = sum_axes(self.value, axes)
        self.labels = [lab for lab in self.labels if lab in needed]


def _contract(acc: _Operand, other: _Operand, needed) -> _Operand:
    common = [lab for lab in acc.labels if lab in other.labels]
    batch = [lab for lab in common if lab in needed]
    contract = [lab for lab in common if lab not in needed]
    value = dot_general(acc.value, other.value,
                        (tuple(acc.labels.index(c) for c in contract),
                         tuple(other.labels.index(c) for c in contract)),
                        (tuple(acc.labels.index(b) for b in batch),
                         tuple(other.labels.index(b) for b in batch)))
    labels = batch + [lab for lab in acc.labels if lab not in common] + [
        lab for lab in other.labels if lab not in common]
    return _Operand(value, labels)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """Bools are summed as integers (then != 0); float16 is accumulated in float32."""
    if dtype == np.bool_:
        return np.dtype(np.int64)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


@implements(np.einsum)
def np_einsum(*args, out=None, optimize=False, **kwargs):
    unknown = set(kwargs) - {"dtype", "casting", "order"}
    if unknown:
        raise TypeError(f"Did not understand the following kwargs: {sorted(unknown)}")
    text, operands = _einsum_arguments(args)
    operands = [as_array(op) for op in operands]
    reference = _numpy_check(text, operands, dict(kwargs, optimize=optimize))
    dtype = reference.dtype
    result = _einsum_value(text, operands, dtype)
    kind = "array" if isinstance(reference, np.ndarray) else "scalar"
    result = as_kind(result, kind if result.ndim == 0 else "array")
    return assign_into(out, result, "np.einsum(..., out=...)") if out is not None else result


def _einsum_value(text, operands, dtype) -> Tracer:
    terms = text.split("->")[0].split(",")
    compute = _compute_dtype(dtype)
    ops = [_Operand(convert(op, compute), _labels(_tokens(term), op.ndim))
           for op, term in zip(operands, terms, strict=True)]
    output = _output_labels(text, [op.labels for op in ops])
    sizes: dict = {}
    for op in ops:
        op.take_diagonals()
        for lab, d in zip(op.labels, op.value.shape, strict=True):
            if sizes.get(lab, 1) == 1:      # (NumPy checked: the sizes agree or are 1)
                sizes[lab] = d
    for op in ops:
        op.drop_broadcast_axes(sizes)
    acc = ops[0]
    acc.sum_out(set(output).union(*(o.labels for o in ops[1:])))
    for n, op in enumerate(ops[1:], start=1):
        later = set(output).union(*(o.labels for o in ops[n + 1:]))
        op.sum_out(later | set(acc.labels))
        acc = _contract(acc, op, later)
        acc.sum_out(later)
    value = transpose(acc.value, [acc.labels.index(lab) for lab in output])
    if dtype == np.bool_:
        return call_ufunc(np.not_equal, value, np.zeros((), compute))
    return convert(value, dtype)


# -- np.linalg.norm ---------------------------------------------------------------------------

def _abs_sum(x, axis):
    from .numpy_api import np_sum
    return np_sum(call_ufunc(np.absolute, x), axis=axis)


def _max_or_zero(x, axis):
    from .numpy_api import np_max
    if x.shape[axis] == 0:
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return ensure_tracer(np.zeros(shape, x.dtype))
    return call_ufunc(np.maximum, np_max(x, axis=axis), np.zeros((), x.dtype))


def _squared_abs(x):
    from .numpy_api import np_real
    return np_real(call_ufunc(np.multiply, call_ufunc(np.conjugate, x), x))


def _vector_norm(x, ord, axis, keepdims):  # noqa: A002  (NumPy's name)
    from .numpy_api import np_min, np_sum
    absx = call_ufunc(np.absolute, x)
    if ord == np.inf:
        result = _max_or_zero(absx, axis)
    elif ord == -np.inf:
        result = np_min(absx, axis=axis)
    elif ord == 0:
        nonzero = convert(call_ufunc(np.not_equal, x, 0), absx.dtype)
        result = np_sum(nonzero, axis=axis)
    elif ord == 1:
        result = np_sum(absx, axis=axis)
    elif ord is None or ord == 2:
        result = call_ufunc(np.sqrt, np_sum(_squared_abs(x), axis=axis))
    elif isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    else:
        total = np_sum(call_ufunc(np.power, absx, ord), axis=axis)
        result = call_ufunc(np.power, total, np.reciprocal(np.asarray(ord, total.dtype)))
    return _keep(result, x.shape, (axis,), keepdims)


def _keep(result, shape, axes, keepdims):
    if not keepdims:
        return result
    return as_kind(reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape))),
                   "array")


def _matrix_norm(x, ord, row, col, keepdims):  # noqa: A002
    from .numpy_api import np_min, np_sum
    if ord in (2, -2, "nuc"):
        raise unsupported(f"np.linalg.norm(..., ord={ord!r}) of a matrix (it needs an SVD)")
    if ord in (1, -1):
        sums, other = _abs_sum(x, row), col - (col > row)
    elif ord in (np.inf, -np.inf):
        sums, other = _abs_sum(x, col), row - (row > col)
    elif ord in (None, "fro", "f"):
        result = call_ufunc(np.sqrt, np_sum(_squared_abs(x), axis=(row, col)))
        return _keep(result, x.shape, (row, col), keepdims)
    else:
        raise ValueError("Invalid norm order for matrices.")
    result = _max_or_zero(sums, other) if ord in (1, np.inf) else np_min(sums, axis=other)
    return _keep(result, x.shape, (row, col), keepdims)


@implements(np.linalg.norm)
def np_linalg_norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    x = as_array(x)
    if x.dtype.kind not in "fc":
        x = convert(x, np.float64)
    if axis is None and (ord is None or (ord in ("f", "fro") and x.ndim == 2)
                         or (ord == 2 and x.ndim == 1)):
        flat = reshape(x, (x.size,))
        result = call_ufunc(np.sqrt, sum_axes(_squared_abs(flat), (0,)).with_kind("scalar"))
        return _keep(result, x.shape, tuple(range(x.ndim)), keepdims)
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if not isinstance(axis, tuple) else axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, normalize_axes(axes[0], x.ndim)[0], keepdims)
    if len(axes) == 2:
        row, col = (normalize_axes(a, x.ndim)[0] for a in axes)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, row, col, keepdims)
    raise ValueError("Improper number of dimensions to norm.")

