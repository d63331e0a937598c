"""Optimised variants built on the int8 matrix product (runtime_c/kernels/opt/mat_mult_s8.c):
FULLY_CONNECTED with a filter zero point of 0 and 1x1 CONV_2D with stride 1 and one group.

Both take the reference lowering's requantisation and fold the input offset into the bias:
bias'[c] = bias[c] + input_offset * sum_k w[c][k], so the kernel sums w * x only (exact:
integer sums do not depend on their order, and the reference lowering checked the full sum
against int32; a folded bias outside int32 keeps the reference kernel). Where the sums stay
under 2^30 and the activation is int8's whole range, the kernel's short requantisation
(`short_requant`: SMMLAR on the doubled sum, then SSAT) replaces the long one. The kernel widens
two input rows at a time into 16-bit lanes in its scratch (`widened_bytes`), which is also the
1x1 convolution's staging for running in place; a single row (FULLY_CONNECTED of batch 1) is
read as it is, with no scratch. The weights are laid out for its 2-channel
blocks (`pair_layout`), so one pointer walks both channels; a weight tensor another operator
also reads keeps the reference kernel.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from mcugen.codegen.lower import Array, Lowered, Value, fields
from mcugen.codegen.lower._rung import rung
from mcugen.codegen.lower.conv_2d import conv_staging_bytes
from mcugen.codegen.quant import rdbpot, srdhm, wrap_i32
from mcugen.model.ir import DTYPES, Graph, Operator
from mcugen.model.rewrite import EXPLICIT_PADDING
from mcugen.model.traits import OpTraits

PARAMS = "mcu_mat_mult_s8_params_t"
HEADER = "mcu/mat_mult_s8.h"
INT32 = (-(2**31), 2**31 - 1)


def filter_rows(graph: Graph, op: Operator) -> np.ndarray:
    """The filter as [output channel][its weights]: CONV_2D and FULLY_CONNECTED rows as stored;
    a DEPTHWISE_CONV_2D of one input channel ([1, KH, KW, O]) transposed to [O][KH * KW]."""
    w = graph.tensors[op.inputs[1]]
    assert w.data is not None, "a filter laid out for a kernel variant is constant"
    return _rows(w.data, w.dtype, w.shape, op.opcode == "DEPTHWISE_CONV_2D")


@functools.lru_cache(maxsize=256)
def _relaid(data: bytes, dtype: str, shape: tuple[int, ...], depthwise: bool) -> bytes:
    return pair_layout(_rows(data, dtype, shape, depthwise))


@functools.lru_cache(maxsize=256)
def _rows(data: bytes, dtype: str, shape: tuple[int, ...], depthwise: bool) -> np.ndarray:
    """`filter_rows` from the filter's bytes, read-only (cached: a patch stage lowers each
    operator's filter once per tile geometry)."""
    w = np.frombuffer(data, dtype=DTYPES[dtype][0]).reshape(shape).astype(np.int64)
    rows = w.reshape(-1, w.shape[-1]).T if depthwise else w.reshape(w.shape[0], -1)
    rows.flags.writeable = False
    return rows


def folded_bias(graph: Graph, op: Operator, input_offset: int) -> Array | None:
    """bias[c] + input_offset * (sum of filter row c), per output channel; None outside int32."""
    rows = filter_rows(graph, op)
    folded = input_offset * rows.sum(axis=1)
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        folded = folded + graph.tensors[op.inputs[2]].array().astype(np.int64).reshape(-1)
    if folded.size and (folded.min() < INT32[0] or folded.max() > INT32[1]):
        return None
    return Array("int32_t", tuple(int(v) for v in folded))


def pair_layout(rows: np.ndarray) -> bytes:
    """Weights [C][K] for the kernel (runtime_c/kernels/opt/mat_mult_s8.c): channels in pairs,
    each pair as blocks of 4 weights of its first channel then 4 of its second, then the first's
    last K mod 4 weights and the second's; an odd last channel as it is."""
    channels, depth = rows.shape
    full = depth - depth % 4
    out: list[np.ndarray] = []
    for c in range(0, channels - 1, 2):
        pair = rows[c : c + 2, :full].reshape(2, -1, 4).transpose(1, 0, 2).reshape(-1)
        out += [pair, rows[c, full:], rows[c + 1, full:]]
    if channels % 2:
        out.append(rows[-1])
    return np.concatenate(out).astype(np.int8).tobytes() if out else b""


