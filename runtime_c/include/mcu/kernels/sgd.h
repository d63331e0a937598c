#ifndef MCU_KERNELS_SGD_H
#define MCU_KERNELS_SGD_H

#include "mcu/runtime.h"

/* The weight update of a training graph (mcugen/train/): SGD with momentum and weight decay on
 * one float32 parameter, with gradients accumulated over samples. Inputs: the parameter (a
 * variable), its gradient for this sample, the accumulated gradient (a variable, or omitted when
 * every sample updates), the momentum (a variable, or omitted when momentum is 0), and `apply`
 * (int32 [1]): 0 only accumulates this sample's gradient; n > 0 updates with the mean of the n
 * accumulated gradients (this one included) and clears the sum. No outputs: it writes the
 * variables. As PyTorch's SGD: g = mean + weight_decay w; m = momentum m + g (g itself without
 * momentum); w = w - lr m. */
typedef struct {
  float learning_rate;
  float momentum;
  float weight_decay;
} mcu_sgd_params_t;

mcu_status_t mcu_sgd_f32(const mcu_node_t *node, mcu_context_t *ctx);

#endif
