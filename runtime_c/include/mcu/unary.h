/* Shared by the element-wise unary kernels (RELU, RELU6, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH):
 * the element count, checked to be the output's, and the loop over the elements; LOGISTIC's and
 * TANH's integer parameters and their int8 fixed-point frame. */
#ifndef MCU_UNARY_H
#define MCU_UNARY_H

#include "mcu/quant.h"
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

/* Defines the kernel `name` whose eval is MCU_UNARY_EACH of the statement given last, with its
 * parameters as `p` (of `params_t`; void when it has none). */
#define MCU_UNARY_KERNEL(name, params_t, in_type, out_type, ...)  \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) { \
    const params_t *p = node->params;                             \
    (void)p;                                                      \
    MCU_UNARY_EACH(node, ctx, in_type, out_type, __VA_ARGS__);    \
    return MCU_OK;                                                \
  }

/* LOGISTIC's and TANH's int8 parameters (TFLM's gemmlowp path). */
typedef struct {
  int32_t input_zero_point;
  int32_t input_range_radius; /* |q - zp| at or beyond this saturates */
  int32_t input_multiplier;   /* rescales q - zp to Q4.27 */
  int32_t input_left_shift;
} mcu_unary_fixed_params_t;

/* LOGISTIC's and TANH's int16 parameters: the input rescaled to steps of 1 / (3 * 4096)
 * (multiplier 0: a power-of-two scale, 3 << shift), then linear interpolation in a 256-entry
 * sigmoid table built at build time (mcu_sigmoid_table_input, mcu_sigmoid_q15, mcu_tanh_q15). */
typedef struct {
  int32_t input_multiplier;
  int32_t input_left_shift;
  const uint16_t *sigmoid_table; /* sigmoid(i / 24) in Q0.16 */
} mcu_unary_table_params_t;

/* One int8 element of LOGISTIC or TANH: q - zp saturates at the radius, else goes to Q4.27,
 * through `fixed` (a gemmlowp function, to Q0.31), then down by 2^`shift` (rounding), plus
 * `offset`, clamped. */
static inline int8_t mcu_unary_fixed_int8(int8_t q, const mcu_unary_fixed_params_t *p,
                                          int32_t (*fixed)(int32_t, int), int shift,
                                          int32_t offset) {
  int32_t centered = (int32_t)q - p->input_zero_point;
  if (centered <= -p->input_range_radius) {
    return INT8_MIN;
  }
  if (centered >= p->input_range_radius) {
    return INT8_MAX;
  }
  int32_t in_q4 = mcu_mbqm(centered, p->input_multiplier, p->input_left_shift);
  int32_t out = mcu_rdbpot(fixed(in_q4, 4), shift) + offset;
  return (int8_t)mcu_clamp_i32(out, INT8_MIN, INT8_MAX);
}

/* One int16 element of LOGISTIC or TANH: `q15` (mcu_sigmoid_q15, mcu_tanh_q15) of the input
 * rescaled to the table's steps. */
static inline int16_t mcu_unary_table_int16(int16_t x, const mcu_unary_table_params_t *p,
                                            int16_t (*q15)(int32_t, const uint16_t *)) {
  return q15(mcu_sigmoid_table_input(x, p->input_multiplier, p->input_left_shift),
             p->sigmoid_table);
}

#endif
