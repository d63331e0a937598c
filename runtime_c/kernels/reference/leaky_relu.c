/* LEAKY_RELU, bit-exact with TFLM reference_ops::QuantizeLeakyRelu (int8, int16) and LeakyRelu
 * (float32). */
#include "mcu/kernels/leaky_relu.h"

#include "mcu/quant.h"
#include "mcu/unary.h"

/* One element, before the clamp to the output type. */
static inline __attribute__((always_inline)) int32_t leaky_one(int32_t x,
                                                               const mcu_leaky_relu_params_t *p) {
  int32_t input = x - p->input_zero_point;
  int32_t out = p->output_offset;
  if (input >= 0) {
    out += mcu_mbqm(input, p->identity_multiplier, p->identity_shift);
  } else {
    int32_t scaled = mcu_mbqm(input, p->alpha_multiplier, p->alpha_shift);
    out += p->alpha_negative ? -scaled : scaled;
  }
  return out;
}

MCU_UNARY_KERNEL(mcu_leaky_relu_int8, mcu_leaky_relu_params_t, int8_t, int8_t,
                 *y = (int8_t)mcu_clamp_i32(leaky_one(x, p), INT8_MIN, INT8_MAX))

MCU_UNARY_KERNEL(mcu_leaky_relu_int16, mcu_leaky_relu_params_t, int16_t, int16_t,
                 *y = (int16_t)mcu_clamp_i32(leaky_one(x, p), INT16_MIN, INT16_MAX))

MCU_UNARY_KERNEL(mcu_leaky_relu_f32, mcu_leaky_relu_params_t, float, float,
                 *y = x > 0.0f ? x : x * p->alpha)
