/* DIV (int32), bit-exact with TFLM reference_ops::Div / BroadcastDivSlow for int32: a / b in C,
 * then ActivationFunctionWithMinMax. Broadcasting follows numpy. */
#include "mcu/kernels/div.h"

#include "mcu/binary.h"

mcu_status_t mcu_div_int32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_div_params_t *p = node->params;
  mcu_binary_shapes_t s;
  MCU_TRY(mcu_binary_shapes(node, ctx, &s));
  const int32_t *a = mcu_input(ctx, node, 0);
  const int32_t *b = mcu_input(ctx, node, 1);
  int32_t *y = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(s.y);
  for (int32_t i = 0; i < n; ++i) {
    int32_t x1 = a[mcu_binary_offset(s.a, s.y, i)];
    int32_t x2 = b[mcu_binary_offset(s.b, s.y, i)];
    MCU_ENSURE(x2 != 0 && !(x1 == INT32_MIN && x2 == -1), MCU_ERR_INPUT); /* data */
    y[i] = mcu_clamp_i32(x1 / x2, p->act_min, p->act_max);
  }
  return MCU_OK;
}
