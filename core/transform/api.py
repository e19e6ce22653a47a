"""The transformations users call, with JAX's signatures and meanings: `grad`,
`value_and_grad`, `vjp`, `jvp` (and `jacfwd`, `jacrev` in `jacobian`).

They take a Python function of plain NumPy code (in-place updates, Python loops, np.where and
all) over pytrees of arrays. Called inside a trace (`jit(grad(f))`, `grad(grad(f))`), the
transformed graph is inlined into the enclosing trace; called on arrays, it runs compiled,
through `jit`, cached per signature like any jitted function. Arguments that the function
updates in place are updated as NumPy would update them.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any, Callable, Sequence

import numpy as np

from ..compile.jit import Jitted
from ..ir import Literal, ShapedArray
from ..tracing import current_trace, to_atom
from ..tree_util import LEAF, children, flatten, leaf_count, registration_advice, unflatten
from .flat import FlatTrace, Static, inline, leaf_aval, leaf_positions, to_tracer, trace_flat
from ..control.ops import Ops, is_inexact
from .jvp import jvp_graph
from .vjp import vjp_graph

_program_ids = itertools.count()
_PROGRAMS: dict = {}
PROGRAMS_KEPT = 128


def compiled(program: Callable, name: str) -> Jitted:
    """`jit(program)`, cached under a key of its own (never another program's)."""
    jitted = Jitted(program, name=name, roll=False)
    jitted.owner_key = ("transformed", name, next(_program_ids))
    return jitted


def program_for(key, make: Callable[[], Jitted]) -> Jitted:
    """One compiled program per key (the transformation, the function, its options), so that
    `grad(f)(x)` made again finds the program compiled before; the oldest of more than
    PROGRAMS_KEPT are dropped."""
    try:
        program = _PROGRAMS.get(key)
    except TypeError:                  # an unhashable function or option: a program of its own
        return make()
    if program is None:
        if len(_PROGRAMS) >= PROGRAMS_KEPT:
            _PROGRAMS.pop(next(iter(_PROGRAMS)))
        program = _PROGRAMS[key] = make()
    return program


class Transformed:
    """A transformed function: inlined into an enclosing trace, or compiled on arrays.
    `key` names the transformation with its function and options (see `program_for`)."""

    def __init__(self, fun: Callable, traced: Callable, name: str, key: tuple,
                 check: Callable | None = None):
        self.fun, self.traced, self.name, self.key, self.check = fun, traced, name, key, check
        self._jitted: Jitted | None = None
        functools.update_wrapper(self, fun, updated=())   # names, not fun's attributes

    def __call__(self, *args, **kwargs):
        if self.check is not None:
            self.check(args)
        if current_trace() is not None:
            return self.traced(*args, **kwargs)
        return self.jitted(*args, **kwargs)

    @property
    def jitted(self) -> Jitted:
        if self._jitted is None:
            self._jitted = program_for(self.key, self._compiled)
        return self._jitted

    def _compiled(self) -> Jitted:
        traced = self.traced

        @functools.wraps(self.fun)         # the signature of fun: arguments by its names
        def program(*args, **kwargs):
            return traced(*args, **kwargs)
        return compiled(program, self.name)


def _name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def as_tuple(argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _cast(atom, aval: ShapedArray):
    return Ops(current_trace().eqns).cast(atom, aval)


# -- grad and value_and_grad ------------------------------------------------------------------

def check_grad_inputs(args: Sequence, argnums, what: str = "grad") -> None:
    """JAX's TypeError for an argument that has no derivative (an integer, a bool, None)."""
    for n in as_tuple(argnums):
        if n >= len(args):
            raise TypeError(f"{what}: argnums {argnums} asks for argument {n}, but only "
                            f"{len(args)} positional arguments were given")
        for leaf in flatten(args[n])[0]:
            refuse_unregistered(leaf, what)
            dtype = leaf_aval(leaf)[0].dtype if _is_numeric(leaf) else None
            if dtype is None or dtype.kind not in "fc":
                got = dtype.name if dtype is not None else type(leaf).__name__
                raise TypeError(
                    f"{what} requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {got} for argument {n}. An integer "
                    "has no derivative: convert it with .astype(float), or do not list it "
                    "in argnums")


def refuse_unregistered(leaf, what: str) -> None:
    """TypeError for an object with attributes where a tree of arrays belongs: the user
    meant a node (a dataclass, a class of theirs) and must register it."""
    if not _is_numeric(leaf) and hasattr(leaf, "__dict__") and not callable(leaf):
        raise TypeError(f"{what}: an argument holds an object it cannot differentiate; "
                        f"{registration_advice(leaf)}")


def _is_numeric(leaf) -> bool:
    return isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic)) or hasattr(
        leaf, "aval")


