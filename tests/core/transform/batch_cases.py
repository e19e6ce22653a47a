"""One or more instances of every primitive with operands, for the tests of their batching rules.

A case is a primitive, its operands and params (`rule_cases.Case`). Operands are drawn afresh
for every member of a batch, so that batched indices, starts and predicates differ from member
to member: floats uniformly from a range, integers from a range (start positions beyond the
array's bounds included, to check the clamping), distinct rows of indices where a scatter that
sets would otherwise depend on the order of repeated positions, bools, and well-conditioned
(or positive definite) matrices for the factorizations and solves. The loop and branch
primitives are made by tracing small Python functions (among them a `while` whose number of
iterations depends on the member's data, and a branch whose side depends on it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from psc_jit.core import switch
from psc_jit.core.ir import ShapedArray

from .rule_cases import C128, CONTRACTION, CONTROL, Case, Float

F32 = np.dtype(np.float32)


@dataclass(frozen=True)
class Ints:
    shape: tuple[int, ...]
    low: int
    high: int
    dtype: np.dtype = np.dtype(np.int64)

    def draw(self, rng) -> np.ndarray:
        return rng.integers(self.low, self.high, self.shape).astype(self.dtype)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype)


@dataclass(frozen=True)
class Distinct:
    """Rows of one index each, all different: int64[rows, 1] below `high`."""
    rows: int
    high: int

    def draw(self, rng) -> np.ndarray:
        return rng.choice(self.high, self.rows, replace=False).reshape(self.rows, 1)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray((self.rows, 1), np.dtype(np.int64))


@dataclass(frozen=True)
class Bools:
    shape: tuple[int, ...]

    def draw(self, rng) -> np.ndarray:
        return rng.random(self.shape) < 0.5

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, np.dtype(bool))


@dataclass(frozen=True)
class Square:
    """A well-conditioned n x n matrix: random, plus 2n on the diagonal; `definite`: a a^T
    plus n on the diagonal (symmetric positive definite)."""
    n: int
    definite: bool = False

    def draw(self, rng) -> np.ndarray:
        a = rng.uniform(-1.0, 1.0, (self.n, self.n))
        if self.definite:
            return a @ a.T + self.n * np.eye(self.n)
        return a + 2 * self.n * np.eye(self.n)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray((self.n, self.n), np.dtype(np.float64))


S = (2, 3)
R = (3, 4)
X = Float(S)

UNARY = """negative abs sign rint floor ceil real imag conjugate isfinite isnan isinf signbit
exp exp2 expm1 log log2 log10 log1p sqrt cbrt sin cos tan sinh cosh tanh arcsin arccos arctan
arcsinh arccosh arctanh square reciprocal logical_not""".split()
BINARY = """add subtract multiply copysign maximum minimum fmax fmin divide floor_divide remainder
fmod power hypot arctan2 nextafter equal not_equal less less_equal greater greater_equal
logical_and logical_or logical_xor complex""".split()
BITWISE = "bitwise_and bitwise_or bitwise_xor".split()
SHIFTS = "left_shift right_shift".split()

ELEMENTWISE = (
    [Case(name, (X,)) for name in UNARY]
    + [Case(name, (X, X)) for name in BINARY]
    + [Case(name, (Ints(S, -50, 50), Ints(S, -50, 50))) for name in BITWISE]
    + [Case(name, (Ints(S, -50, 50, np.dtype(np.int32)), Ints(S, 0, 8, np.dtype(np.int32))))
       for name in SHIFTS]
    + [Case("invert", (Ints(S, -50, 50),)),
       Case("add", (Float(S, weak=True), Float(S, weak=True)), label="weak"),
       Case("multiply", (Float(S, dtype=C128), Float(S, dtype=C128)), label="complex"),
       Case("exp", (Float(S, dtype=F32),), label="float32"),
       Case("select", (Bools(S), X, X)),
       Case("convert_element_type", (Float(S, -9, 9),), {"new_dtype": np.dtype(np.int32),
                                                          "weak_type": False}),
       Case("convert_element_type", (Float(S, weak=True),),
            {"new_dtype": np.dtype(np.float64), "weak_type": False}, "weak-to-strong"),
       Case("bitcast_convert", (Float(S),), {"new_dtype": np.dtype(np.uint64)}),
       Case("sharding_constraint", (Float(S),), {"spec": ("data",)}),
       Case("psum", (Float(S),), {"axis_name": "i", "axis_size": 3}),
       Case("all_gather", (Float(S),), {"axis_name": "i", "axis_size": 3})])

REDUCTIONS = (
    [Case(f"reduce_{kind}", (Float(R),), {"axes": axes}, label)
     for kind in ("sum", "prod", "max", "min") for axes, label in (((1,), ""), ((0, 1), "all"))]
    + [Case(f"reduce_{kind}", (Bools(R),), {"axes": (0,)}) for kind in ("and", "or")]
    + [Case("reduce_sums", (Float(R), Float(R)), {"axes": axes}, label)
       for axes, label in (((1,), ""), ((0, 1), "all"))]
    + [Case(f"arg{kind}", (Float(R),), {"axis": axis, "index_dtype": np.dtype(np.int64)},
            str(axis)) for kind in ("max", "min") for axis in (0, 1)]
    + [Case(f"cum{kind}", (Float(R),), {"axis": axis, "reverse": reverse}, f"{axis}-{reverse}")
       for kind in ("sum", "prod", "max", "min") for axis, reverse in ((1, False), (0, True))]
    + [Case("sort", (Float(R),), {"dimension": 1, "num_keys": 1}),
       Case("sort", (Float(R), Ints(R, 0, 9)), {"dimension": 0, "num_keys": 1},
            "key-and-value"),
       Case("sort", (Float(R),), {"dimension": 0, "num_keys": 1, "stable": False}, "default"),
       Case("argsort", (Ints(R, 0, 3),), {"dimension": 1, "stable": True}, "ties"),
       Case("argsort", (Float(R),), {"dimension": 0, "stable": False})])

STRUCTURAL = [
    Case("broadcast_in_dim", (Float((3,)),), {"shape": (2, 3), "broadcast_dimensions": (1,)}),
    Case("broadcast_in_dim", (Float((2, 1)),),
         {"shape": (2, 4, 3), "broadcast_dimensions": (0, 2)}, "stretched"),
    Case("reshape", (X,), {"new_shape": (3, 2)}),
    Case("transpose", (Float((2, 3, 4)),), {"permutation": (2, 0, 1)}),
    Case("slice", (Float((5, 6)),),
         {"start_indices": (1, 0), "limit_indices": (5, 5), "strides": (2, 2)}),
    Case("rev", (X,), {"dimensions": (0, 1)}),
    Case("concatenate", (Float((2, 2)), Float((2, 3))), {"dimension": 1}),
    Case("pad", (X, Float(())), {"low": (1, 0), "high": (0, 2), "interior": (1, 1)}),
    Case("pad", (X, Float(())), {"low": (-1, 1), "high": (1, -1), "interior": (0, 0)},
         "cropping"),
    Case("dynamic_slice", (Float((4, 5)), Ints((), -2, 6), Ints((), -2, 6)),
         {"slice_sizes": (2, 3)}),
    Case("dynamic_slice", (Float((4, 5)), Ints((), 0, 4), Ints((), 0, 1)),
         {"slice_sizes": (1, 5)}, "row"),
    Case("dynamic_update_slice", (Float((4, 5)), Float((2, 3)), Ints((), -2, 6),
                                  Ints((), -2, 6))),
    Case("dynamic_update_slice", (Float((4, 5)), Float((1, 5)), Ints((), 0, 4),
                                  Ints((), 0, 1)), label="row"),
    Case("gather", (Float((4, 3)), Ints((3, 1), 0, 4)), {"num_indexed": 1}),
    Case("gather", (Float((4, 3, 2)), Ints((2, 5, 2), 0, 3)), {"num_indexed": 2}, "two-axes"),
    Case("scatter", (Float((4, 3)), Distinct(2, 4), Float((2, 3))),
         {"num_indexed": 1, "mode": "set"}),
    Case("scatter", (Float((4, 3)), Ints((3, 1), 0, 4), Float((3, 3))),
         {"num_indexed": 1, "mode": "add"}, "add"),
    Case("scatter", (Float((4, 3)), Distinct(3, 6), Float((3, 3))),    # rows 4, 5: dropped
         {"num_indexed": 1, "mode": "drop"}, "drop"),
]

SOLVE = {"left_side": True, "lower": True, "transpose_a": "NO_TRANSPOSE", "unit_diagonal": False}
LINALG = [
    Case("cholesky", (Square(3, definite=True),)),
    Case("triangular_solve", (Square(3), Float((3, 2))), SOLVE),
    Case("triangular_solve", (Square(3), Float((2, 3))),
         {**SOLVE, "left_side": False, "lower": False, "transpose_a": "TRANSPOSE",
          "unit_diagonal": True}, "right"),
    Case("lu", (Float((3, 4)),)),
    Case("eigh", (Square(3, definite=True),), {"lower": True, "compute_v": True}),
    Case("svd", (Float((4, 3)),), {"full_matrices": False, "compute_uv": True}),
    Case("geqrf", (Float((4, 3)),)),
    Case("householder_product", (Float((4, 3)), Float((3,)))),
    Case("householder_apply", (Float((4, 3)), Float((3,)), Float((4, 2)))),
    Case("fft", (Float((2, 8), dtype=C128),), {"fft_type": "FFT", "fft_lengths": (8,)}),
    Case("fft", (Float((2, 8)),), {"fft_type": "RFFT", "fft_lengths": (8,)}, "real"),
    Case("fft", (Float((2, 5), dtype=C128),), {"fft_type": "IRFFT", "fft_lengths": (8,)},
         "inverse-real"),
]


def _newton(t, x0):
    """A while loop whose number of iterations depends on the data."""
    x = x0 + t
    err = np.abs(t).max() + 1.0
    while err > 1e-9:
        step = (x * x - t) / (2.0 * x)
        x = x - step
        err = np.abs(step).max()
    return x


def _switch(x, w):
    index = (np.abs(x).sum() * 2).astype(np.int32) - 1      # -1 .. 5: beyond both ends
    return switch(index, [lambda v: v @ w, lambda v: np.sin(v) @ w, lambda v: v * 2.0], x)


def _indexed_in_a_loop(x, w):
    """A traced index inside a loop: dynamic slices and updates with starts of the loop."""
    for i in range(3):
        x[i + 1] = x[i] * w + x[i + 1]
    return x


CONTROL_BATCHING = CONTROL + [
    Case("while_loop", (Float((3,), 1.0, 50.0), Float((3,), 1.0, 2.0)), label="newton",
         traced=_newton),
    Case("cond", (Float((3,), -1.0, 1.0), Float((3, 3))), label="switch", traced=_switch),
    Case("while_loop", (Float((4, 3)), Float((3,))), label="indexed", traced=_indexed_in_a_loop),
]

# windows whose bounds differ from member to member (some past the ends or crossed)
WINDOWS = [
    Case("window_matvec", (Float((4, 5)), Float((5,)), Ints((), -1, 5), Ints((), 0, 5),
                           Ints((), -1, 6), Ints((), 0, 6)), {"transposed": False}, "bounds"),
    Case("window_matvec", (Float((4, 5)), Float((4,)), Ints((), 0, 6), Ints((), 0, 6),
                           Ints((), 0, 5), Ints((), 0, 5)), {"transposed": True},
         "transposed-bounds"),
    Case("window_dot", (Float((5,)), Float((5,)), Ints((), -1, 6), Ints((), 0, 6)),
         {"lines": (None, None)}, "bounds"),
    Case("window_dot", (Float((3, 5)), Float((5, 4)), Ints((), 0, 6), Ints((), 0, 6),
                        Ints((), 0, 3), Ints((), 0, 4)), {"lines": (1, 0)}, "lines"),
    Case("window_dot", (Float((300,)), Float((300,)), Ints((), 0, 150), Ints((), 150, 300)),
         {"lines": (None, None)}, "chunks"),
]

CASES = (ELEMENTWISE + REDUCTIONS + STRUCTURAL + CONTRACTION + WINDOWS + LINALG
         + CONTROL_BATCHING)
