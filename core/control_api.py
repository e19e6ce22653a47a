"""Loops and branches on traced values, traced once into sub-graphs.

The public functions (JAX's names and meanings) run as plain Python when nothing they touch
is traced, and otherwise trace their functions into a `while_loop` or `cond` equation:

    fori_loop(lower, upper, body_fun, init_val)      body_fun(i, val) -> val
    while_loop(cond_fun, body_fun, init_val)         cond_fun(val) -> bool, body_fun(val) -> val
    cond(pred, true_fun, false_fun, *operands)
    switch(index, branches, *operands)               index clamped into range, as JAX does
    scan(f, init, xs, length=None)                   f(carry, x) -> (carry, y); ys stacked

The machinery below them is shared with the loop-rolling pass (`rolling.py`), which hands
over a loop body as a function of the names it uses:

- *Carried state.* Arrays that the body updates in place (`u[1:-1] = ...`) are carried by
  reference: the buffer's value goes in, its last value is assigned back to the same buffer,
  so every view of it sees the update. Names the body rebinds (`w = w - lr * grad`) are
  carried by value, one slot per traced leaf (tuples are flattened).
- *Types.* The body is traced with the entry types; the exit types are joined with them
  (NEP 50: a Python float meeting float64 becomes float64) and the body is traced again until
  they settle, so `acc = 0.0; acc = acc + x[i] * x[i]` carries one float64.
- *Closure conversion.* Values from outside that a body reads become explicit operands.
- *Loop invariants* (carried values the body passes through) become operands, not carries.
A loop or branch that cannot be converted raises `CannotConvert` (an UnsupportedError) saying
why; `peel` says whether running one iteration first could help.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .control import SubTrace, align_consts, close, cond_p, has_control_flow, inline, while_loop_p
from .ir import Graph, ShapedArray, Var
from .numpy_api import as_kind, broadcast_to, call_ufunc, ensure_tracer, reshape
from .registry import primitive
from .tracing import Buffer, Tracer, UnsupportedError, bind, c_strides, current_trace


class _Unbound:
    """The value of a name that has none yet (read only by generated code)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = _Unbound()
INDEX_AVAL = ShapedArray((), np.dtype(np.int64), weak_type=True)   # a Python int, traced
SELECT_MAX_EQNS = 16      # branches this small (and simple) become a select, not a cond
_NOT_CHEAP = {"dot_general", "gather", "scatter", "while_loop", "cond"}


class CannotConvert(UnsupportedError):
    """A loop or branch that cannot become one XLA op; `peel`: running its first
    iteration as plain Python might make the rest convertible."""

    def __init__(self, message: str, hint: str = "", peel: bool = False):
        super().__init__(message, None, hint)
        self.peel = peel


# -- trees (tuples only: lists and dicts are mutable, so they are never rebuilt) --------------

def flatten(value) -> tuple[list, Any]:
    if type(value) is tuple:
        leaves, defs = [], []
        for item in value:
            sub_leaves, sub_def = flatten(item)
            leaves += sub_leaves
            defs.append(sub_def)
        return leaves, tuple(defs)
    return [value], None


def unflatten(treedef, leaves) -> Any:
    iterator = iter(leaves)

    def build(d):
        return next(iterator) if d is None else tuple(build(c) for c in d)
    return build(treedef)


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
        return any(contains_tracer(_cell_value(c), depth - 1) for c in value.__closure__)
    if hasattr(value, "func") and hasattr(value, "args"):          # functools.partial
        return contains_tracer(value.args, depth - 1) or contains_tracer(value.func, depth - 1)
    return False


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:            # an empty cell
        return None


# -- the type of a value in a loop or branch: a Slot (traced) or the static value itself -----

@dataclass(frozen=True)
class Slot:
    aval: ShapedArray
    kind: str          # what NumPy hands back: "array", "scalar" or "python"

    def __str__(self) -> str:
        return str(self.aval)


def type_of(leaf):
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


def _slot_of_static(value) -> Slot:
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


