"""Settings through IPython's configuration system (%config PscJit), the `psc_jit` logger,
and flag conflicts refused as usage errors."""
import logging
import subprocess
import sys

import numpy as np
import psc_jit
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.core import EXECUTABLE_CACHE, TRACE_CACHE, Budget, budget

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.user_ns.update(np=np, x=np.arange(4.0))
    size = TRACE_CACHE.maxsize
    yield ip
    ip.run_line_magic("config", f"PscJit.cache_size = {size}")
    ip.run_line_magic("config", "PscJit.timing_budget = 1.0")
    ip.run_line_magic("config", f"PscJit.max_equations = {Budget().max_equations}")
    ip.run_line_magic("config", f"PscJit.max_compile_seconds = {Budget().max_compile_seconds}")
    ip.user_ns.pop("y", None)


def test_config_lists_the_settings_with_their_help(shell, capsys):
    shell.run_line_magic("config", "PscJit")
    out = capsys.readouterr().out
    assert "PscJit.cache_size" in out and "PscJit.timing_budget" in out
    assert "least recently used" in out


def test_cache_size_bounds_both_caches_and_evicts_at_once(shell):
    for n in range(3):
        psc_jit.jit(lambda a, n=n: a + n)(np.ones(2))
    shell.run_line_magic("config", "PscJit.cache_size = 1")
    assert TRACE_CACHE.maxsize == EXECUTABLE_CACHE.maxsize == 1
    assert len(TRACE_CACHE) <= 1 and len(EXECUTABLE_CACHE) <= 1


def test_timing_budget_reaches_the_timing_comparison(shell):
    shell.run_line_magic("config", "PscJit.timing_budget = 0.0")
    shell.run_cell_magic("psc_jit", "--quiet --compare", "y = x * 2.0\n")
    timings = psc_jit.last_report().timings
    assert len(timings.plain_seconds) == 1 and len(timings.compiled_seconds) == 1


def test_a_name_both_static_and_traced_is_a_usage_error(shell):
    with pytest.raises(UsageError, match="x: a name is either --static or --traced"):
        shell.run_cell_magic("psc_jit", "--static x --traced x", "y = x + 1\n")
    assert "y" not in shell.user_ns


def test_the_psc_jit_logger_reports_misses_compiles_and_fallbacks(shell, caplog):
    with caplog.at_level(logging.INFO, logger="psc_jit"):
        shell.run_cell_magic("psc_jit", "--quiet --name logged", "y = x - 1.0\n")
        shell.run_cell_magic("psc_jit", "--quiet --name logged2", "print(x)\n")
    messages = [r.getMessage() for r in caplog.records if r.name == "psc_jit"]
    assert any("cache miss for logged: first run of this cell" in m for m in messages)
    assert any(m.startswith("compiled logged for (x: f64[4])") for m in messages)
    assert any("logged2 runs as plain Python" in m and "print()" in m for m in messages)


def test_the_equation_budget_stops_a_cell_that_grows_past_it(shell):
    shell.run_line_magic("config", "PscJit.max_equations = 20")
    assert budget.current().max_equations == 20
    shell.user_ns["items"] = list(range(40))
    shell.run_cell_magic("psc_jit", "--quiet", "y = x\nfor k in items:\n    y = y * 2.0 + k\n")
    report = psc_jit.last_report()
    # the loop over a list could only unroll, past the budget: Python runs it, and its body
    # is compiled once, run on each pass
    loop = report.host_steps[0]
    assert report.split and loop.kind == "for" and "20 equations" in loop.reason
    assert report.host_passes == {((), 1): 40}
    np.testing.assert_array_equal(shell.user_ns["y"], _plain_doubling(np.arange(4.0), 40))


def _plain_doubling(y, n):
    for k in range(n):
        y = y * 2.0 + k
    return y


def test_arrays_made_after_loading_are_aligned_unless_turned_off(shell):
    from numpy._core.multiarray import get_handler_name
    shell.run_cell("fresh = np.ones(1001)")
    assert shell.user_ns["fresh"].ctypes.data % 64 == 0
    shell.run_line_magic("config", "PscJit.align_arrays = False")
    try:
        assert get_handler_name() == "default_allocator"
        shell.run_cell("offsets = {np.ones(n).ctypes.data % 64 for n in range(100, 200)}")
        assert shell.user_ns["offsets"] != {0}
    finally:
        shell.run_line_magic("config", "PscJit.align_arrays = True")
    assert get_handler_name() == "psc_jit_aligned_64"
    shell.user_ns.pop("fresh")


MAGIC_FAULTS = """
import resource
import numpy as np
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "psc_jit")
{setting}
shell.run_cell("import numpy as np; x = np.random.default_rng(0).random((2000, 3000))")
faulting = 0
for run in range(20):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "y = x * 2.0 + 1.0")
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    faulting += run >= 5 and faults > 2000 * 3000 // 1024     # most of the result's pages
assert np.array_equal(shell.user_ns["y"], shell.user_ns["x"] * 2.0 + 1.0)
print(faulting)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_cell_with_a_large_result_reuses_its_memory_unless_turned_off():
    def faulting_runs(setting):
        done = subprocess.run([sys.executable, "-c", MAGIC_FAULTS.format(setting=setting)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return int(done.stdout.split()[-1])
    kept = faulting_runs("")
    fresh = faulting_runs('shell.run_line_magic("config", "PscJit.kept_freed_memory = 0")')
    assert kept <= 5 and fresh == 15, f"of 15 re-runs, {kept} kept and {fresh} fresh faulted"
