"""Loop rolling, the runtime: the helpers that code rewritten by `rewrite.roll_loops` calls.

Each rewritten `for NAME in range(...)`, `while TEST` or `if TEST` calls a helper here that
decides *at trace time*: when nothing the statement touches is traced, the original statement
runs as plain Python, with unchanged meaning. When it is, the body is traced once as a
function of the names it uses (see `loops` for how carried state is found) into one
`while_loop` or `cond` equation, so the graph, and XLA's compile time, do not grow with the
iteration count.

A loop that cannot be rolled (its values change shape or type from one iteration to the next,
it appends to a list, uses `break` or `return`, ...) is unrolled while the program stays
within the equation budget (`core.budget`), and otherwise raises `UnsupportedError` naming
the line, the reason and what to write instead. `unroll_notes(graph)` explains a graph made large by loops
that were unrolled.
"""
from __future__ import annotations

import builtins
import collections
import contextlib
import contextvars
import operator
import sys
from dataclasses import dataclass

import numpy as np

from ..ir import SourceInfo
from ..numpy.checks import escaped, require
from ..numpy.conversion import python_number
from ..numpy.creation import traced_creator
from ..numpy.ufuncs import call_ufunc, np_where
from ..primitives import convert_element_type_p
from .. import budget, tree_util
from ..tracing import (BudgetExceeded, DataDependentShapeError, TraceError, Tracer, UnsupportedError,
                       bind, caller_source, current_trace)
from ..control.branches import Aliasing, branch, choose
from .cell import is_cell_code
from ..control.carry import (INDEX_AVAL, UNBOUND, UNBOUND_INDEX, CannotConvert, Slot, coerce, contains_tracer,
                    slot_of_static, to_pred)
from ..control.loops import LoopSpec, carried_by_value, roll_loop
from .refusals import call_watched, refuse_call
from .python_scalars import python_scalar  # noqa: F401 (rewritten code calls it)
from .raising import BranchRaised, RaiseAgain, assert_, error, raising  # noqa: F401 (and these)
from .unrolled import note_unrolled, unroll_notes  # noqa: F401 (unroll_notes: the reports')


_ROLLING: contextvars.ContextVar[bool] = contextvars.ContextVar("psc_jit_rolling", default=True)


@contextlib.contextmanager
def rolling_disabled():
    """Run transformed code with every loop unrolled as plain Python (for comparisons)."""
    token = _ROLLING.set(False)
    try:
        yield
    finally:
        _ROLLING.reset(token)


def rolling_enabled() -> bool:
    return _ROLLING.get()


@dataclass(frozen=True)
class Site:
    """A loop or branch as the pass saw it; built by the generated code, read by the helpers."""
    kind: str                               # "for", "while" or "if"
    line: int
    text: str                               # `for t in range(steps)`, for messages
    names: tuple[str, ...] = ()             # parameters of the generated functions
    assigned: tuple[str, ...] = ()          # the names they return
    exposed: tuple[str, ...] = ()           # assigned names read before assigned
    target: str | None = None               # a for loop's variable
    blocker: str = ""                       # why it cannot be converted, if it cannot
    hint: str = ""
    dead: tuple[str, ...] = ()              # assigned names nothing reads after an `if`
    kept: tuple[str, ...] = ()              # assigned names a loop's pass may not assign
    static_note: str = ""                   # why a `while` whose test stays static is not a
    #                                         for loop (a `for` that uses `break`), for notes

    def spec(self) -> LoopSpec:
        return LoopSpec(self.names, self.assigned, frozenset(self.exposed), frozenset(self.kept))


def _caller_file(depth: int = 2) -> str:
    return sys._getframe(depth).f_code.co_filename


def _source(site: Site, file: str) -> SourceInfo:
    return SourceInfo(file, site.line)


def _touches_tracer(site: Site, env: dict) -> bool:
    return any(contains_tracer(env.get(name)) or isinstance(env.get(name), Sequence) and
               env[name].rolls for name in site.names)


def wants_for(site: Site, range_fn, args, env) -> bool:
    """Whether to try rolling this loop: tracing, a builtin range, and something traced."""
    if not _ROLLING.get() or current_trace() is None or range_fn is not builtins.range:
        return False
    args = [_static_bound(a) for a in args]
    if any(isinstance(a, Tracer) for a in args):
        return True
    return len(range(*args)) >= 2 and _touches_tracer(site, env)


