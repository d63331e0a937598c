/* PRELU, bit-exact with TFLM reference_ops::BroadcastPrelu4DSlow (int8) and
 * BroadcastPrelu4DSlowFloat (float32). Broadcasting follows numpy. */
#include "mcu/kernels/prelu.h"

#include "mcu/binary.h"

static int8_t prelu_one_int8(int8_t x, int8_t alpha, const mcu_prelu_params_t *p) {
  int32_t input = p->input_offset + x;
  int32_t out;
  if (input >= 0) {
    out = mcu_mbqm(input, p->identity_multiplier, p->identity_shift);
  } else {
    out = mcu_mbqm(input * (p->alpha_offset + alpha), p->alpha_multiplier, p->alpha_shift);
  }
  return (int8_t)mcu_clamp_i32(out + p->output_offset, INT8_MIN, INT8_MAX);
}

mcu_status_t mcu_prelu_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_prelu_params_t *p = node->params;
  mcu_binary_shapes_t s; /* a: the input, b: alpha */
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  const int8_t *x = mcu_input(ctx, node, 0);
  const int8_t *alpha = mcu_input(ctx, node, 1);
  int8_t *y = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(s.y);
  for (int32_t i = 0; i < n; ++i) {
    y[i] = prelu_one_int8(x[mcu_binary_offset(s.a, s.y, i)], alpha[mcu_binary_offset(s.b, s.y, i)], p);
  }
  return MCU_OK;
}

mcu_status_t mcu_prelu_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_binary_shapes_t s; /* a: the input, b: alpha */
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  const float *x = mcu_input(ctx, node, 0);
  const float *alpha = mcu_input(ctx, node, 1);
  float *y = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(s.y);
  for (int32_t i = 0; i < n; ++i) {
    float v = x[mcu_binary_offset(s.a, s.y, i)];
    y[i] = v >= 0.0f ? v : v * alpha[mcu_binary_offset(s.b, s.y, i)];
  }
  return MCU_OK;
}
