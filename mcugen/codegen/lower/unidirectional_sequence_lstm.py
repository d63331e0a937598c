"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLM's integer LSTM (int8 activations and weights, int16 cell
state and gates, int32 biases) and float32.

Inputs as lstm_shared.h numbers them: 0 input, 1-4 input-to-{input, forget, cell, output} weights,
5-8 recurrent-to-{...} weights, 9-11 peephole, 12-15 gate biases, 16-17 projection, 18 hidden state
and 19 cell state (variables: the state the operator carries from one invoke to the next), 20-23
layer-norm coefficients. TFLM runs the standard LSTM only: every gate present, no peephole,
projection or layer norm, a TANH cell gate; the rest is rejected here, as its Prepare rejects it.

TFLM's Prepare for the integer path (PrepareGateParametersInteger), computed here:
- each gate's two fully connected layers (input and recurrent) write int16 at the fixed scale
  2^-12 (Q3.12, the input of the int16 sigmoid and tanh): multiplier = double(float(input scale *
  weight scale)) / 2^-12, zero point 0, clamped to int16;
- the gates' outputs are Q0.15 (2^-15): forget * cell -> cell (2^-15 * s_c / s_c), input * cell
  gate -> cell (2^-15 * 2^-15 / s_c), tanh(cell) * output -> hidden (2^-15 * 2^-15 / s_h, plus the
  hidden zero point, clamped to int8), each from double with QuantizeMultiplier;
- the cell state's scale as a power of two (CheckedLog2 in float, rounded), which sets the tanh
  of the cell state, and the cell clip quantized to it (cell_clip / s_c, truncated to int16).
