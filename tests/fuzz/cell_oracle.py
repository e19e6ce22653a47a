"""The oracle of the cell fuzzer: run a `Scenario` plain and through `%%psc_jit` in a real
IPython shell, and say where they part.

What each side prints is compared too (numbers in it within the rounding allowed below), and
NumPy's global random state after each step (each side starts the step from the same state),
and a Generator's or RandomState's state like any value.

Both sides start from the same setup; after each run of the cell (and after each change
between runs) the two namespaces must hold the same values, dtypes and types, the same names
(none missing, none extra), arrays that alias in one alias in the other, and the same
exception (type and message) or none. A fallback is fine when it gives its reason.

Values are compared exactly, with one rule for rounding (`rounding`): a name the cell binds
or updates from an operation whose last bits neither library fixes (INEXACT: `np.exp`,
`np.tanh`, `**`, and sums, products and means of floats), or from a name so rounded, or that
may share memory with one, may hold float or complex elements that differ from the plain
ones, where those are finite and non-zero, by up to INEXACT_ULPS units of the narrowest float
type the scenario uses (relative: INEXACT_ULPS * eps). Why:
transcendental functions are not correctly rounded in either library (NumPy's own accuracy
tests allow 1-4 ulp per function and CPU path, test_umath_accuracy.py: exp float32 3, log
float32 4, tanh 2; the Array API suite compares such results with rel_tol=0.25), and the order
of a reduction is free (NumPy sums pairwise in blocks of 8, XLA in its own tree). A float32
result widened to float64 keeps its float32 error, hence the narrowest type. Everything else
stays exact: dtypes and types, integers and bools, which elements are NaN, infinities, zeros
and their signs, and every name no inexact operation reached (+, -, *, / and sqrt are
correctly rounded on both sides; the setup's helpers use only those).

A relative allowance cannot follow a rounding through cancellation: `(K ** a) % 2` turns one
ulp of 46.77 into 5e-6 relative of 0.77. So a value that differs past it is checked once
more (`replay_explains`): the plain scenario is replayed with every inexact operation of
the cell rounded ROUNDING_ULPS units up or down (each call site one way, every combination
of up to ROUNDING_SITES sites, a fixed sample beyond), and the compiled element must lie
between the smallest and largest replayed values (with the relative allowance), or equal a
replayed one where it is not a finite non-zero float. Compiled code then equals what plain
Python gives for some rounding of its inexact operations, element by element.

XLA's CPU code contracts a product and a sum into one fused multiply-add (LLVM's FMA
contraction, always on in XLA:CPU; as with jax.jit): `x * y + z` rounded once where NumPy
rounds twice, so the unrounded product differs from NumPy's by up to half an ulp. Each
product of the cell and of the setup's helpers (compiled with it) is therefore a site of the
replays too, moved one ulp either way ("product"), which brackets the unrounded product.

The sign of a zero that a max or min reduction returns (`a.max()` over -0.0 and +0.0) is
NumPy's SIMD loop's: it keeps the later of equal elements lane by lane and then combines the
lanes, so which zero comes out depends on the array's length and the CPU's vector width
(measured: a sequential fold matches it except at 8k + 1 float64 and 16k + 1 float32
elements). So such a call site is a site of the replays too, returning its zeros as +0.0
or -0.0 (`EXTREMA`).

XLA's CPU client runs programs with subnormal floats flushed to zero (results) and read as
zero (operands), as jax.jit does on the CPU; psc_jit documents it (README). The replays are
therefore run twice: as NumPy runs, and with the processor's flush-to-zero and
denormals-are-zero modes set (`flushing_subnormals`), so that NumPy flushes as XLA does.
"""
from __future__ import annotations

import ast
import collections
import contextlib
import ctypes
import ctypes.util
import itertools
import platform
import random
import re
import types
import warnings
from dataclasses import dataclass, field

import numpy as np


MISSING = "<missing>"


