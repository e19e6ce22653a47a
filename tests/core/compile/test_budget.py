"""No compile that never ends: every unrolling path is under one equation budget, the compile
time is estimated before XLA is called, a program over budget is refused (jit) or falls back
(magic) at once with the line and the reason, a running compile can be interrupted without
touching the namespace or the caches, and loops calling functions of the cell still roll."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from psc_jit.core import BudgetExceeded, UnsupportedError, budget, jit
from psc_jit.core.compile.estimate import estimate_compile_seconds

pytestmark = pytest.mark.xla

LONG_LIST_LOOP = """
acc = []
for t in range(100_000):
    acc.append(x[t % 5] * 2.0)
total = acc[-1]
"""

# Unrolled (it uses `break`), one long chain of slices and concatenations (np.roll) that XLA
# fuses: minutes to compile.
SLOW_TO_COMPILE = """
for t in range(steps):
    u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    if steps < 0:
        break
v = u
"""


def run_cell(source, namespace, **options):
    from psc_jit.runner import CellRunner, Options
    runner = CellRunner(namespace)
    return runner.run(source, Options(compare=False, **options))


def test_a_loop_too_long_to_unroll_is_refused_by_jit_with_the_line_and_the_reason():
    def f(x):
        acc = []
        for t in range(100_000):
            acc.append(x[t % 5] * 2.0)
        return acc[-1]
    with pytest.raises(UnsupportedError) as info:
        jit(f)(np.ones(5))
    text = str(info.value)
    assert "for t in range(100_000):" in text and text.startswith("line ")
    assert "the loop body changes `acc`, a Python list" in text
    assert "its 100,000 iterations would make about" in text and "Budget.max_equations" in text


def test_the_magic_falls_back_with_the_line_and_the_reason():
    namespace = {"np": np, "x": np.arange(5.0)}
    report, _ = run_cell(LONG_LIST_LOOP, namespace)
    assert not report.compiled      # the loop ran on the host; the rest computes nothing
    assert report.fallback_reason.startswith("line 4: 'for t in range(100_000):': ")
    assert "Budget.max_equations" in report.fallback_reason
    assert namespace["total"] == 8.0                       # the plain cell ran


def test_every_unrolling_path_counts_equations():
    def blocked(x):                 # `break` keeps it from rolling: it runs as plain Python
        for t in range(10_000):
            x = x + 1.0
            if t < 0:
                break
        return x
    with budget.budget_scope(max_equations=500), pytest.raises(BudgetExceeded) as info:
        jit(blocked)(np.ones(3))
    assert "x = x + 1.0" in str(info.value) and "passed 500 equations" in str(info.value)

    def static_while(x):
        k = 0
        while k < 10_000:
            x = x * 1.5
            k += 1
        return x
    with budget.budget_scope(max_equations=500), pytest.raises(BudgetExceeded):
        jit(static_while)(np.ones(3))


def test_a_program_estimated_to_compile_too_long_is_refused_before_xla():
    namespace = {"np": np, "u": np.linspace(0, 1, 64), "steps": 250}
    report, _ = run_cell(SLOW_TO_COMPILE, namespace)
    assert not report.compiled
    reason = report.fallback_reason
    assert "XLA would take about" in reason and "Budget.max_compile_seconds" in reason
    # the loop (it uses `break`) runs as plain Python, a host step; the reason names the line
    # in it whose program was too large
    assert reason.startswith("line 3: 'for t in range(steps):': line 4: 'u = u + 0.1")
    assert "unrolled because it uses `break`" in reason
    assert namespace["v"].shape == (64,)                          # the plain cell ran


def test_the_estimate_tells_a_small_program_from_a_large_one():
    def small(x):
        return np.sin(x) * 2 + 1
    def rolled(u):
        for _t in range(250):
            u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        return u
    quick = estimate_compile_seconds(jit(small).trace(np.ones(4)).graph)
    loop = estimate_compile_seconds(jit(rolled).trace(np.ones(4)).graph)
    unrolled = estimate_compile_seconds(jit(rolled, roll=False).trace(np.ones(4)).graph)
    assert quick < 1 and loop < 1 and unrolled > budget.current().max_compile_seconds


def test_a_loop_calling_a_function_of_the_cell_rolls():
    source = """
