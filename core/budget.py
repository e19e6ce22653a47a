"""How large a program psc_jit builds and hands to XLA: one budget for every path.

XLA's compile time grows with the program, and for some programs much faster than linearly
(4,500 equations of an unrolled stencil took 381 s here). A loop psc_jit cannot roll is unrolled,
so its size is the iteration count times the body's. Rather than a limit per path (iterations of
one kind of loop), every trace counts its equations, sub-traces included, and stops as soon as it
passes `max_equations`; before calling XLA, the compile time is estimated from the graph and a
program over `max_compile_seconds` is refused. Either way the error names the line and the
reason, within seconds, instead of a compile that never ends.

The budget is a process-wide setting (the extension's `%config PscJit` sets it):

    from psc_jit.core import budget
    budget.set_budget(max_equations=50_000)
    with budget.budget_scope(max_compile_seconds=5.0):
        ...
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """The limits. `max_equations`: equations one trace may record (loop bodies and branches
    included, each unrolled iteration counted); `max_compile_seconds`: the estimated XLA compile
    time above which a program is refused; `fold_elements`: the largest array whose value psc_jit
    works out at trace time when everything it depends on is known (an array made in the cell
    and written with constants, used as an index or a mask)."""
    max_equations: int = 10_000
    max_compile_seconds: float = 10.0      # no first call waits longer than this for XLA
    fold_elements: int = 1 << 16


_budget = Budget()


def current() -> Budget:
    return _budget


def set_budget(**changes) -> Budget:
    """Change some limits (by name); returns the previous budget."""
    global _budget
    previous = _budget
    _budget = dataclasses.replace(_budget, **changes)
    return previous


@contextlib.contextmanager
def budget_scope(**changes):
    """The budget changed inside a `with` block, restored after it."""
    previous = set_budget(**changes)
    try:
        yield _budget
    finally:
        _restore(previous)


def _restore(previous: Budget) -> None:
    global _budget
    _budget = previous
