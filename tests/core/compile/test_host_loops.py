"""Host loops (core/compile/hostloops.py, loop_c.py): a loop of scalar work runs as C and ends
as plain NumPy ends, to the bit: every C rule on edge values of every dtype it takes, in
place updates, nested loops, loops of 0, 1 and n passes, data-dependent exits; a loop with
no C form stays XLA's and is still right; the C is rebuilt for a program loaded from the disk
cache in a new process; without a C compiler every loop stays XLA's."""
import copy
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import psc_jit
from psc_jit.core.compile import hostloops

pytestmark = [pytest.mark.xla,
              pytest.mark.skipif(hostloops.compiler() is None, reason="no C compiler")]

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
# No subnormals: every compiled program flushes them to zero (XLA:CPU's mode, README), host
# loops alike (test_subnormals_are_flushed_as_in_xlas_loops).
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e300,
               -1e300, 1e-30, 7e-300]


def edges(dtype: str) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return np.array(FLOAT_EDGES, dtype)
    info = np.iinfo(dtype)
    values = {0, 1, 2, 3, 7, info.max, info.max - 1, info.min, info.min + 1}
    if info.min < 0:
        values |= {-1, -2, -7}
    return np.array(sorted(values), dtype)


def pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    e = edges(dtype)
    return np.repeat(e, e.size), np.tile(e, e.size)


def same(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)


def runs_as_host_loop(fn, *args) -> bool:
    return "psc_loop_" in psc_jit.jit(fn).lower(*copy.deepcopy(args)).as_text()


def check(fn, *args, host: bool = True) -> None:
    """fn compiled, with its loop as a host loop (when `host`), ends as plain fn: results and
    every argument it updated, to the bit."""
    assert runs_as_host_loop(fn, *args) == host
    plain_args, jit_args = copy.deepcopy(args), copy.deepcopy(args)
    with np.errstate(all="ignore"):
        want = fn(*plain_args)
    got = psc_jit.jit(fn)(*jit_args)
    if want is not None:
        same(got, want)
    for g, w in zip(jit_args, plain_args, strict=True):
        if isinstance(w, np.ndarray):
            same(g, w)


def arithmetic(a, b, *out):
    i = 0
    for _ in range(a.shape[0]):     # i carried, not the loop's index: a sequential loop
        out[0][i] = a[i] + b[i]
        out[1][i] = a[i] - b[i]
        out[2][i] = a[i] * b[i]
        out[3][i] = -a[i]
        out[4][i] = abs(a[i])
        i = (i + 1) % a.shape[0]


def integer_only(a, b, *out):
    i = 0
    for _ in range(a.shape[0]):     # i carried, not the loop's index: a sequential loop
        out[0][i] = a[i] // b[i]
        out[1][i] = a[i] % b[i]
        out[2][i] = a[i] & b[i]
        out[3][i] = a[i] | b[i]
        out[4][i] = a[i] ^ b[i]
        out[5][i] = ~a[i]
        out[6][i] = max(a[i], b[i])
        out[7][i] = min(a[i], b[i])
        i = (i + 1) % a.shape[0]


def comparisons(a, b, *out):
    i = 0
    for _ in range(a.shape[0]):     # i carried, not the loop's index: a sequential loop
        out[0][i] = a[i] < b[i]
        out[1][i] = a[i] <= b[i]
        out[2][i] = a[i] == b[i]
        out[3][i] = a[i] != b[i]
        out[4][i] = a[i] > b[i]
        out[5][i] = a[i] >= b[i]
        i = (i + 1) % a.shape[0]


def float_only(a, b, *out):
    i = 0
    for _ in range(a.shape[0]):     # i carried, not the loop's index: a sequential loop
        out[0][i] = a[i] / b[i]
        out[1][i] = np.sqrt(a[i])
        out[2][i] = np.floor(a[i])
        out[3][i] = np.ceil(a[i])
        out[4][i] = np.rint(a[i])
        out[5][i] = np.maximum(a[i], b[i])
        out[6][i] = np.minimum(a[i], b[i])
        i = (i + 1) % a.shape[0]


