#ifndef MCU_KERNELS_ORT_SOFTMAX_H
#define MCU_KERNELS_ORT_SOFTMAX_H

#include "mcu/runtime.h"

/* SOFTMAX over the last axis as onnxruntime's QLinearSoftmax computes it (`--onnx-numerics
 * ort`): `table[d]` is float32(exp((bias - d) * x_scale)) for an element d steps below its row's
 * maximum (computed at build time as onnxruntime builds it), the row's sum accumulated in float32
 * in order, each output round_half_even(table[d] * y_factor / sum) + y_zero, with y_factor =
 * floor(1 / y_scale); clamped. */
typedef struct {
  const float *table; /* 256 entries */
  float y_factor;
  int32_t output_offset; /* output zero point, as stored (int8) */
} mcu_ort_softmax_params_t;

mcu_status_t mcu_softmax_int8_ort(const mcu_node_t *node, mcu_context_t *ctx);

#endif
