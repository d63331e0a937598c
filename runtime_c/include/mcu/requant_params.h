/* The parameters the integer kernels that requantise an accumulator per output channel share
 * (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED: the member `rq` of their
 * parameter structs, filled by mcugen/codegen/lower/conv_2d.py `requant_params`), and the
 * requantisation itself, as TFLM's reference kernels compute it. The float32 kernels read only
 * the float activation range. */
#ifndef MCU_REQUANT_PARAMS_H
#define MCU_REQUANT_PARAMS_H

#include "mcu/quant.h"
#include "mcu/runtime.h"

typedef struct {
  int32_t input_offset;  /* -input zero point */
  int32_t output_offset; /* output zero point */
  int32_t act_min;
  int32_t act_max;
  float act_min_f;
  float act_max_f;
  int32_t num_channels;       /* entries of multipliers/shifts: 1 per tensor, else per output */
  const int32_t *multipliers; /* TFLM QuantizeMultiplier significands */
  const int32_t *shifts;      /* TFLM exponents: positive shifts left */
} mcu_requant_params_t;

/* Checks (MCU_ENSURE_MODEL) that `rq` holds one multiplier and shift, or one per each of
 * `channels` output channels. */
#define MCU_REQUANT_CHECK(rq, channels) \
  MCU_ENSURE_MODEL((rq).num_channels == 1 || (rq).num_channels == (channels), MCU_ERR_BAD_MODEL)

/* Output channel `oc`'s entry of multipliers and shifts. */
static inline int32_t mcu_requant_channel(const mcu_requant_params_t *rq, int32_t oc) {
  return rq->num_channels > 1 ? oc : 0;
}

/* An int32 accumulator of output channel `oc` scaled (MultiplyByQuantizedMultiplier), offset and
 * clamped to the activation range. The 16x8 kernels' output offset is 0 (their lowering requires
 * symmetric int16 outputs). */
static inline int32_t mcu_requant_acc32(const mcu_requant_params_t *rq, int32_t acc, int32_t oc) {
  int32_t ch = mcu_requant_channel(rq, oc);
  acc = mcu_mbqm(acc, rq->multipliers[ch], rq->shifts[ch]) + rq->output_offset;
  return mcu_clamp_i32(acc, rq->act_min, rq->act_max);
}

/* The same for an int64 accumulator of a 16x8 kernel (MultiplyByQuantizedMultiplier, int64). */
static inline int32_t mcu_requant_acc64(const mcu_requant_params_t *rq, int64_t acc, int32_t oc) {
  int32_t ch = mcu_requant_channel(rq, oc);
  int32_t scaled = mcu_mbqm_i64(acc, rq->multipliers[ch], rq->shifts[ch]) + rq->output_offset;
  return mcu_clamp_i32(scaled, rq->act_min, rq->act_max);
}

/* One output of an int8 or float32 convolution: its sum plus the bias of channel `oc` (NULL:
 * none), requantised or clamped. */
static inline int8_t mcu_requant_out_int8(const mcu_requant_params_t *rq, int32_t acc,
                                          const int32_t *bias, int32_t oc) {
  acc += bias != NULL ? bias[oc] : 0;
  return (int8_t)mcu_requant_acc32(rq, acc, oc);
}

static inline float mcu_requant_out_f32(const mcu_requant_params_t *rq, float total,
                                        const float *bias, int32_t oc) {
  float bias_value = bias != NULL ? bias[oc] : 0.0f;
  return mcu_clamp_f32(total + bias_value, rq->act_min_f, rq->act_max_f);
}

#endif
