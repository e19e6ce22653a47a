"""The notebook corpus (corpus_entries.py) run plain and under `%%psc_jit`: no run of any cell
ends differently from plain (names, dtypes, values, printed text, exceptions, random states).

How many cells compile is measured, not asserted: `tests/corpus/report.py` prints it. Floats
that differ only in their last bits (1e-12 relative) are allowed here, as NumPy's and XLA's
reductions sum in different orders, and counted apart by the report; PSC_CORPUS_EXACT=1
fails on them too."""
import collections
import os

import pytest

from corpus_cells import TAGS, cells_of
from corpus_entries import ENTRIES
from corpus_harness import FAILING, LAST, CorpusRunner

FAILING_HERE = FAILING + ((LAST,) if os.environ.get("PSC_CORPUS_EXACT") else ())


@pytest.fixture(scope="module")
def runner():
    made = CorpusRunner()
    yield made
    made.stop()


# Entries that end differently today, each with words of its known difference (every failing
# run of the entry must show them; anything else fails). An entry is expected to fail (xfail)
# while its difference lasts, and fails when it is gone, so that it is taken off this list.
KNOWN_DIFFERENCES: dict[str, str] = {}


@pytest.mark.ipython
@pytest.mark.xla
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_every_cell_ends_as_the_plain_cell(runner, entry):
    failing = [o for o in runner.run(entry) if o.status in FAILING_HERE]
    known = KNOWN_DIFFERENCES.get(entry.name)
    unknown = [o for o in failing if not known or not any(known in d for d in o.details)]
    assert not unknown, "\n".join(
        [f"{o.label}: {o.status}: " + "; ".join(o.details) for o in unknown] +
        ["", entry.text()])
    assert not known or failing, f"{entry.name} now ends as plain: take it off " \
                                 "KNOWN_DIFFERENCES"
    if failing:
        pytest.xfail(f"known difference: {known}")


@pytest.mark.pure
def test_the_corpus_covers_the_habits_of_notebook_cells():
    """At least 130 cells; every tag but the rare ones on many cells; names unique."""
    cells = cells_of(ENTRIES)
    assert len(cells) >= 130
    assert len({e.name for e in ENTRIES}) == len(ENTRIES)
    tags = collections.Counter(t for entry, index in cells for t in entry.tags(index))
    assert set(tags) == set(TAGS)
    common = ("print", "random", "helper", "data-dependent", "loop", "error", "inplace",
              "reduction", "linalg", "format", "depends", "rerun")
    assert {t: tags[t] for t in common if tags[t] < 10} == {}


@pytest.mark.pure
def test_tags_are_read_from_the_source():
    from corpus_cells import entry, twice
    e = entry("t", "import numpy as np\ndef f(v):\n    return v", """
        x = np.random.rand(3)
        y = x[x > 0.5]
        print(f"{y.sum():.2f}")
        %timeit -n1 x + 1
        """, twice("z = f(y) @ np.ones(len(y))"))
    assert e.tags(0) >= {"random", "data-dependent", "print", "format", "magic", "reduction"}
    assert e.tags(1) >= {"helper", "depends", "linalg", "rerun"}
    assert "data-dependent" in entry("m", "", "m = a > 0\nb = a[m]").tags(0)
    assert "random" not in entry("r", "", "a = np.random").tags(0)


