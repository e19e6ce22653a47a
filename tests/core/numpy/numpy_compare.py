"""Compare `psc_jit.core.jit(f)` with plain `f` on copies of the same inputs: outputs (values,
dtypes, NumPy scalar vs 0-d array vs array), the inputs after the call (in-place updates
written back into the caller's very arrays), which outputs alias which inputs, and errors."""
from __future__ import annotations

import numpy as np
from psc_jit.core import jit


def copies(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def small_integers(n, dtype, seed):
    """n small integers (-5..5, complex parts too) as `dtype`: sums of them are exact in every
    dtype, so any order of summing gives NumPy's value."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-5, 6, n)
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.integers(-5, 6, n)).astype(dtype)
    return values.astype(dtype)


def assert_same(got, want, where="result", rtol=0.0, close=False):
    """got is want as NumPy users see it. Floats within rtol when given; `close`: within the
    reassociation tolerance of their dtype (sums in another order), as NumPy allows itself
    between versions."""
    assert type(got) is type(want), f"{where}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{i}]", rtol, close)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
        assert np.shape(got) == np.shape(want), f"{where}: shape {np.shape(got)} != {np.shape(want)}"
        if close and not rtol:
            rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        if rtol and want.dtype.kind in "fc":
            assert np.allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True), \
                f"{where}: {got!r} != {want!r}"
        else:
            assert np.array_equal(got, want, equal_nan=True), f"{where}: {got!r} != {want!r}"
    else:
        same_nan = isinstance(want, float) and isinstance(got, float) and want != want != got
        assert got == want or same_nan, f"{where}: {got!r} != {want!r}"


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def aliasing(outputs, inputs):
    """For every output array and input array: (is it the input, does it share its memory)."""
    return [[(o is i, bool(np.shares_memory(o, i))) for i in inputs if isinstance(i, np.ndarray)]
            for o in _leaves(outputs) if isinstance(o, np.ndarray)]


def compare(f, *args, jitted=None, rtol=0.0, close=False):
    """Run f and jit(f) on copies of args; assert they agree in every way NumPy users see
    (floats within rtol, or within reassociation tolerance with `close`). Returns jit's
    outputs and its copies of the inputs."""
    plain_args, jit_args = copies(args), copies(args)
    jit_ids = [id(a) for a in jit_args]
    want = f(*plain_args)
    got = (jitted or jit(f))(*jit_args)
    assert_same(got, want, rtol=rtol, close=close)
    for n, (g, w) in enumerate(zip(jit_args, plain_args, strict=True)):
        assert_same(g, w, f"argument {n} after the call", rtol, close)
    assert [id(a) for a in jit_args] == jit_ids
    assert aliasing(got, jit_args) == aliasing(want, plain_args), "outputs alias inputs differently"
    return got, jit_args


def raises_like(f, *args, jitted=None):
    """f and jit(f) raise the same exception type (and message); inputs stay as NumPy left
    them (unchanged, when NumPy raised before its first write). Returns the jit error."""
    plain_args, jit_args = copies(args), copies(args)
    try:
        f(*plain_args)
    except Exception as err:        # noqa: BLE001 (the error is what is compared)
        want = err
    else:
        raise AssertionError("plain NumPy did not raise")
    try:
        (jitted or jit(f))(*jit_args)
    except Exception as err:        # noqa: BLE001
        got = err
    else:
        raise AssertionError(f"jit did not raise; NumPy raised {want!r}")
    assert type(got) is type(want), f"{type(got).__name__}: {got} != {type(want).__name__}: {want}"
    assert str(got) == str(want), f"{got} != {want}"
    for n, (g, original) in enumerate(zip(jit_args, copies(args), strict=True)):
        assert_same(g, original, f"argument {n} after the failed call")
    return got


def loads_from_disk_in_a_new_process(code: str, tmp_path) -> bool:
    """Runs `code` (which prints whether its last call's program came from the disk cache, and
    whether its result is NumPy's) in two fresh processes sharing one cache directory: True
    when the first compiled and the second loaded the program, both with NumPy's result."""
    import subprocess
    import sys
    env = {"PSC_JIT_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, check=True).stdout.split() for _ in range(2)]
    return runs == [["False", "True"], ["True", "True"]]
