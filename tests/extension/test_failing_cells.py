"""A cell that fails ends exactly as the plain cell ends: the names its lines bound before the
error keep their new values, the names of later lines stay unbound, arrays updated in place
before the error are updated, writes to the notebook's objects made before it are made once,
and the error is Python's or NumPy's own, type and text. So it is whether the error comes
while tracing (the cell then runs as plain Python) or from a check of the compiled run (an
index out of bounds, an `assert` or a `raise` on data, an update of a read-only array), on
the first run and on a re-run that hits the cached program or decision."""
import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

FAILING = {
    "an index out of bounds": "a = x * 2\nb = x[k]\nc = b + 1",
    "an assert on data": "a = x.sum()\nassert (x < 0).all(), 'x has positive entries'\nb = a * 2",
    "a raise on data": "s = x.sum()\nif s > 1:\n    raise ValueError('sum too large')\nt = s",
    "an update before the error": "a = x.copy()\nx[0] = 100.0\nb = x[k]\nc = a + b",
    "a write before the error": "log.append(1)\na = x * 2\nb = x[k]",
    "an update of a read-only input": "a = w * 2\nw += 1\nb = a + 1",
    "shapes that do not match": "a = x * 2\nb = x @ np.ones(5)\nc = b",
    "a name not defined": "a = x * 2\nb = a + undefined_name\nc = b",
}

NAMES = ("a", "b", "c", "s", "t")


def inputs() -> dict:
    return {"np": np, "x": np.arange(4.0), "k": np.int64(10), "log": [],
            "w": np.broadcast_to(np.arange(3.0), (2, 3))}


def ending(namespace: dict, error) -> tuple:
    """The error (type, text) and what the names hold."""
    values = {name: repr(namespace[name]) if name in namespace else "unbound"
              for name in NAMES + ("x", "log", "w")}
    return error, values


def run(run_cell, namespace: dict) -> tuple:
    try:
        run_cell()
    except Exception as err:
        return ending(namespace, (type(err), str(err)))
    return ending(namespace, None)


@pytest.mark.parametrize("cell", FAILING)
def test_a_failing_cell_ends_as_the_plain_cell_ends(magic_shell, cell):
    source = FAILING[cell]
    magic_shell.user_ns.update(inputs())
    plain = inputs()
    for attempt in ("first run", "re-run"):
        for name in NAMES:
            magic_shell.user_ns.pop(name, None)
            plain.pop(name, None)
        got = run(lambda: magic_shell.run_cell_magic("psc_jit", "--quiet", source),
                  magic_shell.user_ns)
        want = run(lambda: exec(source, plain), plain)
        assert want[0] is not None
        assert got == want, attempt
        report = psc_jit.last_report()      # the lines before the error may have compiled
        assert not report.compiled or report.split
