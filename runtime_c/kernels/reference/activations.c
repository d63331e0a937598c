/* RELU and RELU6, bit-exact with TFLM's ReluQuantized / Relu6Quantized (int8) and ReluFloat /
 * Relu6Float (float32) in micro/kernels/activations. */
#include "mcu/kernels/activations.h"

#include "mcu/quant.h"

static mcu_status_t act_size(const mcu_node_t *node, const mcu_context_t *ctx, int32_t *n) {
  MCU_ENSURE_MODEL(node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL, MCU_ERR_BAD_MODEL);
  *n = mcu_num_elements(input);
  MCU_ENSURE_MODEL(*n == mcu_num_elements(mcu_output_tensor(ctx, node, 0)), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

mcu_status_t mcu_relu_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_activations_params_t *p = node->params;
  int32_t n;
  MCU_TRY(act_size(node, ctx, &n));
  const int8_t *x = mcu_input(ctx, node, 0);
  int8_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    int32_t v = p->output_offset +
                mcu_mbqm(x[i] - p->input_zero_point, p->output_multiplier, p->output_shift);
    y[i] = (int8_t)mcu_clamp_i32(v, p->act_min, p->act_max);
  }
  return MCU_OK;
}

mcu_status_t mcu_relu6_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_activations_params_t *p = node->params;
  int32_t n;
  MCU_TRY(act_size(node, ctx, &n));
  const int8_t *x = mcu_input(ctx, node, 0);
  int8_t *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    int32_t v = x[i];
    y[i] = (int8_t)(v > p->act_max ? p->act_max : (v < p->act_min ? p->act_min : v));
  }
  return MCU_OK;
}

mcu_status_t mcu_relu_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  int32_t n;
  MCU_TRY(act_size(node, ctx, &n));
  const float *x = mcu_input(ctx, node, 0);
  float *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = x[i] < 0.0f ? 0.0f : x[i];
  }
  return MCU_OK;
}

mcu_status_t mcu_relu6_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  int32_t n;
  MCU_TRY(act_size(node, ctx, &n));
  const float *x = mcu_input(ctx, node, 0);
  float *y = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    float v = x[i];
    y[i] = v > 6.0f ? 6.0f : (v < 0.0f ? 0.0f : v);
  }
  return MCU_OK;
}
