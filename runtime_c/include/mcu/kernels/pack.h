#ifndef MCU_KERNELS_PACK_H
#define MCU_KERNELS_PACK_H

#include "mcu/axis.h"

/* PACK: stacks N inputs of identical shape along a new output axis. */
typedef mcu_axis_params_t mcu_pack_params_t;

mcu_eval_t mcu_pack;

#endif
