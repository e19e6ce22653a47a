"""The NumPy layer's base: operand facts and small builders over primitives.

This layer is where NumPy's semantics live: NEP 50 promotion (NumPy itself is asked, through
`ufunc.resolve_dtypes` and `np.result_type`), broadcasting, accumulator dtypes of reductions,
NumPy scalars versus 0-d arrays. Below it primitives see one shape and one dtype.

Here: `implements` and `NUMPY_FUNCTIONS` (each supported NumPy callable -> its implementation
on tracers; `docs/coverage.md` is generated from it), what NumPy's promotion makes of an
operand, and the builders every module of the layer uses (convert, broadcast_to, reshape, ...).
"""
from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from ..primitives import (broadcast_in_dim_p, convert_element_type_p, dot_general_p, imag_p, real_p,
                          reduce_sum_p, reshape_p, slice_p, transpose_p)
from ..tracing import Tracer, UnsupportedError, bind, caller_source, outside_input
from .subclasses import refuse_subclasses

NUMPY_FUNCTIONS: dict[Callable, Callable] = {}
UFUNC_PRIMITIVES: dict[np.ufunc, str] = {}


def implements(*numpy_functions):
    def decorate(fn):
        for f in numpy_functions:
            NUMPY_FUNCTIONS[f] = fn
        return fn
    return decorate


def numpy_name(fn) -> str:
    """The name a user writes for a NumPy function: `np.sum`, `np.linalg.cholesky`,
    `np.fft.rfft` (its module, with `numpy` spelled `np`)."""
    module = getattr(fn, "__module__", None) or "numpy"
    if module == "numpy" or not module.startswith("numpy."):
        return f"np.{fn.__name__}"
    return "np." + module[len("numpy."):] + "." + fn.__name__


def unsupported(what: str, hint: str = "") -> UnsupportedError:
    return UnsupportedError(f"{what} is not supported by psc_jit", caller_source(),
                            hint or "move it out of the %%psc_jit cell")


def refusing(reason: str, hint: str, name: str):
    """An entry of NUMPY_FUNCTIONS that refuses with a reason (`refused` marks it so that the
    coverage table lists it as refused, not supported)."""
    def refuse(*args, **kwargs):
        raise unsupported(reason, hint)
    refuse.__name__ = name
    refuse.refused = reason
    return refuse


WEAK_PYTHON_TYPE = {"i": int, "u": int, "f": float, "c": complex}


def is_weak(x) -> bool:
    if isinstance(x, Tracer):   # a traced Python bool promotes as np.bool_ does
        return x.kind == "python" and x.dtype != np.bool_
    return isinstance(x, (int, float, complex)) and not isinstance(x, (bool, np.generic))


def dtype_of(x) -> np.dtype:
    if isinstance(x, Tracer):
        return x.dtype
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return np.result_type(x)
    return np.asarray(x).dtype


def shape_of(x) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def resolve_type(x):
    """What NumPy's promotion takes for x: a dtype, or a Python type for a weak scalar."""
    if is_weak(x):
        return WEAK_PYTHON_TYPE[dtype_of(x).kind] if isinstance(x, Tracer) else type(x)
    return dtype_of(x)


def _weak_sample(x):
    """A value np.result_type treats as x does: a Python scalar stands for a weak operand."""
    if is_weak(x):
        return WEAK_PYTHON_TYPE[dtype_of(x).kind](0) if isinstance(x, Tracer) else x
    return dtype_of(x)


def result_type(*xs) -> np.dtype:
    return np.result_type(*(_weak_sample(x) for x in xs))


def kind_of_result(ndim: int) -> str:
    """The kind of a NumPy function's result: an array, or a NumPy scalar, even of Python
    scalars (np.sum(2.0) and np.dot(2.0, 3.0) are np.float64)."""
    return "array" if ndim else "scalar"


def as_kind(t: Tracer, kind: str) -> Tracer:
    return t if t.kind == kind else t.with_kind(kind)


