"""jaxlib itself and PJRT's clients: the pinned jaxlib range, the CPU clients (one that runs
programs on a thread of XLA's, one that runs them on the calling thread) and their devices.

The asynchronous client has `cpu_device_count()` devices: one unless the user asks for more
(`PscJit.cpu_devices`, `PSC_JIT_CPU_DEVICES`) before the first program is compiled. A
program without shardings runs on its first device either way; device arrays and sharded
programs (`devices.py`) use all of them. The inline client always has one: it only ever runs
short single-device programs."""
from __future__ import annotations

import functools
import os
import threading

from ..errors import XlaError

SUPPORTED_JAXLIB = ((0, 10, 2), (0, 11, 0))     # [lowest, first unsupported)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int("".join(c for c in piece if c.isdigit()) or 0)
                 for piece in text.split(".")[:3])


@functools.cache
def _jaxlib():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")   # keep XLA's start-up INFO lines quiet
    try:
        import jaxlib
        from jaxlib import _jax, xla_client
    except ImportError as err:
        raise XlaError("psc_jit needs jaxlib (the XLA runtime): pip install 'jaxlib>=0.10.2,<0.11'"
                       ) from err
    version = _version_tuple(jaxlib.__version__)
    lo, hi = SUPPORTED_JAXLIB
    if not lo <= version < hi:
        raise XlaError(
            f"psc_jit is tested with jaxlib >= {'.'.join(map(str, lo))} and < "
            f"{'.'.join(map(str, hi))}; this is jaxlib {jaxlib.__version__}. "
            f"Install a tested one: pip install 'jaxlib>=0.10.2,<0.11'")
    return jaxlib, _jax, xla_client


def jaxlib_version() -> str:
    return _jaxlib()[0].__version__


_CLIENT_LOCK = threading.Lock()
_DISTRIBUTED: list = []     # the distributed runtime, once started (distributed.py)


@functools.cache
def _client(inline: bool):
    """The process's CPU clients: the asynchronous one (XLA runs a program on a thread of its
    own while the caller waits in slices it can interrupt) and the inline one (the program
    runs on the calling thread: no hand-off to XLA's thread and back, which costs a small
    call tens of µs, but an interrupt waits for the run's end; see `Executable`). Buffers and
    executables of two clients do not mix (NumPy arrays pass between them), so creating each
    is serialized (two threads' first calls must not make two). `inline` has no default: the
    cache keys on the arguments as given, and `_client()` beside `_client(False)` would make
    a second asynchronous client."""
    with _CLIENT_LOCK:
        return _make_client(inline)


@functools.cache
def _make_client(inline: bool):
    _, _jax, xla_client = _jaxlib()
    if _DISTRIBUTED and not inline:     # every process's devices (`start_distributed`)
        return _DISTRIBUTED[0].cpu_client
    count = 1 if inline else cpu_device_count()
    client = xla_client.make_cpu_client(asynchronous=not inline, num_devices=count)
    if not inline:
        _MADE_WITH.append(count)
    return client


DEVICES_ENV = "PSC_JIT_CPU_DEVICES"
_ASKED: list[int] = []        # the counts set by `set_cpu_device_count` (the last one holds)
_MADE_WITH: list[int] = []    # the count the asynchronous client was made with, once made


def cpu_device_count() -> int:
    """How many CPU devices the asynchronous client has (or will have): the count set by
    `set_cpu_device_count`, else PSC_JIT_CPU_DEVICES, else 1."""
    if _MADE_WITH:
        return _MADE_WITH[0]
    if _ASKED:
        return _ASKED[-1]
    text = os.environ.get(DEVICES_ENV, "").strip()
    if not text:
        return 1
    if not text.isdigit() or int(text) < 1:
        raise XlaError(f"{DEVICES_ENV}={text!r}: give a whole number of CPU devices, 1 or more")
    return int(text)


