/* LEAKY_RELU, bit-exact with TFLM reference_ops::QuantizeLeakyRelu (int8, int16) and LeakyRelu
 * (float32). */
#include "mcu/kernels/leaky_relu.h"

#include "mcu/quant.h"

static mcu_status_t leaky_size(const mcu_node_t *node, const mcu_context_t *ctx, int32_t *n) {
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  *n = mcu_num_elements(mcu_input_tensor(ctx, node, 0));
  MCU_ENSURE_MODEL(*n == mcu_num_elements(mcu_output_tensor(ctx, node, 0)), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* One element, before the clamp to the output type. */
static inline __attribute__((always_inline)) int32_t leaky_one(int32_t x,
                                                               const mcu_leaky_relu_params_t *p) {
  int32_t input = x - p->input_zero_point;
  int32_t out = p->output_offset;
  if (input >= 0) {
    out += mcu_mbqm(input, p->identity_multiplier, p->identity_shift);
  } else {
    int32_t scaled = mcu_mbqm(input, p->alpha_multiplier, p->alpha_shift);
    out += p->alpha_negative ? -scaled : scaled;
  }
  return out;
}

mcu_status_t mcu_leaky_relu_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_leaky_relu_params_t *p = node->params;
  int32_t n;
  MCU_TRY(leaky_size(node, ctx, &n));
  const int8_t *x = mcu_input(ctx, node, 0);
  int8_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = (int8_t)mcu_clamp_i32(leaky_one(x[i], p), INT8_MIN, INT8_MAX);
  }
  return MCU_OK;
}

mcu_status_t mcu_leaky_relu_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_leaky_relu_params_t *p = node->params;
  int32_t n;
  MCU_TRY(leaky_size(node, ctx, &n));
  const int16_t *x = mcu_input(ctx, node, 0);
  int16_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = (int16_t)mcu_clamp_i32(leaky_one(x[i], p), INT16_MIN, INT16_MAX);
  }
  return MCU_OK;
}

mcu_status_t mcu_leaky_relu_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_leaky_relu_params_t *p = node->params;
  int32_t n;
  MCU_TRY(leaky_size(node, ctx, &n));
  const float *x = mcu_input(ctx, node, 0);
  float *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = x[i] > 0.0f ? x[i] : x[i] * p->alpha;
  }
  return MCU_OK;
}
