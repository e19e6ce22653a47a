"""`vmap`, with JAX's signature and meaning: `vmap(f)(X)` is `np.stack([f(x) for x in X])`,
computed by one program on the whole batch.

f is traced once on one member (the mapped arguments without their mapped axis), and that
graph is batched (`batching`): each equation by its primitive's rule. `in_axes` and `out_axes`
are an int, None, or a tree prefix of the arguments (the outputs) whose leaves are ints (the
mapped axis, negative counting from the end) or None (not mapped: the same for every member);
the arrays among keyword arguments are mapped along axis 0 (as in JAX; their other values are
passed as they are). An argument f updates in place is updated along its
mapped axis; a run-time check (an index out of bounds) raises if it fails for any member.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Callable

import numpy as np

from ..ir import ShapedArray
from ..tracing import Tracer, caller_source, current_trace, to_atom
from ..tree_util import (broadcast_prefix, flatten, flatten_with_paths, registration_advice,
                         unflatten)
from .api import Transformed, _name
from ..control.batching import batch_eval, with_batch
from .collectives import bound_axis
from .flat import FlatTrace, Static, is_number, leaf_aval, to_tracer, trace_flat
from ..control.ops import Ops


def _is_axis(value) -> bool:
    return value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, bool))


def _check_spec(spec, what: str) -> None:
    leaves = flatten(spec)[0]
    if not all(_is_axis(a) for a in leaves):
        raise TypeError(f"vmap {what} must be an int, None, or (nested) standard Python "
                        f"container (tuple/list/dict) thereof, got {spec!r}")


def _spec_key(spec):
    leaves, structure = flatten(spec)
    return tuple(leaves), structure


def _argument_names(fun, n_args: int) -> list[str]:
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[n] if n < len(names) else f"args[{n}]" for n in range(n_args)]


def _leaf_axes(fun, in_axes, args, kwargs) -> tuple[list, list[int | None], list[str]]:
    """(the call's leaves, each one's mapped axis, each one's name as the user wrote it)."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)     # JAX's reading: a list of axes, one per argument
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                         f"corresponding to the positional arguments passed to the function, "
                         f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
    per_arg = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    names = _argument_names(fun, len(args))
    axes, paths = [], []
    for name, spec, arg in zip(names, per_arg, args, strict=True):
        try:
            axes += broadcast_prefix(spec, arg)
        except ValueError as err:
            raise ValueError(f"vmap in_axes specification must be a tree prefix of the "
                             f"corresponding value, got specification {spec!r} for argument "
                             f"{name}: {err}") from None
        paths += [path for path, _ in flatten_with_paths(arg, path=name)[0]]
    pairs = flatten_with_paths(dict(kwargs))[0]            # in the order flatten gives them
    axes += [0 if isinstance(leaf, (np.ndarray, Tracer)) else None for _, leaf in pairs]
    paths += [path for path, _ in pairs]
    leaves = flatten((tuple(args), dict(kwargs)))[0]
    return leaves, [_normalized(a, leaf, path) for a, leaf, path in zip(axes, leaves, paths,
                                                                        strict=True)], paths


def _normalized(axis, leaf, path: str) -> int | None:
    if axis is None or leaf is None:
        return None
    shape = leaf_aval(leaf)[0].shape if (is_number(leaf) or isinstance(leaf, Tracer)) else None
    if shape is None and hasattr(leaf, "__dict__"):
        raise ValueError(f"vmap was requested to map argument {path} along axis {axis}, but "
                         f"{registration_advice(leaf)} (or give it in_axes None)")
    if shape is None:
        raise ValueError(f"vmap was requested to map argument {path} along axis {axis}, but "
                         f"it is a {type(leaf).__name__}, not an array: give it in_axes None")
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"vmap was requested to map its argument {path} along axis {axis}, "
                         f"which implies that its rank should be at least "
                         f"{axis + 1 if axis >= 0 else -axis}, but is only {len(shape)} (its "
                         f"shape is {shape})")
    return int(axis) % len(shape)


def _axis_size(leaves, axes, paths, axis_size) -> int:
    sizes = {}
    for leaf, axis, path in zip(leaves, axes, paths, strict=True):
        if axis is not None:
            aval = leaf_aval(leaf)[0]
            sizes.setdefault(aval.shape[axis], []).append(
                f"axis {axis} of argument {path} of type {aval}")
    if axis_size is not None:
        sizes.setdefault(int(axis_size), []).append("axis_size")
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes (or be given "
                         "axis_size)")
    if len(sizes) > 1:
        lines = [f"  * {'one axis' if len(found) == 1 else f'{len(found)} axes'} had size "
                 f"{n}: {', '.join(found)}" for n, found in sizes.items()]
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                         + ";\n".join(lines))
    return next(iter(sizes))


def _member_aval(leaf, axis: int) -> tuple[ShapedArray, str]:
    """The type of one member of a mapped leaf: its mapped axis dropped (a 0-d member is a
    NumPy scalar, as iterating over a 1-d array gives)."""
    aval, kind = leaf_aval(leaf)
    shape = aval.shape[:axis] + aval.shape[axis + 1:]
    return aval.update(shape=shape), "scalar" if not shape else kind


