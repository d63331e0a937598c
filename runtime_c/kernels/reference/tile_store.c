/* McugenTileStore, mcugen's own operator of patch stages: a tile written into its box of the
 * whole tensor, row by row, after the whole tensor so far (input 0) unless the output is already
 * over it (the plan runs the stores of one stage in place, mcugen/plan/aliasing.py step 2). */
#include "mcu/kernels/tile_store.h"

#include <string.h>

mcu_status_t mcu_tile_store(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_tile_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *tile = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *whole = mcu_output_tensor(ctx, node, 0);
  size_t pixel = mcu_tile_pixel_bytes(p, whole, tile);
  MCU_ENSURE_MODEL(pixel > 0, MCU_ERR_BAD_MODEL);
  uint8_t *dst = mcu_output(ctx, node, 0);
  const uint8_t *prev = mcu_input(ctx, node, 0);
  if (prev != NULL && prev != dst) {
    MCU_ENSURE_MODEL(mcu_input_tensor(ctx, node, 0)->bytes == whole->bytes, MCU_ERR_BAD_MODEL);
    memcpy(dst, prev, whole->bytes);
  }
  const uint8_t *src = mcu_input(ctx, node, 1);
  size_t row = (size_t)tile->dims[2] * pixel;
  for (int32_t r = 0; r < tile->dims[1]; ++r) {
    size_t at = ((size_t)(p->y + r) * (size_t)whole->dims[2] + (size_t)p->x) * pixel;
    memcpy(dst + at, src + (size_t)r * row, row);
  }
  return MCU_OK;
}
