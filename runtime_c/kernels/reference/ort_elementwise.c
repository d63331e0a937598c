/* ADD, MUL and the table lookups of `--onnx-numerics ort` (mcu/kernels/ort_elementwise.h). Each
 * output element is computed from the operands' elements at its own position only, so they run
 * in place. */
#include "mcu/kernels/ort_elementwise.h"

#include <math.h>

#include "mcu/binary.h"
#include "mcu/quant.h"

static inline int8_t ort_finish(const mcu_ort_binary_params_t *p, float value) {
  int32_t q = (int32_t)nearbyintf(value) - p->domain;
  return (int8_t)mcu_clamp_i32(q, p->act_min, p->act_max);
}

static inline int8_t ort_add_one(const mcu_ort_binary_params_t *p, int32_t x1, int32_t x2) {
  return ort_finish(p, mcu_ort_add_value(p, x1, x2));
}

static inline int8_t ort_mul_one(const mcu_ort_binary_params_t *p, int32_t x1, int32_t x2) {
  return ort_finish(p, mcu_ort_mul_value(p, x1, x2));
}

mcu_status_t mcu_add_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_binary_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int8_t, *y = ort_add_one(p, x1, x2));
  return MCU_OK;
}

mcu_status_t mcu_mul_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_binary_params_t *p = node->params;
  MCU_BINARY_EACH(node, ctx, int8_t, *y = ort_mul_one(p, x1, x2));
  return MCU_OK;
}

mcu_status_t mcu_table_int8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_table_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *x = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(x != NULL && mcu_num_elements(x) == mcu_num_elements(mcu_output_tensor(ctx, node, 0)),
                   MCU_ERR_BAD_MODEL);
  const int8_t *in = mcu_input(ctx, node, 0);
  int8_t *out = mcu_output(ctx, node, 0);
  const int32_t n = mcu_num_elements(x);
  for (int32_t i = 0; i < n; ++i) {
    out[i] = p->table[(int32_t)in[i] + 128];
  }
  return MCU_OK;
}
