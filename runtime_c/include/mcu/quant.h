/* Fixed-point helpers with the exact rounding of TFLM's reference kernels (gemmlowp, double
 * rounding: TFLITE_SINGLE_ROUNDING is off in TFLM's default build). */
#ifndef MCU_QUANT_H
#define MCU_QUANT_H

#include <math.h>
#include <stdint.h>

static inline int32_t mcu_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t mcu_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t mcu_clamp_i32(int32_t x, int32_t lo, int32_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}
static inline float mcu_clamp_f32(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* TFLM's float logistic (reference_ops::Logistic): 1 / (1 + exp(-v)) with its two cut-offs. */
static inline float mcu_sigmoid_f32(float v) {
  if (v > 16.619047164916992188f) {
    return 1.0f;
  }
  if (v < -9.0f) {
    return expf(v);
  }
  return 1.0f / (1.0f + expf(-v));
}

/* Number of leading zero bits of a 32-bit value (32 for zero), as TFLM's CountLeadingZeros. */
static inline int mcu_clz32(uint32_t x) {
  int n = 0;
  for (uint32_t bit = (uint32_t)1 << 31; bit != 0 && (x & bit) == 0; bit >>= 1) {
    ++n;
  }
  return n;
}

/* TFLM signal's MostSignificantBit32 as its GCC build computes it: the 1-based position of the
 * highest set bit, and 32 (not 0) for zero (signal/src/msb_32.cc, __builtin_clz branch). */
static inline uint32_t mcu_msb32(uint32_t x) {
  return x != 0 ? (uint32_t)(32 - mcu_clz32(x)) : 32u;
}

/* The same for 64 bits: 64 for zero (msb_64.cc). */
static inline uint32_t mcu_msb64(uint64_t x) {
  uint32_t high = (uint32_t)(x >> 32);
  if (high != 0) {
    return 32u + mcu_msb32(high);
  }
  return x != 0 ? mcu_msb32((uint32_t)x) : 64u;
}

/* Two's-complement wrapping multiply, as the C++ reference computes x * (1 << shift). */
/* a + b modulo 2^32: the sums TFLM leaves to overflow (undefined behaviour there, a wrap in
 * practice), defined here. */
static inline int32_t mcu_wrap_add_i32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t mcu_wrap_mul_i32(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a * (uint32_t)b);
}

