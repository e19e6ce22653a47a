"""`x[mask]` for a traced boolean mask: a selection whose length depends on the data.

NumPy's `x[mask]` is a new array of `count_nonzero(mask)` elements. Its length is not known
at trace time, so it cannot be a Tracer (every tracer has a static shape). It is a
`MaskedSelection` instead: x's values (all of them, with x's shape) and the mask. The things
whose result does not depend on that length compile exactly:

- reductions over the selected axis: `x[m].sum()`, `.mean()`, `.max()`, `.min()`, `.prod()`,
  `.any()`, `.all()`, `.var()`, `.std()`, `np.count_nonzero(x[m])` (masked reductions: the
  unselected elements replaced by the reduction's identity; mean = masked sum / count; max
  and min of an empty selection raise NumPy's ValueError at run time);
- elementwise arithmetic on selections of one mask, with scalars and with arrays that
  broadcast along the other axes: `np.abs(x[m] - 1.0).max()`; the result is a selection;
- `x[m] = v`, `x[m] op= v` and `y[m] = f(x[m])` (`indexing.setitem`): a select.

Everything else (returning it, its len or shape, sorting it, printing it) needs its length
and is refused with the line, saying what compiles instead.

A selection is written in *selection coordinates* (its axes as NumPy's result has them: the
`lead` axes before the mask's, one axis for the selected elements, then the rest) and its
data in *data coordinates* (the mask's axes in place of the selected axis).
"""
from __future__ import annotations

import numpy as np

from ..ir import SourceInfo
from ..primitives import reduce_sums_p
from ..tracing import (Tracer, UnsupportedError, bind, caller_source, current_trace,
                       source_line)
from .base import (as_kind, broadcast_to, convert, normalize_axes, numpy_name, real_part,
                   reshape, shape_of)
from .reductions import mean_dtypes, np_all, np_any, np_max, np_min, np_prod, np_sum
from .ufuncs import COMPARISON_UFUNCS, OPERATOR_UFUNCS, _check_out, call_ufunc, np_where

ESCAPE_HINT = ("reduce it (x[mask].sum(), .mean(), .max(), np.count_nonzero(mask)), assign "
               "through it (x[mask] = v), or keep the shape with np.where(mask, x, fill)")


