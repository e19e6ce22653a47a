"""A helper's effects on the notebook's objects run exactly as often as in plain Python: once
per run of the cell, through its first run (traced, then timed), its re-run, a `--compare`
re-run (whose plain runs call the helper too) and a `--no-compare` one; or the cell runs as
plain Python and says what the helper changes. Neither the trace nor the timing comparison
may leave an effect of its own behind. A `jit` function refuses a helper's effect, with the
object named, and leaves the object as it was."""
import numpy as np
import psc_jit
import pytest
from psc_jit.core import UnsupportedError

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

# (what the notebook defined before, the cell, an expression showing the effects so far)
EFFECTS = {
    "list append": ("calls = []\ndef h(v):\n    calls.append(1)\n    return v * 2",
                    "y = h(x)", "calls"),
    "list extend": ("calls = []\ndef h(v):\n    calls.extend([1, 2])\n    return v * 2",
                    "y = h(x)", "calls"),
    "a value appended": ("sums = []\ndef h(v):\n    sums.append(v.sum())\n    return v * 2",
                         "y = h(x)", "sums"),
    "dict item set": ("d = {}\ndef h(v):\n    d['k'] = 1\n    return v * 2", "y = h(x)", "d"),
    "dict item counted": ("d = {}\ndef h(v):\n    d['n'] = d.get('n', 0) + 1\n    return v * 2",
                          "y = h(x)", "d"),
    "attribute set": ("import types\no = types.SimpleNamespace()\n"
                      "def h(v):\n    o.last = v.sum()\n    return v * 2", "y = h(x)", "vars(o)"),
    "attribute counted": ("class C:\n    pass\no = C()\no.n = 0\n"
                          "def h(v):\n    o.n += 1\n    return v * 2", "y = h(x)", "o.n"),
    "list in a dict": ("store = {'a': []}\ndef h(v):\n    store['a'].append(1)\n    return v * 2",
                       "y = h(x)", "store"),
    "defaultdict of lists": ("import collections\nq = collections.defaultdict(list)\n"
                             "def h(v):\n    q['a'].append(1)\n    return v * 2",
                             "y = h(x)", "dict(q)"),
    "set add": ("s = set()\ndef h(v):\n    s.add(len(s))\n    return v * 2", "y = h(x)",
                "sorted(s)"),
    "Counter": ("import collections\nc = collections.Counter()\n"
                "def h(v):\n    c['a'] += 1\n    return v * 2", "y = h(x)", "dict(c)"),
    "deque": ("import collections\nq = collections.deque()\n"
              "def h(v):\n    q.append(1)\n    return v * 2", "y = h(x)", "list(q)"),
    "bytearray": ("b = bytearray()\ndef h(v):\n    b.append(1)\n    return v * 2", "y = h(x)",
                  "bytes(b)"),
    "list subclass": ("class Log(list):\n    pass\ncalls = Log()\n"
                      "def h(v):\n    calls.append(1)\n    return v * 2", "y = h(x)",
                      "list(calls)"),
    "function attribute": ("def h(v):\n    h.n = getattr(h, 'n', 0) + 1\n    return v * 2",
                           "y = h(x)", "getattr(h, 'n', 0)"),
    "class attribute": ("class C:\n    n = 0\ndef h(v):\n    C.n += 1\n    return v * 2",
                        "y = h(x)", "C.n"),
    "a library object": ("import queue\nqq = queue.Queue()\n"
                         "def h(v):\n    qq.put(1)\n    return v * 2", "y = h(x)", "qq.qsize()"),
    "nested helpers": ("calls = []\ndef g(v):\n    calls.append(1)\n    return v\n"
                       "def k(v):\n    return g(v) + 1\ndef h(v):\n    return k(v) * 2",
                       "y = h(x)", "calls"),
    "nested set add": ("s = set()\ndef g(v):\n    s.add(len(s))\n    return v\n"
                       "def h(v):\n    return g(v) * 2", "y = h(x)", "sorted(s)"),
    "helper called twice": ("calls = []\ndef h(v):\n    calls.append(1)\n    return v * 2",
                            "y = h(x)\ny = h(y)", "calls"),
    "helper in a loop": ("calls = []\ndef h(v):\n    calls.append(1)\n    return v * 2",
                         "y = x\nfor i in range(3):\n    y = h(y)", "calls"),
    "the cell's own Counter": ("import collections\nc = collections.Counter()",
                               "c['a'] += 1\ny = x * 2", "dict(c)"),
}

# a first run (missed, timed), a re-run, a timed re-run, an untimed one
RUNS = ("", "", "--compare", "--no-compare")


@pytest.fixture
def shell(brief_timing_shell):
    return brief_timing_shell


def seen(namespace: dict, probe: str):
    return repr(eval(probe, namespace)), repr(namespace.get("y"))


def define(shell, code: str, where: str) -> None:
    """Run the notebook's definitions in a cell (Python can give the helpers' source, and
    psc_jit converts them), or by exec (it cannot: they run unseen)."""
    if where == "in a cell":
        assert shell.run_cell(code).success
    else:
        exec(code, shell.user_ns)


WHERE = ("in a cell", "without source")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("effect", EFFECTS)
def test_a_helpers_effect_runs_once_per_run_of_the_cell(shell, effect, where):
    setup, cell, probe = EFFECTS[effect]
    plain = {"np": np}
    define(shell, f"{setup}\nx = np.ones(3)", where)
    exec(f"{setup}\nx = np.ones(3)", plain)
    for flags in RUNS:
        shell.run_cell_magic("psc_jit", f"--quiet {flags}", cell)
        exec(cell, plain)
        report = psc_jit.last_report()
        assert report.compiled or report.fallback_reason
        assert seen(shell.user_ns, probe) == seen(plain, probe), flags


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("effect", [e for e in EFFECTS if "h(x)" in EFFECTS[e][1]])
def test_a_jit_function_refuses_a_helpers_effect_and_leaves_it_undone(shell, effect, where):
    setup, _, probe = EFFECTS[effect]
    define(shell, f"{setup}\ndef f(x):\n    return h(x) + 1.0\n", where)
    compiled, x = psc_jit.jit(shell.user_ns["f"]), np.ones(3)
    for _ in range(3):
        before = seen(shell.user_ns, probe)
        with pytest.raises(UnsupportedError):
            compiled(x)
        assert seen(shell.user_ns, probe) == before


def test_a_jit_function_without_source_reads_its_globals_afresh(shell):
    """Code psc_jit cannot convert reads its globals unseen: what it reads is guarded."""
    define(shell, "K = 2.0\ndef h(v):\n    return v * K\ndef f(x):\n    return h(x) + 1.0",
           "without source")
    compiled = psc_jit.jit(shell.user_ns["f"])
    assert compiled(np.ones(2)).tolist() == [3.0, 3.0]
    shell.user_ns["K"] = 3.0
    assert compiled(np.ones(2)).tolist() == [4.0, 4.0]


def test_the_reason_names_what_the_helper_changes(shell):
    setup, cell, _ = EFFECTS["set add"]
    exec(f"{setup}\nx = np.ones(3)", shell.user_ns)
    shell.run_cell_magic("psc_jit", "--quiet", cell)
    assert "the items of s (read by h)" in psc_jit.last_report().fallback_reason
