"""Measured time per fused kernel, from one real compiled call under jaxlib's profiler: each
kernel XLA ran gets a positive time, the top-level kernels' times fit inside the call's XLA
execution, loop bodies count their runs, and a profile that cannot be taken says why in one
line while the call still runs and gives NumPy's result."""
import numpy as np
import psc_jit
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.core import KernelTimes, jit, parse_optimized_hlo
from psc_jit.core.compile import hostloops, xla
from psc_jit.core.compile.profile import expected_events

pytestmark = pytest.mark.xla


def normalised_rows(x, y):
    a = np.exp(x) * 2.0 + y          # one elementwise kernel
    b = a.sum(axis=1)                # a reduction: a kernel of its own
    return np.tanh(a / b[:, None]).sum(axis=0)


def relaxed(x, y):
    for _ in range(5):
        x = np.sin(x) * 2.0 + y
    return x.sum()


def inputs():
    rng = np.random.default_rng(0)
    return rng.random((300, 200)), rng.random((300, 200))


def test_a_profiled_call_measures_each_fused_kernel_within_the_xla_execution():
    f = jit(normalised_rows)
    x, y = inputs()
    f(x, y)
    result, breakdown, times = f.profile_call(x, y)
    np.testing.assert_allclose(result, normalised_rows(x, y), rtol=1e-12)
    model = f.last_call.compiled.kernels
    assert len(model.kernels) >= 2
    assert times.available, times.note
    assert set(times.seconds) <= {k.name for k in model.all_kernels()}
    assert len(times.seconds) >= 2
    assert all(seconds > 0 for seconds in times.seconds.values())
    assert set(times.top_level) == {k.name for k in model.kernels}
    assert 0 < times.total <= breakdown.execute
    assert times.execute == breakdown.execute
    assert times.describe().startswith(f"{len(times.seconds)} kernels measured: ")


def test_a_loop_body_kernel_counts_one_run_per_iteration_inside_its_loop():
    f = jit(relaxed)
    x, y = inputs()
    f(x, y)
    result, breakdown, times = f.profile_call(x, y)
    assert result == pytest.approx(relaxed(x, y), rel=1e-12)
    model = f.last_call.compiled.kernels
    loop = next(k for k in model.kernels if k.kind == "while")
    assert loop.trip_count == 5
    assert expected_events(model.kernels) == len(model.kernels) + 5 * len(loop.body)
    body_runs = [times.runs[k.name] for k in loop.body if k.name in times.runs]
    assert body_runs and all(runs == 5 for runs in body_runs)
    assert times.total <= breakdown.execute
    body_time = sum(times.seconds[k.name] for k in loop.body if k.name in times.seconds)
    assert body_time <= times.seconds[loop.name]


def test_a_program_over_the_event_budget_runs_unprofiled_and_says_so():
    f = jit(relaxed)
    x, y = inputs()
    f(x, y)
    result, _, times = f.profile_call(x, y, max_events=3)
    assert result == pytest.approx(relaxed(x, y), rel=1e-12)
    assert not times.available
    assert times.describe().startswith("not profiled: one call runs ")
    assert "over the budget of 3" in times.describe()


def test_a_second_profile_while_one_runs_is_refused_in_one_line():
    f = jit(normalised_rows)
    x, y = inputs()
    f(x, y)
    module = f.last_call.compiled.executable.module_name
    (inner, outer) = xla.profiled(lambda: f.profile_call(x, y), module, 1000)
    result, _, times = inner
    np.testing.assert_allclose(result, normalised_rows(x, y), rtol=1e-12)
    assert times.describe() == "not profiled: another psc_jit profile is running"
    assert outer.events and outer.note is None


def bumped_squares(w, n):
    w = w * w
    for i in range(n):
        w[i % w.shape[0]] += 1
    return w


