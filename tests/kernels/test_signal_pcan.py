"""CUSTOM:SignalPCAN against TFLM: noise estimates covering every interval of the gain table (0, 1,
2, then each most significant bit up to 32), random and the audio front end's gain tables, several
snr shifts; the table-length and shift checks."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.errors import McugenError
from mcugen.model.tflite_import import load_model
from support import SHARED_MODELS, assert_matches_tflm, custom_model, flex_options, lower_only

AUDIO = SHARED_MODELS / "tflm_audio_preproc_int8.tflite"


def pcan_model(n: int, lut: np.ndarray, snr_shift: int) -> bytes:
    return custom_model(
        "SignalPCAN",
        [((n,), "uint32"), ((n,), "uint32"), lut],
        [((n,), "uint32")],
        flex_options(snr_shift=snr_shift),
    )


def samples(n: int, count: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(7)
    found = []
    for _ in range(count):
        bits = rng.integers(0, 33, n)
        noise = np.array([int(rng.integers(0, 2**32)) >> (32 - int(b)) for b in bits])
        noise[:3] = [0, 1, 2]
        x = rng.integers(0, 2 ** int(rng.integers(8, 33)), n, dtype=np.uint64)
        found.append([x.astype(np.uint32), noise.astype(np.uint32)])
    return found


@pytest.mark.parametrize("snr_shift", [6, 0, 20])
def test_pcan_with_a_random_table_matches_tflm(snr_shift: int) -> None:
    lut = np.random.default_rng(snr_shift).integers(-32768, 32768, 125).astype(np.int16)
    assert_matches_tflm(pcan_model(40, lut, snr_shift), inputs=samples(40, 4))


@pytest.mark.skipif(not AUDIO.exists(), reason="../shared/models not present")
def test_pcan_with_the_audio_front_end_table_matches_tflm() -> None:
    graph = load_model(AUDIO)
    op = next(o for o in graph.operators if o.custom_code == "SignalPCAN")
    lut = graph.tensors[op.inputs[2]].array()
    assert_matches_tflm(pcan_model(40, lut, 6), inputs=samples(40, 4))


def test_pcan_rejects_a_short_table_and_a_large_shift() -> None:
    with pytest.raises(McugenError, match="gain table"):
        lower_only(pcan_model(8, np.zeros(124, np.int16), 6))
    with pytest.raises(McugenError, match="snr_shift"):
        lower_only(pcan_model(8, np.zeros(125, np.int16), 64))
