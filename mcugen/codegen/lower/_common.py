"""Helpers shared by the lowerings: typed tensor access and uniform error messages."""

from __future__ import annotations

import functools

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Array
from mcugen.errors import ModelError, UnsupportedError
from mcugen.model.ir import DTYPES, Graph, Operator, Quantization, Tensor
from mcugen.model.traits import ELEMENTWISE, POINTWISE, OpTraits

INT32_MAX = 2**31 - 1
#: Every element type: operators that only move bytes (RESHAPE, SHAPE's input, patch tiles).
ANY_TYPE = tuple(DTYPES)

# Sharing traits of kernels that many lowerings register (model/traits.py says what each promises;
# each kernel listed with one was checked for that property in runtime_c/kernels/reference/).
#: RESHAPE, SQUEEZE, EXPAND_DIMS: a byte copy skipped when input and output coincide.
VIEW = OpTraits(view=True)
#: Unary element-wise kernels: read element i, then write element i.
OVERWRITES_INPUT = OpTraits(overwrites=(0,))
#: ... of one input and no parameter that depends on the shape: tileable too (patch stages).
POINTWISE_UNARY = OpTraits(overwrites=(0,), window=POINTWISE)
#: Binary element-wise kernels: a non-broadcast input is indexed by the output's flat index.
OVERWRITES_EITHER = OpTraits(overwrites=(0, 1))
#: ... tileable too (patch stages) on the shapes `elementwise_traits` accepts.
OVERWRITES_EITHER_TILEABLE = OpTraits(overwrites=(0, 1), window=ELEMENTWISE)
#: The member of CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV and FULLY_CONNECTED parameters that
#: holds their offsets, activation range and multipliers (mcu/requant_params.h).
REQUANT = "rq"
#: The member of CONV_2D and DEPTHWISE_CONV_2D parameters (their gradients' and optimised
#: variants' too) that holds strides, dilations and padding (mcu_window_params_t, mcu/window.h).
WINDOW_PARAMS = "win"


def elementwise_traits(graph: Graph, op: Operator) -> OpTraits:
    """ADD and MUL: `OVERWRITES_EITHER`, and tileable (`Window.all_inputs`) when the output is
    NHWC of batch 1, every non-constant input has its shape and every constant input varies
    along channels only, so the kernel run on a tile of each input computes that tile of the
    output element for element (the broadcast of a constant is the same on every tile). Never
    raises."""
    if len(op.outputs) != 1 or op.outputs[0] < 0 or not op.inputs or min(op.inputs) < 0:
        return OVERWRITES_EITHER
    y = graph.tensors[op.outputs[0]]
    xs = [graph.tensors[t] for t in op.inputs]
    if len(y.shape) != 4 or y.shape[0] != 1 or all(x.is_constant for x in xs):
        return OVERWRITES_EITHER
    for x in xs:
        spatial = tuple(x.shape[:-1]) if x.is_constant else ()
        if (x.is_constant and (len(x.shape) > 4 or any(d != 1 for d in spatial))) or (
            not x.is_constant and tuple(x.shape) != tuple(y.shape)
        ):
            return OVERWRITES_EITHER
    return OVERWRITES_EITHER_TILEABLE


#: PAD: writes from the last byte to the first, so its input may start its output's buffer.
GROWS_OVER_INPUT = OpTraits(grows_over_input=True)


def unsupported(op: Operator, what: str) -> UnsupportedError:
    return UnsupportedError(
        f"{op.label}: {what}", hint="`mcugen ops` lists the operators mcugen runs"
    )


def invalid(op: Operator, what: str) -> ModelError:
    """A rule every valid model keeps (TFLite checks it in Prepare): the model is inconsistent."""
    return ModelError(
        f"{op.label}: {what}", hint="the model is inconsistent; re-export it from the converter"
    )


def check_operands(op: Operator, inputs: tuple[int, ...], outputs: tuple[int, ...] = (1,)) -> None:
    """The operator has one of the allowed numbers of inputs and of outputs."""
    if len(op.inputs) not in inputs or len(op.outputs) not in outputs:
        raise invalid(
            op,
            f"has {len(op.inputs)} inputs and {len(op.outputs)} outputs; its kernel takes "
            f"{' or '.join(map(str, inputs))} and {' or '.join(map(str, outputs))}",
        )


def same_type_operands(
    graph: Graph, op: Operator, inputs: int, types: tuple[str, ...]
) -> tuple[Tensor, Tensor]:
    """Input 0 and the output of an operator of `inputs` inputs that moves data: one of `types`,
    the output's the input's."""
    if len(op.inputs) != inputs or len(op.outputs) != 1:
        raise unsupported(op, f"expects {inputs} inputs and 1 output")
    x, y = req(graph, op, 0), out(graph, op)
    check_dtype(op, x, *types)
    check_dtype(op, y, x.dtype)
    return x, y


