#ifndef MCU_KERNELS_CONCATENATION_H
#define MCU_KERNELS_CONCATENATION_H

#include "mcu/runtime.h"

/* CONCATENATION of inputs with identical quantization (TFLM rejects rescaling): a byte copy. */
typedef struct {
  int32_t axis;       /* non-negative axis of the output */
  int32_t elem_bytes; /* bytes per element */
} mcu_concatenation_params_t;

mcu_status_t mcu_concatenation(const mcu_node_t *node, mcu_context_t *ctx);

#endif
