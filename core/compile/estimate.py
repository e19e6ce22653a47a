"""How long XLA will take to compile a graph, estimated before it is asked to, and the refusal
of a program over the budget (`core.budget`); and whether a run of it is known to be short
(`runs_briefly`, at the end).

The estimate is a model of XLA's CPU compile time measured on this project's graphs (see
bench/loop_compile.py). XLA fuses chains of elementwise and data-movement operations into
kernels, and the time its fusion passes take grows faster than the chain: 60 steps of an
unrolled `np.roll` stencil (360 slices and concatenations in one chain) took 27 s, 300 steps
381 s, while 400 steps that write each step into an array (dynamic_update_slice ends a chain)
took 5 s. So the model finds those chains: equations joined through fusible producers whose
values are not results of the program, and charges each chain by its slices, pads and
concatenations, as its number to the power 1.5 (fitted within a factor of 3 to measurements
from 2 s to 381 s). It is meant to tell a second from an hour, not to be exact.

Products (`dot_general`) are charged on their own: XLA:CPU generates code for each one of a
new shape, and a loop psc_jit had to unroll makes one of a new shape per pass (`x[:, i:] @ v`
gives a shorter matrix every pass). Measured here: an unrolled covariance loop, 20 products
in 245 equations, 6.2 s (40 products: 13 s); an unrolled LU of 12 rows, 144 products in 1,902
equations, 24 s; forward substitution unrolled 100 times, 16 s; while rolled loop nests of
200-1,600 equations with two products compile in 1.5-3 s.
"""
from __future__ import annotations

import math

from .. import budget
from ..ir import Graph, Literal, SourceInfo, Var, subgraphs
from ..tracing import BudgetExceeded

SECONDS_BASE = 0.05
SECONDS_PER_EQUATION = 2e-4
SECONDS_PER_CHAIN_MOVES = 2.5e-3         # times (slices, pads, concatenations of a chain) ** 1.5
SECONDS_PER_PRODUCT = 0.2                # each dot_general: code generated for its shape
MOVEMENT = frozenset({"slice", "pad", "concatenate", "rev", "dynamic_slice"})
FUSIBLE = MOVEMENT | {"broadcast_in_dim", "reshape", "transpose", "iota", "convert_element_type",
                      "select", "real", "imag", "complex"}


def estimate_compile_seconds(graph: Graph) -> float:
    """XLA's compile time for this graph, roughly (seconds on one core of this machine)."""
    return SECONDS_BASE + _computation_seconds(graph)


def _computation_seconds(graph: Graph) -> float:
    seconds = SECONDS_PER_EQUATION * len(graph.eqns)
    seconds += SECONDS_PER_PRODUCT * sum(e.prim.name == "dot_general" for e in graph.eqns)
    for moves in _chains(graph):
        seconds += SECONDS_PER_CHAIN_MOVES * moves ** 1.5
    for eqn in graph.eqns:
        for sub in subgraphs(eqn):
            seconds += _computation_seconds(sub)
    return seconds


def _fusible(eqn) -> bool:
    return bool(eqn.prim.ufuncs) or eqn.prim.name in FUSIBLE


def _chains(graph: Graph) -> list[int]:
    """Per chain of fused-together equations, its number of data-movement equations."""
    outputs = {id(a) for a in graph.out_atoms if isinstance(a, Var)}
    producer: dict[int, int] = {}
    parent = list(range(len(graph.eqns)))

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for k, eqn in enumerate(graph.eqns):
        for atom in eqn.inputs:
            p = producer.get(id(atom))
            if p is not None and _fusible(graph.eqns[p]) and id(atom) not in outputs:
                parent[find(p)] = find(k)
        producer.update((id(v), k) for v in eqn.outs)
    moves: dict[int, int] = {}
    for k, eqn in enumerate(graph.eqns):
        if eqn.prim.name in MOVEMENT:
            root = find(k)
            moves[root] = moves.get(root, 0) + 1
    return list(moves.values())


def check_compile_budget(graph: Graph, notes=()) -> float:
    """The estimate; BudgetExceeded (naming the line that contributes most equations, and what
    made the program large) when it is over `Budget.max_compile_seconds`."""
    seconds = estimate_compile_seconds(graph)
    limit = budget.current().max_compile_seconds
    if seconds > limit:
        size = sum(1 for _ in graph.all_eqns())
        hint = "; ".join(notes) or ("split the work into smaller programs, or roll the loops "
                                    "that made it large")
        raise BudgetExceeded(
            f"XLA would take about {_duration(seconds)} to compile this program of {size:,} "
            f"equations, over psc_jit's budget of {_duration(limit)} "
            "(Budget.max_compile_seconds)", busiest_line(graph), hint)
    return seconds