def relaid_weights(graph: Graph, op: Operator) -> tuple[tuple[int, bytes], ...] | None:
    """The weights in `pair_layout`, None when another operator reads the same tensor, unless
    every reader is a tile of the same operator (a patch stage, model/patch_rewrite.py: same
    opcode and options but the tile's padding, reading it as its filter), so all lay it out
    alike."""
    index = op.inputs[1]
    if not _read_alike(graph, index):
        return None
    w = graph.tensors[index]
    assert w.data is not None, "a filter laid out for a kernel variant is constant"
    data = _relaid(w.data, w.dtype, w.shape, op.opcode == "DEPTHWISE_CONV_2D")
    assert len(data) == len(w.data or b""), "a layout keeps every weight"
    return ((index, data),)


def _read_alike(graph: Graph, weights: int) -> bool:
    """Every reader of `weights` is a tile of one operator: the same opcode, options (but the
    padding), constant operands and activation types and quantization, so the same kernel
    variant takes each (answered once per tensor of the last graph asked)."""
    memo = _graph_memo(graph)[1]
    if weights not in memo:

        def key(o: Operator) -> tuple[object, ...]:
            options = sorted((k, repr(v)) for k, v in o.options.items() if k != EXPLICIT_PADDING)
            x, y = graph.tensors[o.inputs[0]], graph.tensors[o.outputs[0]]
            types = (x.dtype, x.quant, y.dtype, y.quant)
            return o.opcode, tuple(options), o.inputs[1:], o.inputs.count(weights), types

        readers = _graph_memo(graph)[0].get(weights, [])
        memo[weights] = len({key(graph.operators[r]) for r in readers}) <= 1
    return memo[weights]


_MEMO: list[tuple[Graph, dict[int, list[int]], dict[int, bool]]] = []


def _graph_memo(graph: Graph) -> tuple[dict[int, list[int]], dict[int, bool]]:
    """`graph.consumers()` and `_read_alike`'s answers, kept for the last graph asked (lowering
    a graph asks per operator)."""
    if not _MEMO or _MEMO[0][0] is not graph:
        _MEMO[:] = [(graph, graph.consumers(), {})]
    return _MEMO[0][1], _MEMO[0][2]


def kernel_requantizes(multipliers: Value, shifts: Value) -> bool:
    """The kernel's requantisation (runtime_c/include/mcu/requant.h) equals TFLM's for
    multipliers in [0, 2^31) and shifts in [-31, 30] (tests/c/test_requant.py), which
    QuantizeMultiplier gives; anything else keeps the reference kernel."""
    assert isinstance(multipliers, Array) and isinstance(shifts, Array)
    return all(0 <= int(m) < 2**31 for m in multipliers.values) and all(
        -31 <= int(s) <= 30 for s in shifts.values
    )


def mat_mult_params(
    graph: Graph, op: Operator, reference: Lowered
) -> tuple[tuple[str, Value], ...] | None:
    """The matrix product's parameters from the reference lowering's, None when it cannot run."""
    ref = fields(reference.params)
    bias = folded_bias(graph, op, int(ref["input_offset"]))  # type: ignore[arg-type]
    if bias is None or not kernel_requantizes(ref["multipliers"], ref["shifts"]):
        return None
    return (
        ("output_offset", ref["output_offset"]),
        ("act_min", ref["act_min"]),
        ("act_max", ref["act_max"]),
        ("num_channels", ref["num_channels"]),
        ("multipliers", ref["multipliers"]),
        ("shifts", ref["shifts"]),
        ("bias", bias),
    )


def _tflm_requant(acc: int, multiplier: int, shift: int) -> int:
    """TFLM's MultiplyByQuantizedMultiplier (double rounding)."""
    scaled = wrap_i32(acc * 2 ** max(shift, 0))
    return rdbpot(srdhm(scaled, multiplier), max(-shift, 0))