def join(a, b, name: str, loop: bool = True):
    """The one type that both a and b convert to exactly, the way NumPy would promote them.
    In a loop (a = entry, b = exit) the kind is the exit's; between branches, the wider."""
    if not isinstance(a, Slot) and not isinstance(b, Slot) and same_static(a, b):
        return a
    for t in (a, b):
        if not isinstance(t, Slot) and not _is_number(t):
            raise CannotConvert(f"`{name}` is {describe(a)} on entry and {describe(b)} after "
                                "one pass", _init_hint(name), peel=True)
    a = a if isinstance(a, Slot) else _slot_of_static(a)
    b = b if isinstance(b, Slot) else _slot_of_static(b)
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
    kind = b.kind if loop else max(a.kind, b.kind, key=_KIND_RANK.__getitem__)
    return Slot(ShapedArray(a.aval.shape, dtype, a.aval.weak_type and b.aval.weak_type), kind)


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
        t = bind(primitive("convert_element_type"), t, new_dtype=slot.aval.dtype,
                 weak_type=slot.aval.weak_type)
    return as_kind(t, slot.kind)


def zeros_like_slot(slot: Slot) -> Tracer:
    return coerce(np.zeros(slot.aval.shape, slot.aval.dtype), slot)


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


# -- arrays updated in place: carried by reference --------------------------------------------

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
class _Snapshot:
    """Lists, dicts and sets the body can see: a body that changes them cannot be rolled."""
    items: list[tuple[str, Any, Any]] = field(default_factory=list)

    @staticmethod
    def of(env: dict[str, Any], names) -> _Snapshot:
        snap = _Snapshot()
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


# -- loops ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LoopSpec:
    """A loop body as a function of names: `body_fn([index,] *values of names)` returns the
    values of `assigned`; `exposed` are the assigned names it may read before assigning."""
    names: tuple[str, ...]
    assigned: tuple[str, ...]
    exposed: frozenset[str]


@dataclass
class _Pass:
    """One traced pass of a loop body or condition, on inputs of given types."""
    sub: SubTrace
    head: list[Var]                            # inputs of the index and the in-place arrays
    inner: dict[int, Buffer]                   # outer buffer id -> its inner buffer
    slot_inputs: dict[str, list | None]        # name -> input tracer (or static) per leaf
    index: Tracer | None = None
    result: Any = None

    def carried_vars(self, names, types) -> list[Var]:
        """Inputs in carried order; a name the pass took as unbound gets unused inputs."""
        carried = list(self.head)
        for name in names:
            inputs = self.slot_inputs[name]
            if inputs is None:
                carried += [Var(t.aval) for t in types[name][1] if isinstance(t, Slot)]
            else:
                carried += [t._buffer.initial for t in inputs if isinstance(t, Tracer)]
        return carried


