"""A hypothesis strategy for small notebook cells, each with the session around it.

A `Scenario` is source text only, so a failure prints as something a user can paste:
`setup` (the globals: arrays of mixed dtypes in any memory layout, Python and NumPy scalars,
an alias, a helper that reads a global, helpers with effects on the notebook's objects, a
config object, a dict and a list), the `cell`, the magic's `flags` (`--compare`: timed runs),
and `changes`: code run between re-runs of the cell (new input values, dtypes or shapes, a
global or an attribute changed, an array updated in place, an alias re-bound).

Statements are drawn one at a time and executed on a scratch copy of the session as they are
drawn, so the generator knows each name's shape and dtype, and a statement that raises ends
the cell (an exception is a case to compare, not a bug of the generator).

Half the scenarios also get host steps between their statements (`host_steps`): prints,
random draws from NumPy's global state, from a `default_rng` Generator and from a legacy
`RandomState`, and selections whose size depends on the data (`a[a > 0]`, `np.unique`,
`np.nonzero`, ...), alone or inside a loop: the habits of notebook cells that a compiled cell
must keep exactly (the printed text, the numbers drawn, the generators' states). Their setup
seeds NumPy's global state and makes the generators `rng` and `rs`.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import io
import textwrap
import types
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

DTYPES = ("bool", "int32", "int64", "float32", "float64")
SHAPES = ((4,), (3, 4), (2, 3, 4))
ARRAYS = ("a", "w")       # the arrays of the setup; `b` may alias one of them
MAX_STATEMENTS = 5


@dataclass(frozen=True)
class Scenario:
    setup: str
    cell: str
    changes: tuple[str, ...]    # run between the runs of the cell: len(changes) + 1 runs
    flags: str = ""

    def text(self) -> str:
        """The scenario as a user would type it, cell by cell."""
        parts = [f"# setup\n{self.setup}", f"%%psc_jit {self.flags}\n{self.cell}"]
        for change in self.changes:
            parts += [f"# change\n{change}", "# re-run the %%psc_jit cell"]
        return "\n".join(parts)

    def names(self) -> frozenset[str]:
        """Every name the scenario's code binds or reads (the namespace to compare)."""
        found = set()
        for source in (self.setup, self.cell, *self.changes):
            found.update(n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name))
        return frozenset(found - {"np", "range", "float", "int", "len"})


def array_literal(values, dtype: str) -> str:
    return f"np.array({values!r}, dtype=np.{dtype})"


@st.composite
def arrays(draw, shape=None, dtype=None) -> str:
    shape = shape or draw(st.sampled_from(SHAPES))
    dtype = dtype or draw(st.sampled_from(DTYPES))
    size = int(np.prod(shape))
    if dtype == "bool":
        elements = st.booleans()
    elif dtype.startswith("int"):
        elements = st.integers(-3, 4)
    else:
        elements = st.sampled_from([-2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0])
    flat = draw(st.lists(elements, min_size=size, max_size=size))
    return array_literal(np.array(flat).reshape(shape).tolist(), dtype)


# how an array of the setup is laid out in memory: the same values (but for a broadcast and
# shared elements) in a view with steps, reversed, transposed, in Fortran order, at an offset
LAYOUTS = ("{0}", "{0}", "{0}[::-1]", "np.asfortranarray({0})", "{0}.T",
           "np.repeat({0}, 2, axis=-1)[..., ::2]",
           "np.concatenate([{0}[..., :1], {0}], axis=-1)[..., 1:]",
           "np.broadcast_to({0}[..., :1], {0}.shape)",
           "np.lib.stride_tricks.as_strided({0}, {0}.shape, {0}.strides[:-1] + (0,))")

# helpers with effects on the notebook's objects: a list it only appends to (made again after
# each compiled run), a set and a Counter (the cell runs as plain Python), its own attribute
EFFECTFUL = ("import collections\ncalls = []\nseen = set()\ncounts = collections.Counter()",
             "def h(v):\n    calls.append(1)\n    return v * 2",
             "def hs(v):\n    seen.add(len(seen))\n    return v + 1",
             "def hc(v):\n    counts['n'] += 1\n    return v - 1",
             "def hf(v):\n    hf.runs = getattr(hf, 'runs', 0) + 1\n    return -v")


