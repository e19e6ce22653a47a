"""The layout is the pipeline: a folder is a layer, imports point one way, there are no cycles.

- core imports neither IPython, ipywidgets nor graphviz; only the adapter core/compile/xla/ imports jaxlib;
- inside core, a module imports only the layers below its own (the order of LAYERS), and no
  project module takes part in an import cycle, imports inside functions included;
- extension/ and widgets/ import core only through `psc_jit.core` (and records from
  `psc_jit.core.ir`); widgets never import IPython, and core never imports them.
"""
import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = {"psc_jit": ROOT / "extension", "psc_jit.core": ROOT / "core",
            "psc_jit.widgets": ROOT / "widgets"}

# Layers of core, lowest first; a module may import its own layer's modules (no cycles) and
# any lower layer. The top-level modules of core are one layer each, in pipeline order.
LAYERS = ["psc_jit.core.ir", "psc_jit.core.locations", "psc_jit.core.budget", "psc_jit.core.tree_util",
          "psc_jit.core.interpreter", "psc_jit.core.passes", "psc_jit.core.lowering",
          "psc_jit.core.layout", "psc_jit.core.tracing", "psc_jit.core.typecheck",
          "psc_jit.core.primitives", "psc_jit.core.numpy", "psc_jit.core.control",
          "psc_jit.core.frontend", "psc_jit.core.compile", "psc_jit.core.transform", "psc_jit.core"]

BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'IPython', 'ipywidgets', 'graphviz'}:
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
import numpy as np
import psc_jit.core as core
print(core.jit(lambda x: x + 1)(np.ones(2)).tolist())
"""


def module_name(path: pathlib.Path) -> str:
    for package, folder in PACKAGES.items():
        if folder in path.parents or path.parent == folder:
            parts = path.relative_to(folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            return ".".join((package,) + parts)
    raise ValueError(path)


def project_modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for folder in PACKAGES.values() for p in folder.rglob("*.py")}


MODULES = project_modules()


def imports_of(name: str) -> set[str]:
    """Every project module `name` imports, at the top or inside a function."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m in MODULES and m != name}


def layer_of(name: str) -> int:
    best = max((layer for layer in LAYERS if name == layer or name.startswith(layer + ".")),
               key=len)
    return LAYERS.index(best)


def test_the_module_table_sees_the_layout():
    assert {"psc_jit.core.primitives.elementwise", "psc_jit.core.numpy.indexing",
            "psc_jit.core.frontend.runtime", "psc_jit.core.compile.xla"} <= set(MODULES)


@pytest.mark.pure
def test_no_import_cycles_counting_imports_inside_functions():
    graph = {name: imports_of(name) for name in MODULES}
    # a package's __init__ imports its own modules to re-export them: that is not a cycle
    for name in graph:
        graph[name] = {m for m in graph[name] if not (MODULES[name].name == "__init__.py"
                                                      and m.startswith(name + "."))}
        graph[name] = {m for m in graph[name] if MODULES[m].name != "__init__.py"
                       or not name.startswith(m + ".")}
    cycles = []
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


@pytest.mark.pure
@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("psc_jit.core.")))
def test_core_modules_import_only_their_own_or_lower_layers(name):
    upward = [m for m in imports_of(name)
              if m.startswith("psc_jit.core") and layer_of(m) > layer_of(name)
              and not (MODULES[m].name == "__init__.py" and name.startswith(m + "."))]
    assert upward == []


@pytest.mark.pure
@pytest.mark.parametrize("name", sorted(m for m in MODULES if not m.startswith("psc_jit.core")))
def test_extension_and_widgets_use_the_one_door(name):
    inside = [m for m in imports_of(name) if m.startswith("psc_jit.core.")
              and m not in ("psc_jit.core.ir",)]
    assert inside == []


@pytest.mark.pure
def test_widgets_never_import_the_extension_or_ipython():
    for name, path in MODULES.items():
        if name.startswith("psc_jit.widgets"):
            tree = ast.parse(path.read_text())
            roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                     for a in n.names}
            roots |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                      if isinstance(n, ast.ImportFrom) and not n.level}
            assert "IPython" not in roots, name
            assert not any(m.startswith("psc_jit.") and not m.startswith(
                ("psc_jit.widgets", "psc_jit.core")) for m in imports_of(name)), name


@pytest.mark.pure
def test_core_never_imports_ipython_widgets_or_graphviz_and_only_xla_imports_jaxlib():
    jaxlib_importers = []
    for name, path in MODULES.items():
        if not name.startswith("psc_jit.core"):
            continue
        tree = ast.parse(path.read_text())
        roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                 for a in n.names}
        roots |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and not n.level}
        assert not roots & {"IPython", "ipywidgets", "graphviz", "psc_jit", "jax"}, name
        if "jaxlib" in roots:
            jaxlib_importers.append(name)
    adapter = "psc_jit.core.compile.xla"
    assert jaxlib_importers and all(n == adapter or n.startswith(adapter + ".")
                                    for n in jaxlib_importers), jaxlib_importers


@pytest.mark.xla
def test_core_runs_with_ipython_widgets_and_graphviz_blocked():
    out = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("[2.0, 2.0]")


@pytest.mark.pure
@pytest.mark.parametrize("folder", ["core", "widgets", "extension"])
def test_no_file_over_600_lines(folder):
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / folder).rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}
