#ifndef MCU_KERNELS_MEAN_SQUARED_ERROR_H
#define MCU_KERNELS_MEAN_SQUARED_ERROR_H

#include "mcu/runtime.h"

/* The loss of a training graph for a regressor (mcugen/train/): the mean over all elements of
 * (prediction - target)^2, float32. Outputs: the loss [1] and its gradient by the prediction,
 * 2 (prediction - target) / elements. No parameters. */
mcu_eval_t mcu_mean_squared_error_f32;

#endif
