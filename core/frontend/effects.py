"""Effects on the caller's Python objects while tracing. A compiled program computes arrays;
on its own it cannot make `d['total'] = x.sum()`, `L.append(v)` or `obj.total = v` on later
runs. A cell's writes to an object it only writes to are recorded and made again after every
run (`Sink`, below); any other change the trace refuses, naming the line where it can (the
caller then runs the function as plain Python, once), and leaves the objects as they were: a
tracer never ends up in the user's objects.

Lists and dicts among the arguments, and those the code reads from globals and closures
(`reads.Recorder`), are handed to it as watched copies (subclasses that refuse any change);
the attributes of the other argument objects are
compared before and after the trace, and put back if the trace changed them.
"""
from __future__ import annotations

import ast
import contextvars
import functools
import types
import warnings
from typing import Any

import numpy as np

from .. import tree_util
from ..control.loop_writes import LOOP_WRITES, ROWS, record_write
from ..tracing import Tracer, UnsupportedError, caller_source, current_trace
from .contents import contents

HINT = ("compiled code cannot replay this change to a Python object; it replays writes at the "
        "top level of the cell or of a helper defined in the notebook, or in their `for` "
        "loops, to an object the code only writes to (L.append(v), d[k] = v, obj.a = v): "
        "write it so, or give the value a name (total = x.sum()) and store it in a plain cell")


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
    """What traced code could change, unseen, of the objects it reads from outside (the
    arguments, and what `reads.Recorder` reads), as it was before the trace: their attributes
    (a function's and a class's of the user's too), the items of those that are mutable
    containers, and the items of the containers their attributes hold (see contents.py).
    `restore` puts back whatever the trace changed and says what."""

    def __init__(self, leaves=(), paths=()):
        self._saved: dict[int, tuple] = {}
        for obj, path in zip(leaves, paths, strict=True):
            self.add(obj, path)

    def add(self, obj, path: str, unseen: bool = False) -> None:
        """Remember what obj holds now (once per object). A list or dict read where psc_jit
        sees it is handed to the code as a watched copy, so its items are not kept; `unseen`:
        code reads obj without psc_jit seeing it (code it could not convert), so even a list
        or dict is the user's own."""
        if id(obj) in self._saved:
            return
        attributes = dict(vars(obj)) if _has_own_attributes(obj) else None
        items = contents(obj) if unseen or type(obj) not in (list, dict) else None
        if attributes is None and items is None:
            return
        self._saved[id(obj)] = (obj, path, attributes, items, _held(path, attributes, items))

    def restore(self) -> list[str]:
        changed = []
        for obj, path, attributes, items, held in self._saved.values():
            if attributes is not None:
                changed += _restore_attributes(obj, path, attributes)
            if items is not None and items.put_back():
                changed.append(f"the items of {path}")
            changed += [f"the items of {where}" for where, found in held if found.put_back()]
        return changed


def _held(path: str, attributes: dict | None, items) -> list[tuple[str, Any]]:
    """The contents of the containers that obj's attributes or items hold, each with where it
    is (library code changes them unseen: `queue.put` appends to the queue's deque)."""
    parts = [(f"{path}.{name}", value) for name, value in (attributes or {}).items()]
    if items is not None and type(items.items) in (list, dict):
        held = items.items
        parts += [(f"{path}[{key!r}]", value) for key, value in
                  (held.items() if type(held) is dict else enumerate(held))]
    return [(where, found) for where, value in parts if (found := contents(value)) is not None]


def _restore_attributes(obj, path: str, before: dict) -> list[str]:
    now = vars(obj)
    names = [k for k in set(now) | set(before)
             if k not in before or k not in now or now[k] is not before[k]]
    if not names:
        return []
    if isinstance(obj, type):              # (a class's attributes: a read-only mapping)
        for k in names:
            if k in before:
                setattr(obj, k, before[k])
            else:
                delattr(obj, k)
    else:
        now.clear()
        now.update(before)
    return [f"{path}.{k}" for k in sorted(names)]


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


def is_psc_object(obj) -> bool:
    """An object of psc_jit's own (a jit function): not the user's to snapshot or follow (its
    caches change while it joins a trace)."""
    return type(obj).__module__.startswith("psc_jit.")


_HEAP_TYPE = 1 << 9         # Py_TPFLAGS_HEAPTYPE: a class not built into Python or a C module


def _has_own_attributes(obj) -> bool:
    """Whether obj has attributes of its own that code can set: an object, a function, a
    class of the user's (`reads.Recorder` adds only those), not an array, a module or one of
    psc_jit's."""
    if isinstance(obj, (np.ndarray, np.generic, types.ModuleType, types.BuiltinFunctionType,
                        types.MethodType)) or is_psc_object(obj):
        return False
    if isinstance(obj, type):               # (a class made by a `class` statement)
        return bool(obj.__flags__ & _HEAP_TYPE)
    try:
        return isinstance(vars(obj), (dict, types.MappingProxyType))
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


# -- sinks: objects a cell only writes to, its writes made again after each run ---------------

