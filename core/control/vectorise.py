"""A range loop whose passes are independent, run as one batched computation.

A pass is independent of the others when each carried value is one of:

- *an array written at the pass's own position*: its next value is one `dynamic_update_slice`
  of its value at the start of the pass, whose index along one axis is the loop index (plus
  values the loop does not change), of size one there, inside the array (so never clamped);
  the other indices do not follow the pass. Distinct passes write distinct rows. The pass may
  read the array where no other pass writes: its own row, or rows no pass reaches.
- *a reduction*: its next value is one binary operation of its value at the start of the pass
  and of something computed without it (`s += f(i)`, `m = max(m, f(i))`);
- *a value the pass computes afresh* (`row = X[i]`): the last pass's is the one kept.

and nothing a pass computes reads another carried value. This is decided on the traced body
(after `forwarding.forward_within_pass` has resolved the pass's reads of its own writes), by
affine forms of the index expressions: never on the source text.

Such a loop becomes the body batched over the index (`batching`, the batching of `vmap`),
one `dynamic_update_slice` per written array that puts every pass's row at once, and per
reduction a loop that applies the body's own operation to the batched values in pass order:
that order keeps a float sum bit for bit what the sequential loop (and plain Python) gives;
an integer or boolean one, which no order changes, is one reduction. A value computed afresh
is the last pass's member.

Whatever the decision, it is noted at the loop's line (`loop_notes`): the report says which
loops were vectorised and why the others were not.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..ir import Eqn, Graph, Literal, ShapedArray, Var
from ..passes import dead_code_elimination
from ..primitives import (add_p, bitwise_and_p, bitwise_or_p, bitwise_xor_p, divide_p, fmax_p,
                          fmin_p, logical_and_p, logical_or_p, logical_xor_p, maximum_p,
                          minimum_p, multiply_p, reduce_and_p, reduce_max_p, reduce_min_p,
                          reduce_or_p, reduce_prod_p, reduce_sum_p, subtract_p, while_loop_p)
from ..tracing import (Buffer, Tracer, UnsupportedError, c_strides, caller_source,
                       current_trace, to_atom)
from .batching import batch_eval, with_batch
from .forwarding import READ, WRITE, IndexFacts, LoopBounds, forward_within_pass, minus_form
from .ops import Ops

LARGEST_BATCH_BYTES = 1 << 29   # a value of the batched passes larger than this: not vectorised
# values a pass of a reduction's XLA loop folds (16 ran 15% faster on 100,000 values, in a
# program 3x the size; on 1,000 values both took 12 us)
FOLD_BLOCK = 4
# A pass whose values hold more elements than this already spreads the cost of a pass of the
# XLA loop over its work, and batched it ran slower on XLA:CPU (bench/loops.py: pairwise,
# 1,500 elements a pass, 4x slower; azimint_naive, 40,000, 5x slower; doitgen, 750, and
# rows of 100 elements 2-3x faster): such a loop stays sequential.
LARGEST_PASS_ELEMENTS = 1024

# the elementwise operations a reduction may fold its value with, in pass order
FOLDABLE = frozenset({add_p, subtract_p, multiply_p, divide_p, maximum_p, minimum_p, fmax_p,
                      fmin_p, bitwise_and_p, bitwise_or_p, bitwise_xor_p, logical_and_p,
                      logical_or_p, logical_xor_p})
# ... and those whose result no order of the passes changes, with the kinds of values that
# holds for (integers wrap around, which any order does alike): one reduce
_ORDER_FREE = {add_p: (reduce_sum_p, "iu"), multiply_p: (reduce_prod_p, "iu"),
               maximum_p: (reduce_max_p, "biu"), minimum_p: (reduce_min_p, "biu"),
               logical_or_p: (reduce_or_p, "b"), logical_and_p: (reduce_and_p, "b")}


class Refused(Exception):
    """Why a loop's passes are not run as one batched computation (the user's words)."""


# -- the plan ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Write:
    """A carried array written at the pass's own position along `axis`."""
    eqn: Eqn
    axis: int
    ascending: bool          # the positions rise with the passes


