/* Fixed-point helpers with the exact rounding of TFLM's reference kernels (gemmlowp, double
 * rounding: TFLITE_SINGLE_ROUNDING is off in TFLM's default build). */
#ifndef MCU_QUANT_H
#define MCU_QUANT_H

#include <stdint.h>

static inline int32_t mcu_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t mcu_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t mcu_clamp_i32(int32_t x, int32_t lo, int32_t hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}
static inline float mcu_clamp_f32(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* Two's-complement wrapping multiply, as the C++ reference computes x * (1 << shift). */
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

#endif /* MCU_QUANT_H */
