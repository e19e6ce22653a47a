"""Every primitive, compiled by XLA, against its NumPy reference implementation (`impl`).

Each test builds a graph of one equation (the primitive applied to fresh input variables),
lowers it to StableHLO, compiles it (once per module text: the `compile_cached` fixture), runs
it on NumPy inputs and compares with `impl` on the same inputs. Same dtype, same shape, and:

- bool and integers: exactly equal (wrap-around included).
- floats: |got - want| <= rtol * |want| + atol per element, rtol by dtype: float16 1e-3,
  float32 1e-5, float64 1e-12, and four times that for the functions that XLA and the C
  library approximate each their own way (`TRANSCENDENTAL`: exp, log, trigonometric,
  hyperbolic, power, hypot, cbrt) and for complex arithmetic that rounds more than once
  (`COMPLEX_ARITHMETIC`: multiplication, division, square root, abs). atol is the dtype's
  smallest normal number: XLA's CPU runtime flushes subnormal numbers to zero, so subnormal
  inputs are not drawn and a result NumPy makes subnormal may come back as zero.
- complex: the same rtol on |got - want| relative to |want| (a small part is held to the
  precision of the large one, as complex arithmetic gives it).
- NaN exactly where NumPy gives NaN (for complex: a NaN in either part), equal infinities,
  and a float zero with NumPy's sign.
- sums, products, cumulative sums and products, dot_general, scatter-add: XLA adds in its
  own order, so the bound is rtol * n * (the same reduction of |terms|) for n terms, and the
  sign of a zero result (-0.0 + 0.0 or 0.0 + -0.0, by the order) is not compared.

Where NumPy's result is undefined or left to the platform, the inputs are replaced by 1
before both sides run (`undefined_positions` says which and why): negative integer powers
(NumPy raises), integer 1/0 (C's inf -> int), float -> integer conversion of NaN, inf and
out-of-range values, complex power wherever the C library's own special cases or overflow decide, max/min's sign of a
zero result, and the few complex cases where XLA's CPU compiler differs from C by design:
it fuses a*b + c (no overflow of a*b) and flushes subnormal intermediates to zero.
"""
from __future__ import annotations

import itertools
import warnings

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from psc_jit.core.ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var
from psc_jit.core.lowering import lower
from psc_jit.core.primitives import PRIMITIVES

pytestmark = pytest.mark.xla

PRIMS = PRIMITIVES
SOURCE = SourceInfo("test_primitives.py", 1, 1)
ALL_DTYPES = tuple(np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"))
NUMBERS = tuple(d for d in ALL_DTYPES if d != np.bool_)
RTOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}
TRANSCENDENTAL = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "power", "hypot", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh"})
COMPLEX_ARITHMETIC = frozenset({"sqrt", "multiply", "divide", "reciprocal", "square", "sign",
                                "abs"})
SETTINGS = settings(max_examples=25, deadline=None)
SHAPES = ((), (0,), (1,), (5,), (2, 3), (3, 0), (2, 1, 3))


# -- running one primitive both ways ----------------------------------------------------------

def one_equation(name: str, in_avals, params) -> Graph:
    prim = PRIMS[name]
    in_vars = tuple(Var(aval) for aval in in_avals)
    outs = tuple(Var(aval) for aval in prim.abstract_eval(*in_avals, **params))
    return Graph(in_vars, (Eqn(prim, in_vars, params, outs, SOURCE),), outs)


_LOWERED: dict = {}


def lowered(name: str, in_avals, params, targets=frozenset()):
    """(StableHLO text, out avals) of the one-equation graph, lowered once per signature
    (`targets`: psc_jit's own custom call targets the lowering may call)."""
    key = (name, tuple(in_avals), tuple(sorted(params.items())), targets)
    if key not in _LOWERED:
        graph = one_equation(name, in_avals, params)
        _LOWERED[key] = lower(graph, "psc_jit", targets), graph.out_avals
    return _LOWERED[key]


def run(compile_cached, name: str, args, targets=frozenset(), **params):
    """(XLA's results, impl's results) of one primitive on NumPy arrays."""
    prim = PRIMS[name]
    args = [np.asarray(a) for a in args]
    in_avals = tuple(ShapedArray(a.shape, a.dtype) for a in args)
    text, out_avals = lowered(name, in_avals, params, targets)
    got = compile_cached(text, in_avals, out_avals).execute(args)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        want = prim.impl(*args, **params)
    want = [np.asarray(w) for w in (want if prim.multiple_results else [want])]
    for aval, w in zip(out_avals, want, strict=True):
        assert (w.shape, w.dtype) == (aval.shape, aval.dtype), \
            f"{name}: impl gives {w.dtype}{list(w.shape)}, its rules say {aval}"
    return got, want


# -- comparing --------------------------------------------------------------------------------

def rtol_of(dtype: np.dtype, name: str = "") -> float:
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        return 0.0
    inexact = name in TRANSCENDENTAL or (dtype.kind == "c" and name in COMPLEX_ARITHMETIC)
    return RTOL[np.finfo(dtype).dtype] * (4 if inexact else 1)


def _close_real(got, want, rtol, scale):
    atol = np.finfo(want.dtype).tiny if rtol else 0.0
    with np.errstate(all="ignore"):
        return (got == want) | (np.isfinite(want) & (np.abs(got - want) <= rtol * scale + atol))


def mismatches(got, want, rtol=0.0, scale=None, signed_zeros=True, nan_parts=True
               ) -> np.ndarray:
    """Where got is not want (see the module docstring); scale defaults to |want|. nan_parts:
    complex NaNs are compared part by part (else a NaN in either part is a NaN)."""
    if want.dtype.kind in "biu":
        return got != want
    scale = np.abs(want) if scale is None else scale
    if want.dtype.kind == "c" and nan_parts:
        return _complex_mismatches(got, want, rtol, scale, signed_zeros)
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    if want.dtype.kind == "c":
        close = np.where(np.isfinite(want), _close_real(got, want, rtol, scale),
                         _parts_close(got, want, rtol))
    else:
        close = _close_real(got, want, rtol, scale)
        if signed_zeros:
            close &= _same_sign_of_zero(got, want)
    return (nan_got != nan_want) | (~nan_want & ~close)


def _parts_close(got, want, rtol):
    return (_close_real(got.real, want.real, rtol, np.abs(want.real))
            & _close_real(got.imag, want.imag, rtol, np.abs(want.imag)))


def _same_sign_of_zero(got, want):
    return (want != 0) | (np.signbit(got) == np.signbit(want))


def _complex_mismatches(got, want, rtol, scale, signed_zeros):
    """Part by part where either part is not finite (a NaN in one part leaves the other part
    compared: inf + nan*j is not nan + nan*j); as complex numbers where both are finite."""
    bad = np.zeros(want.shape, bool)
    for got_part, want_part in ((got.real, want.real), (got.imag, want.imag)):
        bad |= np.isnan(got_part) != np.isnan(want_part)
        if signed_zeros:
            bad |= (got_part == 0) & ~_same_sign_of_zero(got_part, want_part)
    close = np.where(np.isfinite(want), _close_real(got, want, rtol, scale),
                     _parts_close(_zero_where_nan(got, want), _zero_where_nan(want, want), rtol))
    return bad | ~close


def _zero_where_nan(z, like):
    """z with 0 in each part that is NaN in `like` (those are compared for NaN apart)."""
    z = np.array(z, copy=True)
    z.real[np.isnan(like.real)] = 0
    z.imag[np.isnan(like.imag)] = 0
    return z


def assert_same(got, want, rtol=0.0, scale=None, signed_zeros=True, inputs=(), what="",
                nan_parts=True):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, NumPy's is {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, NumPy's is {want.shape}"
    bad = mismatches(got, want, rtol, scale, signed_zeros, nan_parts)
    if bad.any():
        lines = []
        for index in np.argwhere(bad)[:6]:
            index = tuple(index)
            ins = ", ".join(repr(a[index]) for a in inputs if np.shape(a) == want.shape)
            lines.append(f"  ({ins}) -> {got[index]!r}, NumPy {want[index]!r}")
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} elements differ "
                             f"(rtol {rtol}):\n" + "\n".join(lines))


def check_exact(got, want, args, params, name, signed_zeros=True):
    for g, w in zip(got, want, strict=True):
        assert_same(g, w, signed_zeros=signed_zeros, inputs=args, what=name)


def check_elementwise(got, want, args, params, name):
    for g, w in zip(got, want, strict=True):
        assert_same(g, w, rtol_of(w.dtype, name), inputs=args, what=name,
                    signed_zeros=name not in SIGN_OF_ZERO_UNSPECIFIED)


def check_accumulated(got, want, args, params, name, terms):
    """A reduction that XLA may reassociate: the bound grows with the number of terms."""
    magnitudes = [np.abs(a) if np.asarray(a).dtype.kind in "fc" else a for a in args]
    with np.errstate(all="ignore"):
        scale = np.abs(np.asarray(PRIMS[name].impl(*magnitudes, **params)))
    for g, w in zip(got, want, strict=True):
        # (in another order, a NaN part spreads differently: NumPy's 1 * (-4 + nan j) is a NaN
        # in both parts, XLA's product of one element is that element)
        assert_same(g, w, rtol_of(w.dtype) * max(terms, 1), scale=scale, inputs=args, what=name,
                    signed_zeros=False, nan_parts=False)


# -- values -----------------------------------------------------------------------------------

def edge_values(dtype: np.dtype) -> np.ndarray:
    """Each dtype's awkward values: zeros of both signs, NaN, infinities, extremes, halves."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wanted = {0, 1, 2, 3, 7, 64, 100, -1, -2, -3, -7, info.min, info.min + 1, info.max,
                  info.max - 1}
        return np.array(sorted(v for v in wanted if info.min <= v <= info.max), dtype)
    if dtype.kind == "c":
        parts = edge_values(np.finfo(dtype).dtype)[[0, 1, 2, 3, 4, 5, 6, 7, 9, 14, 16, 17]]
        return np.array([complex(re, im) for re in parts for im in parts], dtype)
    info = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5,
                     3.0, -7.0, 0.1, 10.0, 100.0, info.max, -info.max, info.tiny, -info.tiny,
                     1e-3, 0.99, -0.99], dtype)


def values(dtype: np.dtype):
    """Edge values and anything else of the dtype, subnormal numbers aside."""
    dtype = np.dtype(dtype)
    kwargs = {"allow_subnormal": False} if dtype.kind in "fc" else {}
    return st.one_of(st.sampled_from(list(edge_values(dtype))), hnp.from_dtype(dtype, **kwargs))


def tame_values(dtype: np.dtype, complex_infinities=True):
    """Values whose sums and products of a few terms neither overflow nor underflow in any
    order (quarters in [-4, 4], NaN, infinities); integers anywhere (they wrap exactly).
    A complex product with an infinite part depends on the order of multiplication and on
    whether the identity takes part ((1+0j) * (-4+infj) is nan+infj): products of complex
    numbers get finite parts."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return hnp.from_dtype(dtype)
    grid = [x / 4 for x in range(-16, 17)] + [np.nan, -0.0]
    infinities = [np.inf, -np.inf]
    if dtype.kind == "f":
        return st.sampled_from(grid + infinities)
    parts = st.sampled_from(grid + infinities if complex_infinities else grid)
    return st.builds(complex, parts, parts)


def tame_factors(dtype: np.dtype):
    return tame_values(dtype, complex_infinities=False)


def arrays(dtype, shape, elements=None):
    return hnp.arrays(np.dtype(dtype), shape, elements=values(dtype) if elements is None
                      else elements)


def shapes(min_dims=0, nonempty=False):
    return st.sampled_from([s for s in SHAPES if len(s) >= min_dims
                            and not (nonempty and 0 in s)])


# -- elementwise primitives: NumPy's ufuncs ---------------------------------------------------

UFUNC_PRIMS = sorted(name for name in PRIMS if isinstance(getattr(np, name, None), np.ufunc))