def set_cpu_device_count(count: int) -> None:
    """Ask for `count` CPU devices. PJRT fixes a client's devices when it is made, so once
    psc_jit has compiled or placed anything, the count can no longer change in this process."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"cpu_devices must be a whole number, 1 or more; got {count!r}")
    if _MADE_WITH and _MADE_WITH[0] != count:
        raise XlaError(f"this process's XLA client already has {_MADE_WITH[0]} CPU device(s): "
                       "the count is fixed once the first program is compiled or the first "
                       f"array placed. Set PscJit.cpu_devices (or {DEVICES_ENV}) before "
                       "that, or restart the kernel")
    _ASKED.append(count)


def devices(platform: str = "cpu") -> list:
    """The devices of a platform, in id order: "cpu" (the asynchronous CPU client's), or
    "gpu" (through a PJRT plugin package, when one is installed: see `_plugin_client`)."""
    if platform == "cpu":
        return list(_client(False).devices())
    if platform == "gpu":
        return list(_plugin_client())
    raise ValueError(f"platform {platform!r}: psc_jit knows 'cpu' and 'gpu'")


# PJRT plugins for GPUs, as their packages install them (the package's module, its library)
GPU_PLUGINS = (("cuda", "jax_plugins.xla_cuda13", "xla_cuda_plugin.so"),
               ("cuda", "jax_plugins.xla_cuda12", "xla_cuda_plugin.so"),
               ("rocm", "jax_plugins.xla_rocm7", "xla_rocm_plugin.so"))


def gpu_plugin() -> tuple[str, str] | None:
    """(PJRT name, library path) of the first GPU plugin installed, or None."""
    import importlib.util
    for name, module, library in GPU_PLUGINS:
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            continue
        if spec is not None and spec.submodule_search_locations:
            path = os.path.join(list(spec.submodule_search_locations)[0], library)
            if os.path.exists(path):
                return name, path
    return None


@functools.cache
def _plugin_client():
    """The GPU devices of the installed PJRT plugin (loaded once per process): the same
    PJRT interface as the CPU client's, so placement and partitioned programs take the same
    code path on them."""
    _, _jax, xla_client = _jaxlib()
    found = gpu_plugin()
    version = _jaxlib()[0].__version__
    if found is None:
        raise XlaError("no GPU plugin is installed: for NVIDIA GPUs, pip install "
                       f"'jax-cuda12-pjrt=={version}' (the plugin built for this jaxlib)")
    name, path = found
    try:
        if not xla_client.pjrt_plugin_loaded(name):
            xla_client.load_pjrt_plugin_dynamically(name, path)
        return tuple(xla_client.make_c_api_client(name).devices())
    except Exception as err:   # jaxlib raises its own JaxRuntimeError; keep its text
        raise XlaError(f"the {name} plugin ({path}) found no usable GPU: {err}") from err


@functools.cache
def _device(inline: bool):
    return _client(inline).local_devices()[0]   # (distributed: devices()[0] is process 0's)


def platform() -> str:
    return _client(False).platform


def live_arrays() -> int:
    """How many XLA arrays of psc_jit's clients Python still holds (results kept as NumPy
    arrays included): a run's buffers are freed once none refers to them and it has ended."""
    return sum(len(_client(inline).live_arrays()) for inline in (False, True))


@functools.cache
def _sharding(inline: bool):
    _, _jax, xla_client = _jaxlib()

    class DeviceSharding(_jax.SingleDeviceSharding):
        """The few attributes jaxlib's C++ asks of a sharding object."""

        def _to_xla_hlo_sharding(self, num_dimensions):
            return xla_client.HloSharding.replicate()

        @property
        def memory_kind(self):
            return self._memory_kind

        @property
        def _device_assignment(self):
            return (self._device,)

    return DeviceSharding(_device(inline))




def compile_on_worker(client, text: str, devices, options, waiting, what: str):
    """`client.compile_and_load` of a StableHLO module on a worker thread (jaxlib releases
    the GIL meanwhile) while this thread waits in short slices, so an interrupt stops the
    wait at once: the compile is abandoned (it ends in the background, its result dropped).
    `waiting(seconds so far)` is called about every second. `what` names the module in
    XLA's error."""
    from ..waiting import wait_for_thread
    outcome: dict = {}

    def work():
        try:
            outcome["loaded"] = client.compile_and_load(text.encode(), devices, options)
        except Exception as err:   # jaxlib raises its own XlaRuntimeError; keep its text
            outcome["error"] = err

    worker = threading.Thread(target=work, name="psc_jit XLA compile", daemon=True)
    worker.start()
    wait_for_thread(worker, waiting)
    if "error" in outcome:
        raise XlaError(f"XLA could not compile the {what}: {outcome['error']}"
                       ) from outcome["error"]
    return outcome["loaded"]
