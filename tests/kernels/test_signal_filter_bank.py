"""CUSTOM:SignalFilterBank against TFLM: random channel layouts (empty channels, overlapping
bins), full-range uint32 energies and negative weights (uint64 wrap-around), the audio front end's
own tables; the lowering's index checks."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from mcugen.model.tflite_import import load_model
from support import SHARED_MODELS, assert_matches_tflm, custom_model, flex_options, lower_only

AUDIO = SHARED_MODELS / "tflm_audio_preproc_int8.tflite"


def tables(channels: int, bins: int, seed: int) -> list[np.ndarray]:
    """weights, unweights, frequency starts, weight starts, widths (channels + 1 entries)."""
    rng = np.random.default_rng(seed)
    n_weights = 3 * (channels + 1)
    widths = rng.integers(0, 4, channels + 1)
    freq = np.array([rng.integers(0, bins - w + 1) for w in widths])
    first = np.array([rng.integers(0, n_weights - w + 1) for w in widths])
    weights = rng.integers(-32768, 32768, (2, n_weights))
    return [a.astype(np.int16) for a in (weights[0], weights[1], freq, first, widths)]


def bank_model(channels: int, bins: int, tabs: list[np.ndarray], outputs: int = 0) -> bytes:
    return custom_model(
        "SignalFilterBank",
        [((bins,), "uint32"), *tabs],
        [((outputs or channels,), "uint64")],
        flex_options(num_channels=channels),
    )


@pytest.mark.parametrize(("channels", "bins", "seed"), [(40, 257, 0), (5, 9, 1), (1, 3, 2)])
def test_filter_bank_matches_tflm(channels: int, bins: int, seed: int) -> None:
    assert_matches_tflm(bank_model(channels, bins, tables(channels, bins, seed)), samples=3)


def test_filter_bank_fewer_outputs_than_channels_matches_tflm() -> None:
    assert_matches_tflm(bank_model(6, 20, tables(6, 20, 4), outputs=4), samples=2)


@pytest.mark.skipif(not AUDIO.exists(), reason="../shared/models not present")
def test_filter_bank_with_the_audio_front_end_tables_matches_tflm() -> None:
    graph = load_model(AUDIO)
    op = next(o for o in graph.operators if o.custom_code == "SignalFilterBank")
    tabs = [graph.tensors[t].array() for t in op.inputs[1:]]
    assert_matches_tflm(bank_model(40, 257, tabs), samples=3)


@pytest.mark.parametrize("field", [2, 3, 4])
def test_filter_bank_rejects_indices_out_of_range(field: int) -> None:
    tabs = tables(4, 10, 5)
    tabs[4][2] = 3
    tabs[field][2] = {2: 9, 3: 30, 4: 40}[field]
    with pytest.raises(McugenError, match="reads"):
        lower_only(bank_model(4, 10, tabs))


def test_filter_bank_rejects_short_tables_and_extra_outputs() -> None:
    tabs = tables(4, 10, 6)
    with pytest.raises(McugenError, match="num_channels \\+ 1"):
        lower_only(bank_model(5, 10, tabs))
    with pytest.raises(McugenError, match="more than"):
        lower_only(bank_model(4, 10, tabs, outputs=5))


@pytest.mark.parametrize("field", [2, 3])
def test_filter_bank_rejects_a_start_whose_int16_sum_would_wrap(field: int) -> None:
    """start 32,760 + width 20 wraps to negative in int16 arithmetic: the check must not."""
    tabs = tables(4, 64, 5)
    tabs[4][1] = 20
    tabs[2][1] = tabs[3][1] = 0
    tabs[field][1] = 32760
    with pytest.raises(McugenError, match="reads .*32780"):
        lower_only(bank_model(4, 64, tabs))
