"""Lowering to StableHLO text: op locations, and constants that survive the trip through XLA.

The text tests are `pure`; the round trips through a compiled program are `xla`."""
from __future__ import annotations

import re

import numpy as np
import pytest
from psc_jit.core.ir import Eqn, Graph, Literal, ShapedArray, SourceInfo, Var
from psc_jit.core.lowering import dense_attr, lower
from psc_jit.core.primitives import PRIMITIVES

PRIMS = PRIMITIVES
F64_3 = ShapedArray((3,), np.float64)
OP_LINE = re.compile(r'^\s*(%\S+ = )?"(?!func\.return)[a-z]+\.[a-z_]+"')
LOC = re.compile(r'loc\("(e\d+:\w+)"\("((?:[^"\\]|\\.)*)":(\d+):(\d+)\)\)$')


def graph_of(in_avals, build, file="cell_7") -> Graph:
    """A graph of the equations `build(emit, *inputs)` makes; equation n sits on line 10 + n."""
    in_vars = tuple(Var(aval) for aval in in_avals)
    eqns = []

    def emit(name, *atoms, **params):
        prim = PRIMS[name]
        outs = tuple(Var(aval) for aval in prim.abstract_eval(*(a.aval for a in atoms),
                                                              **params))
        source = SourceInfo(file, 10 + len(eqns), 4 + len(eqns))
        eqns.append(Eqn(prim, atoms, params, outs, source))
        return outs[0]
    outs = tuple(build(emit, *in_vars))
    return Graph(in_vars, tuple(eqns), outs)


def several_ops(emit, x, i):
    """Equations whose lowerings emit one op, many ops, regions and sub-graphs."""
    y = emit("sin", x)
    z = emit("floor_divide", y, x)
    total = emit("reduce_sum", z, axes=(0,))
    (ordered,) = [emit("sort", z, dimension=0, num_keys=1)]
    body = graph_of([ShapedArray((), np.int32)],
                    lambda emit, j: [emit("add", j, Literal.of(np.int32(1)))])
    cond = graph_of([ShapedArray((), np.int32)],
                    lambda emit, j: [emit("less", j, Literal.of(np.int32(5)))])
    count = emit("while_loop", i, cond_graph=cond, body_graph=body, cond_nconsts=0,
                 body_nconsts=0)
    return [total, ordered, count]


def op_lines(text: str) -> list[str]:
    """The line of every op that carries its location: the op's own line, or for an op with
    regions the line closing them (`}) {attrs} : type loc(...)`)."""
    return [line for line in text.splitlines()
            if (OP_LINE.match(line) and not line.endswith("({")) or line.lstrip().startswith("})")]


@pytest.mark.pure
def test_every_op_carries_its_equation_and_source_line():
    graph = graph_of([F64_3, ShapedArray((), np.int32)], several_ops)
    text = lower(graph)
    labels = graph.labels()
    sources = {labels[eqn.id]: eqn.source for eqn in graph.all_eqns()}
    lines = op_lines(text)
    assert len(lines) > len(sources)
    seen = set()
    for line in lines:
        match = LOC.search(line)
        assert match, f"no location on: {line.strip()}"
        label, file, line_no, column = match.groups()
        source = sources[label]
        assert (file, int(line_no), int(column)) == (source.file, source.line, source.column)
        seen.add(label)
    assert seen == set(sources), "an equation emitted no op"


@pytest.mark.pure
def test_labels_name_the_position_and_the_primitive():
    graph = graph_of([F64_3, ShapedArray((), np.int32)], several_ops)
    labels = [graph.labels()[eqn.id] for eqn in graph.all_eqns()]
    assert labels[:3] == ["e0:sin", "e1:floor_divide", "e2:reduce_sum"]
    assert all(label.startswith(f"e{n}:") for n, label in enumerate(labels))


@pytest.mark.pure
def test_the_same_graph_lowers_to_the_same_text():
    graph = graph_of([F64_3, ShapedArray((), np.int32)], several_ops)
    assert lower(graph) == lower(graph)