def _scalar_output(ft: FlatTrace, has_aux: bool, what: str) -> int:
    """The graph output index of the value to differentiate (TypeError as JAX words it)."""
    tree = ft.out_tree
    if has_aux:
        if tree is LEAF or len(children(tree)) != 2:
            raise TypeError(f"{what} with has_aux=True: the function must return a pair "
                            "(output, auxiliary data)")
        tree = children(tree)[0]
    out = ft.outs[0]
    if tree is not LEAF or isinstance(out, Static):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was a "
                        f"{'tree of arrays' if tree is not LEAF else type(out.value).__name__}.")
    aval = ft.graph.out_atoms[out].aval
    if aval.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had "
                        f"shape: {aval.shape}.")
    if aval.dtype.kind != "f":
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {aval.dtype.name}. For complex outputs use "
                        "vjp directly")
    return out


def cotangents_by_leaf(ft: FlatTrace, active: Sequence[bool], cts) -> dict[int, Any]:
    """{leaf position: its cotangent as a tracer of its input's type} for the active inputs
    (`cts` in their order)."""
    found = iter(cts)
    return {i: to_tracer(_cast(next(found), ft.input_aval(k)), ft.input_kind(k))
            for k, (i, act) in enumerate(zip(ft.inputs, active, strict=True)) if act}


def gradient_trees(ft: FlatTrace, args, argnums, positions, cts) -> Any:
    """The cotangents of the active inputs, as trees shaped like args[argnums]."""
    wanted = {i for ps in positions for i in ps}
    by_leaf = cotangents_by_leaf(ft, [i in wanted for i in ft.inputs], cts)
    trees = tuple(unflatten(flatten(args[n])[1], [by_leaf[i] for i in ps])
                  for n, ps in zip(as_tuple(argnums), positions, strict=True))
    return trees[0] if isinstance(argnums, int) else trees


def value_and_grad_traced(fun, argnums, has_aux, args, kwargs):
    positions = leaf_positions(args, as_tuple(argnums))
    wanted = {i for ps in positions for i in ps}
    ft = trace_flat(fun, args, kwargs, sorted(wanted))
    value = _scalar_output(ft, has_aux, "grad")
    n = len(ft.graph.out_atoms)
    graphs = vjp_graph(ft.graph, [i in wanted for i in ft.inputs], [k == value for k in range(n)])
    atoms = inline(graphs.forward, ft.operands)
    one = Literal.of(np.ones((), ft.graph.out_atoms[value].aval.dtype))
    cts = inline(graphs.backward, atoms[n:] + [one])
    return ft.finish(atoms[:n]), gradient_trees(ft, args, argnums, positions, cts)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """`(f(*args), gradient of f's scalar output with respect to args[argnums])` (a tree like
    each argument; a tuple of them for a tuple argnums); with has_aux, f returns
    (output, aux) and the first result is (output, aux)."""
    traced = functools.partial(_vg_call, fun, argnums, has_aux)
    return Transformed(fun, traced, f"value_and_grad({_name(fun)})",
                       ("value_and_grad", fun, as_tuple(argnums), has_aux),
                       functools.partial(check_grad_inputs, argnums=argnums))


def _vg_call(fun, argnums, has_aux, *args, **kwargs):
    return value_and_grad_traced(fun, argnums, has_aux, args, kwargs)


