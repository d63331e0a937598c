/* Shared by RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: the sizes of an NHWC input and output
 * of one batch size and depth, the input not empty. */
#ifndef MCU_RESIZE_H
#define MCU_RESIZE_H

#include "mcu/runtime.h"

typedef struct {
  int32_t batches;
  int32_t in_h;
  int32_t in_w;
  int32_t out_h;
  int32_t out_w;
  int32_t depth;
} mcu_resize_dims_t;

static inline mcu_status_t mcu_resize_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                                           mcu_resize_dims_t *d) {
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in != NULL && in->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->dims[0] == out->dims[0] && in->dims[3] == out->dims[3], MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->dims[1] > 0 && in->dims[2] > 0, MCU_ERR_BAD_MODEL);
  d->batches = in->dims[0];
  d->in_h = in->dims[1];
  d->in_w = in->dims[2];
  d->out_h = out->dims[1];
  d->out_w = out->dims[2];
  d->depth = in->dims[3];
  return MCU_OK;
}

#endif
