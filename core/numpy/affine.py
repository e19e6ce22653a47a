"""What is known about traced integers: each one as `coef * root + offset` (an affine function
of one traced root, such as a loop index), and the range of the roots.

A rolled loop's body is traced once with its index `i` traced, so `x[:i]` or `x[j + 1:]` has a
slice bound that is a traced value. Whether such a slice has a fixed length (`x[i:i + 3]`),
whether two of them are the same window (`L[i, :i] @ x[:i]`), and how long it can be, follow
from these facts: the loop says which values its index takes, and `+`, `-`, `*` by constants
and negation carry the facts along. Facts are kept per IR variable and die with it.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..ir import Var
from ..tracing import Tracer


@dataclass(frozen=True)
class Affine:
    """coef * root + offset; root None is the constant `offset`."""
    root: Var | None
    coef: int
    offset: int

    def plus(self, other: Affine, sign: int = 1) -> Affine | None:
        if self.root is not None and other.root is not None and self.root is not other.root:
            return None
        root = self.root if self.root is not None else other.root
        return Affine(root, self.coef + sign * other.coef, self.offset + sign * other.offset)

    def times(self, factor: int) -> Affine:
        return Affine(self.root, self.coef * factor, self.offset * factor)

    def at(self, value: int) -> int:
        return self.coef * value + self.offset

    @property
    def constant(self) -> bool:
        return self.root is None or self.coef == 0


_FACTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()    # Var -> Affine
_RANGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # Var -> (low, high)


def is_int_scalar(x) -> bool:
    return isinstance(x, Tracer) and x.ndim == 0 and x.dtype.kind in "iu"


def affine_of(x) -> Affine | None:
    """x as an affine function of one traced root (a static int is a constant); None if x is
    not an integer scalar."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return Affine(None, 0, int(x))
    if not is_int_scalar(x):
        return None
    known = x.known_value()
    if known is not None:
        return Affine(None, 0, int(known))
    var = x.ir_var
    return _FACTS.get(var) or Affine(var, 1, 0)


def set_range(x: Tracer, low: int, high: int) -> None:
    """x (a traced integer) takes only values in [low, high]."""
    _RANGES[x.ir_var] = (min(low, high), max(low, high))


def share_range(outer: Var, inner: Var) -> None:
    """A loop body's input standing for an outer integer whose range is known (an enclosing
    loop's index, read by an inner loop) takes the same values."""
    span = _RANGES.get(outer)
    if span is not None:
        _RANGES[inner] = span


def range_of(var: Var) -> tuple[int, int] | None:
    """The values an integer variable is known to take, (low, high) inclusive, or None."""
    return _RANGES.get(var)


def root_range(affine: Affine) -> tuple[int, int] | None:
    if affine.root is None:
        return (0, 0)
    return _RANGES.get(affine.root)


def interval(x) -> tuple[int, int] | None:
    """The values x may take, (low, high) inclusive; None when unknown."""
    affine = affine_of(x)
    if affine is None:
        return None
    if affine.constant:
        return affine.offset, affine.offset
    span = root_range(affine)
    if span is None:
        return None
    ends = affine.at(span[0]), affine.at(span[1])
    return min(ends), max(ends)


def same_value(a, b) -> bool:
    """Whether a and b are provably equal (static ints, or one affine function of one root)."""
    fa, fb = affine_of(a), affine_of(b)
    return fa is not None and fb is not None and (fa == fb or (
        fa.constant and fb.constant and fa.offset == fb.offset))


def difference(a, b) -> int | None:
    """a - b when it is a constant (both affine in one root with one coefficient)."""
    fa, fb = affine_of(a), affine_of(b)
    if fa is None or fb is None:
        return None
    diff = fa.plus(fb, -1)
    return diff.offset if diff is not None and diff.constant else None


def track(ufunc, inputs, result) -> None:
    """Record the fact for an integer result of +, -, * or unary - on facts and constants."""
    if not is_int_scalar(result) or ufunc not in _COMBINE:
        return
    facts = [affine_of(x) for x in inputs]
    if any(f is None for f in facts):
        return
    combined = _COMBINE[ufunc](*facts)
    if combined is not None and not combined.constant:
        _FACTS[result.ir_var] = combined


def _multiply(a: Affine, b: Affine) -> Affine | None:
    if a.constant:
        return b.times(a.offset)
    if b.constant:
        return a.times(b.offset)
    return None


_COMBINE = {
    np.add: lambda a, b: a.plus(b),
    np.subtract: lambda a, b: a.plus(b, -1),
    np.multiply: _multiply,
    np.negative: lambda a: a.times(-1),
    np.positive: lambda a: a,
}
