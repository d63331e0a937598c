"""Multiply-accumulates per operator (mcugen/model/macs.py), the divisor of every per-MAC figure:
checked against hand counts and against the figure CMSIS-NN's per-MAC range is quoted with."""

from __future__ import annotations

import numpy as np
import pytest

from mcugen.model.builder import GraphBuilder
from mcugen.model.macs import graph_macs, operator_macs
from mcugen.model.tflite_import import import_model
from support import SHARED_MODELS


def test_hand_counts() -> None:
    b = GraphBuilder()
    x = b.input((1, 8, 6, 3), "int8", scale=0.1, zero_point=0)
    w = b.const(np.ones((4, 3, 3, 3), np.int8), scale=0.1)
    y = b.activation((1, 4, 3, 4), "int8", scale=0.1, zero_point=0)
    b.op("CONV_2D", [x, w, -1], [y], padding=0, stride_h=2, stride_w=2)
    dw = b.const(np.ones((1, 3, 3, 4), np.int8), scale=0.1)
    z = b.activation((1, 4, 3, 4), "int8", scale=0.1, zero_point=0)
    b.op("DEPTHWISE_CONV_2D", [y, dw, -1], [z], padding=0, stride_h=1, stride_w=1)
    flat = b.activation((1, 48), "int8", scale=0.1, zero_point=0)
    b.op("RESHAPE", [z], [flat])
    fw = b.const(np.ones((5, 48), np.int8), scale=0.1)
    out = b.activation((1, 5), "int8", scale=0.1, zero_point=0)
    b.op("FULLY_CONNECTED", [flat, fw, -1], [out])
    b.output(out)
    g = import_model(b.tflite(), source="macs")
    counts = [operator_macs(g, op) for op in g.operators]
    assert counts == [4 * 3 * 4 * 27, 4 * 3 * 4 * 9, 0, 5 * 48]
    assert graph_macs(g) == sum(counts)


@pytest.mark.skipif(not SHARED_MODELS.is_dir(), reason="needs ../shared/models")
def test_mlperf_macs_are_pinned() -> None:
    """The MACs every per-MAC figure in the README and the benchmarks divides by: a change in
    counting must show up here. With them, TFLM+CMSIS-NN's counts in ANCHORS.md come to the
    2.2-3.2 instructions per MAC the issues quote."""
    expected = {
        "mlperf_kws_dscnn_int8": 2_656_768,
        "mlperf_vww_mbv1_int8": 7_489_664,
        "mlperf_ic_resnet8_int8": 12_501_632,
        "mlperf_ad_toycar_int8": 264_192,
    }
    for stem, macs in expected.items():
        path = SHARED_MODELS / f"{stem}.tflite"
        assert graph_macs(import_model(path.read_bytes(), source=stem)) == macs, stem
