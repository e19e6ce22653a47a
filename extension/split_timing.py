"""What a split cell's timing needs: the cell's inputs as they were before it ran, and every
random generator's state, so that the timed runs (plain Python, and the compiled regions with
their host steps) all start where the cell's own run started and leave nothing changed.

A split cell is timed as a whole, as a user would time it: the plain cell against its regions
and host steps together. That runs its host steps again, so it is timed only where doing so
changes nothing outside copies of its inputs (`unrepeatable` in core's regions.py says why
not, step by step; `holds` which values the timed runs copy or put back).
"""
from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

from .core import copy_inputs, generator_state, put_back_states

_VALUES = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, type(None), np.dtype,
           range, slice)
_GENERATORS = (np.random.Generator, np.random.RandomState)


def holds(value) -> bool:
    """Whether a timed run leaves the notebook's value as it was: an array or a container of
    such (each run gets copies), a number or string, or a generator (its state put back)."""
    if isinstance(value, (list, tuple)):
        return all(holds(v) for v in value)
    if isinstance(value, dict):
        return all(holds(v) for v in value.values())
    return isinstance(value, _VALUES + _GENERATORS)


def _reads_as_is(value) -> bool:
    """A value the cell may read that no code changes by reading or calling it: a module, a
    function or a class (a region calling a notebook function has its writes recorded)."""
    return isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                              type, np.ufunc)) or callable(value) and \
        (getattr(value, "__module__", None) or "").partition(".")[0] == "numpy"


@dataclass
class Snapshot:
    """The cell's inputs (copies, taken before its run) and the generators' states then."""
    inputs: dict
    states: list

    def restore_generators(self) -> None:
        put_back_states(self.states)


def snapshot(inputs: tuple[str, ...], namespace: dict) -> Snapshot | str:
    """The snapshot of the cell's inputs, or why the cell cannot be timed (an input a run
    would change in place that no copy is made of: a file, a list of such, an object)."""
    values = {n: namespace[n] for n in inputs if n in namespace}
    for name, value in values.items():
        if not (holds(value) or _reads_as_is(value)):
            return f"it reads `{name}`, a {type(value).__name__} that its runs could change"
    return Snapshot(copy_inputs(values), generator_states(namespace))


def generator_states(namespace: dict) -> list:
    """(generator, state) of NumPy's global generator and of every generator the namespace
    holds, directly or in a list, tuple or dict."""
    found = {id(np.random.mtrand._rand): np.random.mtrand._rand}
    for value in namespace.values():
        items = value.values() if isinstance(value, dict) else \
            value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, _GENERATORS):
                found[id(item)] = item
    return [(owner, generator_state(owner)) for owner in found.values()]
