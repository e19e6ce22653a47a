"""Which programs run on the calling thread: a program whose run is known to be short (every loop
with a trip count fixed when traced, little memory traffic and arithmetic) runs inline, with no
hand-off to XLA's thread; one whose run depends on its values, or is long, runs where an
interrupt stops the wait (tests/extension/test_interrupt.py). Either way a call gives NumPy's
results, and arrays pass between the two kinds of program, and through the disk cache."""
import numpy as np
import pytest
from psc_jit.core import fori_loop, jit
from psc_jit.core.compile import waiting, xla
from psc_jit.core.compile.diskcache import DiskCache, load_or_compile
from psc_jit.core.compile.estimate import run_seconds, runs_briefly
from psc_jit.core.typecheck import check_graph

pytestmark = pytest.mark.xla


def graph_of(f, *args):
    graph = jit(f).trace(*args).graph
    check_graph(graph)
    return graph


def smooth(x):
    for _ in range(3):
        x = np.sin(x) * 0.5 + 0.1
    return x


def iterate(x, n):
    return fori_loop(0, n, lambda i, v: np.sin(v) * 0.5 + 0.1, x)


def until_small(x):
    while np.abs(x).max() > 1e-3:
        x = x * 0.5
    return x


def test_short_programs_with_known_trip_counts_run_briefly():
    x = np.ones(1000)
    assert runs_briefly(graph_of(lambda v: v * 2.0 + 1.0, x))
    assert runs_briefly(graph_of(smooth, x))
    assert runs_briefly(graph_of(iterate, x, 50))               # static n: a trip count


def test_a_loop_whose_trip_count_is_a_value_never_runs_inline():
    x = np.ones(1000)
    assert run_seconds(graph_of(iterate, x, np.int64(50))) is None     # traced n
    assert not runs_briefly(graph_of(until_small, x))


def capped(x):
    err, steps = 1.0, 0
    while err > 1e-12 and steps < 100:
        x = 0.5 * (x + 2.0 / x)
        err = np.abs(x * x - 2.0).max()
        steps += 1
    return x, steps


def capped_by(x, cap):
    steps = 0
    while np.abs(x).max() > 1e-3 and steps < cap:
        x = x * 0.5
        steps += 1
    return x


def stepping_by_two(x):
    steps = 0
    while np.abs(x).max() > 1e-3 and steps < 100:
        x = x * 0.5
        steps += 2
    return x


def test_a_loop_capped_by_a_counter_and_a_literal_runs_briefly():
    x = np.full(1000, 3.0)
    graph = graph_of(capped, x)
    assert runs_briefly(graph)
    f = jit(capped)
    np.testing.assert_allclose(f(x)[0], capped(x)[0], rtol=1e-15)
    assert f(x)[1] == capped(x)[1]
    assert f.last_call.compiled.executable.inline
    assert run_seconds(graph_of(capped_by, x, np.int64(100))) is None    # a value, not a literal
    assert run_seconds(graph_of(stepping_by_two, x)) is None            # not counting by one


def test_large_contractions_and_traffic_do_not_run_inline():
    a = np.ones((1500, 1500))
    assert not runs_briefly(graph_of(lambda m: m @ m, a))       # 6.75 GFLOP
    assert not runs_briefly(graph_of(iterate, np.ones(1_000_000), 100))
    assert runs_briefly(graph_of(lambda m: m @ m, np.ones((100, 100))))


def test_inline_and_asynchronous_programs_give_numpys_results_and_pass_arrays_on():
    x = np.linspace(-3.0, 3.0, 1001)
    short, loop = jit(smooth), jit(until_small)
    y = short(x)
    assert short.last_call.compiled.executable.inline
    z = loop(y)
    assert not loop.last_call.compiled.executable.inline
    expected = smooth(x)
    np.testing.assert_allclose(y, expected, rtol=1e-15)
    np.testing.assert_array_equal(z, until_small(expected))
    w = short(z)                                # an asynchronous program's result, inline
    np.testing.assert_allclose(w, smooth(until_small(expected)), rtol=1e-15)
    assert y.flags.writeable and z.flags.writeable and w.flags.writeable
    y[0] = 7.0                                  # the caller's own memory
    assert short(x)[0] == expected[0]


