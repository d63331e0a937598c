#ifndef MCU_OPT_DW_S8_BAND_H
#define MCU_OPT_DW_S8_BAND_H

/* Part of kernels/opt/depthwise_conv_2d_s8.c, included by it (its static functions stay in one
 * translation unit, so that the compiler inlines them as it did in one file): the band path of
 * any filter, four channels at a time (the kernel's top comment). Also the band path of
 * kernels/opt/depthwise_conv_2d_s8_ort.c, with onnxruntime's output stage (group_ort). */
#include <stdint.h>
#include <string.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/ort_requant.h"
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

/* One channel's requantisation, prepared for `requant` (see the top of
 * kernels/opt/depthwise_conv_2d_s8.c). */
typedef struct {
  int32_t bias;
  int32_t multiplier;
  int32_t left;  /* the model's left shift plus SMMULR's doubling */
  int32_t round; /* 2^(right-1) (0 when right is 0) plus output_offset << right */
  int32_t sign;  /* -1 when right > 0, masking x >> 31 into (x < 0) ? -1 : 0 */
  int32_t right;
} dw_requant_t;

static dw_requant_t requant_of(const dw_job_t *j, int32_t c) {
  int32_t q = j->p->rq.num_channels > 1 ? c : 0;
  int32_t shift = j->p->rq.shifts[q];
  dw_requant_t r;
  r.bias = j->bias != NULL ? j->bias[c] : 0;
  r.multiplier = j->p->rq.multipliers[q];
  r.left = (shift > 0 ? shift : 0) + 1;
  r.right = shift > 0 ? 0 : -shift;
  r.round = (r.right > 0 ? (int32_t)1 << (r.right - 1) : 0) +
            (int32_t)((uint32_t)j->p->rq.output_offset << r.right);
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

/* A job with onnxruntime's output stage (depthwise_conv_2d_s8_ort.c): group_ort's `j` points
 * at `job`, whose parameters' multiplier and shift are one placeholder (requant_of's values
 * other than the bias go unused). */
typedef struct {
  float scale[4];
  int32_t zero, lo, hi;
} dw_ort4_t;

typedef struct {
  dw_job_t job;
  mcu_ort_out_t out;
  dw_ort4_t group; /* the group's (group_ort sets it) */
} dw_ort_job_t;

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

/* onnxruntime's output stage of the group of four channels from c (lanes past the last channel
 * take channel c's scale, never stored): their scales, the zero point and the activation range,
 * set once a group. */
static dw_ort4_t ort4_of(const mcu_ort_out_t *o, int32_t c, int32_t g) {
  dw_ort4_t k = {{0}, o->zero, o->act_min, o->act_max};
  for (int32_t i = 0; i < 4; ++i) {
    k.scale[i] = o->scales[o->per_channel ? c + (i < g ? i : 0) : 0];
  }
  return k;
}

/* One sum's output (mcu_ort_out's arithmetic, its bound proved by the build). */
static inline int32_t ort1(const dw_ort4_t *k, int32_t acc, int32_t i) {
  int32_t v = mcu_ort_round_narrow((float)acc * k->scale[i]) + k->zero;
  return v < k->lo ? k->lo : (v > k->hi ? k->hi : v);
}

static inline uint32_t ort_pack4(const dw_ort4_t *k, dw_acc4_t s) {
  return pack4(ort1(k, s.a0, 0), ort1(k, s.a1, 1), ort1(k, s.a2, 2), ort1(k, s.a3, 3));
}

/* Channels c .. c + g - 1 (g <= 4) of every output pixel. The loops read the job's fields into
 * locals once: int8 stores may alias anything, so fields read through `j` would be read again
 * after each. `ort` (a constant at each call): onnxruntime's output stage, `j` a dw_ort_job_t's
 * (plain inline: always_inline changed how GCC allocates the TFLite path's registers). */
static inline void group_as(const dw_job_t *j, int32_t c, int32_t g, int ort) {
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
    /* missing lanes: any channel, never stored; ort: only the bias is read */
    q[i] = requant_of(j, c + (i < g ? i : 0));
  }
  const uint32_t zero = repeat4(-j->p->rq.input_offset);
  const uint32_t off2 = mcu_pack16(j->p->rq.input_offset, j->p->rq.input_offset);
  const int32_t stride_h = j->p->win.stride_h, stride_w = j->p->win.stride_w, pad_h = j->p->win.pad_h;
  const int32_t lo = j->p->rq.act_min, hi = j->p->rq.act_max;

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
      uint32_t word = ort ? ort_pack4(&((const dw_ort_job_t *)j)->group, s)
                          : pack4(requant(&q[0], s.a0, lo, hi), requant(&q[1], s.a1, lo, hi),
                                  requant(&q[2], s.a2, lo, hi), requant(&q[3], s.a3, lo, hi));
      if (g == 4) {
        mcu_store_u32(out, word);
      } else {
        memcpy(out, &word, (size_t)g);
      }
    }
  }
}

/* Each file uses one of them. */
static __attribute__((unused)) void group(const dw_job_t *j, int32_t c, int32_t g) {
  group_as(j, c, g, 0);
}

static __attribute__((unused)) void group_ort(dw_ort_job_t *j, int32_t c, int32_t g) {
  j->group = ort4_of(&j->out, c, g);
  group_as(&j->job, c, g, 1);
}

#endif /* MCU_OPT_DW_S8_BAND_H */
