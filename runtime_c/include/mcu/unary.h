/* Shared by the element-wise unary kernels (RELU, RELU6, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH):
 * the element count, checked to be the output's, and the loop over the elements. */
#ifndef MCU_UNARY_H
#define MCU_UNARY_H

#include "mcu/runtime.h"

static inline mcu_status_t mcu_unary_size(const mcu_node_t *node, const mcu_context_t *ctx,
                                          int32_t *n) {
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL, MCU_ERR_BAD_MODEL);
  *n = mcu_num_elements(input);
  MCU_ENSURE_MODEL(*n == mcu_num_elements(mcu_output_tensor(ctx, node, 0)), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* The eval loop of an element-wise unary kernel from `in_type` to `out_type`: checks the sizes
 * (returning their status), then for each element in order runs the statement given last, which
 * sees the input element as `x` (of `in_type`) and writes `*y`. Everything the kernel declared
 * before (its parameters) is in scope. */
#define MCU_UNARY_EACH(node, ctx, in_type, out_type, ...) \
  do {                                                    \
    int32_t n_;                                           \
    MCU_TRY(mcu_unary_size(node, ctx, &n_));              \
    const in_type *x_ = mcu_input(ctx, node, 0);          \
    out_type *y = mcu_output(ctx, node, 0);               \
    for (int32_t i_ = 0; i_ < n_; ++i_, ++y) {            \
      in_type x = x_[i_];                                 \
      __VA_ARGS__;                                        \
    }                                                     \
  } while (0)

#endif
