"""Loops on traced values, traced once into a `while_loop` equation.

- *Carried state.* Arrays that the body updates in place (`u[1:-1] = ...`) are carried by
  reference: the buffer's value goes in, its last value is assigned back to the same buffer,
  so every view of it sees the update. Names the body rebinds (`w = w - lr * grad`) are
  carried by value, one slot per traced leaf (tuples are flattened).
- *Types.* The body is traced with the entry types; the exit types are joined with them
  (NEP 50: a Python float meeting float64 becomes float64) and the body is traced again until
  they settle, so `acc = 0.0; acc = acc + x[i] * x[i]` carries one float64.
- *Closure conversion.* Values from outside that a body reads become explicit operands.
- *Loop invariants* (carried values the body passes through) become operands, not carries.
A loop that cannot be converted raises `CannotConvert` (an UnsupportedError) saying why;
`peel` says whether running one iteration first could help.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..ir import Graph, ShapedArray, Var
from ..numpy.affine import interval, set_range
from ..numpy.base import as_kind, ensure_tracer
from ..numpy.indexing import setitem
from ..numpy.ufuncs import call_ufunc
from ..primitives import select_p, while_loop_p
from ..tracing import (Buffer, DataDependentShapeError, Tracer, bind, c_strides,
                       current_trace)
from ..tree_util import unflatten
from .carry import (INDEX_AVAL, UNBOUND, CannotConvert, Slot, Snapshot, coerce, flatten, join,
                    remap, same_type, to_pred, tracer_buffers, tree_type, unbound_like_slot)
from .loop_writes import collect_writes
from .loop_writes import stack_writes
from .forwarding import LoopBounds, first_reads, forward_reads, with_unused_inputs
from .sinking import sink_writes, write_after
from .subtrace import SubTrace, close
from .vectorise import vectorised


# The inputs of a loop body's trace that carry a rebound name by value (by buffer id): seen
# only through the body's names (what the names held on entry is checked by the loop).
_BY_VALUE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def carried_by_value(trace) -> set[int]:
    return _BY_VALUE.get(trace, set())


@dataclass(frozen=True)
class LoopSpec:
    """A loop body as a function of names: `body_fn([index,] *values of names)` returns the
    values of `assigned`; `exposed` are the assigned names it may read before assigning."""
    names: tuple[str, ...]
    assigned: tuple[str, ...]
    exposed: frozenset[str]
    kept: frozenset[str] = frozenset()      # assigned names a pass may leave as they were


@dataclass
class _Pass:
    """One traced pass of a loop body or condition, on inputs of given types."""
    sub: SubTrace
    head: list[Var]                            # inputs of the index and the in-place arrays
    inner: dict[int, Buffer]                   # outer buffer id -> its inner buffer
    slot_inputs: dict[str, list | None]        # name -> input tracer (or static) per leaf
    index: Tracer | None = None
    result: Any = None
    writes: list = field(default_factory=list)    # (log, entry): its writes to sinks

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

    def __init__(self, spec: LoopSpec, env: dict[str, Any], body_fn, cond_fn, index, observed,
                 all_live: bool = False):
        self.spec, self.env = spec, env
        self.all_live = all_live
        self.body_fn, self.cond_fn, self.index = body_fn, cond_fn, index
        self.observed = observed
        self.fixed = tracer_buffers(env.get(n, UNBOUND) for n in spec.names
                                    if n not in spec.assigned)
        self.one_array_if_a_pass: list[tuple[str, str]] = []
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
            if all(same_type(exits[n], types[n]) for n in types if types[n] is not None) and \
                    not self.unbound_indices(types, exits):
                return exits, body
            types = exits
        raise CannotConvert("the types of the loop's values do not settle",
                            "give each value its final dtype before the loop")

    def unbound_indices(self, types, exits) -> list[str]:
        """Names without a value on entry that a pass may leave as they were, and that came
        out of the pass a traced Python int: the loop variable of an inner loop that may make
        no pass (`for i in range(j + 1, n)`). Its value from an earlier pass flows through
        such a pass, so it is carried (entering as UNBOUND_INDEX) and the body traced again."""
        return [n for n in self.spec.exposed if n in types and types[n] is None
                and exits[n][1] == (Slot(INDEX_AVAL, "python"),)]

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
            index_range(p.index, *self.index)
        for buf in self.fixed:
            p.inner[id(buf)] = sub.input_buffer(buf)
            p.head.append(p.inner[id(buf)].initial)
        for name in self.spec.assigned:
            p.slot_inputs[name] = _slot_inputs(sub, types[name])
        _BY_VALUE[sub.trace] = {id(t._buffer) for inputs in p.slot_inputs.values()
                                for t in inputs or () if isinstance(t, Tracer)}
        args = [self._arg(n, types, p) for n in self.spec.names]
        p.writes = collect_writes(sub.trace)
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
    def check_aliasing(self, body: _Pass) -> set[str]:
        """Rebound names are carried by value: an array one of them holds on entry must not be
        updated in place if anything else can see it (its other holders would miss it). A
        name the pass binds back to the very array it held (`Z = step(Z)`, where step updates
        Z in place and returns it) is one array all along, as in plain Python: its final value
        is written back into that array after the loop (the names returned), unless another
        name of the loop holds that array too."""
        if self.observed is None:
            return set()
        fixed_mutated = {i for i, buf in body.inner.items() if buf.mutated}
        entries = {name: [leaf for leaf in flatten(self.env[name])[0]
                          if isinstance(leaf, Tracer)]
                   for name in self.spec.assigned if self.entry[name] is not None}
        mutated = {id(leaf._buffer) for name, leaves in entries.items()
                   for leaf, slot in zip(leaves, self._slot_tracers(body, name), strict=False)
                   if slot._buffer.mutated}
        rebound = self.self_rebound(body, entries)
        for name, leaves in entries.items():
            for leaf in leaves:
                if id(leaf._buffer) in fixed_mutated or (
                        name not in rebound and id(leaf._buffer) in mutated and
                        self.observed(leaf)):
                    raise CannotConvert(
                        f"`{name}` is rebound in the loop while the array it holds on entry "
                        "is updated in place and seen from outside the loop",
                        f"copy it before the loop ({name} = {name}.copy())", peel=True)
        return rebound

    @staticmethod
    def _slot_tracers(body: _Pass, name: str) -> list[Tracer]:
        return [t for t in body.slot_inputs[name] or () if isinstance(t, Tracer)]

    def self_rebound(self, body: _Pass, entries: dict[str, list]) -> set[str]:
        """The names whose every array leaf the pass leaves bound to its own input (the same
        object, not a view nor a copy), each holding arrays no other name of the loop holds on
        entry, whether the loop assigns it or only reads it (`b = w` before `w += b`: the pass
        must read what the pass before wrote through `w`)."""
        holders: dict[int, int] = {id(buf): 1 for buf in self.fixed}
        for leaves in entries.values():
            for leaf in leaves:
                holders[id(leaf._buffer)] = holders.get(id(leaf._buffer), 0) + 1
        found = set()
        for name, value in zip(self.spec.assigned, body.result, strict=True):
            slots = self._slot_tracers(body, name)
            leaves = [leaf for leaf in flatten(value)[0] if isinstance(leaf, Tracer)]
            if name in entries and slots and len(leaves) == len(slots) and all(
                    leaf is slot and slot.kind == "array" for leaf, slot in
                    zip(leaves, slots, strict=True)) and all(
                    holders[id(leaf._buffer)] == 1 for leaf in entries[name]):
                found.add(name)
        return found

    # emitting ------------------------------------------------------------------------------
    def run(self, snapshot: Snapshot) -> dict[str, Any]:
        types, body = self.settle()
        snapshot.check()
        rebound = self.check_aliasing(body)
        same = self.result_aliases(body, rebound)
        checks = list(body.sub.checks)
        check_ins = [body.sub.input(s.aval, s.kind) for s in CHECK_SLOTS * len(checks)]
        stacked = stack_writes(body.sub, body.writes, body.index, self.index, self.trip_count())
        exits = self.body_exits(body, types) + check_exits(body.sub, checks, check_ins) + \
            stacked.exits
        body_vars = body.carried_vars(self.spec.assigned, types) + [
            t._buffer.initial for t in check_ins + stacked.inputs]
        body_graph = body.sub.graph(exits, body_vars)
        extra = [Var(s.aval) for s in CHECK_SLOTS * len(checks)]
        cond_graph = self.cond_graph(types, extra, [Var(s.aval) for s in stacked.slots])
        snapshot.check()
        inits = self.inits(types) + [coerce(v, s) for v, s in zip(
            (True, 0) * len(checks), CHECK_SLOTS * len(checks), strict=True)] + stacked.inits()
        labels = self.labels(types) if self.may_vectorise(checks, stacked) else None
        values = self.emit(cond_graph, body_graph, inits, self.bounds_in_body(body.inner),
                           labels)
        rows = len(stacked.inputs)
        result = self.results(types, values[:len(values) - rows], checks)
        stacked.finish(values[len(values) - rows:])
        for name, how in same.items():
            result[name] = result[how[1]] if how[0] == "name" else \
                Tracer(how[1], how[2], kind=how[3])
        for name in rebound:        # one array all along: its final value, written into it
            for entry, final in zip(flatten(self.env[name])[0], flatten(result[name])[0],
                                    strict=True):
                if isinstance(entry, Tracer):
                    setitem(entry, Ellipsis, final)
            result[name] = self.env[name]
        self.require_a_pass()
        return result

    def require_a_pass(self) -> None:
        """Names the loop binds to one array (`x = x_new` ending a pass) are one array after
        it, as in plain Python, when it makes a pass; a loop of traced bounds that makes none
        leaves them two, which the compiled program does not have: checked when it runs (a
        cell then runs as plain Python)."""
        if not self.one_array_if_a_pass:
            return
        start, stop, step = self.index
        ran = call_ufunc(np.greater if step > 0 else np.less, stop, start)
        name, first = self.one_array_if_a_pass[0]
        current_trace().require(
            ran, coerce(stop, Slot(INDEX_AVAL, "python")),
            f"the loop makes no pass (its bound is {{}}), so `{name}` and `{first}` are not "
            "one array after it, as the compiled program has them", DataDependentShapeError)

    def may_skip(self) -> bool:
        """Whether the loop may make no pass (a traced test, or traced range bounds)."""
        return self.cond_fn is not None or any(isinstance(v, Tracer) for v in self.index[:2])

    def result_aliases(self, body: _Pass, rebound: set[str]) -> dict[str, tuple]:
        """Names bound to one array at the end of the body are one array after the loop, as
        in plain Python ({later name: ("name", first name)}); a name bound to an array from
        outside the loop, or a view of one that does not depend on the pass, is that array
        (or view) after a loop that surely makes a pass ({name: ("view", buffer, path,
        kind)}). Other such names, or (where every name is seen after the loop: `all_live`)
        names bound to views of another name's array, would be copies after an XLA loop,
        where plain Python has one array under two names: refused. Loops of `api` (observed
        None) carry by value, as JAX's do."""
        if self.observed is None:
            return {}
        for name in self.spec.kept:
            entry = self.env.get(name, UNBOUND)
            if name in rebound:
                continue
            if isinstance(entry, Tracer) and entry.kind == "array" and self.observed(entry):
                raise CannotConvert(
                    f"`{name}` may keep the array it holds before the loop, which another name "
                    "sees (plain Python does not copy it), and an XLA loop would copy it",
                    f"copy it before the loop ({name} = {name}.copy()) if a copy is meant")
        outside = {id(body.inner[id(b)]): b for b in self.fixed}
        by_object: dict[int, str] = {}
        by_buffer: dict[int, str] = {}
        same: dict[str, tuple] = {}
        for name, value in zip(self.spec.assigned, body.result, strict=True):
            if not isinstance(value, Tracer) or value.kind != "array" or name in rebound:
                continue
            if id(value._buffer) in outside:
                if not self.may_skip() and not any(step.operands for step in value._path):
                    same[name] = ("view", outside[id(value._buffer)], value._path, value.kind)
                    continue
                raise CannotConvert(
                    f"`{name}` is bound in the loop to an array from outside it (or a view of "
                    "one), which plain Python does not copy and an XLA loop would",
                    "bind it after the loop, or copy it in the loop (`.copy()`) if a copy is "
                    "meant")
            first = by_object.get(id(value))
            if first is not None and (not self.may_skip() or self.env.get(name, UNBOUND) is
                                      self.env.get(first, UNBOUND)):
                same[name] = ("name", first)
            elif first is not None and self.all_live and self.index is not None and \
                    self.cond_fn is None:
                same[name] = ("name", first)        # one array, if the loop makes a pass
                self.one_array_if_a_pass.append((name, first))
            elif id(value._buffer) in by_buffer and self.all_live:
                raise CannotConvert(
                    f"`{name}` and `{by_buffer[id(value._buffer)]}` are one array (or views of "
                    "one) after a pass of the loop, which an XLA loop would make two",
                    f"bind `{name}` after the loop")
            by_object.setdefault(id(value), name)
            by_buffer.setdefault(id(value._buffer), name)
        return same

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

    def cond_graph(self, types, extra: list[Var], rows: list[Var]) -> Graph:
        """The loop's test, of the carried values (extra: the checks' pairs; rows: the
        stacked writes, unused)."""
        if self.cond_fn is None:
            return self.index_cond_graph(types, extra + rows)
        cond = self.trace_pass(types, self.cond_fn)
        if any(buf.mutated for buf in cond.inner.values()) or cond.writes:
            raise CannotConvert("the loop condition updates an array in place or writes to "
                                "an object")
        if cond.sub.checks:
            raise CannotConvert("the loop condition indexes with a traced index that the run "
                                "would have to check", "compute the test in the loop body, "
                                "into a name the condition reads")
        oks = [cond.sub.input(v.aval, "scalar") for v in extra]
        with cond.sub.active():
            pred = to_pred(cond.result)
            # a failed check ends the loop (plain Python would raise there; the run does)
            for ok in oks[::2]:
                pred = call_ufunc(np.logical_and, pred, ok)
        return cond.sub.graph([pred], cond.carried_vars(self.spec.assigned, types) + [
            t._buffer.initial for t in oks] + rows)

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
                    inits.append(coerce(entry[k], t) if live else unbound_like_slot(t))
        return inits

    def bounds_in_body(self, inner: dict[int, Buffer]) -> LoopBounds | None:
        """The range loop's bounds, as ints or as the body's inputs that hold them."""
        if self.index is None or self.cond_fn is not None:
            return None

        def local(bound):
            if not isinstance(bound, Tracer):
                return int(bound)
            buf = inner.get(id(bound._buffer))
            return buf.initial if buf is not None and not bound._path else None
        start, stop, step = self.index
        return LoopBounds(step, local(start), local(stop))

    def may_vectorise(self, checks, stacked) -> bool:
        """Whether the loop is one a user wrote as a Python loop (those of `api`, as JAX's,
        stay XLA loops), without run-time checks of its indices nor writes to objects."""
        return self.observed is not None and not checks and not stacked.inputs

    def labels(self, types) -> list[str]:
        """A name per carried position, for what the report says of the loop: the index,
        the arrays updated in place, the leaves of the rebound names."""
        labels = ["i"] if self.index is not None else []
        for buf in self.fixed:
            labels.append(next((n for n in self.spec.names if isinstance(
                self.env.get(n), Tracer) and self.env[n]._buffer is buf), "an array"))
        for name in self.spec.assigned:
            labels += [name] * sum(isinstance(t, Slot) for t in types[name][1])
        return labels

    def emit(self, cond_graph: Graph, body_graph: Graph, inits: list,
             bounds: LoopBounds | None = None, labels: list[str] | None = None) -> list:
        """Bind the while_loop (or, for a loop whose passes are independent, their batched
        computation: `vectorise`); the value of every carried position after it. `labels`:
        a name per carried position, where the loop may be vectorised (None: it may not)."""
        keep = 1 if self.index is not None else 0
        cond_graph, body_graph, invariants, carried = hoist_invariants(cond_graph, body_graph,
                                                                      keep)
        cond_c, body_c = close(cond_graph), close(body_graph)
        consts = [inits[k] for k in invariants]
        carried_inits = [inits[k] for k in carried]
        n_lead = len(body_c.consts) + len(consts)
        if labels is not None and self.cond_fn is None:
            batched = vectorised(body_c.graph, n_lead, bounds, [labels[k] for k in carried],
                                 [*body_c.consts, *consts], carried_inits)
            if batched is not None:
                return _placed(inits, carried, batched)
        body, forwarded = forward_reads(body_c.graph, n_lead, bounds)
        body, sunk = sink_writes(body, n_lead, bounds, forwarded, len(carried))
        lead = [*body_c.consts, *consts]
        carried_inits += first_reads(forwarded, body_c.graph.in_vars, [*lead, *carried_inits])
        cond = with_unused_inputs(cond_c.graph, body.in_vars[len(body_c.graph.in_vars):])
        outs = bind(while_loop_p, *cond_c.consts, *consts, *body_c.consts, *consts,
                    *carried_inits, cond_graph=cond, body_graph=body,
                    cond_nconsts=len(cond_c.consts) + len(consts),
                    body_nconsts=n_lead, **self.trip_count())
        outs = write_after(sunk, outs, body.in_vars[:n_lead], lead)
        return _placed(inits, carried, outs[:len(carried)])

    def trip_count(self) -> dict[str, int]:
        """{"trip_count": n} for a range loop whose bounds are Python ints (reverse-mode
        differentiation needs to know it), else {}."""
        if self.index is None or self.cond_fn is not None:
            return {}
        start, stop, step = self.index
        if isinstance(start, Tracer) or isinstance(stop, Tracer):
            return {}
        return {"trip_count": len(range(int(start), int(stop), int(step)))}

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


