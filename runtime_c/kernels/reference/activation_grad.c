/* Backward clamp activations (mcu/kernels/activation_grad.h). */
#include "mcu/kernels/activation_grad.h"

mcu_status_t mcu_activation_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_activation_grad_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *y_t = mcu_input_tensor(ctx, node, 1);
  MCU_ENSURE_MODEL(y_t != NULL, MCU_ERR_BAD_MODEL);
  const int32_t n = mcu_num_elements(y_t);
  const float *dy = mcu_input(ctx, node, 0);
  const float *y = mcu_input(ctx, node, 1);
  float *dx = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < n; ++i) {
    dx[i] = (y[i] > p->lo && y[i] < p->hi) ? dy[i] : 0.0f;
  }
  return MCU_OK;
}
