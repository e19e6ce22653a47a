"""Host calls: calls whose result or effect can change between runs with equal inputs. Traced,
such a call runs once, and every later run of the cached program serves its first result or
skips its effect: a file read by `np.genfromtxt` that has changed since, `np.datetime64('now')`,
`np.set_printoptions(...)` that a re-run no longer makes. Five kinds:

- files and the operating system: NumPy's loaders and savers, `open`, a file object, a
  `pathlib.Path` that touches the disk, `os`, `shutil`, `glob`, `subprocess`, `socket`;
- clocks: `time`, `datetime.now()`, `date.today()`, `np.datetime64('now')` and `('today')`;
- the process environment: `os.environ`, `os.getenv` (the value itself is refused when read:
  `host_value_reason`);
- global settings, set or read: NumPy's print options, error state and buffer size,
  `warnings` filters, `sys.set*`, `gc`, `locale`; formatting a concrete array
  (`str(a)`, `np.array2string`) reads the print options;
- draws and output: Python's `random`, NumPy's generators, `uuid`, `secrets`, `print`,
  `input`, `logging`.

`host_call_reason(fn, args, kwargs)` tells, for one call, whether it is such a host call and
why (None: it is not); converted code asks it before every call it makes while tracing
(`convert.call`), so a host call is found in the cell and in its helpers, under any name.
Calls made inside libraries are found by the events Python's audit hooks report
(`host_event_reason`: a file opened, a directory listed, a process started). A host call is
refused at its line and the code runs as plain Python; a later step may run such calls as
host steps between compiled regions instead (see `frontend/__init__.py`).
"""
from __future__ import annotations

import builtins
import datetime
import inspect
import io
import logging
import os
import pathlib
import random
import types
import warnings

import numpy as np

from ..tracing import Tracer

FILES = "it reads or writes a file, whose contents can change between runs; "
OS = "it asks the operating system, whose answer can change between runs; "
CLOCK = "it reads the clock; "
ENVIRONMENT = "it reads the process environment (os.environ), which can change between runs; "
SETTING = "it sets or reads a global setting, which a re-run of compiled code would not; "
PRINT_OPTIONS = ("it formats an array or a NumPy scalar, which reads NumPy's print options "
                 "(np.set_printoptions), and those can change between runs; ")
DRAW = "it draws a new value on every call; "
OUTPUT = "it writes output on every run, which compiled code would do only once; "
OUTSIDE = "do it outside the cell (before it, or after it with the cell's results)"

_MODULE_REASONS = {
    "random": "Python's random module draws from a state compiled code would freeze at its "
              "first value; draw the numbers before the cell (or with np.random outside it)",
    "time": "time.* reads the clock; time the cell from outside (psc_jit's Timing tab does)",
    "uuid": DRAW + "make it outside the cell",
    "secrets": DRAW + "draw it outside the cell",
    "shutil": OS + OUTSIDE, "glob": OS + OUTSIDE, "subprocess": OS + OUTSIDE,
    "socket": OS + OUTSIDE, "tempfile": OS + OUTSIDE, "gc": SETTING + OUTSIDE,
    "locale": SETTING + OUTSIDE, "logging": OUTPUT + "log after the cell",
}
_NUMPY_RANDOM = ("a NumPy random generator's state advances on every run, and compiled code "
                 "would freeze its first draw; draw the numbers before the cell and use them "
                 "in it")
_OS_MODULES = frozenset({"os", "posix", "nt"})
_PATH_MODULES = frozenset({"posixpath", "ntpath", "genericpath"})
_PURE_OS = frozenset({"fspath", "fsencode", "fsdecode"})
_PURE_PATHS = frozenset({"join", "split", "splitext", "splitdrive", "splitroot", "basename",
                         "dirname", "normcase", "normpath", "commonpath", "commonprefix",
                         "isabs", "samestat"})
_CLOCK_NAMES = frozenset({"now", "today", "utcnow"})
_FORMATTERS = (builtins.str, builtins.repr, builtins.format, builtins.ascii)


