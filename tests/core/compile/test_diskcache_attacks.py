"""What the disk cache will not serve: an entry is native code run as the user, so each way of
making it run a program other than the one asked for is tried here, with real XLA compiles and
real loads. Entries renamed onto each other's names, an entry for other types or another
jaxlib, truncated or garbage ones, an entry that is a symbolic link, the directory swapped for
a link to another user's directory mid-session, and directories on the way that others could
change (writable by group or others, sticky with another user's name in it, another user's).
Each ends the same way: the right program's result, a DiskCacheWarning, never an error.

Tests run as root; "another user" is an unused uid given the file with os.chown."""
import hashlib
import json
import os
import re
import shutil
import struct
import warnings

import numpy as np
import pytest
from psc_jit.core import DiskCache, DiskCacheWarning, jit
from psc_jit.core.compile import xla
from psc_jit.core.compile.cache import executable_key
from psc_jit.core.compile.diskcache import MAGIC, load_or_compile

pytestmark = pytest.mark.xla

OTHER_UID = 54321                       # no one on this machine: "another user"
X = np.arange(3.0)
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="giving a file to another user needs root")


def lowered(f, x=X):
    return jit(f).trace(x).lower()


def plus_one(x):
    return x + 1.0


def times_three(x):
    return x * 3.0


def key_of(program) -> str:
    return executable_key(program.text, xla.jaxlib_version(), xla.platform(),
                          xla.target_description())


def run(cache: DiskCache, program, x=X):
    """(the program's result on x, whether it was loaded from disk): through the disk cache,
    compiled by XLA when the cache has no usable entry."""
    graph = program.graph
    executable, origin = load_or_compile(
        key_of(program), program.text, graph.in_avals, graph.out_avals,
        lambda: xla.compile_stablehlo(program.text, graph.in_avals, graph.out_avals), cache)
    return executable.execute([x])[0], origin is not None


def entry(directory, program):
    return directory / (key_of(program) + ".xla")


def with_header(data: bytes, change) -> bytes:
    """An entry's bytes with its JSON header passed through `change(header) -> payload or
    None` (None: the payload kept)."""
    start = len(MAGIC) + 4
    (length,) = struct.unpack(">I", data[len(MAGIC):start])
    header = json.loads(data[start:start + length])
    payload = change(header) or data[start + length:]
    text = json.dumps(header).encode()
    return MAGIC + struct.pack(">I", len(text)) + text + payload


def forged(source, program) -> bytes:
    """The entry file `source` with its header rewritten to claim it is `program`'s: what
    someone who can write where the cache reads would plant (its checksum still holds)."""
    return with_header(source.read_bytes(),
                       lambda header: header["entry"].update(key=key_of(program)))


@pytest.fixture
def programs():
    return lowered(plus_one), lowered(times_three)


def assert_recompiled_with_warning(cache, program, expected, match):
    with pytest.warns(DiskCacheWarning, match=match):
        result, from_disk = run(cache, program)
    np.testing.assert_array_equal(result, expected)
    assert not from_disk


# -- entries ---------------------------------------------------------------------------------

def test_entries_renamed_onto_each_others_names_are_not_served(tmp_path, programs):
    plus, times = programs
    cache = DiskCache(tmp_path / "cache")
    run(cache, plus), run(cache, times)
    a, b = entry(tmp_path / "cache", plus), entry(tmp_path / "cache", times)
    a.rename(tmp_path / "swap")
    b.rename(a)
    (tmp_path / "swap").rename(b)

    assert_recompiled_with_warning(cache, plus, X + 1.0, "another key")
    assert_recompiled_with_warning(cache, times, X * 3.0, "another key")
    assert cache.errors == 2
    result, from_disk = run(DiskCache(tmp_path / "cache"), plus)      # stored afresh
    assert from_disk and np.array_equal(result, X + 1.0)


def test_an_entry_for_other_types_is_recompiled_not_an_error(tmp_path, programs):
    plus, _ = programs
    longer = lowered(plus_one, np.arange(4.0))
    cache = DiskCache(tmp_path / "cache")
    run(cache, longer, np.arange(4.0))
    entry(tmp_path / "cache", plus).write_bytes(forged(entry(tmp_path / "cache", longer), plus))
    assert_recompiled_with_warning(cache, plus, X + 1.0,
                                   r"its types \(f64\[4\]\) -> \(f64\[4\]\) are not this "
                                   r"program's \(f64\[3\]\) -> \(f64\[3\]\)")


