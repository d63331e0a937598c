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

/* The dot product of an input row and a filter row, offsets added, summed in `acc_t`. The C++
 * sums the int32 products in the accumulator type: the 16x8 kernels' int64 one is exact, and their
 * int32 one (the bias type) is this sum modulo 2^32. */
#define FC_DOT(name, in_t, acc_t)                                                           \
  static acc_t name(const mcu_fully_connected_params_t *p, const in_t *in, const int8_t *w, \
                    int32_t depth) {                                                        \
    acc_t acc = 0;                                                                          \
    for (int32_t k = 0; k < depth; ++k) {                                                   \
      acc += (int32_t)(w[k] + p->filter_offset) * (int32_t)(in[k] + p->rq.input_offset);    \
    }                                                                                       \
    return acc;                                                                             \
  }

FC_DOT(fc_dot_int8, int8_t, int32_t)
FC_DOT(fc_dot_16x8, int16_t, int64_t)

/* The kernel `fn`: runs the statement given last for each output (row b, channel c) in order,
 * with `in_row` and `w_row` the input and filter rows it reads, `bias` the bias (or NULL) and
 * `out` the next output. */
#define FC_KERNEL(fn, in_t, w_t, bias_t, out_t, ...)                            \
  mcu_status_t fn(const mcu_node_t *node, mcu_context_t *ctx) {                 \
    const mcu_fully_connected_params_t *p = node->params;                       \
    fc_dims_t d;                                                                \
    MCU_TRY(fc_dims(node, ctx, &d));                                            \
    const in_t *input = mcu_input(ctx, node, 0);                                \
    const w_t *filter = mcu_input(ctx, node, 1);                                \
    const bias_t *bias = node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL; \
    out_t *out = mcu_output(ctx, node, 0);                                      \
    for (int32_t b = 0; b < d.batches; ++b) {                                   \
      const in_t *in_row = input + b * d.accum_depth;                           \
      for (int32_t c = 0; c < d.out_depth; ++c) {                               \
        const w_t *w_row = filter + c * d.accum_depth;                          \
        __VA_ARGS__;                                                            \
      }                                                                         \
    }                                                                           \
    return MCU_OK;                                                              \
  }

FC_KERNEL(mcu_fully_connected_int8, int8_t, int8_t, int32_t, int8_t, {
  int32_t acc = fc_dot_int8(p, in_row, w_row, d.accum_depth) + (bias != NULL ? bias[c] : 0);
  *out++ = (int8_t)mcu_requant_acc32(&p->rq, acc, c);
})

FC_KERNEL(mcu_fully_connected_int16, int16_t, int8_t, int64_t, int16_t, {
  int64_t acc = fc_dot_16x8(p, in_row, w_row, d.accum_depth) + (bias != NULL ? bias[c] : 0);
  *out++ = (int16_t)mcu_requant_acc64(&p->rq, acc, c);
})

FC_KERNEL(mcu_fully_connected_int16_acc32, int16_t, int8_t, int32_t, int16_t, {
  uint32_t acc = (uint32_t)fc_dot_16x8(p, in_row, w_row, d.accum_depth);
  acc += bias != NULL ? (uint32_t)bias[c] : 0u;
  *out++ = (int16_t)mcu_requant_acc32(&p->rq, (int32_t)acc, c);
})

FC_KERNEL(mcu_fully_connected_f32, float, float, float, float, {
  float total = 0.0f;
  for (int32_t k = 0; k < d.accum_depth; ++k) {
    total += in_row[k] * w_row[k];
  }
  float bias_value = bias != NULL ? bias[c] : 0.0f;
  *out++ = mcu_clamp_f32(total + bias_value, p->rq.act_min_f, p->rq.act_max_f);
})
