"""CUSTOM:SignalFilterBankSpectralSubtraction against TFLM: the noise estimate carried from invoke
to invoke (several samples through one interpreter and one mcugen process, the estimate compared
after each), with and without clamping, alternate coefficients, full-range inputs (the shifted
signal wraps) and realistic ones; the options' range checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mcugen.errors import McugenError
from mcugen.model.tflite_import import import_model
from support import assert_matches_tflm, custom_model, flex_options, lower_only, tflm_outputs

AUDIO = {
    "alternate_one_minus_smoothing": 15401,
    "alternate_smoothing": 983,
    "clamping": False,
    "min_signal_remaining": 819,
    "num_channels": 40,
    "one_minus_smoothing": 15975,
    "smoothing": 409,
    "smoothing_bits": 10,
    "spectral_subtraction_bits": 14,
}


def subtraction_model(**changes: Any) -> bytes:
    opts = {**AUDIO, **changes}
    n = opts["num_channels"]
    return custom_model(
        "SignalFilterBankSpectralSubtraction",
        [((n,), "uint32")],
        [((n,), "uint32"), ((n,), "uint32")],
        flex_options(**opts),
    )


def frames(n: int, count: int, high: int, seed: int = 0) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[rng.integers(0, high, n, dtype=np.uint32)] for _ in range(count)]


def test_the_noise_estimate_is_a_variable_that_changes_across_invokes() -> None:
    model = subtraction_model()
    graph = import_model(model)
    assert graph.tensors[graph.operators[0].outputs[1]].is_variable
    ref = tflm_outputs(model, [frames(40, 1, 20000)[0]] * 3)
    assert not np.array_equal(ref[0][1], ref[1][1])


@pytest.mark.parametrize(
    ("changes", "high"),
    [
        ({}, 20000),
        ({"clamping": True}, 20000),
        ({"clamping": True, "smoothing": 9000, "one_minus_smoothing": 7384}, 2**32),
        ({"smoothing_bits": 0, "spectral_subtraction_bits": 63}, 2**32),
        ({"num_channels": 7, "min_signal_remaining": 16000}, 5000),
    ],
)
def test_spectral_subtraction_matches_tflm(changes: dict[str, Any], high: int) -> None:
    model = subtraction_model(**changes)
    n = {**AUDIO, **changes}["num_channels"]
    inputs = frames(n, 3, high) + frames(n, 3, high // 50 + 1, seed=1)
    assert_matches_tflm(model, inputs=inputs)


@pytest.mark.parametrize(
    ("changes", "rule"),
    [({"smoothing_bits": 32}, "smoothing_bits"), ({"spectral_subtraction_bits": 64}, "bits")],
)
def test_spectral_subtraction_rejects_shifts_out_of_range(
    changes: dict[str, Any], rule: str
) -> None:
    with pytest.raises(McugenError, match=rule):
        lower_only(subtraction_model(**changes))


def test_spectral_subtraction_rejects_a_wrong_channel_count() -> None:
    model = custom_model(
        "SignalFilterBankSpectralSubtraction",
        [((40,), "uint32")],
        [((40,), "uint32"), ((40,), "uint32")],
        flex_options(**{**AUDIO, "num_channels": 41}),
    )
    with pytest.raises(McugenError, match="num_channels"):
        lower_only(model)
