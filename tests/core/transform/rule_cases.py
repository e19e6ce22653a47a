"""One or more instances of every differentiable primitive, for the tests of their rules.

A case is a primitive, its operands and params. A float operand is drawn uniformly from a
range (away from the points where the primitive has no derivative: log of 0, the kinks of
abs, ties of max); an index, a predicate or a start position is a fixed array. The loop and
branch primitives are made by tracing small Python functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from psc_jit.core import cond, fori_loop, jit
from psc_jit.core.ir import Eqn, Graph, ShapedArray, SourceInfo, Var
from psc_jit.core.primitives import PRIMITIVES

F64, C128 = np.dtype(np.float64), np.dtype(np.complex128)
SOURCE = SourceInfo("rule_cases.py", 1, 1)


@dataclass(frozen=True)
class Float:
    """An operand drawn from [low, high] (a complex one: each part), away from `avoid`."""
    shape: tuple[int, ...]
    low: float = -2.0
    high: float = 2.0
    dtype: np.dtype = F64
    weak: bool = False

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        def part():
            return rng.uniform(self.low, self.high, self.shape)
        value = part() + 1j * part() if self.dtype.kind == "c" else part()
        return np.asarray(value, self.dtype)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak)


@dataclass(frozen=True)
class Fixed:
    """An operand with no derivative (an index, a predicate): this value."""
    value: Any

    def draw(self, rng) -> np.ndarray:
        return np.asarray(self.value)

    @property
    def aval(self) -> ShapedArray:
        value = np.asarray(self.value)
        return ShapedArray(value.shape, value.dtype)


@dataclass(frozen=True)
class Case:
    prim: str
    operands: tuple
    params: dict = field(default_factory=dict)
    label: str = ""
    traced: Callable | None = None       # for control flow: the graph of this function

    @property
    def id(self) -> str:
        return f"{self.prim}-{self.label}" if self.label else self.prim

    def graph(self) -> Graph:
        if self.traced is not None:
            example = [o.draw(np.random.default_rng(0)) for o in self.operands]
            return jit(self.traced).trace(*example).graph
        prim = PRIMITIVES[self.prim]
        in_vars = tuple(Var(o.aval) for o in self.operands)
        outs = tuple(Var(a) for a in prim.abstract_eval(*(v.aval for v in in_vars), **self.params))
        return Graph(in_vars, (Eqn(prim, in_vars, self.params, outs, SOURCE),), outs)


S = (2, 3)
POSITIVE = Float(S, 0.2, 2.0)
AWAY_FROM_ZERO = Float(S, 0.3, 2.0)
UNIT = Float(S, -0.8, 0.8)


def unary(name, operand=Float(S), label=""):
    return Case(name, (operand,), label=label)


def binary(name, x=Float(S), y=Float(S), label=""):
    return Case(name, (x, y), label=label)


ELEMENTWISE = [
    binary("add"), binary("subtract"), binary("multiply"), unary("negative"),
    binary("add", Float(S, dtype=C128), Float(S, dtype=C128), "complex"),
    binary("multiply", Float(S, dtype=C128), Float(S, dtype=C128), "complex"),
    unary("abs", AWAY_FROM_ZERO), unary("abs", Float(S, -2.0, -0.3), "negative"),
    unary("abs", Float(S, 0.3, 2.0, C128), "complex"),
    unary("sign", AWAY_FROM_ZERO), binary("copysign", AWAY_FROM_ZERO, Float(S, -2.0, -0.3)),
    binary("maximum"), binary("minimum"), binary("fmax"), binary("fmin"),
    unary("rint", Float(S, 0.1, 0.4)), unary("floor", Float(S, 0.1, 0.9)),
    unary("ceil", Float(S, 0.1, 0.9)),
    unary("real", Float(S, dtype=C128)), unary("imag", Float(S, dtype=C128)),
    unary("real", Float(S), "of-real"), unary("imag", Float(S), "of-real"),
    unary("conjugate", Float(S, dtype=C128)), binary("complex"),
    Case("select", (Fixed(np.array([[True, False, True], [False, False, True]])), Float(S),
                    Float(S))),
    Case("convert_element_type", (Float(S, weak=True),), {"new_dtype": F64, "weak_type": False},
         "weak-to-strong"),
    Case("convert_element_type", (Float(S),), {"new_dtype": C128, "weak_type": False},
         "real-to-complex"),
    Case("convert_element_type", (Float(S, dtype=C128),), {"new_dtype": F64, "weak_type": False},
         "complex-to-real"),
    Case("bitcast_convert", (Float(S),), {"new_dtype": np.dtype(np.int64)}),
    Case("sharding_constraint", (Float(S),), {"spec": ("data",)}),
    Case("psum", (Float(S),), {"axis_name": "i", "axis_size": 3}),
]

ARITHMETIC = [
    binary("divide", Float(S), AWAY_FROM_ZERO),
    binary("divide", Float(S, dtype=C128), Float(S, 0.3, 2.0, C128), "complex"),
    binary("floor_divide", Float(S, 0.1, 0.9), Float(S, 1.1, 1.9)),
    binary("remainder", Float(S, 0.1, 0.9), Float(S, 1.1, 1.9)),
    binary("remainder", Float(S, 2.2, 2.9), Float(S, -1.9, -1.3), "negative-divisor"),
    binary("fmod", Float(S, 2.2, 2.9), Float(S, 1.1, 1.4)),
    binary("power", POSITIVE, Float(S)), unary("square"), unary("reciprocal", AWAY_FROM_ZERO),
    binary("hypot", AWAY_FROM_ZERO, Float(S)),
    unary("square", Float(S, dtype=C128), "complex"),
]

TRANSCENDENTAL = [
    unary("exp"), unary("exp2"), unary("expm1"), unary("log", POSITIVE), unary("log2", POSITIVE),
    unary("log10", POSITIVE), unary("log1p", Float(S, -0.8, 2.0)), unary("sqrt", POSITIVE),
    unary("cbrt", AWAY_FROM_ZERO), unary("sin"), unary("cos"), unary("tan", Float(S, -1.2, 1.2)),
    unary("sinh"), unary("cosh"), unary("tanh"), binary("arctan2", Float(S), AWAY_FROM_ZERO),
    unary("arcsin", UNIT), unary("arccos", UNIT), unary("arctan"), unary("arcsinh"),
    unary("arccosh", Float(S, 1.2, 3.0)), unary("arctanh", UNIT), binary("nextafter"),
    unary("exp", Float(S, -1.0, 1.0, C128), "complex"),
    unary("log", Float(S, 0.3, 2.0, C128), "complex"),
    unary("sin", Float(S, -1.0, 1.0, C128), "complex"),
    unary("sqrt", Float(S, 0.3, 2.0, C128), "complex"),
]

R = (3, 4)
REDUCTIONS = [
    Case("reduce_sum", (Float(R),), {"axes": (1,)}),
    Case("reduce_sum", (Float(R),), {"axes": (0, 1)}, "all"),
    Case("reduce_sums", (Float(R), Float(R)), {"axes": (1,)}),
    Case("reduce_sums", (Float(R), Float(R, dtype=C128)), {"axes": (0, 1)}, "all-complex"),
    Case("reduce_prod", (Float(R, 0.5, 1.5),), {"axes": (0,)}),
    Case("reduce_prod", (Float((2, 3, 2), -1.5, 1.5),), {"axes": (0, 2)}, "two-axes"),
    Case("reduce_max", (Float(R),), {"axes": (1,)}),
    Case("reduce_min", (Float(R),), {"axes": (0, 1)}),
    Case("cumsum", (Float(R),), {"axis": 1, "reverse": False}),
    Case("cumsum", (Float(R),), {"axis": 0, "reverse": True}, "reverse"),
    Case("cumprod", (Float(R, 0.5, 1.5),), {"axis": 1, "reverse": False}),
    Case("cumprod", (Float(R, 0.5, 1.5),), {"axis": 0, "reverse": True}, "reverse"),
    Case("cummax", (Float(R),), {"axis": 1, "reverse": False}),
    Case("cummin", (Float(R),), {"axis": 0, "reverse": True}, "reverse"),
    Case("sort", (Float(R),), {"dimension": 1, "num_keys": 1}),
    Case("sort", (Float(R), Float(R)), {"dimension": 0, "num_keys": 1}, "key-and-value"),
]

STRUCTURAL = [
    Case("broadcast_in_dim", (Float((3,)),), {"shape": (2, 3), "broadcast_dimensions": (1,)}),
    Case("broadcast_in_dim", (Float((2, 1)),),
         {"shape": (2, 4, 3), "broadcast_dimensions": (0, 2)}, "stretched"),
    Case("reshape", (Float(S),), {"new_shape": (3, 2)}),
    Case("transpose", (Float((2, 3, 4)),), {"permutation": (2, 0, 1)}),
    Case("slice", (Float((5, 6)),),
         {"start_indices": (1, 0), "limit_indices": (5, 5), "strides": (2, 2)}),
    Case("rev", (Float(S),), {"dimensions": (0, 1)}),
    Case("concatenate", (Float((2, 2)), Float((2, 3))), {"dimension": 1}),
    Case("pad", (Float(S), Float(())), {"low": (1, 0), "high": (0, 2), "interior": (1, 1)}),
    Case("dynamic_slice", (Float((4, 5)), Fixed(np.int64(1)), Fixed(np.int64(2))),
         {"slice_sizes": (2, 3)}),
    Case("dynamic_update_slice",
         (Float((4, 5)), Float((2, 3)), Fixed(np.int64(2)), Fixed(np.int64(1)))),
    Case("gather", (Float((4, 3)), Fixed(np.array([[2], [0], [2]]))), {"num_indexed": 1}),
    Case("scatter", (Float((4, 3)), Fixed(np.array([[2], [0]])), Float((2, 3))),
         {"num_indexed": 1, "mode": "set"}),
    Case("scatter", (Float((4, 3)), Fixed(np.array([[2], [0], [2]])), Float((3, 3))),
         {"num_indexed": 1, "mode": "add"}, "add"),
    Case("scatter", (Float((4, 3)), Fixed(np.array([[2], [4], [0], [-1]])), Float((4, 3))),
         {"num_indexed": 1, "mode": "drop"}, "drop"),
]

CONTRACTION = [
    Case("dot_general", (Float((2, 3)), Float((3, 4))), {"contracting": ((1,), (0,)),
                                                         "batch": ((), ())}),
    Case("dot_general", (Float((2, 3, 4)), Float((2, 5, 3))),
         {"contracting": ((1,), (2,)), "batch": ((0,), (0,))}, "batched"),
    Case("dot_general", (Float((3,)), Float((3,))), {"contracting": ((0,), (0,)),
                                                     "batch": ((), ())}, "inner"),
    # rows 1, 2 of a 4 x 5 matrix times elements 0 to 3; columns 0 to 2 of its transpose
    Case("window_matvec", (Float((4, 5)), Float((5,)), *map(Fixed, np.int64([1, 3, 0, 4]))),
         {"transposed": False}),
    Case("window_matvec", (Float((4, 5)), Float((4,)), *map(Fixed, np.int64([0, 3, 1, 9]))),
         {"transposed": True}, "transposed"),
    # elements 1 to 3 of two vectors; row 2 of a matrix times a vector; a vector times
    # column 1 of a matrix, past both ends; a span longer than window_dot's chunks
    Case("window_dot", (Float((5,)), Float((5,)), *map(Fixed, np.int64([1, 4]))),
         {"lines": (None, None)}),
    Case("window_dot", (Float((3, 5)), Float((5,)), *map(Fixed, np.int64([0, 4, 2]))),
         {"lines": (1, None)}, "row"),
    Case("window_dot", (Float((5,)), Float((5, 3)), *map(Fixed, np.int64([-1, 9, 1]))),
         {"lines": (None, 0)}, "column"),
    Case("window_dot", (Float((300,)), Float((2, 300)), *map(Fixed, np.int64([7, 290, 1]))),
         {"lines": (None, 1)}, "chunks"),
    # a kernel summed as shifted slices, one long enough for XLA's convolution, complex
    Case("correlate", (Float((7,)), Float((3,)))),
    Case("correlate", (Float((40,)), Float((35,))), label="long"),
    Case("correlate", (Float((6,), dtype=C128), Float((2,), dtype=C128)), label="complex"),
]


def _rolled_loop(x, w):
    for _ in range(4):
        x = np.sin(x * w) + 0.5 * x
    return x


def _fori(x, w):
    return fori_loop(0, 3, lambda i, v: v * np.cos(w) + i, x)


def _traced_branch(x, w):
    return cond(x.sum() > 0, lambda v: v @ w, lambda v: np.sin(v) @ w, x)


def _branch_in_loop(x, w):
    for _ in range(3):
        if x.sum() > 0:
            x = x @ w
        else:
            x = np.tanh(x) @ w
    return x


CONTROL = [
    Case("while_loop", (Float((3,)), Float((3,))), label="rolled-for", traced=_rolled_loop),
    Case("while_loop", (Float((3,)), Float(())), label="fori_loop", traced=_fori),
    Case("cond", (Float((3,)), Float((3, 3))), label="cond", traced=_traced_branch),
    Case("cond", (Float((3,)), Float((3, 3), -0.5, 0.5)), label="in-a-loop",
         traced=_branch_in_loop),
]

FFT = [
    Case("fft", (Float((3, 4), dtype=C128),), {"fft_type": "FFT", "fft_lengths": (4,)}),
    Case("fft", (Float((2, 3), dtype=C128),), {"fft_type": "IFFT", "fft_lengths": (2, 3)},
         "ifft-2d"),
    Case("fft", (Float((2, 5)),), {"fft_type": "RFFT", "fft_lengths": (5,)}, "rfft"),
    Case("fft", (Float((3, 4)),), {"fft_type": "RFFT", "fft_lengths": (3, 4)}, "rfft-2d"),
    Case("fft", (Float((2, 3), dtype=C128),), {"fft_type": "IRFFT", "fft_lengths": (4,)},
         "irfft-even"),
    Case("fft", (Float((2, 3), dtype=C128),), {"fft_type": "IRFFT", "fft_lengths": (2, 5)},
         "irfft-2d-odd"),
]



@dataclass(frozen=True)
class Matrix(Float):
    """A (stack of) matrices where the factorization is smooth: `spd` positive definite,
    `dominant` with a large diagonal (triangles far from singular, LU pivots that do not
    change under a small step), `general` random."""
    structure: str = "general"

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        x = super().draw(rng)
        n = self.shape[-1]
        if self.structure == "spd":
            return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n, dtype=self.dtype)
        if self.structure == "dominant":
            return x + 2 * n * np.eye(n, dtype=self.dtype)
        return x


def _solve_case(label, b_shape, dtype=F64, **params):
    params = {"left_side": True, "lower": True, "transpose_a": "NO_TRANSPOSE",
              "unit_diagonal": False, **params}
    return Case("triangular_solve", (Matrix((3, 3), dtype=dtype, structure="dominant"),
                                     Float(b_shape, dtype=dtype)), params, label)


LINALG = [
    _solve_case("left-lower", (3, 2)),
    _solve_case("right-upper-transposed", (2, 3), left_side=False, lower=False,
                transpose_a="TRANSPOSE"),
    _solve_case("unit-adjoint-complex", (3, 2), C128, transpose_a="ADJOINT", unit_diagonal=True),
    Case("triangular_solve", (Matrix((2, 3, 3), structure="dominant"), Float((2, 3, 1))),
         {"left_side": True, "lower": False, "transpose_a": "NO_TRANSPOSE",
          "unit_diagonal": False}, "batched-upper"),
    Case("cholesky", (Matrix((3, 3), structure="spd"),)),
    Case("cholesky", (Matrix((2, 3, 3), dtype=C128, structure="spd"),), label="complex-batched"),
    Case("lu", (Matrix((3, 3), structure="dominant"),)),
    Case("lu", (Matrix((2, 4, 4)),), label="pivoting"),
    Case("eigh", (Matrix((3, 3)),), {"lower": True, "compute_v": True}),
    Case("eigh", (Matrix((3, 3)),), {"lower": False, "compute_v": False}, "values-upper"),
    Case("svd", (Matrix((3, 3)),), {"full_matrices": False, "compute_uv": False}, "values"),
    Case("svd", (Matrix((4, 3)),), {"full_matrices": False, "compute_uv": True}, "tall"),
    Case("svd", (Matrix((2, 4)),), {"full_matrices": False, "compute_uv": True}, "wide"),
    Case("svd", (Matrix((3, 3)),), {"full_matrices": True, "compute_uv": True}, "square-full"),
    Case("geqrf", (Matrix((3, 3)),), label="square"),
    Case("geqrf", (Matrix((4, 2)),), label="tall"),
    Case("geqrf", (Matrix((2, 4)),), label="wide"),
    Case("geqrf", (Matrix((2, 3, 3), dtype=C128),), label="complex-batched"),
    Case("householder_product", (Float((4, 3)), Float((3,)))),
    Case("householder_product", (Float((4, 4)), Float((2,))), label="fewer-reflectors"),
    Case("householder_product", (Float((3, 2), dtype=C128), Float((2,), dtype=C128)),
         label="complex"),
    Case("householder_apply", (Float((4, 3)), Float((3,)), Float((4, 2)))),
    Case("householder_apply", (Float((3, 3), dtype=C128), Float((2,), dtype=C128),
                               Float((3, 1), dtype=C128)), label="complex"),
]

CASES = (ELEMENTWISE + ARITHMETIC + TRANSCENDENTAL + REDUCTIONS + STRUCTURAL + CONTRACTION
         + CONTROL + FFT + LINALG)
