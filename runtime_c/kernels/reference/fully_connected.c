/* FULLY_CONNECTED, bit-exact with TFLM reference_integer_ops::FullyConnected (int8) and
 * reference_ops::FullyConnected (float32). Output rows are flattened over all leading dims. */
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