class _Loop:
    """Trace a loop body until its types settle, then emit one while_loop equation."""

    def __init__(self, spec: LoopSpec, env: dict[str, Any], body_fn, cond_fn, index, observed):
        self.spec, self.env = spec, env
        self.body_fn, self.cond_fn, self.index = body_fn, cond_fn, index
        self.observed = observed
        self.fixed = tracer_buffers(env.get(n, UNBOUND) for n in spec.names
                                    if n not in spec.assigned)
        self.entry = self.entry_types()

    # types ---------------------------------------------------------------------------------
    def entry_types(self) -> dict[str, Any]:
        """The tree type of each exposed name on entry; None where the entry value is dead."""
        types = {}
        for name in self.spec.assigned:
            value = self.env.get(name, UNBOUND)
            live = name in self.spec.exposed and value is not UNBOUND
            types[name] = tree_type(value) if live else None
        return types

    def settle(self) -> tuple[dict, _Pass]:
        types = self.entry
        for _ in range(3):
            body = self.trace_pass(types, self.body_fn)
            exits = self.exit_types(types, body.result)
            if all(same_type(exits[n], types[n]) for n in types if types[n] is not None):
                return exits, body
            types = exits
        raise CannotConvert("the types of the loop's values do not settle",
                            "give each value its final dtype before the loop")

    def exit_types(self, types, result) -> dict[str, Any]:
        exits = {}
        for name, value in zip(self.spec.assigned, result, strict=True):
            treedef, leaf_types = tree_type(value)
            if types[name] is None:
                exits[name] = (treedef, leaf_types)
                continue
            entry_def, entry_types = types[name]
            if entry_def != treedef:
                raise CannotConvert(f"`{name}` changes structure in the loop", peel=True)
            exits[name] = (treedef, tuple(join(a, b, name) for a, b in zip(
                entry_types, leaf_types, strict=True)))
        return exits

    # tracing -------------------------------------------------------------------------------
    def trace_pass(self, types, fn) -> _Pass:
        sub = SubTrace()
        p = _Pass(sub, [], {}, {})
        if self.index is not None:
            p.index = sub.input(INDEX_AVAL, "python")
            p.head.append(p.index._buffer.initial)
        for buf in self.fixed:
            p.inner[id(buf)] = sub.input_buffer(buf)
            p.head.append(p.inner[id(buf)].initial)
        for name in self.spec.assigned:
            p.slot_inputs[name] = _slot_inputs(sub, types[name])
        args = [self._arg(n, types, p) for n in self.spec.names]
        with sub.active():
            p.result = fn(*([p.index] if p.index is not None else []), *args)
        return p

    def _arg(self, name, types, p: _Pass):
        if name not in self.spec.assigned:
            return remap(self.env.get(name, UNBOUND), p.inner)
        if types[name] is None:
            return UNBOUND
        return unflatten(types[name][0], p.slot_inputs[name])

    # checks --------------------------------------------------------------------------------
    def check_aliasing(self, body: _Pass) -> None:
        """Rebound names are carried by value: an array one of them holds on entry must not be
        updated in place if anything else can see it (its other holders would miss it)."""
        if self.observed is None:
            return
        slot_mutated = any(t._buffer.mutated for inputs in body.slot_inputs.values()
                           for t in (inputs or ()) if isinstance(t, Tracer))
        fixed_mutated = {i for i, buf in body.inner.items() if buf.mutated}
        for name in self.spec.assigned:
            if self.entry[name] is None:
                continue
            for leaf in flatten(self.env[name])[0]:
                if isinstance(leaf, Tracer) and (id(leaf._buffer) in fixed_mutated or (
                        slot_mutated and self.observed(leaf))):
                    raise CannotConvert(
                        f"`{name}` is rebound in the loop while the array it holds on entry "
                        "is updated in place and seen from outside the loop",
                        f"copy it before the loop ({name} = {name}.copy())", peel=True)

    # emitting ------------------------------------------------------------------------------
    def run(self, snapshot: _Snapshot) -> dict[str, Any]:
        types, body = self.settle()
        snapshot.check()
        self.check_aliasing(body)
        checks = list(body.sub.checks)
        check_ins = [body.sub.input(s.aval, s.kind) for s in _CHECK_SLOTS * len(checks)]
        exits = self.body_exits(body, types) + _check_exits(body.sub, checks, check_ins)
        body_vars = body.carried_vars(self.spec.assigned, types) + [
            t._buffer.initial for t in check_ins]
        body_graph = body.sub.graph(exits, body_vars)
        extra = [Var(s.aval) for s in _CHECK_SLOTS * len(checks)]
        cond_graph = self.cond_graph(types, extra)
        snapshot.check()
        inits = self.inits(types) + [coerce(v, s) for v, s in zip(
            (True, 0) * len(checks), _CHECK_SLOTS * len(checks), strict=True)]
        values = self.emit(cond_graph, body_graph, inits)
        return self.results(types, values, checks)

    def body_exits(self, body: _Pass, types) -> list:
        exits = []
        with body.sub.active():
            if self.index is not None:
                exits.append(coerce(call_ufunc(np.add, body.index, self.index[2]),
                                    Slot(INDEX_AVAL, "python")))
            exits += [Tracer(body.inner[id(buf)]) for buf in self.fixed]
            for name, value in zip(self.spec.assigned, body.result, strict=True):
                for leaf, t in zip(flatten(value)[0], types[name][1], strict=True):
                    if isinstance(t, Slot):
                        exits.append(coerce(leaf, t))
        return exits

    def cond_graph(self, types, extra: list[Var]) -> Graph:
        if self.cond_fn is None:
            return self.index_cond_graph(types, extra)
        cond = self.trace_pass(types, self.cond_fn)
        if any(buf.mutated for buf in cond.inner.values()):
            raise CannotConvert("the loop condition updates an array in place")
        if cond.sub.checks:
            raise CannotConvert("the loop condition indexes with a traced index that the run "
                                "would have to check", "compute the test in the loop body, "
                                "into a name the condition reads")
        with cond.sub.active():
            pred = to_pred(cond.result)
        return cond.sub.graph([pred], cond.carried_vars(self.spec.assigned, types) + extra)

    def index_cond_graph(self, types, extra: list[Var]) -> Graph:
        sub = SubTrace()
        p = _Pass(sub, [], {}, {})
        p.index = sub.input(INDEX_AVAL, "python")
        p.head = [p.index._buffer.initial] + [Var(buf.var.aval) for buf in self.fixed]
        p.slot_inputs = {name: None for name in self.spec.assigned}
        _, stop, step = self.index
        with sub.active():
            pred = call_ufunc(np.less if step > 0 else np.greater, p.index, stop)
        return sub.graph([pred], p.carried_vars(self.spec.assigned, types) + extra)

    def inits(self, types) -> list[Tracer]:
        inits = []
        if self.index is not None:
            inits.append(coerce(self.index[0], Slot(INDEX_AVAL, "python")))
        inits += [Tracer(buf) for buf in self.fixed]
        for name in self.spec.assigned:
            live = self.entry[name] is not None
            entry = flatten(self.env[name])[0] if live else None
            for k, t in enumerate(types[name][1]):
                if isinstance(t, Slot):
                    inits.append(coerce(entry[k], t) if live else zeros_like_slot(t))
        return inits

    def emit(self, cond_graph: Graph, body_graph: Graph, inits: list) -> list:
        """Bind the while_loop; the value of every carried position after it."""
        keep = 1 if self.index is not None else 0
        cond_graph, body_graph, invariants, carried = hoist_invariants(cond_graph, body_graph,
                                                                      keep)
        cond_c, body_c = close(cond_graph), close(body_graph)
        consts = [inits[k] for k in invariants]
        outs = bind(while_loop_p, *cond_c.consts, *consts, *body_c.consts, *consts,
                    *(inits[k] for k in carried),
                    cond_graph=cond_c.graph, body_graph=body_c.graph,
                    cond_nconsts=len(cond_c.consts) + len(consts),
                    body_nconsts=len(body_c.consts) + len(consts))
        values = list(inits)
        for k, out in zip(carried, outs, strict=True):
            values[k] = out
        return values

    def results(self, types, values: list, checks) -> dict[str, Any]:
        values = iter(values)
        result: dict[str, Any] = {}
        if self.index is not None:
            result["__index__"] = next(values)
        write_back(self.fixed, [next(values) for _ in self.fixed])
        for name in self.spec.assigned:
            treedef, leaf_types = types[name]
            leaves = [as_kind(next(values), t.kind) if isinstance(t, Slot) else t
                      for t in leaf_types]
            result[name] = unflatten(treedef, leaves)
        for check in checks:
            current_trace().require(next(values), next(values), check.message, check.error)
        return result


