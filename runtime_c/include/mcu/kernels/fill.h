#ifndef MCU_KERNELS_FILL_H
#define MCU_KERNELS_FILL_H

#include "mcu/runtime.h"

/* FILL: every output element is the scalar input 1 (float32, int32 or int8, as TFLM). The output
 * shape is static: the lowering checked the constant dims input against it. */
typedef struct {
  int32_t element_bytes; /* 1 or 4 */
} mcu_fill_params_t;

mcu_eval_t mcu_fill;

#endif
