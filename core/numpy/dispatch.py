"""Operators, methods and NumPy's dispatch protocols on Tracer, wired to the NumPy layer."""
from __future__ import annotations

import operator

import numpy as np

from ..tracing import Tracer
from .base import (NUMPY_FUNCTIONS, WEAK_PYTHON_TYPE, assign_into, copy_of,
                   numpy_name, unsupported)
from .checks import python_int
from .conversion import astype, np_copy, np_round, python_number, view
from .indexing import getitem, setitem
from .masked import MaskedSelection
from .products import matmul
from .shape import (flat_view, np_imag, np_real, np_reshape, np_swapaxes, np_transpose,
                    set_shape)
from .sorting import sort_in_place
from .subclasses import refuse_subclass_types, refuse_subclasses
from .ufunc_methods import ufunc_method
from .ufuncs import (COMPARISON_UFUNCS, OPERATOR_UFUNCS, binary_operator, call_ufunc,
                     inplace_binary)


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if any(isinstance(x, MaskedSelection) for x in inputs):
        return NotImplemented           # the selection's own __array_ufunc__ handles it
    out = kwargs.get("out")
    refuse_subclasses(inputs + (out if isinstance(out, tuple) else (out,)))
    return ufunc_method(ufunc, method, *inputs, **kwargs)


def _array_function(self, func, types, args, kwargs):
    if MaskedSelection in types:
        return NotImplemented
    refuse_subclass_types(types)
    impl = NUMPY_FUNCTIONS.get(func)
    if impl is None:
        raise unsupported(numpy_name(func))
    return impl(*args, **kwargs)




def _matmul(self, other):
    return matmul(self, other)


def _rmatmul(self, other):
    return matmul(other, self)


def _imatmul(self, other):
    return assign_into(self, matmul(self, other), "@=")


def _divmod(self, other):
    return call_ufunc(np.floor_divide, self, other), call_ufunc(np.remainder, self, other)


def _reshape_method(self, *shape, order="C", copy=None):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    return np_reshape(self, shape, order, copy=copy)


