"""The re-run path of `jit(f)`: a cache hit found by the fast key gives exactly what the full
signature would (aliases, static values, layouts, cleared and evicted entries), and a
decision to fall back is cached like a compiled program (the magic's path, driven here
through the runner without a notebook)."""
import numpy as np
import pytest
from psc_jit.core import TRACE_CACHE, jit
from psc_jit.core.compile.cache import Signature, TraceCache
from psc_jit.runner import CellRunner, Options

pytestmark = pytest.mark.xla


def add_scaled(a, b, k):
    return a + k * b


def test_fast_hits_and_misses_agree_with_the_signature():
    f = jit(add_scaled)
    a, b = np.ones(4), np.arange(4.0)
    f(a, b, 2)
    f(np.zeros(4), b, 2)
    assert f.last_call.cache_hit
    f(a, b, 3)
    assert f.last_call.miss_reason == "k: 2 → 3 (static)"
    f(a, b, True)              # True == 1 but is another static value
    f(a, b, 1)
    assert not f.last_call.cache_hit and f.last_call.miss_reason == "k: True → 1 (static)"
    f(a.astype(np.float32), b, 1)
    assert f.last_call.miss_reason == "a: f64[4] → f32[4]"
    f(a[::2], b[:2], 1)
    assert not f.last_call.cache_hit
    np.testing.assert_array_equal(f(a[::2], b[:2], 1), a[::2] + b[:2])
    assert f.last_call.cache_hit


def test_the_same_array_twice_keeps_numpys_aliasing():
    def bump(a, b):
        a += 1.0
        return b * 2.0
    f = jit(bump)
    x, y = np.ones(3), np.ones(3)
    f(x, y)
    np.testing.assert_array_equal(f(x, x), np.full(3, 6.0))     # b sees a's update
    assert x.tolist() == [3.0, 3.0, 3.0]
    assert f.last_call.miss_reason.startswith("inputs that are the same array changed")


def test_clear_and_eviction_are_seen_by_re_runs(monkeypatch):
    f = jit(add_scaled)
    a = np.ones(2)
    f(a, a + 1, 2)
    TRACE_CACHE.clear()
    f(a, a + 1, 2)
    assert not f.last_call.cache_hit
    small = TraceCache(maxsize=1)
    for module in ("jit", "prepare"):       # (prepare finds entries, jit inserts them)
        monkeypatch.setattr(f"psc_jit.core.compile.{module}.TRACE_CACHE", small)
    g = jit(add_scaled)
    g(a, a + 1, 2)
    g(a, a + 1, 3)                  # evicts the first entry
    g(a, a + 1, 2)
    assert not g.last_call.cache_hit and small.evictions >= 1


def test_keyword_calls_and_defaults_take_the_full_path():
    def scaled(x, k=2.0):
        return x * k
    f = jit(scaled)
    x = np.ones(3)
    assert f(x).tolist() == [2.0] * 3
    assert f(x, 4.0).tolist() == [4.0] * 3
    assert f(x, k=3.0).tolist() == [3.0] * 3 and f.last_call.cache_hit
    assert f(x).tolist() == [2.0] * 3 and f.last_call.cache_hit


def test_a_fallback_is_cached_and_retried_when_what_it_read_changes():
    namespace = {"np": np, "x": np.arange(4.0), "limit": 1}
    runner = CellRunner(namespace)
    cell = "y = x.copy()\nif x.sum() > limit:\n    print('big')\n"
    misses = TRACE_CACHE.misses
    report, _ = runner.run(cell, Options(compare=False, quiet=True))
    assert report.split and "print" in report.plain_reasons      # (the print on the host)
    cell = "y = x[x > limit]\n"
    report, _ = runner.run(cell, Options(compare=False, quiet=True, name="fb"))
    assert not report.compiled and "boolean-mask selection" in report.fallback_reason
    misses = TRACE_CACHE.misses
    report, _ = runner.run(cell, Options(compare=False, quiet=True, name="fb"))
    assert not report.compiled and "boolean-mask selection" in report.plain_reasons
    assert TRACE_CACHE.misses == misses                       # not traced again
    np.testing.assert_array_equal(namespace["y"], [2.0, 3.0])
    namespace["x"] = np.arange(5.0)
    report, _ = runner.run(cell, Options(compare=False, quiet=True, name="fb"))
    assert TRACE_CACHE.misses == misses + 1 and not report.compiled
    np.testing.assert_array_equal(namespace["y"], [2.0, 3.0, 4.0])


def test_magic_rerun_reports_hit_and_keeps_the_miss_history():
    namespace = {"np": np, "x": np.ones(3)}
    runner = CellRunner(namespace)
    for _ in range(150):
        report, _ = runner.run("y = x + 1.0\n", Options(compare=False, quiet=True, name="hist"))
    assert report.cache_hit and report.signature == "x: f64[3]"
    assert [e.detail for e in report.cache_events if e.kind == "miss"] == [
        "first run of this cell"]
    assert report.cache_entries[0].hits == 149


def test_keyword_calls_re_run_by_the_fast_key(monkeypatch):
    f = jit(add_scaled)
    a, b = np.ones(4), np.arange(4.0)
    np.testing.assert_array_equal(f(a, b=b, k=2), a + 2 * b)
    built = []
    monkeypatch.setattr(type(f), "spec", lambda self, args, kwargs: built.append(kwargs) or
                        call_spec_of(self, args, kwargs))
    np.testing.assert_array_equal(f(k=2, b=b, a=np.zeros(4)), 2 * b)   # any keyword order
    np.testing.assert_array_equal(f(a, b, 2), a + 2 * b)
    assert f.last_call.cache_hit and built == []        # no signature was bound for these
    f(a, b=b, k=3)
    assert f.last_call.miss_reason == "k: 2 → 3 (static)"
    with pytest.raises(TypeError):
        f(a, b=b, c=2)


def test_a_positional_only_parameter_given_by_keyword_is_refused_as_python_does():
    def scaled(a, /, k):
        return a * k
    f = jit(scaled)
    f(np.ones(2), 3)
    with pytest.raises(TypeError):
        f(a=np.ones(2), k=3)


def call_spec_of(jitted, args, kwargs):
    from psc_jit.core.compile.signature import call_spec
    return call_spec(jitted.arguments(args, kwargs), jitted.static_names, jitted.traced_names)


def test_a_record_hit_since_it_was_placed_outlives_one_that_was_not():
    """Hits do not reorder the LRU (they are on every cached call's path); eviction reads
    their count instead: a record used since it was placed goes back to the end (a second
    chance), the unused one goes."""
    cache = TraceCache(maxsize=2)
    first = cache.insert("f", "f", Signature(0, ()), object())
    second = cache.insert("f", "f", Signature(1, ()), object())
    cache.record_hit(first)
    third = cache.insert("f", "f", Signature(2, ()), object())
    assert first.alive and not second.alive and third.alive
    fourth = cache.insert("f", "f", Signature(3, ()), object())
    assert first.alive and not third.alive          # first went back behind third
    fifth = cache.insert("f", "f", Signature(4, ()), object())
    assert not first.alive and fourth.alive and fifth.alive     # no hit since
    assert cache.evictions == 3 and cache.hits == 1 and first.hits == 1
