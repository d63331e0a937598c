#ifndef MCU_KERNELS_UNPACK_H
#define MCU_KERNELS_UNPACK_H

#include "mcu/axis.h"

/* UNPACK: splits the input along an axis into N outputs with that axis removed. */
typedef mcu_axis_params_t mcu_unpack_params_t;

mcu_status_t mcu_unpack(const mcu_node_t *node, mcu_context_t *ctx);

#endif
