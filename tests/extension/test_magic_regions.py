"""Cells with host steps (print, random draws, data-dependent selections, star imports, line
magics) run as compiled regions around them: each cell ends as the plain cell does (names,
types, dtypes, values bit for bit, printed text byte for byte, the random generators' states,
errors), on its first run and on a re-run that finds every region in the cache."""
import contextlib
import io

import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


def _state_of(value):
    if isinstance(value, np.random.Generator):
        return ("Generator", repr(value.bit_generator.state))
    if isinstance(value, np.random.RandomState):
        return ("RandomState", repr(value.get_state(legacy=False)))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (np.generic, int, float, complex, str, bool, type(None))):
        return (type(value).__name__, repr(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_state_of(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _state_of(v)) for k, v in value.items()))
    return (type(value).__name__,)


def _run(shell, cells, magic):
    """Run the cells in order; after each: (printed text, error, names -> state, global RNG)."""
    seen = []
    for cell in cells:
        source = f"%%psc_jit --quiet\n{cell}" if magic else cell
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            result = shell.run_cell(source)
        error = result.error_in_exec
        names = {n: _state_of(v) for n, v in shell.user_ns.items()
                 if not n.startswith("_") and n not in _BASE_NAMES}
        seen.append((_without_traceback(out.getvalue(), error),
                     (type(error).__name__, str(error)) if error is not None else None,
                     names, repr(np.random.get_state(legacy=False)),
                     repr(result.result) if not isinstance(result.result, np.ndarray)
                     else _state_of(result.result)))
    return seen


_BASE_NAMES = {"np", "In", "Out", "get_ipython", "exit", "quit", "open", "psc_jit"}


def _without_traceback(text, error):
    return text.split("\x1b[")[0] if error is not None else text


@pytest.fixture
def compare(magic_shell, monkeypatch):
    """compare(setup, *cells): run setup and the cells plain, then the same from the same
    start with %%psc_jit on each cell; assert each cell ended the same. `reports` collects
    the compiled runs' reports."""
    monkeypatch.setattr(magic_shell, "showtraceback", lambda *a, **k: print("<traceback>"))
    base = dict(magic_shell.user_ns)

    def compare(setup, *cells, reports=None):
        outcomes = []
        for magic in (False, True):
            magic_shell.user_ns.clear()
            magic_shell.user_ns.update(base)
            np.random.seed(12345)
            magic_shell.run_cell(setup)
            runs = []
            for cell in cells:
                runs.append(_run(magic_shell, [cell], magic)[0])
                if magic and reports is not None:
                    reports.append(psc_jit.last_report())
            outcomes.append(runs)
        plain, compiled = outcomes
        for i, (p, c) in enumerate(zip(plain, compiled, strict=True)):
            assert c[0] == p[0], f"cell {i}: printed text differs"
            assert c[1] == p[1], f"cell {i}: errors differ"
            assert c[2] == p[2], f"cell {i}: names differ"
            assert c[3] == p[3], f"cell {i}: the global random state differs"
            assert c[4] == p[4], f"cell {i}: the shown value differs"
        return plain
    return compare


@pytest.fixture
def full_digits():
    """Arrays print all 17 digits while the test runs."""
    np.set_printoptions(precision=17)
    yield
    np.set_printoptions(precision=8)


def test_a_print_between_statements_splits_the_cell_and_both_regions_compile(compare):
    reports = []
    cell = "a = x * 2.5\nprint('sum', a.sum(), a.dtype)\nb = a + 1\nb[:3]\n"
    compare("x = np.arange(6.0)", cell, cell, reports=reports)
    first, again = reports
    assert first.split and first.compiled
    assert [r.compiled for r in first.regions] == [True, True]
    assert first.split_summary() == ("2 compiled regions, 1 host step: line 3 "
                                     "`print('sum', a.sum(), a.dtype)`")
    assert all(r.cache_hit for r in again.regions) and again.cache_hit


