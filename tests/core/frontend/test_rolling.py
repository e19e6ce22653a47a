"""Loop rolling: Python loops and branches in a cell become one XLA loop or conditional, with
the same results (values, dtypes, Python vs NumPy types) as the plain cell, and the same graph
size whatever the iteration count. What cannot be converted is unrolled when short, and
otherwise refused with the line, the reason and what to write instead."""
from __future__ import annotations

import ast
import copy

import numpy as np
import pytest
from psc_jit.core import Jitted, UnsupportedError, budget, check_graph
from psc_jit.core.control import selects
from psc_jit.core.frontend import cell
from psc_jit.core.frontend import runtime as rolling
from psc_jit.core.frontend.rewrite import roll_loops
from psc_jit.core.frontend.unrolled import unroll_notes

pytestmark = pytest.mark.xla


# -- running a cell plain and compiled --------------------------------------------------------

def compile_cell(source: str, inputs: dict, transform=roll_loops):
    analysis = cell.analyze_cell(source)
    names = [n for n in analysis.inputs if n in inputs]
    fn = cell.make_cell_function(analysis, names, {"np": np}, transform=transform)
    return analysis, names, Jitted(fn)


def run_cell(source: str, inputs: dict):
    """Run the cell plain and compiled on copies of the inputs, check that every name it
    assigns (and every input it updates in place) agrees; return the traced graph."""
    plain_inputs = copy.deepcopy(inputs)
    plain = {"np": np, **plain_inputs}
    exec(compile(source, "<plain cell>", "exec"), plain)
    analysis, names, jitted = compile_cell(source, inputs)
    args = copy.deepcopy(inputs)
    graph = jitted.trace(**{n: args[n] for n in names}).graph
    check_graph(graph)
    outs, _ = jitted(**{n: args[n] for n in names})
    for name in analysis.outputs:
        assert (name in outs) == (name in plain), f"{name} bound in one run only"
        if name in plain:
            assert_close(outs[name], plain[name], name)
    for name in names:
        if isinstance(inputs[name], np.ndarray):
            assert_close(args[name], plain_inputs[name], f"input {name}")
    return graph


def assert_close(got, want, where):
    assert type(got) is type(want), f"{where}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, f"{where}: {got.dtype} != {want.dtype}"
        assert np.shape(got) == np.shape(want), where
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True), where
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_close(g, w, f"{where}[{k}]")
    elif isinstance(want, (int, float, complex)):
        assert np.isclose(got, want, rtol=1e-12, atol=1e-12), f"{where}: {got} != {want}"
    else:
        assert got == want, where


def top_level(graph, name: str) -> int:
    return sum(e.prim.name == name for e in graph.eqns)


def everywhere(graph, name: str) -> int:
    return sum(e.prim.name == name for e in graph.all_eqns())


def eqn_count(graph) -> int:
    return len(list(graph.all_eqns()))


rng = np.random.default_rng(0)


# -- the patterns -----------------------------------------------------------------------------

HEAT = """
for t in range(steps):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (
        u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
total_heat = u.sum()
"""


def heat_inputs(steps):
    u = np.zeros((16, 16))
    u[4:8, 4:8] = 1.0
    return {"u": u, "steps": steps, "alpha": 0.1}


def test_in_place_slice_update_is_carried_by_reference():
    graph = run_cell(HEAT, heat_inputs(30))
    assert top_level(graph, "while_loop") == 1
    assert everywhere(graph, "while_loop") == 1


THOMAS = """
n = d.shape[0]
cp = np.empty(n)
dp = np.empty(n)
cp[0] = c[0] / b[0]
dp[0] = d[0] / b[0]
for i in range(1, n):
    m = b[i] - a[i] * cp[i - 1]
    cp[i] = c[i] / m
    dp[i] = (d[i] - a[i] * dp[i - 1]) / m
x = np.zeros(n)
x[n - 1] = dp[n - 1]
for i in range(n - 2, -1, -1):
    x[i] = dp[i] - cp[i] * x[i + 1]
"""


