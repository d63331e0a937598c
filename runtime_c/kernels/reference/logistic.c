/* LOGISTIC, bit-exact with TFLM reference_integer_ops::Logistic (int8, gemmlowp fixed point;
 * int16, interpolated sigmoid table) and reference_ops::Logistic (float32, with its cut-offs). */
#include "mcu/kernels/logistic.h"

#include <math.h>

#include "mcu/quant.h"
#include "mcu/unary.h"

/* gemmlowp::logistic on a value with `integer_bits` integer bits; result in Q0.31. */
static int32_t logistic_fixed(int32_t a, int integer_bits) {
  if (a == 0) {
    return (int32_t)1 << 30;
  }
  int32_t magnitude = a > 0 ? a : -a;
  int32_t e = mcu_fp_exp_on_negative_values(-magnitude, integer_bits);
  int32_t half_denominator = mcu_rounding_half_sum(e, INT32_MAX);
  /* 1 / (1 + e): the Q2.29 reciprocal of the half sum, halved, back to Q0.31 */
  int32_t positive = mcu_sat_shl_i32(mcu_fp_reciprocal_of_half_sum(half_denominator), 1);
  return a > 0 ? positive : INT32_MAX - positive;
}

MCU_UNARY_KERNEL(mcu_logistic_f32, void, float, float, *y = mcu_sigmoid_f32(x))

MCU_UNARY_KERNEL(mcu_logistic_int8, mcu_logistic_params_t, int8_t, int8_t,
                 *y = mcu_unary_fixed_int8(x, p, logistic_fixed, 23, -128))

MCU_UNARY_KERNEL(mcu_logistic_int16, mcu_logistic_int16_params_t, int16_t, int16_t,
                 *y = mcu_unary_table_int16(x, p, mcu_sigmoid_q15))
