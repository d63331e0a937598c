"""A minimal FlexBuffer reader for custom operators' options (TFLM's signal library).

TFLM's `FlexbufferWrapper` reads a custom operator's options as the root map's value slots by
position (keys are stored sorted), each slot as a signed integer of the map's byte width
(`ElementAsInt32` truncates it to int32, `ElementAsBool` tests it for non-zero). `read_map`
returns the same: every entry as (key, that integer, its FlexBuffer type), in stored order, so a
lowering can check the keys it expects sit at the positions TFLM reads.

Layout (flatbuffers/flexbuffers.h): the last byte is the root's byte width, the byte before it
the root's packed type (type << 2 | log2 width); a map is an offset back to its values, preceded
by the offset and byte width of its sorted key vector and by its length, and followed by one
packed type byte per value. Only maps of inline scalars are read; the file is untrusted, so every
offset is bounds-checked and anything else is a `FlexBufferError`. Complexity O(entries + bytes
of the keys).
"""

from __future__ import annotations

#: FlexBuffer types (flexbuffers::Type) this reader knows.
INT, UINT, MAP, BOOL = 1, 2, 9, 26
SCALARS = (INT, UINT, BOOL)
MAX_ENTRIES = 256


class FlexBufferError(ValueError):
    """Malformed or unsupported FlexBuffer data."""


def _uint(data: bytes, pos: int, width: int) -> int:
    if width not in (1, 2, 4, 8) or pos < 0 or pos + width > len(data):
        raise FlexBufferError(f"read of {width} bytes at {pos} is outside the {len(data)} bytes")
    return int.from_bytes(data[pos : pos + width], "little")


def _int(data: bytes, pos: int, width: int) -> int:
    _uint(data, pos, width)  # bounds
    return int.from_bytes(data[pos : pos + width], "little", signed=True)


def _key(data: bytes, pos: int) -> str:
    end = data.find(b"\x00", pos)
    if pos < 0 or end < 0:
        raise FlexBufferError(f"key at {pos} is not NUL-terminated")
    try:
        return data[pos:end].decode("ascii")
    except UnicodeDecodeError:
        raise FlexBufferError(f"key at {pos} is not ASCII") from None


def read_map(data: bytes) -> tuple[tuple[str, int, int], ...]:
    """The root map's entries as (key, value slot read as TFLM reads it, FlexBuffer type)."""
    if not data:
        return ()
    if len(data) < 3:
        raise FlexBufferError("too short for a FlexBuffer")
    root_width = data[-1]
    packed = data[-2]
    root = len(data) - 2 - root_width
    if packed >> 2 != MAP:
        raise FlexBufferError(f"the root is of type {packed >> 2}, not a map")
    width = 1 << (packed & 3)
    values = root - _uint(data, root, root_width)
    size = _uint(data, values - width, width)
    if size > MAX_ENTRIES:
        raise FlexBufferError(f"the map has {size} entries")
    keys_field = values - 3 * width
    keys = keys_field - _uint(data, keys_field, width)
    key_width = _uint(data, values - 2 * width, width)
    entries = []
    for i in range(size):
        slot = keys + i * key_width
        key = _key(data, slot - _uint(data, slot, key_width))
        kind = _uint(data, values + size * width + i, 1) >> 2
        entries.append((key, _int(data, values + i * width, width), kind))
    return tuple(entries)
