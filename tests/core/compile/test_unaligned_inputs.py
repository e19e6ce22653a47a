"""Large inputs that NumPy left off the 64-byte boundary (its allocations are 16-byte
aligned) are read in place from the second call with those offsets on (compile/offsets.py):
a variant of the program takes each one from the boundary before it. Against NumPy for every
offset an item size allows, dtypes, loops of 0, 1 and n passes, inputs that cannot be read
that way, and several inputs at once."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psc_jit.core import jit
from psc_jit.core.compile.hostmemory import aligned_copy
from psc_jit.core.compile.offsets import element_offset, offset_module
from psc_jit.core.ir import ShapedArray
from test_calls import with_offset

pytestmark = pytest.mark.xla


def go_fast(a):                         # bench/loops.py's kernel
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def scaled_sum(a, b):            # (a reduction would make XLA copy its operand whole)
    return a * 2 + b, a - b


def variants_of(f, *args) -> dict:
    """The offsets the program of f for args has variants for (those read in place)."""
    unaligned = f.lower(*args).compile().executable._unaligned
    return {k: v for k, v in unaligned.variants.items() if v is not None}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int8, np.complex128])
@settings(max_examples=6, deadline=None)
@given(shape=st.sampled_from([(1, 70_000), (300, 300), (2, 40_000)]), data=st.data())
def test_misaligned_inputs_give_numpys_results_on_every_call(dtype, shape, data):
    itemsize = np.dtype(dtype).itemsize
    offset = data.draw(st.sampled_from(range(0, 64, itemsize)))
    a = (np.random.default_rng(offset).random(shape) * 5).astype(dtype)
    x = with_offset(a, offset)
    f = jit(go_fast)
    want = go_fast(a)
    for _ in range(3):
        got = f(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14)
    np.testing.assert_array_equal(x, a)


@pytest.mark.parametrize("offsets", [(16, 0), (0, 48), (8, 40), (32, 32)])
def test_several_inputs_each_at_its_own_offset(offsets):
    rng = np.random.default_rng(1)
    a, b = rng.random((400, 300)), rng.random((400, 300))
    x, y = with_offset(a, offsets[0]), with_offset(b, offsets[1])
    f = jit(scaled_sum)
    for _ in range(3):
        got, difference = f(x, y)
        np.testing.assert_array_equal(got, a * 2 + b)
        np.testing.assert_array_equal(difference, a - b)
    assert tuple(o // 8 for o in offsets) in variants_of(f, x, y)


def test_a_misaligned_input_is_read_in_place_from_its_second_call():
    x = with_offset(np.random.default_rng(2).random((500, 500)), 16)
    f = jit(go_fast)
    f(x)
    assert not variants_of(f, x)                    # one call: the input was copied
    f(x)
    assert variants_of(f, x).keys() == {(2,)}       # 16 bytes: two float64 before it


def test_inputs_that_cannot_be_read_from_the_boundary_are_copied_and_right():
    a = np.random.default_rng(3).random((300, 300))
    raw = np.empty(a.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64 + 4                    # 4 bytes past: not a whole float64
    odd = raw[start:start + a.nbytes].view(np.float64).reshape(a.shape)
    odd[...] = a
    f = jit(go_fast)
    for x in (odd, odd, np.asfortranarray(a), a[:, ::-1], aligned_copy(a)):
        np.testing.assert_allclose(f(x), go_fast(np.ascontiguousarray(x)), rtol=1e-14)
    assert element_offset(odd, ShapedArray(a.shape, a.dtype)) is None
    assert element_offset(a[:, ::-1], ShapedArray(a.shape, a.dtype)) is None


def test_the_variant_module_is_refused_where_it_cannot_be_written():
    avals = [ShapedArray((4,), np.dtype(np.float64))]
    with pytest.raises(ValueError):
        offset_module("module @m {\n}\n", avals, avals, (1,))
    with pytest.raises(ValueError):
        offset_module("module @m {\n  func.func public @main(%arg0: tensor<4xf64>) -> () {\n",
                      avals, [], (1,))


def test_a_program_keeps_at_most_a_few_variants_and_copies_past_them():
    """Inputs at ever new offsets do not compile a variant each: past MAX_VARIANTS they are
    copied again, with the same results."""
    from psc_jit.core.compile.offsets import MAX_VARIANTS
    f = jit(scaled_sum)
    a, b = np.arange(40_000.0), np.linspace(0, 1, 40_000)
    expected = scaled_sum(a, b)
    for offset in range(8, 64, 8):              # 7 offsets, each called twice
        for _ in range(2):
            x = with_offset(a, offset)
            got = f(x, b)
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])
    assert 0 < len(variants_of(f, with_offset(a, 8), b)) <= MAX_VARIANTS < 7


@pytest.mark.parametrize("in_c", [True, False])
def test_the_variant_reads_the_same_elements_with_or_without_the_compiled_helper(
        monkeypatch, in_c):
    """offsets.from_boundaries (core/compile/_host_memory.c) and its Python stand-in
    (`offsets` and `widened`) give the variant the same arrays."""
    from psc_jit.core.compile import offsets
    if not in_c:
        monkeypatch.setattr(offsets, "from_boundaries", None)
    elif offsets.from_boundaries is None:
        pytest.skip("core/compile/_host_memory.c was not built")
    f = jit(scaled_sum)
    for offset in (8, 16, 40):
        a = with_offset(np.arange(40_000.0), offset)
        b = with_offset(np.linspace(-1.0, 1.0, 40_000), 64 - offset)
        for _ in range(3):      # (the variant runs from the second call on)
            got = f(a, b)
            np.testing.assert_array_equal(got[0], a * 2 + b)
            np.testing.assert_array_equal(got[1], a - b)
    assert variants_of(f, a, b)


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def test_an_xla_loop_reading_a_misaligned_matrix_keeps_the_staged_copy(xla_loops):
    """An XLA loop takes its operands as they are, so XLA would copy the widened matrix
    whole before it (a fusion of the slice alone): no variant, the staged copy instead."""
    rng = np.random.default_rng(1)
    L = with_offset(np.tril(rng.random((300, 300))) + 300 * np.eye(300), 16)
    b = rng.random(300)
    f = jit(trisolv)
    for _ in range(3):
        np.testing.assert_allclose(f(L, np.zeros(300), b), trisolv(L, np.zeros(300), b),
                                   rtol=1e-12)
    assert not variants_of(f, L, np.zeros(300), b)


@pytest.mark.parametrize("dtype, offset", [(np.float64, 16), (np.float64, 48),
                                           (np.float32, 4), (np.float32, 60)])
def test_a_host_loop_reads_a_misaligned_matrix_in_place(dtype, offset):
    """A host loop (C through XLA's FFI) is handed the widened matrix whole, with the count
    of elements before the matrix's own: from the second call on, nothing is copied, and
    every call solves as NumPy does."""
    from psc_jit.core.compile.hostloops import compiler
    if compiler() is None:
        pytest.skip("no C compiler: loops stay XLA's")
    n = 400
    rng = np.random.default_rng(offset)
    L = with_offset((np.tril(rng.random((n, n))) + n * np.eye(n)).astype(dtype), offset)
    b = rng.random(n).astype(dtype)
    f = jit(trisolv)
    want = trisolv(L, np.zeros(n, dtype), b)
    for _ in range(3):
        got = f(L, np.zeros(n, dtype), b)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert (offset // np.dtype(dtype).itemsize, 0, 0) in variants_of(f, L, np.zeros(n, dtype), b)


def test_a_misaligned_input_a_host_loop_and_xla_both_read_is_staged():
    """The matrix is read by the loop and by `L.sum()` outside it: the loop would get the
    slice of the widened input, a copy, so no variant is made; the results are NumPy's."""
    def solve_and_sum(L, x, b):
        for i in range(x.shape[0]):
            x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
        return x, L.sum()
    rng = np.random.default_rng(5)
    L = with_offset(np.tril(rng.random((300, 300))) + 300 * np.eye(300), 16)
    b = rng.random(300)
    f = jit(solve_and_sum)
    for _ in range(3):
        got, total = f(L, np.zeros(300), b)
        np.testing.assert_allclose(got, solve_and_sum(L, np.zeros(300), b)[0], rtol=1e-12)
        assert total == pytest.approx(L.sum(), rel=1e-12)
    assert not variants_of(f, L, np.zeros(300), b)


def test_a_copy_of_a_parameter_is_told_from_a_fused_use():
    from psc_jit.core.compile.offsets import copies_an_input
    copy = ("%fused (p: f64[10]) -> f64[3,3] {\n  %p = f64[10]{0} parameter(0)\n"
            "  %s = f64[9]{0} slice(%p), slice={[1:10]}\n"
            "  ROOT %b = f64[3,3]{1,0} bitcast(%s)\n}\n\n"
            "ENTRY %main (a: f64[10]) -> f64[3,3] {\n  %a = f64[10]{0} parameter(0)\n"
            "  ROOT %f = f64[3,3]{1,0} fusion(%a), kind=kLoop, calls=%fused\n}\n")
    fused = copy.replace("ROOT %b = f64[3,3]{1,0} bitcast(%s)",
                         "%b = f64[3,3]{1,0} bitcast(%s)\n  ROOT %e = f64[3,3]{1,0} add(%b, %b)")
    assert copies_an_input(copy) and not copies_an_input(fused)
