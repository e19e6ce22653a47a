"""What a cached cell may assume, through a real IPython shell: every value the cell reads
that is not one of its inputs (an attribute, a global of a helper, a closure variable, a
global array) is an input of the compiled program or a guarded value. A re-run after a
change gives what plain Python gives; a guarded change is a miss whose reason names it."""
import textwrap

import numpy as np
import psc_jit
import pytest

pytestmark = [pytest.mark.ipython, pytest.mark.xla]


@pytest.fixture
def shell(magic_shell):
    magic_shell.user_ns["x"] = np.arange(1.0, 7.0)
    return magic_shell


def magic(shell, cell: str, name: str):
    shell.user_ns.pop("y", None)
    shell.run_cell_magic("psc_jit", f"--quiet --no-compare --name {name}", cell)
    return psc_jit.last_report()


def plain(shell, cell: str):
    namespace = dict(shell.user_ns)
    exec(cell, namespace)
    return namespace["y"]


def define(shell, code: str):
    result = shell.run_cell(textwrap.dedent(code))
    assert result.success, result.error_in_exec


def check_rerun(shell, name, setup, cell, change, miss):
    """First run, re-run, change, run: each as plain Python would end; the run after the
    change hits (miss None) or misses with exactly `miss` as its reason."""
    define(shell, setup)
    report = magic(shell, cell, name)
    assert report.compiled, report.fallback_reason
    np.testing.assert_array_equal(shell.user_ns["y"], plain(shell, cell))
    assert magic(shell, cell, name).cache_hit
    define(shell, change)
    report = magic(shell, cell, name)
    assert report.compiled, report.fallback_reason
    want = plain(shell, cell)
    np.testing.assert_array_equal(shell.user_ns["y"], want)
    assert shell.user_ns["y"].dtype == want.dtype
    if miss is None:
        assert report.cache_hit, report.miss_reason
    else:
        assert not report.cache_hit and report.miss_reason == miss
    assert magic(shell, cell, name).cache_hit


