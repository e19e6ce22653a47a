"""The disk cache's files: private directory, refused when foreign-owned or writable by
others, checksummed entries (a damaged one is never trusted), atomic writes, LRU size cap;
and executables through it (a loaded one computes what the compiled one did)."""
import os
import stat
import time
import warnings

import numpy as np
import pytest
from psc_jit.core import DiskCache, DiskCacheWarning, jit
from psc_jit.core.compile.diskcache import (MAGIC, EntryIdentity, default_directory,
                                            load_or_compile)

pytestmark = pytest.mark.xla


def named(key: str) -> EntryIdentity:
    """The identity of an entry stored under `key` by this psc_jit, with no types."""
    return EntryIdentity.of(key)


def fresh(tmp_path, **kwargs) -> DiskCache:
    return DiskCache(tmp_path / "cache", **kwargs)


def test_the_directory_is_created_private(tmp_path):
    cache = fresh(tmp_path)
    assert cache.store(named("a" * 64), b"payload", 0.5, False)
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    entry = cache.load(named("a" * 64))
    assert entry.payload == b"payload" and entry.compile_seconds == 0.5
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["a" * 64 + ".xla"]  # no temp


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_a_directory_writable_by_others_is_refused_with_one_warning(tmp_path, mode):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache").chmod(mode)
    cache = fresh(tmp_path)
    with pytest.warns(DiskCacheWarning, match="others may write to it"):
        assert cache.directory() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache.configure(tmp_path / "cache")      # looked at again: logged, not warned again
        assert not cache.store(named("b" * 64), b"x", 1.0, False)
    assert list((tmp_path / "cache").iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a directory to another user needs root")
def test_a_directory_of_another_user_is_refused(tmp_path):
    (tmp_path / "cache").mkdir(mode=0o700)
    os.chown(tmp_path / "cache", 65534, 65534)
    with pytest.warns(DiskCacheWarning, match="belongs to another user"):
        assert fresh(tmp_path).directory() is None


def damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:-10])
    elif how == "flipped":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif how == "header":
        path.write_bytes(MAGIC + b"\0\0\0\5{oops" + data[-20:])
    else:
        path.write_bytes(b"")


@pytest.mark.parametrize("how", ["truncated", "flipped", "header", "empty"])
def test_a_damaged_entry_is_never_trusted(tmp_path, how):
    cache = fresh(tmp_path)
    cache.store(named("c" * 64), b"0123456789" * 100, 1.0, False)
    damage(tmp_path / "cache" / ("c" * 64 + ".xla"), how)
    with pytest.warns(DiskCacheWarning, match="unusable"):
        assert cache.load(named("c" * 64)) is None
    assert cache.errors == 1 and not (tmp_path / "cache" / ("c" * 64 + ".xla")).exists()


def test_the_size_cap_evicts_the_least_recently_used(tmp_path):
    cache = fresh(tmp_path)
    keys = [str(i) * 64 for i in range(3)]
    for age, key in enumerate(keys):
        cache.store(named(key), bytes(800), 1.0, False)
        os.utime(tmp_path / "cache" / (key + ".xla"), (time.time() - 100 + age,) * 2)
    cache.max_bytes = 3 * (tmp_path / "cache" / (keys[0] + ".xla")).stat().st_size + 100
    assert cache.load(named(keys[0])) is not None            # used: now the most recent
    cache.store(named("9" * 64), bytes(800), 1.0, False)     # over three entries: one must go
    left = {p.stem for p in (tmp_path / "cache").iterdir()}
    assert left == {keys[0], keys[2], "9" * 64} and cache.evictions == 1