def test_numpys_random_numbers_are_drawn_on_the_host_bit_for_bit(compare):
    reports = []
    cell = ("np.random.seed(0)\na = np.random.rand(3)\nb = a + np.random.normal(size=3)\n"
            "rng = np.random.default_rng(1)\nc = rng.standard_normal(4) * b.sum()\n"
            "rs = np.random.RandomState(2)\nd = rs.randn(2) + c[:2]\ne = d * 2\n")
    compare("", cell, cell, "f = np.random.rand(2)\n", reports=reports)
    assert reports[0].split and any(r.compiled for r in reports[0].regions)


def test_a_generators_draws_advance_its_state_as_plain_python_does(compare):
    compare("rng = np.random.default_rng(7)\nx = np.ones(3)",
            "y = x * 2\nz = rng.normal(size=3) + y\nw = z.sum()\n",
            "v = rng.integers(0, 10, 5)\n")


def test_a_data_dependent_selection_is_a_host_step_between_compiled_regions(compare):
    reports = []
    cell = "y = x * 2\npos = y[y > 0]\nm = pos.mean() + y.sum()\nu = np.unique(np.round(y))\n"
    compare("x = np.arange(-5.0, 6.0) / 2", cell, cell, reports=reports)
    first, again = reports
    assert first.split and sum(r.compiled for r in first.regions) >= 2
    lines = [step.line for step in first.host_steps]
    assert 3 in lines
    assert again.split and all(r.cache_hit for r in again.regions if r.compiled)


def test_a_loop_with_a_print_runs_in_python_with_its_body_compiled_once(compare):
    reports = []
    cell = ("acc = 0.0\nfor i in range(6):\n    acc = acc + x[i]\n    if i % 2 == 0:\n"
            "        print(i, acc)\nfin = acc * 3\n")
    compare("x = np.arange(10.0)", cell, cell, reports=reports)
    first, again = reports
    body = [r for r in first.regions if r.name.endswith("line 4")]
    assert body and body[0].compiled
    assert first.host_passes == {((), 1): 6}
    assert [r.compiled for r in first.regions] == [False, True, True]   # acc = 0.0: plain
    assert all(r.cache_hit for r in again.regions if r.compiled)


def test_a_timed_first_run_leaves_a_host_loops_name_as_the_cell_does(compare):
    """The first run of a split cell is timed, running its host steps again on copies of its
    inputs; a host `for` loop's binding of its target kept the namespace of the run that
    made it, so the timed run's passes rebound `i` in the notebook after the compiled loop
    had set it: `i` ended 1, not 2 (found by `make fuzz`)."""
    reports = []
    cell = "for i in range(2):\n    print(i, a.sum())\nfor i in range(3):\n    a = a * 0.5 + i\n"
    compare("a = np.array([False, False, True, False])", cell, reports=reports)
    assert reports[0].timings is not None


def test_star_imports_and_line_magics_are_host_steps_not_syntax_errors(compare):
    reports = []
    compare("x = np.arange(4.0)", "from numpy import *\ny = sqrt(x) * 2\n",
            "%env PSC_REGIONS_TEST=1\nz = x + 1\nw = z * 2\n", reports=reports)
    assert reports[0].split and reports[0].regions[0].compiled


def test_an_error_in_a_later_region_leaves_the_names_assigned_before_it(compare):
    compare("x = np.arange(3.0)\nk = np.ones((2, 2))",
            "a = x * 2\nprint(a)\nb = a @ k\nc = b + 1\n")


def test_an_error_in_a_host_step_leaves_the_names_assigned_before_it(compare):
    compare("x = np.arange(3.0)",
            "a = x * 2\nprint(a)\nr = np.random.rand(-1)\nc = a + 1\n")


def test_a_cell_that_is_all_host_steps_runs_as_plain_python_with_the_reason(compare):
    reports = []
    compare("", "print('hello')\nnp.random.seed(3)\n", reports=reports)
    report = reports[0]
    assert report.split and not report.compiled
    assert report.fallback_reason.startswith("line 2: 'print('hello')': print() is a side")
    assert "line 3: 'np.random.seed(3)'" in report.fallback_reason