def write_back(buffers: Sequence[Buffer], values: Sequence[Tracer]) -> None:
    """Assign each buffer its new value (all checked first, so none is half done)."""
    changed = [(b, v) for b, v in zip(buffers, values, strict=True) if v.ir_var is not b.var]
    for buf, _ in changed:
        buf._check_entangled()
    for buf, value in changed:
        buf.assign(value.ir_var)


# -- run-time checks (a traced index within bounds) made inside a loop or branch ---------------

_CHECK_SLOTS = (Slot(ShapedArray((), np.dtype(bool)), "scalar"),
                Slot(ShapedArray((), np.dtype(np.int64)), "scalar"))


def _atom_tracer(atom, trace) -> Tracer:
    if isinstance(atom, Var):
        return Tracer(Buffer(atom, trace, strides=c_strides(atom.aval)), kind="scalar")
    return ensure_tracer(atom.value)


def _check_exits(sub: SubTrace, checks, check_ins) -> list[Tracer]:
    """Carried per check: whether it held in every iteration so far, and the value the first
    failure reports (the run raises NumPy's error after the loop, before writing anything)."""
    exits = []
    with sub.active():
        for k, check in enumerate(checks):
            ok_in, value_in = check_ins[2 * k], check_ins[2 * k + 1]
            ok = _atom_tracer(check.ok, sub.trace)
            value = coerce(_atom_tracer(check.value, sub.trace), _CHECK_SLOTS[1])
            first = call_ufunc(np.logical_and, ok_in, call_ufunc(np.logical_not, ok))
            exits.append(coerce(call_ufunc(np.logical_and, ok_in, ok), _CHECK_SLOTS[0]))
            exits.append(coerce(_where(first, value, value_in), _CHECK_SLOTS[1]))
    return exits


