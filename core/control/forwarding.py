"""Reads of what the pass before wrote, forwarded as carried values, so that XLA updates the
array in place.

A loop body that reads an element the pass before wrote and writes another one
(`m = b[i] - a[i] * cp[i - 1]; cp[i] = c[i] / m; dp[i] = (d[i] - a[i] * dp[i - 1]) / m`)
holds the array's old value in two places: the read and the in-place write. XLA fuses a
cheap read into every kernel that uses it (and even a write into the kernel of a read of its
result), and orders those kernels freely, so to stay right XLA:CPU's copy insertion copies
the whole array on every pass (100,000 elements a pass: the loop ran 19 s where NumPy takes
0.3 s).

When the read is of exactly the slice the pass before wrote, it need not read the array at
all: the body carries the value it writes (one more carried value, the size of the write)
and the next pass takes it from there; the first pass reads the array before the loop. The
array then has no reader left in the loop but its write, and XLA writes it in place.

Which reads qualify is decided on the body's equations: the array is carried and written by
one `dynamic_update_slice` of the body whose result is the array's next value, the read is a
`dynamic_slice` of the array's value at the start of the pass, of the write's size, and each
of its indices is the write's index of the pass before: both affine in the loop index (sums,
differences and integer multiples of the index, literals and values the loop does not change),
with the read's equal to the write's at the index one step back. Clamping (XLA clamps a
slice's start into the array) is the same for both, so the element read is the element that
was written.

Within a pass, the same holds for a read of the array after a write to it (`A[i, j] -= s;
A[i, j] /= A[j, j]`): XLA fuses the write into the kernel of the read, which then reads the
array's old value beside the in-place write, and copies it. So before the above, a read of
exactly the slice a write of the pass wrote takes the written value; a read of a slice
provably apart from it (`A[j, j]` after a write of `A[i, j]`, j < i being the loop's own
bound) reads the array from before the write; a read of one element that may or may not be
the one element written (`T[i + 1, j]` after `T[i, j] = ...` under `if i + 1 < n`, in a
pass that writes `T[i, j]` only) reads the array from before the write and takes the value
written where the indices, clamped as XLA clamps them, are equal (`guarded`); and a write
over exactly the slice the write before it wrote replaces that write, unless that write's
result is still read (`_read_beside`). The pass then reads the array before its one write.
Facts used: index expressions affine in the body's integer inputs, their ranges (the loop
index's, and an enclosing loop's index read inside: `share_range`), and the loop's bound
(`j < i` in `for j in range(i)`); a read or write whose slice may be clamped (not provably
inside the array) is left alone, but for the one-element reads above, as is anything else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..ir import Eqn, Graph, Literal, Var
from ..numpy.affine import range_of
from ..passes import dead_code_elimination
from ..primitives import (broadcast_in_dim_p, convert_element_type_p, equal_p, logical_and_p,
                          maximum_p, minimum_p, select_p)
from ..tracing import current_trace, to_atom
from .ops import Ops

READ, WRITE = "dynamic_slice", "dynamic_update_slice"
MAX_INDEX_EQUATIONS = 16      # replayed before the loop: a short scalar computation


@dataclass(frozen=True)
class Forwarded:
    """One read replaced by the value the pass before wrote: the read, the equations its
    indices need (in order), and the write whose update is carried to the next pass."""
    read: Eqn
    index_eqns: tuple[Eqn, ...]
    write: Eqn


@dataclass(frozen=True)
class LoopBounds:
    """What a loop says of its index: it steps by `step` from `start` while short of `stop`
    (each an int, or the body input that holds it)."""
    step: int
    start: Any
    stop: Any


class _Affine:
    """Index expressions as {symbol: coefficient} plus a constant; symbols are the loop index
    and values the loop does not change (the body's leading inputs)."""

    def __init__(self, body: Graph, n_lead: int, index: Var | None):
        self.producers = {id(v): e for e in body.eqns for v in e.outs}
        self.invariant = {id(v) for v in body.in_vars[:n_lead]}
        self.index = index
        self.vars = {id(v): v for v in body.in_vars}

    def of(self, atom) -> tuple[frozenset, int] | None:
        form = self._form(atom, 0)
        return None if form is None else (frozenset((k, c) for k, c in form[0].items() if c),
                                          form[1])

    def _form(self, atom, depth: int):
        if isinstance(atom, Literal):
            value = np.asarray(atom.value)
            return ({}, int(value)) if value.shape == () and value.dtype.kind in "iu" else None
        if atom is self.index or id(atom) in self.invariant:
            return {id(atom): 1}, 0
        eqn = self.producers.get(id(atom))
        if eqn is None or depth > MAX_INDEX_EQUATIONS:
            return None
        parts = [self._form(a, depth + 1) for a in eqn.inputs]
        if any(p is None for p in parts):
            return None
        return _combine(eqn, parts)


def _combine(eqn: Eqn, parts):
    name = eqn.prim.name
    if name == "convert_element_type" and eqn.outs[0].aval.dtype.kind in "iu" and \
            eqn.inputs[0].aval.dtype.kind in "iu":
        return parts[0]
    if name in ("add", "subtract"):
        sign = 1 if name == "add" else -1
        (a, ca), (b, cb) = parts
        terms = dict(a)
        for k, c in b.items():
            terms[k] = terms.get(k, 0) + sign * c
        return terms, ca + sign * cb
    if name == "multiply":
        (a, ca), (b, cb) = parts
        if not b:
            return {k: c * cb for k, c in a.items()}, ca * cb
        if not a:
            return {k: c * ca for k, c in b.items()}, ca * cb
    return None


def forward_reads(body: Graph, n_lead: int, bounds: LoopBounds | None
                  ) -> tuple[Graph, list[Forwarded]]:
    """The body with its reads of what the pass before wrote replaced by carried values (after
    the existing ones), and what each needs before the loop. `n_lead`: the body's leading
    inputs (consts); its first carried value is the loop index when `bounds` are given."""
    if bounds is None:
        return body, []
    body = forward_within_pass(body, n_lead, bounds)
    step = bounds.step
    carried = body.in_vars[n_lead:]
    index = carried[0]
    affine = _Affine(body, n_lead, index)
    writes = _single_writes(body, carried)
    found = []
    for eqn in body.eqns:
        write = writes.get(id(eqn.inputs[0])) if eqn.prim.name == READ else None
        if write is not None and _reads_last_write(eqn, write, affine, id(index), step):
            found.append(Forwarded(eqn, _index_eqns(eqn, affine.producers), write))
    if not found:
        return body, []
    reads = {id(f.read) for f in found}
    eqns = tuple(e for e in body.eqns if id(e) not in reads)
    ins = body.in_vars + tuple(f.read.outs[0] for f in found)
    outs = body.out_atoms + tuple(f.write.inputs[1] for f in found)
    return Graph(ins, eqns, outs), found


# -- within a pass ----------------------------------------------------------------------------

def forward_within_pass(body: Graph, n_lead: int, bounds: LoopBounds) -> Graph:
    """The body with reads after a write of the pass resolved (see the module's docstring)."""
    facts = IndexFacts(body, n_lead, bounds)
    replaced: dict[int, Any] = {}
    eqns = []
    for eqn in body.eqns:
        eqn = _with_inputs(eqn, replaced)
        if eqn.prim.name == READ:
            got = facts.read_before_writes(eqn)
            if isinstance(got, (Var, Literal)):
                replaced[id(eqn.outs[0])] = got
                continue
            for e in got:
                facts.producers.update((id(v), e) for v in e.outs)
            eqns += got
            continue
        if eqn.prim.name == WRITE and not _read_beside(eqn, eqns, body):
            eqn = facts.write_over_write(eqn)
        facts.producers.update((id(v), eqn) for v in eqn.outs)
        eqns.append(eqn)
    outs = tuple(replaced.get(id(a), a) for a in body.out_atoms)
    if not replaced and all(e is f for e, f in zip(eqns, body.eqns, strict=True)):
        return body
    return dead_code_elimination(Graph(body.in_vars, tuple(eqns), outs))


def _read_beside(write: Eqn, done: list[Eqn], body: Graph) -> bool:
    """Whether the array a write updates is read by another equation of the pass (or is a
    result): the write must then stay a write of it, which XLA makes in place once those
    reads are done; written over the array before it instead, both would be live, and XLA
    would copy one (two `if`s writing `table[i, j]`, the second reading `table[i + 1, j]`)."""
    array = write.inputs[0]
    position = next(k for k, e in enumerate(body.eqns) if e.id == write.id)
    return any(a is array for e in (*done, *body.eqns[position + 1:]) for a in e.inputs) or \
        any(a is array for a in body.out_atoms)


def one_element(sizes, update, read: Eqn) -> bool:
    """Whether a read and a write are each of one element, of one type."""
    return all(n == 1 for n in sizes) and all(n == 1 for n in update.aval.shape) and \
        update.aval == read.outs[0].aval


def guarded(read: Eqn, write: Eqn, written, older, facts: IndexFacts) -> list[Eqn]:
    """Equations giving the read's result: `written` (what the write wrote) where the read is
    of the element written, else `older` (the element read before the write); start indices
    compared as XLA clamps them into the array."""
    ops = Ops(source=read.source)
    shape = write.inputs[0].aval.shape
    same = None
    for start, other, dim in zip(read.inputs[1:], write.inputs[2:], shape, strict=True):
        if start is other or facts.same_slice((start,), (other,)):
            continue
        equal = ops.bind(equal_p, _clamped(ops, start, dim, facts),
                         _clamped(ops, other, dim, facts))
        same = equal if same is None else ops.bind(logical_and_p, same, equal)
    if same is None:
        same = Literal.of(np.bool_(True))
    aval = read.outs[0].aval
    if aval.shape:
        same = ops.bind(broadcast_in_dim_p, same, shape=aval.shape, broadcast_dimensions=())
    return [*ops.eqns, Eqn(select_p, (same, written, older), {}, read.outs, read.source)]


def _clamped(ops: Ops, start, dim: int, facts: IndexFacts):
    """The start index of a one-element slice as XLA takes it: an int64 in [0, dim - 1]."""
    inside = facts.inside_dim(start, 1, dim)
    if start.aval.dtype != np.int64 or start.aval.weak_type:
        start = ops.bind(convert_element_type_p, start, new_dtype=np.dtype(np.int64),
                         weak_type=False)
    if inside:
        return start
    low = ops.bind(maximum_p, start, Literal.of(np.int64(0)))
    return ops.bind(minimum_p, low, Literal.of(np.int64(dim - 1)))


def _with_inputs(eqn: Eqn, replaced: dict[int, Any]) -> Eqn:
    if not any(id(a) in replaced for a in eqn.inputs):
        return eqn
    inputs = tuple(replaced.get(id(a), a) for a in eqn.inputs)
    return Eqn(eqn.prim, inputs, eqn.params, eqn.outs, eqn.source, eqn.id)


class IndexFacts(_Affine):
    """What is known of a body's index expressions: affine forms, the ranges of their
    symbols, and the loop's bound on its index."""

    def __init__(self, body: Graph, n_lead: int, bounds: LoopBounds):
        super().__init__(body, n_lead, body.in_vars[n_lead])
        self.bounds = bounds
        self.one_place = self._writes_at_one_place(body)

    def _writes_at_one_place(self, body: Graph) -> set[int]:
        """The ids (`Eqn.id`) of the writes whose array the pass writes at one place only (writes of
        writes' results, all of the same slice): reads of such an array may be guarded (see
        `guarded`), as its writes then become one. Where a pass writes several places, a
        read left on the array as written so far costs less: XLA fuses reads into the
        kernels of later writes, and a read of the array from before the first write would
        keep it alive beside the array being written, which XLA copies."""
        writes = [e for e in body.eqns if e.prim.name == WRITE]
        chain = {id(e.outs[0]): e for e in writes}
        groups: dict[int, list[Eqn]] = {}
        for eqn in writes:
            root = eqn
            while id(root.inputs[0]) in chain:
                root = chain[id(root.inputs[0])]
            groups.setdefault(id(root), []).append(eqn)
        return {e.id for group in groups.values() if all(
            w.inputs[1].aval.shape == group[0].inputs[1].aval.shape and
            self.same_slice(w.inputs[2:], group[0].inputs[2:]) for w in group) for e in group}

    # the rules ---------------------------------------------------------------------------
    def read_before_writes(self, read: Eqn):
        """A read of a write's result: the value written (the same slice), a read of the
        array before the write (a slice apart from it), or, for one element, both picked by
        whether it is the element written (`guarded`), as far down the writes as holds.
        Returns a value, or the equations that give the read's result (the last one)."""
        write = self.producers.get(id(read.inputs[0]))
        if write is None or write.prim.name != WRITE:
            return [read]
        sizes = tuple(read.params["slice_sizes"])
        update = write.inputs[1]
        if self.same_slice(read.inputs[1:], write.inputs[2:]) and \
                sizes == update.aval.shape and update.aval == read.outs[0].aval:
            return update
        apart = self.apart(read.inputs[1:], sizes, write.inputs[2:], update.aval.shape,
                           write.inputs[0].aval.shape)
        if not apart and not (one_element(sizes, update, read) and write.id in self.one_place):
            return [read]
        older = Eqn(read.prim, (write.inputs[0],) + read.inputs[1:], read.params, read.outs,
                    read.source, read.id) if apart else \
            Eqn(read.prim, (write.inputs[0],) + read.inputs[1:], read.params,
                (Var(read.outs[0].aval),), read.source)
        below = self.read_before_writes(older)
        if apart:
            return below
        value = below if isinstance(below, (Var, Literal)) else older.outs[0]
        eqns = [] if isinstance(below, (Var, Literal)) else below
        return eqns + guarded(read, write, write.inputs[1], value, self)

    def write_over_write(self, write: Eqn) -> Eqn:
        """A write over exactly the slice the write before it wrote replaces that write."""
        before = self.producers.get(id(write.inputs[0]))
        if before is None or before.prim.name != WRITE or \
                before.inputs[1].aval.shape != write.inputs[1].aval.shape or \
                not self.same_slice(write.inputs[2:], before.inputs[2:]):
            return write
        return Eqn(write.prim, (before.inputs[0],) + write.inputs[1:], write.params,
                   write.outs, write.source, write.id)

    def inside_dim(self, start, size: int, dim: int) -> bool:
        low, high = self.bounds_of(self.of(start))
        return low >= 0 and high <= dim - size

    # the facts ---------------------------------------------------------------------------
    def same_slice(self, starts, others) -> bool:
        """The same start indices (so the same clamped slice, for slices of one size)."""
        return all(a is b or (self.of(a) is not None and self.of(a) == self.of(b))
                   for a, b in zip(starts, others, strict=True))

    def apart(self, starts, sizes, others, other_sizes, shape) -> bool:
        """Whether two slices, both provably inside the array, share no element."""
        if not (self.inside(starts, sizes, shape) and self.inside(others, other_sizes, shape)):
            return False
        for a, b, size, other_size in zip(starts, others, sizes, other_sizes, strict=True):
            low, high = self.bounds_of(minus_form(self.of(a), self.of(b)))
            if high <= -size or low >= other_size:
                return True
        return False

    def inside(self, starts, sizes, shape) -> bool:
        for start, size, dim in zip(starts, sizes, shape, strict=True):
            low, high = self.bounds_of(self.of(start))
            if low < 0 or high > dim - size:
                return False
        return True

    def bounds_of(self, form) -> tuple[float, float]:
        """Inclusive bounds of an affine form: its symbols' ranges, tightened by the loop's
        bound on its index (`index < stop` where both are in the form, opposite)."""
        if form is None:
            return -np.inf, np.inf
        terms, constant = dict(form[0]), form[1]
        low = high = float(constant)
        relation = self._relation(terms)
        if relation is not None:
            coefficient, less = relation
            for k in (id(self.index), id(self.bounds.stop)):
                terms.pop(k)
            # coefficient * (index - stop): below 0 when stepping up, above when down
            if (coefficient > 0) == less:
                high += -abs(coefficient)
                low = -np.inf
            else:
                low += abs(coefficient)
                high = np.inf
        for symbol, coefficient in terms.items():
            span = self._range(symbol)
            if span is None:
                return -np.inf, np.inf
            ends = sorted((coefficient * span[0], coefficient * span[1]))
            low, high = low + ends[0], high + ends[1]
        return low, high

    def _relation(self, terms):
        stop = self.bounds.stop
        if not isinstance(stop, Var) or id(stop) not in terms or id(self.index) not in terms:
            return None
        coefficient = terms[id(self.index)]
        if terms[id(stop)] != -coefficient:
            return None
        return coefficient, self.bounds.step > 0

    def _range(self, symbol: int):
        if symbol == id(self.index) and all(isinstance(b, int) for b in
                                           (self.bounds.start, self.bounds.stop)):
            start, stop, step = self.bounds.start, self.bounds.stop, self.bounds.step
            last = start + (len(range(start, stop, step)) - 1) * step
            return (min(start, last), max(start, last)) if range(start, stop, step) else None
        var = self.vars.get(symbol)
        return range_of(var) if var is not None else None


def minus_form(a, b):
    if a is None or b is None:
        return None
    terms = dict(a[0])
    for k, c in b[0]:
        terms[k] = terms.get(k, 0) - c
    return frozenset((k, c) for k, c in terms.items() if c), a[1] - b[1]


# -- across passes ----------------------------------------------------------------------------

def _single_writes(body: Graph, carried: Sequence[Var]) -> dict[int, Eqn]:
    """{id of a carried array: its one write}, for arrays whose next value is one
    dynamic_update_slice of their value at the start of the pass."""
    by_out = {id(v): e for e in body.eqns for v in e.outs}
    writes = {}
    for var, out in zip(carried, body.out_atoms, strict=True):
        eqn = by_out.get(id(out))
        if eqn is not None and eqn.prim.name == WRITE and eqn.inputs[0] is var:
            writes[id(var)] = eqn
    return writes


def _reads_last_write(read: Eqn, write: Eqn, affine: _Affine, index: int, step: int) -> bool:
    if tuple(read.params["slice_sizes"]) != write.inputs[1].aval.shape:
        return False
    for r, w in zip(read.inputs[1:], write.inputs[2:], strict=True):
        read_form, write_form = affine.of(r), affine.of(w)
        if read_form is None or write_form is None:
            return False
        terms, constant = write_form
        back = constant - dict(terms).get(index, 0) * step
        if read_form != (terms, back):
            return False
    return True


def _index_eqns(read: Eqn, producers: dict[int, Eqn]) -> tuple[Eqn, ...]:
    """The equations the read's indices are computed by, in order."""
    needed: list[Eqn] = []

    def visit(atom):
        eqn = producers.get(id(atom)) if isinstance(atom, Var) else None
        if eqn is None or any(e is eqn for e in needed):
            return
        for a in eqn.inputs:
            visit(a)
        needed.append(eqn)

    for atom in read.inputs[1:]:
        visit(atom)
    return tuple(needed)


def first_reads(found: Sequence[Forwarded], body_in_vars: Sequence[Var],
                values: Sequence[Any]) -> list[Var]:
    """Each forwarded read made once before the loop, in the current trace, on the values the
    body's inputs take on entry (`values`, one per input of the body before forwarding)."""
    trace = current_trace()
    entry = {id(v): to_atom(x) for v, x in zip(body_in_vars, values, strict=True)}
    firsts = []
    for f in found:
        env = dict(entry)
        for eqn in (*f.index_eqns, f.read):
            inputs = [a if isinstance(a, Literal) else env.get(id(a), a) for a in eqn.inputs]
            outs = trace.bind(eqn.prim, *inputs, **eqn.params)
            env.update((id(old), new) for old, new in zip(eqn.outs, outs, strict=True))
        firsts.append(env[id(f.read.outs[0])])
    return firsts


def with_unused_inputs(graph: Graph, like: Sequence[Var]) -> Graph:
    """`graph` taking one more input per var of `like` (the loop's test, given the values
    forwarded, which it does not read)."""
    return Graph(graph.in_vars + tuple(Var(v.aval) for v in like), graph.eqns, graph.out_atoms)
