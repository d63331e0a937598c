/* TANH, bit-exact with TFLM reference_integer_ops::Tanh (int8, gemmlowp fixed point; int16,
 * interpolated sigmoid table) and reference_ops::Tanh (float32, std::tanh). */
#include "mcu/kernels/tanh.h"

#include <math.h>

#include "mcu/quant.h"
#include "mcu/unary.h"

/* gemmlowp::tanh on a value with `integer_bits` integer bits; result in Q0.31. */
static int32_t tanh_fixed(int32_t a, int integer_bits) {
  if (a == 0) {
    return 0;
  }
  int32_t negative_magnitude = a < 0 ? a : -a;
  /* exp(-2|a|): the same raw value read with one more integer bit is 2a */
  int32_t e = mcu_fp_exp_on_negative_values(negative_magnitude, integer_bits + 1);
  int32_t half_denominator = mcu_rounding_half_sum(e, INT32_MAX);
  /* (1 - e) / (1 + e) = 2 / (1 + e) - 1, from Q2.29 back to Q0.31 */
  int32_t reciprocal = mcu_fp_reciprocal_of_half_sum(half_denominator);
  int32_t t = mcu_sat_shl_i32(reciprocal - ((int32_t)1 << 29), 2);
  return a < 0 ? -t : t;
}

MCU_UNARY_KERNEL(mcu_tanh_f32, void, float, float, *y = tanhf(x))

MCU_UNARY_KERNEL(mcu_tanh_int8, mcu_tanh_params_t, int8_t, int8_t,
                 *y = mcu_unary_fixed_int8(x, p, tanh_fixed, 24, 0))

MCU_UNARY_KERNEL(mcu_tanh_int16, mcu_tanh_int16_params_t, int16_t, int16_t,
                 *y = mcu_unary_table_int16(x, p, mcu_tanh_q15))
