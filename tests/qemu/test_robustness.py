"""The emulated device under a hostile link: more than 1,000 corrupted frames (bad CRC, unknown
commands, lengths that lie, out-of-range writes and reads, bad invoke and profile payloads,
sync-like garbage), stalled frames that must time out, random bytes and MLPerf Tiny text garbage.
After every corrupted frame the device must answer with exactly one error of the expected code and
then answer a valid INFO; at the end an inference still agrees with TFLM bit for bit.

One QEMU instance serves the whole module (about 25 s in all). Measured with QEMU 7.2 and
-icount shift=0,sleep=off: a request and its reply take about 1 ms; the device's 200 ms frame
timeout is 200 ms of its virtual time (checked below with its own clock) and passes in about 0.3 s
of wall time. Virtual time does not run faster than wall time while the guest spins: each console
register read costs some 20 times its virtual time, which made the timeout 3.5-4.5 s (10 s on a
loaded machine) until the port paused between reads (boards/common/systick_semihost.c).
"""

from __future__ import annotations

import random
import re
import struct
import time
from collections.abc import Iterator

import numpy as np
import pytest

from mcugen.link.protocol import (
    CMD_CHECKPOINT,
    CMD_EXIT,
    CMD_INFO,
    CMD_INVOKE,
    CMD_PROFILE,
    CMD_READ_OUTPUT,
    CMD_READ_STATE,
    CMD_WRITE_INPUT,
    CMD_WRITE_STATE,
    ERR_CRC,
    ERR_LENGTH,
    ERR_RANGE,
    ERR_TIMEOUT,
    ERR_UNKNOWN,
    MAX_PAYLOAD,
    REPLY_ERROR,
    REPLY_FLAG,
    SYNC,
    DeviceInfo,
    crc16,
    encode_frame,
)
from mcugen.reference import tflm_outputs
from support import (
    EXAMPLE,
    NEEDS_TWIN,
    REPLY_SECONDS,
    Device,
    argument_payload,
    assert_responsive,
    exchange,
    expect_error,
    infer,
    no_a5,
    raw_frame,
    seeded_sample,
    started_device,
)

pytestmark = NEEDS_TWIN
BOARD = "nucleo-f767"
#: Corrupted frames per kind; together more than 1,000.
COUNTS = {
    "bad_crc": 300,
    "unknown_command": 247,  # every command byte the firmware does not know
    "length_too_short": 100,
    "length_too_long": 100,
    "length_over_max": 30,
    "write_input": 100,
    "read_output": 100,
    "invoke": 40,
    "profile": 40,
    "state": 40,
    "checkpoint": 30,
    "sync_garbage": 60,
}
KNOWN = {
    CMD_INFO,
    CMD_WRITE_INPUT,
    CMD_INVOKE,
    CMD_READ_OUTPUT,
    CMD_PROFILE,
    CMD_EXIT,
    CMD_READ_STATE,
    CMD_WRITE_STATE,
    CMD_CHECKPOINT,
}
#: The device's frame timeout is 200 ms of virtual time, about 0.3 s of wall time: a ceiling.
STALL_SECONDS = 10.0


@pytest.fixture(scope="module")
def device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Device]:
    with started_device(BOARD, tmp_path_factory.mktemp("robustness")) as dev:
        yield dev


def test_the_plan_throws_over_a_thousand_corrupted_frames() -> None:
    assert sum(COUNTS.values()) >= 1000


# --- corrupted frames, each answered by one error -----------------------------------------------


def test_bad_crc_is_an_error_and_nothing_runs(device: Device) -> None:
    """One bit flipped in the command, payload or CRC: never executed (not even EXIT)."""
    rng = random.Random(1)
    for _ in range(COUNTS["bad_crc"]):
        cmd = rng.choice([*sorted(KNOWN), rng.randrange(256)])
        frame = bytearray(raw_frame(cmd, rng.randbytes(rng.randrange(65))))
        at = rng.choice([2, *range(5, len(frame))])  # not the sync pair, not the length
        frame[at] ^= 1 << rng.randrange(8)
        expect_error(device, bytes(frame), ERR_CRC)
        assert_responsive(device)


