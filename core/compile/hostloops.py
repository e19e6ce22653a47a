"""Host loops: a rolled loop of scalar work (or work on small arrays) runs as one C function,
called by the XLA program.

An XLA:CPU `while` runs its body as a sequence of kernels, each a call from XLA's runtime,
and decides its condition between them: a few nanoseconds per kernel per pass, however
little each does. A loop nest of scalar work (a DP recurrence over a table, a bitwise CRC, a
scan written as a loop, a row-by-row factorisation) spends its time there. Such a loop, when
every equation in it has a C form (`loop_c`), is written as C, compiled once per process by
the system's C compiler (the one that built psc_jit's C modules) and called from the program
as an XLA FFI custom call that updates its arrays in place. Where there is no C compiler, or a
loop is refused, it stays XLA's `while`; `plan` says why for each loop. What a process keeps:
the C text of each loop planned (a few KB) and its loaded library, for as long as it runs (an
executable calling it may be run, or loaded from the disk cache, at any time).

No jaxlib here: core/compile/xla/ registers the handlers (`register_host_loop`, by target
name, before a program calling them compiles or loads) and says where jaxlib's FFI header is.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ..ir import Eqn, Graph, subgraphs
from .loop_c import Refused, loop_source

PREFIX = "psc_loop_"
_TARGET = re.compile(r'"(psc_loop_[0-9a-f]{16})"')
FLAGS = ("-O3", "-fPIC", "-shared", "-ffp-contract=off", "-fwrapv", "-fno-math-errno",
         "-fno-strict-aliasing")
COMPILE_SECONDS = 60.0          # a C compile that takes longer is abandoned (XLA's loop then)
ENV_DISABLE = "PSC_JIT_HOST_LOOPS"      # "0": every loop stays XLA's

_SOURCES: dict[str, str] = {}           # target -> C source, for every loop planned here
_HANDLERS: dict[str, object] = {}       # target -> (library, capsule), once built
_LOCK = threading.Lock()
_CAPSULE_NAME = b"xla._CUSTOM_CALL_TARGET"


@dataclass(frozen=True)
class Plan:
    """Which loops of a graph run as host loops: {equation id: target}; and why the others
    (outermost loops that were looked at) do not: [(source line, reason)]."""
    targets: dict[int, str]
    refused: tuple[tuple[int | None, str], ...]
    lines: tuple[int, ...] = ()         # the source lines of the host loops

    def notes(self) -> list[str]:
        """What the report says of each loop looked at, in line order."""
        said = [(line, "runs as C (a host loop: its scalar work compiled by the C compiler, "
                 "its arrays updated in place)") for line in self.lines]
        said += [(line, f"stays an XLA loop, not C: {why}") for line, why in self.refused]
        return [f"line {line}: {text}" for line, text in sorted(said, key=lambda s: s[0] or 0)
                if line]


@functools.cache
def compiler() -> str | None:
    """The C compiler (`$CC`, else `cc`), or None when there is none."""
    name = os.environ.get("CC", "cc").split()[0]
    return shutil.which(name)


def plan(graph: Graph, include_dirs: tuple[str, ...] = ()) -> Plan:
    """Host loops for every while loop of `graph` that has a C form, each built now (with
    `include_dirs`: where jaxlib's FFI header is); a loop that has none is looked into, and
    the loops inside it are planned alike."""
    targets: dict[int, str] = {}
    refused: list[tuple[int | None, str]] = []
    lines: list[int] = []
    if os.environ.get(ENV_DISABLE, "1") == "0":
        return Plan(targets, ())
    if compiler() is None:
        return Plan(targets, tuple((e.source.line if e.source else None,
                                    "there is no C compiler ($CC, else cc)")
                                   for e in graph.eqns if e.prim.name == "while_loop"))

    def visit(g: Graph) -> None:
        for eqn in g.eqns:
            if eqn.prim.name == "while_loop":
                try:
                    target = _target_for(eqn)
                    handler(target, include_dirs)   # built now: a failure leaves XLA's loop
                    targets[eqn.id] = target
                    lines.append(eqn.source.line if eqn.source else 0)
                    continue
                except Refused as why:
                    refused.append((eqn.source.line if eqn.source else None, str(why)))
                except (OSError, RuntimeError, subprocess.SubprocessError) as err:
                    refused.append((eqn.source.line if eqn.source else None,
                                    f"its C did not build: {err}"))
            for sub in subgraphs(eqn):
                visit(sub)
    visit(graph)
    return Plan(targets, tuple(refused), tuple(lines))


def _target_for(eqn: Eqn) -> str:
    draft = loop_source(eqn, "PSC_FUNCTION")
    target = PREFIX + hashlib.sha256(draft.encode()).hexdigest()[:16]
    with _LOCK:
        _SOURCES.setdefault(target, draft.replace("PSC_FUNCTION", target))
    return target


def calls_host_loops(text: str) -> bool:
    return PREFIX in text


def targets_in(text: str) -> set[str]:
    return set(_TARGET.findall(text))


def handler(target: str, include_dirs: tuple[str, ...] = ()):
    """The FFI handler capsule of a planned target, its C built now if it was not."""
    with _LOCK:
        if target not in _HANDLERS:
            source = _SOURCES.get(target)
            if source is None:
                raise KeyError(f"{target} was not planned in this process")
            _HANDLERS[target] = _build(target, source, include_dirs)
        return _HANDLERS[target][1]


def _build(target: str, source: str, include_dirs: tuple[str, ...]):
    work = tempfile.mkdtemp(prefix="psc_jit_loop_")
    try:
        c_file, library = Path(work, f"{target}.c"), Path(work, f"{target}.so")
        c_file.write_text(source)
        here = str(Path(__file__).parent)           # _ffi_handler.h
        command = [compiler(), *FLAGS, *(f"-I{d}" for d in (here, *include_dirs)),
                   "-o", str(library), str(c_file)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_SECONDS)
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "error" in line]
            raise RuntimeError(f"{compiler()} failed: {(errors or [done.stderr.strip()])[0]}")
        lib = ctypes.CDLL(str(library))     # loaded: the file may go
    finally:
        shutil.rmtree(work, ignore_errors=True)
    address = ctypes.cast(getattr(lib, target), ctypes.c_void_p).value
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return lib, new_capsule(address, _CAPSULE_NAME, None)


def source_of(target: str) -> str | None:
    """The C source of a planned target (for the report and for tests)."""
    return _SOURCES.get(target)
