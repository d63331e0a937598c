#ifndef MCU_KERNELS_DEPTHWISE_CONV_2D_GRAD_H
#define MCU_KERNELS_DEPTHWISE_CONV_2D_GRAD_H

#include "mcu/runtime.h"
#include "mcu/window.h"

/* The backward pass of a float32 DEPTHWISE_CONV_2D y = act(dwconv(x, W) + b) (mcugen/train/).
 * Inputs: dy (y's shape), x [N,H,W,C], W [1,KH,KW,C*M], y [N,OH,OW,C*M] with M the depth
 * multiplier (output channel c*M+m reads input channel c). Outputs, in this order, those the
 * flags ask for: dW (W's shape), db [C*M], dx (x's shape). The window is the forward operator's,
 * as mcu_depthwise_conv_2d_params_t holds it. The fused activation's gradient is taken from y:
 * dy passes where act_min_f < y < act_max_f. */
typedef struct {
  mcu_window_params_t win;
  int32_t depth_multiplier;
  float act_min_f;
  float act_max_f;
  int32_t has_dw;
  int32_t has_db;
  int32_t has_dx;
} mcu_depthwise_conv_2d_grad_params_t;

mcu_eval_t mcu_depthwise_conv_2d_grad_f32;

#endif
