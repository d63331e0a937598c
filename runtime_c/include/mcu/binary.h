/* Shared by the broadcasting binary kernels (ADD, SUB, MUL, DIV, FLOOR_MOD, MAXIMUM, MINIMUM,
 * PRELU): the operand tensors, checked to broadcast (numpy rules) to the output, the flat element
 * offset of an operand, and the loop over the output's elements. */
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

/* The eval loop of a broadcasting binary kernel with operands and output of element type `type`:
 * checks the shapes (returning their status), then for each output element in order runs the
 * statement given last, which sees the two operands' elements as `x1` and `x2` (of `type`) and
 * writes `*y`. Everything the kernel declared before (its parameters) is in scope. */
#define MCU_BINARY_EACH(node, ctx, type, ...)          \
  do {                                                 \
    mcu_binary_shapes_t s_;                            \
    MCU_TRY(mcu_binary_shapes(node, ctx, &s_));        \
    const type *a_ = mcu_input(ctx, node, 0);          \
    const type *b_ = mcu_input(ctx, node, 1);          \
    type *y = mcu_output(ctx, node, 0);                \
    int32_t n_ = mcu_num_elements(s_.y);               \
    for (int32_t i_ = 0; i_ < n_; ++i_, ++y) {         \
      type x1 = a_[mcu_binary_offset(s_.a, s_.y, i_)]; \
      type x2 = b_[mcu_binary_offset(s_.b, s_.y, i_)]; \
      __VA_ARGS__;                                     \
    }                                                  \
  } while (0)

#endif
