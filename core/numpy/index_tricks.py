"""NumPy's conversions between flat and multi-dimensional indices on tracers (unravel_index,
ravel_multi_index), membership of values in a set (isin), and the order of rows by several
keys (lexsort).

The conversions are integer arithmetic on traced indices with a static shape; where NumPy
raises for an index outside the array, the run checks it before anything is written back
(see `checks`), with NumPy's error and message.
"""
from __future__ import annotations

import operator

import numpy as np

from ..tracing import Tracer, current_trace
from .base import (as_array, as_kind, broadcast_to, convert, ensure_tracer, implements,
                   refusing)
from .checks import outside_value, require
from .reductions import np_all
from .sorting import (np_argsort, np_searchsorted, np_sort, np_take_along_axis,
                      take_in_bounds)
from .ufuncs import call_ufunc

INDEX = np.dtype(np.int64)      # NumPy's intp here


def _dims(shape) -> tuple[int, ...]:
    if isinstance(shape, Tracer):
        raise TypeError("the shape of an index conversion must be static: a tuple of ints")
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return tuple(operator.index(d) for d in shape)


def _order(order) -> str:
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    return order


def _int_indices(x) -> Tracer:
    x = as_array(x)
    if x.dtype.kind not in "biu":
        raise TypeError("only int indices permitted")
    return convert(x, INDEX)


def _strides(dims: tuple[int, ...], order: str) -> list[int]:
    """Elements between neighbours along each axis of an array of shape dims."""
    strides, step = [0] * len(dims), 1
    for axis in (reversed(range(len(dims))) if order == "C" else range(len(dims))):
        strides[axis] = step
        step *= dims[axis]
    return strides


def _result(x: Tracer) -> Tracer:
    return as_kind(x, "scalar" if x.ndim == 0 else "array")


@implements(np.unravel_index)
def np_unravel_index(indices, shape, order="C"):
    dims, order = _dims(shape), _order(order)
    flat = _int_indices(indices)
    size = int(np.prod(dims, dtype=np.int64))
    if flat.size:
        inside = call_ufunc(np.logical_and, call_ufunc(np.greater_equal, flat, np.int64(0)),
                            call_ufunc(np.less, flat, np.int64(size)))
        current_trace().require(np_all(inside) if flat.ndim else inside,
                                outside_value(flat, inside, size),
                                f"index {{}} is out of bounds for array with size {size}",
                                ValueError)
    if size == 0:       # every index was refused: no division by a zero length
        return tuple(_result(flat) for _ in dims)
    # (the run refuses negative indices: unsigned division by constants, 3x faster in XLA)
    unsigned = convert(flat, np.dtype(np.uint64))
    out = []
    for d, stride in zip(dims, _strides(dims, order), strict=True):
        q = unsigned if stride == 1 else call_ufunc(np.floor_divide, unsigned, np.uint64(stride))
        r = q if stride * d == size else call_ufunc(np.remainder, q, np.uint64(d))
        out.append(_result(convert(r, INDEX)))
    return tuple(out)


@implements(np.ravel_multi_index)
def np_ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims, order = _dims(dims), _order(order)
    sequence = isinstance(multi_index, (tuple, list)) or \
        isinstance(multi_index, (Tracer, np.ndarray)) and multi_index.ndim > 0
    if not sequence or len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(dims) or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    coords = [_int_indices(multi_index[k]) for k in range(len(dims))]
    shape = np.broadcast_shapes(*(c.shape for c in coords))
    total = None
    for c, d, m, stride in zip(coords, dims, modes, _strides(dims, order), strict=True):
        c = broadcast_to(c, shape)
        if m == "wrap" and d:
            c = call_ufunc(np.remainder, c, np.int64(d))
        elif m == "clip":
            c = call_ufunc(np.minimum, call_ufunc(np.maximum, c, np.int64(0)),
                           np.int64(max(d - 1, 0)))
        elif c.size:
            inside = call_ufunc(np.logical_and, call_ufunc(np.greater_equal, c, np.int64(0)),
                                call_ufunc(np.less, c, np.int64(d)))
            require(np_all(inside), "invalid entry in coordinates array", ValueError)
        term = call_ufunc(np.multiply, c, np.int64(stride))
        total = term if total is None else call_ufunc(np.add, total, term)
    return _result(total)


# Up to this many test values, each element is compared with each in turn, in one fusion
# (1,000,000 int64 in 40 values: 3.9 ms, NumPy's isin 12 ms); more are sorted once and
# searched, O((n + m) log m).
COMPARED_AT_ONCE = 64


@implements(np.isin)
def np_isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    element, test = as_array(element), as_array(test_elements)
    test = test.reshape(test.size) if test.ndim != 1 else test
    if kind == "table" and not (element.dtype.kind in "biu" and test.dtype.kind in "biu"):
        raise ValueError("The 'table' method is only supported for boolean or integer arrays. "
                         "Please select 'sort' or None for kind.")
    dtype = np.result_type(element.dtype, test.dtype)
    element_c, test_c = convert(element, dtype), convert(test, dtype)
    if test.size == 0:
        found = broadcast_to(ensure_tracer(np.bool_(False)), element.shape)
    elif test.size <= COMPARED_AT_ONCE:       # one fusion: x == t[0] | x == t[1] | ...
        found = None
        for k in range(test.size):
            equal = call_ufunc(np.equal, element_c, take_in_bounds(test_c, k))
            found = equal if found is None else call_ufunc(np.logical_or, found, equal)
    else:
        ordered = np_sort(test_c)
        at = call_ufunc(np.minimum, np_searchsorted(ordered, element_c),
                        np.int64(test.size - 1))
        found = call_ufunc(np.equal, take_in_bounds(ordered, at), element_c)
    if invert:
        found = call_ufunc(np.logical_not, found)
    return as_kind(found, "array") if isinstance(found, Tracer) else found


@implements(np.lexsort)
def np_lexsort(keys, axis=-1):
    """The order that sorts by the last key, ties by the one before, ...: one stable argsort
    per key, least significant first, each of the keys taken in the order so far."""
    if isinstance(keys, Tracer):
        if keys.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        keys = [keys[k] for k in range(keys.shape[0])]
    keys = [as_array(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in keys}) != 1:
        raise ValueError("all keys need to be the same shape")
    if keys[0].ndim == 0:
        keys = [k.reshape(1) for k in keys]
    order = np_argsort(keys[0], axis=axis, stable=True)
    for key in keys[1:]:
        within = np_argsort(np_take_along_axis(key, order, axis), axis=axis, stable=True)
        order = np_take_along_axis(order, within, axis)
    return as_kind(order, "array")


# np.partition and np.argpartition leave each side of kth in the order NumPy's selection
# algorithm happens to leave it: a compiled cell could not end as the plain cell does.
for _fn, _sorted in ((np.partition, "np.sort(a)"), (np.argpartition, "np.argsort(a)")):
    implements(_fn)(refusing(
        f"np.{_fn.__name__} (the order within each side of kth is that of NumPy's selection "
        f"algorithm)", f"use {_sorted} (sorted: its first k are the k smallest)",
        f"np_{_fn.__name__}"))