def _grad_call(fun, argnums, has_aux, *args, **kwargs):
    value, grads = value_and_grad_traced(fun, argnums, has_aux, args, kwargs)
    return (grads, value[1]) if has_aux else grads


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The gradient of `fun`'s scalar (float) output with respect to args[argnums], as JAX's
    `grad`: a function returning a tree like the argument (a tuple of them for a tuple
    argnums), and (gradient, aux) with has_aux."""
    traced = functools.partial(_grad_call, fun, argnums, has_aux)
    return Transformed(fun, traced, f"grad({_name(fun)})", ("grad", fun, as_tuple(argnums),
                                                             has_aux),
                       functools.partial(check_grad_inputs, argnums=argnums))


# -- vjp --------------------------------------------------------------------------------------

def _value_tree(ft: FlatTrace, has_aux: bool):
    """The structure of the value (the output, or its first part with has_aux)."""
    if not has_aux:
        return ft.out_tree
    if ft.out_tree is LEAF or len(children(ft.out_tree)) != 2:
        raise TypeError("with has_aux=True the function must return a pair "
                        "(output, auxiliary data)")
    return children(ft.out_tree)[0]


def _ct_mask(ft: FlatTrace, n_value: int) -> list[bool]:
    """Graph outputs that take a cotangent: the inexact leaves of the value."""
    asked = {ft.outs[k] for k in range(n_value) if not isinstance(ft.outs[k], Static)}
    return [k in asked and is_inexact(a.aval) for k, a in enumerate(ft.graph.out_atoms)]


def _ct_atoms(ft: FlatTrace, value_tree, cotangent, mask) -> list:
    """The cotangent's leaves for the outputs that take one (TypeError on a wrong shape)."""
    n_value = leaf_count(value_tree)
    leaves, tree = flatten(cotangent)
    if tree != value_tree:
        raise TypeError("the cotangent given to vjp's function must have the structure of the "
                        "function's output")
    atoms = []
    for k in range(n_value):
        out = ft.outs[k]
        if isinstance(out, Static) or not mask[out]:
            continue
        aval = ft.graph.out_atoms[out].aval.update(weak_type=False)
        if leaf_aval(leaves[k])[0].shape != aval.shape:
            raise ValueError(f"the cotangent of output leaf {k} has shape "
                             f"{leaf_aval(leaves[k])[0].shape}, the output {aval.shape}")
        atoms.append(_cast(to_atom(leaves[k]), aval))
    return atoms


def vjp(fun: Callable, *primals, has_aux: bool = False):
    """`(fun(*primals), vjp_fn)` (and aux, with has_aux) where `vjp_fn(cotangent)` gives the
    cotangents of the primals, a tuple like `primals` (JAX's `vjp`)."""
    for leaf in flatten(primals)[0]:
        refuse_unregistered(leaf, "vjp")
    ft = trace_flat(fun, primals, {})
    value_tree = _value_tree(ft, has_aux)
    active = [is_inexact(ft.input_aval(k)) for k in range(len(ft.inputs))]
    mask = _ct_mask(ft, leaf_count(value_tree))
    graphs = vjp_graph(ft.graph, active, mask)
    n = len(ft.graph.out_atoms)
    if current_trace() is not None:
        atoms = inline(graphs.forward, ft.operands)
        result, residuals = ft.finish(atoms[:n]), atoms[n:]
    else:
        result, residuals = _run_forward(ft, graphs.forward, n, _name(fun))

    backward = functools.partial(_backward_program, ft, graphs.backward, value_tree, mask,
                                 primals, active, len(residuals))
    programs: list[Jitted] = []

    def vjp_fn(cotangent):
        if current_trace() is not None:
            return backward(*residuals, cotangent)
        if not programs:
            programs.append(compiled(backward, f"vjp_fn({_name(fun)})"))
        return programs[0](*residuals, cotangent)

    if has_aux:
        return result[0], vjp_fn, result[1]
    return result, vjp_fn


def _run_forward(ft: FlatTrace, forward, n: int, name: str):
    def program(*values):
        tracers = dict(zip(ft.inputs, values, strict=True))
        local = dataclasses.replace(ft, leaves=[tracers.get(i, leaf)
                                                for i, leaf in enumerate(ft.leaves)])
        atoms = inline(forward, [to_atom(v) for v in values])
        return local.finish(atoms[:n]), tuple(to_tracer(a) for a in atoms[n:])
    return compiled(program, f"vjp({name})")(*(ft.leaves[i] for i in ft.inputs))


