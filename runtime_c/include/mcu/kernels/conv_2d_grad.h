#ifndef MCU_KERNELS_CONV_2D_GRAD_H
#define MCU_KERNELS_CONV_2D_GRAD_H

#include "mcu/kernels/sgd.h"
#include "mcu/runtime.h"
#include "mcu/window.h"

/* The backward pass of a float32 CONV_2D y = act(conv(x, W) + b) (mcugen/train/), with the
 * update of W folded in. Inputs: dy (y's shape), x [N,H,W,C], W [O,KH,KW,C/groups],
 * y [N,OH,OW,O], then W's accumulated gradient and momentum (variables, each -1 when not kept)
 * and `apply` (int32 [1]), the last three -1 when W does not train. Outputs, in this order, those
 * the flags ask for: db [O], dx (x's shape). The window (strides, dilations, padding before) is
 * the forward operator's, as mcu_conv_2d_params_t holds it; output channel o reads the input
 * channels of group o / (O / groups). The fused activation's gradient is taken from y: dy passes
 * where act_min_f < y < act_max_f. With update_w, dx is computed first (from the weights as they
 * were), then each output channel's dW, in a scratch of KH*KW*C/groups floats, goes through the
 * SGD step of mcu/kernels/sgd.h: no whole dW exists. */
typedef struct {
  mcu_window_params_t win;
  mcu_grad_layer_params_t layer;
} mcu_conv_2d_grad_params_t;

mcu_eval_t mcu_conv_2d_grad_f32;

#endif
