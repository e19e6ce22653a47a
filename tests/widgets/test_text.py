"""The Text tab."""
from __future__ import annotations

import pytest
from psc_jit.widgets.text import text_html


@pytest.mark.xla
def test_text_tab_escapes_ir_and_hlo(report):
    html = text_html(report)
    assert html.count("<pre") == 3
    assert "tensor&lt;8x8xf64&gt;" in html and "tensor<8x8xf64>" not in html
    assert "fusion" in html                                   # the optimized module
