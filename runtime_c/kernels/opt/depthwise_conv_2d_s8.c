/* DEPTHWISE_CONV_2D int8 with depth multiplier 1 and dilation 1, any filter size up to
 * DW_MAX_TAPS taps, strides and padding: bit-exact with reference/depthwise_conv_2d.c
 * (mcu_depthwise_conv_2d_int8), in place too.
 *
 * Channels are taken four at a time (NHWC: one 32-bit load holds one tap of four channels), one
 * channel group at a time over all output pixels, so the group's weights are widened once into
 * 16-bit lanes on the stack (w[(c0, c2)], w[(c1, c3)] per tap). Per tap and four channels the
 * inner loop is one load, two SXTAB16 (the four inputs widened with the input offset added) and
 * four SMLABB / SMLATT into the four sums, plus one LDRD of widened weights. Windows that cross
 * the border are clipped to the taps inside the image before summing, which is what the
 * reference's skipping of outside taps computes; integer sums do not depend on their order and
 * the build checked that no sum leaves int32. Channels past the last multiple of four go one at
 * a time.
 *
 * Requantisation: mcu_mbqm's SaturatingRoundingDoublingHighMul of a = acc << left by a
 * multiplier M in [2^30, 2^31) is floor((a * M + 2^30) / 2^31) for both signs (its nudge and
 * truncation towards zero combine to this), which is SMMULR(2a, M) while |a| < 2^30: the
 * variant is only chosen when the build proves that bound for every channel
 * (mcugen/codegen/lower/opt_depthwise.py). Its RoundingDivideByPOT by `right` > 0 is
 * (x + 2^(right-1) - (x < 0)) >> right, exact and without overflow for |x| < 2^30.
 *
 * In place (the plan put the output over the input, batch 1, as the reference allows): output
 * pixel k lands on input pixel k of the same channels, and input pixel j is read by no output
 * after j + delay (`dw_delay`); so a group's outputs are held back `delay` pixels in the
 * staging scratch (in_h * in_w bytes, the reference's channel plane) and written once no later
 * output reads what they cover. A group of four needs 4 * delay bytes; where that does not fit
 * (tiny images) the channels go one at a time, needing delay < in_h * in_w bytes. */
#include <string.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/quant.h"
#include "mcu/simd.h"

#define DW_MAX_TAPS 64 /* the widened weights of a group: 8 bytes a tap on the stack */

typedef struct {
  const int8_t *in; /* one batch */
  int8_t *out;
  const int8_t *filter;
  const int32_t *bias; /* NULL: none */
  const mcu_depthwise_conv_2d_params_t *p;
  int32_t in_h, in_w, ch, k_h, k_w, out_h, out_w;
  int8_t *ring;  /* in place: outputs held back `delay` pixels; NULL: written at once */
  int32_t delay; /* pixels */
} dw_job_t;

/* One channel's requantisation, prepared for `requant` (see the top of the file). */
typedef struct {
  int32_t bias;
  int32_t multiplier;
  int32_t left; /* the model's left shift plus SMMULR's doubling */
  int32_t right;
  int32_t round; /* 2^(right-1), 0 when right is 0 */
  int32_t sign;  /* -1 when right > 0, masking x >> 31 into (x < 0) ? -1 : 0 */
} dw_requant_t;

static dw_requant_t requant_of(const dw_job_t *j, int32_t c) {
  int32_t q = j->p->num_channels > 1 ? c : 0;
  int32_t shift = j->p->shifts[q];
  dw_requant_t r;
  r.bias = j->bias != NULL ? j->bias[c] : 0;
  r.multiplier = j->p->multipliers[q];
  r.left = (shift > 0 ? shift : 0) + 1;
  r.right = shift > 0 ? 0 : -shift;
  r.round = r.right > 0 ? (int32_t)1 << (r.right - 1) : 0;
  r.sign = r.right > 0 ? -1 : 0;
  return r;
}

static inline int32_t requant(const dw_requant_t *r, int32_t acc, int32_t out_offset, int32_t lo,
                              int32_t hi) {
  int32_t x = mcu_smmulr((int32_t)((uint32_t)acc << r->left), r->multiplier);
  x = (x + r->round + ((x >> 31) & r->sign)) >> r->right; /* arithmetic shifts */
  return mcu_clamp_i32(x + out_offset, lo, hi);
}