def short_requant(
    rows: np.ndarray, bias: Array, ref: dict[str, Value]
) -> tuple[Array, Array, Array] | None:
    """The multipliers, right shifts less 1 and undoubled biases of the kernel's short
    requantisation (runtime_c/kernels/opt/mat_mult_s8.c: SMMLAR on the doubled sum, then SSAT),
    None when it does not apply: an activation narrower than int8's range, a left shift, or a sum
    that could wrap: |acc| must stay under 2^30 (bound: |bias| + 128 * sum |w| per channel), and
    the rounding term (2 offset + 1) << (e - 1) plus the rounded product inside int32.
    - A channel whose product always rounds to 0 (|x| < 2^(e-1); a multiplier of 0) gets
      multiplier 0 and e = 1, which gives the output offset, as TFLM.
    - A channel of zero weights (pruned: VWW has hundreds, some with biases near 2^30) outputs
      the constant v = TFLM's requantised bias; with per-channel multipliers it gets bias
      4 (v - offset), multiplier 2^30 and e = 1, which give exactly v."""
    if (ref["act_min"], ref["act_max"]) != (-128, 127):
        return None
    multipliers, shifts, offset = ref["multipliers"], ref["shifts"], ref["output_offset"]
    assert isinstance(multipliers, Array) and isinstance(shifts, Array)
    assert isinstance(offset, int)
    per_channel = len(multipliers.values) == len(bias.values) > 1
    m_in = [int(v) for v in multipliers.values]
    shift_in = [int(v) for v in shifts.values]
    biases = [int(v) for v in bias.values]
    weights = 128 * np.abs(rows).sum(axis=1)
    if per_channel:
        for c in np.nonzero(weights == 0)[0].tolist():
            out = max(-128, min(127, _tflm_requant(biases[c], m_in[c], shift_in[c]) + offset))
            biases[c], m_in[c], shift_in[c] = 4 * (out - offset), 2**30, -1
    bound = np.abs(np.array(biases, dtype=np.int64)) + weights
    if bound.size and int(bound.max()) >= 2**30:
        return None
    if not per_channel:
        bound = bound.max(initial=0).reshape(1)
    short_m: list[int] = []
    short_e: list[int] = []
    for m, shift, most in zip(m_in, shift_in, bound.tolist(), strict=True):
        e = -shift
        x_max = (int(most) * m + 2**31) >> 31  # |SaturatingRoundingDoublingHighMul| at most
        if m == 0 or (e >= 1 and x_max < 2 ** (e - 1)):
            m, e = 0, 1
        if e < 1 or x_max + abs(2 * offset + 1) * 2 ** (e - 1) + 1 >= 2**31:
            return None
        short_m.append(m)
        short_e.append(e - 1)
    return (
        Array("int32_t", tuple(short_m)),
        Array("int32_t", tuple(short_e)),
        Array("int32_t", tuple(biases)),
    )


def widened_params(
    graph: Graph, op: Operator, reference: Lowered
) -> tuple[tuple[str, Value], ...] | None:
    """`mat_mult_params` for the widened product (mcu_mat_mult_s8): with the short
    requantisation where `short_requant` allows it (the bias doubled, `shifts` left out), else
    the long one as they are."""
    params = mat_mult_params(graph, op, reference)
    if params is None:
        return None
    found = dict(params)
    bias = found["bias"]
    assert isinstance(bias, Array)
    short = short_requant(filter_rows(graph, op), bias, fields(reference.params))
    if short is None:
        return params
    found["multipliers"], found["short_shifts"], bias = short
    found["bias"] = Array("int32_t", tuple(2 * int(v) for v in bias.values))
    del found["shifts"]
    return tuple(found.items())


def pair_stream(params: tuple[tuple[str, Value], ...], depth: int) -> tuple[tuple[str, Value], ...]:
    """`widened_params` with the short requantisation's constants as the stream that pairs of
    channels read in order (runtime_c/include/mcu/mat_mult_s8.h `stream`): the doubled biases of
    the first pair, each twice (one per row), then per pair each channel's multiplier, rounding term
    (2 output offset + 1) << shift and shift, and the next pair's biases (0 after the last).
    Only for the kernel's assembly path's shapes: depth a multiple of 4, an even channel count,
    the short requantisation; else `params` as they are."""
    found = dict(params)
    bias = found["bias"]
    assert isinstance(bias, Array)
    channels = len(bias.values)
    if "short_shifts" not in found or depth % 4 or channels % 2 or not channels:
        return params
    mult, shifts, offset = (
        found.pop("multipliers"),
        found.pop("short_shifts"),
        found["output_offset"],
    )
    assert isinstance(mult, Array) and isinstance(shifts, Array) and isinstance(offset, int)
    per = len(mult.values) == channels
    biases = [int(v) for v in bias.values for _ in range(2)] + [0] * 4
    stream = biases[:4]
    for c in range(channels):
        m, e = (int(a.values[c if per else 0]) for a in (mult, shifts))
        stream += [m, wrap_i32((2 * offset + 1) << e), e]
        if c % 2:
            stream += biases[2 * c + 2 : 2 * c + 6]
    del found["bias"]
    found["stream"] = Array("int32_t", tuple(stream))
    return tuple(found.items())


