"""The NumPy layer: NumPy's functions, ufuncs, operators and methods on tracers.

This is where NumPy's semantics live: NEP 50 promotion (NumPy itself is asked, through
`ufunc.resolve_dtypes` and `np.result_type`), broadcasting, accumulator dtypes of reductions,
NumPy scalars versus 0-d arrays. Below this layer primitives see one shape and one dtype.

`NUMPY_FUNCTIONS` maps each supported NumPy callable to its implementation on tracers; it is
the table `docs/coverage.md` is generated from.
"""
from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from .registry import load_all, primitive
from .tracing import Tracer, UnsupportedError, bind, caller_source

load_all()

NUMPY_FUNCTIONS: dict[Callable, Callable] = {}
UFUNC_PRIMITIVES: dict[np.ufunc, str] = {}


def implements(*numpy_functions):
    def decorate(fn):
        for f in numpy_functions:
            NUMPY_FUNCTIONS[f] = fn
        return fn
    return decorate


def unsupported(what: str, hint: str = "") -> UnsupportedError:
    return UnsupportedError(f"{what} is not supported by psc_jit", caller_source(),
                            hint or "move it out of the %%psc_jit cell")


# -- operand facts ----------------------------------------------------------------------------

_WEAK_PYTHON_TYPE = {"i": int, "u": int, "f": float, "c": complex}


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
        return _WEAK_PYTHON_TYPE[dtype_of(x).kind] if isinstance(x, Tracer) else type(x)
    return dtype_of(x)


def _weak_sample(x):
    """A value np.result_type treats as x does: a Python scalar stands for a weak operand."""
    if is_weak(x):
        return _WEAK_PYTHON_TYPE[dtype_of(x).kind](0) if isinstance(x, Tracer) else x
    return dtype_of(x)


def result_type(*xs) -> np.dtype:
    return np.result_type(*(_weak_sample(x) for x in xs))


def kind_of_result(ndim: int, inputs) -> str:
    if ndim:
        return "array"
    if inputs and all(is_weak(x) for x in inputs):
        return "python"
    return "scalar"


def as_kind(t: Tracer, kind: str) -> Tracer:
    return t if t.kind == kind else t.with_kind(kind)


# -- small builders over primitives -----------------------------------------------------------

def convert(x, dtype, weak: bool = False):
    """x as the given dtype: a tracer gets a convert_element_type; a constant is converted now."""
    dtype = np.dtype(dtype)
    if isinstance(x, Tracer):
        if x.dtype == dtype and (x.aval.weak_type or not weak):
            return x
        return bind(primitive("convert_element_type"), x, new_dtype=dtype, weak_type=weak)
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
        return bind(primitive("broadcast_in_dim"), x, shape=shape, broadcast_dimensions=dims)
    return np.broadcast_to(np.asarray(x), shape)


def reshape(x, shape):
    shape = tuple(int(d) for d in shape)
    if isinstance(x, Tracer):
        if x.shape == shape:
            return x
        return bind(primitive("reshape"), x, new_shape=shape)
    return np.reshape(x, shape)


def full(shape, value, dtype):
    scalar = np.asarray(value, dtype=dtype)
    if not shape:
        return bind(primitive("broadcast_in_dim"), scalar, shape=(), broadcast_dimensions=())
    return bind(primitive("broadcast_in_dim"), scalar, shape=tuple(shape), broadcast_dimensions=())


