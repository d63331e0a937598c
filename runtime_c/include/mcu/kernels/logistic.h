#ifndef MCU_KERNELS_LOGISTIC_H
#define MCU_KERNELS_LOGISTIC_H

#include "mcu/runtime.h"
#include "mcu/unary.h"

typedef mcu_unary_fixed_params_t mcu_logistic_params_t;

mcu_eval_t mcu_logistic_f32;
/* int8 with output scale 1/256, zero point -128 (TFLM's fixed-point path). */
mcu_eval_t mcu_logistic_int8;

/* int16, zero points 0, output scale 2^-15 (TFLM's reference_integer_ops::Logistic for int16). */
typedef mcu_unary_table_params_t mcu_logistic_int16_params_t;

mcu_eval_t mcu_logistic_int16;

#endif
