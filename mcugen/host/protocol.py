"""Host side of mcugen's device protocol (docs/protocol.md) over any pyserial object.

Frames: A5 5A | cmd u8 | len u16le | payload | crc16 u16le (CRC-16/CCITT-FALSE over cmd, len,
payload). Replies carry cmd | 0x80, or 0x7F with {code u8, text}. Text the device prints between
frames (the MLPerf Tiny banner) is skipped. Every wait has a deadline: a dead link is a `RunError`
naming the port, never a hang.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

import serial

from mcugen.errors import RunError

SYNC = b"\xa5\x5a"
MAX_PAYLOAD = 512
CMD_INFO, CMD_WRITE_INPUT, CMD_INVOKE, CMD_READ_OUTPUT, CMD_PROFILE, CMD_EXIT = 1, 2, 3, 4, 5, 7
REPLY_FLAG, REPLY_ERROR = 0x80, 0x7F


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), as the device computes it."""
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def encode_frame(cmd: int, payload: bytes = b"") -> bytes:
    head = struct.pack("<BH", cmd, len(payload))
    return SYNC + head + payload + struct.pack("<H", crc16(head + payload))


class DeviceError(RunError):
    """The device answered with an error frame."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(f"device error 0x{code:02x}: {text}")
        self.code = code


@dataclass(frozen=True)
class DeviceInfo:
    version: int
    arena_bytes: int
    max_payload: int
    cycle_hz: int
    stack_bytes: int
    num_nodes: int
    sha256_prefix: str
    input_bytes: tuple[int, ...]
    output_bytes: tuple[int, ...]


@dataclass(frozen=True)
class InvokeResult:
    status: int
    failed_node: int
    ticks: int
    stack_used: int


class DeviceLink:
    def __init__(self, port: serial.SerialBase, *, name: str, timeout: float = 10.0) -> None:
        self.port = port
        self.name = name
        self.timeout = timeout
        self.text_seen = bytearray()  # text between frames, for diagnostics

    def request(self, cmd: int, payload: bytes = b"", *, timeout: float | None = None) -> bytes:
        self.port.write(encode_frame(cmd, payload))
        reply_cmd, body = self.read_frame(timeout or self.timeout)
        if reply_cmd == REPLY_ERROR:
            code = body[0] if body else 0
            raise DeviceError(code, body[1:].decode("ascii", errors="replace"))
        if reply_cmd != cmd | REPLY_FLAG:
            raise RunError(
                f"unexpected reply 0x{reply_cmd:02x} to command 0x{cmd:02x}", where=self.name
            )
        return body

    def _read_exact(self, n: int, deadline: float) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            if time.monotonic() > deadline:
                raise RunError(
                    f"no reply from the device within {self.timeout:.0f} s",
                    where=self.name,
                    hint="check the port, the cable and that the firmware is running",
                )
            chunk = self.port.read(n - len(buf))
            if chunk:
                buf += chunk
        return bytes(buf)

    def read_frame(self, timeout: float) -> tuple[int, bytes]:
        """Hunt for a valid frame; text and corrupt frames before it are skipped."""
        deadline = time.monotonic() + timeout
        while True:
            if self._read_exact(1, deadline) != SYNC[:1]:
                continue
            second = self._read_exact(1, deadline)
            if second != SYNC[1:]:
                continue
            head = self._read_exact(3, deadline)
            cmd, length = struct.unpack("<BH", head)
            if length > MAX_PAYLOAD:
                continue
            body = self._read_exact(length, deadline)
            (crc,) = struct.unpack("<H", self._read_exact(2, deadline))
            if crc == crc16(head + body):
                return cmd, body

    def info(self) -> DeviceInfo:
        body = self.request(CMD_INFO)
        version, n_in, n_out, _ = body[:4]
        arena, max_payload, hz, stack, nodes = struct.unpack_from("<5I", body, 4)
        sha = body[24:32].hex()
        sizes = struct.unpack_from(f"<{n_in + n_out}I", body, 32)
        return DeviceInfo(
            version,
            arena,
            max_payload,
            hz,
            stack,
            nodes,
            sha,
            tuple(sizes[:n_in]),
            tuple(sizes[n_in:]),
        )

    def write_input(self, index: int, data: bytes) -> None:
        step = MAX_PAYLOAD - 5
        for offset in range(0, len(data), step):
            chunk = data[offset : offset + step]
            self.request(CMD_WRITE_INPUT, struct.pack("<BI", index, offset) + chunk)

    def read_output(self, index: int, nbytes: int) -> bytes:
        out = bytearray()
        while len(out) < nbytes:
            count = min(MAX_PAYLOAD, nbytes - len(out))
            out += self.request(CMD_READ_OUTPUT, struct.pack("<BIH", index, len(out), count))
        return bytes(out)

    def invoke(
        self, count: int = 1, *, profile: bool = False, timeout: float = 600.0
    ) -> InvokeResult:
        body = self.request(CMD_INVOKE, struct.pack("<HB", count, int(profile)), timeout=timeout)
        status, _, failed, ticks, stack = struct.unpack("<BBhQI", body[:16])
        return InvokeResult(status, failed, ticks, stack)

    def profile(self, num_nodes: int) -> list[int]:
        ticks: list[int] = []
        per_frame = MAX_PAYLOAD // 8
        for first in range(0, num_nodes, per_frame):
            count = min(per_frame, num_nodes - first)
            body = self.request(CMD_PROFILE, struct.pack("<HH", first, count))
            ticks.extend(struct.unpack(f"<{count}Q", body))
        return ticks
