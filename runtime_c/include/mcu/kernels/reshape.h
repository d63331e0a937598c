#ifndef MCU_KERNELS_RESHAPE_H
#define MCU_KERNELS_RESHAPE_H

#include "mcu/runtime.h"

/* RESHAPE, SQUEEZE and EXPAND_DIMS: the data is unchanged, only the shape differs. The kernel copies
 * the input bytes to the output, and does nothing when both are the same buffer. No parameters. */
mcu_eval_t mcu_reshape;

#endif
