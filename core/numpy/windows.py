"""Arrays whose length depends on a traced value: `x[:i]`, `L[j + 1:, :j]` in a rolled loop.

NumPy gives `x[:i]` the length `i`; an XLA array has a static shape. A `Window` is the whole
axis of `x` (a view of it, so it aliases `x` as NumPy's slice does) with, per such axis, the
traced span `lo <= k < hi` of the positions NumPy's slice holds. Arithmetic runs on the whole
axis, and whatever would make the positions outside the span observable masks them first
with a select (never a multiplication by zero: a NaN or inf there must not leak):

- elementwise ufuncs and operators: on the whole axis, spans kept (operands with different
  spans are shifted onto one another; lengths that cannot be proven equal are checked when
  the program runs, with NumPy's ValueError);
- reductions (sum, prod, max, min, mean, any, all): the identity outside the span;
- products (`@`, dot, matmul, outer, inner, vdot): zeros outside the span of the contracted axis;
- writes (`x[:i] = v`, `A[i, :i + 1] *= a`): a select between the new and the old values.

So the compiled program gives NumPy's numbers at a cost that does not depend on the index.
Anything else on such an array (its shape, np.concatenate, indexing it further) is refused,
naming the line. A Window is not a Tracer on purpose: an operation that does not know about
its span must never see the whole axis as if it were the array.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..primitives import dynamic_slice_p, iota_p, pad_p, select_p
from ..tracing import Tracer, bind, current_trace
from .affine import difference, same_value
from .base import as_kind, broadcast_to, convert, ensure_tracer, normalize_axes, unsupported
from .indexing import fit_value
from .products import matmul, np_dot
from .reductions import mean_dtypes, np_all, np_any, np_max, np_min, np_prod, np_sum
from .shape import np_transpose
from .ufuncs import call_ufunc

INT = np.dtype(np.int64)

# NumPy functions a Window takes (filled by `window_functions`, which builds on this module).
WINDOW_FUNCTIONS: dict = {}


@dataclass(frozen=True)
class Span:
    """The positions `lo <= k < hi` of one axis that an array of traced length holds; lo and
    hi are ints or traced int64 scalars."""
    lo: Any
    hi: Any

    def length(self):
        return _sub(self.hi, self.lo)

    def same(self, other: Span) -> bool:
        return same_value(self.lo, other.lo) and same_value(self.hi, other.hi)


class Window:
    """An array of traced length: `data` holds the whole of each windowed axis; `spans[d]` is
    the Span of axis d (None for an axis of static length)."""
    __array_priority__ = 2000
    __psc_window__ = True

    def __init__(self, data: Tracer, spans: tuple[Span | None, ...], text: str):
        self.data = data
        self.spans = tuple(spans)
        self.text = text

    # static facts ------------------------------------------------------------------------
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)

    def __repr__(self) -> str:
        return f"Window<{self.data.aval} of traced length: {self.text}>"

    def refuse(self, what: str):
        raise unsupported(
            f"{what} of {self.text}, whose length depends on a traced value (a loop index)",
            "psc_jit compiles such a slice in elementwise arithmetic, sum/prod/max/min/mean/"
            "any/all, @, dot, outer and assignment to a slice of the same length")

    shape = property(lambda self: self.refuse("the shape"))
    size = property(lambda self: self.refuse("the size"))

    def __len__(self):
        self.refuse("len()")

    def __bool__(self):
        self.refuse("the truth value")

    def __array__(self, dtype=None, copy=None):
        self.refuse("a NumPy array")

    def __iter__(self):
        self.refuse("iterating")

    def __getitem__(self, idx):
        self.refuse("indexing")

    def __setitem__(self, idx, value):
        if idx is Ellipsis or idx == slice(None):
            return write(self, value)
        self.refuse("indexing")

    # NumPy's protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None or kwargs.get(
                "where", True) is not True:
            self.refuse(f"np.{ufunc.__name__}.{method}" if method != "__call__" else
                        f"np.{ufunc.__name__}(..., out= or where=)")
        if ufunc is np.matmul:
            return contract(matmul, *inputs)
        return elementwise(ufunc, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = WINDOW_FUNCTIONS.get(func)
        if impl is None:
            self.refuse(f"np.{func.__name__}")
        return impl(*args, **kwargs)

    # methods -----------------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, keepdims=False):
        return reduce(np_sum, self, axis, keepdims, 0, dtype=dtype)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return reduce(np_prod, self, axis, keepdims, 1, dtype=dtype)

    def max(self, axis=None, keepdims=False):
        return reduce(np_max, self, axis, keepdims, "min")

    def min(self, axis=None, keepdims=False):
        return reduce(np_min, self, axis, keepdims, "max")

    def any(self, axis=None, keepdims=False):
        return reduce(np_any, self, axis, keepdims, False)

    def all(self, axis=None, keepdims=False):
        return reduce(np_all, self, axis, keepdims, True)

    def mean(self, axis=None, dtype=None, keepdims=False):
        return mean(self, axis, dtype, keepdims)

    def dot(self, other):
        return contract(np_dot, self, other)

    def copy(self):
        return Window(as_kind(self.data.detached(), "array"), self.spans, self.text)

    def astype(self, dtype, **kwargs):
        return Window(as_kind(convert(self.data, dtype), "array"), self.spans, self.text)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        order = tuple(axes) if axes else tuple(reversed(range(self.ndim)))
        return Window(np_transpose(self.data, order), tuple(self.spans[a] for a in order),
                      f"{self.text}.T")

    T = property(lambda self: self.transpose())

    def __matmul__(self, other):
        return contract(matmul, self, other)

    def __rmatmul__(self, other):
        return contract(matmul, other, self)

    def __imatmul__(self, other):
        return write(self, contract(matmul, self, other))

    def __neg__(self):
        return elementwise(np.negative, (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return elementwise(np.absolute, (self,))

    def __invert__(self):
        return elementwise(np.invert, (self,))


def _operators():
    names = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
             "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power,
             "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
    compare = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
               "eq": np.equal, "ne": np.not_equal}
    for name, ufunc in {**names, **compare}.items():
        setattr(Window, f"__{name}__", _operator(ufunc, False))
    for name, ufunc in names.items():
        setattr(Window, f"__r{name}__", _operator(ufunc, True))
        setattr(Window, f"__i{name}__", _inplace(ufunc))


def _operator(ufunc, reflected: bool):
    def method(self, other):
        return elementwise(ufunc, (other, self) if reflected else (self, other), {})
    return method


def _inplace(ufunc):
    def method(self, other):
        return write(self, elementwise(ufunc, (self, other), {}))
    return method


_operators()


# -- masks and shifts -------------------------------------------------------------------------

def _sub(a, b):
    """a - b: an int when it is one whatever the index (x[i + 1:] against x[i:])."""
    constant = difference(a, b)
    if constant is not None:
        return constant
    return call_ufunc(np.subtract, a, b)


def _int(x):
    return convert(ensure_tracer(x), INT) if isinstance(x, Tracer) else np.int64(x)


def span_mask(span: Span, shape, axis: int) -> Tracer:
    """bool[shape]: lo <= k < hi along `axis`."""
    iota = bind(iota_p, shape=tuple(shape), dtype=INT, dimension=axis)
    return call_ufunc(np.logical_and, call_ufunc(np.greater_equal, iota, _int(span.lo)),
                      call_ufunc(np.less, iota, _int(span.hi)))


def mask_of(data: Tracer, spans, axes=None) -> Tracer | None:
    """Where data holds the array's elements (only the spans of `axes`, if given)."""
    mask = None
    for axis, span in enumerate(spans):
        if span is None or (axes is not None and axis not in axes):
            continue
        here = span_mask(span, data.shape, axis)
        mask = here if mask is None else call_ufunc(np.logical_and, mask, here)
    return mask


