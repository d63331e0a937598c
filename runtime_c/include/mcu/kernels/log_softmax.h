#ifndef MCU_KERNELS_LOG_SOFTMAX_H
#define MCU_KERNELS_LOG_SOFTMAX_H

#include "mcu/runtime.h"

/* LOG_SOFTMAX over the last dimension. int8 parameters are TFLM's PreprocessLogSoftmaxScalingExp
 * (beta 1, Q5.26 differences) with the output fixed at scale 16/256, zero point 127. */
typedef struct {
  int32_t input_multiplier;        /* s_in * 2^26 as a multiplier above one */
  int32_t input_left_shift;        /* its left shift, >= 0 */
  int32_t reverse_scaling_divisor; /* the inverse of that factor, below one */
  int32_t reverse_scaling_shift;   /* its shift, <= 0 */
  int32_t diff_min;                /* -CalculateInputRadius(5, input_left_shift) */
} mcu_log_softmax_params_t;

mcu_eval_t mcu_log_softmax_int8;
mcu_eval_t mcu_log_softmax_f32;

#endif