def wants_while(site: Site, env) -> bool:
    return _ROLLING.get() and current_trace() is not None and _touches_tracer(site, env)


def create(fn, *args, **kwargs):
    """A call of a NumPy creation function in rewritten code (see `creation_calls`): while
    tracing, the array it makes is traced; otherwise it is the call as written (a subclass of
    ndarray made while tracing, `np.ma.array(...)`, is refused: see `subclasses`)."""
    if current_trace() is None:
        return fn(*args, **kwargs)
    refuse_call(fn, args, kwargs)       # (a host call, a subclass: see `refusals`)
    make = traced_creator(fn)
    return make(*args, **kwargs) if make is not None else call_watched(fn, fn, args, kwargs)


def is_traced(pred) -> bool:
    """Whether an `if` test is traced (one whose value is known runs as plain Python)."""
    return isinstance(pred, Tracer) and _ROLLING.get() and pred.known_value() is None


def _static_bound(value):
    """A range bound: a traced one whose value is known is that value."""
    if isinstance(value, Tracer):
        known = value.known_value()
        return value if known is None else int(known)
    return value


def _range_args(args) -> tuple:
    if len(args) == 1:
        return 0, args[0], 1
    return (args[0], args[1], args[2] if len(args) == 3 else 1)


def _may_skip_spec(site: Site) -> LoopSpec:
    """A loop that may make no pass (traced bounds, a traced test): every name it assigns may
    keep its value from before the loop, so each is live on entry."""
    return LoopSpec(site.names, site.assigned, frozenset(site.assigned), frozenset(site.kept))


def roll_for(site: Site, args, body_fn, env) -> tuple | None:
    """Roll `for target in range(*args)` into one while_loop; None: run it as plain Python."""
    file = _caller_file()
    start, stop, step = (_static_bound(v) for v in _range_args(args))
    if isinstance(step, Tracer):
        raise UnsupportedError(f"the step of `{site.text}` is a traced value",
                               _source(site, file), "make the step a Python int")
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    static = not isinstance(start, Tracer) and not isinstance(stop, Tracer)
    if static:
        start, stop, step = (int(v) for v in (start, stop, step))
    count = len(range(start, stop, step)) if static else None
    if count == 0:      # no pass: the loop's names keep their values (or stay unbound)
        return tuple(env.get(n, UNBOUND) for n in (*site.assigned, site.target))
    at_cell_top = is_cell_code(sys._getframe(1).f_code)
    env = dict(env)
    spec = site.spec() if static else _may_skip_spec(site)
    peeled = False
    root = current_trace().root
    while True:
        spent = root.equation_count
        try:
            out = roll_loop(spec, env, body_fn, index=(start, stop, step),
                            observed=_observer(env), all_live=at_cell_top)
            break
        except BudgetExceeded:
            raise
        except Exception as err:       # any failure of the traced pass: unroll or explain
            root.equation_count = spent     # the failed pass's equations are dropped
            if _may_peel(err, peeled, count):
                env.update(_run_body(site, body_fn, start, env))
                start, count, peeled = start + step, count - 1, True
                continue
            return _fallback(site, file, err, count, env, body_fn, (start, stop, step))
    top = at_cell_top and current_trace() is root
    if static:
        last = start + (count - 1) * step
    else:
        last = _last_index_or_before(site, out["__index__"], start, stop, step, env, top)
        _keep_entry_arrays(site, env, out, call_ufunc(np.greater if step > 0 else np.less,
                                                       stop, start))
    if top:
        _require_inner_passes(site, env, out)
    return tuple(out[name] for name in site.assigned) + (last,)