def _backward_program(ft, backward, value_tree, mask, primals, active, n_residuals, *values):
    residuals, cotangent = values[:n_residuals], values[n_residuals]
    cts = inline(backward, [to_atom(r) for r in residuals] + _ct_atoms(ft, value_tree, cotangent,
                                                                       mask))
    return _primal_cts_of(ft, primals, active, cts)


def _primal_cts_of(ft: FlatTrace, primals, active, cts) -> tuple:
    """Cotangents shaped like the primals (zeros for those with no derivative)."""
    by_leaf = cotangents_by_leaf(ft, active, cts)
    leaves, tree = flatten(tuple(primals))
    out = [by_leaf.get(i, _zero_cotangent(leaf)) for i, leaf in enumerate(leaves)]
    return unflatten(tree, out)


def _zero_cotangent(leaf):
    if _is_numeric(leaf):
        aval = leaf_aval(leaf)[0]
        return np.zeros(aval.shape, aval.dtype)
    return leaf


# -- jvp --------------------------------------------------------------------------------------

def _tangent_atom(tangent, aval: ShapedArray, path: int):
    t_aval = leaf_aval(tangent)[0] if _is_numeric(tangent) else None
    if t_aval is None or t_aval.shape != aval.shape:
        raise ValueError(f"jvp: tangent {path} has shape {getattr(t_aval, 'shape', None)}, "
                         f"its primal {aval.shape}")
    if t_aval.dtype != aval.dtype and not t_aval.weak_type:
        raise TypeError(f"jvp: primal and tangent arguments must have equal dtypes; tangent "
                        f"{path} is {t_aval.dtype.name}, its primal {aval.dtype.name}")
    atom = to_atom(tangent) if hasattr(tangent, "aval") else Literal.of(
        np.asarray(tangent, aval.dtype))
    return _cast(atom, aval.update(weak_type=False))


def jvp_traced(fun, primals, tangents, has_aux=False):
    primals, tangents = tuple(primals), tuple(tangents)
    if flatten(primals)[1] != flatten(tangents)[1]:
        raise TypeError("jvp: primal and tangent arguments must have the same tree structure")
    for leaf in flatten(primals)[0]:
        refuse_unregistered(leaf, "jvp")
    ft = trace_flat(fun, primals, {})
    t_leaves = flatten(tangents)[0]
    nonzeros = [is_inexact(ft.input_aval(k)) for k in range(len(ft.inputs))]
    t_atoms = [_tangent_atom(t_leaves[i], ft.input_aval(k), i)
               for k, (i, nz) in enumerate(zip(ft.inputs, nonzeros, strict=True)) if nz]
    n = len(ft.graph.out_atoms)
    _value_tree(ft, has_aux)
    graph, out_nz = jvp_graph(ft.graph, nonzeros, [k < ft.n_outs for k in range(n)])
    atoms = inline(graph, ft.operands + t_atoms)
    result = ft.finish(atoms[:n])
    found = iter(atoms[n:])
    tangent_atoms = [next(found) if nz else None for nz in out_nz]
    out_tangents = [_zero_tangent(ft, k) if t is None else t
                    for k, t in enumerate(tangent_atoms[:ft.n_outs])]
    tangent = ft.result(out_tangents, ["array" if k == "python" else k for k in ft.kinds])
    if has_aux:
        return result[0], tangent[0], result[1]
    return result, tangent


def _zero_tangent(ft: FlatTrace, k: int):
    aval = ft.graph.out_atoms[k].aval
    return Literal.of(np.zeros(aval.shape, aval.dtype))


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False):
    """`(fun(*primals), the derivative of fun at primals in the direction tangents)`, each a
    tree like fun's output (JAX's `jvp`); with has_aux, also fun's aux."""
    if current_trace() is not None:
        return jvp_traced(fun, primals, tangents, has_aux)

    def make() -> Jitted:
        def jvp_program(primals, tangents):
            return jvp_traced(fun, primals, tangents, has_aux)
        return compiled(jvp_program, f"jvp({_name(fun)})")
    return program_for(("jvp", fun, has_aux), make)(tuple(primals), tuple(tangents))
