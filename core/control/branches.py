"""Branches on traced values: each branch traced once, then one `cond` equation, or a
`select` of both results where the branches are small and cheap (selects.py).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence


from ..ir import Graph
from ..numpy.base import as_kind
from ..primitives import cond_p
from ..tracing import Buffer, Tracer, bind, current_trace
from ..tree_util import LEAF, children, leaf_count, unflatten
from .carry import (UNBOUND, CannotConvert, Slot, coerce, flatten, join, remap, tracer_buffers,
                    type_of)
from .loops import CHECK_SLOTS, _atom_tracer, write_back
from .selects import select_branches, selectable
from .subtrace import SubTrace, align_consts, close



@dataclass
class _Branch:
    sub: SubTrace
    inner: dict[int, Buffer]
    memo: dict[int, Tracer]
    leaves: list
    treedef: Any = None


@dataclass(frozen=True)
class Aliasing:
    """What an `if` statement's names held before it (`before`, by name), whether an array
    is seen from outside its names (`observed`), whether its names are all seen after it
    (`all_live`: at a cell's top level every name is an output), and where it is (`where`,
    for messages)."""
    before: dict
    observed: Callable[[Tracer], bool]
    all_live: bool
    where: str = "the `if`"


@dataclass(frozen=True)
class Choice:
    """The array an `if` at the top of a trace binds a name to, when a branch binds it to an
    array from before the `if`: that very array, picked by the branch the run takes
    (`index`), else the conditional's own result. Likewise a loop that may make no pass
    leaves a name the array it held before (index 0), or its result (1). Valid while nothing
    updates the result or those arrays in place (`vars`: their values when it ended)."""
    index: Tracer
    sources: tuple          # per branch: the array from before the `if`, or None
    result: Tracer
    vars: tuple
    what: str

    def still_holds(self) -> bool:
        arrays = (self.result, *(s for s in self.sources if s is not None))
        return all(t._buffer.var is v for t, v in zip(arrays, self.vars, strict=True))


_CHOICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def choose(index: Tracer, sources, result: Tracer, what: str) -> None:
    """Record that `result` is, by `index`, the array `sources[index]` (None: itself): see
    `Choice`."""
    arrays = (result, *(t for t in sources if t is not None))
    _CHOICES.setdefault(current_trace(), {})[id(result._buffer)] = Choice(
        index, tuple(sources), result, tuple(t._buffer.var for t in arrays), what)


def choices_of(trace) -> dict[int, Choice]:
    """The choices made in this trace, by the id of their result's buffer."""
    return _CHOICES.get(trace, {})


def branch(index: Tracer, fns: Sequence[Callable], args: Sequence, pred: Tracer | None = None,
           names: Sequence[str] | None = None, dead: frozenset[str] = frozenset(),
           aliasing: Aliasing | None = None, types: list | None = None):
    """Trace each `fn(*args)` into a branch of one `cond` on `index` (i32[]); return the result
    (one tree from every branch) as values of the current trace. An array in args that a
    branch updates in place is updated here too. With two small branches and `pred`, both are
    inlined and their results selected (np.where) instead. With `aliasing` (an `if`
    statement's), names alias after it as in plain Python, or CannotConvert says why not.
    `types`, a list, receives each branch's result leaf types (`carry.type_of`)."""
    buffers = tracer_buffers(args)
    passes = [_trace_branch(fn, args, buffers) for fn in fns]
    if types is not None:       # each branch's result leaves' types, for the caller
        types.extend([type_of(leaf) for leaf in p.leaves] for p in passes)
    treedef = passes[0].treedef
    if any(p.treedef != treedef for p in passes):
        raise CannotConvert("the branches give results of different structure",
                            "assign the same names in every branch")
    leaf_names = _leaf_names(names, treedef)
    plan = [_plan_leaf([p.leaves[k] for p in passes], passes, leaf_names[k], dead,
                       exact=names is not None) for k in range(len(passes[0].leaves))]
    chosen: dict[int, list] = {}
    if aliasing is not None:
        plan = _keep_aliases(passes, plan, leaf_names, aliasing, chosen)
    mutated = [b for b in buffers if any(p.inner[id(b)].mutated for p in passes)]
    checks = [(k, c) for k, p in enumerate(passes) for c in p.sub.checks]
    graphs = [_branch_graph(p, k, plan, mutated, checks) for k, p in enumerate(passes)]
    operands = [Tracer(b) for b in buffers]
    if not graphs[0].out_atoms:
        outs = []
    elif pred is not None and selectable(graphs):
        outs = select_branches(pred, graphs, operands)
    else:
        aligned, consts = align_consts([close(g) for g in graphs])
        outs = bind(cond_p, index, *consts, *operands, branches=tuple(aligned))
    write_back(mutated, outs[:len(mutated)])
    outs = iter(outs[len(mutated):])
    leaves = [as_kind(next(outs), how.kind) if isinstance(how, Slot) else
              None if isinstance(how, _Same) else how.value for how in plan]
    for k, how in enumerate(plan):
        if isinstance(how, _Same):
            leaves[k] = leaves[how.leaf]
    for _, check in checks:
        current_trace().require(next(outs), next(outs), check.message, check.error)
    for k, sources in chosen.items():
        choose(index, sources, leaves[k], f"`{leaf_names[k]}` ({aliasing.where})")
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
    if names is None or treedef is LEAF:
        return ["the result"] * leaf_count(treedef)
    out = []
    for name, sub in zip(names, children(treedef), strict=True):
        out += [name] * leaf_count(sub)
    return out