@pytest.mark.usefixtures("xla_loops")     # of XLA's own loop
def test_a_recurrence_updates_its_arrays_in_place_without_a_copy_per_iteration():
    """Each iteration reads an element the one before wrote (cp[i - 1]) and writes two
    arrays: XLA's program copies none of the 3000-element arrays inside its loops (it copied
    two per iteration, 3.3 s at 100,000 elements against NumPy's 75 ms)."""
    inputs = {k: rng.random(3000) + (4.0 if k == "b" else 0.0) for k in "abcd"}
    run_cell(THOMAS, inputs)
    _, names, jitted = compile_cell(THOMAS, inputs)
    jitted(**{n: inputs[n] for n in names})
    text = jitted.last_call.compiled.as_text()
    copies = [line for line in text.splitlines() if "f64[3000]{0} copy(" in line]
    assert copies == [], copies


def test_graph_size_does_not_grow_with_the_iteration_count():
    sizes = {n: eqn_count(run_cell(HEAT, heat_inputs(n))) for n in (2, 10, 500)}
    assert len(set(sizes.values())) == 1, sizes


def test_the_loop_variable_holds_its_last_value():
    run_cell(HEAT + "last = t\n", heat_inputs(7))


LOGISTIC = """
for i in range(iters):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    grad = X.T @ (p - y) / X.shape[0]
    w = w - lr * grad
accuracy = ((X @ w > 0) == (y > 0.5)).mean()
"""


def test_rebinding_state_with_names_assigned_before_read():
    X = rng.standard_normal((50, 4))
    y = (X @ np.ones(4) > 0).astype(np.float64)
    graph = run_cell(LOGISTIC, {"X": X, "y": y, "w": np.zeros(4), "lr": 0.1, "iters": 20})
    assert top_level(graph, "while_loop") == 1


LOOP_SUM = """
acc = 0.0
for i in range(n):
    acc = acc + x[i] * x[i]
norm = np.sqrt(acc)
"""


def test_the_loop_index_indexes_dynamically_and_a_python_float_settles_to_float64():
    graph = run_cell(LOOP_SUM, {"x": rng.random(100), "n": 100})
    assert top_level(graph, "while_loop") == 1
    body = next(e for e in graph.eqns if e.prim.name == "while_loop").params["body_graph"]
    assert any(e.prim.name == "dynamic_slice" for e in body.eqns)
    assert eqn_count(graph) == eqn_count(run_cell(LOOP_SUM, {"x": rng.random(7), "n": 7}))


def test_the_index_out_of_bounds_raises_as_numpy_does():
    _, names, jitted = compile_cell(LOOP_SUM, {"x": np.ones(5), "n": 6})
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        jitted(x=np.ones(5), n=6)


def test_mandelbrot_masks_and_complex_state():
    re, im = np.linspace(-2, 0.6, 12), np.linspace(-1.2, 1.2, 10)
    source = """
z = np.zeros_like(c)
counts = np.zeros(c.shape, dtype=np.int32)
for k in range(iters):
    z = np.where(np.abs(z) <= 2.0, z * z + c, z)
    counts = counts + (np.abs(z) <= 2.0)
"""
    graph = run_cell(source, {"c": re[None, :] + 1j * im[:, None], "iters": 20})
    assert top_level(graph, "while_loop") == 1


def test_nested_loops_give_one_loop_inside_another():
    source = """
acc = np.zeros(3)
for i in range(n):
    for j in range(m):
        acc = acc + x[i] * y[j]
    a[i] = a[i] * 2 + acc.sum()
"""
    inputs = {"x": rng.random((6, 3)), "y": rng.random(4), "a": rng.random(6), "n": 6, "m": 4}
    graph = run_cell(source, inputs)
    assert top_level(graph, "while_loop") == 1
    assert everywhere(graph, "while_loop") == 2


