/* LOG_SOFTMAX, bit-exact with TFLM reference_ops::LogSoftmaxQuantized (int8: exp of Q5.26
 * differences summed in Q12.19, gemmlowp's log for x >= 1 back to Q5.26) and close to
 * reference_ops::LogSoftmax for float32 (same float operations, libm expf and logf). */
#include "mcu/kernels/log_softmax.h"

#include <float.h>
#include <math.h>

#include "mcu/axis.h"
#include "mcu/quant.h"

enum {
  INPUT_INTEGER_BITS = 5,   /* differences: Q5.26 */
  ACCUM_INTEGER_BITS = 12,  /* sum of exps: Q12.19 */
  OUTPUT_INTEGER_BITS = 4,  /* output: Q4.27 before the final shift */
  LOG_ACCUM_INTEGER_BITS = 6 /* the log's accumulator: one bit above its Q5.26 result */
};

/* gemmlowp::SaturatingRoundingMultiplyByPOT with a run-time exponent of either sign. */
static int32_t sat_round_mul_pot(int32_t x, int exponent) {
  return exponent >= 0 ? mcu_sat_shl_i32(x, exponent) : mcu_rdbpot(x, -exponent);
}

static int32_t sat_add(int32_t a, int32_t b) {
  int64_t sum = (int64_t)a + (int64_t)b;
  return (int32_t)(sum > INT32_MAX ? INT32_MAX : (sum < INT32_MIN ? INT32_MIN : sum));
}

/* ln(x) for x >= 1 given with 12 integer bits; Q5.26 result (TFLM's
 * log_x_for_x_greater_than_or_equal_to_1<5>: x = 2^z * r with r near 1, then a rational
 * approximation of ln(r) evaluated in Q0.31, accumulated in Q6.25). */
static int32_t log_of_sum(int32_t x) {
  const int32_t log_2 = 1488522236;
  const int32_t sqrt_sqrt_half = 1805811301;
  const int32_t sqrt_half = 1518500250;
  const int32_t alpha_n = 117049297;
  const int32_t alpha_d = 127690142;
  const int32_t alpha_i = 1057819769;
  const int32_t alpha_f = 638450708;
  const int32_t quarter = (int32_t)1 << (31 - 2 - LOG_ACCUM_INTEGER_BITS);
  const int frac_shift = 31 - LOG_ACCUM_INTEGER_BITS;
  int a_headroom_plus_1 = mcu_clz32((uint32_t)x);
  int32_t r_a_tmp = sat_round_mul_pot(x, a_headroom_plus_1 - 1);
  int32_t r_a = sat_round_mul_pot(mcu_srdhm(r_a_tmp, sqrt_half), 1);
  int32_t a_pow_2 = sat_add(
      sat_round_mul_pot(ACCUM_INTEGER_BITS - a_headroom_plus_1, frac_shift), quarter);
  int b_headroom = mcu_clz32((uint32_t)mcu_srdhm(x, sqrt_half)) - 1;
  int32_t r_b = sat_round_mul_pot(x, b_headroom);
  int32_t b_pow_2 =
      sat_add(sat_round_mul_pot(ACCUM_INTEGER_BITS - b_headroom, frac_shift), -quarter);
  int32_t r = mcu_min_i32(r_a, r_b);
  int32_t pow_2 = mcu_max_i32(a_pow_2, b_pow_2);
  int32_t p = mcu_rounding_half_sum(r, sqrt_sqrt_half);
  int32_t q = 2 * (r - sqrt_sqrt_half);
  int32_t q_squared = mcu_srdhm(q, q);
  int32_t num = mcu_srdhm(q, r) + mcu_srdhm(mcu_srdhm(q, q_squared), alpha_n);
  int32_t denom_minus_one =
      mcu_srdhm(p, alpha_i + q + mcu_srdhm(alpha_d, q_squared)) + mcu_srdhm(alpha_f, q);
  int32_t recip_denom = mcu_fp_one_over_one_plus_x(denom_minus_one);
  int32_t num_scaled = mcu_rdbpot(num, LOG_ACCUM_INTEGER_BITS);
  int32_t sum = mcu_srdhm(pow_2, log_2) + mcu_srdhm(num_scaled, recip_denom);
  return mcu_sat_shl_i32(sum, LOG_ACCUM_INTEGER_BITS - INPUT_INTEGER_BITS);
}

static void log_softmax_row_int8(const mcu_log_softmax_params_t *p, const int8_t *in,
                                 int32_t depth, int8_t *out) {
  int32_t max = INT8_MIN;
  for (int32_t c = 0; c < depth; ++c) {
    max = mcu_max_i32(max, in[c]);
  }
  uint32_t sum = 0; /* Q12.19, wrapping as the C++ int32 additions */
  for (int32_t c = 0; c < depth; ++c) {
    int32_t diff = in[c] - max;
    if (diff >= p->diff_min) {
      int32_t diff_q5 = mcu_mbqm(diff, p->input_multiplier, p->input_left_shift);
      int32_t e = mcu_fp_exp_on_negative_values(diff_q5, INPUT_INTEGER_BITS);
      sum += (uint32_t)mcu_rdbpot(e, ACCUM_INTEGER_BITS);
    }
  }
  int32_t log_sum = log_of_sum((int32_t)sum);
  int32_t shifted_log_sum = (int32_t)((uint32_t)log_sum + (uint32_t)INT32_MIN);
  int32_t adjusted_diff_min =
      mcu_max_i32(p->diff_min - 1,
                  mcu_mbqm(shifted_log_sum, p->reverse_scaling_divisor, p->reverse_scaling_shift));
  for (int32_t c = 0; c < depth; ++c) {
    int32_t diff = in[c] - max;
    int32_t value = INT8_MIN;
    if (diff > adjusted_diff_min) {
      int32_t diff_q5 = mcu_mbqm(diff, p->input_multiplier, p->input_left_shift);
      int32_t unsat = mcu_rdbpot(diff_q5 - log_sum, 31 - INPUT_INTEGER_BITS - OUTPUT_INTEGER_BITS);
      value = mcu_clamp_i32(unsat + INT8_MAX, INT8_MIN, INT8_MAX);
    }
    out[c] = (int8_t)value;
  }
}

MCU_AXIS_ROWS_KERNEL(mcu_log_softmax_int8, int8_t, log_softmax_row_int8)

static void log_softmax_row_f32(const void *params, const float *in, int32_t depth, float *out) {
  (void)params; /* float32 has none */
  float max = -FLT_MAX;
  for (int32_t c = 0; c < depth; ++c) {
    max = in[c] > max ? in[c] : max;
  }
  float sum = 0.0f;
  for (int32_t c = 0; c < depth; ++c) {
    sum += expf(in[c] - max);
  }
  float log_sum = logf(sum);
  for (int32_t c = 0; c < depth; ++c) {
    out[c] = in[c] - max - log_sum;
  }
}

MCU_AXIS_ROWS_KERNEL(mcu_log_softmax_f32, float, log_softmax_row_f32)