@dataclass(frozen=True)
class _Keep:
    """A result leaf that is the same in every branch: an outer value, or a static one."""
    value: Any


def _plan_leaf(values, passes, name, dead=frozenset(), exact=False):
    """How one result leaf leaves the branches: kept as it is, or a slot of the cond. A name
    nothing reads after the `if` (`dead`) may be unbound in some branch: it ends unbound.
    `exact` (an `if` statement of the user's code): a name must be of one Python type in
    every branch (cond's functions join a Python scalar with a NumPy one, as JAX does)."""
    outer = [p.memo.get(id(v)) for p, v in zip(passes, values, strict=True)]
    if outer[0] is not None and all(o is outer[0] for o in outer):
        return _Keep(outer[0])
    if all(v is values[0] for v in values) and not isinstance(values[0], Tracer):
        return _Keep(values[0])
    if any(v is UNBOUND for v in values):
        if name in dead:
            return _Keep(UNBOUND)
        raise CannotConvert(f"`{name}` is assigned in one branch only and has no value before "
                            "the `if`", f"give `{name}` a value before the `if`")
    joined = type_of(values[0])
    for v in values[1:]:
        joined = join(joined, type_of(v), name, loop=False, exact=exact)
    return joined if isinstance(joined, Slot) else _Keep(joined)


@dataclass(frozen=True)
class _Same:
    """A result leaf that is, in every branch, the very array of an earlier leaf (`y = x`
    inside the `if`): after it, the same array too."""
    leaf: int


def _keep_aliases(passes, plan, leaf_names, aliasing: Aliasing, chosen: dict):
    """An `if` statement's names alias after it as they do in plain Python, or it is not
    converted. A name bound to the same array as another in every branch gets that array. A
    name that a branch binds to an array from before the `if` (or a view of one) would be a
    new array after a cond, where plain Python has one array under two names: refused, unless
    it is the name's own array, left as it was, and nothing else sees it, or (an `if` at the
    top of the trace, whole arrays) a `Choice` of that array (`chosen`: leaf -> the array
    per branch, None where the branch computes it). At a cell's top level, names that are
    one array (or views of one) in some branches only are refused."""
    top = current_trace() is current_trace().root
    plan = list(plan)
    arrays = [k for k, how in enumerate(plan) if isinstance(how, Slot) and all(
        isinstance(p.leaves[k], Tracer) and p.leaves[k].kind == "array" for p in passes)]
    identity = {k: tuple(id(p.leaves[k]) for p in passes) for k in arrays}
    first: dict[tuple, int] = {}
    for k in arrays:
        same = first.setdefault(identity[k], k)
        if same != k:
            plan[k] = _Same(same)
            continue
        name = leaf_names[k]
        for n, p in enumerate(passes):
            value = p.leaves[k]
            if any(value._buffer is inner for inner in p.inner.values()):
                outer = p.memo.get(id(value))
                if outer is not None and top and not outer.is_view:
                    chosen.setdefault(k, [None] * len(passes))[n] = outer
                elif outer is None or outer is not aliasing.before.get(name) or \
                        aliasing.observed(outer):
                    raise CannotConvert(
                        f"`{name}` is bound in a branch to an array from before the `if` (or a "
                        "view of one), which plain Python does not copy and an XLA conditional "
                        f"would", f"add `.copy()` where that branch binds `{name}` if a copy is "
                        f"meant, or compute `{name}` with np.where(test, ..., ...)")
            shared = [j for j, other in enumerate(p.leaves) if j != k and identity.get(j) !=
                      identity[k] and isinstance(other, Tracer) and other._buffer is value._buffer]
            if shared and aliasing.all_live:
                raise CannotConvert(
                    f"`{name}` and `{leaf_names[shared[0]]}` are one array (or views of one) in "
                    "a branch, which an XLA conditional would make two",
                    f"bind `{leaf_names[shared[0]]}` after the `if`")
    return plan


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
                            else a, slot) for a, slot in zip(pair, CHECK_SLOTS, strict=True)]
    return p.sub.graph(outs)
