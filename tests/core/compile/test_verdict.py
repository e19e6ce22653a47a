"""Timing plain against compiled: the sides take turns, and the verdict drawn from their
medians and spreads holds from one run of a cell to the next.

A fake machine stands in for the clock: each run advances it by the run's cost times the
machine's load at that moment, which comes in spells (another process busy for a while,
making every run three times slower), plus noise of a few percent. Nothing here reads a
real clock, so nothing here asserts a timing.
"""
from __future__ import annotations

import random

import pytest

from psc_jit.core import CallBreakdown, KernelTimes, Timings, time_interleaved
from psc_jit.core.compile.report import Verdict

pytestmark = pytest.mark.pure


class FakeMachine:
    """A clock, and runs that move it: `cost` seconds times the load (3 during busy spells
    of `spell` seconds that start at random, 1 otherwise) times noise of ±`noise`."""

    def __init__(self, seed: int, noise: float = 0.05, spell: float = 0.02,
                 busy_share: float = 0.3):
        self.now = 0.0
        self.rng = random.Random(seed)
        self.noise, self.spell, self.busy_share = noise, spell, busy_share
        self.busy_until = -1.0
        self.calm_until = 0.0

    def clock(self) -> float:
        return self.now

    def _load(self) -> float:
        if self.now < self.busy_until:
            return 3.0
        if self.now >= self.calm_until:         # a new spell: busy or calm for a while
            if self.rng.random() < self.busy_share:
                self.busy_until = self.now + self.spell
                return 3.0
            self.calm_until = self.now + self.spell
        return 1.0

    def run(self, cost: float):
        def side(inputs):
            self.now += cost * self._load() * self.rng.uniform(1 - self.noise, 1 + self.noise)
            return inputs
        return side


def _verdicts(plain_cost: float, compiled_cost: float, reruns: int = 5, **machine):
    """The verdict of each of `reruns` runs of one cell on one fake machine."""
    found = []
    for seed in range(reruns):
        fake = FakeMachine(seed, **machine)
        times, _ = time_interleaved({"plain": (fake.run(plain_cost), {}),
                                     "compiled": (fake.run(compiled_cost), {})},
                                    budget=0.05, clock=fake.clock)
        found.append(Verdict.of(tuple(times["plain"]), tuple(times["compiled"])))
    return found


@pytest.mark.parametrize("plain_cost, compiled_cost, kind", [
    (1e-3, 0.7e-3, "faster"), (1e-3, 1.4e-3, "slower"), (1e-3, 0.25e-3, "faster"),
    (50e-6, 200e-6, "slower")])
def test_a_cell_rerun_five_times_keeps_its_verdict_when_the_medians_are_apart(
        plain_cost, compiled_cost, kind):
    """The medians differ by more than the noise: busy spells of the machine, which make
    some runs three times slower, never turn the verdict around."""
    verdicts = _verdicts(plain_cost, compiled_cost)
    assert [v.kind for v in verdicts] == [kind] * 5
    for verdict in verdicts:
        assert verdict.ratio == pytest.approx(plain_cost / compiled_cost, rel=0.15)


def test_equal_cells_are_about_the_same_never_faster_or_slower():
    verdicts = _verdicts(1e-3, 1e-3)
    assert [v.kind for v in verdicts] == ["same"] * 5
    for verdict in verdicts:
        text = verdict.text()
        assert text.startswith("about the same as plain Python (±") and text.endswith("%)")
        assert "1× slower" not in text and "1× faster" not in text


def test_without_busy_spells_a_small_difference_is_seen():
    verdicts = _verdicts(1e-3, 0.9e-3, busy_share=0.0, noise=0.01)
    assert [v.kind for v in verdicts] == ["faster"] * 5


