/* CONV_2D int8 with one group and any filter, stride, dilation and padding, bit-exact with
 * reference/conv_2d.c (mcu_conv_2d_int8). Output pixels go two at a time, in the reference
 * kernel's order (across rows and batches). Each pixel's window, k_h x k_w taps of in_c inputs,
 * is gathered into the scratch (im2col) in the filter's own [k_h][k_w][in_c] order, so the two
 * windows and the filter rows [out_c][k_h * k_w * in_c] make a matrix product
 * (mcu/mat_mult_s8.h, weights in its channel-pair layout). A tap outside the image is written
 * as the input zero point: plus the input offset it is 0 and adds nothing, as the reference
 * kernel's skipped tap; so the offset folded into the bias (input_offset * the whole filter row,
 * mcugen/codegen/lower/opt_conv_2d.py) is exact for edge windows too. A window that lies inside
 * the image and is contiguous in memory (one filter row of dilation-1 taps: 1 x k_w filters,
 * 1x1 with a stride) is read where it is. */
#include <string.h>

#include "mcu/kernels/conv_2d.h"
#include "mcu/mat_mult_s8.h"
#include "mcu/simd.h"

typedef struct {
  int32_t batches;
  int32_t in_h;
  int32_t in_w;
  int32_t in_c;
  int32_t k_h;
  int32_t k_w;
  int32_t out_h;
  int32_t out_w;
  int32_t out_c;
  int32_t depth; /* k_h * k_w * in_c: one window, one filter row */
} dims_t;

static mcu_status_t read_dims(const mcu_node_t *node, const mcu_context_t *ctx, dims_t *d) {
  MCU_ENSURE_MODEL(node->num_inputs >= 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in != NULL && filter != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  d->batches = in->dims[0];
  d->in_h = in->dims[1];
  d->in_w = in->dims[2];
  d->in_c = in->dims[3];
  d->k_h = filter->dims[1];
  d->k_w = filter->dims[2];
  d->out_h = out->dims[1];
  d->out_w = out->dims[2];
  d->out_c = out->dims[3];
  d->depth = d->k_h * d->k_w * d->in_c;
  MCU_ENSURE_MODEL(out->dims[0] == d->batches, MCU_ERR_BAD_MODEL);
  /* a convolution of one group [O, KH, KW, I], or a depthwise one of one input channel
   * [1, KH, KW, O] whose weights the build stored as the convolution's rows */
  MCU_ENSURE_MODEL((filter->dims[0] == d->out_c && filter->dims[3] == d->in_c) ||
                       (d->in_c == 1 && filter->dims[0] == 1 && filter->dims[3] == d->out_c),
                   MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* `n` bytes from `src` to `dst`, a word at a time. */
static void copy_bytes(int8_t *dst, const int8_t *src, int32_t n) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    mcu_store_u32(dst + k, mcu_load_u32(src + k));
  }
  for (; k < n; ++k) {
    dst[k] = src[k];
  }
}

/* One filter row (ky) of a window: k_w taps from image row `row` (NULL: outside the image) into
 * `dst`, starting at column x0. */
static void gather_row(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const int8_t *row,
                       int32_t x0, int contiguous, int8_t *dst) {
  if (row == NULL) {
    memset(dst, p->pad_value, (size_t)(d->k_w * d->in_c));
  } else if (contiguous) {
    copy_bytes(dst, row + x0 * d->in_c, d->k_w * d->in_c);
  } else {
    for (int32_t kx = 0; kx < d->k_w; ++kx, dst += d->in_c) {
      int32_t x = x0 + kx * p->dilation_w;
      if (x >= 0 && x < d->in_w) {
        copy_bytes(dst, row + x * d->in_c, d->in_c);
      } else {
        memset(dst, p->pad_value, (size_t)d->in_c);
      }
    }
  }
}

/* The window whose first tap is (y0, x0) of image `in`: where it lies in the image when it is
 * inside and contiguous, else gathered into `col`; NULL when it needs gathering and `col` is
 * NULL (the build gives no scratch only when no window needs it). */
static const int8_t *window(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const int8_t *in,
                            int32_t y0, int32_t x0, int8_t *col) {
  int32_t x_last = x0 + (d->k_w - 1) * p->dilation_w;
  int contiguous = x0 >= 0 && x_last < d->in_w && (p->dilation_w == 1 || d->k_w == 1);
  if (d->k_h == 1 && contiguous && y0 >= 0 && y0 < d->in_h) {
    return in + (y0 * d->in_w + x0) * d->in_c;
  }
  if (col == NULL) {
    return NULL;
  }
  int32_t row_bytes = d->k_w * d->in_c;
  for (int32_t ky = 0; ky < d->k_h; ++ky) {
    int32_t y = y0 + ky * p->dilation_h;
    const int8_t *row = y >= 0 && y < d->in_h ? in + y * d->in_w * d->in_c : NULL;
    gather_row(p, d, row, x0, contiguous, col + ky * row_bytes);
  }
  return col;
}

/* An output pixel: batch, row, column; `next` steps in the reference kernel's order. */
typedef struct {
  int32_t b;
  int32_t oy;
  int32_t ox;
} pixel_t;

static void next(pixel_t *q, const dims_t *d) {
  if (++q->ox == d->out_w) {
    q->ox = 0;
    if (++q->oy == d->out_h) {
      q->oy = 0;
      ++q->b;
    }
  }
}

static const int8_t *pixel_window(const mcu_conv_2d_s8_params_t *p, const dims_t *d,
                                  const int8_t *input, pixel_t q, int8_t *col) {
  const int8_t *in = input + q.b * d->in_h * d->in_w * d->in_c;
  return window(p, d, in, q.oy * p->stride_h - p->pad_h, q.ox * p->stride_w - p->pad_w, col);
}

mcu_status_t mcu_conv_2d_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_conv_2d_s8_params_t *p = node->params;
  dims_t d;
  MCU_TRY(read_dims(node, ctx, &d));
  MCU_ENSURE_MODEL(p->num_channels == 1 || p->num_channels == d.out_c, MCU_ERR_BAD_MODEL);
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *weights = mcu_input(ctx, node, 1);
  int8_t *output = mcu_output(ctx, node, 0);
  MCU_ENSURE((const void *)output != (const void *)input, MCU_ERR_BAD_MODEL); /* never in place */
  int8_t *col0 = mcu_scratch(ctx, node);
  int8_t *col1 = col0 != NULL ? col0 + ((d.depth + 3) & ~3) : NULL; /* second window aligned */
  const mcu_mat_mult_s8_params_t mm = {p->output_offset, p->act_min,   p->act_max, p->num_channels,
                                       p->multipliers,   p->shifts,    p->bias};
  int32_t pixels = d.batches * d.out_h * d.out_w;
  pixel_t q = {0, 0, 0};
  for (int32_t i = 0; i < pixels; i += 2) {
    const int8_t *x0 = pixel_window(p, &d, input, q, col0);
    next(&q, &d);
    const int8_t *x1 = NULL;
    if (i + 1 < pixels) {
      x1 = pixel_window(p, &d, input, q, col1);
      next(&q, &d);
      MCU_ENSURE(x1 != NULL, MCU_ERR_BAD_MODEL);
    }
    MCU_ENSURE(x0 != NULL, MCU_ERR_BAD_MODEL);
    int8_t *out0 = output + i * d.out_c;
    mcu_mat_mult_s8_rows(&mm, x0, x1, weights, d.out_c, d.depth, out0, out0 + d.out_c);
  }
  return MCU_OK;
}