@dataclass(frozen=True)
class Reduction:
    """A carried value folded by one binary equation; `at`: its operand position there."""
    eqn: Eqn
    at: int


@dataclass(frozen=True)
class Fresh:
    """A carried value each pass computes anew (its last pass's value is kept)."""
    atom: Any


@dataclass(frozen=True)
class Plan:
    body: Graph
    n_lead: int
    start: int
    step: int
    passes: int
    roles: dict[int, Any]        # carried position (after the index) -> Write/Reduction/Fresh
    facts: IndexFacts


def plan_loop(body: Graph, n_lead: int, bounds: LoopBounds, labels: Sequence[str]) -> Plan:
    """The plan of a loop whose passes are independent, or Refused saying why not.
    `labels`: a name per carried position (the index first), for the reasons."""
    bounds_known = isinstance(bounds.start, int) and isinstance(bounds.stop, int)
    if not bounds_known:
        raise Refused("its number of passes is known only when it runs")
    passes = len(range(bounds.start, bounds.stop, bounds.step))
    body = forward_within_pass(body, n_lead, bounds)
    facts = IndexFacts(body, n_lead, bounds)
    analysis = _Analysis(body, n_lead, facts, passes, labels)
    roles = analysis.roles()
    analysis.check_dependences(roles)
    return Plan(body, n_lead, bounds.start, bounds.step, passes, roles, facts)


