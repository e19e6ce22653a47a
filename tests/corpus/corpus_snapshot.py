"""What a worker keeps of a namespace after each cell, in a form that crosses to the parent
process and compares: `snapshot` turns any value into NumPy arrays and scalars, Python numbers,
strings, lists, tuples and dicts, with `Opaque` for the rest: its kind and a payload that
compares (a module: its name; a function or class: its module and qualified name; an object of
a class the session defined: its attributes; a generator: its state; any other object: its
type alone, as its attributes are a library's own business)."""
from __future__ import annotations

import re
import types
from dataclasses import dataclass

import numpy as np

ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
MAX_DEPTH = 4


@dataclass(frozen=True)
class Opaque:
    kind: str           # "module", "function", "Generator", "object RunningMean", ...
    payload: object = None


def snapshot(value, depth: int = 0):
    """`value` as plain data (see the module's docstring)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        return Opaque("object array", without_addresses(repr(value))) \
            if value.dtype.hasobject else value.copy()
    if isinstance(value, np.random.Generator):
        return Opaque("Generator", snapshot(value.bit_generator.state, depth + 1))
    if isinstance(value, np.random.RandomState):
        return Opaque("RandomState", snapshot(value.get_state(legacy=False), depth + 1))
    if isinstance(value, np.random.BitGenerator):
        return Opaque(type(value).__name__, snapshot(value.state, depth + 1))
    if depth >= MAX_DEPTH:
        return Opaque(type(value).__qualname__, without_addresses(repr(value))[:200])
    return container_snapshot(value, depth)


def container_snapshot(value, depth: int):
    if type(value) in (list, tuple):
        return type(value)(snapshot(v, depth + 1) for v in value)
    if isinstance(value, tuple):     # a namedtuple
        return Opaque(type(value).__qualname__, [snapshot(v, depth + 1) for v in value])
    if type(value) is dict:
        return {k: snapshot(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return Opaque(type(value).__name__, sorted(map(repr, value)))
    if isinstance(value, types.ModuleType):
        return Opaque("module", value.__name__)
    if callable(value):
        return Opaque(type(value).__name__, (getattr(value, "__module__", None),
                                             getattr(value, "__qualname__", None)))
    if type(value).__module__ == "__main__" and hasattr(value, "__dict__"):
        return Opaque(f"object {type(value).__qualname__}", snapshot(vars(value), depth + 1))
    return Opaque(f"{type(value).__module__}.{type(value).__qualname__}")


def without_addresses(text: str) -> str:
    return ADDRESS.sub("0x…", text)


def user_names(shell) -> list[str]:
    """The names of the user's namespace: not IPython's own, not dunders."""
    hidden = shell.user_ns_hidden
    return sorted(n for n in shell.user_ns if n not in hidden and
                  not (n.startswith("__") and n.endswith("__")))


def namespace_snapshot(shell, names) -> dict:
    return {name: snapshot(shell.user_ns[name]) for name in names}


def shared_memory(shell, names) -> list[tuple[str, str]]:
    """The pairs of the namespace's arrays that share memory."""
    arrays = [(n, shell.user_ns[n]) for n in names if isinstance(shell.user_ns[n], np.ndarray)
              and shell.user_ns[n].size]
    return [(x, y) for i, (x, a) in enumerate(arrays) for y, b in arrays[i + 1:]
            if share_memory(a, b)]


def share_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the two arrays share an element (where that is too hard to tell: whether their
    bounds overlap)."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return np.shares_memory(a, b, max_work=10_000)
    except np.exceptions.TooHardError:
        return True
