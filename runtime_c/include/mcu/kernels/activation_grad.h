#ifndef MCU_KERNELS_ACTIVATION_GRAD_H
#define MCU_KERNELS_ACTIVATION_GRAD_H

#include "mcu/runtime.h"

/* The backward pass of a float32 RELU, RELU6 or RELU_N1_TO_1 (mcugen/train/): inputs dy and the
 * forward output y, output dx = dy where lo < y < hi, else 0. */
typedef struct {
  float lo;
  float hi;
} mcu_activation_grad_params_t;

mcu_eval_t mcu_activation_grad_f32;

#endif
