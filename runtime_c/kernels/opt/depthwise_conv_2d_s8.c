/* DEPTHWISE_CONV_2D int8 with depth multiplier 1 and dilation 1, any filter size, stride and
 * padding: bit-exact with reference/depthwise_conv_2d.c (mcu_depthwise_conv_2d_int8), in place
 * too.
 *
 * Channels go four at a time (NHWC: one 32-bit word holds one pixel's four channels), one group
 * over all output pixels. The group's input rows pass through a band in the scratch: k_h rows
 * of the padded width, slot y % k_h for input row y, each entry the group's four bytes, with the
 * input zero point in the padding (and in the lanes past the last channel). Plus the input
 * offset a padding byte is 0 and adds nothing, which is what the reference's skipping of taps
 * outside the image computes; so every window, at the border or not, is the same unrolled loop
 * over the band. Per tap and four channels that loop is one load from the band, two SXTAB16 (the
 * four inputs widened, offset added) and four SMLABB / SMLATT into the four sums, plus one LDRD
 * of the weights, widened once per group into the scratch ahead of the band. Integer sums do not
 * depend on their order and the build checked that no sum leaves int32.
 *
 * Requantisation: mcu_mbqm's SaturatingRoundingDoublingHighMul of a = acc << left by a
 * multiplier M in [2^30, 2^31) is floor((a * M + 2^30) / 2^31) for both signs (its nudge and
 * truncation towards zero combine to this), which is SMMULR(2a, M) while |a| < 2^30: the
 * variant is only chosen when the build proves that bound for every channel
 * (mcugen/codegen/lower/opt_depthwise.py). Its RoundingDivideByPOT by `right` > 0 is
 * (x + 2^(right-1) - (x < 0)) >> right, exact and without overflow for |x| < 2^30.
 *
 * In place (the plan put the output over the input, batch 1): the band holds a copy of every
 * input row a window still reads, so an output may land on input the band has already copied.
 * Output row oy covers flat input pixels below (oy + 1) * out_w, and the rows not yet copied
 * start at oy * stride_h - pad_h + k_h; the build only lets the plan run the operator in place
 * when the first never passes the second while rows remain to copy (`in_place_ok` in
 * opt_depthwise.py), and the kernel checks it again. */
#include <string.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/quant.h"
#include "mcu/simd.h"

#define MCU_DW_MAX_ROWS 16 /* filter rows: MAX_ROWS in opt_depthwise.py */

typedef struct {
  const int8_t *in; /* one batch */
  int8_t *out;
  const int8_t *filter;
  const int32_t *bias; /* NULL: none */
  const mcu_depthwise_conv_2d_params_t *p;
  int32_t in_h, in_w, ch, k_h, k_w, out_h, out_w;
  int32_t pad_w, band_w; /* band row: pad_w zero-point entries, in_w pixels, the rest padding */
  uint32_t *wide;        /* scratch: k_h * k_w * 2 words of widened weights */
  uint32_t *band;        /* then k_h * band_w words */
} dw_job_t;

/* One channel's requantisation, prepared for `requant` (see the top of the file). */
typedef struct {
  int32_t bias;
  int32_t multiplier;
  int32_t left;  /* the model's left shift plus SMMULR's doubling */
  int32_t round; /* 2^(right-1) (0 when right is 0) plus output_offset << right */
  int32_t sign;  /* -1 when right > 0, masking x >> 31 into (x < 0) ? -1 : 0 */
  int32_t right;
} dw_requant_t;

static dw_requant_t requant_of(const dw_job_t *j, int32_t c) {
  int32_t q = j->p->num_channels > 1 ? c : 0;
  int32_t shift = j->p->shifts[q];
  dw_requant_t r;
  r.bias = j->bias != NULL ? j->bias[c] : 0;
  r.multiplier = j->p->multipliers[q];
  r.left = (shift > 0 ? shift : 0) + 1;
  r.right = shift > 0 ? 0 : -shift;
  r.round = (r.right > 0 ? (int32_t)1 << (r.right - 1) : 0) +
            (int32_t)((uint32_t)j->p->output_offset << r.right);
  r.sign = r.right > 0 ? -1 : 0;
  return r;
}

