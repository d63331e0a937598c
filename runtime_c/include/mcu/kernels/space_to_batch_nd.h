#ifndef MCU_KERNELS_SPACE_TO_BATCH_ND_H
#define MCU_KERNELS_SPACE_TO_BATCH_ND_H

#include "mcu/runtime.h"

/* 4-D NHWC, or 3-D NHC handled as NH1C (block_w = 1, pad_left = 0). */
typedef struct {
  int32_t block_h;
  int32_t block_w;
  int32_t pad_top;
  int32_t pad_left;
  int32_t pad_value; /* int8: the output zero point (TFLite semantics); float: unused (0.0f) */
} mcu_space_to_batch_nd_params_t;

mcu_eval_t mcu_space_to_batch_nd_int8;
mcu_eval_t mcu_space_to_batch_nd_f32;

#endif