def test_unknown_commands_are_errors(device: Device) -> None:
    rng = random.Random(2)
    unknown = [c for c in range(256) if c not in KNOWN]
    assert len(unknown) == COUNTS["unknown_command"]
    for cmd in unknown:
        expect_error(device, raw_frame(cmd, rng.randbytes(rng.randrange(33))), ERR_UNKNOWN)
        assert_responsive(device)


def test_length_shorter_than_the_payload(device: Device) -> None:
    """The device reads the CRC from inside the payload; the rest is noise it skips."""
    rng = random.Random(3)
    thrown = 0
    while thrown < COUNTS["length_too_short"]:
        payload = no_a5(rng, rng.randrange(3, 200))
        length = rng.randrange(len(payload) - 2)
        frame = raw_frame(rng.choice(sorted(KNOWN)), payload, length=length)
        (read_crc,) = struct.unpack_from("<H", frame, 5 + length)
        if SYNC in frame[2:] or crc16(frame[2:5] + payload[:length]) == read_crc:
            continue  # the leftover would start a frame, or the CRC would match by chance
        expect_error(device, frame, ERR_CRC)
        assert_responsive(device)
        thrown += 1


def test_length_longer_than_the_payload_swallows_what_follows(device: Device) -> None:
    """A truncated frame followed by more traffic: the device takes the next bytes as payload and
    CRC, answers one CRC error, and the request it swallowed gets no reply of its own."""
    rng = random.Random(4)
    for _ in range(COUNTS["length_too_long"]):
        payload = rng.randbytes(rng.randrange(40))
        length = len(payload) + rng.randrange(1, 200)
        truncated = raw_frame(rng.choice(sorted(KNOWN)), payload, length=length)[:-2]
        following = encode_frame(CMD_INFO) * 30  # more than enough bytes to complete it
        data = truncated + following[: length - len(payload) + 2]
        if crc16(data[2:-2]) == struct.unpack("<H", data[-2:])[0]:
            continue
        expect_error(device, data, ERR_CRC)
        assert_responsive(device)


def test_length_over_the_maximum_skips_the_frame(device: Device) -> None:
    """A frame longer than the buffer is skipped to its end, then answered: no timeout needed."""
    rng = random.Random(5)
    for _ in range(COUNTS["length_over_max"]):
        length = rng.randrange(MAX_PAYLOAD + 1, 2048)
        head = SYNC + struct.pack("<BH", rng.choice(sorted(KNOWN)), length)
        expect_error(device, head + no_a5(rng, length + 2), ERR_LENGTH)
        assert_responsive(device)


# --- well-formed frames with bad arguments -------------------------------------------------------


def expected_code(cmd: int, payload: bytes, info: DeviceInfo) -> int | None:
    """What the firmware must answer (an error code, None for success): a model of its checks."""
    n = len(payload)
    if cmd == CMD_WRITE_INPUT or cmd == CMD_READ_OUTPUT:
        if (cmd == CMD_WRITE_INPUT and n < 5) or (cmd == CMD_READ_OUTPUT and n != 7):
            return ERR_LENGTH
        index, offset = struct.unpack_from("<BI", payload)
        sizes = info.input_bytes if cmd == CMD_WRITE_INPUT else info.output_bytes
        count = n - 5 if cmd == CMD_WRITE_INPUT else struct.unpack_from("<H", payload, 5)[0]
        if index >= len(sizes) or offset > sizes[index] or count > sizes[index] - offset:
            return ERR_RANGE
        return ERR_RANGE if count > MAX_PAYLOAD else None
    if cmd == CMD_INVOKE:
        return ERR_LENGTH if n != 3 or payload[:2] == b"\0\0" else None
    if cmd == CMD_PROFILE:
        if n != 4:
            return ERR_LENGTH
        first, count = struct.unpack("<HH", payload)
        nodes = info.num_nodes
        out_of_range = first > nodes or count > nodes - first or count * 8 > MAX_PAYLOAD
        return ERR_RANGE if out_of_range else None
    if cmd == CMD_CHECKPOINT:  # op 0 or 1; a model without state answers with a status
        return ERR_LENGTH if n != 1 or payload[0] > 1 else None
    if cmd in (CMD_READ_STATE, CMD_WRITE_STATE):
        # the example model has no variable tensors: every well-sized request is out of range
        wrong = n != 8 if cmd == CMD_READ_STATE else n < 6
        return ERR_LENGTH if wrong else ERR_RANGE
    raise AssertionError(cmd)


