/* DIV (int32), bit-exact with TFLM reference_ops::Div / BroadcastDivSlow for int32: a / b in C,
 * then ActivationFunctionWithMinMax. Broadcasting follows numpy. */
#include "mcu/kernels/div.h"

#include "mcu/binary.h"

mcu_status_t mcu_div_int32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_div_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int32_t, {
    MCU_ENSURE(x2 != 0 && !(x1 == INT32_MIN && x2 == -1), MCU_ERR_INPUT); /* data */
    *y = mcu_clamp_i32(x1 / x2, p->act_min, p->act_max);
  });
  return MCU_OK;
}
