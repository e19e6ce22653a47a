"""The persistent compile cache across kernel restarts: the same `%%psc_jit` cell in two fresh
IPython processes sharing one cache directory; the second compiles nothing. A truncated entry
is recompiled with a warning; a directory others may write to is refused; `%config` and
`%psc_cache` reach the disk cache."""
import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.core import DiskCacheWarning

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

CELL = "h = np.tanh(x @ w + 1.0)\nloss = (h ** 2).mean()\n"

SESSION = textwrap.dedent("""
    import json, warnings
    import numpy as np
    from IPython.core.interactiveshell import InteractiveShell
    from psc_jit.core import DISK_CACHE
    warnings.simplefilter("always")
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.user_ns.update(np=np, x=np.linspace(-1, 1, 600).reshape(30, 20), w=np.ones(20))
    with warnings.catch_warnings(record=True) as heard:
        ip.run_cell_magic("psc_jit", "--quiet --no-compare", {cell!r})
    from psc_jit import last_report
    from psc_jit.widgets.summary import cache_text
    report = last_report()
    usage = DISK_CACHE.usage()
    print(json.dumps({{
        "loss": float(ip.user_ns["loss"]), "from_disk": report.loaded_from_disk,
        "stages": sorted(report.stage_seconds), "cache": cache_text(report),
        "first_compile": report.from_disk and report.from_disk.compile_seconds,
        "load": report.from_disk and report.from_disk.load_seconds,
        "load_stage": report.stage_seconds.get("load from disk"),
        "hits": usage.hits, "misses": usage.misses, "entries": usage.entries,
        "errors": usage.errors, "enabled": usage.enabled, "problem": usage.problem,
        "warnings": [str(w.message) for w in heard]}}))
""")


def session(cache_dir, cell=CELL) -> dict:
    """One fresh IPython process running `cell` once, with its cache in `cache_dir`."""
    env = dict(os.environ, PSC_JIT_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", SESSION.format(cell=cell)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_restarted_kernel_loads_the_program_instead_of_compiling(tmp_path):
    cache_dir = tmp_path / "cache"
    first = session(cache_dir)
    assert not first["from_disk"] and first["misses"] == 1 and first["entries"] == 1
    assert "compile" in first["stages"]
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700

    second = session(cache_dir)
    assert second["from_disk"] and second["hits"] == 1 and second["misses"] == 0
    assert "compile" not in second["stages"] and "load from disk" in second["stages"]
    assert second["first_compile"] > 0
    assert second["load_stage"] == second["load"] > 0      # one load time, wherever it is told
    assert "loaded from disk in" in second["cache"] and "in an earlier session" in \
        second["cache"]
    assert second["loss"] == first["loss"] and second["warnings"] == []


def test_a_truncated_entry_is_recompiled_with_a_warning(tmp_path):
    cache_dir = tmp_path / "cache"
    expected = session(cache_dir)["loss"]
    [entry] = [p for p in cache_dir.iterdir() if p.suffix == ".xla"]
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])

    again = session(cache_dir)
    assert not again["from_disk"] and again["errors"] == 1 and again["misses"] == 1
    assert any("unusable" in w and "truncated" in w for w in again["warnings"])
    assert again["loss"] == expected and again["entries"] == 1    # written afresh
    assert session(cache_dir)["from_disk"]


def test_a_directory_others_may_write_to_is_refused(tmp_path):
    cache_dir = tmp_path / "shared"
    cache_dir.mkdir()
    cache_dir.chmod(0o777)
    result = session(cache_dir)
    assert not result["enabled"] and "others may write to it" in result["problem"]
    assert any("disk cache is off" in w for w in result["warnings"])
    assert list(cache_dir.iterdir()) == []                     # nothing written there
    assert result["loss"] > 0                                  # the cell still ran compiled


