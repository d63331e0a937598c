#ifndef MCU_KERNELS_FULLY_CONNECTED_GRAD_H
#define MCU_KERNELS_FULLY_CONNECTED_GRAD_H

#include "mcu/runtime.h"

/* The backward pass of a float32 FULLY_CONNECTED y = act(x W^T + b) (mcugen/train/).
 * Inputs: dy (y's shape), x, W [out, in], y. Outputs, in this order, those the flags ask for:
 * dW [out, in], db [out], dx (x's shape). The fused activation's gradient is taken from y:
 * dy passes where act_min_f < y < act_max_f (relu: y > 0). */
typedef struct {
  float act_min_f;
  float act_max_f;
  int32_t has_dw;
  int32_t has_db;
  int32_t has_dx;
} mcu_fully_connected_grad_params_t;

mcu_status_t mcu_fully_connected_grad_f32(const mcu_node_t *node, mcu_context_t *ctx);

#endif
