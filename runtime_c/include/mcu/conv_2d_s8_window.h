/* The window of the general int8 CONV_2D kernels (kernels/opt/conv_2d_s8.c and its variants,
 * mcugen/codegen/lower/opt_conv_2d.py): the layer's dimensions, the output pixels in the
 * reference kernel's order, one pixel's window gathered as bytes, the geometry of the windows
 * that lie inside the image, the requantisation of two pixels' sums and a channel's tail word.
 * Private to those files (static, so each file compiles its own; the byte window's functions
 * are marked unused for the files that gather otherwise).
 *
 * A tap outside the image is the input zero point: plus the input offset it is 0 and adds
 * nothing, as the reference kernel's skipped tap; so the offset folded into the bias
 * (input_offset * the whole filter row) is exact for edge windows too. Windows of in_c a
 * multiple of 4 are expanded from the image directly; others are gathered into the scratch as
 * bytes first. */
#ifndef MCU_CONV_2D_S8_WINDOW_H
#define MCU_CONV_2D_S8_WINDOW_H

#include <string.h>

#include "mcu/kernels/conv_2d.h"
#include "mcu/quant.h"
#include "mcu/simd.h"
#include "mcu/window.h"

typedef struct {
  mcu_window_dims_t s;
  int32_t depth;  /* k_h * k_w * in_c: one window, one filter row */
  int32_t blocks; /* depth / 4 */
  int32_t tail;   /* depth % 4 */
} dims_t;

