"""Cumulative sums, products, maxima and minima lowered as NumPy's own loop: one XLA while
loop over the axis, a block of elements per step combined one op at a time in NumPy's order
(no reduce_window, whose work grows with the window), the last partial block at static
positions, so real results are NumPy's bit for bit, float16 rounding at every step included.
Along rows (the last axis, more than one row) they call NumPy's own ufunc loop per row (a host
kernel), as NumPy's accumulate does: NumPy's results bit for bit, signs of zeros included.

Sorts and argsorts call NumPy's own sort functions (psc_jit's host kernels): NumPy's result of
the same call, bit for bit, ties and the default kind's order included, on every SIMD path
NumPy can take on this machine (each in a process of its own). Quantiles pick from the sorted
data, so a zero among both zeros may have another sign than NumPy's. XLA's own lowering of
them (for an install without the kernels) is NumPy's stable sort, bit for bit: float sorts run
as integer sorts (XLA's fast path) unless -0.0 or an unusual NaN needs the comparator."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from psc_jit.core import jit
from psc_jit.core.ir import Eqn, Graph, ShapedArray, SourceInfo, Var
from psc_jit.core.lowering import lower
from psc_jit.core.primitives import PRIMITIVES
from psc_jit.core.primitives.reductions import CUMULATIVE_BLOCK
from psc_jit.core.typecheck import check_graph

pytestmark = pytest.mark.xla

SCANS = {
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "maximum.accumulate": np.maximum.accumulate,
    "minimum.accumulate": np.minimum.accumulate,
}
EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 0.1, 1e300, -7.25]


def scan_along(fn, axis):
    return lambda x: fn(x, axis=axis)


def same_as_numpy(got, want, signed_zeros=True):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if signed_zeros and want.dtype.kind == "f":
        numbers = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


def edge_array(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    with np.errstate(all="ignore"):
        return rng.choice(EDGES, shape).astype(dtype)     # (complex: real parts only)


@pytest.mark.parametrize("name", sorted(SCANS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint16", "int64",
                                   "bool"])
@pytest.mark.parametrize("shape,axis", [((40,), 0), ((7, 9), 0), ((7, 9), 1), ((3, 4, 5), 1),
                                        ((3, 4, 5), -1), ((1, 6), 0), ((0, 3), 1)])
def test_scans_are_numpys_bit_for_bit(name, dtype, shape, axis):
    fn = SCANS[name]
    if dtype == "bool" and name == "cumprod":
        pytest.skip("NumPy's cumprod of bool is an int64 product, covered by the int cases")
    x = edge_array(shape, dtype, seed=len(shape) + axis)
    with np.errstate(all="ignore"):
        want = fn(x, axis=axis)
        got = jit(scan_along(fn, axis))(x)
    # NumPy's maximum of 0.0 and -0.0 is either one: max/min leave the sign of a zero open.
    same_as_numpy(got, want, signed_zeros=name in ("cumsum", "cumprod"))


def test_float16_cumsum_rounds_at_every_step_as_numpy():
    """0.1 added 3000 times in float16 stops growing at 256, as NumPy's loop does."""
    x = np.full(3000, 0.1, np.float16)
    got = jit(np.cumsum)(x)
    same_as_numpy(got, np.cumsum(x))
    assert got[-1] == 256.0


def test_integer_scans_wrap_around_like_numpy():
    x = np.array([100, 100, 100, -128, -1], np.int8)
    same_as_numpy(jit(lambda x: np.cumsum(x, dtype=np.int8))(x), np.cumsum(x, dtype=np.int8))
    same_as_numpy(jit(lambda x: np.cumprod(x, dtype=np.int8))(x), np.cumprod(x, dtype=np.int8))


def test_complex_scans_match_numpy():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))
    np.testing.assert_allclose(jit(lambda x: np.cumsum(x, axis=0))(x), np.cumsum(x, axis=0),
                               rtol=1e-14)
    np.testing.assert_allclose(jit(lambda x: np.cumprod(x, axis=1))(x), np.cumprod(x, axis=1),
                               rtol=1e-13)
    same_as_numpy(jit(np.maximum.accumulate)(x), np.maximum.accumulate(x))


