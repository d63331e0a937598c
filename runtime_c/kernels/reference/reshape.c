/* RESHAPE, SQUEEZE, EXPAND_DIMS: as TFLM's reference kernels, a copy of the input bytes unless the
 * input and output share one buffer. */
#include "mcu/kernels/reshape.h"

#include <string.h>

mcu_status_t mcu_reshape(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input->bytes == output->bytes, MCU_ERR_BAD_MODEL);
  const void *src = mcu_input(ctx, node, 0);
  void *dst = mcu_output(ctx, node, 0);
  if (src != dst && input->bytes > 0) {
    memmove(dst, src, input->bytes);
  }
  return MCU_OK;
}
