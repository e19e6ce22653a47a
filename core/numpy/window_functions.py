"""NumPy functions on arrays of traced length (`windows.Window`): reductions, products, outer,
where, the vector 2-norm, copy and transpose; and `Gone`, what a name holds after a rolled loop
whose body left such an array in it."""
from __future__ import annotations

import numpy as np

from .base import as_kind, normalize_axes, unsupported
from .shape import np_flip
from .products import matmul, np_dot, np_outer
from .reductions import np_all, np_any, np_max, np_min, np_prod, np_sum
from .ufuncs import call_ufunc, np_where
from .spans import align, shifted, subtract
from .windows import (WINDOW_FUNCTIONS, Window, contract, elementwise, mean, reduce, window_parts,
                      wrap)


def outer(a, b, out=None):
    if out is not None:
        (a if isinstance(a, Window) else b).refuse("np.outer(..., out=)")
    a_data, a_spans = window_parts(a)
    b_data, b_spans = window_parts(b)
    if a_data.ndim != 1 or b_data.ndim != 1:
        (a if isinstance(a, Window) else b).refuse("np.outer of arrays with more than 1 axis")
    return wrap(np_outer(a_data, b_data), (a_spans[0], b_spans[0]), [a, b])


def _where(condition, x=None, y=None):
    if x is None or y is None:
        next(v for v in (condition, x, y) if isinstance(v, Window)).refuse(
            "np.where(condition) (the indices)")
    datas, spans = align([condition, x, y])
    return wrap(np_where(*datas), spans, [condition, x, y])


def _norm(x, *args, keepdims=False, **kwargs):
    if any(a is not None for a in args) or any(v is not None for v in kwargs.values()) \
            or x.ndim != 1:
        x.refuse("np.linalg.norm other than the 2-norm of a vector")
    squared = elementwise(np.absolute, (x,)) if x.dtype.kind == "c" else x
    total = reduce(np_sum, elementwise(np.multiply, (squared, squared)), None, keepdims, 0)
    return call_ufunc(np.sqrt, total)


def _vector_product(a, b, conjugate: bool):
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        next(v for v in (a, b) if isinstance(v, Window)).refuse(
            "np.inner or np.vdot of arrays with more than 1 axis")
    if conjugate and np.dtype(getattr(a, "dtype", np.float64)).kind == "c":
        a = elementwise(np.conjugate, (a,))
    return contract(np_dot, a, b)


def _reduction(fn, identity):
    def reduction(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if out is not None or kwargs:
            a.refuse(f"np.{fn.__name__[3:]}(..., out= or where=)")
        extra = {"dtype": dtype} if dtype is not None else {}
        return reduce(fn, a, axis, keepdims, identity, **extra)
    return reduction


def _extremum(fn, identity):
    def extremum(a, axis=None, out=None, keepdims=False, **kwargs):
        if out is not None or kwargs:
            a.refuse(f"np.{fn.__name__[3:]}(..., out= or where=)")
        return reduce(fn, a, axis, keepdims, identity)
    return extremum


def _flip(m, axis=None):
    """The window reversed along its axes: reversed whole, then shifted so that its span holds
    its own elements backwards (position p holds what lo + hi - 1 - p held)."""
    axes = normalize_axes(axis, m.ndim)
    data = np_flip(m.data, axis=axes)
    for a in axes:
        span = m.spans[a]
        if span is not None:
            n = m.data.shape[a]
            offset = subtract(subtract(n, span.lo), span.hi)
            data = shifted(data, a, offset, n)
    return _Flipped(as_kind(data, "array"), m.spans, f"np.flip({m.text})")


class _Flipped(Window):
    """np.flip of a window: computed anew, where NumPy gives a view, so a write into it (which
    NumPy would make into the array under it) is refused."""

    def __setitem__(self, idx, value):
        self.refuse("writing into")


def _refuse_writing(self, other):
    self.refuse("an in-place operation on")


for _name in "add sub mul truediv floordiv mod pow and or xor matmul".split():
    setattr(_Flipped, f"__i{_name}__", _refuse_writing)


WINDOW_FUNCTIONS.update({
    np.sum: _reduction(np_sum, 0), np.prod: _reduction(np_prod, 1),
    np.any: _extremum(np_any, False), np.all: _extremum(np_all, True),
    np.max: _extremum(np_max, "min"), np.amax: _extremum(np_max, "min"),
    np.min: _extremum(np_min, "max"), np.amin: _extremum(np_min, "max"),
    np.mean: lambda a, axis=None, dtype=None, out=None, keepdims=False: mean(
        a, axis, dtype, keepdims),
    np.dot: lambda a, b, out=None: contract(np_dot, a, b),
    np.matmul: lambda a, b, **kw: contract(matmul, a, b),
    np.inner: lambda a, b: _vector_product(a, b, conjugate=False),
    np.vdot: lambda a, b: _vector_product(a, b, conjugate=True),
    np.outer: outer, np.where: _where, np.linalg.norm: _norm,
    np.copy: lambda a, **kw: a.copy(),
    np.transpose: lambda a, axes=None: a.transpose(*(axes or ())),
    np.flip: _flip,
})


class Gone:
    """What a name holds after a rolled loop whose body left an array of traced length in it:
    its value after the loop is not computed, and any use of it says so."""
    __array_priority__ = 2000
    __psc_window__ = True

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.text} after the loop>"

    def refuse(self, *_args, **_kwargs):
        raise unsupported(
            f"using, after the loop, a name the loop body bound to {self.text} (its length "
            "depends on the loop index)", "compute that slice again after the loop")

    def __getattr__(self, name: str):
        if name.startswith("_"):          # probes (hasattr(v, "__closure__")) see nothing
            raise AttributeError(name)
        self.refuse()


for _name in ("add sub mul truediv floordiv mod pow matmul and or xor lt le gt ge eq ne neg pos "
              "abs invert getitem setitem len iter bool array array_ufunc array_function "
              "float int index").split():
    setattr(Gone, f"__{_name}__", Gone.refuse)
    if _name in ("add sub mul truediv floordiv mod pow matmul and or xor".split()):
        setattr(Gone, f"__r{_name}__", Gone.refuse)
