"""Python's binding rules in a compiled cell (issue 28, item 5): every form that binds or
unbinds a name leaves the namespace as the plain cell does, on the first run and the re-run
(a cache hit): the names bound, their values, dtypes and Python types, the names deleted
(`del`, the target of `except ... as`), the names left alone (a loop of no passes), and the
objects two names share (`a = b = ...`). The oracle is the plain cell, run on a copy of the
same namespace."""
import copy
import dataclasses

import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Config:
    def __init__(self):
        self.total = 1.0
        self.scale = 2.0


POINT = Point(1.5, 2.5)      # (read only: the same object on every run, as a static input)


def setup():
    return dict(x=np.array([1.0, 2.0, 3.0]), a=np.ones((2, 2)), k=np.ones((3, 3)),
                e="an old e", j="an old j", v="an old v", cfg=Config(), d={"s": 1.0},
                opts={"scale": 2.0, "shift": 1.0}, L=[1, 2, 3])


# (cell, compiled): compiled says whether the magic must compile it; the namespace after it
# is the plain cell's either way.
CELLS = {
    "walrus": ("y = (t := x * 2) + 1\n", True),
    "walrus_in_comprehension": ("zs = [(t := v * 2) for v in x]\n", True),
    "walrus_in_comprehension_filter": ("big = [w for w in x if (last := w) > 1.5]\n", None),
    "walrus_in_generator": ("s = sum((q := w) * 2 for w in x)\n", True),
    "match_capture": ("match x.shape:\n    case (n,):\n        m = n * 2\n"
                      "    case (n, p):\n        m = n * p\n", True),
    "match_as_and_guard": ("match x.shape:\n    case (n,) as shp if n > 2:\n        m = n\n"
                           "    case _:\n        m = 0\n", True),
    "match_star": ("match [*x.shape, 7, 8]:\n    case [first, *rest]:\n        m = first\n",
                   True),
    "match_mapping_rest": ("match opts:\n    case {'scale': sc, **others}:\n"
                           "        y = x * sc\n", True),
    "match_class": ("match pt:\n    case Point(x=px, y=py):\n        y = x * px + py\n", True),
    "match_no_case_taken": ("match x.shape:\n    case (1, 2):\n        j = 1\n", True),
    "except_as_deletes_the_name": ("try:\n    c = a @ k\nexcept ValueError as e:\n"
                                   "    msg = str(e)\n", True),
    "except_as_not_taken_leaves_the_name": ("try:\n    c = a @ a\nexcept ValueError as e:\n"
                                            "    msg = str(e)\n", True),
    "except_as_in_a_loop": ("acc = 0.0\nfor i in range(3):\n    try:\n        acc = acc + x @ k\n"
                            "    except ValueError as e:\n        msg = str(e)\n"
                            "        acc = acc + i\n", True),
    "except_as_in_a_loop_not_taken": ("acc = 0.0\nfor i in range(3):\n    try:\n"
                                      "        acc = acc + x[i]\n    except ValueError as e:\n"
                                      "        acc = -1\n", True),
    "except_broadcasting": ("try:\n    c = x + a\nexcept ValueError as err:\n"
                            "    msg = str(err)\n", True),
    "except_reshape": ("try:\n    c = x.reshape(2, 2)\nexcept ValueError as err:\n"
                       "    msg = str(err)\n", True),
    "except_concatenate": ("try:\n    c = np.concatenate([a, k])\nexcept ValueError as err:\n"
                           "    msg = str(err)\n", True),
    "except_index": ("try:\n    c = x[5]\nexcept IndexError as err:\n    msg = str(err)\n",
                     True),
    "except_axis": ("try:\n    c = x.sum(axis=1)\nexcept np.exceptions.AxisError as err:\n"
                    "    msg = str(err)\n", True),
    "except_exception_around_untraceable": ("try:\n    n = int(x.sum())\n"
                                            "except Exception:\n    n = -1\ny = x * n\n",
                                            None),
    "except_exception_around_text": ("try:\n    s = f'{x.sum():.2f}'\n"
                                     "except Exception:\n    s = '?'\n", False),
    "suppress_around_text": ("import contextlib\ns = '?'\nwith contextlib.suppress(Exception):\n"
                             "    s = f'{x.sum():.2f}'\ny = x * 2\n", True),    # (split)
    "for_tuple_target": ("acc = 0.0\nfor i, w in enumerate(x):\n    acc = acc + w * i\n",
                         True),
    "for_nested_tuple_target": ("acc = 0.0\nfor i, (p, q) in enumerate(zip(x, x * 2)):\n"
                                "    acc = acc + p * q\n", True),
    "for_range_target_bound_after": ("acc = 0.0\nfor i in range(3):\n"
                                     "    acc = acc + x[i]\n", True),
    "for_of_no_passes": ("for j in range(0):\n    y = x * j\n", True),
    "for_of_no_passes_over_an_array": ("for j in x[:0]:\n    y = x * j\n", True),
    "for_of_no_passes_of_a_new_name": ("for jj in range(0):\n    y = x * jj\n", True),
    "except_an_error_of_the_run": ("try:\n    c = np.linalg.inv(a * 0)\n"
                                   "except np.linalg.LinAlgError as err:\n    msg = str(err)\n",
                                   False),
    "except_an_index_of_the_run": ("i = int(x[0]) + 4\ntry:\n    c = x[i]\n"
                                   "except IndexError as err:\n    msg = str(err)\n", None),
    "with_as": ("with np.errstate(divide='ignore') as st:\n    y = x / 2\n", True),
    "with_as_tuple": ("import contextlib\nwith contextlib.nullcontext((x, 2)) as (p, q):\n"
                      "    y = p * q\n", True),
    "import_as": ("import math as m2\nfrom numpy import linalg as la\n"
                  "y = la.norm(x) * m2.pi\n", True),
    "augmented_attribute": ("cfg.total += x.sum()\n", None),
    "augmented_item": ("d['s'] += x.sum()\n", None),
    "augmented_array_item": ("x[0] += 5.0\n", True),
    "augmented_name": ("s = 0.0\ns += x.sum()\ns *= 2\n", True),
    "star_unpacking": ("first, *rest = x\n*init, last = x\n", True),
    "nested_star_unpacking": ("p, (q, *r) = 1, (x, 2, 3)\n", True),
    "chained": ("y = z = x * 2\n", True),
    "chained_with_target_list": ("y = (p, q) = x[0], x[1]\n", True),
    "del_of_an_assigned_name": ("tmp = x * 2\ny = tmp + 1\ndel tmp\n", True),
    "del_of_an_input": ("y = x * 2\ndel x\n", True),
    "del_of_a_name_only_deleted": ("y = a * 2\ndel v\n", True),
    "global_at_top_level": ("global y\ny = x * 2\n", True),   # (split: `global` on the host)
    "nonlocal_is_a_syntax_error": ("def f():\n    nonlocal x\n    x = 1\n", False),
    "comprehension_variable_does_not_leak": ("zs = [v * 2 for v in x]\n", True),
}


