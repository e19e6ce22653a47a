"""Products lowered the way XLA runs them well: a matmul whose batch axes are on one side is a
plain dot_general (the other operand is never broadcast to the batch), and a transposed operand
feeds dot_general's dimension numbers instead of a materialised transpose. Results against
NumPy; the lowered StableHLO checked for the ops that must not be there."""
import re

import numpy as np
import pytest
from psc_jit.core import jit
from psc_jit.core.compile import blas
from psc_jit.core.lowering import lower
from psc_jit.core.typecheck import check_graph

from numpy_compare import compare, loads_from_disk_in_a_new_process

pytestmark = pytest.mark.xla

MATMUL_SHAPES = [
    ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((6, 1, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (1, 3, 4)), ((6, 1, 2, 3), (1, 5, 3, 4)), ((1, 1, 2, 3), (1, 3, 4)),
    ((7, 5, 2, 3), (5, 3, 4)), ((5, 2, 3), (7, 1, 3, 4)), ((0, 2, 3), (3, 4)),
    ((2, 0), (0, 3)), ((4, 2, 3), (1, 1, 3, 5)),
]


def lowered_text(f, *args, blas_calls: bool = False) -> str:
    """The StableHLO of f's program: as it is compiled (`blas_calls`, float products of some
    size then call NumPy's BLAS), or with XLA's own ops only (what the structure of a
    product is checked on)."""
    traced = jit(f).trace(*args)
    check_graph(traced.graph)
    return traced.lower().as_text() if blas_calls else lower(traced.graph, "products")


def ops_in(text: str) -> list[str]:
    return re.findall(r'"stablehlo\.(\w+)"', text)


def matmul(a, b):
    return a @ b


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128, np.bool_])
def test_matmul_of_any_batch_shapes_matches_numpy(shapes, dtype):
    rng = np.random.default_rng(0)
    a, b = ((rng.random(s) * 4).astype(dtype) for s in shapes)
    if dtype in (np.int64, np.bool_):
        compare(matmul, a, b)            # exactly NumPy's, result kind and dtype included
        return
    got, want = jit(matmul)(a, b), a @ b
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_never_broadcasts_an_operand(shapes):
    a, b = (np.ones(s) for s in shapes)
    assert "broadcast_in_dim" not in ops_in(lowered_text(matmul, a, b))


def test_batched_times_matrix_is_one_dot_general_of_the_matrix_itself():
    A, C = np.ones((16, 14, 6)), np.ones((6, 5))
    text = lowered_text(matmul, A, C)
    assert ops_in(text) == ["dot_general"]
    assert "(tensor<16x14x6xf64>, tensor<6x5xf64>) -> tensor<16x14x5xf64>" in text
    assert "lhs_batching_dimensions = []" in text


def test_flattened_batch_times_matrix_is_a_reshape_and_one_dot_general():
    A, C = np.ones((16, 14, 6)), np.ones((6, 5))
    assert ops_in(lowered_text(lambda A, C: A.reshape(-1, A.shape[-1]) @ C, A, C)) == [
        "reshape", "dot_general"]


def test_shared_batch_axes_are_dot_general_batch_dimensions():
    text = lowered_text(matmul, np.ones((4, 2, 3)), np.ones((4, 3, 5)))
    assert ops_in(text) == ["dot_general"]
    assert "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0]" in text


TRANSPOSED = {
    "M.T @ v": (lambda M, v: M.T @ v, ((40, 30), (40,))),
    "M.T @ (M @ v)": (lambda M, v: M.T @ (M @ v), ((40, 30), (30,))),
    "A.T @ B.T": (lambda A, B: A.T @ B.T, ((40, 30), (20, 40))),
    "v @ M.T": (lambda v, M: v @ M.T, ((30,), (40, 30))),
    "np.dot(M.T, N)": (lambda M, N: np.dot(M.T, N), ((40, 30), (40, 20))),
    "batched swapaxes @": (lambda A, B: np.swapaxes(A, -1, -2) @ B, ((5, 4, 3), (5, 4, 6))),
    "np.transpose(M) @ M": (lambda M, N: np.transpose(M) @ N, ((40, 30), (40, 30))),
    "einsum ji,jk": (lambda M, N: np.einsum("ji,jk->ik", M, N), ((40, 30), (40, 20))),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSED))