def vmap_traced(fun, in_axes, out_axes, axis_size, args, kwargs, axis_name=None):
    leaves, axes, paths = _leaf_axes(fun, in_axes, args, kwargs)
    size = _axis_size(leaves, axes, paths, axis_size)
    members = {i: _member_aval(leaf, a) for i, (leaf, a) in enumerate(zip(leaves, axes,
                                                                          strict=True))
               if a is not None}
    with bound_axis(axis_name, size) if axis_name is not None else contextlib.nullcontext():
        ft = trace_flat(fun, args, kwargs, avals=members)
    ops = Ops(current_trace().eqns, caller_source())
    operands = [to_atom(ft.leaves[i]) for i in ft.inputs]
    batched = [axes[i] is not None for i in ft.inputs]
    operands = [ops.moveaxis(x, axes[i], 0) if b else x
                for x, i, b in zip(operands, ft.inputs, batched, strict=True)]
    outs, out_b = batch_eval(ops, ft.graph, operands, batched, size, axis_name)
    _write_back(ft, ops, outs, out_b, axes, paths, size)
    _hand_over_checks(ft, ops, outs, out_b, size)
    return _result(ft, ops, outs, out_b, out_axes, size)


def _moved(ops: Ops, x, batched: bool, axis: int, size: int):
    """A result as a batched value with its batch axis at `axis`."""
    x = x if batched else with_batch(ops, x, size)
    return ops.moveaxis(x, 0, axis)


def _write_back(ft: FlatTrace, ops: Ops, outs, out_b, axes, paths, size) -> None:
    """Arguments f updated in place, updated along their mapped axis."""
    for leaf, index in ft.mutated:
        axis = axes[leaf]
        if axis is None and out_b[index]:
            raise ValueError(
                f"vmap: the function updates argument {paths[leaf]} in place, with values "
                "that differ from member to member, but that argument is not mapped (in_axes "
                "None): map it, or update a copy")
        value = outs[index] if axis is None else _moved(ops, outs[index], out_b[index], axis,
                                                        size)
        if isinstance(ft.leaves[leaf], Tracer):
            ft.leaves[leaf].assign(to_tracer(value))


def _hand_over_checks(ft: FlatTrace, ops: Ops, outs, out_b, size) -> None:
    """Each run-time check holds if it holds for every member; it reports the value of the
    first member it fails for. (An empty batch has nothing to check.)"""
    trace = current_trace()
    for ok, value, message, error in ft.checks if size else ():      # no member, no check
        holds, shown = outs[ok], outs[value]
        if out_b[ok] or out_b[value]:
            each = holds if out_b[ok] else with_batch(ops, holds, size)
            shown = _moved(ops, shown, out_b[value], 0, size)
            holds = ops.reduce_and(each, (0,))
            shown = ops.index_at(shown, ops.argmin(ops.convert(each, np.int8), 0))
        trace.require(to_tracer(holds, "scalar"), to_tracer(shown, "scalar"), message, error)


def _result(ft: FlatTrace, ops: Ops, outs, out_b, out_axes, size):
    try:
        axes = broadcast_prefix(out_axes, unflatten(ft.out_tree, [0] * len(ft.outs)))
    except ValueError as err:
        raise ValueError(f"vmap out_axes specification must be a tree prefix of the "
                         f"function's output, got {out_axes!r}: {err}") from None
    atoms, kinds = list(outs[:ft.n_outs]), list(ft.kinds)
    for k, (out, axis) in enumerate(zip(ft.outs, axes, strict=True)):
        if isinstance(out, Static):
            continue
        if axis is None:
            if out_b[out]:
                raise ValueError("vmap has mapped output but out_axes is None (output leaf "
                                 f"{k} differs from member to member)")
            continue
        ndim = atoms[out].aval.ndim + (not out_b[out])
        if not -ndim <= axis < ndim:
            raise ValueError(f"vmap out_axes {axis} is out of range for an output of rank "
                             f"{ndim}")
        atoms[out] = _moved(ops, atoms[out], out_b[out], int(axis) % ndim, size)
        kinds[k] = "array"
    return ft.result(atoms, kinds)


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None):
    """`fun` mapped over an axis of its arguments (JAX's `vmap`): `vmap(f)(X)` equals
    `np.stack([f(x) for x in X])`, computed as one program over the whole batch. `in_axes`
    (`out_axes`): an int, None (not mapped), or a tree prefix of the positional arguments (of
    the output) with such leaves; `axis_size`: the batch size when no argument is mapped;
    `axis_name` names the mapped axis for `psum`, `pmean` and `all_gather` inside fun."""
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    try:
        hash(axis_name)
    except TypeError:
        raise TypeError(f"vmap's axis_name must be hashable (a string); got "
                        f"{type(axis_name).__name__}") from None
    traced = functools.partial(_vmap_call, fun, in_axes, out_axes, axis_size, axis_name)
    return Transformed(fun, traced, f"vmap({_name(fun)})",
                       ("vmap", fun, _spec_key(in_axes), _spec_key(out_axes), axis_size,
                        axis_name))


def _vmap_call(fun, in_axes, out_axes, axis_size, axis_name, *args, **kwargs):
    return vmap_traced(fun, in_axes, out_axes, axis_size, args, kwargs, axis_name)