def float_tests(a, *out):
    i = 0
    for _ in range(a.shape[0]):     # i carried, not the loop's index: a sequential loop
        out[0][i] = np.isnan(a[i])
        out[1][i] = np.isinf(a[i])
        out[2][i] = np.isfinite(a[i])
        out[3][i] = bool(a[i])
        i = (i + 1) % a.shape[0]


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_arithmetic_and_comparisons_are_numpys_on_edge_values(dtype):
    a, b = pairs(dtype)
    check(arithmetic, a, b, *np.zeros((5, a.size), dtype))
    check(comparisons, a, b, *np.zeros((6, a.size), bool))


def test_bool_sums_products_and_bits_are_numpys():
    def bools(a, b, *out):
        i = 0
        for _ in range(a.shape[0]):     # i carried, not the loop's index: a sequential loop
            out[0][i] = a[i] + b[i]
            out[1][i] = a[i] * b[i]
            out[2][i] = a[i] ^ b[i]
            out[3][i] = a[i] | b[i]
            out[4][i] = ~a[i]
            i = (i + 1) % a.shape[0]
    a, b = np.array([False, False, True, True]), np.array([False, True, False, True])
    check(bools, a, b, *np.zeros((5, 4), bool))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_bits_and_extrema_are_numpys(dtype):
    a, b = pairs(dtype)
    check(integer_only, a, b, *np.zeros((8, a.size), dtype))


@pytest.mark.parametrize("dtype", INTS)
def test_shifts_by_any_amount_are_numpys(dtype):
    def shifts(a, b, *out):
        i = 0
        for _ in range(a.shape[0]):
            out[0][i] = a[i] << b[i]
            out[1][i] = a[i] >> b[i]
            i += 1
    bits = np.dtype(dtype).itemsize * 8
    amounts = np.array([0, 1, 3, bits - 1, bits, bits + 1] +
                       ([-1, -bits] if np.dtype(dtype).kind == "i" else []), dtype)
    e = edges(dtype)
    a, b = np.repeat(e, amounts.size), np.tile(amounts, e.size)
    check(shifts, a, b, *np.zeros((2, a.size), dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_division_roots_roundings_extrema_and_tests_are_numpys(dtype):
    a, b = pairs(dtype)
    check(float_only, a, b, *np.zeros((7, a.size), dtype))
    check(float_tests, edges(dtype), *np.zeros((4, edges(dtype).size), bool))


@pytest.mark.parametrize("source,target", [("int8", "int64"), ("uint32", "float64"),
                                           ("int64", "int16"), ("float64", "float32"),
                                           ("uint64", "float32"), ("bool", "float64"),
                                           ("float32", "bool"), ("int64", "uint8")])
def test_conversions_on_store_are_numpys(source, target):
    def store(a, out):
        i = 0
        for _ in range(a.shape[0]):
            out[i] = a[i].astype(out.dtype)
            i += 1
    a = np.array([True, False] * 3) if source == "bool" else edges(source)
    if np.dtype(source).kind in "iu" and np.dtype(target).kind in "iu":
        check(store, a, np.zeros(a.size, target))
    else:
        with np.errstate(all="ignore"):
            check(store, a, np.zeros(a.size, target))


def dp_table(seq):
    n = seq.shape[0]
    table = np.zeros((n, n), np.int32)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if seq[i] + seq[j] == 3 and i < j - 1:
                table[i, j] = max(table[i, j], table[i + 1, j - 1] + 1)
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def test_a_nested_dp_over_a_table_is_numpys():
    seq = np.random.default_rng(3).integers(0, 4, 40).astype(np.int32)
    check(dp_table, seq)


def scan(x, out, n):
    out[0] = x[0]
    for i in range(1, n + 1):
        out[i] = out[i - 1] * 0.5 + x[i]
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 49])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_loops_of_0_1_and_n_passes(n, dtype):
    x = (np.arange(50) * 3 - 20).astype(dtype)
    out = np.zeros(50, np.float64)
    check(scan, x, out, n, host=n > 1)      # 0 or 1 pass: no loop is left to run


