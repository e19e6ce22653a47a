"""Run-time checks of traced values: conditions only the run can decide (a traced index within
bounds, a non-empty selection), carried out before anything is written back.

A check is a `tracing.RuntimeCheck` in the trace; `check_outputs` makes the trace's checks two
graph outputs, and `verify_checks` raises the first failed one's error as NumPy would have.
"""
from __future__ import annotations

import numpy as np

from ..primitives import concatenate_p, convert_element_type_p, reshape_p
from ..tracing import DataDependentShapeError, Tracer, bind, current_trace, tracing
from .base import convert, dtype_of, ensure_tracer, result_type
from .reductions import np_all, np_max, np_min
from .ufuncs import SPECIAL_UFUNCS, call_ufunc, np_where

NEGATIVE_POWER = "Integers to negative integer powers are not allowed."


def require_int_convertible(value: Tracer, dtype: np.dtype) -> None:
    """A Python float written into an integer array: NumPy converts it with int(), which
    raises for NaN and infinity, then refuses an int outside dtype's range; the run checks
    it (see `tracing.RuntimeCheck`)."""
    trace, info = current_trace(), np.iinfo(dtype)
    whole = call_ufunc(np.trunc, value)
    zero = ensure_tracer(np.int64(0))
    trace.require(call_ufunc(np.logical_not, call_ufunc(np.isnan, value)), zero,
                  "cannot convert float NaN to integer", ValueError)
    trace.require(call_ufunc(np.logical_not, call_ufunc(np.isinf, value)), zero,
                  "cannot convert float infinity to integer", OverflowError)
    inside = call_ufunc(np.logical_and, call_ufunc(np.greater_equal, whole, float(info.min)),
                        call_ufunc(np.less_equal, whole, float(info.max)))
    trace.require(inside, convert(whole, np.dtype(np.int64)),
                  f"Python integer {{}} out of bounds for {dtype}", OverflowError)


def python_error(fn, *args) -> tuple[str, type]:
    """(message, type) of the error this Python raises for fn(*args), the message ready for
    a RuntimeCheck (braces escaped)."""
    try:
        fn(*args)
    except (ValueError, OverflowError) as err:
        return escaped(str(err)), type(err)
    raise AssertionError(f"{fn.__name__}{args} did not raise")


def escaped(text: str) -> str:
    """text as a RuntimeCheck's message, shown as it is (its braces are no placeholders)."""
    return text.replace("{", "{{").replace("}", "}}")


def require(ok: Tracer, message: str, error: type) -> None:
    """The run raises error(message) unless ok (a bool[]; see `tracing.RuntimeCheck`)."""
    current_trace().require(ok, ensure_tracer(np.int64(0)), message, error)


def python_int(x: Tracer) -> Tracer:
    """int(x) of a traced real 0-d value, as an int64 (kind left to the caller): toward zero,
    Python's errors for NaN and infinity raised by the run; a value past int64 (which a Python
    int would hold) makes the cell run as plain Python (DataDependentShapeError)."""
    trace, zero = current_trace(), ensure_tracer(np.int64(0))
    if x.dtype.kind == "f":
        for bad, value in ((np.isnan, float("nan")), (np.isinf, float("inf"))):
            trace.require(call_ufunc(np.logical_not, call_ufunc(bad, x)), zero,
                          *python_error(int, value))
        x = call_ufunc(np.trunc, x)
        inside = call_ufunc(np.logical_and, call_ufunc(np.greater_equal, x, -2.0 ** 63),
                            call_ufunc(np.less, x, 2.0 ** 63))
        trace.require(inside, zero, "int() of a value outside int64: psc_jit runs the cell as "
                      "plain Python", DataDependentShapeError)
    elif x.dtype == np.uint64:
        trace.require(call_ufunc(np.less, x, np.uint64(2 ** 63)), zero, "a uint64 past int64 "
                      "as a Python int: psc_jit runs the cell as plain Python",
                      DataDependentShapeError)
    return convert(x, np.dtype(np.int64))


