"""Values of a subclass in traced code: a masked array, a matrix, a record or character array,
a memmap, a subclass of the user's (of ndarray, of a NumPy scalar type, of float or complex).
Traced as their base type they would lose what their class adds (the mask, `*` as a matrix
product, the user's own `__add__`, `__setitem__`, attributes and `__array_finalize__`). So
wherever one enters traced code it is refused at its line, and the code runs as plain Python:
read from outside (`reads.Recorder.read`), made by a call (`convert.call`: refused before the
call when the function is known to make one, after it otherwise), or handed to NumPy with a
traced value (`tracing.refuse_subclasses`). Arguments are refused by the signature
(`compile.signature.SubclassArgument`).
"""
from __future__ import annotations

import numpy as np

from ..numpy.subclasses import plain_base, subclass_error, subclass_type_message
from ..tracing import UnsupportedError, caller_source

# NumPy's functions that make a subclass of ndarray, by module (or by the function itself),
# with the class they make and the name a user calls them by: refused before they run on a
# traced value (whose conversion to a concrete array would otherwise be the reason given).
_MAKING_MODULES = {"numpy.ma": (np.ma.MaskedArray, "np.ma."),
                   "numpy.rec": (np.recarray, "np.rec."),
                   "numpy.matrixlib": (np.matrix, "np.")}
_MAKING_FUNCTIONS = {np.asmatrix: (np.matrix, "np."), np.bmat: (np.matrix, "np."),
                     np.char.array: (np.char.chararray, "np.char."),
                     np.char.asarray: (np.char.chararray, "np.char.")}


def subclass_made_by(fn) -> tuple[type, str] | None:
    """(the subclass of ndarray a call of fn makes, the name fn is called by) when fn is
    known to make one: a subclass itself (`np.matrix`, `MySub`), NumPy's masked, record and
    matrix functions."""
    if isinstance(fn, type):
        return (fn, fn.__qualname__) if issubclass(fn, np.ndarray) and fn is not np.ndarray \
            else None
    try:
        found = _MAKING_FUNCTIONS.get(fn)
    except TypeError:               # (an unhashable callable)
        return None
    module = getattr(fn, "__module__", None)
    if found is None and isinstance(module, str) and module.startswith("numpy."):
        found = next((made for prefix, made in _MAKING_MODULES.items()
                      if module == prefix or module.startswith(prefix + ".")), None)
    return None if found is None else (found[0], found[1] + getattr(fn, "__name__", "?"))


def subclass_call_error(fn) -> UnsupportedError | None:
    """The error refusing a call that makes a subclass of ndarray, before it runs (None:
    fn is not known to make one)."""
    made = subclass_made_by(fn)
    if made is None:
        return None
    message, hint = subclass_type_message(made[0], np.ndarray, f"what {made[1]}(...) makes")
    return UnsupportedError(message, caller_source(), hint)


def made_subclass_error(fn, value) -> UnsupportedError | None:
    """The error refusing the value a call made when it is of a subclass (None: it is not)."""
    if plain_base(value) is None:
        return None
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "a call"))
    return subclass_error(value, f"what {name}(...) returns")
