#ifndef MCU_KERNELS_FULLY_CONNECTED_GRAD_H
#define MCU_KERNELS_FULLY_CONNECTED_GRAD_H

#include "mcu/kernels/sgd.h"
#include "mcu/runtime.h"

/* The backward pass of a float32 FULLY_CONNECTED y = act(x W^T + b) (mcugen/train/), with the
 * update of W folded in. Inputs: dy (y's shape), x, W [out, in], y, then W's accumulated
 * gradient and momentum (variables, each -1 when not kept) and `apply` (int32 [1]), the last
 * three -1 when W does not train. Outputs, in this order, those the flags ask for: db [out], dx
 * (x's shape). The fused activation's gradient is taken from y: dy passes where
 * act_min_f < y < act_max_f (relu: y > 0). With update_w, dx is computed first (from the weights
 * as they were), then each output channel's row of dW, in a scratch of `in` floats, goes through
 * the SGD step of mcu/kernels/sgd.h: no whole dW exists. */
typedef mcu_grad_layer_params_t mcu_fully_connected_grad_params_t;

mcu_eval_t mcu_fully_connected_grad_f32;

#endif
