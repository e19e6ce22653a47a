"""vmap of every NumPy function and ufunc psc_jit compiles equals NumPy on each member.

The examples are the coverage table's (docs/make_coverage.py): one call per function, on the
operands x f64[3,4], y f64[4], v f64[5], i i64[2], b bool[3,4]. Each member of the batch has
those operands' values shuffled (so the values stay in their domain: integers, positive, valid
indices). Every operand is mapped, or some are (x along its last axis) and the others are the
same for every member; the result must equal the example run by NumPy on each member, stacked
(dtype included; the values of np.empty and np.empty_like are whatever memory held, so only
their type is compared). Where NumPy would shape a member's result otherwise than the program
does (lstsq's residuals of a rank-deficient matrix), vmap raises DataDependentShapeError, as
jit does for that member.
"""
from __future__ import annotations

import importlib.util
import pathlib
import warnings

import numpy as np
import pytest
from psc_jit.core import DataDependentShapeError, TraceError, jit, vmap
from psc_jit.core.tree_util import flatten

pytestmark = pytest.mark.xla

ROOT = pathlib.Path(__file__).resolve().parents[3]
MEMBERS = 3
IN_AXES = {"all": (0, 0, 0, 0, 0), "some": (-1, None, 0, None, 0)}
UNDEFINED_VALUES = {"np.empty", "np.empty_like"}


def _coverage():
    spec = importlib.util.spec_from_file_location("make_coverage", ROOT / "docs" /
                                                  "make_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COVERAGE = _coverage()
EXAMPLES = COVERAGE.examples()


def _shuffled(value: np.ndarray, rng) -> np.ndarray:
    return rng.permutation(value.reshape(-1)).reshape(value.shape)


def _members():
    rng = np.random.default_rng(0)
    members = [list(COVERAGE.OPERANDS)]
    for _ in range(MEMBERS - 1):
        members.append([_shuffled(o, rng) for o in COVERAGE.OPERANDS])
    return members


def _compare(name, got, expected):
    got_leaves, got_tree = flatten(got)
    per_member = [flatten(e) for e in expected]
    assert all(tree == got_tree for _, tree in per_member), name
    for k, leaf in enumerate(got_leaves):
        want = [leaves[k] for leaves, _ in per_member]
        if not isinstance(want[0], (np.ndarray, np.generic, bool, int, float, complex)):
            assert all(w == leaf for w in want), name
            continue
        want = np.stack([np.asarray(w) for w in want])
        have = np.asarray(leaf)
        assert have.dtype == want.dtype and have.shape == want.shape, (
            f"{name}: {have.dtype}{have.shape} != {want.dtype}{want.shape}")
        if name not in UNDEFINED_VALUES:
            np.testing.assert_allclose(have, want, rtol=1e-9, atol=1e-12, equal_nan=True,
                                       err_msg=name)


@pytest.mark.parametrize("mapped", IN_AXES)
@pytest.mark.parametrize("name, example", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_vmap_of_a_numpy_function_is_numpy_on_each_member(name, example, mapped):
    in_axes = IN_AXES[mapped]
    members = _members()
    for m in members:
        m[:] = [o if a is not None else members[0][k] for k, (o, a) in enumerate(zip(
            m, in_axes, strict=True))]
    args = [np.stack([m[k] for m in members], axis=a) if a is not None else members[0][k]
            for k, a in enumerate(in_axes)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            got = vmap(example, in_axes=in_axes)(*args)
        except TraceError as err:
            pytest.fail(f"{name}: {err.explain()}")
        except DataDependentShapeError:
            _assert_jit_refuses_a_member(example, members)
            return
        expected = [example(*[np.copy(o) for o in m]) for m in members]
    _compare(name, got, expected)


def _assert_jit_refuses_a_member(example, members):
    """NumPy's result for some member has another shape than the program's (lstsq of a
    rank-deficient matrix): jit refuses that member as vmap refuses the batch."""
    refused = 0
    for m in members:
        try:
            jit(example)(*[np.copy(o) for o in m])
        except DataDependentShapeError:
            refused += 1
    assert refused, "vmap raised DataDependentShapeError, but jit runs every member"