@pytest.mark.parametrize("name", sorted(SCANS))
def test_scans_lower_to_one_while_loop_or_numpys_loop_along_rows(name):
    for axis, shape in ((0, (20, 30)), (1, (20, 30)), (0, (30,))):
        traced = jit(scan_along(SCANS[name], axis)).trace(np.ones(shape))
        check_graph(traced.graph)
        text = traced.lower().as_text()
        ops = re.findall(r'"stablehlo\.(\w+)"', text)
        assert "reduce_window" not in ops
        if axis == 1:
            assert "while" not in ops and re.search(r'"psc_cum(sum|prod|max|min)"', text)
        else:
            assert ops.count("while") == 1 and "dynamic_update_slice" in ops


ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", sorted(SCANS))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scans_along_rows_are_numpys_loop_bit_for_bit(name, dtype):
    """By NumPy's own loop, as NumPy's accumulate calls it: even the sign of a zero that
    maximum and minimum pick, and every bit of a complex product."""
    if dtype == "bool" and name == "cumprod":
        pytest.skip("NumPy's cumprod of bool is an int64 product, covered by the int cases")
    for shape, seed in (((7, 9), 1), ((3, 4, 5), 2), ((2, 3, 100, 1), 3)):
        x = edge_array(shape, dtype, seed)
        axis = 2 if len(shape) == 4 else -1
        with np.errstate(all="ignore"):
            if x.dtype.kind == "c":
                x.imag = edge_array(shape, "float64", seed + 10)
            want = SCANS[name](x, axis=axis)
            got = jit(scan_along(SCANS[name], axis))(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), (shape, got, want)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_sums_and_products_along_rows_keep_numpys_nan_payloads(name, dtype):
    """The running value meets NaNs of other signs and payloads, and infinities that make
    new NaNs (inf - inf): every bit as NumPy's, in rows taken four at a time and the rest."""
    specials = [PAYLOAD_NAN, NEGATIVE_NAN, np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300]
    rng = np.random.default_rng(11)
    for rows in (1, 4, 7):
        with np.errstate(all="ignore"):
            x = rng.choice(specials + [1.5, -2.0, 0.25], (rows, 33)).astype(dtype)
            x[:, 0] = rng.choice(specials, rows).astype(dtype)      # NaN-led rows too
            want = SCANS[name](x, axis=1)
            got = jit(scan_along(SCANS[name], 1))(x)
        assert got.tobytes() == want.tobytes(), (rows, got, want)


# Lengths around the loop's blocks: no block (all static), whole blocks, whole blocks and a tail.
LENGTHS = sorted({2, CUMULATIVE_BLOCK + 1, 3 * CUMULATIVE_BLOCK - 1, 5 * CUMULATIVE_BLOCK + 4})


def one_scan(name, aval, axis, reverse) -> Graph:
    prim = PRIMITIVES[name]
    params = {"axis": axis, "reverse": reverse}
    x = Var(aval)
    out = Var(prim.abstract_eval(aval, **params)[0])
    return Graph((x,), (Eqn(prim, (x,), params, (out,), SourceInfo("<test>", 1, 0)),), (out,))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "float64", "int8"])
@pytest.mark.parametrize("length", LENGTHS)
def test_scans_over_blocks_and_a_tail_are_numpys_in_both_directions(
        compile_cached, name, reverse, dtype, length):
    """The primitive both ways (reverse is what the gradient of cumsum runs): along the first
    axis of a 2-D array and along the last, every element in NumPy's order."""
    prim = PRIMITIVES[name]
    for shape, axis in (((length,), 0), ((length, 3), 0), ((2, length), 1)):
        x = edge_array(shape, dtype, seed=length)
        aval = ShapedArray(x.shape, x.dtype)
        graph = one_scan(name, aval, axis, reverse)
        check_graph(graph)
        got = compile_cached(lower(graph), [aval], graph.out_avals).execute([x])[0]
        with np.errstate(all="ignore"):
            want = prim.impl(x, axis=axis, reverse=reverse)
        same_as_numpy(got, want, signed_zeros=name in ("cumsum", "cumprod"))


def test_a_long_cumsum_is_numpys_bit_for_bit():
    x = np.random.default_rng(3).standard_normal(100_003)
    same_as_numpy(jit(np.cumsum)(x), np.cumsum(x))
    y = x[:100_002].astype(np.float32).reshape(6, -1)
    same_as_numpy(jit(lambda y: np.cumsum(y, axis=1))(y), np.cumsum(y, axis=1))



def bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"i{a.dtype.itemsize}")


def xla_only(compile_cached, fn, x):
    """fn(x) compiled from XLA's own lowerings, without psc_jit's host kernels."""
    traced = jit(fn).trace(x)
    check_graph(traced.graph)
    text = lower(traced.graph, "xla_only")
    assert "custom_call" not in text
    return compile_cached(text, traced.graph.in_avals, traced.graph.out_avals).execute([x])[0]