def test_a_triangular_inner_loop_has_traced_bounds():
    source = """
s = 0.0
for i in range(n):
    for j in range(i):
        s = s + x[i] * x[j]
"""
    graph = run_cell(source, {"x": rng.random(9), "n": 9})
    assert everywhere(graph, "while_loop") == 2


def test_while_with_a_traced_condition():
    source = """
guess = a / 2
k = 0
while np.abs(guess * guess - a) > 1e-10:
    guess = 0.5 * (guess + a / guess)
    k = k + 1
"""
    graph = run_cell(source, {"a": np.float64(7.0)})
    assert top_level(graph, "while_loop") == 1


def test_while_with_a_static_condition_runs_as_python():
    source = """
k = 0
while k < 3:
    x = x * 2
    k += 1
"""
    graph = run_cell(source, {"x": rng.random(3)})
    assert top_level(graph, "while_loop") == 0


def test_if_else_assigning_different_names_becomes_a_select():
    source = """
y = np.zeros_like(x)
z = np.float64(0.0)
if x.sum() > 0:
    y = x * 2.0
else:
    z = x.max()
"""
    for sign in (1, -1):
        graph = run_cell(source, {"x": sign * np.abs(rng.random(5))})
        assert top_level(graph, "select") >= 1 and everywhere(graph, "cond") == 0


def test_if_else_becomes_a_cond_when_branches_are_not_small(monkeypatch):
    monkeypatch.setattr(selects, "SELECT_MAX_EQNS", 0)
    source = """
if x.sum() > 0:
    y = x * 2.0
    x[0] = 5.0
else:
    y = -x
"""
    for sign in (1, -1):
        graph = run_cell(source, {"x": sign * np.abs(rng.random(5))})
        assert top_level(graph, "cond") == 1


def test_if_with_and_or_not_on_traced_values():
    source = """
if x[0] > 0 and not x[1] > 0 or x[2] > 5:
    y = x + 1
else:
    y = x - 1
"""
    for x in ([1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 9.0]):
        run_cell(source, {"x": np.array(x)})


def test_if_inside_a_loop_and_continue():
    source = """
acc = np.float64(0.0)
for i in range(n):
    if x[i] < 0.5:
        continue
    acc = acc + x[i]
"""
    graph = run_cell(source, {"x": rng.random(80), "n": 80})
    assert top_level(graph, "while_loop") == 1


def test_a_python_float_or_numpy_float64_by_the_branch_taken_is_refused():
    """`acc = 0.0` and `acc = acc + x[i]` only where x[i] >= 0.5: plain Python ends with a
    Python float if no element passed, a NumPy float64 otherwise (a different value to the
    user: `acc.sum()` and `1 / acc` at zero behave differently), so the loop is not rolled and the
    reason names the fix."""
    source = "acc = 0.0\nfor i in range(n):\n    if x[i] < 0.5:\n        continue\n" \
             "    acc = acc + x[i]\n"
    with pytest.raises(UnsupportedError, match="`acc` is a NumPy float64 in one branch and a "
                       r"Python float in the other.*np.float64\(\.\.\.\)"):
        run_cell(source, {"x": rng.random(80), "n": 80})


def test_a_name_assigned_in_one_branch_only_needs_a_value_before():
    _, names, jitted = compile_cell("if x.sum() > 0:\n    y = x * 2\n", {"x": np.ones(3)})
    with pytest.raises(UnsupportedError) as info:
        jitted(x=np.ones(3))
    text = info.value.explain()
    assert "line 2" in text and "`y` is assigned in one branch only" in text
    assert "give `y` a value before the `if`" in text


def test_first_iteration_is_peeled_when_a_value_only_settles_after_it():
    source = """
best = None
for i in range(n):
    best = x[i] if best is None else np.maximum(best, x[i])
"""
    graph = run_cell(source, {"x": rng.random((20, 3)), "n": 20})
    assert top_level(graph, "while_loop") == 1


