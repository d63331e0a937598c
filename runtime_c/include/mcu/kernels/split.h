#ifndef MCU_KERNELS_SPLIT_H
#define MCU_KERNELS_SPLIT_H

#include "mcu/runtime.h"

/* SPLIT and SPLIT_V: each output takes its own extent (its shape) along the axis, in order. */
typedef struct {
  int32_t axis;       /* non-negative axis of the data input */
  int32_t elem_bytes; /* bytes per element */
  int32_t data_input; /* index of the data input: 1 for SPLIT, 0 for SPLIT_V */
} mcu_split_params_t;

mcu_eval_t mcu_split;

#endif
