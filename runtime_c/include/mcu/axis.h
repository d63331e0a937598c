/* A tensor seen around one axis, as the kernels that copy slabs (CONCATENATION, SPLIT, PACK,
 * UNPACK) and those that work on rows of the last axis (SOFTMAX, LOG_SOFTMAX) see it: `outer`
 * the product of the dims before the axis, `inner` what one step along it holds. The slab
 * kernels' tensors: one `whole` and its parts, the node's inputs or its outputs. */
#ifndef MCU_AXIS_H
#define MCU_AXIS_H

#include <string.h>

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

/* The parameters of CONCATENATION, PACK and UNPACK. */
typedef struct {
  int32_t axis;       /* non-negative axis of the whole tensor (the output, or UNPACK's input) */
  int32_t elem_bytes; /* bytes per element */
} mcu_axis_params_t;

/* Part `i` of a slab kernel: its output `i` when `outputs`, else its input `i`. */
static inline const mcu_tensor_t *mcu_axis_part(const mcu_context_t *ctx, const mcu_node_t *node,
                                                int outputs, int i) {
  return outputs ? mcu_output_tensor(ctx, node, i) : mcu_input_tensor(ctx, node, i);
}

/* `whole` around `axis`, cut along it into the parts (CONCATENATION, SPLIT): each checked by
 * mcu_axis_check_part, their extents along the axis adding up to whole's. */
static inline mcu_status_t mcu_axis_cut(const mcu_node_t *node, const mcu_context_t *ctx,
                                        const mcu_tensor_t *whole, int outputs, int axis,
                                        int32_t elem_bytes, mcu_axis_t *d) {
  MCU_ENSURE_MODEL(whole != NULL && axis >= 0 && axis < whole->ndims && elem_bytes > 0,
                   MCU_ERR_BAD_MODEL);
  int32_t total = 0;
  for (int i = 0; i < (outputs ? node->num_outputs : node->num_inputs); ++i) {
    const mcu_tensor_t *t = mcu_axis_part(ctx, node, outputs, i);
    MCU_TRY(mcu_axis_check_part(t, whole, axis));
    total += t->dims[axis];
  }
  MCU_ENSURE_MODEL(total == whole->dims[axis], MCU_ERR_BAD_MODEL);
  *d = mcu_axis_of(whole, axis, elem_bytes);
  return MCU_OK;
}

/* PACK (`outputs` 0: the parts are the inputs, stacked into the output) and UNPACK (`outputs` 1:
 * the input unstacked into the outputs): `whole` has one index along `axis` per part, each part
 * is of whole's type and holds the slab of its index for every outer index. */
static inline mcu_status_t mcu_axis_stack(const mcu_node_t *node, const mcu_context_t *ctx,
                                          int outputs, const mcu_axis_params_t *p) {
  const mcu_tensor_t *whole = outputs ? mcu_input_tensor(ctx, node, 0)
                                      : mcu_output_tensor(ctx, node, 0);
  const int axis = (int)p->axis, parts = outputs ? node->num_outputs : node->num_inputs;
  MCU_ENSURE_MODEL(whole != NULL && axis >= 0 && axis < whole->ndims && p->elem_bytes > 0,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(whole->dims[axis] == parts, MCU_ERR_BAD_MODEL);
  const mcu_axis_t d = mcu_axis_of(whole, axis, p->elem_bytes);
  for (int i = 0; i < parts; ++i) {
    const mcu_tensor_t *t = mcu_axis_part(ctx, node, outputs, i);
    MCU_ENSURE_MODEL(t != NULL && t->type == whole->type, MCU_ERR_BAD_MODEL);
    MCU_ENSURE_MODEL((int64_t)t->bytes == (int64_t)d.outer * d.inner, MCU_ERR_BAD_MODEL);
  }
  if (d.inner == 0) {
    return MCU_OK;
  }
  /* part i's slab k is slab k * parts + i of whole */
  const size_t slab = (size_t)d.inner, count = (size_t)parts;
  const uint8_t *whole_in = mcu_input(ctx, node, 0);
  uint8_t *whole_out = mcu_output(ctx, node, 0);
  for (int i = 0; i < parts; ++i) {
    const uint8_t *src = outputs ? whole_in : (const uint8_t *)mcu_input(ctx, node, i);
    uint8_t *dst = outputs ? (uint8_t *)mcu_output(ctx, node, i) : whole_out;
    for (int32_t k = 0; k < d.outer; ++k) {
      const size_t part_at = (size_t)k * slab, whole_at = ((size_t)k * count + (size_t)i) * slab;
      memcpy(dst + (outputs ? part_at : whole_at), src + (outputs ? whole_at : part_at), slab);
    }
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

/* Defines the eval function `name` of a kernel that maps node input 0 to its output row by row
 * along the last axis (mcu_axis_rows), elements `t`: `row(node->params, in, length, out)` each. */
#define MCU_AXIS_ROWS_KERNEL(name, t, row)                        \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) { \
    mcu_axis_t d;                                                 \
    MCU_TRY(mcu_axis_rows(node, ctx, &d));                        \
    const t *input = mcu_input(ctx, node, 0);                     \
    t *output = mcu_output(ctx, node, 0);                         \
    for (int32_t i = 0; i < d.outer; ++i) {                       \
      size_t at = (size_t)i * (size_t)d.inner;                    \
      row(node->params, input + at, d.inner, output + at);        \
    }                                                             \
    return MCU_OK;                                                \
  }

#endif
