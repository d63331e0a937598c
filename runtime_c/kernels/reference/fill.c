/* FILL, as TFLM's reference_ops::Fill: the scalar value copied into every output element. The
 * copy is bytewise, so float32, int32 and int8 share it. */
#include "mcu/kernels/fill.h"

mcu_status_t mcu_fill(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_fill_params_t *p = node->params;
  const mcu_tensor_t *value = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(value != NULL && value->bytes == (uint32_t)p->element_bytes,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(output->bytes == (uint32_t)mcu_num_elements(output) * value->bytes,
                   MCU_ERR_BAD_MODEL);
  const uint8_t *src = mcu_input(ctx, node, 1);
  uint8_t *dst = mcu_output(ctx, node, 0);
  int32_t n = mcu_num_elements(output);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t b = 0; b < p->element_bytes; ++b) {
      dst[(size_t)i * (size_t)p->element_bytes + (size_t)b] = src[b];
    }
  }
  return MCU_OK;
}
