"""What a trace reads from outside its arguments: made inputs, or guarded, never baked in.

Code converted by `convert` (a cell, a jitted function, and every user function they call)
reads globals, closure variables, attributes and items through `load`, `attr` and `item`,
and calls functions through `call`. While `jit` traces, a `Recorder` is current; each value
read through a `Source` it can fetch again (a global of a function, a closure cell, an
argument, and attributes or items of those) becomes:

- an *input* of the compiled program when it is an array, a NumPy scalar or a Python float
  or complex (`ImplicitInput`): a changed value, or an array changed in place, is simply a new
  argument on the next run;
- a *guard* otherwise (`Guard`): ints, bools, strings, None and tuples of those by value;
  functions, modules, classes and dtypes by identity. A re-run checks every guard before it
  runs the program; one that fails is a cache miss whose reason names what changed
  (`K (read by f): 2 → 5`).

NumPy's error state is guarded too. Outside a trace the helpers only do what the code says.
"""
from __future__ import annotations

import contextlib
import contextvars
import enum
import functools
import inspect
import os
import sys
import sysconfig
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..tracing import Trace, Tracer, UnsupportedError, adopting, context_value, is_traced_value
from .effects import (AttributeSnapshot, GlobalsSnapshot, WatchedDict, WatchedList,
                      is_psc_object, written_by_the_cell)
from .helper_sinks import helper_sink
from .read_containers import ReadDict, ReadList
from .refusals import outside_value_error, refuse, watching
from .sources import (FETCH_ERRORS, Guard, ImplicitInput, Missing, Source, describe_key,
                      key_aval, modes_text, short_repr, strict_error_modes, value_key)


BAKED_DEPTH = 3     # levels of attributes and items guarded of an object read unseen


# -- the reads of one trace -------------------------------------------------------------------

@dataclass(frozen=True)
class Reads:
    """Everything a trace read from outside its arguments, in the order it read it. `check`
    runs on every re-run: the implicit inputs' values, or None when something changed."""
    items: tuple[Guard | ImplicitInput, ...] = ()
    n_args: int = 0                         # argument leaves before the implicit inputs
    arg_arrays: tuple[int, ...] = ()        # positions of the traced array arguments

    @property
    def inputs(self) -> tuple[ImplicitInput, ...]:
        return tuple(r for r in self.items if isinstance(r, ImplicitInput))

    @property
    def guards(self) -> tuple[Guard, ...]:
        return tuple(r for r in self.items if isinstance(r, Guard))

    def check(self, leaves) -> list | None:
        """The implicit inputs' values for a call with these argument leaves, or None when
        a guard fails or an implicit input's type changed (this runs on every re-run)."""
        extra: list = []
        for fetch, holds, read in self._plan:
            try:
                value = fetch(leaves)
            except FETCH_ERRORS:
                return None
            if holds is not None:
                if not holds(value):
                    return None
            elif self._input_fits(read, value, leaves, extra):
                extra.append(value)
            else:
                return None
        return extra

    @functools.cached_property
    def _plan(self) -> tuple:
        return tuple((r.source.get if isinstance(r, Guard) and r.test == "absent" else
                      r.source.fetch, r.holds if isinstance(r, Guard) else None, r)
                     for r in self.items)

    def _input_fits(self, read: ImplicitInput, value, leaves, extra) -> bool:
        if value_key(value) != read.key:
            return False
        if read.same_as >= 0:
            target = leaves[read.same_as] if read.same_as < self.n_args else \
                extra[read.same_as - self.n_args]
            return value is target
        if read.key[0] != "array":
            return True
        return not any(value is leaves[p] for p in self.arg_arrays) and \
            not any(value is e for e in extra)

    def explain(self, leaves) -> str:
        """What changed, in the user's words (the first read that no longer holds)."""
        extra: list = []
        for read in self.items:
            value = read.source.get(leaves)
            if type(read) is Guard:
                if isinstance(value, Missing) or not read.holds(value):
                    return read.change(value)
            elif isinstance(value, Missing) or not self._input_fits(read, value, leaves, extra):
                return read.change(value)
            else:
                extra.append(value)
        return ""

    def describe(self) -> str:
        """`cfg.scale: f64[] (input); K (read by f) == 2`."""
        parts = []
        for read in self.items:
            if isinstance(read, ImplicitInput):
                parts.append(f"{read.source.text()}: {describe_key(read.key)} (input)")
            elif read.source.root != "errstate":
                op = {"value": "==", "content": "holds", "length": "has length",
                      "keys": "has keys"}.get(read.test, "is")
                parts.append(f"{read.source.text()} {op} {short_repr(read.expected)}")
        return "; ".join(parts)


