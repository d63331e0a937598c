"""CUSTOM:SignalFilterBankLog against TFLM: uint32 inputs of every magnitude (0 and 1 give 0, the
cap at INT16_MAX), correction shifts that wrap, output scales large enough to wrap the uint32
arithmetic; the shift check."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from support import assert_matches_tflm, custom_model, flex_options, lower_only


def log_model(n: int, bits: int, scale: int) -> bytes:
    return custom_model(
        "SignalFilterBankLog",
        [((n,), "uint32")],
        [((n,), "int16")],
        flex_options(input_correction_bits=bits, output_scale=scale),
    )


def samples(n: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(9)
    found = []
    for _ in range(4):
        bits = rng.integers(0, 33, n)
        x = np.array([int(rng.integers(0, 2**32)) >> (32 - int(b)) for b in bits])
        x[:4] = [0, 1, 2, 2**32 - 1]
        found.append([x.astype(np.uint32)])
    return found


@pytest.mark.parametrize(
    ("bits", "scale"), [(3, 64), (0, 1), (7, 1000), (31, 2**31 - 1), (2, -5), (0, 65537)]
)
def test_filter_bank_log_matches_tflm(bits: int, scale: int) -> None:
    assert_matches_tflm(log_model(40, bits, scale), inputs=samples(40))


def test_filter_bank_log_rejects_a_shift_of_32() -> None:
    with pytest.raises(McugenError, match="input_correction_bits"):
        lower_only(log_model(8, 32, 64))