class _Analysis:
    """The roles of a body's carried values and the dependences between its passes."""

    def __init__(self, body: Graph, n_lead: int, facts: IndexFacts, passes: int,
                 labels: Sequence[str]):
        self.body, self.n_lead, self.facts, self.passes = body, n_lead, facts, passes
        self.carried = body.in_vars[n_lead:]
        self.position = {id(v): k for k, v in enumerate(self.carried) if k}
        self.labels = labels
        self.index = self.carried[0]

    # roles ---------------------------------------------------------------------------------
    def roles(self) -> dict[int, Any]:
        return {k: self.role(k) for k in range(1, len(self.carried))}

    def role(self, k: int):
        var, out = self.carried[k], self.body.out_atoms[k]
        eqn = self.facts.producers.get(id(out))
        if eqn is not None and eqn.prim.name == WRITE and eqn.inputs[0] is var:
            return self.write(k, eqn)
        if eqn is not None and eqn.prim in FOLDABLE and sum(a is var for a in eqn.inputs) == 1 \
                and eqn.outs[0].aval == var.aval and eqn.inputs[1].aval.shape == var.aval.shape:
            return Reduction(eqn, 0 if eqn.inputs[0] is var else 1)
        return Fresh(out)

    def write(self, k: int, eqn: Eqn) -> Write:
        starts, update = eqn.inputs[2:], eqn.inputs[1].aval
        forms = [self.facts.of(s) for s in starts]
        following = [d for d, f in enumerate(forms) if f is None or self.pass_term(f)]
        where = self.text(k, starts, update.shape)
        if not following:
            raise Refused(f"{_line(eqn)}every pass writes `{where}`")
        if len(following) != 1 or forms[following[0]] is None:
            raise Refused(f"{_line(eqn)}pass i writes `{where}`, a position that does not "
                          "follow the pass along one axis")
        axis = following[0]
        coefficient = self.pass_term(forms[axis])
        if abs(coefficient * self.facts.bounds.step) != 1 or update.shape[axis] != 1:
            raise Refused(f"{_line(eqn)}pass i writes `{where}`, more than one row a pass or "
                          "rows apart")
        if not self.facts.inside(starts, update.shape, eqn.inputs[0].aval.shape):
            raise Refused(f"{_line(eqn)}pass i writes `{where}`, which may be outside the "
                          "array")
        return Write(eqn, axis, coefficient * self.facts.bounds.step > 0)

    def pass_term(self, form) -> int:
        """The coefficient of the loop index in an affine form (0: it does not follow it)."""
        return dict(form[0]).get(id(self.index), 0)

    # dependences ---------------------------------------------------------------------------
    def check_dependences(self, roles: dict[int, Any]) -> None:
        """Every value a pass needs is computed from the index, values the loop does not
        change, and reads of written arrays that no other pass writes: else Refused."""
        own = {id(r.eqn) for r in roles.values() if not isinstance(r, Fresh)}
        writes = {id(self.carried[k]): (k, r) for k, r in roles.items() if isinstance(r, Write)}
        uses: dict[int, tuple[int, Eqn]] = {}       # var -> (carried position, eqn it came by)
        for eqn in self.body.eqns:
            if id(eqn) in own:
                for out in eqn.outs:
                    uses[id(out)] = (self.owner(eqn, roles), eqn)
                continue
            if eqn.prim.name in (READ, "slice") and id(eqn.inputs[0]) in writes:
                self.check_read(eqn, *writes[id(eqn.inputs[0])])
                inputs = eqn.inputs[1:]
            else:
                inputs = eqn.inputs
            found = next((uses[id(a)] if id(a) in uses else (self.position[id(a)], eqn)
                          for a in inputs if id(a) in uses or id(a) in self.position), None)
            if found is not None:
                for out in eqn.outs:
                    uses[id(out)] = found
        for k, role in roles.items():
            for atom in _batched_atoms(role):
                if id(atom) in uses or id(atom) in self.position:
                    used, eqn = uses.get(id(atom), (self.position.get(id(atom)), None))
                    self.refuse_use(roles[used], used, eqn, k)

    def owner(self, eqn: Eqn, roles) -> int:
        return next(k for k, r in roles.items() if not isinstance(r, Fresh) and r.eqn is eqn)

    def refuse_use(self, role, used: int, eqn: Eqn | None, k: int) -> None:
        """Refused: carried value `k` needs `used` (whose role is `role`), reached by `eqn`."""
        label, at = self.labels[used], _line(eqn) if eqn is not None else ""
        if isinstance(role, Write):
            raise Refused(f"{at}pass i reads `{label}` beyond its own row, where other passes "
                          "write")
        if used == k and isinstance(role, Fresh) and eqn is not None:
            raise Refused(f"{at}pass i changes `{label}` from what the pass before left, other "
                          "than in a row of its own or by a reduction")
        raise Refused(f"{at}pass i uses `{label}` as the pass before left it")

    def check_read(self, read: Eqn, k: int, write: Write) -> None:
        """A read of a written array: of the pass's own row, or of rows no pass writes."""
        starts, sizes = _region(read)
        if starts is None:
            raise Refused(f"{_line(read)}pass i reads `{self.labels[k]}` by a strided slice, "
                          "and other passes write it")
        w_starts, w_sizes = write.eqn.inputs[2:], write.eqn.inputs[1].aval.shape
        shape = self.carried[k].aval.shape
        where = self.text(k, starts, sizes)
        if not self.facts.inside(starts, sizes, shape):
            raise Refused(f"{_line(read)}pass i reads `{where}`, which may be outside the "
                          "array (and another pass writes the array)")
        other = self.other_pass(starts[write.axis], sizes[write.axis], w_starts[write.axis])
        if other is None:
            return
        for axis, (r, w) in enumerate(zip(starts, w_starts, strict=True)):
            low, high = self.facts.bounds_of(minus_form(self.facts.of(r), self.facts.of(w)))
            if axis != write.axis and (high <= -sizes[axis] or low >= w_sizes[axis]):
                return
        raise Refused(f"{_line(read)}pass i reads `{where}`, written by {other}")

    def other_pass(self, read_start, size: int, write_start) -> str | None:
        """Along the written axis: which earlier pass writes what this read reads (None: no
        earlier pass; a row only later passes write is read before they do, as in plain
        Python, so batched reads of the array from before the loop see what it sees)."""
        r, w = self.facts.of(read_start), self.facts.of(write_start)
        apart = minus_form(r, w)
        shift = self.pass_term(w) if w is not None else 0
        order = shift * self.facts.bounds.step          # +1: positions rise with the passes
        if apart is not None and not apart[0]:            # the same motion: offsets
            offsets = [j for j in range(apart[1] - size + 1, apart[1] + 1)
                       if j and abs(j) < self.passes and j * order < 0]
            if not offsets:
                return None
            j = min(offsets, key=abs) * shift
            return f"pass i {'+' if j > 0 else '-'} {abs(j)}"
        if r is not None and not self.pass_term(r):      # fixed rows: are they ever written?
            low, high = self.facts.bounds_of(r)
            w_low, w_high = self.facts.bounds_of(w)
            if high + size - 1 < w_low or low > w_high:
                return None
            if size == 1 and not r[0] and set(dict(w[0])) == {id(self.index)}:
                writer = (r[1] - w[1]) * shift              # the pass whose row it is
                bounds = self.facts.bounds
                last = bounds.start + (self.passes - 1) * bounds.step
                return None if writer == last else f"pass {writer}"
        return "other passes"

    def text(self, k: int, starts, sizes=None) -> str:
        """`name[i - 1, :]`: a read or write as the user might have written it."""
        shape = self.carried[k].aval.shape
        sizes = sizes or (1,) * len(starts)
        parts = [self.span_text(self.facts.of(s), size, dim)
                 for s, size, dim in zip(starts, sizes, shape, strict=True)]
        while len(parts) > 1 and parts[-1] == ":":
            parts.pop()
        return f"{self.labels[k]}[{', '.join(parts)}]"

    def span_text(self, form, size: int, dim: int) -> str:
        if size == 1:
            return self.form_text(form)
        if size == dim:
            return ":"
        start = self.form_text(form)
        end = form[1] + size if form is not None and not form[0] else f"{start} + {size}"
        return f"{start}:{end}"

    def form_text(self, form) -> str:
        if form is None:
            return "…"
        terms, constant = dict(form[0]), form[1]
        coefficient = terms.pop(id(self.index), 0)
        if terms:
            return "…"
        if not coefficient:
            return str(constant)
        head = "i" if coefficient == 1 else "-i" if coefficient == -1 else f"{coefficient}*i"
        return head if not constant else f"{head} {'+' if constant > 0 else '-'} {abs(constant)}"