def test_a_loop_run_as_one_function_is_measured_by_its_call(monkeypatch):
    """XLA:CPU runs a small loop as one `call` thunk (core/compile/backend_options.py): the
    loop kernel gets that thunk's time, one run, and its body's kernels none of their own
    (the call's time was left unnamed, and the Explorer showed the loop unmeasured). The
    loop is kept XLA's (not a host loop, whose C is one custom call)."""
    monkeypatch.setenv("PSC_JIT_HOST_LOOPS", "0")
    f = jit(bumped_squares, static_argnums=(1,))
    w = np.array([2, 4, 2, 1], dtype=np.int32)
    f(w, 2)
    result, breakdown, times = f.profile_call(w, 2)
    np.testing.assert_array_equal(result, bumped_squares(w, 2))
    loop = next(k for k in f.last_call.compiled.kernels.kernels if k.kind == "while")
    assert loop.thunk is not None
    assert times.runs[loop.name] == 1 and times.seconds[loop.name] > 0
    assert not any(k.name in times.runs for k in loop.body)
    assert not times.others
    assert times.available, times.note
    assert 0 < times.total <= breakdown.execute


@pytest.mark.skipif(hostloops.compiler() is None, reason="no C compiler: no host loops")
def test_a_host_loop_is_measured_as_one_kernel_at_its_line():
    f = jit(bumped_squares, static_argnums=(1,))
    w = np.array([2, 4, 2, 1], dtype=np.int32)
    f(w, 2)
    result, breakdown, times = f.profile_call(w, 2)
    np.testing.assert_array_equal(result, bumped_squares(w, 2))
    kernels = f.last_call.compiled.kernels.kernels
    loop = next(k for k in kernels if "while_loop" in k.name)
    assert times.runs[loop.name] == 1 and times.seconds[loop.name] > 0
    assert bumped_squares.__code__.co_firstlineno + 2 in {s.line for s in loop.source_lines}


def test_an_unprofiled_call_has_no_kernel_times_to_show():
    times = KernelTimes.unavailable("jaxlib's profiler recorded no kernel of this program")
    assert not times.available and times.total == 0.0
    assert times.describe() == "jaxlib's profiler recorded no kernel of this program"


def test_an_unknown_loop_count_leaves_the_event_count_unknown():
    text = """HloModule m, entry_computation_layout={(f64[])->f64[]}

%body (p: f64[]) -> f64[] {
  %p = f64[] parameter(0)
  ROOT %add = f64[] add(%p, %p)
}

%cond (q: f64[]) -> pred[] {
  %q = f64[] parameter(0)
  %zero = f64[] constant(0)
  ROOT %lt = pred[] compare(%q, %zero), direction=LT
}

ENTRY %main (x: f64[]) -> f64[] {
  %x = f64[] parameter(0)
  ROOT %loop = f64[] while(%x), condition=%cond, body=%body
}
"""
    model = parse_optimized_hlo(text)
    assert model.kernels[0].trip_count is None
    assert expected_events(model.kernels) is None


@pytest.mark.ipython
def test_the_magic_s_timed_run_reports_measured_kernel_times():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    x, y = inputs()
    shell.user_ns.update(np=np, px=x, py=y)
    shell.run_cell_magic("psc_jit", "--quiet --compare --name profiled-rows",
                         "a = np.exp(px) * 2.0 + py\nb = a.sum(axis=1)\n"
                         "out = np.tanh(a / b[:, None]).sum(axis=0)\n")
    report = psc_jit.last_report()
    measured = report.measured
    assert measured is report.timings.kernel_times
    assert measured.available, measured.note
    assert set(measured.seconds) <= {k.name for k in report.kernels.all_kernels()}
    assert 0 < measured.total
    for name in ("px", "py", "a", "b", "out"):
        shell.user_ns.pop(name)


def test_a_small_program_run_on_the_calling_thread_is_measured_too():
    f = jit(lambda x, y: (x * y + 1.0).sum())
    x = np.arange(8.0)
    f(x, x)
    result, breakdown, times = f.profile_call(x, x)
    assert result == (x * x + 1.0).sum()
    assert times.available, times.note
    assert 0 < times.total <= breakdown.execute