def _last_index_or_before(site: Site, end, start, stop, step: int, env: dict, top: bool):
    """The loop variable after a loop of traced bounds: its last index, or when the loop
    makes no pass, its value from before (an int kept by a select). A name the loop leaves
    as it was when it makes no pass (its variable, unbound or not an int before it, or a
    name it assigns that had no value) is checked at run time at the cell's top level; in a
    loop inside another, an unbound variable becomes UNBOUND_INDEX (see
    `_require_inner_passes`)."""
    last = _last_index(end, step)
    before = env.get(site.target, UNBOUND)
    ran = call_ufunc(np.greater if step > 0 else np.less, stop, start)
    unbound = [n for n in site.assigned if env.get(n, UNBOUND) is UNBOUND]
    if not _is_int(before):
        unbound.insert(0, site.target)
    if top and unbound:
        _require_a_pass(site, ran, stop, unbound[0])
    if _is_int(before):
        return coerce(np_where(ran, last, before), Slot(INDEX_AVAL, "python"))
    if before is UNBOUND and not top:
        return coerce(np_where(ran, last, UNBOUND_INDEX), Slot(INDEX_AVAL, "python"))
    return last


def _require_inner_passes(site: Site, env: dict, out: dict) -> None:
    """After a loop at the cell's top level: a name it assigns that had no value before it,
    and that an inner loop of traced bounds left unbound (UNBOUND_INDEX), is unbound in plain
    Python, which the compiled program cannot give: checked at run time."""
    for name in site.assigned:
        value = out[name]
        if env.get(name, UNBOUND) is UNBOUND and isinstance(value, Tracer) and \
                value.kind == "python" and value.dtype == INDEX_AVAL.dtype:
            current_trace().require(
                call_ufunc(np.not_equal, value, UNBOUND_INDEX), value,
                f"line {site.line}: a loop inside `{site.text}` makes no pass in its last "
                f"pass, so `{name}` keeps its value from before the loop, which the compiled "
                "program does not have", DataDependentShapeError)


def _is_int(value) -> bool:
    if isinstance(value, Tracer):
        return value.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _require_a_pass(site: Site, ran, stop, name: str) -> None:
    """A loop of traced bounds that makes no pass leaves its names as they were before the
    loop (unbound, or its variable's old value), which the compiled program cannot give:
    checked at run time, where a failure runs the cell as plain Python."""
    current_trace().require(ran, coerce(stop, Slot(INDEX_AVAL, "python")),
                            f"line {site.line}: `{site.text}` makes no pass (its bound is {{}}), so "
                            f"`{name}` keeps its value from before the loop, which "
                            "the compiled program does not have", DataDependentShapeError)


def _may_peel(err, peeled: bool, count) -> bool:
    return isinstance(err, CannotConvert) and err.peel and not peeled and count is not None \
        and count >= 3


def _last_index(end, step):
    return coerce(call_ufunc(np.subtract, end, step), Slot(INDEX_AVAL, "python"))


def _run_body(site: Site, body_fn, i, env) -> dict:
    """One iteration as plain Python (traced arrays updated in place as usual)."""
    values = body_fn(i, *(env.get(n, UNBOUND) for n in site.names))
    return {site.target: i, **dict(zip(site.assigned, values, strict=True))}


def _fallback(site: Site, file: str, err: Exception, count, env, body_fn, bounds):
    """Unroll a loop that cannot be rolled, within the equation budget (`core.budget`), or
    explain why it cannot be either. count: the iterations left, None when the bounds are
    traced (then there is nothing to unroll)."""
    reason, hint = _reason(err), _hint(err)
    if count is None:
        raise _cannot_roll(site, file, reason, _join(
            hint, "psc_jit cannot unroll a loop whose bounds are traced")) from err
    note_unrolled(file, site.line, reason)
    root = current_trace().root
    before = root.equation_count
    start, stop, step = bounds
    for k, i in enumerate(range(start, stop, step)):
        env.update(_run_body(site, body_fn, i, env))
        projected = (root.equation_count - before) * count
        if k == 0 and before + projected > budget.current().max_equations:
            raise _cannot_roll(site, file, reason,
                               _join(hint, _over_budget(projected, count))) from err
    return tuple(env.get(name, UNBOUND) for name in site.assigned) + (env[site.target],)


def _over_budget(projected: int, count: int) -> str:
    return (f"unrolled, its {count:,} iterations would make about {projected:,} equations, over "
            f"psc_jit's budget of {budget.current().max_equations:,} (Budget.max_equations)")


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _cannot_roll(site: Site, file: str, reason: str, hint: str) -> UnsupportedError:
    what = "rolled into an XLA loop" if site.kind != "if" else "converted to an XLA conditional"
    return UnsupportedError(f"`{site.text}` cannot be {what}: {reason}", _source(site, file),
                            hint)