def test_views_and_aliases_made_in_one_region_hold_across_a_host_step(compare):
    compare("a = np.arange(6.0)",
            "v = a[1:4]\nb = a\nprint(v.sum())\nv[0] = 100.0\nb[5] = -1.0\nt = a.sum()\n")


def test_the_last_expression_is_shown_when_it_is_a_host_step(compare):
    compare("x = np.arange(3.0)", "y = x + 1\nnp.random.seed(0)\nnp.random.rand(2) + y[:2]\n")


def test_a_cell_that_is_not_python_raises_as_plain_and_its_report_is_the_last(magic_shell):
    magic_shell.run_cell("%%psc_jit --quiet\ny = 1\n")
    before = psc_jit.last_report()
    result = magic_shell.run_cell("%%psc_jit --quiet\ny = (1 +\n")
    assert isinstance(result.error_in_exec or result.error_before_exec, SyntaxError)
    report = psc_jit.last_report()
    assert report is not before and not report.compiled
    assert "SyntaxError" in report.fallback_reason


# -- a loop's draws made before it, so that the loop rolls (frontend/predraw.py) --------------

def _rolled_with_draws(report) -> bool:
    return bool(report.predrawn) and "rolled, its draws made before it" in \
        report.split_summary()


@pytest.mark.parametrize("setup, draw", [
    ("np.random.seed(5)", "np.random.normal(0.0, 0.5, size=3)"),
    ("np.random.seed(5)", "np.random.rand(3)"),
    ("rs = np.random.RandomState(4)", "rs.randn(3)"),
    ("rs = np.random.RandomState(4)", "rs.randint(0, 100, size=3)"),
    ("rng = np.random.default_rng(3)", "rng.standard_normal(3)"),
    ("rng = np.random.default_rng(3)", "rng.standard_normal(3, dtype=np.float32)"),
    ("rng = np.random.default_rng(3)", "rng.integers(0, 10, size=3)"),
    ("rng = np.random.Generator(np.random.MT19937(2))", "rng.uniform(-1, 1, 3)"),
])
def test_a_loop_with_a_draw_rolls_with_the_numbers_drawn_before_it(compare, setup, draw):
    """The numbers, their dtype and the generator's state after the cell are plain Python's,
    on the first run and on a re-run that finds the rolled loop in the cache (the sums are
    exact in either order: the names compare bit for bit)."""
    reports = []
    cell = (f"x = np.zeros(3)\nfor t in range(40):\n    x = np.maximum(x, {draw})\n"
            "total = x.sum()\n")
    compare(setup + "\nx0 = 1", cell, cell, "after = np.random.rand(2)\n", reports=reports)
    first, again = reports[:2]
    assert _rolled_with_draws(first) and _rolled_with_draws(again)
    assert first.host_passes == {((), 1): 40}
    rolled = [r for r in again.regions if r.part[3:]]
    assert rolled and rolled[0].compiled and rolled[0].cache_hit


def _twice(compare, setup, cell) -> list:
    """The reports of the cell's first run and its re-run, each compared with plain Python."""
    reports: list = []
    compare(setup, cell, cell, reports=reports)
    return reports


def test_draws_of_several_generators_in_a_loop_with_a_range_of_steps(compare):
    cell = ("acc = np.zeros((2, 2))\nfor k in range(3, 30, 4):\n"
            "    a = rng.normal(size=(2, 2))\n    b = np.random.rand(2, 2) * k\n"
            "    acc = np.maximum(acc, a * b)\n")
    first, _ = _twice(compare, "rng = np.random.default_rng(9)\nnp.random.seed(1)", cell)
    assert _rolled_with_draws(first) and first.host_passes == {((), 1): 7}


@pytest.mark.parametrize("body", [
    "    x = x + rng.random(2) - rng.random(2)\n",           # one generator, twice a pass
    "    x = x + rng.integers(0, 5, size=2, dtype=np.uint8)\n",   # bits buffered per call
    "    x = x + rng.random()\n",                             # no size: a Python float
    "    x = x + rng.choice(4, size=2)\n",
    "    x = x + rng.random(2)\n    print(x.sum())\n",        # another host step
])
def test_a_loop_whose_draws_cannot_be_made_before_it_runs_pass_by_pass(compare, body):
    cell = "x = np.zeros(2)\nfor i in range(6):\n" + body + "s = x.sum()\n"
    first, _ = _twice(compare, "rng = np.random.default_rng(2)", cell)
    assert not first.predrawn and first.host_passes == {((), 1): 6}


