"""Placement: `sharding_constraint`, the layout a value must have over the program's mesh
(`psc_jit.sharding.constrain(x, spec)`). It computes nothing: on one device it lowers to its
operand; in a partitioned program to Shardy's `sdy.sharding_constraint`, which the SPMD
partitioner honours (and adds the collectives that move the value there)."""
from __future__ import annotations

import numpy as np

from .autodiff import linear_in
from .record import Primitive, register, same_dtype_rule, same_shape_rule


def _impl(x, *, spec):
    return np.asarray(x)


def _dims(spec, rank: int) -> list[tuple[str, ...]]:
    dims = list(spec) + [None] * (rank - len(spec))
    return [() if d is None else (d if isinstance(d, tuple) else (d,)) for d in dims]


def _lowering(ctx, x, *, spec):
    axes = ctx.module.mesh_axes
    if not axes:        # a program of one device: every value is whole there
        return [x]
    aval = ctx.avals_in[0]
    dims = _dims(spec, len(aval.shape))
    unknown = sorted({n for dim in dims for n in dim} - set(axes))
    if unknown:
        from ..lowering import LoweringError
        raise LoweringError(f"constrain: the program's mesh has axes {', '.join(axes)}; "
                            f"{', '.join(map(repr, unknown))} is not one of them")
    text = ", ".join("{" + ", ".join(f'"{n}"' for n in dim) + "}" for dim in dims)
    return ctx.op("sdy.sharding_constraint", [x], ctx.avals_in, ctx.avals_out,
                  {"sharding": f"#sdy.sharding<@{ctx.module.mesh_name}, [{text}]>"})


def _transpose(ctx, ct, x, *, spec):
    return [ct]         # (a layout of the cotangent is XLA's choice)


def _batch(ctx, operands, batched, *, spec):
    """The batch axis is a new leading one, not split."""
    return ctx.apply(operands, spec=(None, *spec)), [True]


sharding_constraint_p = register(Primitive(
    "sharding_constraint", same_shape_rule, same_dtype_rule, _impl, _lowering,
    doc="x, laid out over the program's mesh as spec says (psc_jit.sharding.constrain)",
    jvp=linear_in(), linear=True, transpose=_transpose, batch=_batch))
