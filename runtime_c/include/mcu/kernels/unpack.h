#ifndef MCU_KERNELS_UNPACK_H
#define MCU_KERNELS_UNPACK_H

#include "mcu/axis.h"

/* UNPACK: splits the input along an axis into N outputs with that axis removed. */
typedef mcu_axis_params_t mcu_unpack_params_t;

mcu_eval_t mcu_unpack;

#endif
