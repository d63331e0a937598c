/* DEPTHWISE_CONV_2D, bit-exact with TFLM reference_integer_ops::DepthwiseConvPerChannel (int8;
 * int16 x int8 with an int64 accumulator and bias) and reference_ops::DepthwiseConv (float32), any
 * depth multiplier; int8 and float32 in place when the plan says. */
#include "mcu/kernels/depthwise_conv_2d.h"

#include <string.h>

#include "mcu/quant.h"
#include "mcu/window.h"

static mcu_status_t dw_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                            mcu_window_dims_t *d) {
  const mcu_depthwise_conv_2d_params_t *p = node->params;
  MCU_TRY(mcu_window_node_dims(node, ctx, 0, 1, d));
  MCU_ENSURE_MODEL(d->k_c == d->out_c && p->depth_multiplier > 0, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(d->out_c == d->in_c * p->depth_multiplier, MCU_ERR_BAD_MODEL);
  return mcu_window_bias(node, ctx, 2, d);
}

/* Top-left input position of one output pixel's window, and the channels it combines. */
typedef struct {
  int32_t y0;
  int32_t x0;
  int32_t ic;
  int32_t oc;
} dw_window_t;

static dw_window_t dw_window(const mcu_depthwise_conv_2d_params_t *p, int32_t oy, int32_t ox,
                             int32_t ic, int32_t oc) {
  dw_window_t w = {oy * p->win.stride_h - p->win.pad_h, ox * p->win.stride_w - p->win.pad_w, ic, oc};
  return w;
}

/* The sum over the window of filter * (input + offset), in TFLM's tap order: `acc_t` the
 * accumulator, `mul_t` the products' type, `offset` what each input adds (empty: nothing). The
 * 16x8 sum is exact in int64; its input offset is ignored, as TFLM's 16x8 kernel ignores it (zero
 * points are 0). */
#define DW_ACC(name, in_t, filt_t, acc_t, mul_t, offset)                                 \
  static acc_t name(const mcu_depthwise_conv_2d_params_t *p, const mcu_window_dims_t *d, \
                    const in_t *in, const filt_t *filter, dw_window_t w) {               \
    acc_t acc = 0;                                                                       \
    MCU_WINDOW_EACH_TAP(d, w.y0, w.x0, p->win.dilation_h, p->win.dilation_w, {                   \
      mul_t value = (mul_t)in[(y * d->in_w + x) * d->in_c + w.ic] offset;                \
      acc += (mul_t)filter[(ky * d->k_w + kx) * d->out_c + w.oc] * value;                \
    });                                                                                  \
    return acc;                                                                          \
  }

DW_ACC(dw_acc_int8, int8_t, int8_t, int32_t, int32_t, +p->rq.input_offset)
DW_ACC(dw_acc_int16, int16_t, int8_t, int64_t, int32_t, )
DW_ACC(dw_acc_f32, float, float, float, float, )

/* In place (the plan put the output over an input that dies here, mcugen/plan/aliasing.py step
 * 5): depth multiplier 1, batch 1, no more output than input pixels. Channel by channel, the
 * input plane is staged in the scratch, then that channel's outputs are written: output pixel k
 * lands on input pixel k of the same channel, already staged, and no other channel is touched. */
static mcu_status_t dw_in_place_check(const mcu_window_dims_t *d, const void *scratch) {
  /* always checked: the path is chosen at run time, by the addresses the allocator gave */
  MCU_ENSURE(scratch != NULL && d->batches == 1 && d->out_c == d->in_c, MCU_ERR_BAD_MODEL);
  MCU_ENSURE(d->out_h * d->out_w <= d->in_h * d->in_w, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

static void dw_stage_plane(void *plane, const uint8_t *data, const mcu_window_dims_t *d,
                           int32_t c, size_t elem) {
  uint8_t *dst = plane;
  int32_t pixels = d->in_h * d->in_w;
  for (int32_t k = 0; k < pixels; ++k) {
    memcpy(dst + (size_t)k * elem, data + ((size_t)k * (size_t)d->in_c + (size_t)c) * elem, elem);
  }
}

/* `name`: the in-place path of elements `t`: sums `acc`, outputs `finish`
 * (mcu/requant_params.h). */
#define DW_IN_PLACE(name, t, bias_t, acc, finish)                                \
  static mcu_status_t name(const mcu_depthwise_conv_2d_params_t *p,              \
                           const mcu_window_dims_t *d, t *data, const t *filter, \
                           const bias_t *bias, t *plane) {                       \
    MCU_TRY(dw_in_place_check(d, plane));                                        \
    mcu_window_dims_t one = *d;                                                  \
    one.in_c = 1;                                                                \
    for (int32_t c = 0; c < d->in_c; ++c) {                                      \
      dw_stage_plane(plane, (const uint8_t *)data, d, c, sizeof(t));             \
      for (int32_t oy = 0; oy < d->out_h; ++oy) {                                \
        for (int32_t ox = 0; ox < d->out_w; ++ox) {                              \
          dw_window_t w = dw_window(p, oy, ox, 0, c);                            \
          data[(oy * d->out_w + ox) * d->out_c + c] =                            \
              finish(&p->rq, acc(p, &one, plane, filter, w), bias, c);           \
        }                                                                        \
      }                                                                          \
    }                                                                            \
    return MCU_OK;                                                               \
  }

DW_IN_PLACE(dw_int8_in_place, int8_t, int32_t, dw_acc_int8, mcu_requant_out_int8)
DW_IN_PLACE(dw_f32_in_place, float, float, dw_acc_f32, mcu_requant_out_f32)

/* `name`: the eval of elements `t` (bias `bias_t`) after the checks given last: in place by
 * `in_place`, else each output's sum `acc`, finished by `finish`. */
#define DW_EVAL(name, t, bias_t, acc, finish, in_place, ...)                                 \
  mcu_status_t name(const mcu_node_t *node, mcu_context_t *ctx) {                            \
    MCU_WINDOW_KERNEL(mcu_depthwise_conv_2d_params_t, dw_dims(node, ctx, &d), t, t, bias_t); \
    __VA_ARGS__;                                                                             \
    if ((const void *)out == (const void *)input) {                                          \
      return in_place(p, &d, out, filter, bias, mcu_scratch(ctx, node));                     \
    }                                                                                        \
    MCU_WINDOW_EACH_OUTPUT(&d, t, input, {                                                   \
      dw_window_t w = dw_window(p, oy, ox, oc / p->depth_multiplier, oc);                    \
      *out++ = finish(&p->rq, acc(p, &d, in, filter, w), bias, oc);                          \
    });                                                                                      \
    return MCU_OK;                                                                           \
  }

DW_EVAL(mcu_depthwise_conv_2d_int8, int8_t, int32_t, dw_acc_int8, mcu_requant_out_int8,
        dw_int8_in_place, MCU_REQUANT_CHECK(p->rq, d.out_c))

mcu_status_t mcu_depthwise_conv_2d_int16(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_WINDOW_KERNEL(mcu_depthwise_conv_2d_params_t, dw_dims(node, ctx, &d),
                    int16_t, int8_t, int64_t);
  MCU_REQUANT_CHECK(p->rq, d.out_c);
  MCU_WINDOW_EACH_OUTPUT(&d, int16_t, input, {
    dw_window_t w = dw_window(p, oy, ox, oc / p->depth_multiplier, oc);
    int64_t acc = dw_acc_int16(p, &d, in, filter, w) + (bias != NULL ? bias[oc] : 0);
    *out++ = (int16_t)mcu_requant_acc64(&p->rq, acc, oc);
  });
  return MCU_OK;
}

DW_EVAL(mcu_depthwise_conv_2d_f32, float, float, dw_acc_f32, mcu_requant_out_f32, dw_f32_in_place, )
