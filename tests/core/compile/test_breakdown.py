"""Where the time of a compiled call goes: Python dispatch, input transfer, XLA execution and
output handling, measured on a real call; the parts add up to the call, copied inputs are
named with their reason, and a slower call says which part dominates and what would help."""
import numpy as np
import psc_jit
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.core import CallBreakdown, jit
from psc_jit.widgets.summary import report_text
from psc_jit.widgets.timing import timing_html

pytestmark = pytest.mark.xla


def at_offset(n: int, offset: int) -> np.ndarray:
    """n float64 zeros whose data starts `offset` bytes after a 64-byte boundary."""
    buffer = np.zeros(n + 16)
    shift = (-buffer.ctypes.data % 64 + offset) // 8
    return buffer[shift:shift + n]


def affine(x):
    return x * 2.0 + 1.0


def test_the_parts_add_up_to_the_measured_call():
    f = jit(affine)
    x = np.ones(1000)
    f(x)
    result, breakdown = f.time_call(x)
    np.testing.assert_array_equal(result, affine(x))
    assert breakdown.total == pytest.approx(breakdown.measured, rel=1e-9, abs=1e-12)
    assert all(seconds >= 0 for _, seconds in breakdown.parts)
    assert [name for name, _ in breakdown.parts] == list(CallBreakdown.PART_NAMES)


def test_a_misaligned_input_is_named_with_the_bytes_copied_until_it_is_read_in_place():
    f = jit(affine)
    x = at_offset(1 << 20, 40)
    f(x)
    assert f.time_call(x[::-1])[1].copies == ("x is not contiguous: 8 MiB copied",)
    _, breakdown = f.time_call(at_offset(1 << 20, 24))       # a first call at this offset
    assert breakdown.copies == ("x is not 64-byte aligned: 8 MiB copied",)
    _, breakdown = f.time_call(x)     # the second at 40: a variant reads it in place
    assert breakdown.copies == ()
    assert f.time_call(at_offset(1 << 20, 0))[1].copies == ()


def test_a_global_array_read_by_the_function_is_named_as_the_user_reads_it(tmp_path):
    import importlib.util
    path = tmp_path / "breakdown_helper.py"
    path.write_text("W = None\ndef run(x):\n    return x + W\n")
    spec = importlib.util.spec_from_file_location("breakdown_helper", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.W = at_offset(4096, 32)
    f = jit(module.run)
    x = at_offset(4096, 0)
    f(x)
    _, breakdown = f.time_call(x)
    assert breakdown.copies == ("W (read by run) is not 64-byte aligned: 32 KiB copied",)


def test_advice_names_the_dominant_part():
    slow_dispatch = CallBreakdown(9e-5, 1e-6, 5e-6, 4e-6, 1e-4)
    assert slow_dispatch.advice(plain_seconds=5e-6).startswith(
        "Python dispatch takes 90 µs of the 100 µs call: the cell does too little work")
    copying = CallBreakdown(1e-5, 9e-3, 1e-3, 1e-4, 1.011e-2,
                            ("x is not 64-byte aligned: 8 MiB copied",))
    assert "input transfer takes 9 ms" in copying.advice(plain_seconds=1e-3)
    assert "x is not 64-byte aligned: 8 MiB copied; make such inputs once with " \
        "psc_jit.aligned(x)" in copying.advice(plain_seconds=1e-3)
    faster = _timings_with(copying, plain=1.0)
    assert faster.verdict.kind == "faster" and faster.why_slower() is None


def _timings_with(breakdown, plain: float, runs: int = 5):
    from psc_jit.core import Timings
    return Timings((plain,) * runs, (breakdown.measured,) * runs, breakdown.measured, 0.1,
                   0.0, breakdown=breakdown)


@pytest.mark.ipython
def test_the_magic_reports_the_breakdown_and_why_it_is_slower():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(np=np, tiny=np.ones(3))
    shell.run_cell_magic("psc_jit", "--quiet --compare --name tiny-breakdown",
                         "small = tiny + 1.0\n")
    report = psc_jit.last_report()
    breakdown = report.breakdown
    assert breakdown is not None and breakdown is report.timings.breakdown
    assert breakdown.total == pytest.approx(breakdown.measured, rel=1e-9, abs=1e-12)
    html = timing_html(report)
    for name in CallBreakdown.PART_NAMES:
        assert name in html
    if report.timings.verdict.kind == "slower":        # the median decides, not one call
        assert "why slower: " in report_text(report)
        assert "slower than plain Python" in report_text(report)
    for name in ("tiny", "small"):
        shell.user_ns.pop(name)


def test_a_tiny_call_is_told_that_its_work_is_below_a_compiled_calls_fixed_cost():
    tiny = CallBreakdown(2e-6, 3e-6, 3e-6, 1e-6, 9e-6)
    advice = tiny.advice(plain_seconds=1e-6)
    assert advice.startswith("input transfer takes 3 µs of the 9 µs call: the plain cell "
                             "takes only 1 µs, less than the fixed cost of any compiled call")
    assert "keep tiny ones plain" in advice


def test_a_transfer_without_copies_does_not_blame_copies():
    many_inputs = CallBreakdown(1e-5, 2e-4, 5e-5, 1e-5, 2.7e-4)
    advice = many_inputs.advice(plain_seconds=1e-4)
    assert advice.startswith("input transfer takes 200 µs of the 270 µs call: no input was "
                             "copied")
    assert "aligned" not in advice


def test_psc_jit_aligned_gives_an_input_that_goes_in_without_a_copy():
    f = jit(affine)
    x = at_offset(1 << 20, 16)
    x[:] = np.arange(1 << 20)
    ready = psc_jit.aligned(x)
    assert ready.ctypes.data % 64 == 0 and ready.flags.c_contiguous and ready.flags.writeable
    assert ready.dtype == x.dtype and ready.shape == x.shape
    np.testing.assert_array_equal(ready, x)
    assert not np.shares_memory(ready, x)
    f(ready)
    result, breakdown = f.time_call(ready)
    assert breakdown.copies == ()
    np.testing.assert_array_equal(result, affine(x))
