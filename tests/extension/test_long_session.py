"""A long session holds bounded memory: the reports kept per cell, the cells' programs, the
caches (bounded, shown by %psc_cache), and no array data of an untraceable dtype in a key."""
import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit import last_report
from psc_jit.core import TRACE_CACHE
from psc_jit.reportlog import ReportLog

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.run_line_magic("config", "PscJit.timing_budget = 0")
    ip.user_ns.update(np=np, x=np.arange(4.0))
    yield ip
    ip.run_line_magic("config", "PscJit.timing_budget = 1.0")
    for name in ("y", "big"):
        ip.user_ns.pop(name, None)


def runner(ip):
    return ip.magics_manager.registry["PscJitMagics"].runner


def test_re_runs_keep_the_last_few_reports_of_a_cell_and_its_timed_one(shell):
    shell.run_cell_magic("psc_jit", "--quiet --compare --name rerun", "y = x * 7.0\n")
    for _ in range(20):
        shell.run_cell_magic("psc_jit", "--quiet --name rerun", "y = x * 7.0\n")
    mine = [r for r in runner(shell).reports if r.name == "rerun"]
    assert len(mine) == ReportLog.KEEP_PER_CELL + 1
    assert sum(r.timings is not None for r in mine) == 1       # %psc_timings still has it
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(4.0) * 7.0)


def test_many_cells_keep_a_bounded_number_of_reports():
    log = ReportLog()
    for k in range(ReportLog.KEEP_CELLS + 10):
        for _ in range(5):
            log.add(f"cell {k}", type("Report", (), {"timings": None})())
    assert len(log) == ReportLog.KEEP_CELLS * ReportLog.KEEP_PER_CELL


@pytest.mark.parametrize("dtype", [np.longdouble, object, str])
def test_an_untraceable_dtype_falls_back_by_its_dtype_without_its_data_in_a_key(shell, dtype):
    shell.user_ns["big"] = np.ones(1000).astype(dtype)
    entries = len(TRACE_CACHE)
    for _ in range(3):
        shell.run_cell_magic("psc_jit", "--quiet", "y = big[:2]\n")
        report = last_report()
        assert not report.compiled
        assert "XLA has no" in report.fallback_reason and "big" in report.fallback_reason
    assert len(TRACE_CACHE) == entries             # nothing cached: no key holds its bytes
    np.testing.assert_array_equal(shell.user_ns["y"], np.ones(2).astype(dtype))


def test_psc_cache_shows_the_bounds_and_clear_forgets_the_cells_programs(shell, capsys):
    shell.run_cell_magic("psc_jit", "--quiet --name bounded", "y = x + 1.0\n")
    shell.run_line_magic("psc_cache", "")
    out = capsys.readouterr().out
    assert f"(at most {TRACE_CACHE.maxsize})" in out and "XLA executables (at most" in out
    shell.run_line_magic("psc_cache", "--clear")
    assert not runner(shell)._programs
    shell.run_cell_magic("psc_jit", "--quiet --name bounded", "y = x + 1.0\n")
    assert last_report().compiled


def test_an_evicted_entry_frees_its_program_but_its_report_still_shows_it(shell):
    size = TRACE_CACHE.maxsize
    shell.run_cell_magic("psc_jit", "--quiet --name first", "y = x - 1.0\n")
    record = last_report().cache_entries[0]
    try:
        shell.run_line_magic("config", "PscJit.cache_size = 1")
        shell.run_cell_magic("psc_jit", "--quiet --name second", "y = x - 2.0\n")
    finally:
        shell.run_line_magic("config", f"PscJit.cache_size = {size}")
    assert not record.alive and not hasattr(record.entry, "executable")
    assert record.entry.compile_seconds is not None
    assert record.entry.memory_stats().output_bytes == 32
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(4.0) - 2.0)
