"""The persistent executable cache: compiled XLA programs that survive a kernel restart.

Entries live in a per-user directory (`$PSC_JIT_CACHE_DIR`; else `$XDG_CACHE_HOME/psc_jit`,
by default `~/.cache/psc_jit`; `PSC_JIT_CACHE_DIR=off` or empty turns the cache off). A loaded
entry is native code run as the user, so the directory must be one no one else can write to
or swap (see `privatedir`): it is created 0700 and refused (a warning, the cache off) when it,
or any directory on the way to it, could be changed by another user. Entries are opened
relative to a handle on the checked directory, never by path, and not through links.

An entry is one file named by the executable key (sha256 of the StableHLO text, jaxlib
version, platform, CPU features and compile options): a magic line, the length of a JSON
header, the header, the payload (jaxlib's serialized executable). The header binds the entry
to what it is for (`EntryIdentity`: the full key, psc_jit's and jaxlib's versions, the input
and output types) and to its payload (sha256 and size); loading checks all of them, so an entry
renamed onto another key's name is not served. An entry is written to a temporary file in the
same directory and renamed into place, so a reader never sees half of one. One that is
unreadable, truncated, damaged or for another program is deleted and recompiled with a
warning, never trusted and never an error. Loading an entry touches its mtime; when the
directory is over its size cap, the least recently used entries go first.
"""
from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import logging
import os
import secrets
import stat
import struct
import threading
import time
import warnings
import weakref
from dataclasses import asdict, dataclass
from pathlib import Path

from . import privatedir

log = logging.getLogger("psc_jit")

MAGIC = b"psc_jit executable 2\n"
OLDER_MAGIC = b"psc_jit executable "     # an entry of an earlier format: a miss, not damage
SUFFIX = ".xla"
DEFAULT_MAX_BYTES = 1 << 30
# A temporary file older than this is left by a writer that died mid-write: it is deleted.
STALE_TEMPORARY_SECONDS = 3600.0
ENV_VAR = "PSC_JIT_CACHE_DIR"
OFF_VALUES = ("", "off", "none", "0", "false")
# Entries are opened without following links and without blocking (on a FIFO planted there).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                | os.O_CLOEXEC)


class DiskCacheWarning(UserWarning):
    """The persistent cache could not be used as asked (the run goes on without it)."""


def default_directory() -> Path | None:
    """Where the cache lives unless configured: `$PSC_JIT_CACHE_DIR` (None when it says off),
    else `$XDG_CACHE_HOME/psc_jit`, else `~/.cache/psc_jit`."""
    if ENV_VAR in os.environ:
        value = os.environ[ENV_VAR].strip()
        return None if value.lower() in OFF_VALUES else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "psc_jit"


# psc_jit's version (pyproject.toml's: a test keeps them equal), written into each entry. Not
# read from the installed metadata: importing importlib.metadata alone takes 70 ms, a good part
# of what loading a program from disk saves.
PSC_JIT_VERSION = "0.1.0"


def type_text(aval) -> str:
    """An input's or output's type as an entry's header records it (`f64[3,4]`). Weak typing
    is left out: it changes what Python sees, not the program (nor its key)."""
    return aval.update(weak_type=False).str_short()


@dataclass(frozen=True)
class EntryIdentity:
    """What an entry is for: written into its header, and compared on load with what the
    caller asks for, field by field (an entry renamed onto another name is not served)."""
    key: str
    in_types: tuple[str, ...]
    out_types: tuple[str, ...]
    psc_jit: str
    jaxlib: str

    @classmethod
    def of(cls, key: str, in_avals=(), out_avals=()) -> EntryIdentity:
        from . import xla
        return cls(key, tuple(map(type_text, in_avals)), tuple(map(type_text, out_avals)),
                   PSC_JIT_VERSION, xla.jaxlib_version())

    @classmethod
    def from_header(cls, fields: dict) -> EntryIdentity:
        return cls(str(fields["key"]), tuple(map(str, fields["in_types"])),
                   tuple(map(str, fields["out_types"])), str(fields["psc_jit"]),
                   str(fields["jaxlib"]))

    def mismatch(self, wanted: EntryIdentity) -> str | None:
        """Why this entry is not the one `wanted` (None: it is)."""
        if self.key != wanted.key:
            return f"it holds the program of another key ({self.key[:12]}...)"
        if (self.psc_jit, self.jaxlib) != (wanted.psc_jit, wanted.jaxlib):
            return (f"it was made by psc_jit {self.psc_jit} with jaxlib {self.jaxlib}, "
                    f"not psc_jit {wanted.psc_jit} with jaxlib {wanted.jaxlib}")
        if (self.in_types, self.out_types) != (wanted.in_types, wanted.out_types):
            return (f"its types {_signature(self)} are not this program's "
                    f"{_signature(wanted)}")
        return None


