/* PACK, as TFLM's pack kernel: input i fills index i of the new output axis. */
#include "mcu/kernels/pack.h"

#include <string.h>

#include "mcu/axis.h"

static mcu_status_t pack_dims(const mcu_node_t *node, const mcu_context_t *ctx, mcu_axis_t *d) {
  const mcu_pack_params_t *p = node->params;
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  int axis = (int)p->axis;
  MCU_ENSURE_MODEL(axis >= 0 && axis < output->ndims && p->elem_bytes > 0, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(output->dims[axis] == node->num_inputs, MCU_ERR_BAD_MODEL);
  *d = mcu_axis_of(output, axis, p->elem_bytes);
  for (int i = 0; i < node->num_inputs; ++i) {
    const mcu_tensor_t *t = mcu_input_tensor(ctx, node, i);
    MCU_ENSURE_MODEL(t != NULL && t->type == output->type, MCU_ERR_BAD_MODEL);
    MCU_ENSURE_MODEL((int64_t)t->bytes == (int64_t)d->outer * d->inner, MCU_ERR_BAD_MODEL);
  }
  return MCU_OK;
}

mcu_status_t mcu_pack(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_axis_t d;
  MCU_TRY(pack_dims(node, ctx, &d));
  if (d.inner == 0) {
    return MCU_OK;
  }
  uint8_t *out = mcu_output(ctx, node, 0);
  size_t copy = (size_t)d.inner;
  size_t count = (size_t)node->num_inputs;
  for (int i = 0; i < node->num_inputs; ++i) {
    const uint8_t *in = mcu_input(ctx, node, i);
    for (int32_t k = 0; k < d.outer; ++k) {
      memcpy(out + ((size_t)k * count + (size_t)i) * copy, in + (size_t)k * copy, copy);
    }
  }
  return MCU_OK;
}
