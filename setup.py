"""The compiled modules, all optional (without a C compiler, or without jaxlib's FFI header
for the last two, the install goes on and psc_jit does without them; each says so where it is
used). Everything else is in pyproject.toml; this file adds the headers they need.

- core/compile/_host_memory.c: XLA's results as writable arrays in one call, and NumPy's
  allocations 64-byte aligned (NumPy's headers).
- core/frontend/_audit_events.c: Python's audit events while psc_jit traces, filtered in C
  (a file a library opens is a host call; a hook in Python would slow every `id()`).
- core/compile/_blas_calls.c: matrix products of XLA programs by BLAS, as XLA FFI custom calls
  (jaxlib's FFI header, include/xla/ffi/api/c_api.h).
- core/compile/_host_kernels.c: kernels of XLA programs that XLA's own code runs far slower
  (argmax/argmin, and sort/argsort by NumPy's own sort functions), as XLA FFI custom calls
  (the same header, and NumPy's).
"""
import os

import numpy
from setuptools import Extension, setup


def jaxlib_include() -> list[str]:
    try:
        import jaxlib
    except ImportError:
        return []
    path = os.path.join(os.path.dirname(jaxlib.__file__), "include")
    return [path] if os.path.exists(os.path.join(path, "xla", "ffi", "api", "c_api.h")) else []


extensions = [Extension("psc_jit.core.compile._host_memory", ["core/compile/_host_memory.c"],
                        include_dirs=[numpy.get_include()], optional=True),
              Extension("psc_jit.core.frontend._audit_events", ["core/frontend/_audit_events.c"],
                        optional=True)]
if jaxlib_include():
    extensions += [Extension(f"psc_jit.core.compile.{name}", [f"core/compile/{name}.c"],
                             depends=["core/compile/_ffi_handler.h"],
                             include_dirs=jaxlib_include() + [numpy.get_include()],
                             optional=True)
                   for name in ("_blas_calls", "_host_kernels")]
setup(ext_modules=extensions)