def namespace_after_plain(shell, cell: str, values: dict):
    """The plain cell's namespace (and error) on a copy of the values."""
    namespace = dict(shell.user_ns)
    namespace.update(copy.deepcopy(values))
    try:
        exec(compile(cell, "<plain cell>", "exec"), namespace)
    except Exception as err:  # noqa: BLE001 (the plain cell's own error, compared)
        return namespace, err
    return namespace, None


def differences(want: dict, got: dict, names) -> list[str]:
    found = []
    for name in sorted(names):
        if (name in want) != (name in got):
            found.append(f"{name}: bound {name in want} in plain Python, {name in got} here")
        elif name in want:
            problem = same_value(want[name], got[name])
            if problem:
                found.append(f"{name}: {problem}")
    return found


def same_value(want, got) -> str:
    if type(want) is not type(got):
        return f"type {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, (list, tuple)):
        if len(want) != len(got):
            return f"length {len(got)} != {len(want)}"
        return next((p for p in map(same_value, want, got) if p), "")
    if isinstance(want, dict):
        if list(want) != list(got):
            return f"keys {list(got)} != {list(want)}"
        return next((p for p in map(same_value, want.values(), got.values()) if p), "")
    if isinstance(want, (np.ndarray, np.generic)):
        if want.dtype != got.dtype or np.shape(want) != np.shape(got):
            return f"{got.dtype}{np.shape(got)} != {want.dtype}{np.shape(want)}"
        return "" if np.array_equal(want, got, equal_nan=True) else f"{got} != {want}"
    if isinstance(want, Config):
        return same_value(vars(want), vars(got))
    if isinstance(want, Exception):
        return "" if str(want) == str(got) else f"{got!r} != {want!r}"
    if callable(want) or isinstance(want, type(np)):
        return ""
    return "" if want == got else f"{got!r} != {want!r}"


