"""psc_jit's BLAS custom call targets: float matrix products of XLA programs (matrix-vector
and matrix-matrix) computed by the BLAS NumPy itself calls (core/compile/_blas_calls.c; the
lowering of dot_general calls them, core/primitives/contraction.py). Only NumPy's own library will do:
a second OpenBLAS (SciPy's) would run a second thread pool that spins against NumPy's. No
jaxlib here: compile/xla/ registers the targets."""
from __future__ import annotations

import ctypes
import functools
import glob
import os

import numpy as np

TARGETS = frozenset({"psc_gemv_n", "psc_gemv_t", "psc_window_gemv_n", "psc_window_gemv_t",
                     "psc_gemm_nn", "psc_gemm_nt", "psc_gemm_tn", "psc_gemm_tt"})
FUNCTIONS = ("dgemv", "sgemv", "dgemm", "sgemm")
# (prefix, suffix, 64-bit integers) of their names: as NumPy's bundled OpenBLAS names them
# (PyPI wheels), then as a BLAS of the usual names does
SYMBOLS = (("scipy_", "_64_", True), ("", "_64_", True), ("", "_", False))


@functools.cache
def numpy_blas() -> tuple[int, int, int, int, bool] | None:
    """(the addresses of FUNCTIONS, whether their integers are 64-bit) in the BLAS library
    NumPy loaded, or None when it is not one psc_jit can find (NumPy's wheels bundle it in
    numpy.libs)."""
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "*openblas*.so*"))):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix, wide in SYMBOLS:
            try:
                found = [getattr(library, prefix + name + suffix) for name in FUNCTIONS]
            except AttributeError:
                continue
            return (*(ctypes.cast(f, ctypes.c_void_p).value for f in found), wide)
    return None


@functools.cache
def available_targets() -> frozenset[str]:
    """The targets programs may call: all of them when the C module was built and NumPy's
    BLAS was found, else none (XLA's own kernels then)."""
    try:
        from . import _blas_calls  # noqa: F401 (its presence is the answer)
    except ImportError:
        return frozenset()
    return TARGETS if numpy_blas() is not None else frozenset()


def calls_blas(text: str) -> bool:
    """Whether a StableHLO module calls one of these targets."""
    return any(f'"{name}"' in text for name in TARGETS)


def targets_with_blas() -> dict:
    """{target name: handler capsule}, their BLAS functions given first."""
    from . import _blas_calls
    _blas_calls.set_blas(*numpy_blas())
    return _blas_calls.targets()
