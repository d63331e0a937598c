"""ONNX models on the NUCLEO-F767ZI's QEMU twin: bit-exact with TFLM on the imported graph, and
the ResNet imported from ONNX runs within 5 % of the instructions of the same network written as
TFLite from the same weights (tests/support/onnx_twin.py)."""

from __future__ import annotations

from pathlib import Path

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.model.load import load_model
from mcugen.model.tflite_import import import_model
from mcugen.model.tflite_write import write_model
from mcugen.pipeline import generate
from support import NEEDS_TWIN, run_twin_against_tflm
from support.onnx_models import quantized
from support.onnx_twin import resnet_twin

pytestmark = NEEDS_TWIN


def test_onnx_and_tflite_twins_run_the_same_instructions(workdir: Path) -> None:
    path, _ = quantized("resnet", workdir, per_channel=True, activations="uint8")
    target = resolve_target(load_board("nucleo-f767"), emulate=True)
    twin_bytes = resnet_twin(path)
    counts = {}
    for name, graph, model in (
        ("onnx", load_model(path), None),
        ("tflite", import_model(twin_bytes, source="twin"), twin_bytes),
    ):
        gen = generate(graph)
        result = build(gen, target, workdir / name)
        run = run_twin_against_tflm(
            target, result.executable, model or write_model(graph), gen.graph, [0, 1]
        )
        counts[name] = max(run.instructions(t) for t in run.ticks_per_inference)
    assert abs(counts["onnx"] - counts["tflite"]) <= 0.05 * counts["tflite"], counts
