/* SHAPE, as TFLM's reference kernel: the input's dimensions as int32. Shapes are static, so the
 * lowering stores them as a constant and the kernel copies it. */
#include "mcu/kernels/shape.h"

mcu_status_t mcu_shape_i32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_shape_params_t *p = node->params;
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(output->type == MCU_INT32, MCU_ERR_UNSUPPORTED);
  MCU_ENSURE_MODEL(mcu_num_elements(output) == p->count, MCU_ERR_BAD_MODEL);
  int32_t *out = mcu_output(ctx, node, 0);
  for (int32_t i = 0; i < p->count; ++i) {
    out[i] = p->values[i];
  }
  return MCU_OK;
}