@st.composite
def setups(draw, host_steps: bool = False) -> str:
    lines = [f"a = {draw(arrays())}", f"w = {draw(arrays())}"]
    lines += [f"{name} = {draw(st.sampled_from(LAYOUTS)).format(name)}" for name in ARRAYS]
    lines = [line for line in lines if line not in ("a = a", "w = w")]
    lines.append(draw(st.sampled_from(["b = a", "b = a[..., 1:]", "b = w", f"b = {draw(arrays())}"])))
    lines.append(f"s = {draw(st.sampled_from(['2.0', '-0.5', '3', 'np.float32(1.5)', 'True']))}")
    lines.append(f"n = {draw(st.integers(0, 3))}")
    lines.append(f"K = {draw(st.sampled_from(['2.0', '0.5', '3', 'np.float32(2.0)']))}")
    lines.append("def f(v):\n    return v * K + 1")
    lines.append("def g(v):\n    return v - cfg.scale")
    lines.append("class Cfg:\n    pass")
    lines.append(f"cfg = Cfg()\ncfg.scale = {draw(st.sampled_from(['0.5', '2', '1.5']))}")
    lines.append("d = {}\nL = []")
    if host_steps:
        seed = draw(st.integers(0, 9))
        lines.append(f"np.random.seed({seed})\nrng = np.random.default_rng({seed})\n"
                     f"rs = np.random.RandomState({seed})")
    lines += EFFECTFUL
    lines.append(SUBCLASS)
    lines.append(draw(st.sampled_from(SUBCLASS_INPUTS[:1] * 4 + SUBCLASS_INPUTS[1:])))
    return "\n".join(lines)


# `m`: a plain array, or one of a subclass (a masked array, a tagged subclass of the user's),
# which psc_jit must never compile as a plain array (changes switch it between the two)
SUBCLASS = ("class Tagged(np.ndarray):\n    def __array_finalize__(self, obj):\n"
            "        self.tag = getattr(obj, 'tag', 'tagged')")
SUBCLASS_INPUTS = ("m = w.copy()", "m = np.ma.masked_greater(w, 1)", "m = w.view(Tagged)",
                   "m = np.ma.masked_array(w, mask=np.zeros(w.shape, bool))")


def numeric_names(ns: dict) -> list[str]:
    return sorted(n for n, v in ns.items() if not n.startswith("_") and n != "n"
                  and isinstance(v, (np.ndarray, np.generic, float, int, bool)))


def array_names(ns: dict) -> list[str]:
    return sorted(n for n, v in ns.items() if isinstance(v, np.ndarray) and v.ndim > 0)


@st.composite
def atoms(draw, ns) -> str:
    names = numeric_names(ns)
    literal = st.sampled_from(["2", "1.5", "-1", "True", "np.float32(0.5)", "n"])
    return draw(st.sampled_from(names) if names and draw(st.integers(0, 3)) else literal)


BINOPS = ("+", "-", "*", "/", "//", "%", "**", "<", ">=", "==", "&", "|")
UNARY = ("np.abs({})", "np.sqrt(np.abs({}))", "np.exp({})", "np.tanh({})", "-{}",
         "np.floor({})", "({}).astype(np.float32)", "({}).astype(np.int32)",
         "({}).astype(bool)", "np.float64({})" , "f({})", "g({})", "cfg.scale * {}",
         "np.maximum({0}, 0)", "np.where({0} > 0, {0}, 0)", "np.cumsum({})",
         "h({})", "hs({})", "hc({})", "hf({})")
REDUCE = ("({}).sum()", "({}).max()", "({}).mean()", "({}).min()", "np.sum({}, axis=-1)",
          "({}).sum(axis=0)", "({}).prod()", "np.any({})", "({}).argmax()")
INDEX = ("{}[0]", "{}[1:]", "{}[::-1]", "{}[..., 0]", "{}[-1]", "{}[{}.sum() > 0]")


