/* CONV_2D, bit-exact with TFLM reference_integer_ops::ConvPerChannel (int8; int16 x int8 with an
 * int64 or int32 accumulator, the bias type) and reference_ops::Conv (float32), including grouped
 * convolution (filter depth < input depth). */
#include "mcu/kernels/conv_2d.h"

#include <string.h>

#include "mcu/quant.h"
#include "mcu/window.h"

static mcu_status_t conv_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                              mcu_window_dims_t *d) {
  MCU_TRY(mcu_window_node_dims(node, ctx, 0, 1, d));
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  MCU_ENSURE_MODEL(filter->dims[0] == d->out_c, MCU_ERR_BAD_MODEL);
  MCU_TRY(mcu_window_groups(d));
  return mcu_window_bias(node, ctx, 2, d);
}

/* Where one output pixel's receptive field starts, and which input channels it reads. */
typedef struct {
  int32_t y0;
  int32_t x0;
  int32_t c0;
} conv_window_t;

static conv_window_t conv_window(const mcu_conv_2d_params_t *p, const mcu_window_dims_t *d,
                                 int32_t oy, int32_t ox, int32_t oc) {
  conv_window_t w = {oy * p->win.stride_h - p->win.pad_h, ox * p->win.stride_w - p->win.pad_w,
                     (oc / d->per_group) * d->k_c};
  return w;
}

/* The sum over the window of filter * (input + offset), in TFLM's tap order: `acc_t` the
 * accumulator, `mul_t` the products' type, `offset` what each input adds (empty: nothing). The
 * 16x8 sum is exact in int64; TFLM sums in the accumulator type (the bias type), so an int32 one
 * is this sum modulo 2^32. Its input offset is ignored, as TFLM's 16x8 kernel ignores it (the
 * lowering requires zero points of 0). */
#define CONV_ACC(name, in_t, filt_t, acc_t, mul_t, offset)                                     \
  static acc_t name(const mcu_conv_2d_params_t *p, const mcu_window_dims_t *d, const in_t *in, \
                    const filt_t *filt, conv_window_t w) {                                     \
    acc_t acc = 0;                                                                             \
    MCU_WINDOW_EACH_TAP(d, w.y0, w.x0, p->win.dilation_h, p->win.dilation_w, {                         \
      const in_t *pix = in + (y * d->in_w + x) * d->in_c + w.c0;                               \
      const filt_t *tap = filt + (ky * d->k_w + kx) * d->k_c;                                  \
      for (int32_t ic = 0; ic < d->k_c; ++ic) {                                                \
        acc += (mul_t)tap[ic] * ((mul_t)pix[ic] offset);                                       \
      }                                                                                        \
    });                                                                                        \
    return acc;                                                                                \
  }

CONV_ACC(conv_acc_int8, int8_t, int8_t, int32_t, int32_t, +p->rq.input_offset)
CONV_ACC(conv_acc_int16, int16_t, int8_t, int64_t, int32_t, )
CONV_ACC(conv_acc_f32, float, float, float, float, )

/* In place (the plan put the output over an input that dies here, mcugen/plan/aliasing.py step
 * 5): a 1x1 stride-1 convolution. Pixel by pixel, the input pixel is staged in the scratch,
 * then its outputs are written. With no more output than input channels, first pixel first: its
 * outputs end at or before the end of that input pixel, so no later pixel is touched. With more,
 * last pixel first: its outputs start at or after the end of that input pixel, past every
 * earlier one. Sums as in the general path. */
