"""`%%psc_jit --grad OUT --wrt NAME ...`: the cell as a function that also returns the
gradient of its scalar output OUT with respect to the inputs NAME, bound as `dOUT_dNAME`.

The cell function (inputs -> (outputs, last expression)) is wrapped in `value_and_grad` and
handed to `jit` like any cell, so the compiled program is the forward and the backward pass
together, and the report shows that program (each backward equation on the line of the
forward equation it came from).
"""
from __future__ import annotations

import inspect
from typing import Callable, Sequence

from .core import CellAnalysis, value_and_grad


def gradient_name(out: str, name: str) -> str:
    return f"d{out}_d{name}"


def gradient_problem(analysis: CellAnalysis, inputs: Sequence[str], out: str,
                     wrt: Sequence[str]) -> str | None:
    """Why `--grad out --wrt wrt` cannot be done for this cell (None: it can)."""
    if not wrt:
        return f"--grad {out} needs --wrt NAME: the inputs to differentiate with respect to"
    if out not in analysis.outputs:
        return (f"--grad {out}: the cell does not assign `{out}` (it assigns "
                f"{', '.join(analysis.outputs) or 'nothing'})")
    for name in wrt:
        if name not in inputs:
            return (f"--wrt {name}: `{name}` is not an input of the cell (its inputs are "
                    f"{', '.join(inputs) or 'none'}); differentiate with respect to a value the "
                    "cell reads and does not assign first")
    return None


def gradient_cell(cell: Callable, inputs: Sequence[str], out: str, wrt: Sequence[str]):
    """cell(*inputs) -> (outputs, last), with d{out}_d{name} added to the outputs."""
    positions = tuple(list(inputs).index(name) for name in wrt)

    def value_of(*values):
        outputs, last = cell(*values)
        return outputs[out], (outputs, last)

    with_gradients = value_and_grad(value_of, argnums=positions, has_aux=True)

    def cell_with_gradients(*values):
        (_, (outputs, last)), grads = with_gradients(*values)
        outputs = dict(outputs)
        outputs.update({gradient_name(out, name): g for name, g in zip(wrt, grads, strict=True)})
        return outputs, last

    cell_with_gradients.__signature__ = inspect.signature(cell)
    return cell_with_gradients