EXTEND_LIMIT = 256       # values one L.extend(...) may write after the run


class Sink:
    """Stands, while a cell is traced, for a list, dict or object of the user's that the cell
    only writes to (`sinks.effect_sinks`; or a helper of the notebook's, `helper_sinks`):
    `L.append(v)`, `L.extend(vs)`, `d[k] = v`, `d.update(...)` and `obj.a = v` are recorded,
    in order, with the traced values, and `with_effects` returns the record as part of the
    cell's result, so that every run gives its own values and `replay` makes the same writes
    on the user's object. Sinks of one name and kind are equal: the
    object is not part of the compiled program's signature (it is fetched by name when the
    writes are made)."""
    __slots__ = ("_name", "_kind", "_log", "target")

    def __init__(self, name: str, kind: str, target=None):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_log", None)
        object.__setattr__(self, "target", id(target))     # the user's object (not compared)

    def __eq__(self, other) -> bool:
        return type(other) is Sink and (other._name, other._kind) == (self._name, self._kind)

    def __hash__(self) -> int:
        return hash((Sink, self._name, self._kind))

    def __repr__(self) -> str:
        return f"<the {self._kind} {self._name}, written after the run>"

    def append(self, value) -> None:
        self._record("append", None, value)

    def extend(self, values) -> None:
        values = list(values)           # (an array: its rows, as list.extend takes them)
        if len(values) > EXTEND_LIMIT:
            raise UnsupportedError(f"{self._name}.extend() of {len(values)} values (one output "
                                   "each)", caller_source(), "append the array as one value, "
                                   "or extend the list after the cell")
        for value in values:
            self._record("append", None, value)

    def update(self, *args, **kwargs) -> None:
        for key, value in dict(*args, **kwargs).items():
            self._record("setitem", key, value)

    def __setitem__(self, key, value) -> None:
        self._record("setitem", key, value)

    def __setattr__(self, name: str, value) -> None:
        self._record("setattr", name, value)

    def __getitem__(self, key):
        """`hist['loss']` of a dict of lists the cell appends to (kind `lists (...)`)."""
        if not self._kind.startswith("lists ") or not isinstance(key, (str, int)):
            raise UnsupportedError(f"{self._name} is read, and the cell writes to it",
                                   caller_source(), HINT)
        return _ListOfSink(self, key)

    def _record(self, op: str, key, value) -> None:
        log, trace = self._log, current_trace()
        pending = LOOP_WRITES.get(trace) if log is not None else None
        if log is None or trace is not log.trace and pending is None:
            raise UnsupportedError(f"{self._name} is written inside a branch that psc_jit "
                                   "turns into XLA's", caller_source(), HINT)
        if isinstance(key, Tracer) and (pending is None or key.kind != "python") or \
                not _replayable(value):
            raise UnsupportedError(f"{self._name} gets a value psc_jit cannot make afresh on "
                                   f"each run ({type(value).__name__})", caller_source(), HINT)
        record_write(log, (self._name, op, key, value))


class _ListOfSink:
    """`hist['loss']` of a Sink of kind `lists (...)`: its appends are the sink's."""
    __slots__ = ("sink", "key")

    def __init__(self, sink: Sink, key):
        self.sink, self.key = sink, key

    def append(self, value) -> None:
        self.sink._record("append_to", self.key, value)


def sink_fits(kind: str, value) -> bool:
    """Whether an object of the user's takes a sink's writes as plain Python would: a list's
    append, a dict's items, an object's attributes (one of the user's own kind), a dict's
    lists (each key there, a list)."""
    if kind == "list":
        return type(value) is list
    if kind == "dict":
        return isinstance(value, dict)
    if kind.startswith("lists "):
        return isinstance(value, dict) and all(
            type(value.get(k)) is list for k in ast.literal_eval(kind[len("lists "):]))
    return hasattr(value, "__dict__") and not isinstance(
        value, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                types.MethodType, np.ndarray, np.generic))


class EffectLog:
    """The writes to a traced cell's sinks, in order: (name, op, key, value)."""

    def __init__(self, trace):
        self.trace = trace
        self.entries: list[tuple] = []


_REPLAYABLE_ATOMS = (bool, int, float, complex, str, bytes, type(None), np.generic)


def _replayable(value) -> bool:
    """A value a compiled run gives afresh (a traced array) or that is the same on every run
    (a number or a string), or a tuple, list or dict of those (rebuilt on every run); not an
    array that is not traced (plain Python would write that very object)."""
    if isinstance(value, (Tracer,) + _REPLAYABLE_ATOMS):
        return True
    if type(value) in (tuple, list):
        return all(_replayable(v) for v in value)
    if type(value) is dict:
        return all(_replayable(v) for v in value.values())
    return False


_WRITTEN: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "psc_jit_written", default=frozenset())


def written_by_the_cell(value) -> bool:
    """Whether value is an object the traced cell writes to through a Sink: code that reads
    it (a helper reading it as a global) would see it before the writes, which are made after
    the run, so such a read is refused."""
    written = _WRITTEN.get()
    return bool(written) and id(value) in written