@pytest.mark.pure
def test_file_names_are_quoted():
    graph = graph_of([F64_3], lambda emit, x: [emit("sin", x)], file='C:\\cells\\"odd".py')
    (line,) = op_lines(lower(graph))
    assert r'loc("e0:sin"("C:\\cells\\\"odd\".py":10:4))' in line


# -- constants --------------------------------------------------------------------------------

F16_NAN_PAYLOAD = np.array(0x7E01, np.uint16).view(np.float16)
CONSTANTS = {
    "nan": np.array(np.nan),
    "-nan": -np.array(np.nan, np.float32),
    "nan-payload-f16": F16_NAN_PAYLOAD,
    "inf": np.array(np.inf, np.float16),
    "-inf": np.full((2, 2), -np.inf),
    "-0.0": np.array(-0.0),
    "-0.0-splat": np.full((3,), -0.0, np.float32),
    "mixed-specials": np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1e-300, 5e-324]),
    "exponent-splat": np.full((2,), 1e-300),
    "float32-exponent-splat": np.full((2,), 1e20, np.float32),
    "float16-values": np.array([0.1, 65504, -6.1e-5, np.nan], np.float16),
    "float32-values": np.array([[0.1, 3.4028235e38], [-1.1754944e-38, np.pi]], np.float32),
    "complex-splat": np.full((2,), complex(np.nan, -0.0), np.complex64),
    "complex-values": np.array([1 + 2j, complex(np.inf, np.nan), -0.0j], np.complex128),
    "int64-extremes": np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0]),
    "int64-min-splat": np.full((2,), np.iinfo(np.int64).min),
    "uint64-max": np.array(np.iinfo(np.uint64).max, np.uint64),
    "uint8-values": np.array([0, 255, 7], np.uint8),
    "int8-splat": np.full((4,), -128, np.int8),
    "bool-true-splat": np.ones((2, 3), bool),
    "bool-false-0d": np.array(False),
    "bool-values": np.array([[True, False], [False, True]]),
    "empty-float": np.zeros((0,)),
    "empty-bool": np.zeros((2, 0), bool),
}


def constant_graph(value: np.ndarray) -> Graph:
    """The constant, passed through one equation (so its op has that equation's location)."""
    literal = Literal.of(value)
    return graph_of([], lambda emit: [emit("reshape", literal, new_shape=value.shape)])


@pytest.mark.pure
def test_splat_and_non_splat_constants_are_written_as_such():
    assert dense_attr(np.full((2,), -0.0), F64_3.update(shape=(2,))) == \
        "dense<-0.0> : tensor<2xf64>"
    assert dense_attr(np.array(np.nan, np.float32), ShapedArray((), np.float32)) == \
        "dense<0x7FC00000> : tensor<f32>"
    bools = np.array([True, False])
    assert dense_attr(bools, ShapedArray((2,), bool)) == "dense<[true, false]> : tensor<2xi1>"
    assert dense_attr(np.array([1.0, 2.0]), F64_3.update(shape=(2,))).startswith('dense<"0x')


@pytest.mark.pure
@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_constant_op_carries_a_location(name):
    text = lower(constant_graph(CONSTANTS[name]))
    (constant,) = [line for line in op_lines(text) if "stablehlo.constant" in line]
    assert LOC.search(constant)


@pytest.mark.xla
@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_constants_round_trip_through_xla_bit_for_bit(compile_cached, name):
    value = CONSTANTS[name]
    graph = constant_graph(value)
    (got,) = compile_cached(lower(graph), graph.in_avals, graph.out_avals).execute([])
    assert (got.dtype, got.shape) == (value.dtype, value.shape)
    assert got.tobytes() == np.ascontiguousarray(value).tobytes()