static mcu_status_t conv_in_place_check(const mcu_conv_2d_params_t *p, const mcu_window_dims_t *d,
                                        const void *scratch) {
  /* always checked: the path is chosen at run time, by the addresses the allocator gave */
  MCU_ENSURE(scratch != NULL && d->k_h == 1 && d->k_w == 1 && d->k_c == d->in_c,
             MCU_ERR_BAD_MODEL);
  MCU_ENSURE(p->win.stride_h == 1 && p->win.stride_w == 1 && p->win.pad_h == 0 && p->win.pad_w == 0,
             MCU_ERR_BAD_MODEL);
  MCU_ENSURE(d->out_h == d->in_h && d->out_w == d->in_w, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* The pixel processed at step `i` of an in-place 1x1 convolution (see above). */
static int32_t conv_in_place_pixel(const mcu_window_dims_t *d, int32_t pixels, int32_t i) {
  return d->out_c <= d->in_c ? i : pixels - 1 - i;
}

/* `name`: the in-place path of elements `t`: sums `acc`, outputs `finish`
 * (mcu/requant_params.h). */
#define CONV_IN_PLACE(name, t, bias_t, acc, finish)                                            \
  static mcu_status_t name(const mcu_conv_2d_params_t *p, const mcu_window_dims_t *d, t *data, \
                           const t *filter, const bias_t *bias, t *pixel) {                    \
    MCU_TRY(conv_in_place_check(p, d, pixel));                                                 \
    mcu_window_dims_t one = *d;                                                                \
    one.in_h = 1;                                                                              \
    one.in_w = 1;                                                                              \
    const conv_window_t origin = {0, 0, 0};                                                    \
    int32_t pixels = d->batches * d->in_h * d->in_w;                                           \
    for (int32_t i = 0; i < pixels; ++i) {                                                     \
      int32_t k = conv_in_place_pixel(d, pixels, i);                                           \
      memcpy(pixel, data + k * d->in_c, (size_t)d->in_c * sizeof(t));                          \
      for (int32_t oc = 0; oc < d->out_c; ++oc) {                                              \
        data[k * d->out_c + oc] =                                                              \
            finish(&p->rq, acc(p, &one, pixel, filter + oc * d->k_c, origin), bias, oc);       \
      }                                                                                        \
    }                                                                                          \
    return MCU_OK;                                                                             \
  }

CONV_IN_PLACE(conv_int8_in_place, int8_t, int32_t, conv_acc_int8, mcu_requant_out_int8)
CONV_IN_PLACE(conv_f32_in_place, float, float, conv_acc_f32, mcu_requant_out_f32)

/* `name`: the eval of elements `t` (bias `bias_t`) after the checks given last: in place by
 * `in_place`, else each output's sum `acc`, finished by `finish`. */
#define CONV_EVAL(name, t, bias_t, acc, finish, in_place, ...)                         \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) {                      \
    MCU_WINDOW_KERNEL(mcu_conv_2d_params_t, conv_dims(node, ctx, &d), t, t, bias_t);   \
    __VA_ARGS__;                                                                       \
    if ((const void *)out == (const void *)input) {                                    \
      return in_place(p, &d, out, filter, bias, mcu_scratch(ctx, node));               \
    }                                                                                  \
    int32_t filter_size = d.k_h * d.k_w * d.k_c;                                       \
    /* a concatenation's channel slice (mcu_output_stride): elements between pixels */ \
    int32_t gap = mcu_output_stride(node, d.out_c) - d.out_c;                          \
    MCU_ENSURE_MODEL(gap >= 0, MCU_ERR_BAD_MODEL);                                     \
    MCU_WINDOW_EACH_OUTPUT(&d, t, input, {                                             \
      conv_window_t w = conv_window(p, &d, oy, ox, oc);                                \
      *out++ = finish(&p->rq, acc(p, &d, in, filter + oc * filter_size, w), bias, oc); \
      if (oc == d.out_c - 1) {                                                         \
        out += gap;                                                                    \
      }                                                                                \
    });                                                                                \
    return MCU_OK;                                                                     \
  }

CONV_EVAL(mcu_conv_2d_int8, int8_t, int32_t, conv_acc_int8, mcu_requant_out_int8,
          conv_int8_in_place, MCU_REQUANT_CHECK(p->rq, d.out_c))

/* 16x8: `acc64` selects the int64 accumulator and bias (else int32, wrapping). */
static mcu_status_t conv_int16(const mcu_node_t *node, mcu_context_t *ctx, int acc64) {
  const mcu_conv_2d_params_t *p = node->params;
  mcu_window_dims_t d;
  MCU_TRY(conv_dims(node, ctx, &d));
  MCU_REQUANT_CHECK(p->rq, d.out_c);
  const int16_t *input = mcu_input(ctx, node, 0);
  const int8_t *filter = mcu_input(ctx, node, 1);
  const int64_t *bias64 = node->num_inputs > 2 && acc64 ? mcu_input(ctx, node, 2) : NULL;
  const int32_t *bias32 = node->num_inputs > 2 && !acc64 ? mcu_input(ctx, node, 2) : NULL;
  int16_t *out = mcu_output(ctx, node, 0);
  int32_t filter_size = d.k_h * d.k_w * d.k_c;
  MCU_WINDOW_EACH_OUTPUT(&d, int16_t, input, {
    conv_window_t w = conv_window(p, &d, oy, ox, oc);
    int64_t acc = conv_acc_int16(p, &d, in, filter + oc * filter_size, w);
    if (acc64) {
      acc += bias64 != NULL ? bias64[oc] : 0;
      *out++ = (int16_t)mcu_requant_acc64(&p->rq, acc, oc);
    } else {
      uint32_t acc32 = (uint32_t)acc + (bias32 != NULL ? (uint32_t)bias32[oc] : 0u);
      *out++ = (int16_t)mcu_requant_acc32(&p->rq, (int32_t)acc32, oc);
    }
  });
  return MCU_OK;
}

mcu_status_t mcu_conv_2d_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  return conv_int16(node, ctx, 1);
}

mcu_status_t mcu_conv_2d_int16_acc32(const mcu_node_t *node, mcu_context_t *ctx) {
  return conv_int16(node, ctx, 0);
}

CONV_EVAL(mcu_conv_2d_f32, float, float, conv_acc_f32, mcu_requant_out_f32, conv_f32_in_place, )