def _where(pred, a, b) -> Tracer:
    return bind(primitive("select"), pred, a, b)


def _slot_inputs(sub: SubTrace, t) -> list | None:
    if t is None:
        return None
    return [sub.input(lt.aval, lt.kind) if isinstance(lt, Slot) else lt for lt in t[1]]


def hoist_invariants(cond_graph: Graph, body_graph: Graph, keep: int):
    """Carried values the body passes through unchanged become leading inputs of both graphs
    (operands, not carries). Returns both graphs, the invariant and the carried positions."""
    n = len(body_graph.in_vars)
    invariant = [k for k in range(keep, n) if body_graph.out_atoms[k] is body_graph.in_vars[k]]
    carried = [k for k in range(n) if k not in invariant]

    def reorder(graph: Graph, outs) -> Graph:
        ins = [graph.in_vars[k] for k in invariant] + [graph.in_vars[k] for k in carried]
        return Graph(tuple(ins), graph.eqns, tuple(outs))

    body_outs = [body_graph.out_atoms[k] for k in carried]
    return (reorder(cond_graph, cond_graph.out_atoms), reorder(body_graph, body_outs),
            invariant, carried)


def roll_loop(spec: LoopSpec, env: dict[str, Any], body_fn, cond_fn=None, index=None,
              observed: Callable[[Tracer], bool] | None = None) -> dict[str, Any]:
    """Trace `body_fn` into one while_loop equation of the current trace; return the new values
    of `spec.assigned` (and `__index__`: the first index not run, for a range loop).

    index: (start, stop, step) with a static nonzero step, for `for i in range(...)`;
    cond_fn: the test of a `while` loop, a function of the same names.
    observed(tracer): whether an array is seen from outside the loop's names (None: values
    are carried by value, as in JAX)."""
    snapshot = _Snapshot.of(env, spec.names)
    try:
        return _Loop(spec, env, body_fn, cond_fn, index, observed).run(snapshot)
    finally:
        if snapshot.changed() is not None:
            snapshot.restore()


# -- branches ---------------------------------------------------------------------------------

@dataclass
class _Branch:
    sub: SubTrace
    inner: dict[int, Buffer]
    memo: dict[int, Tracer]
    leaves: list
    treedef: Any = None


def branch(index: Tracer, fns: Sequence[Callable], args: Sequence, pred: Tracer | None = None,
           names: Sequence[str] | None = None):
    """Trace each `fn(*args)` into a branch of one `cond` on `index` (i32[]); return the result
    (one tree from every branch) as values of the current trace. An array in args that a
    branch updates in place is updated here too. With two small branches and `pred`, both are
    inlined and their results selected (np.where) instead."""
    buffers = tracer_buffers(args)
    passes = [_trace_branch(fn, args, buffers) for fn in fns]
    treedef = passes[0].treedef
    if any(p.treedef != treedef for p in passes):
        raise CannotConvert("the branches give results of different structure",
                            "assign the same names in every branch")
    leaf_names = _leaf_names(names, treedef)
    plan = [_plan_leaf([p.leaves[k] for p in passes], passes, leaf_names[k])
            for k in range(len(passes[0].leaves))]
    mutated = [b for b in buffers if any(p.inner[id(b)].mutated for p in passes)]
    checks = [(k, c) for k, p in enumerate(passes) for c in p.sub.checks]
    graphs = [_branch_graph(p, k, plan, mutated, checks) for k, p in enumerate(passes)]
    operands = [Tracer(b) for b in buffers]
    if not graphs[0].out_atoms:
        outs = []
    elif pred is not None and len(graphs) == 2 and all(_is_cheap(g) for g in graphs):
        outs = _select(pred, graphs, operands)
    else:
        aligned, consts = align_consts([close(g) for g in graphs])
        outs = bind(cond_p, index, *consts, *operands, branches=tuple(aligned))
    write_back(mutated, outs[:len(mutated)])
    outs = iter(outs[len(mutated):])
    leaves = [as_kind(next(outs), how.kind) if isinstance(how, Slot) else how.value
              for how in plan]
    for _, check in checks:
        current_trace().require(next(outs), next(outs), check.message, check.error)
    return unflatten(treedef, leaves)