def with_values(shape, dtype, seed, values):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    for position, value in values:
        x.flat[position] = value
    return x


NEGATIVE_NAN = np.copysign(np.nan, -1.0)
PAYLOAD_NAN = np.array(0x7FF8000000000123, np.int64).view(np.float64)
ARRAYS = {
    "plain": [],
    "nan and infinities": [(0, np.nan), (3, np.inf), (5, -np.inf), (8, np.nan)],
    "+0.0 only": [(1, 0.0), (4, 0.0)],
    "-0.0 and +0.0": [(1, 0.0), (2, -0.0), (6, 0.0), (7, -0.0)],
    "negative nan": [(2, NEGATIVE_NAN), (9, np.nan)],
    "nan with a payload": [(2, PAYLOAD_NAN), (3, np.nan)],
    "ties": [(i, 0.5) for i in range(0, 12, 2)],
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((12,), 0), ((12, 5), 0), ((5, 12), 1), ((3, 12, 2), 1)])
def test_xlas_float_sorts_are_numpys_stable_sort_bit_for_bit(compile_cached, name, dtype, shape,
                                                              axis):
    with np.errstate(all="ignore"):
        x = with_values(shape, dtype, seed=7, values=ARRAYS[name])
    got = xla_only(compile_cached, lambda x: np.sort(x, axis=axis, kind="stable"), x)
    want = np.sort(x, axis=axis, kind="stable")
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(bits(got), bits(want))


def test_xlas_float_sort_is_a_key_sort_and_a_comparator_sort_chosen_at_run_time():
    traced = jit(np.sort).trace(np.ones(10))
    ops = re.findall(r'"stablehlo\.(\w+)"', lower(traced.graph, "xla_only"))
    assert ops.count("sort") == 2 and ops.count("case") == 1 and "bitcast_convert" in ops


@pytest.mark.parametrize("name", sorted(ARRAYS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((12,), 0), ((12, 5), 0), ((3, 12, 2), 1)])
def test_xlas_float_argsorts_are_numpys_stable_argsort(compile_cached, name, dtype, shape, axis):
    """NaNs of any sign or payload last and alike, -0.0 as 0.0, ties in input order; the
    sort of complex numbers (a comparator in NumPy's order) keeps the bits of each part."""
    with np.errstate(all="ignore"):
        x = with_values(shape, dtype, seed=7, values=ARRAYS[name])
    got = xla_only(compile_cached, lambda x: np.argsort(x, axis=axis), x)
    want = np.argsort(x, axis=axis, kind="stable")
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    z = np.empty(x.shape, "complex64" if dtype != "float64" else "complex128")
    z.real, z.imag = x, np.flip(x)
    got_z = xla_only(compile_cached, lambda z: np.sort(z, axis=axis, kind="stable"), z)
    want_z = np.sort(z, axis=axis, kind="stable")
    assert got_z.dtype == want_z.dtype
    np.testing.assert_array_equal(bits(got_z.real), bits(want_z.real))
    np.testing.assert_array_equal(bits(got_z.imag), bits(want_z.imag))
    got_order = xla_only(compile_cached, lambda z: np.argsort(z, axis=axis), z)
    np.testing.assert_array_equal(got_order, np.argsort(z, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32", "bool",
                                   "int64", "uint64"])
@pytest.mark.parametrize("shape,axis", [((40,), 0), ((9, 7), 0), ((9, 7), 1)])
def test_xlas_integer_argsorts_are_numpys_stable_argsort(compile_cached, dtype, shape, axis):
    """Extremes of each type included (uint32's top half orders above its bottom half)."""
    x = edge_array(shape, dtype, seed=len(shape) + axis)
    if dtype != "bool":
        info = np.iinfo(dtype)
        x.flat[:4] = [info.max, info.min, info.max // 2 + 1, info.max // 2]
    got = xla_only(compile_cached, lambda x: np.argsort(x, axis=axis), x)
    np.testing.assert_array_equal(got, np.argsort(x, axis=axis, kind="stable"))


def sorts_in(text: str) -> list[str]:
    """The operand types of each stablehlo.sort in a module's text."""
    return re.findall(r"\}\) \{dimension = \d+ : i64, is_stable = \w+\} : \(([^)]*)\)", text)


def test_xlas_argsort_of_32_bit_keys_is_one_integer_sort_it_runs_natively():
    """Key and position packed in one int64: XLA's fast path, no comparator per comparison."""
    for dtype in ("float32", "int32", "float16", "uint8"):
        traced = jit(np.argsort).trace(np.ones(10, dtype))
        check_graph(traced.graph)
        assert sorts_in(lower(traced.graph, "xla_only")) == ["tensor<10xi64>"]


def test_xlas_argsort_of_float64_compares_integer_keys():
    text = lower(jit(np.argsort).trace(np.ones(10)).graph, "xla_only")
    assert sorts_in(text) == ["tensor<10xi64>, tensor<10xi64>"]
    comparator = text[text.index('"stablehlo.sort"'):]
    assert "comparison_direction LT" in comparator and "f64>, tensor<f64>) -> tensor<i1>" not in \
        comparator.split("stablehlo.return")[0]


SORT_DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64",
               "uint32", "uint16", "uint8", "bool", "complex128", "complex64"]
