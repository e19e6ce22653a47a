"""Functions and classes defined in a compiled cell are those plain Python defines (issue 28,
item 3): of module `__main__`, with their plain names, the notebook's namespace as their
globals (read when they are called), their defaults, annotations, docstrings and decorators
as the `def` made them, made anew on every run (a cache hit included), picklable; classes
with their methods, attributes and instances. What cannot be made so runs as plain Python."""
import pickle
import types

import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@pytest.fixture
def shell(magic_shell):
    magic_shell.user_ns["pickle"] = pickle
    return magic_shell


def run(shell, cell: str, name: str):
    result = shell.run_cell(f"%%psc_jit --quiet --name {name}\n{cell}")
    assert result.success, result.error_in_exec
    return psc_jit.last_report()


def plain(shell, cell: str) -> dict:
    """The plain cell's namespace (run on a copy of the shell's)."""
    namespace = dict(shell.user_ns)
    exec(compile(cell, "<plain cell>", "exec"), namespace)
    return namespace


def function_facts(fn) -> dict:
    """What a function is, as the user can see it (its closure: what each cell holds)."""
    fn = getattr(fn, "__wrapped__", fn)
    closure = tuple(getattr(c.cell_contents, "__qualname__", c.cell_contents)
                    for c in fn.__closure__ or ())
    return dict(qualname=fn.__qualname__, name=fn.__name__, module=fn.__module__,
                doc=fn.__doc__, defaults=fn.__defaults__, kwdefaults=fn.__kwdefaults__,
                annotations=fn.__annotations__, closure=closure, code=fn.__code__.co_code,
                names=fn.__code__.co_names, dict=dict(vars(fn)))


REPRO = "k = 2.0\ndef f(x):\n    return x * k\ny = f(np.ones(3))\n"


def test_the_repro_binds_a_plain_function_reading_the_notebooks_globals(shell):
    for rerun in (False, True):
        report = run(shell, REPRO, "repro_def")
        assert report.compiled and report.cache_hit is rerun
        f = shell.user_ns["f"]
        assert f.__qualname__ == "f" and f.__module__ == "__main__"
        assert f.__globals__ is shell.user_ns and f.__closure__ is None
        np.testing.assert_array_equal(shell.user_ns["y"], [2.0, 2.0, 2.0])
        shell.run_cell("k = 3.0")
        np.testing.assert_array_equal(f(np.ones(3)), [3.0, 3.0, 3.0])
        assert pickle.loads(pickle.dumps(f)) is f


DEFINITIONS = {
    "plain_def": "k = 2.0\ndef f(x):\n    return x * k\ny = f(w)\n",
    "docstring_defaults_annotations": (
        "s = 3\ndef f(x: np.ndarray, n: int = s, *, scale: float = 0.5) -> np.ndarray:\n"
        "    '''Scaled.'''\n    return x * n * scale\ny = f(w)\n"),
    "traced_default": "def f(x, m=w.sum()):\n    return x * m\ny = f(w)\n",
    "lambda": "k = 2.0\nf = lambda v, q=3: v * k + q\ny = f(w)\n",
    "lambda_in_a_call": "ys = list(map(lambda v: v * 2, w))\n",
    "nested_def": ("k = 2.0\ndef f(x):\n    def g(v):\n        return v * k + x\n"
                   "    return g(x)\ny = f(w)\n"),
    "def_in_a_branch": "if w.shape[0] > 2:\n    def f(x):\n        return x + 1\ny = f(w)\n",
    "def_in_a_loop": "for i in range(3):\n    def f(x):\n        return x + i\ny = f(w)\n",
    "recursive": ("def f(n):\n    return 1 if n <= 1 else n * f(n - 1)\n"
                  "y = w * f(4)\n"),
    "lru_cache": ("import functools\n@functools.lru_cache(maxsize=None)\ndef f(n):\n"
                  "    return n * 2\ny = w * f(3)\n"),
    "list_of_functions": ("def f(x):\n    return x + 1\ndef g(x):\n    return x * 2\n"
                          "fs = [f, g]\ny = fs[1](w)\n"),
}


