/* Shared by the broadcasting binary kernels (ADD, SUB, MUL, MAXIMUM, MINIMUM, PRELU): the operand
 * tensors, checked to broadcast (numpy rules) to the output, and the flat element offset of an
 * operand. */
#ifndef MCU_BINARY_H
#define MCU_BINARY_H

#include "mcu/quant.h"
#include "mcu/runtime.h"

typedef struct {
  const mcu_tensor_t *a;
  const mcu_tensor_t *b;
  const mcu_tensor_t *y;
} mcu_binary_shapes_t;

static inline mcu_status_t mcu_binary_shapes(const mcu_node_t *node, const mcu_context_t *ctx,
                                             mcu_binary_shapes_t *s) {
  MCU_ENSURE_MODEL(node->num_inputs == 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  s->a = mcu_input_tensor(ctx, node, 0);
  s->b = mcu_input_tensor(ctx, node, 1);
  s->y = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(s->a != NULL && s->b != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(mcu_broadcasts_to(s->a->dims, s->a->ndims, s->y->dims, s->y->ndims) &&
                       mcu_broadcasts_to(s->b->dims, s->b->ndims, s->y->dims, s->y->ndims),
                   MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* Offset in operand `in` of the output's flat element `flat`. */
static inline int32_t mcu_binary_offset(const mcu_tensor_t *in, const mcu_tensor_t *y,
                                        int32_t flat) {
  return mcu_broadcast_offset(in->dims, in->ndims, y->dims, y->ndims, flat);
}

#endif
