"""MEAN against TFLM: int8 and int16 bit-exact, float32 close; axes, keep_dims, requantization."""

import numpy as np
import pytest

from mcugen.codegen.lower.mean import mean_multiplier
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from mcugen.model.tflite_import import import_model
from mcugen.pipeline import generate
from support import assert_matches_tflm

IN_Q = {"int8": (0.05, -7), "int16": (0.001, 0), "float32": (None, None)}


def out_shape(shape: tuple[int, ...], axes: list[int], keep_dims: bool) -> tuple[int, ...]:
    resolved = {a % len(shape) for a in axes}
    if keep_dims:
        return tuple(1 if i in resolved else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in resolved)


def mean_model(
    dtype: str,
    shape: tuple[int, ...],
    axes: list[int],
    keep_dims: bool,
    out_q: tuple[float, int] | None = None,
    axis_dtype: type = np.int32,
) -> bytes:
    scale, zp = IN_Q[dtype]
    oscale, ozp = out_q or (scale, zp)
    b = GraphBuilder()
    x = b.input(shape, dtype, scale=scale, zero_point=zp)
    axis = b.const(np.array(axes, dtype=axis_dtype))
    y = b.activation(out_shape(shape, axes, keep_dims), dtype, scale=oscale, zero_point=ozp)
    b.op("MEAN", [x, axis], [y], keep_dims=keep_dims)
    b.output(y)
    return b.tflite()


# (input shape, axes, keep_dims, output quantization or None for the input's)
CASES = [
    ((1, 7, 5, 6), [1, 2], True, None),  # global average pooling, as mcunet / yamnet use it
    ((1, 7, 5, 6), [1, 2], False, None),
    ((2, 7, 5, 6), [2, 1], True, (0.02, 3)),  # reversed axes, different output quantization
    ((1, 6, 9, 4), [-3, -2], False, (0.11, -20)),  # negative axes
    ((2, 5, 3, 4), [1], True, None),
    ((2, 5, 3, 4), [1], False, (0.013, 0)),
    ((3, 4, 5), [-1], False, (0.3, 10)),
    ((3, 4, 5), [0, 2, 0], True, None),  # duplicates are dropped
    ((4, 6), [0, 1], False, (0.01, -128)),  # everything: scalar output
    ((1, 16, 16, 8), [1, 2], True, (0.0001, 0)),  # 256 elements and a large rescale
]


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_mean_int8_bit_exact(case: tuple) -> None:
    assert_matches_tflm(mean_model("int8", *case))


@pytest.mark.parametrize("case", CASES[:4] + CASES[6:9], ids=[f"case{i}" for i in range(7)])
def test_mean_float32_close(case: tuple) -> None:
    assert_matches_tflm(mean_model("float32", *case[:3]))


@pytest.mark.parametrize("case", [CASES[0], CASES[5]], ids=["hw", "axis1"])
def test_mean_int16_bit_exact(case: tuple) -> None:
    shape, axes, keep_dims, out_q = case
    assert_matches_tflm(
        mean_model("int16", shape, axes, keep_dims, out_q=(0.0007, 0) if out_q else None)
    )


def test_multiplier_folds_count_as_tflm() -> None:
    # 1/4 folded exactly: shift drops by two, the significand is unchanged.
    assert mean_multiplier(0.5, 0.5, 4) == (1 << 30, 1 - 2)
    # 7 = 2^2 + 3: the significand is scaled by 4/7 with truncation.
    assert mean_multiplier(0.5, 0.5, 7) == (((1 << 30) << 2) // 7, 1 - 2)


def test_mean_rejects_int64_axis() -> None:
    model = mean_model("int8", (1, 4, 4, 3), [1, 2], True, axis_dtype=np.int64)
    with pytest.raises(UnsupportedError, match="MEAN"):
        generate(import_model(model, source="test model"))
