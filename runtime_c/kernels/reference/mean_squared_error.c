/* Mean squared error and its gradient (mcu/kernels/mean_squared_error.h), summed in element
 * order. */
#include "mcu/kernels/mean_squared_error.h"

mcu_status_t mcu_mean_squared_error_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_ENSURE_MODEL(node->num_inputs == 2 && node->num_outputs == 2, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *pred_t = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *target_t = mcu_input_tensor(ctx, node, 1);
  MCU_ENSURE_MODEL(pred_t != NULL && target_t != NULL, MCU_ERR_BAD_MODEL);
  const int32_t n = mcu_num_elements(pred_t);
  MCU_ENSURE_MODEL(n > 0 && mcu_num_elements(target_t) == n, MCU_ERR_BAD_MODEL);
  const float *pred = mcu_input(ctx, node, 0);
  const float *target = mcu_input(ctx, node, 1);
  float *loss = mcu_output(ctx, node, 0);
  float *grad = mcu_output(ctx, node, 1);
  const float scale = 1.0f / (float)n;
  float total = 0.0f;
  for (int32_t i = 0; i < n; ++i) {
    float d = pred[i] - target[i];
    total += d * d;
    grad[i] = 2.0f * d * scale;
  }
  loss[0] = total * scale;
  return MCU_OK;
}