def check_parts(
    op: Operator, parts: list[Tensor], whole: Tensor, axis: int, part: str, dtype: str | None = None
) -> None:
    """The `part` tensors ("input" or "output") of a concatenation or split: each of `dtype`
    (when given) and of `whole`'s shape but along `axis`, where their sizes add up to its."""
    other = "output" if part == "input" else "input"
    for t in parts:
        if dtype is not None:
            check_dtype(op, t, dtype)
        same = len(t.shape) == len(whole.shape) and all(
            a == b for i, (a, b) in enumerate(zip(t.shape, whole.shape, strict=True)) if i != axis
        )
        if not same:
            raise unsupported(
                op, f"{part} shape {t.shape} does not fit {other} shape {whole.shape}"
            )
    if sum(t.shape[axis] for t in parts) != whole.shape[axis]:
        raise unsupported(
            op, f"{part} sizes along axis {axis} do not add up to {whole.shape[axis]}"
        )


def inp(graph: Graph, op: Operator, i: int) -> Tensor | None:
    """Input `i`, or None when it is omitted (-1) or absent."""
    if i >= len(op.inputs) or op.inputs[i] < 0:
        return None
    return graph.tensors[op.inputs[i]]


def req(graph: Graph, op: Operator, i: int) -> Tensor:
    t = inp(graph, op, i)
    if t is None:
        raise unsupported(op, f"input {i} is missing")
    return t


def out(graph: Graph, op: Operator, i: int = 0) -> Tensor:
    if i >= len(op.outputs):
        raise unsupported(op, f"output {i} is missing")
    return graph.tensors[op.outputs[i]]


def qparams(op: Operator, t: Tensor) -> Quantization:
    """The tensor's quantization, required for integer kernels."""
    if t.quant is None:
        raise unsupported(op, f"tensor {t.index} ({t.name}) of type {t.dtype} has no quantization")
    return t.quant


def check_dtype(op: Operator, t: Tensor, *allowed: str) -> str:
    if t.dtype not in allowed:
        raise unsupported(
            op, f"tensor {t.index} has type {t.dtype}; supported: {', '.join(allowed)}"
        )
    return t.dtype


def fused_activation(op: Operator) -> int:
    return int(op.options.get("fused_activation_function", quant.ACT_NONE))


def activation_params(op: Operator, output: Tensor) -> tuple[tuple[str, int | float], ...]:
    """(act_min, act_max) for the output's type: integers for quantized, floats for float32."""
    act = fused_activation(op)
    q = qparams(op, output) if output.dtype != "float32" else None  # names the operator itself
    try:
        if q is None:
            lo_f, hi_f = quant.activation_range_float(act)
            return (("act_min_f", lo_f), ("act_max_f", hi_f))
        lo, hi = quant.activation_range_quantized(act, q.scale, q.zero_point, output.dtype)
    except UnsupportedError as exc:  # quant.py's errors do not know the operator
        raise unsupported(op, exc.what) from None
    return (("act_min", lo), ("act_max", hi))


def check_accumulator(
    op: Operator,
    x: Tensor,
    w: Tensor,
    bias: Tensor | None,
    channel_axis: int,
    shifts: tuple[int, ...],
    filter_offset: int = 0,
) -> None:
    """The int32 accumulator of an int8 convolution or fully-connected kernel cannot overflow for
    any input: per output channel, its taps' |weight + filter offset| times the largest |input -
    zero point|, plus |bias|, shifted left by the channel's multiplier shift, plus an output
    offset, stays within int32. TFLM's reference kernels overflow there (undefined behaviour);
    real models stay orders of magnitude inside. A non-constant bias cannot be bounded."""
    if bias is not None and not bias.is_constant:
        raise unsupported(op, "a non-constant bias is not supported (its int32 sum is unbounded)")
    channels = w.shape[channel_axis]
    if channels == 0:
        return
    zp = qparams(op, x).zero_point
    weights = (w.data, w.dtype) if w.is_constant else (None, "")
    bias_data = (bias.data, bias.dtype) if bias is not None else (None, "")
    worst = _worst_sum(weights, w.shape, bias_data, channel_axis, zp, shifts, filter_offset)
    if worst > INT32_MAX:
        raise unsupported(
            op,
            f"an output channel can accumulate {worst}, beyond int32: weights or bias too large "
            "(TFLM's kernel would overflow)",
        )


@functools.lru_cache(maxsize=512)
def _worst_sum(
    weights: tuple[bytes | None, str],
    shape: tuple[int, ...],
    bias: tuple[bytes | None, str],
    channel_axis: int,
    zp: int,
    shifts: tuple[int, ...],
    filter_offset: int,
) -> int:
    """`check_accumulator`'s largest |sum|, from the constants' bytes (cached: the tiles of a
    patch stage lower one operator's constants many times; a bytes object hashes once)."""
    data, dtype = weights
    channels = shape[channel_axis]
    if data is not None:
        w = np.frombuffer(data, dtype=DTYPES[dtype][0]).reshape(shape).astype(np.int64)
        magnitudes = np.abs(w + filter_offset)
    else:
        magnitudes = np.full(shape, 128 + abs(filter_offset), np.int64)
    taps = np.moveaxis(magnitudes, channel_axis, 0).reshape(channels, -1).sum(axis=1)
    reach = [int(t) * max(127 - zp, 128 + zp) for t in taps]
    if bias[0] is not None:
        values = np.frombuffer(bias[0], dtype=DTYPES[bias[1]][0]).reshape(-1)
        reach = [r + abs(int(b)) for r, b in zip(reach, values, strict=True)]
    lefts = [max(s, 0) for s in shifts] * (channels if len(shifts) == 1 else 1)
    return max(r << s for r, s in zip(reach, lefts, strict=True)) + 128


