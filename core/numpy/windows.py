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
- products (`@`, dot, matmul, outer, inner, vdot): zeros outside the span of the contracted axis
  (a float matrix window times a vector: BLAS's product of the window alone, window_matvec);
- writes (`x[:i] = v`, `A[i, :i + 1] *= a`): a select between the new and the old values.

So the compiled program gives NumPy's numbers at a cost that does not depend on the index.
Anything else on such an array (its shape, np.concatenate, indexing it further) is refused,
naming the line. A Window is not a Tracer on purpose: an operation that does not know about
its span must never see the whole axis as if it were the array.
"""
from __future__ import annotations

import numpy as np

from ..primitives import select_p, window_dot_p, window_matvec_p
from ..primitives.window_products import FLOATS
from ..tracing import Tracer, bind, caller_source, current_trace
from .base import as_kind, convert, ensure_tracer, normalize_axes, unsupported
from .indexing import fit_value
from .masked_writes import scatter_where
from .products import matmul, np_dot
from .reductions import mean_dtypes, np_all, np_any, np_max, np_min, np_prod, np_sum
from .shape import np_transpose
from .spans import (Span, align, as_int64, mask_of, masked, require_equal, shifted,
                    subtract)
from .ufuncs import call_ufunc

# NumPy functions a Window takes (filled by `window_functions`, which builds on this module).
WINDOW_FUNCTIONS: dict = {}
# products computed otherwise than masked, each (fn, a, b) -> result or None (`segments`)
PRODUCTS: list = []


class Window:
    """An array of traced length: `data` holds the whole of each windowed axis; `spans[d]` is
    the Span of axis d (None for an axis of static length)."""
    __array_priority__ = 2000
    __psc_window__ = True

    def __init__(self, data: Tracer, spans: tuple[Span | None, ...], text: str):
        self.data = data
        self.spans = tuple(spans)
        self.text = text
        self.source: tuple | None = None     # (array, index) it was read from, if read
        self.written: int | None = None      # its buffer's version after it was written
        self.made_at = caller_source()        # the user's line that made it

    # static facts ------------------------------------------------------------------------
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)

    def __repr__(self) -> str:
        return f"Window<{self.data.aval} of traced length: {self.text}>"

    def refuse(self, what: str, at_creation: bool = False):
        """Refused at the user's current line (at_creation: at the line that made it, for a
        use after the code ended, such as returning it)."""
        error = unsupported(
            f"{what} of {self.text}, whose length depends on a traced value (a loop index, "
            "or an integer the program takes as an input)",
            "psc_jit compiles such a slice in elementwise arithmetic, sum/prod/max/min/mean/"
            "any/all, @, dot, outer and assignment to a slice of the same length")
        error.needed = tuple(b.ir_var for span in self.spans if span is not None
                             for b in (span.lo, span.hi) if isinstance(b, Tracer))
        if at_creation and self.made_at is not None:
            error.source = self.made_at
        raise error

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
    for product in PRODUCTS:
        result = product(fn, a, b)
        if result is not None:
            return result
    a_ndim, b_ndim = np.ndim(a) if not isinstance(a, (Window, Tracer)) else a.ndim, \
        np.ndim(b) if not isinstance(b, (Window, Tracer)) else b.ndim
    if not (1 <= a_ndim <= 2 and 1 <= b_ndim <= 2):
        (a if isinstance(a, Window) else b).refuse("a product of arrays with more than 2 axes")
    a_axis, b_axis = a_ndim - 1, 0 if b_ndim == 1 else b_ndim - 2
    a_op, b_op = window_parts(a), window_parts(b)
    a_op, b_op, span = _align_contracted(a_op, a_axis, b_op, b_axis)
    if (a_ndim, b_ndim) in ((2, 1), (1, 2)):
        product = _window_matvec(a_op, b_op, span, [a, b])
        if product is not None:
            return product
    if (a_ndim, b_ndim) == (1, 1) and span is not None:
        product = _window_dot(a_op[0], b_op[0], span)
        if product is not None:
            return product
    a_data = masked(a_op[0], _only(a_op[1], a_axis, span), 0, (a_axis,))
    b_data = masked(b_op[0], _only(b_op[1], b_axis, span), 0, (b_axis,))
    result = fn(a_data, b_data)
    spans = tuple(s for d, s in enumerate(a_op[1]) if d != a_axis) + tuple(
        s for d, s in enumerate(b_op[1]) if d != b_axis)
    return wrap(result, spans, [a, b])


def _window_matvec(a_op, b_op, span, inputs):
    """A float matrix window times a vector (or a vector times one) as window_matvec: the
    product of the window alone, not of the masked whole matrix, with the span of the
    matrix's other axis. None for other dtypes, or when the matrix has no span (a vector
    window times a whole matrix)."""
    (a_data, a_spans), (b_data, b_spans) = a_op, b_op
    transposed = a_data.ndim == 1
    (matrix, spans), vector = ((b_data, b_spans), a_data) if transposed else \
        ((a_data, a_spans), b_data)
    if matrix.dtype != vector.dtype or matrix.dtype not in FLOATS or \
            all(s is None for s in spans):
        return None
    out_axis = 1 if transposed else 0
    out = spans[out_axis] or Span(0, matrix.shape[out_axis])
    k = span or Span(0, vector.shape[0])
    bounds = [ensure_tracer(as_int64(v)) for v in (out.lo, out.hi, k.lo, k.hi)]
    product = bind(window_matvec_p, matrix, vector, *bounds, transposed=transposed)
    return wrap(as_kind(product, "array"), (spans[out_axis],), inputs)


def _window_dot(u, v, span):
    """Two float vectors of one dtype, dotted over their common span as window_dot: the
    span's elements alone, not the whole vectors masked. None for other dtypes."""
    if u.dtype != v.dtype or u.dtype not in FLOATS:
        return None
    bounds = [ensure_tracer(as_int64(b)) for b in (span.lo, span.hi)]
    return as_kind(bind(window_dot_p, u, v, *bounds, lines=(None, None)), "scalar")


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
    if own is None or not own.same(span):
        if own is None or not own.same_length(span):
            require_equal(span.length(), own.length() if own is not None else data.shape[axis],
                          "matmul: Input operand 1 has a mismatch in its core dimension 0 (a "
                          "slice of length {} and another length)")
        data = shifted(data, axis, subtract(own.lo if own is not None else 0, span.lo), size)
    elif data.shape[axis] != size:
        data = shifted(data, axis, 0, size)
    spans = tuple(span if d == axis else s for d, s in enumerate(spans))
    return ref_op, (data, spans), span


def write(target: Window, value):
    """target's elements (inside its spans) replaced by value: a scatter into the array
    target's data is a view of (`masked_writes`), or a select into target's data."""
    datas, _ = align([target, value], into=True)
    new = fit_value(datas[1], target.data.shape, target.dtype)
    mask = mask_of(target.data, target.spans)
    if not scatter_where(target.data, mask, ensure_tracer(new)):
        target.data.assign(as_kind(bind(select_p, mask, new, target.data), "array"))
    target.written = target.data._buffer.version
    return target
