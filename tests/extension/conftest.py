"""The IPython shell the magic tests run cells in: IPython's one InteractiveShell with the
extension loaded and NumPy imported; after a test the namespace is as it was before it (names
the test added removed, names it rebound, `np` too, given back), so tests never see each
other's values."""
import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture
def magic_shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.run_cell("import numpy as np")
    before = dict(ip.user_ns)
    yield ip
    ip.run_line_magic("config", "PscJit.pick_faster = False")    # (tests/conftest.py)
    for name in set(ip.user_ns) - set(before):
        del ip.user_ns[name]
    ip.user_ns.update(before)


@pytest.fixture
def brief_timing_shell(magic_shell):
    """magic_shell with no time budget for the timing comparison: a timed run times one plain
    and one compiled run (what tests of the comparison's effects need, and no more)."""
    magic_shell.run_line_magic("config", "PscJit.timing_budget = 0")
    yield magic_shell
    magic_shell.run_line_magic("config", "PscJit.timing_budget = 1.0")