SORT_CALLS = {
    "np.sort": lambda x, axis: np.sort(x, axis=axis),
    "np.sort stable": lambda x, axis: np.sort(x, axis=axis, kind="stable"),
    "np.sort heapsort": lambda x, axis: np.sort(x, axis=axis, kind="heapsort"),
    "np.argsort": lambda x, axis: np.argsort(x, axis=axis),
    "np.argsort stable=True": lambda x, axis: np.argsort(x, axis=axis, stable=True),
    "np.argsort mergesort": lambda x, axis: np.argsort(x, axis=axis, kind="mergesort"),
    "ndarray.argsort": lambda x, axis: x.argsort(axis=axis),
}


def few_values(shape, dtype, rng):
    """Few distinct values (ties), NaNs, infinities and both zeros (complex: in both parts)."""
    values = [np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.5, PAYLOAD_NAN]
    with np.errstate(all="ignore"):
        x = rng.choice(values, shape)
        if dtype.startswith("complex"):
            return (x + 1j * rng.choice(values, shape)).astype(dtype)
        return x.astype(dtype)


@pytest.mark.parametrize("call", sorted(SORT_CALLS))
@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_sorts_are_numpys_own_result_of_the_same_call_bit_for_bit(call, dtype):
    """Every kind as NumPy orders it (the default kind's ties and -0.0/0.0 as NumPy's own
    sort leaves them), along every axis, lengths below and above NumPy's small-sort cutoffs
    and column blocks that do and do not fill the kernel's 16."""
    fn, rng = SORT_CALLS[call], np.random.default_rng(21)
    for shape in [(1,), (7,), (100,), (1000,), (20, 33), (3, 5, 40), (17, 2)]:
        x = few_values(shape, dtype, rng)
        for axis in range(x.ndim):
            got, want = jit(fn)(x, axis), fn(x, axis)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                          err_msg=f"{shape} axis {axis}")


def test_sorts_call_numpys_sort_functions_where_the_kernels_are_built():
    from psc_jit.core.compile import _host_kernels, hostkernels
    from psc_jit.core.primitives.reductions import HOST_KERNEL_DTYPES
    assert {"psc_sort", "psc_argsort_stable"} <= hostkernels.available_targets()
    found = _host_kernels.sortable()
    assert {(d.char, k, f) for d in HOST_KERNEL_DTYPES for k in ("default", "stable")
            for f in ("sort", "argsort")} <= found
    for fn, target in ((np.sort, '"psc_sort"'), (np.argsort, '"psc_argsort"'),
                       (lambda x: np.sort(x, kind="stable"), '"psc_sort_stable"'),
                       (lambda x: np.median(x, axis=0), '"psc_sort"')):
        assert target in jit(fn).trace(np.ones((4, 5))).lower().as_text()


def test_sorts_of_views_and_in_place_sorts_match_numpy():
    x = np.random.default_rng(22).standard_normal((40, 30))
    for f in (lambda x: np.sort(x.T, axis=1), lambda x: np.argsort(x[::2, ::3], axis=0),
              lambda x: np.sort(x * 2.0 + 1.0, axis=None), lambda x: np.argsort(x, axis=None)):
        np.testing.assert_array_equal(jit(f)(x), f(x))

    def sort_rows(x):
        x.sort(axis=1)
    got, want = x.copy(), x.copy()
    jit(sort_rows)(got)
    sort_rows(want)
    np.testing.assert_array_equal(got, want)