def masked(data: Tracer, spans, fill, axes=None) -> Tracer:
    """data with `fill` outside the spans (a select: a NaN outside stays outside)."""
    mask = mask_of(data, spans, axes)
    if mask is None:
        return data
    fill = np.asarray(fill, data.dtype)
    return as_kind(bind(select_p, mask, data, broadcast_to(ensure_tracer(fill), data.shape)),
                   "array")


def shifted(data: Tracer, axis: int, offset, size: int) -> Tracer:
    """out[k] = data[k + offset] along axis for k < size (zeros where data has none)."""
    if isinstance(offset, (int, np.integer)) and offset == 0 and data.shape[axis] == size:
        return data
    pad = max(data.shape[axis], size)
    low = [0] * data.ndim
    high = [0] * data.ndim
    low[axis] = high[axis] = pad
    zero = ensure_tracer(np.zeros((), data.dtype))
    padded = bind(pad_p, data, zero, low=tuple(low), high=tuple(high),
                  interior=(0,) * data.ndim)
    starts = [np.int64(0)] * data.ndim
    starts[axis] = call_ufunc(np.add, _int(offset), np.int64(pad))
    sizes = list(data.shape)
    sizes[axis] = size
    return as_kind(bind(dynamic_slice_p, padded, *starts, slice_sizes=tuple(sizes)), "array")


def require_equal(a, b, message: str) -> None:
    """The program checks a == b when it runs (NumPy's ValueError otherwise)."""
    if same_value(a, b):
        return
    if not isinstance(a, Tracer) and not isinstance(b, Tracer):
        if a != b:
            raise ValueError(message.format(a))
        return
    ok = call_ufunc(np.equal, _int(a), _int(b))
    current_trace().require(ok, _int(a), message, ValueError)