def test_an_entry_of_another_jaxlib_or_psc_jit_is_recompiled(tmp_path, programs):
    plus, _ = programs
    cache = DiskCache(tmp_path / "cache")
    run(cache, plus)
    path = entry(tmp_path / "cache", plus)
    path.write_bytes(with_header(path.read_bytes(),
                                 lambda header: header["entry"].update(jaxlib="0.0.1")))
    assert_recompiled_with_warning(cache, plus, X + 1.0, "with jaxlib 0.0.1")
    path.write_bytes(with_header(path.read_bytes(),
                                 lambda header: header["entry"].update(psc_jit="0.0.2")))
    assert_recompiled_with_warning(cache, plus, X + 1.0, "made by psc_jit 0.0.2")


def garbage_payload(data: bytes) -> bytes:
    """A whole entry, header and checksum right, whose payload is not an executable."""
    def change(header):
        payload = bytes(range(256)) * (header["size"] // 256 + 1)
        header["size"], header["sha256"] = len(payload), hashlib.sha256(payload).hexdigest()
        return payload
    return with_header(data, change)


DAMAGE = {
    "truncated": (lambda data: data[: len(data) // 2], "truncated"),
    "a flipped byte": (lambda data: data[:-1] + bytes([data[-1] ^ 1]), "checksum"),
    "a damaged header": (lambda data: MAGIC + b"\0\0\0\5{oops" + data[-20:], "header"),
    "a header that is a list": (lambda data: MAGIC + b"\0\0\0\2[]" + data[-20:], "header"),
    "empty": (lambda data: b"", "not a psc_jit cache entry"),
    "garbage": (lambda data: os.urandom(len(data)), "not a psc_jit cache entry"),
    "a garbage payload": (garbage_payload, "could not load"),
}


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_entry_is_recompiled_with_a_warning(tmp_path, programs, how):
    plus, _ = programs
    cache = DiskCache(tmp_path / "cache")
    run(cache, plus)
    path = entry(tmp_path / "cache", plus)
    damage, match = DAMAGE[how]
    path.write_bytes(damage(path.read_bytes()))
    assert_recompiled_with_warning(cache, plus, X + 1.0, match)
    assert run(cache, plus)[1], "the entry was not written afresh"


def test_an_entry_that_is_a_symbolic_link_is_never_followed(tmp_path, programs):
    plus, times = programs
    cache = DiskCache(tmp_path / "cache")
    run(cache, times)
    planted = tmp_path / "planted.xla"
    planted.write_bytes(forged(entry(tmp_path / "cache", times), plus))
    entry(tmp_path / "cache", plus).symlink_to(planted)
    assert_recompiled_with_warning(cache, plus, X + 1.0, "symbolic link")
    assert planted.exists()                  # the link is deleted, not what it points to


# -- the directory swapped mid-session -------------------------------------------------------

def plant(directory, programs, uid=OTHER_UID):
    """A directory of another user's holding `times_three`'s program under `plus_one`'s name
    (a forged entry that passes every check of the entry itself)."""
    plus, times = programs
    directory.mkdir()
    donor = DiskCache(directory.parent / "donor")
    run(donor, times)
    entry(directory, plus).write_bytes(forged(entry(directory.parent / "donor", times), plus))
    os.chown(entry(directory, plus), uid, uid)
    os.chown(directory, uid, uid)


def sanity_check_the_plant(tmp_path, programs):
    """The planted entry is served when its directory is taken for the user's: so the tests
    below fail when the directory is not checked, not because the plant is broken."""
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "evil", copy)
    os.chown(copy, os.getuid(), os.getgid())
    result, from_disk = run(DiskCache(copy), programs[0])
    assert from_disk and np.array_equal(result, X * 3.0)


@as_root
@pytest.mark.parametrize("swap", ["a symbolic link", "another user's directory"])
def test_the_directory_swapped_mid_session_is_checked_again_and_refused(tmp_path, programs,
                                                                        swap):
    plus, _ = programs
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    cache = DiskCache(home / "cache")
    result, _ = run(cache, plus)
    plant(tmp_path / "evil", programs)
    sanity_check_the_plant(tmp_path, programs)

    (home / "cache").rename(home / "moved")
    if swap == "a symbolic link":
        (home / "cache").symlink_to(tmp_path / "evil")
    else:
        (tmp_path / "evil").rename(home / "cache")
    assert_recompiled_with_warning(cache, plus, X + 1.0, "belongs to another user")
    assert cache.directory() is None and cache.usage().problem


def test_the_directory_moved_away_and_made_again_mid_session_is_used(tmp_path, programs):
    plus, _ = programs
    cache = DiskCache(tmp_path / "cache")
    run(cache, plus)
    shutil.rmtree(tmp_path / "cache")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiskCacheWarning)
        result, from_disk = run(cache, plus)                 # made again, private
        assert not from_disk and np.array_equal(result, X + 1.0)
        assert run(cache, plus)[1]


def test_the_directory_opened_to_others_mid_session_is_refused(tmp_path, programs):
    plus, _ = programs
    cache = DiskCache(tmp_path / "cache")
    run(cache, plus)
    (tmp_path / "cache").chmod(0o777)
    with pytest.warns(DiskCacheWarning, match="others may write to it"):
        result, from_disk = run(cache, plus)
    assert not from_disk and np.array_equal(result, X + 1.0)


# -- directories on the way ------------------------------------------------------------------

def assert_refused(path, match, programs):
    """The cache at `path` is off with a warning matching `match`; the cell still compiles;
    nothing is written there."""
    cache = DiskCache(path)
    with pytest.warns(DiskCacheWarning, match=match):
        result, from_disk = run(cache, programs[0])
    np.testing.assert_array_equal(result, X + 1.0)
    assert not from_disk and cache.directory() is None and match_problem(cache, match)
    assert not path.exists() or not any(path.iterdir())


def match_problem(cache, match) -> bool:
    return re.search(match, cache.usage().problem) is not None


def assert_used(path, programs):
    cache = DiskCache(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiskCacheWarning)
        run(cache, programs[0])
        result, from_disk = run(DiskCache(path), programs[0])
    assert from_disk and np.array_equal(result, X + 1.0)


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_parent_others_may_write_to_is_refused(tmp_path, programs, mode):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared").chmod(mode)
    assert_refused(tmp_path / "shared" / "sub", "others may write to the directory holding "
                   "sub", programs)


def test_a_grandparent_others_may_write_to_is_refused(tmp_path, programs):
    (tmp_path / "shared" / "mine").mkdir(parents=True)
    (tmp_path / "shared").chmod(0o777)
    (tmp_path / "shared" / "mine").chmod(0o700)
    assert_refused(tmp_path / "shared" / "mine" / "cache", "holding mine", programs)


def test_a_sticky_parent_with_the_users_own_directory_below_is_used(tmp_path, programs):
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp").chmod(0o1777)                         # as /tmp
    assert_used(tmp_path / "tmp" / "mine" / "cache", programs)


@as_root
def test_a_sticky_parent_with_another_users_directory_below_is_refused(tmp_path, programs):
    (tmp_path / "tmp" / "theirs").mkdir(parents=True)
    (tmp_path / "tmp").chmod(0o1777)
    os.chown(tmp_path / "tmp" / "theirs", OTHER_UID, OTHER_UID)
    (tmp_path / "tmp" / "theirs").chmod(0o755)
    assert_refused(tmp_path / "tmp" / "theirs" / "cache", "theirs .*belongs to another user",
                   programs)


@as_root
def test_a_cache_directory_made_first_by_another_user_in_a_sticky_parent_is_refused(
        tmp_path, programs):
    (tmp_path / "tmp" / "psc_jit").mkdir(parents=True)
    (tmp_path / "tmp").chmod(0o1777)
    os.chown(tmp_path / "tmp" / "psc_jit", OTHER_UID, OTHER_UID)
    (tmp_path / "tmp" / "psc_jit").chmod(0o700)
    assert_refused(tmp_path / "tmp" / "psc_jit", "belongs to another user", programs)


@as_root
def test_a_parent_owned_by_another_user_is_refused(tmp_path, programs):
    (tmp_path / "theirs").mkdir(mode=0o755)                  # they may chmod it and swap
    os.chown(tmp_path / "theirs", OTHER_UID, OTHER_UID)
    assert_refused(tmp_path / "theirs" / "cache", "belongs to another user", programs)


@as_root
def test_a_link_of_another_users_in_a_sticky_directory_is_refused(tmp_path, programs):
    (tmp_path / "home").mkdir(mode=0o700)
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp").chmod(0o1777)
    (tmp_path / "tmp" / "link").symlink_to(tmp_path / "home")
    os.lchown(tmp_path / "tmp" / "link", OTHER_UID, OTHER_UID)
    assert_refused(tmp_path / "tmp" / "link" / "cache", "symbolic link link", programs)


def test_a_link_to_a_private_directory_is_followed(tmp_path, programs):
    (tmp_path / "data").mkdir(mode=0o700)
    (tmp_path / "home").mkdir(mode=0o700)
    (tmp_path / "home" / ".cache").symlink_to(tmp_path / "data")
    assert_used(tmp_path / "home" / ".cache" / "psc_jit", programs)
    assert (tmp_path / "data" / "psc_jit").is_dir()


def test_a_link_into_a_directory_others_may_write_to_is_refused(tmp_path, programs):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared").chmod(0o777)
    (tmp_path / "link").symlink_to(tmp_path / "shared")
    assert_refused(tmp_path / "link" / "cache", "others may write", programs)
