#ifndef MCU_KERNELS_MUL_H
#define MCU_KERNELS_MUL_H

#include "mcu/runtime.h"

/* MUL with numpy broadcasting. int8: (x1 - zp1) * (x2 - zp2) rescaled by
 * input1_scale * input2_scale / output_scale. */
typedef struct {
  int32_t input1_offset; /* -input1 zero point */
  int32_t input2_offset; /* -input2 zero point */
  int32_t output_offset; /* output zero point */
  int32_t output_multiplier;
  int32_t output_shift; /* positive shifts left */
  int32_t act_min;
  int32_t act_max;
  float act_min_f;
  float act_max_f;
} mcu_mul_params_t;

mcu_eval_t mcu_mul_int8;
mcu_eval_t mcu_mul_int16; /* zero points 0 */
/* int32: the wrapping product clamped to [act_min, act_max] (offsets and multiplier unused) */
mcu_eval_t mcu_mul_int32;
mcu_eval_t mcu_mul_f32;

#endif
