#ifndef MCU_KERNELS_TILE_STORE_H
#define MCU_KERNELS_TILE_STORE_H

#include "mcu/kernels/tile_load.h"

/* McugenTileStore: the output (the whole tensor) is input 0 (the whole tensor so far, or -1 for
 * the first tile) with input 1 (a tile) written at the box; the copy of input 0 is skipped when
 * the plan put the output over it. Any type. */
mcu_eval_t mcu_tile_store;

#endif
