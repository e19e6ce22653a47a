"""A cell planned as compiled regions and host steps: which statements run on the host, which
loops run in Python with their bodies still planned as regions, and which loops must run
whole on the host."""
import ast

import numpy as np
import pytest
from psc_jit.core.frontend.cell import analyze_cell, block_at, region_analysis
from psc_jit.core.frontend.regions import (HostBlock, HostStep, Region, host_steps_of, is_split,
                                           plan_cell, plan_part, regions_of, unrepeatable)

pytestmark = pytest.mark.pure


def plan(source, host_lines=None):
    analysis = analyze_cell(source)
    tree = ast.parse(source)
    ast.increment_lineno(tree, 1)          # the lines the user sees under %%psc_jit
    return plan_cell(tree, host_lines, analysis.filename)


def kinds(parts):
    return [type(p).__name__ for p in parts]


def test_a_cell_without_host_steps_is_one_region_holding_its_last_statement():
    parts = plan("y = x * 2\nz = y + 1\nz.sum()\n")
    assert parts == (Region((), 0, 3, 2, 4, ends_cell=True),)
    assert not is_split(parts)


def test_a_print_cuts_the_cell_in_two_regions_around_one_host_step():
    parts = plan("y = x * 2\nprint(y.sum())\nz = y + 1\n")
    assert kinds(parts) == ["Region", "HostStep", "Region"]
    step = parts[1]
    assert (step.line, step.construct) == (3, "print(y.sum())")
    assert "print" in step.reason
    assert parts[0].lines() == "lines 2-3" and parts[2].ends_cell   # (y.sum(): its values)
    assert step.rewritten is not None and parts[0].rewrite == step.rewritten.computing()
    parts = plan("y = x * 2\nprint('y', y)\nz = y + 1\n")      # (nothing to compute)
    assert parts[0].lines() == "line 2" and parts[1].rewritten is None


def test_random_draws_star_imports_and_line_magics_are_host_steps():
    source = ("np.random.seed(0)\na = np.random.rand(3)\nfrom numpy import *\nb = a * 2\n"
              "get_ipython().run_line_magic('timeit', '-n1 b + 1')\nc = b + 1\n")
    parts = plan(source)
    assert kinds(parts) == ["HostStep", "HostStep", "HostStep", "Region", "HostStep", "Region"]
    assert [p.line for p in parts if isinstance(p, HostStep)] == [2, 3, 4, 6]
    assert "import *" in parts[2].reason and "magic" in parts[4].reason


def test_a_loop_holding_a_print_runs_in_python_with_its_body_planned_as_regions():
    source = ("acc = 0.0\nfor i in range(n):\n    acc = acc + x[i]\n"
              "    if i % 10 == 0:\n        print(i, acc)\nr = acc * 2\n")
    parts = plan(source)
    assert kinds(parts) == ["Region", "HostBlock", "Region"]
    loop = parts[1]
    assert (loop.kind, loop.line) == ("for", 3)
    assert "line 6" in loop.reason
    body, orelse = loop.bodies
    assert kinds(body) == ["Region", "HostBlock"] and orelse == ()
    inner_if = body[1]
    assert inner_if.kind == "if" and kinds(inner_if.bodies[0]) == ["HostStep"]
    assert body[0] == Region((1, "body"), 0, 1, 4, 4, ends_cell=False)
    assert [r.key for r in regions_of(parts)] == [((), 0, 1), ((1, "body"), 0, 1), ((), 2, 3)]
    assert [type(s).__name__ for s in host_steps_of(parts)] == ["HostBlock", "HostBlock",
                                                                  "HostStep"]


@pytest.mark.parametrize("exit_", ["break", "continue"])
def test_a_loop_that_leaves_early_runs_whole_as_one_host_step(exit_):
    source = f"for v in x:\n    print(v)\n    if v > 2:\n        {exit_}\ny = x + 1\n"
    parts = plan(source)
    assert kinds(parts) == ["HostStep", "Region"]


def test_a_break_of_an_inner_loop_does_not_keep_the_outer_loop_on_the_host_whole():
    source = ("for i in range(3):\n    print(i)\n    for v in x:\n        if v > i:\n"
              "            break\n")
    parts = plan(source)
    assert kinds(parts) == ["HostBlock"]
    assert kinds(parts[0].bodies[0]) == ["HostStep", "Region"]