/* gemmlowp::SaturatingRoundingDoublingHighMul */
static inline int32_t mcu_srdhm(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) {
    return INT32_MAX;
  }
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* gemmlowp::RoundingDivideByPOT: round half away from zero. */
static inline int32_t mcu_rdbpot(int32_t x, int exponent) {
  int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* tflite::MultiplyByQuantizedMultiplier (int32 x, double rounding). */
static inline int32_t mcu_mbqm(int32_t x, int32_t multiplier, int shift) {
  int left = shift > 0 ? shift : 0;
  int right = shift > 0 ? 0 : -shift;
  return mcu_rdbpot(mcu_srdhm(mcu_wrap_mul_i32(x, (int32_t)1 << left), multiplier), right);
}

/* tflite::MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0). */
static inline int32_t mcu_mbqm_smaller_than_one(int32_t x, int32_t multiplier, int shift) {
  return mcu_rdbpot(mcu_srdhm(x, multiplier), -shift);
}

/* tflite::MultiplyByQuantizedMultiplierGreaterThanOne (shift >= 0). */
static inline int32_t mcu_mbqm_greater_than_one(int32_t x, int32_t multiplier, int shift) {
  return mcu_srdhm(mcu_wrap_mul_i32(x, (int32_t)1 << shift), multiplier);
}

/* tflite::MultiplyByQuantizedMultiplier (int64 x), used by 16-bit kernels. */
static inline int32_t mcu_mbqm_i64(int64_t x, int32_t multiplier, int shift) {
  int32_t reduced = multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
  int total_shift = 15 - shift;
  x = x * (int64_t)reduced + ((int64_t)1 << (total_shift - 1));
  return (int32_t)(x >> total_shift);
}

/* ---- gemmlowp fixed-point math (FixedPoint<int32_t, integer_bits>), shared by LOGISTIC and TANH.
 * A value with `integer_bits` integer bits has 31 - integer_bits fractional bits. ---- */

/* gemmlowp::SaturatingRoundingMultiplyByPOT<exponent> for exponent >= 0 (int32). */
static inline int32_t mcu_sat_shl_i32(int32_t x, int exponent) {
  if (exponent <= 0) {
    return x;
  }
  int32_t threshold = (int32_t)(((int64_t)1 << (31 - exponent)) - 1);
  if (x > threshold) {
    return INT32_MAX;
  }
  if (x < -threshold) {
    return INT32_MIN;
  }
  return mcu_wrap_mul_i32(x, (int32_t)1 << exponent);
}

/* gemmlowp::RoundingHalfSum (int32): (a + b) / 2, halves away from zero. */
static inline int32_t mcu_rounding_half_sum(int32_t a, int32_t b) {
  int64_t sum = (int64_t)a + (int64_t)b;
  return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor series around -1/8. */
static inline int32_t mcu_fp_exp_quarter_interval(int32_t a) {
  const int32_t exp_minus_one_eighth = 1895147668;
  const int32_t one_third = 715827883;
  int32_t x = a + (1 << 28);
  int32_t x2 = mcu_srdhm(x, x);
  int32_t x3 = mcu_srdhm(x2, x);
  int32_t x4 = mcu_srdhm(x2, x2);
  int32_t poly = mcu_srdhm(mcu_rdbpot(x4, 2) + x3, one_third) + x2;
  int32_t sum = x + mcu_rdbpot(poly, 1);
  return exp_minus_one_eighth + mcu_srdhm(exp_minus_one_eighth, sum);
}

/* gemmlowp::exp_on_negative_values: exp(a) for a <= 0 with `integer_bits` integer bits (0..6),
 * result in Q0.31. */
static inline int32_t mcu_fp_exp_on_negative_values(int32_t a, int integer_bits) {
  /* exp(-2^k) in Q0.31 for k = -2 .. 4 */
  static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308,
                                    39332535,   720401,     242};
  const int frac_bits = 31 - integer_bits;
  const int32_t one_quarter = (int32_t)1 << (frac_bits - 2);
  int32_t a_mod = (a & (one_quarter - 1)) - one_quarter;
  int32_t result = mcu_fp_exp_quarter_interval(mcu_sat_shl_i32(a_mod, integer_bits));
  int32_t remainder = a_mod - a;
  for (int k = -2; k <= 4 && k < integer_bits; ++k) {
    if ((remainder & ((int32_t)1 << (frac_bits + k))) != 0) {
      result = mcu_srdhm(result, barrel[k + 2]);
    }
  }
  if (integer_bits > 5 && a < -((int32_t)1 << (36 - integer_bits))) {
    result = 0;
  }
  return a == 0 ? INT32_MAX : result;
}

/* Newton-Raphson reciprocal used by gemmlowp's logistic and tanh: for d = (1 + x) / 2 in
 * Q0.31 (x in (0, 1)), returns 1 / d in Q2.29. */
static inline int32_t mcu_fp_reciprocal_of_half_sum(int32_t half_denominator) {
  const int32_t c48_over_17 = 1515870810;
  const int32_t c_neg32_over_17 = -1010580540;
  const int32_t one_q2 = (int32_t)1 << 29;
  int32_t x = c48_over_17 + mcu_srdhm(half_denominator, c_neg32_over_17);
  for (int i = 0; i < 3; ++i) {
    int32_t one_minus_dx = one_q2 - mcu_srdhm(half_denominator, x);
    x = x + mcu_sat_shl_i32(mcu_srdhm(x, one_minus_dx), 2);
  }
  return x;
}

/* gemmlowp::one_over_one_plus_x_for_x_in_0_1: Q0.31 in, Q0.31 out (SOFTMAX, LOG_SOFTMAX). */
static inline int32_t mcu_fp_one_over_one_plus_x(int32_t x) {
  int32_t reciprocal_q2 = mcu_fp_reciprocal_of_half_sum(mcu_rounding_half_sum(x, INT32_MAX));
  return mcu_sat_shl_i32(reciprocal_q2, 1);
}

/* TFLM's int16 LOGISTIC / TANH input rescaling to sigmoid-table steps; multiplier 0 stands for
 * 3 << left_shift with no shift. The sum wraps as the C++ int32 one. */
static inline int32_t mcu_sigmoid_table_input(int16_t x, int32_t multiplier, int32_t left_shift) {
  if (multiplier == 0) {
    multiplier = 3 << left_shift;
    left_shift = 0;
  }
  uint32_t round = left_shift > 0 ? (uint32_t)1 << (left_shift - 1) : 0u;
  return (int32_t)((uint32_t)(x * multiplier) + round) >> left_shift;
}

/* TFLM's int16 logistic of one value after mcu_sigmoid_table_input (LOGISTIC, the LSTM's gates):
 * |x| interpolated in the table (9 fraction bits), mirrored for x < 0. */
static inline int16_t mcu_sigmoid_q15(int32_t v, const uint16_t *table) {
  uint32_t a = (uint32_t)(v < 0 ? -v : v);
  uint32_t uh = a >> 9;
  uint32_t result = (uint32_t)0x7FFF << 10;
  if (uh < 255) {
    uint32_t ua = table[uh];
    uint32_t ub = table[uh + 1];
    result = (ua << 9) + (a & 0x1ff) * (ub - ua);
  }
  result = v >= 0 ? result + (1u << 9) : ((uint32_t)1 << 25) - result + (1u << 9) - 1u;
  return (int16_t)(result >> 10);
}

/* TFLM's int16 tanh of one value after mcu_sigmoid_table_input (TANH, the LSTM): tanh(x) =
 * 2 sigmoid(2x) - 1 from the table (8 fraction bits), mirrored for x < 0. */
static inline int16_t mcu_tanh_q15(int32_t v, const uint16_t *table) {
  uint32_t a = (uint32_t)(v < 0 ? -v : v);
  uint32_t uh = a >> 8;
  int32_t result = (int32_t)((uint32_t)0xFFFF << 8);
  if (uh < 255) {
    uint32_t ua = table[uh];
    uint32_t ub = table[uh + 1];
    result = (int32_t)((ua << 8) + (a & 0xff) * (ub - ua));
  }
  result = v >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
  return (int16_t)(result >> 8);
}

/* Numpy broadcasting, shared by the binary elementwise kernels (ADD, SUB, MUL, MAXIMUM, MINIMUM,
 * PRELU). An input's dims align with the output's last dims; an input dim of 1 repeats. */

/* 1 when dims `in` broadcast to dims `out`, else 0. */
static inline int mcu_broadcasts_to(const int32_t *in, int in_ndims, const int32_t *out,
                                    int out_ndims) {
  if (in_ndims > out_ndims) {
    return 0;
  }
  for (int k = 1; k <= in_ndims; ++k) {
    int32_t d = in[in_ndims - k];
    if (d != 1 && d != out[out_ndims - k]) {
      return 0;
    }
  }
  return 1;
}

/* Element offset in an input of dims `in` of the output element at row-major index `flat`.
 * Requires mcu_broadcasts_to(in, out) and every output dim > 0. */
static inline int32_t mcu_broadcast_offset(const int32_t *in, int in_ndims, const int32_t *out,
                                           int out_ndims, int32_t flat) {
  int32_t offset = 0;
  int32_t stride = 1;
  for (int k = 1; k <= in_ndims; ++k) {
    int32_t out_dim = out[out_ndims - k];
    if (in[in_ndims - k] != 1) {
      offset += (flat % out_dim) * stride;
    }
    flat /= out_dim;
    stride *= in[in_ndims - k];
  }
  return offset;
}

#endif /* MCU_QUANT_H */