class MaskedSelection:
    """x[mask] for a traced boolean mask: data (x's values, x's shape) and the mask, which
    covers data's axes lead .. lead + mask.ndim - 1."""
    __array_priority__ = 2000

    def __init__(self, data: Tracer, mask: Tracer, lead: int, made_at: SourceInfo | None):
        self.data = data
        self.mask = mask
        self.lead = lead
        self.made_at = made_at

    # static facts --------------------------------------------------------------------------
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim - self.mask.ndim + 1)

    @property
    def rest(self) -> tuple[int, ...]:
        return self.data.shape[self.lead + self.mask.ndim:]

    def same_mask(self, other: MaskedSelection) -> bool:
        """The same mask: one variable, or one computation made twice (`a[a > 0] =
        a[a > 0] ** -1.5`)."""
        if self.lead != other.lead or self.mask.shape != other.mask.shape:
            return False
        trace = current_trace()
        return self.mask.ir_var is other.mask.ir_var or (
            trace is not None and trace.same_value(self.mask.ir_var, other.mask.ir_var))

    def mask_in_data(self) -> Tracer:
        """The mask broadcast to data's shape."""
        shape = (1,) * self.lead + self.mask.shape + (1,) * len(self.rest)
        return reshape(self.mask, shape)

    # what needs the length: refused --------------------------------------------------------
    def refuse(self, what: str, hint: str = ESCAPE_HINT, at_creation: bool = False
               ) -> UnsupportedError:
        """The error for a use that needs the length: at the current line of the user's code
        (or, at_creation, at the line that made the selection, saying nothing more)."""
        made = ""
        if at_creation:
            return UnsupportedError(f"{what} a boolean-mask selection x[mask], whose length "
                                    "depends on the data: psc_jit does not compile that",
                                    self.made_at, hint)
        if self.made_at is not None:
            text = source_line(self.made_at)
            made = f" (made on line {self.made_at.line}" + (f": '{text}')" if text else ")")
        return UnsupportedError(
            f"{what}: the length of a boolean-mask selection x[mask]{made} depends on the "
            "data, and psc_jit compiles only what does not need it", caller_source(), hint)

    @property
    def shape(self):
        raise self.refuse("x[mask].shape")

    @property
    def size(self):
        raise self.refuse("x[mask].size")

    def __len__(self):
        raise self.refuse("len(x[mask])")

    def __iter__(self):
        raise self.refuse("iterating over x[mask]")

    def __getitem__(self, idx):
        raise self.refuse("indexing x[mask][...]")

    def __setitem__(self, idx, value):
        raise self.refuse("assigning into x[mask][...] (a copy)")

    def __bool__(self):
        raise self.refuse("the truth value of x[mask]")

    def __array__(self, dtype=None, copy=None):
        raise self.refuse("np.asarray(x[mask])")

    def __repr__(self):
        return f"MaskedSelection<{self.data.aval} where {self.mask.aval}>"

    def __str__(self):
        raise self.refuse("printing x[mask]")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise self.refuse(f"x[mask].{name}")

    # NumPy's protocols -----------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None:
            raise self.refuse(f"np.{ufunc.__name__}.{method}" if method != "__call__"
                              else f"np.{ufunc.__name__}(..., out=...)")
        return elementwise_on_selection(ufunc, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        impl = SELECTION_FUNCTIONS.get(func)
        if impl is None:
            raise self.refuse(numpy_name(func))
        return impl(*args, **kwargs)


def select_masked(x: Tracer, mask: Tracer, lead: int) -> MaskedSelection:
    """x[(:,) * lead + (mask,)]: a copy of x's current values and the mask."""
    return MaskedSelection(x.detached("array"), mask, lead, caller_source())


# -- operands in data coordinates -------------------------------------------------------------

def in_data_coordinates(value, sel: MaskedSelection, hint: str = ESCAPE_HINT):
    """value (broadcast against the selection as NumPy would) reshaped to broadcast against
    sel.data: a selection of the same mask gives its data; an array must have length 1 (or
    none) along the selected axis, since that axis' length depends on the data."""
    if isinstance(value, MaskedSelection):
        if not value.same_mask(sel):
            raise sel.refuse("combining x[mask] with a selection by another mask", hint)
        return value.data
    shape = tuple(shape_of(value))
    padded = (1,) * (sel.ndim - len(shape)) + shape
    if len(shape) > sel.ndim or padded[sel.lead] != 1:
        raise sel.refuse(f"combining x[mask] with an array of shape {shape}", hint)
    new_shape = padded[:sel.lead] + (1,) * sel.mask.ndim + padded[sel.lead + 1:]
    if np.ndim(value) == 0 and (not isinstance(value, Tracer) or value.kind == "python"):
        return value                     # keep Python scalars weak
    return reshape(value if isinstance(value, Tracer) else np.asarray(value), new_shape)


def elementwise_on_selection(ufunc, inputs, kwargs):
    sel = next(x for x in inputs if isinstance(x, MaskedSelection))
    operands = [in_data_coordinates(x, sel) for x in inputs]
    result = call_ufunc(ufunc, *operands, **kwargs)
    if isinstance(result, tuple):
        return tuple(MaskedSelection(as_kind(r, "array"), sel.mask, sel.lead, sel.made_at)
                     for r in result)
    return MaskedSelection(as_kind(result, "array"), sel.mask, sel.lead, sel.made_at)


def _binary(ufunc, reflected=False):
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = np.asarray(other)
        args = (other, self) if reflected else (self, other)
        return elementwise_on_selection(ufunc, args, {})
    return method


def _inplace(ufunc):
    """`x[m] op= v` makes `tmp = x[m]; tmp op= v; x[m] = tmp`: tmp keeps its dtype (NumPy's
    same_kind rule for an output operand), then setitem writes it back."""
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = np.asarray(other)
        _check_out(ufunc, (self.data, in_data_coordinates(other, self)), self.data, "same_kind")
        result = elementwise_on_selection(ufunc, (self, other), {})
        return MaskedSelection(as_kind(convert(result.data, self.dtype), "array"), self.mask,
                               self.lead, self.made_at)
    return method


for _name, _ufunc in OPERATOR_UFUNCS.items():
    setattr(MaskedSelection, f"__{_name}__", _binary(_ufunc))
    setattr(MaskedSelection, f"__r{_name}__", _binary(_ufunc, reflected=True))
    setattr(MaskedSelection, f"__i{_name}__", _inplace(_ufunc))
for _name, _ufunc in COMPARISON_UFUNCS.items():
    setattr(MaskedSelection, f"__{_name}__", _binary(_ufunc))
MaskedSelection.__hash__ = object.__hash__
MaskedSelection.__neg__ = lambda self: elementwise_on_selection(np.negative, (self,), {})
MaskedSelection.__pos__ = lambda self: elementwise_on_selection(np.positive, (self,), {})
MaskedSelection.__abs__ = lambda self: elementwise_on_selection(np.absolute, (self,), {})
MaskedSelection.__invert__ = lambda self: elementwise_on_selection(np.invert, (self,), {})


# -- masked reductions ------------------------------------------------------------------------

def _data_axes(sel: MaskedSelection, axis) -> tuple[int, ...]:
    """The axes of sel.data that reducing the selection over `axis` reduces. The selected
    axis must be among them: otherwise the result would have the data-dependent length."""
    axes = normalize_axes(axis, sel.ndim)
    if sel.lead not in axes:
        raise sel.refuse(f"a reduction over axis={axis}, which keeps the selected axis")
    k = sel.mask.ndim
    out = []
    for a in axes:
        if a < sel.lead:
            out.append(a)
        elif a == sel.lead:
            out.extend(range(sel.lead, sel.lead + k))
        else:
            out.append(a + k - 1)
    return tuple(sorted(out))


def _finish(sel: MaskedSelection, result: Tracer, data_axes, axis, keepdims: bool):
    """A reduction of sel.data over data_axes, kept as length-1 axes, in selection
    coordinates (the mask's axes become the selected axis)."""
    if keepdims:
        axes = normalize_axes(axis, sel.ndim)
        k = sel.mask.ndim
        shape = list(result.shape[:sel.lead]) + [1] + list(result.shape[sel.lead + k:])
        shape = [1 if i in axes else d for i, d in enumerate(shape)]
        return as_kind(reshape(result, tuple(shape)), "array")
    result = reshape(result, tuple(d for i, d in enumerate(result.shape) if i not in data_axes))
    return as_kind(result, "array" if result.ndim else "scalar")


def _filled(sel: MaskedSelection, data: Tracer, fill) -> Tracer:
    return np_where(sel.mask_in_data(), data, np.asarray(fill, data.dtype))


def _selected_count(sel: MaskedSelection, axes) -> Tracer:
    """How many elements each reduction takes: selected mask elements times the static
    lengths of the other reduced axes (int64)."""
    others = int(np.prod([sel.data.shape[a] for a in axes
                          if not sel.lead <= a < sel.lead + sel.mask.ndim], dtype=np.int64))
    count = convert(np_sum(sel.mask, dtype=np.float64), np.int64)   # see count_true
    return call_ufunc(np.multiply, count, np.int64(others)) if others != 1 else count


def _static_empty(sel: MaskedSelection, axes) -> bool:
    return any(sel.data.shape[a] == 0 for a in axes
               if not sel.lead <= a < sel.lead + sel.mask.ndim)


def _sum_like(reducer, identity):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, **extras):
        _no_extras(a, out, extras)
        axes = _data_axes(a, axis)
        filled = _filled(a, a.data, identity(a.dtype))
        return _finish(a, reducer(filled, axes, dtype=dtype), axes, axis, keepdims)
    return reduce


