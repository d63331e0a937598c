/* Float functions of the training kernels, written out so that every build computes the same
 * bits: the host's glibc and the firmware's newlib give different expf and logf, and a training
 * run must give the same weights on the host and on the board. Only IEEE single-precision
 * additions, multiplications and divisions, in a fixed order (the builds use -std=c11, which
 * does not contract a * b + c into a fused multiply-add). Both are within 2 ulp of the exact
 * result over the range the loss kernels use. */
#ifndef MCU_TRAIN_MATH_H
#define MCU_TRAIN_MATH_H

#include <stdint.h>
#include <string.h>

static inline float mcu_bits_to_f32(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint32_t mcu_f32_to_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

/* e^x: x = k ln 2 + r with |r| <= ln 2 / 2 (ln 2 split in two so that k ln 2 is exact), e^r by
 * its Taylor polynomial of degree 7 (truncation below 3e-9 relative), times 2^k built from its
 * exponent bits. 0 below -87 (under the smallest normal float), infinity above 88.7. */
static inline float mcu_exp_f32(float x) {
  if (!(x == x)) {
    return x; /* NaN */
  }
  if (x < -87.0f) {
    return 0.0f;
  }
  if (x > 88.7f) {
    return mcu_bits_to_f32(0x7F800000u);
  }
  float t = x * 1.44269504f;
  int32_t k = (int32_t)(t >= 0.0f ? t + 0.5f : t - 0.5f);
  float r = (x - (float)k * 0.693359375f) - (float)k * -2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * mcu_bits_to_f32((uint32_t)(k + 127) << 23);
}

/* ln x for a positive normal x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) for
 * s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^11 (truncation below 1e-9), plus e ln 2
 * (ln 2 split in two). Not a number for x <= 0 or NaN, infinity for infinity. */
static inline float mcu_log_f32(float x) {
  if (!(x > 0.0f)) {
    return mcu_bits_to_f32(0x7FC00000u);
  }
  uint32_t bits = mcu_f32_to_bits(x);
  if (bits >= 0x7F800000u) {
    return x;
  }
  int32_t e = (int32_t)(bits >> 23) - 127; /* the builds only see normal numbers here */
  float m = mcu_bits_to_f32((bits & 0x007FFFFFu) | 0x3F800000u);
  if (m > 1.41421356f) {
    m *= 0.5f;
    e += 1;
  }
  float s = (m - 1.0f) / (m + 1.0f);
  float s2 = s * s;
  float q = 1.0f / 11.0f;
  q = q * s2 + 1.0f / 9.0f;
  q = q * s2 + 1.0f / 7.0f;
  q = q * s2 + 1.0f / 5.0f;
  q = q * s2 + 1.0f / 3.0f;
  q = q * s2 + 1.0f;
  float ln_m = 2.0f * s * q;
  return ((float)e * -2.12194440e-4f + ln_m) + (float)e * 0.693359375f;
}

#endif
