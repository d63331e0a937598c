/* onnxruntime's output stage (`--onnx-numerics ort`, docs/onnx.md): an int32 accumulator times a
 * float32 scale, clamped in float to the activation range less the zero point, rounded half to
 * even, plus the zero point, as MLAS's MlasRequantizeOutput computes it for QLinearConv, QGemm,
 * QLinearMatMul and QLinearGlobalAveragePool. The rounding is the FPU's default mode (round to
 * nearest even); the scales are computed at build time in float32 as onnxruntime does
 * (x_scale * w_scale / y_scale, left to right). */
#ifndef MCU_ORT_REQUANT_H
#define MCU_ORT_REQUANT_H

#include <math.h>

#include "mcu/runtime.h"

typedef struct {
  int32_t input_offset;  /* -input zero point */
  int32_t output_offset; /* output zero point */
  int32_t act_min;       /* the activation range, as quantized values */
  int32_t act_max;
  int32_t num_channels; /* entries of `scales`: 1 per tensor, else one per output channel */
  const float *scales;
} mcu_ort_requant_t;

/* `value` clamped to [lo, hi] (float), rounded half to even (nearbyintf: the FPU's vrintr on an M7). */
static inline int32_t mcu_ort_round_clamped(float value, float lo, float hi) {
  value = value < lo ? lo : value;
  value = value > hi ? hi : value;
  return (int32_t)nearbyintf(value);
}

/* Accumulator `acc` of output channel `oc` requantized (the bias already in it). */
static inline int32_t mcu_ort_requant(const mcu_ort_requant_t *rq, int32_t acc, int32_t oc) {
  float scale = rq->scales[rq->num_channels > 1 ? oc : 0];
  float lo = (float)(rq->act_min - rq->output_offset);
  float hi = (float)(rq->act_max - rq->output_offset);
  return mcu_ort_round_clamped((float)acc * scale, lo, hi) + rq->output_offset;
}

#endif
