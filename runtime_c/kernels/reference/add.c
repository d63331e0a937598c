/* ADD, bit-exact with TFLM reference_integer_ops::Add / BroadcastAdd6DSlow (int8; int16 with
 * left_shift 15, TFLM's AddGeneralParamScale) and reference_ops::Add / BroadcastAdd6DSlow (int32,
 * wrapping; float32). Broadcasting follows numpy. */
#include "mcu/kernels/add.h"

#include "mcu/binary.h"
#include "mcu/quant.h"

mcu_status_t mcu_add_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_add_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int8_t, *y = (int8_t)mcu_add_sub_one(x1, x2, p, 1));
  return MCU_OK;
}

mcu_status_t mcu_add_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_add_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int16_t, *y = (int16_t)mcu_add_sub_one(x1, x2, p, 1));
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
