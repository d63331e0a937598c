/* RESIZE_NEAREST_NEIGHBOR, bit-exact with TFLM reference_ops::ResizeNearestNeighbor: each source
 * index is computed in float32 as GetNearestNeighbor does, then whole pixels (depth elements) are
 * copied, so the element type only sets the pixel size. Quantization parameters are not used. */
#include "mcu/kernels/resize_nearest_neighbor.h"

#include <math.h>
#include <string.h>

#include "mcu/quant.h"
#include "mcu/resize.h"

/* GetNearestNeighbor: (x + offset) * scale in float32, rounded (align_corners) or floored. */
static int32_t nn_source(int32_t x, int32_t in_size, float scale,
                         const mcu_resize_nearest_neighbor_params_t *p) {
  float v = ((float)x + p->offset) * scale;
  int32_t s = p->align_corners ? (int32_t)roundf(v) : (int32_t)floorf(v);
  s = mcu_min_i32(s, in_size - 1);
  return p->half_pixel_centers ? mcu_max_i32(s, 0) : s;
}

static mcu_status_t nn_resize(const mcu_node_t *node, mcu_context_t *ctx, size_t elem_bytes) {
  const mcu_resize_nearest_neighbor_params_t *p = node->params;
  mcu_resize_dims_t d;
  MCU_TRY(mcu_resize_dims(node, ctx, &d));
  const uint8_t *input = mcu_input(ctx, node, 0);
  uint8_t *output = mcu_output(ctx, node, 0);
  const size_t pixel = (size_t)d.depth * elem_bytes;
  for (int32_t b = 0; b < d.batches; ++b) {
    const uint8_t *image = input + (size_t)b * (size_t)d.in_h * (size_t)d.in_w * pixel;
    for (int32_t y = 0; y < d.out_h; ++y) {
      int32_t in_y = nn_source(y, d.in_h, p->height_scale, p);
      MCU_ENSURE_MODEL(in_y >= 0, MCU_ERR_INTERNAL); /* scales and offset are >= 0 */
      const uint8_t *row = image + (size_t)in_y * (size_t)d.in_w * pixel;
      for (int32_t x = 0; x < d.out_w; ++x) {
        int32_t in_x = nn_source(x, d.in_w, p->width_scale, p);
        MCU_ENSURE_MODEL(in_x >= 0, MCU_ERR_INTERNAL);
        memcpy(output, row + (size_t)in_x * pixel, pixel);
        output += pixel;
      }
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_resize_nearest_neighbor_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  return nn_resize(node, ctx, sizeof(int8_t));
}

mcu_status_t mcu_resize_nearest_neighbor_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  return nn_resize(node, ctx, sizeof(int16_t));
}

mcu_status_t mcu_resize_nearest_neighbor_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  return nn_resize(node, ctx, sizeof(float));
}
