"""The arena scratch stock TFLM's kernels request, per operator, so an offline plan leaves room.

TFLM plans kernels' scratch buffers (`RequestScratchBufferInArena`) online, first fit into the gaps
of the offline plan. A plan made without them is tight, so the scratch lands on top and TFLM's head
can exceed the original's. `mcugen optimize` therefore plans with these sizes as scratch: each
operator gets a free slot at its step, which TFLM's first fit finds.

Sizes are read from TFLM's reference kernels (tensorflow/lite/micro/kernels and signal/micro/
kernels at the mirrored revision): each request is rounded up to 16 bytes as TFLM's planner does,
and the requests of one operator are summed. Kernels outside this table request no arena scratch
in the reference build; convolutions and FULLY_CONNECTED only do so for compressed weights, which
mcugen does not import. Weakness: a hand-kept table, to be extended with TFLM's kernels.
"""

from __future__ import annotations

from collections.abc import Callable

from flatbuffers import flexbuffers

from mcugen.model.ir import Graph, Operator, element_size
from mcugen.plan.buffers import align_up

INT = 4  # sizeof(int) and sizeof(int32_t)
POINTER = 8  # sizeof(void*) on the 64-bit host that tflite_micro runs on
LSTM_CELL_STATE = 19  # kLstmCellStateTensor


def _requests(*sizes: int) -> int:
    return sum(align_up(s) for s in sizes if s > 0)


def _svdf(graph: Graph, op: Operator) -> int:
    """svdf_common.cc: int32 (batch x filters) and, for int8, int32 (batch x units)."""
    x, w_feature = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    batch, filters = x.shape[0], w_feature.shape[0]
    rank = int(op.options.get("rank", 1)) or 1
    units = filters // rank
    per = 4  # int32_t or float
    if x.dtype == "int8":
        return _requests(batch * filters * per, batch * units * per)
    return _requests(batch * filters * per)


def _lstm(graph: Graph, op: Operator) -> int:
    """unidirectional_sequence_lstm.cc: four buffers of batch x state of the cell state type."""
    cell = graph.tensors[op.inputs[LSTM_CELL_STATE]]
    return _requests(*[cell.num_elements * element_size(cell.dtype)] * 4)


def _reduce(graph: Graph, op: Operator) -> int:
    """reduce_common.cc: int indices (input rank, axis count); MEAN/SUM on int8/int16 add an
    int32 accumulator per output element."""
    x, axis, y = (graph.tensors[t] for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    sizes = [INT * len(x.shape), INT * axis.num_elements]
    if op.opcode in ("MEAN", "SUM") and x.dtype in ("int8", "int16"):
        sizes.insert(0, INT * y.num_elements)
    return _requests(*sizes)


def _transpose_conv(graph: Graph, op: Operator) -> int:
    """transpose_conv.cc: int32 (int8 input) or int64 (int16 input) per output element, plus an
    int64 copy of an int16 bias."""
    x, y = graph.tensors[op.inputs[2]], graph.tensors[op.outputs[0]]
    sizes = []
    if x.dtype == "int8":
        sizes.append(4 * y.num_elements)
    if x.dtype == "int16":
        sizes.append(8 * y.num_elements)
        if len(op.inputs) > 3 and op.inputs[3] >= 0:
            bias = graph.tensors[op.inputs[3]]
            sizes += [8 * bias.num_elements] if bias.dtype == "int16" else []
    return _requests(*sizes)


def _mirror_pad(graph: Graph, op: Operator) -> int:
    rank = len(graph.tensors[op.inputs[0]].shape)
    return _requests(INT * rank, INT * rank)


def _add_n(graph: Graph, op: Operator) -> int:
    return _requests(POINTER * len(op.inputs))


def _rfft(graph: Graph, op: Operator) -> int:
    """signal/micro/kernels/rfft.cc: fft_length elements of the input type."""
    options = flexbuffers.Loads(op.custom_options) if op.custom_options else {}
    fft_length = int(options.get("fft_length", 0)) if isinstance(options, dict) else 0
    return _requests(fft_length * element_size(graph.tensors[op.inputs[0]].dtype))


SCRATCH: dict[str, Callable[[Graph, Operator], int]] = {
    "SVDF": _svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm,
    "MEAN": _reduce,
    "SUM": _reduce,
    "REDUCE_MAX": _reduce,
    "REDUCE_MIN": _reduce,
    "REDUCE_ALL": _reduce,
    "TRANSPOSE_CONV": _transpose_conv,
    "MIRROR_PAD": _mirror_pad,
    "ADD_N": _add_n,
    "CUSTOM:SignalRfft": _rfft,
}


def tflm_scratch_bytes(graph: Graph) -> dict[int, int]:
    """Operator index -> arena scratch bytes TFLM's kernels request (only operators that do)."""
    result = {}
    for op in graph.operators:
        key = f"CUSTOM:{op.custom_code}" if op.custom_code is not None else op.opcode
        size = SCRATCH[key](graph, op) if key in SCRATCH else 0
        if size:
            result[op.index] = size
    return result
