"""Every real model in ../shared/models whose operators mcugen supports matches TFLM on 5 seeded
random inputs: bit for bit for integer outputs, within 1e-5 relative for float32. The models with
state (SVDF, LSTM) are also cut after their last stateful operator, with that operator's output
and every state tensor as the model's outputs, and run on one input several times: the states
TFLM carries from invoke to invoke change, and mcugen's equal them after every invoke."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from mcugen.codegen.viewmodel import lower_all
from mcugen.errors import UnsupportedError
from mcugen.link.host_run import random_inputs
from mcugen.model.ir import Graph
from mcugen.model.tflite_import import load_model
from mcugen.model.tflite_write import write_model
from support import (
    MLPERF_INT8,
    SHARED_MODELS,
    STATEFUL_MODELS,
    assert_matches_tflm,
    compare_with_tflm,
    sweep,
    tflm_outputs,
)

#: Models the end-to-end issue requires; an unsupported operator in one of these is a failure.
REQUIRED = {
    *MLPERF_INT8,
    "tflm_hello_world_int8",
    "tflm_hello_world_f32",
    "tflm_micro_speech_int8",
    "mcunet_vww_mixed",
    "st_miniresnetv2_aed_int8",
    "st_yamnet_aed_int8",
    "mlperf_vww_mbv1_f32",
    "mlperf_ic_resnet8_f32",
}

#: Models with variable tensors: SVDF (keyword) and LSTM state, the audio front end's noise
#: estimate (spectral subtraction keeps it across invokes); required too.
STATEFUL = (*STATEFUL_MODELS, "tflm_audio_preproc_int8")
REQUIRED |= set(STATEFUL)

#: Models TFLM itself cannot run, so there is nothing to compare with.
TFLM_REJECTS = {"mlperf_kws_dscnn_hybrid": "TFLM: hybrid models are not supported"}

#: Every shared model; the suite leaves deeplabv3_f32 (30 s, float kernels the VWW and IC f32
#: models cover) to benchmarks/sweeps.py.
MODELS = sweep(
    sorted(SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else [],
    lambda path: path.stem != "deeplabv3_f32",
)


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


def through_last_stateful_operator(graph: Graph) -> bytes:
    """The model cut after its last operator with a variable input; outputs: that operator's
    output and every variable (TFLM reads a variable output where its operator updated it)."""
    last = max(
        op.index
        for op in graph.operators
        if any(t >= 0 and graph.tensors[t].is_variable for t in op.inputs)
    )
    ops = graph.operators[: last + 1]
    outputs = (*ops[-1].outputs, *graph.variable_tensors())
    cut = replace(graph, operators=ops, outputs=outputs, metadata=MappingProxyType({}))
    return write_model(cut)


@pytest.mark.skipif(not MODELS, reason="../shared/models not present")
@pytest.mark.parametrize("name", STATEFUL)
def test_state_is_carried_over_inferences_as_tflm(name: str) -> None:
    graph = load_model(SHARED_MODELS / f"{name}.tflite")
    assert graph.variable_tensors()
    model = through_last_stateful_operator(graph)
    sample = random_inputs(graph, 99)
    repeated = [sample] * 4
    ref = tflm_outputs(model, repeated)
    states = [np.concatenate([a.ravel().astype(np.float64) for a in r[1:]]) for r in ref]
    changed = [not np.array_equal(a, b) for a, b in zip(states, states[1:], strict=False)]
    assert all(changed), "the state did not change from one invoke to the next"
    assert_matches_tflm(model, inputs=repeated)