# -- aligning operands ------------------------------------------------------------------------

@dataclass
class _Operand:
    data: Tracer | Any              # a tracer, or a constant
    spans: tuple                    # right-aligned to the result's axes


def _as_operand(x, ndim: int) -> _Operand:
    if isinstance(x, Window):
        return _Operand(x.data, (None,) * (ndim - x.ndim) + x.spans)
    return _Operand(x, (None,) * ndim)


def align(values) -> tuple[list, tuple]:
    """Operands brought onto common spans (the first window's on each axis): each one's data,
    shifted where its span starts elsewhere, and the result's spans."""
    ndim = max(np.ndim(v) if not isinstance(v, (Window, Tracer)) else v.ndim for v in values)
    operands = [_as_operand(v, ndim) for v in values]
    result_spans = []
    for axis in range(ndim):
        reference = next((op for op in operands if op.spans[axis] is not None), None)
        if reference is None:
            result_spans.append(None)
            continue
        result_spans.append(_align_axis(operands, axis, reference))
    return [op.data for op in operands], tuple(result_spans)


def _align_axis(operands, axis: int, reference: _Operand) -> Span:
    span = reference.spans[axis]
    size = reference.data.shape[axis - reference_offset(reference, len(reference.spans))]
    for op in operands:
        if op is reference:
            continue
        own = op.spans[axis]
        local = axis - reference_offset(op, len(op.spans))
        length = _axis_length(op, local)
        if own is None:
            if length in (None, 1):
                continue                                    # broadcast
            require_equal(span.length(), length, _mismatch(length))
            op.data = shifted(ensure_tracer(op.data), local, _sub(0, span.lo), size)
            continue
        if own.same(span):
            if op.data.shape[local] != size:
                op.data = shifted(op.data, local, 0, size)
            continue
        require_equal(span.length(), own.length(), "operands could not be broadcast together: "
                      "slices of lengths {} and another length")
        op.data = shifted(op.data, local, _sub(own.lo, span.lo), size)
    return span


def reference_offset(op: _Operand, ndim: int) -> int:
    """How many leading result axes op does not have (it is broadcast along them)."""
    return ndim - np.ndim(op.data) if not isinstance(op.data, Tracer) else ndim - op.data.ndim


def _axis_length(op: _Operand, local: int):
    if local < 0:
        return None
    shape = op.data.shape if isinstance(op.data, Tracer) else np.shape(op.data)
    return shape[local]


def _mismatch(length) -> str:
    return "operands could not be broadcast together: a slice of length {} and an axis of " \
        f"length {length}"


# -- operations -------------------------------------------------------------------------------

def elementwise(ufunc, inputs, kwargs=None):
    datas, spans = align(list(inputs))
    result = call_ufunc(ufunc, *datas, **(kwargs or {}))
    if isinstance(result, tuple):
        return tuple(Window(as_kind(r, "array"), spans, _text(inputs)) for r in result)
    return wrap(result, spans, inputs)


def wrap(result, spans, inputs):
    if all(s is None for s in spans):
        return result
    return Window(as_kind(result, "array"), spans, _text(inputs))


def _text(inputs) -> str:
    return next((x.text for x in inputs if isinstance(x, Window)), "a slice")


_IDENTITY_EXTREME = {"min": lambda d: -np.inf if d.kind == "f" else np.iinfo(d).min
                     if d.kind in "iu" else False,
                     "max": lambda d: np.inf if d.kind == "f" else np.iinfo(d).max
                     if d.kind in "iu" else True}


def reduce(fn, w, axis, keepdims, identity, **kwargs):
    """A reduction over a window: the identity outside its spans."""
    if not isinstance(w, Window):
        return fn(w, axis=axis, keepdims=keepdims, **kwargs)
    axes = normalize_axes(axis, w.ndim)
    if isinstance(identity, str):
        if w.dtype.kind == "c":
            w.refuse("the maximum or minimum of a complex array")
        for a in axes:
            if w.spans[a] is not None:
                require_nonempty(w.spans[a], fn.__name__[3:])
        identity = _IDENTITY_EXTREME[identity](w.dtype)
    data = masked(w.data, w.spans, identity, axes)
    result = fn(data, axis=axis, keepdims=keepdims, **kwargs)
    spans = tuple(None if a in axes else s for a, s in enumerate(w.spans)
                  if keepdims or a not in axes)
    return wrap(result, spans, [w])


