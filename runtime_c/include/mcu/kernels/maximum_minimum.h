#ifndef MCU_KERNELS_MAXIMUM_MINIMUM_H
#define MCU_KERNELS_MAXIMUM_MINIMUM_H

#include "mcu/runtime.h"

/* MAXIMUM and MINIMUM with numpy broadcasting. No parameters: int8 compares the raw values, as
 * TFLM does (it assumes, without checking, that inputs and output share one quantization). */
mcu_eval_t mcu_maximum_int8;
mcu_eval_t mcu_maximum_int32;
mcu_eval_t mcu_maximum_f32;
mcu_eval_t mcu_minimum_int8;
mcu_eval_t mcu_minimum_int32;
mcu_eval_t mcu_minimum_f32;

#endif
