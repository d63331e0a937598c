/* MEAN, bit-exact with TFLM reference_ops::QuantizedMeanOrSum (int8, int16: int32 sums in a
 * scratch buffer, one requantization with a multiplier that folds in 1/count) and
 * reference_ops::Mean (float32: sums in the output, then a float division). Input elements are
 * visited in row-major order, as TFLM does, so float sums round identically. */
#include "mcu/kernels/mean.h"

#include "mcu/quant.h"

typedef struct {
  int ndims;
  int32_t dims[MCU_MAX_DIMS];
  int32_t num_inputs;
  int32_t num_outputs;
} mean_geom_t;

static mcu_status_t mean_geom(const mcu_node_t *node, const mcu_context_t *ctx, mean_geom_t *g) {
  const mcu_mean_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && p->num_reduced > 0, MCU_ERR_BAD_MODEL);
  g->ndims = input->ndims;
  g->num_outputs = 1;
  int32_t reduced = 1;
  for (int i = 0; i < g->ndims; ++i) {
    g->dims[i] = input->dims[i];
    if ((p->reduce_mask >> i) & 1) {
      reduced *= input->dims[i];
    } else {
      g->num_outputs *= input->dims[i];
    }
  }
  g->num_inputs = mcu_num_elements(input);
  MCU_ENSURE_MODEL(reduced == p->num_reduced, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(g->num_outputs == mcu_num_elements(mcu_output_tensor(ctx, node, 0)),
                   MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* Flat output offset of input index `idx`: the kept coordinates in row-major order. */
static int32_t output_offset(const mean_geom_t *g, int32_t reduce_mask, const int32_t *idx) {
  int32_t offset = 0;
  for (int i = 0; i < g->ndims; ++i) {
    if (((reduce_mask >> i) & 1) == 0) {
      offset = offset * g->dims[i] + idx[i];
    }
  }
  return offset;
}

/* Advances `idx` to the next input element in row-major order. */
static void next_index(const mean_geom_t *g, int32_t *idx) {
  for (int i = g->ndims - 1; i >= 0; --i) {
    if (++idx[i] < g->dims[i]) {
      return;
    }
    idx[i] = 0;
  }
}

static int32_t add_wrap(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

static void sum_int8(const mean_geom_t *g, int32_t mask, const int8_t *src, int32_t *acc) {
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int32_t i = 0; i < g->num_inputs; ++i) {
    int32_t o = output_offset(g, mask, idx);
    acc[o] = add_wrap(acc[o], src[i]);
    next_index(g, idx);
  }
}

static void sum_int16(const mean_geom_t *g, int32_t mask, const int16_t *src, int32_t *acc) {
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int32_t i = 0; i < g->num_inputs; ++i) {
    int32_t o = output_offset(g, mask, idx);
    acc[o] = add_wrap(acc[o], src[i]);
    next_index(g, idx);
  }
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

mcu_status_t mcu_mean_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mean_params_t *p = node->params;
  mean_geom_t g;
  MCU_TRY(mean_geom(node, ctx, &g));
  int32_t *acc = zeroed_scratch(node, ctx, g.num_outputs);
  MCU_ENSURE_MODEL(acc != NULL, MCU_ERR_BAD_MODEL);
  sum_int8(&g, p->reduce_mask, mcu_input(ctx, node, 0), acc);
  int8_t *output = mcu_output(ctx, node, 0);
  for (int32_t o = 0; o < g.num_outputs; ++o) {
    output[o] = (int8_t)mcu_clamp_i32(requantize(p, acc[o]), INT8_MIN, INT8_MAX);
  }
  return MCU_OK;
}

mcu_status_t mcu_mean_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mean_params_t *p = node->params;
  mean_geom_t g;
  MCU_TRY(mean_geom(node, ctx, &g));
  int32_t *acc = zeroed_scratch(node, ctx, g.num_outputs);
  MCU_ENSURE_MODEL(acc != NULL, MCU_ERR_BAD_MODEL);
  sum_int16(&g, p->reduce_mask, mcu_input(ctx, node, 0), acc);
  int16_t *output = mcu_output(ctx, node, 0);
  for (int32_t o = 0; o < g.num_outputs; ++o) {
    output[o] = (int16_t)mcu_clamp_i32(requantize(p, acc[o]), INT16_MIN, INT16_MAX);
  }
  return MCU_OK;
}

mcu_status_t mcu_mean_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mean_params_t *p = node->params;
  mean_geom_t g;
  MCU_TRY(mean_geom(node, ctx, &g));
  const float *src = mcu_input(ctx, node, 0);
  float *output = mcu_output(ctx, node, 0);
  for (int32_t o = 0; o < g.num_outputs; ++o) {
    output[o] = 0.0f;
  }
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int32_t i = 0; i < g.num_inputs; ++i) {
    output[output_offset(&g, p->reduce_mask, idx)] += src[i];
    next_index(&g, idx);
  }
  for (int32_t o = 0; o < g.num_outputs; ++o) {
    output[o] = output[o] / (float)p->num_reduced;
  }
  return MCU_OK;
}