@pytest.mark.parametrize("name", list(DEFINITIONS))
def test_a_function_defined_in_a_cell_is_the_one_plain_python_defines(shell, name):
    cell = DEFINITIONS[name]
    shell.user_ns["w"] = np.arange(3.0)
    want = plain(shell, cell)
    made = {}
    for _ in range(2):
        report = run(shell, cell, f"def_{name}")
        assert report.compiled, report.fallback_reason
        for n, value in want.items():
            if getattr(value, "__module__", None) == "__main__" and (
                    isinstance(value, types.FunctionType) or hasattr(value, "__wrapped__")):
                got = shell.user_ns[n]
                assert function_facts(got) == function_facts(value), n
                assert getattr(got, "__wrapped__", got).__globals__ is shell.user_ns
                assert made.get(n) is not got       # a new function on every run
                made[n] = got
        np.testing.assert_array_equal(shell.user_ns.get("y", 0), want.get("y", 0))
    if "fs" in want:
        assert shell.user_ns["fs"][0] is shell.user_ns["f"]


def test_defaults_are_evaluated_on_every_run_as_plain_python_does(shell):
    cell = "def f(x, m=w.sum(), seen=[]):\n    return x * m\ny = f(w)\n"
    shell.user_ns["w"] = np.arange(3.0)
    run(shell, cell, "defaults_each_run")
    first = shell.user_ns["f"]
    shell.user_ns["w"] = np.arange(3.0) * 10
    report = run(shell, cell, "defaults_each_run")
    f = shell.user_ns["f"]
    assert report.cache_hit and f.__defaults__[0] == 30.0 and first.__defaults__[0] == 3.0
    assert f.__defaults__[1] == [] and f.__defaults__[1] is not first.__defaults__[1]


CLASS_CELL = '''
class Base:
    def __init__(self, a):
        self.a = a
class Model(Base):
    """A model."""
    scale = 2.0
    def __init__(self, a):
        super().__init__(a * self.scale)
    @staticmethod
    def twice(v):
        return v * 2
    @classmethod
    def make(cls, v):
        return cls(v)
    @property
    def total(self):
        """The sum."""
        return self.a.sum()
    def apply(self, v):
        return v * self.scale + self.a
m = Model.make(w)
t = m.total
u = m.apply(w)
'''


def test_a_class_defined_in_a_cell_is_the_one_plain_python_defines(shell):
    shell.user_ns["w"] = np.arange(3.0)
    want = plain(shell, CLASS_CELL)
    classes = []
    for rerun in (False, True):
        report = run(shell, CLASS_CELL, "class_cell")
        assert report.compiled and report.cache_hit is rerun, report.fallback_reason
        Model, m = shell.user_ns["Model"], shell.user_ns["m"]
        assert Model.__qualname__ == "Model" and Model.__module__ == "__main__"
        assert Model.__doc__ == "A model." and Model.__mro__[1] is shell.user_ns["Base"]
        assert type(m) is Model and isinstance(m, shell.user_ns["Base"])
        for name in ("__init__", "apply"):
            assert function_facts(vars(Model)[name]) == function_facts(
                vars(want["Model"])[name])
        assert Model.total.__doc__ == "The sum." and Model.twice(3) == 6
        assert isinstance(vars(Model)["make"], classmethod)
        np.testing.assert_array_equal(m.a, want["m"].a)
        np.testing.assert_array_equal(shell.user_ns["u"], want["u"])
        assert shell.user_ns["t"] == want["t"] and type(shell.user_ns["t"]) is type(want["t"])
        copy = pickle.loads(pickle.dumps(m))
        assert type(copy) is Model and np.array_equal(copy.a, m.a)
        np.testing.assert_array_equal(Model(np.ones(2)).a, [2.0, 2.0])   # super() works
        assert all(Model is not c for c in classes)          # a new class on every run
        classes.append(Model)
        Model.scale = 100.0      # a change to the old class: the re-run's class is new


