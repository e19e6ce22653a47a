"""The values of a loop or branch: their types (a Slot for a traced leaf, the value itself
for a static one), how types join (NEP 50) and how values are coerced to a joined type, and
the arrays a body updates in place (carried by reference: see `loops`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import tree_util
from ..ir import ShapedArray
from ..numpy.base import as_kind, broadcast_to, ensure_tracer, reshape
from ..numpy.ufuncs import call_ufunc
from ..numpy.window_functions import Gone
from ..numpy.windows import Window
from ..primitives import convert_element_type_p
from ..tracing import Buffer, Tracer, UnsupportedError, bind, caller_source
from ..tree_util import unflatten


class _Unbound:
    """The value of a name that has none yet (read only by generated code)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = _Unbound()
INDEX_AVAL = ShapedArray((), np.dtype(np.int64), weak_type=True)   # a Python int, traced
# A traced Python int standing for a name that has no value (a loop variable of a loop that
# made no pass, carried by an outer loop): the loop at the cell's top level checks for it.
UNBOUND_INDEX = int(np.iinfo(np.int64).min)


class CannotConvert(UnsupportedError):
    """A loop or branch that cannot become one XLA op; `peel`: running its first
    iteration as plain Python might make the rest convertible."""

    def __init__(self, message: str, hint: str = "", peel: bool = False):
        super().__init__(message, caller_source(), hint)
        self.peel = peel


def flatten(value) -> tuple[list, Any]:
    """Leaves and structure of a value, tuples only: lists and dicts are mutable, so they are
    never rebuilt (the caller's own objects stay the same objects)."""
    return tree_util.flatten(value, node_types=(tuple,))


def contains_tracer(value, depth: int = 3) -> bool:
    """Whether a value holds a tracer: directly, in containers, or in a function's closure."""
    if isinstance(value, Tracer):
        return True
    if depth == 0:
        return False
    if isinstance(value, (tuple, list, set, frozenset)):
        return any(contains_tracer(v, depth - 1) for v in value)
    if isinstance(value, dict):
        return any(contains_tracer(v, depth - 1) for v in value.values())
    if callable(value) and getattr(value, "__closure__", None):
        return any(contains_tracer(cell_value(c), depth - 1) for c in value.__closure__)
    if hasattr(value, "func") and hasattr(value, "args"):          # functools.partial
        return contains_tracer(value.args, depth - 1) or contains_tracer(value.func, depth - 1)
    return False


def cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:            # an empty cell
        return None


@dataclass(frozen=True)
class Slot:
    aval: ShapedArray
    kind: str          # what NumPy hands back: "array", "scalar" or "python"

    def __str__(self) -> str:
        return str(self.aval)


def type_of(leaf):
    if isinstance(leaf, Window):           # its length depends on the index: not carried
        return Gone(leaf.text)
    return Slot(leaf.aval, leaf.kind) if isinstance(leaf, Tracer) else leaf


def tree_type(value):
    leaves, treedef = flatten(value)
    return treedef, tuple(type_of(leaf) for leaf in leaves)


def same_type(a, b) -> bool:
    """Whether two tree types (treedef, leaf types) are the same (static leaves by value)."""
    return a[0] == b[0] and len(a[1]) == len(b[1]) and all(
        (x == y) if isinstance(x, Slot) and isinstance(y, Slot) else same_static(x, y)
        for x, y in zip(a[1], b[1], strict=True))


def same_static(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b) or not isinstance(a, (bool, int, float, complex, str, bytes,
                                                    np.generic, type(None))):
        return False
    return bool(a == b)


def _is_number(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc"
    return isinstance(value, (bool, int, float, complex, np.bool_, np.number))


def slot_of_static(value) -> Slot:
    if isinstance(value, np.ndarray):
        return Slot(ShapedArray(value.shape, value.dtype), "array")
    if isinstance(value, np.generic):
        return Slot(ShapedArray((), value.dtype), "scalar")
    return Slot(ShapedArray((), np.result_type(value), weak_type=True), "python")


def describe(t) -> str:
    if isinstance(t, Slot):
        return str(t.aval)
    if t is UNBOUND:
        return "no value"
    text = repr(t)
    return f"the Python value {text if len(text) <= 30 else text[:27] + '...'}"


_WEAK_SAMPLE = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}
_KIND_RANK = {"python": 0, "scalar": 1, "array": 2}


def join(a, b, name: str, loop: bool = True, exact: bool = False):
    """The one type that both a and b convert to exactly, the way NumPy would promote them.
    In a loop (a = entry, b = exit) the kind is the exit's; between branches, the wider, or
    (`exact`) none unless both are of one Python type: which one the user sees would depend
    on the branch taken."""
    if not isinstance(a, Slot) and not isinstance(b, Slot) and same_static(a, b):
        return a
    for t in (a, b):
        if not isinstance(t, Slot) and not _is_number(t):
            raise CannotConvert(f"`{name}` is {describe(a)} on entry and {describe(b)} after "
                                "one pass", _init_hint(name), peel=True)
    a = a if isinstance(a, Slot) else slot_of_static(a)
    b = b if isinstance(b, Slot) else slot_of_static(b)
    if a.aval.shape != b.aval.shape:
        raise CannotConvert(f"`{name}` changes shape from {a} to {b}",
                            "keep its shape fixed, or collect results in a preallocated array",
                            peel=True)
    dtype = np.result_type(*(_WEAK_SAMPLE[t.aval.dtype.kind] if t.aval.weak_type
                             else t.aval.dtype for t in (a, b)))
    for t in (a, b):
        if not t.aval.weak_type and t.aval.dtype != dtype:
            raise CannotConvert(f"`{name}` changes dtype from {a} to {b}", _init_hint(name, dtype),
                                peel=True)
    if exact and _python_type(a) != _python_type(b):
        raise CannotConvert(f"`{name}` is {_python_type(a)} in one branch and {_python_type(b)} "
                            "in the other, and which one it is depends on the data",
                            f"give `{name}` one type in both branches (e.g. np.float64(...))",
                            peel=True)
    kind = b.kind if loop else max(a.kind, b.kind, key=_KIND_RANK.__getitem__)
    return Slot(ShapedArray(a.aval.shape, dtype, a.aval.weak_type and b.aval.weak_type), kind)


