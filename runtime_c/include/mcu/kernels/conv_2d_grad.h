#ifndef MCU_KERNELS_CONV_2D_GRAD_H
#define MCU_KERNELS_CONV_2D_GRAD_H

#include "mcu/runtime.h"

/* The backward pass of a float32 CONV_2D y = act(conv(x, W) + b) (mcugen/train/).
 * Inputs: dy (y's shape), x [N,H,W,C], W [O,KH,KW,C/groups], y [N,OH,OW,O]. Outputs, in this
 * order, those the flags ask for: dW (W's shape), db [O], dx (x's shape). The window (strides,
 * dilations, padding before) is the forward operator's, as mcu_conv_2d_params_t holds it; output
 * channel o reads the input channels of group o / (O / groups). The fused activation's gradient
 * is taken from y: dy passes where act_min_f < y < act_max_f. */
typedef struct {
  int32_t stride_w;
  int32_t stride_h;
  int32_t dilation_w;
  int32_t dilation_h;
  int32_t pad_w;
  int32_t pad_h;
  float act_min_f;
  float act_max_f;
  int32_t has_dw;
  int32_t has_db;
  int32_t has_dx;
} mcu_conv_2d_grad_params_t;

mcu_status_t mcu_conv_2d_grad_f32(const mcu_node_t *node, mcu_context_t *ctx);

#endif
