/* SPLIT and SPLIT_V, as TFLM's split kernels: for each outer index, consecutive slabs of the input go
 * to the outputs in order, each as wide along the axis as its own shape says. */
#include "mcu/kernels/split.h"

#include <string.h>

#include "mcu/axis.h"

mcu_status_t mcu_split(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_split_params_t *p = node->params;
  mcu_axis_t d;
  MCU_ENSURE_MODEL(p->data_input >= 0 && p->data_input < node->num_inputs, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, (int)p->data_input);
  MCU_TRY(mcu_axis_cut(node, ctx, input, 1, (int)p->axis, p->elem_bytes, &d));
  const uint8_t *in = mcu_input(ctx, node, (int)p->data_input);
  for (int32_t k = 0; k < d.outer; ++k) {
    for (int i = 0; i < node->num_outputs; ++i) {
      uint8_t *out = mcu_output(ctx, node, i);
      size_t copy = (size_t)mcu_dim(mcu_output_tensor(ctx, node, i), (int)p->axis) *
                    (size_t)d.inner;
      if (copy > 0) {
        memcpy(out + (size_t)k * copy, in, copy);
      }
      in += copy;
    }
  }
  return MCU_OK;
}
