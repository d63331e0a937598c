#ifndef MCU_KERNELS_SOFTMAX_CROSS_ENTROPY_H
#define MCU_KERNELS_SOFTMAX_CROSS_ENTROPY_H

#include "mcu/runtime.h"

/* The loss of a training graph (mcugen/train/): softmax cross-entropy of float32 logits
 * [rows, classes] against int32 labels [rows], averaged over the rows. Outputs: the loss [1] and
 * the gradient of the loss by the logits (the logits' shape). `beta` is the SOFTMAX operator's:
 * the model's probabilities are softmax(beta * logits). */
typedef struct {
  float beta;
} mcu_softmax_cross_entropy_params_t;

mcu_eval_t mcu_softmax_cross_entropy_f32;

#endif