def _reason(err: Exception) -> str:
    if isinstance(err, CannotConvert):
        return err.message
    if isinstance(err, TraceError):
        return err.explain() if err.source is not None else err.message
    return f"{type(err).__name__}: {err}"


def _hint(err: Exception) -> str:
    return err.hint if isinstance(err, CannotConvert) else ""


def _observer(env: dict):
    """Whether an array is seen from outside the loop's names: a view, an input of the trace,
    or held by more than one name."""
    trace = current_trace()
    inputs = {id(b) for b in trace.buffers} - carried_by_value(trace) if trace is not None \
        else set()
    counts = collections.Counter(id(t._buffer) for t in _tracers_in(env.values()))
    return lambda t: t.is_view or id(t._buffer) in inputs or counts[id(t._buffer)] > 1


def _tracers_in(values, depth: int = 3):
    for value in values:
        if isinstance(value, Tracer):
            yield value
        elif depth and isinstance(value, (tuple, list, set)):
            yield from _tracers_in(value, depth - 1)
        elif depth and isinstance(value, dict):
            yield from _tracers_in(value.values(), depth - 1)


def check_unroll(site: Site, range_fn, args, env) -> None:
    """A loop the pass could not make a function of its names (it uses `break`, ...) runs as
    plain Python: unrolled. An exit on a traced value inside it is refused where it happens
    (`truth`); traced bounds leave nothing to unroll."""
    if not _ROLLING.get() or current_trace() is None or range_fn is not builtins.range:
        return
    file = _caller_file()
    if any(isinstance(_static_bound(a), Tracer) for a in args):
        raise _cannot_roll(site, file, site.blocker, _join(
            site.hint, "psc_jit cannot unroll a loop whose bounds are traced"))
    if _touches_tracer(site, env):
        note_unrolled(file, site.line, site.blocker)


def roll_while(site: Site, cond_fn, body_fn, env) -> tuple | None:
    """A while loop whose test is traced: one while_loop. None: the test is static on entry
    and stays static, so it runs as plain Python. A test that is static on entry and traced
    after some iterations (`err = 1` before `while err > tol:`) runs those iterations as
    plain Python, then rolls the rest, whose values then have the types plain Python gives
    them after one pass."""
    file = _caller_file()
    top = is_cell_code(sys._getframe(1).f_code) and current_trace() is current_trace().root
    env = dict(env)
    test = cond_fn(*(env.get(n, UNBOUND) for n in site.names))
    if not isinstance(test, Tracer):
        if not test:
            return None
        if site.static_note:
            note_unrolled(file, site.line, site.static_note)
        while not isinstance(test, Tracer):
            if not test:
                return tuple(env.get(name, UNBOUND) for name in site.assigned)
            env.update(_run_while_body(site, body_fn, env))
            test = cond_fn(*(env.get(n, UNBOUND) for n in site.names))
    unbound = [n for n in site.assigned if env.get(n, UNBOUND) is UNBOUND]
    if top and unbound:
        require(to_pred(test), f"line {site.line}: `{site.text}` makes no pass, so "
                f"`{unbound[0]}` keeps its value from before the loop, which the compiled "
                "program does not have", DataDependentShapeError)
    try:
        out = roll_loop(_may_skip_spec(site), env, body_fn, cond_fn=cond_fn,
                        observed=_observer(env), all_live=top)
    except Exception as err:           # a traced test leaves no plain-Python way out
        raise _cannot_roll(site, file, _reason(err), _hint(err)) from err
    if top:
        _require_inner_passes(site, env, out)
    _keep_entry_arrays(site, env, out, test)
    return tuple(out[name] for name in site.assigned)


def _keep_entry_arrays(site: Site, env: dict, out: dict, ran) -> None:
    """A loop that may make no pass leaves each name the array it held before (plain Python
    does not copy it), else the loop's result: at the top of a trace, a `Choice` the run
    makes (elsewhere, arrays are carried by value)."""
    if current_trace() is not current_trace().root:
        return
    index = bind(convert_element_type_p, to_pred(ran), new_dtype=np.dtype(np.int32),
                 weak_type=False)
    for name in site.assigned:
        entry, result = env.get(name, UNBOUND), out[name]
        if isinstance(entry, Tracer) and entry.kind == "array" and isinstance(result, Tracer) \
                and result.kind == "array" and result._buffer is not entry._buffer:
            choose(index, (entry, None), result, f"`{name}` (line {site.line}: `{site.text}`)")


