"""CUSTOM:SignalRfft (int16) against TFLM's kissfft: every radix (4, 2, 3, 5 stages), zero
padding, several rows, full-range inputs (wrapping sums) and realistic ones; the lowering's
rejections (odd lengths, radices above 5, int32/float types)."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from support import assert_matches_tflm, custom_model, flex_options, lower_only

INT16, INT32 = 7, 2


def rfft_model(rows: int, length: int, fft_length: int, tensor_type: int = INT16) -> bytes:
    shape = (rows, length) if rows > 1 else (length,)
    out = (rows, fft_length + 2) if rows > 1 else (fft_length + 2,)
    return custom_model(
        "SignalRfft",
        [(shape, "int16")],
        [(out, "int16")],
        flex_options(T=tensor_type, fft_length=fft_length),
    )


@pytest.mark.parametrize(
    ("rows", "length", "fft_length"),
    [(1, 480, 512), (1, 512, 512), (2, 16, 16), (1, 20, 24), (3, 17, 20), (1, 30, 30), (1, 6, 8)],
)
def test_rfft_matches_tflm(rows: int, length: int, fft_length: int) -> None:
    assert_matches_tflm(rfft_model(rows, length, fft_length), samples=3)


def test_rfft_matches_tflm_on_scaled_audio() -> None:
    rng = np.random.default_rng(1)
    inputs = [
        [(rng.standard_normal(480) * s).clip(-32768, 32767).astype(np.int16)] for s in (30, 3e3)
    ]
    assert_matches_tflm(rfft_model(1, 480, 512), inputs=inputs)


@pytest.mark.parametrize(
    ("length", "fft_length", "tensor_type", "rule"),
    [
        (8, 14, INT16, "prime factor"),
        (2, 2, INT16, "not even in"),
        (5, 9, INT16, "not even"),
        (20, 16, INT16, "1..fft_length"),
        (8, 8, INT32, "tensor type"),
    ],
)
def test_rfft_rejects(length: int, fft_length: int, tensor_type: int, rule: str) -> None:
    model = rfft_model(1, length, fft_length, tensor_type)
    with pytest.raises(McugenError, match=rule):
        lower_only(model)