@dataclass(frozen=True)
class FunctionInfo:
    """What converted code needs to know about the function it came from: who it is (for
    messages), its globals, and its closure cells by name."""
    label: str
    globals: dict
    cells: dict[str, Any]
    sinks: dict[str, str] = field(default_factory=dict)   # globals it only writes to: kind


class Recorder:
    """The reads of one trace. Arrays and floats become inputs of `trace` (the outermost
    trace, also when read inside a loop body); the rest become guards."""

    def __init__(self, trace: Trace, arg_leaves: list, arg_tracers: dict[int, Tracer],
                 arg_names: list[str], static_sources: frozenset = frozenset()):
        self.trace = trace
        self.static_sources = static_sources    # (keys of numbers read as guarded values)
        self.n_args = len(arg_leaves)
        self.items: list[Guard | ImplicitInput] = []
        self.input_tracers: list[Tracer] = []
        self.input_values: list = []
        self._by_source: dict[tuple, Any] = {}
        self._by_array: dict[int, tuple[int, Tracer]] = {
            id(arg_leaves[i]): (i, t) for i, t in arg_tracers.items()
            if isinstance(arg_leaves[i], np.ndarray)}
        self._arg_arrays = tuple(i for i, _ in self._by_array.values())
        self._sources: dict[int, tuple[Any, Source]] = {}
        self._elements: dict[int, tuple[np.ndarray, Source]] = {}
        self._containers: dict[int, list | dict] = {}     # lists and dicts read, by id
        self.attributes = AttributeSnapshot()      # of objects read from outside
        self.bindings = GlobalsSnapshot()          # of the globals of functions it runs
        for value in arg_leaves:
            self.bindings.add_function(value)
        for i, (name, value) in enumerate(zip(arg_names, arg_leaves, strict=True)):
            if i not in arg_tracers and (_has_attributes(value) or
                                         isinstance(value, types.FunctionType)):
                self._sources[id(value)] = (value, Source("arg", i, name))
        self.guard(Source("errstate", None, "NumPy's error state"), "value",
                   strict_error_modes())

    def finish(self) -> Reads:
        return Reads(tuple(self.items), self.n_args, self._arg_arrays)

    # recording -----------------------------------------------------------------------------
    def guard(self, source: Source, test: str, expected) -> None:
        key = source.key
        if key not in self._by_source:
            self._by_source[key] = expected
            self.items.append(Guard(source, test, expected))

    def guard_baked(self, value, source: Source, depth: int = BAKED_DEPTH) -> None:
        """Guard a value that code psc_jit cannot see reads (so it is baked into the trace);
        an object, dict or list of the user's is guarded through its attributes or items (a
        few levels deep), since which of them the code reads is not seen either."""
        if isinstance(value, np.ndarray) and value.nbytes <= BAKED_CONTENT_BYTES:
            self.guard(source, "content", (value.dtype, value.shape, value.tobytes()))
        elif isinstance(value, (float, complex, np.generic)) and not isinstance(value, bool):
            self.guard(source, "value", value)
        else:
            test = _guard_test(value)
            if test is not None:
                self.guard(source, test, getattr(value, "__func__", value)
                           if test == "identity" else value)
            elif depth > 0 and not isinstance(value, (type, types.ModuleType)):
                self._guard_parts(value, source, depth - 1)

    def _guard_parts(self, value, source: Source, depth: int) -> None:
        if type(value) in (list, dict):
            self._container(value, source)
            items = value.items() if type(value) is dict else enumerate(value)
            parts = [(source.then("item", k), v) for k, v in items]
        else:
            self.guard(source, "identity", value)
            parts = [(source.then("attr", k), v) for k, v in sorted(
                vars(value).items()) if isinstance(k, str)] if hasattr(value, "__dict__") else []
        for part_source, part in parts:
            self.guard_baked(part, part_source, depth)

    def has_read(self, obj) -> bool:
        """Whether the trace read obj (an object, list or dict of the user's) before."""
        return self.source_of(obj) is not None or self._containers.get(id(obj)) is obj

    def source_of(self, obj) -> Source | None:
        found = self._sources.get(id(obj))
        return found[1] if found is not None and found[0] is obj else None

    def read(self, value, source: Source):
        """The value the code should see for a value read through `source`."""
        if isinstance(value, Tracer):
            return value
        refuse(outside_value_error(value, source.text()))
        if written_by_the_cell(value):
            raise UnsupportedError(f"{source.text()} is read, and the cell writes to it: "
                                   "compiled code cannot replay those writes before the read",
                                   None,
                                   "pass the values to the function instead of reading them "
                                   "from the object")
        known = self._by_source.get(source.key)
        if isinstance(known, Tracer):
            return known
        if _is_small_index(value):
            self.guard(source, "content", (value.dtype, value.shape, value.tobytes()))
            return value
        if is_traced_value(value) and value_key(value) is not None:
            if source.key not in self.static_sources:
                return self._input(value, source)
            self.guard(source, "value", value)
            return value
        if type(value) is tuple:
            return tuple(self.read(v, source.then("item", i)) for i, v in enumerate(value))
        test = _guard_test(value)
        if test is not None:
            self.guard(source, test, getattr(value, "__func__", value) if test == "identity"
                       else value)
        if _has_attributes(value):
            self._sources.setdefault(id(value), (value, source))
            self.attributes.add(value, source.text())
        elif isinstance(value, types.FunctionType):     # (its defaults: convert.call)
            self._sources.setdefault(id(value), (value, source))
            self.attributes.add(value, source.text())   # (`f.calls += 1` in f)
        elif isinstance(value, types.MethodType):
            self._sources.setdefault(id(value.__func__),
                                     (value.__func__, source.then("attr", "__func__")))
        self.bindings.add_function(value)
        if type(value) in (list, dict):
            self._container(value, source)
            return self._watched(value, source)
        return value

    def _watched(self, value, source: Source):
        """The code sees a watched copy of a list or dict from outside (the same items): a
        change to it is refused at its line, and the user's own is never touched. Its items
        are read as any other read when the code takes them (`for c in coeffs`, `sum(L)`,
        `d.values()`, ...; `ReadList`, `ReadDict`): a float becomes an input, an int is
        guarded."""
        key = ("watched",) + source.key
        copy = self._by_source.get(key)
        if copy is None:
            copy = self._by_source[key] = (ReadList if type(value) is list else ReadDict)(
                value)
            copy._psc_item = functools.partial(self._item_read, source)
            copy._psc_guard = functools.partial(self._item_guard, source)
            self._sources[id(copy)] = (copy, source)
        return copy

    def _item_read(self, source: Source, key, value):
        return self.read(value, source.then("item", key))

    def _item_guard(self, source: Source, key, value) -> None:
        """An item guarded by its value, even when it is also an input."""
        part = source.then("item", key)
        if isinstance(value, (float, complex, np.generic)) or _guard_test(value) == "value":
            self.items.append(Guard(part, "value", value))
        else:
            self.guard_baked(value, part)

    def absent(self, obj, name: str) -> None:
        """`getattr(obj, name, default)` or `hasattr` found no such attribute: guarded so."""
        source = self.source_of(obj)
        if source is not None:
            self.guard(source.then("attr", name), "absent", None)

    def _container(self, value, source: Source) -> None:
        """A list or dict read from outside: its length (or keys) is guarded, as loops over
        it depend on them, and its arrays become inputs when the trace takes them as they
        are (iterated over, or handed to zip, ...) instead of through `item` (`adopt`)."""
        self._containers[id(value)] = value
        if type(value) is list:
            self.guard(source, "length", len(value))
            items = enumerate(value)
        else:
            self.guard(source, "keys", tuple(value))
            items = value.items()
        for key, element in items:
            if type(element) is np.ndarray:
                self._elements.setdefault(id(element), (element, source.then("item", key)))

    def adopt(self, array: np.ndarray):
        """The input standing for an array from outside, when it is an element of a list or
        dict the trace read (None: a constant of the trace's own)."""
        found = self._elements.get(id(array))
        if found is None or found[0] is not array:
            return None
        result = self.read(array, found[1])
        return result if isinstance(result, Tracer) else None

    def _input(self, value, source: Source) -> Tracer:
        key = value_key(value)
        same = self._by_array.get(id(value)) if key[0] == "array" else None
        if same is not None:
            position, tracer = same
        else:
            aval, kind, strides = key_aval(key)
            tracer = self.trace.new_input(aval, kind, strides)
            position = -1
            if key[0] == "array":
                self._by_array[id(value)] = (self.n_args + len(self.input_values), tracer)
        self.items.append(ImplicitInput(source, key, position))
        self._by_source[source.key] = tracer
        self.input_tracers.append(tracer)
        self.input_values.append(value)
        return tracer