def test_a_rolled_loop_that_raises_leaves_the_generator_where_plain_python_does(compare):
    """The loop raises on its fourth pass: the numbers drawn before it are put back, and the
    loop runs pass by pass, drawing and raising as plain Python does."""
    cell = ("x = np.zeros(2)\nfor i in range(6):\n    x = x + rng.normal(size=2)\n"
            "    y = np.ones(2) / (3 - i)\n    z = [1, 2, 3][i]\n")
    compare("rng = np.random.default_rng(8)", cell)


def test_a_rolled_loop_whose_compiled_run_raises_runs_pass_by_pass_from_the_same_state(compare):
    """The index is out of bounds on the fourth pass, found when the compiled loop runs."""
    cell = ("x = np.zeros(2)\nw = np.arange(3.0)\nfor i in range(6):\n"
            "    x = x + rng.normal(size=2)\n    x = x + w[i]\n")
    compare("rng = np.random.default_rng(8)", cell)


def test_an_inner_loop_rolls_with_its_draws_inside_an_outer_loop_run_by_python(compare):
    cell = ("paths = []\nfor j in range(3):\n    x = np.zeros(2)\n    for t in range(20):\n"
            "        x = np.maximum(x, rng.standard_normal(2))\n    paths.append(x)\n"
            "    print(j, x.round(6))\n")
    first, again = _twice(compare, "rng = np.random.default_rng(6)", cell)
    assert len(first.predrawn) == 1
    assert "rolled, its draws made before it" in again.split_summary()


# -- a split cell is timed as a whole ---------------------------------------------------------

def test_a_split_cell_is_timed_as_a_whole_and_its_timed_runs_change_nothing(compare):
    """The first run times the plain cell against the compiled regions with their host steps
    (which print, draw and select again on copies): the notebook ends as plain Python leaves
    it, printed once, every generator where plain Python leaves it, the array the cell
    updates in place updated once."""
    reports = []
    cell = ("x *= 2\nprint('total', x.sum())\ny = x[x > 4] + rng.normal(size=1)\n"
            "z = np.random.rand(2) + y.sum()\nw = z * 3\n")
    compare("x = np.arange(6.0)\nrng = np.random.default_rng(1)", cell, cell, reports=reports)
    first, again = reports
    assert first.split and first.timings is not None and again.timings is None
    assert first.timings.plain_seconds and first.timings.compiled_seconds
    assert "timed as a whole cell" in " ".join(first.notes)
    from psc_jit.widgets import report_text
    text = report_text(first)
    assert "speed-up" in text and "not timed" not in text


def test_a_split_cell_with_compare_is_timed_on_every_run(magic_shell):
    magic_shell.run_cell("x = np.arange(3.0)\nrng = np.random.default_rng(0)")
    timed = []
    for _ in range(2):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            magic_shell.run_cell("%%psc_jit --quiet --compare\na = x + rng.random(3)\n"
                                 "print(a.shape)\nb = a * 2\n")
        assert out.getvalue() == "(3,)\n"
        timed.append(psc_jit.last_report().timings is not None)
    assert timed == [True, True]
    expected = np.random.default_rng(0)
    expected.random(3), expected.random(3)
    assert magic_shell.user_ns["rng"].bit_generator.state == expected.bit_generator.state


@pytest.mark.parametrize("cell, why", [
    ("a = x + 1\nprint(a[0], file=log)\nb = a * 2\n", "`log`"),
    ("a = x + 1\nnote(a)\nb = a * 2\n", "`note`"),
])
def test_a_split_cell_whose_host_steps_act_outside_it_is_not_timed_and_says_why(compare,
                                                                                 cell, why):
    reports = []
    setup = ("import io\nlog = io.StringIO()\nx = np.arange(3.0)\nseen = []\n"
             "def note(a):\n    seen.append(float(a[0]))\n    print(a[0])\n")
    compare(setup, cell, reports=reports)
    assert reports[0].timings is None
    assert any(n.startswith("not timed") and why in n for n in reports[0].notes)


