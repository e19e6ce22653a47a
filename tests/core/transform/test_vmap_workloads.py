"""vmap over the shared reference workloads whose cells are functions of one array.

Each workload cell (../shared/workloads/*.py) whose inputs hold exactly one array becomes a
function of its inputs (as the magic makes it), mapped over a batch of that array: the array
itself, flipped, rolled, halved, and negated when it holds values of both signs (so that a
branch on the data goes both ways). The other inputs are the same for every member. The result
must equal the plain cell run on each member, stacked. A cell that `jit` does not compile is
skipped with the reason (vmap traces it the same way).
"""
from __future__ import annotations

import copy
import importlib.util
import pathlib

import numpy as np
import pytest
from psc_jit.core import (TraceError, analyze_cell, jit, make_cell_function, roll_loops,
                          vmap)

pytestmark = pytest.mark.xla

WORKLOADS = pathlib.Path(__file__).resolve().parents[3].parent / "shared" / "workloads"


def _load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"workload_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _one_array_workloads() -> list[pathlib.Path]:
    if not WORKLOADS.is_dir():
        return []
    found = []
    for path in sorted(WORKLOADS.glob("*.py")):
        if path.name == "run.py":
            continue
        inputs = _load(path).setup()
        if sum(isinstance(v, np.ndarray) for v in inputs.values()) == 1:
            found.append(path)
    return found


def _members(x: np.ndarray) -> list[np.ndarray]:
    members = [x, np.flip(x), np.roll(x, 1, axis=0)]
    if x.dtype.kind in "fc":
        members.append(x * 0.5)
        if x.dtype.kind == "f" and x.min() < 0 < x.max():
            members.append(-x)
    return members


def _tolerance(dtype):
    return (1e-4, 1e-5) if dtype in (np.float32, np.complex64) else (1e-9, 1e-12)


def _outputs(result, names, values) -> dict:
    """The cell's outputs: what it assigns, and the inputs it updated in place."""
    return {**dict(zip(names, values, strict=True)), **result[0]}


@pytest.mark.parametrize("path", _one_array_workloads(), ids=lambda p: p.stem)
def test_vmap_of_a_workload_cell_is_the_cell_on_each_member(path):
    workload = _load(path)
    inputs = workload.setup()
    analysis = analyze_cell(workload.CELL.strip("\n"))
    names = [n for n in analysis.inputs if n in inputs]
    cell = make_cell_function(analysis, names, {"np": np}, transform=roll_loops)
    mapped = next(n for n in names if isinstance(inputs[n], np.ndarray))
    try:
        jit(cell)(*copy.deepcopy([inputs[n] for n in names]))
    except TraceError as err:
        pytest.skip(f"jit does not compile this cell: {err.explain()}")
    members = _members(inputs[mapped])
    args = [np.stack(members) if n == mapped else inputs[n] for n in names]
    result = vmap(cell, in_axes=tuple(0 if n == mapped else None for n in names))(*args)
    got = _outputs(result, names, args)
    expected = []
    for member in members:
        values = [member.copy() if n == mapped else copy.deepcopy(inputs[n]) for n in names]
        with np.errstate(all="ignore"):
            expected.append(_outputs(cell(*values), names, values))
    for name in workload.OUTPUTS:
        want = np.stack([np.asarray(e[name]) for e in expected])
        have = np.asarray(got[name])
        assert have.dtype == want.dtype, name
        rtol, atol = _tolerance(want.dtype)
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{path.stem}: {name}")
