"""The closed set of primitives: one record each (`record.Primitive`), holding every rule.

Categories, each a module defining its primitives as values (`exp_p`, `reshape_p`):
    elementwise     arithmetic, comparisons, logic, predicates, complex parts, select, convert
    casts           bitcast_convert (x.view(dtype)); and the float-to-int casts of convert
    arithmetic      division, remainders, powers, squares, reciprocals, hypot
    transcendental  exponentials, logarithms, roots, trigonometry (their complex lowerings
                    with C's special values in complex_functions, which defines no primitive)
    reductions      reduce_*, argmax/argmin, cumulative reductions
    joint_reductions reduce_sums: several sums over the same axes in one pass
    sorting         sort
    structural      broadcast, reshape, transpose, slices, pad, iota, gather and scatter
    contraction     dot_general
    correlation     correlate: the sliding dot product of two vectors (np.convolve)
    window_products window_matvec: a matrix-vector product over a window of traced bounds
    window_dot      window_dot: a dot product over a span of traced bounds, read in place
    linalg          cholesky, triangular_solve, lu, eigh, svd, geqrf, householder_product,
                    householder_apply
    fft             the discrete Fourier transform (stablehlo.fft)
    control         while_loop and cond, whose operands include sub-graphs
    placement       sharding_constraint: a value's layout over a partitioned program's mesh
    collectives     psum, all_gather: over the members of a named vmap axis

Each record holds its rules of differentiation too (see `record`): `autodiff` has the shapes
of rule that categories share (and the elementwise primitives' rules), `control_derivatives`
the rules of while_loop and cond. And its batching rule (vmap): `batching` has the shapes that
categories share and the rules of the structural primitives and dot_general, `index_batching`
those of the primitives that take indices, `control_batching` those of while_loop and cond.

Importing this package registers them all in `PRIMITIVES` (name -> record). Code refers to a
primitive by its value, never by a string.
"""
from . import (arithmetic, casts, collectives, contraction, control,  # noqa: F401
               correlation, elementwise, fft, joint_reductions, linalg, placement, reductions,
               sorting, structural, transcendental, window_dot, window_products)
from .control import branch_index
from .record import PRIMITIVES, Primitive

# Every primitive as a value named after it (`exp_p`), so that code refers to primitives
# without strings: the modules above define and register them, this exports them all, and
# adding a primitive touches only the module that defines it.
globals().update({f"{name}_p": prim for name, prim in PRIMITIVES.items()})

__all__ = ["PRIMITIVES", "Primitive", "branch_index", "ufunc_primitives",
           *(f"{name}_p" for name in PRIMITIVES)]


def ufunc_primitives() -> dict:
    """{NumPy ufunc: the elementwise primitive that is that ufunc}, from the records."""
    return {ufunc: prim for prim in PRIMITIVES.values() for ufunc in prim.ufuncs}
