"""ONNX models in: networks built with onnx.helper and quantized by onnxruntime (QDQ; per-tensor
and per-channel weights; int8 and uint8 activations) run through mcugen and are compared with
onnxruntime, the reference ONNX users have, and with TFLM on the imported graph.

With `--onnx-numerics fixed` mcugen requantises with TFLite's fixed-point multipliers (bit-exact
with TFLM); onnxruntime with float scales rounded half to even. The agreement asserted below is
the one measured for fixed (docs/onnx.md): a layout or quantization mistake in the importer moves
outputs by tens of steps, far past it. test_onnx_numerics.py checks the default, ort: every
element equal to onnxruntime's.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

from mcugen import reference
from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.host_run import run_host
from mcugen.model.load import load_model
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from support.onnx_models import ONE_OPERATOR, agreement, onnx_samples, ort_outputs, quantized
from support.onnx_twin import resnet_twin

SAMPLES = 20
#: (lowest % of output elements equal to onnxruntime's, largest difference in output steps),
#: measured on 20 seeded samples with onnxruntime 1.32 (the same for every quantization variant)
NETWORK_AGREEMENT = {
    "ds_cnn": (65.0, 2),
    "mobilenet": (70.0, 1),
    "resnet": (33.0, 4),
    "inception": (73.0, 1),
    "unet": (98.0, 1),
    "nhwc_input": (85.0, 2),  # the input's Transpose to NCHW costs nothing
}
#: the same, for one operator (after a 1x1 conv for those onnxruntime quantizes only after a
#: quantized producer: its differences are included)
OPERATOR_AGREEMENT = {
    "gemm": (99.5, 1),
    "matmul": (99.0, 1),
    "conv": (99.7, 1),
    "depthwise": (99.7, 1),
    "grouped": (99.7, 1),  # group 2 of 8: SPLIT, two CONV_2D, CONCATENATION
    "add": (99.8, 1),
    "mul": (99.0, 1),
    "concat": (99.8, 1),
    "maxpool": (99.8, 1),
    "avgpool": (84.9, 1),
    "gap": (77.0, 1),
    "softmax": (95.0, 1),
    "sigmoid": (76.0, 1),
    "relu": (99.7, 2),  # a standalone RELU, a conv and an ADD
    "relu6": (99.7, 2),  # RELU6 keeps its input's quantization: a QUANTIZE after it
    "flatten_add": (99.7, 1),  # the flattened map put back in NCHW order (TRANSPOSE)
    "transpose": (99.7, 1),
}
VARIANTS = [(pc, act) for pc in (False, True) for act in ("int8", "uint8")]


@pytest.fixture(scope="module")
def models(workdir: Path) -> dict[tuple[str, bool, str], Path]:
    """Every network in every quantization variant, quantized once for the module."""
    found = {}
    for net in [*NETWORK_AGREEMENT, *(f"one_{k}" for k in ONE_OPERATOR)]:
        for pc, act in VARIANTS:
            if net.startswith("one_") and not pc:
                continue
            found[(net, pc, act)] = quantized(net, workdir, per_channel=pc, activations=act)[0]
    return found


def tflm_agreement(path: Path) -> tuple[float, int, list[list[np.ndarray]]]:
    graph = load_model(path, numerics="fixed")
    ours_in, theirs_in = onnx_samples(graph, SAMPLES, seed=0)
    ours = reference.tflm_outputs(write_model(graph), graph, ours_in)
    found = agreement(graph, ours, ort_outputs(path, theirs_in))
    return found.equal_percent, found.max_abs_lsb, ours


@pytest.mark.parametrize("net", sorted(NETWORK_AGREEMENT))
def test_network_agrees_with_onnxruntime_as_measured(
    net: str, models: dict[tuple[str, bool, str], Path]
) -> None:
    """Every variant within the measured agreement; the uint8 variant gives the same int8 outputs
    as the int8 one (zero points shifted by 128: the same real values)."""
    lowest, largest = NETWORK_AGREEMENT[net]
    for pc in (False, True):
        results = {act: tflm_agreement(models[(net, pc, act)]) for act in ("int8", "uint8")}
        for act, (equal, worst, _) in results.items():
            assert equal >= lowest and worst <= largest, (net, pc, act, equal, worst)
        for a, b in zip(results["int8"][2], results["uint8"][2], strict=True):
            np.testing.assert_array_equal(a[0], b[0])


#: the same for the QOperator form (QLinearConv, QGemm, QLinearAdd, ...; rewritten to QDQ at
#: import): onnxruntime runs its own kernels for it, hence other figures
QOPERATOR_AGREEMENT = {
    "ds_cnn": (76.0, 1),
    "mobilenet": (72.0, 1),
    "resnet": (35.0, 4),
    "inception": (97.0, 1),
    "unet": (98.0, 1),
}


@pytest.mark.parametrize("net", sorted(QOPERATOR_AGREEMENT))
def test_qoperator_form_agrees_with_onnxruntime_as_measured(net: str, workdir: Path) -> None:
    lowest, largest = QOPERATOR_AGREEMENT[net]
    for pc, act in VARIANTS:
        path, _ = quantized(net, workdir, per_channel=pc, activations=act, form="qoperator")
        equal, worst, _ = tflm_agreement(path)
        assert equal >= lowest and worst <= largest, (net, pc, act, equal, worst)


@pytest.mark.parametrize("kind", ONE_OPERATOR)
def test_operator_agrees_with_onnxruntime_as_measured(
    kind: str, models: dict[tuple[str, bool, str], Path]
) -> None:
    lowest, largest = OPERATOR_AGREEMENT[kind]
    for act in ("int8", "uint8"):
        equal, worst, _ = tflm_agreement(models[(f"one_{kind}", True, act)])
        assert equal >= lowest and worst <= largest, (kind, act, equal, worst)


@pytest.mark.parametrize(
    "net, pc, act",
    [
        ("ds_cnn", True, "int8"),
        ("mobilenet", False, "uint8"),
        ("resnet", True, "uint8"),
        ("inception", False, "int8"),
        ("unet", True, "uint8"),
        ("one_grouped", True, "int8"),
    ],
)
def test_host_build_matches_tflm_on_the_imported_graph(
    net: str, pc: bool, act: str, models: dict[tuple[str, bool, str], Path]
) -> None:
    """mcugen's C runtime on the host gives TFLM's outputs, bit for bit, on the ONNX import
    with TFLite's numerics."""
    graph = load_model(models[(net, pc, act)], numerics="fixed")
    samples, _ = onnx_samples(graph, 4, seed=1)
    gen = generate(graph)
    with tempfile.TemporaryDirectory(prefix="mcugen-onnx-") as tmp:
        result = build(gen, resolve_target(load_board("host"), emulate=False), Path(tmp) / "p")
        ours = run_host(result.executable, gen.graph, samples).outputs
    ref = reference.tflm_outputs(write_model(graph), graph, samples)
    for o, r in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(o[0], r[0].reshape(o[0].shape))


