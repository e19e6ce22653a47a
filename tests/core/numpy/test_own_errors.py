"""An error a NumPy call raises while it is traced is NumPy's own, type and text (issue 28,
item 5): traced code can catch it (`except ValueError as e: msg = str(e)`), and the message it
keeps must be the one plain NumPy gives. Each call below raises in NumPy; the traced function
catches the error and returns its type and text, which must be NumPy's."""
import contextlib

import numpy as np
import pytest
from psc_jit.core import TraceError, jit

pytestmark = pytest.mark.xla

A, B = np.ones((2, 3)), np.ones((4, 5))

FAILING_CALLS = {
    "matmul": lambda a, b: a @ b,
    "np.matmul": lambda a, b: np.matmul(a, b),
    "np.dot": lambda a, b: np.dot(a, b),
    "np.inner": lambda a, b: np.inner(a, b),
    "np.tensordot": lambda a, b: np.tensordot(a, b, axes=1),
    "np.einsum": lambda a, b: np.einsum("ij,jk->ik", a, b),
    "broadcasting": lambda a, b: a + b,
    "np.add": lambda a, b: np.add(a, b),
    "np.where": lambda a, b: np.where(a > 0, a, b),
    "np.broadcast_to": lambda a, b: np.broadcast_to(a, (3, 3)),
    "in-place broadcasting": lambda a, b: a.__iadd__(b),
    "reshape method": lambda a, b: a.reshape(4, 5),
    "np.reshape": lambda a, b: np.reshape(a, (7,)),
    "np.concatenate": lambda a, b: np.concatenate([a, b]),
    "np.concatenate axis": lambda a, b: np.concatenate([a, b], axis=1),
    "np.stack": lambda a, b: np.stack([a, b]),
    "np.vstack": lambda a, b: np.vstack([a, b]),
    "np.hstack": lambda a, b: np.hstack([a, b]),
    "index out of bounds": lambda a, b: a[5],
    "second index out of bounds": lambda a, b: a[0, 7],
    "negative index out of bounds": lambda a, b: a[-3],
    "too many indices": lambda a, b: a[0, 0, 0],
    "index array out of bounds": lambda a, b: a[np.array([0, 5])],
    "boolean index of the wrong length": lambda a, b: a[np.array([True, False, True])],
    "setitem out of bounds": lambda a, b: a.__setitem__(5, 1.0),
    "setitem of the wrong shape": lambda a, b: a.__setitem__(slice(None), b),
    "write to np.broadcast_to": lambda a, b: np.broadcast_to(a, (2, 2, 3)).__setitem__(0, 1),
    "axis out of bounds": lambda a, b: a.sum(axis=2),
    "negative axis out of bounds": lambda a, b: np.sum(a, axis=-3),
    "duplicate axis": lambda a, b: a.mean(axis=(0, 0)),
    "transpose axes": lambda a, b: a.transpose(1, 0, 2),
    "np.swapaxes": lambda a, b: np.swapaxes(a, 0, 3),
    "np.moveaxis": lambda a, b: np.moveaxis(a, 0, 3),
    "squeeze": lambda a, b: a.squeeze(0),
    "np.split": lambda a, b: np.split(a, 4, axis=1),
    "np.take": lambda a, b: np.take(a, 10),
    "np.expand_dims": lambda a, b: np.expand_dims(a, 5),
    "np.cumsum": lambda a, b: np.cumsum(a, axis=2),
    "np.sort": lambda a, b: np.sort(a, axis=2),
    "np.argmax": lambda a, b: np.argmax(a, axis=3),
    "np.diff": lambda a, b: np.diff(a, axis=4),
    "np.roll": lambda a, b: np.roll(a, 1, axis=3),
    "np.flip": lambda a, b: np.flip(a, axis=3),
    "np.tile": lambda a, b: np.tile(a, (-1,)),
    "np.pad": lambda a, b: np.pad(a, ((1, 1),) * 3),
    "np.interp": lambda a, b: np.interp(a, b[0], b[1][:3]),
    "np.linalg.inv": lambda a, b: np.linalg.inv(a),
    "np.linalg.solve": lambda a, b: np.linalg.solve(b, a),
    "np.cross": lambda a, b: np.cross(a, b),
    "item of many": lambda a, b: a.item(),
    "astype": lambda a, b: a.astype("no such type"),
    "add a string": lambda a, b: a + "s",
    "len of a scalar": lambda a, b: len(a.sum()),
    "float of an array": lambda a, b: float(a),
    "int of an array": lambda a, b: int(a),
    "truth of an array": lambda a, b: bool(a),
    "unpack too few": lambda a, b: (lambda p, q, r: p)(*a),
}


def catching(call):
    """A function returning the type and text of what call raises (or "no error")."""
    def caught(a, b):
        try:
            call(a, b)
        except Exception as err:   # noqa: BLE001 (the error is what is compared)
            return f"{type(err).__module__}.{type(err).__name__}: {err}"
        return "no error"
    return caught


@pytest.mark.parametrize("name", list(FAILING_CALLS))
def test_traced_code_catches_numpys_own_error(name):
    caught = catching(FAILING_CALLS[name])
    want = caught(A, B)
    assert want != "no error"
    assert jit(caught)(A, B) == want


def untraceable_caught(x):
    try:
        text = f"{x.sum():.2f}"     # the text of a traced value: psc_jit's limit
    except Exception:               # noqa: BLE001 (what a cell may write)
        text = "?"
    return x * len(text)


def test_psc_jits_own_errors_are_never_caught_by_the_traced_code():
    """The traced code's `except Exception` does not take psc_jit's error: jit raises it
    (a cell runs as plain Python), never computes what plain Python would not."""
    with pytest.raises(TraceError, match="the text of a traced value"):
        jit(untraceable_caught)(np.arange(3.0))


class Wrapped:
    """An operand that takes `array + self` itself (NumPy defers to it)."""
    __array_ufunc__ = None

    def __init__(self, value):
        self.value = value

    def __radd__(self, other):
        return Wrapped(other * 2 + self.value)


def adds_a_wrapped(x, y):
    return (x + Wrapped(y)).value


def test_an_operand_numpy_defers_to_is_still_asked():
    x, y = np.arange(3.0), np.ones(3)
    np.testing.assert_array_equal(jit(adds_a_wrapped)(x, y), adds_a_wrapped(x, y))


def untraceable_suppressed(x):
    text = "?"
    with contextlib.suppress(Exception):
        text = f"{x.sum():.2f}"
    return x * len(text)


def test_psc_jits_own_errors_are_never_suppressed_by_a_context_manager():
    with pytest.raises(TraceError, match="the text of a traced value"):
        jit(untraceable_suppressed)(np.arange(3.0))