def busiest_line(graph: Graph) -> SourceInfo | None:
    """The source line most equations come from."""
    counts: dict[tuple[str, int], int] = {}
    for eqn in graph.all_eqns():
        if eqn.source is not None:
            key = (eqn.source.file, eqn.source.line)
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return None
    file, line = max(counts, key=counts.__getitem__)
    return SourceInfo(file, line)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.0f} hours"


# -- how long a run takes: whether it may run on the calling thread ---------------------------

# A program estimated to run at most this long runs inline, where an interrupt waits for its
# end: the estimate is meant to be an upper bound (bench/interrupts.py prints it beside the
# run), and one 20x under still ends within a second. Inline runs of mid-sized programs are
# also the fast ones: x * 2 + 1 on 1M float64 took 260-310 µs inline, 560-790 on XLA's
# thread (estimated 6.4 ms).
INLINE_SECONDS = 0.05
BYTES_PER_SECOND = 1e10     # what the estimate charges for memory traffic (a low guess)
FLOPS_PER_SECOND = 1e10     # and for arithmetic in contractions and factorizations
SECONDS_PER_EQUATION_RUN = 1e-7     # each run of an equation (a kernel, a loop's step)
SECONDS_PER_TRANSCENDENTAL = 1e-8   # per element of exp, sin, power, ... (measured 2-8 ns)
SECONDS_PER_COMPARISON = 1e-8       # per n log2 n of a sort (measured 7 ns, argsort 5)
SECONDS_PER_SCAN_STEP = 5e-9        # per step of a cumulative loop (measured 2-5 ns)
FACTORIZATIONS = frozenset({"cholesky", "triangular_solve", "lu", "eigh", "svd", "geqrf",
                            "householder_product", "householder_apply"})
TRANSCENDENTAL = frozenset({"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt",
                            "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos",
                            "arctan", "arcsinh", "arccosh", "arctanh", "arctan2", "power",
                            "hypot", "nextafter"})
SORTS = frozenset({"sort", "argsort"})
SCANS = frozenset({"cumsum", "cumprod", "cummax", "cummin"})
# Time linear in memory traffic (elementwise primitives, those of its ufuncs, are too).
LINEAR_TIME = FUSIBLE | {"reduce_sum", "reduce_sums", "reduce_prod", "reduce_max", "reduce_min",
                         "reduce_and", "reduce_or", "argmax", "argmin", "gather", "scatter",
                         "dynamic_update_slice", "bitcast_convert", "sharding_constraint", "psum",
                         "all_gather"}
MODELLED = LINEAR_TIME | FACTORIZATIONS | TRANSCENDENTAL | SORTS | SCANS | {
    "dot_general", "correlate", "window_matvec", "window_dot", "fft", "while_loop", "cond"}


def runs_briefly(graph: Graph) -> bool:
    """Whether a run of this program is known to take at most about INLINE_SECONDS whatever
    its input values: every loop in it has a trip count fixed when it was traced, every
    primitive has a model of its time, and the estimate is small. Such a program runs on the
    calling thread (`xla.Executable`), where an interrupt would wait for its end; any other
    runs where an interrupt stops the wait at once. Meant to tell a millisecond from a
    second, erring on the long side."""
    seconds = run_seconds(graph)
    return seconds is not None and seconds <= INLINE_SECONDS


def run_seconds(graph: Graph) -> float | None:
    """A generous estimate of one run's time; None when it depends on the input values (a
    while loop with neither a trip count nor a counter bound, see `_counter_bound`) or a
    primitive has no model of its time."""
    total = 0.0
    producers: dict[int, object] = {}
    for eqn in graph.eqns:
        seconds = _eqn_seconds(eqn, producers)
        if seconds is None:
            return None
        total += seconds
        producers.update((id(v), eqn) for v in eqn.outs)
    return total


def _eqn_seconds(eqn, producers: dict) -> float | None:
    if not eqn.prim.ufuncs and eqn.prim.name not in MODELLED:
        return None
    if eqn.prim.name == "while_loop":
        trips = eqn.params.get("trip_count")
        if trips is None:
            trips = _counter_bound(eqn, producers)
        bodies = [run_seconds(sub) for sub in subgraphs(eqn)]
        if trips is None or None in bodies:
            return None
        return (trips + 1) * (sum(bodies) + SECONDS_PER_EQUATION_RUN)
    branches = [run_seconds(sub) for sub in subgraphs(eqn)]
    if None in branches:
        return None
    return max(branches, default=0.0) + SECONDS_PER_EQUATION_RUN + \
        _traffic(eqn) / BYTES_PER_SECOND + _arithmetic(eqn) / FLOPS_PER_SECOND + \
        _element_seconds(eqn)


def _traffic(eqn) -> int:
    if eqn.prim.name == "window_dot":    # two lines at most, read in place out of a matrix
        return 2 * eqn.outs[0].aval.dtype.itemsize * max(eqn.inputs[0].aval.shape)
    return sum(a.aval.nbytes for a in eqn.inputs) + sum(v.aval.nbytes for v in eqn.outs)