@pytest.fixture
def shell(tmp_path):
    from psc_jit.core import DISK_CACHE, EXECUTABLE_CACHE, TRACE_CACHE
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.user_ns.update(np=np, x=np.linspace(0, 1, 77), w=np.ones(77))
    ip.run_line_magic("config", f"PscJit.cache_dir = {str(tmp_path / 'magic')!r}")
    TRACE_CACHE.clear()
    EXECUTABLE_CACHE.clear()
    yield ip
    ip.run_line_magic("config", "PscJit.cache_dir = ''")
    ip.run_line_magic("config", "PscJit.disk_cache = True")
    DISK_CACHE.configure(None, enabled=True)
    for name in ("x", "w", "y"):
        ip.user_ns.pop(name, None)


def test_config_points_the_cache_and_psc_cache_shows_and_clears_it(shell, tmp_path, capsys):
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "y = np.cos(x) * w + 3.0\n")
    assert len(list((tmp_path / "magic").glob("*.xla"))) == 1
    shell.run_line_magic("psc_cache", "")
    shown = capsys.readouterr().out
    assert f"on disk: {tmp_path / 'magic'}: 1 entries" in shown
    assert "1 XLA executables" in shown and "code size unknown" in shown   # XLA:CPU tells none

    shell.run_line_magic("psc_cache", "--clear")             # memory only: disk keeps it
    assert len(list((tmp_path / "magic").glob("*.xla"))) == 1
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "y = np.cos(x) * w + 3.0\n")
    from psc_jit import last_report
    assert last_report().loaded_from_disk

    shell.run_line_magic("psc_cache", "--clear-disk")
    assert "1 programs deleted" in capsys.readouterr().out
    assert list((tmp_path / "magic").glob("*.xla")) == []


def test_disk_cache_off_by_config(shell, tmp_path):
    shell.run_line_magic("config", "PscJit.disk_cache = False")
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", "y = np.sin(x) * w - 2.0\n")
    assert not (tmp_path / "magic").exists() or not list((tmp_path / "magic").iterdir())


def run_fresh(shell, cell):
    """Run `cell` with the in-memory caches empty: its program comes from disk or XLA."""
    from psc_jit.core import EXECUTABLE_CACHE, TRACE_CACHE
    TRACE_CACHE.clear()
    EXECUTABLE_CACHE.clear()
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", cell)


def stored_entries(directory) -> set:
    return set(directory.glob("*.xla"))


PLUS, TIMES = "y = x + 1.0\n", "y = x * 3.0\n"


def two_entries(shell, directory):
    """The entry files of the cells PLUS and TIMES, each stored by running it."""
    run_fresh(shell, PLUS)
    [plus] = stored_entries(directory)
    run_fresh(shell, TIMES)
    [times] = stored_entries(directory) - {plus}
    return plus, times


def test_swapped_entries_give_each_cell_its_own_result_with_a_warning(shell, tmp_path):
    plus, times = two_entries(shell, tmp_path / "magic")
    plus.rename(tmp_path / "swap")
    times.rename(plus)
    (tmp_path / "swap").rename(times)
    x = shell.user_ns["x"]
    for cell, expected in ((PLUS, x + 1.0), (TIMES, x * 3.0)):
        with pytest.warns(DiskCacheWarning, match="holds the program of another key"):
            run_fresh(shell, cell)
        np.testing.assert_array_equal(shell.user_ns["y"], expected)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a directory to another user needs root")
def test_the_cache_directory_swapped_for_a_link_mid_session_is_refused(shell, tmp_path):
    directory = tmp_path / "magic"
    plus, times = two_entries(shell, directory)
    planted = tmp_path / "planted"
    planted.mkdir()
    times.rename(planted / plus.name)                     # another cell's program, this name
    os.chown(planted, 54321, 54321)                       # someone else's directory
    directory.rename(tmp_path / "moved")
    directory.symlink_to(planted)
    with pytest.warns(DiskCacheWarning, match="disk cache is off.*belongs to another user"):
        run_fresh(shell, PLUS)
    np.testing.assert_array_equal(shell.user_ns["y"], shell.user_ns["x"] + 1.0)
    from psc_jit import last_report
    assert not last_report().loaded_from_disk