# IEEE 754 lets max(-0.0, +0.0) be either zero; NumPy's SIMD and scalar loops differ.
SIGN_OF_ZERO_UNSPECIFIED = frozenset({"maximum", "minimum", "fmax", "fmin"})


def ufunc_dtypes(ufunc: np.ufunc) -> list[np.dtype]:
    """The dtypes NumPy runs the ufunc in without casting: the primitive's domain."""
    found = []
    for dtype in ALL_DTYPES:
        try:
            resolved = ufunc.resolve_dtypes((dtype,) * ufunc.nin + (None,) * ufunc.nout)
        except TypeError:
            continue
        if resolved[:ufunc.nin] == (dtype,) * ufunc.nin:
            found.append(dtype)
    return found


def undefined_positions(name: str, dtype: np.dtype, args) -> np.ndarray:
    """Where NumPy's result is undefined or the platform's: these inputs are not compared."""
    undefined = np.zeros(np.shape(args[0]), bool)
    if name == "power" and dtype.kind == "i":
        undefined |= args[1] < 0           # NumPy raises for negative integer powers
    if name == "reciprocal" and dtype.kind in "iu":
        undefined |= args[0] == 0          # 1/0 is inf, and inf -> int is undefined in C
    if name in ("multiply", "square") and dtype.kind == "c":
        undefined |= _a_product_overflows(args[0], args[-1])
    if name == "divide" and dtype.kind == "c":
        undefined |= _infinite_over_subnormal_ratio(*args)
    if name == "power" and dtype.kind == "c":
        undefined |= _c_library_power(*args)
    if name == "exp2" and dtype.kind == "c":
        # NumPy scales the parts by log(2) first; XLA flushes a subnormal product to zero
        part = args[0].imag
        scaled = np.abs(part) * np.log(np.array(2, part.dtype))
        undefined |= (scaled > 0) & (scaled < np.finfo(scaled.dtype).tiny)
    return undefined


def _a_product_overflows(x, y):
    """XLA's CPU compiler always contracts a*b + c into one fused multiply-add, which does not
    round (so does not overflow) a*b: where NumPy's a*b overflows to inf, XLA's may not."""
    overflows = np.zeros(np.shape(x), bool)
    with np.errstate(all="ignore"):
        for a, b in itertools.product((x.real, x.imag), (y.real, y.imag)):
            overflows |= np.isinf(a * b) & np.isfinite(a) & np.isfinite(b)
    return overflows


def _infinite_over_subnormal_ratio(x, y):
    """NumPy divides by y through the ratio of y's parts; where that ratio is subnormal, XLA's
    CPU runtime flushes it to zero. For a finite x that moves the result by less than the
    tolerance (relative to |x/y|), but an infinite x then meets inf * 0, and a part of the
    result that underflows to zero may take the sign of the flushed zero instead."""
    small, big = np.minimum(abs(y.real), abs(y.imag)), np.maximum(abs(y.real), abs(y.imag))
    with np.errstate(all="ignore"):
        ratio = small / big
        quotient = x / y
    zero_part = (quotient.real == 0) | (quotient.imag == 0)
    return (ratio > 0) & (ratio < np.finfo(ratio.dtype).tiny) & (~np.isfinite(x) | zero_part)


def _c_library_power(x, y):
    """Complex power is the C library's cpow, exp(y log x): its special values for NaN and
    infinite parts, and where the result over- or underflows, are its own; and where |y log x|
    is large, the rounding of y log x (an ulp of a large number) moves the result by more than
    the tolerance, in NumPy as in XLA."""
    with np.errstate(all="ignore"):
        result = np.power(x, y)
        exponent = abs(y * np.log(x))
    out_of_range = ~np.isfinite(result) | (abs(result) < np.finfo(result.dtype).tiny)
    ill_conditioned = (x != 0) & (y != 0) & (out_of_range | (exponent > 50))
    return ~np.isfinite(x) | ~np.isfinite(y) | ill_conditioned


def without_undefined(name, dtype, args):
    undefined = undefined_positions(name, dtype, args)
    return [np.where(undefined, np.ones((), dtype), a) for a in args]


ELEMENTWISE_CASES = [(name, dtype) for name in UFUNC_PRIMS
                     for dtype in ufunc_dtypes(getattr(np, name))]
# Elementwise tests run arrays of CHUNK elements (edge values chunk by chunk, random values
# an array at a time): one compile per (primitive, dtype), shared by both tests.
CHUNK = 64


@pytest.mark.parametrize("name,dtype", ELEMENTWISE_CASES,
                         ids=[f"{n}-{d}" for n, d in ELEMENTWISE_CASES])
def test_elementwise_on_every_pair_of_edge_values(compile_cached, name, dtype):
    nin = getattr(np, name).nin
    pairs = np.array(list(itertools.product(edge_values(dtype), repeat=nin)), dtype)
    pairs = np.concatenate([pairs, np.ones((-len(pairs) % CHUNK, nin), dtype)])
    for chunk in pairs.reshape(-1, CHUNK, nin):
        args = without_undefined(name, dtype, list(chunk.T))
        got, want = run(compile_cached, name, args)
        check_elementwise(got, want, args, {}, name)


@st.composite
def elementwise_inputs(draw, name):
    ufunc = getattr(np, name)
    dtype = draw(st.sampled_from(ufunc_dtypes(ufunc)))
    args = [draw(arrays(dtype, (CHUNK,))) for _ in range(ufunc.nin)]
    return without_undefined(name, dtype, args)


@pytest.mark.parametrize("name", UFUNC_PRIMS)
@SETTINGS
@given(data=st.data())
def test_elementwise_on_random_arrays(compile_cached, name, data):
    args = data.draw(elementwise_inputs(name))
    got, want = run(compile_cached, name, args)
    check_elementwise(got, want, args, {}, name)


@pytest.mark.parametrize("shape", [(), (0,), (2, 3)], ids=str)
@pytest.mark.parametrize("name", UFUNC_PRIMS)
def test_elementwise_on_0d_empty_and_2d_arrays(compile_cached, name, shape):
    domain = ufunc_dtypes(getattr(np, name))
    dtype = np.dtype(np.float64) if np.float64 in domain else domain[-1]
    edges = edge_values(dtype)
    args = [np.resize(np.roll(edges, n), shape) for n in range(getattr(np, name).nin)]
    args = without_undefined(name, dtype, args)
    got, want = run(compile_cached, name, args)
    check_elementwise(got, want, args, {}, name)


