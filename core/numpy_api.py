"""The NumPy layer: NumPy's functions, ufuncs, operators and methods on tracers.

This is where NumPy's semantics live: NEP 50 promotion (NumPy itself is asked, through
`ufunc.resolve_dtypes` and `np.result_type`), broadcasting, accumulator dtypes of reductions,
NumPy scalars versus 0-d arrays. Below this layer primitives see one shape and one dtype.

`NUMPY_FUNCTIONS` maps each supported NumPy callable to its implementation on tracers; it is
the table `docs/coverage.md` is generated from.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

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
    if isinstance(x, Tracer):
        return x.kind == "python"
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
        squeezed = [i for i, (d, t) in enumerate(zip(x.shape, shape[offset:])) if d == 1 and t != 1]
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
    kwargs.pop("casting", None)
    kwargs.pop("order", None)
    if kwargs:
        raise unsupported(f"np.{ufunc.__name__}(..., {', '.join(kwargs)}=...)")
    if where is not True:
        raise unsupported(f"np.{ufunc.__name__}(..., where=...)", "use np.where(mask, f(x), x)")
    if ufunc.nout != 1:
        return _multi_output_ufunc(ufunc, inputs)
    result = _ufunc_value(ufunc, inputs, dtype)
    if out is not None:
        target = out[0] if isinstance(out, tuple) else out
        return assign_into(target, result, f"np.{ufunc.__name__}(..., out=...)")
    return result


def _ufunc_value(ufunc, inputs, dtype=None):
    special = SPECIAL_UFUNCS.get(ufunc)
    if special is not None:
        return special(*inputs) if dtype is None else convert_result(special(*inputs), dtype)
    name = UFUNC_PRIMITIVES.get(ufunc)
    if name is None:
        raise unsupported(f"np.{ufunc.__name__}")
    types = tuple(resolve_type(x) for x in inputs)
    try:
        loop = ufunc.resolve_dtypes(types + (None,), casting="same_kind") if dtype is None else \
            ufunc.resolve_dtypes(types + (np.dtype(dtype),), casting="unsafe")
    except (TypeError, np.exceptions.DTypePromotionError) as err:
        raise TypeError(f"np.{ufunc.__name__} does not support {types}: {err}") from None
    in_dtypes, out_dtype = loop[:ufunc.nin], loop[-1]
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
        x = inputs[0]
        whole = call_ufunc(np.trunc, x)
        return call_ufunc(np.subtract, x, whole), whole
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
    return _ufunc_value(np.power, (x, y))


def _float_power(x, y):
    dtype = np.result_type(result_type(x, y), np.float64)
    return call_ufunc(np.power, convert_result(ensure_tracer(x), dtype), convert_result(
        ensure_tracer(y), dtype))


def _fmod(x, y):
    dtype = result_type(x, y)
    xs = convert_result(ensure_tracer(x), dtype)
    ys = convert_result(ensure_tracer(y), dtype)
    return call_ufunc(np.subtract, xs, call_ufunc(np.multiply, ys, _trunc_div(xs, ys)))


def _trunc_div(x, y):
    if dtype_of(x).kind in "iu":
        q = call_ufunc(np.floor_divide, call_ufunc(np.abs, x), call_ufunc(np.abs, y))
        negative = call_ufunc(np.not_equal, call_ufunc(np.less, x, 0), call_ufunc(np.less, y, 0))
        return np_where(negative, call_ufunc(np.negative, q), q)
    return _trunc(call_ufunc(np.divide, x, y))


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
    np.fmod: _fmod,
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


def ufunc_method(ufunc: np.ufunc, method: str, *inputs, **kwargs):
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


def _reduce(prim_name, x, axis, keepdims, dtype=None, out_kind=None):
    x = ensure_tracer(x)
    axes = normalize_axes(axis, x.ndim)
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
    _check_nonempty(a, normalize_axes(axis, a.ndim), "maximum")
    return _reduce("reduce_max", a, axis, keepdims)


@implements(np.min, np.amin)
def np_min(a, axis=None, keepdims=False, **extras):
    _no_extras("np.min", **extras)
    a = ensure_tracer(a)
    _check_nonempty(a, normalize_axes(axis, a.ndim), "minimum")
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
        squared = call_ufunc(np.real, call_ufunc(np.multiply, centered, call_ufunc(np.conjugate,
                                                                                   centered)))
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
    if axis is None:
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


_UFUNC_ACCUMULATORS = {
    np.add: lambda a, axis=0, dtype=None, out=None: np_cumsum(a, axis, dtype, out),
    np.multiply: lambda a, axis=0, dtype=None, out=None: np_cumprod(a, axis, dtype, out),
    np.maximum: _accumulate_minmax("cummax"),
    np.minimum: _accumulate_minmax("cummin"),
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
    out = dot_general(a, b, ((a.ndim - 1,), (contract_b,)), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


@implements(np.vdot)
def np_vdot(a, b):
    a, b = _promote_pair(a, b)
    a = call_ufunc(np.conjugate, reshape(a, (a.size,)))
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
    out = dot_general(a, b, (axes_a, axes_b), ((), ()))
    return as_kind(out, kind_of_result(out.ndim, [a, b]))


# -- complex parts ----------------------------------------------------------------------------

@implements(np.real)
def np_real(val):
    val = ensure_tracer(val)
    if val.dtype.kind != "c":
        return val
    return elementwise("real", val)


@implements(np.imag)
def np_imag(val):
    val = ensure_tracer(val)
    if val.dtype.kind != "c":
        return as_kind(full(val.shape, 0, val.dtype), val.kind)
    return elementwise("imag", val)


@implements(np.conj, np.conjugate)
def np_conj(x, **kwargs):
    return call_ufunc(np.conjugate, x, **kwargs)


@implements(np.angle)
def np_angle(z, deg=False):
    z = ensure_tracer(z)
    if z.dtype.kind != "c":
        z = convert(z, np.result_type(z.dtype, np.float64) if z.dtype.kind in "biu" else z.dtype)
        result = call_ufunc(np.arctan2, full(z.shape, 0, z.dtype), z)
    else:
        result = call_ufunc(np.arctan2, np_imag(z), np_real(z))
    return call_ufunc(np.multiply, result, 180 / np.pi) if deg else result


@implements(np.round, np.around)
def np_round(a, decimals=0, out=None):
    a = ensure_tracer(a)
    if decimals == 0 or a.dtype.kind in "biu" and decimals >= 0:
        result = call_ufunc(np.rint, a) if a.dtype.kind not in "biu" else a
    else:
        factor = 10.0 ** decimals
        result = call_ufunc(np.divide, call_ufunc(np.rint, call_ufunc(np.multiply, a, factor)),
                            factor)
    return assign_into(out, result, "np.round(..., out=...)") if out is not None else result


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
    return Tracer(type(x._buffer)(x.ir_var, x._buffer.trace), kind=x.kind)


@implements(np.copy)
def np_copy(a, order="K", subok=False):
    return copy_of(ensure_tracer(a)).with_kind("array")


@implements(np.asarray, np.asanyarray, np.ascontiguousarray)
def np_asarray(a, dtype=None, order=None, **kwargs):
    a = ensure_tracer(a)
    result = a if dtype is None or np.dtype(dtype) == a.dtype else convert(a, dtype)
    return result.with_kind("array") if result.kind != "array" else result


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
    def method(self, other):
        result = call_ufunc(ufunc, self, other)
        assign_into(self, result, f"an in-place {ufunc.__name__}")
        return self
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
