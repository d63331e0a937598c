/* HARD_SWISH, bit-exact with TFLM reference_ops::HardSwish (int8, 16-bit fixed point) and its
 * float32 version. The int16 helpers reproduce gemmlowp's int16 specializations, including
 * two's-complement narrowing to int16 where the C++ code narrows. */
#include "mcu/kernels/hard_swish.h"

#include "mcu/quant.h"
#include "mcu/unary.h"

/* gemmlowp::SaturatingRoundingDoublingHighMul<int16_t>. */
static int16_t hs_srdhm16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) {
    return INT16_MAX;
  }
  int32_t ab = (int32_t)a * (int32_t)b;
  int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return (int16_t)((ab + nudge) / (1 << 15));
}

/* TFLM's SaturatingDoublingHighMul: like hs_srdhm16 but rounding toward zero. */
static int16_t hs_sdhm16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) {
    return INT16_MAX;
  }
  return (int16_t)(((int32_t)a * (int32_t)b) / (1 << 15));
}

/* gemmlowp::RoundingDivideByPOT<int16_t>, exponent in [0, 31]; the mask is narrowed to int16. */
static int16_t hs_rdbpot16(int16_t x, int exponent) {
  int16_t mask = (int16_t)(((int64_t)1 << exponent) - 1);
  int16_t remainder = (int16_t)(x & mask);
  int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
  return (int16_t)((x >> exponent) + (remainder > threshold ? 1 : 0));
}

/* TFLM's SaturatingLeftShift for int16 values, amount in [0, 30]. */
static int16_t hs_sat_shl16(int16_t value, int amount) {
  int64_t result = (int64_t)value * ((int64_t)1 << amount);
  return (int16_t)(result > INT16_MAX ? INT16_MAX : (result < INT16_MIN ? INT16_MIN : result));
}

/* The input rescaled into the relu-ish factor: [-3, 3] maps onto int16 [-32768, 32767]. */
static int16_t hs_reluish(int16_t hires, const mcu_hard_swish_params_t *p) {
  int16_t v = hires;
  if (p->reluish_exponent > 0) {
    v = hs_sat_shl16(v, p->reluish_exponent - 1);
  }
  v = hs_srdhm16(v, (int16_t)p->reluish_multiplier);
  if (p->reluish_exponent > 0) {
    v = hs_sat_shl16(v, 1);
  }
  if (p->reluish_exponent < 0) {
    v = hs_rdbpot16(v, -p->reluish_exponent);
  }
  return (int16_t)((v + (1 << 15)) >> 1); /* [-1, 1] -> [0, 1] */
}

static int8_t hs_one_int8(int8_t x, const mcu_hard_swish_params_t *p) {
  int16_t input = (int16_t)(x - p->input_zero_point);
  int16_t hires = (int16_t)(input * (1 << 7));
  int16_t preshift_out = hs_srdhm16(hires, (int16_t)p->output_multiplier);
  int16_t product = hs_sdhm16(hs_reluish(hires, p), preshift_out);
  int16_t out = hs_rdbpot16(product, -p->output_exponent);
  out = (int16_t)(out + p->output_zero_point);
  return (int8_t)(out > INT8_MAX ? INT8_MAX : (out < INT8_MIN ? INT8_MIN : out));
}

mcu_status_t mcu_hard_swish_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_hard_swish_params_t *p = node->params;
  MCU_ENSURE_MODEL(p->output_exponent <= 0 && p->reluish_exponent <= 31, MCU_ERR_BAD_MODEL);
  MCU_UNARY_EACH(node, ctx, int8_t, int8_t, *y = hs_one_int8(x, p));
  return MCU_OK;
}

MCU_UNARY_KERNEL(mcu_hard_swish_f32, void, float, float, {
  float relu6 = x + 3.0f;
  relu6 = 0.0f < relu6 ? relu6 : 0.0f;
  relu6 = relu6 < 6.0f ? relu6 : 6.0f;
  *y = x * relu6 / 6.0f;
})