def _trace_branch(fn, args, buffers) -> _Branch:
    sub = SubTrace()
    inner = {id(b): sub.input_buffer(b) for b in buffers}
    memo: dict[int, Tracer] = {}
    inner_args = [remap(a, inner, memo) for a in args]
    with sub.active():
        result = fn(*inner_args)
    leaves, treedef = flatten(result)
    return _Branch(sub, inner, memo, leaves, treedef)


def _leaf_names(names, treedef) -> list[str]:
    if names is None or treedef is None:
        return ["the result"] * _count(treedef)
    out = []
    for name, sub in zip(names, treedef, strict=True):
        out += [name] * _count(sub)
    return out


def _count(treedef) -> int:
    return 1 if treedef is None else sum(_count(c) for c in treedef)


@dataclass(frozen=True)
class _Keep:
    """A result leaf that is the same in every branch: an outer value, or a static one."""
    value: Any


def _plan_leaf(values, passes, name):
    outer = [p.memo.get(id(v)) for p, v in zip(passes, values, strict=True)]
    if outer[0] is not None and all(o is outer[0] for o in outer):
        return _Keep(outer[0])
    if all(v is values[0] for v in values) and not isinstance(values[0], Tracer):
        return _Keep(values[0])
    if any(v is UNBOUND for v in values):
        raise CannotConvert(f"`{name}` is assigned in one branch only and has no value before "
                            "the `if`", f"give `{name}` a value before the `if`")
    joined = type_of(values[0])
    for v in values[1:]:
        joined = join(joined, type_of(v), name, loop=False)
    return joined if isinstance(joined, Slot) else _Keep(joined)


def _branch_graph(p: _Branch, k: int, plan, mutated, checks) -> Graph:
    """Outputs: arrays updated in place, the result's traced leaves, and (ok, value) for
    every branch's run-time checks (this branch's own, and `True, 0` for the others')."""
    with p.sub.active():
        outs = [Tracer(p.inner[id(b)]) for b in mutated]
        outs += [coerce(v, how) for v, how in zip(p.leaves, plan, strict=True)
                 if isinstance(how, Slot)]
        for owner, check in checks:
            pair = (check.ok, check.value) if owner == k else (True, 0)
            outs += [coerce(_atom_tracer(a, p.sub.trace) if not isinstance(a, (bool, int))
                            else a, slot) for a, slot in zip(pair, _CHECK_SLOTS, strict=True)]
    return p.sub.graph(outs)


def _is_cheap(graph: Graph) -> bool:
    return (len(graph.eqns) <= SELECT_MAX_EQNS and not has_control_flow(graph)
            and not any(e.prim.name in _NOT_CHEAP for e in graph.eqns))


def _select(pred: Tracer, graphs: Sequence[Graph], operands) -> list[Tracer]:
    """Both branches inlined; each result is np.where(pred, true's, false's)."""
    trace = current_trace()
    results = []
    for g in graphs:
        closed = close(g)
        atoms = inline(trace, closed.graph, [*closed.consts, *operands])
        results.append([_atom_tracer(a, trace) for a in atoms])
    outs = []
    for on_false, on_true in zip(*results, strict=True):
        p = broadcast_to(pred, on_true.shape)
        outs.append(bind(primitive("select"), p, on_true, on_false))
    return outs


# -- the public API ---------------------------------------------------------------------------

def _traced(*values) -> bool:
    return current_trace() is not None and any(contains_tracer(v) for v in values)


def _api_error(err: CannotConvert) -> CannotConvert:
    from .tracing import caller_source
    err.source = caller_source()
    return err


def _carry_spec() -> LoopSpec:
    return LoopSpec(("val",), ("val",), frozenset({"val"}))


