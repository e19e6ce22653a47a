"""Cache hits of `jit(f)` through jaxlib's C++ dispatcher: what a hit returns and does is what
the Python path gives (NumPy's values and dtypes, writable aligned results of the caller's
own, inputs of any layout, in-place updates landing once, every guard of what the trace read
checked), and jax in the same process, imported before or after and with x64 flipped, never
changes a result or its dtype."""
import subprocess
import sys

import numpy as np
import pytest
from psc_jit.core import TRACE_CACHE, UnsupportedError, jit
from psc_jit.core.compile.hostmemory import router
from test_calls import with_offset

pytestmark = pytest.mark.xla


def affine(x):
    return x * 2.0 + 1.0


def scaled(x, k):
    return x * k


def hits_of(f, *args, calls: int = 3) -> list:
    """The results of `calls` calls after the first (the dispatcher's hits)."""
    f(*args)
    return [f(*args) for _ in range(calls)]


def test_hits_return_writable_aligned_arrays_of_their_own():
    f = jit(affine)
    x = np.arange(8.0)
    results = hits_of(f, x)
    assert f.last_call.cache_hit
    for r in results:
        np.testing.assert_array_equal(r, x * 2.0 + 1.0)
        assert r.dtype == np.float64 and r.flags.writeable and r.flags.c_contiguous
        assert r.ctypes.data % 64 == 0 and not np.shares_memory(r, x)
    assert len({r.ctypes.data for r in results}) == len(results)   # never the same buffer
    results[0][:] = -1.0
    np.testing.assert_array_equal(results[1], x * 2.0 + 1.0)


def test_tuples_scalars_and_empty_results_on_hits_are_numpys():
    def parts(x):
        return x * 2.0, x.sum(), x[:0] + 1.0, {"max": x.max()}
    f = jit(parts)
    x = np.arange(5.0)
    for got in hits_of(f, x):
        want = parts(x)
        assert type(got) is tuple and len(got) == 4
        np.testing.assert_array_equal(got[0], want[0])
        assert type(got[1]) is np.float64 and got[1] == want[1]
        assert got[2].shape == (0,) and got[2].dtype == np.float64 and got[2].flags.writeable
        assert type(got[3]["max"]) is np.float64 and got[3]["max"] == want[3]["max"]


def test_hits_are_counted_as_the_python_path_counts_them():
    f = jit(affine)
    x = np.ones(4)
    f(x)
    hits = TRACE_CACHE.hits
    f(x)
    f(x)
    assert f.last_call.cache_hit and TRACE_CACHE.hits == hits + 2
    assert f.cache_records()[0].hits >= 2


def test_inputs_of_every_layout_give_numpys_values_on_hits():
    f = jit(affine)
    base = np.arange(64.0 * 3).reshape(64, 3)
    contiguous = np.ascontiguousarray(base.T)
    buffer = np.zeros(64 * 3 + 1)
    misaligned = buffer[1:].reshape(3, 64)
    misaligned[...] = contiguous
    read_only = contiguous.copy()
    read_only.flags.writeable = False
    fortran = np.asfortranarray(contiguous)
    f(contiguous)
    for x in (contiguous, base.T, fortran, misaligned, read_only, contiguous[:, ::-1]):
        for _ in range(2):
            np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)


def python_functions_called(fn) -> set[str]:
    """The names of the Python functions that ran while fn ran."""
    names: set[str] = set()

    def note(frame, event, arg):
        if event == "call":
            names.add(frame.f_code.co_name)
    sys.setprofile(note)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names


