"""psc_jit's own CPU kernels for XLA programs (core/compile/_host_kernels.c): operations XLA's
code runs far slower than NumPy (argmax/argmin along an axis; sort and argsort, by NumPy's own
sort functions; cumulative sums, products, maxima and minima along rows, by NumPy's own ufunc
loops), each an XLA FFI custom call that the lowerings in core/primitives emit where the
program may call it. No jaxlib here: compile/xla/ registers them."""
from __future__ import annotations

import functools

TARGETS = frozenset({"psc_argmax", "psc_argmin", "psc_sort", "psc_sort_stable", "psc_argsort",
                     "psc_argsort_stable", "psc_cumsum", "psc_cumprod", "psc_cummax",
                     "psc_cummin"})


@functools.cache
def available_targets() -> frozenset[str]:
    """The targets programs may call: those of the C module when it was built (the sorts
    where this NumPy has a sort function of their kind for every dtype), else none (XLA's
    own code then)."""
    try:
        from . import _host_kernels
    except ImportError:
        return frozenset()
    return TARGETS & frozenset(_host_kernels.targets())   # sorts: where NumPy has them all


def calls_host_kernels(text: str) -> bool:
    """Whether a StableHLO module calls one of these targets."""
    return any(f'"{name}"' in text for name in TARGETS)


def targets() -> dict:
    """{target name: handler capsule}."""
    from . import _host_kernels
    return _host_kernels.targets()
