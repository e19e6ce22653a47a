"""The primitive record and the one table of primitives.

Each primitive is a frozen record holding every rule it has: shape rule, dtype rule, NumPy
reference implementation (the oracle of the tests and the graph interpreter), StableHLO
lowering, optionally a peephole rewrite (`rewrite(eqn, producer) -> an equivalent Eqn or
None`: an equation XLA runs better, given the equations producing its operands), the NumPy
ufuncs it implements (the NumPy layer's dispatch table is built from them), and the rules of
differentiation (`core.transform` is their interpreter):

- `jvp(ctx, primals, tangents, **params) -> (primal outs, tangent outs)`: forward mode. A
  tangent is None where it is zero; `ctx` (a `core.transform.RuleContext`) emits equations
  (`ctx.mul(t, ctx.cos(x))`) and `ctx.primal_outs()` emits this equation itself.
- `transpose(ctx, ct, *operands, **params) -> [cotangent or None per operand]`: for a
  primitive that is linear in some operands (`linear=True`); those come as `Linear(aval)`.
- `vjp(ctx, primals, active, **params) -> (primal outs, which outs are active, backward)`:
  reverse mode for the control-flow primitives, whose JVP cannot be split per equation into
  a primal and a linear part; `backward(ctx, cts) -> cotangent per operand` emits the
  transposed computation.
- `differentiable=False` declares a primitive whose results have no derivative (comparisons,
  integer and bit operations, argmax): their tangents are zero, without a rule.

and its rule of automatic batching (`core.control.batching` is its interpreter):

- `batch(ctx, operands, batched, **params) -> (outs, which outs are batched)`: the equation on
  operands that carry one more leading axis, the batch axis, where `batched` says so (axis 0,
  always; an unbatched operand has its own shape). `ctx` (a `core.transform.BatchContext`)
  emits equations, knows `axis_size`, gives an unbatched operand the batch axis
  (`ctx.with_batch(x)`) and batches sub-graphs. The interpreter copies an equation none of whose
  operands is batched without asking its rule.

Categories share one rule through `functools.partial`. The modules of this package define the
primitives as values (`exp_p`); `PRIMITIVES` is the closed set, by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..ir import ShapedArray


@dataclass(frozen=True, eq=False)
class Primitive:
    name: str
    shape_rule: Callable[..., Any]      # (*avals_in, **params) -> shape (or list, if multiple)
    dtype_rule: Callable[..., Any]      # (*avals_in, **params) -> dtype (or list, if multiple)
    impl: Callable[..., Any]            # (*ndarrays, **params) -> ndarray (or list)
    lowering: Callable[..., Any]        # (ctx, *operand_names, **params) -> list of value names
    multiple_results: bool = False
    weak_type_rule: Callable[..., Any] | None = None   # default: weak iff every input is weak
    doc: str = ""
    ufuncs: tuple[np.ufunc, ...] = ()   # the NumPy ufuncs this primitive is, on one dtype
    jvp: Callable[..., Any] | None = None         # forward-mode rule (see the module doc)
    transpose: Callable[..., Any] | None = None   # for linear primitives
    vjp: Callable[..., Any] | None = None         # reverse mode of control flow
    differentiable: bool = True                   # False: results have zero derivative
    linear: bool = False                          # linear in its inexact operands
    batch: Callable[..., Any] | None = None       # rule of automatic batching (vmap)
    rewrite: Callable[..., Any] | None = None   # (eqn, producer) -> an equivalent Eqn or None

    def __repr__(self) -> str:
        return f"Primitive({self.name})"

    def abstract_eval(self, *avals_in: ShapedArray, **params) -> list[ShapedArray]:
        shapes = self.shape_rule(*avals_in, **params)
        dtypes = self.dtype_rule(*avals_in, **params)
        weak = self._weak(avals_in, params)
        if not self.multiple_results:
            shapes, dtypes, weak = [shapes], [dtypes], [weak]
        elif not isinstance(weak, (list, tuple)):
            weak = [weak] * len(shapes)
        return [ShapedArray(tuple(s), d, w)
                for s, d, w in zip(shapes, dtypes, weak, strict=True)]

    def _weak(self, avals_in, params):
        if self.weak_type_rule is not None:
            return self.weak_type_rule(*avals_in, **params)
        return bool(avals_in) and all(a.weak_type for a in avals_in)


@dataclass(frozen=True)
class Linear:
    """An operand a transpose rule transposes with respect to (JAX's UndefinedPrimal): its
    value is not known, only its type."""
    aval: ShapedArray


PRIMITIVES: dict[str, Primitive] = {}


def register(prim: Primitive) -> Primitive:
    if prim.name in PRIMITIVES:
        raise ValueError(f"primitive {prim.name!r} is registered twice")
    PRIMITIVES[prim.name] = prim
    return prim


# Rules shared by categories ------------------------------------------------------------------

def same_shape_rule(*avals: ShapedArray, **_) -> tuple[int, ...]:
    shapes = {a.shape for a in avals}
    if len(shapes) != 1:
        raise TypeError(f"operands must have one shape, got {[a.shape for a in avals]}")
    return avals[0].shape


def same_dtype_rule(*avals: ShapedArray, **_) -> np.dtype:
    dtypes = {a.dtype for a in avals}
    if len(dtypes) != 1:
        raise TypeError(f"operands must have one dtype, got {[str(a.dtype) for a in avals]}")
    return avals[0].dtype


def bool_dtype_rule(*_avals, **_) -> np.dtype:
    return np.dtype(bool)


def never_weak(*_avals, **_) -> bool:
    return False
