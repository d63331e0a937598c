#ifndef MCU_KERNELS_SHAPE_H
#define MCU_KERNELS_SHAPE_H

#include "mcu/runtime.h"

/* SHAPE: shapes are static in mcugen, so the lowering stores the input's shape as a constant. */
typedef struct {
  int32_t count;         /* number of entries: the input's rank */
  const int32_t *values; /* the input's dimensions */
} mcu_shape_params_t;

/* Writes the int32 shape vector. */
mcu_eval_t mcu_shape_i32;

#endif
