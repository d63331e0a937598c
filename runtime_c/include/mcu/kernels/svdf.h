#ifndef MCU_KERNELS_SVDF_H
#define MCU_KERNELS_SVDF_H

#include "mcu/runtime.h"

/* SVDF. Inputs: 0 input (batch, input_size), 1 weights_feature (filters, input_size), 2
 * weights_time (filters, memory), 3 bias (units), 4 state (batch, memory * filters), a variable
 * the kernel updates. No scratch. */
typedef struct {
  int32_t rank;               /* filters per unit */
  int32_t input_zero_point;   /* int8 */
  int32_t state_zero_point;   /* int8 */
  int32_t output_zero_point;  /* int8 */
  int32_t feature_multiplier; /* input * weights_feature / state scale (TFLM effective_scale_1) */
  int32_t feature_shift;
  int32_t time_multiplier; /* state * weights_time / output scale (TFLM effective_scale_2) */
  int32_t time_shift;
  int32_t activation; /* float32: TFLite fused activation (0..5); int8 applies none, as TFLM */
} mcu_svdf_params_t;

/* int8 input and output, int8 state and time weights */
mcu_eval_t mcu_svdf_int8;
/* int8 input and output, int16 state and time weights */
mcu_eval_t mcu_svdf_int8_state16;
mcu_eval_t mcu_svdf_f32;

#endif