def test_a_static_counter_becomes_traced():
    source = """
j = 0
acc = 0.0
for i in range(n):
    acc = acc + x[j]
    j = j + 2
"""
    graph = run_cell(source, {"x": rng.random(40), "n": 20})
    assert top_level(graph, "while_loop") == 1


def test_swapped_buffers_and_a_copied_input():
    source = """
a = u.copy()
b = np.zeros_like(u)
for t in range(steps):
    b[1:-1] = 0.5 * (a[:-2] + a[2:])
    a, b = b, a
"""
    graph = run_cell(source, {"u": rng.random(10), "steps": 9})
    assert top_level(graph, "while_loop") == 1


def test_nothing_traced_keeps_python_semantics():
    source = """
squares = []
total = 0
for i in range(5):
    if i % 2:
        continue
    squares.append(i * i)
    total += i
k = 10
while k > 3:
    k -= 2
y = x * total
"""
    run_cell(source, {"x": rng.random(3)})


def test_a_short_loop_that_cannot_roll_is_unrolled():
    source = """
parts = []
for i in range(n):
    parts.append(x[i] * 2)
y = np.stack(parts)
"""
    graph = run_cell(source, {"x": rng.random((5, 2)), "n": 5})
    assert top_level(graph, "while_loop") == 0


LIST_APPEND = """
out = []
for i in range(n):
    out.append(x[i] * 2)
"""


def test_a_loop_that_cannot_roll_is_unrolled_within_the_budget():
    run_cell(LIST_APPEND, {"x": np.ones(100), "n": 100})


def test_a_long_loop_that_cannot_roll_is_explained():
    _, _, jitted = compile_cell(LIST_APPEND, {"x": np.ones(100), "n": 100})
    with budget.budget_scope(max_equations=200), pytest.raises(UnsupportedError) as info:
        jitted(x=np.ones(100), n=100)
    text = str(info.value)
    assert text.startswith("line 4: 'for i in range(n):'")
    assert "changes `out`, a Python list" in text and "preallocate an array" in text
    assert "its 100 iterations would make about 300 equations, over psc_jit's budget of 200" \
        in text


def test_a_shape_changing_loop_is_explained():
    source = """
s = x[:1]
for i in range(n):
    s = np.concatenate([s, s[:1] * x[i]])
"""
    _, _, jitted = compile_cell(source, {"x": np.ones(200), "n": 100})
    with budget.budget_scope(max_equations=100), pytest.raises(
            UnsupportedError, match="`s` changes shape from f64\\[2\\] to f64\\[3\\]"):
        jitted(x=np.ones(200), n=100)


BREAK_CELLS = {
    "first_negative": """
found = -1
for i in range(len(x)):
    if x[i] < 0:
        found = i
        break
""",
    "conjugate_gradients": """
u = np.zeros_like(b)
r = b - S @ u
p = r.copy()
rs = r @ r
for it in range(n):
    Sp = S @ p
    alpha = rs / (p @ Sp)
    u += alpha * p
    r -= alpha * Sp
    rs_new = r @ r
    if np.sqrt(rs_new) < 1e-10:
        break
    p = r + (rs_new / rs) * p
    rs = rs_new
""",
    "newton_with_else": """
z = 1.0
converged = False
for k in range(n):
    step = (z * z - c) / (2 * z)
    z = z - step
    if abs(step) < 1e-12:
        converged = True
        break
    converged = False
else:
    z = z * 0.0 - 1.0
""",
    "while_true_search": """
k = 0
while True:
    if x[k] < 0 or k == len(x) - 1:
        break
    k += 1
""",
    "while_with_else": """
s = np.float64(0.0)
j = 0
while j < len(x):
    s = s + x[j]
    j += 1
    if s > 1.0:
        break
else:
    s = s * 0.0
""",
    "nested_ifs_and_continue": """
total = np.float64(0.0)
for i in range(len(x)):
    if x[i] > 0:
        if total > 1.0:
            break
    else:
        continue
    total = total + x[i]
""",
}