def convert(x, dtype, weak: bool = False):
    """x as the given dtype: a tracer gets a convert_element_type; a constant is converted now."""
    dtype = np.dtype(dtype)
    if type(x) is np.ndarray:
        adopted = outside_input(x)
        x = x if adopted is None else adopted
    if isinstance(x, Tracer):
        if x.dtype == dtype and (x.aval.weak_type or not weak):
            return x
        return bind(convert_element_type_p, x, new_dtype=dtype, weak_type=weak)
    if isinstance(x, (int, float, complex)) and not isinstance(x, np.generic) \
            and dtype.kind in "iu" and isinstance(x, int):
        return np.array(x, dtype=dtype)   # raises OverflowError out of range, as NumPy does
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(dtype)


def broadcast_to(x, shape):
    shape = tuple(shape)
    if isinstance(x, Tracer):
        if x.shape == shape:
            return x
        offset = len(shape) - x.ndim
        dims = tuple(range(offset, len(shape)))
        squeezed = [i for i, (d, t) in enumerate(zip(x.shape, shape[offset:], strict=True))
                    if d == 1 and t != 1]
        if squeezed:
            keep = tuple(d for i, d in enumerate(x.shape) if i not in squeezed)
            x = reshape(x, keep)
            dims = tuple(d for i, d in enumerate(dims) if i not in squeezed)
        return bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=dims)
    return np.broadcast_to(np.asarray(x), shape)


def reshape(x, shape):
    shape = tuple(int(d) for d in shape)
    if isinstance(x, Tracer):
        if x.shape == shape:
            return x
        return bind(reshape_p, x, new_shape=shape)
    return np.reshape(x, shape)


def full(shape, value, dtype):
    scalar = np.asarray(value, dtype=dtype)
    if not shape:
        return bind(broadcast_in_dim_p, scalar, shape=(), broadcast_dimensions=())
    return bind(broadcast_in_dim_p, scalar, shape=tuple(shape), broadcast_dimensions=())


def elementwise(prim, *args, weak: bool = False):
    """Bind an elementwise primitive to operands already of one dtype, broadcasting them.
    `weak`: every operand was a Python scalar, so the result is one too."""
    shapes = [shape_of(a) for a in args]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(f"({','.join(map(str, s))}{',' if len(s) == 1 else ''})"
                                    for s in shapes) + " ") from None
    operands = [broadcast_to(a, shape) if isinstance(a, Tracer) else _const_operand(a, shape)
                for a in args]
    result = bind(prim, *operands)
    if weak and not result.aval.weak_type:
        result = bind(convert_element_type_p, result, new_dtype=result.dtype,
                      weak_type=True)
    if len(shape):
        return result
    return as_kind(result, "python" if weak else "scalar")


def _const_operand(a, shape):
    arr = np.asarray(a)
    if arr.shape == tuple(shape):
        return arr
    if arr.ndim == 0:
        return full(shape, arr, arr.dtype)
    return broadcast_to(_as_traced_const(arr), shape)


def _as_traced_const(arr: np.ndarray) -> Tracer:
    """A constant array entered into the graph (so that it can be broadcast and indexed)."""
    return bind(reshape_p, arr, new_shape=arr.shape)


def ensure_tracer(x) -> Tracer:
    if isinstance(x, Tracer):
        return x
    if type(x) is np.ndarray:
        adopted = outside_input(x)
        if adopted is not None:
            return adopted
    refuse_subclasses((x,))         # (a constant of it would lose what its class adds)
    arr = np.asarray(x)
    t = _as_traced_const(arr) if arr.ndim else full((), arr, arr.dtype)
    return as_kind(t, "python" if is_weak(x) else ("array" if arr.ndim else "scalar"))


def as_array(x) -> Tracer:
    """np.asarray(x) as a tracer: a Python scalar becomes a strong 0-d array."""
    if isinstance(x, Tracer):
        return x.with_kind("array") if x.kind == "python" else x
    return ensure_tracer(np.asarray(x)).with_kind("array")


def transpose(x: Tracer, permutation) -> Tracer:
    permutation = tuple(permutation)
    if permutation == tuple(range(x.ndim)):
        return x
    return bind(transpose_p, x, permutation=permutation)


def static_slice(x: Tracer, starts, limits, strides=None) -> Tracer:
    strides = tuple(strides) if strides is not None else (1,) * x.ndim
    if tuple(starts) == (0,) * x.ndim and tuple(limits) == x.shape and strides == (1,) * x.ndim:
        return x
    return bind(slice_p, x, start_indices=tuple(starts), limit_indices=tuple(limits),
                strides=strides)


