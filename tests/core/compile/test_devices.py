"""Devices, device arrays, asynchronous dispatch and sharding, against the single-device run
and NumPy. The suite runs with 4 CPU devices (tests/conftest.py sets PSC_JIT_CPU_DEVICES)."""
from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import psc_jit
from psc_jit.core import XlaError, set_cpu_device_count
from psc_jit.sharding import Mesh, NamedSharding, P

pytestmark = pytest.mark.xla


@pytest.fixture(scope="module")
def mesh():
    devices = psc_jit.devices()
    assert len(devices) == 4, "tests/conftest.py asks for 4 CPU devices"
    return Mesh(devices, ("data",))


@pytest.fixture(scope="module")
def grid():
    return Mesh(np.array(psc_jit.devices()).reshape(2, 2), ("a", "b"))


def test_devices_are_the_count_asked_for_and_fixed_once_made():
    devices = psc_jit.devices()
    assert [d.id for d in devices] == [0, 1, 2, 3]
    assert {d.platform for d in devices} == {"cpu"}
    with pytest.raises(XlaError, match="already has 4 CPU device.*restart the kernel"):
        set_cpu_device_count(2)
    set_cpu_device_count(4)     # the count it has: nothing to change


def test_device_count_from_the_environment_in_a_fresh_process():
    script = "import psc_jit; print(len(psc_jit.devices()))"
    for count in ("1", "3"):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env={**_env(), "PSC_JIT_CPU_DEVICES": count}, timeout=120)
        assert out.stdout.strip() == count, out.stderr
    bad = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**_env(), "PSC_JIT_CPU_DEVICES": "many"}, timeout=120)
    assert bad.returncode != 0 and "PSC_JIT_CPU_DEVICES='many'" in bad.stderr


def _env():
    import os
    return dict(os.environ)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool", "complex64",
                                   "uint8", "float16"])
@pytest.mark.parametrize("shape", [(), (0,), (8,), (8, 3), (4, 2, 6)])
def test_device_put_round_trips_every_value(dtype, shape, mesh):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    for where in (None, 2, psc_jit.devices()[3], NamedSharding(mesh, P())):
        a = psc_jit.device_put(x, where)
        back = np.asarray(a)
        assert back.dtype == x.dtype and back.shape == x.shape
        np.testing.assert_array_equal(back, x)
    if shape and shape[0] % 4 == 0:
        a = psc_jit.device_put(x, NamedSharding(mesh, P("data")))
        np.testing.assert_array_equal(np.asarray(a), x)
        assert a.sharding.describe(a.ndim) == "sharded data=4"


@pytest.mark.parametrize("spec", [P("a", "b"), P(None, "b"), P(("a", "b")), P("b", "a"),
                                  P("a"), P()])
def test_two_axis_meshes_place_every_block_where_the_spec_says(spec, grid):
    x = np.arange(8 * 12, dtype=np.float64).reshape(8, 12)
    sharding = NamedSharding(grid, spec)
    a = psc_jit.device_put(x, sharding)
    np.testing.assert_array_equal(np.asarray(a), x)
    np.testing.assert_array_equal(a.local_data(), x)    # (one process holds every block)
    f = psc_jit.jit(lambda v: np.sin(v) * 3.0 + v)
    np.testing.assert_array_equal(np.asarray(f(a)), psc_jit.jit(lambda v: np.sin(v) * 3.0 + v)(x))


def test_device_put_copies_and_arrays_are_immutable(mesh):
    x = np.arange(8.0)
    a = psc_jit.device_put(x, NamedSharding(mesh, P("data")))
    x[:] = -1
    np.testing.assert_array_equal(np.asarray(a), np.arange(8.0))
    with pytest.raises(TypeError, match="immutable"):
        a[0] = 5.0

    def writes(v):
        v[0] = 1.0
        return v * 2
    with pytest.raises(TypeError, match="v is a psc_jit.Array, which is immutable"):
        psc_jit.jit(writes)(a)
    assert pickle.loads(pickle.dumps(a)).tolist() == list(range(8))


