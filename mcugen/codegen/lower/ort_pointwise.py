"""onnxruntime's numerics (lower/_ort.py) for the element-wise operators: ADD and MUL
(QLinearAdd, QLinearMul), the table lookups (QUANTIZE: QLinearConcat's requantisation and a
DequantizeLinear/QuantizeLinear pair; LOGISTIC: QLinearSigmoid; RELU, RELU6: the clip between
DequantizeLinear and QuantizeLinear) and SOFTMAX (QLinearSoftmax). Every table is computed here
in float32 exactly as onnxruntime computes it."""

from __future__ import annotations

import math

import numpy as np

from mcugen.codegen.lower import LOWERINGS, Array, Lowered, Params
from mcugen.codegen.lower._common import activation_params, check_operands, out, req, unsupported
from mcugen.codegen.lower._ort import f32, ort_lowering, quantize_table, scale_of, zero_of
from mcugen.codegen.lower.add import binary_operands
from mcugen.model.ir import Graph, Operator
from mcugen.model.numerics import model_domain

#: MLAS's logistic (logistic.cpp, Eigen's rational approximation): numerator and denominator
#: coefficients in x^2, highest first; the input clamped to [-18, 18].
_ALPHA: tuple[float, ...] = (4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05)
_ALPHA += (8.51377133304701e-03, 2.48287947061529e-01)
_BETA: tuple[float, ...] = (6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06)
_BETA += (1.70198817374094e-03, 1.16817656904453e-01, 9.93151921023180e-01)


def _fma(a: np.ndarray, b: np.ndarray | np.float32, c: np.ndarray | np.float32) -> np.ndarray:
    """float32 a * b + c rounded once (a float32 product is exact in float64)."""
    return (a.astype(np.float64) * np.float64(b) + np.asarray(c, np.float64)).astype(np.float32)


def mlas_logistic(x: np.ndarray) -> np.ndarray:
    """MLAS's float32 logistic with fused multiply-adds (its AVX2/FMA kernel)."""
    x = np.clip(x, f32(-18.0), f32(18.0)).astype(np.float32)
    x2 = (x * x).astype(np.float32)
    p = _fma(x2, f32(_ALPHA[0]), f32(_ALPHA[1]))
    for a in _ALPHA[2:]:
        p = _fma(p, x2, f32(a))
    p = (p * x).astype(np.float32)
    q = _fma(x2, f32(_BETA[0]), f32(_BETA[1]))
    for b in _BETA[2:]:
        q = _fma(q, x2, f32(b))
    return np.clip((p / q).astype(np.float32) + f32(0.5), f32(0.0), f32(1.0)).astype(np.float32)


def _identity(x: np.ndarray) -> np.ndarray:
    return x


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, f32(0.0))


def _relu6(x: np.ndarray) -> np.ndarray:
    return np.clip(x, f32(0.0), f32(6.0))


_TABLES = {"QUANTIZE": _identity, "LOGISTIC": mlas_logistic, "RELU": _relu, "RELU6": _relu6}


@ort_lowering(*_TABLES)
def lower_table(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (1,))
    x, y = req(graph, op, 0), out(graph, op)
    if x.dtype != "int8" or y.dtype != "int8" or x.num_elements != y.num_elements:
        return LOWERINGS[op.opcode].lower(graph, op)
    table = quantize_table(graph, op, x, y, _TABLES[op.opcode])
    return Lowered(
        "ort_elementwise", "mcu_table_int8_ort", "mcu_ort_table_params_t", (("table", table),)
    )


@ort_lowering("ADD", "MUL")
def lower_binary(graph: Graph, op: Operator) -> Lowered:
    a, b, y, dtype = binary_operands(graph, op, "int8", "int16", "int32", "float32")
    if dtype != "int8":
        return LOWERINGS[op.opcode].lower(graph, op)
    domain = model_domain(graph)
    sa, sb, sy = scale_of(op, a), scale_of(op, b), scale_of(op, y)
    za, zb, zy = (f32(zero_of(op, t) + domain) for t in (a, b, y))
    if op.opcode == "ADD":
        ratio_a, ratio_b = f32(sa / sy), f32(sb / sy)
        fixed = f32(zy - _fma(np.asarray(ratio_a), za, f32(ratio_b * zb)))
    else:
        ratio_a, ratio_b, fixed = f32(f32(sa * sb) / sy), f32(0.0), zy
    params: Params = (
        ("domain", domain),
        ("zero_a", int(za)),
        ("zero_b", int(zb)),
        ("ratio_a", float(ratio_a)),
        ("ratio_b", float(ratio_b)),
        ("fixed", float(fixed)),
        *activation_params(op, y),
    )
    function = f"mcu_{op.opcode.lower()}_int8_ort"
    return Lowered("ort_elementwise", function, "mcu_ort_binary_params_t", params)


def softmax_table(x_scale: np.float32, depth: int) -> tuple[float, ...]:
    """QLinearSoftmax's table: entry d is float32(exp((shift - d) * x_scale)) in double, with
    shift = max(0, log(FLT_MAX / depth) - 5) / x_scale (the sum of a row stays finite)."""
    headroom = math.log(float(f32(np.finfo(np.float32).max) / f32(depth)))
    shift = max(0.0, headroom - 5.0) / float(x_scale)
    return tuple(float(f32(math.exp((float(-d) + shift) * float(x_scale)))) for d in range(256))


@ort_lowering("SOFTMAX")
def lower_softmax(graph: Graph, op: Operator) -> Lowered:
    check_operands(op, (1,))
    x, y = req(graph, op, 0), out(graph, op)
    if x.dtype != "int8" or y.dtype != "int8":
        return LOWERINGS[op.opcode].lower(graph, op)
    if float(op.options.get("beta", 1.0)) != 1.0 or x.shape != y.shape or not x.shape:
        raise unsupported(op, "onnxruntime's numerics need beta 1 and equal shapes")
    factor = math.floor(f32(1.0) / scale_of(op, y))
    if factor < 1:
        raise unsupported(op, f"output scale {float(scale_of(op, y))} is above 1")
    params: Params = (
        ("table", Array("float", softmax_table(scale_of(op, x), x.shape[-1]))),
        ("y_factor", float(factor)),
        ("output_offset", zero_of(op, y)),
    )
    return Lowered("ort_softmax", "mcu_softmax_int8_ort", "mcu_ort_softmax_params_t", params)
