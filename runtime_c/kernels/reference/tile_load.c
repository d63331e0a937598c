/* McugenTileLoad, mcugen's own operator of patch stages: a tile's input window copied out of the
 * whole tensor, row by row (the window's rows are contiguous runs of pixels). */
#include "mcu/kernels/tile_load.h"

#include <string.h>

mcu_status_t mcu_tile_load(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_tile_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *whole = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *tile = mcu_output_tensor(ctx, node, 0);
  size_t pixel = mcu_tile_pixel_bytes(p, whole, tile);
  MCU_ENSURE_MODEL(pixel > 0, MCU_ERR_BAD_MODEL);
  const uint8_t *src = mcu_input(ctx, node, 0);
  uint8_t *dst = mcu_output(ctx, node, 0);
  size_t row = (size_t)tile->dims[2] * pixel;
  for (int32_t r = 0; r < tile->dims[1]; ++r) {
    size_t at = ((size_t)(p->y + r) * (size_t)whole->dims[2] + (size_t)p->x) * pixel;
    memcpy(dst + (size_t)r * row, src + at, row);
  }
  return MCU_OK;
}
