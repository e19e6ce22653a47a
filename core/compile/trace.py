"""Tracing a call: run the function on tracers for its traced argument leaves and record
the graph, what it read beyond its arguments (`frontend.reads`), how to rebuild its outputs
(views of inputs included) and which inputs it updated in place.
"""
from __future__ import annotations

import time
import types
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Hashable

import numpy as np

from .. import passes
from ..control.branches import choices_of
from ..frontend.effects import (AttributeSnapshot, refuse_attribute_changes,
                               replay_or_refuse_warnings, watched_arguments)
from ..frontend import static_numbers
from ..frontend.definitions import refuse_made_while_tracing
from ..frontend.reads import Reads, Recorder, check_error_state, is_user_class, recording
from ..frontend.unrolled import unroll_notes
from ..ir import Graph
from ..numpy import MaskedSelection, check_outputs
from ..numpy.ufuncs import call_ufunc
from ..tracing import (BudgetExceeded, ConcretizationError, DataDependentShapeError, Trace,
                       TraceError, Tracer, UnsupportedError, traceback_source, tracing)
from ..tree_util import flatten_with_paths, registration_advice, unflatten
from .signature import CallSpec, overlapping_inputs, overlaps_itself
from .xla import tracing_in_progress


@dataclass(frozen=True)
class OutSpec:
    """How to rebuild one output leaf: from a graph output, a constant, or a static value; or
    ("view") as the view NumPy hands back: the same view steps (`ViewOp`s) applied to the input
    array it views (value = (leaf position, steps)) or to a graph output (index); or
    ("choice") as the array of the branch the run took (index: the output holding the branch,
    value: a spec per branch)."""
    how: str            # "traced", "view", "const", "static" or "choice"
    index: int = -1     # graph output index for "traced" (and "view" of a non-input)
    kind: str = "array"
    value: Any = None


@dataclass
class TraceResult:
    """A traced call. Leaf positions count the call's argument leaves, then the implicit
    inputs (`reads.inputs`: what the trace read from outside its arguments)."""
    graph: Graph
    out_structure: Hashable
    out_specs: tuple[OutSpec, ...]
    mutated: tuple[tuple[int, int], ...]    # (leaf position, graph output index)
    trace_seconds: float
    checks: tuple[tuple, ...] = ()     # run-time checks: (message, error, source of the line)
    check_index: int = -1                       # graph outputs: oks, then reported values
    reads: Reads = Reads()
    inputs: tuple[tuple[int, Any], ...] = ()    # per graph input: (leaf position, dtype of a
                                                # scalar to make an array of, or None)
    writes: int = 0     # in-place updates of any array (whether one shows through an input
                        # can depend on the inputs' memory layouts)
    layout_questions: int = 0   # answers NumPy gives by memory layout (is a reshape or ravel
                                # a view, can .shape be set): an input's layout may decide them


def trace_function(call: Callable[[dict], Any], spec: CallSpec,
                   on_reads: Callable[[Reads], None] = lambda reads: None) -> TraceResult:
    """Run `call(arguments)` with tracers for the traced leaves; record the graph and what it
    read from outside them (`on_reads` is told even when the trace fails). Numbers read from
    outside whose values the code needs are read as guarded values on a new try
    (frontend/static_numbers.py)."""
    static = frozenset()
    while True:
        try:
            return _trace_once(call, spec, on_reads, static)
        except TraceError as err:
            more = getattr(err, "static_numbers", frozenset())
            if more <= static or len(static | more) > static_numbers.LIMIT:
                raise
            static |= more