/* The output of one sum, clamped. Adding output_offset << right before the shift is adding
 * output_offset after it (the shift is a floor division by 2^right); the build keeps right <= 22,
 * so with |x| < 2^29 nothing overflows. */
static inline int32_t requant(const dw_requant_t *r, int32_t acc, int32_t lo, int32_t hi) {
  int32_t x = mcu_smmulr((int32_t)((uint32_t)acc << r->left), r->multiplier);
  x = (x + r->round + ((x >> 31) & r->sign)) >> r->right; /* arithmetic shifts */
  return mcu_clamp_i32(x, lo, hi);
}

typedef struct {
  int32_t a0, a1, a2, a3; /* channels c .. c + 3 */
} dw_acc4_t;

/* One tap of four channels: four band bytes widened with the offset, weights already widened. */
static inline dw_acc4_t tap4(dw_acc4_t s, const uint32_t *x, const uint32_t *w, uint32_t off2) {
  uint32_t v = *x;
  uint32_t even = mcu_sxtab16(off2, v);
  uint32_t odd = mcu_sxtab16_ror8(off2, v);
  s.a0 = mcu_smlabb(even, w[0], s.a0);
  s.a2 = mcu_smlatt(even, w[0], s.a2);
  s.a1 = mcu_smlabb(odd, w[1], s.a1);
  s.a3 = mcu_smlatt(odd, w[1], s.a3);
  return s;
}

/* Three taps of one filter row: `x` at the window's first column, `w` at the row's weights. */
static inline dw_acc4_t row3(dw_acc4_t s, const uint32_t *x, const uint32_t *w, uint32_t off2) {
#if MCU_SIMD_DSP
  /* The same instructions as three tap4 calls, in registers GCC would otherwise spill: with four
   * sums, three row pointers and the loop's own state live, its allocation stored and reloaded
   * the sums between taps (about 120 instructions a window instead of 81). */
  uint32_t v, even, odd, wt;
  __asm__(
      "ldr %[v], [%[x]]\n\t"
      "sxtab16 %[e], %[off], %[v]\n\t"
      "sxtab16 %[o], %[off], %[v], ror #8\n\t"
      "ldr %[wt], [%[w]]\n\t"
      "smlabb %[a0], %[e], %[wt], %[a0]\n\t"
      "smlatt %[a2], %[e], %[wt], %[a2]\n\t"
      "ldr %[wt], [%[w], #4]\n\t"
      "smlabb %[a1], %[o], %[wt], %[a1]\n\t"
      "smlatt %[a3], %[o], %[wt], %[a3]\n\t"
      "ldr %[v], [%[x], #4]\n\t"
      "sxtab16 %[e], %[off], %[v]\n\t"
      "sxtab16 %[o], %[off], %[v], ror #8\n\t"
      "ldr %[wt], [%[w], #8]\n\t"
      "smlabb %[a0], %[e], %[wt], %[a0]\n\t"
      "smlatt %[a2], %[e], %[wt], %[a2]\n\t"
      "ldr %[wt], [%[w], #12]\n\t"
      "smlabb %[a1], %[o], %[wt], %[a1]\n\t"
      "smlatt %[a3], %[o], %[wt], %[a3]\n\t"
      "ldr %[v], [%[x], #8]\n\t"
      "sxtab16 %[e], %[off], %[v]\n\t"
      "sxtab16 %[o], %[off], %[v], ror #8\n\t"
      "ldr %[wt], [%[w], #16]\n\t"
      "smlabb %[a0], %[e], %[wt], %[a0]\n\t"
      "smlatt %[a2], %[e], %[wt], %[a2]\n\t"
      "ldr %[wt], [%[w], #20]\n\t"
      "smlabb %[a1], %[o], %[wt], %[a1]\n\t"
      "smlatt %[a3], %[o], %[wt], %[a3]\n\t"
      : [a0] "+r"(s.a0), [a1] "+r"(s.a1), [a2] "+r"(s.a2), [a3] "+r"(s.a3), [v] "=&r"(v),
        [e] "=&r"(even), [o] "=&r"(odd), [wt] "=&r"(wt)
      : [x] "r"(x), [w] "r"(w), [off] "r"(off2)
      : "memory");
  return s;
#else
  s = tap4(s, x, w, off2);
  s = tap4(s, x + 1, w + 2, off2);
  return tap4(s, x + 2, w + 4, off2);
#endif
}

