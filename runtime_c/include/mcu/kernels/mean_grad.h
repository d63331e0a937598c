#ifndef MCU_KERNELS_MEAN_GRAD_H
#define MCU_KERNELS_MEAN_GRAD_H

#include "mcu/runtime.h"

/* The backward pass of a float32 MEAN (mcugen/train/): input dy (the forward output's shape, with
 * or without the kept dimensions: its layout is the same), output dx (the forward input's shape):
 * every input element gets dy of the output element it was averaged into, divided by
 * num_reduced, the count the forward divides by. */
typedef struct {
  int32_t reduce_mask; /* bit i set: input dimension i was averaged over */
  int32_t num_reduced; /* input elements per output element */
} mcu_mean_grad_params_t;

mcu_eval_t mcu_mean_grad_f32;

#endif
