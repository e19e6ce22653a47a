"""The persistent executable cache: compiled XLA programs that survive a kernel restart.

Entries live in a per-user directory (`$PSC_JIT_CACHE_DIR`; else `$XDG_CACHE_HOME/psc_jit`,
by default `~/.cache/psc_jit`; `PSC_JIT_CACHE_DIR=off` or empty turns the cache off). The
directory is created 0700 and refused (a warning, the cache off) when another user owns it or
others may write to it: an executable from there would run as the user's code.

An entry is one file named by the executable key (sha256 of the StableHLO text, jaxlib
version, platform, CPU features and compile options): a magic line, the length of a JSON
header (the payload's sha256 and size, the compile time of its first compile, ...), the
header, the payload (jaxlib's serialized executable). It is written to a temporary file in
the same directory and renamed into place, so a reader never sees half of one; one that is
unreadable, truncated or whose checksum does not match is deleted and recompiled with a
warning, never trusted. Loading an entry touches its mtime; when the directory is over its
size cap, the least recently used entries go first.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
import struct
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("psc_jit")

MAGIC = b"psc_jit executable 1\n"
SUFFIX = ".xla"
DEFAULT_MAX_BYTES = 1 << 30
# A temporary file older than this is left by a writer that died mid-write: it is deleted.
STALE_TEMPORARY_SECONDS = 3600.0
ENV_VAR = "PSC_JIT_CACHE_DIR"
OFF_VALUES = ("", "off", "none", "0", "false")


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


def directory_problem(directory: Path) -> str | None:
    """Why `directory` must not hold executables (None: it may). Creates it 0700 when missing."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.lstat()
    except OSError as err:
        return f"cannot create it: {err.strerror or err}"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"it belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"others may write to it (mode {stat.S_IMODE(info.st_mode):o}); "
                f"make it private: chmod 700 {directory}")
    return None


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


