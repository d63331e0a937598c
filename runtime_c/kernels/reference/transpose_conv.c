/* TRANSPOSE_CONV, bit-exact with TFLM reference_integer_ops::TransposeConv (int8, int32 scratch
 * accumulator; int16 x int8, int64 scratch accumulator and an int64 or int16 bias) and
 * reference_ops::TransposeConv (float32, accumulating in the output). All scatter each input pixel
 * into the output window it influences, then add bias and clamp. */
#include "mcu/kernels/transpose_conv.h"

#include "mcu/quant.h"
#include "mcu/window.h"

enum { TC_FILTER = 1, TC_INPUT = 2, TC_BIAS = 3 };

static mcu_status_t tc_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                            mcu_window_dims_t *d) {
  MCU_TRY(mcu_window_node_dims(node, ctx, TC_INPUT, TC_FILTER, d));
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, TC_FILTER);
  MCU_ENSURE_MODEL(filter->dims[0] == d->out_c && d->k_c == d->in_c, MCU_ERR_BAD_MODEL);
  return mcu_window_bias(node, ctx, TC_BIAS, d);
}

/* One input pixel: where its window starts in the output, and its channel values. */
typedef struct {
  int32_t y0;
  int32_t x0;
  int32_t in_c;
} tc_pixel_t;

static tc_pixel_t tc_pixel(const mcu_transpose_conv_params_t *p, const mcu_window_dims_t *d,
                           int32_t iy, int32_t ix) {
  tc_pixel_t px = {iy * p->stride_h - p->pad_h, ix * p->stride_w - p->pad_w, d->in_c};
  return px;
}

static int tc_inside(const mcu_window_dims_t *d, int32_t y, int32_t x) {
  return y >= 0 && y < d->out_h && x >= 0 && x < d->out_w;
}

/* `name`: zeroes `acc` (the output's size, of `acc_t`), then adds each input pixel's contribution
 * in TFLM's loop order: `mul_t` the products' type, `offset` what each input adds (empty:
 * nothing). The 16x8 products are summed in int64, exact (the lowering bounds every sum below
 * 2^47), so in any order; no input offset there: TFLM's 16x8 kernel ignores it (the lowering
 * requires zero points of 0). float32 accumulates in the output. */