def _identity_table() -> dict:
    """The host calls known by identity: NumPy's files and settings, Python's own I/O."""
    table = {builtins.open: FILES + "read the file before the cell",
             builtins.input: "it reads from the user; " + OUTSIDE,
             builtins.print: OUTPUT + "print after the cell, or return the value",
             os.getenv: ENVIRONMENT + "read it before the cell"}
    for fn in (warnings.filterwarnings, warnings.simplefilter, warnings.resetwarnings):
        table[fn] = SETTING + OUTSIDE
    files = ("load", "loadtxt", "genfromtxt", "fromfile", "fromregex", "save", "savez",
             "savez_compressed", "savetxt", "memmap")
    settings = ("set_printoptions", "get_printoptions", "seterr", "geterr", "seterrcall",
                "geterrcall", "setbufsize", "getbufsize")
    formatting = ("array2string", "array_repr", "array_str")
    for names, reason in ((files, FILES + "load it before the cell and pass the array, or "
                           "save after the cell"), (settings, SETTING + OUTSIDE),
                          (formatting, PRINT_OPTIONS + "format it after the cell")):
        for name in names:
            fn = getattr(np, name, None)
            if fn is not None:
                table[fn] = reason
    table[np.lib.npyio.DataSource] = FILES + OUTSIDE
    return table


_BY_IDENTITY = _identity_table()


def host_call_reason(fn, args=(), kwargs=None) -> str | None:
    """Why calling fn(*args, **kwargs) is a host call: its result or effect can change between
    runs with equal inputs (None: it cannot, as far as psc_jit knows)."""
    wrapped = inspect.getattr_static(fn, "__wrapped__", None)
    fn = wrapped if callable(wrapped) else fn    # (IPython's `open`: functools.wraps of open)
    try:
        known = _BY_IDENTITY.get(fn)
    except TypeError:                   # (an unhashable callable)
        known = None
    reason = known or _owner_reason(fn) or _module_reason(fn) or \
        _argument_reason(fn, args, kwargs or {})
    return f"{call_label(fn)} {reason[3:]}" if reason and reason.startswith("it ") else reason


def call_label(fn) -> str:
    """How a user names the function called: `np.genfromtxt`, `print()`, `os.listdir`,
    `os.environ.get`, `Path.read_text`."""
    name = getattr(fn, "__name__", type(fn).__name__)
    owner = getattr(fn, "__self__", None)
    module = getattr(fn, "__module__", None) or ""
    if owner is os.environ:
        return f"os.environ.{name}"
    if owner is not None and not isinstance(owner, types.ModuleType):
        return f"{owner.__name__ if isinstance(owner, type) else type(owner).__name__}.{name}"
    if module == "builtins" or fn is builtins.open:
        return f"{name}()"
    if module.partition(".")[0] == "numpy":
        return f"np.{name}"
    if module in _OS_MODULES or module in _PATH_MODULES:
        return f"os.{name}" if module in _OS_MODULES else f"os.path.{name}"
    return f"{module}.{name}" if module else name


def _owner_reason(fn) -> str | None:
    """A method whose object decides: a random generator, a clock, a file, a path on disk,
    the environment, a logger."""
    owner = getattr(fn, "__self__", None)
    clock_class = owner is datetime.datetime or owner is datetime.date
    if owner is None or isinstance(owner, type) and not clock_class:
        return None
    name = getattr(fn, "__name__", "")
    if isinstance(owner, random.Random):
        return _MODULE_REASONS["random"]
    if clock_class:
        return f"{owner.__name__}.{name}() reads the clock; read it outside the cell" \
            if name in _CLOCK_NAMES else None
    if isinstance(owner, (np.random.Generator, np.random.RandomState,
                          np.random.BitGenerator)):
        return _NUMPY_RANDOM
    if isinstance(owner, io.IOBase):
        return FILES + OUTSIDE
    if isinstance(owner, type(os.environ)):
        return ENVIRONMENT + "read it before the cell"
    if isinstance(owner, pathlib.Path) and name in vars(pathlib.Path):
        return FILES + OUTSIDE
    if isinstance(owner, (logging.Logger, logging.Handler)):
        return _MODULE_REASONS["logging"]
    if isinstance(owner, np.ndarray) and name in ("tofile", "dump"):
        return FILES + "save after the cell"
    return None