@pytest.mark.parametrize("name", sorted(BREAK_CELLS))
@pytest.mark.parametrize("data", ["exits early", "runs to the end"])
def test_a_range_loop_that_leaves_by_break_on_a_traced_test_rolls(name, data):
    a = rng.random((6, 6))
    x = np.array([0.3, 0.5, -0.2, 0.9, 0.4, 0.6]) if data == "exits early" else np.full(6, 0.1)
    inputs = {"x": x, "S": a @ a.T + 6 * np.eye(6), "b": rng.random(6), "c": np.float64(2.0),
              "n": 40 if data == "exits early" else 2}
    graph = run_cell(BREAK_CELLS[name], inputs)
    assert everywhere(graph, "while_loop") >= 1
    assert eqn_count(graph) < 400                  # one body, not one per pass


def test_a_break_loop_keeps_the_graph_size_whatever_the_range():
    sizes = [eqn_count(run_cell(BREAK_CELLS["first_negative"], {"x": rng.random(n) - 0.5}))
             for n in (5, 500)]
    assert sizes[0] == sizes[1]


def test_a_break_loop_that_cannot_be_converted_says_where_in_the_users_words():
    source = """
w = x.copy()
for i in range(len(x)):
    if x[i] > 2:
        break
    u = w * 2
"""
    _, _, jitted = compile_cell(source, {"x": np.arange(5.0)})
    with pytest.raises(UnsupportedError) as info:
        jitted(x=np.arange(5.0))
    text = info.value.explain()
    assert "`if x[i] > 2: break` cannot be converted to an XLA conditional" in text
    assert "`u` is assigned in one branch only" in text and "__psc" not in text


def test_a_break_inside_a_with_block_is_still_explained():
    source = """
acc = 0.0
for i in range(n):
    with np.errstate(all="ignore"):
        if x[i] > 0.5:
            break
    acc = acc + x[i]
"""
    _, _, jitted = compile_cell(source, {"x": np.ones(10), "n": 10})
    with pytest.raises(UnsupportedError) as info:
        jitted(x=np.ones(10), n=10)
    text = info.value.explain()
    assert "uses `break`" in text and "while i < n and not done" in text


def test_rolling_can_be_disabled():
    with rolling.rolling_disabled():
        graph = run_cell(HEAT, heat_inputs(5))
    assert top_level(graph, "while_loop") == 0


def test_unroll_notes_name_the_loop():
    _, names, jitted = compile_cell(LOOP_SUM, {"x": np.ones(700), "n": 700},
                                    transform=None)
    graph = jitted.trace(x=np.ones(700), n=700).graph
    notes = unroll_notes(graph)
    assert notes and notes[0].startswith("line 4: 4,200 equations")
    assert "equations from an unrolled loop; write it as a for loop over range(...)" in notes[0]
    assert unroll_notes(run_cell(LOOP_SUM, {"x": np.ones(700), "n": 700})) == []


def test_the_pass_keeps_docstrings_and_iterates_what_is_not_an_array_as_written():
    tree = ast.parse('def f(x):\n    "doc"\n    out = []\n    for a, b in x:\n'
                     '        out.append(b)\n    else:\n        out.append(0)\n    return out\n')
    rolled = roll_loops(tree)
    fn = rolled.body[0]
    assert ast.get_docstring(fn) == "doc"
    assert any(isinstance(s, ast.For) and isinstance(s.target, ast.Tuple) for s in ast.walk(fn))
    namespace: dict = {}
    exec(compile(rolled, "<test>", "exec"), namespace)
    assert namespace["f"]([(1, 2), (3, 4)]) == [2, 4, 0]


