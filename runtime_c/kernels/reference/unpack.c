/* UNPACK, as TFLM's unpack kernel: output i takes index i of the input axis. */
#include "mcu/kernels/unpack.h"

#include <string.h>

#include "mcu/axis.h"

static mcu_status_t unpack_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                                mcu_axis_t *d) {
  const mcu_unpack_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && p->elem_bytes > 0, MCU_ERR_BAD_MODEL);
  int axis = (int)p->axis;
  MCU_ENSURE_MODEL(axis >= 0 && axis < input->ndims, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(input->dims[axis] == node->num_outputs, MCU_ERR_BAD_MODEL);
  *d = mcu_axis_of(input, axis, p->elem_bytes);
  for (int i = 0; i < node->num_outputs; ++i) {
    const mcu_tensor_t *t = mcu_output_tensor(ctx, node, i);
    MCU_ENSURE_MODEL(t->type == input->type, MCU_ERR_BAD_MODEL);
    MCU_ENSURE_MODEL((int64_t)t->bytes == (int64_t)d->outer * d->inner, MCU_ERR_BAD_MODEL);
  }
  return MCU_OK;
}

mcu_status_t mcu_unpack(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_axis_t d;
  MCU_TRY(unpack_dims(node, ctx, &d));
  if (d.inner == 0) {
    return MCU_OK;
  }
  const uint8_t *in = mcu_input(ctx, node, 0);
  size_t copy = (size_t)d.inner;
  size_t count = (size_t)node->num_outputs;
  for (int i = 0; i < node->num_outputs; ++i) {
    uint8_t *out = mcu_output(ctx, node, i);
    for (int32_t k = 0; k < d.outer; ++k) {
      memcpy(out + (size_t)k * copy, in + ((size_t)k * count + (size_t)i) * copy, copy);
    }
  }
  return MCU_OK;
}
