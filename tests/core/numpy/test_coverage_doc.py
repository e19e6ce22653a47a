"""docs/coverage.md is what docs/make_coverage.py writes now (regenerate it when it is not)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.xla      # the script traces examples (it imports jaxlib via core)

ROOT = Path(__file__).resolve().parents[3]


def test_coverage_doc_is_current():
    result = subprocess.run([sys.executable, str(ROOT / "docs" / "make_coverage.py"), "--check"],
                            capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, (
        "docs/coverage.md is stale: run `python docs/make_coverage.py`\n" + result.stderr[-3000:])
