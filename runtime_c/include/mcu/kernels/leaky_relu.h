#ifndef MCU_KERNELS_LEAKY_RELU_H
#define MCU_KERNELS_LEAKY_RELU_H

#include "mcu/runtime.h"

/* LEAKY_RELU: y = x > 0 ? x : alpha * x. int8 rescales each branch with its own multiplier; a
 * negative alpha is applied as a positive multiplier and a negated result, as TFLM does. */
typedef struct {
  int32_t input_zero_point;
  int32_t output_offset; /* output zero point */
  int32_t identity_multiplier; /* input_scale / output_scale */
  int32_t identity_shift;
  int32_t alpha_multiplier; /* |input_scale * alpha / output_scale| */
  int32_t alpha_shift;
  int32_t alpha_negative; /* 1 when alpha < 0 */
  float alpha;
} mcu_leaky_relu_params_t;

mcu_eval_t mcu_leaky_relu_int8;
mcu_eval_t mcu_leaky_relu_int16; /* zero points 0 */
mcu_eval_t mcu_leaky_relu_f32;

#endif
