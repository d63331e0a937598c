#ifndef MCU_KERNELS_DEQUANTIZE_H
#define MCU_KERNELS_DEQUANTIZE_H

#include "mcu/runtime.h"

typedef struct {
  float scale; /* input scale */
  int32_t zero_point;
} mcu_dequantize_params_t;

/* int8 / int16 / uint8 (the input tensor's type) -> float32. */
mcu_eval_t mcu_dequantize;

#endif
