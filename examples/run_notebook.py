#!/usr/bin/env python3
"""Execute a notebook through a real Jupyter kernel, save it, and print what each cell showed.

    python examples/run_notebook.py examples/quickstart.ipynb artifacts/quickstart.ipynb \
        --html artifacts/quickstart.html

The notebook runs in its own folder (so relative paths in it work) with the kernelspec
named python3 of this Python's environment (`make setup` installs it). The executed
notebook is written even when a cell fails; the exit status is then 1.
"""
from __future__ import annotations

import argparse
import copy
import html
import pathlib
import re
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

KERNEL_NAME = "python3"
CELL_TIMEOUT_SECONDS = 600
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
OBJECT_REPR = re.compile(r"<[\w.]+ object( at 0x[0-9a-f]+)?>")


def execute(path: pathlib.Path, kernel_name: str = KERNEL_NAME,
            timeout: int = CELL_TIMEOUT_SECONDS):
    """Run every cell of the notebook at path; return (notebook, error or None)."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, kernel_name=kernel_name, timeout=timeout,
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    try:
        client.execute()
    except CellExecutionError as error:
        return notebook, error
    return notebook, None


def error_text(error: CellExecutionError) -> str:
    """The failed cell and its traceback, without terminal colours."""
    return ANSI_ESCAPE.sub("", str(error))


def html_to_text(markup: str) -> str:
    """The words of an HTML fragment, one line per block (enough for a digest)."""
    markup = re.sub(r"(?is)<(script|style)\b.*?</\1>", "", markup)
    markup = re.sub(r"(?i)</?(br|p|div|h[1-6]|tr|li|pre|table)\b[^>]*>", "\n", markup)
    markup = re.sub(r"(?i)</t[dh]>", " ", markup)
    text = html.unescape(re.sub(r"<[^>]*>", "", markup))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def output_text(output) -> str:
    """The text a reader sees of one output: stream text, text/plain (or the words of its
    HTML where text/plain is only an object's repr), or the error."""
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return f"{output.ename}: {output.evalue}"
    data = output.get("data", {})
    plain = data.get("text/plain", "")
    if "text/html" in data and OBJECT_REPR.fullmatch(plain.strip()):
        return html_to_text(data["text/html"])
    return plain


def cell_text(cell) -> str:
    """All the text of a code cell's outputs, and the HTML of its rich outputs."""
    parts = [output_text(output) for output in cell.get("outputs", [])]
    parts += [output.get("data", {}).get("text/html", "") for output in cell.get("outputs", [])]
    return "\n".join(part for part in parts if part)


def summarize_output(output, max_lines: int = 8, width: int = 100) -> str:
    kinds = {"stream": output.get("name", "stream"), "error": "error"}
    kind = kinds.get(output.output_type, output.output_type.replace("_", " "))
    lines = [line[:width] for line in output_text(output).strip().splitlines()]
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines)"]
    others = sorted(set(output.get("data", {})) - {"text/plain"})
    if WIDGET_MIME in others:
        others[others.index(WIDGET_MIME)] = "widget"
    extra = f"  [+ {', '.join(others)}]" if others else ""
    body = "\n".join(f"        {line}" for line in lines)
    return f"    {kind}{extra}:" + (f"\n{body}" if body else " (no text)")


def digest(notebook) -> str:
    """Per code cell: its execution count, first source line and a summary of its outputs."""
    rows = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        first_line = (cell.source.strip().splitlines() or [""])[0]
        rows.append(f"[{cell.get('execution_count') or ' '}] {first_line}")
        rows += [summarize_output(output) for output in cell.get("outputs", [])]
        if not cell.get("outputs"):
            rows.append("    (no output)")
    return "\n".join(rows)


def export_html(notebook, path: pathlib.Path) -> None:
    """A static page: psc_jit's reports are HTML (their tabs, highlights and exports work in
    it); without the widgets' saved state, any other widget shows its text alternative."""
    from nbconvert import HTMLExporter

    static = copy.deepcopy(notebook)
    static.metadata.pop("widgets", None)
    body, _ = HTMLExporter().from_notebook_node(static)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=pathlib.Path, help="the notebook to run")
    parser.add_argument("output", type=pathlib.Path, help="where to write the executed notebook")
    parser.add_argument("--html", type=pathlib.Path, help="also export the result as HTML here")
    parser.add_argument("--kernel", default=KERNEL_NAME, help="kernelspec name (python3)")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT_SECONDS,
                        help="seconds allowed per cell")
    args = parser.parse_args(argv)

    print(f"Running {args.notebook} with the {args.kernel!r} kernel ...", flush=True)
    notebook, error = execute(args.notebook, args.kernel, args.timeout)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, args.output)
    print(digest(notebook))
    print(f"\nExecuted notebook: {args.output}")
    if args.html:
        export_html(notebook, args.html)
        print(f"HTML: {args.html.resolve()}  (open it in a browser)")
    if error is not None:
        print(f"\nA cell failed:\n{error_text(error)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
