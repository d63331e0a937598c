"""The example's firmware on a QEMU twin under a hostile link (qemu/test_robustness.py): raw frames
whose fields may lie, exchanges without retries, and random arguments around every boundary."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import serial

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.host_run import random_inputs
from mcugen.link.protocol import (
    CMD_CHECKPOINT,
    CMD_INFO,
    CMD_INVOKE,
    CMD_READ_OUTPUT,
    CMD_READ_STATE,
    CMD_WRITE_INPUT,
    CMD_WRITE_STATE,
    MAX_PAYLOAD,
    REPLY_ERROR,
    REPLY_FLAG,
    SYNC,
    DeviceInfo,
    DeviceLink,
    crc16,
    encode_frame,
)
from mcugen.link.qemu import qemu_console
from mcugen.model.ir import DTYPES
from mcugen.pipeline import Generated, generate_from_file
from support.paths import EXAMPLE

REPLY_SECONDS = 5.0


@dataclass
class Device:
    ser: serial.SerialBase
    link: DeviceLink
    info: DeviceInfo
    info_body: bytes
    gen: Generated
    first_output: list[np.ndarray]


def seeded_sample(gen: Generated) -> list[np.ndarray]:
    return random_inputs(gen.graph, 7)


def infer(link: DeviceLink, gen: Generated, sample: list[np.ndarray]) -> list[np.ndarray]:
    graph = gen.graph
    for i, (t_index, arr) in enumerate(zip(graph.inputs, sample, strict=True)):
        dtype = DTYPES[graph.tensors[t_index].dtype][0]
        link.write_input(i, np.ascontiguousarray(arr, dtype=dtype).tobytes())
    assert link.invoke(1).status == 0
    outputs = []
    for i, t_index in enumerate(graph.outputs):
        t = graph.tensors[t_index]
        raw = link.read_output(i, t.nbytes)
        outputs.append(np.frombuffer(raw, dtype=DTYPES[t.dtype][0]).reshape(t.shape))
    return outputs


@contextmanager
def started_device(board: str, folder: Path) -> Iterator[Device]:
    """The example model's firmware for `board` on its QEMU twin, linked without retries, with its
    INFO reply and its outputs for `seeded_sample(gen)` taken before anything else is sent."""
    target = resolve_target(load_board(board), emulate=True)
    gen = generate_from_file(EXAMPLE)
    result = build(gen, target, folder / "fw")
    with qemu_console(target.machine, result.executable) as ser:
        link = DeviceLink(ser, name="QEMU", timeout=REPLY_SECONDS, retries=0)
        info = link.info()
        info_body = link.request(CMD_INFO)
        yield Device(ser, link, info, info_body, gen, infer(link, gen, seeded_sample(gen)))


def raw_frame(cmd: int, payload: bytes, *, length: int | None = None) -> bytes:
    """A frame whose length field may lie; its CRC is right for the bytes it carries."""
    head = struct.pack("<BH", cmd, len(payload) if length is None else length)
    return SYNC + head + payload + struct.pack("<H", crc16(head + payload))


def exchange(dev: Device, data: bytes, timeout: float = REPLY_SECONDS) -> tuple[int, bytes]:
    dev.ser.write(data)
    return dev.link.read_frame(timeout)


def expect_error(dev: Device, data: bytes, code: int, timeout: float = REPLY_SECONDS) -> None:
    cmd, body = exchange(dev, data, timeout)
    assert (cmd, body[:1]) == (REPLY_ERROR, bytes([code])), (data[:24].hex(), cmd, body)


def assert_responsive(dev: Device) -> None:
    """A valid INFO is answered, and it is the next frame: no stray reply was left behind."""
    cmd, body = exchange(dev, encode_frame(CMD_INFO))
    assert (cmd, body) == (CMD_INFO | REPLY_FLAG, dev.info_body)


NOT_A5 = [b for b in range(256) if b != 0xA5]


def no_a5(rng: random.Random, n: int) -> bytes:
    """Random bytes without 0xA5, so that they cannot start a frame on the device."""
    return bytes(rng.choices(NOT_A5, k=n))


def _near(rng: random.Random, size: int) -> int:
    """An offset or count at, around or far past a boundary."""
    return rng.choice([0, 1, size - 1, size, size + 1, rng.randrange(size + 2), 0xFFFF, 2**32 - 1])


def _io_payload(rng: random.Random, cmd: int, info: DeviceInfo) -> bytes:
    sizes = info.input_bytes if cmd == CMD_WRITE_INPUT else info.output_bytes
    index = rng.choice([0, 0, 0, len(sizes), rng.randrange(256)])
    size = sizes[0]
    offset = _near(rng, size) & 0xFFFFFFFF
    if rng.random() < 0.1:
        return rng.randbytes(rng.randrange(12))  # a payload of the wrong length
    if cmd == CMD_WRITE_INPUT:
        count = min(_near(rng, size - min(offset, size)), MAX_PAYLOAD - 5)
        return struct.pack("<BI", index, offset) + rng.randbytes(max(count, 0))
    return struct.pack("<BIH", index, offset, _near(rng, size - min(offset, size)) & 0xFFFF)


def argument_payload(rng: random.Random, cmd: int, info: DeviceInfo) -> bytes:
    if cmd in (CMD_WRITE_INPUT, CMD_READ_OUTPUT):
        return _io_payload(rng, cmd, info)
    if cmd == CMD_INVOKE:
        if rng.random() < 0.5:
            return rng.randbytes(rng.choice([0, 1, 2, 4, 5, 16]))
        return struct.pack("<HB", rng.choice([0, 0, 1, 2]), rng.randrange(256))
    if cmd == CMD_CHECKPOINT:
        if rng.random() < 0.2:
            return bytes([rng.randrange(2)])  # valid: the stateless model answers "no state"
        return rng.randbytes(rng.choice([0, 1, 1, 2, 5]))
    if cmd in (CMD_READ_STATE, CMD_WRITE_STATE):
        if rng.random() < 0.3:
            return rng.randbytes(rng.choice([0, 1, 5, 7, 9]))
        head = struct.pack("<HI", rng.choice([0, 1, 0xFFFF]), _near(rng, 16) & 0xFFFFFFFF)
        if cmd == CMD_READ_STATE:
            return head + struct.pack("<H", rng.choice([0, 1, 512, 513]))
        return head + rng.randbytes(rng.randrange(40))
    if rng.random() < 0.3:
        return rng.randbytes(rng.choice([0, 1, 2, 3, 5, 8]))
    nodes = info.num_nodes
    return struct.pack("<HH", _near(rng, nodes) & 0xFFFF, _near(rng, nodes) & 0xFFFF)