def _signature(identity: EntryIdentity) -> str:
    return f"({', '.join(identity.in_types)}) -> ({', '.join(identity.out_types)})"


@dataclass(frozen=True)
class DiskEntry:
    """A loaded entry: the serialized executable and what its header says."""
    payload: bytes
    compile_seconds: float | None      # its compile, in the session that made it
    created: float
    lapack: bool                       # the program calls custom targets (LAPACK, BLAS)


@dataclass(frozen=True)
class DiskUsage:
    directory: str | None
    enabled: bool
    problem: str | None
    entries: int
    bytes: int
    max_bytes: int
    hits: int
    misses: int
    stores: int
    evictions: int
    errors: int


def _locked(method):
    """A DiskCache method run by one thread at a time: a handle that one thread closes (the
    directory is checked again) must not be used by another meanwhile."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class DiskCache:
    """Serialized executables in one directory, bounded by `max_bytes` (LRU by mtime).
    Counts hits (loaded), misses (compiled), stores, evictions and unusable entries.

    The directory is reached through a handle taken once (`privatedir.open_private`); before
    each use the cache asks whether its path still names that directory, still private, and
    walks and checks the path again when not (it was moved, replaced or made public)."""

    def __init__(self, directory: Path | str | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
                 enabled: bool = True):
        self._setting = directory          # None: default_directory(), resolved on first use
        self.enabled = enabled
        self.max_bytes = max_bytes
        self._looked = False               # the setting was resolved and its directory checked
        self._candidate: Path | None = None     # the directory looked at last
        self._handle: int | None = None    # on the checked directory, when it is usable
        self._close_handle: weakref.finalize | None = None
        self._problem: str | None = None   # why it is not
        self._warned: set[str] = set()
        self._lock = threading.RLock()
        self.hits = self.misses = self.stores = self.evictions = self.errors = 0

    # -- settings ------------------------------------------------------------------------------
    @_locked
    def configure(self, directory: Path | str | None = None, *, enabled: bool | None = None,
                  max_bytes: int | None = None) -> None:
        """Point the cache elsewhere (None: the default), turn it on or off, resize it."""
        self._setting = directory
        self._forget()
        if enabled is not None:
            self.enabled = enabled
        if max_bytes is not None:
            self.max_bytes = max_bytes
            self._evict()

    @_locked
    def directory(self) -> Path | None:
        """The usable directory, or None when the cache is off or its directory refused."""
        return None if self._fd() is None else self._candidate

    def _fd(self) -> int | None:
        """The handle on the checked directory (None: the cache is off or refused it)."""
        if not self.enabled:
            return None
        if self._looked and self._handle is not None and not privatedir.same_directory(
                self._handle, self._candidate):
            log.warning("psc_jit's disk cache directory %s changed during the session (moved, "
                        "replaced, or opened to others): it is checked again before any "
                        "program is loaded from it", self._candidate)
            self._forget()
        if not self._looked:
            self._look()
        return self._handle

    def _forget(self) -> None:
        if self._close_handle is not None:
            self._close_handle()
        self._handle, self._close_handle, self._problem, self._looked = None, None, None, False

    def _look(self) -> None:
        self._looked = True
        path = self._candidate = _resolve_setting(self._setting)
        if path is None:
            self._problem = "turned off"
            return
        try:
            self._handle = privatedir.open_private(path)
        except privatedir.Refused as refused:
            self._problem = str(refused)
            self._warn(f"psc_jit's disk cache is off: {path}: {refused}")
        else:       # closed when forgotten, when the cache is collected, or at exit
            self._close_handle = weakref.finalize(self, os.close, self._handle)

    # -- entries -------------------------------------------------------------------------------
    @_locked
    def load(self, identity: EntryIdentity) -> DiskEntry | None:
        """The entry for `identity.key`, checked (None when there is none, the cache is off,
        or the entry is unusable: then it is deleted, with a warning, and counted in
        `errors`)."""
        fd = self._fd()
        if fd is None:
            return None
        name = identity.key + SUFFIX
        try:
            data = _read_entry(name, fd)
        except FileNotFoundError:
            return None
        except OSError as err:
            return self._unusable(name, _read_problem(err))
        entry, problem = _parse(data, identity)
        if entry is None:
            return self._unusable(name, problem)
        return entry

    @_locked
    def discard(self, key: str, problem: str) -> None:
        """Drop an entry that passed its checks but could not be used (`problem`)."""
        if self._fd() is not None:
            self._unusable(key + SUFFIX, problem)

    def _unusable(self, name: str, problem: str | None) -> None:
        if problem is None:                # an earlier format: a miss, not damage
            log.info("psc_jit disk cache: %s is of an earlier format; deleted", name)
        else:
            self.errors += 1
            self._warn(f"psc_jit's disk cache entry {name} is unusable ({problem}); it is "
                       "deleted and the program compiled again")
        self._unlink(name)
        return None

    def _unlink(self, name: str) -> bool:
        """Delete `name` in the checked directory (never a path relative to anywhere else)."""
        if self._handle is None:
            return False
        try:
            os.unlink(name, dir_fd=self._handle)
        except OSError:
            return False
        return True

    @_locked
    def store(self, identity: EntryIdentity, payload: bytes, compile_seconds: float,
              lapack: bool) -> bool:
        """Write an entry atomically (a temporary file renamed into place); then evict the
        least recently used entries over the cap. False when the cache is off or the write
        failed (a warning says why)."""
        fd = self._fd()
        if fd is None:
            return False
        header = json.dumps({"entry": asdict(identity),
                             "sha256": hashlib.sha256(payload).hexdigest(),
                             "size": len(payload), "compile_seconds": compile_seconds,
                             "created": time.time(), "lapack": lapack}).encode()
        try:
            _write_entry(MAGIC + struct.pack(">I", len(header)) + header + payload,
                         identity.key + SUFFIX, fd)
        except OSError as err:
            self._warn(f"psc_jit could not write to its disk cache {self._candidate}: "
                       f"{err.strerror or err}")
            return False
        self.stores += 1
        self._evict()
        return True

    def _files(self) -> list[tuple[float, int, str]]:
        """(mtime, size, name) of every entry, least recently used first."""
        return sorted((info.st_mtime, info.st_size, name)
                      for name, info in self._listing() if not name.startswith("."))

    def _listing(self) -> list[tuple[str, os.stat_result]]:
        """(name, its lstat) of the directory's regular files ending in `SUFFIX`."""
        fd = self._fd()
        if fd is None:
            return []
        found = []
        with contextlib.suppress(OSError), os.scandir(fd) as entries:
            for item in entries:
                with contextlib.suppress(OSError):
                    info = item.stat(follow_symlinks=False)
                    if item.name.endswith(SUFFIX) and stat.S_ISREG(info.st_mode):
                        found.append((item.name, info))
        return found

    def _evict(self) -> None:
        self._remove_stale_temporaries()
        files = self._files()
        total = sum(size for _, size, _ in files)
        for _, size, name in files:
            if total <= self.max_bytes:
                break
            if self._unlink(name):
                self.evictions += 1
                log.info("psc_jit disk cache: evicted %s (%d bytes)", name, size)
            total -= size

    def _remove_stale_temporaries(self) -> None:
        """Delete `.tmp-*` files of writers that died before renaming them into place, so
        that crashes do not grow the directory past its cap unseen."""
        cutoff = time.time() - STALE_TEMPORARY_SECONDS
        for name, info in self._listing():
            if name.startswith(".tmp-") and info.st_mtime < cutoff and self._unlink(name):
                log.info("psc_jit disk cache: removed %s, left by a writer that stopped "
                         "mid-write", name)

    @_locked
    def clear(self) -> int:
        """Delete every entry; how many were deleted."""
        deleted = sum(self._unlink(name) for _, _, name in self._files())
        self.hits = self.misses = self.stores = self.evictions = self.errors = 0
        return deleted

    @_locked
    def usage(self) -> DiskUsage:
        directory = self.directory()
        files = self._files()
        shown = self._candidate if self.enabled else None
        problem = None if directory is not None else (
            "turned off" if not self.enabled else self._problem)
        return DiskUsage(None if shown is None else str(shown), directory is not None, problem,
                         len(files), sum(size for _, size, _ in files), self.max_bytes,
                         self.hits, self.misses, self.stores, self.evictions, self.errors)

    def _warn(self, message: str) -> None:
        """Log every time; a Python warning the first time this message is seen."""
        log.warning(message)
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, DiskCacheWarning, stacklevel=4)


