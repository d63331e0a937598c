/* SOFTMAX, bit-exact with TFLM reference_ops::Softmax for int8 input (gemmlowp fixed point:
 * exp of Q5.26 differences, Q12.19 sum, Newton-Raphson reciprocal; int8 or int16 output),
 * reference_ops::SoftmaxInt16 (two interpolated lookup tables) and
 * close to it for float32 (same float operations in the same order, libm expf). */
#include "mcu/kernels/softmax.h"

#include <math.h>

#include "mcu/axis.h"
#include "mcu/quant.h"

enum {
  SCALED_DIFF_INTEGER_BITS = 5, /* exp input: Q5.26 */
  ACCUM_INTEGER_BITS = 12       /* sum of exps: Q12.19 */
};

/* exp(beta * s_in * diff) in Q0.31 for a difference to the row maximum (diff <= 0). */
static int32_t scaled_exp(const mcu_softmax_params_t *p, int32_t diff) {
  int32_t rescaled = mcu_mbqm_greater_than_one(diff, p->input_multiplier, p->input_left_shift);
  return mcu_fp_exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS);
}

static int32_t row_max(const int8_t *in, int32_t depth) {
  int32_t max = INT8_MIN;
  for (int32_t c = 0; c < depth; ++c) {
    max = mcu_max_i32(max, in[c]);
  }
  return max;
}

/* Sum of the counted exps in Q12.19 (wrapping adds, as the C++ int32 additions). */
static int32_t sum_of_exps(const mcu_softmax_params_t *p, const int8_t *in, int32_t depth,
                           int32_t max) {
  uint32_t sum = 0;
  for (int32_t c = 0; c < depth; ++c) {
    int32_t diff = in[c] - max;
    if (diff >= p->diff_min) {
      sum += (uint32_t)mcu_rdbpot(scaled_exp(p, diff), ACCUM_INTEGER_BITS);
    }
  }
  return (int32_t)sum;
}

/* One row: probabilities scaled to the output type's full range, starting at out_min. */
static mcu_status_t softmax_row(const mcu_softmax_params_t *p, const int8_t *in, int32_t depth,
                                int out_bits, void *out) {
  const int32_t out_min = out_bits == 8 ? INT8_MIN : INT16_MIN;
  const int32_t out_max = out_bits == 8 ? INT8_MAX : INT16_MAX;
  int32_t max = row_max(in, depth);
  int32_t sum = sum_of_exps(p, in, depth, max);
  int headroom_plus_one = mcu_clz32((uint32_t)sum);
  int exponent = ACCUM_INTEGER_BITS - headroom_plus_one + 31 - out_bits;
  MCU_ENSURE(exponent >= 0 && exponent <= 31, MCU_ERR_INPUT);
  uint32_t shifted = ((uint32_t)sum << headroom_plus_one) - ((uint32_t)1 << 31);
  int32_t scale = mcu_fp_one_over_one_plus_x((int32_t)shifted);
  for (int32_t c = 0; c < depth; ++c) {
    int32_t diff = in[c] - max;
    int32_t value = out_min;
    if (diff >= p->diff_min) {
      int32_t unsat = mcu_rdbpot(mcu_srdhm(scale, scaled_exp(p, diff)), exponent);
      value = mcu_clamp_i32(unsat + out_min, out_min, out_max);
    }
    if (out_bits == 8) {
      ((int8_t *)out)[c] = (int8_t)value;
    } else {
      ((int16_t *)out)[c] = (int16_t)value;
    }
  }
  return MCU_OK;
}

static mcu_status_t softmax_quantized(const mcu_node_t *node, mcu_context_t *ctx, int out_bits) {
  mcu_axis_t d;
  MCU_TRY(mcu_axis_rows(node, ctx, &d));
  const int8_t *input = mcu_input(ctx, node, 0);
  uint8_t *output = mcu_output(ctx, node, 0);
  size_t row_bytes = (size_t)d.inner * (size_t)(out_bits / 8);
  for (int32_t i = 0; i < d.outer; ++i) {
    MCU_TRY(softmax_row(node->params, input + (size_t)i * (size_t)d.inner, d.inner, out_bits,
                        output + (size_t)i * row_bytes));
  }
  return MCU_OK;
}

mcu_status_t mcu_softmax_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  return softmax_quantized(node, ctx, 8);
}

mcu_status_t mcu_softmax_int8_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  return softmax_quantized(node, ctx, 16);
}

/* TFLM's LUTLookup for int16: 512 segments, linear interpolation on the low 7 bits. */
static int16_t lut_lookup_int16(int16_t value, const int16_t *lut) {
  int32_t index = 256 + (value >> 7);
  int32_t offset = value & 0x7f;
  int16_t slope = (int16_t)(lut[index + 1] - lut[index]);
  int32_t delta = (slope * offset + 64) >> 7;
  return (int16_t)(lut[index] + delta);
}

static int16_t saturate_int16(int32_t x) { return (int16_t)mcu_clamp_i32(x, INT16_MIN, INT16_MAX); }

/* One row of SoftmaxInt16: exps from the table (kept in the output row, as TFLM does), their
 * Q16.15 sum, its reciprocal from the second table, and the products rescaled to Q0.15. */
static void softmax_row_int16(const mcu_softmax_int16_params_t *p, const int16_t *in,
                              int32_t depth, int16_t *out) {
  int32_t max = INT16_MIN;
  for (int32_t c = 0; c < depth; ++c) {
    max = mcu_max_i32(max, in[c]);
  }
  int32_t sum = 0;
  for (int32_t c = 0; c < depth; ++c) {
    int32_t scaled = mcu_mbqm(in[c] - max, p->input_multiplier, p->input_left_shift);
    out[c] = lut_lookup_int16(saturate_int16(scaled + 32767), p->exp_lut);
    sum += out[c];
  }
  int headroom_plus_one = mcu_clz32((uint32_t)sum);
  int32_t shifted = (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
  int16_t x = saturate_int16(shifted - ((1 << 15) + (1 << 16)));
  int16_t reciprocal = lut_lookup_int16(x, p->one_over_one_plus_x_lut);
  int right_shift = 31 - headroom_plus_one;
  int64_t round = (int64_t)1 << (right_shift - 1);
  for (int32_t c = 0; c < depth; ++c) {
    int32_t result = (int32_t)(((int64_t)out[c] * reciprocal + round) >> right_shift);
    out[c] = (int16_t)mcu_clamp_i32(result, 0, INT16_MAX);
  }
}

MCU_AXIS_ROWS_KERNEL(mcu_softmax_int16, int16_t, softmax_row_int16)

static void softmax_row_f32(const mcu_softmax_params_t *p, const float *in, int32_t depth,
                            float *out) {
  float max = in[0];
  for (int32_t c = 1; c < depth; ++c) {
    max = in[c] > max ? in[c] : max;
  }
  float sum = 0.0f;
  for (int32_t c = 0; c < depth; ++c) {
    out[c] = expf((in[c] - max) * p->beta);
    sum += out[c];
  }
  for (int32_t c = 0; c < depth; ++c) {
    out[c] = out[c] / sum;
  }
}

MCU_AXIS_ROWS_KERNEL(mcu_softmax_f32, float, softmax_row_f32)
