/* PACK, as TFLM's pack kernel: input i fills index i of the new output axis. */
#include "mcu/kernels/pack.h"

#include "mcu/axis.h"

mcu_status_t mcu_pack(const mcu_node_t *node, mcu_context_t *ctx) {
  return mcu_axis_stack(node, ctx, 0, node->params);
}