def _transpose_method(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    return np_transpose(self, axes or None)


def _fill(self, value):
    if np.ndim(value) != 0:
        raise ValueError("Input object to FillWithScalar is not a scalar")
    setitem(self, Ellipsis, value)      # setitem's casting (unsafe), as NumPy fills


def _flatten(self, order="C"):
    return copy_of(np_reshape(self, (-1,))).with_kind("array")


def _conj(self):
    """ndarray.conj(): the array itself unless it is complex (then the conjugate ufunc)."""
    return call_ufunc(np.conjugate, self) if self.dtype.kind == "c" else self


def attach():
    for name, ufunc in OPERATOR_UFUNCS.items():
        setattr(Tracer, f"__{name}__", binary_operator(ufunc))
        setattr(Tracer, f"__r{name}__", binary_operator(ufunc, reflected=True))
        setattr(Tracer, f"__i{name}__", inplace_binary(ufunc))
    for name, ufunc in COMPARISON_UFUNCS.items():
        setattr(Tracer, f"__{name}__", binary_operator(ufunc))
    Tracer.__hash__ = object.__hash__
    Tracer.__neg__ = lambda self: call_ufunc(np.negative, self)
    Tracer.__pos__ = lambda self: call_ufunc(np.positive, self)
    Tracer.__abs__ = lambda self: call_ufunc(np.absolute, self)
    Tracer.__invert__ = lambda self: call_ufunc(np.invert, self)
    Tracer.__matmul__ = _matmul
    Tracer.__rmatmul__ = _rmatmul
    Tracer.__imatmul__ = _imatmul
    Tracer.__divmod__ = _divmod
    Tracer.__getitem__ = getitem
    Tracer.__setitem__ = setitem
    Tracer.__array_ufunc__ = _array_ufunc
    Tracer.__array_function__ = _array_function
    Tracer.T = property(lambda self: np_transpose(self))
    Tracer.mT = property(lambda self: np_swapaxes(self, -1, -2))
    Tracer.real = property(np_real, _part_setter(np_real))
    Tracer.imag = property(np_imag, _part_setter(np_imag))
    Tracer.shape = property(lambda self: self.aval.shape, set_shape)
    Tracer.dtype = property(lambda self: self.aval.dtype, _refuse_setting("dtype", (
        "it reinterprets the bytes as another type", "use x.astype(dtype) or x.view(dtype)")))
    Tracer.strides = property(_strides, _refuse_setting("strides", (
        "psc_jit does not reinterpret memory", "use np.lib.stride_tricks outside the cell")))
    Tracer.flat = property(flat_view)
    Tracer.reshape = _reshape_method
    Tracer.transpose = _transpose_method
    Tracer.astype = _tracer_astype
    Tracer.view = _tracer_view
    Tracer.copy = lambda self, order="C": np_copy(self)
    Tracer.fill = _fill
    Tracer.item = _item
    Tracer.tolist = _tolist
    Tracer.__round__ = _round
    Tracer.flatten = _flatten
    Tracer.conj = Tracer.conjugate = _conj
    for name in ("sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "argmax",
                 "argmin", "cumsum", "cumprod", "ravel", "squeeze", "swapaxes", "clip", "dot",
                 "repeat", "take", "argsort", "round", "nonzero", "diagonal", "trace",
                 "searchsorted"):
        fn = getattr(np, name)
        setattr(Tracer, name, _numpy_method(fn))
    Tracer.sort = sort_in_place   # ndarray.sort sorts in place, returns None


def _part_setter(part):
    """`z.real = x`, `z.imag = y`: a write into that part (a view of z)."""
    def setter(self, value):
        view = part(self)
        if view.kind != "array" or (part is np_imag and self.dtype.kind != "c"):
            raise TypeError("array does not have imaginary part to set")
        setitem(view, Ellipsis, value)
    return setter


def _strides(self):
    """NumPy's strides, where psc_jit follows the layout NumPy gave the array."""
    self._buffer.trace.root.layout_questions += 1
    found = {layout.strides for layout in self.possible_layouts()}
    if len(found) != 1:
        raise unsupported(".strides of an array whose memory layout NumPy chose",
                          "read the strides of the arrays passed in, outside the traced code")
    return found.pop()


def _refuse_setting(name: str, why: tuple[str, str]):
    def setter(self, value):
        raise unsupported(f"setting .{name} ({why[0]})", why[1])
    return setter


def python_type_name(x) -> str:
    """The name of the Python type a tracer of kind "python" stands for."""
    return "bool" if x.dtype == np.bool_ else WEAK_PYTHON_TYPE[x.dtype.kind].__name__


def _require_numpy_value(x: Tracer, name: str) -> None:
    """A Python int or float has none of NumPy's methods (.sum(), .astype()): the cell's own
    AttributeError."""
    if x.kind == "python":
        raise AttributeError(f"'{python_type_name(x)}' object has no attribute '{name}'")


def _tracer_astype(self, dtype, *args, **kwargs):
    _require_numpy_value(self, "astype")
    return astype(self, dtype, *args, **kwargs)


def _tracer_view(self, *args, **kwargs):
    _require_numpy_value(self, "view")
    return view(self, *args, **kwargs)


def _item(self, *args):
    """x.item(), x.item(i), x.item(i, j): one element as the Python number NumPy gives, traced
    (a float stays in the program: `m = x.mean().item()`)."""
    _require_numpy_value(self, "item")
    if not args:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        element = np_reshape(self, ())
    elif len(args) == 1 and not isinstance(args[0], tuple):
        flat = np_reshape(self, (self.size,))
        if isinstance(args[0], (int, np.integer)) and not -self.size <= args[0] < self.size:
            raise IndexError(f"index {args[0]} is out of bounds for axis 0 with size {self.size}")
        element = getitem(flat, args[0])
    else:
        element = getitem(self, args[0] if len(args) == 1 else args)
    return python_number(python_int(element) if element.dtype == np.uint64 else element)


# x.tolist() of a traced array: a list (of lists) of traced Python numbers, for arrays up to
# this size (each element is one more value of the program)
TOLIST_ELEMENTS = 256


def _tolist(self):
    """x.tolist(): NumPy's nested lists of Python numbers, each traced."""
    _require_numpy_value(self, "tolist")
    if self.size > TOLIST_ELEMENTS:
        raise unsupported(f".tolist() of {self.size:,} traced elements (more than "
                          f"{TOLIST_ELEMENTS})", "keep it an array, or convert it after the "
                          "cell")
    if self.ndim == 0:
        return _item(self)
    return [_tolist(getitem(self, i)) for i in range(self.shape[0])]


def _round(self, ndigits=None):
    """round(x) of a traced scalar: half to even, a Python int; round(x, n): what NumPy's
    scalars do (np.round), while a Python float's own rounding of decimal digits (exact) is
    refused."""
    if self.ndim != 0 or self.dtype.kind not in "biuf":
        raise TypeError(f"type {'numpy.ndarray' if self.ndim else self.dtype} doesn't define "
                        f"__round__ method")
    if ndigits is None:
        rounded = call_ufunc(np.rint, self) if self.dtype.kind == "f" else self
        return python_number(python_int(rounded))
    if isinstance(ndigits, Tracer):
        raise unsupported("round(x, ndigits) with a traced ndigits", "make ndigits a Python int")
    if self.kind == "python" and self.dtype.kind == "f":
        raise unsupported("round(x, ndigits) of a Python float (Python rounds its decimal "
                          "digits exactly)", "use np.round(x, ndigits), or keep x a NumPy float")
    return np_round(self, operator.index(ndigits))


def _numpy_method(fn):
    def method(self, *args, **kwargs):
        _require_numpy_value(self, fn.__name__)
        impl = NUMPY_FUNCTIONS.get(fn)
        if impl is None:
            raise unsupported(f".{fn.__name__}()")
        return impl(self, *args, **kwargs)
    method.__name__ = fn.__name__
    return method


attach()