def _run_while_body(site: Site, body_fn, env) -> dict:
    """One iteration of a while loop as plain Python."""
    values = body_fn(*(env.get(n, UNBOUND) for n in site.names))
    return dict(zip(site.assigned, values, strict=True))


def _predicate_and_branch(test) -> tuple[Tracer, Tracer]:
    """A traced test's truth value (bool[]) and the branch it picks (i32[]: 1 for then)."""
    p = to_pred(test)
    return p, bind(convert_element_type_p, p, new_dtype=np.dtype(np.int32), weak_type=False)


def convert_if(site: Site, pred, then_fn, else_fn, env) -> tuple:
    """An `if` on a traced value: both branches traced into one cond (or a select)."""
    file = _caller_file()
    aliasing = Aliasing({n: env.get(n, UNBOUND) for n in site.assigned}, _observer(env),
                        is_cell_code(sys._getframe(1).f_code), f"line {site.line}: `{site.text}`")
    p, index = _predicate_and_branch(pred)
    args = [env.get(n, UNBOUND) for n in site.names]
    try:
        return branch(index, [raising(else_fn, 0), raising(then_fn, 1)], args, pred=p,
                      names=site.assigned, dead=frozenset(site.dead), aliasing=aliasing)
    except CannotConvert as err:
        raise _cannot_roll(site, file, err.message, err.hint) from None
    except BranchRaised as raised:      # `if x.sum() < 0: raise ValueError(...)`: the run
        taken = 1 - raised.branch       # checks that the other branch is the one taken
        ok = p if taken == 1 else call_ufunc(np.logical_not, p)
        require(ok, escaped(str(raised.error)), RaiseAgain(raised.error))
        return (then_fn if taken == 1 else else_fn)(*args)


class Sequence:
    """What `for TARGET in x`, `enumerate(x)` or `zip(x, y)` iterates, in rewritten code (see
    rewrite.sequence_loop): arrays traced (with at least one axis) and the builtins themselves
    make the loop a loop over range(length) whose pass i binds the target to `item(i)` (x[i];
    (i, x[i]); (x[i], y[i])), which rolls like any; otherwise `plain()` is the iteration as
    written."""

    def __init__(self, kind: str, *args):
        self.kind, self.args = kind, args
        arrays = args if kind == "plain" else args[1:]
        builtin = kind == "plain" or args[0] is getattr(builtins, kind)
        self.rolls = bool(arrays) and builtin and _ROLLING.get() and all(
            isinstance(a, Tracer) and a.ndim >= 1 for a in arrays)
        self.length = min(a.shape[0] for a in arrays) if self.rolls else 0

    def item(self, i):
        if self.kind == "plain":
            return self.args[0][i]
        if self.kind == "enumerate":
            return i, self.args[1][i]
        return tuple(a[i] for a in self.args[1:])

    def plain(self):
        return self.args[0] if self.kind == "plain" else self.args[0](*self.args[1:])


def if_exp(test, then_thunk, else_thunk, what: str = "`a if test else b`"):
    """`a if test else b` in rewritten code: on a traced test, both traced into one cond (or
    a select), as an `if` statement is; otherwise Python's own choice. (`what`: the
    expression for messages, `a and b` for and_value.)"""
    if not is_traced(test):
        return then_thunk() if test else else_thunk()
    p, index = _predicate_and_branch(test)
    types: list = []
    try:
        out = branch(index, [else_thunk, then_thunk], [], pred=p, types=types)
    except CannotConvert as err:
        raise UnsupportedError(f"{what} on a traced value: {err.message}",
                               caller_source(), err.hint) from None
    else_types, then_types = ([_python_type(t) for t in ts] for ts in types)
    differs = [k for k, (a, b) in enumerate(zip(else_types, then_types, strict=True)) if a != b]
    if not differs:
        return out
    # Python gives the type of the branch taken (`x.mean() if ... else 0.0`: a NumPy float64
    # or a Python float): the program gives a's, and a run that takes b runs as plain Python
    require(p, f"{what} gave the value of another type: psc_jit runs the cell as plain "
            "Python", DataDependentShapeError)
    leaves, treedef = tree_util.flatten(out)
    for k in differs:
        leaves[k] = coerce(leaves[k], then_types[k])
    return tree_util.unflatten(treedef, leaves)