def _resolve_setting(setting: Path | str | None) -> Path | None:
    """The directory a setting names, made absolute once (a later `os.chdir` in the notebook
    must not move the cache), or None when the cache is off."""
    if setting is None:
        path = default_directory()
    elif str(setting).strip().lower() in OFF_VALUES:
        path = None
    else:
        path = Path(setting).expanduser()
    return None if path is None else Path(os.path.abspath(path))


def _read_entry(name: str, directory: int) -> bytes:
    """An entry's bytes, opened in `directory` not through a link; its mtime touched (most
    recently used)."""
    fd = os.open(name, _READ_FLAGS, dir_fd=directory)
    with os.fdopen(fd, "rb") as entry:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        data = entry.read()
        with contextlib.suppress(OSError):
            os.utime(fd)
    return data


def _read_problem(err: OSError) -> str:
    if err.errno == errno.ELOOP:
        return "it is a symbolic link, never followed"
    return f"cannot read it: {err.strerror or err}"


def _write_entry(data: bytes, name: str, directory: int) -> None:
    """Write `data` to a new temporary file in `directory`, then rename it to `name`."""
    temporary = f".tmp-{secrets.token_hex(8)}{SUFFIX}"
    fd = os.open(temporary, _WRITE_FLAGS, 0o600, dir_fd=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory)
        raise


