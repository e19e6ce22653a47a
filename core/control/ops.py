"""What differentiation rules write into: `Ops` appends equations to a list, one method per
operation a rule needs (`ops.mul(t, ops.cos(x))`), every equation carrying `source` (the line
of the equation being differentiated, so a derivative is linked to the line it came from).

Operands are atoms (`Var`, `Literal`) or numbers; elementwise operations take operands of one
shape and dtype, as the primitives do; `full` and `zeros` make constants of a given type.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var
from ..passes import dead_code_elimination
from ..primitives import (abs_p, add_p, argmin_p, broadcast_in_dim_p, complex_p,
                          concatenate_p, conjugate_p, convert_element_type_p, cos_p, cosh_p,
                          cummax_p, cummin_p, cumprod_p, cumsum_p, divide_p, dot_general_p,
                          dynamic_slice_p, dynamic_update_slice_p, equal_p, exp_p, floor_p,
                          gather_p, greater_equal_p, greater_p, imag_p, iota_p, less_p, log_p,
                          maximum_p, minimum_p, multiply_p, negative_p, pad_p, power_p, real_p,
                          reduce_and_p, reduce_or_p, reduce_sum_p, reshape_p, rev_p, scatter_p,
                          select_p, sign_p, sin_p, sinh_p, slice_p, sort_p, sqrt_p, subtract_p,
                          transpose_p)
from ..tracing import to_atom
from .subtrace import inline


def is_inexact(aval: ShapedArray) -> bool:
    """Whether values of this type have derivatives (float and complex)."""
    return aval.dtype.kind in "fc"


def aval_of(atom) -> ShapedArray:
    return atom.aval


class Ops:
    """Equations appended to `eqns`, each with `source`."""

    def __init__(self, eqns: list[Eqn] | None = None, source: SourceInfo | None = None):
        self.eqns: list[Eqn] = [] if eqns is None else eqns
        self.source = source

    def bind(self, prim, *args, **params):
        atoms = tuple(to_atom(a) for a in args)
        avals = prim.abstract_eval(*(a.aval for a in atoms), **params)
        outs = tuple(Var(aval) for aval in avals)
        self.eqns.append(Eqn(prim, atoms, params, outs, self.source))
        return list(outs) if prim.multiple_results else outs[0]

    def new(self) -> Ops:
        """A fresh list of equations (a sub-graph's), with the same source."""
        return Ops(source=self.source)

    def graph(self, in_vars: Sequence[Var], outs: Sequence[Any]) -> Graph:
        return dead_code_elimination(
            Graph(tuple(in_vars), tuple(self.eqns), tuple(to_atom(o) for o in outs)))

    def inline(self, graph: Graph, operands: Sequence[Any]) -> list:
        """The graph's equations appended (each keeping its own source); its outputs."""
        return inline(self, graph, operands)

    # constants ------------------------------------------------------------------------------
    def full(self, aval: ShapedArray, value) -> Any:
        scalar = Literal.of(np.asarray(value, aval.dtype))
        if not aval.shape:
            return scalar
        return self.bind(broadcast_in_dim_p, scalar, shape=aval.shape, broadcast_dimensions=())

    def zeros(self, aval: ShapedArray) -> Any:
        return self.full(aval, 0)

    def full_like(self, x, value) -> Any:
        return self.full(aval_of(x).update(weak_type=False), value)

    def zeros_like(self, x) -> Any:
        return self.full_like(x, 0)

    def add_any(self, a, b):
        """a + b where either may be None (a zero)."""
        if a is None:
            return b
        return a if b is None else self.add(a, b)

    # elementwise ----------------------------------------------------------------------------
    def add(self, x, y):
        return self.bind(add_p, x, y)

    def sub(self, x, y):
        return self.bind(subtract_p, x, y)

    def mul(self, x, y):
        return self.bind(multiply_p, x, y)

    def div(self, x, y):
        return self.bind(divide_p, x, y)

    def neg(self, x):
        return self.bind(negative_p, x)

    def square(self, x):
        return self.mul(x, x)

    def pow(self, x, y):
        return self.bind(power_p, x, y)

    def select(self, pred, on_true, on_false):
        return self.bind(select_p, pred, on_true, on_false)

    def convert(self, x, dtype, weak_type: bool = False):
        dtype = np.dtype(dtype)
        if aval_of(x).dtype == dtype and aval_of(x).weak_type == weak_type:
            return x
        return self.bind(convert_element_type_p, x, new_dtype=dtype, weak_type=weak_type)

    def cast(self, x, aval: ShapedArray):
        """x (of aval's shape) as exactly aval's dtype and weak type."""
        return self.convert(x, aval.dtype, aval.weak_type)

    def maximum(self, x, y):
        return self.bind(maximum_p, x, y)

    def minimum(self, x, y):
        return self.bind(minimum_p, x, y)

    def eq(self, x, y):
        return self.bind(equal_p, x, y)

    def lt(self, x, y):
        return self.bind(less_p, x, y)

    def gt(self, x, y):
        return self.bind(greater_p, x, y)

    def ge(self, x, y):
        return self.bind(greater_equal_p, x, y)

    def sign(self, x):
        return self.bind(sign_p, x)

    def abs(self, x):
        return self.bind(abs_p, x)

    def floor(self, x):
        return self.bind(floor_p, x)

    def sqrt(self, x):
        return self.bind(sqrt_p, x)

    def exp(self, x):
        return self.bind(exp_p, x)

    def log(self, x):
        return self.bind(log_p, x)

    def sin(self, x):
        return self.bind(sin_p, x)

    def cos(self, x):
        return self.bind(cos_p, x)

    def sinh(self, x):
        return self.bind(sinh_p, x)

    def cosh(self, x):
        return self.bind(cosh_p, x)

    def real(self, x):
        return self.bind(real_p, x)

    def imag(self, x):
        return self.bind(imag_p, x)

    def conj(self, x):
        return self.bind(conjugate_p, x)

    def complex(self, re, im):
        return self.bind(complex_p, re, im)

    def where_equal(self, x, y, on_true, on_false):
        """on_true where x == y, else on_false (numbers of x's type)."""
        return self.select(self.eq(x, y), self.full_like(x, on_true), self.full_like(x, on_false))

    # structural -----------------------------------------------------------------------------
    def broadcast_in_dim(self, x, shape, broadcast_dimensions):
        shape, dims = tuple(shape), tuple(broadcast_dimensions)
        if aval_of(x).shape == shape and dims == tuple(range(len(shape))):
            return x
        return self.bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=dims)

    def reshape(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if aval_of(x).shape == shape:
            return x
        return self.bind(reshape_p, x, new_shape=shape)

    def transpose(self, x, permutation):
        permutation = tuple(int(p) for p in permutation)
        if permutation == tuple(range(len(permutation))):
            return x
        return self.bind(transpose_p, x, permutation=permutation)

    def moveaxis(self, x, source: int, destination: int):
        """x with its axis `source` moved to position `destination` (np.moveaxis)."""
        order = [d for d in range(aval_of(x).ndim) if d != source]
        order.insert(destination, source)
        return self.transpose(x, order)

    def slice(self, x, starts, limits, strides=None):
        strides = tuple(strides) if strides is not None else (1,) * len(starts)
        return self.bind(slice_p, x, start_indices=tuple(starts), limit_indices=tuple(limits),
                         strides=strides)

    def pad(self, x, value, low, high, interior=None):
        interior = tuple(interior) if interior is not None else (0,) * len(low)
        return self.bind(pad_p, x, value, low=tuple(low), high=tuple(high), interior=interior)

    def rev(self, x, dimensions):
        return self.bind(rev_p, x, dimensions=tuple(dimensions))

    def concatenate(self, xs, dimension):
        return self.bind(concatenate_p, *xs, dimension=dimension)

    def dynamic_slice(self, x, starts, sizes):
        return self.bind(dynamic_slice_p, x, *starts, slice_sizes=tuple(sizes))

    def dynamic_update_slice(self, x, update, starts):
        return self.bind(dynamic_update_slice_p, x, update, *starts)

    def gather(self, x, indices, num_indexed):
        return self.bind(gather_p, x, indices, num_indexed=num_indexed)

    def scatter(self, x, indices, updates, num_indexed, mode):
        return self.bind(scatter_p, x, indices, updates, num_indexed=num_indexed, mode=mode)

    def iota(self, shape, dtype, dimension):
        return self.bind(iota_p, shape=tuple(shape), dtype=np.dtype(dtype), dimension=dimension)

    def index_at(self, x, i, axis: int = 0):
        """x[i] along `axis` (i a traced scalar), that axis dropped."""
        aval = aval_of(x)
        starts = [np.int64(0)] * aval.ndim
        starts[axis] = i
        sizes = list(aval.shape)
        sizes[axis] = 1
        sliced = self.dynamic_slice(x, starts, sizes)
        return self.reshape(sliced, aval.shape[:axis] + aval.shape[axis + 1:])

    def update_at(self, x, i, value, axis: int = 0):
        """x with x[i] along `axis` replaced by value."""
        aval = aval_of(x)
        starts = [np.int64(0)] * aval.ndim
        starts[axis] = i
        sizes = list(aval.shape)
        sizes[axis] = 1
        return self.dynamic_update_slice(x, self.reshape(value, sizes), starts)

    def take_along_axis(self, x, index, axis: int):
        """x[..., index, ...] along `axis`, index of x's shape (NumPy's take_along_axis)."""
        aval = aval_of(x)
        idx_dtype = aval_of(index).dtype
        columns = [index if d == axis else self.iota(aval.shape, idx_dtype, d)
                   for d in range(aval.ndim)]
        columns = [self.reshape(c, aval.shape + (1,)) for c in columns]
        indices = columns[0] if len(columns) == 1 else self.concatenate(columns, aval.ndim)
        return self.gather(x, indices, aval.ndim)

    # reductions and contraction -------------------------------------------------------------
    def reduce_sum(self, x, axes):
        axes = tuple(sorted(axes))
        if not axes:
            return x
        return self.bind(reduce_sum_p, x, axes=axes)

    def reduce_or(self, x, axes):
        return self.bind(reduce_or_p, x, axes=tuple(sorted(axes)))

    def reduce_and(self, x, axes):
        return self.bind(reduce_and_p, x, axes=tuple(sorted(axes)))

    def argmin(self, x, axis, index_dtype=np.int64):
        return self.bind(argmin_p, x, axis=axis, index_dtype=np.dtype(index_dtype))

    def cumsum(self, x, axis, reverse=False):
        return self.bind(cumsum_p, x, axis=axis, reverse=reverse)

    def cumprod(self, x, axis, reverse=False):
        return self.bind(cumprod_p, x, axis=axis, reverse=reverse)

    def cummax(self, x, axis, reverse=False):
        return self.bind(cummax_p, x, axis=axis, reverse=reverse)

    def cummin(self, x, axis, reverse=False):
        return self.bind(cummin_p, x, axis=axis, reverse=reverse)

    def sort(self, xs, dimension, num_keys):
        return self.bind(sort_p, *xs, dimension=dimension, num_keys=num_keys)

    def dot_general(self, lhs, rhs, contracting, batch):
        return self.bind(dot_general_p, lhs, rhs, contracting=contracting, batch=batch)


def copy_eqn(ops: Ops, eqn: Eqn, inputs: Sequence[Any]) -> list[Var]:
    """The equation as it is, on new inputs; its new outputs."""
    outs = tuple(Var(v.aval) for v in eqn.outs)
    ops.eqns.append(Eqn(eqn.prim, tuple(inputs), eqn.params, outs, eqn.source))
    return list(outs)
