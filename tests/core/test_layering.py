"""Dependencies point one way: core imports neither IPython, ipywidgets nor graphviz, and
only core/xla.py imports jaxlib."""
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'IPython', 'ipywidgets', 'graphviz'}:
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import numpy as np
import psc_jit.core as core
from psc_jit.core import jit, kernels, cell, report, timing
print(jit(lambda x: x + 1)(np.ones(2)).tolist())
"""


@pytest.mark.xla
def test_core_runs_with_ipython_widgets_and_graphviz_blocked():
    out = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("[2.0, 2.0]")


@pytest.mark.pure
def test_only_the_xla_adapter_imports_jaxlib():
    importers = [p.name for p in (ROOT / "core").glob("*.py")
                 if re.search(r"^\s*(import|from)\s+jaxlib", p.read_text(), re.M)
                 or re.search(r"import jaxlib|from jaxlib", p.read_text())]
    assert importers == ["xla.py"]


@pytest.mark.pure
def test_widgets_never_import_ipython():
    offenders = [p.name for p in (ROOT / "widgets").glob("*.py")
                 if re.search(r"^\s*(import|from)\s+IPython", p.read_text(), re.M)]
    assert offenders == []