SMALL_INDEX = 4096     # elements: integer and boolean arrays up to this size are guarded
BAKED_CONTENT_BYTES = 1 << 16   # arrays read unseen: compared by contents up to this size
UNSEEN_FUNCTIONS = 64      # functions whose globals one unconverted call takes, at most


def _is_small_index(value) -> bool:
    """An integer or boolean array small enough to compare on every re-run: it stays static
    (code uses such arrays as indices and masks, which must be known to trace)."""
    return type(value) is np.ndarray and value.dtype.kind in "biu" and \
        value.size <= SMALL_INDEX


def _guard_test(value) -> str | None:
    """How to guard a static value: by "value", by "identity", or not at all (None: an
    object whose attributes are guarded one by one as they are read)."""
    if value is None or value is Ellipsis or isinstance(value, (bool, int, str, bytes, np.dtype)):
        return "value"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.ModuleType, type, np.ufunc, enum.Enum)) or callable(value) and \
            not _has_attributes(value):
        return "identity"                # (an enum member: `mode is Mode.A`)
    if isinstance(value, np.ndarray):
        return "identity"             # a dtype psc_jit does not trace: it will not compile
    return None


def _has_attributes(value) -> bool:
    """An object whose attributes or items the code may read (and we then follow): not a
    number, string, array or function; a module or class only of the user's own code."""
    if isinstance(value, type):
        return is_user_class(value)
    if isinstance(value, (Tracer, np.ndarray, np.generic, bool, int, float, complex, str,
                          bytes, type(None), types.FunctionType, types.BuiltinFunctionType,
                          types.MethodType, np.ufunc, np.dtype)):
        return False
    if is_psc_object(value):
        return False
    if isinstance(value, types.ModuleType):
        filename = getattr(value, "__file__", None)
        if filename is None:        # made in the notebook (types.ModuleType), or built in
            return getattr(value, "__spec__", None) is None and \
                value.__name__ not in sys.builtin_module_names
        return is_user_file(filename)
    return True