def _trace_once(call, spec: CallSpec, on_reads, static: frozenset) -> TraceResult:
    start = time.perf_counter()
    trace = Trace()
    tracers: dict[int, Tracer] = {}
    by_object: dict[int, Tracer] = {}
    leaf_values = list(spec.leaves)
    for i in spec.traced_index:
        leaf = spec.signature.leaves[i]
        value = spec.leaves[i]
        shared = by_object.get(id(value)) if isinstance(value, np.ndarray) else None
        tracer = shared if shared is not None else trace.new_input(
            leaf.aval, leaf.kind, leaf.strides)
        by_object.setdefault(id(value), tracer)
        tracers[i] = tracer
        leaf_values[i] = tracer
    arguments = watched_arguments(unflatten(spec.signature.structure, leaf_values))
    recorder = Recorder(trace, list(spec.leaves), tracers, spec.paths, static)
    attributes = AttributeSnapshot(spec.leaves, spec.paths)
    try:
        check_error_state()
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            with tracing(trace), recording(recorder), tracing_in_progress():
                result = call(arguments)
        replay_or_refuse_warnings(warned)
        # the latest snapshots first: an object the trace wrote to before a helper read it
        # (`cfg.scale += 1`, then `g()` reads `cfg`) is snapshot by the recorder holding the
        # trace's value; the snapshot of the arguments, taken before the trace, wins
        later = recorder.attributes.restore()
        changed = attributes.restore() + later + recorder.bindings.restore()
        if changed:
            raise refuse_attribute_changes(changed)
    except BudgetExceeded as err:
        notes = unroll_notes(trace.to_graph((), ()), limit=0)
        raise BudgetExceeded(err.message, err.source, "; ".join(notes) or err.hint) from None
    except TraceError as err:
        err.static_numbers = static_numbers.numbers_behind(trace, recorder, err.needed)
        raise
    except ValueError as err:
        if "setting an array element with a sequence" not in str(err):
            raise
        raise ConcretizationError(
            "a traced value is written into a NumPy array that is not traced",
            traceback_source(err.__traceback__), "make that array in the traced code itself "
            "(np.zeros, np.empty_like(x), ...) so that psc_jit traces it, or pass it in as an "
            "argument") from err
    finally:
        recorder.attributes.restore()
        attributes.restore()
        recorder.bindings.restore()
        on_reads(recorder.finish())
    n = len(spec.leaves)
    tracers.update({n + k: t for k, t in enumerate(recorder.input_tracers)})
    leaves = list(spec.leaves) + recorder.input_values
    try:
        return _finish_trace(trace, spec, tracers, leaves, result, start, recorder.finish())
    except TraceError as err:       # (a result of traced length)
        err.static_numbers = static_numbers.numbers_behind(trace, recorder, err.needed)
        raise


