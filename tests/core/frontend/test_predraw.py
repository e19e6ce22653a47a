"""A host loop's draws made before it: for every method in PREDRAWABLE, one draw of size
(n, *shape) gives the numbers of n draws of size shape in order, and leaves the generator in
their state, over the bit generators, seeds, sizes and dtypes; the methods left out do not.
And which loops have a predraw at all."""
import ast

import numpy as np
import pytest
from psc_jit.core.frontend.predraw import PREDRAWABLE, PreDraw
from psc_jit.core.frontend.regions import HostBlock, plan_cell

pytestmark = pytest.mark.pure

BIT_GENERATORS = (np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64,
                  np.random.PCG64DXSM)
# arguments of each method (besides size), as a user passes them
ARGUMENTS = {
    "random": [(), {"dtype": np.float32}], "random_sample": [()], "standard_normal":
    [(), {"dtype": np.float32}], "normal": [(0.5, 2.0)], "uniform": [(-1, 3)],
    "exponential": [(2.0,)], "standard_exponential": [(), {"dtype": np.float32},
                                                      {"method": "inv"}],
    "gamma": [(2.0,)], "standard_gamma": [(2.0,), (0.5, {"dtype": np.float32})],
    "beta": [(2.0, 3.0)], "lognormal": [(0, 1)], "laplace": [(0, 1)], "logistic": [(0, 1)],
    "gumbel": [(0, 1)], "rayleigh": [(1,)], "weibull": [(2,)], "pareto": [(2,)],
    "power": [(2,)], "chisquare": [(3,)], "standard_t": [(3,)], "standard_cauchy": [()],
    "f": [(3, 4)], "wald": [(1, 1)], "triangular": [(0, 1, 2)], "vonmises": [(0, 1)],
    "poisson": [(3.0,)], "binomial": [(10, 0.3)], "negative_binomial": [(5, 0.5)],
    "geometric": [(0.3,)], "hypergeometric": [(10, 5, 6)], "zipf": [(2,)],
    "logseries": [(0.5,)],
    "integers": [(0, 10), (5,), (0, 2**40), (0, 10, {"dtype": np.int32}),
                 (0, 200, {"dtype": np.uint32}), (0, 10, {"endpoint": True})],
    "randint": [(0, 10), (5,), (0, 2**40), (0, 10, {"dtype": np.int32})],
}
SIZES = (1, 2, 3, 7, (2, 3), (3, 1))
PASSES = (1, 2, 5)


def _split(case):
    if isinstance(case, dict):
        return (), case
    if case and isinstance(case[-1], dict):
        return case[:-1], case[-1]
    return case, {}


def _makers(method):
    generator = lambda bits: (lambda seed: np.random.Generator(bits(seed)))   # noqa: E731
    legacy = lambda bits: (lambda seed: np.random.RandomState(bits(seed)))    # noqa: E731
    kinds = [generator, legacy]
    return [kind(bits) for kind in kinds for bits in BIT_GENERATORS
            if hasattr(kind(bits)(0), method)]


def _state(owner):
    return repr(owner.bit_generator.state if isinstance(owner, np.random.Generator)
                else owner.get_state(legacy=False))


def _batched_equals_passes(make, method, args, kwargs, seeds=range(3)):
    """Whether they are equal (None: this generator takes no such arguments)."""
    try:
        getattr(make(0), method)(*args, size=1, **kwargs)
    except TypeError:
        return None
    for seed in seeds:
        for size in SIZES:
            shape = (size,) if isinstance(size, int) else size
            for n in PASSES:
                one, many = make(seed), make(seed)
                passes = [getattr(many, method)(*args, size=size, **kwargs) for _ in range(n)]
                batched = getattr(one, method)(*args, size=(n, *shape), **kwargs)
                stacked = np.stack(passes)
                if (stacked.dtype, stacked.shape, stacked.tobytes()) != \
                        (batched.dtype, batched.shape, batched.tobytes()) or \
                        _state(one) != _state(many):
                    return False
    return True


@pytest.mark.parametrize("method", sorted(PREDRAWABLE - {"rand", "randn"}))
def test_one_draw_of_n_rows_is_n_draws_in_order_for_every_predrawable_method(method):
    makers = _makers(method)
    assert makers and method in ARGUMENTS
    for case in ARGUMENTS[method]:
        args, kwargs = _split(case)
        equal = [_batched_equals_passes(make, method, args, kwargs) for make in makers]
        assert all(e is not False for e in equal) and any(equal), (method, case)


