"""ONNX models on the NUCLEO-F767ZI's QEMU twin: with `--onnx-numerics ort` (the default) every
output equals onnxruntime's, the Cortex-M7's FPU computing onnxruntime's float32 output stages;
with `fixed`, bit-exact with TFLM on the imported graph, and the ResNet imported from ONNX runs
within 5 % of the instructions of the same network written as TFLite from the same weights
(tests/support/onnx_twin.py). With the reference kernels ort costs no more instructions than
fixed; with the optimised ones (mcugen/codegen/lower/ort_opt.py: the int8 kernels' sums with
onnxruntime's output stage) its outputs stay onnxruntime's, in a fraction of the reference
kernels' instructions (benchmarks/ort_kernels.py prints the table)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.device_run import open_device, run_samples
from mcugen.model.load import load_model
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from mcugen.reference import onnxruntime_outputs
from support import NEEDS_TWIN, run_twin_against_tflm
from support.onnx_models import onnx_samples, quantized
from support.onnx_twin import resnet_twin

pytestmark = NEEDS_TWIN


def test_onnx_and_tflite_twins_run_the_same_instructions(workdir: Path) -> None:
    path, _ = quantized("resnet", workdir, per_channel=True, activations="uint8")
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    twin_bytes = resnet_twin(path)
    counts = {}
    for name, graph, model in (
        ("onnx", load_model(path, numerics="fixed"), None),
        ("tflite", import_model(twin_bytes, source="twin"), twin_bytes),
    ):
        gen = generate(graph)
        result = build(gen, target, workdir / name)
        run = run_twin_against_tflm(
            target, result.executable, model or write_model(graph), gen.graph, [0, 1]
        )
        counts[name] = max(run.instructions(t) for t in run.ticks_per_inference)
    assert abs(counts["onnx"] - counts["tflite"]) <= 0.05 * counts["tflite"], counts


@pytest.mark.parametrize(
    "net, pc, act, form",
    [
        ("resnet", True, "uint8", "qdq"),
        ("resnet", False, "uint8", "qdq"),
        ("resnet", False, "int8", "qoperator"),
        ("resnet", True, "int8", "qoperator"),
        ("ds_cnn", True, "int8", "qdq"),
    ],
)
def test_ort_numerics_equal_onnxruntime_on_the_twin(
    net: str, pc: bool, act: str, form: str, workdir: Path
) -> None:
    """Every output element equals onnxruntime's on seeded inputs; ort costs no more
    instructions than fixed on the reference kernels (measured 10-13 % fewer). The ResNets are
    quantized as `mcugen quantize` does (uint8 QDQ, int8 QOperator): onnxruntime fuses them
    throughout (the plain int8 QDQ one it runs partly in float: tests/unit/test_onnx_fusion.py)."""
    path, _ = quantized(net, workdir, per_channel=pc, activations=act, form=form)
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    counts = {}
    for numerics in ("ort", "fixed"):
        graph = load_model(path, numerics=numerics)
        samples, _ = onnx_samples(graph, 50, seed=3)
        options = PlanOptions(kernels="reference", core="cortex-m7", onnx_numerics=numerics)
        gen = generate(graph, options=options)
        result = build(gen, target, workdir / f"{net}-{act}-{form}-{numerics}")
        with open_device(target, result.executable, None) as link:
            run = run_samples(link, gen.graph, samples, emulated=True)
        counts[numerics] = max(run.instructions(t) for t in run.ticks_per_inference)
        if numerics == "ort":
            ref = onnxruntime_outputs(path, graph, samples)
            for ours, theirs in zip(run.outputs, ref, strict=True):
                np.testing.assert_array_equal(ours[0], theirs[0].reshape(ours[0].shape))
    assert counts["ort"] <= counts["fixed"], counts


@pytest.mark.parametrize(
    "net, pc, act",
    [("resnet", True, "uint8"), ("ds_cnn", False, "int8"), ("mobilenet", True, "int8")],
)
def test_ort_optimised_kernels_equal_onnxruntime_on_the_twin(
    net: str, pc: bool, act: str, workdir: Path
) -> None:
    """`--kernels opt` with ort numerics: the ort variants run every convolution, gemm, Add
    and Mul (the ResNet's stem conv_2d_stem_s8_ort), every output element equals
    onnxruntime's, and the network takes under a third of the ort reference kernels'
    instructions (measured 0.18-0.21)."""
    path, _ = quantized(net, workdir, per_channel=pc, activations=act)
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    graph = load_model(path, numerics="ort")
    samples, _ = onnx_samples(graph, 4, seed=5)
    ref = onnxruntime_outputs(path, graph, samples)
    counts = {}
    for kernels in ("reference", "opt"):
        options = PlanOptions(kernels=kernels, core="cortex-m7", onnx_numerics="ort")
        gen = generate(graph, options=options)
        if kernels == "opt":
            taken = [o.index for o in gen.graph.operators if o.opcode in _ORT_OPT]
            assert taken
            assert all(gen.lowered[i].variant.endswith("_ort") for i in taken)
            if net == "resnet":
                names = {gen.lowered[i].variant for i in taken}
                assert {"add_s8_ort", "mul_s8_ort", "conv_2d_stem_s8_ort"} <= names, names
        result = build(gen, target, workdir / f"{net}-ort-{kernels}")
        with open_device(target, result.executable, None) as link:
            run = run_samples(link, gen.graph, samples, emulated=True)
        counts[kernels] = max(run.instructions(t) for t in run.ticks_per_inference)
        for ours, theirs in zip(run.outputs, ref, strict=True):
            np.testing.assert_array_equal(ours[0], theirs[0].reshape(ours[0].shape))
    assert counts["opt"] * 3 < counts["reference"], counts


_ORT_OPT = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL")