@pytest.mark.skipif(router is None, reason="the router is part of the C module, not built")
def test_large_inputs_read_in_place_hit_in_cpp_and_the_others_are_staged():
    """A misaligned input is staged on its first call only: from its second call with that
    offset on, a variant of the program reads it in place (compile/offsets.py)."""
    f = jit(affine)
    x = np.random.default_rng(8).random((500, 600))       # 2.4 MB, above the staging size
    aligned = with_offset(x, 0)
    layouts = {"aligned": aligned, "misaligned": with_offset(x, 16),
               "fortran order": np.asfortranarray(x), "every other column":
               np.repeat(x, 2, axis=1)[:, ::2]}
    hits_of(f, aligned)
    assert "_python_call" not in python_functions_called(lambda: f(aligned))
    for name, layout in layouts.items():
        for turn in range(2):
            called = python_functions_called(lambda: f(layout))  # noqa: B023
            np.testing.assert_array_equal(f(layout), x * 2.0 + 1.0, err_msg=name)
            staged = name != "aligned" and (name != "misaligned" or turn == 0)
            assert ("stage" in called) == staged, (name, sorted(called))
    assert f.last_call.cache_hit


WITHOUT_THE_ROUTER = """
import numpy as np
import psc_jit.core.compile.dispatch as dispatch
dispatch.router = None                      # as without the C module
from psc_jit import jit

x = np.random.default_rng(8).random((500, 600))
raw = np.empty(x.nbytes + 128, np.uint8)
start = -raw.ctypes.data % 64
aligned = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
misaligned = raw[start + 16:start + 16 + x.nbytes].view(x.dtype).reshape(x.shape)
f = jit(lambda v: v * 2.0 + 1.0)
for layout in (aligned, misaligned, aligned, misaligned):
    layout[...] = x
    for _ in range(3):
        assert np.array_equal(f(layout), x * 2.0 + 1.0)
assert type(type(f).__call__).__name__ != "Router"
print("ok")
"""


