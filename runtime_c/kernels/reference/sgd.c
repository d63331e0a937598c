/* SGD with momentum, weight decay and gradient accumulation (mcu/kernels/sgd.h). */
#include "mcu/kernels/sgd.h"

mcu_status_t mcu_sgd_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_sgd_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 5 && node->num_outputs == 0, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *w_t = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(w_t != NULL, MCU_ERR_BAD_MODEL);
  const int32_t n = mcu_num_elements(w_t);
  float *w = (float *)mcu_input(ctx, node, 0); /* a variable: the kernel updates it */
  const float *g = mcu_input(ctx, node, 1);
  float *acc = (float *)mcu_input(ctx, node, 2);
  float *mom = (float *)mcu_input(ctx, node, 3);
  const int32_t apply = *(const int32_t *)mcu_input(ctx, node, 4);
  MCU_ENSURE(apply >= 0 && (acc != NULL || apply <= 1), MCU_ERR_INPUT);
  if (apply == 0 && acc == NULL) {
    return MCU_OK;
  }
  const float count = (float)apply;
  for (int32_t i = 0; i < n; ++i) {
    float grad = g[i];
    if (acc != NULL) {
      float sum = acc[i] + grad;
      if (apply == 0) {
        acc[i] = sum;
        continue;
      }
      acc[i] = 0.0f;
      grad = sum / count;
    }
    grad = grad + p->weight_decay * w[i];
    if (mom != NULL) {
      mom[i] = p->momentum * mom[i] + grad;
      grad = mom[i];
    }
    w[i] = w[i] - p->learning_rate * grad;
  }
  return MCU_OK;
}
