#ifndef MCU_KERNELS_ADD_H
#define MCU_KERNELS_ADD_H

#include "mcu/binary.h"
#include "mcu/runtime.h"

/* ADD with numpy broadcasting, TFLM's scheme (mcu/binary.h mcu_add_sub_params_t). */
typedef mcu_add_sub_params_t mcu_add_params_t;

mcu_eval_t mcu_add_int8;
mcu_eval_t mcu_add_int16; /* left_shift 15 */
mcu_eval_t mcu_add_int32; /* no params */
mcu_eval_t mcu_add_f32;

/* Optimised int8 ADD over same-shape operands (kernels/opt/add_s8.c): each input's rescaling
 * (offset, left shift 20, multiplier) looked up for its 256 values. */
typedef struct {
  const int32_t *table1; /* 2 * scaled input 1 for x = -128..127 */
  const int32_t *table2;
  int32_t output_multiplier;
  int32_t output_shift;
  int32_t output_offset;
  int32_t act_min;
  int32_t act_max;
} mcu_add_s8_table_params_t;

mcu_eval_t mcu_add_s8_opt;

#endif
