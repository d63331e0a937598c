/* MEAN, bit-exact with TFLM reference_ops::QuantizedMeanOrSum (int8, int16: int32 sums in a
 * scratch buffer, one requantization with a multiplier that folds in 1/count) and
 * reference_ops::Mean (float32: sums in the output, then a float division). Input elements are
 * visited in row-major order, as TFLM does, so float sums round identically. */
#include "mcu/kernels/mean.h"

#include "mcu/quant.h"
#include "mcu/reduce.h"

static mcu_status_t mean_geom(const mcu_node_t *node, const mcu_context_t *ctx, mcu_reduce_t *g) {
  const mcu_mean_params_t *p = node->params;
  return mcu_reduce_of(mcu_input_tensor(ctx, node, 0), mcu_output_tensor(ctx, node, 0),
                       p->reduce_mask, p->num_reduced, g);
}

static int32_t add_wrap(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* The mean of one output in the integer domain, before clamping to the output type. */
static int32_t requantize(const mcu_mean_params_t *p, int32_t sum) {
  int64_t centered = (int64_t)sum - (int64_t)p->input_zp * (int64_t)p->num_reduced;
  int32_t wrapped = (int32_t)(uint32_t)(uint64_t)centered;
  return mcu_mbqm(wrapped, p->multiplier, p->shift) + p->output_zp;
}

static int32_t *zeroed_scratch(const mcu_node_t *node, const mcu_context_t *ctx, int32_t n) {
  int32_t *acc = mcu_scratch(ctx, node);
  for (int32_t i = 0; acc != NULL && i < n; ++i) {
    acc[i] = 0;
  }
  return acc;
}

/* `name`: MEAN of elements `t`, int32 sums wrapping as TFLM's, clamped to [lo, hi]. */
#define MEAN_QUANTIZED(name, t, lo, hi)                                                  \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) {                        \
    const mcu_mean_params_t *p = node->params;                                           \
    mcu_reduce_t g;                                                                      \
    MCU_TRY(mean_geom(node, ctx, &g));                                                   \
    int32_t *acc = zeroed_scratch(node, ctx, g.num_kept);                                \
    MCU_ENSURE_MODEL(acc != NULL, MCU_ERR_BAD_MODEL);                                    \
    const t *src = mcu_input(ctx, node, 0);                                              \
    int32_t idx[MCU_MAX_DIMS] = {0};                                                     \
    for (int32_t i = 0; i < g.num_whole; ++i) {                                          \
      int32_t o = mcu_reduce_kept_offset(&g, idx);                                       \
      acc[o] = add_wrap(acc[o], src[i]);                                                 \
      mcu_reduce_next(&g, idx);                                                          \
    }                                                                                    \
    t *output = mcu_output(ctx, node, 0);                                                \
    for (int32_t o = 0; o < g.num_kept; ++o) {                                           \
      output[o] = (t)mcu_clamp_i32(requantize(p, acc[o]), lo, hi);                       \
    }                                                                                    \
    return MCU_OK;                                                                       \
  }

MEAN_QUANTIZED(mcu_mean_int8, int8_t, INT8_MIN, INT8_MAX)
MEAN_QUANTIZED(mcu_mean_int16, int16_t, INT16_MIN, INT16_MAX)

mcu_status_t mcu_mean_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mean_params_t *p = node->params;
  mcu_reduce_t g;
  MCU_TRY(mean_geom(node, ctx, &g));
  const float *src = mcu_input(ctx, node, 0);
  float *output = mcu_output(ctx, node, 0);
  for (int32_t o = 0; o < g.num_kept; ++o) {
    output[o] = 0.0f;
  }
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int32_t i = 0; i < g.num_whole; ++i) {
    output[mcu_reduce_kept_offset(&g, idx)] += src[i];
    mcu_reduce_next(&g, idx);
  }
  for (int32_t o = 0; o < g.num_kept; ++o) {
    output[o] = output[o] / (float)p->num_reduced;
  }
  return MCU_OK;
}
