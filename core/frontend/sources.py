"""Where a value the trace read comes from, and what a re-run checks about it.

A `Source` is how to fetch a value again on a re-run: a root (an argument leaf, a global of
a function, a closure cell, NumPy's error state) and the attribute and item steps from it,
compiled into one fetch function. A `Guard` is a static value read that way (compared by
value, identity or contents); an `ImplicitInput` an array or float read that way (its type,
which the compiled program is specialised to). Both say in the user's words what changed.
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..ir import ShapedArray
from ..numpy.base import strict_error_modes
from ..tracing import SUPPORTED_DTYPES

# -- sources: how to fetch a value again ------------------------------------------------------


class Missing:
    """What a fetch gives when the value is no longer there."""

    def __init__(self, error: Exception):
        self.error = error

    def __repr__(self) -> str:
        return f"no longer there ({type(self.error).__name__})"


FETCH_ERRORS = (AttributeError, LookupError, TypeError, ValueError)


@dataclass(frozen=True, eq=False)
class Source:
    """A root (an argument leaf, a global, a closure cell, NumPy's error state) and the
    attribute and item steps from it; `reader` names the function whose code read it."""
    root: str                  # "arg", "global", "closure" or "errstate"
    where: Any                 # leaf position, globals dict, cell, or None
    name: str                  # how the user names the root: `cfg`, `K`
    steps: tuple[tuple[str, Any], ...] = ()     # ("attr", name) or ("item", key)
    reader: str = ""           # "f": shown as `K (read by f)`; "" for the cell's own inputs
    fetch: Callable[[list], Any] = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "fetch", _fetcher(self.root, self.where, self.name, self.steps))

    @property
    def key(self) -> tuple:
        return (self.root, id(self.where) if self.root != "arg" else self.where, self.name,
                self.steps)

    def then(self, kind: str, value) -> Source:
        return Source(self.root, self.where, self.name, self.steps + ((kind, value),),
                      self.reader)

    def text(self, called: bool = False) -> str:
        path = self.name + "".join(f".{v}" if k == "attr" else f"[{v!r}]" for k, v in self.steps)
        if not self.reader:
            return path
        return f"{path} ({'called' if called else 'read'} by {self.reader})"

    def get(self, leaves):
        """The value now, or a `Missing`."""
        try:
            return self.fetch(leaves)
        except FETCH_ERRORS as err:
            return Missing(err)


def _fetcher(root: str, where, name: str, steps) -> Callable[[list], Any]:
    """A function of the call's argument leaves that fetches the value (closures, built once:
    this runs on every re-run)."""
    if root == "arg":
        def fetch_root(leaves):
            return leaves[where]
    elif root == "global":
        def fetch_root(leaves):
            return where[name]
    elif root == "closure":
        def fetch_root(leaves):
            return where.cell_contents
    else:
        def fetch_root(leaves):
            return strict_error_modes()
    if not steps:
        return fetch_root
    getters = tuple((getattr, v) if k == "attr" else (_getitem, v) for k, v in steps)

    def fetch(leaves):
        value = fetch_root(leaves)
        for get, arg in getters:
            value = get(value, arg)
        return value
    return fetch


def _getitem(obj, key):
    return obj[key]


# -- what was read ----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Guard:
    """A static value the trace read: `value` compares type and ==; `identity` compares `is`
    (for a bound method, its function); `content` compares an array's dtype, shape and bytes
    (a small integer or boolean array, which code uses as an index or mask)."""
    source: Source
    test: str                  # "value", "identity", "content", "length", "keys", "absent"
    expected: Any
    holds: Callable[[Any], bool] = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "holds", _holds(self.test, self.expected))

    def change(self, value) -> str:
        called = callable(self.expected) and not isinstance(self.expected, type)
        what = self.source.text(called)
        if self.source.root == "errstate":
            return f"np.seterr: {modes_text(self.expected)} → {modes_text(value)}"
        if isinstance(value, Missing):
            return f"{what}: {value!r}"
        if self.test == "content":
            return f"{what}: its contents changed" if type(value) is np.ndarray and \
                value.shape == self.expected[1] else f"{what}: a different array"
        if self.test == "absent":
            return f"{what}: now there ({short_repr(value)})"
        if self.test == "length" and isinstance(value, list):
            return f"{what}: {self.expected} → {len(value)} items"
        if self.test == "keys" and isinstance(value, dict):
            return f"{what}: keys {list(self.expected)} → {list(value)}"
        if self.test == "identity" and _same_name(getattr(value, "__func__", value),
                                                  self.expected):
            return f"{what}: redefined"
        return f"{what}: {short_repr(self.expected)} → {short_repr(value)}"


@dataclass(frozen=True, eq=False)
class ImplicitInput:
    """An array or float the trace read, made an input: `key` is its type (shape, dtype,
    layout, kind); `same_as` the position of the argument or earlier implicit input that was
    the very same array (-1: none)."""
    source: Source
    key: tuple
    same_as: int = -1

    def change(self, value) -> str:
        what = self.source.text()
        if isinstance(value, Missing):
            return f"{what}: {value!r}"
        new = value_key(value)
        if new != self.key:
            return f"{what}: {describe_key(self.key)} → {describe_key(new)}"
        if self.same_as >= 0:
            return f"{what}: no longer the same array as before"
        return f"{what}: now the same array as another input"


def _holds(test: str, expected) -> Callable[[Any], bool]:
    """Whether a value fetched on a re-run still passes a guard (built once per guard)."""
    if test == "absent":
        return lambda value: isinstance(value, Missing)
    if test == "length":
        return lambda value: type(value) is list and len(value) == expected
    if test == "keys":
        return lambda value: type(value) is dict and tuple(value) == expected
    if test == "value":
        kind = type(expected)
        return lambda value: type(value) is kind and bool(value == expected)
    if test == "content":
        dtype, shape, data = expected
        return lambda value: type(value) is np.ndarray and value.dtype == dtype and \
            value.shape == shape and value.tobytes() == data
    return lambda value: getattr(value, "__func__", value) is expected


def short_repr(value) -> str:
    """A value as a user would name it: `10`, `'abc'`, `module numpy`, `function f`."""
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"{type(value).__name__} {getattr(value, '__qualname__', value)}"
    if isinstance(value, np.ufunc):
        return f"ufunc {value.__name__}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _same_name(a, b) -> bool:
    name = getattr(a, "__qualname__", None)
    return name is not None and name == getattr(b, "__qualname__", None) and a is not b


# -- the type of a traced value, cheaply ------------------------------------------------------

def value_key(value) -> tuple | None:
    """What the compiled program is specialised to for a traced value: (kind, shape, dtype,
    strides when not C-contiguous); None for a value that is not traced."""
    kind = type(value)
    if kind is np.ndarray:
        if value.dtype not in SUPPORTED_DTYPES:
            return None
        flags = value.flags
        return ("array", value.shape, value.dtype, None if flags.c_contiguous else value.strides)
    if kind is float or kind is complex:
        return ("python", kind)
    if isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_)):
        return ("scalar", kind) if value.dtype in SUPPORTED_DTYPES else None
    return None


def describe_key(key) -> str:
    if key is None:
        return "a value that is not an array or float"
    if key[0] == "array":
        aval = ShapedArray(key[1], key[2])
        return str(aval) + (f" (strides {key[3]})" if key[3] is not None else "")
    if key[0] == "python":
        return f"Python {key[1].__name__}"
    return f"NumPy {key[1].__name__}"


def key_aval(key) -> tuple[ShapedArray, str, tuple | None]:
    """(aval, kind, strides) of a traced value's key."""
    if key[0] == "array":
        return ShapedArray(key[1], key[2]), "array", key[3]
    if key[0] == "python":
        return ShapedArray((), np.result_type(key[1]), True), "python", None
    return ShapedArray((), np.dtype(key[1])), "scalar", None


# -- NumPy's error state -----------------------------------------------------------------------

def modes_text(modes) -> str:
    if isinstance(modes, Missing):
        return repr(modes)
    return ", ".join(f"{k}={v!r}" for k, v in modes) or "no errors raised"
