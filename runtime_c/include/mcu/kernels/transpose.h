#ifndef MCU_KERNELS_TRANSPOSE_H
#define MCU_KERNELS_TRANSPOSE_H

#include "mcu/runtime.h"

/* TRANSPOSE with a constant permutation: output axis d is input axis perm[d]. */
typedef struct {
  int32_t elem_bytes;  /* bytes per element */
  const int32_t *perm; /* one entry per input axis */
} mcu_transpose_params_t;

mcu_eval_t mcu_transpose;

#endif
