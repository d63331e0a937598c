/* UNPACK, as TFLM's unpack kernel: output i takes index i of the input axis. */
#include "mcu/kernels/unpack.h"

#include "mcu/axis.h"

mcu_status_t mcu_unpack(const mcu_node_t *node, mcu_context_t *ctx) {
  return mcu_axis_stack(node, ctx, 1, node->params);
}
