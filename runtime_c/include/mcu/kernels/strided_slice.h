#ifndef MCU_KERNELS_STRIDED_SLICE_H
#define MCU_KERNELS_STRIDED_SLICE_H

#include "mcu/runtime.h"

/* STRIDED_SLICE with constant begin/end/strides: the lowering resolves masks, negative indices and
 * clamping (TFLM's strided_slice logic) into a first index, a step and a count per input axis. */
typedef struct {
  int32_t ndims;          /* input rank; entries of the arrays below */
  int32_t elem_bytes;     /* bytes per element */
  const int32_t *starts;  /* first index taken on each input axis */
  const int32_t *strides; /* step on each input axis, non-zero, may be negative */
  const int32_t *counts;  /* number of indices taken on each input axis (1 on shrunk axes) */
} mcu_strided_slice_params_t;

mcu_eval_t mcu_strided_slice;

#endif