@pytest.mark.parametrize("method", ["rand", "randn"])
def test_the_legacy_shape_arguments_draw_as_rows_too(method):
    for bits in BIT_GENERATORS:
        for seed in range(3):
            for dims in ((1,), (3,), (2, 3)):
                for n in PASSES:
                    one = np.random.RandomState(bits(seed))
                    many = np.random.RandomState(bits(seed))
                    passes = np.stack([getattr(many, method)(*dims) for _ in range(n)])
                    batched = getattr(one, method)(n, *dims)
                    assert passes.tobytes() == batched.tobytes()
                    assert _state(one) == _state(many)


@pytest.mark.parametrize("method, args, kwargs", [
    ("integers", (0, 10), {"dtype": np.uint8}), ("integers", (0, 10), {"dtype": np.int16}),
    ("integers", (0, 2), {"dtype": bool}), ("randint", (0, 10), {"dtype": np.int8}),
    ("choice", (5,), {"replace": False}),
])
def test_the_methods_left_out_do_differ(method, args, kwargs):
    """Why they are left out: NumPy buffers their bits within one call."""
    makers = _makers(method)
    equal = [_batched_equals_passes(make, method, args, kwargs) for make in makers]
    assert False in equal


def _predraw(source):
    tree = ast.parse(source)
    plan = plan_cell(tree, {2: "a generator draws its numbers outside XLA"})  # (as a trace finds)
    return next(part for part in plan if isinstance(part, HostBlock)).predraw


@pytest.mark.parametrize("source", [
    "for i in range(5):\n    x = x + np.random.rand(3)\n",
    "for i in range(2, 9, 3):\n    a = np.random.normal(0, 1, size=n) * 2\n    b = a.sum()\n",
    "for k in range(n):\n    x = np.sqrt(x) + np.random.randn(2, 2)\n",
])
def test_a_range_loop_whose_host_steps_are_draws_has_a_predraw(source):
    assert isinstance(_predraw(source), PreDraw)


@pytest.mark.parametrize("source", [
    "for i in range(5):\n    x = np.random.rand(3)\n    print(x)\n",          # another host step
    "for i in range(5):\n    x = np.random.rand(i + 1)\n",                   # varies by pass
    "for i in range(5):\n    x = np.random.rand(3) if i else 0\n",           # sometimes
    "for i in range(5):\n    np.random.seed(i)\n    x = np.random.rand(3)\n",
    "for i in range(5):\n    x = np.random.choice(3, size=2)\n",             # not row by row
    "for i in range(5):\n    if i:\n        x = np.random.rand(3)\n",        # in a branch
    "for i in [1, 2]:\n    x = np.random.rand(3)\n",                         # not a range
    "for i in range(5):\n    x = np.random.rand(3)\nelse:\n    y = 1\n",
    "for i in range(5):\n    n = n + 1\n    x = np.random.rand(n)\n",        # rebound
])
def test_a_loop_whose_draws_cannot_be_made_before_it_has_none(source):
    assert _predraw(source) is None


def test_the_run_time_check_refuses_what_the_source_cannot_tell():
    predraw = _predraw("for i in range(4):\n    x = g.integers(0, 9, size=3, dtype=d)\n")
    rng = np.random.default_rng(0)
    before = _state(rng)
    assert isinstance(predraw.draw({"g": rng, "d": np.uint8, "np": np}, range(4)), str)
    assert isinstance(predraw.draw({"g": [1], "d": np.int64, "np": np}, range(4)), str)
    assert isinstance(predraw.draw({"g": rng, "d": np.int64, "np": np}, [0, 1]), str)
    assert _state(rng) == before
    names, put_back = predraw.draw({"g": rng, "d": np.int64, "np": np}, range(4))
    assert names["__psc_draw0"].shape == (4, 3) and _state(rng) != before
    put_back()
    assert _state(rng) == before


def test_two_draws_of_one_generator_are_not_made_before_the_loop():
    predraw = _predraw("for i in range(4):\n    x = g.random(3) + h.random(3)\n")
    rng = np.random.default_rng(0)
    assert isinstance(predraw.draw({"g": rng, "h": rng}, range(4)), str)
    names, _ = predraw.draw({"g": rng, "h": np.random.default_rng(1)}, range(4))
    assert len(names) == 5


def test_draws_that_raise_or_are_too_many_are_not_made_before_the_loop():
    predraw = _predraw("for i in range(4):\n    x = g.integers(lo, 9, size=n)\n")
    rng = np.random.default_rng(0)
    before = _state(rng)
    assert "ValueError" in predraw.draw({"g": rng, "lo": 10, "n": 3}, range(4))
    assert "more than" in predraw.draw({"g": rng, "lo": 0, "n": 1 << 23}, range(4))
    assert _state(rng) == before
