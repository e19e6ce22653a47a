"""XLA:CPU's backend options: entries of DebugOptions' `xla_backend_extra_options` map.

jaxlib's CompileOptions has no setter for that map (`env_option_overrides` refuses a map
value, and the Python `debug_options` object lists a few scalar fields only), but it reads
and writes its own protobuf (`SerializeAsString`, `CompileOptions.ParseFromString`). So the
entries are written into the serialized options: CompileOptionsProto field 3
(executable_build_options) > field 3 (debug_options) > field 500 (xla_backend_extra_options,
one length-delimited entry {1: key, 2: value} per option). No jaxlib import here: xla/
hands the bytes over and parses the result.

The option psc_jit sets, and why:
- `xla_cpu_small_while_loop_byte_threshold`. XLA:CPU runs each kernel of a while loop's body
  as a thunk that its runtime dispatches on every pass (a few µs each under load, and a small
  body has five to ten of them), unless one pass of the loop reads and writes fewer bytes than
  this threshold: then the whole loop is emitted as one compiled function (a "small call")
  and a pass costs what its arithmetic costs. jaxlib's default is 1 KiB, which leaves out any
  body that touches a row of a matrix. At 1 MiB, a pass of a Cholesky or a DP recurrence is
  one function, while a body over a large matrix (a 1000 x 1000 matrix-vector product is
  8 MB a pass) keeps its thunks, which run on XLA's threads and call Eigen. bench/loops.py
  (--passes and the kernels' table) measures both sides.
"""
from __future__ import annotations

SMALL_LOOP_BYTES = 1 << 20

BACKEND_OPTIONS: tuple[tuple[str, str], ...] = (
    ("xla_cpu_small_while_loop_byte_threshold", str(SMALL_LOOP_BYTES)),
)

_EXECUTABLE_BUILD_OPTIONS, _DEBUG_OPTIONS, _BACKEND_EXTRA_OPTIONS = 3, 3, 500
_LENGTH_DELIMITED = 2


def options_with(options_class, backend_options: tuple[tuple[str, str], ...],
                 overrides: tuple[tuple[str, object], ...]):
    """jaxlib's compile options (`options_class`, its CompileOptions) with these backend
    options, which only their serialized form can carry, and these option overrides."""
    serialized = with_backend_options(options_class().SerializeAsString(), backend_options)
    options = options_class.ParseFromString(serialized)
    options.env_option_overrides = list(overrides)
    return options


def with_backend_options(serialized: bytes,
                         options: tuple[tuple[str, str], ...] = BACKEND_OPTIONS) -> bytes:
    """Serialized CompileOptions with `options` added to its backend extra options."""
    path = (_EXECUTABLE_BUILD_OPTIONS, _DEBUG_OPTIONS, _BACKEND_EXTRA_OPTIONS)
    for key, value in options:
        serialized = _with_field(serialized, path, _map_entry(key, value))
    return serialized


def _map_entry(key: str, value: str) -> bytes:
    return _field(1, key.encode()) + _field(2, value.encode())


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited field."""
    return _varint(number << 3 | _LENGTH_DELIMITED) + _varint(len(payload)) + payload


def _with_field(message: bytes, path: tuple[int, ...], payload: bytes) -> bytes:
    """`message` with a field `path[-1]` holding `payload`, inside the nested messages
    `path[:-1]` (each one present in `message`: the serialized options always hold them)."""
    if len(path) == 1:
        return message + _field(path[0], payload)
    out, pos, found = bytearray(), 0, False
    while pos < len(message):
        start = pos
        tag, pos = _read_varint(message, pos)
        pos, body = _skip(message, pos, tag & 7)
        if tag >> 3 == path[0] and body is not None and not found:
            out += _field(path[0], _with_field(message[body:pos], path[1:], payload))
            found = True
        else:
            out += message[start:pos]
    if not found:
        out += _field(path[0], _with_field(b"", path[1:], payload))
    return bytes(out)


def _skip(message: bytes, pos: int, wire_type: int) -> tuple[int, int | None]:
    """(the position after a field's value, where its body starts when length-delimited)."""
    if wire_type == 0:
        return _read_varint(message, pos)[1], None
    if wire_type == 1:
        return pos + 8, None
    if wire_type == 5:
        return pos + 4, None
    if wire_type != _LENGTH_DELIMITED:
        raise ValueError(f"unexpected protobuf wire type {wire_type}")
    length, body = _read_varint(message, pos)
    return body + length, body


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | 0x80 if value else low)
        if not value:
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos
