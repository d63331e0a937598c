"""Every real model in ../shared/models whose operators mcugen supports matches TFLM on 5 seeded
random inputs: bit for bit for integer outputs, within 1e-5 relative for float32."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcugen.codegen.viewmodel import lower_all
from mcugen.errors import UnsupportedError
from mcugen.model.tflite_import import load_model
from support import SHARED_MODELS, compare_with_tflm

#: Models the end-to-end issue requires; an unsupported operator in one of these is a failure.
REQUIRED = {
    "mlperf_kws_dscnn_int8",
    "mlperf_vww_mbv1_int8",
    "mlperf_ic_resnet8_int8",
    "mlperf_ad_toycar_int8",
    "mlperf_sww_int8",
    "tflm_person_detect_int8",
    "tflm_hello_world_int8",
    "tflm_hello_world_f32",
    "tflm_micro_speech_int8",
    "mcunet_vww_mixed",
    "st_miniresnetv2_aed_int8",
    "st_yamnet_aed_int8",
    "mlperf_vww_mbv1_f32",
    "mlperf_ic_resnet8_f32",
}

#: Models TFLM itself cannot run, so there is nothing to compare with.
TFLM_REJECTS = {"mlperf_kws_dscnn_hybrid": "TFLM: hybrid models are not supported"}

MODELS = sorted(SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else []


@pytest.mark.skipif(not MODELS, reason="../shared/models not present")
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_real_model_matches_tflm(path: Path) -> None:
    if path.stem in TFLM_REJECTS:
        pytest.skip(TFLM_REJECTS[path.stem])
    graph = load_model(path)
    try:
        lower_all(graph, tuple(range(len(graph.operators))))
    except UnsupportedError as exc:
        if path.stem in REQUIRED:
            pytest.fail(f"required model is not supported: {exc}")
        pytest.skip(f"not supported yet: {exc.what}")
    result = compare_with_tflm(path.read_bytes(), samples=5, seed=1234)
    assert not result.mismatches, "\n".join(result.mismatches[:5])


@pytest.mark.skipif(not MODELS, reason="../shared/models not present")
def test_hybrid_model_is_rejected_with_a_clear_error() -> None:
    graph = load_model(SHARED_MODELS / "mlperf_kws_dscnn_hybrid.tflite")
    with pytest.raises(UnsupportedError) as info:
        lower_all(graph, tuple(range(len(graph.operators))))
    assert "operator" in str(info.value)