@pytest.mark.pure
def test_values_compare_exactly_and_last_bits_are_counted_apart():
    import numpy as np
    from corpus_harness import DIFFERS, value_difference
    from corpus_snapshot import Opaque, snapshot
    assert value_difference(np.arange(3.0), np.arange(3.0), "x") is None
    assert value_difference(1.0, 1.0 + 2e-16, "x")[0] == LAST
    assert value_difference(np.array([1.0]), np.array([1.0 + 1e-9]), "x")[0] == DIFFERS
    assert value_difference(np.float32(1), np.float64(1), "x")[0] == DIFFERS
    assert value_difference(1.0, np.float64(1.0), "x")[0] == DIFFERS
    assert value_difference(np.array([0.0]), np.array([-0.0]), "x")[0] == DIFFERS
    assert value_difference(np.array([np.nan]), np.array([np.nan]), "x") is None
    assert value_difference(np.arange(3), np.arange(3).astype(np.int32), "x")[0] == DIFFERS
    assert value_difference("a", "b", "s")[0] == DIFFERS
    assert value_difference([1, 2.0], [1, 2.0 + 4e-16], "L")[0] == LAST
    # an array's floats are measured against its largest: a sum in another order that
    # cancels (err = pred - y) moves its small elements by the rounding of the large ones
    cancelled = np.array([1.0, 1e-6])
    assert value_difference(cancelled, cancelled + [0, 1e-17], "err")[0] == LAST
    assert value_difference(cancelled, cancelled + [0, 1e-9], "err")[0] == DIFFERS
    assert value_difference(np.array([1.0, np.inf]), np.array([1.0 + 4e-16, -np.inf]),
                            "x")[0] == DIFFERS
    functions = Opaque("function", ("__main__", "f")), Opaque("function", ("__main__", "g.f"))
    assert value_difference(*functions, "f")[0] == DIFFERS
    drawn = np.random.default_rng(0)
    moved = np.random.default_rng(0)
    moved.random()
    assert value_difference(snapshot(drawn), snapshot(np.random.default_rng(0)), "r") is None
    assert value_difference(snapshot(drawn), snapshot(moved), "r")[0] == DIFFERS
    assert value_difference(snapshot(np.random.RandomState(1)),
                            snapshot(np.random.RandomState(2)), "rs")[0] == DIFFERS


@pytest.mark.pure
def test_printed_text_compares_byte_for_byte_but_timings_and_addresses():
    from corpus_harness import DIFFERS, text_difference
    assert text_difference("a\n", "a\n") is None
    assert text_difference("7.61 us +- 16 us per loop (mean +- std. dev. of 7 runs, 1 loop "
                           "each)\n", "9.1 us +- 2 us per loop (mean +- std. dev. of 7 runs, 1 "
                           "loop each)\n") is None
    assert text_difference("Wall time: 10.3 us\n", "Wall time: 12 us\n") is None
    assert text_difference("<function f at 0x7f01>\n", "<function f at 0x7f99>\n") is None
    assert text_difference("0.30000000000000004\n", "0.3\n")[0] == LAST
    assert text_difference("0.3\n", "0.4\n")[0] == DIFFERS
    assert text_difference("[1. 2.]\n", "[1. 2.]")[0] == DIFFERS
    assert "line 2" in text_difference("a\nb\n", "a\nc\n")[1]


def step(**fields):
    made = {"label": "cell 1", "cell": 0, "run": 0, "stdout": "", "error": None,
            "names": {"x": 1}, "aliases": [], "global_random": 0, "seconds": 0.0,
            "report": None}
    return {**made, **fields}


@pytest.mark.pure
def test_a_step_differs_by_exception_text_names_random_state_and_shared_memory():
    from corpus_cells import entry, raising
    from corpus_harness import compare_steps
    quiet = entry("e", "x = 1", "y = 2")

    def status(plain, compiled, which=quiet):
        return compare_steps(which, [plain], [compiled])[0].status
    assert status(step(), step()) == "same"
    assert status(step(), step(error=("ValueError", "m"))) == "differs"
    assert status(step(stdout="1\n"), step(stdout="")) == "differs"
    assert status(step(), step(names={"x": 1, "z": 2})) == "differs"
    assert status(step(), step(global_random=1)) == "differs"
    assert status(step(aliases=[("a", "b")]), step()) == "differs"
    assert status(step(), step(names={"x": 2}), entry("v", "x = 1", "y = 2", varies=("x",))) \
        == "same"
    # the corpus itself is checked: a cell declared raising must raise plain, and the reverse
    assert status(step(), step(), entry("r", "x = 1", raising("y = 2"))) == "corpus"
    assert status(step(error=("E", "m")), step(error=("E", "m"))) == "corpus"
