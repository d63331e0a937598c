/* A tensor seen around one axis, as the kernels that copy slabs (CONCATENATION, SPLIT, PACK,
 * UNPACK) and those that work on rows of the last axis (SOFTMAX, LOG_SOFTMAX) see it: `outer`
 * the product of the dims before the axis, `inner` what one step along it holds. */
#ifndef MCU_AXIS_H
#define MCU_AXIS_H

#include "mcu/runtime.h"

typedef struct {
  int32_t outer; /* product of the dims before the axis */
  int32_t inner; /* bytes of one step along the axis, or (rows) the last axis' length */
} mcu_axis_t;

static inline int32_t mcu_dims_product(const int32_t *dims, int from, int to) {
  int32_t n = 1;
  for (int i = from; i < to; ++i) {
    n *= dims[i];
  }
  return n;
}

/* `t` around `axis` (checked by the caller), elements of `elem_bytes`. */
static inline mcu_axis_t mcu_axis_of(const mcu_tensor_t *t, int axis, int32_t elem_bytes) {
  mcu_axis_t a = {mcu_dims_product(t->dims, 0, axis),
                  mcu_dims_product(t->dims, axis + 1, t->ndims) * elem_bytes};
  return a;
}

/* A part `t` of `whole` along `axis`: present, of its rank and type, and of its dims except along
 * the axis. */
static inline mcu_status_t mcu_axis_check_part(const mcu_tensor_t *t, const mcu_tensor_t *whole,
                                               int axis) {
  MCU_ENSURE_MODEL(t != NULL && t->ndims == whole->ndims && t->type == whole->type,
                   MCU_ERR_BAD_MODEL);
  for (int j = 0; j < t->ndims; ++j) {
    MCU_ENSURE_MODEL(j == axis || t->dims[j] == whole->dims[j], MCU_ERR_BAD_MODEL);
  }
  return MCU_OK;
}

/* Node input 0 as rows of its last axis (`inner` elements each), the output as many elements. */
static inline mcu_status_t mcu_axis_rows(const mcu_node_t *node, const mcu_context_t *ctx,
                                         mcu_axis_t *rows) {
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && input->ndims >= 1, MCU_ERR_BAD_MODEL);
  rows->inner = mcu_dim(input, -1);
  MCU_ENSURE_MODEL(rows->inner > 0 && mcu_num_elements(output) == mcu_num_elements(input),
                   MCU_ERR_BAD_MODEL);
  rows->outer = mcu_num_elements(input) / rows->inner;
  return MCU_OK;
}

#endif