def test_off_values_and_the_default_location(monkeypatch, tmp_path):
    for value in ("", "off", "OFF"):
        monkeypatch.setenv("PSC_JIT_CACHE_DIR", value)
        assert default_directory() is None
    monkeypatch.delenv("PSC_JIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_directory() == tmp_path / "psc_jit"
    assert DiskCache("off").directory() is None
    assert DiskCache(tmp_path / "x", enabled=False).directory() is None


def test_a_loaded_executable_computes_what_the_compiled_one_did(tmp_path):
    cache = fresh(tmp_path)
    lowered = jit(lambda x: np.exp(x) @ x.T - 1.5).trace(np.ones((4, 3))).lower()
    from psc_jit.core.compile import xla
    graph = lowered.graph
    compiled, origin = load_or_compile("d" * 64, lowered.text, graph.in_avals, graph.out_avals,
                                       lambda: xla.compile_stablehlo(lowered.text,
                                                                     graph.in_avals,
                                                                     graph.out_avals), cache)
    assert origin is None and cache.misses == 1 and cache.stores == 1

    def refuse():
        raise AssertionError("compiled although the disk cache has the program")
    loaded, origin = load_or_compile("d" * 64, lowered.text, graph.in_avals, graph.out_avals,
                                     refuse, cache)
    assert origin is not None and origin.compile_seconds > 0 and cache.hits == 1
    x = np.arange(12.0).reshape(4, 3) / 7
    np.testing.assert_array_equal(loaded.execute([x])[0], compiled.execute([x])[0])


def test_a_temporary_file_left_by_a_dead_writer_is_removed_later(tmp_path):
    cache = fresh(tmp_path)
    cache.store(named("a" * 64), bytes(100), 1.0, False)
    directory = tmp_path / "cache"
    dead = directory / ".tmp-dead.xla"
    recent = directory / ".tmp-writing.xla"
    dead.write_bytes(bytes(5000))
    recent.write_bytes(bytes(5000))
    os.utime(dead, (time.time() - 2 * 3600,) * 2)
    cache.store(named("b" * 64), bytes(100), 1.0, False)
    assert not dead.exists(), "a writer's leftover from hours ago is still there"
    assert recent.exists(), "a file another process may still be writing was deleted"
    assert cache.load(named("a" * 64)) is not None and cache.load(named("b" * 64)) is not None


WRITER = """
import sys
from psc_jit.core import DiskCache
from psc_jit.core.compile.diskcache import EntryIdentity
named = EntryIdentity.of
cache = DiskCache(sys.argv[1], max_bytes=int(sys.argv[2]))
me = int(sys.argv[3])
for step in range(40):
    key = format(step % 12, "x") * 64          # both writers store the same keys too
    assert cache.store(named(key), bytes([me, step]) * 400, 1.0, False)
    cache.load(named(format((step * 7) % 12, "x") * 64))
"""


def test_two_processes_storing_at_once_leave_whole_entries_within_the_cap(tmp_path):
    import subprocess
    import sys
    directory, cap = tmp_path / "shared", 6000
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(directory), str(cap),
                                 str(me)], stderr=subprocess.PIPE, text=True)
               for me in (1, 2)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    entries = [path for path in directory.iterdir() if not path.name.startswith(".")]
    assert entries and sum(path.stat().st_size for path in entries) <= cap
    assert not [path for path in directory.iterdir() if path.name.startswith(".tmp-")]
    reader = DiskCache(directory, max_bytes=cap)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiskCacheWarning)
        for path in entries:
            entry = reader.load(named(path.stem))
            assert entry is not None, f"{path.name} is not a whole entry"
            writer, step = entry.payload[:2]
            assert writer in (1, 2) and entry.payload == bytes([writer, step]) * 400


def test_entries_name_the_installed_psc_jits_version():
    from importlib import metadata

    from psc_jit.core.compile.diskcache import PSC_JIT_VERSION
    assert PSC_JIT_VERSION == metadata.version("psc_jit") == named("a" * 64).psc_jit


def test_an_entry_of_the_earlier_format_is_a_quiet_miss(tmp_path):
    cache = fresh(tmp_path)
    cache.store(named("e" * 64), b"payload", 1.0, False)
    path = tmp_path / "cache" / ("e" * 64 + ".xla")
    path.write_bytes(b"psc_jit executable 1\n" + path.read_bytes()[len(MAGIC):])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DiskCacheWarning)
        assert cache.load(named("e" * 64)) is None
    assert cache.errors == 0 and not path.exists()
