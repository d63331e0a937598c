#ifndef MCU_KERNELS_RESIZE_NEAREST_NEIGHBOR_H
#define MCU_KERNELS_RESIZE_NEAREST_NEIGHBOR_H

#include "mcu/runtime.h"

typedef struct {
  float height_scale;         /* float32 input/output ratio, as TFLM's GetNearestNeighbor */
  float width_scale;
  float offset;               /* 0.5f with half_pixel_centers, else 0 */
  int32_t align_corners;      /* round instead of floor */
  int32_t half_pixel_centers; /* clamp the source index at 0 */
} mcu_resize_nearest_neighbor_params_t;

mcu_eval_t mcu_resize_nearest_neighbor_int8;
mcu_eval_t mcu_resize_nearest_neighbor_int16;
mcu_eval_t mcu_resize_nearest_neighbor_f32;

#endif