@pytest.mark.parametrize("update", ["x[bad] = fill", "x[1:3] = fill", "x[idx] = fill"])
def test_an_update_of_an_array_between_host_steps_is_a_compiled_region(compare, update):
    """It binds nothing new and calls nothing, but it writes into an array: a program does
    that (a list's item set so stays plain Python)."""
    reports = []
    cell = f"print(x.sum())\n{update}\nprint(x)\nL[0] = fill\n"
    compare("x = np.arange(5.0)\nbad = x > 2\nfill = -1.0\nidx = np.array([0, 4])\nL = [1, 2]",
            cell, reports=reports)
    compiled = [r.lines for r in reports[0].regions if r.compiled]
    assert compiled == [(3, 3)]


# -- a draw taken out of its statement: the draw is the host step (frontend/hoist.py) ---------

@pytest.mark.parametrize("setup, cell, compiled_line", [
    ("np.random.seed(0)", "a = np.random.rand(3)\nb = a + np.random.normal(size=3)\nprint(b)\n",
     3),
    ("rng = np.random.default_rng(5)",
     "two = rng.integers(1, 7, size=(100, 2)).sum(axis=1)\nprint(two[:5])\n", 2),
    ("rng = np.random.default_rng(5)\nX = np.arange(12.0).reshape(6, 2)",
     "centroids = X[rng.choice(len(X), size=2, replace=False)]\nprint(centroids)\n", 2),
    ("x = np.ones(3)\nnp.random.seed(3)", "x += np.random.rand(3)\nprint(x)\n", 2),
    ("rng = np.random.default_rng(5)",                  # the next statement's trace stops
     "two = rng.integers(1, 7, size=(100, 2)).sum(axis=1)\nfreq = np.bincount(two)\n"
     "print(freq)\n", 2),
    ("rs = np.random.RandomState(2)\nw = np.ones(2)",
     "v = w * 2 - rs.randn(2) * rs.rand(2)\nprint(v)\n", None),    # (`w * 2` comes first)
])
def test_a_draw_inside_a_statement_is_the_host_step_and_the_rest_compiles(compare, setup, cell,
                                                                          compiled_line):
    reports = []
    compare(setup, cell, cell, reports=reports)
    compiled = [r.lines[0] for r in reports[0].regions if r.compiled]
    assert compiled == ([compiled_line] if compiled_line else [])
    assert [r.lines[0] for r in reports[1].regions if r.compiled and r.cache_hit] == compiled


@pytest.mark.parametrize("cell", [
    "b = not_bound + np.random.normal(size=3)\n",           # plain raises before drawing
    "b = np.random.normal(size=3) + not_bound\n",           # ... after drawing
    "t = (np.random.rand(3) * 2).tolist()\nprint(t)\n",    # the rest runs as plain Python
    "for i in range(3):\n    y = y * 0.5 + rng.random()\n    print(y)\n",
])
def test_a_statement_whose_draw_is_taken_out_ends_as_plain_python_does(compare, cell):
    compare("np.random.seed(4)\nrng = np.random.default_rng(4)\ny = np.ones(2)", cell, cell)


def test_a_region_that_only_appends_to_a_list_the_cell_reads_elsewhere_compiles(compare):
    """Whether the region only writes to the list is told by its own statements: the
    cell's print after the loop reads it, between the region's runs."""
    reports = []
    cell = ("out = []\nfor k in range(4):\n    print(k)\n    out.append((x * k).max())\n"
            "print(len(out), out[-1] > 0)\n")
    compare("x = np.linspace(0, 1, 5)", cell, cell, reports=reports)
    compiled = [r.lines for r in reports[0].regions if r.compiled]
    assert compiled == [(5, 5), (6, 6)]     # (the last print's values too)


