"""Generated models built for the host under AddressSanitizer and UBSan. Found by
benchmarks/fuzz.py: a bias near the int32 limits overflowed the accumulator (`acc += bias`, also
undefined behaviour in TFLM's reference kernels) of FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D and
TRANSPOSE_CONV. The lowerings bound every channel's accumulator at build time
(`_common.check_accumulator`): a bias that can overflow is one clear error, and the largest
accepted one runs with no sanitizer report and gives TFLM's outputs."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcugen.boards import Target, load_board, resolve_target
from mcugen.errors import UnsupportedError
from mcugen.firmware.compile import build
from mcugen.link.host_run import random_inputs, run_host
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import SANITIZED_FLAGS, tflm_outputs

INT32_LIMITS = (2**31 - 1, -(2**31))


def sanitized_host() -> Target:
    """The host board with the sanitizers (the Makefile takes its flags from the port board)."""
    target = resolve_target(load_board("host"), emulate=False)
    board = target.port_board
    flags = tuple(f for f in SANITIZED_FLAGS if f.startswith(("-fsanitize", "-fno-sanitize", "-g")))
    sanitized = replace(
        board,
        cflags=(*board.cflags, *flags),
        ldflags=(*board.ldflags, "-fsanitize=address,undefined"),
    )
    return replace(target, board=sanitized, port_board=sanitized)


def biased_model(opcode: str, bias_value: int) -> bytes:
    """One int8 operator of `opcode` whose int32 bias is `bias_value` in every channel."""
    rng = np.random.default_rng(5)
    b = GraphBuilder()
    q: dict[str, Any] = {"scale": 0.05, "zero_point": -3}
    bias = b.const(np.full(4, bias_value, np.int32), scale=0.0005)
    if opcode == "FULLY_CONNECTED":
        x = b.input((2, 8), "int8", **q)
        y = b.activation((2, 4), "int8", scale=0.3, zero_point=1)
        w = b.const(rng.integers(-127, 128, (4, 8), dtype=np.int8), scale=0.01)
        b.op(opcode, [x, w, bias], [y])
    elif opcode == "TRANSPOSE_CONV":
        x = b.input((1, 3, 3, 2), "int8", **q)
        y = b.activation((1, 6, 6, 4), "int8", scale=0.3, zero_point=1)
        w = b.const(rng.integers(-127, 128, (4, 3, 3, 2), dtype=np.int8), scale=0.01)
        shape = b.const(np.array([1, 6, 6, 4], np.int32))
        b.op(opcode, [shape, w, x, bias], [y], padding=0, stride_h=2, stride_w=2)
    else:
        depthwise = opcode == "DEPTHWISE_CONV_2D"
        x = b.input((1, 4, 4, 4 if depthwise else 2), "int8", **q)
        y = b.activation((1, 4, 4, 4), "int8", scale=0.3, zero_point=1)
        w_shape = (1, 3, 3, 4) if depthwise else (4, 3, 3, 2)
        w = b.const(rng.integers(-127, 128, w_shape, dtype=np.int8), scale=0.01)
        options = {"depth_multiplier": 1} if depthwise else {}
        b.op(opcode, [x, w, bias], [y], padding=0, stride_h=1, stride_w=1, **options)
    b.output(y)
    return b.tflite()


OPCODES = ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV")
#: Below every test model's reach: at most 36 taps x 127 x 131 (weights x inputs) under 2^20.
LARGEST_SAFE_BIAS = 2**31 - 1 - 2**20 - 128


@pytest.mark.parametrize("bias_value", INT32_LIMITS)
@pytest.mark.parametrize("opcode", OPCODES)
def test_a_bias_that_can_overflow_the_accumulator_is_rejected(opcode: str, bias_value: int) -> None:
    with pytest.raises(UnsupportedError, match=f"{opcode}.*beyond int32"):
        generate(import_model(biased_model(opcode, bias_value)))


@pytest.mark.parametrize("sign", (1, -1))
@pytest.mark.parametrize("opcode", OPCODES)
def test_the_largest_accepted_bias_runs_without_undefined_behaviour(opcode: str, sign: int) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    model = biased_model(opcode, sign * LARGEST_SAFE_BIAS)
    gen = generate(import_model(model))
    samples = [random_inputs(gen.graph, k) for k in range(3)]
    with tempfile.TemporaryDirectory(prefix="mcugen-test-") as tmp:
        exe = build(gen, sanitized_host(), Path(tmp) / "project").executable
        ours = run_host(exe, gen.graph, samples).outputs  # a sanitizer report fails the run
    for mine, ref in zip(ours, tflm_outputs(model, samples), strict=True):
        np.testing.assert_array_equal(mine[0], ref[0].reshape(mine[0].shape))