@st.composite
def expressions(draw, ns, depth: int = 2) -> str:
    if depth == 0:
        return draw(atoms(ns))
    kind = draw(st.sampled_from(["atom", "binop", "binop", "unary", "reduce", "index"]))
    inner = expressions(ns, depth - 1)
    if kind == "atom":
        return draw(atoms(ns))
    if kind == "binop":
        op = draw(st.sampled_from(BINOPS))
        return f"({draw(inner)} {op} {draw(inner)})"
    if kind == "unary":
        return draw(st.sampled_from(UNARY)).format(draw(inner))
    if kind == "reduce":
        return draw(st.sampled_from(REDUCE)).format(draw(inner))
    name = draw(st.sampled_from(array_names(ns) or ["a"]))
    return draw(st.sampled_from(INDEX)).format(name, name)


def fresh_name(ns: dict) -> str:
    i = 0
    while f"x{i}" in ns:
        i += 1
    return f"x{i}"


STATEMENTS = ("assign", "assign", "augassign", "slice", "alias", "loop", "traced loop",
              "branch", "dict", "list", "attribute")


@st.composite
def statements(draw, ns, leave_out=()) -> str:
    arrays_ = array_names(ns) or ["a"]
    target = draw(st.sampled_from(arrays_))
    expr = expressions(ns)
    kind = draw(st.sampled_from([k for k in STATEMENTS if k not in leave_out]))
    if kind == "assign":
        name = draw(st.sampled_from([fresh_name(ns), fresh_name(ns), target]))
        return f"{name} = {draw(expr)}"
    if kind == "augassign":
        return f"{target} {draw(st.sampled_from(['+=', '*=', '-=', '/=']))} {draw(expr)}"
    if kind == "slice":
        index = draw(st.sampled_from(["[0]", "[1:]", "[..., -1]", "[::2]", "[:]"]))
        op = draw(st.sampled_from(["=", "+=", "*="]))
        return f"{target}{index} {op} {draw(expr)}"
    if kind == "alias":
        return f"{fresh_name(ns)} = {target}"
    if kind in ("loop", "traced loop"):
        trips = "n" if kind == "traced loop" else draw(st.sampled_from(["3", "n", "1"]))
        body = draw(st.sampled_from([f"{target} = {target} * 0.5 + i",
                                     f"{target} += {draw(expr)}",
                                     f"{target}[i % {target}.shape[0]] += 1"]))
        return f"for i in range({trips}):\n    {body}"
    if kind == "branch":
        name = draw(st.sampled_from([fresh_name(ns), target]))
        return (f"if {draw(st.sampled_from(REDUCE)).format(target)} > 0:\n"
                f"    {name} = {draw(expr)}\nelse:\n    {name} = {draw(expr)}")
    if kind == "dict":
        return f"d[{draw(st.sampled_from(['0', '1']))!r}] = {draw(expr)}"
    if kind == "list":
        return f"L.append({draw(expr)})"
    return f"cfg.out = {draw(expr)}"


PRINTS = ("print({0})", "print({0}.shape, {0}.dtype)", "print(f'{{{0}.sum():.3f}}')",
          "print('{0} =', {0}.max(), {0}.size)", "print(repr({0}.mean()))")
DRAWS = ("{1} = np.random.rand(*{0}.shape)", "{1} = {0} + np.random.normal(size={0}.shape)",
         "{1} = np.random.randint(0, 3, size={0}.shape)", "{1} = rng.normal(size={0}.shape)",
         "{1} = rng.integers(0, 5, size={0}.shape)", "{1} = {0} * rng.random()",
         "{1} = rng.choice({0}.ravel(), size=2)", "{1} = rng.permutation({0}.shape[0])",
         "{1} = rs.randn(*{0}.shape)", "{1} = {0} - rs.uniform(-1, 1, size={0}.shape)",
         "np.random.shuffle({0})", "rng.shuffle({0})")