@dataclass
class Outcome:
    """What one scenario did: `failure` is None, or (category, detail)."""
    runs: int = 0
    fallbacks: list[str] = field(default_factory=list)
    failure: tuple[str, str] | None = None


def run_source(source: str, ns: dict):
    """Exec a cell as IPython would (its last expression is its value): (value, error)."""
    tree = ast.parse(source)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:        # (dont_inherit: this module's `annotations` future is not the cell's)
        exec(compile(tree, "<cell>", "exec", dont_inherit=True), ns)
        value = eval(compile(last, "<cell>", "eval", dont_inherit=True), ns) \
            if last is not None else None
    except Exception as err:  # noqa: BLE001 (the cell's own error is a result to compare)
        return None, err
    return value, None


def describe_error(err) -> str | None:
    return None if err is None else f"{type(err).__name__}: {err}"


INEXACT = re.compile(r"np\.(exp|tanh|power|sum|prod|mean|cumsum|cumprod)\(|"
                     r"\.(sum|prod|mean)\(|\*\*")
INEXACT_ULPS = 16       # two implementations of up to 4 ulp each, and a short sum's order
FLOAT_NAMES = ("float16", "float32")    # of the setup's arrays and the drawn casts


@dataclass(frozen=True)
class Rounding:
    """The names whose floats may be rounded (see the module's rule; VALUE: the cell's value),
    and the relative difference allowed to them."""
    rtol: float = 0.0
    names: frozenset[str] = frozenset()

    def of(self, name: str) -> float:
        return self.rtol if name in self.names else 0.0


EXACT = Rounding()
VALUE = "<the cell's value>"


def rounding(setup: str, cell: str, changes=()) -> Rounding:
    """Which names of the scenario went through an inexact operation in the cell (directly, by
    reading such a name, or as an alias of one), and in units of which float type."""
    names = rounded_names(cell, alias_groups(setup, cell, *changes), changes)
    if not names:
        return EXACT
    context = "\n".join((setup, cell, *changes))
    narrowest = next((name for name in FLOAT_NAMES if name in context), "float64")
    return Rounding(INEXACT_ULPS * float(np.finfo(narrowest).eps), names)


def rounded_names(cell: str, groups: dict[str, set[str]], changes=()) -> frozenset[str]:
    """The names bound or updated from an inexact operation or from a rounded name: statements
    of loops and branches count whichever way they run, until nothing changes. The changes
    between runs run plain on both sides: what they bind from a rounded name is rounded too
    (`m = np.ma.masked_less(w, 0)` after the cell's `w = np.exp(m)`)."""
    statements = list(_flat(ast.parse(cell).body))
    replayed = [stmt for change in changes for stmt in _flat(ast.parse(change).body)]
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for stmt in statements + replayed:
            value, targets = _value_and_targets(stmt)
            if value is None:
                continue
            targets = targets | {n.target.id for n in ast.walk(value)     # (`(t := x.sum())`
                                 if isinstance(n, ast.NamedExpr)}          # binds t too)
            reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            if isinstance(stmt, ast.AugAssign):
                reads |= targets
            if (stmt not in replayed and INEXACT.search(ast.unparse(value))) or reads & found:
                new = set().union(*(groups.get(t, {t}) for t in targets)) - found
                found |= new
                grew = grew or bool(new)
    return frozenset(found)


def _flat(statements):
    for stmt in statements:
        yield stmt
        for block in ("body", "orelse"):
            yield from _flat(getattr(stmt, block, []))


def _value_and_targets(stmt) -> tuple[ast.expr | None, set[str]]:
    if isinstance(stmt, ast.Assign):
        return stmt.value, set().union(*(_roots(t) for t in stmt.targets))
    if isinstance(stmt, ast.AugAssign):
        return stmt.value, _roots(stmt.target)
    if isinstance(stmt, ast.Expr):      # the cell's value (the last one is shown), and
        call = stmt.value               # `L.append(x)` updates L (`np.exp(a)` updates nothing)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            return call, (_roots(call.func.value) - {"np"}) | {VALUE}
        return call, {VALUE}
    return None, set()