def test_a_loop_whose_draw_raises_on_its_first_pass_ends_as_plain_python_does(compare):
    """The draw's arguments are wrong: not drawn before the loop, which raises on its first
    pass after the statement before the draw ran, the generator untouched."""
    cell = "x = np.zeros(2)\nfor i in range(3):\n    x = x + 1\n    y = rng.integers(lo, 2, size=2)\n"
    compare("rng = np.random.default_rng(1)\nlo = 5", cell)


# -- what a print shows, computed in the region before it (frontend/printed.py) --------------

@pytest.mark.parametrize("setup, cell", [
    ("rolls = np.array([2, 7, 7, 3, 7, 12])", 'print("P(7) =", (rolls == 7).mean())\n'),
    ("x = np.linspace(0.0, 1.0, 7)",
     'y = x / 3\nprint(f"max {y.max():.3f} shifted {(y + 2).round(2)}", y.shape)\n'),
    ("x = np.arange(5)", 'print(x, x.shape, x * 2, sep=" | ")\n'),
    ("v = np.array([3.5, -1.0, 9.25, 0.5])", "print(np.sort(v)[::-1][:3], v.argmax())\n"),
    ("k = np.arange(10, dtype=np.int32)", "print((k * 3 - 1).sum(), np.sqrt(k / 7))\n"),
])
def test_the_values_a_print_shows_are_computed_in_the_region_before_it(compare, setup, cell):
    reports = []
    np.set_printoptions(precision=17)       # (every digit shows)
    try:
        compare(setup, cell, cell, reports=reports)
    finally:
        np.set_printoptions(precision=8)
    first, again = reports
    last = cell.count("\n") + 1             # (the print's line, after the magic's)
    assert [r.lines[1] for r in first.regions if r.compiled] == [last]
    assert again.regions[-1].cache_hit


@pytest.mark.parametrize("cell, why", [
    ("print(x.sum())\n", "a sum of floats"),
    ("print(x * 0.1 * 0.3)\n", "two constants in a row"),
    ("print(x * 0.1 + 1)\n", "multiply-add"),
    ("print(x / w / 3)\n", "a quotient divided again"),
    ("print(np.exp(x))\n", "np.exp"),
])
def test_a_print_whose_values_xla_would_round_otherwise_runs_as_plain_python(compare, cell, why,
                                                                              full_digits):
    reports = []
    compare("x = np.random.default_rng(3).random(40)\nw = x[::-1] + 0.5", cell,
            reports=reports)
    report, = reports
    assert not report.compiled
    assert why in report.fallback_reason and "NumPy's last digits" in report.fallback_reason


@pytest.mark.parametrize("cell", [
    'print(f"{x * 2:.2f} {x[9]}")\n',      # formatting x * 2 fails before x[9] is read
    "print(not_bound, x * 2)\n",            # the name fails before x * 2 is computed
    "print(x[1] * 2, x[9])\n",              # the second value fails: nothing is printed
])
def test_a_print_whose_arguments_fail_ends_as_plain_python_does(compare, cell):
    compare("x = np.arange(5.0)", cell)


def test_a_print_reading_the_size_of_a_mask_selection_splits_at_its_lines(compare):
    """The print reads `group.size` before a value it moves: the selection is a host step
    (line 3), the print runs as plain Python (line 4), both named in the report."""
    reports = []
    cell = ("for k in np.unique(labels):\n    group = values[labels == k]\n"
            "    print(k, group.size, round(group.max(), 3))\n")
    compare("labels = np.array([0, 1, 0, 2, 1])\nvalues = np.arange(5.0)", cell,
            reports=reports)
    steps = [s.line for s in reports[0].host_steps if hasattr(s, "construct")]
    assert steps == [3, 4]


@pytest.mark.parametrize("cell", [
    "t = repr(a.mean())\nu = a * 2\n",
    "t = repr(a * 2)\nu = a * 2\n",
    "t = repr(a[1]), repr(float(a.sum()))\nu = a * 2\n",
    "print(repr(a.mean()))\nx0 = 2\n",
    "print(repr(b.mean()), str(b[::2]))\n",
])
def test_the_text_of_a_traced_value_is_numpys_text(compare, cell):
    compare("a = np.arange(4.0)\nb = np.array([False, True, False, False])", cell, cell)