def is_user_class(cls: type) -> bool:
    """A class of the user's own code: of a notebook, or of a file of theirs (found by its
    module, or by its methods' code when the module is not imported by name)."""
    if cls.__module__ == "__main__":
        return True
    filename = getattr(sys.modules.get(cls.__module__), "__file__", None)
    if filename is None:
        code = next((f.__code__ for f in vars(cls).values()
                     if isinstance(f, types.FunctionType)), None)
        filename = code.co_filename if code is not None else None
    return bool(filename) and is_user_file(filename)


def _class_attribute(obj, name: str) -> bool:
    """Whether obj.name comes from obj's class as a plain value or a method (not from the
    instance, and not computed by a property or another descriptor)."""
    if name in getattr(obj, "__dict__", ()):
        return False
    found = inspect.getattr_static(type(obj), name, None)
    return not hasattr(found, "__get__") or isinstance(
        found, (types.FunctionType, staticmethod, classmethod))


_recorder: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar(
    "psc_jit_reads", default=None)


def guard_globals(fn: types.FunctionType, done: set | None = None) -> None:
    """A user function psc_jit cannot convert (no source) reads its globals unseen: guard each
    global its code names by value (arrays by contents when small, else by identity), keep
    what they hold (effects.AttributeSnapshot), and so for the user functions it names."""
    recorder, done = _recorder.get(), set() if done is None else done
    if recorder is None or id(fn) in done or len(done) >= UNSEEN_FUNCTIONS:
        return
    done.add(id(fn))
    label = fn.__qualname__.split("<locals>.")[-1]
    for name in sorted(_code_names(fn.__code__) & fn.__globals__.keys()):
        value = fn.__globals__[name]
        source = Source("global", fn.__globals__, name, reader=label)
        recorder.guard_baked(value, source)
        recorder.attributes.add(value, source.text(), unseen=True)
        if is_user_function(value):
            guard_globals(value, done)


