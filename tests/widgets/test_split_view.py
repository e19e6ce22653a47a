"""The report of a split cell: one picture of its regions and host steps in the order they
ran (a loop run by Python a cluster around its body, with its passes), the head line saying
how the cell was split, a row per region, and each compiled region's own report page."""
import re

import numpy as np
import psc_jit
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit.widgets import mimebundle, plan_dot, report_html, report_text

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

CELL = ("a = x * 2.0\nprint(a.sum())\nfor i in range(3):\n    a = a + x[i]\n"
        "    print(i)\nb = np.tanh(a).sum()\n")


@pytest.fixture(scope="module")
def split_report():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(np=np, x=np.arange(4.0))
    shell.run_cell_magic("psc_jit", "--quiet --no-compare", CELL)
    report = psc_jit.last_report()
    assert report.split
    return report


def test_the_picture_draws_regions_and_host_steps_in_the_order_they_ran(split_report):
    dot = plan_dot(split_report)
    labels = re.findall(r'label="([^"]*)"', dot)
    order = [label.split("\\n")[0] for label in labels]
    assert order == ["line 2", "line 3: print(a.sum())",
                     "the `for` at line 4 runs in Python (3 passes)", "line 5",
                     "line 6: print(i)", "line 7"]
    assert "compiled" in dot and "cluster_" in dot
    assert dot.count("->") == 4       # one chain through the five parts that ran in order


def test_the_summary_says_how_the_cell_was_split(split_report):
    text = report_text(split_report)
    assert ("compiled around host steps: 3 compiled regions, 2 host steps: line 3 "
            "`print(a.sum())`; line 6 `print(i)`; run by Python: the `for` at line 4") in text


def test_the_page_has_the_picture_a_row_per_region_and_each_regions_report(split_report):
    html = report_html(split_report)
    assert "compiled around host steps" in html and "Regions and host steps" in html
    assert html.count('<details class="psc-region"') == 3
    assert html.count('class="psc-jit psc-report psc-run') == 3     # each region's own page
    for first, _ in (r.lines for r in split_report.regions):
        assert f"line {first}" in html
    assert "<svg" in html


def test_the_bundle_is_html_and_text_with_no_widget(split_report):
    bundle = mimebundle(split_report)
    assert set(bundle) == {"text/plain", "text/html"}


def test_a_loop_that_rolled_with_its_draws_is_drawn_as_its_draws_then_its_region():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "psc_jit")
    shell.user_ns.update(np=np, rng=np.random.default_rng(1))
    shell.run_cell_magic("psc_jit", "--quiet --no-compare",
                         "x = np.zeros(2)\nfor t in range(9):\n    x = x + rng.random(2)\n")
    report = psc_jit.last_report()
    labels = re.findall(r'label="([^"]*)"', plan_dot(report))
    assert [label.split("\\n")[0] for label in labels] == [
        "line 2", "line 3: draws for 9 passes", "line 3"]
    assert "rng.random" in labels[1] and "compiled" in labels[2]
