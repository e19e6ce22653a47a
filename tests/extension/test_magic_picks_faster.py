"""The magic picks the faster (issue 29, section 4), through a real IPython shell and real
compiles: after a timed run whose verdict is that plain Python was faster, later runs of the
cell with that signature run as plain Python, and the report says why and how to compile
anyway; `--force` compiles, `--compare` times and decides again, a changed signature
decides again. The verdict itself is made by `Verdict.of` from interleaved runs (tested in
tests/core/compile); here it is set, so that what follows from it does not hang on the
machine's load."""
import numpy as np
import psc_jit
import pytest
from psc_jit.core.compile.report import Timings, Verdict

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@pytest.fixture
def verdict(monkeypatch, brief_timing_shell):
    """Set the verdict every timed run reaches: verdict[0] is its kind (the pick on, as a
    session has it)."""
    brief_timing_shell.run_line_magic("config", "PscJit.pick_faster = True")
    kind = ["slower"]
    monkeypatch.setattr(Timings, "verdict", property(lambda self: Verdict(kind[0], 0.25)))
    return kind


def run(shell, cell: str, line: str = ""):
    result = shell.run_cell(f"%%psc_jit --quiet {line}\n{cell}")
    assert result.success, result.error_in_exec
    return psc_jit.last_report()


CELL = "y = x * 3.0 + 1.0  # picks the faster"


def test_after_plain_was_faster_later_runs_are_plain_and_say_why(brief_timing_shell, verdict):
    shell = brief_timing_shell
    shell.user_ns["x"] = np.arange(4.0)
    first = run(shell, CELL)
    assert first.compiled and first.timings is not None
    assert any("plain Python is faster here" in note for note in first.notes), first.notes
    shell.user_ns["x"] = np.arange(4.0) + 10
    second = run(shell, CELL)
    assert not second.compiled
    assert second.fallback_reason.startswith("plain Python is faster here: ")
    assert "`--force` compiles anyway" in second.fallback_reason
    np.testing.assert_array_equal(shell.user_ns["y"], (np.arange(4.0) + 10) * 3.0 + 1.0)
    assert shell.user_ns["y"].dtype == np.float64


def test_force_compiles_anyway(brief_timing_shell, verdict):
    shell = brief_timing_shell
    shell.user_ns["x"] = np.arange(5.0)
    run(shell, CELL)
    forced = run(shell, CELL, "--force")
    assert forced.compiled and forced.cache_hit
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(5.0) * 3.0 + 1.0)
    assert not run(shell, CELL).compiled            # (--force is for that run alone)


def test_a_changed_signature_decides_again(brief_timing_shell, verdict):
    shell = brief_timing_shell
    shell.user_ns["x"] = np.arange(6.0)
    run(shell, CELL)
    assert not run(shell, CELL).compiled
    verdict[0] = "faster"
    shell.user_ns["x"] = np.arange(6, dtype=np.float32)     # a new signature: timed anew
    new = run(shell, CELL)
    assert new.compiled and not new.cache_hit and new.timings is not None
    again = run(shell, CELL)
    assert again.compiled and again.cache_hit
    assert shell.user_ns["y"].dtype == np.float32
    shell.user_ns["x"] = np.arange(6.0)            # the first signature's choice stands
    assert not run(shell, CELL).compiled


def test_compare_times_and_decides_again(brief_timing_shell, verdict):
    shell = brief_timing_shell
    shell.user_ns["x"] = np.arange(7.0)
    run(shell, CELL)
    verdict[0] = "same"
    timed = run(shell, CELL, "--compare")
    assert timed.compiled and timed.timings is not None
    assert run(shell, CELL).compiled                # not slower any more: compiled again


def test_where_compiled_is_faster_or_the_same_later_runs_stay_compiled(brief_timing_shell,
                                                                      verdict):
    shell = brief_timing_shell
    for kind, size in (("faster", 8), ("same", 9)):
        verdict[0] = kind
        shell.user_ns["x"] = np.arange(float(size))
        run(shell, CELL)
        rerun = run(shell, CELL)
        assert rerun.compiled and rerun.cache_hit, (kind, rerun.fallback_reason)


def test_strict_runs_compiled_where_plain_was_faster(brief_timing_shell, verdict):
    shell = brief_timing_shell
    shell.user_ns["x"] = np.arange(10.0)
    run(shell, CELL)
    strict = run(shell, CELL, "--strict")
    assert strict.compiled and strict.cache_hit


def test_the_pick_can_be_turned_off_for_the_session(brief_timing_shell, verdict):
    shell = brief_timing_shell
    shell.user_ns["x"] = np.arange(11.0)
    run(shell, CELL)
    shell.run_line_magic("config", "PscJit.pick_faster = False")
    assert run(shell, CELL).compiled
    shell.run_line_magic("config", "PscJit.pick_faster = True")
    assert not run(shell, CELL).compiled