def _placed(inits: list, carried: list[int], outs: Sequence) -> list:
    """The value of every position after the loop: its carried ones from `outs`."""
    values = list(inits)
    for k, out in zip(carried, outs, strict=True):
        values[k] = out
    return values


def index_range(index: Tracer, start, stop, step: int) -> None:
    """Record which values a range loop's index takes (slices bounded by it need it)."""
    first, end = interval(start), interval(stop)
    if first is None or end is None:
        return
    if step > 0:
        low, high = first[0], end[1] - 1
    else:
        low, high = end[0] + 1, first[1]
    if low <= high:
        set_range(index, low, high)


def write_back(buffers: Sequence[Buffer], values: Sequence[Tracer]) -> None:
    """Assign each buffer its new value (all checked first, so none is half done)."""
    changed = [(b, v) for b, v in zip(buffers, values, strict=True) if v.ir_var is not b.var]
    for buf, _ in changed:
        buf._check_entangled()
    for buf, value in changed:
        buf.assign(value.ir_var)


CHECK_SLOTS = (Slot(ShapedArray((), np.dtype(bool)), "scalar"),
                Slot(ShapedArray((), np.dtype(np.int64)), "scalar"))


def _atom_tracer(atom, trace) -> Tracer:
    if isinstance(atom, Var):
        return Tracer(Buffer(atom, trace, strides=c_strides(atom.aval)), kind="scalar")
    return ensure_tracer(atom.value)