def _arithmetic(eqn) -> float:
    name = eqn.prim.name
    if name == "dot_general":
        lhs_contracting = eqn.params["contracting"][0]
        lhs = eqn.inputs[0].aval
        contracted = math.prod(lhs.shape[d] for d in lhs_contracting)
        return 2.0 * eqn.outs[0].aval.size * contracted
    if name == "correlate":         # every output element is a dot product with the kernel
        return 2.0 * eqn.outs[0].aval.size * eqn.inputs[1].aval.size
    if name == "window_matvec":
        return 2.0 * eqn.inputs[0].aval.size
    if name == "window_dot":        # at most a whole line of its first operand
        return 2.0 * max(eqn.inputs[0].aval.shape)
    if name in FACTORIZATIONS:
        largest = max(eqn.inputs, key=lambda a: a.aval.size).aval
        side = max(largest.shape[-2:], default=1)
        return 10.0 * largest.size * side
    if name == "fft":
        size = max(a.aval.size for a in eqn.inputs)
        return 10.0 * size * max(math.log2(max(size, 2)), 1.0)
    return 0.0


def _element_seconds(eqn) -> float:
    """What an equation costs beyond its traffic and arithmetic, per element: transcendental
    functions, sorts' comparisons, cumulative loops' steps."""
    name = eqn.prim.name
    if name in TRANSCENDENTAL:
        return eqn.outs[0].aval.size * SECONDS_PER_TRANSCENDENTAL
    if name in SORTS:
        size = max(a.aval.size for a in eqn.inputs)
        return size * max(math.log2(max(size, 2)), 1.0) * SECONDS_PER_COMPARISON
    if name in SCANS:
        return eqn.inputs[0].aval.size * SECONDS_PER_SCAN_STEP
    return 0.0


# -- a bound on a while loop's trips from a counter in its condition --------------------------

PASS_THROUGH = frozenset({"convert_element_type", "broadcast_in_dim", "reshape"})


def _counter_bound(eqn, producers: dict) -> int | None:
    """The most trips a while loop can make when its condition is a conjunction with a term
    `counter < N` (or `<= N`) for a literal N, the body adds 1 to that counter and nothing
    else to it, and it starts from a constant (`while err > tol and it < 100: ...; it += 1`);
    None otherwise."""
    params = eqn.params
    cond, body = params["cond_graph"], params["body_graph"]
    carried = eqn.inputs[params["cond_nconsts"] + params["body_nconsts"]:]
    cond_carried = cond.in_vars[params["cond_nconsts"]:]
    body_carried = body.in_vars[params["body_nconsts"]:]
    bounds = []
    for k, limit in _counter_limits(cond, cond_carried):
        start = _constant(carried[k], producers)
        if start is not None and _adds_one(body, body_carried[k], body.out_atoms[k]):
            bounds.append(max(limit - start, 0))
    return min(bounds, default=None)


def _counter_limits(cond: Graph, carried) -> list[tuple[int, int]]:
    """(index of a carried value, N) for each term `carried < N` the condition requires."""
    producers = {id(v): e for e in cond.eqns for v in e.outs}
    position = {id(v): k for k, v in enumerate(carried)}
    found, pending = [], [cond.out_atoms[0]]
    while pending:
        eqn = producers.get(id(_through(pending.pop(), producers)))
        if eqn is None:
            continue
        name = eqn.prim.name
        if name == "logical_and":
            pending.extend(eqn.inputs)
        elif name in ("less", "less_equal"):
            counter, limit = _through(eqn.inputs[0], producers), eqn.inputs[1]
            if id(counter) in position and _integer_literal(limit) is not None:
                found.append((position[id(counter)],
                              _integer_literal(limit) + (name == "less_equal")))
    return found


def _adds_one(body: Graph, counter, result) -> bool:
    producers = {id(v): e for e in body.eqns for v in e.outs}
    eqn = producers.get(id(_through(result, producers)))
    return (eqn is not None and eqn.prim.name == "add" and
            _through(eqn.inputs[0], producers) is counter and
            _integer_literal(eqn.inputs[1]) == 1)


def _through(atom, producers: dict):
    """The atom a chain of casts, broadcasts to a scalar and reshapes starts from."""
    while isinstance(atom, Var) and atom.aval.shape == ():
        eqn = producers.get(id(atom))
        if eqn is None or eqn.prim.name not in PASS_THROUGH or eqn.inputs[0].aval.shape != ():
            break
        atom = eqn.inputs[0]
    return atom


def _constant(atom, producers: dict) -> int | None:
    return _integer_literal(_through(atom, producers))


def _integer_literal(atom) -> int | None:
    if isinstance(atom, Literal) and atom.aval.shape == () and atom.aval.dtype.kind in "iu":
        return int(atom.value)
    return None
