"""A cell as a function: inputs, outputs, last expression, and side effects found by line."""
import numpy as np
import pytest
from psc_jit.core.frontend.cell import analyze_cell, make_cell_function

pytestmark = pytest.mark.pure


def test_inputs_are_reads_before_assignment_and_outputs_top_level_assignments():
    a = analyze_cell("y = x * 2\nz = y + w\nfor i in range(n):\n    acc = acc + z[i]\n")
    assert a.inputs == ("x", "w", "range", "n", "acc")
    assert a.outputs == ("y", "z", "i", "acc")
    assert not a.has_last_expr


def test_names_assigned_before_a_loop_are_not_inputs():
    a = analyze_cell("acc = 0.0\nfor i in range(n):\n    acc = acc + x[i]\nacc")
    assert "acc" not in a.inputs and a.has_last_expr


def test_a_name_assigned_in_one_branch_only_is_still_an_input():
    a = analyze_cell("if c:\n    y = 1\nz = y\n")
    assert "y" in a.inputs


def test_comprehension_and_lambda_variables_are_not_outputs():
    a = analyze_cell("s = sum([v * k for v in xs])\nf = lambda q: q + k\n")
    assert a.outputs == ("s", "f")
    assert set(a.inputs) >= {"xs", "k"} and "v" not in a.inputs and "q" not in a.inputs


def test_side_effects_are_found_with_the_line_the_user_sees():
    a = analyze_cell("m = x.mean()\nprint('mean', m)\nr = np.random.rand(3)\n")
    lines = [(f.line, f.construct) for f in a.findings]
    assert lines == [(3, "print('mean', m)"), (4, "r = np.random.rand(3)")]
    assert "print() is a side effect" in a.findings[0].explain()
    assert a.findings[0].explain().startswith("line 3: ")


def test_a_random_generator_made_in_the_cell_is_named_as_one_not_as_global_state():
    a = analyze_cell("g = np.random.default_rng(5)\nr = np.random.random(3)\n")
    generator, global_state = (f.explain() for f in a.findings)
    assert generator.startswith("line 2: 'g = np.random.default_rng(5)'")
    assert "a NumPy random generator draws its numbers outside XLA" in generator
    assert "the global random state is a side effect" in global_state


def test_cell_function_returns_assigned_outputs_and_last_value():
    a = analyze_cell("y = x + 1\nif y.sum() > 100:\n    big = True\ny * 2")
    fn = make_cell_function(a, ["x"], {"np": np})
    outputs, last = fn(np.ones(2))
    assert set(outputs) == {"y"}                     # `big` was never bound
    np.testing.assert_array_equal(last, [4.0, 4.0])


def test_syntax_errors_carry_the_users_line():
    with pytest.raises(SyntaxError) as info:
        analyze_cell("x = 1\ny = (\n")
    assert info.value.lineno >= 3


BINDING_FORMS = '''
zs = [(t := v * 2) for v in x]
match x.shape:
    case (n,) as whole if n > lim:
        m = n * 2
    case {'a': aa, **rest}:
        pass
    case P(q=pq):
        pass
    case [first, *others]:
        pass
try:
    c = a @ kk
except ValueError as e:
    msg = str(e)
del zs
for i, (j, *jj) in enumerate(x):
    pass
with cm as (w1, w2):
    pass
import numpy.linalg as la, os.path
from math import pi as PI
o.at += 1
l[0] += 1
g = h = 2
a1, *a2 = x
f = lambda q: (inner := q)
'''


def test_outputs_are_the_names_every_binding_form_binds():
    a = analyze_cell(BINDING_FORMS)
    assert a.outputs == ("zs", "t", "whole", "n", "m", "rest", "aa", "pq", "first", "others",
                         "c", "e", "msg", "i", "j", "jj", "w1", "w2", "la", "os", "PI", "g",
                         "h", "a1", "a2", "f")
    assert a.deletable == ("e", "zs")


def test_names_a_pattern_or_a_handler_binds_are_not_inputs():
    a = analyze_cell(BINDING_FORMS)
    assert set(a.inputs) == {"x", "lim", "P", "a", "kk", "ValueError", "str", "enumerate", "cm",
                             "o", "l"}


def test_a_name_the_cell_may_delete_is_a_parameter_where_it_is_bound():
    a = analyze_cell("y = x * 2\ndel v\n")
    assert a.parameters({"x": 1, "v": 2}) == ("x", "v")
    assert a.parameters({"x": 1}) == ("x",)
