"""Damaged copies of a model file (unit/test_malformed.py, unit/test_onnx_errors.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np


def corruptions(
    data: bytes,
    seed: int,
    *,
    cuts: Iterable[int],
    flips: int,
    randoms: int,
    tagged: tuple[str, Callable[[bytes], bytes]],
    extra: Iterable[tuple[str, bytes]] = (),
) -> list[tuple[str, bytes]]:
    """Labelled damaged copies of `data`: empty, its first 4 bytes, `extra`, truncations at
    `cuts` and at a third, a half and all but its last byte, `flips` copies with 1 to 4 bits
    flipped, and `randoms` random blobs, each also as `tagged` makes it (e.g. behind the format's
    header): seeded, the same on every run."""
    rng = np.random.default_rng(seed)
    cases = [("empty", b""), ("4 bytes", data[:4]), *extra]
    for cut in sorted({*cuts, len(data) // 3, len(data) // 2, len(data) - 1}):
        cases.append((f"truncated to {cut}", data[:cut]))
    for k in range(flips):
        buf = bytearray(data)
        for pos in rng.integers(0, len(buf), size=1 + k % 4):
            buf[pos] ^= 1 << int(rng.integers(0, 8))
        cases.append((f"bit flips #{k}", bytes(buf)))
    label, tag = tagged
    for k in range(randoms):
        noise = rng.integers(0, 256, size=int(rng.integers(8, 4096)), dtype=np.uint8).tobytes()
        cases.append((f"random #{k}", noise))
        cases.append((f"{label} #{k}", tag(noise)))
    return cases
