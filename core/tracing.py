"""Tracing: Tracer objects stand in for arrays while a function runs on abstract values.

NumPy calls on tracers dispatch (`__array_ufunc__`, `__array_function__`, operators, methods:
see `numpy`) to `bind`, which records one equation per primitive in the current `Trace`.

A tracer is a *view* of a `Buffer`: a mutable box holding the current value of one array.
Basic slicing, transposes and reshapes make views of the same buffer, so an in-place update
through any of them changes what every other view reads, as it does in NumPy.

Whether NumPy hands back a view or a copy can depend on memory layout (`a.reshape(-1)` is a
view of a C-ordered array, a copy of a transposed one). Each buffer knows its layout: an input's
real strides, C order for a result NumPy would lay out in C order, or "unknown" (some dense
order NumPy picks with order='K', as for `a.T + 1`). Where the answer depends on a layout that
is not known, the two arrays are *entangled*: writing to either while the other is alive is
refused, never silently different.
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import linecache
import operator
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import budget
from .ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var, aval_of
from .layout import Layout, ViewOp, c_strides_of
from .locations import caller_source, traceback_source  # noqa: F401 (imported from here too)
from .locations import TEXT_HINT, called_by_user, storing_item, user_frame

SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128))


def is_traced_value(value) -> bool:
    """Is this value traced when a function is called with it (an array or NumPy scalar of a
    dtype XLA takes, a Python float or complex), rather than static?"""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype in SUPPORTED_DTYPES
    return isinstance(value, (float, complex)) and not isinstance(value, bool)


class TraceError(Exception):
    """The function cannot be traced as written; `reason` says why, `source` where."""

    def __init__(self, message: str, source: SourceInfo | None = None, hint: str = "",
                 needed=None):
        super().__init__(message)
        self.message, self.source, self.hint = message, source, hint
        self.needed = needed    # the Var whose value was needed (ConcretizationError)

    def explain(self) -> str:
        """`line 3: 'if x.sum() > 0': <message>; <hint>`"""
        where = ""
        if self.source is not None:
            text = source_line(self.source)
            where = f"line {self.source.line}: " + (f"'{text}': " if text else "")
        return where + self.message + (f"; {self.hint}" if self.hint else "")

    def __str__(self) -> str:
        return self.explain()


class ConcretizationError(TraceError):
    """A traced value was needed as a Python value (bool, int, float, index)."""


class UnsupportedError(TraceError):
    """A NumPy function, method or argument that psc_jit does not compile."""


class DataDependentShapeError(RuntimeError):
    """Raised by a run (a `RuntimeCheck`, before anything is written back) when NumPy's result
    would have another shape than the compiled program's for these values (np.linalg.lstsq's
    residuals of a rank-deficient matrix, np.bincount of a value past minlength). The cell
    magic then runs the cell as plain Python; `jit` raises it with the reason."""


class BudgetExceeded(UnsupportedError):
    """The program grew past psc_jit's budget (see `core.budget`): refused before XLA would
    spend minutes on it."""


def source_line(source: SourceInfo) -> str:
    return linecache.getline(source.file, source.line).strip()


# -- the trace --------------------------------------------------------------------------------

_current_trace: contextvars.ContextVar[Trace | None] = contextvars.ContextVar(
    "psc_jit_trace", default=None)


def current_trace() -> Trace | None:
    return _current_trace.get()


@contextlib.contextmanager
def context_value(var: contextvars.ContextVar, value):
    """`var` set to value inside the block (the one way psc_jit's contexts are entered)."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def tracing(trace: Trace):
    return context_value(_current_trace, trace)


# Who takes arrays from outside the trace as inputs rather than constants (frontend.reads).
_adopter: contextvars.ContextVar[Callable | None] = contextvars.ContextVar(
    "psc_jit_adopter", default=None)


def adopting(adopt: Callable[[np.ndarray], Any]):
    return context_value(_adopter, adopt)


def outside_input(array: np.ndarray):
    """The tracer standing for an array from outside the trace (an element of a global list
    the code read, say), or None: the array is a constant of the trace."""
    adopt = _adopter.get()
    return adopt(array) if adopt is not None else None


@dataclass(frozen=True)
class RuntimeCheck:
    """A condition only the run can decide (a traced index within bounds). The run raises
    `error(message.format(value))` before writing anything back when `ok` is false."""
    ok: Var              # bool[]
    value: Var           # int64[], shown in the message
    message: str
    error: type = IndexError


class Trace:
    """Records equations while a function runs on tracers.

    `checks` are run-time conditions (traced indices within bounds) that whoever closes the
    trace must carry out: `jit` makes them outputs and verifies them after the run; a sub-trace
    (loop body, branch) must hand them to its enclosing trace or they go unchecked.

    `known` holds the value of every variable that depends on constants only (an array made in
    the cell and written with constants), worked out by each primitive's NumPy reference as it
    is bound: such a value can still be used where Python needs a concrete one (an index, a
    mask, a loop bound). A sub-trace sees its parent's known values. Every equation counts
    against the budget of the outermost trace (`core.budget`)."""

    def __init__(self, parent: Trace | None = None):
        self.eqns: list[Eqn] = []
        self.buffers: list[Buffer] = []
        self.checks: list[RuntimeCheck] = []
        self.parent = parent
        self.root: Trace = parent.root if parent is not None else self
        self.equation_count = self.writes = self.layout_questions = 0  # counted on the root
        self.known: dict[Var, np.ndarray] = {}

    def new_input(self, aval: ShapedArray, kind: str, strides: tuple[int, ...] | None = None
                  ) -> Tracer:
        """An input array; strides are its memory layout (None: C order)."""
        buf = Buffer(Var(aval), self, strides or c_strides(aval))
        self.buffers.append(buf)
        return Tracer(buf, kind=kind)

    def require(self, ok: Tracer, value: Tracer, message: str, error: type = IndexError) -> None:
        self.checks.append(RuntimeCheck(to_atom(ok), to_atom(value), message, error))

    def bind(self, prim, *args: Any, **params: Any) -> list[Var]:
        atoms = [to_atom(a) for a in args]
        avals_out = prim.abstract_eval(*(a.aval for a in atoms), **params)
        outs = tuple(Var(aval) for aval in avals_out)
        self.eqns.append(Eqn(prim, tuple(atoms), params, outs, caller_source()))
        self._count()
        self._fold(prim, atoms, params, outs)
        return list(outs)

    def _count(self) -> None:
        root = self.root
        root.equation_count += 1
        limit = budget.current().max_equations
        if root.equation_count > limit:
            raise BudgetExceeded(
                f"the traced program passed {limit:,} equations (psc_jit's budget, "
                "Budget.max_equations), more than XLA compiles in reasonable time",
                caller_source(), "this line is run many times while tracing, most likely in a "
                "loop psc_jit had to unroll; make that loop one it can roll (a `for` over "
                "range(...) whose values keep their shape and dtype)")

    def known_value(self, atom) -> np.ndarray | None:
        """The value of an atom that depends on constants only, or None."""
        if isinstance(atom, Literal):
            return atom.value
        trace = self
        while trace is not None:
            value = trace.known.get(atom)
            if value is not None:
                return value
            trace = trace.parent
        return None

    def _fold(self, prim, atoms, params, outs) -> None:
        limit = budget.current().fold_elements
        if any(v.aval.size > limit for v in (*outs, *atoms)) or any(
                isinstance(p, Graph) or isinstance(p, tuple) and any(
                    isinstance(g, Graph) for g in p) for p in params.values()):
            return
        values = [self.known_value(a) for a in atoms]
        if any(v is None for v in values):
            return
        try:
            with np.errstate(all="ignore"):
                results = prim.impl(*values, **params)
        except (ArithmeticError, IndexError, TypeError, ValueError):
            return          # the reference refuses what XLA computes: leave the value unknown
        for var, value in zip(outs, results if prim.multiple_results else [results], strict=True):
            self.known[var] = np.asarray(value, var.aval.dtype).reshape(var.aval.shape)

    def same_value(self, a, b, depth: int = 6) -> bool:
        """Whether atoms a and b hold the same value by construction: one variable, equal
        literals, or results of the same primitive with equal parameters on atoms that hold the
        same values (`a[a > 0] = a[a > 0] ** 2` computes its mask twice; variables are never
        rebound, so equal computations on them give equal values). Looks `depth` equations
        back at most; False when unsure."""
        if a is b:
            return True
        if isinstance(a, Literal) or isinstance(b, Literal):
            return isinstance(a, Literal) and isinstance(b, Literal) and a.aval == b.aval \
                and np.array_equal(a.value, b.value)
        if depth == 0 or a.aval != b.aval:
            return False
        eqn_a, eqn_b = self.producer(a), self.producer(b)
        return (eqn_a is not None and eqn_b is not None and eqn_a.prim is eqn_b.prim
                and eqn_a.outs.index(a) == eqn_b.outs.index(b)
                and _same_params(eqn_a.params, eqn_b.params)
                and len(eqn_a.inputs) == len(eqn_b.inputs)
                and all(self.same_value(x, y, depth - 1)
                        for x, y in zip(eqn_a.inputs, eqn_b.inputs, strict=True)))

    def producer(self, var) -> Eqn | None:
        """The equation of this trace (or an enclosing one) that made `var`."""
        trace = self
        while trace is not None:
            for eqn in reversed(trace.eqns):
                if var in eqn.outs:
                    return eqn
            trace = trace.parent
        return None

    def to_graph(self, in_vars, out_atoms) -> Graph:
        return Graph(tuple(in_vars), tuple(self.eqns), tuple(out_atoms))


def _same_params(a: dict, b: dict) -> bool:
    """Equal parameters of two equations, sub-graphs (compared by identity) included."""
    try:
        return a == b
    except ValueError:      # an array among the parameters
        return a.keys() == b.keys() and all(
            np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]
            for k in a)


