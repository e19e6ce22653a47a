"""Deep loop nests roll level by level: the rewritten code grows with the depth of the nest
(it doubled at every level: an 8-deep nest with a branch took 50 s to rewrite), a name a pass
assigns under an `if` and uses only there is that pass's own (the loop does not carry it, and
rolls), and the plain path of a loop whose body holds loops keeps plain Python's names."""
from __future__ import annotations

import ast
import linecache

import numpy as np
import pytest
from psc_jit import jit
from psc_jit.core.frontend.rewrite import roll_loops

pytestmark = pytest.mark.xla


def nest_source(depth: int) -> str:
    lines = ["def f(S, G):"]
    for level in range(depth):
        lines.append("    " * (level + 1) + f"for i{level} in range(S.shape[{level % 2}]):")
    inner = "    " * (depth + 1)
    total = " + ".join(f"i{level}" for level in range(depth))
    lines += [inner + f"if {total} > 2:",
              inner + f"    t = G[i0] * ({total})",
              inner + "    S[i0, i1] += t.sum()",
              "    return S"]
    return "\n".join(lines) + "\n"


def _size(tree) -> int:
    return sum(1 for _ in ast.walk(tree))


def test_the_rewritten_code_of_a_nest_grows_with_its_depth_not_doubling():
    sizes = [_size(roll_loops(ast.parse(nest_source(d)))) for d in (2, 4, 8)]
    growth_to_4, growth_to_8 = sizes[1] - sizes[0], sizes[2] - sizes[1]
    assert growth_to_8 <= 3 * growth_to_4, sizes


def _run_nest(depth: int):
    source, filename = nest_source(depth), f"<loop nest of depth {depth}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"np": np}
    exec(compile(source, filename, "exec"), scope)
    f = scope["f"]
    S, G = np.zeros((2, 2)), np.arange(6.0).reshape(2, 3)
    return f(S.copy(), G), jit(f)(S.copy(), G), jit(f).trace(S.copy(), G).graph


@pytest.mark.parametrize("depth", [2, 5, 8])
def test_a_deep_nest_with_a_branch_rolls_every_level_and_gives_numpys_values(depth):
    want, got, graph = _run_nest(depth)
    np.testing.assert_array_equal(got, want)
    loops = [e for e in graph.all_eqns() if e.prim.name == "while_loop"]
    assert len(loops) == depth


def test_self_energies_kernel_rolls_and_matches_numpy():
    def self_energies(neigh_idx, dH, G, D, Sigma):
        for k in range(G.shape[0]):
            for E in range(G.shape[1]):
                for q in range(D.shape[0]):
                    for w in range(D.shape[1]):
                        for i in range(D.shape[-2]):
                            for j in range(D.shape[-1]):
                                for a in range(neigh_idx.shape[0]):
                                    for b in range(neigh_idx.shape[1]):
                                        if E - w >= 0:
                                            dHG = G[k, E - w, neigh_idx[a, b]] @ dH[a, b, i]
                                            dHD = dH[a, b, j] * D[q, w, a, b, i, j]
                                            Sigma[k, E, a] += dHG @ dHD
    rng = np.random.default_rng(3)

    def c(*shape):
        return rng.random(shape) + 1j * rng.random(shape)
    neigh = rng.integers(0, 3, (3, 2)).astype(np.int32)
    args = neigh, c(3, 2, 2, 2, 2), c(2, 3, 3, 2, 2), c(2, 2, 3, 2, 2, 2)
    want, got = np.zeros((2, 3, 3, 2, 2), complex), np.zeros((2, 3, 3, 2, 2), complex)
    self_energies(*args, want)
    jit(self_energies)(*args, got)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_a_name_a_branch_assigns_and_uses_is_each_passs_own():
    def f(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            if x[i] > 0.5:
                scaled = x[i] * 2
                out[i] = scaled + 1
        return out
    x = np.random.default_rng(0).random(20)
    np.testing.assert_array_equal(jit(f)(x), f(x))
    # rolled (into a while_loop, or, its `if` being a select, one batched pass): the graph
    # does not grow with the number of passes
    sizes = [len(jit(f).trace(np.resize(x, n)).graph.eqns) for n in (20, 40)]
    assert sizes[0] == sizes[1] < 40


def test_a_name_read_after_the_loop_is_still_carried():
    def f(x):
        last = np.float64(-1.0)
        for i in range(x.shape[0]):
            if x[i] > 0.5:
                last = x[i]
        return last
    for x in (np.array([0.1, 0.9, 0.7, 0.2]), np.array([0.1, 0.2])):
        assert jit(f)(x) == f(x)


def test_the_plain_path_of_a_nest_keeps_plain_pythons_names():
    """One pass of the outer loop (too short to roll) runs its body's function: the names it
    binds are plain Python's after it, and the inner loop still rolls."""
    def f(x):
        for k in range(1):  # noqa: B007 (k is read after the loop)
            total = np.float64(0.0)
            for i in range(x.shape[0]):
                if x[i] > 1.0:
                    total = total + x[i]
        return total, k, i
    x = np.arange(5.0)
    got, want = jit(f)(x), f(x)
    assert float(got[0]) == want[0] and tuple(got[1:]) == want[1:]
    assert any(e.prim.name == "while_loop" for e in jit(f).trace(x).graph.all_eqns())
