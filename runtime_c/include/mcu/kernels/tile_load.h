#ifndef MCU_KERNELS_TILE_LOAD_H
#define MCU_KERNELS_TILE_LOAD_H

#include "mcu/runtime.h"

/* Patch stages (mcugen/model/patch_rewrite.py): a tile's box in a whole NHWC tensor, batch 1.
 * Its height and width are the tile tensor's; the box lies inside the whole tensor (checked at
 * build time). */
typedef struct {
  int32_t y; /* first row of the box in the whole tensor */
  int32_t x; /* first column */
} mcu_tile_params_t;

/* McugenTileLoad: the output (a tile) is the box of input 0 (the whole tensor). Any type. */
mcu_status_t mcu_tile_load(const mcu_node_t *node, mcu_context_t *ctx);

#endif