def check_exits(sub: SubTrace, checks, check_ins) -> list[Tracer]:
    """Carried per check: whether it held in every iteration so far, and the value the first
    failure reports (the run raises NumPy's error after the loop, before writing anything)."""
    exits = []
    with sub.active():
        for k, check in enumerate(checks):
            ok_in, value_in = check_ins[2 * k], check_ins[2 * k + 1]
            ok = _atom_tracer(check.ok, sub.trace)
            value = coerce(_atom_tracer(check.value, sub.trace), CHECK_SLOTS[1])
            first = call_ufunc(np.logical_and, ok_in, call_ufunc(np.logical_not, ok))
            exits.append(coerce(call_ufunc(np.logical_and, ok_in, ok), CHECK_SLOTS[0]))
            exits.append(coerce(where(first, value, value_in), CHECK_SLOTS[1]))
    return exits


def where(pred, a, b) -> Tracer:
    return bind(select_p, pred, a, b)


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
              observed: Callable[[Tracer], bool] | None = None,
              all_live: bool = False) -> dict[str, Any]:
    """Trace `body_fn` into one while_loop equation of the current trace; return the new values
    of `spec.assigned` (and `__index__`: the first index not run, for a range loop).

    index: (start, stop, step) with a static nonzero step, for `for i in range(...)`;
    cond_fn: the test of a `while` loop, a function of the same names.
    observed(tracer): whether an array is seen from outside the loop's names (None: values
    are carried by value, as in JAX); all_live: every name is seen after the loop (a cell's
    top level), so names that are one array must stay one."""
    snapshot = Snapshot.of(env, spec.names)
    try:
        return _Loop(spec, env, body_fn, cond_fn, index, observed, all_live).run(snapshot)
    finally:
        if snapshot.changed() is not None:
            snapshot.restore()