#define TC_SCATTER(name, in_t, filt_t, acc_t, mul_t, offset)                                  \
  static void name##_pixel(const mcu_transpose_conv_params_t *p, const mcu_window_dims_t *d,  \
                           const in_t *in, const filt_t *filter, tc_pixel_t px, acc_t *acc) { \
    (void)p;                                                                                  \
    for (int32_t ic = 0; ic < px.in_c; ++ic) {                                                \
      mul_t value = (mul_t)in[ic] offset;                                                     \
      for (int32_t ky = 0; ky < d->k_h; ++ky) {                                               \
        for (int32_t kx = 0; kx < d->k_w; ++kx) {                                             \
          if (!tc_inside(d, px.y0 + ky, px.x0 + kx)) {                                        \
            continue;                                                                         \
          }                                                                                   \
          acc_t *dst = acc + ((px.y0 + ky) * d->out_w + px.x0 + kx) * d->out_c;               \
          const filt_t *tap = filter + (ky * d->k_w + kx) * d->in_c + ic;                     \
          for (int32_t oc = 0; oc < d->out_c; ++oc) {                                         \
            dst[oc] += value * (mul_t)tap[oc * d->k_h * d->k_w * d->in_c];                    \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
  static void name(const mcu_transpose_conv_params_t *p, const mcu_window_dims_t *d,          \
                   const in_t *input, const filt_t *filter, acc_t *acc) {                     \
    int32_t out_batch = d->out_h * d->out_w * d->out_c;                                       \
    for (int32_t i = 0; i < d->batches * out_batch; ++i) {                                    \
      acc[i] = 0;                                                                             \
    }                                                                                         \
    for (int32_t b = 0; b < d->batches; ++b) {                                                \
      for (int32_t iy = 0; iy < d->in_h; ++iy) {                                              \
        for (int32_t ix = 0; ix < d->in_w; ++ix) {                                            \
          const in_t *in = input + ((b * d->in_h + iy) * d->in_w + ix) * d->in_c;             \
          name##_pixel(p, d, in, filter, tc_pixel(p, d, iy, ix), acc + b * out_batch);        \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }

TC_SCATTER(tc_scatter_int8, int8_t, int8_t, int32_t, int32_t, +p->rq.input_offset)
TC_SCATTER(tc_scatter_int16, int16_t, int8_t, int64_t, int32_t, )
TC_SCATTER(tc_scatter_f32, float, float, float, float, )

static void tc_finish_int8(const mcu_transpose_conv_params_t *p, const mcu_window_dims_t *d,
                           const int32_t *acc, const int32_t *bias, int8_t *out) {
  int32_t pixels = d->batches * d->out_h * d->out_w;
  for (int32_t i = 0; i < pixels; ++i) {
    for (int32_t oc = 0; oc < d->out_c; ++oc) {
      int32_t v = acc[i * d->out_c + oc] + (bias != NULL ? bias[oc] : 0);
      out[i * d->out_c + oc] = (int8_t)mcu_requant_acc32(&p->rq, v, oc);
    }
  }
}

mcu_status_t mcu_transpose_conv_int8(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_transpose_conv_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(tc_dims(node, ctx, &d));
  MCU_REQUANT_CHECK(p->rq, d.out_c);
  int32_t *acc = mcu_scratch(ctx, node);
  MCU_ENSURE_MODEL(acc != NULL, MCU_ERR_BAD_MODEL);
  const int8_t *input = mcu_input(ctx, node, TC_INPUT);
  const int8_t *filter = mcu_input(ctx, node, TC_FILTER);
  const int32_t *bias = node->num_inputs > TC_BIAS ? mcu_input(ctx, node, TC_BIAS) : NULL;
  tc_scatter_int8(p, &d, input, filter, acc);
  tc_finish_int8(p, &d, acc, bias, mcu_output(ctx, node, 0));
  return MCU_OK;
}

/* 16x8 bias: int64, or int16 widened to int64 (TFLM converts an int16 bias into a scratch). */
typedef struct {
  const int64_t *wide;
  const int16_t *narrow;
} tc_bias16x8_t;

static int64_t tc_bias_value(tc_bias16x8_t bias, int32_t oc) {
  if (bias.wide != NULL) {
    return bias.wide[oc];
  }
  return bias.narrow != NULL ? (int64_t)bias.narrow[oc] : 0;
}

/* TFLM's 16x8 kernel adds no output offset: the lowering makes it 0. */
static void tc_finish_int16(const mcu_transpose_conv_params_t *p, const mcu_window_dims_t *d,
                            const int64_t *acc, tc_bias16x8_t bias, int16_t *out) {
  int32_t pixels = d->batches * d->out_h * d->out_w;
  for (int32_t i = 0; i < pixels; ++i) {
    for (int32_t oc = 0; oc < d->out_c; ++oc) {
      int64_t v = acc[i * d->out_c + oc] + tc_bias_value(bias, oc);
      out[i * d->out_c + oc] = (int16_t)mcu_requant_acc64(&p->rq, v, oc);
    }
  }
}

/* `bias_type`: the bias tensor's element type, MCU_INT64 or MCU_INT16 (when there is one). */
static mcu_status_t tc_int16(const mcu_node_t *node, mcu_context_t *ctx, uint8_t bias_type) {
  const mcu_transpose_conv_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(tc_dims(node, ctx, &d));
  MCU_REQUANT_CHECK(p->rq, d.out_c);
  int64_t *acc = mcu_scratch(ctx, node);
  /* the plan aligns scratch to 16 bytes */
  MCU_ENSURE_MODEL(acc != NULL && (uintptr_t)acc % sizeof(int64_t) == 0, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *bias_tensor =
      node->num_inputs > TC_BIAS ? mcu_input_tensor(ctx, node, TC_BIAS) : NULL;
  MCU_ENSURE_MODEL(bias_tensor == NULL || bias_tensor->type == bias_type, MCU_ERR_BAD_MODEL);
  const void *bias_data = bias_tensor != NULL ? mcu_input(ctx, node, TC_BIAS) : NULL;
  tc_bias16x8_t bias = {NULL, NULL};
  if (bias_type == MCU_INT64) {
    bias.wide = bias_data;
  } else {
    bias.narrow = bias_data;
  }
  const int16_t *input = mcu_input(ctx, node, TC_INPUT);
  const int8_t *filter = mcu_input(ctx, node, TC_FILTER);
  tc_scatter_int16(p, &d, input, filter, acc);
  tc_finish_int16(p, &d, acc, bias, mcu_output(ctx, node, 0));
  return MCU_OK;
}

mcu_status_t mcu_transpose_conv_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  return tc_int16(node, ctx, MCU_INT64);
}

mcu_status_t mcu_transpose_conv_int16_bias16(const mcu_node_t *node, mcu_context_t *ctx) {
  return tc_int16(node, ctx, MCU_INT16);
}

mcu_status_t mcu_transpose_conv_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_transpose_conv_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(tc_dims(node, ctx, &d));
  const float *input = mcu_input(ctx, node, TC_INPUT);
  const float *filter = mcu_input(ctx, node, TC_FILTER);
  const float *bias = node->num_inputs > TC_BIAS ? mcu_input(ctx, node, TC_BIAS) : NULL;
  float *out = mcu_output(ctx, node, 0);
  tc_scatter_f32(p, &d, input, filter, out);
  for (int32_t i = 0; i < d.batches * d.out_h * d.out_w * d.out_c; ++i) {
    float bias_value = bias != NULL ? bias[i % d.out_c] : 0.0f;
    out[i] = mcu_clamp_f32(out[i] + bias_value, p->rq.act_min_f, p->rq.act_max_f);
  }
  return MCU_OK;
}
