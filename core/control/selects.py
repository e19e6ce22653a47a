"""An `if` on a traced value run as both of its branches and a select of their results, where
that costs less than an XLA conditional.

A conditional passes every array a branch writes in and out of its branches, and XLA:CPU
copies such an array where a branch writes it (the `if`s of nussinov's inner loop, each
writing one element of its 60 x 60 table, copied the table on every pass). A branch that
does a little work is cheaper run on every pass: both branches' equations are inlined and
each result is `np.where(test, its value after one branch, after the other)`.

Two kinds of branch qualify:
- small ones (a few equations, none costly), whatever their results;
- scalar ones: arithmetic on a few elements, and element writes of the arrays they were
  given (`table[i, j] = max(table[i, j], table[i, j - 1])`), whatever their number.

An array a branch writes by one `dynamic_update_slice` of its value before the `if` is not
selected whole: the element written is, `A[idx] = where(test, written, A[idx])` (read and
written as XLA clamps `idx`, so where the branch is not taken it writes back what is
there), or `A[idx] = where(test, written, written_else)` when both branches write at `idx`;
the array is written in place. Where the branches write two places, the true branch's write
is made so, then the false branch's; XLA may then copy the array (it fuses the reads made
before the first write into the kernel of the second), as it copies an array written by a
conditional, so scalar branches writing two places stay a conditional (`_one_place_each`).
"""
from __future__ import annotations

from typing import Sequence

from ..ir import Eqn, Graph, Literal, Var
from ..numpy.base import broadcast_to
from ..primitives import dynamic_slice_p, dynamic_update_slice_p, select_p
from ..tracing import Tracer, bind, current_trace
from .loops import _atom_tracer
from .subtrace import close, has_control_flow, inline

SELECT_MAX_EQNS = 16      # branches this small (and simple) become a select, not a cond
SCALAR_TIMES = 4          # scalar branches up to this many times that size too
SCALAR_MAX_ELEMENTS = 16  # the most elements a value of a scalar branch holds
_NOT_CHEAP = {"dot_general", "gather", "scatter", "while_loop", "cond"}
WRITE = "dynamic_update_slice"


def selectable(graphs: Sequence[Graph]) -> bool:
    """Whether the branches are cheaper run both (see the module's docstring)."""
    return len(graphs) == 2 and (all(_is_cheap(g) for g in graphs) or (
        all(_is_scalar(g) for g in graphs) and _one_place_each(graphs)))


def _one_place_each(graphs: Sequence[Graph]) -> bool:
    """Whether every array the branches write is written at one place: by one branch, or by
    both at the same start indices (their inputs at the same positions, or equal literals).
    Writes at two places would be two writes of the array after the select, and XLA fuses
    the reads of the first into the kernel of the second, which then copies the array."""
    writes = [_writes(g) for g in graphs]
    for k in set(writes[0]) & set(writes[1]):
        starts = [_starts(g, w[k]) for g, w in zip(graphs, writes, strict=True)]
        if None in starts or starts[0] != starts[1]:
            return False
    return True


def _starts(graph: Graph, write: Eqn):
    positions = {id(v): n for n, v in enumerate(graph.in_vars)}
    keys = []
    for a in write.inputs[2:]:
        if isinstance(a, Literal):
            keys.append(("literal", a.value.item()))
        elif id(a) in positions:
            keys.append(("input", positions[id(a)]))
        else:
            return None
    return tuple(keys)


def _is_cheap(graph: Graph) -> bool:
    return (len(graph.eqns) <= SELECT_MAX_EQNS and not has_control_flow(graph)
            and not any(e.prim.name in _NOT_CHEAP for e in graph.eqns))


def _is_scalar(graph: Graph) -> bool:
    if len(graph.eqns) > SCALAR_TIMES * SELECT_MAX_EQNS or has_control_flow(graph):
        return False
    writes = _writes(graph)
    return all(e.prim.name not in _NOT_CHEAP and (
        id(e) in {id(w) for w in writes.values()} or
        all(v.aval.size <= SCALAR_MAX_ELEMENTS for v in e.outs)) for e in graph.eqns)


