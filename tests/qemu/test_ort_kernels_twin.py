"""`--onnx-numerics ort`'s optimised ADD, MUL and first-layer convolution
(mcugen/codegen/lower/ort_binary_opt.py, ort_opt.py's conv_2d_stem_s8_ort) on the Cortex-M7
twin (nucleo-f767: VRINTR rounds, the stem's sums in assembly) and the Cortex-M4 one
(mps2-an386: FPv4 has no VRINTR, the 1.5 * 2^23 shifter rounds): their outputs equal the ort
reference kernels' byte for byte on the same twin, over every pair of int8 operands with
power-of-two scales (thousands of rounding ties) and the stem's assembly paths (three channels,
one channel) and its C path (a 3x5 filter, 5 channels). The host runs the C paths
(tests/kernels/test_opt_ort_binary.py, test_opt_ort.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mcugen.boards import load_board, resolve_target
from mcugen.firmware.compile import build
from mcugen.link.device_run import open_device, run_samples
from mcugen.link.host_run import random_inputs
from mcugen.model.numerics import NUMERICS_METADATA
from mcugen.model.tflite_import import import_model
from mcugen.options import PlanOptions
from mcugen.pipeline import generate
from support import NEEDS_TWIN
from support.chains import Chain
from support.op_models import RELU, Operand, binary_model

pytestmark = NEEDS_TWIN


def pairs(opcode: str) -> tuple[bytes, list[list[np.ndarray]]]:
    """Every pair of int8 operands; ratios 0.5 and 0.25 (ADD) or 0.0625 (MUL) put values on
    ties."""
    model = binary_model(
        opcode,
        "int8",
        Operand((256, 256), (0.25, -3)),
        Operand((256, 256), (0.125, 10)),
        (0.5, -20),
        fused_activation_function=RELU,
    )
    grid = np.arange(-128, 128, dtype=np.int8)
    return model, [[np.repeat(grid, 256).reshape(256, 256), np.tile(grid, 256).reshape(256, 256)]]


def channel_gain() -> bytes:
    """A MUL by a constant channel vector, as the ResNet's (the operand read cyclically)."""
    return binary_model(
        "MUL",
        "int8",
        Operand((1, 9, 7, 8), (0.05, 4)),
        Operand((8,), (0.01, 0), const=True),
        (0.03, -7),
    )


def stems() -> dict[str, bytes]:
    three = Chain((15, 21, 3), seed=1, zero_point=9)
    three.conv(8, (3, 3), (2, 2), act=0)
    one = Chain((17, 22, 1), seed=2, zero_point=9)
    one.conv(8, (3, 3), (1, 1), act=1)
    clamped = Chain((9, 13, 3), seed=3, zero_point=9)
    clamped.conv(5, (3, 5), (1, 2), act=3)
    return {"three": three.tflite(), "one": one.tflite(), "clamped": clamped.tflite()}


def outputs(
    model: bytes, kernels: str, board: str, samples: list[list[np.ndarray]] | None, work: Path
) -> tuple[set[str], list[np.ndarray]]:
    """The variants chosen and the outputs on `board`'s twin with ort numerics and `kernels`."""
    graph = import_model(model, source="test model")
    graph = replace(graph, metadata={**graph.metadata, NUMERICS_METADATA: b"ort"})
    target = resolve_target(load_board(board), emulate=True)
    options = PlanOptions(kernels=kernels, core=target.port_board.core, onnx_numerics="ort")
    gen = generate(graph, options=options)
    inputs = samples or [random_inputs(gen.graph, seed) for seed in range(3)]
    result = build(gen, target, work)
    with open_device(target, result.executable, None) as link:
        run = run_samples(link, gen.graph, inputs, emulated=True)
    return {low.variant for low in gen.lowered.values()}, [o[0] for o in run.outputs]


@pytest.mark.parametrize("board", ["nucleo-f767", "mps2-an386"])
def test_ort_kernels_equal_the_reference_on_twins(board: str, workdir: Path) -> None:
    cases: dict[str, tuple[bytes, list[list[np.ndarray]] | None, str]] = {
        "add_pairs": (*pairs("ADD"), "add_s8_ort"),
        "mul_pairs": (*pairs("MUL"), "mul_s8_ort"),
        "mul_gain": (channel_gain(), None, "mul_s8_ort"),
    }
    cases |= {f"stem_{k}": (m, None, "conv_2d_stem_s8_ort") for k, m in stems().items()}
    for name, (model, samples, variant) in cases.items():
        chosen, ours = outputs(model, "opt", board, samples, workdir / f"{name}-{board}-opt")
        assert variant in chosen, (name, chosen)
        _, theirs = outputs(model, "reference", board, samples, workdir / f"{name}-{board}-ref")
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b, f"{name} on {board}")
