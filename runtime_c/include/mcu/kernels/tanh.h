#ifndef MCU_KERNELS_TANH_H
#define MCU_KERNELS_TANH_H

#include "mcu/runtime.h"
#include "mcu/unary.h"

typedef mcu_unary_fixed_params_t mcu_tanh_params_t;

mcu_eval_t mcu_tanh_f32;
/* int8: output as scale 1/128, zero point 0 whatever the output tensor says (as TFLM). */
mcu_eval_t mcu_tanh_int8;

/* int16, zero points 0, output scale 2^-15 (TFLM's reference_integer_ops::Tanh for int16). */
typedef mcu_unary_table_params_t mcu_tanh_int16_params_t;

mcu_eval_t mcu_tanh_int16;

#endif
