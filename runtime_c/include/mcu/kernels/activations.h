#ifndef MCU_KERNELS_ACTIVATIONS_H
#define MCU_KERNELS_ACTIVATIONS_H

#include "mcu/runtime.h"

/* RELU and RELU6. int8 RELU requantizes (input_scale / output_scale) then clamps to
 * [act_min, act_max]; int8 RELU6 only clamps the raw input to [act_min, act_max] = [zero point,
 * quantized 6] of the input, as TFLM does. */
typedef struct {
  int32_t input_zero_point;
  int32_t output_offset; /* output zero point */
  int32_t output_multiplier;
  int32_t output_shift;
  int32_t act_min;
  int32_t act_max;
} mcu_activations_params_t;

mcu_eval_t mcu_relu_int8;
mcu_eval_t mcu_relu_f32;
mcu_eval_t mcu_relu6_int8;
mcu_eval_t mcu_relu6_f32;

#endif