def test_transposed_operands_feed_dot_general_without_a_transpose(name):
    f, shapes = TRANSPOSED[name]
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s) for s in shapes]
    np.testing.assert_allclose(jit(f)(*args), f(*args), rtol=1e-12, atol=1e-12)
    ops = ops_in(lowered_text(f, *args))
    assert "transpose" not in ops and "dot_general" in ops


def test_a_transpose_that_would_reorder_the_result_is_kept():
    """(A.swapaxes(0, 1)) @ C: folding would put the result's axes in another order, so the
    transpose stays (and the result is still NumPy's)."""
    def f(A, C):
        return np.swapaxes(A, 0, 1) @ C
    A, C = np.random.default_rng(2).random((4, 3, 5)), np.random.default_rng(3).random((5, 6))
    np.testing.assert_allclose(jit(f)(A, C), f(A, C), rtol=1e-12)
    assert "transpose" in ops_in(lowered_text(f, A, C))


def test_a_transposed_view_used_elsewhere_is_still_right():
    def f(M, v):
        t = M.T
        return t @ v, t * 2.0
    M, v = np.arange(12.0).reshape(3, 4), np.arange(3.0)
    got, want = jit(f)(M, v), f(M, v)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


NORMS = {
    "vector": (lambda x: np.linalg.norm(x), (50,)),
    "rows": (lambda x: np.linalg.norm(x, axis=1), (6, 50)),
    "frobenius": (lambda x: np.linalg.norm(x, "fro"), (6, 50)),
    "matrix axes (0, 2)": (lambda x: np.linalg.norm(x, axis=(0, 2), keepdims=True), (3, 4, 5)),
}


@pytest.mark.parametrize("name", sorted(NORMS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_two_norms_match_numpy(name, dtype):
    f, shape = NORMS[name]
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    got, want = jit(f)(x), f(x)
    assert type(got) is type(want) and got.dtype == want.dtype and np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-13)


# -- large matrix-vector products: NumPy's own BLAS through a custom call ---------------------

GEMV_CASES = {"M @ v": lambda m, v: m @ v, "M.T @ v": lambda m, v: m.T @ v[: m.shape[0]],
              "v @ M": lambda m, v: v[: m.shape[0]] @ m, "v @ M.T": lambda m, v: v @ m.T,
              "np.dot(M, v)": lambda m, v: np.dot(m, v),
              "M.T @ (M @ v)": lambda m, v: m.T @ (m @ v),
              "strided M": lambda m, v: m[::2] @ v}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", GEMV_CASES)
def test_a_large_matrix_vector_product_calls_numpys_blas_and_gives_numpys_result(case, dtype):
    """From BLAS_FROM matrix elements a float matrix times a vector is BLAS's gemv (NumPy's
    own library; XLA's kernel runs on one thread at a fraction of its speed)."""
    from psc_jit.core.compile import blas
    from psc_jit.core.primitives.contraction import BLAS_FROM
    assert blas.available_targets(), "the BLAS module was not built or NumPy's BLAS not found"
    rng = np.random.default_rng(3)
    m = rng.standard_normal((400, 500)).astype(dtype)
    v = rng.standard_normal(500).astype(dtype)
    assert m.size >= BLAS_FROM
    f = GEMV_CASES[case]
    got, want = jit(f)(m, v), f(m, v)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-4 if dtype == np.float32 else 1e-11)
    assert '"psc_gemv_' in lowered_text(f, m, v, blas_calls=True)


def test_small_integer_and_batched_products_stay_xlas():
    rng = np.random.default_rng(4)
    small = rng.standard_normal((10, 20))
    assert "psc_gemv" not in lowered_text(matmul, small, rng.standard_normal(20),
                                          blas_calls=True)
    ints = rng.integers(0, 5, (300, 400))
    assert "psc_gem" not in lowered_text(matmul, ints, rng.integers(0, 5, 400), blas_calls=True)
    batched = rng.standard_normal((3, 300, 400))
    assert "psc_gemv" not in lowered_text(matmul, batched, rng.standard_normal(400),
                                          blas_calls=True)
    np.testing.assert_array_equal(jit(matmul)(ints, ints[0]), ints @ ints[0])