def elementwise(prim_name: str, *args, weak: bool = False):
    """Bind an elementwise primitive to operands already of one dtype, broadcasting them.
    `weak`: every operand was a Python scalar, so the result is one too."""
    shape = np.broadcast_shapes(*(shape_of(a) for a in args))
    operands = [broadcast_to(a, shape) if isinstance(a, Tracer) else _const_operand(a, shape)
                for a in args]
    result = bind(primitive(prim_name), *operands)
    if weak and not result.aval.weak_type:
        result = bind(primitive("convert_element_type"), result, new_dtype=result.dtype,
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
    return bind(primitive("reshape"), arr, new_shape=arr.shape)


def ensure_tracer(x) -> Tracer:
    if isinstance(x, Tracer):
        return x
    arr = np.asarray(x)
    t = _as_traced_const(arr) if arr.ndim else full((), arr, arr.dtype)
    return as_kind(t, "python" if is_weak(x) else ("array" if arr.ndim else "scalar"))


# -- ufuncs -----------------------------------------------------------------------------------

def call_ufunc(ufunc: np.ufunc, *inputs, **kwargs):
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    where = kwargs.pop("where", True)
    casting = kwargs.pop("casting", "same_kind")
    kwargs.pop("order", None)
    if kwargs:
        raise unsupported(f"np.{ufunc.__name__}(..., {', '.join(kwargs)}=...)")
    if where is not True:
        raise unsupported(f"np.{ufunc.__name__}(..., where=...)", "use np.where(mask, f(x), x)")
    if ufunc.nout != 1:
        return _multi_output_ufunc(ufunc, inputs)
    target = out[0] if isinstance(out, tuple) else out
    if isinstance(target, Tracer):
        _check_out(ufunc, inputs, target, casting, dtype)
    result = _ufunc_value(ufunc, inputs, dtype)
    if out is not None:
        return assign_into(target, result, f"np.{ufunc.__name__}(..., out=...)")
    return result


def _check_out(ufunc, inputs, target: Tracer, casting: str, dtype=None) -> None:
    """NumPy's own errors for out=target: a result shape that does not fit, or a result
    dtype that cannot be cast under `casting` (UFuncTypeError, as for `x *= 2.5` on ints)."""
    shape = np.broadcast_shapes(*(shape_of(x) for x in inputs), target.shape)
    if shape != target.shape:
        def text(s):
            return "(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"
        raise ValueError(f"non-broadcastable output operand with shape {text(target.shape)} "
                         f"doesn't match the broadcast shape {text(shape)}")
    samples = [_WEAK_PYTHON_TYPE[dtype_of(x).kind](1) if is_weak(x) else np.ones((), dtype_of(x))
               for x in inputs]
    with np.errstate(all="ignore"):
        ufunc(*samples, out=np.ones((), target.dtype), casting=casting, dtype=dtype)


def _ufunc_value(ufunc, inputs, dtype=None):
    special = SPECIAL_UFUNCS.get(ufunc)
    if special is None:
        return primitive_ufunc(ufunc, inputs, dtype)
    in_dtypes, out_dtypes = numpy_loop(ufunc, inputs, dtype)   # NumPy's loop, or its error
    operands = [x if is_weak(x) else convert_result(x, d)
                for x, d in zip(inputs, in_dtypes, strict=True)]
    result = special(*operands)
    if result.dtype != out_dtypes[0]:
        result = as_kind(convert(result, out_dtypes[0]), result.kind)
    return ufunc_kind(result, inputs)


def ufunc_kind(result, inputs):
    """A ufunc's result: an array, a NumPy scalar when 0-d, a Python scalar from Python ones."""
    if result.ndim:
        return as_kind(result, "array")
    return as_kind(result, "python" if all(is_weak(x) for x in inputs) else "scalar")


def numpy_loop(ufunc, inputs, dtype=None):
    """(input dtypes, output dtypes) of the loop NumPy picks for these operands."""
    types = tuple(resolve_type(x) for x in inputs)
    if all(isinstance(t, type) for t in types):     # only Python scalars (NumPy says object
        types = tuple(np.dtype(t) for t in types)   # for int < int): their default dtypes
    outs = (None,) * ufunc.nout if dtype is None else (np.dtype(dtype),) * ufunc.nout
    try:
        loop = ufunc.resolve_dtypes(types + outs, casting="same_kind" if dtype is None
                                    else "unsafe")
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise TypeError(f"np.{ufunc.__name__} does not support {types}: {err}") from None
    return loop[:ufunc.nin], loop[ufunc.nin:]


def primitive_ufunc(ufunc, inputs, dtype=None):
    """A ufunc that is one elementwise primitive, on the operands of NumPy's loop."""
    name = UFUNC_PRIMITIVES.get(ufunc)
    if name is None:
        raise unsupported(f"np.{ufunc.__name__}")
    in_dtypes, (out_dtype,) = numpy_loop(ufunc, inputs, dtype)
    operands = [convert(x, d) for x, d in zip(inputs, in_dtypes, strict=True)]
    result = elementwise(name, *operands, weak=all(is_weak(x) for x in inputs))
    if result.dtype != out_dtype:
        result = as_kind(convert(result, out_dtype), result.kind)
    return result


def convert_result(x, dtype):
    return as_kind(convert(x, dtype), x.kind) if isinstance(x, Tracer) else np.asarray(x, dtype)


def _multi_output_ufunc(ufunc, inputs):
    if ufunc is np.divmod:
        return _ufunc_value(np.floor_divide, inputs), _ufunc_value(np.remainder, inputs)
    if ufunc is np.modf:
        (in_dtype,), _ = numpy_loop(ufunc, inputs)
        x = convert_result(ensure_tracer(inputs[0]), in_dtype)
        whole = call_ufunc(np.trunc, x)
        fraction = np_where(call_ufunc(np.isinf, x), 0, call_ufunc(np.subtract, x, whole))
        fraction = call_ufunc(np.copysign, fraction, x)   # modf(-inf) = (-0, -inf), as C's
        return ufunc_kind(fraction, inputs), ufunc_kind(whole, inputs)
    raise unsupported(f"np.{ufunc.__name__}")


def _positive(x):
    return _ufunc_value(np.add, (x, 0)) if dtype_of(x) != np.bool_ else x


def _trunc(x):
    if dtype_of(x).kind in "biu":
        return x
    return call_ufunc(np.copysign, call_ufunc(np.floor, call_ufunc(np.abs, x)), x)


def _scaled(factor):
    def apply(x):
        return call_ufunc(np.multiply, x, factor)
    return apply


def _power(x, y):
    if not isinstance(y, Tracer) and np.ndim(y) == 0 and not isinstance(y, np.ndarray) \
            and y == 2 and dtype_of(x).kind in "fc" and result_type(x, y) == dtype_of(x):
        return _ufunc_value(np.multiply, (x, x))
    return primitive_ufunc(np.power, (x, y))


def _float_power(x, y):
    dtype = np.result_type(result_type(x, y), np.float64)
    return call_ufunc(np.power, convert_result(ensure_tracer(x), dtype), convert_result(
        ensure_tracer(y), dtype))


def _logaddexp(x, y):
    big = call_ufunc(np.maximum, x, y)
    diff = call_ufunc(np.negative, call_ufunc(np.abs, call_ufunc(np.subtract, x, y)))
    return call_ufunc(np.add, big, call_ufunc(np.log1p, call_ufunc(np.exp, diff)))


SPECIAL_UFUNCS = {
    np.positive: _positive,
    np.trunc: _trunc,
    np.fix: _trunc,
    np.deg2rad: _scaled(np.pi / 180), np.radians: _scaled(np.pi / 180),
    np.rad2deg: _scaled(180 / np.pi), np.degrees: _scaled(180 / np.pi),
    np.power: _power,
    np.float_power: _float_power,
    np.logaddexp: _logaddexp,
}

for _ufunc in [np.add, np.subtract, np.multiply, np.maximum, np.minimum, np.arctan2,
               np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift,
               np.logical_and, np.logical_or, np.logical_xor, np.logical_not, np.divide,
               np.floor_divide, np.remainder, np.fmax, np.fmin, np.hypot,
               np.copysign, np.sign, np.square, np.reciprocal, np.rint, np.floor, np.ceil,
               np.conjugate, np.isfinite, np.isnan, np.isinf, np.signbit, np.negative, np.exp,
               np.expm1, np.log, np.log1p, np.sqrt, np.cbrt, np.sin, np.cos, np.tan, np.tanh,
               np.invert, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.arcsinh,
               np.arccosh, np.arctanh, np.log2, np.log10, np.exp2,
               np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]:
    UFUNC_PRIMITIVES[_ufunc] = _ufunc.__name__
UFUNC_PRIMITIVES[np.absolute] = "abs"
UFUNC_PRIMITIVES[np.fabs] = "abs"
UFUNC_PRIMITIVES[np.true_divide] = "divide"
UFUNC_PRIMITIVES[np.mod] = "remainder"
UFUNC_PRIMITIVES[np.power] = "power"
UFUNC_PRIMITIVES[np.fmod] = "fmod"      # (core/more_primitives.py)    # through _power (x*x for a static square)


def ufunc_method(ufunc: np.ufunc, method: str, *inputs, **kwargs):
    """`np.ufunc(...)` and its methods. Unlike an operator on Python scalars, a ufunc never
    returns a Python scalar: a NumPy scalar."""
    result = _ufunc_method(ufunc, method, *inputs, **kwargs)
    if isinstance(result, tuple):
        return tuple(_no_python_scalar(r) for r in result)
    return _no_python_scalar(result)


def _no_python_scalar(x):
    return as_kind(x, "scalar") if isinstance(x, Tracer) and x.kind == "python" else x


def _ufunc_method(ufunc: np.ufunc, method: str, *inputs, **kwargs):
    if method == "__call__":
        if ufunc is np.matmul:
            return matmul(*inputs, **kwargs)
        return call_ufunc(ufunc, *inputs, **kwargs)
    if method == "reduce" and ufunc in _UFUNC_REDUCERS:
        return _UFUNC_REDUCERS[ufunc](*inputs, **kwargs)
    if method == "accumulate" and ufunc in _UFUNC_ACCUMULATORS:
        kwargs.setdefault("axis", 0)
        return _UFUNC_ACCUMULATORS[ufunc](*inputs, **kwargs)
    if method == "outer" and ufunc.nin == 2:
        a, b = inputs
        a_t, b_t = ensure_tracer(a), ensure_tracer(b)
        return call_ufunc(ufunc, reshape(a_t, a_t.shape + (1,) * b_t.ndim), b_t, **kwargs)
    raise unsupported(f"np.{ufunc.__name__}.{method}")


# -- reductions -------------------------------------------------------------------------------

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


def _keepdims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def accumulator_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy's add.reduce/multiply.reduce dtype: small integers and bools widen to the
    platform integer."""
    if dtype == np.bool_ or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def reduction_axes(axis, ndim: int) -> tuple[int, ...]:
    """normalize_axes, with NumPy's quirk for C reductions (ufunc.reduce, argmax, cumsum,
    argsort, take): a 0-d array takes axis=0 or axis=-1 as if it had one axis."""
    if ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return ()
    return normalize_axes(axis, ndim)


def _reduce(prim_name, x, axis, keepdims, dtype=None, out_kind=None):
    x = ensure_tracer(x)
    axes = reduction_axes(axis, x.ndim)
    if dtype is not None:
        x = convert(x, dtype)
    result = bind(primitive(prim_name), x, axes=axes)
    if keepdims:
        result = reshape(result, _keepdims_shape(x.shape, axes))
    return as_kind(result, out_kind or kind_of_result(result.ndim, [x]))


def _check_nonempty(x, axes, name):
    if any(x.shape[a] == 0 for a in axes) or (not axes and x.size == 0 and x.ndim):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def _no_extras(name, out=None, where=None, initial=None, **kwargs):
    if out is not None or where is not None or initial is not None or kwargs:
        extra = [k for k, v in [("out", out), ("where", where), ("initial", initial)]
                 if v is not None] + list(kwargs)
        raise unsupported(f"{name}(..., {', '.join(extra)}=...)")


@implements(np.sum)
def np_sum(a, axis=None, dtype=None, keepdims=False, **extras):
    _no_extras("np.sum", **extras)
    a = ensure_tracer(a)
    return _reduce("reduce_sum", a, axis, keepdims, dtype or accumulator_dtype(a.dtype))


@implements(np.prod)
def np_prod(a, axis=None, dtype=None, keepdims=False, **extras):
    _no_extras("np.prod", **extras)
    a = ensure_tracer(a)
    return _reduce("reduce_prod", a, axis, keepdims, dtype or accumulator_dtype(a.dtype))


@implements(np.max, np.amax)
def np_max(a, axis=None, keepdims=False, **extras):
    _no_extras("np.max", **extras)
    a = ensure_tracer(a)
    _check_nonempty(a, reduction_axes(axis, a.ndim), "maximum")
    return _reduce("reduce_max", a, axis, keepdims)


@implements(np.min, np.amin)
def np_min(a, axis=None, keepdims=False, **extras):
    _no_extras("np.min", **extras)
    a = ensure_tracer(a)
    _check_nonempty(a, reduction_axes(axis, a.ndim), "minimum")
    return _reduce("reduce_min", a, axis, keepdims)


@implements(np.all)
def np_all(a, axis=None, keepdims=False, **extras):
    _no_extras("np.all", **extras)
    return _reduce("reduce_and", convert(ensure_tracer(a), bool), axis, keepdims)


@implements(np.any)
def np_any(a, axis=None, keepdims=False, **extras):
    _no_extras("np.any", **extras)
    return _reduce("reduce_or", convert(ensure_tracer(a), bool), axis, keepdims)


def _count(shape, axes) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _mean_dtypes(dtype: np.dtype, requested=None) -> tuple[np.dtype, np.dtype]:
    """(dtype to sum in, dtype of the result) of np.mean."""
    if requested is not None:
        requested = np.dtype(requested)
        acc = np.dtype(np.float32) if requested == np.float16 else requested
        return acc, requested
    if dtype.kind in "biu":
        return np.dtype(np.float64), np.dtype(np.float64)
    if dtype == np.float16:
        return np.dtype(np.float32), dtype
    return dtype, dtype


@implements(np.mean)
def np_mean(a, axis=None, dtype=None, keepdims=False, **extras):
    _no_extras("np.mean", **extras)
    a = ensure_tracer(a)
    axes = normalize_axes(axis, a.ndim)
    acc, out = _mean_dtypes(a.dtype, dtype)
    total = _reduce("reduce_sum", a, axis, keepdims, acc)
    n = _count(a.shape, axes)
    result = call_ufunc(np.divide, total, np.array(n if n else np.nan, acc)) if n else \
        call_ufunc(np.multiply, total, np.array(np.nan, acc))
    return convert_result(result, out)


@implements(np.var)
def np_var(a, axis=None, dtype=None, ddof=0, keepdims=False, mean=None, correction=None,
           **extras):
    _no_extras("np.var", **extras)
    if mean is not None or correction is not None:
        raise unsupported("np.var(..., mean= or correction=)")
    a = ensure_tracer(a)
    axes = normalize_axes(axis, a.ndim)
    acc, out = _mean_dtypes(a.dtype, dtype)
    centered = call_ufunc(np.subtract, convert(a, acc), np_mean(convert(a, acc), axis, keepdims=True))
    if acc.kind == "c":
        squared = np_real(call_ufunc(np.multiply, centered, call_ufunc(np.conjugate, centered)))
    else:
        squared = call_ufunc(np.multiply, centered, centered)
    total = _reduce("reduce_sum", squared, axis, keepdims)
    n = _count(a.shape, axes) - ddof
    result = call_ufunc(np.divide, total, np.array(max(n, 0), total.dtype) if n > 0 else
                        np.array(0, total.dtype))
    out_dtype = np.real(np.zeros((), out)).dtype
    return convert_result(result, out_dtype)


@implements(np.std)
def np_std(a, axis=None, dtype=None, ddof=0, keepdims=False, **extras):
    return call_ufunc(np.sqrt, np_var(a, axis, dtype, ddof, keepdims, **extras))


def _arg_reduce(prim_name, a, axis, keepdims, name):
    a = ensure_tracer(a)
    if axis is None:
        if a.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        flat = reshape(a, (a.size,))
        result = bind(primitive(prim_name), flat, axis=0, index_dtype=np.dtype(np.int64))
        if keepdims:
            result = reshape(result, (1,) * a.ndim)
        return as_kind(result, "array" if keepdims else "scalar")
    if not reduction_axes(axis, a.ndim):     # a 0-d array, axis 0 or -1: index 0
        return as_kind(full((), 0, np.int64), "scalar")
    (ax,) = normalize_axes(axis, a.ndim)
    if a.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = bind(primitive(prim_name), a, axis=ax, index_dtype=np.dtype(np.int64))
    if keepdims:
        result = reshape(result, _keepdims_shape(a.shape, (ax,)))
    return as_kind(result, kind_of_result(result.ndim, [a]))


@implements(np.argmax)
def np_argmax(a, axis=None, out=None, *, keepdims=False):
    if out is not None:
        raise unsupported("np.argmax(..., out=...)")
    return _arg_reduce("argmax", a, axis, keepdims, "argmax")


@implements(np.argmin)
def np_argmin(a, axis=None, out=None, *, keepdims=False):
    if out is not None:
        raise unsupported("np.argmin(..., out=...)")
    return _arg_reduce("argmin", a, axis, keepdims, "argmin")


def _cumulative(prim_name, a, axis, dtype):
    a = ensure_tracer(a)
    if axis is None or not reduction_axes(axis, a.ndim):
        a = reshape(a, (a.size,))
        axis = 0
    (ax,) = normalize_axes(axis, a.ndim)
    if dtype is not None:
        a = convert(a, dtype)
    return as_kind(bind(primitive(prim_name), a, axis=ax, reverse=False), "array")


@implements(np.cumsum)
def np_cumsum(a, axis=None, dtype=None, out=None):
    if out is not None:
        raise unsupported("np.cumsum(..., out=...)")
    return _cumulative("cumsum", a, axis, dtype or accumulator_dtype(dtype_of(a)))


@implements(np.cumprod)
def np_cumprod(a, axis=None, dtype=None, out=None):
    if out is not None:
        raise unsupported("np.cumprod(..., out=...)")
    return _cumulative("cumprod", a, axis, dtype or accumulator_dtype(dtype_of(a)))


_UFUNC_REDUCERS = {
    np.add: lambda a, axis=0, dtype=None, keepdims=False, **k: np_sum(a, axis, dtype, keepdims, **k),
    np.multiply: lambda a, axis=0, dtype=None, keepdims=False, **k: np_prod(a, axis, dtype, keepdims,
                                                                            **k),
    np.maximum: lambda a, axis=0, keepdims=False, **k: np_max(a, axis, keepdims, **k),
    np.minimum: lambda a, axis=0, keepdims=False, **k: np_min(a, axis, keepdims, **k),
    np.logical_and: lambda a, axis=0, keepdims=False, **k: np_all(a, axis, keepdims, **k),
    np.logical_or: lambda a, axis=0, keepdims=False, **k: np_any(a, axis, keepdims, **k),
}


def _accumulate_minmax(prim_name):
    def accumulate(a, axis=0, dtype=None, out=None):
        if out is not None:
            raise unsupported("ufunc.accumulate(..., out=...)")
        return _cumulative(prim_name, a, axis, dtype)
    return accumulate


def _accumulate(fn):
    """ufunc.accumulate refuses a 0-d operand (the functions np.cumsum/np.cumprod do not)."""
    def accumulate(a, axis=0, dtype=None, out=None):
        if len(shape_of(a)) == 0:
            raise TypeError("cannot accumulate on a scalar")
        return fn(a, axis, dtype, out)
    return accumulate


_UFUNC_ACCUMULATORS = {
    np.add: _accumulate(np_cumsum),
    np.multiply: _accumulate(np_cumprod),
    np.maximum: _accumulate(_accumulate_minmax("cummax")),
    np.minimum: _accumulate(_accumulate_minmax("cummin")),
}


# -- where, clip, matmul ----------------------------------------------------------------------

@implements(np.where)
def np_where(condition, x=None, y=None):
    if x is None and y is None:
        raise unsupported("np.where(condition) with one argument (its result has a data-"
                          "dependent shape)", "use np.where(condition, x, y)")
    dtype = result_type(x, y)
    shape = np.broadcast_shapes(shape_of(condition), shape_of(x), shape_of(y))
    pred = broadcast_to(ensure_tracer(convert(condition, bool)), shape)
    on_true = broadcast_to(ensure_tracer(convert(x, dtype)), shape)
    on_false = broadcast_to(ensure_tracer(convert(y, dtype)), shape)
    result = bind(primitive("select"), pred, on_true, on_false)
    return as_kind(result, "array")


@implements(np.clip)
def np_clip(a, a_min=None, a_max=None, out=None, **kwargs):
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    if kwargs:
        raise unsupported(f"np.clip(..., {', '.join(kwargs)}=...)")
    result = a
    if a_min is not None:
        result = call_ufunc(np.maximum, result, a_min)
    if a_max is not None:
        result = call_ufunc(np.minimum, result, a_max)
    if out is not None:
        return assign_into(out, result, "np.clip(..., out=...)")
    return result


def _promote_pair(a, b):
    """dot, inner, outer, tensordot take Python scalars as arrays (np.asarray), not weakly."""
    a, b = (v if not is_weak(v) else v.with_kind("array") if isinstance(v, Tracer) else
            np.asarray(v) for v in (a, b))
    dtype = result_type(a, b)
    return ensure_tracer(convert(a, dtype)), ensure_tracer(convert(b, dtype))


def dot_general(a, b, contracting, batch):
    return bind(primitive("dot_general"), a, b, contracting=contracting, batch=batch)


@implements(np.matmul)
def matmul(a, b, **kwargs):
    if kwargs:
        raise unsupported(f"np.matmul(..., {', '.join(kwargs)}=...)")
    a, b = _promote_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    if a.dtype == np.bool_:
        return convert(matmul(convert(a, np.int64), convert(b, np.int64)), bool)
    a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2.shape[-2]} is different from {a2.shape[-1]})")
    batch_shape = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a3 = broadcast_to(a2, batch_shape + a2.shape[-2:])
    b3 = broadcast_to(b2, batch_shape + b2.shape[-2:])
    nb = len(batch_shape)
    out = dot_general(a3, b3, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    shape = batch_shape + (a2.shape[-2] if a.ndim > 1 else (),) + (b2.shape[-1] if b.ndim > 1 else (),)
    shape = tuple(d for part in shape for d in ((part,) if isinstance(part, int) else part))
    return as_kind(reshape(out, shape), kind_of_result(len(shape), [a, b]))


@implements(np.dot)
def np_dot(a, b, out=None):
    if out is not None:
        raise unsupported("np.dot(..., out=...)")
    a, b = _promote_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return call_ufunc(np.multiply, a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    contract_b = b.ndim - 2 if b.ndim >= 2 else 0
    if a.shape[-1] != b.shape[contract_b]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim "
                         f"{a.ndim - 1}) != {b.shape[contract_b]} (dim {contract_b})")
    out = dot_general(a, b, ((a.ndim - 1,), (contract_b,)), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


@implements(np.vdot)
def np_vdot(a, b):
    a, b = _promote_pair(a, b)
    if a.size != b.size:
        raise ValueError("cannot reshape array: vdot needs two arrays of one size")
    if a.dtype == np.bool_:
        return as_kind(convert(np_vdot(convert(a, np.int64), convert(b, np.int64)), bool),
                       "scalar")
    a = reshape(a, (a.size,))
    if a.dtype.kind == "c":
        a = call_ufunc(np.conjugate, a)
    return as_kind(dot_general(a, reshape(b, (b.size,)), ((0,), (0,)), ((), ())), "scalar")


@implements(np.inner)
def np_inner(a, b):
    a, b = _promote_pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return call_ufunc(np.multiply, a, b)
    out = dot_general(a, b, ((a.ndim - 1,), (b.ndim - 1,)), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


@implements(np.outer)
def np_outer(a, b, out=None):
    a, b = _promote_pair(a, b)
    a, b = reshape(a, (a.size, 1)), reshape(b, (1, b.size))
    result = call_ufunc(np.multiply, a, b)
    return assign_into(out, result, "np.outer(..., out=...)") if out is not None else result


@implements(np.tensordot)
def np_tensordot(a, b, axes=2):
    a, b = _promote_pair(a, b)
    if isinstance(axes, (int, np.integer)):
        axes_a = tuple(range(a.ndim - axes, a.ndim))
        axes_b = tuple(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = normalize_axes(axes_a, a.ndim)
        axes_b = normalize_axes(axes_b, b.ndim)
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j]
                                         for i, j in zip(axes_a, axes_b, strict=True)):
        raise ValueError("shape-mismatch for sum")
    out = dot_general(a, b, (axes_a, axes_b), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


# -- complex parts ----------------------------------------------------------------------------

def np_real(val):
    """val.real: the same kind of value back (a 0-d array stays one, unlike a ufunc's)."""
    val = ensure_tracer(val)
    if val.dtype.kind != "c":
        return val
    return as_kind(elementwise("real", val), val.kind)


def np_imag(val):
    val = ensure_tracer(val)
    if val.dtype.kind != "c":
        return as_kind(full(val.shape, 0, val.dtype), val.kind)
    return as_kind(elementwise("imag", val), val.kind)


@implements(np.conj, np.conjugate)
def np_conj(x, **kwargs):
    return call_ufunc(np.conjugate, x, **kwargs)


@implements(np.angle)
def np_angle(z, deg=False):
    z = ensure_tracer(z)
    if z.dtype.kind != "c":
        result = call_ufunc(np.arctan2, 0, z)      # NumPy: arctan2(0, z), so int8 -> float16
    else:
        result = call_ufunc(np.arctan2, np_imag(z), np_real(z))
    if deg:
        result = call_ufunc(np.multiply, result, 180 / np.pi)
    return _no_python_scalar(result)


@implements(np.round, np.around)
def np_round(a, decimals=0, out=None):
    a = ensure_tracer(a)
    if a.dtype == np.bool_ and decimals != 0:
        raise TypeError("Cannot cast ufunc 'multiply' output from dtype('float64') to "
                        "dtype('bool') with casting rule 'same_kind'")
    if a.dtype.kind == "c":     # NumPy rounds the real and imaginary parts apart
        parts = [np_round(part(a), decimals) for part in (np_real, np_imag)]
        result = elementwise("complex", *parts)
    elif a.dtype == np.bool_:
        result = call_ufunc(np.rint, a)
    elif decimals == 0 or a.dtype.kind in "biu" and decimals >= 0:
        result = call_ufunc(np.rint, a) if a.dtype.kind not in "biu" else copy_of(a)
    else:
        factor = 10.0 ** decimals
        result = call_ufunc(np.divide, call_ufunc(np.rint, call_ufunc(np.multiply, a, factor)),
                            factor)
    if out is not None:
        return assign_into(out, result, "np.round(..., out=...)")
    return as_kind(result, "scalar" if result.ndim == 0 else "array")


# -- dtype conversion and copies --------------------------------------------------------------

def astype(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    dtype = np.dtype(dtype)
    if not np.can_cast(x.dtype, dtype, casting=casting):
        raise TypeError(f"Cannot cast array data from {x.dtype} to {dtype} according to the rule "
                        f"'{casting}'")
    result = convert(x, dtype)
    if result is x:
        result = copy_of(x)
    return as_kind(result, "array" if x.kind != "scalar" or x.ndim else "scalar")


def copy_of(x: Tracer) -> Tracer:
    """A fresh array with x's current value (no longer a view of anything)."""
    return x.detached()


@implements(np.copy)
def np_copy(a, order="K", subok=False):
    return copy_of(ensure_tracer(a)).with_kind("array")


@implements(np.asarray, np.asanyarray)
def np_asarray(a, dtype=None, order=None, **kwargs):
    a = ensure_tracer(a)
    result = a if dtype is None or np.dtype(dtype) == a.dtype else convert(a, dtype)
    # a NumPy or Python scalar becomes a new 0-d array; an array comes back as it is
    return copy_of(result).with_kind("array") if result.kind != "array" else result


@implements(np.ascontiguousarray)
def np_ascontiguousarray(a, dtype=None, **kwargs):
    result = np_asarray(a, dtype)
    return reshape(result, (1,)).with_kind("array") if result.ndim == 0 else result


@implements(np.array)
def np_array(a, dtype=None, copy=True, **kwargs):
    if isinstance(a, (list, tuple)):
        return np_stack_like_array(a, dtype)
    a = ensure_tracer(a)
    result = a if dtype is None or np.dtype(dtype) == a.dtype else convert(a, dtype)
    return copy_of(result).with_kind("array") if copy else result.with_kind("array")


def np_stack_like_array(items, dtype):
    from .shape_ops import np_stack
    items = [np_stack_like_array(i, None) if isinstance(i, (list, tuple)) else i for i in items]
    dtype = dtype or result_type(*items)
    return np_stack([convert(ensure_tracer(i), dtype) for i in items])


# -- assignment into arrays (out=, in-place operators) ----------------------------------------

def assign_into(target, value, what: str):
    """Write value into every element of target (an in-place update); return target."""
    if not isinstance(target, Tracer):
        raise unsupported(f"{what} into an array that is not traced",
                          "assign the result to a name instead")
    if not np.can_cast(result_type(value), target.dtype, casting="same_kind"):
        raise TypeError(
            f"Cannot cast ufunc output from dtype('{result_type(value)}') to "
            f"dtype('{target.dtype}') with casting rule 'same_kind'")
    value = broadcast_to(ensure_tracer(convert(value, target.dtype)), target.shape)
    target.assign(value)
    return target


def inplace_binary(ufunc):
    """`x op= y`: into x when x is an array; a NumPy or Python scalar is rebound, as in NumPy."""
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = np.asarray(other)
        if not _operand_ok(other):
            return NotImplemented
        if self.kind != "array":
            return call_ufunc(ufunc, self, other)
        return call_ufunc(ufunc, self, other, out=self)
    return method


def binary_operator(ufunc, reflected=False):
    def method(self, other):
        if isinstance(other, (list, tuple)):
            other = np.asarray(other)
        if not _operand_ok(other):
            return NotImplemented
        return call_ufunc(ufunc, other, self) if reflected else call_ufunc(ufunc, self, other)
    return method


def _operand_ok(x) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex))
