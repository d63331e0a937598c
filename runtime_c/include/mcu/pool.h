/* Shared by AVERAGE_POOL_2D, MAX_POOL_2D and their gradients: the sizes of the image (the
 * forward input, NHWC) and of the pooled map (the forward output), checked 4-D with one batch
 * size and depth, and the part of a window inside the image (windows are clipped, so padding
 * never counts). */
#ifndef MCU_POOL_H
#define MCU_POOL_H

#include "mcu/quant.h"
#include "mcu/runtime.h"

typedef struct {
  int32_t batches;
  int32_t in_h;
  int32_t in_w;
  int32_t depth;
  int32_t out_h;
  int32_t out_w;
} mcu_pool_dims_t;

/* The part of one output pixel's window inside the image: rows [y0,y1), columns [x0,x1). */
typedef struct {
  int32_t y0;
  int32_t y1;
  int32_t x0;
  int32_t x1;
} mcu_pool_window_t;

static inline mcu_status_t mcu_pool_dims(const mcu_tensor_t *image, const mcu_tensor_t *pooled,
                                         mcu_pool_dims_t *d) {
  MCU_ENSURE_MODEL(image != NULL && pooled != NULL && image->ndims == 4 && pooled->ndims == 4,
                   MCU_ERR_BAD_MODEL);
  d->batches = image->dims[0];
  d->in_h = image->dims[1];
  d->in_w = image->dims[2];
  d->depth = image->dims[3];
  d->out_h = pooled->dims[1];
  d->out_w = pooled->dims[2];
  MCU_ENSURE_MODEL(pooled->dims[0] == d->batches && pooled->dims[3] == d->depth,
                   MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* The window of filter_h x filter_w taps whose top-left is (origin_y, origin_x), clipped. */
static inline mcu_pool_window_t mcu_pool_window(const mcu_pool_dims_t *d, int32_t origin_y,
                                                int32_t origin_x, int32_t filter_h,
                                                int32_t filter_w) {
  mcu_pool_window_t w;
  w.y0 = mcu_max_i32(origin_y, 0);
  w.y1 = mcu_min_i32(origin_y + filter_h, d->in_h);
  w.x0 = mcu_max_i32(origin_x, 0);
  w.x1 = mcu_min_i32(origin_x + filter_w, d->in_w);
  return w;
}

#endif