@pytest.mark.parametrize(
    ("cmd", "kind"),
    [
        (CMD_WRITE_INPUT, "write_input"),
        (CMD_READ_OUTPUT, "read_output"),
        (CMD_INVOKE, "invoke"),
        (CMD_PROFILE, "profile"),
        (CMD_READ_STATE, "state"),
        (CMD_WRITE_STATE, "state"),
        (CMD_CHECKPOINT, "checkpoint"),
    ],
)
def test_bad_arguments_are_errors(device: Device, cmd: int, kind: str) -> None:
    """Index, offset and count past the tensors, payloads of the wrong size, zero invokes: each
    is an error of the right code; the valid frames drawn along the way succeed."""
    rng = random.Random(cmd)
    thrown = valid = 0
    while thrown < COUNTS[kind]:
        payload = argument_payload(rng, cmd, device.info)
        code = expected_code(cmd, payload, device.info)
        reply_cmd, body = exchange(device, encode_frame(cmd, payload))
        if code is None:
            assert reply_cmd == cmd | REPLY_FLAG, (payload.hex(), body)
            valid += 1
            continue
        assert (reply_cmd, body[:1]) == (REPLY_ERROR, bytes([code])), (payload.hex(), body)
        assert_responsive(device)
        thrown += 1
    # the example model has no variable tensors, so no state request is valid here; the training
    # tests read and write the state of models that have it
    assert valid > 0 or kind == "state"


# --- garbage ------------------------------------------------------------------------------------


def test_random_bytes_between_requests(device: Device) -> None:
    """Binary noise and printable noise (which the MLPerf parser may answer with text): the next
    request is still answered."""
    rng = random.Random(6)
    for _ in range(100):
        device.ser.write(no_a5(rng, rng.randrange(1, 300)))
        assert_responsive(device)


def test_sync_like_garbage(device: Device) -> None:
    """0xA5 alone, 0xA5 0xA5 0x5A, and sync pairs followed by random headers and bytes: each
    started frame ends in one CRC or length error; stray 0xA5 bytes start nothing."""
    rng = random.Random(8)
    for k in range(COUNTS["sync_garbage"]):
        prefix = rng.choice([b"", b"\xa5", b"\xa5\x00", b"\xa5\xa5", b"\x5a\xa5"])
        length = rng.randrange(600)
        head = struct.pack("<BH", rng.randrange(256), length)
        if length > MAX_PAYLOAD:  # skipped to its end
            rest, code = no_a5(rng, length + 2), ERR_LENGTH
        else:
            body = rng.randbytes(length)
            crc = crc16(head + body) ^ rng.randrange(1, 0x10000)
            rest, code = body + struct.pack("<H", crc), ERR_CRC
        expect_error(device, prefix + SYNC + head + rest, code)
        if k % 10 == 0:
            device.ser.write(b"\xa5\xa5\xa5\x00\xa5")  # half syncs alone
        assert_responsive(device)


# --- stalled frames: the device times out, answers, and resynchronises --------------------------


def _text_reply(dev: Device, text: bytes) -> list[str]:
    """Send text, return the lines up to the next m-ready."""
    dev.ser.write(text)
    seen = b""
    deadline = time.monotonic() + REPLY_SECONDS
    while not seen.endswith(b"m-ready\r\n"):
        assert time.monotonic() < deadline, seen[-200:]
        seen += dev.ser.read(max(1, dev.ser.in_waiting))
    return seen.decode("ascii").split("\r\n")[:-2]