def test_without_the_router_large_inputs_of_any_layout_give_numpys_values():
    done = subprocess.run([sys.executable, "-c", WITHOUT_THE_ROUTER], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_an_update_that_shows_through_an_input_in_one_layout_only_lands_as_numpys():
    def write_raveled(x):
        y = x.T.reshape(-1)      # a copy of a C-ordered x, a view of a Fortran-ordered one
        y[0] = 5.0
        return y * 2.0
    f = jit(write_raveled)
    c_ordered = np.arange(12.0).reshape(3, 4)
    hits_of(f, c_ordered)
    np.testing.assert_array_equal(c_ordered, np.arange(12.0).reshape(3, 4))
    fortran = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    plain = fortran.copy(order="F")
    np.testing.assert_array_equal(f(fortran), write_raveled(plain))
    np.testing.assert_array_equal(fortran, plain)


def contiguous(x):
    return np.ascontiguousarray(x)


def contiguous_transpose(x):
    return np.ascontiguousarray(x.T)


@pytest.mark.parametrize("make", [np.ravel, lambda x: x.T.ravel(), lambda x: x.T.reshape(-1),
                                  contiguous, contiguous_transpose],
                         ids=["ravel", "T.ravel", "T.reshape", "ascontiguousarray",
                              "ascontiguousarray(T)"])
def test_whether_a_result_is_a_view_of_an_input_follows_each_calls_layout(make):
    f = jit(make)
    c_ordered = np.arange(12.0).reshape(3, 4)
    hits_of(f, c_ordered)
    for x in (np.asfortranarray(c_ordered), c_ordered[:, ::2], c_ordered.copy()):
        got, expected = f(x), make(x)
        np.testing.assert_array_equal(got, expected)
        assert np.shares_memory(got, x) == np.shares_memory(expected, x), (
            f"strides {x.strides}: NumPy {'shares' if np.shares_memory(expected, x) else 'copies'}")
        assert got.flags.c_contiguous == expected.flags.c_contiguous


def test_python_floats_are_traced_and_ints_stay_static():
    f = jit(scaled)
    x = np.arange(4.0)
    for k in (2.0, 3.0, 2.0, 5.5):
        r = f(x, k)
        np.testing.assert_array_equal(r, x * k)
        assert r.dtype == np.float64
    for k in (2, 3, 2):
        np.testing.assert_array_equal(f(x, k), x * k)
    assert f(x.astype(np.float32), 2.0).dtype == np.float32       # a weak scalar
    assert f(x.astype(np.float32), np.float64(2.0)).dtype == np.float64
    assert f(x.astype(np.int32), True).dtype == np.int32


@pytest.mark.parametrize("first, second", [(np.array(3.0), np.float64(3.0)),
                                           (np.float64(3.0), np.array(3.0))])
def test_a_0d_array_and_a_numpy_scalar_keep_their_own_results(first, second):
    def cast(x):
        return x.astype(np.float32)
    f = jit(cast)
    hits_of(f, first)
    for _ in range(2):
        got, want = f(second), cast(second)
        assert type(got) is type(want) and got.dtype == want.dtype and got == want


def test_in_place_updates_land_once_per_call():
    def bump(x):
        x += 1.0
    f = jit(bump)
    x = np.zeros(5)
    for _ in range(4):
        f(x)
    np.testing.assert_array_equal(x, np.full(5, 4.0))


K = 2.0


class Config:
    scale = 3.0


def by_global(x):
    return x * K


def by_attribute(x):
    return x * Config.scale


def make_by_closure(factor):
    def by_closure(x):
        return x * factor
    return by_closure


def test_guards_of_globals_closures_and_attributes_are_checked_on_every_call(monkeypatch):
    x = np.ones(3)
    f_global, f_attribute = jit(by_global), jit(by_attribute)
    f_closure = jit(make_by_closure(4.0))
    for f in (f_global, f_attribute, f_closure):
        hits_of(f, x)
    monkeypatch.setattr(sys.modules[__name__], "K", 7.0)
    monkeypatch.setattr(Config, "scale", 5.0)
    np.testing.assert_array_equal(f_global(x), np.full(3, 7.0))
    np.testing.assert_array_equal(f_attribute(x), np.full(3, 5.0))
    np.testing.assert_array_equal(f_closure(x), np.full(3, 4.0))
    np.testing.assert_array_equal(jit(make_by_closure(6.0))(x), np.full(3, 6.0))


REPEATS = 2


def shifted(x):
    return x + 1.0


class Ops:
    wave = np.sin


def by_static_globals(x):
    return np.tile(Ops.wave(shifted(x)), REPEATS)


def make_by_static_closure(repeats, helper):
    def by_static_closure(x):
        return np.tile(helper(x), repeats)
    return by_static_closure


def test_hits_that_read_modules_helpers_and_constants_run_in_cpp_and_see_each_rebinding(
        monkeypatch):
    """`np`, a helper function, a class attribute and an int a function reads are guards the
    router checks before the dispatcher: hits stay in C++, and the first call after any of
    them is rebound gives the plain function's result (and C++ hits resume once it is back)."""
    x = np.arange(4.0)
    f, g = jit(by_static_globals), jit(make_by_static_closure(2, shifted))
    for fn, plain in ((f, by_static_globals), (g, make_by_static_closure(2, shifted))):
        hits_of(fn, x)
        assert python_functions_called(lambda: fn(x)) <= {"<lambda>", "__call__", "_one_array"}  # noqa: B023
        np.testing.assert_array_equal(fn(x), plain(x))
    module = sys.modules[__name__]
    for name, value in (("REPEATS", 3), ("shifted", lambda v: v - 1.0)):
        monkeypatch.setattr(module, name, value)
        np.testing.assert_array_equal(f(x), by_static_globals(x), err_msg=name)
        monkeypatch.undo()
        np.testing.assert_array_equal(f(x), by_static_globals(x), err_msg=name)
    inner = g.__wrapped__
    cell = inner.__closure__[inner.__code__.co_freevars.index("repeats")]
    cell.cell_contents = 3
    np.testing.assert_array_equal(g(x), make_by_static_closure(3, shifted)(x))
    monkeypatch.setattr(Ops, "wave", np.cos)
    np.testing.assert_array_equal(f(x), np.tile(np.cos(x + 1.0), 2))
    monkeypatch.undo()
    hits_of(f, x)
    assert python_functions_called(lambda: f(x)) <= {"<lambda>", "__call__", "_one_array"}
    np.testing.assert_array_equal(f(x), np.tile(np.sin(x + 1.0), 2))


def test_numpys_error_state_is_checked_on_hits():
    f = jit(lambda x: 1.0 / x)
    x = np.zeros(3)
    hits_of(f, x)
    with np.errstate(divide="raise"):
        with pytest.raises(UnsupportedError, match="error state asks to raise"):
            f(x)
    with np.errstate(divide="ignore"):
        assert np.isinf(f(x)).all()
    assert np.isinf(f(x)).all() and f.last_call.cache_hit


def test_a_call_inside_another_trace_joins_it_even_after_hits():
    g = jit(lambda c: c * 2.0)
    c = np.ones(3)
    hits_of(g, c)

    def outer(x):
        r = g(c)
        r[0] = x[0]          # only a traced r takes a traced value
        return r
    np.testing.assert_array_equal(jit(outer)(np.arange(3.0) + 5.0), [5.0, 2.0, 2.0])


def test_clearing_the_cache_clears_the_dispatchers_entries():
    f = jit(affine)
    x = np.ones(2)
    hits_of(f, x)
    TRACE_CACHE.clear()
    f(x)
    assert not f.last_call.cache_hit
    f(x)
    assert f.last_call.cache_hit


def test_a_first_call_that_raised_does_not_keep_later_calls_off_the_fast_path():
    f = jit(np.linalg.cholesky)
    a = np.eye(4) * 4.0 + 0.5
    with pytest.raises(np.linalg.LinAlgError):
        f(-a)
    for _ in range(3):
        np.testing.assert_allclose(f(a), np.linalg.cholesky(a))
    assert f.last_call.cache_hit


def test_keyword_only_parameters_with_defaults_take_the_fast_path():
    f = jit(np.linalg.cholesky)
    a = np.eye(8) * 4.0 + 0.5
    for _ in range(3):
        np.testing.assert_allclose(f(a), np.linalg.cholesky(a))
    assert f.last_call.cache_hit and f.find_fast((a,)) is not None
    np.testing.assert_allclose(f(a, upper=True), np.linalg.cholesky(a, upper=True))
    with pytest.raises(np.linalg.LinAlgError):      # its run-time check, on a hit
        f(-a)


JAX_IN_THE_SAME_PROCESS = """
import numpy as np
from psc_jit import jit

x = np.full(4, 1.0 + 2.0 ** -40)          # not representable in float32
expected = x * 3.0 - 2.0

def check(f, where):
    for _ in range(3):
        r = f(x)
        assert r.dtype == np.float64, (where, r.dtype)
        assert np.array_equal(r, expected), (where, r)

if {jax_first}:
    import jax
f = jit(lambda v: v * 3.0 - 2.0)
check(f, "before jax")
import jax
import jax.numpy as jnp
check(f, "jax imported, x64 off")
assert jax.jit(lambda v: v * 3.0)(x).dtype == jnp.float32
jax.config.update("jax_enable_x64", True)
check(f, "x64 on")
assert jax.jit(lambda v: v * 3.0)(x).dtype == jnp.float64
jax.config.update("jax_enable_x64", False)
check(f, "x64 off again")
with jax.enable_x64(True):
    check(f, "x64 on in this thread")
check(f, "x64 off after the block")
with jax.disable_jit():
    check(f, "jit disabled")
g = jit(lambda v: v * 3.0 - 2.0)
check(g, "a new function, x64 off")
print("ok")
"""


@pytest.mark.parametrize("jax_first", [False, True])
def test_jax_in_the_same_process_never_changes_a_result(jax_first):
    pytest.importorskip("jax")
    script = JAX_IN_THE_SAME_PROCESS.format(jax_first=jax_first)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