def _module_reason(fn) -> str | None:
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str):
        return None
    name = getattr(fn, "__name__", "")
    top = module.partition(".")[0]
    if module == "numpy.random" or module.startswith("numpy.random."):
        return _NUMPY_RANDOM
    if top in _MODULE_REASONS:
        return _MODULE_REASONS[top]
    if module in _OS_MODULES:
        return None if name in _PURE_OS else DRAW + OUTSIDE if name == "urandom" else \
            OS + OUTSIDE
    if module in _PATH_MODULES and name not in _PURE_PATHS:
        return OS + OUTSIDE
    if module == "sys" and name.startswith("set"):
        return SETTING + OUTSIDE
    return None


def _argument_reason(fn, args, kwargs) -> str | None:
    """A call whose arguments make it a host call: a file object handed over, a concrete
    array formatted, the clock asked for by `np.datetime64('now')`."""
    values = (*args, *kwargs.values())
    if any(isinstance(v, io.IOBase) for v in values):
        return FILES + OUTSIDE
    if any(fn is f for f in _FORMATTERS) and any(_formatted_by_numpy(v) for v in values):
        return PRINT_OPTIONS + "format it after the cell"
    if any(_names_the_clock(v) for v in values) and (
            fn is np.datetime64 or any(_is_datetime_dtype(v) for v in values)):
        return CLOCK + "a datetime64 of 'now' or 'today' is the time of the run; read it " \
            "before the cell and pass it in"
    return None


def _formatted_by_numpy(value) -> bool:
    """An array or NumPy scalar whose text NumPy's print options decide: a concrete one, or a
    traced one whose value is known at trace time (one that is not has no text to give: it
    refuses by itself, naming the line); not a Python number, whose text is Python's."""
    return isinstance(value, (np.ndarray, np.generic)) or isinstance(value, Tracer) and \
        value.kind != "python" and value.known_value() is not None


def _names_the_clock(value, depth: int = 2) -> bool:
    """'now' or 'today' (NumPy's names of the clock for datetime64), or a list of them."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if isinstance(value, str):
        return value.strip().lower() in ("now", "today")
    if isinstance(value, np.ndarray) and value.dtype.kind in "US":
        return any(_names_the_clock(v, 0) for v in value.ravel().tolist())
    return depth > 0 and isinstance(value, (list, tuple)) and \
        any(_names_the_clock(v, depth - 1) for v in value)


def _is_datetime_dtype(value) -> bool:
    if not isinstance(value, (str, type, np.dtype)) or _names_the_clock(value):
        return False
    try:
        return np.dtype(value).kind == "M"
    except TypeError:
        return False


def host_value_reason(value) -> str | None:
    """Why a value read from outside traced code is a host read (None: it is not): the
    process environment, whose items can change between runs without a guard seeing it."""
    if value is os.environ or value is getattr(os, "environb", None):
        return ("os.environ is the process environment, which can change between runs; read "
                "the value before the cell and pass it in")
    return None


NEXT_FROM_OUTSIDE = ("next() advances an iterator from outside the traced code, which "
                     "compiled code cannot replay on each run; take the values before the cell")


# -- the audit events of calls made inside libraries -------------------------------------------

EVENT_PREFIXES = ("open", "os.", "shutil.", "glob.", "subprocess.", "socket.", "urllib.",
                  "http.", "ftplib.", "smtplib.", "sqlite3.", "tempfile.", "webbrowser.", "mmap.",
                  "pathlib.Path.", "time.sleep")
_SOURCE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pyd", ".pth")


def host_event_reason(event: str, args: tuple) -> str | None:
    """Why an audit event (`sys.addaudithook`) raised while tracing is a host call's (a file
    opened, a directory listed, a process started, a socket used), said of the call that
    raised it (`opens the file ...`), or None. Opening a source file is not one (it is how
    psc_jit and Python read code)."""
    if event == "open":
        path = args[0] if args else None
        name = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
        if name.endswith(_SOURCE_SUFFIXES):
            return None
        return f"opens the file {name}, whose contents can change between runs; read it " \
               "before the cell and pass the values"
    if event.startswith(EVENT_PREFIXES):
        return f"asks the operating system ({event}), whose answer can change between runs; " \
               + OUTSIDE
    return None