# NumPy's complex functions are the C library's (glibc's cexp, csinh, casin, ...; npymath's
# cpow): C99's special values (Annex G) where a part is infinite, NaN (of either sign) or zero,
# and glibc's own ways near overflow (exp and sinh of |re| just above log(max), tanh of a
# large re) and near poles (atanh(±1 + tiny j)). Each is compared, part by part, on every
# complex number made of two of these parts.
C_LIBRARY_FUNCTIONS = ("exp", "exp2", "log", "log2", "log10", "sqrt", "sin", "cos", "tan",
                       "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh",
                       "arccosh", "arctanh", "expm1")


def c_special_parts(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    magnitudes = [0.0, float(info.tiny) * 4, float(info.eps) ** 2 / 2, 1e-5, 0.3, 1.0, 1.5, 3.0,
                  20.0, 44.0, 45.0, 88.0, 89.0, 90.0, 354.0, 360.0, 700.0, 709.5, 710.0, 720.0,
                  1418.0, 1500.0, 1e17, 1e30, float(info.max) / 2, float(info.max), np.inf,
                  np.nan]
    with np.errstate(over="ignore"):
        parts = np.array(magnitudes, dtype)
    return np.concatenate([parts, -parts])       # -nan too: C copies its sign into results


@pytest.mark.parametrize("dtype", [np.dtype(np.complex64), np.dtype(np.complex128)], ids=str)
@pytest.mark.parametrize("name", C_LIBRARY_FUNCTIONS)
def test_complex_functions_at_c_special_values(compile_cached, name, dtype):
    parts = c_special_parts(np.finfo(dtype).dtype)
    z = np.empty((len(parts), len(parts)), dtype)
    z.real, z.imag = parts[:, None], parts[None, :]
    got, want = run(compile_cached, name, [z.reshape(-1)])
    check_elementwise(got, want, [z.reshape(-1)], {}, name)


@pytest.mark.parametrize("dtype", [np.dtype(np.complex64), np.dtype(np.complex128)], ids=str)
def test_complex_power_at_whole_and_special_exponents(compile_cached, dtype):
    """NumPy multiplies out x**n for a whole real n in (-100, 100), 1/that for n < 0 (so the
    signs of zero parts are its products'); else cpow."""
    parts = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 100.0], np.finfo(dtype).dtype)
    bases = np.array([complex(r, i) for r in parts for i in parts], dtype)
    exponents = np.array([0, 1, 2, 3, 4, 7, 99, 100, -1, -2, -3, -99, 0.5, -0.5, 2 + 1j, 1j],
                         dtype)
    x, y = (a.reshape(-1) for a in np.meshgrid(bases, exponents, indexing="ij"))
    args = without_undefined("power", dtype, [x, y])
    got, want = run(compile_cached, "power", args)
    check_elementwise(got, want, args, {}, "power")


# -- the other primitives: a strategy of (args, params) and a comparison each -----------------

@st.composite
def one_array(draw, dtypes=ALL_DTYPES, min_dims=0, elements=values):
    dtype = draw(st.sampled_from(dtypes))
    return [draw(arrays(dtype, draw(shapes(min_dims)), elements(dtype)))], {}


@st.composite
def complex_inputs(draw):
    dtype, shape = draw(st.sampled_from((np.float32, np.float64))), draw(shapes())
    return [draw(arrays(dtype, shape)), draw(arrays(dtype, shape))], {}


@st.composite
def select_inputs(draw):
    dtype, shape = draw(st.sampled_from(ALL_DTYPES)), draw(shapes())
    pred = draw(arrays(bool, shape))
    return [pred, draw(arrays(dtype, shape)), draw(arrays(dtype, shape))], {}


def float_to_int_undefined(x, new_dtype):
    """C leaves float -> integer undefined for NaN, infinities and values out of range."""
    bits = 8 * new_dtype.itemsize - (new_dtype.kind == "i")
    whole = np.trunc(np.real(x).astype(np.float64))
    return ~np.isfinite(whole) | (whole < float(np.iinfo(new_dtype).min)) | (whole >= 2.0 ** bits)


@st.composite
def convert_inputs(draw):
    (x,), _ = draw(one_array())
    new_dtype = draw(st.sampled_from(ALL_DTYPES))
    if x.dtype.kind in "fc" and new_dtype.kind in "iu":
        x = np.where(float_to_int_undefined(x, new_dtype), np.zeros((), x.dtype), x)
    return [x], {"new_dtype": new_dtype, "weak_type": draw(st.booleans())}


@st.composite
def bitcast_inputs(draw):
    dtype = draw(st.sampled_from([d for d in ALL_DTYPES if d.kind not in "bc"]))
    x = draw(arrays(dtype, draw(shapes()), values(dtype)))
    same_size = [d for d in ALL_DTYPES if d.itemsize == dtype.itemsize and d.kind not in "bc"]
    return [x], {"new_dtype": draw(st.sampled_from(same_size))}


def check_same_bytes(got, want, args, params, name):
    """The same bytes (NaN payloads included), read as the same type."""
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, args)
        assert g.tobytes() == w.tobytes(), args


@st.composite
def placement_inputs(draw):
    """Any array, with a layout over mesh axes (in a program of one device: no change)."""
    dtype = draw(st.sampled_from(ALL_DTYPES))
    x = draw(arrays(dtype, draw(shapes()), values(dtype)))
    spec = tuple(draw(st.sampled_from([None, "data", ("data", "model")]))
                 for _ in range(draw(st.integers(0, x.ndim))))
    return [x], {"spec": spec}


@st.composite
def collective_inputs(draw, elements=values):
    """An array, as the value every member of a named axis of 1-4 members holds."""
    dtype = draw(st.sampled_from(ALL_DTYPES))
    x = draw(arrays(dtype, draw(shapes()), elements(dtype)))
    return [x], {"axis_name": "i", "axis_size": draw(st.integers(1, 4))}


