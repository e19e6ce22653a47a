"""`psum`, `pmean` and `all_gather` over a named vmap axis (`vmap(f, axis_name="i")`), as
JAX's: inside f, `psum(x, "i")` is the sum of x over every member of the batch, the same in
each. A name no enclosing vmap binds is a NameError, raised where the collective is called.
The primitives and their batching are in `primitives/collectives.py`."""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from ..primitives import all_gather_p, psum_p
from ..tracing import Tracer, bind
from ..numpy.base import ensure_tracer

_BOUND = threading.local()      # .axes: [(name, size)] of the vmaps tracing in this thread


@contextlib.contextmanager
def bound_axis(name, size: int):
    """While a vmap traces its function: `name` names its axis of `size` members."""
    axes = _axes()
    axes.append((name, size))
    try:
        yield
    finally:
        axes.pop()


def _axes() -> list:
    if not hasattr(_BOUND, "axes"):
        _BOUND.axes = []
    return _BOUND.axes


def _size(axis_name) -> int:
    for name, size in reversed(_axes()):
        if name == axis_name:
            return size
    raise NameError(f"unbound axis name: {axis_name} (psc_jit.psum and its kind work over "
                    f"the axis of an enclosing vmap(f, axis_name={axis_name!r}))")


def psum(x, axis_name):
    """The sum of x over the members of the vmap axis `axis_name`."""
    size = _size(axis_name)
    return bind(psum_p, _traced(x), axis_name=axis_name, axis_size=size)


def pmean(x, axis_name):
    """The mean of x over the members of the vmap axis `axis_name`."""
    total = psum(x, axis_name)
    return total / _size(axis_name)


def all_gather(x, axis_name):
    """Every member's x, stacked along a new leading axis (the same array in every member)."""
    size = _size(axis_name)
    return bind(all_gather_p, _traced(x), axis_name=axis_name, axis_size=size)


def _traced(x) -> Tracer:
    return x if isinstance(x, Tracer) else ensure_tracer(np.asarray(x))