def test_a_draw_in_a_loop_header_puts_the_whole_loop_on_the_host():
    parts = plan("for v in np.random.rand(3):\n    y = v * 2\n")
    assert kinds(parts) == ["HostStep"]


def test_lines_where_a_trace_failed_are_host_steps_with_their_reason():
    source = "y = x * 2\nz = x[x > 0]\nw = z.sum() + y\n"
    parts = plan(source, {3: "a boolean-mask selection has a data-dependent length"})
    assert kinds(parts) == ["Region", "HostStep", "Region"]
    assert parts[1].reason.startswith("a boolean-mask selection")


def test_a_region_planned_again_keeps_the_statement_positions_of_the_cell():
    source = "a = x + 1\nb = a * 2\nc = b - 1\nd = c / 2\n"
    analysis = analyze_cell(source)
    tree = ast.parse(source)
    ast.increment_lineno(tree, 1)
    whole = plan_cell(tree, None, analysis.filename)[0]
    parts = plan_part(tree, whole, {4: "failed here"}, analysis.filename)
    assert [(type(p).__name__, getattr(p, "start", getattr(p, "index", None))) for p in parts] \
        == [("Region", 0), ("HostStep", 2), ("Region", 3)]
    assert parts[-1].ends_cell


def test_a_region_is_analysed_as_a_cell_of_its_own():
    source = "a = x + 1\nprint(a)\nb = a * w\nb.sum()\n"
    analysis = analyze_cell(source)
    region = region_analysis(analysis, (), 2, 4, ends_cell=True)
    assert region.inputs == ("a", "w") and region.outputs == ("b",)
    assert region.has_last_expr and region.digest != analysis.digest
    assert [ast.unparse(s) for s in region.statements()] == ["b = a * w", "b.sum()"]
    inner = region_analysis(analysis, (), 0, 1, ends_cell=False)
    assert inner.inputs == ("x",) and not inner.has_last_expr


def test_block_paths_reach_nested_bodies():
    tree = ast.parse("for i in r:\n    if i:\n        a = 1\n    else:\n        b = 2\n")
    assert ast.unparse(block_at(tree, (0, "body", 0, "orelse"))[0]) == "b = 2"


def test_host_blocks_say_which_loop_level_runs_on_the_host():
    parts = plan("for i in range(2):\n    for j in range(3):\n        print(i, j)\n")
    outer = parts[0]
    inner = outer.bodies[0][0]
    assert isinstance(outer, HostBlock) and isinstance(inner, HostBlock)
    assert outer.describe() == "the `for` at line 2" and outer.reason.startswith("line 4 ")


def _holds(value):
    return isinstance(value, (np.ndarray, np.random.Generator, int, float))


@pytest.mark.parametrize("cell, repeatable", [
    ("a = x * 2\nprint(a, a.sum())\nb = a + 1\n", True),
    ("a = x * 2\nr = rng.normal(size=3) + np.random.rand(3)\n", True),
    ("a = x * 2\nu = np.unique(np.round(a))\nv = sqrt(a[a > 0])\n", True),
    ("a = x * 2\nprint(a, file=log)\n", False),
    ("a = x * 2\nnp.save('a.npy', a)\n", False),
    ("a = x * 2\nhelper(a)\n", False),
    ("a = x * 2\nlog.write(str(a))\n", False),
    ("a = x * 2\nplt.plot(a)\n", True),      # (plt: here a name of the math module)
    ("a = x * 2\nos.remove(a)\n", False),
    ("for i in range(3):\n    print(i)\n", True),
    ("for i in helper():\n    print(i)\n", False),
])
def test_a_split_cell_can_be_run_again_to_be_timed_only_where_nothing_outside_changes(
        cell, repeatable):
    import io
    import math
    namespace = {"np": np, "x": np.ones(3), "a": np.ones(3), "rng": np.random.default_rng(0),
                 "sqrt": np.sqrt, "log": io.StringIO(), "helper": lambda *a: [1], "plt": math,
                 "os": __import__("os")}
    tree = ast.parse(cell)
    plan_ = plan_cell(tree, {2: "its trace stopped there"})   # (line 2: a host step)
    why = unrepeatable(plan_, tree, namespace, _holds)
    assert (why is None) == repeatable, why
