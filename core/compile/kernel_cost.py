"""What one kernel of the optimized module costs a run: floating-point operations, as XLA's
own cost analysis counts them, kernel by kernel.

XLA's cost analysis of a whole executable (`xla.Executable.cost_analysis`) counts a custom
call as nothing (psc_jit runs matrix products, sorts and argmax through its own custom
calls), and a loop's body once however many times it runs. So each kernel is counted on its
own: the instruction, with its operands as parameters and the computations it calls, is made
into a module of its own (`kernel_module_text`) for XLA's cost analysis; psc_jit's custom
calls are counted from their shapes here (`custom_call_flops`, by the same conventions: a
multiply-add is two operations, a comparison one); a loop is its body's count times its
iterations (in `kernels`).
"""
from __future__ import annotations

import math
import re
from typing import Callable, Iterable

__all__ = ["CostFunction", "kernel_module_text", "custom_call_flops"]

# HLO module text -> XLA's cost analysis ({"flops": ..., "transcendentals": ..., ...})
CostFunction = Callable[[str], dict]

_METADATA = re.compile(r",?\s*metadata=\{[^{}]*\}")


def kernel_module_text(name: str, opcode: str, shape: str, operand_shapes: Iterable[str],
                       attrs: Iterable[tuple[str, str]], computations: Iterable[str]) -> str:
    """An HLO module whose ENTRY runs only this instruction on parameters of its operands'
    shapes; `computations` are the texts of those it calls (callees first). Metadata is left
    out (it names stack frames of the whole module)."""
    shapes = list(operand_shapes)
    params = ", ".join(f"p{i}: {s}" for i, s in enumerate(shapes))
    lines = [f"  %p{i} = {s} parameter({i})" for i, s in enumerate(shapes)]
    operands = ", ".join(f"%p{i}" for i in range(len(shapes)))
    extra = "".join(f", {key}={value}" for key, value in attrs if key != "metadata")
    lines.append(f"  ROOT %{name} = {shape} {opcode}({operands}){extra}")
    body = "\n".join(lines)
    called = "\n\n".join(_METADATA.sub("", text) for text in computations)
    return f"HloModule kernel\n\n{called}\n\nENTRY %kernel ({params}) -> {shape} {{\n{body}\n}}\n"


def custom_call_flops(target: str, operand_shapes: tuple[str, ...], shape: str) -> float | None:
    """psc_jit's own custom calls, counted from their shapes (None: a target it does not
    know, e.g. LAPACK's)."""
    sizes = [_dims(s) for s in operand_shapes]
    out = _dims(shape)
    if target.startswith("psc_gemm_") and sizes and out:
        return 2.0 * math.prod(sizes[0]) * out[-1]          # batch x M x K x N, each a mul-add
    if target.startswith(("psc_gemv_", "psc_window_gemv_")) and sizes:
        return 2.0 * math.prod(max(sizes, key=math.prod))   # the matrix (a window: at most)
    if target in ("psc_argmax", "psc_argmin", "psc_cumsum", "psc_cumprod", "psc_cummax",
                  "psc_cummin") and sizes:
        return float(math.prod(sizes[0]))                   # one operation per element
    if target.startswith(("psc_sort", "psc_argsort")) and sizes:
        row = sizes[0][-1] if sizes[0] else 1
        return float(math.prod(sizes[0])) * math.log2(max(row, 2))    # comparisons
    return None


_DIMS = re.compile(r"\[([^\]]*)\]")


def _dims(shape: str) -> tuple[int, ...]:
    """The dimensions of the first array of a shape: `f64[1,512,512]` -> (1, 512, 512)."""
    found = _DIMS.search(shape)
    if found is None or not found[1].strip():
        return ()
    return tuple(int(d.strip().removeprefix("<=") or 0) for d in found[1].split(","))