@st.composite
def axes_of(draw, ndim):
    return tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), max_size=ndim)))) if ndim else ()


@st.composite
def reduce_inputs(draw, dtypes, elements=values, nonempty=False):
    dtype = draw(st.sampled_from(dtypes))
    x = draw(arrays(dtype, draw(shapes()), elements(dtype)))
    axes = draw(axes_of(x.ndim))
    if nonempty:    # NumPy has no maximum of nothing
        axes = tuple(a for a in axes if x.shape[a])
    return [x], {"axes": axes}


@st.composite
def reduce_sums_inputs(draw):
    """Up to three arrays of one shape, each of its own dtype, summed over the same axes."""
    shape = draw(shapes())
    xs = [draw(arrays(dtype, shape, tame_values(dtype)))
          for dtype in draw(st.lists(st.sampled_from(ALL_DTYPES), min_size=1, max_size=3))]
    return xs, {"axes": draw(axes_of(len(shape)))}


@st.composite
def arg_inputs(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    x = draw(arrays(dtype, draw(shapes(min_dims=1, nonempty=True))))
    axis = draw(st.integers(0, x.ndim - 1))
    return [x], {"axis": axis, "index_dtype": draw(st.sampled_from((np.dtype(np.int32),
                                                                     np.dtype(np.int64))))}


@st.composite
def cumulative_inputs(draw, elements=values):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    x = draw(arrays(dtype, draw(shapes(min_dims=1)), elements(dtype)))
    return [x], {"axis": draw(st.integers(0, x.ndim - 1)), "reverse": draw(st.booleans())}


@st.composite
def sort_inputs(draw):
    shape = draw(shapes(min_dims=1))
    xs = [draw(arrays(draw(st.sampled_from(ALL_DTYPES)), shape))
          for _ in range(draw(st.integers(1, 3)))]
    return xs, {"dimension": draw(st.integers(0, len(shape) - 1)), "num_keys": 1}


@st.composite
def argsort_inputs(draw):
    """XLA's lowering is the stable order (the default kind's ties are the host kernel's)."""
    x = draw(arrays(draw(st.sampled_from(ALL_DTYPES)), draw(shapes(min_dims=1))))
    return [x], {"dimension": draw(st.integers(0, x.ndim - 1)), "stable": True}


@st.composite
def dot_general_inputs(draw):
    """lhs and rhs with batch, contracting and free dimensions, each side in any order."""
    dtype = draw(st.sampled_from(NUMBERS))
    sizes = st.integers(0, 3)
    batch, contract = draw(st.lists(sizes, max_size=1)), draw(st.lists(sizes, max_size=2))
    lhs_free, rhs_free = draw(st.lists(sizes, max_size=1)), draw(st.lists(sizes, max_size=1))
    lhs_dims = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))] \
        + [("f", 0)] * len(lhs_free)
    rhs_dims = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))] \
        + [("f", 0)] * len(rhs_free)
    lhs_dims, rhs_dims = draw(st.permutations(lhs_dims)), draw(st.permutations(rhs_dims))
    size = {"b": batch, "c": contract}

    def shape_of(dims, free):
        return tuple(size[k][i] if k in size else free[0] for k, i in dims)

    def positions(dims, kind):
        return tuple(dims.index((kind, i)) for i in range(len(size[kind])))
    lhs = draw(arrays(dtype, shape_of(lhs_dims, lhs_free), tame_factors(dtype)))
    rhs = draw(arrays(dtype, shape_of(rhs_dims, rhs_free), tame_factors(dtype)))
    return [lhs, rhs], {
        "contracting": (positions(lhs_dims, "c"), positions(rhs_dims, "c")),
        "batch": (positions(lhs_dims, "b"), positions(rhs_dims, "b"))}


@st.composite
def window_matvec_inputs(draw):
    """A matrix (NaN and infinities anywhere: those outside the window must not show), a
    vector, and bounds of the window, some outside the matrix or crossed (it is clipped)."""
    dtype = draw(st.sampled_from((np.float32, np.float64)))
    rows, cols = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    transposed = draw(st.booleans())
    out_n, k_n = (cols, rows) if transposed else (rows, cols)
    a = draw(arrays(dtype, (rows, cols), tame_factors(dtype)))
    x = draw(arrays(dtype, (k_n,), tame_factors(dtype)))
    bounds = [np.int64(draw(st.integers(-2, n + 2))) for n in (out_n, out_n, k_n, k_n)]
    return [a, x, *bounds], {"transposed": transposed}


@st.composite
def window_dot_inputs(draw):
    """Two vectors, each itself or a row or column of a matrix (its index clamped, past the
    ends too), short or longer than window_dot's chunks, and a span, clipped or crossed."""
    dtype = draw(st.sampled_from((np.float32, np.float64)))
    n = draw(st.sampled_from((0, 1, 5, 200)))
    operands, lines, ats = [], [], []
    for _ in range(2):
        line = draw(st.sampled_from((None, 0, 1)))
        shape = (n,) if line is None else (n, 3) if line == 0 else (3, n)
        operands.append(draw(arrays(dtype, shape, tame_factors(dtype))))
        lines.append(line)
        if line is not None:
            ats.append(np.int64(draw(st.integers(-1, 4))))
    bounds = [np.int64(draw(st.integers(-3, n + 3))) for _ in range(2)]
    return [*operands, *bounds, *ats], {"lines": tuple(lines)}


def window_dot_terms(args, params):
    return max(np.shape(args[0]), default=1)


@st.composite
def correlate_inputs(draw):
    """Two vectors, the kernel short (summed as shifted slices) or long (XLA's convolution
    for floats: past correlation.UNROLLED_TAPS)."""
    dtype = draw(st.sampled_from(NUMBERS))
    taps = draw(st.one_of(st.integers(1, 8), st.integers(33, 40)))
    a = draw(arrays(dtype, (taps + draw(st.integers(0, 6)),), tame_factors(dtype)))
    return [a, draw(arrays(dtype, (taps,), tame_factors(dtype)))], {}