def _parse(data: bytes, wanted: EntryIdentity) -> tuple[DiskEntry | None, str | None]:
    """The entry in a file's bytes if it is whole and for `wanted`, else (None, what is wrong
    with them; None when it is of an earlier format)."""
    if not data.startswith(MAGIC):
        return None, (None if data.startswith(OLDER_MAGIC) else "not a psc_jit cache entry")
    start = len(MAGIC) + 4
    if len(data) < start:
        return None, "truncated"
    (length,) = struct.unpack(">I", data[len(MAGIC):start])
    try:
        header = json.loads(data[start:start + length])
        payload = data[start + length:]
        size, digest = int(header["size"]), str(header["sha256"])
        identity = EntryIdentity.from_header(header["entry"])
        entry = DiskEntry(payload, _seconds(header.get("compile_seconds")),
                          float(header.get("created", 0.0)), bool(header.get("lapack", True)))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, "its header is damaged"
    if len(payload) != size:
        return None, f"truncated: {len(payload)} of {size} bytes"
    if hashlib.sha256(payload).hexdigest() != digest:
        return None, "its checksum does not match"
    mismatch = identity.mismatch(wanted)
    return (None, mismatch) if mismatch else (entry, None)


def _seconds(value) -> float | None:
    return None if value is None else float(value)


DISK_CACHE = DiskCache()


# -- executables through the disk cache --------------------------------------------------------

@dataclass(frozen=True)
class FromDisk:
    """An executable loaded from the disk cache instead of compiled."""
    load_seconds: float                 # reading, checking and deserializing it
    compile_seconds: float | None       # its compile, in the session that made it
    created: float


def load_or_compile(key: str, text: str, in_avals, out_avals, compile_fn,
                    cache: DiskCache | None = None, inline: bool = False):
    """(executable, FromDisk or None): the entry for `key` from the disk cache when it has a
    usable one, made for these types (loaded to run inline when `inline`, see
    `xla.Executable`), else `compile_fn()` (its executable then stored for later sessions).
    An entry that cannot be used is never an error: a warning, and the program compiled."""
    from . import xla
    cache = DISK_CACHE if cache is None else cache
    start = time.perf_counter()
    identity = EntryIdentity.of(key, in_avals, out_avals)
    entry = cache.load(identity)
    if entry is not None:
        try:
            executable = xla.deserialize(entry.payload, in_avals, out_avals, entry.lapack,
                                         inline, text)
        except xla.XlaError as err:
            cache.discard(key, str(err))
        else:
            cache.hits += 1
            seconds = time.perf_counter() - start
            log.info("psc_jit: loaded %s from the disk cache in %.1f ms", key[:12],
                     seconds * 1e3)
            return executable, FromDisk(seconds, entry.compile_seconds, entry.created)
    start = time.perf_counter()
    executable = compile_fn()
    seconds = time.perf_counter() - start
    if cache.directory() is not None:
        cache.misses += 1
        cache.store(identity, executable.serialize(), seconds, xla.uses_custom_targets(text))
    return executable, None
