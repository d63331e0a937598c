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

static void next(pixel_t *q, const dims_t *d) {
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

static fast_t fast_geometry(const mcu_conv_2d_s8_params_t *p, const dims_t *d) {
  fast_t g;
  g.y_max = d->s.in_h - 1 - (d->s.k_h - 1) * p->win.dilation_h;
  int contiguous = p->win.dilation_w == 1 || d->s.k_w == 1;
  g.x_max = contiguous ? d->s.in_w - 1 - (d->s.k_w - 1) * p->win.dilation_w : -1;
  g.run = d->s.k_w * d->s.in_c;
  g.step = p->win.dilation_h * d->s.in_w * d->s.in_c;
  g.image = d->s.in_h * d->s.in_w * d->s.in_c;
  return g;
}

/* SMMLAR: acc + the rounded high word of a * b, exactly. */
static inline int32_t smmlar(int32_t a, int32_t b, int32_t acc) {
#if MCU_SIMD_DSP
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
  return r;
#else
  return mcu_smmulr(a, b) + acc;
#endif
}

/* The outputs of one channel (record `rec`: conv_2d_s8.c says how) for both pixels' sums,
 * the record read once (before any output is stored: the int8 stores may alias it). */
typedef struct {
  int32_t v0;
  int32_t v1;
} two_t;

static inline __attribute__((always_inline)) two_t requantize(const int32_t *rec, int32_t acc0,
                                                              int32_t acc1, int full, int32_t lo,
                                                              int32_t hi) {
  int32_t m = rec[MCU_CONV_REC_MULTIPLIER], left = rec[MCU_CONV_REC_LEFT];
  int32_t right = rec[MCU_CONV_REC_RIGHT], k = rec[MCU_CONV_REC_CONSTANT];
  int32_t sign = rec[MCU_CONV_REC_SIGN];
  int32_t v0 = smmlar((int32_t)((uint32_t)acc0 << left), m, ((acc0 >> 31) & sign) + k) >> right;
  int32_t v1 = smmlar((int32_t)((uint32_t)acc1 << left), m, ((acc1 >> 31) & sign) + k) >> right;
  two_t v = {full ? mcu_ssat8(v0) : mcu_clamp_i32(v0, lo, hi),
             full ? mcu_ssat8(v1) : mcu_clamp_i32(v1, lo, hi)};
  return v;
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
