/* TFLM's requantisation (MultiplyByQuantizedMultiplier with double rounding, mcu/quant.h
 * mcu_mbqm) in fewer instructions, for the optimised kernels; the same result for every int32
 * input, any shift in [-31, 30] and any multiplier in [0, 2^31) (what QuantizeMultiplier gives:
 * 0 or [2^30, 2^31)). tests/c/test_requant.py compares it with mcu_mbqm on millions of inputs.
 *
 * Why it is the same: SaturatingRoundingDoublingHighMul(a, m) truncates (a*m + nudge) / 2^31
 * toward zero with nudge 2^30 (a*m >= 0) or 1 - 2^30 (a*m < 0). For a*m < 0 that truncation is
 * floor((a*m + 1 - 2^30 + 2^31 - 1) / 2^31) = floor((a*m + 2^30) / 2^31), which is also the
 * a*m >= 0 case: one SMULL, one add and a shift. Its saturation case needs m = INT32_MIN, which
 * a multiplier never is. RoundingDivideByPOT(x, e) adds 1 to x >> e when the low e bits exceed
 * 2^(e-1) - 1, plus 1 when x < 0: the carry of (low bits + 2^(e-1) - [x < 0]) >> e, computed
 * unsigned (below 2^32 for any e <= 31). */
#ifndef MCU_REQUANT_H
#define MCU_REQUANT_H

#include <stdint.h>

static inline int32_t mcu_requant(int32_t acc, int32_t multiplier, int32_t shift) {
  int32_t left = shift > 0 ? shift : 0;
  int32_t right = shift > 0 ? 0 : -shift;
  int32_t a = (int32_t)((uint32_t)acc << left);
  int32_t x = (int32_t)(((int64_t)a * multiplier + ((int64_t)1 << 30)) >> 31);
  if (right == 0) {
    return x;
  }
  uint32_t low = (uint32_t)x & (((uint32_t)1 << right) - 1u);
  uint32_t carry = (low + ((uint32_t)1 << (right - 1)) - (x < 0 ? 1u : 0u)) >> right;
  return (x >> right) + (int32_t)carry;
}

#endif
