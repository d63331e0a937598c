#ifndef MCU_KERNELS_TANH_H
#define MCU_KERNELS_TANH_H

#include "mcu/runtime.h"

typedef struct {
  int32_t input_zero_point;
  int32_t input_range_radius; /* |q - zp| at or beyond this saturates */
  int32_t input_multiplier;   /* rescales q - zp to Q4.27 */
  int32_t input_left_shift;
} mcu_tanh_params_t;

mcu_status_t mcu_tanh_f32(const mcu_node_t *node, mcu_context_t *ctx);
/* int8: output as scale 1/128, zero point 0 whatever the output tensor says (as TFLM). */
mcu_status_t mcu_tanh_int8(const mcu_node_t *node, mcu_context_t *ctx);

/* int16, zero points 0, output scale 2^-15 (TFLM's reference_integer_ops::Tanh for int16):
 * the input rescaled to steps of 1 / (3 * 4096) (multiplier 0: a power-of-two scale, 3 << shift),
 * then linear interpolation in a 256-entry sigmoid table built at build time. */
typedef struct {
  int32_t input_multiplier;
  int32_t input_left_shift;
  const uint16_t *sigmoid_table; /* sigmoid(i / 24) in Q0.16 */
} mcu_tanh_int16_params_t;

mcu_status_t mcu_tanh_int16(const mcu_node_t *node, mcu_context_t *ctx);

#endif