def test_uneven_split_is_refused_with_the_fix(mesh):
    with pytest.raises(ValueError, match=r"dimension 0 .* \(6\) cannot be split evenly over 4 "
                                         r"devices .* pad it to a multiple of 4"):
        psc_jit.device_put(np.ones(6), NamedSharding(mesh, P("data")))
    with pytest.raises(ValueError, match="'model', which Mesh\\(data=4\\) does not have"):
        NamedSharding(mesh, P("model"))


def _layer(x, w, b):
    return np.tanh(x @ w + b) * 0.5 + x.sum(axis=1, keepdims=True) * 1e-3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    return (rng.standard_normal((16, 8)), rng.standard_normal((8, 8)),
            rng.standard_normal(8))


def test_sharded_elementwise_matmul_and_row_reduction_equal_one_device(mesh, data):
    x, w, b = data
    single = psc_jit.jit(_layer)(x, w, b)
    rows = NamedSharding(mesh, P("data"))
    f = psc_jit.jit(_layer, in_shardings=(rows, None, None))
    out = f(x, w, b)
    assert type(out) is np.ndarray and out.dtype == single.dtype    # NumPy in: NumPy out
    np.testing.assert_array_equal(out, single)     # every row's work stays on its device
    xd = psc_jit.device_put(x, rows)
    out = psc_jit.jit(_layer)(xd, w, b)
    assert isinstance(out, psc_jit.Array) and out.sharding == rows
    np.testing.assert_array_equal(np.asarray(out), single)
    entry = f.device_programs.last.as_text().split("ENTRY")[1]
    assert "f64[4,8]" in entry.splitlines()[0]      # each device's block of x: 4 of 16 rows


def test_reduction_over_the_sharded_axis_all_reduces(mesh, data):
    x = data[0]
    rows = NamedSharding(mesh, P("data"))

    def colsum(v):
        return (v * 2.0).sum(axis=0)
    f = psc_jit.jit(colsum)
    out = f(psc_jit.device_put(x, rows))
    assert out.sharding.describe(1) == "replicated"
    # each device sums its rows, then XLA adds the four partial sums: the order of the
    # additions differs from one device's, so the last bits may too
    np.testing.assert_allclose(np.asarray(out), colsum(x), rtol=1e-13)
    hlo = f.device_programs.last.as_text()
    assert "all-reduce" in hlo
    assert "f64[4,8]" in hlo.split("ENTRY")[1].splitlines()[0]


def test_data_parallel_gradient_step_equals_one_device(mesh):
    rng = np.random.default_rng(2)
    X, y, w = rng.standard_normal((32, 5)), rng.standard_normal(32), rng.standard_normal(5)

    def loss(w, X, y):
        return np.mean((X @ w - y) ** 2)

    def step(w, X, y):
        return w - 0.1 * psc_jit.grad(loss)(w, X, y)
    rows = NamedSharding(mesh, P("data"))
    single = psc_jit.jit(step)(w, X, y)
    sharded = psc_jit.jit(step, in_shardings=(None, rows, rows))(w, X, y)
    np.testing.assert_allclose(sharded, single, rtol=1e-13)
    stepped = psc_jit.jit(step, in_shardings=(None, rows, rows))
    stepped(w, X, y)
    assert "all-reduce" in stepped.device_programs.last.as_text()   # the gradient's sum


def test_out_shardings_return_arrays_laid_out_as_asked(mesh, data):
    x = data[0]
    rows = NamedSharding(mesh, P("data"))
    replicated = NamedSharding(mesh, P())
    f = psc_jit.jit(lambda v: v * 3.0, out_shardings=replicated)
    out = f(x)
    assert isinstance(out, psc_jit.Array) and out.sharding == replicated
    np.testing.assert_array_equal(np.asarray(out), x * 3.0)
    g = psc_jit.jit(lambda v: v * 3.0, in_shardings=replicated, out_shardings=rows)
    assert g(x).sharding == rows


