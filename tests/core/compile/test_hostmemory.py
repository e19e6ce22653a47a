"""NumPy's allocations made 64-byte aligned (`align_new_arrays`): every way of making an array
gives aligned data with NumPy's values, arrays of either allocator live and die side by side,
zeros stay lazily zeroed, and such arrays go into compiled calls without a copy."""
import gc
import io
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest
from numpy._core.multiarray import get_handler_name
from psc_jit.core import align_new_arrays, jit

pytestmark = pytest.mark.xla


@pytest.fixture(autouse=True)
def allocator_as_it_was():
    """Each test starts with NumPy's allocator and leaves the allocator as it found it (a
    shell with the extension loaded earlier in the session turned alignment on)."""
    was_on = get_handler_name() == "psc_jit_aligned_64"
    align_new_arrays(False)
    yield
    align_new_arrays(was_on)


@pytest.fixture
def aligned_allocations():
    assert align_new_arrays(True)


MAKERS = {
    "full": lambda: np.full(1001, 2.5),
    "zeros": lambda: np.zeros((7, 13), np.float32),
    "ones": lambda: np.ones(3, np.int8),
    "arange": lambda: np.arange(10_000.0),
    "ufunc result": lambda: np.sin(np.arange(777.0)),
    "copy": lambda: np.arange(5.0)[::2].copy(),
    "concatenate": lambda: np.concatenate([np.ones(3), np.zeros(5)]),
    "fromiter (grown)": lambda: np.fromiter(range(100_000), dtype=np.int64),
    "load": lambda: np.load(io.BytesIO(_saved(np.arange(12.0).reshape(3, 4)))),
    "astype": lambda: np.arange(9).astype(np.complex128),
}


def _saved(a) -> bytes:
    out = io.BytesIO()
    np.save(out, a)
    return out.getvalue()


@pytest.mark.parametrize("how", MAKERS)
def test_every_new_array_is_aligned_and_holds_numpys_values(aligned_allocations, how):
    got = MAKERS[how]()
    align_new_arrays(False)
    want = MAKERS[how]()
    assert got.ctypes.data % 64 == 0
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_the_allocator_is_numpys_again_when_turned_off():
    before = get_handler_name()
    assert before == "default_allocator"
    assert align_new_arrays(True) and get_handler_name() == "psc_jit_aligned_64"
    assert align_new_arrays(True)       # once on, on: the replaced handler is kept once
    assert not align_new_arrays(False)
    assert get_handler_name() == before
    assert not align_new_arrays(False)


def test_arrays_of_both_allocators_live_and_die_side_by_side():
    plain = [np.arange(float(n)) for n in range(1, 200)]
    align_new_arrays(True)
    ours = [np.arange(float(n)) for n in range(1, 200)]
    del plain[::2]
    align_new_arrays(False)
    del ours[1::2]
    gc.collect()
    assert all(a.sum() == len(a) * (len(a) - 1) / 2 for a in plain + ours)
    assert {get_handler_name(a) for a in ours} == {"psc_jit_aligned_64"}


def test_a_grown_array_keeps_its_data_and_alignment(aligned_allocations):
    a = np.arange(1000.0)
    for size in (1001, 5000, 300, 2_000_000, 10):
        a.resize(size, refcheck=False)
        assert a.ctypes.data % 64 == 0
        kept = min(size, 300)
        np.testing.assert_array_equal(a[:kept], np.arange(float(kept)))


def test_other_threads_keep_numpys_allocator(aligned_allocations):
    """The handler is a context variable of NumPy's: a thread starts in a context of its own."""
    names = []
    thread = threading.Thread(target=lambda: names.append(get_handler_name()))
    thread.start()
    thread.join()
    assert names == ["default_allocator"] and get_handler_name() == "psc_jit_aligned_64"


def test_large_zeros_stay_lazily_zeroed():
    """np.zeros asks for calloc'd memory, which the kernel maps on first touch: 1 GiB of
    zeros must not cost 1 GiB of resident memory."""
    code = ("import resource, numpy as np\n"
            "from psc_jit.core import align_new_arrays\n"
            "assert align_new_arrays(True)\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "z = np.zeros(1 << 27)\n"
            "assert z.ctypes.data % 64 == 0 and z[::1 << 20].sum() == 0\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)")
    grown_mib = int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                   text=True).stdout)
    assert grown_mib < 100


def test_a_new_array_goes_into_a_compiled_call_without_a_copy(aligned_allocations):
    x = np.random.default_rng(3).random(1_000_000)
    f = jit(lambda x: x.sum())
    f(x)
    gc.collect()
    tracemalloc.start()
    try:
        f(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < x.nbytes // 4      # no staging copy of the 8 MB input


@pytest.mark.parametrize("compiled_helper", [True, False])
def test_results_are_writable_arrays_over_xlas_buffers_with_or_without_the_c_module(
        monkeypatch, compiled_helper):
    """The C module makes a result array in one call; without it a ctypes array stands for
    the buffer: both give a writable array over XLA's buffer that outlives the call."""
    from psc_jit.core.compile import hostmemory
    if not compiled_helper:
        monkeypatch.setattr(hostmemory, "writable_array", None)
    else:
        assert hostmemory.writable_array is not None, "the C module was not built"
    f = jit(lambda x: (x * 2.0, x.sum()))
    x = np.arange(6.0).reshape(2, 3)
    f(x)
    y, total = f(x)
    assert y.flags.writeable and y.flags.c_contiguous and y.ctypes.data % 64 == 0
    y[0, 0] = -1.0
    del f
    gc.collect()
    assert y.tolist() == [[-1.0, 2.0, 4.0], [6.0, 8.0, 10.0]] and total == 15.0
