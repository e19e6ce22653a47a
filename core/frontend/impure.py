"""Calls whose result plain Python makes afresh on every run, found when traced code calls
them (`convert.call`): a number drawn from Python's `random` (its module functions, or a
`random.Random` of the user's), a NumPy generator's draws (`rng.random(n)`, `np.random.*`:
the generator's state advances on every run), the clock (`time.*`, `datetime.now()`),
`uuid`, `secrets`, `os.urandom`, and `next()` of an iterator from outside. Traced, each would be called once
and its value frozen into the program; the call is refused at its line instead, and the
code runs as plain Python. (The cell's own source is checked before tracing too:
`cell.impure_findings`; this catches such calls in helpers and under other names.)
"""
from __future__ import annotations

import datetime
import random

_MODULES = {
    "random": "Python's random module draws from a state compiled code would freeze at its "
              "first value; draw the numbers before the cell (or with np.random outside it)",
    "time": "time.* reads the clock; time the cell from outside (psc_jit's Timing tab does)",
    "uuid": "uuid makes a new value on each call; make it outside the cell",
    "secrets": "secrets draws a new value on each call; draw it outside the cell",
}
_NUMPY_RANDOM = ("a NumPy random generator's state advances on every run, and compiled code "
                 "would freeze its first draw; draw the numbers before the cell and use them "
                 "in it")
_CLOCK = frozenset({"now", "today", "utcnow"})


def impure_reason(fn) -> str | None:
    """Why calling fn while tracing would freeze a value plain Python makes afresh (None: it
    would not)."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, random.Random):
        return _MODULES["random"]
    if (owner is datetime.datetime or owner is datetime.date) and \
            getattr(fn, "__name__", "") in _CLOCK:           # (identity: owner may be traced)
        return "datetime.now() reads the clock; read it outside the cell"
    module = getattr(fn, "__module__", None)
    if module in _MODULES:
        return _MODULES[module]
    if isinstance(module, str) and (module == "numpy.random" or
                                    module.startswith("numpy.random.")):
        return _NUMPY_RANDOM
    if module == "posix" and getattr(fn, "__name__", "") == "urandom":
        return _MODULES["secrets"]
    return None


NEXT_FROM_OUTSIDE = ("next() advances an iterator from outside the traced code, which "
                     "compiled code cannot replay on each run; take the values before the cell")
