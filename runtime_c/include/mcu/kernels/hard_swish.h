#ifndef MCU_KERNELS_HARD_SWISH_H
#define MCU_KERNELS_HARD_SWISH_H

#include "mcu/runtime.h"

/* HARD_SWISH: y = x * relu6(x + 3) / 6. int8 runs TFLM's 16-bit fixed-point pipeline: the input
 * on a "hires" scale (input_scale / 128), a "reluish" factor in [0, 1], their product rescaled. */
typedef struct {
  int32_t input_zero_point;
  int32_t output_zero_point;
  int32_t output_multiplier; /* int16 fixed-point multiplier, hires_scale / output_scale */
  int32_t output_exponent; /* <= 0 */
  int32_t reluish_multiplier; /* int16 fixed-point multiplier, hires_scale / (3 / 32768) */
  int32_t reluish_exponent;
} mcu_hard_swish_params_t;

mcu_eval_t mcu_hard_swish_int8;
mcu_eval_t mcu_hard_swish_f32;

#endif