ADDED_ZEROS = {
    "x + 0.0": lambda x: x + 0.0,
    "0.0 + x": lambda x: 0.0 + x,
    "x - -0.0": lambda x: x - (-0.0),
    "x + -0.0": lambda x: x + (-0.0),
    "zeros_like(x) + x": lambda x: np.zeros_like(x) + x,
    "x + zeros (large)": lambda x: x + np.zeros((70000, 5)),
    "complex": lambda x: (x * 1j + x) + 0j,
}


@pytest.mark.xla
@pytest.mark.parametrize("name", ADDED_ZEROS)
def test_an_added_constant_zero_gives_ieees_signed_zero(name):
    """XLA's simplifier folds x + 0.0 into x; NumPy (IEEE) makes -0.0 + 0.0 = +0.0."""
    from psc_jit.core import jit
    fn = ADDED_ZEROS[name]
    x = np.array([-0.0, 0.0, 1.5, np.nan, -np.inf])
    with np.errstate(invalid="ignore"):
        got, want = jit(fn)(x), fn(x)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(got), part(want))
        np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(want)))


@pytest.mark.xla
def test_only_an_add_of_a_constant_that_may_be_zero_is_guarded():
    from psc_jit.core import jit
    x = np.ones(3)
    assert "stablehlo.select" not in jit(lambda x: x + 1.0).lower(x).as_text()
    assert "stablehlo.select" not in jit(lambda x, y: x + y).lower(x, x).as_text()
    assert "stablehlo.select" in jit(lambda x: x + 0.0).lower(x).as_text()


# -- constants of a large program: splats of scalars, broadcast in the program -----------------

LARGE = 1 << 24     # elements: 128 MiB of float64 (np.empty: never touched)
ELEMENTWISE = {
    "x * 2 + 1": lambda x: x * 2.0 + 1.0,
    "x + 0.0": lambda x: x + 0.0,
    "x - 1": lambda x: x - 1.0,
    "maximum(x, 0)": lambda x: np.maximum(x, 0.0),
    "where(x > 0, x, -1)": lambda x: np.where(x > 0.0, x, -1.0),
    "x * 1j + 0j": lambda x: x * 1j + 0j,
}
CONSTANT_TYPE = re.compile(r'"stablehlo\.constant"\(\) \{value = dense<.*?> : (tensor<[^>]*>)\}')


def lowered_text(fn, n: int) -> str:
    from psc_jit.core import jit
    return jit(fn).lower(np.empty(n)).as_text()


@pytest.mark.xla
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_a_large_input_lowers_to_the_text_of_a_small_one(name):
    """Only the shapes differ: no rule decides otherwise because a constant is large (one
    too large to evaluate was taken as a possible zero), and no constant grows with it."""
    small, large = (lowered_text(ELEMENTWISE[name], n) for n in (16, LARGE))
    assert large.replace(f"{LARGE}x", "16x") == small


@pytest.mark.xla
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_constants_are_scalars_broadcast_in_the_program(name):
    """XLA makes a literal of each constant it is given and keeps it in the executable: a
    splat of the input's shape was a second copy of the input, for as long as the program."""
    types = CONSTANT_TYPE.findall(lowered_text(ELEMENTWISE[name], LARGE))
    assert types and all("x" not in t for t in types), types


@pytest.mark.xla
def test_lowering_a_large_program_allocates_nothing_of_its_size():
    """`.lower()` on a 128 MiB input: the zero-sign rule's splat and its check were two
    arrays of the input's size."""
    import tracemalloc
    from psc_jit.core import jit
    x = np.empty(LARGE)
    traced = jit(ELEMENTWISE["x + 0.0"]).trace(x)
    tracemalloc.start()
    try:
        traced.lower()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < x.nbytes / 64, peak


@pytest.mark.pure
def test_a_broadcast_splat_is_written_from_its_one_element():
    view = np.broadcast_to(np.float64(-0.0), (1 << 40,))     # 8 TiB, were it spelled out
    assert dense_attr(view, ShapedArray(view.shape, np.float64)) == \
        f"dense<-0.0> : tensor<{1 << 40}xf64>"