CASES = {
    "attribute float": ("class C: pass\ncfg = C()\ncfg.scale = 2.0",
                        "y = x * cfg.scale", "cfg.scale = 3.0", None),
    "attribute int": ("class C: pass\ncfg = C()\ncfg.n = 2",
                      "y = x[:cfg.n] * 2", "cfg.n = 3", "cfg.n: 2 → 3"),
    "nested attribute float": ("class C: pass\ncfg = C()\ncfg.opt = C()\ncfg.opt.lr = 0.5",
                               "y = x * cfg.opt.lr", "cfg.opt.lr = 0.25", None),
    "nested attribute rebound": ("class C: pass\ncfg = C()\ncfg.opt = C()\ncfg.opt.n = 2",
                                 "y = x[:cfg.opt.n]", "cfg.opt = C()\ncfg.opt.n = 4",
                                 "cfg.opt.n: 2 → 4"),
    "dataclass config": ("from dataclasses import dataclass\n@dataclass\nclass Config:\n"
                         "    scale: float = 2.0\ncfg = Config()",
                         "y = x * cfg.scale", "cfg.scale = 4.0", None),
    "global float of a helper": ("K = 2.0\ndef f(v):\n    return v * K",
                                 "y = f(x)", "K = 5.0", None),
    "global int of a helper": ("K = 2\ndef f(v):\n    return v * K",
                               "y = f(x)", "K = 5", "K (read by f): 2 → 5"),
    "global of a helper's helper": ("K = 2\ndef g(v):\n    return v * K\n"
                                    "def f(v):\n    return g(v) + 1",
                                    "y = f(x)", "K = 5", "K (read by g): 2 → 5"),
    "global float of a helper's helper": ("K = 2.0\ndef g(v):\n    return v * K\n"
                                          "def f(v):\n    return g(v) + 1",
                                          "y = f(x)", "K = -1.5", None),
    "closure float": ("def make():\n    k = 2.0\n    def f(v):\n        return v * k\n"
                      "    def set_k(new):\n        nonlocal k\n        k = new\n"
                      "    return f, set_k\nf, set_k = make()",
                      "y = f(x)", "set_k(7.0)", None),
    "closure int": ("def make():\n    k = 2\n    def f(v):\n        return v[:k]\n"
                    "    def set_k(new):\n        nonlocal k\n        k = new\n"
                    "    return f, set_k\nf, set_k = make()",
                    "y = f(x)", "set_k(4)", "k (read by f): 2 → 4"),
    "global array changed in place": ("W = np.ones(6)\ndef f(v):\n    return v * W",
                                      "y = f(x)", "W[:] = 7.0", None),
    "global array rebound, other shape": ("W = np.ones(3)\ndef f(v):\n    return v.sum() * W",
                                          "y = f(x)", "W = np.ones(5)",
                                          "W (read by f): f64[3] → f64[5]"),
    "global array rebound, same shape": ("W = np.ones(6)\ndef f(v):\n    return v * W",
                                         "y = f(x)", "W = np.full(6, 3.0)", None),
    "helper redefined": ("def f(v):\n    return v * 2", "y = f(x)",
                         "def f(v):\n    return v * 3", "f (called by the cell): redefined"),
    "helper's helper redefined": ("def g(v):\n    return v * 2\ndef f(v):\n    return g(v)",
                                  "y = f(x)", "def g(v):\n    return v - 1",
                                  "g (called by f): redefined"),
    "module global of a helper rebound": (
        "def f(v):\n    return np.sin(v)", "y = f(x)",
        "import types\nfake = types.ModuleType('fakenp')\nfake.sin = np.cos\nnp = fake",
        "np (read by f): module numpy → module fakenp"),
    "tuple global": ("pair = (2, 0.5)\ndef f(v):\n    n, s = pair\n    return v[:n] * s",
                     "y = f(x)", "pair = (3, 0.5)", "pair[0] (read by f): 2 → 3"),
    "dict item of a global": ("params = {'w': np.ones(6), 'b': 1.0}\n"
                              "def f(v):\n    return v * params['w'] + params['b']",
                              "y = f(x)", "params['w'][0] = 9.0\nparams['b'] = 2.0", None),
    "method reading its object's arrays": (
        "class Model:\n    def __init__(self):\n        self.w = np.ones(6)\n"
        "        self.layers = 2\n    def forward(self, v):\n"
        "        for _ in range(self.layers):\n            v = v * self.w\n        return v\n"
        "m = Model()", "y = m.forward(x)", "m.w = m.w * 2.0", None),
    "method's loop count": (
        "class Model:\n    def __init__(self):\n        self.w = np.ones(6)\n"
        "        self.layers = 2\n    def forward(self, v):\n"
        "        for _ in range(self.layers):\n            v = v * self.w + 1.0\n        return v\n"
        "m = Model()", "y = m.forward(x)", "m.layers = 3", "m.layers: 2 → 3"),
    "class attribute of an object made in the cell": (
        "class Model:\n    factor = 2\n    def __init__(self):\n        self.w = np.ones(6)",
        "m = Model()\ny = x * m.w * m.factor", "Model.factor = 3", "Model.factor: 2 → 3"),
    "index array changed in place": ("idx = np.array([0, 2])\ndef f(v):\n    return v[idx]",
                                     "y = f(x)", "idx[1] = 5",
                                     "idx (read by f): its contents changed"),
    # items and attributes the code takes without `L[i]` or `obj.a`
    "float of a list a helper iterates": (
        "coeffs = [1.0, 2.0]\ndef f(v):\n    acc = v * 0\n    for c in coeffs:\n"
        "        acc = acc * v + c\n    return acc", "y = f(x)", "coeffs[0] = 5.0", None),
    "int of a list summed": ("sizes = [1, 2]\ndef f(v):\n    return v * sum(sizes)",
                             "y = f(x)", "sizes[1] = 4", "sizes[1] (read by f): 2 → 4"),
    "bool of a list given to any": ("flags = [False, False]\ndef f(v):\n"
                                    "    return v + 1 if any(flags) else v",
                                    "y = f(x)", "flags[0] = True",
                                    "flags[0] (read by f): False → True"),
    "float of a dict's values": ("w = {'a': 1.0, 'b': 2.0}\ndef f(v):\n"
                                 "    return v * sum(w.values())", "y = f(x)",
                                 "w['b'] = 3.0", None),
    "dict.get of a helper": ("cfg = {'lr': 0.5}\ndef f(v):\n    return v * cfg.get('lr', 1.0)",
                             "y = f(x)", "cfg['lr'] = 0.25", None),
    "list.index of a helper": ("order = [3.0, 1.0]\ndef f(v):\n    return v * order.index(1.0)",
                               "y = f(x)", "order[0] = 1.0",
                               "order[0] (read by f): 3.0 → 1.0"),
    "getattr with a default": ("class C: pass\nobj = C()\ndef f(v):\n"
                               "    return v * getattr(obj, 'k', 1.0)", "y = f(x)",
                               "obj.k = 4.0", "obj.k (read by f): now there (4.0)"),
    "hasattr": ("class C: pass\nobj = C()\ndef f(v):\n    return v * 2 if hasattr(obj, 'k') "
                "else v", "y = f(x)", "obj.k = 4.0", "obj.k (read by f): now there (4.0)"),
    "array default of a lambda": ("W = np.ones(6)\ng = lambda v, w=W: v * w", "y = g(x)",
                                  "W[0] = 5.0", None),
    "array default of a helper": ("W = np.ones(6)\ndef f(v, w=W):\n    return v + w",
                                  "y = f(x)", "W[1] = 5.0", None),
    "keyword-only array default": ("W = np.ones(6)\ndef f(v, *, w=W):\n    return v + w",
                                   "y = f(x)", "W[1] = 5.0", None),
    "array in a tuple default": ("W = np.ones(6)\ndef f(v, ws=(W, 2.0)):\n"
                                 "    return v * ws[0] + ws[1]", "y = f(x)", "W[1] = 5.0", None),
    "list as a keyword-only default": ("L = [1.0, 2.0]\ndef f(v, *, c=L):\n"
                                       "    return v * c[0] + c[1]", "y = f(x)", "L[0] = 7.0",
                                       None),
    "array default of a method": ("W = np.ones(6)\nclass A:\n    def f(self, v, w=W):\n"
                                  "        return v * w\na = A()", "y = a.f(x)", "W[3] = 5.0",
                                  None),
    "array default of a classmethod": ("W = np.ones(6)\nclass A:\n    @classmethod\n"
                                       "    def f(cls, v, *, w=W):\n        return v * w",
                                       "y = A.f(x)", "W[3] = 5.0", None),
    "attribute of a module made in the notebook": (
        "import types\nmod = types.ModuleType('settings')\nmod.K = 2.0\n"
        "def f(v):\n    return v * mod.K", "y = f(x)", "mod.K = 3.0", None),
    "float read as text by a helper": ("lr = 0.1\ndef f(v):\n    return v * float(f'{lr:.1f}')",
                                       "y = f(x)", "lr = 0.2", "lr (read by f): 0.1 → 0.2"),
    "float deciding a slice's length": ("dt = 0.25\ndef f(v):\n    return v[:int(1 / dt)]",
                                        "y = f(x)", "dt = 0.5", "dt (read by f): 0.25 → 0.5"),
    "attribute read by a callable object": (
        "class Model:\n    def __init__(self):\n        self.b = 0.5\n        self.w = np.ones(6)\n"
        "    def __call__(self, v):\n        return v * self.w + self.b\nm = Model()",
        "y = m(x)", "m.b = 2.0\nm.w[1] = 4.0", None),
    "callable object in a partial": (
        "import functools\nclass Model:\n    def __init__(self):\n        self.b = 0.5\n"
        "    def __call__(self, v, s):\n        return v * s + self.b\n"
        "p = functools.partial(Model(), s=2.0)", "y = p(x)", "p.func.b = 3.0", None),
    "global of a jit function the cell calls": (
        "import psc_jit\nK = 2.0\n@psc_jit.jit\ndef f(v):\n    return v * K + 1", "y = f(x) + 1",
        "K = 3.0", None),
    "array stored in a partial": ("import functools\nW = np.ones(6)\n"
                                  "def mul(v, w):\n    return v * w\n"
                                  "pm = functools.partial(mul, w=W)", "y = pm(x)",
                                  "W[2] = 5.0", None),
    "enum member of a helper": ("import enum\nclass Mode(enum.Enum):\n    A = 1\n    B = 2\n"
                                "mode = Mode.A\ndef f(v):\n"
                                "    return v * 2 if mode is Mode.A else v * 3",
                                "y = f(x)", "mode = Mode.B",
                                "mode (read by f): <Mode.A: 1> → <Mode.B: 2>"),
    "vars of an object": ("class C: pass\nobj = C()\ndef f(v):\n"
                          "    return v * vars(obj).get('k', 1.0)", "y = f(x)", "obj.k = 4.0",
                          "obj.__dict__ (read by f): keys [] → ['k']"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rerun_after_a_change_ends_as_plain_python(shell, case):
    setup, cell, change, miss = CASES[case]
    check_rerun(shell, "guards-" + case.replace(" ", "-").replace(",", "").replace("'", ""),
                setup, cell, change, miss)


def test_attribute_of_a_users_module(shell, tmp_path, monkeypatch):
    (tmp_path / "um_settings.py").write_text("SCALE = 2.0\nN = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    check_rerun(shell, "guards-module", "import um_settings as um", "y = x[:um.N] * um.SCALE",
                "um.SCALE = 3.0", None)
    define(shell, "um.N = 4")
    report = magic(shell, "y = x[:um.N] * um.SCALE", "guards-module")
    assert report.miss_reason == "um.N: 2 → 4"
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(1.0, 5.0) * 3.0)


def test_numpy_error_state_raise_runs_plain_python_and_is_a_guard(shell):
    shell.user_ns["x"] = np.array([1.0, 0.0, 2.0])
    old = np.seterr(divide="warn")
    try:
        with pytest.warns(RuntimeWarning):
            exec("y = 1.0 / x", dict(shell.user_ns))
        assert magic(shell, "y = 1.0 / x", "guards-errstate").compiled
        np.seterr(divide="raise")
        with pytest.raises(FloatingPointError):
            shell.run_cell_magic("psc_jit", "--quiet --no-compare --name guards-errstate",
                                 "y = 1.0 / x")
        report = psc_jit.last_report()
        assert not report.compiled and "np.seterr(divide='raise')" in report.fallback_reason
        np.seterr(divide="warn")
        report = magic(shell, "y = 1.0 / x", "guards-errstate")
        assert report.compiled and report.cache_hit       # back to the first entry
        np.seterr(divide="ignore")                        # same values as warn: still a hit
        assert magic(shell, "y = 1.0 / x", "guards-errstate").cache_hit
    finally:
        np.seterr(**old)


def test_a_helper_branching_on_data_compiles_to_a_conditional(shell):
    define(shell, """
        def damped(step, v):
            if np.abs(step).max() > 1.0:
                return v - 0.5 * step
            return v - step
    """)
    for scale in (0.1, 10.0):
        shell.user_ns["s"] = np.full(6, scale)
        report = magic(shell, "y = damped(s, x)", "guards-branch")
        assert report.compiled, report.fallback_reason
        np.testing.assert_array_equal(shell.user_ns["y"], plain(shell, "y = damped(s, x)"))
    assert report.cache_hit
    shell.user_ns.pop("s")


def test_a_while_loop_whose_error_starts_as_an_int_compiles(shell):
    cell = ("v = np.ones_like(x)\nerr = 1\nsteps = 0\n"
            "while err > 1e-12 and steps < 50:\n"
            "    step = (v * v - x) / (2.0 * v)\n    v = v - step\n"
            "    err = np.abs(step).max()\n    steps += 1\ny = v\n")
    report = magic(shell, cell, "guards-while")
    assert report.compiled, report.fallback_reason
    assert "while_loop" in [e.prim.name for e in report.graph.eqns]
    namespace = dict(shell.user_ns)
    exec(cell, namespace)
    np.testing.assert_allclose(shell.user_ns["y"], namespace["y"], rtol=1e-14)
    assert type(shell.user_ns["err"]) is type(namespace["err"]) is np.float64
    assert shell.user_ns["steps"] == namespace["steps"]


def test_a_recursive_helper_of_the_notebook_compiles_and_is_guarded(shell):
    define(shell, """
        def power(v, n):
            return v if n <= 1 else v * power(v, n - 1)
    """)
    for _ in range(2):
        report = magic(shell, "y = power(x, 3)\n", "recursive")
        assert report.compiled, report.fallback_reason
        np.testing.assert_array_equal(shell.user_ns["y"], np.arange(1.0, 7.0) ** 3)
    define(shell, """
        def power(v, n):
            return v if n <= 1 else v + power(v, n - 1)
    """)
    report = magic(shell, "y = power(x, 3)\n", "recursive")
    assert report.compiled and "power" in report.miss_reason
    np.testing.assert_array_equal(shell.user_ns["y"], np.arange(1.0, 7.0) * 3)
