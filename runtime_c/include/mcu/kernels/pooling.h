#ifndef MCU_KERNELS_POOLING_H
#define MCU_KERNELS_POOLING_H

#include "mcu/runtime.h"

/* AVERAGE_POOL_2D and MAX_POOL_2D parameters. Tensors: input [N,H,W,C], output [N,OH,OW,C];
 * shapes come from the tensor table, padding and activation range from the build (TFLM Prepare). */
typedef struct {
  int32_t stride_w;
  int32_t stride_h;
  int32_t filter_w;
  int32_t filter_h;
  int32_t pad_w; /* ComputePaddingHeightWidth: padding before; the extra after is implicit */
  int32_t pad_h;
  int32_t act_min; /* quantized activation range (int8, int16) */
  int32_t act_max;
  float act_min_f; /* float32 activation range */
  float act_max_f;
} mcu_pooling_params_t;

mcu_eval_t mcu_average_pool_2d_int8;
mcu_eval_t mcu_average_pool_2d_int16;
mcu_eval_t mcu_average_pool_2d_f32;
mcu_eval_t mcu_max_pool_2d_int8;
mcu_eval_t mcu_max_pool_2d_int16;
mcu_eval_t mcu_max_pool_2d_f32;

#endif
