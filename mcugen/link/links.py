"""Board-to-board links between QEMU twins: the wire, the link commands, and faults on the wire.

A twin built with links (`Target.links`, firmware runtime_c/app/link.c) drives UART1-4 besides
its console; QEMU gives each one a listening socket (`qemu_console(serials=...)`). Board b's link
to board p is its UART `link_slot(b, p) + 1`. A `Wire` joins two twins' sockets as a cable joins
two UARTs: a thread per direction moves the bytes unchanged, counting them and the frames they
form, and applies the `Fault`s a test asks for (corrupt, drop or cut a frame), so that the
firmware's CRC, acknowledgement and resend logic meets real damage. The host never reads or
writes a tensor's bytes on this path: it tells the receiver to listen (LINK_RECV) and the
sender to send (LINK_SEND), and compares the CRCs both report.

A transfer is good when the receiver has every byte and both ends computed the same CRC-16 of
the tensor. The sender may still report a missing final acknowledgement (the ACK was lost after
the receiver finished): the data arrived, so the transfer stands and the resend is counted.
Anything else is a `RunError` naming the link, its board numbers and what each end saw.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from mcugen.errors import RunError
from mcugen.link.protocol import MAX_PAYLOAD, SYNC, DeviceLink

CMD_LINK_SEND, CMD_LINK_RECV = 0x0B, 0x0C
#: runtime_c/app/link.h's status codes
LINK_STATUS = {
    0: "ok",
    1: "the board has no such link UART",
    2: "no such tensor on the board",
    3: "a frame went unacknowledged 8 times",
    4: "the sender went quiet",
}
#: Virtual milliseconds the receiver waits for the first frame (the host starts the sender
#: right after it; QEMU -icount makes that some 1.5 s of wall time).
FIRST_FRAME_MS = 1000
#: Wall-clock seconds the host waits for either end's reply.
REPLY_TIMEOUT_S = 120.0


def link_slot(board: int, peer: int) -> int:
    """Board `board`'s link number (0-based, UART number - 1) for its link to board `peer`."""
    if board == peer:
        raise ValueError("a board has no link to itself")
    return peer if peer < board else peer - 1


@dataclass(frozen=True)
class LinkStats:
    """What one end of a transfer reports (runtime_c/app/link.h mcu_link_stats_t)."""

    status: int
    nbytes: int
    frames: int
    resends: int
    naks: int
    timeouts: int
    crc_errors: int
    ignored: int
    crc: int

    @classmethod
    def parse(cls, body: bytes, where: str) -> LinkStats:
        if len(body) != 20:
            raise RunError(
                f"malformed reply to a link command ({len(body)} bytes)",
                where=where,
                hint="build the firmware with this version of mcugen",
            )
        status, _, nbytes, *counts = struct.unpack("<BBI7H", body)
        return cls(status, nbytes, *counts)

    def describe(self) -> str:
        return (
            f"{LINK_STATUS.get(self.status, f'status {self.status}')}, {self.nbytes} bytes, "
            f"{self.frames} frames, {self.resends} resent, {self.naks} NAKs, "
            f"{self.timeouts} timeouts, {self.crc_errors} CRC errors"
        )


@dataclass(frozen=True)
class Fault:
    """Damage to frame number `frame` (0-based, counting every frame in one direction of one
    wire): `corrupt` flips a payload bit, `drop` loses the frame, `cut` loses it and every byte
    after it (a broken cable)."""

    kind: str
    frame: int

    def __post_init__(self) -> None:
        if self.kind not in ("corrupt", "drop", "cut"):
            raise ValueError(f"unknown fault {self.kind!r}")