def _no_extras(sel, out, extras):
    if out is not None or extras:
        names = (["out"] if out is not None else []) + list(extras)
        raise sel.refuse(f"a reduction with {', '.join(names)}=")


def _extreme_value(dtype: np.dtype, largest: bool):
    """The largest (or smallest) value of dtype: min's (max's) identity."""
    if dtype == np.bool_:
        return largest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if largest else info.min
    return np.inf if largest else -np.inf


def _extremum(reducer, name: str, identity_is_largest: bool):
    def reduce(a, axis=None, out=None, keepdims=False, **extras):
        _no_extras(a, out, extras)
        if a.dtype.kind == "c":
            raise a.refuse(f"np.{name[:3]} of a complex selection")
        axes = _data_axes(a, axis)
        if _static_empty(a, axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        count = _selected_count(a, axes)
        current_trace().require(
            call_ufunc(np.greater, count, np.int64(0)), count,
            f"zero-size array to reduction operation {name} which has no identity",
            ValueError)
        filled = _filled(a, a.data, _extreme_value(a.dtype, identity_is_largest))
        return _finish(a, reducer(filled, axis=axes, keepdims=True), axes, axis, keepdims)
    return reduce


def _sum_and_count(sel: MaskedSelection, data: Tracer, axes) -> tuple[Tracer, Tracer]:
    """The sum of the selected elements of data (sel.data's shape) over `axes`, and how many
    each sum took (int64), kept as length-1 axes: one reduction of both (reduce_sums: XLA:CPU
    fuses the mask into a reduction of two results, not into a lone sum)."""
    counted = convert(broadcast_to(sel.mask_in_data(), data.shape), np.int64)
    total, count = bind(reduce_sums_p, _filled(sel, data, 0), counted, axes=axes)
    kept = tuple(1 if d in axes else n for d, n in enumerate(data.shape))
    return reshape(total, kept), reshape(count, kept)


def _masked_sum(a, axis=None, dtype=None, out=None, keepdims=False, **extras):
    """The sum; its count, computed in the same pass, makes an empty selection's sum the zero
    of the sum's dtype, as NumPy's sum of nothing is (and keeps the reduction one pass)."""
    _no_extras(a, out, extras)
    axes = _data_axes(a, axis)
    summed = np.sum(np.zeros(1, a.dtype), dtype=dtype).dtype
    total, count = _sum_and_count(a, convert(a.data, summed), axes)
    total = np_where(call_ufunc(np.greater, count, np.int64(0)), total, np.zeros((), summed))
    return _finish(a, total, axes, axis, keepdims)


def _masked_mean(a, axis=None, dtype=None, out=None, keepdims=False, **extras):
    _no_extras(a, out, extras)
    axes = _data_axes(a, axis)
    acc, result_dtype = mean_dtypes(a.dtype, dtype)
    total, count = _sum_and_count(a, convert(a.data, acc), axes)
    mean = call_ufunc(np.divide, total, convert(count, acc))
    return _finish(a, convert(mean, result_dtype), axes, axis, keepdims)


def _masked_var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **extras):
    """Two passes, as NumPy's: the mean, then the squared distances from it; each sums its
    count too (the second one's divides: used, it keeps that sum one pass as well)."""
    _no_extras(a, out, extras)
    axes = _data_axes(a, axis)
    acc, result_dtype = mean_dtypes(a.dtype, dtype)
    data = convert(a.data, acc)
    total, count = _sum_and_count(a, data, axes)
    centered = call_ufunc(np.subtract, data, call_ufunc(np.divide, total, convert(count, acc)))
    if acc.kind == "c":
        squared = real_part(call_ufunc(np.multiply, centered, call_ufunc(np.conjugate, centered)))
    else:
        squared = call_ufunc(np.multiply, centered, centered)
    spread, count = _sum_and_count(a, squared, axes)
    divisor = call_ufunc(np.maximum, call_ufunc(np.subtract, convert(count, squared.dtype),
                                                ddof), 0)
    var = call_ufunc(np.divide, spread, divisor)
    var = convert(var, np.real(np.zeros((), result_dtype)).dtype)
    return _finish(a, var, axes, axis, keepdims)


