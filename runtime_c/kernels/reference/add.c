/* ADD, bit-exact with TFLM reference_integer_ops::Add / BroadcastAdd6DSlow (int8; int16 with
 * left_shift 15, TFLM's AddGeneralParamScale) and reference_ops::Add / BroadcastAdd6DSlow (int32,
 * wrapping; float32). Broadcasting follows numpy. */
#include "mcu/kernels/add.h"

#include "mcu/binary.h"
#include "mcu/quant.h"

/* One element, clamped to the activation range of the output type (int8 or int16). Always
 * inlined, so that the int8 loop compiles as before the int16 one shared it (as a call it cost
 * the bundled model's ADD 1.7 % more instructions). */
static inline __attribute__((always_inline)) int32_t add_one(int32_t x1, int32_t x2,
                                                             const mcu_add_params_t *p) {
  int32_t shifted1 = mcu_wrap_mul_i32(p->input1_offset + x1, (int32_t)1 << p->left_shift);
  int32_t shifted2 = mcu_wrap_mul_i32(p->input2_offset + x2, (int32_t)1 << p->left_shift);
  int32_t scaled1 = mcu_mbqm_smaller_than_one(shifted1, p->input1_multiplier, p->input1_shift);
  int32_t scaled2 = mcu_mbqm_smaller_than_one(shifted2, p->input2_multiplier, p->input2_shift);
  int32_t raw = mcu_mbqm_smaller_than_one(scaled1 + scaled2, p->output_multiplier,
                                          p->output_shift) +
                p->output_offset;
  return mcu_clamp_i32(raw, p->act_min, p->act_max);
}

mcu_status_t mcu_add_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_add_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int8_t, *y = (int8_t)add_one(x1, x2, p));
  return MCU_OK;
}

mcu_status_t mcu_add_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_add_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int16_t, *y = (int16_t)add_one(x1, x2, p));
  return MCU_OK;
}

mcu_status_t mcu_add_int32(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_BINARY_EACH(node, ctx, int32_t, *y = (int32_t)((uint32_t)x1 + (uint32_t)x2));
  return MCU_OK;
}

mcu_status_t mcu_add_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_add_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, float, *y = mcu_clamp_f32(x1 + x2, p->act_min_f, p->act_max_f));
  return MCU_OK;
}