def _flush_text(dev: Device) -> None:
    """End whatever text line the noise so far left in the MLPerf parser."""
    _text_reply(dev, b"x%")


def _lap_us(dev: Device) -> int:
    """The device's clock in microseconds (MLPerf `timestamp`), to measure virtual time."""
    _flush_text(dev)
    (line,) = _text_reply(dev, b"timestamp%")
    match = re.fullmatch(r"m-lap-us-(\d+)", line)
    assert match, line
    return int(match.group(1))


STALLED = [
    pytest.param(SYNC, ERR_TIMEOUT, id="sync-only"),
    pytest.param(SYNC + b"\x01\x05", ERR_TIMEOUT, id="half-header"),
    pytest.param(SYNC + b"\x02\x64\x00" + bytes(10), ERR_TIMEOUT, id="partial-payload"),
    pytest.param(raw_frame(CMD_INFO, bytes(8))[:-2], ERR_TIMEOUT, id="no-crc"),
    pytest.param(
        SYNC + b"\x02\x00\x01" + encode_frame(CMD_INFO), ERR_TIMEOUT, id="swallows-a-request"
    ),
    pytest.param(SYNC + b"\x01\xff\xff", ERR_LENGTH, id="over-maximum-then-quiet"),
]


@pytest.mark.parametrize(("data", "code"), STALLED)
def test_stalled_frame_times_out(device: Device, data: bytes, code: int) -> None:
    """Exactly one error after 200 ms of the device's time (not earlier: the clock is monotonic
    across SysTick wraps), in bounded wall time; then the device answers again."""
    before = _lap_us(device)
    start = time.monotonic()
    expect_error(device, data, code, timeout=STALL_SECONDS)
    wall = time.monotonic() - start
    virtual_us = _lap_us(device) - before
    assert 200_000 <= virtual_us < 1_000_000, virtual_us  # the upper end leaves room for host lag
    assert wall < STALL_SECONDS
    assert_responsive(device)


# --- MLPerf Tiny text garbage --------------------------------------------------------------------


def _printable(rng: random.Random, n: int) -> str:
    """Random printable text without '%' and with no leading space."""
    chars = [chr(c) for c in range(0x21, 0x7F) if chr(c) != "%"]
    return "".join(rng.choice(chars + [" "] if i else chars) for i in range(n))


def test_mlperf_text_garbage(device: Device) -> None:
    """Unknown commands are echoed in e-[...], lines over 80 characters are refused whole (also
    5,000-character ones, and one cut by a binary request), and the device still answers."""
    rng = random.Random(9)
    _flush_text(device)
    for _ in range(40):
        line = rng.choice("xyzqXYZQ") + _printable(rng, rng.randrange(79))
        assert _text_reply(device, line.encode() + b"%") == [f"e-[Unknown command: {line}]"]
    for n in (81, 200, 5000):
        assert _text_reply(device, _printable(rng, n).encode() + b"%") == ["e-[Command too long]"]
    device.ser.write(_printable(rng, 100).encode())
    assert_responsive(device)  # a binary request in the middle of a text line
    assert _text_reply(device, b"%") == ["e-[Command too long]"]
    assert _text_reply(device, b"name%") == ["m-name-dut-[mcugen]"]
    assert_responsive(device)


# --- after all of it ----------------------------------------------------------------------------


def test_inference_still_right_and_nothing_left_over(device: Device) -> None:
    sample = seeded_sample(device.gen)
    outputs = infer(device.link, device.gen, sample)
    model = EXAMPLE.read_bytes()
    (reference,) = tflm_outputs(model, device.gen.graph, [sample])
    for ours, first, ref in zip(outputs, device.first_output, reference, strict=True):
        np.testing.assert_array_equal(ours, first)
        np.testing.assert_array_equal(ours, ref)
    assert_responsive(device)
    time.sleep(0.3)
    assert device.ser.in_waiting == 0
