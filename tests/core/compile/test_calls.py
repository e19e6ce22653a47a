"""The memory of a compiled call: results are the buffers XLA wrote (writable, 64-byte
aligned, the caller's own, aliased only where NumPy's would be); inputs of any layout give
NumPy's results, aligned ones are read in place; an in-place update lands once.

"No copy" is checked with tracemalloc, which sees NumPy's allocations (not XLA's)."""
import gc
import threading
import tracemalloc

import numpy as np
import pytest
from psc_jit.core import jit
from psc_jit.core.compile.hostmemory import STAGE_FROM_BYTES, aligned_copy

pytestmark = pytest.mark.xla

N = 200_000      # 1.6 MB of float64: large enough to be staged when misaligned


def with_offset(x: np.ndarray, offset: int) -> np.ndarray:
    """A C-contiguous copy of x whose data starts `offset` bytes past a 64-byte boundary."""
    raw = np.empty(x.nbytes + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    out = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


def numpy_bytes_allocated(fn) -> int:
    """Peak bytes NumPy (and Python) allocated while fn ran."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def addresses(a: np.ndarray) -> int:
    return a.ctypes.data


# -- results ----------------------------------------------------------------------------------

TWO_RESULTS = {
    "two computed": lambda x: (x * 2.0, x + 1.0),
    "two copies of the input": lambda x: (x.copy(), np.copy(x)),
    "astype to its own dtype": lambda x: (x.astype(x.dtype), x * 1.0),
    "sum and product": lambda x: (x.sum(keepdims=True), x * x),
}


@pytest.mark.parametrize("name", sorted(TWO_RESULTS))
def test_results_are_writable_aligned_and_share_memory_with_nothing(name):
    x = np.random.default_rng(0).random(N)
    first, second = jit(TWO_RESULTS[name])(x)
    want = TWO_RESULTS[name](x)
    for got, expected in zip((first, second), want, strict=True):
        np.testing.assert_array_equal(got, expected)
        assert got.flags.writeable and got.flags.c_contiguous
        assert addresses(got) % 64 == 0
        assert not np.shares_memory(got, x)
    assert not np.shares_memory(first, second)
    first[...] = -1.0          # writing one result touches nothing else
    np.testing.assert_array_equal(second, want[1])
    np.testing.assert_array_equal(x, np.random.default_rng(0).random(N))


def test_results_alias_where_numpy_aliases():
    def f(x):
        y = x * 2.0
        return y, y, y[1:], x
    x = np.arange(8.0)
    a, b, c, d = jit(f)(x)
    assert a is b and d is x
    assert np.shares_memory(a, c) and c.base is not None
    a[1] = 100.0
    assert c[0] == 100.0


def test_a_large_result_is_not_copied():
    x = np.random.default_rng(1).random(1_000_000)
    f = jit(lambda x: x * 2.0 + 1.0)
    f(x)
    allocated = numpy_bytes_allocated(lambda: f(x))
    assert allocated < x.nbytes // 4, f"{allocated} bytes allocated for an 8 MB result"


def test_result_outlives_its_executable():
    """A result keeps XLA's buffer alive by itself: the executable (compiled here, outside
    every cache) and the function are gone, a view of the result still reads and writes."""
    from psc_jit.core.compile.xla import compile_stablehlo
    x = np.random.default_rng(2).random(N)
    lowered = jit(lambda x: np.sin(x) + 3.0).lower(x)
    executable = compile_stablehlo(lowered.as_text(), lowered.graph.in_avals,
                                   lowered.graph.out_avals)
    (y,) = executable.execute([x])
    tail = y[-10:]
    del executable, lowered, y
    gc.collect()
    np.testing.assert_allclose(tail, (np.sin(x) + 3.0)[-10:], rtol=1e-15)
    tail[...] = 0.0
    assert (tail == 0.0).all()


def test_results_feed_the_next_call_without_a_copy():
    x = np.random.default_rng(3).random(1_000_000)
    f = jit(lambda x: x * 0.5)
    y = f(x)
    f(y)
    allocated = numpy_bytes_allocated(lambda: f(y))
    assert allocated < x.nbytes // 4


def test_constant_results_are_fresh_aligned_arrays():
    f = jit(lambda x: (np.arange(100.0), x))
    first, _ = f(1.0)
    second, _ = f(1.0)
    assert first is not second and not np.shares_memory(first, second)
    assert addresses(first) % 64 == 0 and first.flags.writeable


def test_empty_and_zero_dimensional_results():
    f = jit(lambda x: (x[:0] * 2.0, x.sum(), x[:0].reshape(0, 3, 0)))
    empty, total, empty3 = f(np.ones(4))
    assert empty.shape == (0,) and empty.dtype == np.float64 and empty.flags.writeable
    assert total == 4.0 and isinstance(total, np.float64)
    assert empty3.shape == (0, 3, 0)


# -- inputs -----------------------------------------------------------------------------------

def layouts(x: np.ndarray) -> dict[str, np.ndarray]:
    read_only = x.copy()
    read_only.flags.writeable = False
    return {
        "aligned": aligned_copy(x),
        "misaligned by 8": with_offset(x, 8),
        "misaligned by 16": with_offset(x, 16),
        "misaligned by 48": with_offset(x, 48),
        "fortran order": np.asfortranarray(x),
        "transposed": np.ascontiguousarray(x.T).T,
        "every other row": np.repeat(x, 2, axis=0)[::2],
        "reversed": x[::-1, ::-1].copy()[::-1, ::-1],
        "read-only": read_only,
        "read-only aligned view": aligned_copy(x)[:, :],
    }


def products(a, b):
    return a @ b + 1.0, (a * 2.0).sum(axis=0), a.T - b


@pytest.mark.parametrize("layout", sorted(layouts(np.ones((2, 2)))))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128])
def test_inputs_of_every_layout_give_numpy_results(layout, dtype):
    rng = np.random.default_rng(4)
    a = (rng.random((300, 300)) * 10).astype(dtype)
    b = (rng.random((300, 300)) * 10).astype(dtype)
    a_in, b_in = layouts(a)[layout], layouts(b)[layout]
    f = jit(products)
    for _ in range(3):                         # staging buffers are reused: still right
        for got, want in zip(f(a_in, b_in), products(a, b), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_array_equal(a_in, a)    # inputs are never written


def test_aligned_input_is_read_in_place():
    x = aligned_copy(np.random.default_rng(5).random(1_000_000))
    f = jit(lambda x: x.sum())
    f(x)
    assert numpy_bytes_allocated(lambda: f(x)) < x.nbytes // 4


def test_misaligned_inputs_give_numpy_results_and_later_calls_allocate_nothing():
    x = with_offset(np.random.default_rng(6).random(1_000_000), 16)
    f = jit(lambda x: x.sum())
    assert f(x) == pytest.approx(x.sum())
    y = with_offset(np.random.default_rng(7).random(1_000_000), 32)
    assert numpy_bytes_allocated(lambda: f(y)) < x.nbytes // 4
    assert f(y) == pytest.approx(y.sum())


def test_concurrent_calls_with_misaligned_inputs_do_not_share_staging():
    f = jit(lambda x: x * 3.0)
    arrays = [with_offset(np.full(N, float(i)), 16) for i in range(8)]
    f(arrays[0])
    failures = []

    def work(i):
        for _ in range(20):
            y = f(arrays[i])
            if not (y == 3.0 * i).all():
                failures.append(i)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(arrays))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


# -- in-place updates -------------------------------------------------------------------------

def add_one(x):
    x += 1.0


def shift_interior(x):
    x[1:-1] = 0.5 * (x[:-2] + x[2:])
    return x[1:-1]


@pytest.mark.parametrize("offset", [0, 16, 48])
def test_in_place_update_lands_once_in_the_callers_array(offset):
    base = np.random.default_rng(8).random(N)
    x = with_offset(base, offset)
    address = addresses(x)
    f = jit(add_one)
    assert f(x) is None
    np.testing.assert_array_equal(x, base + 1.0)
    f(x)
    np.testing.assert_array_equal(x, base + 1.0 + 1.0)
    assert addresses(x) == address


@pytest.mark.parametrize("offset", [0, 16])
def test_in_place_slice_update_returns_a_view_of_the_callers_array(offset):
    base = np.random.default_rng(9).random(N)
    x, expected = with_offset(base, offset), base.copy()
    view = jit(shift_interior)(x)
    want = shift_interior(expected)
    np.testing.assert_array_equal(x, expected)
    np.testing.assert_array_equal(view, want)
    assert np.shares_memory(view, x)


def test_in_place_update_of_a_non_contiguous_view():
    base = np.random.default_rng(10).random((400, 300))
    x, expected = base.copy(), base.copy()
    jit(add_one)(x[::2, ::-1])
    add_one(expected[::2, ::-1])
    np.testing.assert_array_equal(x, expected)


def test_in_place_update_writes_the_callers_array_once():
    x = aligned_copy(np.random.default_rng(11).random(1_000_000))
    f = jit(add_one)
    f(x)
    assert numpy_bytes_allocated(lambda: f(x)) < x.nbytes // 4


@pytest.mark.parametrize("n", [8_000, 16_000, 50_000, 120_000])
def test_misaligned_inputs_around_the_staging_size_give_numpy_results(n):
    """Under 64 kB jaxlib copies a misaligned input before the call returns; from there psc_jit
    stages it (jaxlib would copy it on a worker thread, and an inline run could end after the
    call: without a wait for the results, calls gave garbage)."""
    x = with_offset(np.random.default_rng(5).random(n), 16)
    assert x.ctypes.data % 64 == 16 and (x.nbytes < STAGE_FROM_BYTES) == (n == 8_000)
    f = jit(lambda v: v * 2.0 + 1.0)
    for _ in range(6):
        np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)


def test_large_inputs_aligned_and_not_alternating_give_numpy_results():
    """A large input read in place runs through jaxlib's dispatcher, a misaligned one is
    staged, beside another one of either kind: calls that switch between them all give
    NumPy's results."""
    rng = np.random.default_rng(8)
    big, mid = rng.random(N), rng.random(16_000)      # 1.6 MB and 128 kB
    f = jit(lambda a, b: (a * 2.0 + 1.0, b - a[: b.size]))
    layouts = [(aligned_copy(big), aligned_copy(mid)), (with_offset(big, 16), aligned_copy(mid)),
               (aligned_copy(big), with_offset(mid, 16)), (aligned_copy(big), mid[::-1].copy())]
    for _ in range(4):
        for a, b in layouts:
            got = f(a, b)
            for g, w in zip(got, (a * 2.0 + 1.0, b - a[: b.size]), strict=True):
                np.testing.assert_array_equal(g, w)
