"""A whole training step of each MLPerf Tiny model's trainable part against JAX: the host build's
gradients of every trained parameter after one sample (the frozen int8 part run by mcugen's
int8 kernels, the values entering the float part computed again by TFLM for the reference)
within 1e-5 relative of jax.grad, and the loss within 1e-5."""

from __future__ import annotations

import numpy as np
import pytest
from jax_reference import assert_host_matches_jax

from mcugen.link.host_run import random_inputs
from mcugen.model.tflite_import import load_model
from mcugen.train.graph import build_training_graph
from mcugen.train.options import TrainOptions
from support import SHARED_MODELS

#: the classifier and the last block (KWS and VWW: depthwise + pointwise; IC: its two
#: convolutions and the shortcut's), VWW's last depthwise with the pointwise after it trained
#: through, and the autoencoder's last layer
CASES = [
    ("mlperf_kws_dscnn_int8", "last:3"),
    ("mlperf_ic_resnet8_int8", "last:4"),
    ("mlperf_vww_mbv1_int8", "last:3"),
    ("mlperf_vww_mbv1_int8", "25,29"),
    ("mlperf_ad_toycar_int8", "last:1"),
]


@pytest.mark.skipif(not SHARED_MODELS.exists(), reason="needs ../shared/models")
@pytest.mark.parametrize(("stem", "trainable"), CASES)
def test_training_step_matches_jax(stem: str, trainable: str) -> None:
    model = load_model(SHARED_MODELS / f"{stem}.tflite")
    tg = build_training_graph(model, TrainOptions(trainable=trainable, accumulate=2))
    x = random_inputs(model, 3)[0]
    label: np.ndarray
    if tg.loss == "cross_entropy":
        label = np.array([1], dtype=np.int32)
    else:  # the autoencoder reconstructs its input
        q = model.tensors[model.inputs[0]].quant
        assert q is not None
        out_shape = model.tensors[model.outputs[0]].shape
        label = ((x.astype(np.float32) - q.zero_point) * q.scale).reshape(out_shape)
    assert_host_matches_jax(tg, [x], label, what=f"{stem} ", loss_abs=0.0)
