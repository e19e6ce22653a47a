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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..ir import Eqn, Graph, Literal, Var
from ..tracing import current_trace, to_atom

READ, WRITE = "dynamic_slice", "dynamic_update_slice"
MAX_INDEX_EQUATIONS = 16      # replayed before the loop: a short scalar computation


@dataclass(frozen=True)
class Forwarded:
    """One read replaced by the value the pass before wrote: the read, the equations its
    indices need (in order), and the write whose update is carried to the next pass."""
    read: Eqn
    index_eqns: tuple[Eqn, ...]
    write: Eqn


class _Affine:
    """Index expressions as {symbol: coefficient} plus a constant; symbols are the loop index
    and values the loop does not change (the body's leading inputs)."""

    def __init__(self, body: Graph, n_lead: int, index: Var | None):
        self.producers = {id(v): e for e in body.eqns for v in e.outs}
        self.invariant = {id(v) for v in body.in_vars[:n_lead]}
        self.index = index

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


def forward_reads(body: Graph, n_lead: int, step: int | None) -> tuple[Graph, list[Forwarded]]:
    """The body with its reads of what the pass before wrote replaced by carried values (after
    the existing ones), and what each needs before the loop. `n_lead`: the body's leading
    inputs (consts); its first carried value is the loop index when `step` is given."""
    if step is None:
        return body, []
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