def _python_type(slot: Slot) -> str:
    """What a value of this slot is to the user: an array, a NumPy scalar of its dtype, or a
    Python int, float, complex or bool."""
    if slot.kind == "array":
        return "an array"
    if slot.kind == "scalar":
        return f"a NumPy {slot.aval.dtype}"
    kind = slot.aval.dtype.kind
    return "a Python " + {"b": "bool", "i": "int", "u": "int", "f": "float"}.get(kind, "complex")


def _init_hint(name: str, dtype=None) -> str:
    if dtype is None:
        return f"give `{name}` a value of the type it has after one pass, before the loop"
    return f"give `{name}` its final dtype before the loop (e.g. {name} = np.{dtype}(0))"


def coerce(value, slot: Slot) -> Tracer:
    """value (a tracer or a constant) as a tracer of exactly the slot's type."""
    if isinstance(value, Tracer):
        t = value
    else:
        t = ensure_tracer(np.asarray(value, dtype=slot.aval.dtype))
    if t.shape != slot.aval.shape:
        t = broadcast_to(t, slot.aval.shape)
    if (t.dtype, t.aval.weak_type) != (slot.aval.dtype, slot.aval.weak_type):
        t = bind(convert_element_type_p, t, new_dtype=slot.aval.dtype,
                 weak_type=slot.aval.weak_type)
    return as_kind(t, slot.kind)


def zeros_like_slot(slot: Slot) -> Tracer:
    return coerce(np.zeros(slot.aval.shape, slot.aval.dtype), slot)


def unbound_like_slot(slot: Slot) -> Tracer:
    """The entry value of a carried name that has none: UNBOUND_INDEX for a Python int (so
    that a loop that leaves it so can be told apart), else zeros (never read)."""
    if slot.kind == "python" and slot.aval == INDEX_AVAL:
        return coerce(UNBOUND_INDEX, slot)
    return zeros_like_slot(slot)


def to_pred(value):
    """Python's truth value of `value`, traced: a bool[] tracer (or a Python bool)."""
    if not isinstance(value, Tracer):
        return bool(value)
    if value.size != 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()")
    value = reshape(value, ())
    if value.dtype != np.bool_:
        value = call_ufunc(np.not_equal, value, 0)
    return as_kind(value, "scalar")


def tracer_buffers(values) -> list[Buffer]:
    """The distinct buffers of the tracers in values (tuples looked into)."""
    found: dict[int, Buffer] = {}
    for value in values:
        for leaf in flatten(value)[0]:
            if isinstance(leaf, Tracer):
                found.setdefault(id(leaf._buffer), leaf._buffer)
    return list(found.values())


def remap(value, inner: dict[int, Buffer], memo: dict[int, Tracer] | None = None):
    """value with each tracer on an outer buffer replaced by the same view of its inner one."""
    leaves, treedef = flatten(value)
    out = []
    for leaf in leaves:
        if isinstance(leaf, Tracer) and id(leaf._buffer) in inner:
            new = Tracer(inner[id(leaf._buffer)], leaf._path, kind=leaf.kind)
            if memo is not None:
                memo[id(new)] = leaf
            leaf = new
        out.append(leaf)
    return unflatten(treedef, out)


@dataclass
class Snapshot:
    """Lists, dicts and sets the body can see: a body that changes them cannot be rolled."""
    items: list[tuple[str, Any, Any]] = field(default_factory=list)

    @staticmethod
    def of(env: dict[str, Any], names) -> Snapshot:
        snap = Snapshot()
        for name in names:
            value = env.get(name)
            if isinstance(value, (list, dict, set)):
                snap.items.append((name, value, value.copy()))
        return snap

    def check(self) -> None:
        changed = self.changed()
        if changed is not None:
            raise CannotConvert(f"the loop body changes `{changed}`, a Python list, dict or set",
                                "preallocate an array and assign into it (out[i] = ...)")

    def changed(self) -> str | None:
        for name, obj, saved in self.items:
            if not _same_contents(obj, saved):
                return name
        return None

    def restore(self) -> None:
        for _, obj, saved in self.items:
            if isinstance(obj, list):
                obj[:] = saved
            else:
                obj.clear()
                obj.update(saved)


def _same_contents(obj, saved) -> bool:
    if len(obj) != len(saved):
        return False
    if isinstance(obj, list):
        return all(a is b for a, b in zip(obj, saved, strict=True))
    if isinstance(obj, dict):
        return all(k in saved and obj[k] is saved[k] for k in obj)
    return obj == saved
