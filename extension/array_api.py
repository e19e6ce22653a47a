"""psc_jit.array_api: an Array API namespace whose functions are NumPy's, each compiled.

    import psc_jit.array_api as xp
    y = xp.exp(x)          # np.exp traced, lowered and compiled by psc_jit.jit, then run

Every function of the standard (2023.12 and 2024.12, with the linalg and fft extensions) is
NumPy's own function wrapped in `psc_jit.jit`: its array arguments (NumPy arrays and scalars,
also inside lists and tuples) are traced, every other argument is static. A call without an
array argument (`zeros(3)`, `asarray([1, 2])`) is NumPy's: traced, it would compute nothing
(NumPy's function would run on the static values, the program would return constants).
Constants, dtypes and the functions that only answer questions about dtypes (`finfo`,
`iinfo`, `isdtype`, `result_type`, `can_cast`, `__array_namespace_info__`) are NumPy's.

The Array API conformance suite runs against this module (`make conformance`). When a call
is refused by psc_jit (`TraceError`: a function or an argument it does not compile) the call
is computed by NumPy, so that the suite measures the compiled results it gets; with `strict`
on (`PSC_JIT_ARRAY_API_STRICT=1` in the environment, `set_strict(True)` or `with
strict_mode():`) a refusal raises.
"""
from __future__ import annotations

import contextlib
import functools
import os
import types

import numpy as np

from .core import Jitted, TraceError
from .core import tree_flatten as flatten
from .core import tree_unflatten as unflatten

__array_api_version__ = np.__array_api_version__     # the standard NumPy implements

_STRICT = [os.environ.get("PSC_JIT_ARRAY_API_STRICT", "") not in ("", "0")]


def set_strict(strict: bool) -> None:
    """With strict on, a call psc_jit refuses raises its TraceError instead of running NumPy."""
    _STRICT[0] = bool(strict)


def is_strict() -> bool:
    return _STRICT[0]


@contextlib.contextmanager
def strict_mode(strict: bool = True):
    """`with strict_mode():` refusals raise inside the block (or with False: fall back)."""
    before = is_strict()
    set_strict(strict)
    try:
        yield
    finally:
        set_strict(before)


# -- the compiled wrapper ---------------------------------------------------------------------

def _is_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic))


def _numpy_call(numpy_function, arrays, statics, structure):
    """The function each wrapper traces: NumPy's function on the call's arguments, arrays
    taken from `arrays` (traced) and the rest from `statics` (part of the cache key)."""
    arrays = iter(arrays)
    leaves = [next(arrays) if leaf is _ARRAY else leaf for leaf in statics]
    args, kwargs = unflatten(structure, leaves)
    return numpy_function(*args, **kwargs)


class _ArraySlot:
    """Stands, among the static leaves of a call, where a traced array goes."""

    def __repr__(self) -> str:
        return "<array>"


_ARRAY = _ArraySlot()


def compiled(numpy_function, name: str | None = None):
    """NumPy's `numpy_function` compiled by psc_jit.jit: arrays traced, the rest static."""
    name = name or numpy_function.__name__
    jitted = Jitted(functools.partial(_numpy_call, numpy_function),
                    static_argnames=("statics", "structure"), name=f"xp.{name}", roll=False)

    @functools.wraps(numpy_function)
    def call(*args, **kwargs):
        leaves, structure = flatten((args, kwargs))
        arrays = [leaf for leaf in leaves if _is_array(leaf)]
        if not arrays:      # the trace would run NumPy's function on static values: constants
            return numpy_function(*args, **kwargs)
        statics = tuple(_ARRAY if _is_array(leaf) else leaf for leaf in leaves)
        try:
            return jitted(arrays, statics=statics, structure=structure)
        except TraceError:
            if is_strict():
                raise
            return numpy_function(*args, **kwargs)

    call.jitted = jitted
    return call


# -- the namespace ----------------------------------------------------------------------------

# The standard's functions that compute on arrays (2023.12, and the names 2024.12 adds).
FUNCTIONS = (
    # creation
    "arange", "asarray", "empty", "empty_like", "eye", "full", "full_like", "linspace",
    "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
    # data types
    "astype",
    # elementwise
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1",
    "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf",
    "isnan", "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
    "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc",
    # indexing
    "take", "take_along_axis",
    # linear algebra
    "matmul", "matrix_transpose", "tensordot", "vecdot",
    # manipulation
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    # searching
    "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where",
    # sets
    "unique_all", "unique_counts", "unique_inverse", "unique_values",
    # sorting
    "argsort", "sort",
    # statistics
    "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    # utilities
    "all", "any", "diff",
)
LINALG_FUNCTIONS = (
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
)
FFT_FUNCTIONS = (
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
)
# NumPy's own: constants, dtypes, and questions about dtypes (no array is computed).
UNCHANGED = (
    "e", "inf", "nan", "newaxis", "pi",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
    "finfo", "iinfo", "isdtype", "result_type", "can_cast", "from_dlpack",
    "__array_namespace_info__",
)


def asarray_like(obj, /, *, dtype=None, device=None, copy=None):
    """NumPy's asarray, dispatched to the first array in `obj` (NEP 35's `like=`): np.asarray
    takes no protocol of its own, so a traced array would otherwise be read as data."""
    arrays = [leaf for leaf in flatten(obj)[0] if not isinstance(leaf, (bool, int, float,
                                                                         complex))]
    like = {"like": arrays[0]} if arrays else {}
    return np.asarray(obj, dtype=dtype, device=device, copy=copy, **like)


# The NumPy callable compiled for a name where it is not NumPy's function of that name.
TRACEABLE_FORMS = {"asarray": asarray_like}


def _submodule(name: str, numpy_module, names) -> types.ModuleType:
    module = types.ModuleType(f"{__name__}.{name}")
    for function_name in names:
        setattr(module, function_name, compiled(getattr(numpy_module, function_name),
                                                f"{name}.{function_name}"))
    return module


globals().update({name: getattr(np, name) for name in UNCHANGED})
globals().update({name: compiled(TRACEABLE_FORMS.get(name, getattr(np, name)), name)
                  for name in FUNCTIONS})
linalg = _submodule("linalg", np.linalg, LINALG_FUNCTIONS)
fft = _submodule("fft", np.fft, FFT_FUNCTIONS)