def test_the_sides_take_turns_and_the_first_round_warms_up():
    order = []
    fake = FakeMachine(0, noise=0.0, busy_share=0.0)

    def side(name, cost):
        run = fake.run(cost)

        def timed(inputs):
            order.append(name)
            return run(inputs)
        return timed
    times, results = time_interleaved({"plain": (side("plain", 1e-3), {"x": 1}),
                                       "compiled": (side("compiled", 1e-3), {"x": 1})},
                                      budget=0.01, clock=fake.clock)
    assert order[:4] == ["plain", "compiled", "compiled", "plain"]
    rounds = len(order) // 2
    assert len(times["plain"]) == len(times["compiled"]) == rounds - 1     # the warm-up
    assert results == {"plain": {"x": 1}, "compiled": {"x": 1}}


def test_a_slow_cell_is_timed_within_three_times_the_budget():
    fake = FakeMachine(0, noise=0.0, busy_share=0.0)
    times, _ = time_interleaved({"plain": (fake.run(0.6), {}),
                                 "compiled": (fake.run(0.2), {})}, budget=0.5,
                                clock=fake.clock)
    assert fake.now <= 3 * 0.5 * 2
    assert len(times["plain"]) >= 1


def test_ratios_that_hold_one_say_about_the_same_with_the_difference_they_allow():
    plain = (1e-3,) * 5
    compiled = tuple(r * 1e-3 for r in (1.03, 0.97, 1.02, 0.98, 1.00))
    verdict = Verdict.of(plain, compiled)
    assert verdict.kind == "same"
    assert verdict.text() == "about the same as plain Python (±2%)"
    assert verdict.text(versus="") == "about the same (±2%)"


def test_runs_that_are_not_pairs_are_read_by_each_sides_spread():
    assert Verdict.of((1.0e-3, 1.1e-3, 0.9e-3), (0.5e-3, 0.55e-3)).kind == "faster"
    assert Verdict.of((1.0e-3, 1.1e-3, 0.9e-3), (0.95e-3, 1.0e-3)).kind == "same"
    assert Verdict.of((1e-3,), (3e-3,)).kind == "slower"       # one run: ±10% each


def _timings(plain, compiled, breakdown=None, kernel_times=None) -> Timings:
    return Timings(tuple(plain), tuple(compiled), compiled[0], 0.1, 0.0,
                   breakdown=breakdown, kernel_times=kernel_times)


def test_a_slower_verdict_always_says_why_even_when_the_clocked_call_was_faster():
    """The issue's case: the one clocked call came out faster than plain Python, the median
    slower; the reason follows the median."""
    fast_call = CallBreakdown(2e-6, 1e-6, 20e-6, 2e-6, 25e-6)
    timings = _timings([100e-6] * 5, [300e-6] * 5, breakdown=fast_call)
    assert timings.verdict.kind == "slower"
    why = timings.why_slower()
    assert why is not None and "XLA execution takes 240 µs of the 300 µs call" in why
    assert _timings([100e-6] * 5, [300e-6] * 5).why_slower().startswith(
        "the compiled median 300 µs is over plain Python's 100 µs")
    assert _timings([300e-6] * 5, [100e-6] * 5, breakdown=fast_call).why_slower() is None


def test_every_figure_comes_from_the_median():
    """A profiled call that ran 400 times slower than the median (the profiler's own cost)
    gives shares, and the kernels' times are those shares of the median's XLA execution."""
    profiled = KernelTimes({"fusion": 80e-3, "fusion.1": 8e-3}, {"fusion": 1, "fusion.1": 1},
                           ("fusion", "fusion.1"), execute=88e-3)
    call = CallBreakdown(10e-6, 10e-6, 200e-6, 20e-6, 240e-6)
    timings = _timings([1e-3] * 5, [233e-6] * 5, breakdown=call, kernel_times=profiled)
    median_call = timings.median_call
    assert median_call.measured == pytest.approx(233e-6)
    assert median_call.total == pytest.approx(233e-6)
    slowest = timings.kernel_seconds("fusion")
    assert slowest == pytest.approx(80 / 88 * median_call.execute)
    assert slowest < timings.compiled_median
    assert timings.kernel_seconds("missing") is None
