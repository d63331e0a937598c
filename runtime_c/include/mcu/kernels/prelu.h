#ifndef MCU_KERNELS_PRELU_H
#define MCU_KERNELS_PRELU_H

#include "mcu/runtime.h"

/* PRELU: y = x >= 0 ? x : alpha * x, alpha (input 1) broadcast to the input's shape (numpy). int8
 * rescales the two branches with their own multipliers. */
typedef struct {
  int32_t input_offset; /* -input zero point */
  int32_t alpha_offset; /* -alpha zero point */
  int32_t output_offset; /* output zero point */
  int32_t identity_multiplier; /* input_scale / output_scale */
  int32_t identity_shift;
  int32_t alpha_multiplier; /* input_scale * alpha_scale / output_scale */
  int32_t alpha_shift;
} mcu_prelu_params_t;

mcu_eval_t mcu_prelu_int8;
mcu_eval_t mcu_prelu_f32;

#endif