def test_a_python_float_or_a_numpy_scalar_by_the_branch_taken_is_refused():
    """`z = 0.0`, then `z = x.max()` only where x sums above zero: plain Python leaves a
    Python float or a NumPy float64 by the data; compiled code has one type."""
    _, _, jitted = compile_cell("z = 0.0\nif x.sum() > 0:\n    z = x.max()\n", {"x": np.ones(3)})
    with pytest.raises(UnsupportedError, match="`z` is a Python float in one branch and a "
                       "NumPy float64 in the other"):
        jitted(x=np.ones(3))


def test_a_name_assigned_on_some_iterations_keeps_its_value_on_the_others():
    source = """
last_big = np.float64(-1.0)
for i in range(n):
    if x[i] > 0.7:
        last_big = x[i]
"""
    graph = run_cell(source, {"x": rng.random(90), "n": 90})
    assert top_level(graph, "while_loop") == 1


@pytest.mark.parametrize("source", [HEAT, LOGISTIC, LOOP_SUM, """
k = 0
total = 0.0
while k < 4:
    if k % 2:
        k += 1
        continue
    total = total + float(x[k])
    k += 1
else:
    done = True
for i in range(3):
    pass
"""])
def test_the_rewritten_function_run_without_tracing_is_the_plain_cell(source):
    X = rng.standard_normal((20, 3))
    inputs = {"u": np.eye(6), "steps": 4, "alpha": 0.1, "X": X, "y": (X[:, 0] > 0) * 1.0,
              "w": np.zeros(3), "lr": 0.5, "iters": 3, "x": rng.random(8), "n": 8}
    analysis = cell.analyze_cell(source)
    names = [n for n in analysis.inputs if n in inputs]
    fn = cell.make_cell_function(analysis, names, {"np": np}, transform=roll_loops)
    args = copy.deepcopy(inputs)
    outs, _ = fn(*(args[n] for n in names))
    plain = {"np": np, **copy.deepcopy(inputs)}
    exec(source, plain)
    for name in analysis.outputs:
        assert_close(outs[name], plain[name], name)


def test_a_reversed_range_and_a_step():
    source = """
out = np.zeros_like(x)
for i in range(n - 1, 0, -2):
    out[i] = x[i] + x[i - 1]
"""
    graph = run_cell(source, {"x": rng.random(11), "n": 11})
    assert top_level(graph, "while_loop") == 1


def test_a_traced_bound_leaves_the_loop_variable_at_its_last_value():
    source = """
acc = np.float64(0.0)
for i in range(2, n):
    acc = acc + x[i]
"""
    graph = run_cell(source, {"x": rng.random(10), "n": np.int64(7)})
    assert top_level(graph, "while_loop") == 1


def test_a_break_on_a_static_value_is_unrolled_however_long_the_range():
    source = """
acc = 0.0
for i in range(1000):
    if i >= 3:
        break
    acc = acc + x[i]
"""
    run_cell(source, {"x": rng.random(5)})


def test_a_function_with_a_loop_and_an_early_return_on_a_static_value():
    source = '''
def f(x, n, sign):
    """doc"""
    if sign < 0:
        return -x
    acc = x * 0
    for i in range(n):
        acc = acc + x * i
    return acc
'''
    namespace = {"np": np}
    exec(compile(roll_loops(ast.parse(source)), "<f>", "exec"), namespace)
    f = namespace["f"]
    x = rng.random(3)
    assert np.allclose(Jitted(f)(x, 50, 1), x * sum(range(50)))
    assert np.allclose(Jitted(f)(x, 50, -1), -x)
    assert sum(e.prim.name == "while_loop" for e in Jitted(f).trace(x, 50, 1).graph.eqns) == 1