@functools.lru_cache(maxsize=1024)
def rescale_multipliers(
    input_scale: float, filter_scales: tuple[float, ...], output_scale: float
) -> tuple[Array, Array]:
    """`multiplier_arrays` of double(input_scale) * double(filter_scale[c]) / double(output_scale)
    per channel, as PopulateConvolutionQuantizationParams computes them."""
    return _multiplier_arrays(tuple(input_scale * s / output_scale for s in filter_scales))


def multiplier_arrays(real_scales: list[float]) -> tuple[Array, Array]:
    """Per-channel (multiplier, shift) arrays from real rescale factors."""
    return _multiplier_arrays(tuple(real_scales))


@functools.lru_cache(maxsize=1024)
def _multiplier_arrays(real_scales: tuple[float, ...]) -> tuple[Array, Array]:
    pairs = [quant.quantize_multiplier(s) for s in real_scales]
    return Array("int32_t", tuple(m for m, _ in pairs)), Array(
        "int32_t", tuple(s for _, s in pairs)
    )


# --- int16 activations with int8 weights (TFLM's 16x8 kernels) ---

#: TensorType INT32 in the options' `quantized_bias_type` (TFLite schema).
TENSOR_TYPE_INT32 = 2
#: MultiplyByQuantizedMultiplier(int64) asserts shift in [-31, 8).
INT64_SHIFTS = range(-31, 8)


def check_int16_zero_points(op: Operator, *tensors: Tensor) -> None:
    """TFLM's 16x8 kernels require symmetric int16 activations."""
    for t in tensors:
        if qparams(op, t).zero_point != 0:
            raise unsupported(op, f"int16 tensor {t.index} has a non-zero zero point")


def int16_accumulator(op: Operator, bias: Tensor | None) -> str:
    """'int64' or 'int32': TFLM accumulates 16x8 products in the bias type; without a bias, in
    the options' quantized_bias_type (int64 unless it says int32)."""
    if bias is not None:
        return check_dtype(op, bias, "int64", "int32")
    return "int32" if op.options.get("quantized_bias_type", 0) == TENSOR_TYPE_INT32 else "int64"


def check_int64_shifts(op: Operator, shifts: Array) -> None:
    if any(int(s) not in INT64_SHIFTS for s in shifts.values):
        raise unsupported(op, "an int64-accumulator rescale has a shift outside [-31, 7]")


#: MultiplyByQuantizedMultiplier(int64) assumes its input x in [-2^47, 2^47).
INT64_RESCALE_LIMIT = 1 << 47


def check_int64_accumulator(
    op: Operator, w: Tensor, bias: Tensor | None, channel_axis: int
) -> None:
    """A 16x8 int64 sum stays inside the range TFLM's int64 rescale assumes (|x| < 2^47): per
    output channel, its taps' |weight| times 32768 (the largest |int16|), plus |bias|. Beyond it
    the rescale's int64 product can overflow (undefined behaviour in TFLM's kernel, a debug
    assertion there). A non-constant bias cannot be bounded."""
    if bias is not None and not bias.is_constant:
        raise unsupported(op, "a non-constant bias is not supported (its int64 sum is unbounded)")
    channels = w.shape[channel_axis]
    if channels == 0:
        return
    weights = np.abs(w.array().astype(np.int64)) if w.is_constant else np.full(w.shape, 128)
    taps = np.moveaxis(weights, channel_axis, 0).reshape(channels, -1).sum(axis=1)
    reach = [int(t) * 32768 for t in taps]
    if bias is not None:
        reach = [r + abs(int(b)) for r, b in zip(reach, bias.array().reshape(-1), strict=True)]
    if max(reach) >= INT64_RESCALE_LIMIT:
        raise unsupported(
            op,
            f"an output channel can accumulate {max(reach)}, beyond the 2^47 TFLM's int64 "
            "rescale assumes: weights or bias too large",
        )


def int32_activation_params(op: Operator) -> tuple[tuple[str, int], ...]:
    """(act_min, act_max) of CalculateActivationRange<int32_t>: RELU, RELU6 and RELU_N1_TO_1 clamp
    to [0, max], [0, 6] and [-1, 1]; any other activation to the whole int32 range."""
    lo, hi = quant.INT_RANGES["int32"]
    act = fused_activation(op)
    if act == quant.ACT_RELU:
        lo = 0
    elif act == quant.ACT_RELU6:
        lo, hi = 0, 6
    elif act == quant.ACT_RELU_N1_TO_1:
        lo, hi = -1, 1
    return (("act_min", lo), ("act_max", hi))
