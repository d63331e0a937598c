#ifndef MCU_KERNELS_CONCATENATION_H
#define MCU_KERNELS_CONCATENATION_H

#include "mcu/axis.h"

/* CONCATENATION of inputs with identical quantization (TFLM rejects rescaling): a byte copy. */
typedef mcu_axis_params_t mcu_concatenation_params_t;

mcu_status_t mcu_concatenation(const mcu_node_t *node, mcu_context_t *ctx);

#endif