/* The taps of one output's window inside the image: the first one's input pixel (y, x) and
 * filter tap, and how many rows and columns (0 when none). */
typedef struct {
  int32_t y, x, tap, rows, cols;
} dw_taps_t;

static inline int32_t dw_first(int32_t start) { return start < 0 ? -start : 0; }

static dw_taps_t dw_taps(const dw_job_t *j, int32_t oy, int32_t ox) {
  int32_t y0 = oy * j->p->stride_h - j->p->pad_h;
  int32_t x0 = ox * j->p->stride_w - j->p->pad_w;
  int32_t ky = dw_first(y0), kx = dw_first(x0);
  dw_taps_t t = {y0 + ky, x0 + kx, ky * j->k_w + kx, mcu_min_i32(j->k_h, j->in_h - y0) - ky,
                 mcu_min_i32(j->k_w, j->in_w - x0) - kx};
  if (t.rows <= 0 || t.cols <= 0) {
    t.y = t.x = t.tap = t.rows = t.cols = 0;
  }
  return t;
}

typedef struct {
  int32_t a0, a1, a2, a3; /* channels c .. c + 3 */
} dw_acc4_t;

/* One tap of four channels: inputs widened with the offset, weights already widened. */
static inline dw_acc4_t tap4(dw_acc4_t s, const int8_t *x, const uint32_t *w, uint32_t off2) {
  uint32_t v = mcu_load_u32(x);
  uint32_t even = mcu_sxtab16(off2, v);
  uint32_t odd = mcu_sxtab16_ror8(off2, v);
  s.a0 = mcu_smlabb(even, w[0], s.a0);
  s.a2 = mcu_smlatt(even, w[0], s.a2);
  s.a1 = mcu_smlabb(odd, w[1], s.a1);
  s.a3 = mcu_smlatt(odd, w[1], s.a3);
  return s;
}

/* Three taps of a filter row, unrolled: `x` at the first, the weights' offsets constant. */
static inline dw_acc4_t row3(dw_acc4_t s, const int8_t *x, int32_t ch, const uint32_t *w,
                             uint32_t off2) {
  s = tap4(s, x, w, off2);
  s = tap4(s, x + ch, w + 2, off2);
  return tap4(s, x + 2 * ch, w + 4, off2);
}

/* A whole 3x3 window: nine taps straight through. */
static dw_acc4_t window4_3x3(const int8_t *x, int32_t ch, int32_t in_row, const uint32_t *w,
                             uint32_t off2, dw_acc4_t s) {
  s = row3(s, x, ch, w, off2);
  s = row3(s, x + in_row, ch, w + 6, off2);
  return row3(s, x + 2 * in_row, ch, w + 12, off2);
}

static dw_acc4_t window4(const dw_job_t *j, const dw_taps_t *t, const int8_t *x,
                         const uint32_t *w, uint32_t off2, dw_acc4_t s) {
  int32_t ch = j->ch;
  int32_t in_row = j->in_w * ch;
  for (int32_t r = 0; r < t->rows; ++r) {
    if (t->cols == 3) {
      s = row3(s, x, ch, w, off2);
    } else {
      for (int32_t k = 0; k < t->cols; ++k) {
        s = tap4(s, x + k * ch, w + 2 * k, off2);
      }
    }
    x += in_row;
    w += 2 * j->k_w;
  }
  return s;
}

static int32_t window1(const dw_job_t *j, const dw_taps_t *t, const int8_t *x, const int8_t *w,
                       int32_t acc) {
  int32_t ch = j->ch;
  int32_t off = j->p->input_offset;
  for (int32_t r = 0; r < t->rows; ++r) {
    for (int32_t k = 0; k < t->cols; ++k) {
      acc = mcu_wrap_add_i32(acc, (int32_t)w[k * ch] * ((int32_t)x[k * ch] + off));
    }
    x += j->in_w * ch;
    w += j->k_w * ch;
  }
  return acc;
}

/* Output pixel k's `g` bytes (channels c..c+g-1, packed in `word`): written now, or held back
 * in the ring while a later output still reads the input they cover. */
typedef struct {
  int32_t slot;
} dw_ring_t;

