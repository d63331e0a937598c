#ifndef MCU_KERNELS_SOFTMAX_H
#define MCU_KERNELS_SOFTMAX_H

#include "mcu/runtime.h"

/* SOFTMAX over the last dimension. Quantized parameters are TFLM's CalculateSoftmaxParams:
 * input_beta = beta * s_in as a Q5.26 multiplier, and the smallest input difference whose exp
 * still counts. */
typedef struct {
  int32_t input_multiplier; /* PreprocessSoftmaxScaling significand (int8 input) */
  int32_t input_left_shift; /* its left shift, >= 0 */
  int32_t diff_min;         /* -CalculateInputRadius(5, input_left_shift) */
  float beta;               /* float32 kernel */
} mcu_softmax_params_t;

/* int16 SOFTMAX (TFLM's SoftmaxInt16): the input difference rescaled so that -65535 is -10, and
 * two 513-entry tables computed at build time as TFLM's LUTPopulate: exp over [-10, 0] and
 * 1 / (1 + x) over [0, 1]. */
typedef struct {
  int32_t input_multiplier;
  int32_t input_left_shift; /* QuantizeMultiplier exponent: positive shifts left */
  const int16_t *exp_lut;
  const int16_t *one_over_one_plus_x_lut;
} mcu_softmax_int16_params_t;

mcu_eval_t mcu_softmax_int8;       /* int8 out */
mcu_eval_t mcu_softmax_int8_int16; /* int16 out */
mcu_eval_t mcu_softmax_int16;
mcu_eval_t mcu_softmax_f32;

#endif
