"""The wire between two twins' link UARTs (link/links.py): frames pass whole and unchanged, or
damaged exactly as the fault plan says, however the bytes are chunked; bytes outside frames pass;
a cut loses everything after it. No QEMU needed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcugen.link.links import Direction, Fault, LinkStats, link_slot
from mcugen.link.protocol import encode_frame

FRAMES = [encode_frame(0x20, bytes([k]) * (3 + 40 * k)) for k in range(4)]
STREAM = b"noise" + b"".join(FRAMES) + b"\xa5tail"


def feed_chunked(direction: Direction, data: bytes, cuts: list[int]) -> bytes:
    out, start = bytearray(), 0
    for cut in sorted(set(cuts)) + [len(data)]:
        out += direction.feed(data[start:cut])
        start = cut
    return bytes(out)


@given(st.lists(st.integers(0, len(STREAM)), max_size=12))
def test_clean_wire_passes_everything_however_chunked(cuts: list[int]) -> None:
    d = Direction()
    out = feed_chunked(d, STREAM, cuts)
    # everything but a trailing lone sync byte, which waits for the next byte
    assert out == STREAM[:-1] or out == STREAM
    assert d.frames == len(FRAMES) and d.damaged == 0


@given(st.lists(st.integers(0, len(STREAM)), max_size=12))
def test_faults_hit_exactly_the_named_frames(cuts: list[int]) -> None:
    d = Direction((Fault("corrupt", 1), Fault("drop", 2)))
    out = feed_chunked(d, STREAM, cuts)
    damaged = bytearray(FRAMES[1])
    damaged[5] ^= 0x10
    assert out.startswith(b"noise" + FRAMES[0] + bytes(damaged) + FRAMES[3])
    assert d.damaged == 2


def test_cut_loses_the_rest() -> None:
    d = Direction((Fault("cut", 1),))
    assert d.feed(STREAM) == b"noise" + FRAMES[0]
    assert d.feed(FRAMES[0]) == b""


def test_fault_kinds_and_slots() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        Fault("melt", 0)
    assert [link_slot(2, p) for p in (0, 1, 3, 4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        link_slot(1, 1)


def test_link_stats_parse_and_describe() -> None:
    body = (
        bytes([3, 0])
        + (512).to_bytes(4, "little")
        + b"".join(n.to_bytes(2, "little") for n in (9, 7, 0, 8, 0, 0, 0xBEEF))
    )
    stats = LinkStats.parse(body, "twin")
    assert (stats.status, stats.nbytes, stats.resends, stats.crc) == (3, 512, 7, 0xBEEF)
    assert "unacknowledged 8 times" in stats.describe()
    with pytest.raises(Exception, match="malformed reply"):
        LinkStats.parse(body[:-1], "twin")