static mcu_status_t read_dims(const mcu_node_t *node, const mcu_context_t *ctx, dims_t *d) {
  MCU_TRY(mcu_window_node_dims(node, ctx, 0, 1, &d->s));
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  d->depth = d->s.k_h * d->s.k_w * d->s.in_c;
  d->blocks = d->depth / 4;
  d->tail = d->depth % 4;
  /* a convolution of one group [O, KH, KW, I], or a depthwise one of one input channel
   * [1, KH, KW, O] whose weights the build stored as the convolution's rows */
  MCU_ENSURE_MODEL((filter->dims[0] == d->s.out_c && d->s.k_c == d->s.in_c) ||
                       (d->s.in_c == 1 && filter->dims[0] == 1 && d->s.k_c == d->s.out_c),
                   MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

#if MCU_SIMD_DSP
/* Assembly of half a block of four channels (conv_layout: per pair a.k b.k bytes, the first
 * pair's word then the second's, loaded from wp) against two pixels' widened words x0, x1 of
 * (k0, k2) or (k1, k3): sums a00..a31 (channel, pixel), scratch wd and e. */
#define CONV_QUAD_HALF_ASM                \
  "ldr %[wd], [%[wp]], #4\n\t"            \
  "sxtb16 %[e], %[wd]\n\t"                \
  "smlad %[a00], %[e], %[x0], %[a00]\n\t" \
  "smlad %[a01], %[e], %[x1], %[a01]\n\t" \
  "sxtb16 %[e], %[wd], ror #8\n\t"        \
  "smlad %[a10], %[e], %[x0], %[a10]\n\t" \
  "smlad %[a11], %[e], %[x1], %[a11]\n\t" \
  "ldr %[wd], [%[wp]], #4\n\t"            \
  "sxtb16 %[e], %[wd]\n\t"                \
  "smlad %[a20], %[e], %[x0], %[a20]\n\t" \
  "smlad %[a21], %[e], %[x1], %[a21]\n\t" \
  "sxtb16 %[e], %[wd], ror #8\n\t"        \
  "smlad %[a30], %[e], %[x0], %[a30]\n\t" \
  "smlad %[a31], %[e], %[x1], %[a31]\n\t"
#endif

/* A general kernel's operands: input, filter, output and scratch. */
typedef struct {
  const int8_t *input;
  const int8_t *weights;
  int8_t *output;
  void *scratch;
} operands_t;

/* The dimensions and operands of `node`, checked: never in place; scratch when `scratched`
 * (the plan's). */
static inline __attribute__((always_inline)) mcu_status_t conv_operands(
    const mcu_node_t *node, mcu_context_t *ctx, int scratched, dims_t *d, operands_t *k) {
  MCU_TRY(read_dims(node, ctx, d));
  k->input = mcu_input(ctx, node, 0);
  k->weights = mcu_input(ctx, node, 1);
  k->output = mcu_output(ctx, node, 0);
  MCU_ENSURE((const void *)k->output != (const void *)k->input, MCU_ERR_BAD_MODEL);
  k->scratch = mcu_scratch(ctx, node);
  MCU_ENSURE(!scratched || k->scratch != NULL, MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* Whether the activation range is all of int8 (the kernels then saturate with SSAT). */
static inline int full_range(const mcu_conv_2d_s8_params_t *p) {
  return p->act_min == -128 && p->act_max == 127;
}

/* `n` bytes from `src` to `dst`, a word at a time. */
static __attribute__((unused)) void copy_bytes(int8_t *dst, const int8_t *src, int32_t n) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    mcu_store_u32(dst + k, mcu_load_u32(src + k));
  }
  for (; k < n; ++k) {
    dst[k] = src[k];
  }
}

/* The first tap's column and whether the window's rows are contiguous runs inside the image. */
static int contiguous_rows(const mcu_conv_2d_s8_params_t *p, const dims_t *d, int32_t x0) {
  int32_t x_last = x0 + (d->s.k_w - 1) * p->win.dilation_w;
  return x0 >= 0 && x_last < d->s.in_w && (p->win.dilation_w == 1 || d->s.k_w == 1);
}

/* Window rows as bytes into `col` (depth bytes; the build zeroed the bytes up to the next
 * multiple of 4 once). */
static __attribute__((unused)) void gather_window(const mcu_conv_2d_s8_params_t *p,
                                                 const dims_t *d, const int8_t *in, int32_t y0,
                                                 int32_t x0, int8_t *col) {
  int32_t row_bytes = d->s.k_w * d->s.in_c;
  int contiguous = contiguous_rows(p, d, x0);
  for (int32_t ky = 0; ky < d->s.k_h; ++ky, col += row_bytes) {
    int32_t y = y0 + ky * p->win.dilation_h;
    if (y < 0 || y >= d->s.in_h) {
      memset(col, p->pad_value, (size_t)row_bytes);
      continue;
    }
    const int8_t *row = in + y * d->s.in_w * d->s.in_c;
    if (contiguous) {
      copy_bytes(col, row + x0 * d->s.in_c, row_bytes);
      continue;
    }
    for (int32_t kx = 0; kx < d->s.k_w; ++kx) {
      int32_t xx = x0 + kx * p->win.dilation_w;
      if (xx >= 0 && xx < d->s.in_w) {
        copy_bytes(col + kx * d->s.in_c, row + xx * d->s.in_c, d->s.in_c);
      } else {
        memset(col + kx * d->s.in_c, p->pad_value, (size_t)d->s.in_c);
      }
    }
  }
}

/* An output pixel: batch, row, column; `next` steps in the reference kernel's order. */
typedef struct {
  int32_t b;
  int32_t oy;
  int32_t ox;
} pixel_t;

static __attribute__((unused)) void next(pixel_t *q, const dims_t *d) {
  if (++q->ox == d->s.out_w) {
    q->ox = 0;
    if (++q->oy == d->s.out_h) {
      q->oy = 0;
      ++q->b;
    }
  }
}

/* What the common window needs, computed once per call: the last first-tap row and column
 * of a window inside the image (the column -1 when rows are not contiguous runs), and the
 * bytes of a window row, between window rows and of a batch. */
typedef struct {
  int32_t y_max;
  int32_t x_max;
  int32_t run;
  int32_t step;
  int32_t image;
} fast_t;

static __attribute__((unused)) fast_t fast_geometry(const mcu_conv_2d_s8_params_t *p,
                                                   const dims_t *d) {
  fast_t g;
  g.y_max = d->s.in_h - 1 - (d->s.k_h - 1) * p->win.dilation_h;
  int contiguous = p->win.dilation_w == 1 || d->s.k_w == 1;
  g.x_max = contiguous ? d->s.in_w - 1 - (d->s.k_w - 1) * p->win.dilation_w : -1;
  g.run = d->s.k_w * d->s.in_c;
  g.step = p->win.dilation_h * d->s.in_w * d->s.in_c;
  g.image = d->s.in_h * d->s.in_w * d->s.in_c;
  return g;
}

/* A channel's bias from its record (the input offset folded in, or not: opt_conv_2d.py and
 * opt_conv_lean.py say which). */
static inline int32_t conv_bias(const mcu_conv_2d_s8_params_t *p, int32_t c) {
  return p->channels[c * MCU_CONV_REC_WORDS + MCU_CONV_REC_BIAS];
}

/* One output of the channel whose record is `rec` (conv_2d_s8.c says how) from its sum, before
 * the activation's clamp. */
static inline __attribute__((always_inline)) int32_t requant_one(const int32_t *rec, int32_t acc) {
  int32_t shifted = (int32_t)((uint32_t)acc << rec[MCU_CONV_REC_LEFT]);
  int32_t k = ((acc >> 31) & rec[MCU_CONV_REC_SIGN]) + rec[MCU_CONV_REC_CONSTANT];
  return mcu_smmlar(shifted, rec[MCU_CONV_REC_MULTIPLIER], k) >> rec[MCU_CONV_REC_RIGHT];
}

/* The output of the channel whose record is `rec` from its sum `acc`, clamped to [lo, hi]. */
static inline int8_t conv_output(const int32_t *rec, int32_t acc, int32_t lo, int32_t hi) {
  return (int8_t)mcu_clamp_i32(requant_one(rec, acc), lo, hi);
}

/* The outputs of one channel (record `rec`) for both pixels' sums, each clamped to all of int8
 * (`full`, a constant at each call) or to [lo, hi]; the record is read before any output is
 * stored (the int8 stores may alias it). */
typedef struct {
  int32_t v0;
  int32_t v1;
} two_t;

static inline __attribute__((always_inline)) two_t requantize(const int32_t *rec, int32_t acc0,
                                                              int32_t acc1, int full, int32_t lo,
                                                              int32_t hi) {
  int32_t v0 = requant_one(rec, acc0), v1 = requant_one(rec, acc1);
  two_t v = {full ? mcu_ssat8(v0) : mcu_clamp_i32(v0, lo, hi),
             full ? mcu_ssat8(v1) : mcu_clamp_i32(v1, lo, hi)};
  return v;
}

/* SXTB16 of `w` (h 0: bytes 0 and 2) or SXTB16 ROR 8 (h 1: bytes 1 and 3). */
static inline uint32_t lanes(uint32_t w, int32_t h) {
  return h ? mcu_sxtb16_ror8(w) : mcu_sxtb16(w);
}

/* The C (no DSP) of the kernels' products: one half block of four channels' weights, words wa
 * (channels 0, 1) and wb (2, 3) in conv_layout, against the widened window word x (k0, k2) or
 * (k1, k3): s[k * stride] += channel k's two products. */
static inline void quad_half(uint32_t wa, uint32_t wb, uint32_t x, int32_t *s, int32_t stride) {
  s[0] = mcu_smlad(mcu_sxtb16(wa), x, s[0]);
  s[stride] = mcu_smlad(mcu_sxtb16_ror8(wa), x, s[stride]);
  s[2 * stride] = mcu_smlad(mcu_sxtb16(wb), x, s[2 * stride]);
  s[3 * stride] = mcu_smlad(mcu_sxtb16_ror8(wb), x, s[3 * stride]);
}

/* The last depth % 4 weights of a channel as one word: read past them when other weights
 * follow (blocks > 0: they multiply zeros), else byte by byte. */
static inline uint32_t tail_word(const int8_t *w, const dims_t *d) {
  if (d->blocks > 0) {
    return mcu_load_u32(w);
  }
  uint32_t word = 0;
  memcpy(&word, w, (size_t)d->tail);
  return word;
}

#endif