def _roots(target) -> set[str]:
    """The names a target binds or updates (`x`, `x[0]`, `cfg.out`, `a, b`)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_roots(t) for t in target.elts))
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return {target.id} if isinstance(target, ast.Name) else set()


def alias_groups(*sources: str) -> dict[str, set[str]]:
    """name -> the names that may share its memory (`b = a`, `b = a[..., 1:]` anywhere)."""
    groups: dict[str, set[str]] = {}
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                other = node.value.value if isinstance(node.value, ast.Subscript) else node.value
                if isinstance(other, ast.Name):
                    group = groups.get(node.targets[0].id, {node.targets[0].id}) | \
                        groups.get(other.id, {other.id})
                    groups.update((name, group) for name in group)
    return groups


def difference(want, got, where: str, rtol: float = 0.0, of_largest: bool = False
               ) -> str | None:
    """Why `got` is not `want` (None when they agree); `rtol`: the rounding allowed it, of
    each float, or (`of_largest`) of the largest magnitude of the array it is in: sums added
    in another order round by their terms' size, not the result's (`pred - y` cancels)."""
    if isinstance(want, types.ModuleType):
        return None if want is got else f"{where}: module {want!r} != {got!r}"
    if isinstance(want, types.FunctionType) and isinstance(got, types.FunctionType):
        return definition_difference(want, got, where) or \
            difference(vars(want), vars(got), f"{where}.__dict__", rtol, of_largest)   # (`f.runs`)
    if callable(want) and callable(got):
        return definition_difference(want, got, where)
    if type(want).__qualname__ != type(got).__qualname__ and \
            {type(want), type(got)} != {float, np.float64}:     # np.float64 is a float
        return f"{where}: type {type(want).__name__} != {type(got).__name__} ({want!r} vs {got!r})"
    if isinstance(want, (np.random.Generator, np.random.RandomState)):
        return difference(generator_state(want), generator_state(got), f"{where}'s state")
    if isinstance(want, (list, tuple)):
        if len(want) != len(got):
            return f"{where}: length {len(want)} != {len(got)}"
        return next((d for i, (w, g) in enumerate(zip(want, got, strict=True))
                     if (d := difference(w, g, f"{where}[{i}]", rtol, of_largest))), None)
    if isinstance(want, (set, frozenset, bytearray)):
        return None if want == got else f"{where}: {want!r} != {got!r}"
    if isinstance(want, collections.deque):
        return difference(list(want), list(got), where, rtol, of_largest)
    if isinstance(want, dict):
        if set(want) != set(got):
            return f"{where}: keys {sorted(want, key=str)} != {sorted(got, key=str)}"
        return next((d for k in want if (d := difference(want[k], got[k], f"{where}[{k!r}]",
                                                         rtol, of_largest))), None)
    if isinstance(want, (int, str, bytes)) and not isinstance(want, np.generic):  # and bool
        return None if want == got else f"{where}: {want!r} != {got!r}"
    if isinstance(want, np.ndarray) and type(want) is not np.ndarray:     # (a subclass)
        found = _subclass_difference(want, got, where)
        if found:
            return found
    if isinstance(want, (np.ndarray, np.generic, float, complex)):
        if np.result_type(want) != np.result_type(got) or np.shape(want) != np.shape(got):
            return f"{where}: {np.result_type(want)}{list(np.shape(want))} != " \
                   f"{np.result_type(got)}{list(np.shape(got))}"
        return _value_difference(np.asarray(want), np.asarray(got), where, rtol, (want, got),
                                 of_largest)
    if hasattr(want, "__dict__"):
        return difference(vars(want), vars(got), f"{where}.__dict__", rtol, of_largest)
    return None


def generator_state(generator) -> dict:
    """The state a Generator or a RandomState draws its next numbers from."""
    if isinstance(generator, np.random.RandomState):
        return generator.get_state(legacy=False)
    return generator.bit_generator.state


NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def printed_difference(want: str, got: str, where: str, rtol: float = 0.0) -> str | None:
    """Why the text printed compiled (`got`) is not plain's (`want`); None when it is, or when
    only numbers in it differ, each by at most `rtol` relative (the rounding allowed)."""
    if want == got:
        return None
    if rtol and NUMBER.split(want) == NUMBER.split(got) and all(
            _close(float(w), float(g), rtol)
            for w, g in zip(NUMBER.findall(want), NUMBER.findall(got), strict=True)):
        return None
    return f"{where}: {first_differing_line(want, got)}"


def _close(want: float, got: float, rtol: float) -> bool:
    return want == got or abs(want - got) <= rtol * max(abs(want), abs(got))


def first_differing_line(want: str, got: str) -> str:
    lines = zip(want.splitlines() + ["<end>"], got.splitlines() + ["<end>"], strict=False)
    for number, (w, g) in enumerate(lines, start=1):
        if w != g:
            return f"line {number}: plain {w!r}, compiled {g!r}"
    return "the line endings"


def _subclass_difference(want: np.ndarray, got: np.ndarray, where: str) -> str | None:
    """What a subclass adds that differs: a masked array's mask, a user's attributes."""
    if not np.array_equal(np.ma.getmaskarray(want), np.ma.getmaskarray(got)):
        return f"{where}: mask {np.ma.getmaskarray(want)!r} != {np.ma.getmaskarray(got)!r}"
    if type(want).__module__.startswith("numpy"):
        return None
    return difference(vars(want), vars(got), f"{where}.__dict__")


def definition_difference(want, got, where: str) -> str | None:
    """Functions and classes (defined by the same code on both sides): the same names, module,
    code and defaults, and neither a closure where the other is not (a function a compiled
    cell defines is the plain one: issue 28, item 3)."""
    if type(want) is not type(got):
        return f"{where}: type {type(want).__name__} != {type(got).__name__}"
    if not isinstance(want, (types.FunctionType, type)):
        return None
    for name in ("__qualname__", "__module__", "__doc__"):
        if getattr(want, name) != getattr(got, name):
            return f"{where}.{name}: {getattr(want, name)!r} != {getattr(got, name)!r}"
    if isinstance(want, type):
        return None
    if want.__code__.co_code != got.__code__.co_code or \
            (want.__closure__ is None) != (got.__closure__ is None):
        return f"{where}: not the function plain Python defines ({got!r})"
    return difference(want.__defaults__, got.__defaults__, f"{where}.__defaults__")


def _value_difference(want: np.ndarray, got: np.ndarray, where: str, rtol: float,
                      shown, of_largest: bool = False) -> str | None:
    if want.dtype.kind not in "fc":
        return None if np.array_equal(want, got) else f"{where}: {shown[0]!r} != {shown[1]!r}"
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        exact = ~np.isfinite(want) | (want == 0)
        atol = rtol * np.max(np.abs(want[~exact]), initial=0.0) if of_largest else 0.0
        same = np.array_equal(want[exact], got[exact], equal_nan=True) and (
            np.allclose(got[~exact], want[~exact], rtol=rtol, atol=atol) if rtol else
            np.array_equal(want[~exact], got[~exact]))
        if same and not all(np.array_equal(np.signbit(part(want)) & (want == 0),
                                           np.signbit(part(got)) & (got == 0))
                            for part in (np.real, np.imag)):
            return f"{where}: the sign of a zero: {shown[0]!r} != {shown[1]!r}"
    return None if same else f"{where}: {shown[0]!r} != {shown[1]!r}"


def namespace_difference(names, plain: dict, magic: dict,
                         allowed: Rounding = EXACT) -> str | None:
    for name in sorted(names):
        want, got = plain.get(name, MISSING), magic.get(name, MISSING)
        if (want is MISSING) != (got is MISSING):
            return f"{name}: {'unbound' if want is MISSING else 'bound'} plain, " \
                   f"{'unbound' if got is MISSING else 'bound'} compiled"
        if want is not MISSING and (d := difference(want, got, name, allowed.of(name))):
            return d
    return alias_difference(names, plain, magic)


def alias_difference(names, plain: dict, magic: dict) -> str | None:
    """Arrays that share memory plain share it compiled (an update through one is seen
    through the other)."""
    arrays = sorted(n for n in names if isinstance(plain.get(n), np.ndarray)
                    and isinstance(magic.get(n), np.ndarray))
    for i, x in enumerate(arrays):
        for y in arrays[i + 1:]:
            if np.shares_memory(plain[x], plain[y]) and not np.shares_memory(magic[x], magic[y]):
                return f"{x} and {y} share memory plain, not compiled"
    return None


def compare_step(step: str, names, plain: dict, magic: dict, errors,
                 allowed: Rounding = EXACT) -> tuple[str, str] | None:
    want, got = (describe_error(e) for e in errors)
    if want != got:
        return "exception", f"{step}: plain {want or 'no error'}; compiled {got or 'no error'}"
    diff = namespace_difference(names, plain, magic, allowed)
    return None if diff is None else (_category(diff), f"{step}: {diff}")


def _category(diff: str) -> str:
    for words, category in (("bound", "namespace"), ("share memory", "alias"),
                            ("the sign of a zero", "signed zero")):
        if words in diff:
            return category
    return "value"


EXTREMA = re.compile(r"np\.(max|min|amax|amin|nanmax|nanmin)\(|\.(max|min)\(")
ROUNDING_ULPS = 4       # per inexact operation: NumPy's own accuracy tests allow up to 4
ROUNDING_SITES = 5      # all 2 ** n directions up to this many call sites, a sample beyond
ROUNDER = "__rounded__"


class _MarkInexact(ast.NodeTransformer):
    """Wraps each inexact operation of a cell (INEXACT) in a call of ROUNDER with its site."""

    def __init__(self):
        self.sites = 0

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return self._wrap(node)
        return self._wrap(node, "product") if isinstance(node.op, ast.Mult) else node

    def visit_Call(self, node):
        self.generic_visit(node)
        called = ast.unparse(node.func) + "("
        if INEXACT.search(called):
            return self._wrap(node)
        return self._wrap(node, "zero sign") if EXTREMA.search(called) else node

    def _wrap(self, node, what: str = "rounding"):
        self.sites += 1
        call = ast.Call(ast.Name(ROUNDER, ast.Load()),
                        [node, ast.Constant(self.sites - 1), ast.Constant(what)], [])
        return ast.copy_location(call, node)


def marked_cell(cell: str, setup: str = "") -> tuple[str, int] | tuple[str, str, int]:
    """The cell with its inexact operations wrapped in ROUNDER calls, and how many there are;
    given a setup, also the setup with those in its functions' bodies (the helpers the cell
    calls, compiled with it) wrapped: (cell, setup, sites)."""
    marker = _MarkInexact()
    tree = ast.fix_missing_locations(marker.visit(ast.parse(cell)))
    if not setup:
        return ast.unparse(tree), marker.sites
    setup_tree = ast.parse(setup)
    for stmt in setup_tree.body:
        if isinstance(stmt, ast.FunctionDef):
            stmt.body = [marker.visit(b) for b in stmt.body]
    ast.fix_missing_locations(setup_tree)
    return ast.unparse(tree), ast.unparse(setup_tree), marker.sites


def shifted(value, direction: int, ulps: int = ROUNDING_ULPS):
    """`value` moved `ulps` units of its own float type up (+1) or down (-1): its finite
    non-zero float elements only, its type and dtype kept."""
    if isinstance(value, complex) or (isinstance(value, (np.ndarray, np.generic))
                                      and value.dtype.kind == "c"):
        moved = shifted(np.real(value), direction, ulps) + \
            1j * shifted(np.imag(value), direction, ulps)
        return type(value)(moved) if not isinstance(value, np.ndarray) else \
            moved.astype(value.dtype)
    if isinstance(value, float) or (isinstance(value, (np.ndarray, np.generic))
                                    and value.dtype.kind == "f"):
        array = np.asarray(value)
        with np.errstate(all="ignore"):
            step = np.where(np.isfinite(array) & (array != 0),
                            direction * ulps * np.abs(np.spacing(array)), 0).astype(array.dtype)
            moved = array + step
        return moved if isinstance(value, np.ndarray) else type(value)(moved[()])
    return value


def signed_zeros(value, direction: int):
    """`value` with its float zeros made +0.0 (direction 1) or -0.0 (-1), type and dtype kept
    (complex: both parts)."""
    if isinstance(value, (float, complex)) or (isinstance(value, (np.ndarray, np.generic))
                                               and value.dtype.kind in "fc"):
        array = np.array(value)
        for part in (array.real, array.imag) if array.dtype.kind == "c" else (array,):
            part[part == 0] = 0.0 if direction > 0 else -0.0
        return array if isinstance(value, np.ndarray) else type(value)(array[()])
    return value


def rounding_directions(sites: int) -> list[tuple[int, ...]]:
    if sites <= ROUNDING_SITES:
        return list(itertools.product((-1, 1), repeat=sites))
    draw = random.Random(sites)
    return [(-1,) * sites, (1,) * sites] + [tuple(draw.choice((-1, 1)) for _ in range(sites))
                                            for _ in range(2 ** ROUNDING_SITES)]


def replays(setup: str, cell: str, steps: list[str | None]) -> list[tuple[dict, object]]:
    """(namespace, the last run's value) after `steps` (a change's source, or None: a run of
    the cell), replayed plain from `setup` once per combination of rounding directions of the
    cell's inexact operations, with subnormals kept and flushed; a replay that raises is left
    out."""
    marked, marked_setup, sites = marked_cell(cell, setup)
    found = []
    for flush in (False, True):
        for directions in rounding_directions(sites):
            with flushing_subnormals(flush):
                found += _replay(marked_setup, marked, steps, directions)
    return found


def _replay(setup: str, marked: str, steps, directions) -> list[tuple[dict, object]]:
    def rounder(value, site: int, what: str):
        if what == "zero sign":
            return signed_zeros(value, directions[site])
        if what == "product":       # contracted into a fused multiply-add, or not
            return shifted(value, directions[site], 1)
        return shifted(value, directions[site])
    ns: dict = {"np": np, ROUNDER: rounder}
    if run_source(setup, ns)[1] is not None:
        return []
    value, error = None, None
    for source in steps:
        value, error = run_source(source or marked, ns)
    return [] if error is not None else [(ns, value)]


# The processor's modes that flush subnormal results to zero and read subnormal operands as
# zero: x86-64 MXCSR's FTZ and DAZ bits (the last word of glibc's fenv_t), AArch64 FPCR's FZ.
_FLUSH_BITS = {"x86_64": (8, 7, 0x8040), "aarch64": (2, 0, 1 << 24)}


@contextlib.contextmanager
def flushing_subnormals(on: bool = True):
    """NumPy's arithmetic on this thread with subnormals flushed to zero, as XLA:CPU runs
    (`on`); a no-op when off, and an error where the modes are unknown."""
    if not on:
        yield
        return
    words, index, bits = _FLUSH_BITS[platform.machine()]
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    env = (ctypes.c_uint32 * words)()
    if libm.fegetenv(env):
        raise OSError("fegetenv failed")
    saved = env[index]
    env[index] = saved | bits
    libm.fesetenv(env)
    try:
        yield
    finally:
        libm.fegetenv(env)
        env[index] = (env[index] & ~bits) | (saved & bits)
        libm.fesetenv(env)


def envelope_difference(candidates: list, got, where: str, rtol: float) -> str | None:
    """Why `got` is none of `candidates` (plain values under the roundings of `replays`, the
    unrounded one first), element by element; None when each element is explained."""
    first = candidates[0]
    if any(difference(c, got, where, rtol) is None for c in candidates):
        return None
    if isinstance(first, (list, tuple)) and all(isinstance(c, type(first)) and len(c) ==
                                                len(first) for c in candidates) \
            and len(got) == len(first):
        return next((d for i in range(len(first)) if (d := envelope_difference(
            [c[i] for c in candidates], got[i], f"{where}[{i}]", rtol))), None)
    if isinstance(first, dict) and all(isinstance(c, dict) and set(c) == set(first)
                                       for c in candidates) and set(got) == set(first):
        return next((d for k in first if (d := envelope_difference(
            [c[k] for c in candidates], got[k], f"{where}[{k!r}]", rtol))), None)
    if not all(_same_kind_of_number(c, got) for c in candidates):
        return difference(first, got, where, rtol)
    stack = np.stack([np.asarray(c) for c in candidates])
    if _elements_explained(stack, np.asarray(got), rtol).all():
        return None
    return difference(first, got, where, rtol)


def _same_kind_of_number(want, got) -> bool:
    """Both numbers or arrays of one type, dtype and shape (elements aside)."""
    numbers = (np.ndarray, np.generic, float, complex, int)
    return isinstance(want, numbers) and isinstance(got, numbers) and \
        (type(want).__qualname__ == type(got).__qualname__ or
         {type(want), type(got)} == {float, np.float64}) and \
        np.result_type(want) == np.result_type(got) and np.shape(want) == np.shape(got)


def _elements_explained(stack: np.ndarray, got: np.ndarray, rtol: float) -> np.ndarray:
    """Which elements of `got` equal a candidate's (in `stack`, one per row: signs of zeros
    and NaN included), or lie, finite and non-zero, within the candidates' range widened by
    `rtol`."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        same = np.zeros(got.shape, bool)
        for candidate in stack:
            same |= (candidate == got) & (np.signbit(np.real(candidate)) ==
                                          np.signbit(np.real(got)))
            same |= np.isnan(candidate) & np.isnan(got) if got.dtype.kind in "fc" else False
        if got.dtype.kind not in "fc":
            return same
        parts = (np.real, np.imag) if got.dtype.kind == "c" else (np.real,)
        inside = np.ones(got.shape, bool)
        for part in parts:
            low, high, value = part(stack).min(0), part(stack).max(0), part(got)
            slack = rtol * np.maximum(np.abs(low), np.abs(high))
            inside &= np.isfinite(value) & (value != 0) & np.isfinite(low) & \
                np.isfinite(high) & (low - slack <= value) & (value <= high + slack)
        return same | inside


def replay_explains(setup: str, cell: str, steps: list[str | None], names,
                    plain: dict, magic: dict, values, allowed: Rounding) -> bool:
    """Whether every name (and the cell's value, `values`: plain's and compiled's) compiled
    is what plain gives under some rounding of the cell's inexact operations, with subnormals
    kept or flushed (`replays`)."""
    found = replays(setup, cell, steps)
    if not found:
        return False
    for name in sorted(names):
        want, got = plain.get(name, MISSING), magic.get(name, MISSING)
        if want is MISSING or got is MISSING:
            if (want is MISSING) != (got is MISSING):
                return False
            continue
        candidates = [want] + [ns.get(name, MISSING) for ns, _ in found]
        candidates = [c for c in candidates if c is not MISSING]
        if envelope_difference(candidates, got, name, allowed.of(name)) is not None:
            return False
    candidates = [values[0]] + [value for _, value in found]
    return envelope_difference(candidates, values[1], "value", allowed.of(VALUE)) is None