/* A 3x3 window: rows r0, r1, r2 of the band at the window's first column. */
static inline dw_acc4_t window_3x3(dw_acc4_t s, const uint32_t *r0, const uint32_t *r1,
                                   const uint32_t *r2, const uint32_t *w, uint32_t off2) {
  s = row3(s, r0, w, off2);
  s = row3(s, r1, w + 6, off2);
  return row3(s, r2, w + 12, off2);
}

static uint32_t repeat4(int32_t byte) { return ((uint32_t)byte & 0xFFu) * 0x01010101u; }

/* The band row of input row y (y >= -pad_h, which may be negative). */
static inline uint32_t *band_row(const dw_job_t *j, int32_t y) {
  return j->band + (((y % j->k_h) + j->k_h) % j->k_h) * j->band_w;
}

/* Input row y's channels c .. c + g - 1 into band slot y % k_h, zero points around them (and
 * in every entry when the row is outside the image). */
static void fill_row(const dw_job_t *j, int32_t y, int32_t c, int32_t g, uint32_t zero) {
  uint32_t *dst = band_row(j, y);
  if (y < 0 || y >= j->in_h) {
    for (int32_t x = 0; x < j->band_w; ++x) {
      dst[x] = zero;
    }
    return;
  }
  int32_t x = 0;
  for (; x < j->pad_w; ++x) {
    dst[x] = zero;
  }
  const int8_t *src = j->in + (y * j->in_w) * j->ch + c;
  if (g == 4) {
    for (int32_t k = 0; k < j->in_w; ++k, ++x, src += j->ch) {
      dst[x] = mcu_load_u32(src);
    }
  } else {
    for (int32_t k = 0; k < j->in_w; ++k, ++x, src += j->ch) {
      uint32_t word = zero;
      memcpy(&word, src, (size_t)g); /* little-endian: lane i is byte i */
      dst[x] = word;
    }
  }
  for (; x < j->band_w; ++x) {
    dst[x] = zero;
  }
}

static uint32_t pack4(int32_t r0, int32_t r1, int32_t r2, int32_t r3) {
  return ((uint32_t)r0 & 0xFFu) | (((uint32_t)r1 & 0xFFu) << 8) | (((uint32_t)r2 & 0xFFu) << 16) |
         ((uint32_t)r3 << 24);
}

/* Channels c .. c + g - 1 (g <= 4) of every output pixel. The loops read the job's fields into
 * locals once: int8 stores may alias anything, so fields read through `j` would be read again
 * after each. */
