/* UNPACK, as TFLM's unpack kernel: output i takes index i of the input axis. */
#include "mcu/kernels/unpack.h"

#include <string.h>

typedef struct {
  int32_t outer;      /* product of the input dims before the axis */
  int32_t copy_bytes; /* bytes of one output slab: product of the input dims after the axis */
} unpack_dims_t;

static int32_t product(const int32_t *dims, int from, int to) {
  int32_t n = 1;
  for (int i = from; i < to; ++i) {
    n *= dims[i];
  }
  return n;
}

static mcu_status_t unpack_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                                unpack_dims_t *d) {
  const mcu_unpack_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && p->elem_bytes > 0, MCU_ERR_BAD_MODEL);
  int axis = (int)p->axis;
  MCU_ENSURE_MODEL(axis >= 0 && axis < input->ndims, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(input->dims[axis] == node->num_outputs, MCU_ERR_BAD_MODEL);
  d->outer = product(input->dims, 0, axis);
  d->copy_bytes = product(input->dims, axis + 1, input->ndims) * p->elem_bytes;
  for (int i = 0; i < node->num_outputs; ++i) {
    const mcu_tensor_t *t = mcu_output_tensor(ctx, node, i);
    MCU_ENSURE_MODEL(t->type == input->type, MCU_ERR_BAD_MODEL);
    MCU_ENSURE_MODEL((int64_t)t->bytes == (int64_t)d->outer * d->copy_bytes, MCU_ERR_BAD_MODEL);
  }
  return MCU_OK;
}

mcu_status_t mcu_unpack(const mcu_node_t *node, mcu_context_t *ctx) {
  unpack_dims_t d;
  MCU_TRY(unpack_dims(node, ctx, &d));
  if (d.copy_bytes == 0) {
    return MCU_OK;
  }
  const uint8_t *in = mcu_input(ctx, node, 0);
  size_t copy = (size_t)d.copy_bytes;
  size_t count = (size_t)node->num_outputs;
  for (int i = 0; i < node->num_outputs; ++i) {
    uint8_t *out = mcu_output(ctx, node, i);
    for (int32_t k = 0; k < d.outer; ++k) {
      memcpy(out + (size_t)k * copy, in + ((size_t)k * count + (size_t)i) * copy, copy);
    }
  }
  return MCU_OK;
}