def fori_loop(lower, upper, body_fun: Callable, init_val):
    """`for i in range(lower, upper): val = body_fun(i, val)`; traced into one XLA loop when
    the bounds, the value or the function hold traced arrays."""
    if not _traced(lower, upper, body_fun, init_val):
        val = init_val
        for i in range(lower, upper):
            val = body_fun(i, val)
        return val
    try:
        out = roll_loop(_carry_spec(), {"val": init_val},
                        lambda i, val: (body_fun(i, val),), index=(lower, upper, 1))
    except CannotConvert as err:
        raise _api_error(err) from None
    return out["val"]


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """`while cond_fun(val): val = body_fun(val)`; one XLA loop when anything is traced."""
    if not _traced(cond_fun, body_fun, init_val):
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    try:
        out = roll_loop(_carry_spec(), {"val": init_val}, lambda val: (body_fun(val),),
                        cond_fn=cond_fun)
    except CannotConvert as err:
        raise _api_error(err) from None
    return out["val"]


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """`true_fun(*operands) if pred else false_fun(*operands)`; one XLA conditional (or a
    select, for small branches) when pred is traced."""
    if not isinstance(pred, Tracer):
        return true_fun(*operands) if pred else false_fun(*operands)
    p = to_pred(pred)
    index = bind(primitive("convert_element_type"), p, new_dtype=np.dtype(np.int32),
                 weak_type=False)
    try:
        return branch(index, [false_fun, true_fun], operands, pred=p)
    except CannotConvert as err:
        raise _api_error(err) from None


def switch(index, branches: Sequence[Callable], *operands):
    """`branches[index](*operands)`, index clamped into range; one XLA case when traced."""
    n = len(branches)
    if not isinstance(index, Tracer):
        return branches[min(max(int(index), 0), n - 1)](*operands)
    if index.dtype.kind not in "biu" or index.ndim:
        raise TypeError(f"switch needs an integer scalar index, got {index.aval}")
    clamped = call_ufunc(np.minimum, call_ufunc(np.maximum, index, 0), n - 1)
    index = bind(primitive("convert_element_type"), clamped, new_dtype=np.dtype(np.int32),
                 weak_type=False)
    try:
        return branch(index, list(branches), operands)
    except CannotConvert as err:
        raise _api_error(err) from None


def scan(f: Callable, init, xs, length: int | None = None):
    """`carry, y = f(carry, x)` for each x along the leading axis of xs (a tuple of arrays, an
    array, or None with `length`); returns (carry, ys stacked). One XLA loop when traced."""
    xs_leaves, xs_def = flatten(xs) if xs is not None else ([], None)
    n = length if length is not None else len(xs_leaves[0])
    if not _traced(f, init, xs):
        return _python_scan(f, init, xs_leaves, xs_def, xs is None, n)
    xs_leaves = [ensure_tracer(a) for a in xs_leaves]

    def x_at(i):
        return None if xs is None else unflatten(xs_def, [a[i] for a in xs_leaves])

    y_leaves, y_def = _probe_y(f, init, x_at)
    ys0 = tuple(zeros_like_slot(Slot(ShapedArray((n,) + y.aval.shape, y.aval.dtype), "array"))
                for y in y_leaves)

    def body(i, val):
        carry, ys = val
        carry, y = f(carry, x_at(i))
        for buf, leaf in zip(ys, flatten(y)[0], strict=True):
            buf[i] = leaf
        return ((carry, ys),)

    try:
        out = roll_loop(_carry_spec(), {"val": (init, ys0)}, body, index=(0, n, 1))
    except CannotConvert as err:
        raise _api_error(err) from None
    carry, ys = out["val"]
    return carry, (None if y_def is None and y_leaves == [] else unflatten(y_def, list(ys)))


def _probe_y(f, init, x_at):
    """The types of f's y, from tracing it once (the trace is thrown away)."""
    sub = SubTrace()
    with sub.active():
        _, y = f(init, x_at(0))
        leaves, treedef = flatten(y)
        if y is None:
            return [], None
        return [ensure_tracer(leaf) for leaf in leaves], treedef


def _python_scan(f, init, xs_leaves, xs_def, no_xs, n):
    carry, ys = init, []
    for i in range(n):
        x = None if no_xs else unflatten(xs_def, [a[i] for a in xs_leaves])
        carry, y = f(carry, x)
        ys.append(y)
    if not ys or ys[0] is None:
        return carry, None
    y_def = flatten(ys[0])[1]
    columns = zip(*(flatten(y)[0] for y in ys), strict=True)
    return carry, unflatten(y_def, [np.stack(c) for c in columns])