static void group(const dw_job_t *j, int32_t c, int32_t g) {
  const int32_t ch = j->ch, k_h = j->k_h, k_w = j->k_w, taps = k_h * k_w;
  uint32_t *wide = j->wide;
  for (int32_t t = 0; t < taps; ++t) {
    uint32_t v = 0; /* lanes past the last channel weigh nothing */
    memcpy(&v, j->filter + t * ch + c, (size_t)g);
    wide[2 * t] = mcu_sxtb16(v);
    wide[2 * t + 1] = mcu_sxtb16_ror8(v);
  }
  dw_requant_t q[4];
  for (int32_t i = 0; i < 4; ++i) {
    q[i] = requant_of(j, c + (i < g ? i : 0)); /* missing lanes: any channel, never stored */
  }
  const uint32_t zero = repeat4(-j->p->input_offset);
  const uint32_t off2 = mcu_pack16(j->p->input_offset, j->p->input_offset);
  const int32_t stride_h = j->p->stride_h, stride_w = j->p->stride_w, pad_h = j->p->pad_h;
  const int32_t lo = j->p->act_min, hi = j->p->act_max;
  const int32_t out_w = j->out_w;
  const int is_3x3 = k_h == 3 && k_w == 3;
  const uint32_t *rows[MCU_DW_MAX_ROWS];
  int8_t *out = j->out + c;
  int32_t next = -pad_h; /* the first input row not in the band yet */
  for (int32_t oy = 0; oy < j->out_h; ++oy) {
    const int32_t y0 = oy * stride_h - pad_h;
    for (int32_t y = next > y0 ? next : y0; y < y0 + k_h; ++y) {
      fill_row(j, y, c, g, zero);
    }
    next = y0 + k_h;
    for (int32_t ky = 0; ky < k_h; ++ky) {
      rows[ky] = band_row(j, y0 + ky);
    }
    const uint32_t *r0 = rows[0], *r1 = rows[k_h > 1 ? 1 : 0], *r2 = rows[k_h > 2 ? 2 : 0];
    for (int32_t ox = 0; ox < out_w; ++ox, out += ch) {
      dw_acc4_t s = {q[0].bias, q[1].bias, q[2].bias, q[3].bias};
      if (is_3x3) {
        s = window_3x3(s, r0, r1, r2, wide, off2);
        r0 += stride_w;
        r1 += stride_w;
        r2 += stride_w;
      } else {
        const uint32_t *w = wide;
        for (int32_t ky = 0; ky < k_h; ++ky) {
          const uint32_t *x = rows[ky] + ox * stride_w;
          for (int32_t kx = 0; kx < k_w; ++kx, w += 2) {
            s = tap4(s, x + kx, w, off2);
          }
        }
      }
      uint32_t word = pack4(requant(&q[0], s.a0, lo, hi), requant(&q[1], s.a1, lo, hi),
                            requant(&q[2], s.a2, lo, hi), requant(&q[3], s.a3, lo, hi));
      if (g == 4) {
        mcu_store_u32(out, word);
      } else {
        memcpy(out, &word, (size_t)g);
      }
    }
  }
}

/* In place, output row oy must not reach input rows the band has not copied while some remain
 * (see the top of the file). */
static int in_place_ok(const dw_job_t *j) {
  for (int32_t oy = 0; oy < j->out_h; ++oy) {
    int32_t copied = oy * j->p->stride_h - j->p->pad_h + j->k_h; /* rows below are in the band */
    if (copied < j->in_h && (oy + 1) * j->out_w > copied * j->in_w) {
      return 0;
    }
  }
  return 1;
}

static void run(const dw_job_t *j) {
  for (int32_t c = 0; c < j->ch; c += 4) {
    group(j, c, j->ch - c < 4 ? j->ch - c : 4);
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
  dw_job_t j = {mcu_input(ctx, node, 0),
                mcu_output(ctx, node, 0),
                mcu_input(ctx, node, 1),
                node->num_inputs > 2 ? mcu_input(ctx, node, 2) : NULL,
                p,
                in->dims[1],
                in->dims[2],
                in->dims[3],
                filter->dims[1],
                filter->dims[2],
                out->dims[1],
                out->dims[2],
                p->pad_w,
                0,
                NULL,
                NULL};
  int32_t batches = in->dims[0];
  MCU_ENSURE_MODEL(out->dims[0] == batches && out->dims[3] == j.ch && filter->dims[3] == j.ch,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->depth_multiplier == 1 && p->dilation_h == 1 && p->dilation_w == 1,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(j.k_h <= MCU_DW_MAX_ROWS, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->num_channels == 1 || p->num_channels == j.ch, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(j.pad_w >= 0 && p->pad_h >= 0, MCU_ERR_BAD_MODEL);
  /* the band row: padding, the image, and what the last window reads past it */
  j.band_w = mcu_max_i32(j.pad_w + j.in_w, (j.out_w - 1) * p->stride_w + j.k_w);
  j.wide = mcu_scratch(ctx, node);
  MCU_ENSURE(j.wide != NULL, MCU_ERR_BAD_MODEL);
  j.band = j.wide + 2 * j.k_h * j.k_w;
  if ((const void *)j.out == (const void *)j.in) {
    /* always checked: the path is chosen at run time, by the addresses the allocator gave */
    MCU_ENSURE(batches == 1 && in_place_ok(&j), MCU_ERR_BAD_MODEL);
  }
  for (int32_t b = 0; b < batches; ++b) {
    run(&j);
    j.in += j.in_h * j.in_w * j.ch;
    j.out += j.out_h * j.out_w * j.ch;
  }
  return MCU_OK;
}