def test_a_changed_sharding_misses_and_says_why(mesh, data):
    x = data[0]
    f = psc_jit.jit(lambda v: v + 1.0)
    f(psc_jit.device_put(x, NamedSharding(mesh, P("data"))))
    first = f.device_programs.last
    f(psc_jit.device_put(x, NamedSharding(mesh, P("data"))))
    assert f.device_programs.last is first and f.device_programs.last_reason is None
    f(psc_jit.device_put(x, NamedSharding(mesh, P())))
    assert f.device_programs.last is not first
    assert f.device_programs.last_reason.startswith("v: sharded data=4")
    assert "→ replicated" in f.device_programs.last_reason


def test_arrays_on_different_devices_are_refused(mesh):
    a = psc_jit.device_put(np.ones(4), 0)
    b = psc_jit.device_put(np.ones(4), 1)
    with pytest.raises(ValueError, match="lie on different devices.*device_put"):
        psc_jit.jit(lambda u, v: u + v)(a, b)


def test_chained_calls_stay_on_the_device_and_read_once(mesh):
    f = psc_jit.jit(lambda v: np.sqrt(v * v + 1.0))
    a = psc_jit.device_put(np.linspace(0, 1, 8), NamedSharding(mesh, P("data")))
    expected = np.linspace(0, 1, 8)
    for _ in range(10):
        a = f(a)
        expected = np.sqrt(expected * expected + 1.0)
    assert isinstance(a, psc_jit.Array)
    np.testing.assert_array_equal(np.asarray(a), psc_jit.jit(lambda v: v)(expected))


def test_a_long_call_returns_before_its_run_ends_and_waits_when_asked():
    x = psc_jit.device_put(np.random.default_rng(3).random((600, 600)))

    def heavy(a):
        for _ in range(6):
            a = np.tanh(a @ a * 1e-3)
        return a
    f = psc_jit.jit(heavy)
    f(x).block_until_ready()        # compiled
    out = f(x)
    assert not out.is_ready()       # the call returned while XLA computes
    assert out.block_until_ready() is out and out.is_ready()
    np.testing.assert_array_equal(np.asarray(out), np.asarray(f(x)))


def test_a_failed_check_of_an_asynchronous_run_raises_numpys_error_at_the_read():
    x = psc_jit.device_put(np.arange(5.0))

    def pick(v, i):
        return v[i] * 2
    out = psc_jit.jit(pick)(x, psc_jit.device_put(np.array(7)))     # returns: not read yet
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"
                       ) as raised:
        np.asarray(out)
    assert raised.traceback[-1].path.name == "test_devices.py"     # shown at `v[i] * 2`
    assert np.asarray(psc_jit.jit(pick)(x, psc_jit.device_put(np.array(3)))) == 6.0


def test_xla_run_errors_name_the_call():
    x = psc_jit.device_put(np.ones(4))

    def huge(v):
        return np.sort(np.broadcast_to(v[0], (1 << 36,)) * 2.0)[:4] + v
    with pytest.raises(XlaError, match="RESOURCE_EXHAUSTED"):
        np.asarray(psc_jit.jit(huge)(x))


