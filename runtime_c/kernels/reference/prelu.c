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

/* The operands: x1 the input, x2 alpha. */
mcu_status_t mcu_prelu_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_prelu_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int8_t, *y = prelu_one_int8(x1, x2, p));
  return MCU_OK;
}

mcu_status_t mcu_prelu_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_BINARY_EACH(node, ctx, float, *y = x1 >= 0.0f ? x1 : x1 * x2);
  return MCU_OK;
}
