"""What traced code takes without naming it, read as any other read (`reads.Recorder.read`):
a partial's stored arguments and a user function's array defaults (`seen_arguments`, for
`convert.call`), and an object's attributes as `vars(obj)` gives them (`vars_of`). An array
among them becomes an input, so a re-run sees it changed in place. And what no read can
see: the namespace `globals()` hands over, refused (`globals_refused`).
"""
from __future__ import annotations

import functools

from ..tracing import UnsupportedError, caller_source
from . import reads
from .reads import is_user_function


def seen_arguments(recorder, fn, args, kwargs):
    """What a call passes without the code naming it, read as any other read (an array among
    them an input, seen changed in place on a re-run): a partial's stored arguments, and the
    defaults a user function takes that are not numbers or strings (fixed when the `def`
    ran, but an array may change in place)."""
    if isinstance(fn, functools.partial):
        source = recorder.source_of(fn)
        if source is None:
            return fn, args, kwargs
        stored = [recorder.read(a, source.then("attr", "args").then("item", i))
                  for i, a in enumerate(fn.args)]
        keywords = {k: recorder.read(v, source.then("attr", "keywords").then("item", k))
                    for k, v in fn.keywords.items()}
        func = recorder.read(fn.func, source.then("attr", "func"))   # (its own reads seen)
        return func, (*stored, *args), {**keywords, **kwargs}
    func = getattr(fn, "__func__", fn)
    defaults = getattr(func, "__defaults__", None) or ()
    keyword_defaults = getattr(func, "__kwdefaults__", None) or {}
    if not is_user_function(func) or all(
            _fixed(d) for d in (*defaults, *keyword_defaults.values())):
        return fn, args, kwargs
    source = recorder.source_of(func)
    if source is None:
        return fn, args, kwargs
    code = func.__code__
    params = code.co_varnames[code.co_posonlyargcount:code.co_argcount]
    given = len(args) + (fn is not func) - code.co_posonlyargcount
    first = code.co_argcount - len(defaults)
    kwargs = dict(kwargs)
    for k, default in enumerate(defaults):
        position = first + k - code.co_posonlyargcount
        if position < 0 or position < given or params[position] in kwargs or _fixed(default):
            continue
        kwargs[params[position]] = recorder.read(
            default, source.then("attr", "__defaults__").then("item", k))
    for name, default in keyword_defaults.items():
        if name not in kwargs and not _fixed(default):
            kwargs[name] = recorder.read(
                default, source.then("attr", "__kwdefaults__").then("item", name))
    return fn, args, kwargs


def _fixed(default) -> bool:
    """Whether a default cannot change after the `def` ran (a number, a string, a tuple of
    such): one that can (an array, a list, a tuple holding one) is read on every call."""
    if isinstance(default, tuple):
        return all(_fixed(d) for d in default)
    return isinstance(default, _FIXED_DEFAULTS)


_FIXED_DEFAULTS = (bool, int, float, complex, str, bytes, type(None))


def vars_of(obj):
    """`vars(obj)` in converted code: obj's attributes, read as `obj.__dict__` (their names
    guarded, each value read when the code takes it)."""
    value = vars(obj)
    recorder = reads.current_recorder()
    source = recorder.source_of(obj) if recorder is not None else None
    return value if source is None else recorder.read(value, source.then("attr", "__dict__"))


def globals_refused():
    """`globals()` in converted code: the namespace itself, whose reads no guard sees and
    whose writes compiled code cannot replay; refused at its line (the code runs as plain
    Python)."""
    if reads.current_recorder() is None:
        raise RuntimeError("globals() in converted code runs only while tracing")
    raise UnsupportedError("globals() hands the code the namespace itself: compiled code "
                           "would neither see a change to what it reads there nor replay "
                           "what it writes", caller_source(),
                           "name the variable directly (K, not globals()['K'])")
