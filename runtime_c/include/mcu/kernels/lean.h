/* The lean optimised variants (kernels/opt/..._lean.c, mcugen/codegen/lower/opt_lean.py): the
 * rungs between a fast variant and the reference kernel on the ladder of kernels chosen for
 * memory (mcugen/kernel_choice.py). Slower than the fast variants, faster than the reference
 * kernels, with no scratch. */
#ifndef MCU_KERNELS_LEAN_H
#define MCU_KERNELS_LEAN_H

#include "mcu/runtime.h"

/* DEPTHWISE_CONV_2D int8, depth multiplier 1, any filter size, stride, dilation and padding
 * (mcu_depthwise_conv_2d_params_t): no scratch, not in place. */
mcu_eval_t mcu_depthwise_conv_2d_s8_lean;
/* CONV_2D int8 with a 1x1 filter, stride 1 and one group (mcu_mat_mult_s8_params_t, without a
 * `stream`): one pixel at a time read as it is, no scratch, not in place. */
mcu_eval_t mcu_conv_2d_1x1_s8_lean;

#endif
