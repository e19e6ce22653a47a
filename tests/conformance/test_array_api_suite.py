"""The conformance runner's verdict: which failures of a compiled run fail `make conformance`."""
import array_api_suite as suite
import pytest

pytestmark = pytest.mark.pure

REFUSAL = ("psc_jit.core.tracing.UnsupportedError: {} is not supported by psc_jit; compute it "
           "outside the compiled cell\nFailing test case: ...")


def run(mode, **outcomes):
    messages = {test: message for test, (outcome, message) in outcomes.items()
                if outcome == "failed"}
    return suite.Run(mode, {test: outcome for test, (outcome, _) in outcomes.items()},
                     messages, 1.0)


NUMPY = run("numpy", exp=("passed", ""), det=("passed", ""), unique=("passed", ""),
            astype=("passed", ""), sort=("failed", "AssertionError: descending"))


def test_a_wrong_result_fails_in_either_mode():
    for mode in ("compiled", "strict"):
        compiled = run(mode, exp=("failed", "AssertionError: out=nan, but should be inf"),
                       det=("passed", ""), unique=("passed", ""), astype=("passed", ""),
                       sort=("failed", "AssertionError: descending"))
        assert suite.regressions(NUMPY, compiled) == (["exp"], [])


def test_strict_mode_expects_refusals_of_data_dependent_shapes_only():
    unique_refusal = "np.unique_values (its result has a data-dependent shape)"
    strict = run("strict", exp=("passed", ""),
                 det=("failed", REFUSAL.format("np.linalg.det")),
                 unique=("failed", REFUSAL.format(unique_refusal)),
                 astype=("failed", REFUSAL.format("np.astype")),
                 sort=("passed", ""))
    assert suite.regressions(NUMPY, strict) == (["det", "astype"], ["unique"])
    assert suite.expected_refusal(strict.messages["unique"]) == (
        f"{unique_refusal} is not supported by psc_jit; compute it outside the compiled cell")


def test_a_refusal_is_a_failure_outside_strict_mode():
    compiled = run("compiled", exp=("passed", ""), det=("failed", REFUSAL.format(
        "np.linalg.det")), unique=("passed", ""), astype=("passed", ""), sort=("passed", ""))
    assert suite.regressions(NUMPY, compiled) == (["det"], [])


def test_a_test_missing_from_a_run_counts_as_failed():
    compiled = run("compiled", exp=("passed", ""), det=("passed", ""), unique=("passed", ""))
    assert suite.regressions(NUMPY, compiled) == (["astype"], [])


def test_the_table_puts_the_counts_side_by_side():
    table = suite.summary_table([NUMPY, run("compiled", exp=("skipped", ""))])
    lines = table.splitlines()
    assert lines[0].split() == ["namespace", "passed", "failed", "skipped", "seconds"]
    assert lines[1].split()[:4] == ["numpy", "4", "1", "0"]
    assert lines[2].split()[:4] == ["compiled", "0", "0", "1"]