def rhs(t, y):
    return -0.5 * y + np.sin(t)
y = y0.copy()
t = 0.0
for k in range(steps):
    k1 = rhs(t, y)
    k2 = rhs(t + h / 2, y + h / 2 * k1)
    k3 = rhs(t + h / 2, y + h / 2 * k2)
    k4 = rhs(t + h, y + h * k3)
    y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    t = t + h
"""
    namespace = {"np": np, "y0": np.ones(3), "steps": 200, "h": 0.01}
    plain = dict(namespace)
    exec(source, plain)
    report, _ = run_cell(source, namespace)
    assert report.compiled, report.fallback_reason
    assert sum(e.prim.name == "while_loop" for e in report.graph.eqns) == 1
    np.testing.assert_allclose(namespace["y"], plain["y"], rtol=1e-12)


INTERRUPTED = textwrap.dedent("""
    import json, os, signal, threading
    import numpy as np
    from psc_jit.core import EXECUTABLE_CACHE, TRACE_CACHE, budget
    from psc_jit.runner import CellRunner, Options

    # SIGINT raises KeyboardInterrupt, as Kernel -> Interrupt does, even where this process
    # was started with SIGINT ignored (a job put in the background by a shell: Python then
    # installs no handler of its own, and the signal would be dropped)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    source = {source!r}
    namespace = {{"__builtins__": __builtins__, "np": np, "u": np.linspace(0, 1, 64),
                 "steps": 250}}                 # a user namespace, as IPython's
    before = {{k: v for k, v in namespace.items()}}
    runner = CellRunner(namespace)
    heard = []
    caches = lambda: [len(TRACE_CACHE), len(EXECUTABLE_CACHE), TRACE_CACHE.misses,
                      EXECUTABLE_CACHE.misses]
    start = caches()

    def hear(stage):                # interrupt 2.5 s into XLA's compile
        heard.append(stage)
        if stage == "compile":
            threading.Timer(2.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    outcome = "finished"
    try:
        with budget.budget_scope(max_compile_seconds=1e9):
            runner.run(source, Options(compare=False), progress=hear)
    except KeyboardInterrupt:
        outcome = "interrupted"
    result = {{"outcome": outcome, "heard": heard, "caches": [start, caches()],
              "names": sorted(namespace) == sorted(before),
              "same": all(namespace[k] is before[k] for k in before)}}
    namespace["steps"] = 3          # the runner still works afterwards
    report, _ = runner.run(source, Options(compare=False))
    result["after"] = report.compiled
    print(json.dumps(result), flush=True)
    os._exit(0)                     # the abandoned compile is still running in its thread
""")


def test_an_interrupt_during_a_long_compile_leaves_namespace_and_caches_as_they_were():
    script = INTERRUPTED.format(source=SLOW_TO_COMPILE)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["outcome"] == "interrupted", result     # what it heard, if not
    assert result["heard"][:3] == ["trace", "lower", "compile"]
    assert any(h.startswith("compile: XLA has been at it for") for h in result["heard"][3:])
    before, after = result["caches"]
    assert before == after
    assert result["names"] and result["same"]
    assert result["after"] is True


def test_the_default_budget_refuses_a_runaway_unrolled_program_in_a_bounded_time():
    script = textwrap.dedent("""
        import numpy as np
        from psc_jit.core import BudgetExceeded, jit
        def f(u):
            for t in range(300):
                u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1)) * np.sin(u)
            return u
        try:
            jit(f, roll=False)(np.ones(100))
        except BudgetExceeded as err:
            print("refused:", err)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert "refused: line 6:" in done.stdout and "XLA would take about" in done.stdout
