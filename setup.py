"""The one compiled module: NumPy's data allocations aligned to 64 bytes (see its source).
Everything else is in pyproject.toml; this file only adds NumPy's headers to the build. The
module is optional: without a C compiler the install goes on, and arrays stay as NumPy
aligns them (psc_jit.core.align_new_arrays says so)."""
import numpy
from setuptools import Extension, setup

setup(ext_modules=[Extension("psc_jit.core.compile._host_memory",
                             ["core/compile/_host_memory.c"],
                             include_dirs=[numpy.get_include()], optional=True)])