def _region(read: Eqn) -> tuple[Sequence | None, tuple[int, ...]]:
    """The start indices (atoms) and sizes of what a dynamic_slice or a slice reads (None
    for a strided slice)."""
    if read.prim.name == READ:
        return read.inputs[1:], tuple(read.params["slice_sizes"])
    params = read.params
    if any(s != 1 for s in params["strides"] or ()):
        return None, ()
    starts = [Literal.of(np.int64(s)) for s in params["start_indices"]]
    sizes = tuple(hi - lo for lo, hi in zip(params["start_indices"], params["limit_indices"],
                                            strict=True))
    return starts, sizes


def _line(eqn: Eqn) -> str:
    source = eqn.source
    return f"line {source.line}: " if source is not None and source.line else ""


# -- the batched computation -------------------------------------------------------------------

def emit_plan(plan: Plan, lead: Sequence[Any], inits: Sequence[Any]) -> list[Tracer]:
    """The loop's carried values after it (the index first), computed batched in the current
    trace. `lead`: the values of the body's leading inputs; `inits`: the carried values."""
    trace = current_trace()
    ops = Ops(source=caller_source())
    roles = plan.roles
    needed = [a for k in sorted(roles) for a in _batched_atoms(roles[k])]
    graph = dead_code_elimination(Graph(plan.body.in_vars, plan.body.eqns, tuple(needed)))
    _check_pass_size(graph)
    carried = plan.body.in_vars[plan.n_lead:]
    index_values = _index_values(ops, plan, carried[0].aval)
    values = [*lead, index_values, *inits[1:]]
    batched = [False] * plan.n_lead + [True] + [False] * (len(carried) - 1)
    graph, sliced = _rows_read(ops, plan, graph, values)
    outs, out_b = batch_eval(ops, graph, [_atom(v) for v in values] + sliced,
                             batched + [True] * len(sliced), plan.passes)
    if not any(out_b):
        raise Refused("nothing its passes compute depends on the index")
    found = iter(zip(outs, out_b, strict=True))
    results: list[Any] = [plan.start + plan.passes * plan.step]
    for k in range(1, len(carried)):
        role = roles[k]
        got = [next(found) for _ in _batched_atoms(role)]
        if isinstance(role, Write):
            got[1 + role.axis] = (_first_position(ops, plan, role, values), False)
        results.append(_finish(ops, plan, role, _atom(inits[k]), got))
    largest = max((v.aval.size * v.aval.dtype.itemsize for e in ops.eqns for v in e.outs),
                  default=0)
    if largest > LARGEST_BATCH_BYTES:
        raise Refused(f"its passes batched would hold {largest / 2**20:,.0f} MiB at once")
    trace.eqns.extend(ops.eqns)
    return [_tracer(trace, r, v.aval) for r, v in zip(results, carried, strict=True)]


