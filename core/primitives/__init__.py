"""The closed set of primitives: one record each (`record.Primitive`), holding every rule.

Categories, each a module defining its primitives as values (`exp_p`, `reshape_p`):
    elementwise     arithmetic, comparisons, logic, predicates, complex parts, select, convert
    arithmetic      division, remainders, powers, squares, reciprocals, hypot
    transcendental  exponentials, logarithms, roots, trigonometry
    reductions      reduce_*, argmax/argmin, cumulative reductions, sort
    structural      broadcast, reshape, transpose, slices, pad, iota, gather and scatter
    contraction     dot_general
    linalg          cholesky, triangular_solve, lu, eigh, svd, geqrf, householder_product
    fft             the discrete Fourier transform (stablehlo.fft)
    control         while_loop and cond, whose operands include sub-graphs

Importing this package registers them all in `PRIMITIVES` (name -> record). Code refers to a
primitive by its value, never by a string.
"""
from .arithmetic import (divide_p, floor_divide_p, fmod_p, hypot_p, power_p, reciprocal_p,
                         remainder_p, square_p)
from .contraction import dot_general_p
from .control import branch_index, cond_p, while_loop_p
from .elementwise import (abs_p, add_p, bitwise_and_p, bitwise_or_p, bitwise_xor_p, ceil_p,
                          complex_p, conjugate_p, convert_element_type_p, copysign_p, equal_p,
                          floor_p, fmax_p, fmin_p, greater_equal_p, greater_p, imag_p, invert_p,
                          isfinite_p, isinf_p, isnan_p, left_shift_p, less_equal_p, less_p,
                          logical_and_p, logical_not_p, logical_or_p, logical_xor_p, maximum_p,
                          minimum_p, multiply_p, negative_p, not_equal_p, real_p, right_shift_p,
                          rint_p, select_p, sign_p, signbit_p, subtract_p)
from .fft import fft_p
from .linalg import (cholesky_p, eigh_p, geqrf_p, householder_product_p, lu_p, svd_p,
                     triangular_solve_p)
from .record import PRIMITIVES, Primitive
from .reductions import (argmax_p, argmin_p, cummax_p, cummin_p, cumprod_p, cumsum_p,
                         reduce_and_p, reduce_max_p, reduce_min_p, reduce_or_p, reduce_prod_p,
                         reduce_sum_p, sort_p)
from .structural import (broadcast_in_dim_p, concatenate_p, dynamic_slice_p,
                         dynamic_update_slice_p, gather_p, iota_p, pad_p, reshape_p, rev_p,
                         scatter_p, slice_p, transpose_p)
from .transcendental import (arccos_p, arccosh_p, arcsin_p, arcsinh_p, arctan2_p, arctan_p,
                             arctanh_p, cbrt_p, cos_p, cosh_p, exp2_p, exp_p, expm1_p, log1p_p,
                             log2_p, log10_p, log_p, sin_p, sinh_p, sqrt_p, tan_p, tanh_p)

__all__ = ["PRIMITIVES", "Primitive", "branch_index", "ufunc_primitives",
           "abs_p", "add_p", "arccos_p", "arccosh_p", "arcsin_p", "arcsinh_p", "arctan2_p",
           "arctan_p", "arctanh_p", "argmax_p", "argmin_p", "bitwise_and_p", "bitwise_or_p",
           "bitwise_xor_p", "broadcast_in_dim_p", "cbrt_p", "ceil_p", "cholesky_p", "complex_p",
           "concatenate_p", "cond_p", "conjugate_p", "convert_element_type_p", "copysign_p",
           "cos_p", "cosh_p", "cummax_p", "cummin_p", "cumprod_p", "cumsum_p", "divide_p",
           "dot_general_p", "dynamic_slice_p", "dynamic_update_slice_p", "eigh_p", "equal_p",
           "exp2_p", "fft_p", "geqrf_p", "householder_product_p", "lu_p", "svd_p", "triangular_solve_p",
           "exp_p", "expm1_p", "floor_divide_p", "floor_p", "fmax_p", "fmin_p", "fmod_p",
           "gather_p", "greater_equal_p", "greater_p", "hypot_p", "imag_p", "invert_p", "iota_p",
           "isfinite_p", "isinf_p", "isnan_p", "left_shift_p", "less_equal_p", "less_p",
           "log10_p", "log1p_p", "log2_p", "log_p", "logical_and_p", "logical_not_p",
           "logical_or_p", "logical_xor_p", "maximum_p", "minimum_p", "multiply_p", "negative_p",
           "not_equal_p", "pad_p", "power_p", "real_p", "reciprocal_p", "reduce_and_p",
           "reduce_max_p", "reduce_min_p", "reduce_or_p", "reduce_prod_p", "reduce_sum_p",
           "remainder_p", "reshape_p", "rev_p", "right_shift_p", "rint_p", "scatter_p",
           "select_p", "sign_p", "signbit_p", "sin_p", "sinh_p", "slice_p", "sort_p", "sqrt_p",
           "square_p", "subtract_p", "tan_p", "tanh_p", "transpose_p", "while_loop_p"]


def ufunc_primitives() -> dict:
    """{NumPy ufunc: the elementwise primitive that is that ufunc}, from the records."""
    return {ufunc: prim for prim in PRIMITIVES.values() for ufunc in prim.ufuncs}