@dataclass
class Direction:
    """One direction of a wire: bytes and frames that crossed it, frames damaged."""

    faults: tuple[Fault, ...] = ()
    nbytes: int = 0
    frames: int = 0
    damaged: int = 0
    cut: bool = False
    pending: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> bytes:
        """`data` as it leaves the wire: whole frames pass (or not) by the fault plan; bytes
        outside frames pass unchanged; an incomplete frame waits for the rest."""
        if self.cut:
            return b""
        self.pending += data
        out = bytearray()
        while self.pending and not self.cut:
            start = self.pending.find(SYNC)
            if start < 0:
                keep = 1 if self.pending[-1:] == SYNC[:1] else 0
                out += self.pending[: len(self.pending) - keep]
                del self.pending[: len(self.pending) - keep]
                break
            out += self.pending[:start]
            del self.pending[:start]
            if len(self.pending) < 5:
                break
            (length,) = struct.unpack_from("<H", self.pending, 3)
            if length > MAX_PAYLOAD:
                out += self.pending[:1]
                del self.pending[:1]
                continue
            if len(self.pending) < 7 + length:
                break
            frame = bytearray(self.pending[: 7 + length])
            del self.pending[: 7 + length]
            out += self.damage(frame)
        if self.cut:
            self.pending.clear()
        self.nbytes += len(out)
        return bytes(out)

    def damage(self, frame: bytearray) -> bytes:
        number, self.frames = self.frames, self.frames + 1
        for fault in self.faults:
            if fault.kind == "cut" and number >= fault.frame:
                self.cut = True
            if fault.frame != number or self.cut:
                continue
            self.damaged += 1
            if fault.kind == "drop":
                return b""
            frame[5 if len(frame) > 7 else 3] ^= 0x10  # a payload byte, or the length's
        return b"" if self.cut else bytes(frame)


class Wire:
    """A cable between two twins' link UARTs (module docstring): connects to both listening
    sockets and pumps bytes both ways until `close()`."""

    def __init__(
        self,
        name: str,
        ports: tuple[int, int],
        faults: tuple[Sequence[Fault], Sequence[Fault]] = ((), ()),
    ) -> None:
        self.name = name
        self.ends = [socket.create_connection(("127.0.0.1", p), timeout=10.0) for p in ports]
        for end in self.ends:
            end.settimeout(0.05)
        self.directions = (Direction(tuple(faults[0])), Direction(tuple(faults[1])))
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._pump, args=(k,), daemon=True, name=f"{name}-{k}")
            for k in (0, 1)
        ]
        for t in self.threads:
            t.start()

    def _pump(self, k: int) -> None:
        src, dst, direction = self.ends[k], self.ends[1 - k], self.directions[k]
        while not self.stop.is_set():
            try:
                data = src.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            out = direction.feed(data)
            try:
                dst.sendall(out)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=2.0)
        for end in self.ends:
            end.close()


def listeners(count: int) -> list[socket.socket]:
    """`count` local listening sockets for a twin's link UARTs."""
    out = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        out.append(sock)
    return out


def transfer(
    sender: DeviceLink,
    send_slot: int,
    output_index: int,
    receiver: DeviceLink,
    recv_slot: int,
    input_index: int,
    xfer: int,
    *,
    link_name: str,
    tensor: str,
) -> tuple[LinkStats, LinkStats]:
    """Move the sender's output `output_index` into the receiver's input `input_index` over
    their link (module docstring); returns (sender's, receiver's) stats or raises."""
    recv_req = struct.pack("<BBBBI", recv_slot, input_index, xfer & 0xFF, 0, FIRST_FRAME_MS)
    send_req = struct.pack("<BBBB", send_slot, 1, output_index, xfer & 0xFF)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(receiver.request, CMD_LINK_RECV, recv_req, timeout=REPLY_TIMEOUT_S)
        sent = LinkStats.parse(
            sender.request(CMD_LINK_SEND, send_req, timeout=REPLY_TIMEOUT_S), sender.name
        )
        got = LinkStats.parse(pending.result(), receiver.name)
    if got.status == 0 and got.crc == sent.crc:
        return sent, got
    raise RunError(
        f"link {link_name} failed to carry tensor '{tensor}': sender: {sent.describe()}; "
        f"receiver: {got.describe()}",
        hint="check the link's wiring (on twins: a fault injected on the wire)",
    )
