"""Every primitive's batching rule: the batched equation equals a loop over the members.

For each case of `batch_cases` (every primitive with operands has at least one) and each
choice of batched operands (every non-empty subset), hypothesis draws seeds; every batched
operand is drawn afresh for each member. The batched graph is checked by `check_graph`, its outputs' types are
the members' types with the batch axis in front, and its values (run by the graph interpreter,
each primitive's NumPy `impl`) equal the member-by-member results stacked. Then the same,
compiled: `vmap` of the primitive (each batched operand mapped along a drawn axis) against
`jit` of it on each member, stacked.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit.core import check_graph, jit, vmap
from psc_jit.core.interpreter import eval_graph
from psc_jit.core.primitives import PRIMITIVES
from psc_jit.core.tracing import bind
from psc_jit.core.control.batching import batch_graph

from .batch_cases import CASES

SETTINGS = settings(max_examples=3, deadline=None, derandomize=True)
COMPILED = settings(max_examples=2, deadline=None, derandomize=True)
NO_OPERANDS = {"iota"}     # never batched: the interpreter batches equations through operands
MEMBERS = 3
EACH_CASE = pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
NO_COMPLEX_WARNING = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")


def _patterns(case) -> list[tuple[bool, ...]]:
    n = len(case.operands)
    return [flags for flags in itertools.product((False, True), repeat=n) if any(flags)]


CASE_PATTERNS = [(c, flags) for c in CASES for flags in _patterns(c)]


def _run(graph, values):
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in eval_graph(graph, *values)]


@st.composite
def _batching(draw, n_operands):
    flags = draw(st.lists(st.booleans(), min_size=n_operands, max_size=n_operands).filter(any))
    return flags, draw(st.integers(0, 2**32 - 1))


def _operands(case, flags, seed):
    """(per member, its operands; the operands as the batched graph takes them)."""
    rng = np.random.default_rng(seed)
    shared = [o.draw(rng) for o in case.operands]
    members = [[o.draw(rng) if b else x for o, x, b in zip(case.operands, shared, flags,
                                                           strict=True)]
               for _ in range(MEMBERS)]
    stacked = [np.stack([m[k] for m in members]) if b else shared[k]
               for k, b in enumerate(flags)]
    return members, stacked


def _assert_stacked(got, per_member, case, what):
    expected = [np.stack([m[k] for m in per_member]) for k in range(len(per_member[0]))]
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype, f"{case.id} {what}: {g.dtype} != {e.dtype}"
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, equal_nan=True,
                                   err_msg=f"{case.id} {what}")


@pytest.mark.pure
@NO_COMPLEX_WARNING
@pytest.mark.parametrize("case, flags", CASE_PATTERNS, ids=[
    f"{c.id}-{''.join('B' if b else '_' for b in flags)}" for c, flags in CASE_PATTERNS])
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_batched_equation_is_a_loop_over_members(case, flags, seed):
    graph = case.graph()
    batched, out_b = batch_graph(graph, list(flags), MEMBERS, instantiate=True)
    check_graph(batched)
    for aval, out in zip(batched.out_avals, graph.out_avals, strict=True):
        assert (aval.shape, aval.dtype, aval.weak_type) == (
            (MEMBERS,) + out.shape, out.dtype, out.weak_type), case.id
    members, stacked = _operands(case, flags, seed)
    _assert_stacked(_run(batched, stacked), [_run(graph, m) for m in members], case,
                    "interpreted")


def _function(case):
    if case.traced is not None:
        return case.traced
    prim = PRIMITIVES[case.prim]

    def primitive(*operands):
        outs = bind(prim, *operands, **case.params)
        return tuple(outs) if prim.multiple_results else outs
    return primitive


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@pytest.mark.xla
@NO_COMPLEX_WARNING
@EACH_CASE
@COMPILED
@given(data=st.data())
def test_vmap_of_a_primitive_is_jit_on_each_member(case, data):
    flags, seed = data.draw(_batching(len(case.operands)))
    members, _ = _operands(case, flags, seed)
    axes = [data.draw(st.integers(-np.ndim(x) - 1, np.ndim(x))) if b else None
            for x, b in zip(members[0], flags, strict=True)]
    args = [np.stack([m[k] for m in members], axis=a) if b else x
            for k, (x, b, a) in enumerate(zip(members[0], flags, axes, strict=True))]
    fun = _function(case)
    got = _as_tuple(vmap(fun, in_axes=tuple(axes))(*(a.copy() for a in args)))
    one = jit(fun)
    expected = [_as_tuple(one(*(np.copy(x) for x in m))) for m in members]
    _assert_stacked([np.asarray(g) for g in got], [[np.asarray(e) for e in m]
                                                   for m in expected], case, "compiled")


def test_every_primitive_with_operands_has_a_batching_rule_and_a_case():
    missing = {n for n, p in PRIMITIVES.items() if p.batch is None} - NO_OPERANDS
    assert missing == set(), f"no batching rule: {sorted(missing)}"
    untested = set(PRIMITIVES) - NO_OPERANDS - {c.prim for c in CASES}
    assert untested == set(), f"no batching case: {sorted(untested)}"


def test_control_cases_contain_their_primitive():
    for case in CASES:
        if case.traced is not None:
            assert case.prim in {e.prim.name for e in case.graph().all_eqns()}, case.id
