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
#include "mcu/window.h"

typedef struct {
  int32_t input_offset;  /* -input zero point */
  int32_t output_offset; /* output zero point */
  int32_t act_min;       /* the activation range, as quantized values */
  int32_t act_max;
  int32_t num_channels; /* entries of `scales`: 1 per tensor, else one per output channel */
  const float *scales;
} mcu_ort_requant_t;

/* The parameters of the ort kernels of a window (mcu/kernels/ort_conv.h: CONV_2D and
 * DEPTHWISE_CONV_2D), here for the optimised depthwise kernel too. */
typedef struct {
  mcu_window_params_t win;
  int32_t depth_multiplier; /* DEPTHWISE_CONV_2D only */
  mcu_ort_requant_t rq;
} mcu_ort_conv_params_t;

/* `value` clamped to [lo, hi] (float), rounded half to even (nearbyintf: the FPU's vrintr on an M7). */
static inline int32_t mcu_ort_round_clamped(float value, float lo, float hi) {
  value = value < lo ? lo : value;
  value = value > hi ? hi : value;
  return (int32_t)nearbyintf(value);
}

/* mcu_ort_requant's constants as a kernel's inner loop wants them, computed once per layer or
 * block of outputs (the optimised kernels): the scale's stride, the range less the zero point
 * in float. */
typedef struct {
  const float *scales;
  int32_t per_channel; /* 1: one scale per output channel, 0: one */
  float lo;
  float hi;
  int32_t zero; /* output zero point */
} mcu_ort_out_t;

static inline mcu_ort_out_t mcu_ort_out_of(const mcu_ort_requant_t *rq) {
  mcu_ort_out_t o = {rq->scales, rq->num_channels > 1, (float)(rq->act_min - rq->output_offset),
                     (float)(rq->act_max - rq->output_offset), rq->output_offset};
  return o;
}

/* Accumulator `acc` of output channel `oc` requantized by `o` (the bias already in it). */
static inline int32_t mcu_ort_out(const mcu_ort_out_t *o, int32_t acc, int32_t oc) {
  float scale = o->scales[o->per_channel ? oc : 0];
  return mcu_ort_round_clamped((float)acc * scale, o->lo, o->hi) + o->zero;
}

/* The same from the parameters themselves (the reference kernels). */
static inline int32_t mcu_ort_requant(const mcu_ort_requant_t *rq, int32_t acc, int32_t oc) {
  mcu_ort_out_t o = mcu_ort_out_of(rq);
  return mcu_ort_out(&o, acc, oc);
}

#endif
