"""DOT to SVG with Graphviz, and the SVG placed in a page.

`dot_to_svg` lays DOT out through the graphviz package (which finds and runs `dot`); where
`dot` is missing, too slow or fails, it raises `DotMissing` saying why and how to install it,
and `svg_or_hint` shows that note in place of the drawing, so every other view still works.
"""
from __future__ import annotations

import concurrent.futures
import re
import shutil
import subprocess
import time
from collections import OrderedDict

import graphviz
from graphviz.backend import dot_command, execute

from .markup import notice_html
from .units import fmt_seconds

__all__ = ["DotMissing", "dot_to_svg", "lay_out", "scale_svg", "svg_pane", "svg_or_hint",
           "INSTALL_HINT", "LAYOUT_TIMEOUT_SECONDS", "LAYOUT_SECONDS"]


INSTALL_HINT = (
    "The Graphviz `dot` program was not found, and the graph views need it. Install it with "
    "`apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install -c conda-forge graphviz`, then run the cell again."
)


class DotMissing(RuntimeError):
    """The Graphviz `dot` program is not installed (or could not lay out a graph)."""

    def __init__(self, detail: str = "", hint: str = INSTALL_HINT):
        super().__init__(hint + (f" ({detail})" if detail else ""))


LAYOUT_TIMEOUT_SECONDS = 60.0
# A report's drawings get this long, all together; past it the page shows a simpler view.
LAYOUT_SECONDS = 4.0
LAYOUTS_KEPT = 64


def dot_to_svg(dot: str, timeout: float = LAYOUT_TIMEOUT_SECONDS) -> str:
    """Lay out DOT with Graphviz's `dot` program; the `<svg>` element, ready to inline.
    Layouts are cached by DOT text, and so are layouts that took too long (with how long they
    were given): a re-run of a cell shows its last layout at once, or its simpler view."""
    if shutil.which("dot") is None:     # asked before the cache: a layout made earlier must
        raise DotMissing()              # not hide that `dot` has gone from the PATH
    found = _LAYOUTS.get(dot)
    if found is None or isinstance(found[0], DotMissing) and found[1] < timeout:
        found = (_layout(dot, timeout), timeout)
        _LAYOUTS[dot] = found
        while len(_LAYOUTS) > LAYOUTS_KEPT:
            _LAYOUTS.popitem(last=False)
    else:
        _LAYOUTS.move_to_end(dot)
    if isinstance(found[0], DotMissing):
        raise found[0]
    return found[0]


# DOT text -> (its SVG, or why there is none, and the seconds it was given)
_LAYOUTS: OrderedDict[str, tuple[str | DotMissing, float]] = OrderedDict()


def lay_out(dots: dict[str, str], limit: float = LAYOUT_SECONDS) -> dict[str, str | DotMissing]:
    """Several drawings at once, each by its own `dot` process, two at a time, in the order
    given, all within `limit` seconds: a drawing gets what is left of them when it starts.
    name -> the SVG, or why there is none (cached like `dot_to_svg`)."""
    deadline = time.monotonic() + limit

    def one(dot: str) -> str | DotMissing:
        left = min(limit, deadline - time.monotonic())
        if left < MIN_LAYOUT_SECONDS and dot not in _LAYOUTS:
            return DotMissing(hint=f"Not laid out: the report's {fmt_seconds(limit)} for its "
                              "drawings went to the others")
        try:
            return dot_to_svg(dot, max(left, MIN_LAYOUT_SECONDS))
        except DotMissing as error:
            return error
    if len(dots) <= 1:
        return {name: one(dot) for name, dot in dots.items()}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(one, dot) for name, dot in dots.items()}
        return {name: future.result() for name, future in futures.items()}


MIN_LAYOUT_SECONDS = 0.1


def _layout(dot: str, timeout: float) -> str | DotMissing:
    try:
        svg = _pipe_svg(dot, timeout)
    except graphviz.ExecutableNotFound:
        return DotMissing()
    except subprocess.TimeoutExpired:
        return DotMissing(hint=f"Graphviz took longer than {fmt_seconds(timeout)} to lay out "
                          "this graph")
    except graphviz.CalledProcessError as error:
        return DotMissing(hint="Graphviz could not lay out this graph: "
                          + (error.stderr or "").strip()[:300])
    except OSError as error:
        return DotMissing(str(error))
    return svg[svg.find("<svg"):]


def _pipe_svg(dot: str, timeout: float) -> str:
    """`graphviz.pipe_string("dot", "svg", dot)` with a timeout: the same command and the
    same runner (which raise `ExecutableNotFound` and `CalledProcessError`), since
    `pipe_string` takes no timeout (graphviz 0.21) and a layout can run for minutes. The
    runner hands `timeout` to `subprocess.run`, which kills `dot` when it expires. These two
    are graphviz's internals, not its documented API: the tests of a missing `dot`, of a
    slow layout and of a drawing cover them."""
    command = dot_command.command("dot", "svg")
    done = execute.run_check(command, input=dot, encoding="utf-8", capture_output=True,
                             quiet=True, timeout=timeout)
    return done.stdout


_SVG_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


def scale_svg(svg: str, zoom: float | None) -> str:
    """Graphviz's SVG at `zoom` (1.0: natural size), or, with None, as wide as its container
    but never wider than its natural size (its viewBox keeps the aspect ratio)."""
    size = _SVG_SIZE.search(svg)
    if size is None:
        return svg
    width, height = float(size[1]), float(size[2])
    if zoom is None:
        sized = f'<svg width="100%" style="max-width:{width:.0f}pt; height:auto"'
    else:
        sized = f'<svg width="{width * zoom:.1f}pt" height="{height * zoom:.1f}pt"'
    return svg[:size.start()] + sized + svg[size.end():]


def svg_pane(svg: str, zoom: float | None = None, max_height: int = 640) -> str:
    """The SVG in a scrolling box: zoom scales it, scrolling pans it."""
    return (f'<div class="psc-svg" style="overflow:auto; max-height:{max_height}px; '
            f'border:1px solid #e0e0e0">{scale_svg(svg, zoom)}</div>')


def svg_or_hint(dot: str, zoom: float | None = None) -> str:
    """The laid-out graph in a scrolling box, or why it could not be laid out."""
    try:
        return svg_pane(dot_to_svg(dot), zoom)
    except DotMissing as error:
        return notice_html(str(error))