def _rows_read(ops: Ops, plan: Plan, graph: Graph, values: list) -> tuple[Graph, list]:
    """Reads of an array the passes do not write, one row per pass along an axis (`X[i]`):
    every pass's row is one slice of the array, not a gather. Returns the graph taking those
    reads' results as more (batched) inputs, and the slices."""
    reads, sliced = [], []
    batched_in = {id(v) for v in graph.in_vars[:plan.n_lead]} | {
        id(v) for v in graph.in_vars[plan.n_lead + 1:]}
    for eqn in graph.eqns:
        if eqn.prim.name == READ and id(eqn.inputs[0]) in batched_in:
            rows = _slice_of_rows(ops, plan, graph, eqn, values)
            if rows is not None:
                reads.append(eqn)
                sliced.append(rows)
    if not reads:
        return graph, []
    skipped = {id(e) for e in reads}
    eqns = tuple(e for e in graph.eqns if id(e) not in skipped)
    ins = graph.in_vars + tuple(e.outs[0] for e in reads)
    return Graph(ins, eqns, graph.out_atoms), sliced


def _slice_of_rows(ops: Ops, plan: Plan, graph: Graph, read: Eqn, values: list):
    """`read`'s result for every pass (the batch axis first), as one slice; None when the
    read does not take one row per pass along one axis, inside the array."""
    facts, starts = plan.facts, read.inputs[1:]
    sizes = tuple(read.params["slice_sizes"])
    forms = [facts.of(s) for s in starts]
    if any(f is None for f in forms):
        return None
    moving = [d for d, f in enumerate(forms) if dict(f[0]).get(id(facts.index), 0)]
    if len(moving) != 1 or sizes[moving[0]] != 1 or \
            not facts.inside(starts, sizes, read.inputs[0].aval.shape):
        return None
    axis = moving[0]
    order = dict(forms[axis][0])[id(facts.index)] * plan.step
    if abs(order) != 1:
        return None
    last = plan.start + (plan.passes - 1) * plan.step
    at = [_at_index(ops, plan, s, values, plan.start if order > 0 else last) for s in starts]
    array = _atom(values[graph.in_vars.index(read.inputs[0])])
    rows = ops.dynamic_slice(array, at, sizes[:axis] + (plan.passes,) + sizes[axis + 1:])
    if order < 0:
        rows = ops.rev(rows, (axis,))
    rows = ops.moveaxis(rows, axis, 0)
    return ops.reshape(rows, (plan.passes,) + sizes)


def _at_index(ops: Ops, plan: Plan, atom, values: list, index: int):
    """`atom` of the body, worked out unbatched for the pass of loop index `index`."""
    graph = dead_code_elimination(Graph(plan.body.in_vars, plan.body.eqns, (atom,)))
    operands = [_atom(v) for v in values]
    operands[plan.n_lead] = _atom(index)
    return ops.inline(graph, operands)[0]


def _check_pass_size(graph: Graph) -> None:
    largest = max((v.aval.size for e in graph.eqns for v in e.outs), default=0)
    if largest > LARGEST_PASS_ELEMENTS:
        raise Refused(f"a pass already works on {largest:,} elements (batching pays where a "
                      f"pass has at most {LARGEST_PASS_ELEMENTS:,})")


