"""Tracing: Tracer objects stand in for arrays while a function runs on abstract values.

Real NumPy calls on tracers dispatch (through `__array_ufunc__`, `__array_function__`,
operators and methods, see `numpy_api`) to `bind`, which records one equation per primitive
in the current `Trace`. There is one tracing context, held in a ContextVar.

A tracer is a *view* of a `Buffer`: a mutable box holding the current value of one array.
Basic slicing, transposes and reshapes make views of the same buffer, so an in-place update
through any of them changes what every other view reads, as it does in NumPy.
"""
from __future__ import annotations

import contextlib
import contextvars
import linecache
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var, aval_of
from .registry import Primitive

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(np.__file__)
_SKIP_DIRS = (os.path.dirname(os.path.abspath(__file__)), _NUMPY_DIR)


class TraceError(Exception):
    """The function cannot be traced as written; `reason` says why, `source` where."""

    def __init__(self, message: str, source: SourceInfo | None = None, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.source = source
        self.hint = hint

    def explain(self) -> str:
        """`line 3: 'if x.sum() > 0': <message>; <hint>`"""
        where = ""
        if self.source is not None:
            text = source_line(self.source)
            where = f"line {self.source.line}: " + (f"'{text}': " if text else "")
        return where + self.message + (f"; {self.hint}" if self.hint else "")


class ConcretizationError(TraceError):
    """A traced value was needed as a Python value (bool, int, float, index)."""


class UnsupportedError(TraceError):
    """A NumPy function, method or argument that psc_jit does not compile."""


def source_line(source: SourceInfo) -> str:
    return linecache.getline(source.file, source.line).strip()


# -- the trace --------------------------------------------------------------------------------

_current_trace: contextvars.ContextVar[Trace | None] = contextvars.ContextVar(
    "psc_jit_trace", default=None)


def current_trace() -> Trace | None:
    return _current_trace.get()


@contextlib.contextmanager
def tracing(trace: Trace):
    token = _current_trace.set(trace)
    try:
        yield trace
    finally:
        _current_trace.reset(token)


class Trace:
    """Records equations while a function runs on tracers."""

    def __init__(self):
        self.eqns: list[Eqn] = []
        self.buffers: list[Buffer] = []

    def new_input(self, aval: ShapedArray, kind: str) -> Tracer:
        buf = Buffer(Var(aval), self)
        self.buffers.append(buf)
        return Tracer(buf, kind=kind)

    def bind(self, prim: Primitive, *args: Any, **params: Any) -> list[Var]:
        atoms = [to_atom(a) for a in args]
        avals_out = prim.abstract_eval(*(a.aval for a in atoms), **params)
        outs = tuple(Var(aval) for aval in avals_out)
        self.eqns.append(Eqn(prim, tuple(atoms), params, outs, caller_source()))
        return list(outs)

    def to_graph(self, in_vars, out_atoms) -> Graph:
        return Graph(tuple(in_vars), tuple(self.eqns), tuple(out_atoms))


def bind(prim: Primitive, *args: Any, kind: str = "array", **params: Any):
    """Record `prim` applied to args in the current trace; return tracer(s) of its results."""
    trace = current_trace()
    if trace is None:
        raise RuntimeError(f"{prim.name} was bound outside of a trace")
    outs = trace.bind(prim, *args, **params)
    tracers = [Tracer(Buffer(v, trace), kind=kind) for v in outs]
    return tracers if prim.multiple_results else tracers[0]


def to_atom(x: Any):
    if isinstance(x, Tracer):
        return x.ir_var
    if isinstance(x, (Var, Literal)):
        return x
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return Literal(np.asarray(x), aval_of(x))
    return Literal.of(np.asarray(x))


# -- source locations -------------------------------------------------------------------------

_positions_cache: dict[Any, list] = {}


def caller_source() -> SourceInfo | None:
    """The innermost frame outside psc_jit's core and NumPy: the user's line."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_SKIP_DIRS) and "<__array_function__" not in filename:
            return _frame_source(frame)
        frame = frame.f_back
    return None


def _frame_source(frame) -> SourceInfo:
    code = frame.f_code
    positions = _positions_cache.get(code)
    if positions is None:
        positions = _positions_cache[code] = list(code.co_positions())
    index = frame.f_lasti // 2
    line, end_line, col, end_col = positions[index] if index < len(positions) else (
        frame.f_lineno, None, 0, None)
    return SourceInfo(code.co_filename, line or frame.f_lineno, (col or 0) + 1,
                      end_line, (end_col + 1) if end_col is not None else None, code.co_name)


# -- buffers and views ------------------------------------------------------------------------

@dataclass(eq=False)
class Buffer:
    """The current value of one array during a trace; in-place updates replace `var`."""
    var: Var
    trace: Trace
    version: int = 0
    initial: Var = field(init=False)

    def __post_init__(self):
        self.initial = self.var

    @property
    def mutated(self) -> bool:
        return self.var is not self.initial

    def assign(self, var: Var) -> None:
        if var.aval.shape != self.var.aval.shape or var.aval.dtype != self.var.aval.dtype:
            raise TypeError(f"cannot assign {var.aval} to an array of {self.var.aval}")
        self.var = var
        self.version += 1


@dataclass(frozen=True)
class ViewStep:
    """One step from a base array to a view of it: how to read it, and how to write back."""
    read: Callable[[Any], Any]                   # base value -> view value (tracers)
    write: Callable[[Any, Any], Any]             # (base value, new view value) -> new base value
    probe: Callable[[np.ndarray], np.ndarray]    # the same step on an ndarray (for layout)
    describe: str


class Tracer:
    """An array inside a trace. Its kind is what NumPy would hand back: an `array`, a NumPy
    `scalar`, or a `python` scalar (weakly typed)."""
    __array_priority__ = 1000
    __slots__ = ("_buffer", "_path", "_cached", "kind", "__weakref__")

    def __init__(self, buffer: Buffer, path: tuple[ViewStep, ...] = (), kind: str = "array"):
        self._buffer = buffer
        self._path = path
        self._cached: tuple[int, Var] | None = None
        self.kind = kind

    # value -------------------------------------------------------------------------------
    @property
    def ir_var(self) -> Var:
        """The IR variable holding this array's current value (re-read if its buffer changed)."""
        if not self._path:
            return self._buffer.var
        if self._cached is not None and self._cached[0] == self._buffer.version:
            return self._cached[1]
        value = Tracer(self._buffer)
        for step in self._path:
            value = step.read(value)
        self._cached = (self._buffer.version, value.ir_var)
        return value.ir_var

    @property
    def aval(self) -> ShapedArray:
        return self.ir_var.aval

    @property
    def is_view(self) -> bool:
        return bool(self._path)

    def view(self, step: ViewStep, kind: str = "array") -> Tracer:
        return Tracer(self._buffer, self._path + (step,), kind=kind)

    def assign(self, new_value: Tracer) -> None:
        """Replace this array's elements (all of them) with new_value, through the views."""
        values = [Tracer(self._buffer)]
        for step in self._path:
            values.append(step.read(values[-1]))
        new = new_value
        for step, old in zip(reversed(self._path), reversed(values[:-1]), strict=True):
            new = step.write(old, new)
        self._buffer.assign(new.ir_var)

    def layout(self) -> np.ndarray:
        """An ndarray with this view's exact strides, backed by no data: ask it layout
        questions (is a reshape a view?), never read it."""
        base = self._buffer.initial.aval
        strides = [base.dtype.itemsize] * base.ndim
        for i in range(base.ndim - 2, -1, -1):
            strides[i] = strides[i + 1] * max(base.shape[i + 1], 1)
        fake = np.lib.stride_tricks.as_strided(np.zeros(1, base.dtype), base.shape, strides,
                                               writeable=False)
        for step in self._path:
            fake = step.probe(fake)
        return fake

    def with_kind(self, kind: str) -> Tracer:
        return Tracer(self._buffer, self._path, kind=kind)

    # concretization: a traced value used as a Python value ---------------------------------
    def _concrete(self, what: str, hint: str):
        raise ConcretizationError(f"{what} of a traced value ({self.aval}) is needed at trace time",
                                  caller_source(), hint)

    def __bool__(self):
        self._concrete("the truth value", "branch with np.where(cond, a, b), or pass the value "
                       "as static (--static NAME)")

    def __int__(self):
        self._concrete("a Python int", "pass the value as static (--static NAME)")

    def __float__(self):
        self._concrete("a Python float", "keep it an array, or compute it outside the cell")

    def __complex__(self):
        self._concrete("a Python complex", "keep it an array")

    def __index__(self):
        self._concrete("an integer index", "index with a static value, or use np.take")

    def __iter__(self):
        if self.aval.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __len__(self):
        if self.aval.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __repr__(self):
        return f"Tracer<{self.aval}>"

    def __str__(self):
        self._concrete("the printed text", "print outside the cell, or return the value")

    def __array__(self, dtype=None, copy=None):
        self._concrete("a concrete NumPy array", "use NumPy functions on it instead of converting "
                       "it (np.asarray of a tracer)")

    def tolist(self):
        self._concrete("a Python list", "keep it an array")

    def item(self, *args):
        self._concrete("a Python scalar (.item())", "keep it an array")

    # shape facts are static -----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def itemsize(self) -> int:
        return self.aval.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.aval.nbytes

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type
