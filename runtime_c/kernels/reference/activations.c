/* RELU and RELU6, bit-exact with TFLM's ReluQuantized / Relu6Quantized (int8) and ReluFloat /
 * Relu6Float (float32) in micro/kernels/activations. */
#include "mcu/kernels/activations.h"

#include "mcu/quant.h"
#include "mcu/unary.h"

MCU_UNARY_KERNEL(mcu_relu_int8, mcu_activations_params_t, int8_t, int8_t, {
  int32_t v = p->output_offset +
              mcu_mbqm(x - p->input_zero_point, p->output_multiplier, p->output_shift);
  *y = (int8_t)mcu_clamp_i32(v, p->act_min, p->act_max);
})

MCU_UNARY_KERNEL(mcu_relu6_int8, mcu_activations_params_t, int8_t, int8_t,
                 *y = (int8_t)(x > p->act_max ? p->act_max : (x < p->act_min ? p->act_min : x)))

MCU_UNARY_KERNEL(mcu_relu_f32, void, float, float, *y = x < 0.0f ? 0.0f : x)

MCU_UNARY_KERNEL(mcu_relu6_f32, void, float, float, *y = x > 6.0f ? 6.0f : (x < 0.0f ? 0.0f : x))
