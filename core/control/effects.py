"""Effects on the caller's Python objects while tracing. A compiled program computes arrays;
it cannot replay `d['total'] = x.sum()`, `L.append(v)` or `obj.total = v` after its run. So
the trace refuses them, naming the line where it can (the caller then runs the function as plain Python,
once), and leaves the objects as they were: a tracer never ends up in the user's objects.

Lists and dicts among the arguments, and those the code reads from globals and closures
(`reads.Recorder`), are handed to it as watched copies (subclasses that refuse any change);
the attributes of the other argument objects are
compared before and after the trace, and put back if the trace changed them.
"""
from __future__ import annotations

import types
import warnings
from typing import Any

import numpy as np

from ..tracing import UnsupportedError, caller_source

HINT = ("compiled code cannot replay changes to Python objects: give the value a name in "
        "the cell (total = x.sum()) and store it in a plain cell, or run this one without "
        "psc_jit")


def _refuse(kind: str, method: str):
    def refuse(self, *args, **kwargs):
        raise UnsupportedError(f"{method}() changes a {kind} from outside the traced code",
                               caller_source(), HINT)
    refuse.__name__ = method
    return refuse


_LIST_CHANGES = ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                 "__setitem__", "__delitem__", "__iadd__", "__imul__")
_DICT_CHANGES = ("__setitem__", "__delitem__", "update", "pop", "popitem", "setdefault",
                 "clear", "__ior__")

# (as tree nodes, core.tree_util, they are the list and the dict they copy)
WatchedList = type("WatchedList", (list,), {m: _refuse("list", m) for m in _LIST_CHANGES}
                   | {"__psc_tree_type__": list})
WatchedDict = type("WatchedDict", (dict,), {m: _refuse("dict", m) for m in _DICT_CHANGES}
                   | {"__psc_tree_type__": dict})


def watched(value):
    """`value` with every list and dict in it (through tuples, lists and dicts) replaced by a
    watched copy holding the same items."""
    if type(value) is list:
        return WatchedList(watched(v) for v in value)
    if type(value) is dict:
        return WatchedDict((k, watched(v)) for k, v in value.items())
    if type(value) is tuple:
        return tuple(watched(v) for v in value)
    return value


def watched_copy(value: list | dict):
    """A watched copy of a list or dict holding the very same items."""
    return WatchedList(value) if type(value) is list else WatchedDict(value)


def watched_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    return {name: watched(value) for name, value in arguments.items()}


class AttributeSnapshot:
    """The attributes of the argument objects (not arrays, modules, functions or classes) as
    they were before the trace; `restore` puts back any the trace changed and says which."""

    def __init__(self, leaves=(), paths=()):
        self._saved: dict[int, tuple] = {}
        for obj, path in zip(leaves, paths, strict=True):
            self.add(obj, path)

    def add(self, obj, path: str) -> None:
        """Remember obj's attributes now (once per object), if it has its own."""
        if id(obj) not in self._saved and _has_own_attributes(obj):
            self._saved[id(obj)] = (obj, path, dict(vars(obj)))

    def restore(self) -> list[str]:
        changed = []
        for obj, path, before in self._saved.values():
            now = vars(obj)
            names = [k for k in set(now) | set(before)
                     if k not in before or k not in now or now[k] is not before[k]]
            if names:
                now.clear()
                now.update(before)
                changed += [f"{path}.{k}" for k in sorted(names)]
        return changed


class GlobalsSnapshot:
    """The bindings of the global namespaces the traced code can write to (`global n; n += 1`
    in a helper), as they were before the trace; `restore` rebinds any the trace changed and
    says which (psc_jit's own `__psc_` names aside)."""

    def __init__(self):
        self._saved: dict[int, tuple[dict, dict]] = {}

    def add(self, namespace: dict) -> None:
        if id(namespace) not in self._saved:
            self._saved[id(namespace)] = (namespace, dict(namespace))

    def add_function(self, fn) -> None:
        namespace = getattr(fn, "__globals__", None)
        if isinstance(fn, types.FunctionType) and isinstance(namespace, dict):
            self.add(namespace)

    def restore(self) -> list[str]:
        changed = []
        for namespace, before in self._saved.values():
            names = [k for k in set(namespace) | set(before) if not k.startswith("__psc")
                     and (k not in before or k not in namespace or namespace[k] is not before[k])]
            for k in names:
                if k in before:
                    namespace[k] = before[k]
                else:
                    del namespace[k]
            changed += sorted(f"the global {k}" for k in names)
        return changed


def refuse_attribute_changes(changed: list[str]) -> UnsupportedError:
    return UnsupportedError(f"the traced code sets {', '.join(changed)}, outside the traced "
                            "code", None, HINT)


def _has_own_attributes(obj) -> bool:
    if isinstance(obj, (np.ndarray, np.generic, types.ModuleType, types.FunctionType,
                        types.BuiltinFunctionType, type, types.MethodType)):
        return False
    try:
        return isinstance(vars(obj), dict)
    except TypeError:
        return False


# NumPy's own warnings, which psc_jit's NumPy layer gives while tracing as NumPy would
NUMPY_WARNINGS = (RuntimeWarning, np.exceptions.ComplexWarning)


def replay_or_refuse_warnings(warned: list) -> None:
    """The warnings a trace gave: NumPy's own are shown again as they were; any other (a
    `warnings.warn` of the user's code) is an effect compiled code cannot replay on later
    runs, so the trace is refused (the plain run then warns, once per run)."""
    for w in warned:
        if not issubclass(w.category, NUMPY_WARNINGS):
            raise UnsupportedError(
                f"the code warns ({w.category.__name__}: {w.message}), and compiled code "
                "cannot replay a warning on each run", None,
                "run this cell without psc_jit, or silence the warning")
    for w in warned:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