def test_a_dataclass_defined_in_a_cell(shell):
    cell = ("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: float\n"
            "    y: float = 1.0\n    def norm(self):\n        return np.hypot(self.x, self.y)\n"
            "p = P(w.sum(), 4.0)\nn = p.norm()\n")
    shell.user_ns["w"] = np.array([1.0, 2.0])
    for _ in range(2):
        assert run(shell, cell, "dataclass_cell").compiled
        P, p = shell.user_ns["P"], shell.user_ns["p"]
        assert type(p) is P and p == P(3.0, 4.0) and shell.user_ns["n"] == 5.0
        assert repr(p) == "P(x=np.float64(3.0), y=4.0)"
        assert pickle.loads(pickle.dumps(p)) == p


def test_a_redefinition_is_seen_by_a_cell_that_calls_the_function(shell):
    shell.user_ns["w"] = np.arange(3.0)
    run(shell, "def f(v):\n    return v * 2\n", "define_f")
    run(shell, "out = f(w)", "use_f")
    np.testing.assert_array_equal(shell.user_ns["out"], [0.0, 2.0, 4.0])
    run(shell, "def f(v):\n    return v * 3\n", "define_f")
    report = run(shell, "out = f(w)", "use_f")
    np.testing.assert_array_equal(shell.user_ns["out"], [0.0, 3.0, 6.0])
    assert "f" in report.miss_reason


def test_an_error_message_names_the_function_as_plain_python_does(shell):
    cell = ("def f(x):\n    return x\ntry:\n    f()\nexcept TypeError as err:\n"
            "    msg = str(err)\n")
    shell.user_ns["w"] = np.arange(3.0)
    assert run(shell, cell, "call_error").compiled
    assert shell.user_ns["msg"] == "f() missing 1 required positional argument: 'x'"


@pytest.mark.parametrize("cell, construct", [
    ("def deco(fn):\n    return fn\n@deco\ndef f(x):\n    return x\ny = f(w)\n",
     "'@deco': a decorator of `f`"),
    ("def make(c):\n    def add(v):\n        return v + c\n    return add\n"
     "g = make(w.sum())\ny = g(w)\n", "`g` holds the function `make.<locals>.add`"),
    ("import functools\ndef f(x, s):\n    return x * s\ng = functools.partial(f, s=2.0)\n",
     "`g` holds the function `f`"),
    ("class Meta(type):\n    pass\nclass C(metaclass=Meta):\n    pass\n",
     "has the metaclass `Meta`"),
])
def test_what_cannot_be_made_again_runs_as_plain_python(shell, cell, construct):
    shell.user_ns["w"] = np.arange(3.0)
    want = plain(shell, cell)
    report = run(shell, cell, "refused_definition")
    assert not report.compiled and construct in report.fallback_reason
    for name, value in want.items():
        if isinstance(value, types.FunctionType) and value.__module__ == "__main__":
            assert function_facts(shell.user_ns[name]) == function_facts(value)


def test_a_class_with_a_metaclass_descriptors_and_a_cell_function_as_attribute(shell):
    cell = ("import abc, functools\ndef helper(v):\n    return v + 1\n"
            "class M(metaclass=abc.ABCMeta):\n    h = helper\n    sq = lambda self: self.a ** 2\n"
            "    def __init__(self, a):\n        self.a = a\n    @functools.cached_property\n"
            "    def total(self):\n        return self.a.sum()\n"
            "m = M(w)\nt = m.total\ns = m.sq()\n")
    shell.user_ns["w"] = np.arange(3.0)
    for _ in range(2):
        assert run(shell, cell, "descriptors").compiled
        M = shell.user_ns["M"]
        assert type(M) is __import__("abc").ABCMeta and M.h is shell.user_ns["helper"]
        assert M.total.func.__qualname__ == "M.total" and M.sq.__qualname__ == "M.<lambda>"
        assert M(np.ones(2)).total == 2.0 and shell.user_ns["t"] == 3.0
        assert vars(shell.user_ns["m"])["total"] == 3.0       # cached, as plain Python does
