#ifndef MCU_KERNELS_TILE_LOAD_H
#define MCU_KERNELS_TILE_LOAD_H

#include <stddef.h>

#include "mcu/runtime.h"

/* Patch stages (mcugen/model/patch_rewrite.py): a tile's box in a whole NHWC tensor, batch 1.
 * Its height and width are the tile tensor's; the box lies inside the whole tensor (checked at
 * build time). */
typedef struct {
  int32_t y; /* first row of the box in the whole tensor */
  int32_t x; /* first column */
} mcu_tile_params_t;

/* The bytes of one pixel (all channels) when `tile`'s box at `p` lies inside `whole` (both NHWC,
 * batch 1) and their sizes agree; 0 otherwise: the model is inconsistent. Shared by the tile
 * load and store kernels. */
static inline size_t mcu_tile_pixel_bytes(const mcu_tile_params_t *p, const mcu_tensor_t *whole,
                                          const mcu_tensor_t *tile) {
  if (whole == NULL || tile == NULL || whole->ndims != 4 || tile->ndims != 4 ||
      whole->dims[0] != 1 || tile->dims[0] != 1 || p->y < 0 ||
      p->y + tile->dims[1] > whole->dims[1] || p->x < 0 ||
      p->x + tile->dims[2] > whole->dims[2] || whole->dims[1] * whole->dims[2] <= 0) {
    return 0;
  }
  size_t pixel = whole->bytes / (uint32_t)(whole->dims[1] * whole->dims[2]);
  return tile->bytes == pixel * (uint32_t)(tile->dims[1] * tile->dims[2]) ? pixel : 0;
}

/* McugenTileLoad: the output (a tile) is the box of input 0 (the whole tensor). Any type. */
mcu_eval_t mcu_tile_load;

#endif