def bind(prim, *args: Any, kind: str = "array", **params: Any):
    """Record `prim` applied to args in the current trace; return tracer(s) of its results."""
    trace = current_trace()
    if trace is None:
        raise RuntimeError(f"{prim.name} was bound outside of a trace")
    outs = trace.bind(prim, *args, **params)
    c_order = all(a.keeps_c_order for a in args if isinstance(a, Tracer))
    tracers = [Tracer(Buffer(v, trace, c_strides(v.aval) if c_order else None), kind=kind)
               for v in outs]
    return tracers if prim.multiple_results else tracers[0]


def to_atom(x: Any):
    if isinstance(x, Tracer):
        return x.ir_var
    if type(x) is np.ndarray:
        adopted = outside_input(x)
        if adopted is not None:
            return adopted.ir_var
    if isinstance(x, (Var, Literal)):
        return x
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return Literal(np.asarray(x), aval_of(x))
    return Literal.of(np.asarray(x))


# -- buffers and views ------------------------------------------------------------------------

def c_strides(aval: ShapedArray) -> tuple[int, ...]:
    return c_strides_of(aval.shape, aval.dtype.itemsize)


def layout_of(aval: ShapedArray, strides: tuple[int, ...]) -> Layout:
    """The layout of a whole array of aval's shape with these strides."""
    return Layout(aval.shape, tuple(strides), 0, aval.dtype.itemsize)