def crc(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur = 0xFF & b
        for _ in range(8):
            if (crc & 1) ^ (cur & 1):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur >>= 1
    return (~crc & 0xFFFF)


def test_a_bitwise_crc_with_a_branch_is_numpys_and_the_report_says_it_ran_as_c():
    data = np.random.default_rng(1).integers(0, 256, 300).astype(np.uint8)
    check(crc, data)
    f = psc_jit.jit(crc)
    f(data)
    notes = f.last_call.compiled.notes
    line = crc.__code__.co_firstlineno + 2          # `for b in data:`
    assert f"line {line}: runs as C (a host loop" in "\n".join(notes), notes


def test_a_loop_the_data_ends_is_numpys():
    def grow(x):
        i = 0
        going = x[0] < 1000.0
        while going:
            x[i + 1] = x[i] * 1.5 + 1.0
            i += 1
            going = (x[i] < 1000.0) & (i < x.shape[0] - 1)
        return i
    check(grow, np.ones(100))


def test_reads_of_what_the_pass_before_wrote_are_numpys():
    def thomas(a, b, c, d):
        n = d.shape[0]
        for i in range(1, n):
            w = a[i] / b[i - 1]
            b[i] = b[i] - w * c[i - 1]
            d[i] = d[i] - w * d[i - 1]
        x = np.empty_like(d)
        x[n - 1] = d[n - 1] / b[n - 1]
        for i in range(n - 2, -1, -1):
            x[i] = (d[i] - c[i] * x[i + 1]) / b[i]
        return x
    rng = np.random.default_rng(2)
    check(thomas, rng.random(500), rng.random(500) + 4, rng.random(500), rng.random(500))


def test_a_loop_without_a_c_form_stays_xla_is_right_and_the_report_says_why():
    def decay(x, out):
        for i in range(1, x.shape[0]):
            out[i] = np.exp(out[i - 1] * -0.5) + x[i]
    x = np.arange(20.0)
    assert not runs_as_host_loop(decay, x, np.zeros(20))
    want, got = np.zeros(20), np.zeros(20)
    decay(x, want)
    f = psc_jit.jit(decay)
    f(x, got)
    np.testing.assert_allclose(got, want, rtol=1e-15)      # XLA's exp: the last bit may differ
    line = decay.__code__.co_firstlineno + 1
    assert f"line {line}: stays an XLA loop, not C: `exp` has no C form" in \
        f.last_call.compiled.notes, f.last_call.compiled.notes


def test_a_read_from_before_a_write_is_refused_not_wrong():
    def swap_pairs(x):
        for i in range(0, x.shape[0] - 1, 2):
            y = x.copy()
            x[i] = y[i + 1]
            x[i + 1] = y[i]
    x = np.arange(10.0)
    want, got = x.copy(), x.copy()
    swap_pairs(want)
    psc_jit.jit(swap_pairs)(got)
    same(got, want)


def test_subnormals_are_flushed_as_in_xlas_loops(tmp_path):
    code = textwrap.dedent("""
        import numpy as np, psc_jit
        def halve(x, out):
            i = 0
            for _ in range(x.shape[0]):
                out[i] = x[i] * 0.5
                i = (i + 1) % x.shape[0]
        x = np.array([1e-45, 3e-39, 2.4e-38, 1.0], np.float32)
        out = np.ones(4, np.float32)
        psc_jit.jit(halve)(x, out)
        print('psc_loop_' in psc_jit.jit(halve).lower(x, out).as_text(), out.tobytes().hex())
    """)
    script = tmp_path / "halve.py"        # a file: the loop's source is read to roll it
    script.write_text(code)
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=dict(os.environ, PSC_JIT_HOST_LOOPS=flag), timeout=300)
            for flag in ("1", "0")]
    (host, host_bits), (xla, xla_bits) = (r.stdout.split() for r in runs)
    assert (host, xla) == ("True", "False") and host_bits == xla_bits


def test_rows_updated_from_their_neighbours_are_numpys():
    def sweep(A, steps):
        for _ in range(steps):
            for i in range(1, A.shape[0] - 1):
                A[i, 1:-1] += A[i - 1, :-2] + A[i - 1, 2:] + A[i + 1, 1:-1]
                for j in range(1, A.shape[1] - 1):
                    A[i, j] = (A[i, j] + A[i, j - 1]) / 9.0
    check(sweep, np.random.default_rng(4).random((30, 40)), 3)