@pytest.mark.parametrize("cell", [
    "t = str([a.mean(), a[0]])\nu = a * 2\n",
    "t = '%s %r' % (a.sum(), (a[1],))\nu = a * 2\n",
])
def test_the_text_of_traced_values_in_a_container_is_numpys_text(compare, cell):
    compare("a = np.arange(4.0)", cell, cell)


@pytest.mark.parametrize("cell, compiled", [
    ("for i in range(3):\n    x = rng.normal(size=3)\n    print(i, x.round(2), x.sum())\n", True),
    ("print(f'{x.max():.3f} {x.mean():.3f} {x.min()}')\n", True),    # (max moves)
    ("print(x.sum(), x.round(2))\n", False),        # (the sum comes first: nothing moves)
])
def test_the_values_before_a_refused_one_still_move(compare, cell, compiled, full_digits):
    reports = []
    compare("rng = np.random.default_rng(7)\nx = rng.random(30)", cell, cell, reports=reports)
    assert reports[0].compiled is compiled and reports[1].compiled is compiled
    if compiled:
        assert "the print's value" in " ".join(s.explain() for s in reports[0].host_steps)


@pytest.mark.parametrize("cell", [
    "print((x * 2).__class__, x[1].__class__, x.sum().__class__.__name__)\n",
    "k = (x * 2).__class__\nm = x.T.__class__ is np.ndarray\n",
])
def test_the_class_of_a_traced_value_is_numpys(compare, cell):
    compare("x = np.arange(5.0)", cell, cell)


def test_a_value_a_print_reads_after_its_region_has_numpys_bits(compare):
    """The print computes nothing XLA rounds: it reads `Xs`, which a region before it made
    with XLA's sums, and a mean near zero shows their last bits (-8.33e-18 plain,
    -3.44e-17 compiled). The statements behind `Xs` run as plain Python instead."""
    reports = []
    cell = ("Xs = (X - X.mean(axis=0)) / X.std(axis=0)\n"
            "for j in range(X.shape[1]):\n"
            "    print(f'col {j}: mean {Xs[:, j].mean():+.2e} std {Xs[:, j].std():.3f}')\n")
    compare("rng = np.random.default_rng(42)\n"
            "X = rng.standard_normal((100, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -3.0]",
            cell, cell, reports=reports)
    steps = " ".join(s.explain() for s in reports[0].host_steps)
    assert "`Xs` is printed later" in steps and "a sum of floats" in steps


@pytest.mark.parametrize("cell, host_line, why", [
    ("y = x * 0.1 + 1\nk = (x > 0.5).sum()\nprint(y, k)\n", 2, "multiply-add"),
    ("m = x.sum()\nz = m * 2\nprint(z)\n", 2, "a sum of floats"),
    ("m = np.exp(x)\nz = np.sort(m)[::-1]\nif z[0] > 2:\n    print('big')\n", 2, "np.exp"),
])
def test_a_name_a_print_reads_is_computed_as_plain_python_when_xla_would_round_it(
        compare, cell, host_line, why, full_digits):
    reports = []
    compare("x = np.random.default_rng(3).random(40) * 2", cell, cell, reports=reports)
    step, = [s for s in reports[0].host_steps if s.line == host_line]
    assert "is printed later" in step.explain() and why in step.explain()
    assert reports[0].split and reports[1].split


@pytest.mark.parametrize("cell", [
    "counts = np.bincount(rolls, minlength=7)[1:]\nfor c in counts:\n    print(c)\n",
    "k = (x > 0.5).sum()\ntop = np.maximum(x, 0.5)[::-2]\nprint(k, top)\n",
])
def test_a_name_a_print_reads_stays_compiled_when_xla_gives_numpys_bits(compare, cell):
    reports = []
    compare("x = np.random.default_rng(3).random(40)\n"
            "rolls = np.random.default_rng(7).integers(1, 7, size=600)", cell, cell,
            reports=reports)
    assert reports[0].regions[0].compiled and reports[1].regions[0].cache_hit
