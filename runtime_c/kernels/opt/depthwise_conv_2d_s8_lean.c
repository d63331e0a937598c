/* DEPTHWISE_CONV_2D int8 with depth multiplier 1 and no scratch: any filter size, stride,
 * dilation and padding, bit-exact with reference/depthwise_conv_2d.c (mcu_depthwise_conv_2d_int8).
 * The fast variant (depthwise_conv_2d_s8.c) widens a group's weights and a band of padded input
 * rows into its scratch; this one reads both as they are. Per output pixel, four channels at a
 * time (NHWC: one word holds a tap's four channels), over the taps inside the image only (the
 * reference skips the others): per tap one load of four inputs, two SXTAB16 (widened, the input
 * offset added), one load of four weights, two SXTB16 and four SMLABB / SMLATT. The last
 * channels (not a multiple of 4) one at a time in plain C. Integer sums do not depend on their
 * order and the build checked that no sum leaves int32. The requantisation is mcu_requant
 * (mcu/requant.h), exact for the multipliers and shifts the build passes.
 *
 * In place (the plan put the output over the input, batch 1, no more output than input pixels,
 * with the reference kernel's staging of one channel plane as scratch: the operator's registered
 * traits), channel by channel as the reference: the channel's input plane is copied into the
 * scratch, then its outputs are written, which land on that channel's own (copied) input
 * positions; the window over the contiguous plane is a plain multiply-add per tap. */
#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/kernels/lean.h"
#include "mcu/requant.h"
#include "mcu/simd.h"
#include "mcu/window.h"

static inline int8_t lean_out(const mcu_requant_params_t *rq, int32_t acc, int32_t c) {
  int32_t q = mcu_requant_channel(rq, c);
  acc = mcu_requant(acc, rq->multipliers[q], rq->shifts[q]) + rq->output_offset;
  return (int8_t)mcu_clamp_i32(acc, rq->act_min, rq->act_max);
}

/* First and end (exclusive) tap index along one axis whose input position o + k * dilation lies
 * in [0, size). */
static inline void tap_range(int32_t o, int32_t dilation, int32_t taps, int32_t size,
                             int32_t *first, int32_t *end) {
  int32_t k0 = o < 0 ? (-o + dilation - 1) / dilation : 0;
  int32_t k1 = size - o <= 0 ? 0 : (size - o + dilation - 1) / dilation;
  *first = k0;
  *end = k1 < taps ? k1 : taps;
}

