/* SUB, bit-exact with TFLM reference_ops::Sub / BroadcastQuantSubSlow (int8; int16 with
 * left_shift 15) and SubWithActivation / BroadcastSubSlow (float32). Broadcasting follows numpy. */
#include "mcu/kernels/sub.h"

#include "mcu/binary.h"
#include "mcu/quant.h"

mcu_status_t mcu_sub_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_sub_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int8_t, *y = (int8_t)mcu_add_sub_one(x1, x2, p, -1));
  return MCU_OK;
}

mcu_status_t mcu_sub_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_sub_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int16_t, *y = (int16_t)mcu_add_sub_one(x1, x2, p, -1));
  return MCU_OK;
}

mcu_status_t mcu_sub_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_sub_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, float, *y = mcu_clamp_f32(x1 - x2, p->act_min_f, p->act_max_f));
  return MCU_OK;
}
