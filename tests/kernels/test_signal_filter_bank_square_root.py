"""CUSTOM:SignalFilterBankSquareRoot against TFLM: uint64 values across the whole range (both the
32-bit and the 64-bit square root, rounding at 0xFFFF / 0xFFFFFFFF), shifts 0..31 from an input
or a constant; a constant shift out of range is rejected, a computed one fails at run time."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from support import assert_matches_tflm, custom_model, flex_options, lower_only


def values(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 65, n)
    raw = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    x = [int(r) >> (64 - int(b)) if b else 0 for r, b in zip(raw, bits, strict=True)]
    x[:4] = [0, 2**32 - 1, 2**64 - 1, 0xFFFF * 0xFFFF + 0xFFFF]
    return np.array(x, dtype=np.uint64)


def sqrt_model(n: int, shift: int | None) -> bytes:
    scale = ((), "int32") if shift is None else np.array(shift, np.int32)
    return custom_model(
        "SignalFilterBankSquareRoot",
        [((n,), "uint64"), scale],
        [((n,), "uint32")],
        flex_options(),
    )


def test_square_root_with_a_shift_input_matches_tflm() -> None:
    inputs = [[values(40, s), np.array(s * 7 % 32, np.int32)] for s in range(6)]
    assert_matches_tflm(sqrt_model(40, None), inputs=inputs)


@pytest.mark.parametrize("shift", [0, 5, 31])
def test_square_root_with_a_constant_shift_matches_tflm(shift: int) -> None:
    inputs = [[values(64, s)] for s in range(3)]
    assert_matches_tflm(sqrt_model(64, shift), inputs=inputs)


@pytest.mark.parametrize("shift", [-1, 32])
def test_square_root_rejects_a_constant_shift_out_of_range(shift: int) -> None:
    with pytest.raises(McugenError, match="shift"):
        lower_only(sqrt_model(8, shift))
