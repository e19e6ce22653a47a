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


@pytest.mark.xla
def test_a_long_module_is_cut_and_says_where_the_rest_is(report):
    import dataclasses

    from psc_jit.widgets.text import SHOWN_CHARS
    long = dataclasses.replace(report, stablehlo="%x = op\n" * (SHOWN_CHARS // 4))
    html = text_html(long)
    assert len(html) < 3 * SHOWN_CHARS
    assert "more characters: psc_jit.last_report().stablehlo has all" in html
