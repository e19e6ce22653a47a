"""jaxlib's C++ dispatcher (the one behind jax.jit): a cache-hit call with no Python of
psc_jit's, and the settings it reads."""
from __future__ import annotations

import contextlib
import functools
import operator
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import XlaError
from ..fastpath import FastPath, Finished
from .runtime import _jaxlib, _sharding

if TYPE_CHECKING:
    from . import Executable

DISPATCH_ENTRIES = 4096        # call signatures the C++ dispatcher keeps (an LRU)
PROGRAM_DISPATCH_ENTRIES = 4   # ... the one of a single program (its inputs' one signature)
_DISPATCHERS: list[str] = []   # a dispatcher was made (their settings exist)
JAX_X64 = "jax_enable_x64"     # jax's setting, once jax is imported in the process
OWN_X64 = "psc_jit_enable_x64"


@functools.cache
def _registry():
    _, _jax, _ = _jaxlib()
    registry = _jax.pytree.PyTreeRegistry(False, False, False, False, False)   # all leaves
    registry.register_node(Finished, Finished.parts, operator.call)
    return registry


@functools.cache
def _tracing_setting():
    """The settings the C++ dispatcher reads: whether 64-bit inputs are kept (x64), whether
    jit is disabled, a hook after each call. jax registers its own when it is imported (before
    or after psc_jit: then jax's rule); without jax they are psc_jit's (x64 on, jit on, no
    hook). Returns psc_jit's own setting "inside a psc_jit trace", part of every call
    signature, so that a hit never happens inside a trace (the call joins the trace instead)."""
    _, _jax, _ = _jaxlib()
    config = _jax.config
    tracing = config.Config("psc_jit_tracing", False, include_in_jit_key=True)
    if JAX_X64 not in config.trace_context_names():
        _jax.jax_jit.set_enable_x64_state(config.Config(
            OWN_X64, True, include_in_jit_key=True, include_in_trace_context=True))
        _jax.jax_jit.set_disable_jit_state(config.Config("psc_jit_disable_jit", False))
        _jax.jax_jit.set_post_hook_state(config.Config("psc_jit_post_hook", None))
    return tracing


def keeps_64_bit() -> bool:
    """Whether the C++ dispatcher keeps 64-bit inputs in this thread (jax's x64 off would make
    f64 inputs f32); x64 is part of every signature, so flipping it makes calls miss again."""
    _, _jax, _ = _jaxlib()
    names, values = _jax.config.trace_context_names(), _jax.config.trace_context()
    return next((values[names.index(n)] is True for n in (JAX_X64, OWN_X64) if n in names),
                False)


@contextlib.contextmanager
def tracing_in_progress():
    """Inside: this thread is tracing, which is part of the dispatcher's key, so that a call
    inside a trace never hits (it joins the trace). Nothing to say before a dispatcher is made:
    a trace running then made no entry it could hit."""
    if not _DISPATCHERS:
        yield
        return
    setting = _tracing_setting()
    previous = setting.swap_local(True)
    try:
        yield
    finally:
        setting.set_local(previous)


def _no_shard_fallback(value, sharding, layout):
    raise XlaError("psc_jit's dispatcher cannot place this input on the device")


def dispatcher(name: str, python_call: Callable, cache_miss: Callable,
               static: int = 1, entries: int = DISPATCH_ENTRIES) -> Callable:
    """jaxlib's C++ dispatcher (the one behind jax.jit): its first `static` arguments are
    static (part of the key, compared with ==), the others the call's inputs. A call whose
    signature
    (shapes, dtypes, weak types, the settings above) it has a FastPath for runs the executable
    in C++; any other goes to `cache_miss(*args, **kwargs)`, which returns (result,
    FastPath or None, whether to forget the signature again); with jit disabled (jax's
    `disable_jit`) to `python_call`."""
    _, _jax, _ = _jaxlib()
    _tracing_setting()
    if not _DISPATCHERS:
        _DISPATCHERS.append(name)
    return _jax.pjit(name, python_call, cache_miss, list(range(static)), [], name, _registry(),
                     _no_shard_fallback, _jax.PjitFunctionCache(entries))


def clear_dispatcher(dispatch: Callable) -> None:
    dispatch._clear_cache()


def dispatched_type(value) -> tuple[tuple[int, ...], np.dtype] | None:
    """(shape, dtype) the C++ dispatcher gives an argument with 64-bit types kept, or None
    when it takes no such value."""
    _, _jax, _ = _jaxlib()
    try:
        signature = _jax.jax_jit._ArgSignatureOfValue(value, True)
    except Exception:       # jaxlib raises its own JaxRuntimeError for a value it refuses
        return None
    return tuple(signature.shape), np.dtype(signature.dtype)


def fast_path(executable: Executable, finish: Callable[[tuple], Any]) -> FastPath:
    """The dispatcher's FastPath for an executable whose inputs are a call's arguments, in
    order; `finish(results)` makes the call's return value. The caller sees to the inputs'
    layout: a large misaligned input (`executable.stages_inputs`) would be copied by jaxlib
    afresh on every call, and its results must then be waited for."""
    n_in, n_out = len(executable.in_avals), len(executable.out_avals)
    _, treedef = _registry().flatten(Finished(n_out, finish))
    sharding = _sharding(executable.inline)
    return FastPath(executable._loaded, treedef, [sharding] * n_in, [sharding] * n_out,
                    list(executable.out_avals), [True] * n_out, [True] * n_in, [None] * n_in,
                    [])
