"""The NumPy layer: NumPy's functions, ufuncs, operators, methods and indexing on tracers.

Modules, each importing only the ones above it in this list:
    subclasses     values of a subclass (a masked array, a matrix): refused, never traced as
                   their base type
    base           operand facts (NEP 50 promotion asked of NumPy) and small builders
    affine         traced integers as affine functions of a loop index, with its range
    ufuncs         ufuncs, where, clip, out=, the arithmetic operators
    reductions     sum, mean, var, max, argmax, cumsum, ...
    products       matmul, dot, inner, outer, tensordot, kron
    shape          reshape, transpose, concatenate, stack, ... (views where NumPy makes views)
    conversion     astype, copy, asarray, array, round
    masked         x[mask] for a traced boolean mask (reductions over it; x[mask] = v)
    setitem_values the value of x[...] = v, cast and broadcast as NumPy's setitem does
    indexing       x[...] and x[...] = v
    spans          where an array of traced length sits on its axis: masks, shifts, alignment
    windows        arrays whose length is traced (x[:i] in a rolled loop): masked spans
    window_functions  reductions, products, where, ... on those arrays
    traced_slices  x[...] with traced slice bounds: fixed-length views, or windows
    matrices       diagonal, trace, diag, tril, triu, cross
    einsum         np.einsum
    math           nan_to_num, isclose, average, ...
    creation       linspace, full, copyto, fromfunction
    sorting        sort, argsort, searchsorted, take, median, quantile
    rearrange      split, tile, repeat, roll, pad, diff, meshgrid
    linalg         np.linalg's factorizations and solvers (cholesky, qr, svd, solve, lstsq, ...)
    linalg_api     np.linalg's norms, cond, matrix_rank, multi_dot, the Array API's names
    statistics     cov, corrcoef, interp, histogram, bincount
    nan_functions  nansum, nanmean, nanmax, nanargmax, nancumsum, ... (NaN ignored)
    calculus       polyval, vander, gradient, trapezoid, ediff1d, unwrap, sinc, ...
    index_tricks   unravel_index, ravel_multi_index, isin
    fft            np.fft
    ufunc_methods  ufunc.reduce / accumulate / outer
    dispatch       wires all of it onto Tracer (operators, methods, __array_ufunc__,
                   __array_function__)

Importing this package fills `NUMPY_FUNCTIONS` (NumPy callable -> implementation on tracers)
and makes Tracer behave like an ndarray.
"""
from . import (calculus, conversion, creation, dispatch, einsum, fft,  # noqa: F401
               index_tricks, linalg, linalg_api, math, matrices, nan_functions, products,
               rearrange, reductions, shape, sorting, statistics, traced_slices,
               window_functions, windows)
from .base import NUMPY_FUNCTIONS, implements, unsupported
from .checks import check_outputs, verify_checks
from .masked import MaskedSelection

__all__ = ["NUMPY_FUNCTIONS", "MaskedSelection", "implements", "unsupported", "check_outputs",
           "verify_checks"]