def test_float_sums_of_rows_are_numpys_to_the_bit():
    """A sum in a host loop adds as NumPy's add.reduce does (pairwise), so the running value
    built from it is NumPy's exactly, over rows of every length up to the limit."""
    def running(X, out):
        acc = 0.0
        for i in range(X.shape[0]):
            acc = acc * 0.75 + X[i].sum() + X[i, ::2].sum()
            out[i] = acc
    rng = np.random.default_rng(5)
    for n in (1, 7, 8, 9, 17, 63, 64):
        for dtype in ("float64", "float32"):
            X = (rng.standard_normal((12, n)) * 10.0 ** rng.integers(-3, 4, (12, n)))
            check(running, X.astype(dtype), np.zeros(12, dtype))


def test_extrema_of_rows_with_nans_are_numpys():
    def running_extrema(X, out):
        for i in range(1, X.shape[0]):
            out[i] = max(out[i - 1], X[i].max()) - X[i].min()
    X = np.random.default_rng(6).standard_normal((20, 9))
    X[3, 4], X[9, 0], X[12, 8] = np.nan, -0.0, np.inf
    check(running_extrema, X, np.zeros(20))


def test_products_and_triangular_solves_agree_with_numpy():
    """Products sum their terms pairwise too; NumPy's BLAS sums in its own order, so the last
    bits may differ from NumPy's (as XLA's do)."""
    def forward(L, x, b):
        for i in range(x.shape[0]):
            x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]

    def cholesky(A):
        for i in range(A.shape[0]):
            for j in range(i):
                A[i, j] -= A[i, :j] @ A[j, :j]
                A[i, j] /= A[j, j]
            A[i, i] -= A[i, :i] @ A[i, :i]
            A[i, i] = np.sqrt(A[i, i])
    rng = np.random.default_rng(7)
    L = np.tril(rng.random((150, 150))) + 150 * np.eye(150)
    b = rng.random(150)
    for fn, args in ((forward, (L, np.zeros(150), b)),
                     (cholesky, (L @ L.T,))):
        assert runs_as_host_loop(fn, *args)
        plain, compiled = copy.deepcopy(args), copy.deepcopy(args)
        fn(*plain)
        psc_jit.jit(fn)(*compiled)
        for got, want in zip(compiled, plain, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_integer_products_and_sums_are_numpys():
    def accumulate(M, v, out):
        for i in range(1, M.shape[0]):
            out[i] = out[i - 1] * 3 + M[i] @ v + M[i, 1:].sum()
    rng = np.random.default_rng(8)
    check(accumulate, rng.integers(-1000, 1000, (30, 20)), rng.integers(-9, 9, 20),
          np.zeros(30, np.int64))


def test_a_loop_making_large_arrays_stays_xla_and_the_report_says_why():
    def smooth(A, steps):
        for _ in range(steps):
            A[1:-1] = 0.25 * A[:-2] + 0.5 * A[1:-1] + 0.25 * A[2:]
    A = np.random.default_rng(9).random(400)
    assert not runs_as_host_loop(smooth, A, 5)
    f = psc_jit.jit(smooth)
    f(A.copy(), 5)
    assert any("an array of 398 elements made per pass" in n
               for n in f.last_call.compiled.notes), f.last_call.compiled.notes


def test_triangular_updates_through_index_arrays_are_numpys():
    """`C[:i, j] += ...` of a traced i is a scatter of a masked index array; small enough, it
    runs in the host loop, each update in order, as NumPy's."""
    def symm(alpha, beta, C, A, B):
        temp2 = np.empty((C.shape[1], ), dtype=C.dtype)
        C *= beta
        for i in range(C.shape[0]):
            for j in range(C.shape[1]):
                C[:i, j] += alpha * B[i, j] * A[i, :i]
                temp2[j] = B[:i, j] @ A[i, :i]
            C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    rng = np.random.default_rng(10)
    args = (1.5, 1.2, rng.random((6, 8)), rng.random((6, 6)), rng.random((6, 8)))
    assert runs_as_host_loop(symm, *args)
    plain, compiled = copy.deepcopy(args), copy.deepcopy(args)
    symm(*plain)
    psc_jit.jit(symm)(*compiled)
    np.testing.assert_allclose(compiled[2], plain[2], rtol=1e-14)   # its dot: not BLAS's order


def test_gathers_by_computed_indices_are_numpys():
    def follow(x, nxt, out):
        j = 0
        for i in range(out.shape[0]):
            out[i] = x[(nxt + j) % x.shape[0]].sum() + x[nxt[(j + 1) % nxt.shape[0]]]
            j = (j + 3) % nxt.shape[0]
    rng = np.random.default_rng(11)
    check(follow, rng.random(40), rng.integers(0, 40, 7), np.zeros(25))


def test_transposes_in_a_loop_are_numpys():
    def turns(M, steps):
        for _ in range(steps):
            M[:, :] = M.T * 0.5 + M
    check(turns, np.arange(36.0).reshape(6, 6), 4)


def test_a_slice_read_before_a_write_to_its_array_keeps_the_old_values():
    """`old` is a formula over x's row; the write to that row comes before its last read, so
    the formula is written out before the write (`Emitter.before_write`)."""
    def shift_rows(x, y):
        for i in range(1, x.shape[0]):     # (reads the row the pass before wrote)
            old = x[i, :] * 2.0
            x[i, :] = x[i - 1, :] + 1.0
            y[i, :] = old - 1.0
    rng = np.random.default_rng(12)
    check(shift_rows, rng.random((9, 7)), np.zeros((9, 7)))


def test_an_array_written_with_a_shifted_formula_of_itself_is_numpys():
    """`x[1:] = f(x[:-1])` element by element in place would read what it just wrote: the
    formula is written out first, as XLA's update reads the old array."""
    def shift(x, steps):
        for _ in range(steps):
            x[1:] = x[:-1] * 0.5 + 1.0
            x[0] = x[-1]
    check(shift, np.random.default_rng(16).random(20), 6)


def test_rows_of_70_updated_from_themselves_through_masks_are_numpys():
    """syrk's `C[i, :i + 1] += ...`: a scatter of a 70-element formula that reads the row it
    writes, written out first; and concatenated index columns, read without being written."""
    def syrk(alpha, beta, C, A):
        for i in range(A.shape[0]):
            C[i, :i + 1] *= beta
            for k in range(A.shape[1]):
                C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]
    rng = np.random.default_rng(13)
    check(syrk, 1.5, 1.2, rng.random((70, 70)), rng.random((70, 20)))


