"""CUSTOM:SignalWindow against TFLM: int16 windows of several lengths, repeated over rows, shifts
0..31 (saturation at both ends), and the lowering's rejections."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from support import assert_matches_tflm, custom_model, flex_options, lower_only


def window_model(shape: tuple[int, ...], width: int, shift: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    weights = rng.integers(-32768, 32768, width).astype(np.int16)
    return custom_model(
        "SignalWindow", [(shape, "int16"), weights], [(shape, "int16")], flex_options(shift=shift)
    )


@pytest.mark.parametrize(
    ("shape", "width", "shift"),
    [((1, 480), 480, 12), ((3, 8), 8, 0), ((24,), 6, 31), ((2, 5, 4), 20, 15), ((7,), 7, 1)],
)
def test_window_matches_tflm(shape: tuple[int, ...], width: int, shift: int) -> None:
    assert_matches_tflm(window_model(shape, width, shift), samples=3)


@pytest.mark.parametrize(
    ("shape", "width", "shift", "rule"),
    [((10,), 4, 3, "do not divide"), ((8,), 8, 32, "shift"), ((8,), 8, -1, "shift")],
)
def test_window_rejects(shape: tuple[int, ...], width: int, shift: int, rule: str) -> None:
    with pytest.raises(McugenError, match=rule):
        lower_only(window_model(shape, width, shift))


def test_window_rejects_unknown_options() -> None:
    model = custom_model(
        "SignalWindow",
        [((8,), "int16"), np.ones(8, np.int16)],
        [((8,), "int16")],
        flex_options(shift=3, extra=1),
    )
    with pytest.raises(McugenError, match="custom options hold"):
        lower_only(model)