def _refuse_unregistered_holder(path: str, value) -> None:
    """An object of the user's returned with traced arrays in its attributes: it must be a
    registered node for the arrays to come out as arrays."""
    attributes = dict(getattr(value, "__dict__", None) or {})
    for cls in type(value).__mro__:             # (and the attributes of its __slots__)
        slots = getattr(cls, "__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            attributes[name] = getattr(value, name, None)
    if any(isinstance(v, Tracer) for v in attributes.values()):
        where = f"{path} of the result" if path else "the result"
        raise TypeError(f"{where} holds computed arrays, but {registration_advice(value)}")


def made_holder(value, depth: int = 3) -> bool:
    """An object the traced code made that holds computed arrays in its attributes (in lists,
    dicts or tuples there, or in such objects), of a class of the user's (whose instances
    `object.__new__` makes) or a SimpleNamespace: a result rebuilt by its attributes. (One of
    the user's objects from outside cannot hold them: the trace refuses such a change.)"""
    attributes = getattr(value, "__dict__", None)
    cls = type(value)
    if not isinstance(attributes, dict) or not (
            cls is types.SimpleNamespace or cls.__new__ is object.__new__ and is_user_class(cls)):
        return False
    return any(_holds_tracer(v, depth) for v in attributes.values())


def _holds_tracer(value, depth: int) -> bool:
    if isinstance(value, Tracer):
        return True
    if depth <= 0:
        return False
    if type(value) in (list, tuple, dict):
        return any(_holds_tracer(v, depth - 1)
                   for v in (value.values() if type(value) is dict else value))
    return made_holder(value, depth - 1)


def _finish_trace(trace, spec, tracers, leaves, result, start, reads) -> TraceResult:
    out_leaves, out_structure = flatten_with_paths(result, own_order=True, objects=made_holder)
    out_atoms, out_specs = [], []
    input_leaf: dict[int, int] = {}
    for i, t in tracers.items():
        input_leaf.setdefault(id(t._buffer), i)
    buffer_outs: dict[int, int] = {}
    const_roots: dict[int, tuple[int, np.ndarray]] = {}
    choices = _valid_choices(trace)
    for path, value in out_leaves:
        if isinstance(value, MaskedSelection):
            raise value.refuse("the result is", at_creation=True)
        if getattr(value, "__psc_window__", False):
            value.refuse("returning the value", at_creation=True)
        steps = value.view_rebuilders() if isinstance(value, Tracer) and value.kind == "array" \
            else None
        choice = choices.get(id(value._buffer)) if isinstance(value, Tracer) else None
        if choice is not None:
            out_specs.append(_choice_out_spec(choice, value, choices, input_leaf, buffer_outs,
                                              out_atoms))
        elif steps is not None:
            out_specs.append(_view_out_spec(value, steps, input_leaf, buffer_outs, out_atoms))
        elif isinstance(value, Tracer):
            out_specs.append(OutSpec("traced", len(out_atoms), value.kind))
            out_atoms.append(value.ir_var)
        elif isinstance(value, np.ndarray):
            out_specs.append(_const_out_spec(value, const_roots))
        elif isinstance(value, np.generic):
            out_specs.append(OutSpec("const", value=value))
        else:
            _refuse_unregistered_holder(path, value)
            refuse_made_while_tracing(value, path or "the result")
            out_specs.append(OutSpec("static", value=value))
    mutated, seen = [], {}
    for i, tracer in tracers.items():
        buf = tracer._buffer
        if buf.mutated and input_leaf[id(buf)] == i:
            if id(buf) not in seen:
                seen[id(buf)] = len(out_atoms)
                out_atoms.append(buf.var)
            mutated.append((i, seen[id(buf)]))
    _check_overlaps(spec, leaves, mutated, reads)
    check_index = len(out_atoms)
    if trace.checks:
        out_atoms.extend(check_outputs(trace))
    inputs = _graph_inputs(tracers, leaves)
    in_vars = [tracers[i]._buffer.initial for i, _ in inputs]
    graph = passes.simplify(trace.to_graph(in_vars, out_atoms))
    return TraceResult(graph, out_structure, tuple(out_specs), tuple(mutated),
                       time.perf_counter() - start,
                       _check_records(trace), check_index, reads, inputs, trace.writes,
                       trace.layout_questions)


def _check_records(trace) -> tuple[tuple, ...]:
    """(message, error, source) of each run-time check: source is the user's line that
    computed its condition, where the error is shown raised."""
    made_at = {v: e.source for e in trace.eqns for v in e.outs} if trace.checks else {}
    return tuple((c.message, c.error, made_at.get(c.ok)) for c in trace.checks)


def _graph_inputs(tracers: dict[int, Tracer], leaves) -> tuple[tuple[int, Any], ...]:
    """One entry per distinct input buffer, in order: its first leaf position, and the dtype
    a scalar leaf is made an array of (None for an array)."""
    seen, inputs = set(), []
    for i, tracer in tracers.items():
        var = tracer._buffer.initial
        if id(var) not in seen:
            seen.add(id(var))
            dtype = None if isinstance(leaves[i], np.ndarray) else var.aval.dtype
            inputs.append((i, dtype))
    return tuple(inputs)


def _view_out_spec(value: Tracer, steps, input_leaf, buffer_outs, out_atoms) -> OutSpec:
    """A returned array that is (a view of) an input or of another array: rebuilt as that
    view of the caller's array (after write-back) or of one shared output array, so that it
    aliases what it aliases in NumPy. A traced index the view depends on becomes an output."""
    rebuilders = []
    for fn, operands in steps:
        rebuilders.append((fn, tuple(range(len(out_atoms), len(out_atoms) + len(operands)))))
        out_atoms.extend(t.ir_var for t in operands)
    buf = value._buffer
    if id(buf) in input_leaf:
        return OutSpec("view", -1, "array", (input_leaf[id(buf)], tuple(rebuilders)))
    if id(buf) not in buffer_outs:
        buffer_outs[id(buf)] = len(out_atoms)
        out_atoms.append(buf.var)
    return OutSpec("view", buffer_outs[id(buf)], "array", (-1, tuple(rebuilders)))


def _valid_choices(trace) -> dict:
    """The choices of `if`s and loops that may leave a name an array from before them (see
    `Choice`) that nothing updated in place since. Where something did, plain Python would
    update the array chosen, which the compiled program cannot follow: refused when every
    branch picks such an array, else checked at run time (the run falls back to plain
    Python when it picks one)."""
    valid = {}
    for key, choice in choices_of(trace).items():
        if choice.still_holds():
            valid[key] = choice
            continue
        fresh = [k for k, source in enumerate(choice.sources) if source is None]
        message = (f"{choice.what} may be an array from before it (a branch binds it to one, "
                   "or a loop makes no pass), and then it, or that array, is updated in place: "
                   "psc_jit cannot follow which array that update reaches")
        if not fresh:
            raise UnsupportedError(message, None, "copy it (`.copy()`) before updating it in "
                                   "place")
        with tracing(trace):
            ok = call_ufunc(np.equal, choice.index, fresh[0])
        trace.require(ok, choice.index, message + " (this run)", DataDependentShapeError)
    return valid


def _choice_out_spec(choice, value: Tracer, choices, input_leaf, buffer_outs,
                     out_atoms) -> OutSpec:
    """An output that is, by the branch the run takes, an array from before an `if` or the
    conditional's result: rebuilt as the one the run picks (index: the graph output holding
    the branch taken; value: per branch, how to rebuild that array, itself a choice when the
    array from before was one)."""
    if value.is_view:
        raise UnsupportedError(
            f"a view of {choice.what}, which may be an array from before it, is a result: "
            "psc_jit cannot rebuild it as a view of the array the run picks", None,
            "copy it (`.copy()`) before taking the view")
    index = len(out_atoms)
    out_atoms.append(choice.index.ir_var)
    specs = []
    for source in choice.sources:
        array = value if source is None else source
        inner = choices.get(id(array._buffer)) if source is not None else None
        if inner is not None and not array.is_view:
            specs.append(_choice_out_spec(inner, array, choices, input_leaf, buffer_outs,
                                          out_atoms))
            continue
        steps = array.view_rebuilders()
        if steps is None:
            raise UnsupportedError(f"{choice.what} is bound to a view psc_jit cannot rebuild",
                                   None, "copy it in the branch (`.copy()`)")
        specs.append(_view_out_spec(array, steps, input_leaf, buffer_outs, out_atoms))
    return OutSpec("choice", index, "array", tuple(specs))


def _const_out_spec(value: np.ndarray, roots: dict) -> OutSpec:
    """A returned array computed from literals only: copied afresh on every run, one copy per
    array it is (a view of), so that names bound to one array, or to views of it, alias as
    they do in NumPy. index: the base array's number (-1: a copy of its own); value = (copy
    of the base array, how the view sits in it: None for the base itself, else (offset in
    bytes, shape, strides))."""
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    group, base = roots.setdefault(id(root), (len(roots), np.copy(root, order="K")))
    if value is root:
        return OutSpec("const", group, value=(base, None))
    if base.strides != root.strides:     # a base NumPy could not copy in its own layout
        return OutSpec("const", -1, value=(np.copy(value), None))
    offset = value.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return OutSpec("const", group, value=(base, (offset, value.shape, value.strides)))


def _check_overlaps(spec: CallSpec, leaves, mutated, reads: Reads) -> None:
    """Refuse an in-place update whose effect depends on aliasing psc_jit does not model: of
    a writable array whose elements share memory (a read-only one refuses the update when the
    program runs, as NumPy does), or of one of two inputs that share memory."""
    if not mutated:
        return
    paths = spec.paths
    for i, _ in mutated:
        if isinstance(leaves[i], np.ndarray) and leaves[i].flags.writeable and \
                overlaps_itself(leaves[i]):
            name = paths[i] if i < len(paths) else reads.inputs[i - len(paths)].source.text()
            raise UnsupportedError(
                f"{name} is updated in place, and its elements share memory (strides "
                f"{leaves[i].strides}: a zero stride, or windows that overlap), so that NumPy's "
                "result depends on the order it writes them in", None,
                f"update a copy ({name}.copy()), or make it with np.repeat or np.tile, "
                "which give each element its own memory")
    mutated_paths = {paths[i] for i, _ in mutated if i < len(paths)}
    for p1, p2 in overlapping_inputs(spec):
        if p1 in mutated_paths or p2 in mutated_paths:
            raise UnsupportedError(
                f"{p1} and {p2} share memory (one is a view of the other) and the code updates "
                "one of them in place: psc_jit cannot follow that aliasing exactly",
                None, f"pass a copy ({p2}.copy()) or update the array through one name only")