def correlate_terms(args, params):
    return args[1].shape[0]


def window_terms(args, params):
    return args[0].shape[0 if params["transposed"] else 1]


def contraction_terms(args, params):
    lhs, (lhs_contracting, _) = args[0], params["contracting"]
    return int(np.prod([lhs.shape[i] for i in lhs_contracting]))


def reduced_terms(args, params):
    return int(np.prod([args[0].shape[a] for a in params["axes"]]))


def cumulative_terms(args, params):
    return args[0].shape[params["axis"]]


@st.composite
def broadcast_inputs(draw):
    dtype, shape = draw(st.sampled_from(ALL_DTYPES)), draw(shapes())
    dims = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1))))) if shape else ()
    operand_shape = tuple(draw(st.sampled_from((1, shape[d]))) for d in dims)
    return [draw(arrays(dtype, operand_shape))], {"shape": shape, "broadcast_dimensions": dims}


@st.composite
def reshape_inputs(draw):
    (x,), _ = draw(one_array())
    size = x.size
    new_shape = draw(st.sampled_from([x.shape[::-1], (size,), (1, size), (size, 1, 1)]
                                     + ([()] if size == 1 else [])))
    return [x], {"new_shape": new_shape}


@st.composite
def transpose_inputs(draw):
    (x,), _ = draw(one_array())
    return [x], {"permutation": tuple(draw(st.permutations(range(x.ndim))))}


@st.composite
def slice_inputs(draw):
    (x,), _ = draw(one_array())
    starts, limits, strides = [], [], []
    for d in x.shape:
        starts.append(draw(st.integers(0, d)))
        limits.append(draw(st.integers(starts[-1], d)))
        strides.append(draw(st.integers(1, 3)))
    return [x], {"start_indices": tuple(starts), "limit_indices": tuple(limits),
                 "strides": tuple(strides)}


@st.composite
def rev_inputs(draw):
    (x,), _ = draw(one_array())
    return [x], {"dimensions": draw(axes_of(x.ndim))}


@st.composite
def concatenate_inputs(draw):
    dtype, shape = draw(st.sampled_from(ALL_DTYPES)), draw(shapes(min_dims=1))
    dimension = draw(st.integers(0, len(shape) - 1))
    xs = []
    for _ in range(draw(st.integers(1, 3))):
        one_shape = shape[:dimension] + (draw(st.integers(0, 3)),) + shape[dimension + 1:]
        xs.append(draw(arrays(dtype, one_shape)))
    return xs, {"dimension": dimension}


@st.composite
def pad_inputs(draw):
    (x,), _ = draw(one_array())
    pad_value = draw(arrays(x.dtype, ()))
    widths = st.tuples(*[st.integers(0, 2)] * x.ndim)
    return [x, pad_value], {"low": draw(widths), "high": draw(widths), "interior": draw(widths)}


@st.composite
def iota_inputs(draw):
    shape = draw(shapes(min_dims=1))
    dtype = draw(st.sampled_from([d for d in NUMBERS if d.kind != "c"]))
    return [], {"shape": shape, "dtype": dtype, "dimension": draw(st.integers(0, len(shape) - 1))}


def start_indices(draw, shape):
    """Scalar start indices of one integer dtype, some out of range (XLA clamps them)."""
    dtype = draw(st.sampled_from((np.int32, np.int64)))
    return [np.array(draw(st.integers(-2, d + 2)), dtype) for d in shape]


@st.composite
def dynamic_slice_inputs(draw):
    (x,), _ = draw(one_array())
    sizes = tuple(draw(st.integers(0, d)) for d in x.shape)
    return [x, *start_indices(draw, x.shape)], {"slice_sizes": sizes}


@st.composite
def dynamic_update_slice_inputs(draw):
    (x,), _ = draw(one_array())
    update = draw(arrays(x.dtype, tuple(draw(st.integers(0, d)) for d in x.shape)))
    return [x, update, *start_indices(draw, x.shape)], {}


@st.composite
def gather_scatter_operands(draw, elements=values):
    """An operand, and indices into its first k axes (some out of range: they are clipped;
    an operand with an empty axis among them takes no index)."""
    dtype = draw(st.sampled_from(ALL_DTYPES))
    x = draw(arrays(dtype, draw(shapes(min_dims=1)), elements(dtype)))
    k = draw(st.integers(1, x.ndim))
    empty = 0 in x.shape[:k]
    batch = draw(st.sampled_from([(0,), (2, 0)] if empty else [(), (0,), (3,), (2, 2)]))
    columns = [draw(arrays(np.int64, batch, st.integers(-2, d + 2)))[..., None]
               for d in x.shape[:k]]
    index_dtype = draw(st.sampled_from((np.int32, np.int64)))
    indices = np.concatenate(columns, axis=-1).astype(index_dtype)
    return x, indices, k


@st.composite
def gather_inputs(draw):
    x, indices, k = draw(gather_scatter_operands())
    return [x, indices], {"num_indexed": k}


@st.composite
def scatter_inputs(draw):
    mode = draw(st.sampled_from(("set", "add", "drop")))     # drop: out-of-range ones
    x, indices, k = draw(gather_scatter_operands(tame_values if mode == "add" else values))
    elements = tame_values if mode == "add" else values
    updates = draw(arrays(x.dtype, indices.shape[:-1] + x.shape[k:], elements(x.dtype)))
    return [x, indices, updates], {"num_indexed": k, "mode": mode}


def check_scatter(got, want, args, params, name):
    if params["mode"] == "add":
        check_accumulated(got, want, args, params, name, terms=args[1].shape[0] + 1
                          if args[1].ndim > 1 else 2)
    else:
        check_exact(got, want, args, params, name)


def accumulated(terms):
    def check(got, want, args, params, name):
        check_accumulated(got, want, args, params, name, terms(args, params))
    return check


def in_numpys_order(got, want, args, params, name):
    """A cumulative sum or product: one op per step in NumPy's order, so real results are
    NumPy's bit for bit (float16 rounded at every step as NumPy does); complex products round
    inside each multiplication XLA's own way."""
    if args[0].dtype.kind == "c":
        check_accumulated(got, want, args, params, name, cumulative_terms(args, params))
    else:
        check_exact(got, want, args, params, name)


