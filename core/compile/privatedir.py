"""A private directory that no one else can change under us: the disk cache's home.

A compiled program loaded from disk is native code that runs as the user, so its directory must
be one no other user can write to, nor swap for another: not the directory itself, and not any
directory on the way to it (whoever may rename a parent may put a directory of their own, or a
symbolic link to one, where the cache was). The path is walked one name at a time from `/`,
each directory opened relative to the one before it without following links
(`O_NOFOLLOW`), and each checked as it is opened:

- every directory and symbolic link on the way belongs to the user or to root;
- every directory that holds the next name is writable by no one else, unless it is sticky
  (as `/tmp` is): then only the owner of a name there may rename or delete it, and that owner
  is the user or root (above);
- the directory itself belongs to the user and no one else may write to it.

A symbolic link met on the way is followed by walking its target the same way. Names missing
are created, private (0700). The walk ends with a handle on the directory: entries are then
opened relative to it (`openat`), so a path swapped after the check cannot redirect them; the
cache compares the path with its handle before each use and walks it again when they differ
(`same_directory`).
"""
from __future__ import annotations

import os
import stat
from collections import deque
from pathlib import Path

MAX_LINKS = 40                     # as the kernel's own limit on links in one path
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class Refused(Exception):
    """Why a directory must not hold executables (the text is shown to the user)."""


def supported() -> bool:
    """Whether this system can open files relative to a directory handle without following
    links (every POSIX system psc_jit runs on)."""
    return hasattr(os, "O_NOFOLLOW") and os.open in os.supports_dir_fd


def open_private(path: Path) -> int:
    """A handle (file descriptor) on the directory `path`, checked as the module says; made
    when missing. Raises `Refused` with the reason otherwise."""
    if not supported():
        raise Refused("this system cannot open files without following links")
    stack = [os.open("/", _DIRECTORY_FLAGS)]
    try:
        _trusted_owner(os.fstat(stack[0]), "/")
        _walk(stack, deque(Path(os.path.abspath(path)).parts[1:]))
        handle = stack.pop()
        _private(os.fstat(handle), str(path))
        return handle
    except OSError as err:
        raise Refused(f"cannot open it: {err.strerror or err}") from err
    finally:
        for fd in stack:
            os.close(fd)


def _walk(stack: list[int], names: deque[str]) -> None:
    """Open each of `names` below the top of `stack`, pushing its handle; follow links."""
    links = 0
    while names:
        name = names.popleft()
        if name in ("", "."):
            continue
        if name == "..":
            if len(stack) > 1:
                os.close(stack.pop())
            continue
        parent = stack[-1]
        _may_hold_names(os.fstat(parent), name)
        info = _lstat_or_make(name, parent)
        _trusted_owner(info, name)
        if stat.S_ISLNK(info.st_mode):
            links += 1
            if links > MAX_LINKS:
                raise Refused("too many symbolic links on the way to it")
            _follow(stack, names, os.readlink(name, dir_fd=parent))
        elif not stat.S_ISDIR(info.st_mode):
            raise Refused(f"{name} on the way to it is not a directory")
        else:
            stack.append(os.open(name, _DIRECTORY_FLAGS, dir_fd=parent))


def _follow(stack: list[int], names: deque[str], target: str) -> None:
    """Walk `target` (a link's) next: from `/` when absolute, else from the link's directory."""
    if os.path.isabs(target):
        while len(stack) > 1:
            os.close(stack.pop())
    names.extendleft(reversed(Path(target).parts[1 if os.path.isabs(target) else 0:]))


def _lstat_or_make(name: str, parent: int) -> os.stat_result:
    try:
        return os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:        # made by someone else meanwhile: checked like any
            pass
        return os.lstat(name, dir_fd=parent)


def _trusted_owner(info: os.stat_result, name: str) -> None:
    if info.st_uid not in (0, os.getuid()):
        kind = "symbolic link" if stat.S_ISLNK(info.st_mode) else "directory"
        raise Refused(f"the {kind} {name} on the way to it belongs to another user "
                      f"(uid {info.st_uid}), who could replace what is below it")


def _may_hold_names(info: os.stat_result, below: str) -> None:
    """A directory on the way: others may not rename what is in it (`below`)."""
    if info.st_mode & OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
        raise Refused(f"others may write to the directory holding {below} (mode "
                      f"{stat.S_IMODE(info.st_mode):o}), so they could replace it")


def _private(info: os.stat_result, shown: str) -> None:
    """The directory itself: the user's, writable by the user alone."""
    if info.st_uid != os.getuid():
        raise Refused(f"it belongs to another user (uid {info.st_uid})")
    if info.st_mode & OTHERS_WRITE:
        raise Refused(f"others may write to it (mode {stat.S_IMODE(info.st_mode):o}); "
                      f"make it private: chmod 700 {shown}")


def same_directory(handle: int, path: Path) -> bool:
    """Whether `path` still names the directory `handle` was opened on, and that directory is
    still private (the cache asks before each use; False: walk the path again)."""
    try:
        held, named = os.fstat(handle), os.stat(path)
        _private(held, str(path))
    except (OSError, Refused):
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)
