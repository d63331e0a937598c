#ifndef MCU_KERNELS_RESIZE_BILINEAR_H
#define MCU_KERNELS_RESIZE_BILINEAR_H

#include "mcu/runtime.h"

typedef struct {
  float height_scale;         /* float path: float32 input/output ratio */
  float width_scale;
  int32_t height_scale_10;    /* int8 path: the ratio in Q10, rounded as TFLM */
  int32_t width_scale_10;
  int32_t half_pixel_centers; /* sample at pixel centres */
} mcu_resize_bilinear_params_t;

mcu_eval_t mcu_resize_bilinear_int8;
mcu_eval_t mcu_resize_bilinear_f32;

#endif
