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

/* ADD and SUB's parameters. int8 and int16 follow TFLM's scheme: both inputs are shifted left by
 * `left_shift`, rescaled to a common scale, summed (SUB: subtracted), then rescaled to the
 * output. */
typedef struct {
  int32_t left_shift;
  int32_t input1_offset; /* -input1 zero point */
  int32_t input1_multiplier;
  int32_t input1_shift; /* <= 0 */
  int32_t input2_offset; /* -input2 zero point */
  int32_t input2_multiplier;
  int32_t input2_shift;
  int32_t output_offset; /* output zero point */
  int32_t output_multiplier;
  int32_t output_shift;
  int32_t act_min;
  int32_t act_max;
  float act_min_f;
  float act_max_f;
} mcu_add_sub_params_t;

/* One element of ADD (`sign` 1) or SUB (`sign` -1), clamped to the activation range of the
 * output type (int8 or int16). Always inlined, so that each loop compiles for its own sign (as a
 * call it cost the bundled model's ADD 1.7 % more instructions). */
static inline __attribute__((always_inline)) int32_t mcu_add_sub_one(
    int32_t x1, int32_t x2, const mcu_add_sub_params_t *p, int32_t sign) {
  int32_t shifted1 = mcu_wrap_mul_i32(p->input1_offset + x1, (int32_t)1 << p->left_shift);
  int32_t shifted2 = mcu_wrap_mul_i32(p->input2_offset + x2, (int32_t)1 << p->left_shift);
  int32_t scaled1 = mcu_mbqm_smaller_than_one(shifted1, p->input1_multiplier, p->input1_shift);
  int32_t scaled2 = mcu_mbqm_smaller_than_one(shifted2, p->input2_multiplier, p->input2_shift);
  int32_t raw = mcu_mbqm_smaller_than_one(scaled1 + sign * scaled2, p->output_multiplier,
                                          p->output_shift) +
                p->output_offset;
  return mcu_clamp_i32(raw, p->act_min, p->act_max);
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
