"""The cell fuzzer's parts, and a small budget of it: drawn cells run plain and through
`%%psc_jit` (in a worker process) must end alike. `make fuzz` runs the same for minutes."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import cellgen
from cellgen import Scenario, scenarios
from cell_oracle import VALUE, compare_step, difference, namespace_difference, rounding
from cell_worker import Worker

pytestmark = [pytest.mark.ipython, pytest.mark.xla]



@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.stop()


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_drawn_cells_end_as_plain_python(worker, scenario):
    outcome = worker.run(scenario)
    assert outcome.failure is None, f"{outcome.failure}\n{scenario.text()}"


def test_a_crash_is_a_failure_with_its_cell(worker):
    scenario = Scenario("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "y = 1", ())
    outcome = worker.run(scenario)
    assert outcome.failure[0] == "crash"
    assert worker.run(Scenario("a = np.ones(3)", "y = a * 2", ())).failure is None


def test_a_hang_is_told_from_a_crash_and_the_load_is_not_timed():
    slow = Worker(timeout=10.0)
    try:
        assert slow.run(Scenario("K = 1", "y = K", ())).failure is None
        outcome = slow.run(Scenario("import time", "time.sleep(60)", ()))
        assert outcome.failure == ("hang", "no answer in 10 s")
    finally:
        slow.stop()


def test_the_worker_reports_a_fallback_with_its_reason(worker):
    outcome = worker.run(Scenario("a = np.arange(4.0)", "y = f'{a[1]:.2f}'", ()))
    assert outcome.failure is None and outcome.runs == 1
    assert "the text of a traced value" in outcome.fallbacks[0]


def test_a_scenario_reads_as_cells_a_user_can_paste():
    text = Scenario("a = np.ones(3)", "a += 1", ("a = a * 2",), "--traced n").text()
    assert text.splitlines() == ["# setup", "a = np.ones(3)", "%%psc_jit --traced n", "a += 1",
                                 "# change", "a = a * 2", "# re-run the %%psc_jit cell"]


def test_the_oracle_sees_dtype_type_and_value():
    assert difference(np.float32(1), np.float64(1), "y") is not None
    assert difference(1, np.int64(1), "y") is not None
    assert difference(np.ones(3), np.ones(3) + 1e-15, "y") is not None
    assert difference(np.float64(2.0), 2.0, "y") is None and difference(2.0, np.float64(2.0), "y") is None
    assert difference(np.ones(3, np.float32), np.ones(3, np.float32) * 1.01, "y") is not None
    assert "sign of a zero" in difference(np.array([0.0]), np.array([-0.0]), "y")
    assert difference(np.array([np.nan]), np.array([np.nan]), "y") is None
    assert difference({"k": [1.0]}, {"k": [1.0]}, "d") is None
    assert difference([1.0], [], "L") is not None


def test_the_oracle_sees_a_mask_and_a_subclass_attribute():
    masked = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
    assert "mask" in difference(masked, np.ma.masked_array([1.0, 2.0]), "m")
    assert "type" in difference(masked, np.array([1.0, 2.0]), "m")
    assert difference(masked, masked.copy(), "m") is None
    scenario = Scenario("a = np.ones(3)", "", ())
    ns: dict = {"np": np}
    exec(scenario.setup + "\n" + cellgen.SUBCLASS, ns)
    tagged, other = np.ones(2).view(ns["Tagged"]), np.ones(2).view(ns["Tagged"])
    other.tag = "changed"
    assert "tag" in difference(tagged, other, "m")


@pytest.mark.parametrize("setup", cellgen.SUBCLASS_INPUTS)
def test_a_cell_reading_a_subclass_input_ends_as_plain(worker, setup):
    scenario = Scenario(f"w = np.array([0.5, 2.0, -1.0])\n{cellgen.SUBCLASS}\n{setup}",
                        "y = m * 2\nt = m.sum()", ("m = np.ma.masked_less(w, 0)", "m = w * 1"))
    outcome = worker.run(scenario)
    assert outcome.failure is None, outcome.failure


def test_the_oracle_sees_names_aliases_and_exceptions():
    a = np.ones(3)
    assert "unbound" in namespace_difference({"i"}, {}, {"i": 2})
    assert "share memory" in namespace_difference({"a", "b"}, {"a": a, "b": a},
                                                  {"a": a, "b": a.copy()})
    errors = (ValueError("x"), None)
    assert compare_step("run 1", set(), {}, {}, errors)[0] == "exception"
    errors = (ValueError("x"), ValueError("x"))
    assert compare_step("run 1", set(), {}, {}, errors) is None


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_drawn_scenarios_parse_and_name_what_they_bind(scenario):
    assert scenario.cell.strip()
    assert {"a", "w", "b"} <= scenario.names()
    assert "np" not in scenario.names()


def test_the_oracle_allows_rounding_only_after_an_inexact_operation():
    assert not rounding("a = np.ones(3)", "x0 = a + 1\nx1 = a / 3 * w").names
    f64 = rounding("a = np.ones(3)", "x0 = np.exp(a)").rtol
    f32 = rounding("a = np.ones(3, dtype=np.float32)", "x0 = a.mean()").rtol
    assert f64 == 16 * np.finfo(np.float64).eps and f32 == 16 * np.finfo(np.float32).eps
    assert rounding("", "x0 = a ** 1.5", ["a = a.astype(np.float32)"]).rtol == f32
    # a float32 exp widened to float64 (w + np.exp(a)) keeps its float32 error
    assert difference(np.array([0.08208500]), np.array([0.08208501]), "y", f32) is None
    assert difference(np.array([0.08208500]), np.array([0.08208501]), "y", f64) is not None
    assert difference(np.ones(3), np.ones(3) + 1e-15, "y", f64) is None
    assert difference(np.float32(1), np.float32(1.001), "y", f32) is not None
    # what stays exact: integers, dtypes, NaN positions, infinities, zeros and their signs
    assert difference(np.array([1, 2]), np.array([1, 3]), "y", 1.0) is not None
    assert difference(np.float32(1), np.float64(1), "y", f32) is not None
    assert difference(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), "y", f32) is not None
    assert difference(np.array([np.inf]), np.array([1e308]), "y", f32) is not None
    assert difference(np.array([0.0]), np.array([1e-30]), "y", f32) is not None
    assert "sign of a zero" in difference(np.array([-0.0]), np.array([0.0]), "y", f32)
    assert difference({"k": [np.float32(1)]}, {"k": [np.float32(1 + 1e-7)]}, "d", f32) is None


def test_only_names_an_inexact_operation_reached_may_be_rounded():
    cell = ("x0 = a / 3\nx1 = np.exp(w)\nx2 = x1 + 1\nx3 = x0 * 2\nfor i in range(n):\n"
            "    a += x2\nL.append(x3)\nd['0'] = x2.sum()\nx3 + 1")
    # x0 reads a, which the loop rounds for the re-runs: all but i and n
    assert rounding("b = a", cell).names == {"x0", "x1", "x2", "x3", "a", "b", "d", "L", VALUE}
    assert rounding("b = a", "x0 = a / 3\nx1 = np.exp(w)\nx2 = x0 * 2").names == {"x1"}
    assert rounding("b = w", "x0 = a.sum()\nw *= x0").names == {"x0", "w", "b"}
    assert rounding("", "x0 = a\nx0 += np.tanh(w)").names == {"x0", "a"}
    assert rounding("", "x0 = np.exp(a)\nx0 + 1").names == {"x0", VALUE}
    assert rounding("", "x0 = 2\nnp.exp(a)").names == {VALUE}     # a NumPy call as the value
    assert rounding("", "x0 = 2\nnp.add(a, 1)").names == frozenset()
    assert rounding("", "cfg.out = a.mean()\nL.append(a)").names == {"cfg"}
    # a walrus binds its name inside the value (found by make fuzz: t's sum, 1 ulp apart)
    assert rounding("", "x2 = (t := (a * a).sum()) * 2").names == {"x2", "t"}
    # a change between runs that reads a rounded name binds a rounded name (found by make
    # fuzz: a float32 exp 1 ulp apart, through a masked array the change made of it)
    assert rounding("", "w = np.exp(m)", ["m = np.ma.masked_less(w, 0)"]).names == {"w", "m"}
    assert rounding("", "x1 = m + 1", ["m = np.exp(w)"]).names == frozenset()


def test_the_oracle_replays_roundings_through_cancellation_and_nothing_more():
    """(K ** a) % 2: one ulp of the float32 power is 5e-6 relative of the remainder; plain
    replayed with its power rounded down gives it, so it is explained; a value off by 1e-4 is
    not, nor an integer that no rounding gives."""
    from cell_oracle import marked_cell, replay_explains, shifted
    assert marked_cell("x1 = (K ** a) % 2\ny = np.exp(a).sum()")[1] == 3
    assert shifted(np.float32(1.0), 1) == np.float32(1.0) + 4 * np.finfo(np.float32).eps
    assert np.array_equal(shifted(np.array([0.0, -0.0, np.inf]), -1), [0.0, -0.0, np.inf])
    assert type(shifted(2.0, 1)) is float and type(shifted(np.float32(2), 1)) is np.float32
    setup = "a = np.array([3.5, -2.5], dtype=np.float32)\nK = 3.0"
    cell = "x1 = (K ** a) % 2\nx2 = np.floor(K ** a).astype(np.int64)"
    plain = {"np": np}
    exec(setup, plain)
    exec(cell, plain)
    names, allowed = {"a", "K", "x1", "x2"}, rounding(setup, cell)

    def explained(**changed):
        return replay_explains(setup, cell, [None], names, plain, {**plain, **changed},
                                 (None, None), allowed)
    up = np.float32(np.float32(3.0) ** np.float32(3.5) + 2 * np.spacing(np.float32(46.7))) % 2
    assert explained(x1=np.array([up, plain["x1"][1]], np.float32))
    assert not explained(x1=plain["x1"] + np.float32(1e-4))
    assert not explained(x2=plain["x2"] + 1)
    assert not explained(x1=plain["x1"].astype(np.float64))


def test_the_oracle_flushes_subnormals_only_when_asked():
    from cell_oracle import flushing_subnormals
    tiny = np.array([5.877472e-39], np.float32)
    with flushing_subnormals():
        assert (tiny * np.float32(0.5))[0] == 0 and (tiny + 0)[0] == 0
    assert (tiny * np.float32(0.5))[0] == np.float32(2.938736e-39)
    with flushing_subnormals(False):
        assert (tiny + 0)[0] == tiny[0]


def test_the_oracle_lets_a_max_or_min_reduction_pick_either_zero_and_nothing_else():
    """The sign of a zero from a max/min reduction over both zeros is NumPy's SIMD lanes'; the
    oracle's replays return such a site's zeros with either sign. A product's zero keeps its
    sign, and a non-zero maximum stays exact."""
    from cell_oracle import replay_explains
    setup = "a = np.array([-2.5, 0.0, -0.0], dtype=np.float32)\nn = 0"
    cell = "x0 = (n * a).max()\nx1 = n * a\nx2 = a.min()"
    plain = {"np": np}
    exec(setup, plain)
    exec(cell, plain)
    names, allowed = {"a", "n", "x0", "x1", "x2"}, rounding(setup, cell)

    def explained(**changed):
        return replay_explains(setup, cell, [None], names, plain, {**plain, **changed},
                               (None, None), allowed)
    assert explained(x0=np.float32(-plain["x0"]))
    assert not explained(x1=-plain["x1"])
    assert not explained(x2=np.float32(-2.0))


def test_the_oracle_sees_printed_text_and_random_states():
    from cell_oracle import EXACT, Rounding, printed_difference
    from cell_worker import host_difference
    state = np.random.RandomState(0).get_state(legacy=False)
    other = np.random.RandomState(1).get_state(legacy=False)
    assert host_difference("run 1", ("1.0\n", "1.0\n"), (state, state), EXACT) is None
    assert host_difference("run 1", ("1.0\n", ""), (state, state), EXACT)[0] == "printed text"
    assert host_difference("run 1", ("", ""), (state, other), EXACT)[0] == "random state"
    # numbers printed may differ as the values may: by the rounding allowed, and no more
    rounded = Rounding(1e-15, frozenset({"x0"}))
    assert host_difference("run 1", ("0.30000000000000004\n", "0.3\n"), (state, state),
                           rounded) is None
    assert printed_difference("0.30000000000000004", "0.3", "p") is not None
    assert printed_difference("x 0.3", "y 0.3", "p", 1.0) is not None
    rng = np.random.default_rng(0)
    assert difference(rng, np.random.default_rng(0), "rng") is None
    rng.random()
    assert "state" in difference(rng, np.random.default_rng(0), "rng")
    assert difference(np.random.RandomState(0), np.random.RandomState(1), "rs") is not None


HABITS = {"print": ("print(",), "draw": ("rng.", "rs.", "np.random."),
          "select": ("np.unique(", "np.nonzero(", "> 0]", "np.argwhere(", "np.flatnonzero(",
                     "np.intersect1d(", "np.bincount(")}


def test_host_step_scenarios_hold_the_habits_of_notebook_cells():
    """With host steps, the setup seeds NumPy and makes the generators, and over the examples
    the cells print, draw random numbers and select by the data."""
    seen = set()

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(scenarios(host_steps=True))
    def collect(scenario):
        assert "rng = np.random.default_rng(" in scenario.setup
        seen.update(h for h, words in HABITS.items() if any(w in scenario.cell for w in words))
    collect()
    assert seen == set(HABITS)
