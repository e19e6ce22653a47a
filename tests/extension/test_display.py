"""Where a report is shown: a progress bar first, then the report in its place (in a kernel);
plain text and HTML without one; the notebook-wide cache and timing overviews."""
from __future__ import annotations

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from psc_jit import display as shown

pytestmark = [pytest.mark.ipython, pytest.mark.xla]

WIDGET = "application/vnd.jupyter.widget-view+json"


class _Handle:
    def __init__(self, log):
        self.log = log

    def update(self, obj, **kwargs):
        self.log.append(("update", obj, kwargs))


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "psc_jit")
    ip.user_ns.update(np=np, x=np.linspace(0.0, 1.0, 16))
    yield ip
    for name in ("y", "x"):
        ip.user_ns.pop(name, None)


@pytest.fixture
def displayed(monkeypatch):
    """What the magic displays, as if it ran in a notebook kernel."""
    log = []

    def display(obj, **kwargs):
        log.append(("display", obj, kwargs))
        return _Handle(log) if kwargs.get("display_id") else None
    monkeypatch.setattr(shown, "_in_kernel", lambda: True)
    monkeypatch.setattr(shown, "display", display)
    return log


def test_a_progress_bar_shows_first_and_the_report_takes_its_place(shell, displayed):
    shell.run_cell_magic("psc_jit", "--no-compare --name shown", "y = np.sin(x) * 2.0\n")
    (first, progress, first_kwargs), (second, bundle, update_kwargs) = displayed
    assert (first, second) == ("display", "update")
    assert first_kwargs["display_id"] is True and "psc-progress" in progress._dom_classes
    assert update_kwargs == {"raw": True}
    # the report is HTML and text, no widget: a reopened notebook shows it without a kernel
    assert set(bundle) == {"text/plain", "text/html"} and WIDGET not in bundle
    assert "compiled with XLA" in bundle["text/plain"]
    assert 'class="psc-tab-input"' in bundle["text/html"]
    assert progress.comm is None                             # the bar's model is closed


def test_quiet_shows_nothing(shell, displayed):
    shell.run_cell_magic("psc_jit", "--quiet --name quiet", "y = np.sin(x)\n")
    assert displayed == []


def test_a_failed_run_stops_the_progress_bar(shell, displayed):
    with pytest.raises(Exception, match="was not compiled"):
        shell.run_cell_magic("psc_jit", "--strict --name failing", "print(x)\n")
    (kind, progress, _), = displayed
    assert kind == "display"
    bar, label = progress.children
    assert bar.bar_style == "danger" and "stopped" in label.value


def test_without_a_kernel_the_report_is_text_and_html(shell, capsys):
    shell.run_cell_magic("psc_jit", "--no-compare --name terminal", "y = np.cos(x)\n")
    out = capsys.readouterr().out
    assert "psc_jit terminal" in out and "compiled with XLA" in out


def test_overviews_have_text_and_html(shell):
    shell.run_cell_magic("psc_jit", "--quiet --compare --name overview", "y = x * 3.0\n")
    cache = shown.cache_overview_bundle()
    assert "overview" in cache["text/plain"] and "psc-cache-overview" in cache["text/html"]
    timings = shown.timings_overview_bundle(shell.magics_manager.registry[
        "PscJitMagics"].runner.reports)
    assert "overview: plain" in timings["text/plain"] and "<svg" in timings["text/html"]
