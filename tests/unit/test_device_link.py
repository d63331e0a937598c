"""The host side of the device protocol against links that misbehave: a loopback, a peer that never
answers, one that babbles random bytes, one that hangs up, and ones that answer wrongly. Every case
must end in a `RunError` naming the port within a bounded time: never a hang, never another
exception. No hardware and no emulator needed."""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import serial

from mcugen.errors import RunError
from mcugen.link.protocol import (
    CMD_INFO,
    CMD_READ_OUTPUT,
    ERR_CRC,
    ERR_RANGE,
    REPLY_ERROR,
    REPLY_FLAG,
    SYNC,
    DeviceError,
    DeviceLink,
    encode_frame,
)

TIMEOUT = 0.5
#: Deadline plus one poll of the port plus scheduling slack.
BOUND = TIMEOUT + 1.5
Peer = Callable[[socket.socket, threading.Event], None]


@contextlib.contextmanager
def fake_device(behaviour: Peer) -> Iterator[Callable[..., DeviceLink]]:
    """A TCP peer running `behaviour` on its one connection; yields a function that opens a
    DeviceLink to it (pyserial socket:// URL, read timeout 0.1 s unless given)."""
    server = socket.create_server(("127.0.0.1", 0))
    url = f"socket://127.0.0.1:{server.getsockname()[1]}"
    stop = threading.Event()
    ports: list[serial.SerialBase] = []

    def connect(timeout: float | None = 0.1) -> DeviceLink:
        ports.append(serial.serial_for_url(url, timeout=timeout))
        return DeviceLink(ports[-1], name=url, timeout=TIMEOUT)

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = server.accept()
            with conn:
                behaviour(conn, stop)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield connect
    finally:
        stop.set()
        for port in ports:
            port.close()
        server.close()
        thread.join(timeout=5)


def silent(conn: socket.socket, stop: threading.Event) -> None:
    conn.settimeout(0.05)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            if not conn.recv(4096):
                return


def babbling(seed: int) -> Peer:
    """Random bytes without end, with sync pairs and plausible headers mixed in."""

    def run(conn: socket.socket, stop: threading.Event) -> None:
        rng = random.Random(seed)
        conn.settimeout(0.2)  # a full socket buffer ends the babble instead of blocking it
        with contextlib.suppress(OSError):
            while not stop.is_set():
                chunk = bytearray(rng.randbytes(512))
                for _ in range(rng.randrange(4)):
                    at = rng.randrange(len(chunk) - 5)
                    chunk[at : at + 5] = SYNC + bytes([rng.randrange(256), rng.randrange(256), 0])
                conn.sendall(chunk)
                time.sleep(0.002)

    return run


def answering(reply: Callable[[int, bytes], bytes]) -> Peer:
    """Reads whole frames and answers each with `reply(cmd, payload)`."""

    def run(conn: socket.socket, stop: threading.Event) -> None:
        conn.settimeout(0.05)
        buf = b""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                data = conn.recv(4096)
                if not data:
                    return
                buf += data
            while len(buf) >= 7 and len(buf) >= 7 + int.from_bytes(buf[3:5], "little"):
                size = 7 + int.from_bytes(buf[3:5], "little")
                frame, buf = buf[:size], buf[size:]
                conn.sendall(reply(frame[2], frame[5:-2]))

    return run


def fails_within(link: DeviceLink, call: Callable[[DeviceLink], object], bound: float) -> str:
    """Runs `call`, which must raise RunError (only) within `bound` seconds; returns the message.
    It runs in a thread so that a regression that hangs fails the test instead of the suite."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            call(link)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    start = time.monotonic()
    worker.start()
    worker.join(timeout=bound + 5)
    assert outcome, f"{call} still running after {bound + 5:.1f} s: it hangs"
    assert time.monotonic() - start < bound
    error = outcome[0]
    assert isinstance(error, RunError), repr(error)
    message = str(error)
    assert message.startswith(f"{link.name}: ") and "\n" not in message
    return message


# --- dead, silent, echoing and babbling links ----------------------------------------------------


def test_loopback_is_reported_at_once() -> None:
    """pyserial's loop:// (a port without a read timeout) sends our own frame back."""
    link = DeviceLink(serial.serial_for_url("loop://"), name="loop://", timeout=5.0)
    message = fails_within(link, DeviceLink.info, bound=1.0)
    assert "sends back what is written" in message


