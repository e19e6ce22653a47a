"""`assert` and `raise` on traced values, in rewritten code: what only the run can decide
becomes a run-time check (`tracing.RuntimeCheck`) that raises the user's own error.

- `assert test, msg` calls `assert_`: a traced test is checked by the run (AssertionError).
- A branch of a traced `if` that raises the user's error while traced (`raising` tells
  `runtime.convert_if`) must not be taken: a check raising a copy of that error (`RaiseAgain`).
- `raise E(f"... {traced} ...")` calls `error`, which keeps E and the message as written.

A cell whose check fails runs as plain Python, which raises the error with its own message
and traceback.
"""
from __future__ import annotations

import copy

from ..numpy.checks import escaped, require
from ..tracing import DataDependentShapeError, TraceError, Tracer
from ..control.carry import contains_tracer, to_pred


class BranchRaised(Exception):
    """Tracing a branch of a traced `if` raised the user's own error (`raise ValueError`):
    the branch raises whenever it is taken."""

    def __init__(self, branch: int, error: Exception):
        super().__init__(branch, error)
        self.branch, self.error = branch, error


def raising(fn, index: int):
    def run(*args):
        try:
            return fn(*args)
        except (TraceError, DataDependentShapeError, BranchRaised):
            raise
        except Exception as err:            # the user's code raised, whatever the values
            raise BranchRaised(index, err) from err
    return run


class RaiseAgain:
    """The error a branch raised while it was traced, raised again (a fresh copy) by a run
    that takes the branch (a RuntimeCheck's error)."""

    def __init__(self, error: Exception):
        self.error = error
        self.__name__ = type(error).__name__

    def __call__(self, _message: str) -> Exception:
        return copy.copy(self.error).with_traceback(None)


def error(make, kind, text: str):
    """The error of `raise E(msg)`: E(msg) itself, or, when making msg needs a traced value's
    text (an f-string of it) while tracing, E with msg as written in the source (a cell then
    runs as plain Python where it raises, which makes the message)."""
    try:
        return make()
    except TraceError:
        cls = kind()
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise
        return cls(f"{text} (a message made from traced values, shown as written)")


def assert_(test, message=None) -> None:
    """`assert test, message` (message a thunk): on a traced test, the run checks it and
    raises AssertionError (a cell then runs as plain Python, which raises it with its
    message)."""
    if isinstance(test, Tracer) and test.known_value() is None:
        text = ""
        if message is not None:
            try:
                value = message()
            except Exception:           # (plain Python makes it when the assertion fails)
                value = None
            text = "" if value is None or contains_tracer(value) else str(value)
        require(to_pred(test), escaped(text), AssertionError)
        return
    if not test:
        raise AssertionError(message()) if message is not None else AssertionError
