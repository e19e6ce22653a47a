"""Loops and branches on traced values, traced once into sub-graphs.

The public functions (JAX's names and meanings) run as plain Python when nothing they touch
is traced, and otherwise trace their functions into a `while_loop` or `cond` equation:

    fori_loop(lower, upper, body_fun, init_val)      body_fun(i, val) -> val
    while_loop(cond_fun, body_fun, init_val)         cond_fun(val) -> bool, body_fun(val) -> val
    cond(pred, true_fun, false_fun, *operands)
    switch(index, branches, *operands)               index clamped into range, as JAX does
    scan(f, init, xs, length=None)                   f(carry, x) -> (carry, y); ys stacked

The machinery below them (`loops`, `branches`, `carry`) is shared with the loop-rolling pass
(`runtime`), which hands over a loop body as a function of the names it uses.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..ir import ShapedArray
from ..numpy.base import ensure_tracer
from ..numpy.segments import register_segment_loop
from ..numpy.ufuncs import call_ufunc
from ..primitives import convert_element_type_p
from ..tracing import Tracer, bind, caller_source, current_trace
from ..tree_util import unflatten
from .branches import branch
from .carry import CannotConvert, Slot, contains_tracer, flatten, to_pred, zeros_like_slot
from .loops import LoopSpec, roll_loop
from .subtrace import SubTrace


def _traced(*values) -> bool:
    return current_trace() is not None and any(contains_tracer(v) for v in values)


def _api_error(err: CannotConvert) -> CannotConvert:
    err.source = caller_source()
    return err


def _carry_spec() -> LoopSpec:
    return LoopSpec(("val",), ("val",), frozenset({"val"}))


def fori_loop(lower, upper, body_fun: Callable, init_val):
    """`for i in range(lower, upper): val = body_fun(i, val)`; traced into one XLA loop when
    the bounds, the value or the function hold traced arrays."""
    if not _traced(lower, upper, body_fun, init_val):
        val = init_val
        for i in range(lower, upper):
            val = body_fun(i, val)
        return val
    try:
        out = roll_loop(_carry_spec(), {"val": init_val},
                        lambda i, val: (body_fun(i, val),), index=(lower, upper, 1))
    except CannotConvert as err:
        raise _api_error(err) from None
    return out["val"]


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """`while cond_fun(val): val = body_fun(val)`; one XLA loop when anything is traced."""
    if not _traced(cond_fun, body_fun, init_val):
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    try:
        out = roll_loop(_carry_spec(), {"val": init_val}, lambda val: (body_fun(val),),
                        cond_fn=cond_fun)
    except CannotConvert as err:
        raise _api_error(err) from None
    return out["val"]


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """`true_fun(*operands) if pred else false_fun(*operands)`; one XLA conditional (or a
    select, for small branches) when pred is traced."""
    if not isinstance(pred, Tracer):
        return true_fun(*operands) if pred else false_fun(*operands)
    p = to_pred(pred)
    index = bind(convert_element_type_p, p, new_dtype=np.dtype(np.int32),
                 weak_type=False)
    try:
        return branch(index, [false_fun, true_fun], operands, pred=p)
    except CannotConvert as err:
        raise _api_error(err) from None


def switch(index, branches: Sequence[Callable], *operands):
    """`branches[index](*operands)`, index clamped into range; one XLA case when traced."""
    n = len(branches)
    if not isinstance(index, Tracer):
        return branches[min(max(int(index), 0), n - 1)](*operands)
    if index.dtype.kind not in "biu" or index.ndim:
        raise TypeError(f"switch needs an integer scalar index, got {index.aval}")
    clamped = call_ufunc(np.minimum, call_ufunc(np.maximum, index, 0), n - 1)
    index = bind(convert_element_type_p, clamped, new_dtype=np.dtype(np.int32),
                 weak_type=False)
    try:
        return branch(index, list(branches), operands)
    except CannotConvert as err:
        raise _api_error(err) from None


def scan(f: Callable, init, xs, length: int | None = None):
    """`carry, y = f(carry, x)` for each x along the leading axis of xs (a tuple of arrays, an
    array, or None with `length`); returns (carry, ys stacked). One XLA loop when traced."""
    xs_leaves, xs_def = flatten(xs) if xs is not None else ([], None)
    n = length if length is not None else len(xs_leaves[0])
    if not _traced(f, init, xs):
        return _python_scan(f, init, xs_leaves, xs_def, xs is None, n)
    xs_leaves = [ensure_tracer(a) for a in xs_leaves]

    def x_at(i):
        return None if xs is None else unflatten(xs_def, [a[i] for a in xs_leaves])

    y_leaves, y_def = _probe_y(f, init, x_at)
    ys0 = tuple(zeros_like_slot(Slot(ShapedArray((n,) + y.aval.shape, y.aval.dtype), "array"))
                for y in y_leaves)

    def body(i, val):
        carry, ys = val
        carry, y = f(carry, x_at(i))
        for buf, leaf in zip(ys, flatten(y)[0], strict=True):
            buf[i] = leaf
        return ((carry, ys),)

    try:
        out = roll_loop(_carry_spec(), {"val": (init, ys0)}, body, index=(0, n, 1))
    except CannotConvert as err:
        raise _api_error(err) from None
    carry, ys = out["val"]
    return carry, (None if y_def is None and y_leaves == [] else unflatten(y_def, list(ys)))


def _probe_y(f, init, x_at):
    """The types of f's y, from tracing it once (the trace is thrown away)."""
    sub = SubTrace()
    with sub.active():
        _, y = f(init, x_at(0))
        leaves, treedef = flatten(y)
        if y is None:
            return [], None
        return [ensure_tracer(leaf) for leaf in leaves], treedef


def _python_scan(f, init, xs_leaves, xs_def, no_xs, n):
    carry, ys = init, []
    for i in range(n):
        x = None if no_xs else unflatten(xs_def, [a[i] for a in xs_leaves])
        carry, y = f(carry, x)
        ys.append(y)
    if not ys or ys[0] is None:
        return carry, None
    y_def = flatten(ys[0])[1]
    columns = zip(*(flatten(y)[0] for y in ys), strict=True)
    return carry, unflatten(y_def, [np.stack(c) for c in columns])


register_segment_loop(fori_loop)    # products over segments the data bound (numpy/segments.py)