def exact_up_to_sign_of_zero(got, want, args, params, name):
    check_exact(got, want, args, params, name, signed_zeros=False)


CASES = {
    "real": (one_array(), check_exact),
    "imag": (one_array(), check_exact),
    "complex": (complex_inputs(), check_exact),
    "select": (select_inputs(), check_exact),
    "convert_element_type": (convert_inputs(), check_elementwise),
    "bitcast_convert": (bitcast_inputs(), check_same_bytes),
    "sharding_constraint": (placement_inputs(), check_same_bytes),
    # (copies of one complex infinity: XLA folds the sum of a broadcast into a product,
    # whose real part of (0+infj) * 2 is NaN; NumPy adds them: 0)
    "psum": (collective_inputs(partial(tame_values, complex_infinities=False)),
             accumulated(lambda args, params: params["axis_size"])),
    "all_gather": (collective_inputs(), check_same_bytes),
    "reduce_sum": (reduce_inputs(ALL_DTYPES, tame_values), accumulated(reduced_terms)),
    "reduce_sums": (reduce_sums_inputs(), accumulated(reduced_terms)),
    "reduce_prod": (reduce_inputs(ALL_DTYPES, tame_factors), accumulated(reduced_terms)),
    "reduce_max": (reduce_inputs(ALL_DTYPES, nonempty=True), exact_up_to_sign_of_zero),
    "reduce_min": (reduce_inputs(ALL_DTYPES, nonempty=True), exact_up_to_sign_of_zero),
    "reduce_and": (reduce_inputs((np.dtype(bool),)), check_exact),
    "reduce_or": (reduce_inputs((np.dtype(bool),)), check_exact),
    "argmax": (arg_inputs(), check_exact),
    "argmin": (arg_inputs(), check_exact),
    "cumsum": (cumulative_inputs(tame_values), in_numpys_order),
    "cumprod": (cumulative_inputs(tame_factors), in_numpys_order),
    "cummax": (cumulative_inputs(), exact_up_to_sign_of_zero),
    "cummin": (cumulative_inputs(), exact_up_to_sign_of_zero),
    "sort": (sort_inputs(), check_exact),
    "argsort": (argsort_inputs(), check_exact),
    "dot_general": (dot_general_inputs(), accumulated(contraction_terms)),
    "broadcast_in_dim": (broadcast_inputs(), check_exact),
    "reshape": (reshape_inputs(), check_exact),
    "transpose": (transpose_inputs(), check_exact),
    "slice": (slice_inputs(), check_exact),
    "rev": (rev_inputs(), check_exact),
    "concatenate": (concatenate_inputs(), check_exact),
    "pad": (pad_inputs(), check_exact),
    "iota": (iota_inputs(), check_exact),
    "dynamic_slice": (dynamic_slice_inputs(), check_exact),
    "dynamic_update_slice": (dynamic_update_slice_inputs(), check_exact),
    "gather": (gather_inputs(), check_exact),
    "scatter": (scatter_inputs(), check_scatter),
    "window_matvec": (window_matvec_inputs(), accumulated(window_terms)),
    "window_dot": (window_dot_inputs(), accumulated(window_dot_terms)),
    "correlate": (correlate_inputs(), accumulated(correlate_terms)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@SETTINGS
@given(data=st.data())
def test_primitive_on_random_arrays(compile_cached, name, data):
    strategy, check = CASES[name]
    args, params = data.draw(strategy)
    got, want = run(compile_cached, name, args, **params)
    check(got, want, args, params, name)


# The primitives whose lowering calls psc_jit's host kernels where the program may
# (core/compile/_host_kernels.c), run that way too.
HOST_KERNEL_CASES = {"argmax": "psc_argmax", "argmin": "psc_argmin", "argsort": "psc_argsort_stable",
                     "cumsum": "psc_cumsum", "cumprod": "psc_cumprod", "cummax": "psc_cummax",
                     "cummin": "psc_cummin"}


@pytest.mark.parametrize("name", sorted(HOST_KERNEL_CASES))
@SETTINGS
@given(data=st.data())
def test_primitive_by_the_host_kernel_on_random_arrays(compile_cached, name, data):
    from psc_jit.core.compile import hostkernels
    targets = hostkernels.available_targets()
    assert HOST_KERNEL_CASES[name] in targets, "core/compile/_host_kernels.c was not built"
    strategy, check = CASES[name]
    args, params = data.draw(strategy)
    got, want = run(compile_cached, name, args, targets, **params)
    check(got, want, args, params, name)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("by_blas", [False, True], ids=["xla", "blas"])
def test_window_products_on_every_window(compile_cached, transposed, by_blas):
    """window_matvec on every window of a 4 x 5 matrix (bounds from before its start to past
    its end, crossed ones included), NaN and inf everywhere but in the window: by XLA's ops,
    and by BLAS's gemv on the window alone (core/compile/_blas_calls.c)."""
    from psc_jit.core.compile import blas
    targets = blas.available_targets() if by_blas else frozenset()
    if by_blas:
        assert {"psc_window_gemv_n", "psc_window_gemv_t"} <= targets, \
            "the BLAS module was not built or NumPy's BLAS not found"
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (4, 5))
    out_n, k_n = (5, 4) if transposed else (4, 5)
    x = rng.uniform(-2, 2, k_n)
    for out_lo, out_hi, k_lo, k_hi in itertools.product(range(-1, out_n + 2), range(-1, out_n + 2),
                                                         range(-1, k_n + 2), range(-1, k_n + 2)):
        bounds = np.int64([out_lo, out_hi, k_lo, k_hi])
        window = (slice(max(out_lo, 0), max(out_hi, 0)), slice(max(k_lo, 0), max(k_hi, 0)))
        poisoned = np.full_like(a.T if transposed else a, np.nan)
        poisoned[::2] = np.inf
        poisoned[window] = (a.T if transposed else a)[window]
        operand = poisoned.T if transposed else poisoned
        x_poisoned = np.full_like(x, -np.inf)
        x_poisoned[window[1]] = x[window[1]]
        args = [np.ascontiguousarray(operand), x_poisoned, *bounds]
        got, want = run(compile_cached, "window_matvec", args, targets, transposed=transposed)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-14, atol=1e-14,
                                   err_msg=f"window {bounds}")
    text, _ = lowered("window_matvec", [ShapedArray(np.shape(a), np.asarray(a).dtype)
                                        for a in args], {"transposed": transposed}, targets)
    assert ("psc_window_gemv" in text) == by_blas