def names_of(*namespaces) -> set[str]:
    return {n for ns in namespaces for n in ns if not n.startswith("_")} - {
        "In", "Out", "exit", "quit", "get_ipython", "np", "Point", "Config", "contextlib", "pt"}


@pytest.fixture
def shell(magic_shell):
    magic_shell.user_ns.update(Point=Point, Config=Config, pt=POINT)
    return magic_shell


@pytest.mark.parametrize("name", list(CELLS))
def test_each_binding_form_leaves_the_namespace_as_plain_python(shell, name):
    cell, compiled = CELLS[name]
    for run in ("first run", "re-run"):
        values = setup()
        before = set(shell.user_ns)
        shell.user_ns.update(copy.deepcopy(values))
        want, want_error = namespace_after_plain(shell, cell, values)
        result = shell.run_cell(f"%%psc_jit --quiet --name bind_{name}\n{cell}")
        report = psc_jit.last_report()
        if compiled is not None:
            assert report.compiled is compiled, (run, report.fallback_reason)
        if run == "re-run" and compiled:
            assert report.cache_hit
        got_error = result.error_in_exec or result.error_before_exec
        assert type(got_error) is type(want_error), (run, got_error, want_error)
        if isinstance(want_error, SyntaxError):
            assert got_error.msg == want_error.msg
        elif want_error is not None:
            assert str(got_error) == str(want_error)
        problems = differences(want, shell.user_ns, names_of(want, shell.user_ns) | before)
        assert not problems, (run, problems)


def test_chained_assignment_binds_one_object(shell):
    shell.user_ns["x"] = np.arange(3.0)
    for _ in range(2):
        shell.run_cell("%%psc_jit --quiet --name chained_identity\ny = z = x * 2\nw = [y]")
        assert psc_jit.last_report().compiled
        assert shell.user_ns["y"] is shell.user_ns["z"] is shell.user_ns["w"][0]


def test_a_name_the_cell_deletes_is_not_an_input(shell):
    """`del v` of a name the cell does not read: v is bound when the cell starts (as at
    module level), without its value being an input of the program."""
    shell.user_ns.update(x=np.arange(3.0), v=np.ones((1000, 1000)))
    shell.run_cell("%%psc_jit --quiet --name del_only\ny = x * 2\ndel v")
    report = psc_jit.last_report()
    assert report.compiled and "v" not in shell.user_ns
    assert "1000" not in report.signature


@pytest.mark.parametrize("loop", ["for row in A:\n    acc = acc + row",
                                  "for i, row in enumerate(A):\n    acc = acc + row * i",
                                  "for row, other in zip(A, A * 2):\n    acc = acc + other"])
def test_a_loop_over_rows_leaves_its_target_a_view_of_the_last_row(shell, loop):
    shell.user_ns["A"] = A = np.arange(12.0).reshape(3, 4)
    for _ in range(2):
        shell.run_cell(f"%%psc_jit --quiet --name rows_target\nacc = 0.0\n{loop}")
        assert psc_jit.last_report().compiled
        row = shell.user_ns["row"]
        np.testing.assert_array_equal(row, A[-1])
        assert np.shares_memory(row, A)
