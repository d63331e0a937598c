"""Host side of mcugen's device protocol (docs/protocol.md) over any pyserial object.

Frames: A5 5A | cmd u8 | len u16le | payload | crc16 u16le (CRC-16/CCITT-FALSE over cmd, len,
payload). Replies carry cmd | 0x80, or 0x7F with {code u8, text}. Text the device prints between
frames (the MLPerf Tiny banner) is skipped. Every wait has a deadline: a dead, silent, echoing or
babbling link is a `RunError` naming the port, never a hang and never another exception.
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
CMD_READ_STATE, CMD_WRITE_STATE, CMD_CHECKPOINT = 8, 9, 10
#: CHECKPOINT's status byte (runtime_c/include/mcu/checkpoint.h mcu_ckpt_status_t)
CHECKPOINT_STATUS = {
    0: "ok",
    1: "the board has no checkpoint storage (or too little for the state)",
    2: "the model has no state to checkpoint",
    3: "the storage failed to read, erase or write",
    4: "no valid checkpoint of this model in either slot",
}
REPLY_FLAG, REPLY_ERROR = 0x80, 0x7F
ERR_CRC, ERR_UNKNOWN, ERR_LENGTH, ERR_RANGE, ERR_TIMEOUT, ERR_INVOKE = range(0x10, 0x16)
#: Error codes meaning the device never saw the request intact, so resending it is safe.
TRANSPORT_ERRORS = frozenset({ERR_CRC, ERR_TIMEOUT})
#: Read timeout given to ports that have none (or 0), so that every wait meets its deadline.
POLL_SECONDS = 0.2
#: Bytes of non-frame traffic kept for error messages.
SEEN_BYTES = 256
_HINT = "check the port, the cable and that the board runs firmware built by mcugen"


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

    def __init__(self, code: int, text: str, *, where: str = "") -> None:
        super().__init__(f"device error 0x{code:02x}: {text}", where=where)
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
    moved_bytes: int = 0  # bytes a dynamic allocator moved or paged (firmware before 0.x: 0)


class DeviceLink:
    """Requests and replies over `port`. A port without a read timeout gets `POLL_SECONDS`.

    A request answered with a transport error (bad CRC, frame timeout: the device did not see it
    intact) is sent again, up to `retries` times. Replies to other commands (late replies to an
    earlier request) are skipped; a port that echoes the request back is reported at once.
    """

    def __init__(
        self, port: serial.SerialBase, *, name: str, timeout: float = 10.0, retries: int = 2
    ) -> None:
        self.port = port
        self.name = name
        self.timeout = timeout
        self.retries = retries
        self.text_seen = bytearray()  # the latest non-frame bytes, for diagnostics
        self.bytes_received = 0
        if not port.timeout:
            port.timeout = POLL_SECONDS

    def request(self, cmd: int, payload: bytes = b"", *, timeout: float | None = None) -> bytes:
        frame = encode_frame(cmd, payload)
        limit = self.timeout if timeout is None else timeout
        attempt = 0
        while True:
            self._discard_input()
            self._write(frame)
            reply_cmd, body = self._read_reply(cmd, frame, limit)
            if reply_cmd != REPLY_ERROR:
                return body
            code = body[0] if body else 0
            if code in TRANSPORT_ERRORS and attempt < self.retries:
                attempt += 1
                continue
            raise DeviceError(code, body[1:].decode("ascii", errors="replace"), where=self.name)

    def _read_reply(self, cmd: int, frame: bytes, timeout: float) -> tuple[int, bytes]:
        deadline = time.monotonic() + timeout
        self.bytes_received = 0
        while True:
            reply_cmd, body = self._next_frame(deadline, timeout)
            if reply_cmd in (cmd | REPLY_FLAG, REPLY_ERROR):
                return reply_cmd, body
            if encode_frame(reply_cmd, body) == frame:
                raise RunError(
                    "the port sends back what is written to it (a loopback or an echo), not "
                    "replies from a device",
                    where=self.name,
                    hint=_HINT,
                )

    def _discard_input(self) -> None:
        """Drop what already arrived (a late reply to an earlier request), at most 64 KiB: unlike
        pyserial's `reset_input_buffer` on sockets, a peer that never stops talking cannot hold
        the request back."""
        saved = self.port.timeout
        try:
            self.port.timeout = 0
            for _ in range(16):
                if not self.port.read(4096):
                    break
        except (serial.SerialException, OSError) as exc:
            raise self._lost(exc) from None
        finally:
            self.port.timeout = saved

    def _write(self, data: bytes) -> None:
        try:
            self.port.write(data)
            self.port.flush()
        except (serial.SerialException, OSError) as exc:
            raise self._lost(exc) from None

    def _lost(self, exc: Exception) -> RunError:
        return RunError(f"lost the connection to the device ({exc})", where=self.name, hint=_HINT)

    def _timed_out(self, timeout: float) -> RunError:
        what = f"no reply from the device within {timeout:g} s"
        if self.bytes_received:
            shown = bytes(self.text_seen[-40:]).decode("ascii", errors="replace")
            what += (
                f" ({self.bytes_received} bytes received, none of them a valid reply frame; "
                f"last: {shown!r})"
            )
        return RunError(what, where=self.name, hint=_HINT)

    def _read_exact(self, n: int, deadline: float, timeout: float) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            if time.monotonic() > deadline:
                raise self._timed_out(timeout)
            try:
                chunk = self.port.read(n - len(buf))
            except (serial.SerialException, OSError) as exc:
                raise self._lost(exc) from None
            self.bytes_received += len(chunk)
            buf += chunk
        return bytes(buf)

    def _skipped(self, data: bytes) -> None:
        self.text_seen += data
        del self.text_seen[:-SEEN_BYTES]

    def read_frame(self, timeout: float) -> tuple[int, bytes]:
        """The next valid frame as (cmd, payload); text and corrupt frames before it are skipped."""
        self.bytes_received = 0
        return self._next_frame(time.monotonic() + timeout, timeout)

    def _next_frame(self, deadline: float, timeout: float) -> tuple[int, bytes]:
        first = self._read_exact(1, deadline, timeout)
        while True:
            if first != SYNC[:1]:
                self._skipped(first)
                first = self._read_exact(1, deadline, timeout)
                continue
            second = self._read_exact(1, deadline, timeout)
            if second != SYNC[1:]:
                self._skipped(first)
                first = second  # may itself start the sync pair
                continue
            head = self._read_exact(3, deadline, timeout)
            cmd, length = struct.unpack("<BH", head)
            if length <= MAX_PAYLOAD:
                body = self._read_exact(length, deadline, timeout)
                (crc,) = struct.unpack("<H", self._read_exact(2, deadline, timeout))
                if crc == crc16(head + body):
                    return cmd, body
            self._skipped(SYNC + head)
            first = self._read_exact(1, deadline, timeout)

    def _malformed(self, what: str, body: bytes) -> RunError:
        return RunError(
            f"malformed reply to {what} ({len(body)} bytes)",
            where=self.name,
            hint="flash firmware built by this version of mcugen",
        )

    def info(self) -> DeviceInfo:
        body = self.request(CMD_INFO)
        if len(body) < 32:
            raise self._malformed("INFO", body)
        version, n_in, n_out, _ = body[:4]
        arena, max_payload, hz, stack, nodes = struct.unpack_from("<5I", body, 4)
        if len(body) < 32 + 4 * (n_in + n_out):
            raise self._malformed("INFO", body)
        sizes = struct.unpack_from(f"<{n_in + n_out}I", body, 32)
        return DeviceInfo(
            version,
            arena,
            max_payload,
            hz,
            stack,
            nodes,
            body[24:32].hex(),
            tuple(sizes[:n_in]),
            tuple(sizes[n_in:]),
        )

    def _write_chunks(self, cmd: int, head: str, key: int, data: bytes) -> None:
        """`data` in frames of `head` (the tensor's `key`, the offset) and as many bytes as fit."""
        step = MAX_PAYLOAD - struct.calcsize(head)
        for offset in range(0, len(data), step):
            self.request(cmd, struct.pack(head, key, offset) + data[offset : offset + step])

    def _read_chunks(self, cmd: int, name: str, head: str, key: int, nbytes: int) -> bytes:
        """`nbytes` bytes asked for in frames of `head` (the tensor's `key`, the offset, the
        count), each reply exactly the count asked for."""
        out = bytearray()
        while len(out) < nbytes:
            count = min(MAX_PAYLOAD, nbytes - len(out))
            body = self.request(cmd, struct.pack(head, key, len(out), count))
            if len(body) != count:
                raise self._malformed(name, body)
            out += body
        return bytes(out)

    def write_input(self, index: int, data: bytes) -> None:
        self._write_chunks(CMD_WRITE_INPUT, "<BI", index, data)

    def read_output(self, index: int, nbytes: int) -> bytes:
        return self._read_chunks(CMD_READ_OUTPUT, "READ_OUTPUT", "<BIH", index, nbytes)

    def read_state(self, variable: int, nbytes: int) -> bytes:
        """Variable tensor `variable` of the model's state (its `nbytes` bytes)."""
        return self._read_chunks(CMD_READ_STATE, "READ_STATE", "<HIH", variable, nbytes)

    def write_state(self, variable: int, data: bytes) -> None:
        self._write_chunks(CMD_WRITE_STATE, "<HI", variable, data)

    def checkpoint(self, *, load: bool, timeout: float = 60.0) -> tuple[int, int]:
        """Save (or load) the model state in the board's checkpoint store: (status, sequence)."""
        body = self.request(CMD_CHECKPOINT, bytes([int(load)]), timeout=timeout)
        if len(body) != 5:
            raise self._malformed("CHECKPOINT", body)
        status, sequence = struct.unpack("<BI", body)
        return status, sequence

    def invoke(
        self,
        count: int = 1,
        *,
        profile: bool = False,
        timeout: float = 600.0,
        nodes: tuple[int, int] | None = None,
    ) -> InvokeResult:
        """`nodes`: run only the operators at positions first .. end - 1 (a phase of a board's
        program in a multi-board run)."""
        payload = struct.pack("<HB", count, int(profile))
        if nodes is not None:
            payload += struct.pack("<HH", *nodes)
        body = self.request(CMD_INVOKE, payload, timeout=timeout)
        if len(body) < 16:
            raise self._malformed("INVOKE", body)
        status, _, failed, ticks, stack = struct.unpack("<BBhQI", body[:16])
        moved = struct.unpack("<I", body[16:20])[0] if len(body) >= 20 else 0
        return InvokeResult(status, failed, ticks, stack, moved)

    def profile(self, num_nodes: int) -> list[int]:
        ticks: list[int] = []
        per_frame = MAX_PAYLOAD // 8
        for first in range(0, num_nodes, per_frame):
            count = min(per_frame, num_nodes - first)
            body = self.request(CMD_PROFILE, struct.pack("<HH", first, count))
            if len(body) != 8 * count:
                raise self._malformed("PROFILE", body)
            ticks.extend(struct.unpack(f"<{count}Q", body))
        return ticks