def widened_bytes(depth: int) -> int:
    """MCU_MAT_MULT_S8_SCRATCH (runtime_c/include/mcu/mat_mult_s8.h): two rows of `depth`
    inputs as 16-bit lanes, depth rounded up to a multiple of 4 (one row is read as it is)."""
    return 16 * ((depth + 3) // 4)


ProductParams = Callable[[Graph, Operator, Lowered], "tuple[tuple[str, Value], ...] | None"]


def _variant(
    graph: Graph,
    op: Operator,
    reference: Lowered,
    name: str,
    function: str,
    scratch: int,
    traits: OpTraits | None = None,
    *,
    params_of: ProductParams = widened_params,
    sources: tuple[str, ...] = (),
    headers: tuple[str, ...] = (HEADER,),
    params_type: str = PARAMS,
) -> Lowered | None:
    """The variant's lowering (parameters by `params_of`; sources the product's and
    opt/<name>.c unless given), None when the bias does not fold or the weights are shared."""
    params = params_of(graph, op, reference)
    relaid = relaid_weights(graph, op)
    if params is None or relaid is None:
        return None
    return Lowered(
        reference.kernel,
        function,
        params_type,
        params,
        scratch,
        variant=name,
        sources=sources or ("opt/mat_mult_s8.c", f"opt/{name}.c"),
        headers=headers,
        constants=relaid,
        traits=traits,
    )


@rung("fully_connected_s8", "FULLY_CONNECTED")
def fully_connected_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8 input, weights with zero point 0 (per tensor or per channel), any shape."""
    if reference.function != "mcu_fully_connected_int8":
        return None
    if fields(reference.params).get("filter_offset") != 0:
        return None
    function, scratch = dense_entry(
        graph, op, "mcu_fully_connected_s8_opt", "mcu_fully_connected_s8_row"
    )
    return _variant(graph, op, reference, "fully_connected_s8", function, scratch)


def dense_entry(graph: Graph, op: Operator, rows: str, one_row: str) -> tuple[str, int]:
    """A FULLY_CONNECTED product's entry and scratch: `rows` with two widened rows of scratch,
    or for a single row `one_row`, which reads it as it is (no scratch)."""
    w, y = graph.tensors[op.inputs[1]], graph.tensors[op.outputs[0]]
    if y.num_elements // max(w.shape[0], 1) > 1:
        return rows, widened_bytes(w.shape[-1])
    return one_row, 0


@rung("conv_2d_1x1_s8", "CONV_2D")
def conv_2d_1x1_s8(graph: Graph, op: Operator, reference: Lowered) -> Lowered | None:
    """int8, 1x1 filter, stride 1, one group (any padding option: a 1x1 filter pads 0)."""
    if not takes_1x1(graph, op, reference):
        return None
    # the widened pair is the staging for running in place: no more scratch than that
    traits = OpTraits(staging_bytes=0) if conv_staging_bytes(graph, op) is not None else None
    scratch = widened_bytes(graph.tensors[op.inputs[0]].shape[3])
    low = _variant(
        graph, op, reference, "conv_2d_1x1_s8", "mcu_conv_2d_1x1_s8_opt", scratch, traits
    )
    if low is None:
        return None
    # the kernel file runs the stream path too (mat_mult_s8_pairs.c), whichever it is given;
    # both write a concatenation's channel slice at the node's output stride (so does
    # conv_2d_1x1_s8_staged, which takes this lowering)
    low = replace(low, sources=(*low.sources, "opt/mat_mult_s8_pairs.c"), output_stride=True)
    params = pair_stream(low.params, graph.tensors[op.inputs[0]].shape[3])
    if params == low.params:
        return low
    return replace(low, function="mcu_conv_2d_1x1_s8_pairs", params=params)


def takes_1x1(
    graph: Graph, op: Operator, reference: Lowered, function: str = "mcu_conv_2d_int8"
) -> bool:
    """The 1x1 variants' shape: the reference int8 CONV_2D (`function`) with a 1x1 filter over
    every input channel (one group), stride 1 and no padding."""
    if reference.function != function:
        return False
    ref = fields(reference.params)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    pointwise = w.shape[1] == w.shape[2] == 1 and w.shape[3] == x.shape[3]
    return (
        ref["stride_h"] == ref["stride_w"] == 1 and ref["pad_h"] == ref["pad_w"] == 0 and pointwise
    )