def test_sharded_programs_run_in_a_process_of_one_device_too():
    script = textwrap.dedent("""
        import numpy as np, psc_jit
        from psc_jit.sharding import Mesh, NamedSharding, P
        mesh = Mesh(psc_jit.devices(), ("data",))
        x = np.arange(12.0).reshape(4, 3)
        out = psc_jit.jit(lambda v: v.sum(axis=1), in_shardings=NamedSharding(mesh, P("data")))(x)
        print(type(out).__name__, out.tolist())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**_env(), "PSC_JIT_CPU_DEVICES": "1"}, timeout=120)
    assert out.stdout.strip() == "ndarray [3.0, 12.0, 21.0, 30.0]", out.stderr


def test_constrain_moves_a_value_and_changes_no_number(mesh):
    from psc_jit.sharding import constrain

    def f(v):
        y = np.sin(v) * 2.0
        return constrain(y, P(None, "data")) + 1.0
    x = np.arange(32.0).reshape(8, 4)
    assert constrain(x, P("data")) is x            # plain Python: x itself
    one = psc_jit.jit(f)(x)                        # one device: nothing to move
    g = psc_jit.jit(f, in_shardings=NamedSharding(mesh, P("data")))
    np.testing.assert_array_equal(g(x), one)
    assert "all-to-all" in g.device_programs.last.as_text()    # rows -> columns
    grad = psc_jit.grad(lambda v: f(v).sum())
    np.testing.assert_array_equal(
        psc_jit.jit(grad, in_shardings=NamedSharding(mesh, P("data")))(x), psc_jit.jit(grad)(x))
    batched = psc_jit.vmap(lambda r: constrain(r * 3.0, P("data")))
    np.testing.assert_array_equal(psc_jit.jit(batched)(x), x * 3.0)


def test_constrain_over_an_axis_the_mesh_lacks_is_refused(mesh):
    from psc_jit.core import LoweringError
    from psc_jit.sharding import constrain
    g = psc_jit.jit(lambda v: constrain(v * 2.0, P("model")),
                    in_shardings=NamedSharding(mesh, P("data")))
    with pytest.raises(LoweringError, match="mesh has axes data; 'model' is not one of them"):
        g(np.ones((8, 4)))


def test_collectives_are_read_with_their_bytes():
    from psc_jit.core import collectives
    hlo = ("  %all-reduce = f32[3]{0} all-reduce(%w), channel_id=1\n"
           "  %a = (f64[2,1,1]{2,1,0}, c64[2]{0}) all-to-all(%x, %y)\n"
           "  %s = f32[8]{0} add(%a, %b)\n"
           "  %g = pred[4,2]{1,0} all-gather(%p), dimensions={0}\n")
    assert collectives(hlo) == [("all-reduce", "f32[3]{0}", 12),
                                ("all-to-all", "(f64[2,1,1]{2,1,0}, c64[2]{0})", 32),
                                ("all-gather", "pred[4,2]{1,0}", 8)]


def _has_gpu() -> bool:
    try:
        return bool(psc_jit.devices("gpu"))
    except XlaError:
        return False


def test_gpus_come_through_a_plugin_or_say_how_to_get_one():
    from psc_jit.core.compile.xla import gpu_plugin
    if gpu_plugin() is None:
        with pytest.raises(XlaError, match=r"no GPU plugin is installed: .*pip install "
                                           r"'jax-cuda12-pjrt==0\.10"):
            psc_jit.devices("gpu")
    elif not _has_gpu():
        with pytest.raises(XlaError, match="plugin .* found no usable GPU"):
            psc_jit.devices("gpu")
    with pytest.raises(ValueError, match="psc_jit knows 'cpu' and 'gpu'"):
        psc_jit.devices("tpu")


@pytest.mark.skipif(not _has_gpu(), reason="no GPU on this machine (bench/devices.py checks "
                                           "one where it exists)")
def test_a_gpu_runs_the_sharded_path_as_the_cpu_devices_do():
    gpu = psc_jit.devices("gpu")[0]
    x = np.arange(12.0).reshape(4, 3)
    out = psc_jit.jit(lambda v: np.sin(v) * 2.0)(psc_jit.device_put(x, gpu))
    np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2.0, rtol=1e-15)


def test_device_times_group_a_profile_by_device_with_the_collectives_part():
    from psc_jit.core.compile.thunks import DeviceTime, ThunkEvent, ThunkTrace, device_times
    trace = ThunkTrace((ThunkEvent("fusion", 0, 300, 0), ThunkEvent("all-reduce", 300, 100, 0),
                        ThunkEvent("fusion.1", 0, 200, 1),
                        ThunkEvent("all-reduce-start", 200, 200, 1)))
    assert device_times(trace) == (DeviceTime(0, 400, 100), DeviceTime(1, 400, 200))
    assert device_times(trace)[1].collective_share == 0.5


def test_numpy_and_device_calls_of_one_function_each_keep_their_kind():
    f = psc_jit.jit(lambda v: v * 2.0 + 1.0)
    x = np.arange(8.0)
    for _ in range(3):      # (the C++ dispatcher has this signature's fast path by now)
        assert type(f(x)) is np.ndarray
    a = psc_jit.device_put(x)
    out = f(a)
    assert isinstance(out, psc_jit.Array)
    np.testing.assert_array_equal(np.asarray(out), f(x))
    assert type(f(x)) is np.ndarray and isinstance(f(a), psc_jit.Array)