static inline void emit(const dw_job_t *j, dw_ring_t *ring, int32_t k, int32_t c, int32_t g,
                        uint32_t word) {
  if (j->ring == NULL) {
    int8_t *dst = j->out + k * j->ch + c;
    if (g == 4) {
      mcu_store_u32(dst, word);
    } else {
      *dst = (int8_t)word;
    }
    return;
  }
  int8_t *held = j->ring + ring->slot * g;
  if (k >= j->delay) {
    memcpy(j->out + (k - j->delay) * j->ch + c, held, (size_t)g);
  }
  if (g == 4) {
    mcu_store_u32(held, word);
  } else {
    *held = (int8_t)word;
  }
  ring->slot = ring->slot + 1 == j->delay ? 0 : ring->slot + 1;
}

/* The outputs still held back after the last pixel, oldest first. */
static void flush(const dw_job_t *j, dw_ring_t ring, int32_t pixels, int32_t c, int32_t g) {
  if (j->ring == NULL) {
    return;
  }
  for (int32_t k = mcu_max_i32(pixels - j->delay, 0); k < pixels; ++k) {
    memcpy(j->out + k * j->ch + c, j->ring + ring.slot * g, (size_t)g);
    ring.slot = ring.slot + 1 == j->delay ? 0 : ring.slot + 1;
  }
}

static uint32_t pack4(int32_t r0, int32_t r1, int32_t r2, int32_t r3) {
  return ((uint32_t)r0 & 0xFFu) | (((uint32_t)r1 & 0xFFu) << 8) | (((uint32_t)r2 & 0xFFu) << 16) |
         ((uint32_t)r3 << 24);
}

/* Channels c .. c + 3 of every output pixel. The loop reads the job's fields into locals
 * once: its int8 stores may alias anything, so fields read through `j` would be read again
 * after each. */
static void group4(const dw_job_t *j, int32_t c) {
  uint32_t wide[2 * DW_MAX_TAPS];
  const int32_t ch = j->ch, in_row = j->in_w * ch, taps = j->k_h * j->k_w;
  for (int32_t t = 0; t < taps; ++t) {
    uint32_t v = mcu_load_u32(j->filter + t * ch + c);
    wide[2 * t] = mcu_sxtb16(v);
    wide[2 * t + 1] = mcu_sxtb16_ror8(v);
  }
  dw_requant_t q[4] = {requant_of(j, c), requant_of(j, c + 1), requant_of(j, c + 2),
                       requant_of(j, c + 3)};
  const uint32_t off2 = mcu_pack16(j->p->input_offset, j->p->input_offset);
  const int32_t stride_h = j->p->stride_h, stride_w = j->p->stride_w * ch;
  /* whole 3x3 windows: output rows [y_lo, y_hi), columns [x_lo, x_hi) (empty when not 3x3) */
  const int is_3x3 = j->k_h == 3 && j->k_w == 3;
  const int32_t y_lo = (j->p->pad_h + stride_h - 1) / stride_h;
  const int32_t x_lo = (j->p->pad_w + j->p->stride_w - 1) / j->p->stride_w;
  const int32_t y_hi = is_3x3 && j->in_h >= 3 ? (j->in_h - 3 + j->p->pad_h) / stride_h + 1 : 0;
  const int32_t x_hi = is_3x3 && j->in_w >= 3 ? (j->in_w - 3 + j->p->pad_w) / j->p->stride_w + 1 : 0;
  const int32_t out_offset = j->p->output_offset, lo = j->p->act_min, hi = j->p->act_max;
  const int8_t *in = j->in + c;
  dw_ring_t ring = {0};
  int32_t k = 0;
  for (int32_t oy = 0; oy < j->out_h; ++oy) {
    int whole_row = oy >= y_lo && oy < y_hi;
    const int32_t row = (oy * stride_h - j->p->pad_h) * in_row - j->p->pad_w * ch;
    for (int32_t ox = 0; ox < j->out_w; ++ox, ++k) {
      dw_acc4_t s = {q[0].bias, q[1].bias, q[2].bias, q[3].bias};
      if (whole_row && ox >= x_lo && ox < x_hi) {
        s = window4_3x3(in + (row + ox * stride_w), ch, in_row, wide, off2, s);
      } else {
        dw_taps_t t = dw_taps(j, oy, ox);
        s = window4(j, &t, in + t.y * in_row + t.x * ch, wide + 2 * t.tap, off2, s);
      }
      uint32_t word = pack4(requant(&q[0], s.a0, out_offset, lo, hi),
                            requant(&q[1], s.a1, out_offset, lo, hi),
                            requant(&q[2], s.a2, out_offset, lo, hi),
                            requant(&q[3], s.a3, out_offset, lo, hi));
      emit(j, &ring, k, c, 4, word);
    }
  }
  flush(j, ring, k, c, 4);
}

