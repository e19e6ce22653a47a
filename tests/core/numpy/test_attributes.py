"""Attribute setters on traced arrays: `a.shape = ...` reshapes the array object in place (NumPy's
AttributeError when that would need a copy), `z.real = ...`/`z.imag = ...` write into the
parts; setters that would reinterpret memory are refused with what to write instead. And
every trace-time error says where: its str() names the user's line."""
from __future__ import annotations

import numpy as np
import pytest
from numpy_compare import compare, raises_like
from psc_jit.core import ConcretizationError, TraceError, UnsupportedError, jit

pytestmark = pytest.mark.xla

X = np.arange(6.0)
XI = np.arange(6, dtype=np.int32)


def reshaped_result(x):
    y = x * 2
    y.shape = (2, 3)
    return y, y.sum(axis=0)


def every_name_sees_the_new_shape(x):
    y = np.zeros(6, dtype=x.dtype)
    z = y
    z.shape = (3, -1)
    y[1, 1] = x[0]
    return y, z


def earlier_views_keep_their_shape(x):
    y = x.copy()
    head = y[:3]
    y.shape = (3, 2)
    y[0, 0] = 100
    return head, y


def strided_view(x):
    y = (x + 1)[::2]
    y.shape = (3, 1)
    return y


def needs_a_copy(x):
    y = np.zeros((3, 2)).T
    y.shape = (6,)
    return y


@pytest.mark.parametrize("f", [reshaped_result, every_name_sees_the_new_shape,
                               earlier_views_keep_their_shape, strided_view])
@pytest.mark.parametrize("x", [X, XI], ids=["float", "int32"])
def test_setting_shape_like_numpy(f, x):
    compare(f, x)


def test_setting_a_shape_that_needs_a_copy_raises_numpys_attribute_error():
    raises_like(needs_a_copy, X)


def test_setting_the_shape_of_an_argument_is_refused_with_the_line():
    def f(x):
        x.shape = (2, 3)
        return x
    with pytest.raises(UnsupportedError) as info:
        jit(f)(X)
    assert "x.shape = (2, 3)" in str(info.value) and "reshape a local name" in str(info.value)


def complex_parts(x):
    z = x.astype(complex)
    z.real = x * 2
    z.imag = x[::-1]
    return z


def test_setting_real_and_imag_writes_the_parts():
    compare(complex_parts, X)


def test_setting_dtype_is_refused_with_what_to_write():
    def f(x):
        y = x.copy()
        y.dtype = np.int64
        return y
    with pytest.raises(UnsupportedError, match="setting .dtype.*use x.astype"):
        jit(f)(X)


# -- x.view(dtype): the same bytes as another type of the same size ---------------------------

def _views(x):
    other = {8: np.int64, 4: np.int32}[x.dtype.itemsize] if x.dtype.kind == "f" else \
        {8: np.float64, 4: np.float32}[x.dtype.itemsize]
    return x.view(other), (x * 3).view(other), x[1].view(other), x.view(), x.view(np.ndarray)


@pytest.mark.parametrize("x", [
    np.array([0.0, -0.0, 1.5, np.inf, -np.nan, 3e-300]), np.linspace(-1, 1, 5, dtype=np.float32),
    np.array([0, 1, -1, 2 ** 62, -(2 ** 63)]), np.arange(-3, 3, dtype=np.int32)],
    ids=["float64", "float32", "int64", "int32"])
def test_view_reads_the_same_bytes_as_numpy(x):
    compare(_views, x)


def writes_through_a_view(x):
    bits = x.view(np.int64)
    bits[0] = 4607182418800017408          # the bits of 1.0
    bits[1:] += 1                          # the next float up
    x[2] = -2.0                            # seen through the view too
    return bits, bits.view(np.uint64)


def test_writes_through_a_view_change_the_array_and_back():
    (bits, unsigned), (x,) = compare(writes_through_a_view, np.linspace(0.5, 3.0, 6))
    assert x[0] == 1.0 and x[2] == -2.0 and np.shares_memory(bits, x)
    assert bits.dtype == np.int64 and unsigned.dtype == np.uint64


@pytest.mark.parametrize("f, what", [
    (lambda x: x.view(np.int32), "another item size"),
    (lambda x: (x > 0).view(np.int8), "bool or complex bytes"),
    (lambda x: (x + 0j).view(np.float64), "another item size"),
    (lambda x: (x + 0j).astype(np.complex64).view(np.float64), "bool or complex bytes"),
    (lambda x: x.view(np.recarray), "a subclass of ndarray")])
def test_view_refused_where_it_changes_the_shape_or_reads_parts(f, what):
    with pytest.raises(UnsupportedError, match=what) as err:
        jit(f)(X)
    assert "line" in str(err.value)


# -- every trace-time error names the line ----------------------------------------------------

def branch_on_traced(x):
    if x.sum() > 0:
        return x
    return -x


def int_of_traced(x):
    return np.zeros(int(x[0]))


@pytest.mark.parametrize("f, line", [(branch_on_traced, "if x.sum() > 0:"),
                                     (int_of_traced, "return np.zeros(int(x[0]))")])
def test_str_of_a_trace_error_names_the_line(f, line):
    with pytest.raises(TraceError) as info:
        jit(f, roll=False)(X)
    text = str(info.value)
    assert text.startswith("line ") and f"'{line}'" in text


def test_a_concretization_error_says_what_to_write_for_its_cause():
    def convert(x):     # (a library function that converts its argument with np.asarray)
        return np.lib.stride_tricks.as_strided(x, shape=(2,))

    with pytest.raises(ConcretizationError) as info:
        jit(convert, roll=False)(X)
    assert "return np.lib.stride_tricks.as_strided(x, shape=(2,))" in str(info.value)
    assert "use NumPy functions on it instead of converting it" in str(info.value)


def test_np_asarray_under_another_name_traces_its_argument():
    def convert(x, f=np.asarray):
        return f(x).tolist(), np.asanyarray(x[1:3]) * 2
    compare(convert, X)


def format_traced(x):
    return f"mean={x.mean():.3f}"


def str_of_traced(x):
    return "mean " + str(x.mean())


@pytest.mark.parametrize("f, line", [(format_traced, 'return f"mean={x.mean():.3f}"'),
                                     (str_of_traced, 'return "mean " + str(x.mean())')])
def test_text_of_a_traced_value_names_its_line(f, line):
    with pytest.raises(ConcretizationError) as info:
        jit(f, roll=False)(X)
    assert f"'{line}'" in str(info.value)
    assert "format it after the cell, or return the value" in str(info.value)


def test_text_of_a_value_known_at_trace_time_is_numpys():
    def known(x):
        n = np.zeros(3) + 2.5
        return x * 2, f"{n.sum():.2f}|{n[0]}"
    assert jit(known, roll=False)(X)[1] == known(X)[1] == "7.50|2.5"
