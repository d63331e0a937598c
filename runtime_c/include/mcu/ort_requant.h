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

/* The output stage of the optimised kernels (mcugen/codegen/lower/ort_opt.py), computed once
 * per layer or block of outputs. */
typedef struct {
  const float *scales;
  int32_t per_channel; /* 1: one scale per output channel, 0: one */
  int32_t zero;        /* output zero point */
  int32_t act_min;
  int32_t act_max;
} mcu_ort_out_t;

static inline mcu_ort_out_t mcu_ort_out_of(const mcu_ort_requant_t *rq) {
  mcu_ort_out_t o = {rq->scales, rq->num_channels > 1, rq->output_offset, rq->act_min,
                     rq->act_max};
  return o;
}

/* `value` (|value| < 2^22) rounded half to even, as nearbyintf. Where the FPU has VRINTR (FPv5
 * with doubles: the Cortex-M7's) nearbyintf is that one instruction; elsewhere (the M4's FPv4,
 * the host) newlib's is a call of about 30 instructions, and adding then subtracting 1.5 * 2^23
 * rounds the same way: the sum lies in [2^23, 2^24), whose floats are the whole numbers, so the
 * addition rounds `value` to one, half to even (1.5 * 2^23 is even), and the subtraction is
 * exact. Both use the default rounding mode, as onnxruntime does. */
static inline int32_t mcu_ort_round_narrow(float value) {
#if defined(__ARM_FP) && (__ARM_FP & 8)
  return (int32_t)nearbyintf(value);
#else
  const float shifter = 12582912.0f;
  return (int32_t)((value + shifter) - shifter);
#endif
}

/* mcu_ort_requant's result where the build proved |acc * scale| < 2^21 for every accumulator
 * the layer can produce (ort_opt.py `scaled_fits`), so the product rounds as
 * mcu_ort_round_narrow rounds and converts to int32 as it is: the clamp then runs on the
 * integer, which gives the same value (the range's bounds less the zero point are integers, so
 * clamping before rounding or after is the same). */
static inline int32_t mcu_ort_out(const mcu_ort_out_t *o, int32_t acc, int32_t oc) {
  float scale = o->scales[o->per_channel ? oc : 0];
  int32_t v = mcu_ort_round_narrow((float)acc * scale) + o->zero;
  return v < o->act_min ? o->act_min : (v > o->act_max ? o->act_max : v);
}

#endif
