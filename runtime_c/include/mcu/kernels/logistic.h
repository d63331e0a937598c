#ifndef MCU_KERNELS_LOGISTIC_H
#define MCU_KERNELS_LOGISTIC_H

#include "mcu/runtime.h"

typedef struct {
  int32_t input_zero_point;
  int32_t input_range_radius; /* |q - zp| at or beyond this saturates */
  int32_t input_multiplier;   /* rescales q - zp to Q4.27 */
  int32_t input_left_shift;
} mcu_logistic_params_t;

mcu_status_t mcu_logistic_f32(const mcu_node_t *node, mcu_context_t *ctx);
/* int8 with output scale 1/256, zero point -128 (TFLM's fixed-point path). */
mcu_status_t mcu_logistic_int8(const mcu_node_t *node, mcu_context_t *ctx);

/* int16, zero points 0, output scale 2^-15 (TFLM's reference_integer_ops::Logistic for int16):
 * the input rescaled to steps of 1 / (3 * 4096) (multiplier 0: a power-of-two scale, 3 << shift),
 * then linear interpolation in a 256-entry sigmoid table built at build time. */
typedef struct {
  int32_t input_multiplier;
  int32_t input_left_shift;
  const uint16_t *sigmoid_table; /* sigmoid(i / 24) in Q0.16 */
} mcu_logistic_int16_params_t;

mcu_status_t mcu_logistic_int16(const mcu_node_t *node, mcu_context_t *ctx);

#endif
