#ifndef MCU_KERNELS_PACK_H
#define MCU_KERNELS_PACK_H

#include "mcu/runtime.h"

/* PACK: stacks N inputs of identical shape along a new output axis. */
typedef struct {
  int32_t axis;       /* non-negative axis of the output */
  int32_t elem_bytes; /* bytes per element */
} mcu_pack_params_t;

mcu_status_t mcu_pack(const mcu_node_t *node, mcu_context_t *ctx);

#endif
