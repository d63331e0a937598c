"""CUSTOM:SignalFftAutoScale against TFLM: inputs of every magnitude, all zeros, and inputs holding
-32768 (TFLM keeps the largest magnitude in an int16, so -32768 there is later replaced)."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from support import assert_matches_tflm, custom_model, flex_options, lower_only


def scale_model(n: int) -> bytes:
    return custom_model(
        "SignalFftAutoScale", [((n,), "int16")], [((n,), "int16"), ((), "int32")], flex_options()
    )


def samples(n: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(3)
    found = [[(rng.integers(-(2**b), 2**b, n)).astype(np.int16)] for b in range(0, 16, 3)]
    found.append([np.zeros(n, np.int16)])
    with_min = rng.integers(-100, 100, n).astype(np.int16)
    with_min[0] = -32768
    found.append([with_min])
    last_min = with_min.copy()
    last_min[0], last_min[-1] = 5, -32768
    found.append([last_min])
    return found


@pytest.mark.parametrize("n", [480, 17, 1])
def test_fft_auto_scale_matches_tflm(n: int) -> None:
    assert_matches_tflm(scale_model(n), inputs=samples(n))


def test_fft_auto_scale_rejects_mismatched_lengths() -> None:
    model = custom_model(
        "SignalFftAutoScale", [((8,), "int16")], [((9,), "int16"), ((), "int32")], flex_options()
    )
    with pytest.raises(McugenError, match="differs"):
        lower_only(model)