def _first_position(ops: Ops, plan: Plan, write: Write, values: list):
    """Where along the written axis the rows start: the write's index in the pass that
    writes the first row, worked out unbatched (an expression of the loop's own values that
    an enclosing loop can still follow)."""
    last = plan.start + (plan.passes - 1) * plan.step
    return _at_index(ops, plan, write.eqn.inputs[2 + write.axis], values,
                     plan.start if write.ascending else last)


def _batched_atoms(role) -> list:
    """What the batched passes compute for a carried value: a write's update and indices, a
    reduction's other operand, a fresh value."""
    if isinstance(role, Write):
        return list(role.eqn.inputs[1:])
    if isinstance(role, Reduction):
        return [role.eqn.inputs[1 - role.at]]
    return [role.atom]


def _index_values(ops: Ops, plan: Plan, aval: ShapedArray):
    """The index of every pass, in pass order."""
    counts = ops.iota((plan.passes,), np.dtype(np.int64), 0)
    values = ops.add(ops.mul(counts, _full(ops, plan.passes, plan.step)),
                     _full(ops, plan.passes, plan.start))
    return ops.convert(values, aval.dtype, aval.weak_type)


def _full(ops: Ops, n: int, value: int):
    return ops.full(ShapedArray((n,), np.dtype(np.int64)), value)


def _finish(ops: Ops, plan: Plan, role, init, got: list) -> Any:
    members = [x if b else with_batch(ops, x, plan.passes) for x, b in got]
    if isinstance(role, Write):
        return _write_rows(ops, plan, role, init, members[0], got[1:])
    if isinstance(role, Reduction):
        return _reduce(ops, role, init, members[0], plan.passes)
    return ops.index_at(members[0], np.int64(plan.passes - 1))


def _write_rows(ops: Ops, plan: Plan, write: Write, array, rows, starts) -> Any:
    """Every pass's row written at once: the rows stacked along the written axis (in the
    order of their positions), at the first position."""
    axis, n = write.axis, plan.passes
    update = rows.aval.shape[1:]
    stacked = ops.reshape(rows, (n,) + update[:axis] + update[axis + 1:])
    stacked = ops.moveaxis(stacked, 0, axis)
    if not write.ascending:
        stacked = ops.rev(stacked, (axis,))
    at = [ops.index_at(s, np.int64(0)) if b else s for s, b in starts]
    return ops.dynamic_update_slice(array, stacked, at)


def _reduce(ops: Ops, reduction: Reduction, init, values, n: int) -> Any:
    """The body's own operation applied to init and each pass's value, in pass order (one
    reduce where the order cannot change the result: integers and booleans)."""
    prim = reduction.eqn.prim
    reduce, kinds = _ORDER_FREE.get(prim, (None, ""))
    if values.aval.dtype.kind in kinds and values.aval.dtype == init.aval.dtype:
        return _apply(ops, reduction, init, ops.bind(reduce, values, axes=(0,)))
    return _fold(ops, reduction, init, values, n)


