/* CONCATENATION, as TFLM's reference_ops::Concatenation: for each outer index, the inputs' slabs in
 * input order. Element type does not matter (int8 inputs share the output's quantization).
 * An input the memory plan placed inside the output (mcugen/plan/aliasing.py: its producer wrote
 * straight into its block) is already where it belongs and is not copied. */
#include "mcu/kernels/concatenation.h"

#include <string.h>

#include "mcu/axis.h"

mcu_status_t mcu_concatenation(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_concatenation_params_t *p = node->params;
  mcu_axis_t d;
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_TRY(mcu_axis_cut(node, ctx, output, 0, (int)p->axis, p->elem_bytes, &d));
  uint8_t *out = mcu_output(ctx, node, 0);
  for (int32_t k = 0; k < d.outer; ++k) {
    for (int i = 0; i < node->num_inputs; ++i) {
      const uint8_t *in = mcu_input(ctx, node, i);
      size_t copy = (size_t)mcu_dim(mcu_input_tensor(ctx, node, i), (int)p->axis) *
                    (size_t)d.inner;
      const uint8_t *src = in + (size_t)k * copy;
      if (copy > 0 && src != out) {
        memcpy(out, src, copy);
      }
      out += copy;
    }
  }
  return MCU_OK;
}
