#ifndef MCU_KERNELS_UNPACK_H
#define MCU_KERNELS_UNPACK_H

#include "mcu/runtime.h"

/* UNPACK: splits the input along an axis into N outputs with that axis removed. */
typedef struct {
  int32_t axis;       /* non-negative axis of the input */
  int32_t elem_bytes; /* bytes per element */
} mcu_unpack_params_t;

mcu_status_t mcu_unpack(const mcu_node_t *node, mcu_context_t *ctx);

#endif