MAX_PERMUTED_AXES = 6


def _dense_layouts(aval: ShapedArray) -> list[tuple[int, ...]]:
    """Every dense layout NumPy may give a fresh array of this shape (one per order of its
    axes longer than 1); empty when there are too many orders to try."""
    long_axes = [i for i, n in enumerate(aval.shape) if n > 1]
    if len(long_axes) > MAX_PERMUTED_AXES:
        return []
    layouts = []
    for order in itertools.permutations(long_axes):
        axes = order + tuple(i for i in range(aval.ndim) if i not in long_axes)
        permuted = ShapedArray(tuple(aval.shape[i] for i in axes), aval.dtype)
        strides = dict(zip(axes, c_strides(permuted), strict=True))
        layouts.append(tuple(strides[i] for i in range(aval.ndim)))
    return layouts


@dataclass(eq=False)
class Buffer:
    """The current value of one array during a trace; in-place updates replace `var`. `strides`:
    its memory layout; None when NumPy would pick it (order='K') and psc_jit does not follow."""
    var: Var
    trace: Trace
    strides: tuple[int, ...] | None = None
    version: int = 0
    initial: Var = field(init=False)
    entangled: list = field(default_factory=list)   # (weakref to Buffer, reason)

    def __post_init__(self):
        self.initial = self.var
        aval = self.var.aval
        self.c_order = self.strides is not None and (
            self.strides == c_strides(aval) or layout_of(aval, self.strides).in_c_order)

    @property
    def mutated(self) -> bool:
        return self.var is not self.initial

    def assign(self, var: Var) -> None:
        if var.aval.shape != self.var.aval.shape or var.aval.dtype != self.var.aval.dtype:
            raise TypeError(f"cannot assign {var.aval} to an array of {self.var.aval}")
        if current_trace() not in (None, self.trace):
            raise UnsupportedError(
                "an array from outside a loop body or branch is updated in place inside it, "
                "through a name the loop does not see", caller_source(),
                "update it through a name used in the loop itself, or return the new value")
        self._check_entangled()
        self.var = var
        self.version += 1
        self.trace.root.writes += 1

    def _check_entangled(self) -> None:
        for ref, reason in self.entangled:
            if ref() is not None:
                raise UnsupportedError(
                    f"{reason}; this in-place update would show through the other array only "
                    "if it is a view, and psc_jit does not follow NumPy's memory layout here",
                    caller_source(), "make the copy explicit: .copy() the result")


