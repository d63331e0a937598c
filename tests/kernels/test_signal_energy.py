"""CUSTOM:SignalEnergy against TFLM: full-range int16 spectra (the int32 sum wraps at
(-32768, -32768)), every bin or a band. Bins outside the band are not written (as in TFLM), so a
band is compared through the model's own slice of it, as the audio front end does."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm, custom_model, flex_options, lower_only


def energy_model(bins: int, start: int, end: int, out: int | None = None) -> bytes:
    return custom_model(
        "SignalEnergy",
        [((2 * bins,), "int16")],
        [((out or bins,), "uint32")],
        flex_options(start_index=start, end_index=end),
    )


def extreme_inputs(bins: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(2)
    found = [[rng.integers(-32768, 32768, 2 * bins).astype(np.int16)] for _ in range(3)]
    found.append([np.full(2 * bins, -32768, np.int16)])
    return found


@pytest.mark.parametrize("bins", [257, 1, 33])
def test_energy_every_bin_matches_tflm(bins: int) -> None:
    assert_matches_tflm(energy_model(bins, 0, bins), inputs=extreme_inputs(bins))


def test_energy_band_matches_tflm() -> None:
    """Bins [5, 241) of 257, sliced out after a CAST to int32 (as in the audio front end)."""
    b = GraphBuilder()
    x = b.input((514,), "int16")
    energy = b.activation((257,), "uint32")
    b.custom("SignalEnergy", [x], [energy], flex_options(start_index=5, end_index=241))
    wide = b.activation((257,), "int32")
    b.op("CAST", [energy], [wide])
    band = b.activation((236,), "int32")
    begin, end, stride = (b.const(np.array([v], np.int32)) for v in (5, 241, 1))
    b.op("STRIDED_SLICE", [wide, begin, end, stride], [band])
    b.output(band)
    assert_matches_tflm(b.tflite(), inputs=extreme_inputs(257))


@pytest.mark.parametrize(("start", "end", "out"), [(-1, 4, 8), (0, 9, 8), (0, 8, 7)])
def test_energy_rejects_bins_out_of_range(start: int, end: int, out: int) -> None:
    with pytest.raises(McugenError, match="bins"):
        lower_only(energy_model(8, start, end, out))