def test_an_inline_program_goes_through_the_disk_cache_and_loads_inline(tmp_path):
    cache = DiskCache(tmp_path / "cache")
    lowered = jit(smooth).trace(np.ones(5)).lower()
    graph = lowered.graph
    inline = runs_briefly(graph)
    assert inline

    def compile_now():
        return xla.compile_stablehlo(lowered.text, graph.in_avals, graph.out_avals, None,
                                     inline)
    compiled, _ = load_or_compile("e" * 64, lowered.text, graph.in_avals, graph.out_avals,
                                  compile_now, cache, inline=inline)
    loaded, origin = load_or_compile("e" * 64, lowered.text, graph.in_avals, graph.out_avals,
                                     compile_now, cache, inline=False)
    assert origin is not None and compiled.inline and not loaded.inline
    x = np.arange(5.0) / 3
    np.testing.assert_array_equal(loaded.execute([x])[0], compiled.execute([x])[0])
    np.testing.assert_allclose(compiled.execute([x])[0], smooth(x), rtol=1e-15)


# -- what the estimate must not miss: runs long on little memory -------------------------------

def test_every_primitive_has_a_model_of_its_run_time():
    """A primitive without one makes every program using it unbounded (never inline): adding
    a primitive means saying how long it runs."""
    from psc_jit.core.compile.estimate import MODELLED
    from psc_jit.core.primitives.record import PRIMITIVES
    assert [n for n, p in PRIMITIVES.items() if not p.ufuncs and n not in MODELLED] == []


def spin_fixed(x, n):
    for _ in range(n):
        x = np.sin(x) * 0.5 + 0.1
    return x


def test_runs_long_on_little_memory_do_not_run_inline():
    """Sorts' comparisons, a correlation's products, a loop's steps on a few elements and
    transcendental functions take far longer than their memory traffic says."""
    rng = np.random.default_rng(0)
    assert not runs_briefly(graph_of(np.argsort, rng.random(1_000_000)))
    assert not runs_briefly(graph_of(np.convolve, rng.random(100_000), rng.random(5000)))
    assert not runs_briefly(graph_of(jit(spin_fixed, static_argnames="n").fun,
                                     np.ones(10), 100_000))
    assert not runs_briefly(graph_of(np.exp, np.ones(10_000_000)))


# -- what XLA runs on the calling thread all the same: handed to a worker ----------------------

def spin(x, n):
    count = 0.0
    while count < n:
        count, x = count + 1.0, x * 0.999 + 0.001
    return x


def spin_executable(size: int):
    f = jit(spin)
    f(np.ones(size), 2.0)
    return f, f.last_call.compiled.executable


def test_xla_runs_a_program_under_its_cheap_flops_on_the_calling_thread():
    """The fact `hands_off` rests on (jaxlib 0.10.2): the asynchronous client runs a program
    whose cost analysis counts fewer than XLA_RUNS_INLINE_BELOW_FLOPS flops (a loop's body
    once: here 2 per element and 4) before the launch returns, and any other on its own
    thread. The run is long: a loop of 200,000 steps."""
    below_f, below = spin_executable(497)
    above_f, above = spin_executable(498)
    assert below.cost_analysis()["flops"] < waiting.XLA_RUNS_INLINE_BELOW_FLOPS
    assert above.cost_analysis()["flops"] >= waiting.XLA_RUNS_INLINE_BELOW_FLOPS
    assert below.hands_off and not above.hands_off
    n = np.float64(200_000.0)
    assert below._launch(below._transfer([np.ones(497), n]))[0].is_ready()
    results = above._launch(above._transfer([np.ones(498), n]))
    assert not results[0].is_ready()
    results[0].block_until_ready()


def test_a_handed_off_program_gives_numpys_results_off_the_dispatcher():
    """Its runs go to a worker thread (the caller waits where an interrupt stops it), never
    through jaxlib's C++ dispatcher, which would run it on the calling thread."""
    f, executable = spin_executable(8)
    assert executable.hands_off and not executable.inline
    x = np.linspace(0.0, 1.0, 8)
    for n in (0.0, 3.0, 1000.0):
        np.testing.assert_allclose(f(x, n), spin(x, n), rtol=1e-13)
    assert f._last[2].never_dispatched
    y, breakdown = f.time_call(x, 5.0)
    np.testing.assert_allclose(y, spin(x, 5.0), rtol=1e-13)
    assert breakdown.execute >= 0.0
