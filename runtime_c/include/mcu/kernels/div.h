#ifndef MCU_KERNELS_DIV_H
#define MCU_KERNELS_DIV_H

#include "mcu/runtime.h"

/* DIV of int32 values with numpy broadcasting: C division (truncating toward zero), clamped to
 * the fused activation's range. A zero divisor, or INT32_MIN / -1, in the data fails with
 * MCU_ERR_INPUT (TFLM's reference traps there). */
typedef struct {
  int32_t act_min;
  int32_t act_max;
} mcu_div_params_t;

mcu_eval_t mcu_div_int32;

#endif
