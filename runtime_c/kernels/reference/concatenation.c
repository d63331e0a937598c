/* CONCATENATION, as TFLM's reference_ops::Concatenation: for each outer index, the inputs' slabs in
 * input order. Element type does not matter (int8 inputs share the output's quantization).
 * An input the memory plan placed inside the output (mcugen/plan/aliasing.py: its producer wrote
 * straight into its block, or into its channel slice with the output's pixel stride) is already
 * where it belongs and is not copied. */
#include "mcu/kernels/concatenation.h"

#include <string.h>

#include "mcu/axis.h"

mcu_status_t mcu_concatenation(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_concatenation_params_t *p = node->params;
  mcu_axis_t d;
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_TRY(mcu_axis_cut(node, ctx, output, 0, (int)p->axis, p->elem_bytes, &d));
  MCU_ENSURE_MODEL(node->num_inputs <= 32, MCU_ERR_BAD_MODEL);
  uint8_t *out = mcu_output(ctx, node, 0);
  /* bit i: input i starts where its first slab goes, so its producer wrote every slab there
   * (a block, or a channel slice at the output's pixel stride) */
  uint32_t placed = 0;
  size_t at = 0;
  for (int i = 0; i < node->num_inputs; ++i) {
    if ((const uint8_t *)mcu_input(ctx, node, i) == out + at) {
      placed |= (uint32_t)1 << i;
    }
    at += (size_t)mcu_dim(mcu_input_tensor(ctx, node, i), (int)p->axis) * (size_t)d.inner;
  }
  for (int32_t k = 0; k < d.outer; ++k) {
    for (int i = 0; i < node->num_inputs; ++i) {
      const uint8_t *in = mcu_input(ctx, node, i);
      size_t copy = (size_t)mcu_dim(mcu_input_tensor(ctx, node, i), (int)p->axis) *
                    (size_t)d.inner;
      if (copy > 0 && !((placed >> i) & 1u)) {
        memcpy(out, in + (size_t)k * copy, copy);
      }
      out += copy;
    }
  }
  return MCU_OK;
}
