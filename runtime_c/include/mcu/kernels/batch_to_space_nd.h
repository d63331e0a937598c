#ifndef MCU_KERNELS_BATCH_TO_SPACE_ND_H
#define MCU_KERNELS_BATCH_TO_SPACE_ND_H

#include "mcu/runtime.h"

/* 4-D NHWC, or 3-D NHC handled as NH1C (block_w = 1, crop_left = 0). */
typedef struct {
  int32_t block_h;
  int32_t block_w;
  int32_t crop_top;
  int32_t crop_left;
} mcu_batch_to_space_nd_params_t;

mcu_eval_t mcu_batch_to_space_nd_int8;
mcu_eval_t mcu_batch_to_space_nd_f32;

#endif
