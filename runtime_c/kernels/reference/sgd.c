/* SGD with momentum, weight decay and gradient accumulation (mcu/kernels/sgd.h). */
#include "mcu/kernels/sgd.h"

mcu_status_t mcu_sgd_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_ENSURE_MODEL(node->num_inputs == 5 && node->num_outputs == 0, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *w_t = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(w_t != NULL, MCU_ERR_BAD_MODEL);
  float *acc = (float *)mcu_input(ctx, node, 2);
  const int32_t apply = *(const int32_t *)mcu_input(ctx, node, 4);
  MCU_ENSURE(apply >= 0 && (acc != NULL || apply <= 1), MCU_ERR_INPUT);
  if (apply == 0 && acc == NULL) {
    return MCU_OK;
  }
  /* the parameter is a variable: the kernel updates it */
  mcu_sgd_step(node->params, (float *)mcu_input(ctx, node, 0), mcu_input(ctx, node, 1), acc,
               (float *)mcu_input(ctx, node, 3), mcu_num_elements(w_t), apply);
  return MCU_OK;
}