The converter's intermediate tensors (input_to_*_intermediate, effective_hidden_scale) are not
read: TFLM's kernel uses the fixed scales above instead. TFLM's kernel also takes four scratch
buffers of the state's size; mcugen's computes element by element and needs none.
"""

from __future__ import annotations

import numpy as np

from mcugen.codegen import quant
from mcugen.codegen.lower import Array, Lowered, Value, register
from mcugen.codegen.lower._common import (
    check_accumulator,
    check_dtype,
    inp,
    out,
    qparams,
    req,
    unsupported,
)
from mcugen.model.ir import Graph, Operator, Tensor

#: The element types of the operator's data input (declared with its registration).
TYPES = ("int8", "float32")

PARAMS = "mcu_unidirectional_sequence_lstm_params_t"
Params = tuple[tuple[str, Value], ...]
GATE_INPUT_SCALE = 2.0**-12  # fully connected outputs: Q3.12, the int16 sigmoid/tanh input
GATE_OUTPUT_SCALE = 2.0**-15  # sigmoid/tanh outputs: Q0.15
WEIGHTS = range(1, 9)
BIASES = range(12, 16)
VARIANTS = {
    "peephole": (9, 10, 11),
    "projection": (16, 17),
    "layer normalization": (20, 21, 22, 23),
}
ACT_TANH = 4


@register("UNIDIRECTIONAL_SEQUENCE_LSTM", types=TYPES)
def lower_lstm(graph: Graph, op: Operator) -> Lowered:
    x, y = req(graph, op, 0), out(graph, op)
    _check_structure(graph, op)
    hidden, cell = req(graph, op, 18), req(graph, op, 19)
    _check_shapes(graph, op, x, hidden, cell, y)
    dtype = check_dtype(op, x, *TYPES)
    weights = [req(graph, op, i) for i in WEIGHTS]
    biases = [req(graph, op, i) for i in BIASES]
    time_major = int(bool(op.options.get("time_major", False)))
    cell_clip = float(np.float32(op.options.get("cell_clip", 0.0)))
    if dtype == "float32":
        for t in (*weights, *biases, hidden, cell, y):
            check_dtype(op, t, "float32")
        floats: Params = (
            ("time_major", time_major),
            ("clip", int(cell_clip > 0)),
            ("cell_clip", cell_clip),
        )
        return Lowered("unidirectional_sequence_lstm", "mcu_lstm_f32", PARAMS, floats)
    for t in weights:
        check_dtype(op, t, "int8")
    for t in biases:
        check_dtype(op, t, "int32")
    check_dtype(op, hidden, "int8")
    check_dtype(op, y, "int8")
    check_dtype(op, cell, "int16")
    integer = _integer_params(op, x, weights, biases, hidden, cell)
    params: Params = (("time_major", time_major), *integer)
    return Lowered("unidirectional_sequence_lstm", "mcu_lstm_int8", PARAMS, params)


def _check_structure(graph: Graph, op: Operator) -> None:
    """LstmTensors::ValidateTensorStatus: the standard LSTM, its state in variables."""
    if len(op.inputs) != 24 or len(op.outputs) != 1:
        raise unsupported(op, "the LSTM needs 24 inputs and 1 output")
    for name, indices in VARIANTS.items():
        if any(inp(graph, op, i) is not None for i in indices):
            raise unsupported(op, f"LSTM with {name} is not supported (nor by TFLM)")
    for i in (*WEIGHTS, *BIASES):
        t = inp(graph, op, i)
        if t is None:
            raise unsupported(op, f"input {i} is missing (CIFG LSTM is not supported, nor by TFLM)")
        if not t.is_constant:
            raise unsupported(op, f"weights or bias tensor {t.index} is not constant")
        if t.quant is not None and t.quant.per_channel:
            raise unsupported(op, f"tensor {t.index} is quantized per channel")
    for i in (18, 19):
        if not req(graph, op, i).is_variable:
            raise unsupported(op, f"state tensor {op.inputs[i]} is not a variable")
    act = int(op.options.get("fused_activation_function", ACT_TANH))
    if act != ACT_TANH:
        raise unsupported(op, f"cell gate activation {act} is not supported (TFLM runs TANH)")
    if op.options.get("diagonal_recurrent_tensors", False):
        raise unsupported(op, "diagonal recurrent weights are not supported")


def _check_shapes(
    graph: Graph, op: Operator, x: Tensor, hidden: Tensor, cell: Tensor, y: Tensor
) -> None:
    """CreateLstmSizeInfo and ValidateTensorSize."""
    if len(x.shape) != 3 or len(y.shape) != 3 or len(hidden.shape) != 2:
        raise unsupported(op, f"input {x.shape}, output {y.shape} or state {hidden.shape} rank")
    time_major = bool(op.options.get("time_major", False))
    steps, batch = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0])
    features, state_size = x.shape[2], hidden.shape[1]
    if min(steps, batch, features, state_size) <= 0:
        raise unsupported(op, "a dimension is zero")
    for i in WEIGHTS:
        expected = (state_size, features if i <= 4 else state_size)
        if req(graph, op, i).shape != expected:
            raise unsupported(op, f"weights {op.inputs[i]} are not {expected}")
    for i in BIASES:
        if req(graph, op, i).shape != (state_size,):
            raise unsupported(op, f"bias {op.inputs[i]} is not ({state_size},)")
    for t in (hidden, cell):
        if t.num_elements != batch * state_size:
            raise unsupported(op, f"state tensor {t.index} does not hold {batch}x{state_size}")
    if y.shape != (x.shape[0], x.shape[1], state_size):
        raise unsupported(op, f"output {y.shape} does not match input {x.shape}")


def _fc_multiplier(op: Operator, x: Tensor, w: Tensor) -> tuple[int, int]:
    """GetQuantizedConvolutionMultipler: the scale product in float32, the division in double."""
    product = float(np.float32(qparams(op, x).scale) * np.float32(qparams(op, w).scale))
    return quant.quantize_multiplier(product / float(np.float32(GATE_INPUT_SCALE)))


def _mul_multiplier(a: float, b: float, out_scale: float) -> tuple[int, int]:
    """CreateInterGateMulParams: (double a * double b) / double out."""
    return quant.quantize_multiplier(float(np.float32(a)) * float(np.float32(b)) / out_scale)


def _integer_params(
    op: Operator,
    x: Tensor,
    weights: list[Tensor],
    biases: list[Tensor],
    hidden: Tensor,
    cell: Tensor,
) -> Params:
    qx, qh, qc = qparams(op, x), qparams(op, hidden), qparams(op, cell)
    fcs = [_fc_multiplier(op, x if k < 4 else hidden, w) for k, w in enumerate(weights)]
    for k, w in enumerate(weights):  # the eight layers' int32 sums (input layers add the bias)
        bias = biases[k] if k < 4 else None
        source = x if k < 4 else hidden
        check_accumulator(op, source, w, bias, 0, (fcs[k][1],), -qparams(op, w).zero_point)
    s_cell, s_hidden = float(np.float32(qc.scale)), float(np.float32(qh.scale))
    forget = _mul_multiplier(GATE_OUTPUT_SCALE, s_cell, s_cell)
    gated = _mul_multiplier(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, s_cell)
    hidden_mul = _mul_multiplier(GATE_OUTPUT_SCALE, GATE_OUTPUT_SCALE, s_hidden)
    _, power = quant.checked_log2(s_cell)  # TFLM does not check that it is a power of two
    if not -40 <= power <= 2:
        raise unsupported(op, f"cell state scale {s_cell} is out of the supported range")
    left = 12 + power  # (15 + power) - 3, TFLM lstm_internal::Tanh; multiplier 0: 3 << left
    tanh_multiplier, tanh_shift = (0, left) if left >= 0 else (3, -left)
    clip = float(np.float32(op.options.get("cell_clip", 0.0)))
    return (
        ("clip", int(clip > 0)),
        ("cell_clip_q", int(min(max(clip / s_cell, -32768.0), 32767.0))),
        ("input_offset", -qx.zero_point),
        ("hidden_offset", -qh.zero_point),
        ("hidden_zero_point", qh.zero_point),
        ("weight_offsets", Array("int32_t", tuple(-qparams(op, w).zero_point for w in weights))),
        ("fc_multipliers", Array("int32_t", tuple(m for m, _ in fcs))),
        ("fc_shifts", Array("int32_t", tuple(s for _, s in fcs))),
        ("forget_multiplier", forget[0]),
        ("forget_shift", forget[1]),
        ("gated_multiplier", gated[0]),
        ("gated_shift", gated[1]),
        ("hidden_multiplier", hidden_mul[0]),
        ("hidden_shift", hidden_mul[1]),
        ("cell_tanh_multiplier", tanh_multiplier),
        ("cell_tanh_shift", tanh_shift),
        ("sigmoid_table", Array("uint16_t", quant.sigmoid_table_uint16())),
    )