/* In place, channel by channel through the staged plane (the top of the file). */
static mcu_status_t in_place(const mcu_depthwise_conv_2d_params_t *p, const mcu_window_dims_t *d,
                             int8_t *data, const int8_t *filter, const int32_t *bias,
                             int8_t *plane) {
  /* always checked: the path is chosen at run time, by the addresses the allocator gave */
  MCU_ENSURE(plane != NULL && d->batches == 1, MCU_ERR_BAD_MODEL);
  MCU_ENSURE(d->out_h * d->out_w <= d->in_h * d->in_w, MCU_ERR_BAD_MODEL);
  int32_t ch = d->in_c;
  int32_t in_off = p->rq.input_offset;
  int32_t pixels = d->in_h * d->in_w;
  int32_t dil_w = p->win.dilation_w;
  for (int32_t c = 0; c < ch; ++c) {
    for (int32_t i = 0; i < pixels; ++i) {
      plane[i] = data[i * ch + c];
    }
    const int8_t *wc = filter + c;
    int8_t *out = data + c;
    int32_t b = bias != NULL ? bias[c] : 0;
    for (int32_t oy = 0; oy < d->out_h; ++oy) {
      int32_t y0 = oy * p->win.stride_h - p->win.pad_h;
      int32_t ky0, ky1;
      tap_range(y0, p->win.dilation_h, d->k_h, d->in_h, &ky0, &ky1);
      for (int32_t ox = 0; ox < d->out_w; ++ox, out += ch) {
        int32_t x0 = ox * p->win.stride_w - p->win.pad_w;
        int32_t kx0, kx1;
        tap_range(x0, p->win.dilation_w, d->k_w, d->in_w, &kx0, &kx1);
        int32_t acc = b;
        for (int32_t ky = ky0; ky < ky1; ++ky) {
          const int8_t *x = plane + (y0 + ky * p->win.dilation_h) * d->in_w + x0 + kx0 * dil_w;
          const int8_t *w = wc + (ky * d->k_w + kx0) * ch;
          for (int32_t kx = 0; kx < kx1 - kx0; ++kx) {
            acc += ((int32_t)x[kx * dil_w] + in_off) * w[kx * ch];
          }
        }
        *out = lean_out(&p->rq, acc, c);
      }
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_depthwise_conv_2d_s8_lean(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_WINDOW_KERNEL(mcu_depthwise_conv_2d_params_t, mcu_window_node_dims(node, ctx, 0, 1, &d),
                    int8_t, int8_t, int32_t);
  MCU_ENSURE_MODEL(p->depth_multiplier == 1 && d.k_c == d.in_c && d.out_c == d.in_c,
                   MCU_ERR_BAD_MODEL);
  MCU_REQUANT_CHECK(p->rq, d.out_c);
  if ((const void *)out == (const void *)input) {
    return in_place(p, &d, out, filter, bias, mcu_scratch(ctx, node));
  }
  int32_t ch = d.in_c;
  int32_t groups = ch >> 2;
  int32_t in_off = p->rq.input_offset;
  uint32_t off2 = mcu_pack16(in_off, in_off);
  int32_t row_step = d.in_w * ch;
  for (int32_t b = 0; b < d.batches; ++b) {
    const int8_t *in = input + b * d.in_h * row_step;
    for (int32_t oy = 0; oy < d.out_h; ++oy) {
      int32_t y0 = oy * p->win.stride_h - p->win.pad_h;
      int32_t ky0, ky1;
      tap_range(y0, p->win.dilation_h, d.k_h, d.in_h, &ky0, &ky1);
      for (int32_t ox = 0; ox < d.out_w; ++ox) {
        int32_t x0 = ox * p->win.stride_w - p->win.pad_w;
        int32_t kx0, kx1;
        tap_range(x0, p->win.dilation_w, d.k_w, d.in_w, &kx0, &kx1);
        /* the first tap inside the image; row ky's taps start ky * dilation_h rows below */
        int32_t first = (y0 + ky0 * p->win.dilation_h) * d.in_w + x0 + kx0 * p->win.dilation_w;
        const int8_t *win = in + first * ch;
        const int8_t *wf = filter + (ky0 * d.k_w + kx0) * ch;
        int32_t x_step = p->win.dilation_w * ch;
        int32_t y_step = p->win.dilation_h * row_step;
        int32_t taps_w = kx1 - kx0;
        int32_t c = 0;
        for (int32_t g = 0; g < groups; ++g, c += 4) {
          int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
          const int8_t *x_row = win + c;
          const int8_t *w_row = wf + c;
          for (int32_t ky = ky0; ky < ky1; ++ky, x_row += y_step, w_row += d.k_w * ch) {
            const int8_t *x = x_row;
            const int8_t *w = w_row;
            for (int32_t kx = 0; kx < taps_w; ++kx, x += x_step, w += ch) {
              uint32_t v = mcu_load_u32(x);
              uint32_t wt = mcu_load_u32(w);
              uint32_t even = mcu_sxtab16(off2, v);
              uint32_t odd = mcu_sxtab16_ror8(off2, v);
              uint32_t we = mcu_sxtb16(wt);
              uint32_t wo = mcu_sxtb16_ror8(wt);
              a0 = mcu_smlabb(even, we, a0);
              a2 = mcu_smlatt(even, we, a2);
              a1 = mcu_smlabb(odd, wo, a1);
              a3 = mcu_smlatt(odd, wo, a3);
            }
          }
          if (bias != NULL) {
            a0 += bias[c];
            a1 += bias[c + 1];
            a2 += bias[c + 2];
            a3 += bias[c + 3];
          }
          out[c] = lean_out(&p->rq, a0, c);
          out[c + 1] = lean_out(&p->rq, a1, c + 1);
          out[c + 2] = lean_out(&p->rq, a2, c + 2);
          out[c + 3] = lean_out(&p->rq, a3, c + 3);
        }
        for (; c < ch; ++c) {
          int32_t acc = 0;
          const int8_t *x_row = win + c;
          const int8_t *w_row = wf + c;
          for (int32_t ky = ky0; ky < ky1; ++ky, x_row += y_step, w_row += d.k_w * ch) {
            for (int32_t kx = 0; kx < taps_w; ++kx) {
              acc += ((int32_t)x_row[kx * x_step] + in_off) * w_row[kx * ch];
            }
          }
          out[c] = lean_out(&p->rq, acc + (bias != NULL ? bias[c] : 0), c);
        }
        out += ch;
      }
    }
  }
  return MCU_OK;
}
