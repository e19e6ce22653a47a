"""Values that are more than what they would be traced as: instances of a strict subclass of
ndarray (a masked array, a matrix, a record or character array, a memmap, a subclass of the
user's), of a NumPy scalar type, of float or of complex. Traced as their base type they would
lose what their class adds (the mask, `*` as a matrix product, the user's own `__add__`,
`__setitem__`, attributes, `__array_finalize__`), so they are refused wherever they meet traced
code: here when NumPy hands one to a traced operation, in the frontend when code reads or makes
one (frontend/subclasses.py), in the signature when one is an argument.
"""
from __future__ import annotations

import numpy as np

from ..tracing import UnsupportedError, caller_source


def plain_base(value) -> type | None:
    """The type a value would be traced as (np.ndarray, its NumPy scalar type, float,
    complex) when its own type is a strict subclass of it, else None. Traced, such a value
    would lose what its class adds: a masked array its mask, a matrix its `*`, a subclass
    of the user's its methods and attributes."""
    kind = type(value)
    if kind is np.ndarray or kind is float or kind is complex:
        return None
    if isinstance(value, np.ndarray):
        return np.ndarray
    if isinstance(value, np.generic):
        base = value.dtype.type
        return base if kind is not base and issubclass(kind, base) else None
    if isinstance(value, (float, complex)):
        return float if isinstance(value, float) else complex
    return None


_NUMPY_CLASS_NAMES = {"MaskedArray": "np.ma.MaskedArray", "MaskedConstant": "np.ma.MaskedConstant",
                      "matrix": "np.matrix", "recarray": "np.recarray",
                      "chararray": "np.char.chararray", "memmap": "np.memmap"}
_LOST = {"MaskedArray": "its mask", "MaskedConstant": "its mask",
         "matrix": "its matrix semantics (`*` is a matrix product, results stay 2-d)"}


def subclass_message(value, what: str) -> tuple[str, str]:
    """(message, what to write instead) for a value whose type is a strict subclass of what
    it would be traced as (`plain_base`): `what` names it (`m`, `W (read by f)`)."""
    return subclass_type_message(type(value), plain_base(value), what)


def subclass_type_message(kind: type, base: type, what: str) -> tuple[str, str]:
    numpy_own = kind.__module__.startswith("numpy")
    name = _NUMPY_CLASS_NAMES.get(kind.__name__, kind.__qualname__) if numpy_own else \
        kind.__qualname__ if kind.__module__ == "__main__" else \
        f"{kind.__module__}.{kind.__qualname__}"
    base_name = "ndarray" if base is np.ndarray else base.__name__ if base in (float, complex) \
        else f"np.{base.__name__}"
    lost = _LOST.get(kind.__name__) if numpy_own else None
    message = (f"{what} is a {name}, a subclass of {base_name}: compiled as a plain "
               f"{base_name} it would lose "
               f"{lost or 'what its class adds (its own methods and attributes)'}")
    if base is np.ndarray:
        plain = "np.asarray(...)" + (", or .filled(value) of a masked array"
                                     if "Masked" in kind.__name__ else "")
        hint = f"use plain arrays in compiled code ({plain}), or run it without psc_jit"
    else:
        hint = f"use a plain {base_name} in compiled code ({base_name}(...)), or run it " \
               "without psc_jit"
    return message, hint


def refuse_subclasses(values, what: str = "an operand") -> None:
    """UnsupportedError at the user's line when one of values is of a subclass that tracing
    would take as its plain base (`plain_base`)."""
    for value in values:
        error = subclass_error(value, what)
        if error is not None:
            raise error


def subclass_error(value, what: str) -> UnsupportedError | None:
    """The error refusing a value of a subclass at the user's line (None: not one)."""
    if plain_base(value) is None:
        return None
    message, hint = subclass_message(value, what)
    return UnsupportedError(message, caller_source(), hint)


def refuse_subclass_types(types) -> None:
    """As `refuse_subclasses`, for the argument types NumPy hands `__array_function__`."""
    for kind in types:
        if kind is not np.ndarray and issubclass(kind, np.ndarray):
            message, hint = subclass_type_message(kind, np.ndarray, "an argument")
            raise UnsupportedError(message, caller_source(), hint)
