#ifndef MCU_KERNELS_SUB_H
#define MCU_KERNELS_SUB_H

#include "mcu/binary.h"
#include "mcu/runtime.h"

/* SUB (input1 - input2) with numpy broadcasting, TFLM's scheme (mcu/binary.h
 * mcu_add_sub_params_t). */
typedef mcu_add_sub_params_t mcu_sub_params_t;

mcu_eval_t mcu_sub_int8;
mcu_eval_t mcu_sub_int16; /* left_shift 15 */
mcu_eval_t mcu_sub_f32;

#endif
