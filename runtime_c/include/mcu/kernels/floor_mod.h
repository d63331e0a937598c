#ifndef MCU_KERNELS_FLOOR_MOD_H
#define MCU_KERNELS_FLOOR_MOD_H

#include "mcu/runtime.h"

/* FLOOR_MOD with numpy broadcasting: the remainder with the sign of the divisor (float32 only,
 * as TFLM). No parameters. */
mcu_eval_t mcu_floor_mod_f32;

#endif
