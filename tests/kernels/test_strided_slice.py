"""STRIDED_SLICE against TFLM: masks, shrink axes, negative indices and strides, ranks 1 to 4.

Besides the hand-picked cases, a seeded random sweep checks two things per configuration: whenever
TFLM's Prepare rejects it, the lowering rejects it too; and every accepted configuration gives
TFLM's exact output (the accepted ones run as one model with many outputs, to build once).
"""

from typing import Any

import numpy as np
import pytest

from mcugen.codegen.lower import lower
from mcugen.codegen.lower.strided_slice import SliceSpec, prepare_extent
from mcugen.errors import UnsupportedError
from mcugen.model.builder import GraphBuilder
from support import assert_matches_tflm

Q: dict[str, dict[str, Any]] = {
    "int8": {"scale": 0.03, "zero_point": 7},
    "int16": {"scale": 0.001, "zero_point": 0},
}


def expected_shape(shape: tuple, begin: list, end: list, strides: list, masks: dict) -> tuple:
    spec = SliceSpec(
        tuple(begin),
        tuple(end),
        tuple(strides),
        masks.get("begin_mask", 0),
        masks.get("end_mask", 0),
        masks.get("shrink_axis_mask", 0),
    )
    return tuple(
        prepare_extent(spec, n, a)
        for a, n in enumerate(shape)
        if not spec.masked(spec.shrink_mask, a)
    )


def add_slice(b: GraphBuilder, x: int, shape: tuple, dtype: str, case: tuple) -> int:
    begin, end, strides, masks = case
    y = b.activation(expected_shape(shape, begin, end, strides, masks), dtype, **Q.get(dtype, {}))
    consts = [b.const(np.array(v, np.int32)) for v in (begin, end, strides)]
    b.op("STRIDED_SLICE", [x, *consts], [y], **masks)
    return y


def slice_model(shape: tuple, dtype: str, cases: list[tuple]) -> bytes:
    b = GraphBuilder()
    x = b.input(shape, dtype, **Q.get(dtype, {}))
    b.output(*[add_slice(b, x, shape, dtype, case) for case in cases])
    return b.tflite()


CASES = [  # (input shape, begin, end, strides, masks)
    ((257,), [5], [241], [1], {}),  # the audio preprocessor's slice
    ((1, 6, 7, 3), [0, 1, 0, 0], [1, 5, 7, 3], [1, 1, 2, 1], {}),
    ((1, 6, 7, 3), [0, 0, 0, 1], [0, 0, 0, 2], [1, 1, 1, 1], {"begin_mask": 7, "end_mask": 7}),
    ((1, 6, 7, 3), [0, -1, 0, 0], [1, 0, 7, 3], [1, 1, 1, 1], {"shrink_axis_mask": 3}),
    ((4, 9), [-1, -2], [-5, -10], [-1, -3], {}),
    ((4, 9), [0, 0], [0, 0], [-1, -2], {"begin_mask": 3, "end_mask": 3}),
    ((5, 4, 3), [1, 0, 2], [4, 3, 0], [2, 1, -1], {"end_mask": 4}),
    ((5, 4, 3), [-100, 1, -100], [100, 100, 100], [1, 3, 2], {}),
    ((3, 8), [1, 2], [2, 7], [1, 2], {"shrink_axis_mask": 1}),
    ((6,), [4], [1], [1], {}),  # empty along the axis: a zero-sized output
]


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
@pytest.mark.parametrize("case", [c for c in CASES if 0 not in expected_shape(*c)])
def test_strided_slice(dtype: str, case: tuple) -> None:
    shape, *spec = case
    assert_matches_tflm(slice_model(shape, dtype, [tuple(spec)]), samples=2)


def test_strided_slice_int16_and_bool_in_one_model() -> None:
    for dtype in ("int16", "bool"):
        shape, *spec = CASES[4]
        assert_matches_tflm(slice_model(shape, dtype, [tuple(spec)]), samples=2)


def random_case(rng: np.random.Generator, shape: tuple) -> tuple:
    rank = len(shape)
    begin = [int(rng.integers(-n - 2, n + 3)) for n in shape]
    end = [int(rng.integers(-n - 2, n + 3)) for n in shape]
    strides = [int(v) for v in rng.choice([-3, -2, -1, 1, 1, 2, 3], rank)]
    masks = {
        name: int(rng.integers(0, 1 << rank)) if rng.random() < 0.5 else 0
        for name in ("begin_mask", "end_mask", "shrink_axis_mask")
    }
    return begin, end, strides, masks


def tflm_accepts(model: bytes) -> bool:
    from tflite_micro import runtime

    try:
        runtime.Interpreter.from_bytes(model)
    except RuntimeError:
        return False
    return True


def lowering_accepts(model_builder: GraphBuilder) -> bool:
    g = model_builder.graph()
    try:
        lower(g, g.operators[0])
    except UnsupportedError:
        return False
    return True


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_strided_slice_random_sweep(rank: int) -> None:
    rng = np.random.default_rng(100 + rank)
    shape = tuple(int(v) for v in rng.integers(2, 7, rank))
    accepted = []
    for _ in range(150):
        case = random_case(rng, shape)
        if 0 in expected_shape(shape, *case):
            continue  # TFLM treats zero-sized tensors as dynamic
        b = GraphBuilder()
        b.output(add_slice(b, b.input(shape, "int8", **Q["int8"]), shape, "int8", case))
        ours = lowering_accepts(b)
        assert ours <= tflm_accepts(b.tflite()), f"lowering accepts what TFLM rejects: {case}"
        if ours:
            accepted.append(case)
    assert len(accepted) >= 10
    assert_matches_tflm(slice_model(shape, "int8", accepted), samples=2)


def _rejects(shape: tuple, case: tuple, pattern: str, out_shape: tuple | None = None) -> None:
    begin, end, strides, masks = case
    b = GraphBuilder()
    x = b.input(shape, "float32")
    y = b.activation(out_shape or expected_shape(shape, begin, end, strides, masks), "float32")
    b.op(
        "STRIDED_SLICE",
        [x, *(b.const(np.array(v, np.int32)) for v in (begin, end, strides))],
        [y],
        **masks,
    )
    g = b.graph()
    with pytest.raises(UnsupportedError, match=r"operator 0 \(STRIDED_SLICE\).*" + pattern):
        lower(g, g.operators[0])


def test_strided_slice_rejections() -> None:
    _rejects((4, 4), ([0, 0], [2, 2], [1, 1], {"ellipsis_mask": 1}), "ellipsis_mask", (2, 2))
    _rejects((4, 4), ([0, 0], [2, 2], [1, 1], {"new_axis_mask": 2}), "new_axis_mask", (2, 2))
    _rejects((4, 4), ([0, 0], [2, 2], [0, 1], {}), "non-zero", (2, 2))
    _rejects((1, 2, 2, 2, 2), ([0] * 5, [1] * 5, [1] * 5, {}), "rank 5")
    _rejects((4, 4), ([0, 0], [2, 2], [1, 1], {}), "sliced shape", (2, 3))
    # A shrunk axis walked backwards: TFLM's Eval writes nothing for it.
    _rejects((4, 4), ([1, 0], [2, 4], [-1, 1], {"shrink_axis_mask": 1}), "would write")
