/* LOGISTIC, bit-exact with TFLM reference_integer_ops::Logistic (int8, gemmlowp fixed point;
 * int16, interpolated sigmoid table) and reference_ops::Logistic (float32, with its cut-offs). */
#include "mcu/kernels/logistic.h"

#include <math.h>

#include "mcu/quant.h"

static mcu_status_t element_count(const mcu_node_t *node, const mcu_context_t *ctx,
                                  int32_t *size) {
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL, MCU_ERR_BAD_MODEL);
  *size = mcu_num_elements(input);
  /* the lowering does not compare the element counts */
  MCU_ENSURE(*size == mcu_num_elements(mcu_output_tensor(ctx, node, 0)), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* gemmlowp::logistic on a value with `integer_bits` integer bits; result in Q0.31. */
static int32_t logistic_fixed(int32_t a, int integer_bits) {
  if (a == 0) {
    return (int32_t)1 << 30;
  }
  int32_t magnitude = a > 0 ? a : -a;
  int32_t e = mcu_fp_exp_on_negative_values(-magnitude, integer_bits);
  int32_t half_denominator = mcu_rounding_half_sum(e, INT32_MAX);
  /* 1 / (1 + e): the Q2.29 reciprocal of the half sum, halved, back to Q0.31 */
  int32_t positive = mcu_sat_shl_i32(mcu_fp_reciprocal_of_half_sum(half_denominator), 1);
  return a > 0 ? positive : INT32_MAX - positive;
}

static int8_t logistic_int8(int8_t q, const mcu_logistic_params_t *p) {
  int32_t centered = (int32_t)q - p->input_zero_point;
  if (centered <= -p->input_range_radius) {
    return INT8_MIN;
  }
  if (centered >= p->input_range_radius) {
    return INT8_MAX;
  }
  int32_t in_q4 = mcu_mbqm(centered, p->input_multiplier, p->input_left_shift);
  int32_t out = mcu_rdbpot(logistic_fixed(in_q4, 4), 23) - 128;
  return (int8_t)mcu_clamp_i32(out, INT8_MIN, INT8_MAX);
}

mcu_status_t mcu_logistic_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  int32_t size = 0;
  MCU_TRY(element_count(node, ctx, &size));
  const float *input = mcu_input(ctx, node, 0);
  float *output = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < size; ++i) {
    output[i] = mcu_sigmoid_f32(input[i]);
  }
  return MCU_OK;
}

mcu_status_t mcu_logistic_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_logistic_params_t *p = node->params;
  int32_t size = 0;
  MCU_TRY(element_count(node, ctx, &size));
  const int8_t *input = mcu_input(ctx, node, 0);
  int8_t *output = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < size; ++i) {
    output[i] = logistic_int8(input[i], p);
  }
  return MCU_OK;
}

/* One int16 value: |x| interpolated in the table (9 fraction bits), mirrored for x < 0. */
static int16_t logistic_int16(int32_t v, const uint16_t *table) {
  uint32_t a = (uint32_t)(v < 0 ? -v : v);
  uint32_t uh = a >> 9;
  uint32_t result = (uint32_t)0x7FFF << 10;
  if (uh < 255) {
    uint32_t ua = table[uh];
    uint32_t ub = table[uh + 1];
    result = (ua << 9) + (a & 0x1ff) * (ub - ua);
  }
  result = v >= 0 ? result + (1u << 9) : ((uint32_t)1 << 25) - result + (1u << 9) - 1u;
  return (int16_t)(result >> 10);
}

mcu_status_t mcu_logistic_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_logistic_int16_params_t *p = node->params;
  int32_t size = 0;
  MCU_TRY(element_count(node, ctx, &size));
  const int16_t *input = mcu_input(ctx, node, 0);
  int16_t *output = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < size; ++i) {
    int32_t v = mcu_sigmoid_table_input(input[i], p->input_multiplier, p->input_left_shift);
    output[i] = logistic_int16(v, p->sigmoid_table);
  }
  return MCU_OK;
}
