"""psc_jit: compile plain NumPy notebook cells with XLA.

    %load_ext psc_jit

    %%psc_jit
    h = np.tanh(x @ w + 1.0)
    loss = (h ** 2).mean()

`jit(f)` compiles a function the same way; `grad`, `value_and_grad`, `vjp`, `jvp`, `jacfwd`
and `jacrev` differentiate one, as JAX's do (`%%psc_jit --grad loss --wrt w` binds `dloss_dw`),
and `vmap` batches one (`vmap(f)(X)` is `np.stack([f(x) for x in X])`, in one program);
`last_report()` is the record of the last `%%psc_jit` run.
"""
from __future__ import annotations

from .core import (Array, aligned, all_gather, cond, device_put, devices, fori_loop, grad,
                   jacfwd, jacrev, jit, jvp, pmean, psum, scan, switch, value_and_grad, vjp,
                   vmap, while_loop)
from .runner import last_report
from . import distributed, sharding
from .core import make_array_from_process_local_data

__all__ = ["jit", "fori_loop", "while_loop", "cond", "switch", "scan", "last_report",
           "grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "vmap", "aligned",
           "Array", "device_put", "devices", "sharding", "distributed", "psum", "pmean",
           "all_gather",
           "make_array_from_process_local_data",
           "load_ipython_extension", "unload_ipython_extension"]

def load_ipython_extension(ipython) -> None:
    from .core import RunReport
    from .magic import PscJitMagics
    ipython.register_magics(PscJitMagics)
    formatters = ipython.display_formatter.formatters
    formatters["text/html"].for_type(RunReport, _report_html)
    formatters["text/plain"].for_type(RunReport, _report_text)


def _report_html(report) -> str:
    from .widgets import report_html
    return report_html(report)


def _report_text(report, printer, cycle) -> None:
    from .widgets import report_text
    printer.text(report_text(report))


def unload_ipython_extension(ipython) -> None:
    from .core import align_new_arrays, keep_freed_memory
    align_new_arrays(False)
    keep_freed_memory(None)
    magics = ipython.magics_manager.registry.pop("PscJitMagics", None)
    if magics is not None:
        ipython.magics_manager.magics["cell"].pop("psc_jit", None)
        for name in ("psc_cache", "psc_timings"):
            ipython.magics_manager.magics["line"].pop(name, None)