# -- NumPy's SIMD paths -------------------------------------------------------------------------
# NumPy's default-kind sorts and argsorts dispatch on the CPU's features (AVX-512, AVX2, its
# baseline code), and the path taken decides the order in which ties of equal-comparing values
# (-0.0 and 0.0; for argsort, any ties) are left. The compiled sort calls the same NumPy
# function in NumPy's floating-point mode, so it takes the same path: tested on each path NumPy
# can take on this machine, each in a process of its own (NPY_DISABLE_CPU_FEATURES).

SIMD_SHAPES = [((1000,), 0), ((256,), 0), ((257, 3), 0), ((3, 300), 1), ((17, 2), 0)]


def every_sort(*arrays):
    """Every call of SORT_CALLS on each array, along its axis in SIMD_SHAPES: one program."""
    return tuple(SORT_CALLS[call](x, axis)
                 for x, (_, axis) in zip(arrays, SIMD_SHAPES, strict=True)
                 for call in sorted(SORT_CALLS))


def turned_off() -> list[str]:
    """The CPU features this process was told to leave unused (NPY_DISABLE_CPU_FEATURES)."""
    return os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()


@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_sorts_are_numpys_on_the_simd_path_numpy_takes(dtype):
    from numpy._core._multiarray_umath import __cpu_features__
    assert not [name for name in turned_off() if __cpu_features__.get(name)], \
        "NumPy uses features it was told to leave"
    rng = np.random.default_rng(23)
    arrays = [few_values(shape, dtype, rng) for shape, _ in SIMD_SHAPES]
    got, want = jit(every_sort)(*arrays), every_sort(*arrays)
    calls = [f"{call} of {shape} along {axis}" for shape, axis in SIMD_SHAPES
             for call in sorted(SORT_CALLS)]
    for one, g, w in zip(calls, got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, one
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8), err_msg=one)


