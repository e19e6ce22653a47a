"""Refusals that must stand: a host call (`host_calls`) or a value of a subclass
(`numpy.subclasses`) found while tracing fails the trace even when the traced code catches
the error (`try: k = read_k() except Exception: k = 1.0` would otherwise compile the except
branch), and even when the call is made inside a library, which Python's audit events report
(a file opened by `configparser`, a directory listed), through a hook in C that passes on only
those events and only while a trace is watched (`_audit_events.c`; without the C module, host
calls are found by the function called alone).

`watching()` holds this state for one trace (`reads.recording` enters it); `sticky(error)`
keeps an error to raise again when the trace ends; the audit hook notes a library's host
event, and the call of converted code that made it raises it at its line (`convert.call`).
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from dataclasses import dataclass

from ..numpy.subclasses import subclass_error
from ..locations import CALLS_FOR_THE_USER
from ..tracing import UnsupportedError, caller_source, context_value
from .host_calls import (EVENT_PREFIXES, call_label, host_call_reason, host_event_reason,
                         host_value_reason)
from .subclasses import made_subclass_error, subclass_call_error


@dataclass
class Watch:
    """One trace's refusals: the first that must stand, and a library's host event not yet
    told at a line of the traced code."""
    refused: UnsupportedError | None = None
    host_event: str | None = None


_watch: contextvars.ContextVar[Watch | None] = contextvars.ContextVar("psc_jit_refusals",
                                                                       default=None)


try:        # core/frontend/_audit_events.c, when it was built
    from . import _audit_events
except ImportError:
    _audit_events = None


@contextlib.contextmanager
def watching():
    """The refusals of one trace: on a normal exit, the first kept one is raised. While it
    is watched, the audit events of host calls reach `_audit_hook` (filtered in C)."""
    watch = Watch()
    if _audit_events is not None:
        _audit_events.watch(_audit_hook, EVENT_PREFIXES)
        _audit_events.count(1)
    try:
        with context_value(_watch, watch):
            yield watch
    finally:
        if _audit_events is not None:
            _audit_events.count(-1)
    if watch.refused is not None:       # (the traced code caught it: the trace still fails)
        raise watch.refused


def sticky(error: UnsupportedError) -> UnsupportedError:
    """Keep error as a refusal of the current trace that must stand; returns it, to raise."""
    watch = _watch.get()
    if watch is not None and watch.refused is None:
        watch.refused = error
    return error


def refuse(error: UnsupportedError | None) -> None:
    """Raise error, when there is one, as a refusal that must stand."""
    if error is not None:
        raise sticky(error)


def refuse_call(fn, args, kwargs, reason: str | None = None) -> None:
    """Refuse, before it runs, a call traced code makes that is a host call (`host_calls`;
    `reason` when the caller knows it is one) or makes a value of a subclass."""
    reason = reason or host_call_reason(fn, args, kwargs)
    refuse(UnsupportedError(reason, caller_source()) if reason is not None else
           subclass_call_error(fn))


def call_watched(fn, made, args, kwargs):
    """`made(*args, **kwargs)`, traced code's call of fn: a host call a library makes inside
    it (its audit event) is refused at the line of this call, also when the library caught
    the error, and so is a value of a subclass it returns."""
    try:
        result = made(*args, **kwargs)
    except UnsupportedError:
        event = take_host_event()
        if event is None:
            raise
        refuse(UnsupportedError(f"{call_label(fn)} {event}", caller_source()))
    event = take_host_event()
    refuse(UnsupportedError(f"{call_label(fn)} {event}", caller_source()) if event else
           made_subclass_error(fn, result))
    return result


CALLS_FOR_THE_USER.add(call_watched.__code__)


def take_host_event() -> str | None:
    """The reason of a host call a library made (seen by its audit event), forgotten once
    told; None when there was none."""
    watch = _watch.get()
    if watch is None or watch.host_event is None:
        return None
    reason, watch.host_event = watch.host_event, None
    return reason


def outside_value_error(value, what: str) -> UnsupportedError | None:
    """The error refusing a value read from outside traced code that compiled code must not
    take as it is: the process environment (`host_calls`), or a value of a subclass
    (`numpy.subclasses`); None for any other value."""
    reason = host_value_reason(value)
    if reason is not None:
        return UnsupportedError(reason, caller_source())
    return subclass_error(value, what)


def _audit_hook(event: str, args: tuple) -> None:
    """Python's audit hook: while a trace is watched, an event of a host call that traced
    code made (in a library too) is noted and raised; `convert.call` raises it again at the
    line of the call, even if the library swallowed it."""
    watch = _watch.get()
    if watch is None or watch.host_event is not None:
        return
    reason = host_event_reason(event, args)
    if reason is None or not _made_by_traced_code(sys._getframe(1)):
        return
    watch.host_event = reason
    raise UnsupportedError(reason)


_PSC_CORE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _made_by_traced_code(frame) -> bool:
    """Whether an event comes from a call the traced code made (or a library it called made),
    not from psc_jit's own work (reading a function's source can open its file) nor from
    an import (which reads its files once). Traced code's calls are made by `call_watched`,
    so the first frame of psc_jit's core met going out tells."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<frozen importlib"):
            return False
        if code.co_filename.startswith(_PSC_CORE):
            return code is call_watched.__code__
        frame = frame.f_back
    return False