class CellEffects:
    """The cell being traced, for the helpers it calls: its log of writes, the namespace it
    runs in (a helper's writes to a global there are the cell's to replay: helper_sinks.py),
    the names of its inputs there, and the sinks made for helpers' globals, by name."""
    __slots__ = ("log", "namespace", "inputs", "helper_sinks")

    def __init__(self, log: EffectLog, namespace, inputs: tuple[str, ...]):
        self.log, self.namespace, self.inputs = log, namespace, inputs
        self.helper_sinks: dict[str, Sink] = {}

    def reaches(self, target) -> bool:
        """Whether the cell's inputs hold target (themselves, or inside their lists, dicts
        and tuples): the cell reads those as they were when it started."""
        seen, todo = set(), [self.namespace.get(n) for n in self.inputs]
        while todo and len(seen) < REACH_LIMIT:
            value = todo.pop()
            if value is target:
                return True
            if id(value) in seen or type(value) not in (list, dict, tuple):
                continue
            seen.add(id(value))
            todo.extend(value.values() if type(value) is dict else value)
        return bool(todo)       # (past the limit: taken to reach it)


REACH_LIMIT = 10_000    # containers looked into for `CellEffects.reaches`


CELL_EFFECTS: contextvars.ContextVar[CellEffects | None] = contextvars.ContextVar(
    "psc_jit_cell_effects", default=None)


def mark_written(target) -> None:
    """`target` is written through a sink from now on: reading it is refused."""
    _WRITTEN.set(_WRITTEN.get() | {id(target)})


def with_effects(fn, sinks: tuple[int, ...], namespace: dict | None = None,
                 inputs: tuple[str, ...] = ()):
    """fn (a cell as a function of the names `inputs`) returning (its result, the writes to
    its sinks: the arguments at positions `sinks`, and the globals in `namespace` that the
    helpers it calls only write to)."""
    @functools.wraps(fn)
    def cell(*args):
        log = EffectLog(current_trace())
        for i in sinks:
            object.__setattr__(args[i], "_log", log)
        token = _WRITTEN.set(frozenset(args[i].target for i in sinks))
        context = CELL_EFFECTS.set(CellEffects(log, namespace, inputs))
        try:
            return fn(*args), tuple(log.entries)
        finally:
            CELL_EFFECTS.reset(context)
            _WRITTEN.reset(token)
            for i in sinks:
                object.__setattr__(args[i], "_log", None)
    return cell


class KeptObjects:
    """The contents of the lists, dicts and objects of the user's that a cell's helpers write
    to, and of the lists and dicts they hold (`hist['loss'].append(v)` writes into a list in
    a dict), as they are now; `restore` puts them back in place (the timing comparison's
    plain runs call the helpers that write to them)."""

    def __init__(self, objects):
        self._kept: list = []
        seen: set[int] = set()
        todo = list(objects)
        while todo and len(seen) < REACH_LIMIT:
            obj = todo.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            kept = contents(obj if type(obj) in (list, dict) or isinstance(obj, dict)
                            else vars(obj))
            self._kept.append(kept)
            items = kept.items.values() if isinstance(kept.items, dict) else kept.items
            todo.extend(v for v in items if type(v) in (list, dict))

    def restore(self) -> None:
        for kept in self._kept:
            kept.put_back()


def written_names(effects) -> set[str]:
    """The names of the objects a run's writes go to."""
    names = set()
    for entry in effects:
        names |= written_names(entry[2]) if entry[0] == ROWS else {entry[0]}
    return names


def replay_effects(effects, namespace: dict) -> None:
    """Make a run's writes on the user's objects (fetched by name), in order; a loop's rows
    of writes pass by pass, each value as the kind of value the pass wrote (a Python number,
    a NumPy scalar or an array)."""
    for entry in effects:
        if entry[0] == ROWS:
            _, n, entries, kinds = entry
            for i in range(n):
                replay_effects([_row(e, k, i) for e, k in zip(entries, kinds, strict=True)],
                               namespace)
            continue
        name, op, key, value = entry
        target = namespace[name]
        if op == "append":
            target.append(value)
        elif op == "append_to":
            target[key].append(value)
        elif op == "setitem":
            target[key] = value
        else:
            setattr(target, key, value)


def _row(entry: tuple, kinds: tuple, i: int) -> tuple:
    """Pass i's write from a loop's stacked entry (kinds: per leaf, the kind its value had in
    the pass, None for a value the same in every pass)."""
    leaves, treedef = tree_util.flatten(entry)
    row = []
    for leaf, kind in zip(leaves, kinds, strict=True):
        if kind is None:
            row.append(leaf)
        elif kind == "python":
            row.append(leaf[i].item())
        elif kind == "scalar":
            row.append(leaf[i])             # (a NumPy scalar: leaf is one value per pass)
        else:
            row.append(leaf[i, ...])        # (an array, 0-d too)
    return tree_util.unflatten(treedef, row)
