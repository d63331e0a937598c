/* FULLY_CONNECTED, bit-exact with TFLM reference_integer_ops::FullyConnected and
 * FullyConnectedPerChannel (int8; int16 x int8 with an int64 or int32 accumulator, the bias
 * type) and reference_ops::FullyConnected (float32). Output rows are flattened over all leading
 * dims. */
#include "mcu/kernels/fully_connected.h"

#include "mcu/quant.h"

typedef struct {
  int32_t batches;
  int32_t out_depth;
  int32_t accum_depth;
} fc_dims_t;

static mcu_status_t fc_dims(const mcu_node_t *node, const mcu_context_t *ctx, fc_dims_t *d) {
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(filter != NULL && filter->ndims == 2 && output->ndims >= 1, MCU_ERR_BAD_MODEL);
  d->out_depth = mcu_dim(filter, -2);
  d->accum_depth = mcu_dim(filter, -1);
  MCU_ENSURE_MODEL(mcu_dim(output, -1) == d->out_depth && d->out_depth > 0, MCU_ERR_BAD_MODEL);
  d->batches = mcu_num_elements(output) / d->out_depth;
  return MCU_OK;
}

mcu_status_t mcu_fully_connected_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_fully_connected_params_t *p = node->params;
  fc_dims_t d;
  MCU_TRY(fc_dims(node, ctx, &d));
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *filter = mcu_input(ctx, node, 1);
  const int32_t *bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL;
  int8_t *output = mcu_output(ctx, node, 0);
  for (int32_t b = 0; b < d.batches; ++b) {
    for (int32_t c = 0; c < d.out_depth; ++c) {
      int32_t acc = 0;
      const int8_t *in_row = input + b * d.accum_depth;
      const int8_t *w_row = filter + c * d.accum_depth;
      for (int32_t k = 0; k < d.accum_depth; ++k) {
        acc += (w_row[k] + p->filter_offset) * (in_row[k] + p->input_offset);
      }
      if (bias != NULL) {
        acc += bias[c];
      }
      int32_t ch = p->num_channels > 1 ? c : 0;
      acc = mcu_mbqm(acc, p->multipliers[ch], p->shifts[ch]) + p->output_offset;
      output[b * d.out_depth + c] = (int8_t)mcu_clamp_i32(acc, p->act_min, p->act_max);
    }
  }
  return MCU_OK;
}

/* Exact dot product of an int16 input row and an int8 filter row. The C++ sums int32 products
 * in the accumulator type: an int64 one is exact, an int32 one is this sum modulo 2^32. */
static int64_t dot_16x8(const mcu_fully_connected_params_t *p, const int16_t *in, const int8_t *w,
                        int32_t depth) {
  int64_t acc = 0;
  for (int32_t k = 0; k < depth; ++k) {
    acc += (int32_t)(w[k] + p->filter_offset) * (int32_t)(in[k] + p->input_offset);
  }
  return acc;
}

static int16_t requantize_16(const mcu_fully_connected_params_t *p, int32_t scaled) {
  return (int16_t)mcu_clamp_i32(scaled + p->output_offset, p->act_min, p->act_max);
}

mcu_status_t mcu_fully_connected_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_fully_connected_params_t *p = node->params;
  fc_dims_t d;
  MCU_TRY(fc_dims(node, ctx, &d));
  const int16_t *input = mcu_input(ctx, node, 0);
  const int8_t *filter = mcu_input(ctx, node, 1);
  const int64_t *bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL;
  int16_t *output = mcu_output(ctx, node, 0);
  for (int32_t b = 0; b < d.batches; ++b) {
    for (int32_t c = 0; c < d.out_depth; ++c) {
      int64_t acc = dot_16x8(p, input + b * d.accum_depth, filter + c * d.accum_depth,
                             d.accum_depth);
      acc += bias != NULL ? bias[c] : 0;
      int32_t ch = p->num_channels > 1 ? c : 0;
      int32_t scaled = mcu_mbqm_i64(acc, p->multipliers[ch], p->shifts[ch]);
      output[b * d.out_depth + c] = requantize_16(p, scaled);
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_fully_connected_int16_acc32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_fully_connected_params_t *p = node->params;
  fc_dims_t d;
  MCU_TRY(fc_dims(node, ctx, &d));
  const int16_t *input = mcu_input(ctx, node, 0);
  const int8_t *filter = mcu_input(ctx, node, 1);
  const int32_t *bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL;
  int16_t *output = mcu_output(ctx, node, 0);
  for (int32_t b = 0; b < d.batches; ++b) {
    for (int32_t c = 0; c < d.out_depth; ++c) {
      uint32_t acc = (uint32_t)dot_16x8(p, input + b * d.accum_depth, filter + c * d.accum_depth,
                                        d.accum_depth);
      acc += bias != NULL ? (uint32_t)bias[c] : 0u;
      int32_t ch = p->num_channels > 1 ? c : 0;
      int32_t scaled = mcu_mbqm((int32_t)acc, p->multipliers[ch], p->shifts[ch]);
      output[b * d.out_depth + c] = requantize_16(p, scaled);
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_fully_connected_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_fully_connected_params_t *p = node->params;
  fc_dims_t d;
  MCU_TRY(fc_dims(node, ctx, &d));
  const float *input = mcu_input(ctx, node, 0);
  const float *filter = mcu_input(ctx, node, 1);
  const float *bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL;
  float *output = mcu_output(ctx, node, 0);
  for (int32_t b = 0; b < d.batches; ++b) {
    for (int32_t c = 0; c < d.out_depth; ++c) {
      float total = 0.0f;
      for (int32_t k = 0; k < d.accum_depth; ++k) {
        total += input[b * d.accum_depth + k] * filter[c * d.accum_depth + k];
      }
      float bias_value = bias != NULL ? bias[c] : 0.0f;
      output[b * d.out_depth + c] = mcu_clamp_f32(total + bias_value, p->act_min_f, p->act_max_f);
    }
  }
  return MCU_OK;
}
