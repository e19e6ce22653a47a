"""What `jit(f)` may assume about what f reads beyond its arguments: arrays and floats it reads
through globals, attributes and closures are inputs of the program; ints, strings, functions
and modules are guarded. After a change, a call gives what plain Python gives, and a guarded
change is a miss whose reason names what changed. The functions live in real files (their
source is what gets converted), written per test."""
import importlib.util
import itertools
import textwrap

import numpy as np
import pytest
from psc_jit.core import TRACE_CACHE, jit
from psc_jit.core.frontend.convert import single_exit
from psc_jit.core.frontend.scopes import bound_names, outer_loads

pytestmark = pytest.mark.xla

_count = itertools.count()


@pytest.fixture
def module(tmp_path):
    def load(source: str):
        name = f"guards_case_{next(_count)}"
        path = tmp_path / f"{name}.py"
        path.write_text("import numpy as np\n" + textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    return load


def check(mod, change, miss, x=None):
    """jit(mod.run)(x) as plain Python would end it, before and after change(mod)."""
    x = np.arange(1.0, 7.0) if x is None else x
    f = jit(mod.run)
    np.testing.assert_array_equal(f(x), mod.run(x))
    f(x)
    assert f.last_call.cache_hit
    change(mod)
    got, want = f(x), mod.run(x)
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    if miss is None:
        assert f.last_call.cache_hit, f.last_call.miss_reason
    else:
        assert not f.last_call.cache_hit and f.last_call.miss_reason == miss
    f(x)
    assert f.last_call.cache_hit
    return f


def test_attribute_of_a_global_object(module):
    mod = module("""
        class C: pass
        cfg = C(); cfg.scale = 2.0; cfg.n = 2
        def run(x):
            return x[:cfg.n] * cfg.scale
    """)
    check(mod, lambda m: setattr(m.cfg, "scale", 3.0), None)
    check(mod, lambda m: setattr(m.cfg, "n", 4), "cfg.n (read by run): 2 → 4")


def test_nested_attribute(module):
    mod = module("""
        class C: pass
        cfg = C(); cfg.opt = C(); cfg.opt.lr = 0.5; cfg.opt.n = 3
        def run(x):
            return x[:cfg.opt.n] * cfg.opt.lr
    """)
    check(mod, lambda m: setattr(m.cfg.opt, "lr", 0.125), None)
    check(mod, lambda m: setattr(m.cfg.opt, "n", 5), "cfg.opt.n (read by run): 3 → 5")


def test_global_read_by_a_helper_and_by_its_helper(module):
    mod = module("""
        K = 2
        S = 0.5
        def g(v):
            return v * K + S
        def f(v):
            return g(v) - 1
        def run(x):
            return f(x)
    """)
    check(mod, lambda m: setattr(m, "S", 4.0), None)
    check(mod, lambda m: setattr(m, "K", 3), "K (read by g): 2 → 3")


def test_closure_variable(module):
    mod = module("""
        def make():
            k, n = 2.0, 3
            def run(x):
                return x[:n] * k
            def set_k(new_k, new_n):
                nonlocal k, n
                k, n = new_k, new_n
            return run, set_k
        run, set_k = make()
    """)
    check(mod, lambda m: m.set_k(5.0, 3), None)
    check(mod, lambda m: m.set_k(5.0, 4), "n (read by run): 3 → 4")


def test_global_array_changed_in_place_and_rebound(module):
    mod = module("""
        W = np.ones(6)
        def run(x):
            return x * W
    """)
    check(mod, lambda m: m.W.__setitem__(slice(None), 7.0), None)
    f = check(mod, lambda m: setattr(m, "W", np.full(6, 2.0)), None)
    mod.W = np.ones(3)
    with pytest.raises(ValueError):
        mod.run(np.arange(1.0, 7.0))
    with pytest.raises(ValueError):
        f(np.arange(1.0, 7.0))
    assert TRACE_CACHE.events_of(f.name)[-1].detail == "W (read by run): f64[6] → f64[3]"


def test_global_array_updated_in_place_by_the_function(module):
    mod = module("""
        total = np.zeros(3)
        def run(x):
            total[:] += x[:3]
            return total.sum()
    """)
    f = jit(mod.run)
    x = np.arange(1.0, 7.0)
    assert f(x) == 6.0 and f(x) == 12.0 and mod.total.tolist() == [2.0, 4.0, 6.0]


def test_helper_redefined(module):
    mod = module("""
        def g(v):
            return v * 2
        def run(x):
            return g(x)
    """)
    exec("def g(v):\n    return v * 3", mod.__dict__)
    check(mod, lambda m: None, None)
    f = jit(mod.run)
    f(np.ones(2))
    mod.g = np.negative
    np.testing.assert_array_equal(f(np.ones(2)), -np.ones(2))
    assert f.last_call.miss_reason == "g (called by run): function g → ufunc negative"


def test_module_global_rebound(module):
    mod = module("""
        def run(x):
            return np.sin(x)
    """)
    fake = type(np)("fakenp")
    fake.sin = np.cos
    check(mod, lambda m: setattr(m, "np", fake), "np (read by run): module numpy → module fakenp")


def test_error_state_that_raises_is_refused_and_guarded(module):
    mod = module("""
        def run(x):
            return 1.0 / x
    """)
    f = jit(mod.run)
    x = np.array([1.0, 0.0])
    with np.errstate(divide="ignore"):
        assert f(x).tolist() == [1.0, np.inf]
    with np.errstate(divide="raise"):
        with pytest.raises(Exception, match=r"np.seterr\(divide='raise'\)"):
            f(x)
    with np.errstate(divide="ignore"):
        f(x)
        assert f.last_call.cache_hit


def test_lambdas_and_closures_are_converted():
    k = 2
    f = jit(lambda v: v[:k] * 2.0)
    x = np.arange(5.0)
    assert f(x).tolist() == [0.0, 2.0]
    k = 3
    assert f(x).tolist() == [0.0, 2.0, 4.0]
    assert f.last_call.miss_reason == "k (read by <lambda>): 2 → 3"


def test_lambdas_inside_a_literal_or_a_continued_call_are_converted():
    """A lambda whose lines are not a statement (a dict value, an argument on the next line)
    is converted from its file: np.ascontiguousarray of a transpose, which NumPy does not
    dispatch to psc_jit, compiles as in a def."""
    x = np.arange(12.0).reshape(3, 4)
    cases = {
        "copy of a transpose": (lambda a: np.ascontiguousarray(a.T)),
    }
    continued = jit(
        lambda a: np.ascontiguousarray(a[:, ::2]))
    for f in (jit(cases["copy of a transpose"]), continued):
        got = f(x)
        want = f.fun(x)
        assert got.flags.c_contiguous and np.array_equal(got, want)


def test_early_returns_become_one_conditional(module):
    mod = module("""
        def run(x):
            if x.sum() > 10.0:
                return x - 1.0
            elif x.sum() < 0.0:
                return -x
            y = x * 2.0
            return y
    """)
    f = jit(mod.run)
    for x in (np.arange(6.0), np.zeros(3) + 1.0, -np.ones(2)):
        np.testing.assert_array_equal(f(x), mod.run(x))
    assert "cond" in {e.prim.name for e in f.last_call.compiled.graph.eqns} or \
        "select" in {e.prim.name for e in f.last_call.compiled.graph.eqns}


# -- the analyses, on their own ---------------------------------------------------------------

def parsed(source: str):
    import ast
    return ast.parse(textwrap.dedent(source)).body[0]


def test_outer_loads_follow_pythons_scopes():
    fn = parsed("""
        def f(a, *rest, b=DEFAULT, **kw):
            c = a + G
            g = lambda y: y + c + H
            items = [c * i for i in R if i > LIMIT]
            def inner(z):
                nonlocal c
                c = z
                return z + M
            class K:
                hidden = NOT_SEEN
            if (w := W):
                return w
            global OUT
            OUT = 1
            return OUT + len(items)
    """)
    assert sorted({n.id for n in outer_loads(fn)}) == [
        "DEFAULT", "G", "H", "LIMIT", "M", "OUT", "R", "W", "len"]
    assert {"a", "rest", "b", "kw", "c", "g", "items", "inner", "K", "w"} <= bound_names(fn)
    assert "OUT" not in bound_names(fn)


def test_single_exit_keeps_the_meaning_of_every_path():
    import ast
    fn = parsed("""
        def f(x):
            if x > 2:
                if x > 5:
                    return 'big'
                y = 'mid'
            else:
                return 'small'
            return y + '!'
    """)
    single_exit(fn)
    namespace: dict = {}
    exec(compile(ast.fix_missing_locations(ast.Module([fn], [])), "<f>", "exec"), namespace)
    assert [namespace["f"](v) for v in (1, 3, 9)] == ["small", "mid!", "big"]
    assert sum(isinstance(n, ast.Return) for n in ast.walk(fn)) == 1


def test_a_helper_without_source_has_its_globals_guarded():
    namespace = {"np": np, "K": 2.0, "W": np.ones(3)}
    exec("def helper(v):\n    return v * K + W\n", namespace)    # no source to convert
    helper = namespace["helper"]

    def run(x):
        return helper(x)
    f = jit(run)
    x = np.arange(3.0)
    np.testing.assert_array_equal(f(x), run(x))
    namespace["K"] = 3.0
    np.testing.assert_array_equal(f(x), run(x))
    assert f.last_call.miss_reason == "K (read by helper): 2.0 → 3.0"
    namespace["W"][0] = 5.0
    np.testing.assert_array_equal(f(x), run(x))
    assert f.last_call.miss_reason == "W (read by helper): its contents changed"


def test_class_attributes_of_objects_made_inside_the_function(module):
    mod = module("""
        SCALE = 2.0
        class Base:
            def __init__(self):
                self.w = np.ones(3)
            def forward(self, x):
                return x * self.w
        class Child(Base):
            factor = 3
            @property
            def doubled(self):
                return self.factor * 2
            def forward(self, x):
                return super().forward(x) * self.factor * SCALE + self.doubled
        def run(x):
            return Child().forward(x)
    """)
    check(mod, lambda m: setattr(m, "SCALE", 5.0), None, x=np.arange(3.0))
    check(mod, lambda m: setattr(m.Child, "factor", 4),
          "Child.factor (read by run): 3 → 4", x=np.arange(3.0))


def test_arrays_in_a_global_list_are_inputs_and_its_length_a_guard(module):
    mod = module("""
        layers = [np.eye(3), 2.0 * np.eye(3)]
        params = {"b": np.ones(3)}
        def run(x):
            for w in layers:
                x = x @ w
            for name in params:
                x = x + params[name]
            return x
    """)
    check(mod, lambda m: m.layers[0].__imul__(3.0), None, x=np.arange(3.0))
    check(mod, lambda m: m.layers.append(np.eye(3)), "layers (read by run): 2 → 3 items",
          x=np.arange(3.0))
    check(mod, lambda m: m.params.update(c=np.ones(3)),
          "params (read by run): keys ['b'] → ['b', 'c']", x=np.arange(3.0))
