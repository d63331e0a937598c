"""`--onnx-numerics ort` (mcugen/model/numerics.py): the lowerings that replace an operator's
registered one when the graph is an ONNX import with onnxruntime's numerics. Each computes what
onnxruntime's kernel for the fused QDQ group computes (docs/onnx.md says how each was measured
against it), with its own kernel (runtime_c/kernels/reference/ort_*.c) whose output stage is
float32; any other element type falls back to the registered lowering. The TFLite variants take
only the registered kernels' functions; ort_opt.py's take CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED's ort functions (the int8 kernels' sums, the same output stage) and
ort_binary_opt.py's ADD and MUL's (the same element values without a broadcast offset per
element), the rest always run as they are."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mcugen.codegen.lower import Array, Lowered, Params
from mcugen.codegen.lower._common import qparams, unsupported
from mcugen.model.ir import Graph, Operator, Tensor
from mcugen.model.numerics import model_domain, uses_ort

OrtLowering = Callable[[Graph, Operator], Lowered]
ORT_LOWERINGS: dict[str, OrtLowering] = {}


def ort_lowering(*opcodes: str) -> Callable[[OrtLowering], OrtLowering]:
    def wrap(fn: OrtLowering) -> OrtLowering:
        for code in opcodes:
            ORT_LOWERINGS[code] = fn
        return fn

    return wrap


def ort_lowering_for(graph: Graph, op: Operator) -> OrtLowering | None:
    """The onnxruntime-numerics lowering of `op`, when its graph asks for them and it has one."""
    if op.custom_code is not None or not uses_ort(graph):
        return None
    return ORT_LOWERINGS.get(op.opcode)


def f32(value: float | np.floating | np.ndarray) -> np.float32:
    return np.float32(value)


def scale_of(op: Operator, t: Tensor) -> np.float32:
    q = qparams(op, t)
    if q.per_channel:
        raise unsupported(op, f"tensor {t.index} is quantized per channel")
    return f32(q.scale)


def zero_of(op: Operator, t: Tensor) -> int:
    return qparams(op, t).zero_point


def requant_member(
    op: Operator, x: Tensor, y: Tensor, scales: np.ndarray, act: tuple[int, int]
) -> Params:
    """mcu_ort_requant_t (mcu/ort_requant.h) as the member `rq`."""
    values = tuple(float(s) for s in np.asarray(scales, np.float32).reshape(-1))
    if not all(np.isfinite(values)) or min(values) <= 0:
        raise unsupported(op, "requantisation scales must be finite and positive")
    return (
        ("rq.input_offset", -zero_of(op, x)),
        ("rq.output_offset", zero_of(op, y)),
        ("rq.act_min", act[0]),
        ("rq.act_max", act[1]),
        ("rq.num_channels", len(values)),
        ("rq.scales", Array("float", values)),
    )


def quantize_table(
    graph: Graph, op: Operator, x: Tensor, y: Tensor, fn: Callable[[np.ndarray], np.ndarray]
) -> Array:
    """The 256 int8 results of DequantizeLinear, `fn` (float32 to float32) and QuantizeLinear,
    for the stored inputs -128..127, computed in float32 on the uint8 values onnxruntime works on
    (model_domain), as it does (QlinearBuildLookupTable: x_scale * (x - x_zero), then
    x / y_scale rounded half to even, plus y_zero, saturated)."""
    domain = model_domain(graph)
    q = np.arange(-128, 128, dtype=np.int64) + domain
    real = scale_of(op, x) * (q - (zero_of(op, x) + domain)).astype(np.float32)
    out = np.asarray(fn(real.astype(np.float32)), np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        steps = np.rint(out / scale_of(op, y))
    lo, hi = -128 + domain, 127 + domain
    stored = np.clip(steps, lo - zero_of(op, y) - domain, hi - zero_of(op, y) - domain)
    values = stored.astype(np.int64) + zero_of(op, y)
    return Array("int8_t", tuple(int(v) for v in values))