@pytest.mark.parametrize("pc, act", VARIANTS)
def test_tflite_twin_plans_the_same_arena_and_gives_the_same_outputs(
    pc: bool, act: str, models: dict[tuple[str, bool, str], Path]
) -> None:
    """The ResNet written as TFLite from the same quantized weights (tests/support/onnx_twin.py,
    without the importer): its arena within 5 % of the ONNX import's with either numerics, at
    default options and with `--kernels memory` (1,392 and 1,136 B: the lean rung on its 3x3
    layers costs more than auto's 10 %), and equal outputs on TFLM (which checks the importer's
    weight re-layout and its HWC-ordered Flatten)."""
    path = models[("resnet", pc, act)]
    twin_bytes = resnet_twin(path)
    twin, imported = import_model(twin_bytes, source="twin"), load_model(path, numerics="fixed")
    ort = load_model(path, numerics="ort")
    for options in (PlanOptions(), PlanOptions(kernels="memory")):
        arenas = [generate(g, options=options).plan.arena_bytes for g in (twin, imported, ort)]
        assert max(arenas) - min(arenas) <= 0.05 * arenas[0], (options.kernels, arenas)
    samples, _ = onnx_samples(imported, 6, seed=2)
    ours = reference.tflm_outputs(write_model(imported), imported, samples)
    theirs = reference.tflm_outputs(twin_bytes, twin, samples)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(o[0], t[0])
