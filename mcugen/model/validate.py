"""Model-level validation of an imported graph, before any planning or codegen (house style 7b).

What every later stage relies on, whatever the operators are:
- structure: a tensor is a constant or a variable, not both; one writer per tensor and never a
  constant; at least one graph input; graph inputs neither constant, written nor
  empty; graph outputs written, inputs or constants; every operator input available before it is
  read (no cycles, no use before definition);
- sizes: every tensor's element count and bytes fit the runtime's 32-bit arithmetic (int32 dims and
  element counts, uint32 byte sizes computed on the device);
- quantization: zero points in the range of the tensor's type (int32 for types without a narrower
  one: the runtime holds zero points in int32), and scales that TFLM's kernels can use
  (`scale_rules`): every scale finite; a constant that only CONV_2D, DEPTHWISE_CONV_2D,
  TRANSPOSE_CONV and FULLY_CONNECTED read as their filter or bias may have zero or negative
  scales (a per-tensor FULLY_CONNECTED filter only a zero one); every other scale, an
  activation's above all, must be positive;
- options: every number finite.
Operator-level rules (operand counts, shapes, types and options against a kernel) live in each
operator's lowering (mcugen/codegen/lower). Each violation is one `ModelError` line naming the
tensor or operator. O(tensors + operator operands).
"""

from __future__ import annotations

import math
from types import MappingProxyType

from mcugen.errors import ModelError
from mcugen.model.ir import DTYPES, Graph, Operator, Tensor

INT32_MAX = 2**31 - 1
#: Zero point range per tensor type; other types hold their zero point in an int32.
ZERO_POINT_RANGES = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
}
CORRUPT = "the file is corrupt or was not written by a TensorFlow Lite converter"

#: How a tensor's scales may be signed (`scale_rules`), loosest first.
ANY_SIGN, NOT_NEGATIVE, POSITIVE = 0, 1, 2
SCALE_RULES = {
    ANY_SIGN: "scales must be finite",
    NOT_NEGATIVE: "a per-tensor FULLY_CONNECTED filter's scale must be finite and not negative "
    "(TFLM refuses a negative one)",
    POSITIVE: "scales must be finite and positive (only the filter and bias scales of "
    "convolutions and FULLY_CONNECTED may be zero or negative)",
}
#: Operand positions of the filter and bias of the operators whose kernels fold each filter scale
#: into one output channel's multiplier (TFLM's PopulateConvolutionQuantizationParams, and
#: FULLY_CONNECTED's per-channel branch of CalculateOpDataFullyConnected).
FOLDED_SCALE_OPERANDS = MappingProxyType(
    {
        "CONV_2D": (1, 2),
        "DEPTHWISE_CONV_2D": (1, 2),
        "TRANSPOSE_CONV": (1, 3),
        "FULLY_CONNECTED": (1, 2),
    }
)


def validate_graph(graph: Graph, source: str) -> None:
    """Every model-level rule; raises the first violation as a one-line `ModelError`."""
    rules = scale_rules(graph)
    for tensor in graph.tensors:
        _check_tensor(tensor, rules[tensor.index], source)
    for op in graph.operators:
        _check_options(op, source)
    produced = _check_writers(graph, source)
    _check_graph_io(graph, produced, source)
    _check_acyclic(graph, produced, source)


def _fail(what: str, source: str, hint: str = CORRUPT) -> ModelError:
    return ModelError(what, where=source, hint=hint)


def _label(tensor: Tensor) -> str:
    return f"tensor {tensor.index} ({tensor.name})" if tensor.name else f"tensor {tensor.index}"


def scale_rules(graph: Graph) -> list[int]:
    """Per tensor, how its scales may be signed: `ANY_SIGN`, `NOT_NEGATIVE` or `POSITIVE`, the
    strictest its uses allow, from what TFLM's kernels do with a scale.

    - A constant read only as the filter or bias of CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV or
      FULLY_CONNECTED: any sign, but a per-tensor FULLY_CONNECTED filter (below). TFLM's Prepare
      makes double(input_scale) * filter_scale[c] / output_scale the multiplier of channel c with
      QuantizeMultiplier, whose frexp keeps the sign: a negative scale gives a negative
      multiplier, which MultiplyByQuantizedMultiplier applies as it is (MIT HAN lab's
      mcunet_320kb_imagenet has 158 such scales); a zero scale gives multiplier 0, and the channel
      outputs its zero point. The int8 and int16 kernels never read a bias scale, but a
      per-tensor FULLY_CONNECTED's Prepare requires |input_scale * filter_scale - bias_scale| <=
      0.02 output_scale, which the sign alone does not decide (its lowering does not check it).
    - The filter of a per-tensor FULLY_CONNECTED: not negative. GetQuantizedConvolutionMultipler
      refuses input_scale * filter_scale < 0 (zero passes).
    - Every other tensor: positive. TFLM divides by activation scales (a zero one makes an
      infinite factor, undefined behaviour in QuantizeMultiplier) and its element-wise kernels
      abort on a negative factor (QuantizeMultiplierSmallerThanOneExp checks it is positive).
      TFLM would run a convolution with a negative input or output scale, but its fused RELU
      then clamps the wrong side, and no converter writes one: negative activation scales are
      refused everywhere.
    A constant that no operator reads is not checked for sign. O(tensors + operator operands)."""
    rules = [POSITIVE if not t.is_constant else ANY_SIGN for t in graph.tensors]
    for op in graph.operators:
        for position, t in enumerate(op.inputs):
            if t >= 0:
                rules[t] = max(rules[t], _operand_rule(graph, op, position))
    for t in (*graph.inputs, *graph.outputs):
        rules[t] = POSITIVE
    return rules


