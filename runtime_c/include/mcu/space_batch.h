/* Shared by BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND: an NHWC shape (NHC read as NH1C, as TFLM's
 * ExtendShapeBatchToSpace and ExtendShapeSpaceToBatch do), element offsets in it, and the checks
 * both make of their input and output. */
#ifndef MCU_SPACE_BATCH_H
#define MCU_SPACE_BATCH_H

#include <stddef.h>

#include "mcu/runtime.h"

typedef struct {
  int32_t batch;
  int32_t height;
  int32_t width;
  int32_t depth;
} mcu_space_batch_shape_t;

static inline mcu_space_batch_shape_t mcu_space_batch_shape(const mcu_tensor_t *t) {
  mcu_space_batch_shape_t s = {t->dims[0], t->dims[1], 1, t->dims[t->ndims - 1]};
  if (t->ndims == 4) {
    s.width = t->dims[2];
  }
  return s;
}

static inline size_t mcu_space_batch_offset(const mcu_space_batch_shape_t *s, int32_t b, int32_t y,
                                            int32_t x) {
  return (((size_t)b * (size_t)s->height + (size_t)y) * (size_t)s->width + (size_t)x) *
         (size_t)s->depth;
}

/* Defines `name`, which reads the shapes of input 0 and output 0 of a kernel with parameters
 * `params_t` (block_h, block_w) and checks them: 3-D or 4-D alike, of one depth, the batch of
 * `spread` (`in` or `out`: the output of SPACE_TO_BATCH_ND, the input of BATCH_TO_SPACE_ND) that
 * of `joined` (the other), not empty, times the block's size. */
#define MCU_SPACE_BATCH_SHAPES(name, params_t, joined, spread)                                  \
  static mcu_status_t name(const mcu_node_t *node, const mcu_context_t *ctx, const params_t *p, \
                           mcu_space_batch_shape_t *in, mcu_space_batch_shape_t *out) {         \
    const mcu_tensor_t *ti = mcu_input_tensor(ctx, node, 0);                                    \
    const mcu_tensor_t *to = mcu_output_tensor(ctx, node, 0);                                   \
    MCU_ENSURE_MODEL(ti != NULL && (ti->ndims == 3 || ti->ndims == 4), MCU_ERR_BAD_MODEL);      \
    MCU_ENSURE_MODEL(to->ndims == ti->ndims, MCU_ERR_BAD_MODEL);                                \
    MCU_ENSURE_MODEL(p->block_h > 0 && p->block_w > 0, MCU_ERR_BAD_MODEL);                      \
    *in = mcu_space_batch_shape(ti);                                                            \
    *out = mcu_space_batch_shape(to);                                                           \
    MCU_ENSURE_MODEL(joined->batch > 0, MCU_ERR_BAD_MODEL);                                     \
    MCU_ENSURE_MODEL(in->depth == out->depth, MCU_ERR_BAD_MODEL);                               \
    MCU_ENSURE_MODEL(spread->batch == joined->batch * p->block_h * p->block_w,                  \
                     MCU_ERR_BAD_MODEL);                                                        \
    return MCU_OK;                                                                              \
  }

#endif