# -- matrix products: NumPy's own BLAS (gemm) from GEMM_FROM multiply-adds --------------------

GEMM_CASES = {
    "A @ B": (lambda a, b: a @ b, ((30, 40), (40, 50))),
    "A.T @ B": (lambda a, b: a.T @ b, ((40, 30), (40, 50))),
    "A @ B.T": (lambda a, b: a @ b.T, ((30, 40), (50, 40))),
    "A.T @ B.T": (lambda a, b: a.T @ b.T, ((40, 30), (50, 40))),
    "3-D @ 2-D": (lambda a, b: a @ b, ((6, 20, 40), (40, 30))),
    "batched @ batched": (lambda a, b: a @ b, ((6, 20, 40), (6, 40, 30))),
    "4-D batched, swapped": (lambda a, b: np.swapaxes(a, -1, -2) @ b,
                             ((3, 2, 40, 20), (3, 2, 40, 30))),
    "v @ A": (lambda a, b: a @ b, ((400,), (400, 200))),
    "batched @ v": (lambda a, b: a @ b, ((4, 200, 100), (100,))),
    "np.dot 3-D, 2-D": (lambda a, b: np.dot(a, b), ((5, 20, 40), (40, 30))),
    "tensordot over the first axes": (lambda a, b: np.tensordot(a, b, axes=([0], [0])),
                                      ((40, 5, 6), (40, 30))),
    "einsum ij,kj->ik": (lambda a, b: np.einsum("ij,kj->ik", a, b), ((30, 40), (50, 40))),
    "M.T @ (M @ V), V a matrix": (lambda a, b: a.T @ (a @ b), ((60, 40), (40, 30))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", GEMM_CASES)
def test_a_matrix_product_calls_numpys_blas_and_gives_numpys_result(case, dtype):
    """A float matrix product of GEMM_FROM multiply-adds or more (BLAS_FROM when one side is a
    vector) is BLAS's gemm on stacks of row-major matrices (XLA's kernel runs 1.2-2x slower),
    whichever operand is transposed; gemv for a plain matrix and vector."""
    assert blas.available_targets(), "the BLAS module was not built or NumPy's BLAS not found"
    f, shapes = GEMM_CASES[case]
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    got, want = jit(f)(a, b), f(a, b)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)
    assert re.search(r'"psc_gem[mv]_', lowered_text(f, a, b, blas_calls=True))


def test_a_plain_two_dimensional_product_is_numpys_to_the_bit():
    """NumPy's A @ B of C-ordered float matrices is the same BLAS call: the same numbers."""
    rng = np.random.default_rng(6)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal((70, 90)).astype(dtype)
        b = rng.standard_normal((90, 50)).astype(dtype)
        np.testing.assert_array_equal(jit(matmul)(a, b), a @ b)


@pytest.mark.parametrize("shapes", [((0, 40), (40, 300)), ((300, 0), (0, 300)),
                                    ((3, 0, 40), (40, 300)), ((40, 300), (300, 0))])
def test_empty_matrix_products_match_numpy(shapes):
    a, b = (np.ones(s) for s in shapes)
    got = jit(matmul)(a, b)
    assert got.shape == (a @ b).shape
    np.testing.assert_array_equal(got, a @ b)


def test_products_blas_cannot_read_in_place_stay_xlas():
    """A contracted axis in the middle of an operand, integers, complex dtypes, small products
    and matrix-vector products under BLAS_FROM elements keep XLA's dot_general."""
    rng = np.random.default_rng(7)
    middle = lambda a, b: np.einsum("ikj,kl->ijl", a, b)     # noqa: E731
    cases = [(middle, rng.standard_normal((20, 40, 30)), rng.standard_normal((40, 50))),
             (matmul, rng.integers(0, 5, (50, 60)), rng.integers(0, 5, (60, 70))),
             (matmul, rng.standard_normal((50, 60)) + 1j, rng.standard_normal((60, 70)) + 0j),
             (matmul, rng.standard_normal((8, 8)), rng.standard_normal((8, 8))),
             (matmul, rng.standard_normal((3, 100, 100)), rng.standard_normal(100))]
    for f, a, b in cases:
        assert "psc_gemm" not in lowered_text(f, a, b, blas_calls=True)
        np.testing.assert_allclose(jit(f)(a, b), f(a, b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_narrow_product_of_a_large_matrix_is_xlas_dot(dtype):
    """From NARROW_FROM_ELEMENTS lhs elements, a product with few result columns is XLA's dot
    (which ran faster than gemm there), batched or not; a transposed lhs, one more column, or
    a smaller lhs call gemm. Every one gives NumPy's result."""
    from psc_jit.core.primitives.contraction import NARROW_COLUMNS, NARROW_FROM_ELEMENTS
    columns, rows = NARROW_COLUMNS[np.dtype(dtype)], NARROW_FROM_ELEMENTS // 256
    rng = np.random.default_rng(8)
    cases = [(matmul, (rows, 256), (256, columns), False),
             (matmul, (4, rows // 2, 512), (4, 512, 2), False),
             (lambda a, b: a @ b.T, (rows, 256), (columns, 256), False),
             (lambda a, b: a.T @ b, (256, rows), (256, columns), True),
             (matmul, (rows, 256), (256, columns + 1), True),
             (matmul, (rows // 2, 256), (256, columns), True)]
    for f, sa, sb, gemm in cases:
        a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
        assert ("psc_gemm" in lowered_text(f, a, b, blas_calls=True)) == gemm, (sa, sb)
        np.testing.assert_allclose(jit(f)(a, b), f(a, b), rtol=1e-4 if dtype == np.float32
                                   else 1e-12, atol=1e-3 if dtype == np.float32 else 1e-10)


def test_a_program_calling_blas_loads_from_disk_in_a_new_process(tmp_path):
    """The disk cache records that the program calls custom targets: a new process registers
    them before it loads the program."""
    assert loads_from_disk_in_a_new_process(
        "import numpy as np\nfrom psc_jit.core import jit\n"
        "m = np.arange(120000.0).reshape(300, 400) / 1e5\nv = np.linspace(0, 1, 400)\n"
        "f = jit(lambda m, v: m @ v)\ny = f(m, v)\n"
        "print(f.last_call.compiled.from_disk is not None, np.allclose(y, m @ v))", tmp_path)


def gradient_steps(X, y, w, steps):
    """Logistic regression by gradient descent: X @ w and X.T @ r on every iteration."""
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        w = w - 0.5 * (X.T @ (p - y)) / X.shape[0]
    return w


def test_a_loop_reads_a_tall_matrix_through_one_transposed_copy():
    """A tall matrix (2**20 elements, 1024 rows per column) that a loop of 40 iterations
    multiplies with vectors is transposed once, before the loop, and both products read the
    copy (BLAS ran 1.3-4x faster on it); a loop of 8 iterations reads the matrix itself.
    Results are NumPy's either way."""
    assert blas.available_targets(), "the BLAS module was not built or NumPy's BLAS not found"
    rng = np.random.default_rng(3)
    X = rng.standard_normal((32768, 32))
    y = (X @ rng.standard_normal(32) > 0).astype(np.float64)
    w = np.zeros(32)
    f = jit(gradient_steps, static_argnames=("steps",))
    for steps, copied in ((40, True), (8, False)):
        np.testing.assert_allclose(f(X, y, w, steps), gradient_steps(X, y, w, steps),
                                   rtol=1e-12, atol=1e-15)
        text = f.lower(X, y, w, steps).as_text()
        before_loop = text[:text.index('"stablehlo.while"')]
        assert ('"stablehlo.transpose"' in before_loop) == copied, steps
        calls = re.findall(r'"stablehlo.custom_call"\(([^)]*)\).*call_target_name = "(psc_gemv_\w)"',
                           text)
        shapes = re.findall(r'call_target_name = "psc_gemv_\w".*?\(tensor<(\d+)x(\d+)xf64>',
                            text)
        assert len(calls) == 2 and shapes, text[-2000:]
        assert all((int(r), int(c)) == ((32, 32768) if copied else (32768, 32))
                   for r, c in shapes), shapes