def entangle(a: Buffer, b: Buffer, reason: str) -> None:
    """a and b may or may not share memory in NumPy: refuse writes to either while both live."""
    a.entangled.append((weakref.ref(b), reason))
    b.entangled.append((weakref.ref(a), reason))


@dataclass(frozen=True)
class ViewStep:
    """One step from a base array to a view of it: how to read it, and how to write back.

    `op` is the same step on memory layouts (`Layout`, for view-or-copy questions) and on
    ndarrays: a returned view is rebuilt after the run as the same view of the caller's array
    (so it aliases what NumPy's would), by `op`, or by `rebuild` given the run-time values of
    `operands` (the traced index of a dynamic view). `exact` is false when neither can.
    `positions` (indexing steps): view coordinates -> base coordinates (see windows.write)."""
    read: Callable[[Any], Any]                   # base value -> view value (tracers)
    write: Callable[[Any, Any], Any]             # (base value, new view value) -> new base value
    op: ViewOp                                   # the same step on a Layout or an ndarray
    describe: str
    exact: bool = True
    operands: tuple = ()                         # tracers whose values `rebuild` needs
    rebuild: Callable[..., np.ndarray] | None = None   # (ndarray, *operand values) -> view
    positions: Callable[[list], list] | None = None


class Tracer:
    """An array inside a trace. Its kind is what NumPy would hand back: an `array`, a NumPy
    `scalar`, or a `python` scalar (weakly typed)."""
    __array_priority__ = 1000
    __slots__ = ("_buffer", "_path", "_cached", "_c_order", "kind", "__weakref__")

    def __init__(self, buffer: Buffer, path: tuple[ViewStep, ...] = (), kind: str = "array"):
        self._buffer = buffer
        self._path = path
        self._cached: tuple[int, Trace, Var] | None = None
        self._c_order: bool | None = None
        self.kind = kind

    # value -------------------------------------------------------------------------------
    @property
    def ir_var(self) -> Var:
        """The IR variable holding this array's current value (re-read if its buffer changed).
        A view is read in the current trace (or its buffer's, once tracing has ended)."""
        if not self._path:
            return self._buffer.var
        trace = current_trace() or self._buffer.trace
        cached = self._cached
        if cached is not None and cached[0] == self._buffer.version and cached[1] is trace:
            return cached[2]
        with tracing(trace):
            value = Tracer(self._buffer)
            for step in self._path:
                value = step.read(value)
        self._cached = (self._buffer.version, trace, value.ir_var)
        return value.ir_var

    @property
    def aval(self) -> ShapedArray:
        return self.ir_var.aval

    @property
    def is_view(self) -> bool:
        return bool(self._path)

    def view_step(self, step: ViewStep, kind: str = "array") -> Tracer:
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

    def detached(self, kind: str | None = None, c_order: bool = False) -> Tracer:
        """A fresh array holding this one's current value (np.copy: a view of nothing), laid
        out in C order, or (c_order false) as NumPy's order='K' would lay it out."""
        strides = c_strides(self.aval) if c_order or self.keeps_c_order else None
        trace = current_trace() or self._buffer.trace
        return Tracer(Buffer(self.ir_var, trace, strides), kind=kind or self.kind)

    # layout ------------------------------------------------------------------------------
    def layout(self, base_strides: tuple[int, ...] | None = None) -> Layout:
        """This view's memory layout (shape, strides, offset) in its buffer, worked out by
        arithmetic: ask it layout questions (is a reshape a view?). base_strides: the buffer's
        layout (default: its own, or C order when unknown)."""
        base = self._buffer.initial.aval
        layout = layout_of(base, base_strides or self._buffer.strides or c_strides(base))
        for step in self._path:
            layout = step.op.on_layout(layout)
        return layout

    def possible_layouts(self) -> list[Layout]:
        """This view's layout for every layout its buffer may have (one when it is known)."""
        if self._buffer.strides is not None:
            return [self.layout()]
        return [self.layout(s) for s in _dense_layouts(self._buffer.initial.aval)]

    @property
    def keeps_c_order(self) -> bool:
        """Would a NumPy result computed from this array (order='K') be laid out in C order?"""
        if self._c_order is None:
            shape = self._buffer.initial.aval.shape if not self._path else self.shape
            if sum(d > 1 for d in shape) <= 1:
                self._c_order = True
            elif not self._path:
                self._c_order = self._buffer.c_order
            else:
                self._c_order = self._buffer.strides is not None and self.layout().in_c_order
        return self._c_order

    def view_rebuilders(self) -> tuple[tuple[Callable, tuple[Tracer, ...]], ...] | None:
        """How to make this view of its buffer on a real ndarray: per step, a function of
        (ndarray, *values of the tracers) and those tracers; None if a step cannot."""
        if all(step.exact for step in self._path):
            return tuple((step.rebuild or step.op.on_array, step.operands) for step in self._path)
        return None

    def with_kind(self, kind: str) -> Tracer:
        return Tracer(self._buffer, self._path, kind=kind)

    def become(self, view: Tracer) -> None:
        """This very object is now `view` (another view of the same buffer): what NumPy's
        in-place attribute setters (`a.shape = ...`) do to an array object."""
        if view._buffer is not self._buffer:
            raise ValueError("an array can only become another view of its own buffer")
        self._path, self.kind = view._path, view.kind
        self._cached = self._c_order = None

    # concretization: a traced value used as a Python value ---------------------------------
    def known_value(self) -> np.ndarray | None:
        """This array's value when it depends on constants only (see `Trace.known`), else None."""
        trace = current_trace() or self._buffer.trace
        return trace.known_value(self.ir_var)

    def _concrete(self, what: str, hint: str) -> np.ndarray:
        """The known value, or the error that says a concrete value was needed, and where."""
        value = self.known_value()
        if value is None:
            raise ConcretizationError(f"{what} of a traced value ({self.aval}) is needed at "
                                      "trace time", caller_source(), hint, self.ir_var)
        return value

    def __bool__(self):
        return bool(self._concrete("the truth value", "branch with np.where(cond, a, b), or make "
                                   "the value static (--static NAME, or static_argnames=)"))

    def __int__(self):
        return int(self._concrete("a Python int", "make the value static (--static NAME, or "
                                  "static_argnames=)"))

    def __float__(self):
        return float(self._concrete("a Python float", "keep it an array (np.float64 arithmetic "
                                    "works on traced values), or compute it outside"))

    def __complex__(self):
        return complex(self._concrete("a Python complex", "keep it an array"))

    def __index__(self):
        return operator.index(self._concrete("an integer index", (
            "index with a static value or a traced integer array (x[i], np.take); a slice's "
            "length must not depend on a traced value unless it is a loop index")))

    def __iter__(self):
        if self.aval.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __len__(self):
        if self.aval.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __repr__(self):
        """The text NumPy would give (known, or refused as any concrete value is) when the
        user's code asks while its trace runs (`repr(x.mean())`, `str([m])`); else its type."""
        if current_trace() is None or not called_by_user(sys._getframe(1)):
            return f"Tracer<{self.aval}>"
        return repr(self._as_numpy_gives(self._concrete("the text", TEXT_HINT)))

    def __format__(self, spec=""):     # print(x), str(x), f"{x:.3f}"
        return format(self._as_numpy_gives(self._concrete("the text", TEXT_HINT)), spec)

    def _as_numpy_gives(self, value: np.ndarray):
        """A known value as NumPy's result's type: a NumPy scalar, Python number or array."""
        return value[()] if self.kind == "scalar" else \
            value.item() if self.kind == "python" else value

    __str__ = __format__

    def __array__(self, dtype=None, copy=None):
        value = self._concrete("a concrete NumPy array", self._array_hint())
        if copy:
            return np.array(value, dtype=dtype)
        view = value.view()
        view.flags.writeable = False     # a view NumPy would share with this array: never write
        return view if dtype is None else view.astype(dtype, copy=False)

    def _array_hint(self) -> str:
        frame = user_frame(sys._getframe(2))
        if frame is not None and storing_item(frame):
            return ("a traced value is written into a NumPy array that is not traced (made "
                    "outside the traced code, or by a library function): make that array in "
                    "the cell or function itself (np.zeros, np.empty_like(x), ...) so that "
                    "psc_jit traces it, or pass it in as an argument")
        return ("use NumPy functions on it instead of converting it to a NumPy array (np.asarray "
                "or a library function that calls it)")

    def tolist(self):
        return self._concrete("a Python list", "keep it an array").tolist()

    def item(self, *args):
        return self._concrete("a Python scalar (.item())", "keep it an array").item(*args)

    # shape facts are static -----------------------------------------------------------------
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.nbytes)
    weak_type = property(lambda self: self.aval.weak_type)
