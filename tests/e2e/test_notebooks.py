"""Every notebook in examples/ runs through a real Jupyter kernel without a cell error,
and the quickstart shows what its story promises."""
from __future__ import annotations

import functools
import importlib.util
import pathlib
import sys

import pytest

pytestmark = pytest.mark.notebook

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
QUICKSTART = EXAMPLES / "quickstart.ipynb"


def _load_runner():
    """examples/run_notebook.py, the script `make demo` runs, as a module."""
    spec = importlib.util.spec_from_file_location("run_notebook", EXAMPLES / "run_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


runner = _load_runner()


@functools.cache
def executed(path: pathlib.Path):
    """(executed notebook, CellExecutionError or None); each notebook runs once per session."""
    return runner.execute(path)


def code_cells(notebook, contains: str) -> list:
    return [cell for cell in notebook.cells
            if cell.cell_type == "code" and contains in cell.source]


def quickstart_cells(contains: str) -> list:
    notebook, error = executed(QUICKSTART)
    if error is not None:
        pytest.fail(f"the quickstart failed before its checks: {error.ename}: {error.evalue} "
                    "(test_notebook_runs_without_error shows the cell and its traceback)")
    cells = code_cells(notebook, contains)
    assert cells, f"no code cell of the quickstart contains {contains!r}"
    return cells


def test_kernel_is_this_environments_python():
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(runner.KERNEL_NAME)
    python = spec.argv[0]
    # jupyter_client launches a bare "python" as the launching interpreter, sys.executable.
    assert python in {"python", "python3"} or python.startswith(sys.prefix), (
        f"kernel {runner.KERNEL_NAME!r} runs {python}, not this environment's Python "
        f"({sys.prefix}); run `make setup`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_runs_without_error(path):
    notebook, error = executed(path)
    if error is not None:
        pytest.fail(f"{path.name}: a cell failed\n{runner.error_text(error)}")
    assert all(cell.get("execution_count") for cell in code_cells(notebook, "")), \
        f"{path.name}: not every code cell ran"


def test_quickstart_first_run_says_it_compiled():
    first_run = quickstart_cells("%%psc_jit")[0]
    text = runner.cell_text(first_run)
    assert "compiled" in text.lower(), f"the first %%psc_jit run showed:\n{text}"


def test_quickstart_results_agree_with_numpy():
    text = runner.cell_text(quickstart_cells("np.allclose(h, h_numpy)")[0])
    assert "float64" in text and text.rstrip().endswith("True, True)"), text


def test_quickstart_second_run_is_a_cache_hit():
    text = runner.cell_text(quickstart_cells("last_report().cache_hit")[0])
    assert text.strip() == "True", text


def test_quickstart_shape_change_names_x_and_both_shapes():
    text = runner.cell_text(quickstart_cells("last_report().miss_reason")[0])
    for part in ("x:", "f64[1000,1000]", "f64[500,1000]"):
        assert part in text, f"the miss reason {text!r} lacks {part!r}"


def _notebook_cells(name: str, contains: str) -> list:
    notebook, error = executed(EXAMPLES / name)
    if error is not None:
        pytest.fail(f"{name} failed before its checks: {error.ename}: {error.evalue}")
    cells = code_cells(notebook, contains)
    assert cells, f"no code cell of {name} contains {contains!r}"
    return cells


def test_generated_examples_match_their_script():
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    make_examples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_examples)
    import nbformat
    for name in make_examples.NOTEBOOKS:
        stored = nbformat.read(EXAMPLES / f"{name}.ipynb", as_version=4)
        assert stored == make_examples.build(name), (
            f"examples/{name}.ipynb differs from make_examples.py: run "
            "`python examples/make_examples.py`")


def test_cache_behaviour_explains_each_miss():
    reasons = [runner.cell_text(cell).strip() for cell in
               _notebook_cells("cache_behaviour.ipynb", "last_report().miss_reason")]
    assert reasons == ["'x: f64[1000,200] → f64[500,200]'", "'x: f64[500,200] → f32[500,200]'",
                       "'n: 3 → 5 (static)'"]
    hit = _notebook_cells("cache_behaviour.ipynb", "last_report().cache_hit")[0]
    assert runner.cell_text(hit).strip() == "True"


def test_timing_comparisons_table_has_every_timed_cell():
    text = runner.cell_text(_notebook_cells("timing_comparisons.ipynb", "%psc_timings")[0])
    for name in ("chain", "norms", "matmul"):
        assert f">{name}</td>" in text, f"%psc_timings lacks {name}:\n{text}"
    assert any(verdict in text for verdict in ("faster than plain Python", "slower than plain "
                                               "Python", "about the same as plain Python"))


def test_gradients_notebook_binds_and_checks_the_gradients():
    shapes = runner.cell_text(_notebook_cells("gradients.ipynb", "dloss_dw1.shape")[0])
    assert "(8, 32), (32,), (32, 1), (1,)" in shapes, shapes
    check = runner.cell_text(_notebook_cells("gradients.ipynb", "finite_difference")[0])
    assert check.strip().endswith("True"), check
    refused = runner.cell_text(_notebook_cells("gradients.ipynb", "psc_jit.grad(grow)")[0])
    assert "'while v.sum() < 10.0:'" in refused and "forward mode" in refused, refused
    per_example = runner.cell_text(_notebook_cells("gradients.ipynb", "per_example =")[0])
    assert "((256, 8, 32), True, True)" in per_example, per_example
    newton = runner.cell_text(_notebook_cells("gradients.ipynb", "vmap(newton_sqrt)")[0])
    assert "1000." in newton and "array([" in newton, newton


def test_quickstart_cell_with_a_print_and_draws_runs_as_regions_around_host_steps():
    text = runner.cell_text(quickstart_cells("report.split_summary()")[0])
    assert text.startswith("2 compiled regions, 5 host steps: line 2 `rng = "), text
    assert "line 4 `z = np.tanh(x + noise)`" in text, text     # (the print shows its digits)
    assert text.rstrip().endswith("(True, [True, True])"), text