/* Channel c of every output pixel. */
static void group1(const dw_job_t *j, int32_t c) {
  dw_requant_t q = requant_of(j, c);
  dw_ring_t ring = {0};
  int32_t k = 0;
  for (int32_t oy = 0; oy < j->out_h; ++oy) {
    for (int32_t ox = 0; ox < j->out_w; ++ox, ++k) {
      dw_taps_t t = dw_taps(j, oy, ox);
      const int8_t *x = j->in + (t.y * j->in_w + t.x) * j->ch + c;
      int32_t acc = window1(j, &t, x, j->filter + t.tap * j->ch + c, q.bias);
      const mcu_depthwise_conv_2d_params_t *p = j->p;
      emit(j, &ring, k, c, 1, (uint32_t)requant(&q, acc, p->output_offset, p->act_min, p->act_max));
    }
  }
  flush(j, ring, k, c, 1);
}

/* The largest (last output reading input pixel j) - j over the input, an upper bound: input
 * row y is read by no output row after (y + pad_h) / stride_h, column x by no output column
 * after (x + pad_w) / stride_w, and the two parts of the flat index add. */
static int32_t dw_delay(const dw_job_t *j) {
  int32_t rows = INT32_MIN, cols = INT32_MIN;
  for (int32_t y = 0; y < j->in_h; ++y) {
    int32_t last = mcu_min_i32((y + j->p->pad_h) / j->p->stride_h, j->out_h - 1);
    rows = mcu_max_i32(rows, last * j->out_w - y * j->in_w);
  }
  for (int32_t x = 0; x < j->in_w; ++x) {
    int32_t last = mcu_min_i32((x + j->p->pad_w) / j->p->stride_w, j->out_w - 1);
    cols = mcu_max_i32(cols, last - x);
  }
  return mcu_max_i32(rows + cols, 0);
}

static void run(dw_job_t *j, int32_t scratch_bytes) {
  int32_t c = 0;
  int32_t quads = j->ring == NULL || 4 * j->delay <= scratch_bytes ? j->ch / 4 : 0;
  for (; c < 4 * quads; c += 4) {
    group4(j, c);
  }
  for (; c < j->ch; ++c) {
    group1(j, c);
  }
}

mcu_status_t mcu_depthwise_conv_2d_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_depthwise_conv_2d_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs >= 2 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in != NULL && filter != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  dw_job_t j = {mcu_input(ctx, node, 0), mcu_output(ctx, node, 0), mcu_input(ctx, node, 1),
                node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL, p, in->dims[1],
                in->dims[2], in->dims[3], filter->dims[1], filter->dims[2], out->dims[1],
                out->dims[2], NULL, 0};
  int32_t batches = in->dims[0];
  MCU_ENSURE_MODEL(out->dims[0] == batches && out->dims[3] == j.ch && filter->dims[3] == j.ch,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->depth_multiplier == 1 && p->dilation_h == 1 && p->dilation_w == 1,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(j.k_h * j.k_w <= DW_MAX_TAPS, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->num_channels == 1 || p->num_channels == j.ch, MCU_ERR_BAD_MODEL);
  int32_t in_pixels = j.in_h * j.in_w;
  if ((const void *)j.out == (const void *)j.in) {
    /* always checked: the path is chosen at run time, by the addresses the allocator gave */
    j.ring = mcu_scratch(ctx, node);
    MCU_ENSURE(j.ring != NULL && batches == 1, MCU_ERR_BAD_MODEL);
    MCU_ENSURE(j.out_h * j.out_w <= in_pixels, MCU_ERR_BAD_MODEL);
    j.delay = dw_delay(&j);
    if (j.delay == 0) {
      j.ring = NULL; /* no output is read after it is written: write at once */
    }
    run(&j, in_pixels);
    return MCU_OK;
  }
  for (int32_t b = 0; b < batches; ++b) {
    run(&j, 0);
    j.in += in_pixels * j.ch;
    j.out += j.out_h * j.out_w * j.ch;
  }
  return MCU_OK;
}