def _writes(graph: Graph) -> dict[int, Eqn]:
    """{output position: its write}, for outputs that are one small write of an input of the
    graph, whose result nothing else in the graph reads."""
    producers = {id(v): e for e in graph.eqns for v in e.outs}
    inputs = {id(v) for v in graph.in_vars}
    read = {id(a) for e in graph.eqns for a in e.inputs}
    found = {}
    for k, out in enumerate(graph.out_atoms):
        eqn = producers.get(id(out))
        if eqn is not None and eqn.prim.name == WRITE and id(eqn.inputs[0]) in inputs and \
                eqn.inputs[1].aval.size <= SCALAR_MAX_ELEMENTS and id(out) not in read and \
                sum(a is out for a in graph.out_atoms) == 1:
            found[k] = eqn
    return found


def select_branches(pred: Tracer, graphs: Sequence[Graph], operands) -> list[Tracer]:
    """Both branches inlined; each result is np.where(pred, true's, false's), an element
    written by a branch selected alone."""
    trace = current_trace()
    on_false, on_true = (_inlined(trace, g, operands) for g in graphs)
    outs = []
    for k, (false_value, true_value) in enumerate(zip(on_false[0], on_true[0], strict=True)):
        written = _written(k, graphs, on_true[1], on_false[1], operands)
        if written is not None:
            outs.append(_merged_writes(pred, *written))
        else:
            p = broadcast_to(pred, true_value.shape)
            outs.append(bind(select_p, p, true_value, false_value))
    return outs


def _inlined(trace, graph: Graph, operands):
    """The graph's results, and per write of an output (`_writes`) its update and indices,
    all as values of `trace`."""
    writes = _writes(graph)
    extra = tuple(a for w in writes.values() for a in w.inputs[1:])
    closed = close(Graph(graph.in_vars, graph.eqns, graph.out_atoms + extra))
    atoms = [_atom_tracer(a, trace) for a in
             inline(trace, closed.graph, [*closed.consts, *operands])]
    results, rest = atoms[:len(graph.out_atoms)], iter(atoms[len(graph.out_atoms):])
    parts = {k: [next(rest) for _ in w.inputs[1:]] for k, w in writes.items()}
    return results, parts


def _written(k: int, graphs, true_parts, false_parts, operands):
    """For output k, the array before the `if` and the (update, indices) each branch writes
    into it (None: it leaves it as it is); None when output k is not such an array."""
    bases = [_base(g, k, parts) for g, parts in zip(graphs, (false_parts, true_parts),
                                                      strict=True)]
    if any(b is None for b in bases) or bases[0][0] != bases[1][0] or \
            (bases[0][1] is None and bases[1][1] is None):
        return None
    return operands[bases[0][0]], bases[1][1], bases[0][1]


def _base(graph: Graph, k: int, parts):
    """(position of the input output k is, or is written into; the write's parts or None)."""
    out = graph.out_atoms[k]
    positions = {id(v): n for n, v in enumerate(graph.in_vars)}
    if isinstance(out, Var) and id(out) in positions:
        return positions[id(out)], None
    write = _writes(graph).get(k)
    if write is None:
        return None
    return positions[id(write.inputs[0])], parts[k]


def _merged_writes(pred: Tracer, array: Tracer, on_true, on_false) -> Tracer:
    """The array with the element the true branch writes where pred holds, the false
    branch's where it does not: one write where both write at one place, else the true
    branch's write and then the false branch's."""
    if on_true is not None and on_false is not None and _same_place(on_true, on_false):
        update = bind(select_p, broadcast_to(pred, on_true[0].shape), on_true[0], on_false[0])
        return bind(dynamic_update_slice_p, array, update, *on_true[1:])
    if on_true is not None:
        array = _write_where(pred, array, on_true, taken=True)
    if on_false is not None:
        array = _write_where(pred, array, on_false, taken=False)
    return array


def _write_where(pred: Tracer, array: Tracer, parts, taken: bool) -> Tracer:
    """The array with the branch's element written where the branch is taken, and what is
    there (read as XLA clamps the indices) written back where it is not."""
    update, *starts = parts
    there = bind(dynamic_slice_p, array, *starts, slice_sizes=tuple(update.shape))
    p = broadcast_to(pred, update.shape)
    chosen = bind(select_p, p, update, there) if taken else bind(select_p, p, there, update)
    return bind(dynamic_update_slice_p, array, chosen, *starts)


def _same_place(on_true, on_false) -> bool:
    """Whether both writes are of one shape at the very same start indices."""
    return on_true[0].shape == on_false[0].shape and on_true[0].dtype == on_false[0].dtype and \
        all(a.ir_var is b.ir_var for a, b in zip(on_true[1:], on_false[1:], strict=True))