def _code_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def recording_active() -> bool:
    return _recorder.get() is not None


def current_recorder() -> Recorder | None:
    return _recorder.get()


@contextlib.contextmanager
def recording(recorder: Recorder):
    with watching(), context_value(_recorder, recorder), adopting(recorder.adopt):
        yield recorder


def check_error_state() -> None:
    """Compiled code computes inf and nan where NumPy would raise: refuse to trace while
    NumPy's error state asks to raise (or call a function)."""
    strict = strict_error_modes()
    if strict:
        raise UnsupportedError(
            f"NumPy's error state asks to {strict[0][1]} on floating-point errors "
            f"(np.seterr({modes_text(strict)})), and compiled code does not check for them",
            None, "run it without psc_jit, or reset it with np.seterr("
            + ", ".join(f"{k}='warn'" for k, _ in strict) + ")")


# -- the helpers converted code calls ---------------------------------------------------------

def load(value, info: FunctionInfo, name: str):
    """`NAME`, a global or closure variable of the converted function `info`."""
    recorder = _recorder.get()
    if recorder is None or isinstance(value, Tracer):
        return value
    if name in info.cells:
        source = Source("closure", info.cells[name], name, reader=info.label)
    elif name in info.globals:
        source = Source("global", info.globals, name, reader=info.label)
    else:
        return value                  # a builtin
    recorder.bindings.add(info.globals)
    if name in info.sinks:
        sink = helper_sink(recorder, info, name, value, source)
        if sink is not None:
            return sink
    return recorder.read(value, source)


def attr(obj, name: str):
    """`obj.name`. (A method of a list or dict read from outside, `cfg.get`, is the type's:
    not a read of the user's.)"""
    value = getattr(obj, name)
    recorder = _recorder.get()
    if recorder is None or isinstance(obj, Tracer) or isinstance(value, Tracer) or \
            isinstance(obj, (WatchedList, WatchedDict)) and hasattr(type(obj).__mro__[-2], name):
        return value
    source = recorder.source_of(obj)
    if source is None and not isinstance(obj, type) and _class_attribute(obj, name):
        source = recorder.source_of(type(obj))     # an object made by the traced code itself
    if source is None:
        refuse(outside_value_error(value, name))    # (`np.ma.masked`, `os.environ`)
        return value
    return recorder.read(value, source.then("attr", name))


def item(obj, key):
    """`obj[key]` (a read)."""
    value = obj[key]
    recorder = _recorder.get()
    if recorder is not None:                    # (`environ['HOME']`: the environment)
        refuse(outside_value_error(obj, "the value subscripted"))
    if recorder is None or isinstance(obj, (Tracer, np.ndarray)) or isinstance(value, Tracer) \
            or not isinstance(key, (int, str, bytes, tuple)) or isinstance(key, bool):
        return value
    source = recorder.source_of(obj)
    return value if source is None else recorder.read(value, source.then("item", key))


# -- user code --------------------------------------------------------------------------------

def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    dirs.add(os.path.dirname(np.__file__))
    dirs.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # psc_jit's core
    dirs.add(os.path.dirname(os.__file__))
    return tuple(sorted(os.path.abspath(d) + os.sep for d in dirs))


_LIBRARY_DIRS = _library_dirs()
_user_files: dict[str, bool] = {}


def is_user_file(filename: str) -> bool:
    """Code of the user's own (a notebook cell, a script, a module of theirs), not of the
    standard library, an installed package, NumPy or psc_jit."""
    known = _user_files.get(filename)
    if known is None:
        path = os.path.abspath(filename) if filename and not filename.startswith("<") else ""
        known = bool(filename) and not filename.startswith("<frozen") and not (
            path.startswith(_LIBRARY_DIRS) or "site-packages" in path
            or "dist-packages" in path)
        _user_files[filename] = known
    return known


def is_user_function(fn) -> bool:
    """A function of the user's own code, not yet converted: neither converted itself nor
    defined inside converted code (which was converted with it: it closes over `__psc_fn` or
    `__psc_rd`)."""
    return isinstance(fn, types.FunctionType) and not getattr(fn, "__psc_converted__", False) \
        and not any(name.startswith("__psc_") for name in fn.__code__.co_freevars) \
        and is_user_file(fn.__code__.co_filename)