SELECTIONS = ("{1} = {0}[{0} > 0]", "{1} = np.unique({0})", "{1} = np.nonzero({0})[0]",
              "{1} = np.flatnonzero({0} > 0)", "{1} = np.argwhere({0})",
              "{1} = np.intersect1d({0}, {2})", "{1} = np.bincount(np.abs({0}).astype(int).ravel())",
              "{1} = {0}[{0} != 0].sum()")
LOOPED = ("for i in range({3}):\n    print(i, {0}.sum())",
          "for i in range({3}):\n    {0} = {0} + rng.normal(size={0}.shape)",
          "for i in range({3}):\n    {0} = {0} * 0.5\n    print(f'{{i}}: {{{0}.max()}}')",
          "for i in range({3}):\n    {1} = {0}[{0} > i]")


@st.composite
def host_step_statements(draw, ns) -> str:
    """A print, a random draw, a data-dependent selection, or a loop holding one of them, of
    the session's arrays (`ns`, with `rng` and `rs` from a host-steps setup)."""
    arrays_ = array_names(ns) or ["a"]
    name, other = draw(st.sampled_from(arrays_)), draw(st.sampled_from(arrays_))
    templates = draw(st.sampled_from([PRINTS, DRAWS, DRAWS, SELECTIONS, SELECTIONS, LOOPED]))
    trips = draw(st.sampled_from(["2", "3", "n"]))
    return draw(st.sampled_from(templates)).format(name, fresh_name(ns), other, trips)


def run_quietly(source: str, ns: dict) -> bool:
    """Exec `source` in `ns` (what it prints unseen); whether it ran without raising."""
    try:
        with np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
            exec(source, ns)
    except Exception:   # noqa: BLE001 (any error of the drawn code ends the cell)
        return False
    return True


def scratch_copy(ns: dict) -> dict:
    """A copy of the session to try a statement on (the helpers still read the original)."""
    keep = {k: v for k, v in ns.items()
            if k != "np" and not callable(v) and not isinstance(v, types.ModuleType)}
    return {**ns, **copy.deepcopy(keep)}


@st.composite
def cells(draw, setup: str, leave_out=(), host_steps: bool = False) -> str:
    """Statements that run, mostly: a drawn statement that raises is drawn again up to twice,
    then kept as the cell's last (the error is compared too). With `host_steps`, a host step
    (host_step_statements) may come before each statement."""
    ns: dict = {"np": np}
    exec(setup, ns)
    lines = []
    for _ in range(draw(st.integers(1, MAX_STATEMENTS))):
        drawn = [host_step_statements(ns)] if host_steps and draw(st.booleans()) else []
        for strategy in (*drawn, statements(ns, leave_out)):
            for attempt in range(3):
                line = draw(strategy)
                if run_quietly(line, scratch_copy(ns)) or attempt == 2:
                    break
            lines.append(line)
            if not run_quietly(line, ns):
                return "\n".join(lines)
    else:
        if draw(st.booleans()):
            lines.append(draw(expressions(ns, 1)))     # the cell's value
    return "\n".join(lines)


CHANGES = ("a = a + 1", "a = (a * 2).astype(np.float32)", "a[0] = 5", "K = 3.0", "K = 4",
           "cfg.scale = 0.25", "n = 2", "s = 3", "s = -1.5", "b = a", "w = w[..., :2]",
           "a = a.astype(np.int64)", "L.clear()", "d.clear()", "cfg.scale = np.float32(3)",
           "m = np.ma.masked_less(w, 0)", "m = w * 1", "m = w.view(Tagged)")


@st.composite
def scenarios(draw, leave_out=(), host_steps: bool | None = None) -> Scenario:
    """`leave_out`: kinds of statement (of STATEMENTS) not to draw; `host_steps`: whether to
    put host steps between them (None: drawn, half the scenarios)."""
    if host_steps is None:
        host_steps = draw(st.booleans())
    setup = draw(setups(host_steps))
    cell = draw(cells(setup, leave_out, host_steps))
    changes = tuple(draw(st.lists(st.sampled_from(CHANGES), min_size=0, max_size=3)))
    flags = draw(st.sampled_from(["", "", "--traced n", "--static s", "--compare"]))
    return Scenario(setup, textwrap.dedent(cell), changes, flags)