def require_nonempty(span: Span, name: str) -> None:
    name = {"max": "maximum", "min": "minimum"}.get(name, name)
    length = span.length()
    if not isinstance(length, Tracer):
        if length <= 0:
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        return
    current_trace().require(call_ufunc(np.greater, length, 0), length,
                            f"zero-size array to reduction operation {name} which has no "
                            "identity", ValueError)


def mean(w, axis=None, dtype=None, keepdims=False):
    axes = normalize_axes(axis, w.ndim)
    accumulate, result_dtype = mean_dtypes(w.dtype, dtype)
    total = reduce(np_sum, w, axis, keepdims, 0, dtype=accumulate)
    count = 1
    for a in axes:
        span = w.spans[a]
        n = span.length() if span is not None else w.data.shape[a]
        count = count * n if not isinstance(n, Tracer) and not isinstance(count, Tracer) \
            else call_ufunc(np.multiply, count, n)
    return _divide(total, count, accumulate, result_dtype)


def _divide(total, count, accumulate, dtype):
    """total / count in the accumulator dtype, as NumPy's mean divides, then its result dtype."""
    if isinstance(count, Tracer):
        count = convert(call_ufunc(np.maximum, count, 0), accumulate)
    else:
        count = np.asarray(max(count, 0), accumulate)
    if isinstance(total, Window):
        return elementwise(np.divide, (total, count)).astype(dtype)
    return as_kind(convert(call_ufunc(np.divide, total, count), dtype), total.kind)


def contract(fn, a, b):
    """matmul/dot of 1-d or 2-d operands, at least one a window: the contracted axis aligned
    and zero outside its span in both (0 * NaN would be NaN)."""
    a_ndim, b_ndim = np.ndim(a) if not isinstance(a, (Window, Tracer)) else a.ndim, \
        np.ndim(b) if not isinstance(b, (Window, Tracer)) else b.ndim
    if not (1 <= a_ndim <= 2 and 1 <= b_ndim <= 2):
        (a if isinstance(a, Window) else b).refuse("a product of arrays with more than 2 axes")
    a_axis, b_axis = a_ndim - 1, 0 if b_ndim == 1 else b_ndim - 2
    a_op, b_op = window_parts(a), window_parts(b)
    a_op, b_op, span = _align_contracted(a_op, a_axis, b_op, b_axis)
    a_data = masked(a_op[0], _only(a_op[1], a_axis, span), 0, (a_axis,))
    b_data = masked(b_op[0], _only(b_op[1], b_axis, span), 0, (b_axis,))
    result = fn(a_data, b_data)
    spans = tuple(s for d, s in enumerate(a_op[1]) if d != a_axis) + tuple(
        s for d, s in enumerate(b_op[1]) if d != b_axis)
    return wrap(result, spans, [a, b])


def window_parts(x):
    if isinstance(x, Window):
        return x.data, x.spans
    x = ensure_tracer(x)
    return x, (None,) * x.ndim


def _only(spans, axis, span):
    return tuple(span if d == axis else None for d in range(len(spans)))


def _align_contracted(a_op, a_axis, b_op, b_axis):
    """Both operands' contracted axes on one span (a's, or b's if a has none)."""
    a_span, b_span = a_op[1][a_axis], b_op[1][b_axis]
    if a_span is None and b_span is None:
        return a_op, b_op, None
    if a_span is None:
        b_op, a_op, span = _align_to(b_op, b_axis, a_op, a_axis)
        return a_op, b_op, span
    return _align_to(a_op, a_axis, b_op, b_axis)


def _align_to(ref_op, ref_axis, op, axis):
    """op's axis brought onto ref's span on ref_axis; (ref_op, op, span)."""
    (ref_data, ref_spans), (data, spans) = ref_op, op
    span = ref_spans[ref_axis]
    size = ref_data.shape[ref_axis]
    own = spans[axis]
    if own is None:
        require_equal(span.length(), data.shape[axis], _mismatch(data.shape[axis]))
        data = shifted(data, axis, _sub(0, span.lo), size)
    elif not own.same(span):
        require_equal(span.length(), own.length(), "matmul: Input operand 1 has a mismatch in "
                      "its core dimension 0 (a slice of length {} and another length)")
        data = shifted(data, axis, _sub(own.lo, span.lo), size)
    elif data.shape[axis] != size:
        data = shifted(data, axis, 0, size)
    spans = tuple(span if d == axis else s for d, s in enumerate(spans))
    return ref_op, (data, spans), span


def write(target: Window, value):
    """target's elements (inside its spans) replaced by value: a select into target's data
    (a view of the array it was sliced from)."""
    datas, _ = align([target, value])
    new = fit_value(datas[1], target.data.shape, target.dtype)
    mask = mask_of(target.data, target.spans)
    target.data.assign(as_kind(bind(select_p, mask, new, target.data), "array"))
    return target