@pytest.mark.parametrize("n", [7, 200])
@pytest.mark.parametrize("lines", [(None, None), (1, None), (None, 0), (0, 1)])
def test_window_dot_reads_its_span_alone(compile_cached, n, lines):
    """window_dot on spans from before the start to past the end (crossed ones too) of
    vectors that are NaN and inf everywhere else, themselves or lines of such matrices:
    nothing outside the span shows, with chunks (n = 200) and without."""
    rng = np.random.default_rng(5)
    for lo, hi in itertools.product(range(-1, n + 2, max(n // 6, 1)), repeat=2):
        args, ats = [], []
        for line, seed in zip(lines, (0, 1), strict=True):
            values = rng.uniform(-2, 2, n)
            vector = np.full(n, np.nan)
            vector[::3] = np.inf
            vector[max(lo, 0):max(hi, 0)] = values[max(lo, 0):max(hi, 0)]
            if line is None:
                args.append(vector)
                continue
            matrix = np.full((3, n) if line == 1 else (n, 3), -np.inf)
            matrix[(seed, slice(None)) if line == 1 else (slice(None), seed)] = vector
            args.append(matrix)
            ats.append(np.int64(seed))
        got, want = run(compile_cached, "window_dot", [*args, *np.int64([lo, hi]), *ats],
                        lines=lines)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13, atol=1e-13,
                                   err_msg=f"span [{lo}, {hi})")


def test_sums_of_every_precision_at_once(compile_cached):
    """reduce_sums of operands of float16, float32, float64, complex and integer dtypes
    together (XLA takes no mix of float widths in one reduction): each sum is reduce_sum's."""
    rng = np.random.default_rng(4)
    xs = [rng.uniform(-2, 2, (3, 40)).astype(d) for d in (np.float16, np.float32, np.float64)]
    xs += [(xs[2] + 1j * xs[1]).astype(d) for d in (np.complex64, np.complex128)]
    xs += [rng.integers(-9, 9, (3, 40)).astype(d) for d in (np.int8, np.uint64, np.bool_)]
    got, want = run(compile_cached, "reduce_sums", xs, axes=(1,))
    for g, w, x in zip(got, want, xs, strict=True):
        check_accumulated([g], [w], [x], {"axes": (1,)}, "reduce_sum", 40)


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_sums", "reduce_prod"])
def test_float16_sums_and_products_are_rounded_once(compile_cached, name):
    """NumPy accumulates float16 in float32: 1000 * 0.1 is 100.0, not float16's 99.6."""
    x = np.full((1000,), 0.1 if name != "reduce_prod" else 1.001, np.float16)
    got, want = run(compile_cached, name, [x] * (2 if name == "reduce_sums" else 1), axes=(0,))
    for g, w in zip(got, want, strict=True):
        assert_same(g, w, rtol=RTOL[np.dtype(np.float16)], what=name)


# -- control flow: primitives holding sub-graphs ----------------------------------------------

def small_graph(in_avals, build) -> Graph:
    """A graph of the equations that `build(emit, *inputs)` makes; `emit(name, *atoms,
    **params)` adds one equation and returns its (first) output."""
    in_vars = tuple(Var(aval) for aval in in_avals)
    eqns = []

    def emit(name, *atoms, **params):
        prim = PRIMS[name]
        outs = tuple(Var(aval) for aval in prim.abstract_eval(*(a.aval for a in atoms),
                                                              **params))
        eqns.append(Eqn(prim, atoms, params, outs, SOURCE))
        return outs[0]
    outs = tuple(build(emit, *in_vars))
    return Graph(in_vars, tuple(eqns), outs)


I32, F64_3 = ShapedArray((), np.int32), ShapedArray((3,), np.float64)
ONE = Literal.of(np.int32(1))
# while i < n: i, x = i + 1, x * c
LOOP = {
    "cond_graph": small_graph([I32, I32, F64_3], lambda emit, n, i, x: [emit("less", i, n)]),
    "body_graph": small_graph([F64_3, I32, F64_3], lambda emit, c, i, x: [
        emit("add", i, ONE), emit("multiply", x, c)]),
    "cond_nconsts": 1, "body_nconsts": 1}
BRANCHES = tuple(small_graph([F64_3, F64_3], lambda emit, x, y, name=name: [emit(name, x, y)])
                 for name in ("add", "multiply", "maximum"))


@SETTINGS
@given(n=st.integers(-2, 6), c=arrays(np.float64, (3,)), x=arrays(np.float64, (3,)))
def test_while_loop(compile_cached, n, c, x):
    args = [np.int32(n), c, np.int32(0), x]
    got, want = run(compile_cached, "while_loop", args, **LOOP)
    check_elementwise(got, want, args, LOOP, "multiply")


@SETTINGS
@given(index=st.integers(-2, 4), x=arrays(np.float64, (3,)), y=arrays(np.float64, (3,)))
def test_cond(compile_cached, index, x, y):
    args = [np.int32(index), x, y]
    got, want = run(compile_cached, "cond", args, branches=BRANCHES)
    assert_same(got[0], want[0], rtol_of(np.float64), signed_zeros=False, inputs=args[1:],
                what="cond")


def test_every_primitive_is_tested():
    from test_linalg_primitives import LINALG_PRIMITIVES
    tested = set(UFUNC_PRIMS) | set(CASES) | {"while_loop", "cond"} | set(LINALG_PRIMITIVES)
    assert tested == set(PRIMS), f"untested: {sorted(set(PRIMS) - tested)}"