def sum_axes(x: Tracer, axes) -> Tracer:
    axes = tuple(axes)
    return bind(reduce_sum_p, x, axes=axes) if axes else x


def stand_in(shape, dtype) -> np.ndarray:
    """A zero array of this shape and dtype that takes no memory (never written)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


def dot_general(a, b, contracting, batch):
    return bind(dot_general_p, a, b, contracting=contracting, batch=batch)


def convert_result(x, dtype):
    return as_kind(convert(x, dtype), x.kind) if isinstance(x, Tracer) else np.asarray(x, dtype)


def real_part(val):
    """val.real: the same kind of value back (a 0-d array stays one, unlike a ufunc's)."""
    val = ensure_tracer(val)
    if val.dtype.kind != "c":
        return val
    return as_kind(elementwise(real_p, val), val.kind)


def imag_part(val):
    val = ensure_tracer(val)
    if val.dtype.kind != "c":
        return as_kind(full(val.shape, 0, val.dtype), val.kind)
    return as_kind(elementwise(imag_p, val), val.kind)


def copy_of(x: Tracer) -> Tracer:
    """A fresh array with x's current value (no longer a view of anything)."""
    return x.detached()


def assign_into(target, value, what: str, casting: str = "same_kind"):
    """Write value into every element of target (an in-place update); return target."""
    if not isinstance(target, Tracer):
        raise unsupported(f"{what} into an array that is not traced (made outside the traced "
                          "code)", "make the array in the traced code (np.empty_like(x), "
                          "np.zeros(n), ...) or assign the result to a name instead")
    if casting != "unsafe" and not np.can_cast(result_type(value), target.dtype, casting=casting):
        raise TypeError(
            f"Cannot cast ufunc output from dtype('{result_type(value)}') to "
            f"dtype('{target.dtype}') with casting rule 'same_kind'")
    value = broadcast_to(ensure_tracer(convert(value, target.dtype)), target.shape)
    target.assign(value)
    return target


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(out)


def reduction_axes(axis, ndim: int) -> tuple[int, ...]:
    """normalize_axes, with NumPy's quirk for C reductions (ufunc.reduce, argmax, cumsum,
    argsort, take): a 0-d array takes axis=0 or axis=-1 as if it had one axis."""
    if ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return ()
    return normalize_axes(axis, ndim)


def keepdims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


# -- NumPy's error state -----------------------------------------------------------------------

def strict_error_modes() -> tuple[tuple[str, str], ...]:
    """The floating-point errors NumPy's error state asks to raise on (or call a function
    for): `(('divide', 'raise'),)`. Compiled code returns inf and nan instead, so that state
    is what a compiled program assumes (warnings and ignoring give the same values).
    Checked on every re-run: NumPy replaces its error-state object whenever the state
    changes (np.seterr, np.errstate), so the answer is kept for the object last seen."""
    state = _ERROR_STATE.get() if _ERROR_STATE is not None else None
    seen = _last_error_state
    if state is not None and seen[0] is state:
        return seen[1]
    modes = tuple((k, v) for k, v in np.geterr().items() if v in ("raise", "call"))
    seen[:] = [state, modes]
    return modes


# NumPy's own context variable for its error state (np.geterr() reads it; about 1 µs).
_ERROR_STATE = getattr(getattr(getattr(np, "_core", None), "_ufunc_config", None),
                       "_extobj_contextvar", None)
_last_error_state: list = [None, ()]
ERROR_STATE = _ERROR_STATE      # its current object: a new one whenever the state changes


def refuse_raising_error_state() -> None:
    """A NumPy operation traced while NumPy's error state asks to raise (np.errstate in the
    traced code): compiled code computes inf and nan where NumPy would raise, so refuse."""
    modes = strict_error_modes()
    if modes:
        text = ", ".join(f"{k}={v!r}" for k, v in modes)
        raise UnsupportedError(
            f"NumPy's error state asks to {modes[0][1]} on floating-point errors here "
            f"(np.errstate({text})), and compiled code does not check for them",
            caller_source(), "run this cell without psc_jit, or compute it outside the "
            "np.errstate block")