def _python_type(t) -> Slot | None:
    """The type a branch's result leaf has for the user (dtype, weakness and kind): a static
    number's as the traced one it would be; anything else None (compared by value)."""
    if isinstance(t, Slot):
        return t
    return slot_of_static(t) if isinstance(t, (int, float, complex, np.generic)) else None


def range_bounds(*args) -> tuple:
    """(start, stop, step) of `range(*args)` for a loop that leaves by `break`
    (rewrite.break_loop): the bounds may be traced, the step must be a Python int."""
    start, stop, step = (_static_bound(v) for v in _range_args(args))
    if isinstance(step, Tracer):
        raise UnsupportedError("the step of a `for` loop is a traced value", caller_source(),
                               "make the step a Python int")
    if not any(isinstance(v, Tracer) for v in (start, stop)):
        bounds = range(start, stop, step)     # range's own errors (a float, a zero step)
        return bounds.start, bounds.stop, bounds.step
    step = operator.index(step)
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    return start, stop, step


def in_range(index, stop, step: int):
    """Whether a loop over range(..., stop, step) makes a pass at `index`."""
    return index < stop if step > 0 else index > stop


def truth(value, site: Site) -> bool:
    """bool(value); on a traced value, say why this statement could not be converted."""
    if isinstance(value, Tracer) and _ROLLING.get() and value.known_value() is None:
        raise _cannot_roll(site, _caller_file(), f"its test is traced ({value.aval}) and "
                           f"{site.blocker}", site.hint)
    return bool(value)


def _short_circuit(first, rest, stop_on_truth: bool, traced, step):
    """`first and ...` (or `or`): Python's short circuit over static values; a traced one
    (`traced(value)`) is combined with the next operand's thunk by `step(value, thunk)`."""
    value = first
    for thunk in rest:
        if traced(value):
            value = step(value, thunk)
        elif bool(value) is stop_on_truth:
            return value
        else:
            value = thunk()
    return value


def _is_tracer(value) -> bool:
    return isinstance(value, Tracer)


def and_(first, *rest):
    return _short_circuit(first, rest, False, _is_tracer, lambda v, thunk: call_ufunc(
        np.logical_and, to_pred(v), to_pred(thunk())))


def or_(first, *rest):
    return _short_circuit(first, rest, True, _is_tracer, lambda v, thunk: call_ufunc(
        np.logical_or, to_pred(v), to_pred(thunk())))


def not_(value):
    if isinstance(value, Tracer):
        return call_ufunc(np.logical_not, to_pred(value))
    return not value


# `a and b`, `a or b` and `a < b < c` where a value is wanted (`ok = m > 0 and n > 0`), not a
# test: Python gives one of the operands, so a traced one makes the choice an `if_exp`
# (`a and b` is `b if a else a`), short-circuiting as Python does on a static one.

def not_value(value):
    """`not value`: a Python bool, also of a traced value."""
    if is_traced(value):
        return python_number(call_ufunc(np.logical_not, to_pred(value)))
    return not value


def and_value(first, *rest):
    return _short_circuit(first, rest, False, is_traced,
                          lambda v, thunk: if_exp(v, thunk, lambda: v, "`a and b`"))


def or_value(first, *rest):
    return _short_circuit(first, rest, True, is_traced,
                          lambda v, thunk: if_exp(v, lambda: v, thunk, "`a or b`"))


_COMPARE = {"Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
            "Gt": operator.gt, "GtE": operator.ge, "Is": operator.is_,
            "IsNot": operator.is_not, "In": lambda a, b: a in b,
            "NotIn": lambda a, b: a not in b}


def compare_chain(left, *rest):
    """`left op1 b op2 c ...` (rest: op names and thunks of the operands, alternating): each
    operand made once, `and` between the comparisons."""
    ops, thunks = rest[::2], rest[1::2]

    def from_(k, left):
        right = thunks[k]()
        result = _COMPARE[ops[k]](left, right)
        if k + 1 == len(ops):
            return result
        return and_value(result, lambda: from_(k + 1, right))

    return from_(0, left)
