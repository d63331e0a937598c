#ifndef MCU_KERNELS_DEPTHWISE_CONV_2D_H
#define MCU_KERNELS_DEPTHWISE_CONV_2D_H

#include "mcu/requant_params.h"
#include "mcu/runtime.h"
#include "mcu/window.h"

/* DEPTHWISE_CONV_2D parameters. Tensors: input [N,H,W,C], filter [1,KH,KW,C*M], optional bias
 * [C*M], output [N,OH,OW,C*M] with M = depth_multiplier; output channel c*M+m reads input c. */
typedef struct {
  mcu_window_params_t win;
  int32_t depth_multiplier;
  mcu_requant_params_t rq;
} mcu_depthwise_conv_2d_params_t;

mcu_eval_t mcu_depthwise_conv_2d_int8;
/* int16 input and output (zero points 0), int8 filter, int64 bias or none. */
mcu_eval_t mcu_depthwise_conv_2d_int16;
mcu_eval_t mcu_depthwise_conv_2d_f32;
/* Optimised variant (kernels/opt/depthwise_conv_2d_s8.c): int8, depth multiplier 1, dilation 1,
 * at most 16 filter rows, sums small enough for its requantisation (mcugen/codegen/lower/
 * opt_depthwise.py); the same parameters. In place too. */
mcu_eval_t mcu_depthwise_conv_2d_s8_opt;
/* Its 3x3 path with a scratch of at most one channel plane (kernels/opt/
 * depthwise_conv_2d_s8_ring.c, mcugen/codegen/lower/opt_depthwise_ring.py): one channel at a
 * time over a ring of its lines; the same parameters, in place too. */
mcu_eval_t mcu_depthwise_conv_2d_s8_ring;

#endif