@pytest.mark.parametrize("n", [2, 5])
def test_concatenations_read_at_a_traced_position_are_numpys(n):
    def pick(a, b, out):
        carry = 0.0
        for i in range(out.shape[0]):
            both = np.concatenate((a[i:i + 2] * 3.0, b[i:i + 3], a[:1]))
            out[i] = both[i % 6] + both.max() + (both[::-1] > 1.5).sum() + carry
            carry = out[i] * 0.5
    rng = np.random.default_rng(14)
    check(pick, rng.random(12) * 2, rng.random(12) * 2, np.zeros(n))


def test_a_formula_read_twice_is_computed_once_and_right():
    def twice(x, out):
        carry = 1.0
        for i in range(out.shape[0]):
            row = np.sqrt(x[i] * x[i] + carry)
            out[i] = row.max() - row.min() + row[::2].sum()
            carry = out[i]
    check(twice, np.random.default_rng(15).random((20, 33)), np.zeros(20))


CHILD = textwrap.dedent("""
    import sys, numpy as np, psc_jit
    def scan(x):
        out = np.empty_like(x)
        out[0] = x[0]
        for i in range(1, x.shape[0]):
            out[i] = out[i - 1] + x[i]
        return out
    x = np.linspace(0, 1, 1000)
    f = psc_jit.jit(scan)
    got = f(x)
    print(bool(np.array_equal(got, np.cumsum(x))), f.last_call.compiled.from_disk is not None)
""")


def test_a_host_loop_loaded_from_the_disk_cache_in_a_new_process(tmp_path):
    env = dict(os.environ, PSC_JIT_CACHE_DIR=str(tmp_path / "cache"))
    script = tmp_path / "scan.py"
    script.write_text(CHILD)
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    assert [r.stdout.split() for r in runs] == [["True", "False"], ["True", "True"]], \
        [r.stderr[-2000:] for r in runs]


def test_without_a_c_compiler_loops_stay_xlas_and_are_right(tmp_path):
    code = CHILD.replace("print(", "print('psc_loop_' in f.lower(x).as_text(), "
                         "any('no C compiler' in n for n in f.last_call.compiled.notes), ")
    env = dict(os.environ, CC=str(tmp_path / "no-such-cc"), PSC_JIT_CACHE_DIR="")
    script = tmp_path / "scan.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.stdout.split()[:3] == ["False", "True", "True"], done.stderr[-2000:]
