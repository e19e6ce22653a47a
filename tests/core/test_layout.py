"""Layouts as arithmetic, checked against NumPy on real arrays: the same shapes, strides and
byte offsets after any chain of views, the same view-or-copy answer for reshapes, the same
errors. And the crash they replace: scalar reads of large arrays through views, in a
subprocess so that a crash fails the test instead of killing pytest."""
from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit.core.layout import Layout, ViewOp

DTYPES = [np.dtype(t) for t in ("float64", "complex128", "int8", "complex64", "int32")]


def layout_of(arr: np.ndarray, base: np.ndarray) -> Layout:
    offset = arr.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return Layout(arr.shape, arr.strides, offset, arr.itemsize)


def outcome(fn, *args):
    """fn's result, or (error type, message) when it raises."""
    try:
        return fn(*args)
    except (IndexError, ValueError, TypeError) as err:
        return (type(err), str(err))


# -- strategies -------------------------------------------------------------------------------

def any_index(ndim: int):
    """Basic indices, valid or not: ints in and out of bounds, slices of any step, None,
    Ellipsis (sometimes twice), too many entries."""
    entry = st.one_of(st.integers(-7, 7), st.none(), st.just(Ellipsis),
                      st.builds(slice, st.none() | st.integers(-7, 7),
                                st.none() | st.integers(-7, 7),
                                st.none() | st.integers(-3, 3).filter(bool)))
    return st.one_of(entry, st.lists(entry, max_size=ndim + 2).map(tuple))


@st.composite
def reshape_target(draw, shape):
    """A shape of the same size: axes of length 1 dropped or added, neighbours merged, one
    axis split into two factors."""
    dims = [n for n in shape if n != 1 or draw(st.booleans())]
    for _ in range(draw(st.integers(0, 2))):
        if len(dims) >= 2:
            i = draw(st.integers(0, len(dims) - 2))
            dims[i:i + 2] = [dims[i] * dims[i + 1]]
    if dims and draw(st.booleans()):
        i = draw(st.integers(0, len(dims) - 1))
        divisors = [d for d in range(1, dims[i] + 1) if dims[i] % d == 0] or [0]
        d = draw(st.sampled_from(divisors))
        dims[i:i + 1] = [d, dims[i] // d] if d else [0, draw(st.integers(0, 3))]
    if draw(st.booleans()):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims)


@st.composite
def view_op(draw, arr: np.ndarray) -> ViewOp:
    names = ["index", "reshape", "transpose", "broadcast_to"] + ["flip"] * (arr.ndim > 0)
    if arr.dtype.kind == "c":
        names += ["real", "imag"]
    name = draw(st.sampled_from(names))
    if name == "index":
        return ViewOp("index", draw(any_index(arr.ndim)))
    if name == "reshape":
        return ViewOp("reshape", draw(reshape_target(arr.shape)))
    if name == "transpose":
        return ViewOp("transpose", tuple(draw(st.permutations(range(arr.ndim)))))
    if name == "broadcast_to":
        lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        dims = tuple(draw(st.integers(0, 3)) if n == 1 else n for n in arr.shape)
        if draw(st.integers(0, 9)) == 0 and dims:
            dims = dims[:-1] + (dims[-1] + 1,)      # does not fit: NumPy's ValueError
        return ViewOp("broadcast_to", lead + dims)
    if name == "flip":
        return ViewOp("flip", tuple(draw(st.sets(st.integers(0, max(arr.ndim - 1, 0)),
                                                 max_size=arr.ndim))))
    return ViewOp(name)


@st.composite
def base_arrays(draw) -> np.ndarray:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    dtype = draw(st.sampled_from(DTYPES))
    return np.zeros(shape, dtype)


# -- the properties ---------------------------------------------------------------------------

def take(op: ViewOp, arr: np.ndarray):
    """NumPy's view for the op, or None where NumPy copies (a reshape it cannot view)."""
    if op.name == "reshape":
        try:
            return np.reshape(arr, op.arg, copy=False)
        except ValueError as err:
            if "copy" in str(err):
                return None
            raise
    if op.name == "index":        # with an Ellipsis, ints everywhere give a 0-d view, not a scalar
        index = op.arg if isinstance(op.arg, tuple) else (op.arg,)
        return arr[index if any(e is Ellipsis for e in index) else index + (Ellipsis,)]
    return op.on_array(arr)


def take_layout(op: ViewOp, layout: Layout):
    """The op on a Layout, or None where NumPy copies (a reshape it cannot view)."""
    return layout.reshape(op.arg) if op.name == "reshape" else op.on_layout(layout)