def other_simd_paths() -> list[str]:
    """NPY_DISABLE_CPU_FEATURES values that make NumPy take each SIMD path it has code for and
    this CPU can run, besides the best one (the one the suite runs on): its dispatch targets
    found here (listed from the oldest up), turned off from the newest down; the last value
    turns off all of them (NumPy's baseline code)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    found = [target for target in __cpu_dispatch__ if __cpu_features__.get(target)]
    return [" ".join(found[start:]) for start in range(len(found) - 1, -1, -1)]


@pytest.mark.parametrize("features_off", other_simd_paths())
def test_sorts_are_numpys_on_every_other_simd_path_numpy_can_take_here(features_off):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{__file__}::test_sorts_are_numpys_on_the_simd_path_numpy_takes"],
        env=dict(os.environ, NPY_DISABLE_CPU_FEATURES=features_off),
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (f"NPY_DISABLE_CPU_FEATURES={features_off!r}:\n"
                                  f"{done.stdout[-6000:]}\n{done.stderr[-2000:]}")


QUANTILE_METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
                    "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


def as_bytes(x) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint8)


def same_but_for_the_signs_of_zeros(got, want) -> bool:
    """Equal bit for bit once every -0.0 is read as 0.0 (NaNs at the same places)."""
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(
        as_bytes(np.where(got == 0, 0.0, got)), as_bytes(np.where(want == 0, 0.0, want)))


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_quantiles_are_numpys_but_for_the_sign_of_a_zero_among_both_zeros(method):
    """NumPy picks a quantile's elements with np.partition, whose order of equal values is its
    own (and its SIMD path's); psc_jit picks them from NumPy's sort. Where the data holds both
    -0.0 and 0.0 a zero result may have either sign (README); otherwise the bits are NumPy's."""
    rng = np.random.default_rng(24)
    q = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
    for n in (7, 30, 101):
        for values in ([0.0, -0.0, 1.0, -1.0, np.nan], [0.0, 1.0, -1.0, 2.5], [-0.0, 1.0, -1.0]):
            x = rng.choice(values, (n, 5))
            x[:, :3] = np.where(np.isnan(x[:, :3]), 0.5, x[:, :3])    # NaN-free columns too
            for f in (lambda a: np.quantile(a, q, axis=0, method=method),
                      lambda a: np.percentile(a, 50, axis=0, method=method)):
                got, want = jit(f)(x), f(x)
                assert same_but_for_the_signs_of_zeros(got, want), (n, values)
                if not (np.signbit(x) & (x == 0)).any() or not ((x == 0) & ~np.signbit(x)).any():
                    np.testing.assert_array_equal(as_bytes(got), as_bytes(want))


@pytest.mark.parametrize("kind,error", [("x", ValueError), ("", ValueError), (3, TypeError)])
def test_an_unknown_sort_kind_is_numpys_error(kind, error):
    with pytest.raises(error, match="sort kind must be"):
        np.sort(np.ones(3), kind=kind)
    with pytest.raises(error, match="sort kind must be"):
        jit(lambda x: np.sort(x, kind=kind))(np.ones(3))


def test_kind_and_stable_together_is_numpys_error():
    with pytest.raises(ValueError, match="can't be provided at the same time"):
        jit(lambda x: np.argsort(x, kind="stable", stable=True))(np.ones(3))


@pytest.mark.parametrize("fn", [np.argmax, np.argmin], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["float64", "float16", "int8", "uint64", "bool", "complex128"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_argmax_and_argmin_pick_numpys_first_index(fn, dtype, axis):
    """Ties, -0.0 against 0.0, and NaN (the first NaN wins) as NumPy picks them."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        with np.errstate(all="ignore"):
            x = rng.choice([np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.0], (4, 5))
            x = x.astype(dtype) if dtype != "complex128" else x + 1j * rng.choice([0.0, 1.0], (4, 5))
        got, want = jit(lambda x: fn(x, axis=axis))(x), fn(x, axis=axis)
        assert type(got) is type(want)
        np.testing.assert_array_equal(got, want)


def test_real_argmax_is_psc_jits_kernel_or_two_plain_reductions():
    """With the host kernels built, a real argmax is one call of psc_jit's kernel; XLA's own
    code for it (where they are not) is two plain reductions, not one of (value, index) pairs."""
    from psc_jit.core.compile import hostkernels
    assert hostkernels.available_targets(), "core/compile/_host_kernels.c was not built"
    traced = jit(lambda x: np.argmax(x, axis=1)).trace(np.ones((4, 5)))
    assert '"psc_argmax"' in traced.lower().as_text()
    ops = re.findall(r'"stablehlo\.(\w+)"', lower(traced.graph, "xla_only"))
    assert ops.count("reduce") == 2


KERNEL_VALUES = [np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.0, 3.5, -120.0, 100.0]


@pytest.mark.parametrize("fn", [np.argmax, np.argmin], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "int16", "int8",
                                   "uint64", "uint32", "uint16", "uint8", "bool"])
def test_the_argmax_kernel_picks_numpys_index_across_lengths_and_axes(fn, dtype):
    """Lengths around the kernel's blocks (8-element vectors of a row, 256-column slabs), every
    axis of 1- to 3-D arrays, with few distinct values (ties), NaNs and signed zeros."""
    rng = np.random.default_rng(12)
    shapes = [(1,), (7,), (8,), (9,), (17,), (1000,), (3, 15), (16, 3), (2, 3, 260),
              (5, 260, 3), (300, 2)]
    for shape in shapes:
        for trial in range(4):
            with np.errstate(all="ignore"):
                values = rng.choice(KERNEL_VALUES[1 if trial % 2 else 0:], shape)
                x = values.astype(dtype)
            for axis in range(x.ndim):
                f = scan_along(fn, axis)
                got, want = jit(f)(x), f(x)
                assert type(got) is type(want) and got.dtype == want.dtype
                np.testing.assert_array_equal(got, want, err_msg=f"{shape} axis {axis}")


def test_argmax_of_non_contiguous_and_broadcast_inputs_matches_numpy():
    x = np.random.default_rng(13).standard_normal((40, 30))
    for f in (lambda x: np.argmax(x.T, axis=1), lambda x: np.argmin(x[::2, ::3], axis=0),
              lambda x: np.argmax(x * 2.0 + 1.0), lambda x: x.argmax(axis=-1, keepdims=True)):
        np.testing.assert_array_equal(jit(f)(x), f(x))


def test_a_program_calling_the_argmax_kernel_loads_from_disk_in_a_new_process(tmp_path):
    """The disk cache records that the program calls psc_jit's kernels: a new process
    registers them before it loads the program."""
    from numpy_compare import loads_from_disk_in_a_new_process
    assert loads_from_disk_in_a_new_process(
        "import numpy as np\nfrom psc_jit.core import jit\n"
        "x = np.sin(np.arange(3000.0)).reshape(30, 100)\n"
        "f = jit(lambda x: np.argmax(x, axis=1))\ny = f(x)\n"
        "print(f.last_call.compiled.from_disk is not None, "
        "np.array_equal(y, np.argmax(x, axis=1)))", tmp_path)