class DiskCache:
    """Serialized executables in one directory, bounded by `max_bytes` (LRU by mtime).
    Counts hits (loaded), misses (compiled), stores, evictions and unusable entries."""

    def __init__(self, directory: Path | str | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
                 enabled: bool = True):
        self._setting = directory          # None: default_directory(), resolved on first use
        self.enabled = enabled
        self.max_bytes = max_bytes
        self._checked: tuple[Path | None, str | None] | None = None
        self._candidate: Path | None = None     # the directory looked at last
        self._warned: set[str] = set()
        self.hits = self.misses = self.stores = self.evictions = self.errors = 0

    # -- settings ------------------------------------------------------------------------------
    def configure(self, directory: Path | str | None = None, *, enabled: bool | None = None,
                  max_bytes: int | None = None) -> None:
        """Point the cache elsewhere (None: the default), turn it on or off, resize it."""
        self._setting = directory
        self._checked = None
        if enabled is not None:
            self.enabled = enabled
        if max_bytes is not None:
            self.max_bytes = max_bytes
            self._evict()

    def directory(self) -> Path | None:
        """The usable directory, or None when the cache is off or its directory refused."""
        if not self.enabled:
            return None
        if self._checked is None:
            self._checked = self._check()
        return self._checked[0]

    def _check(self) -> tuple[Path | None, str | None]:
        setting = self._setting
        if setting is None:
            path = default_directory()
        elif str(setting).strip().lower() in OFF_VALUES:
            path = None
        else:
            path = Path(setting).expanduser()
        self._candidate = path
        if path is None:
            return None, "turned off"
        problem = directory_problem(path)
        if problem is not None:
            self._warn(f"psc_jit's disk cache is off: {path}: {problem}")
            return None, problem
        return path, None

    # -- entries -------------------------------------------------------------------------------
    def _path(self, key: str) -> Path | None:
        directory = self.directory()
        return None if directory is None else directory / (key + SUFFIX)

    def load(self, key: str) -> DiskEntry | None:
        """The entry for `key`, checked (None when there is none, the cache is off, or the
        entry is unusable: then it is deleted, with a warning, and counted in `errors`)."""
        path = self._path(key)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            return self._unusable(path, f"cannot read it: {err.strerror or err}")
        entry, problem = _parse(data)
        if entry is None:
            return self._unusable(path, problem)
        with contextlib.suppress(OSError):
            os.utime(path)                 # most recently used
        return entry

    def discard(self, key: str, problem: str) -> None:
        """Drop an entry that passed its checksum but could not be used (`problem`)."""
        path = self._path(key)
        if path is not None:
            self._unusable(path, problem)

    def _unusable(self, path: Path, problem: str) -> None:
        self.errors += 1
        self._warn(f"psc_jit's disk cache entry {path.name} is unusable ({problem}); it is "
                   "deleted and the program compiled again")
        with contextlib.suppress(OSError):
            path.unlink()
        return None

    def store(self, key: str, payload: bytes, compile_seconds: float, lapack: bool) -> bool:
        """Write an entry atomically (a temporary file renamed into place); then evict the
        least recently used entries over the cap. False when the cache is off or the write
        failed (a warning says why)."""
        directory = self.directory()
        if directory is None:
            return False
        header = json.dumps({"sha256": hashlib.sha256(payload).hexdigest(),
                             "size": len(payload), "compile_seconds": compile_seconds,
                             "created": time.time(), "lapack": lapack}).encode()
        data = MAGIC + struct.pack(">I", len(header)) + header + payload
        try:
            fd, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=SUFFIX)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(temporary, directory / (key + SUFFIX))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as err:
            self._warn(f"psc_jit could not write to its disk cache {directory}: "
                       f"{err.strerror or err}")
            return False
        self.stores += 1
        self._evict()
        return True

    def _files(self) -> list[tuple[float, int, Path]]:
        """(mtime, size, path) of every entry, least recently used first."""
        directory = self.directory()
        if directory is None:
            return []
        found = []
        with contextlib.suppress(OSError):
            for path in directory.iterdir():
                if path.suffix == SUFFIX and not path.name.startswith("."):
                    with contextlib.suppress(OSError):
                        info = path.stat()
                        found.append((info.st_mtime, info.st_size, path))
        return sorted(found)

    def _evict(self) -> None:
        self._remove_stale_temporaries()
        files = self._files()
        total = sum(size for _, size, _ in files)
        for _, size, path in files:
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                self.evictions += 1
                log.info("psc_jit disk cache: evicted %s (%d bytes)", path.name, size)
            total -= size

    def _remove_stale_temporaries(self) -> None:
        """Delete `.tmp-*` files of writers that died before renaming them into place, so
        that crashes do not grow the directory past its cap unseen."""
        directory = self.directory()
        if directory is None:
            return
        cutoff = time.time() - STALE_TEMPORARY_SECONDS
        with contextlib.suppress(OSError):
            for path in directory.glob(".tmp-*" + SUFFIX):
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime < cutoff:
                        path.unlink()
                        log.info("psc_jit disk cache: removed %s, left by a writer that "
                                 "stopped mid-write", path.name)

    def clear(self) -> int:
        """Delete every entry; how many were deleted."""
        deleted = 0
        for _, _, path in self._files():
            with contextlib.suppress(OSError):
                path.unlink()
                deleted += 1
        self.hits = self.misses = self.stores = self.evictions = self.errors = 0
        return deleted

    def usage(self) -> DiskUsage:
        directory = self.directory()
        files = self._files()
        shown = self._candidate if self.enabled else None
        problem = None if directory is not None else (
            "turned off" if not self.enabled else self._checked[1])
        return DiskUsage(None if shown is None else str(shown), directory is not None, problem,
                         len(files), sum(size for _, size, _ in files), self.max_bytes,
                         self.hits, self.misses, self.stores, self.evictions, self.errors)

    def _warn(self, message: str) -> None:
        """Log every time; a Python warning the first time this message is seen."""
        log.warning(message)
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, DiskCacheWarning, stacklevel=4)


def _parse(data: bytes) -> tuple[DiskEntry | None, str]:
    """The entry in a file's bytes, or (None, what is wrong with them)."""
    if not data.startswith(MAGIC):
        return None, "not a psc_jit cache entry"
    start = len(MAGIC) + 4
    if len(data) < start:
        return None, "truncated"
    (length,) = struct.unpack(">I", data[len(MAGIC):start])
    try:
        header = json.loads(data[start:start + length])
        payload = data[start + length:]
        size, digest = int(header["size"]), str(header["sha256"])
    except (ValueError, KeyError, TypeError):
        return None, "its header is damaged"
    if len(payload) != size:
        return None, f"truncated: {len(payload)} of {size} bytes"
    if hashlib.sha256(payload).hexdigest() != digest:
        return None, "its checksum does not match"
    seconds = header.get("compile_seconds")
    return DiskEntry(payload, float(seconds) if seconds is not None else None,
                     float(header.get("created", 0.0)), bool(header.get("lapack", True))), ""


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
    usable one (loaded to run inline when `inline`, see `xla.Executable`), else
    `compile_fn()` (its executable then stored for later sessions)."""
    from . import xla
    cache = DISK_CACHE if cache is None else cache
    start = time.perf_counter()
    entry = cache.load(key)
    if entry is not None:
        try:
            executable = xla.deserialize(entry.payload, in_avals, out_avals, entry.lapack,
                                         inline)
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
        cache.store(key, executable.serialize(), seconds, xla.uses_custom_targets(text))
    return executable, None