def _fold(ops: Ops, reduction: Reduction, init, values, n: int) -> Any:
    """`acc = op(acc, values[k])` for k in 0..n-1, in that order: an XLA loop over blocks of
    FOLD_BLOCK values (one pass of an XLA:CPU loop costs far more than an operation on a
    scalar), the values padded to whole blocks and the padding passed over (one loop of one
    size for any n)."""
    blocks = -(-n // FOLD_BLOCK)
    member = values.aval.shape[1:]
    padded = ops.pad(values, ops.zeros(ShapedArray((), values.aval.dtype)),
                     (0,) * (1 + len(member)), (blocks * FOLD_BLOCK - n,) + (0,) * len(member))
    index_aval = ShapedArray((), np.dtype(np.int64))
    acc_aval = reduction.eqn.outs[0].aval
    cond = ops.new()
    k, acc = Var(index_aval), Var(acc_aval)
    pred = cond.lt(k, np.int64(blocks))
    cond_graph = Graph((k, acc), tuple(cond.eqns), (pred,))

    body = ops.new()
    values_in, k, acc = Var(padded.aval), Var(index_aval), Var(acc_aval)
    start = body.mul(k, np.int64(FOLD_BLOCK))
    block = body.dynamic_slice(values_in, [start] + [np.int64(0)] * len(member),
                               (FOLD_BLOCK,) + member)
    new_acc = acc
    for j in range(FOLD_BLOCK):
        folded = _apply(body, reduction, new_acc, _member(body, block, j))
        real = body.lt(body.add(start, np.int64(j)), np.int64(n))
        new_acc = body.select(body.broadcast_in_dim(real, member, ()), folded, new_acc) \
            if member else body.select(real, folded, new_acc)
    next_k = body.add(k, np.int64(1))
    body_graph = Graph((values_in, k, acc), tuple(body.eqns), (next_k, new_acc))
    return ops.bind(while_loop_p, padded, np.int64(0), init, cond_graph=cond_graph,
                    body_graph=body_graph, cond_nconsts=0, body_nconsts=1,
                    trip_count=blocks)[1]


def _member(ops: Ops, values, k: int):
    """values[k] (k a Python int)."""
    shape = values.aval.shape
    row = ops.slice(values, (k,) + (0,) * (len(shape) - 1), (k + 1,) + shape[1:])
    return ops.reshape(row, shape[1:])


def _apply(ops: Ops, reduction: Reduction, acc, value):
    """The body's own reducing equation, on acc (in its place) and value."""
    operands = [value, value]
    operands[reduction.at] = acc
    return ops.bind(reduction.eqn.prim, *operands, **reduction.eqn.params)


def _atom(value):
    return to_atom(value)


def _tracer(trace, value, aval: ShapedArray) -> Tracer:
    atom = _atom(value)
    if isinstance(atom, Literal):
        atom = Ops(trace.eqns, caller_source()).convert(atom, aval.dtype, aval.weak_type)
    return Tracer(Buffer(atom, trace, strides=c_strides(atom.aval)))


# -- the notes ---------------------------------------------------------------------------------

_NOTES: collections.OrderedDict[tuple[str, int], str] = collections.OrderedDict()


def note_loop(source, text: str) -> None:
    """What the report says of the loop at `source` (its latest trace)."""
    if source is None or not source.line:
        return
    key = (source.file, source.line)
    _NOTES[key] = f"line {source.line}: {text}"
    _NOTES.move_to_end(key)
    while len(_NOTES) > 256:
        _NOTES.popitem(last=False)


def loop_notes(graph: Graph) -> list[str]:
    """The notes of the loops whose equations are in `graph`, in line order."""
    lines = {(e.source.file, e.source.line) for e in graph.all_eqns() if e.source is not None}
    return [text for key, text in sorted(_NOTES.items(), key=lambda item: item[0][1])
            if key in lines]


def vectorised(body: Graph, n_lead: int, bounds: LoopBounds | None, labels: Sequence[str],
               lead: Sequence[Any], inits: Sequence[Any]) -> list[Tracer] | None:
    """The loop's carried values computed batched, when its passes are independent; else
    None (the loop stays a sequential XLA loop). Either way the decision is noted."""
    source = caller_source()
    if bounds is None:
        note_loop(source, "sequential loop (a `while` loop, or one whose passes the data "
                  "decides)")
        return None
    try:
        plan = plan_loop(body, n_lead, bounds, labels)
        if plan.passes == 0:
            return None
        results = emit_plan(plan, lead, inits)
    except Refused as why:
        note_loop(source, f"sequential loop: {why}")
        return None
    except UnsupportedError as err:
        note_loop(source, f"sequential loop: its body cannot be batched ({err.message})")
        return None
    except (TypeError, ValueError) as err:      # a batching rule's: the loop is still right
        note_loop(source, f"sequential loop: batching its body failed ({type(err).__name__}: "
                  f"{err})")
        return None
    note_loop(source, f"vectorised: its {plan.passes:,} passes run as one batched "
              "computation (" + _roles_text(plan, labels) + ")")
    return results


def _roles_text(plan: Plan, labels: Sequence[str]) -> str:
    kinds = {Write: "written row by row", Reduction: "a reduction in pass order",
             Fresh: "the last pass's value"}
    return ", ".join(f"`{labels[k]}` {kinds[type(r)]}" for k, r in sorted(plan.roles.items()))