@pytest.mark.parametrize("source", [
    # an inner loop that makes no pass in the outer loop's last pass: its variable keeps the
    # value of the pass before (plain Python's `i` after the loops is n - 1)
    """
n = S.shape[0]
L = np.zeros_like(S)
for j in range(n):
    for i in range(j + 1, n):
        L[i, j] = S[i, j] - L[i, :j] @ L[j, :j]
""",
    """
n = S.shape[0]
L = np.zeros_like(S)
for j in range(n):
    L[j, j] = np.sqrt(S[j, j] - L[j, :j] @ L[j, :j])
    for i in range(j + 1, n):
        L[i, j] = (S[i, j] - L[i, :j] @ L[j, :j]) / L[j, j]
last = i
""",
])
def test_a_triangular_loop_nest_rolls_and_keeps_the_inner_variable(source):
    a = rng.random((6, 6))
    graph = run_cell(source, {"S": a @ a.T + 6 * np.eye(6)})
    assert top_level(graph, "while_loop") == 1
    assert everywhere(graph, "while_loop") == 2


def test_a_function_returning_the_variable_of_an_inner_loop_that_may_make_no_pass():
    def f(S):
        n = S.shape[0]
        L = np.zeros_like(S)
        for j in range(n):
            for i in range(j + 1, n):
                L[i, j] = S[i, j]
        return L, i

    S = rng.random((5, 5))
    want, got = f(S), Jitted(f)(S)
    np.testing.assert_array_equal(got[0], want[0])
    assert type(got[1]) is int and got[1] == want[1] == 4


def test_a_while_loop_stops_where_an_index_fails_its_check_and_raises_numpys_error():
    def search(x):
        k = 0
        while True:
            k += 1
            if x[k] < 0:
                break
        return k

    assert Jitted(search)(np.array([1.0, 2.0, -1.0, 2.0])) == 2
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        Jitted(search)(np.array([1.0, 2.0, 3.0, 2.0]))      # (it used to run forever)



def step(Z):
    Z[1:] = Z[:-1] * 2 + 1
    return Z


def step_view(Z):
    Z[1:] = Z[:-1] * 2 + 1
    return Z[:]


def life(Z):
    N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:] +
         Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
    birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
    survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
    Z[...] = 0
    Z[1:-1, 1:-1][birth | survive] = 1
    return Z


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
@pytest.mark.parametrize("steps", [0, 1, 2, 9])
def test_a_helper_updating_its_argument_in_place_and_returning_it_rolls(dtype, steps):
    """`Z = step(Z)` binds Z to the array it already holds: one array all along, updated in
    place (the caller's array too), as in plain Python; the loop rolls (it used to unroll)."""
    source = "for _ in range(steps):\n    Z = step(Z)\n"
    graph = run_cell(source, {"Z": np.arange(6).astype(dtype), "steps": steps, "step": step})
    if steps > 1:
        assert top_level(graph, "while_loop") == 1


def test_the_rolled_helper_loop_does_not_grow_with_the_pass_count():
    source = "for _ in range(steps):\n    Z = step(Z)\n"
    sizes = {len(run_cell(source, {"Z": np.arange(6.0), "steps": n, "step": step}).eqns)
             for n in (5, 50)}
    assert len(sizes) == 1


def test_another_name_of_the_array_sees_every_pass_of_the_helper():
    source = "W = Z\nv = Z[2:]\nfor _ in range(steps):\n    Z = step(Z)\nt = W.sum() + v.sum()\n"
    run_cell(source, {"Z": np.arange(6.0), "steps": 4, "step": step})


def test_game_of_life_through_a_helper_rolls():
    source = "for i in range(steps):\n    Z = life(Z)\n"
    graph = run_cell(source, {"Z": rng.integers(0, 2, (12, 12)), "steps": 30, "life": life})
    assert top_level(graph, "while_loop") == 1 and len(graph.eqns) < 100


def test_a_helper_returning_a_view_of_its_argument_gives_plain_pythons_result():
    source = "for _ in range(steps):\n    Z = step_view(Z)\nt = Z.sum()\n"
    try:
        run_cell(source, {"Z": np.arange(6.0), "steps": 3, "step_view": step_view})
    except UnsupportedError as err:       # refused is fine; a wrong answer is not
        assert "line" in str(err)