def test_silent_peer_times_out_naming_the_port() -> None:
    with fake_device(silent) as connect:
        message = fails_within(connect(), DeviceLink.info, BOUND)
    assert f"no reply from the device within {TIMEOUT:g} s" in message


def test_port_without_a_read_timeout_still_meets_the_deadline() -> None:
    with fake_device(silent) as connect:
        link = connect(timeout=None)
        assert link.port.timeout is not None
        fails_within(link, DeviceLink.info, BOUND)


@pytest.mark.parametrize("seed", range(5))
def test_babbling_peer_ends_in_a_timeout(seed: int) -> None:
    with fake_device(babbling(seed)) as connect:
        message = fails_within(connect(), DeviceLink.info, BOUND)
    assert "no reply from the device" in message and "none of them a valid reply frame" in message


def test_peer_that_answers_with_text_is_quoted_in_the_error() -> None:
    """A board running other firmware (or the MLPerf runner only): its text is shown."""
    with fake_device(answering(lambda cmd, _: b"m-init-done\r\nm-ready\r\n")) as connect:
        message = fails_within(connect(), DeviceLink.info, BOUND)
    assert "none of them a valid reply frame" in message and "m-ready" in message


def test_peer_hanging_up_is_a_lost_connection() -> None:
    with fake_device(lambda conn, stop: None) as connect:
        link = connect()
        time.sleep(0.1)
        message = fails_within(link, DeviceLink.info, BOUND)
    assert "lost the connection" in message or "no reply" in message


# --- answers that are wrong ----------------------------------------------------------------------


def test_short_info_reply_is_malformed_not_a_struct_error() -> None:
    with fake_device(
        answering(lambda cmd, _: encode_frame(cmd | REPLY_FLAG, b"\x01\x01"))
    ) as connect:
        message = fails_within(connect(), DeviceLink.info, BOUND)
    assert "malformed reply to INFO" in message


def test_empty_output_chunks_do_not_loop_forever() -> None:
    with fake_device(answering(lambda cmd, _: encode_frame(cmd | REPLY_FLAG))) as connect:
        message = fails_within(connect(), lambda link: link.read_output(0, 10), BOUND)
    assert "malformed reply to READ_OUTPUT" in message


def test_stale_replies_to_other_commands_are_skipped() -> None:
    def stale_then_right(cmd: int, payload: bytes) -> bytes:
        return encode_frame(CMD_INFO | REPLY_FLAG, b"stale") + encode_frame(cmd | REPLY_FLAG, b"ok")

    with fake_device(answering(stale_then_right)) as connect:
        assert connect().request(CMD_READ_OUTPUT, b"") == b"ok"


def test_transport_errors_are_retried_then_reported() -> None:
    attempts: list[int] = []

    def crc_error(cmd: int, payload: bytes) -> bytes:
        attempts.append(cmd)
        return encode_frame(REPLY_ERROR, bytes([ERR_CRC]) + b"bad crc")

    with fake_device(answering(crc_error)) as connect:
        link = connect()
        with pytest.raises(DeviceError) as info:
            link.request(CMD_INFO)
    assert info.value.code == ERR_CRC and len(attempts) == link.retries + 1
    assert str(info.value).startswith(f"{link.name}: device error 0x10")


def test_other_device_errors_are_not_retried() -> None:
    attempts: list[int] = []

    def range_error(cmd: int, payload: bytes) -> bytes:
        attempts.append(cmd)
        return encode_frame(REPLY_ERROR, bytes([ERR_RANGE]) + b"out of bounds")

    with fake_device(answering(range_error)) as connect, pytest.raises(DeviceError):
        connect().request(CMD_READ_OUTPUT, bytes(7))
    assert len(attempts) == 1


def test_one_crc_error_then_success() -> None:
    replies = [encode_frame(REPLY_ERROR, bytes([ERR_CRC]) + b"bad crc")]

    def flaky(cmd: int, payload: bytes) -> bytes:
        return replies.pop() if replies else encode_frame(cmd | REPLY_FLAG, b"fine")

    with fake_device(answering(flaky)) as connect:
        assert connect().request(CMD_INFO) == b"fine"
