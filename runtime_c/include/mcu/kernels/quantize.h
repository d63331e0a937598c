#ifndef MCU_KERNELS_QUANTIZE_H
#define MCU_KERNELS_QUANTIZE_H

#include "mcu/runtime.h"

typedef struct {
  float scale;               /* output scale (float input) */
  int32_t input_zero_point;  /* integer input only */
  int32_t output_zero_point;
  int32_t multiplier; /* integer input: QuantizeMultiplier(input scale / output scale) */
  int32_t shift;      /* TFLM exponent: positive shifts left */
} mcu_quantize_params_t;

/* float32 -> int8 / int16 (the output tensor's type). */
mcu_eval_t mcu_quantize_f32;
/* Requantization between integer types: int8, uint8, int16, int32 (pairs as TFLM allows). */
mcu_eval_t mcu_quantize_requantize;

#endif