def _operand_rule(graph: Graph, op: Operator, position: int) -> int:
    """How the scale of `op`'s input `position` may be signed, for this use alone."""
    if position not in FOLDED_SCALE_OPERANDS.get(op.opcode, ()):
        return POSITIVE
    if op.opcode != "FULLY_CONNECTED":
        return ANY_SIGN
    w = graph.tensors[op.inputs[1]] if op.inputs[1] >= 0 else None
    per_tensor = w is not None and w.quant is not None and not w.quant.per_channel
    return NOT_NEGATIVE if position == 1 and per_tensor else ANY_SIGN


def _scale_allowed(scale: float, rule: int) -> bool:
    if not math.isfinite(scale):
        return False
    return scale > 0.0 or rule == ANY_SIGN or (rule == NOT_NEGATIVE and scale == 0.0)


def _check_tensor(tensor: Tensor, rule: int, source: str) -> None:
    """Type known, size within 32-bit device arithmetic, quantization usable (`rule`: how its
    scales may be signed, from `scale_rules`)."""
    if tensor.dtype not in DTYPES:
        raise _fail(f"{_label(tensor)} has unsupported type {tensor.dtype}", source)
    if tensor.nbytes > INT32_MAX:
        raise _fail(
            f"{_label(tensor)} of shape {tensor.shape} and type {tensor.dtype} holds "
            f"{tensor.nbytes} bytes, more than the 2^31-1 a microcontroller can address",
            source,
            "reduce the model's input size or re-export it with fixed, smaller shapes",
        )
    q = tensor.quant
    if q is None:
        return
    for i, scale in enumerate(q.scales):
        if not _scale_allowed(scale, rule):
            at = f" (scale {i} of {len(q.scales)})" if q.per_channel else ""
            raise _fail(
                f"{_label(tensor)} has quantization scale {scale:.7g}{at}; {SCALE_RULES[rule]}",
                source,
            )
    lo, hi = ZERO_POINT_RANGES.get(tensor.dtype, (-INT32_MAX - 1, INT32_MAX))
    for zp in q.zero_points:
        if not lo <= zp <= hi:
            raise _fail(
                f"{_label(tensor)} of type {tensor.dtype} has zero point {zp}, outside "
                f"[{lo}, {hi}]",
                source,
            )


def _check_options(op: Operator, source: str) -> None:
    """Every number among the options is finite: a NaN clip or beta reaches float-to-integer
    conversions that are undefined behaviour in TFLM's Prepare and ours."""
    for name, value in op.options.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise _fail(f"{op.label}: option {name} is {value}, not a finite number", source)


def _check_writers(graph: Graph, source: str) -> dict[int, int]:
    """Tensor -> the one operator that writes it; constants are never written."""
    produced: dict[int, int] = {}
    for op in graph.operators:
        for t in op.outputs:
            if t < 0:
                raise _fail(f"{op.label} has an omitted output (-1)", source)
            if t in produced:
                raise _fail(
                    f"tensor {t} is written by operators {produced[t]} and {op.index}", source
                )
            if graph.tensors[t].is_constant:
                raise _fail(f"{op.label} writes constant tensor {t}", source)
            produced[t] = op.index
    return produced


def _check_graph_io(graph: Graph, produced: dict[int, int], source: str) -> None:
    """Graph inputs are filled by the caller: never constants (read-only data), written or empty
    (the runtimes' protocols exchange inputs as bytes); there is at least one. Outputs are
    written, inputs or constants."""
    if not graph.inputs:
        raise _fail("the model has no inputs", source)
    for t in graph.inputs:
        tensor = graph.tensors[t]
        if tensor.nbytes == 0:
            raise _fail(f"subgraph input {_label(tensor)} of shape {tensor.shape} is empty", source)
        if tensor.is_constant:
            raise _fail(
                f"subgraph input {_label(tensor)} is a constant (it has data in the file)", source
            )
        if t in produced:
            raise _fail(f"subgraph input {t} is also written by operator {produced[t]}", source)
    for t in graph.outputs:
        tensor = graph.tensors[t]
        written = t in produced or t in graph.inputs or tensor.is_variable  # state: in place
        if not written and not tensor.is_constant:
            raise _fail(f"subgraph output {t} is never written", source)


def _check_acyclic(graph: Graph, produced: dict[int, int], source: str) -> None:
    """Every operator input is a constant, a variable, a subgraph input or written earlier."""
    available = set(graph.inputs)
    for op in graph.operators:
        for t in op.inputs:
            if t < 0 or t in available:
                continue
            tensor = graph.tensors[t]
            if tensor.is_constant or tensor.is_variable:
                continue
            when = "before it is written" if t in produced else "that nothing writes"
            raise _fail(f"{op.label} reads {_label(tensor)} {when}", source)
        available.update(op.outputs)
