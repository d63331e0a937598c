#ifndef MCU_KERNELS_ORT_ELEMENTWISE_H
#define MCU_KERNELS_ORT_ELEMENTWISE_H

#include <math.h>

#include "mcu/runtime.h"

/* ADD and MUL as onnxruntime's QLinearAdd and QLinearMul compute them (`--onnx-numerics ort`,
 * docs/onnx.md), numpy broadcasting. Both work on the uint8 values onnxruntime computes on
 * (it converts int8 activations to uint8 first): `domain` (128) is added to each stored operand
 * first and taken off the result.
 * ADD: y = a * ratio_a + (b * ratio_b + fixed), each step a fused multiply-add (MLAS's AVX2
 * kernel), with ratio_a = s_a / s_y, ratio_b = s_b / s_y and fixed = z_y - (ratio_a * z_a +
 * ratio_b * z_b) computed at build time in float32; rounded half to even, clamped.
 * MUL: y = float((a - z_a) * (b - z_b)) * ratio + z_y (no fused step), ratio = s_a * s_b / s_y
 * in float32; rounded half to even, clamped. */
typedef struct {
  int32_t domain;
  int32_t zero_a; /* MUL: the operands' zero points as onnxruntime's uint8 values */
  int32_t zero_b;
  float ratio_a; /* ADD: the operands' ratios; MUL: ratio_a is the product's */
  float ratio_b;
  float fixed; /* ADD: the constant term; MUL: the output zero point */
  int32_t act_min; /* as stored (int8) */
  int32_t act_max;
} mcu_ort_binary_params_t;

mcu_status_t mcu_add_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);
mcu_status_t mcu_mul_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);

/* One element before rounding, from the stored operands x1, x2: what the reference kernels and
 * the optimised ones (kernels/opt/ort_binary_s8.c) both compute, so that they round the same
 * float. */
static inline float mcu_ort_add_value(const mcu_ort_binary_params_t *p, int32_t x1, int32_t x2) {
  float a = (float)(x1 + p->domain);
  float b = (float)(x2 + p->domain);
  return fmaf(a, p->ratio_a, fmaf(b, p->ratio_b, p->fixed));
}

static inline float mcu_ort_mul_value(const mcu_ort_binary_params_t *p, int32_t x1, int32_t x2) {
  int32_t product = (x1 + p->domain - p->zero_a) * (x2 + p->domain - p->zero_b);
  float scaled = (float)product * p->ratio_a;
  return scaled + p->fixed;
}

/* Optimised ADD and MUL (mcugen/codegen/lower/ort_binary_opt.py), byte for byte the reference
 * kernels' where the build proved |value| < 2^21 for every operand pair (so rounding as
 * mcu_ort_round_narrow does is nearbyintf's): operands of the output's shape, or of its trailing
 * dimensions (a channel vector, a scalar) read cyclically, without a broadcast offset an element;
 * any other broadcast as the reference kernels walk it. In place too. Parameters
 * mcu_ort_binary_params_t. */
mcu_eval_t mcu_add_s8_ort;
mcu_eval_t mcu_mul_s8_ort;

/* An int8 -> int8 function of one element as a table of its 256 results, indexed by the input
 * plus 128, built at build time in float32 as onnxruntime builds it (QUANTIZE: QLinearConcat's
 * requantisation and QuantizeLinear of a DequantizeLinear; LOGISTIC: QLinearSigmoid's table,
 * MLAS's logistic; RELU, RELU6: DequantizeLinear, the clip, QuantizeLinear). In place too. */
typedef struct {
  const int8_t *table;
} mcu_ort_table_params_t;

mcu_status_t mcu_table_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);

#endif