@settings(max_examples=400, deadline=None)
@given(base=base_arrays(), data=st.data())
def test_any_chain_of_views_has_numpys_shape_strides_and_offset(base, data):
    arr, layout = base, Layout(base.shape, base.strides, 0, base.itemsize)
    for _ in range(data.draw(st.integers(1, 5))):
        op = data.draw(view_op(arr))
        want = outcome(take, op, arr)
        got = outcome(take_layout, op, layout)
        if isinstance(want, tuple):
            assert isinstance(got, tuple) and got[0] is want[0], (op, want, got)
            if want[0] is IndexError:
                assert got == want
            return
        if want is None:
            assert got is None, (op, layout)
            return
        assert got == layout_of(want, base), (op, layout)
        assert got.c_contiguous == want.flags.c_contiguous
        arr, layout = want, got


@settings(max_examples=300, deadline=None)
@given(base=base_arrays(), data=st.data())
def test_reshape_is_a_view_exactly_when_numpy_makes_one(base, data):
    arr = base
    for op in data.draw(st.lists(st.sampled_from(["T", "slice", "flip"]), max_size=3)):
        if arr.ndim:
            arr = arr.T if op == "T" else arr[::2] if op == "slice" else np.flip(arr)
    target = data.draw(reshape_target(arr.shape))
    layout = layout_of(arr, base)
    viewed = layout.reshape(target)
    try:
        real = np.reshape(arr, target, copy=False)
    except ValueError:
        assert viewed is None
        return
    assert viewed == layout_of(real, base)


def test_a_scalar_index_counts_from_the_end_without_reading_memory():
    layout = Layout.c_order((1_000_000,), 8)
    assert layout[-1] == Layout((), (), 7_999_992, 8)
    with pytest.raises(IndexError, match="index 1000000 is out of bounds for axis 0 with size"):
        layout[1_000_000]


def test_0d_and_empty_edges():
    assert Layout.c_order((), 8)[()] == Layout((), (), 0, 8)
    assert Layout.c_order((), 8)[None].shape == (1,)
    assert Layout.c_order((0, 3), 8).c_contiguous
    assert Layout.c_order((3, 4), 8).transpose((1, 0)).reshape((12,)) is None
    with pytest.raises(IndexError, match="too many indices"):
        Layout.c_order((), 8)[0]


# -- the crash these layouts replace ----------------------------------------------------------

CRASH_REPROS = [
    "jit(lambda a: a[-1])(x)",
    "jit(lambda a: a[500_000:][-1])(x)",
    "jit(lambda a: a.reshape(1000, 1000).T[-1, -1])(x)",
    "jit(lambda a: a[::-1][0])(x)",
    "jit(lambda a: np.flip(a.reshape(1000, 1000), 0)[0, -1])(x)",
    "jit(lambda a: a.reshape(1000, 1000)[-1][-1])(x)",
    "jit(lambda a: (a[-1], a.reshape(-1, 2)[-1, 1]))(x)",
    "jit(lambda a: a.reshape(100, 100, 100)[..., -1].ravel()[-1])(x)",
    "jit(lambda c: c.imag[-1])(x.astype(complex))",
]


@pytest.mark.xla
@pytest.mark.parametrize("expression", CRASH_REPROS)
def test_scalar_reads_of_large_arrays_do_not_crash(expression):
    code = textwrap.dedent(f"""
        import numpy as np
        from psc_jit import jit
        x = np.arange(1_000_000, dtype=np.float64)
        got = {expression}
        want = (lambda: {expression.replace('jit(', '(', 1)})()
        assert np.array_equal(np.asarray(got), np.asarray(want)), (got, want)
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip() == "ok"


@pytest.mark.ipython
@pytest.mark.xla
@pytest.mark.parametrize("cell", ["c = x[-1]", "c = x.reshape(1000, -1)[-1, -1]",
                                  "v = x[::-1]\nc = v[0] + v[-1]"])
def test_magic_scalar_read_of_a_large_array_does_not_crash(cell):
    code = textwrap.dedent(f"""
        import numpy as np, psc_jit
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "psc_jit")
        shell.user_ns.update(np=np, x=np.arange(1_000_000, dtype=np.float64))
        shell.run_cell_magic("psc_jit", "--quiet", {cell!r})
        assert psc_jit.last_report().compiled
        got = shell.user_ns["c"]
        exec({cell!r}, shell.user_ns)
        assert got == shell.user_ns["c"] and type(got) is type(shell.user_ns["c"])
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip() == "ok"


def test_math_of_layouts_matches_for_big_offsets():
    layout = Layout.c_order((1000, 1000), 8).transpose((1, 0))[-1, -1:][0]
    assert layout.offset == 8 * (999 * 1000 + 999)
    assert math.prod(layout.shape) == 1
