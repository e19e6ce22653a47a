"""Products over a segment whose bounds the data decide: a CSR row,
`A_val[A_row[i]:A_row[i + 1]] @ x[A_col[A_row[i]:A_row[i + 1]]]`.

A `Window` computes on the whole axis and masks what lies outside its span, at a cost that does
not depend on the span. Where the span's bounds are read from an array, nothing bounds its
length when the program is traced, and a loop over CSR rows then did the work of every
nonzero on every row (bench/loops.py's spmv ran at 0.07x NumPy). Here such a product runs
as a loop over the segment alone, `acc = acc + a[k] * b[k]` for k in [lo, hi), and an array
indexed by such a window (`x[cols]`) is gathered one element at a time inside that loop, so
that a pass costs what its segment holds.

The sum runs in segment order (NumPy's BLAS dot sums in another order: the results may
differ in the last bits, as any float sum in another order does). The loop itself is control
flow, a layer above: `core/control` registers its `fori_loop` here.
"""
from __future__ import annotations

import numpy as np

from ..primitives import dynamic_slice_p
from ..tracing import Tracer, bind, current_trace
from .affine import interval
from .base import as_kind, convert, ensure_tracer, reshape
from .spans import Span, as_int64, mask_of, require_equal
from .ufuncs import call_ufunc, np_where
from .products import matmul, np_dot
from .windows import PRODUCTS, Window

_FORI_LOOP: list = []     # control's fori_loop(lower, upper, body_fun, init_val), once registered
# dtypes whose dot is the plain sum of products in the segment loop (NumPy's float16 and bool
# dots have their own accumulations: left to the masked product)
SUMMED_KINDS = "iufc"


def register_segment_loop(fori_loop) -> None:
    _FORI_LOOP[:] = [fori_loop]


class GatheredWindow(Window):
    """x[w] for a 1-d integer window w: the elements are gathered when they are used, one at a
    time by a segment loop, or the whole axis at once (the masked gather) by anything else.
    Outside w's span the index is 0, so that only the span's indices are checked against x's
    length (NumPy's IndexError) and nothing outside is ever observed."""

    def __init__(self, x: Tracer, index: Window):
        self.x, self.index = x, index
        self._whole, self._trace = None, current_trace()
        super().__init__(None, index.spans + (None,) * (x.ndim - 1),
                         f"an array indexed by {index.text}")

    @property
    def data(self) -> Tracer:
        """The gather of the whole axis (made where it is first needed, once per trace)."""
        if self._whole is not None and current_trace() is self._trace:
            return self._whole
        inside = mask_of(self.index.data, self.index.spans)
        whole = self.x[np_where(inside, self.index.data, np.int64(0))]
        if current_trace() is self._trace:
            self._whole = whole
        return whole

    @data.setter
    def data(self, value) -> None:
        if value is not None:
            self._whole = value

    @property
    def dtype(self):
        return self.x.dtype

    @property
    def ndim(self):
        return self.x.ndim

    def whole(self) -> Window:
        """The gather of the whole axis, made now, as a plain Window."""
        return Window(self.data, self.spans, self.text)

    def element(self, k):
        """x at the index at position k (checked against x's length, as NumPy does)."""
        return self.x[_at(self.index.data, k)]


def element(window: Window, k):
    """window's element at position k of its whole axis (inside its span: no check)."""
    if isinstance(window, GatheredWindow):
        return window.element(k)
    return _at(window.data, k)


def _axis_length(window: Window) -> int:
    """The length of the whole axis the window's segment lies in."""
    return (window.index if isinstance(window, GatheredWindow) else window).data.shape[0]


def _at(data: Tracer, k):
    """data[k] for a 1-d array and a position k known to lie inside it."""
    one = bind(dynamic_slice_p, data, k, slice_sizes=(1,))
    return as_kind(reshape(one, ()), "array")


def data_bound(span: Span) -> bool:
    """Whether nothing known when tracing bounds the span's length (its bounds were read from
    an array), as opposed to `x[:i]` in a loop over i, whose length the loop's range bounds."""
    length = span.raw_length()
    return isinstance(length, Tracer) and interval(length) is None


def segment_product(fn, a, b):
    """a @ b (or np.dot) of two 1-d windows whose length the data decide, as a loop over the
    segment; None where that does not apply (the masked product then runs)."""
    if not _FORI_LOOP or fn not in (matmul, np_dot):
        return None
    if not (isinstance(a, Window) and isinstance(b, Window)) or a.ndim != 1 or b.ndim != 1:
        return None
    a_span, b_span = a.spans[0], b.spans[0]
    if a_span is None or b_span is None or not (data_bound(a_span) or data_bound(b_span)):
        return None
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype.kind not in SUMMED_KINDS or dtype == np.float16 or not (
            _axis_length(a) and _axis_length(b)):      # (an empty axis has only empty segments)
        return None
    if not a_span.same_length(b_span):
        require_equal(a_span.length(), b_span.length(),
                      "matmul: Input operand 1 has a mismatch in its core dimension 0 (a "
                      "slice of length {} and another length)")
    return _summed_products(a, b, dtype)


def _summed_products(a: Window, b: Window, dtype):
    """sum(a[k] * b[k]) over the segment, in its order."""
    a_lo, b_lo = as_int64(a.spans[0].lo), as_int64(b.spans[0].lo)

    def step(t, acc):
        product = call_ufunc(np.multiply, element(a, call_ufunc(np.add, a_lo, t)),
                             element(b, call_ufunc(np.add, b_lo, t)))
        return call_ufunc(np.add, acc, convert(product, dtype))
    zero = ensure_tracer(np.zeros((), dtype))
    total = _FORI_LOOP[0](np.int64(0), as_int64(a.spans[0].length()), step, zero)
    return as_kind(ensure_tracer(total), "array")


PRODUCTS.append(segment_product)