def require_in_bounds(index: Tracer, n: int, axis: int) -> None:
    """NumPy raises IndexError for an index outside [-n, n); XLA would clamp it. Ask the run
    to check (see `tracing.RuntimeCheck`). An empty index array holds nothing to check."""
    if index.size == 0:
        return
    trace = current_trace()
    index = convert(index, np.int64)
    inside = call_ufunc(np.logical_and, call_ufunc(np.greater_equal, index, np.int64(-n)),
                        call_ufunc(np.less, index, np.int64(n)))
    ok = np_all(inside) if index.ndim else inside
    trace.require(ok, outside_value(index, inside, n),
                  f"index {{}} is out of bounds for axis {axis} with size {n}")


def outside_value(index: Tracer, inside: Tracer, n: int) -> Tracer:
    """An index outside its bounds, for NumPy's message: the largest from n up, else the
    least (below the bounds); index itself when 0-d."""
    if index.ndim == 0:
        return index
    outside = np_where(inside, np.int64(0), index)
    high, low = np_max(outside), np_min(outside)
    return np_where(call_ufunc(np.greater_equal, high, np.int64(n)), high, low)


def checked_power(x, y, _power=SPECIAL_UFUNCS[np.power]):
    """np.power, with NumPy's ValueError for an integer raised to a negative integer power
    (XLA computes a number instead): at once for a known exponent, else checked by the run
    before anything is written back."""
    if result_type(x, y).kind in "iu" and dtype_of(y).kind == "i":
        if isinstance(y, Tracer):
            if y.size:
                current_trace().require(np_all(call_ufunc(np.greater_equal, y, 0)),
                                        ensure_tracer(np.int64(0)), NEGATIVE_POWER, ValueError)
        elif np.any(np.asarray(y) < 0):
            raise ValueError(NEGATIVE_POWER)
    return _power(x, y)


SPECIAL_UFUNCS[np.power] = checked_power


def check_outputs(trace) -> list:
    """Two graph outputs for the trace's run-time checks: bool[k] (each holds) and int64[k]
    (the value each reports)."""
    with tracing(trace):
        oks = [bind(reshape_p, c.ok, new_shape=(1,)) for c in trace.checks]
        values = [bind(reshape_p, _int64(c.value), new_shape=(1,)) for c in trace.checks]
        if len(oks) > 1:
            oks = [bind(concatenate_p, *oks, dimension=0)]
            values = [bind(concatenate_p, *values, dimension=0)]
        return [oks[0].ir_var, values[0].ir_var]


def _int64(value):
    """A check's reported value as int64 (a branch index is int32), so they concatenate."""
    if value.aval.dtype == np.int64:
        return value
    return bind(convert_element_type_p, value, new_dtype=np.dtype(np.int64), weak_type=False)


def verify_checks(checks, ok: np.ndarray, values: np.ndarray) -> None:
    """Raise the first failed check's error, as NumPy would have raised it, shown raised at
    the user's line that the check guards."""
    __tracebackhide__ = True    # IPython shows the cell's line, not ours
    if b"\x00" not in np.asarray(ok).tobytes():   # every check held (a bool is one byte:
        return                                      # 0 or 1; 5x faster than ok.all())
    i = int(np.argmin(ok))
    message, error, source = checks[i]
    failed = error(message.format(int(values[i])))
    failed.psc_run_check = True       # raised before anything was written back
    raise_at(failed, source)


def raise_at(error: Exception, source) -> None:
    """Raise `error` from a frame at `source` (a file and line, a cell's too: its lines are in
    linecache), so that the traceback ends at the user's line as plain Python's would."""
    __tracebackhide__ = True    # IPython shows the cell's line, not ours
    if source is None or not source.file or source.line < 1:
        raise error
    code = compile("\n" * (source.line - 1) + "raise error", source.file, "exec")
    exec(code, {"error": error, "__name__": "__psc_jit_run__"})