def _masked_std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **extras):
    return call_ufunc(np.sqrt, _masked_var(a, axis, dtype, out, ddof, keepdims, **extras))


def _masked_count_nonzero(a, axis=None, *, keepdims=False):
    nonzero = MaskedSelection(as_kind(convert(a.data, np.bool_), "array"), a.mask, a.lead,
                              a.made_at)
    return _sum_like(lambda x, axes, dtype: np_sum(x, axis=axes, dtype=np.intp, keepdims=True),
                     lambda _: False)(nonzero, axis, keepdims=keepdims)


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if not np.can_cast(self.dtype, dtype, casting=casting):
        raise TypeError(f"Cannot cast array data from {self.dtype} to {np.dtype(dtype)} "
                        f"according to the rule '{casting}'")
    return MaskedSelection(as_kind(convert(self.data, dtype), "array"), self.mask, self.lead,
                           self.made_at)


def _sum(x, axes, dtype=None):
    return np_sum(x, axis=axes, dtype=dtype, keepdims=True)


def _prod(x, axes, dtype=None):
    return np_prod(x, axis=axes, dtype=dtype, keepdims=True)


def _logical(reducer, identity: bool):
    def reduce(a, axis=None, out=None, keepdims=False, **extras):
        _no_extras(a, out, extras)
        axes = _data_axes(a, axis)
        filled = _filled(a, convert(a.data, bool), identity)
        return _finish(a, reducer(filled, axis=axes, keepdims=True), axes, axis, keepdims)
    return reduce


SELECTION_FUNCTIONS = {
    np.sum: _masked_sum,
    np.prod: _sum_like(_prod, lambda dtype: 1),
    np.max: _extremum(np_max, "maximum", identity_is_largest=False),
    np.amax: _extremum(np_max, "maximum", identity_is_largest=False),
    np.min: _extremum(np_min, "minimum", identity_is_largest=True),
    np.amin: _extremum(np_min, "minimum", identity_is_largest=True),
    np.any: _logical(np_any, False),
    np.all: _logical(np_all, True),
    np.mean: _masked_mean,
    np.var: _masked_var,
    np.std: _masked_std,
    np.count_nonzero: _masked_count_nonzero,
    np.ndim: lambda a: a.ndim,
    np.result_type: lambda *xs: np.result_type(*(x.dtype if isinstance(x, MaskedSelection)
                                                 else x for x in xs)),
}

for _name, _fn in [("sum", np.sum), ("prod", np.prod), ("max", np.max), ("min", np.min),
                   ("any", np.any), ("all", np.all), ("mean", np.mean), ("var", np.var),
                   ("std", np.std)]:
    setattr(MaskedSelection, _name, SELECTION_FUNCTIONS[_fn])
MaskedSelection.astype = _astype
MaskedSelection.copy = lambda self, order="C": self
MaskedSelection.conj = MaskedSelection.conjugate = (
    lambda self: elementwise_on_selection(np.conjugate, (self,), {}))
MaskedSelection.real = property(lambda self: MaskedSelection(
    as_kind(real_part(self.data), "array"), self.mask, self.lead, self.made_at))

