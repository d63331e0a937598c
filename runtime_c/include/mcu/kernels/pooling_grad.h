#ifndef MCU_KERNELS_POOLING_GRAD_H
#define MCU_KERNELS_POOLING_GRAD_H

#include "mcu/runtime.h"

/* The backward passes of float32 AVERAGE_POOL_2D and MAX_POOL_2D (mcugen/train/).
 * Average: inputs dy [N,OH,OW,C] and the forward output y; output dx [N,H,W,C].
 * Max: inputs dy, the forward input x [N,H,W,C] and y; output dx.
 * Windows are the forward kernel's (mcu/kernels/pooling.h): clipped to the image, so padding
 * never receives a gradient. The fused activation's gradient is taken from y: dy passes where
 * act_min_f < y < act_max_f. An average window hands each of its in-image taps dy / count,
 * count being the number of those taps (as the forward divides); a max window hands dy to its
 * first largest tap in row-major window order (ties go to the first). */
typedef struct {
  int32_t stride_w;
  int32_t stride_h;
  int32_t filter_w;
  int32_t filter_h;
  int32_t pad_w; /* padding before, as in mcu_pooling_params_t */
  int32_t pad_h;
  float act_min_f;
  float act_max_f;
} mcu_pooling_grad_params_t;

mcu_eval_t mcu_average_pool_2d_grad_f32;
mcu_eval_t mcu_max_pool_2d_grad_f32;

#endif
