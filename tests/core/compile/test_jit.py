"""jit and its staged API: graph, StableHLO, optimized HLO, results equal to NumPy's,
and a cache that hits on the same signature and explains every miss."""
import numpy as np
import pytest
from psc_jit.core import TRACE_CACHE, jit

pytestmark = pytest.mark.xla


def tanh_loss(x, w):
    h = np.tanh(x @ w + 1.0)
    return h, (h ** 2).mean()


def test_results_equal_numpy_with_dtype_and_scalar_type():
    x = np.random.default_rng(0).standard_normal((50, 40))
    w = np.ones(40)
    h, loss = jit(tanh_loss)(x, w)
    h0, loss0 = tanh_loss(x, w)
    assert h.dtype == h0.dtype and h.shape == h0.shape
    np.testing.assert_allclose(h, h0, rtol=1e-12)
    assert type(loss) is type(loss0) is np.float64
    assert loss == pytest.approx(loss0, rel=1e-12)
    assert h.flags.writeable


def test_staged_api_exposes_every_stage():
    x, w = np.ones((4, 3), np.float32), np.ones(3, np.float32)
    traced = jit(tanh_loss).trace(x, w)
    prims = [e.prim.name for e in traced.graph.eqns]
    assert "dot_general" in prims and "tanh" in prims
    assert "tanh" in str(traced.graph)
    lowered = traced.lower()
    text = lowered.as_text()
    assert '"stablehlo.tanh"' in text and "func.func public @main" in text
    assert 'loc("e' in text and "test_jit.py" in text
    compiled = lowered.compile()
    assert "HloModule" in compiled.as_text() and "fusion" in compiled.as_text()
    cost = compiled.cost_analysis()
    assert cost["flops"] > 0 and cost["bytes accessed"] > 0
    h, loss = compiled(x, w)
    assert h.dtype == np.float32 and isinstance(loss, np.float32)


def test_same_signature_hits_and_new_shape_misses_with_reason():
    def loss(x, w):
        return tanh_loss(x, w)
    f = jit(loss)
    x, w = np.ones((30, 20)), np.ones(20)
    f(x, w)
    assert f.last_call.cache_hit is False and f.last_call.miss_reason == "first call"
    hits = TRACE_CACHE.hits
    f(x + 1, w)
    assert f.last_call.cache_hit is True and TRACE_CACHE.hits == hits + 1
    f(np.ones((10, 20)), w)
    assert f.last_call.miss_reason == "x: f64[30,20] → f64[10,20]"


def test_dtype_change_and_static_value_change_are_explained():
    def scale(x, n):
        return x * n
    f = jit(scale)
    f(np.ones(3), 2)
    f(np.ones(3, np.float32), 2)
    assert f.last_call.miss_reason == "x: f64[3] → f32[3]"
    f(np.ones(3, np.float32), 5)
    assert f.last_call.miss_reason == "n: 2 → 5 (static)"
    assert f(np.ones(3, np.float32), 5).dtype == np.float32   # int n: weak, stays f32


def test_static_argnames_make_a_float_static():
    f = jit(lambda x, s: x * s, static_argnames="s")
    f(np.ones(2), 1.5)
    f(np.ones(2), 2.5)
    assert f.last_call.miss_reason == "s: 1.5 → 2.5 (static)"
    np.testing.assert_array_equal(f(np.ones(2), 2.5), [2.5, 2.5])


def test_static_values_that_compare_equal_but_compute_differently_are_distinct():
    """1 == 1.0 == True and 0.0 == -0.0 in Python; as static values they are four programs."""
    f = jit(lambda x, s: x + s, static_argnames="s")
    x = np.array([-0.0], np.float32)
    for s in (1, 1.0, True, 0.0, -0.0, 1, 0.0):
        got, want = f(x, s), x + s
        assert got.dtype == want.dtype and np.signbit(got) == np.signbit(want), s
    assert len(f.cache_records()) == 5


def test_python_float_is_weak_and_traced():
    f = jit(lambda x, a: x * a)
    out = f(np.ones(3, np.float32), 0.5)
    assert out.dtype == np.float32
    f(np.ones(3, np.float32), 0.25)
    assert f.last_call.cache_hit      # a new float value does not recompile


def test_same_program_hits_the_executable_cache():
    from psc_jit.core import EXECUTABLE_CACHE

    source = compile("def body(x):\n    return np.exp(x) + 1\n", "<same cell>", "exec")

    def define():
        scope = {"np": np}
        exec(source, scope)
        return scope["body"]
    jit(define())(np.ones(7))
    hits = EXECUTABLE_CACHE.hits
    jit(define())(np.ones(7))      # a new function (a re-run cell): trace miss, same StableHLO
    assert EXECUTABLE_CACHE.hits == hits + 1


def test_mutated_argument_is_written_back_in_place():
    def bump(a):
        a[1:] += 1.0
        return a.sum()
    a = np.zeros(4)
    same = a
    total = jit(bump)(a)
    assert same is a and a.tolist() == [0.0, 1.0, 1.0, 1.0]
    assert total == 3.0


def test_error_at_trace_time_leaves_arguments_alone():
    def bad(a):
        a[0] = 5.0
        return a @ np.ones(3)        # shapes do not match: NumPy's ValueError
    a = np.zeros(2)
    with pytest.raises(ValueError):
        jit(bad)(a)
    assert a.tolist() == [0.0, 0.0]


def running_sum(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + x[i] * x[i]
    return acc


def test_loops_of_a_function_with_source_are_rolled_into_one_xla_loop():
    x = np.random.default_rng(1).random(500)
    f = jit(running_sum)
    got = f(x, 500)
    assert type(got) is np.float64 and got == pytest.approx(running_sum(x, 500), rel=1e-12)
    graph = f.last_call.compiled.graph
    assert [e.prim.name for e in graph.eqns].count("while_loop") == 1
    assert sum(1 for _ in graph.all_eqns()) < 60            # not 500 copies of the body
    unrolled = jit(running_sum, roll=False).trace(x, 500).graph
    assert sum(1 for _ in unrolled.all_eqns()) > 1000


def test_rolled_and_unrolled_compilations_of_one_function_are_cached_apart():
    """jit(f, roll=False) and jit(f) of the same function each get the program they ask for,
    whichever ran first (they shared cache entries, so the second got the first's)."""
    x = np.random.default_rng(2).random(50)
    for first, second in ((False, True), (True, False)):
        def total(x, n):
            acc = 0.0
            for i in range(n):
                acc = acc + x[i]
            return acc
        calls = [jit(total, roll=roll) for roll in (first, second)]
        for f, roll in zip(calls, (first, second), strict=True):
            assert f(x, 50) == pytest.approx(x.sum(), rel=1e-12)
            loops = [e.prim.name for e in f.last_call.compiled.graph.eqns].count("while_loop")
            assert loops == (1 if roll else 0), (first, second, roll)


def test_first_use_from_two_threads_shares_one_xla_client():
    import subprocess
    import sys
    code = ("import threading, numpy as np\n"
            "from psc_jit.core import jit\n"
            "out = []\n"
            "def go(k):\n"
            "    out.append(jit(lambda x: x * k)(np.ones(3)).tolist())\n"
            "ts = [threading.Thread(target=go, args=(k,)) for k in (2.0, 3.0)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "print(sorted(out))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]"
