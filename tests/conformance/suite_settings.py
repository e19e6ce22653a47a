"""A pytest plugin for runs of the Array API suite (loaded with `-p suite_settings`), so that
two runs against two namespaces draw the same examples and take little time:

- after the suite's own conftest has loaded its hypothesis profile, keep every setting of it
  but stop at the first failing example (no shrinking, no explanation) and keep no example
  database. The outcome of each test is the same (a test fails when an example fails;
  derandomized runs draw the same examples); only the time a failing test takes changes:
  shrinking a failure through XLA compiles took seconds per test.
- seed Python's `random` per test: the special-case tests draw their one input with
  `strategy.example()`, which shuffles with the global `random` (with `--hypothesis-seed`
  for the rest of its draw), so that without a seed NumPy's run and the compiled run drew
  different inputs (expm1(-0 + 0j) in one, expm1(+0 + 0j) in the other)."""
from __future__ import annotations

import random

import pytest
from hypothesis import Phase, settings

PROFILE = "psc-jit-conformance"


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    settings.register_profile(PROFILE, parent=settings.get_profile("array-api-tests"),
                              phases=(Phase.explicit, Phase.reuse, Phase.generate),
                              database=None)
    settings.load_profile(PROFILE)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    random.seed(item.nodeid)
