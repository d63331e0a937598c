/* SOFTMAX with onnxruntime's arithmetic (mcu/kernels/ort_softmax.h). A row is read whole (its
 * maximum and sum) before any of its outputs is written, and each output reads only its own
 * input: in place too. */
#include "mcu/kernels/ort_softmax.h"

#include <math.h>

#include "mcu/quant.h"

mcu_status_t mcu_softmax_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_softmax_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *x = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(x != NULL && x->ndims >= 1, MCU_ERR_BAD_MODEL);
  const int32_t depth = mcu_dim(x, -1);
  MCU_ENSURE_MODEL(depth > 0, MCU_ERR_BAD_MODEL);
  const int32_t rows = mcu_num_elements(x) / depth;
  const int8_t *in = mcu_input(ctx, node, 0);
  int8_t *out = mcu_output(ctx, node, 0);
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t *row = in + r * depth;
    int32_t top = row[0];
    for (int32_t i = 1; i < depth; ++i) {
      top = mcu_max_i32(top, row[i]);
    }
    float sum = 0.0f;
    for (int32_t i = 0; i < depth; ++i) {
      sum += p->table[top - row[i]];
    }
    int8_t *dst = out + r * depth;
    for (int32_t i = 0; i < depth; ++i) {
      float scaled = p->table[top - row[i]] * p->y_factor;
      int32_t q = (int32_t)nearbyintf(scaled / sum) + p->output_offset;
      dst[i] = (int8_t)mcu_clamp_i32(q, -128, 127);
    }
  }
  return MCU_OK;
}
