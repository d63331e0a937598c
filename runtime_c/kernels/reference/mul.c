/* MUL, bit-exact with TFLM reference_integer_ops::Mul / BroadcastMul6DSlow (int8, int16),
 * reference_ops::Mul / BroadcastMul6DSlow (float32) and Mul / BroadcastMul4DSlow (int32).
 * Broadcasting follows numpy. */
#include "mcu/kernels/mul.h"

#include "mcu/binary.h"
#include "mcu/quant.h"

/* One element, clamped to the activation range of the output type. int16 offsets are 0, so the
 * product of two int16 values fits int32 as in TFLM. */
static inline __attribute__((always_inline)) int32_t mul_one(int32_t x1, int32_t x2,
                                                             const mcu_mul_params_t *p) {
  int32_t product = (p->input1_offset + x1) * (p->input2_offset + x2);
  int32_t raw = p->output_offset + mcu_mbqm(product, p->output_multiplier, p->output_shift);
  return mcu_clamp_i32(raw, p->act_min, p->act_max);
}

mcu_status_t mcu_mul_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mul_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int8_t, *y = (int8_t)mul_one(x1, x2, p));
  return MCU_OK;
}

mcu_status_t mcu_mul_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mul_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int16_t, *y = (int16_t)mul_one(x1, x2, p));
  return MCU_OK;
}

mcu_status_t mcu_mul_int32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mul_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int32_t,
                  *y = mcu_clamp_i32(mcu_wrap_mul_i32(x1, x2), p->act_min, p->act_max));
  return MCU_OK;
}

mcu_status_t mcu_mul_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mul_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, float, *y = mcu_clamp_f32(x1 * x2, p->act_min_f, p->act_max_f));
  return MCU_OK;
}
