/* DEPTHWISE_CONV_2D int8 with depth multiplier 1 and dilation 1, any filter size, stride and
 * padding: bit-exact with reference/depthwise_conv_2d.c (mcu_depthwise_conv_2d_int8), in place
 * too. 3x3 filters at strides 1 and 2 take the planar path further down (one channel at a time,
 * SMLAD over neighbouring taps, assembly on DSP cores); everything else the band below.
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
#include <stddef.h>
#include <string.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/kernels/depthwise_layer.h"
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

/* ---- 3x3, strides 1 and 2: one channel at a time over a band of widened planes ----
 *
 * For four channels the band holds one plane each: `ring` input rows of `bw` int16 entries, input
 * row y in slot (y + pad_h) % ring, band column i holding input column i - pad_w with the input
 * offset added (0 in the padding, as the reference's skipped taps). A channel's filter row
 * (w0, w1, w2), doubled, is two words W01 = (w0, w1) and W12 = (w1, w2); a band row's words hold
 * two neighbouring columns, so with A = (c0, c1), B = (c2, c3), C = (c4, c5) the outputs at
 * columns 0..3 of a row (stride 1) are
 *   out0 += SMLAD(A, W01) + SMLABT(B, W12)   out1 += SMLATB(A, W01) + SMLAD(B, W12)
 *   out2 += SMLAD(B, W01) + SMLABT(C, W12)   out3 += SMLATB(B, W01) + SMLAD(C, W12)
 * and at stride 2 (words A..E over columns 0..9) out_k += SMLAD(word_k, W01) + SMLABT(word_k+1,
 * W12): nine MACs in six instructions, three loads of input a row for four outputs. The weights
 * and the bias are doubled, which is SMMULR's doubling (the build proved |sum| < 2^29).
 *
 * A line runs as blocks of four outputs, then one of two (the same sums' first two, over words A
 * and B, or A..C at stride 2), then one (SMLAD(A, W01) + SMLABT(B, W12) at either stride): every
 * block starts at an even band column, so every load is a whole word, and lines of any length
 * (down to one output, as in the 3x3 and 6x6 layers of small images) waste no work. On DSP cores
 * one assembly call runs a channel over a chunk's lines, reading each line's three band lines
 * from a table built once a chunk for the four channels (byte offsets into a plane: the ring's
 * wrap costs the assembly nothing).
 *
 * Requantisation with right = -shift >= 1 (the build only sends such layers here): t =
 * SMMLAR(2 * sum, M, round) is SMMULR(2 * sum, M) + round (round = 2^(right-1) + output_offset <<
 * right), then t + (sum >> 31) >> right: mcu_mbqm's rounding division, as in `requant` above,
 * with the sign of the sum in place of the sign of the high product (they differ only when that
 * product is 0, where both add nothing after the shift since 2^(right-1) - 1 < 2^right). */

#define MCU_DW3_OUTPUTS 32 /* outputs per channel a chunk of rows aims at: CHUNK_OUTPUTS in
                              opt_depthwise.py */

/* The image as lines: its rows, or its columns when it is taller than wide (`dw3_setup`), so
 * that a line holds the longer side's outputs. Below, "row" is a line and "column" a pixel of one. */
typedef struct {
  int32_t lines, len; /* lines, pixels a line */
  int32_t step, line; /* bytes from a pixel to the next along a line, from a line to the next */
} dw3_side_t;

typedef struct {
  const int8_t *in; /* one batch */
  int8_t *out;
  const int8_t *filter;
  const int32_t *bias;
  const mcu_depthwise_conv_2d_params_t *p;
  int32_t ch;
  dw3_side_t src, dst;          /* input and output lines */
  int32_t s_across, s_along;    /* strides across and along lines */
  int32_t pad_across, pad_along;
  int32_t tap_across, tap_along; /* filter bytes to the next filter line, the next tap along */
  int32_t chunk; /* output lines a chunk */
  int32_t ring;  /* band lines: (chunk - 1) * s_across + 3 */
  int32_t bw;    /* int16 entries a band line, even */
  int32_t *rows;  /* scratch: a chunk's band lines, three byte offsets an output line */
  uint32_t *band; /* then 4 planes of ring * bw int16 */
  mcu_dw3_lines_fn lines; /* the channels' assembly: the layer's (depthwise_layer.h), or s1/s2 */
  mcu_dw3_fill_fn fill;
  mcu_dw3_weights_fn weights4; /* the layer's four-channel weights, or NULL */   /* the layer's fill, or NULL */
} dw3_job_t;

/* One channel's call over a chunk's lines (the assembly's offsets: the four words LDM'd together
 * first). */
typedef struct {
  int32_t multiplier, round, right, ch; /* 0, 4, 8, 12: ch = bytes from an output to the next */
  int32_t bias2;                        /* 16 */
  uintptr_t end;                        /* 20: the assembly's, line 0 after the blocks of four */
  uint32_t w[6];                        /* 24, 32, 40: W01, W12 of filter lines 0, 1, 2 */
  const int32_t *rows;                  /* 48: the next output line's three band lines */
  uintptr_t plane;                      /* 52: the channel's plane, which `rows` are bytes into */
  uintptr_t out;                        /* 56: the next output line's first output */
  int32_t quads;                        /* 60: band bytes a line's blocks of four cover */
  int32_t tail;                         /* 64: outputs a line after them, 0 to 3 */
  int32_t out_line;                     /* 68: bytes from an output line to the next */
  int32_t lines;                        /* 72: output lines left */
  int32_t lo, hi;                       /* 76, 80: the activation range */
  int32_t out_skip;                     /* 84: bytes from after a line's outputs by two to the
                                           next line's first output */
  int32_t more;                         /* 88: the next call in the array is the next channel's */
} dw3_call_t;

#if MCU_SIMD_DSP
_Static_assert(offsetof(dw3_call_t, bias2) == 16 && offsetof(dw3_call_t, w) == 24 &&
                   offsetof(dw3_call_t, rows) == 48 && offsetof(dw3_call_t, lines) == 72 &&
                   offsetof(dw3_call_t, out_skip) == 84 && offsetof(dw3_call_t, more) == 88 &&
                   sizeof(dw3_call_t) == 92,
               "the offsets the assembly uses");
#endif

#define DW3_INLINE static inline __attribute__((always_inline))

/* `full`: the activation range is [-128, 127], SSAT's alone. */
DW3_INLINE int32_t dw3_out(const dw3_call_t *q, int32_t acc, const int full) {
  int32_t t = mcu_smmlar(acc, q->multiplier, q->round);
  t = mcu_ssat8((t + (acc >> 31)) >> q->right); /* arithmetic shifts */
  return full ? t : mcu_clamp_i32(t, q->lo, q->hi);
}

/* Two pixels' four channels (words p0 and p1) widened into the four planes' word at `at`: plane
 * k gets channel k of the two pixels. The halves [ch0 ch1 of p0, ch0 ch1 of p1] and [ch2 ch3 of
 * p0, ch2 ch3 of p1] first (PKHBT, PKHTB), then each widened twice (SXTAB16, with ROR 8). */
static inline void dw3_put(uint32_t *at, int32_t plane_words, uint32_t p0, uint32_t p1,
                           uint32_t off2) {
  uint32_t lo = mcu_pack16((int32_t)p0, (int32_t)p1), hi = mcu_pack16_hi(p0, p1);
  at[0] = mcu_sxtab16(off2, lo);
  at[plane_words] = mcu_sxtab16_ror8(off2, lo);
  at[2 * plane_words] = mcu_sxtab16(off2, hi);
  at[3 * plane_words] = mcu_sxtab16_ror8(off2, hi);
}

#if MCU_SIMD_DSP
/* The fill's arguments besides the first line's source, entry and length. */
typedef struct {
  int32_t step;     /* 0: bytes from a pixel to the next */
  int32_t plane;    /* 4: bytes from a plane to the next */
  uint32_t off2;    /* 8: the input offset in both lanes */
  int32_t lines;    /* 12: lines left (the assembly counts it down) */
  int32_t src_line; /* 16: bytes from a source line to the next */
  int32_t dst_line; /* 20: bytes from a band line to the next */
} dw3_fill_t;

/* f->lines >= 1 lines of n >= 1 pixels' four channels, the first from `src` into plane 0's
 * entry `dst` and the three planes after it, each line: a lone pixel first when dst is not
 * word-aligned (an odd left padding), then four pixels a pass (dw3_put twice, two words a plane by
 * STRD), then a pair (dw3_put), then a lone last pixel (dw3_put1). The line's src, dst, n and f
 * wait on the stack. */
__attribute__((naked)) static void dw3_fill_lines(const int8_t *src, int16_t *dst, int32_t n,
                                                  dw3_fill_t *f) {
  (void)src, (void)dst, (void)n, (void)f;
  __asm__ volatile("push {r4-r11, lr}\n\t"
                   "push {r0-r3}\n\t"
                   "0:\n\t"
                   "ldm r3, {r3, r4, r5}\n\t"
                   "add r6, r1, r4\n\t"
                   "add r7, r6, r4\n\t"
                   "add r8, r7, r4\n\t"
                   "tst r1, #2\n\t"
                   "beq 1f\n\t"
                   "ldr r9, [r0]\n\t"
                   "add r0, r0, r3\n\t"
                   "sxtab16 r10, r5, r9\n\t"
                   "sxtab16 r11, r5, r9, ror #8\n\t"
                   "strh r10, [r1], #2\n\t"
                   "strh r11, [r6], #2\n\t"
                   "lsr r10, r10, #16\n\t"
                   "lsr r11, r11, #16\n\t"
                   "strh r10, [r7], #2\n\t"
                   "strh r11, [r8], #2\n\t"
                   "subs r2, r2, #1\n\t"
                   "1:\n\t"
                   "subs r2, r2, #4\n\t"
                   "blt 3f\n\t"
                   "2:\n\t"
                   "ldr r4, [r0]\n\t"
                   "ldr r9, [r0, r3]\n\t"
                   "add r0, r0, r3, lsl #1\n\t"
                   "pkhtb r10, r9, r4, asr #16\n\t"
                   "pkhbt r4, r4, r9, lsl #16\n\t"
                   "ldr r9, [r0]\n\t"
                   "ldr r11, [r0, r3]\n\t"
                   "add r0, r0, r3, lsl #1\n\t"
                   "pkhtb r12, r11, r9, asr #16\n\t"
                   "pkhbt r9, r9, r11, lsl #16\n\t"
                   "sxtab16 r11, r5, r4\n\t"
                   "sxtab16 lr, r5, r9\n\t"
                   "strd r11, lr, [r1], #8\n\t"
                   "sxtab16 r11, r5, r4, ror #8\n\t"
                   "sxtab16 lr, r5, r9, ror #8\n\t"
                   "strd r11, lr, [r6], #8\n\t"
                   "sxtab16 r11, r5, r10\n\t"
                   "sxtab16 lr, r5, r12\n\t"
                   "strd r11, lr, [r7], #8\n\t"
                   "sxtab16 r11, r5, r10, ror #8\n\t"
                   "sxtab16 lr, r5, r12, ror #8\n\t"
                   "strd r11, lr, [r8], #8\n\t"
                   "subs r2, r2, #4\n\t"
                   "bge 2b\n\t"
                   "3:\n\t"
                   "tst r2, #2\n\t" /* r2 = n_left - 4 (n_left 0..3): bit 1 is n_left's */
                   "beq 4f\n\t"
                   "ldr r4, [r0]\n\t"
                   "ldr r9, [r0, r3]\n\t"
                   "add r0, r0, r3, lsl #1\n\t"
                   "pkhtb r10, r9, r4, asr #16\n\t"
                   "pkhbt r4, r4, r9, lsl #16\n\t"
                   "sxtab16 r11, r5, r4\n\t"
                   "str r11, [r1], #4\n\t"
                   "sxtab16 r11, r5, r4, ror #8\n\t"
                   "str r11, [r6], #4\n\t"
                   "sxtab16 r11, r5, r10\n\t"
                   "str r11, [r7], #4\n\t"
                   "sxtab16 r11, r5, r10, ror #8\n\t"
                   "str r11, [r8], #4\n\t"
                   "4:\n\t"
                   "tst r2, #1\n\t"
                   "beq 5f\n\t"
                   "ldr r9, [r0]\n\t"
                   "sxtab16 r10, r5, r9\n\t"
                   "sxtab16 r11, r5, r9, ror #8\n\t"
                   "strh r10, [r1]\n\t"
                   "strh r11, [r6]\n\t"
                   "lsr r10, r10, #16\n\t"
                   "lsr r11, r11, #16\n\t"
                   "strh r10, [r7]\n\t"
                   "strh r11, [r8]\n\t"
                   "5:\n\t"
                   "ldm sp, {r0-r3}\n\t"
                   "ldrd r4, r5, [r3, #16]\n\t"
                   "add r0, r0, r4\n\t"
                   "add r1, r1, r5\n\t"
                   "strd r0, r1, [sp]\n\t"
                   "ldr r4, [r3, #12]\n\t"
                   "subs r4, r4, #1\n\t"
                   "str r4, [r3, #12]\n\t"
                   "bne 0b\n\t"
                   "add sp, sp, #16\n\t"
                   "pop {r4-r11, pc}\n\t");
}
#endif

/* Input column x's channels c .. c + g - 1 (the zero point outside the image and past g). */
static inline uint32_t dw3_pixel(const dw3_job_t *j, const int8_t *row, int32_t x, int32_t g,
                                 uint32_t zero) {
  uint32_t word = zero;
  if (x >= 0 && x < j->src.len) {
    if (g == 4) {
      return mcu_load_u32(row + x * j->src.step);
    }
    memcpy(&word, row + x * j->src.step, (size_t)g); /* little-endian: lane i is byte i */
  }
  return word;
}

/* One pixel's four channels (word p) widened into entry `at` of the four planes (`pw` entries
 * apart): plane k gets channel k. */
static inline void dw3_put1(int16_t *at, int32_t pw, uint32_t p, uint32_t off2) {
  uint32_t even = mcu_sxtab16(off2, p), odd = mcu_sxtab16_ror8(off2, p);
  at[0] = (int16_t)even;
  at[pw] = (int16_t)odd;
  at[2 * pw] = (int16_t)(even >> 16);
  at[3 * pw] = (int16_t)(odd >> 16);
}

#if !MCU_SIMD_DSP
/* One line of len pixels' four channels into band line `dst` from entry pad on (dw3_fill_lines'
 * work in C). */
static void dw3_fill_line_c(const int8_t *src, uint32_t *dst, int32_t pad, int32_t len,
                            int32_t ch, int32_t pw, uint32_t off2) {
  int32_t n = len; /* columns left */
  uint32_t *at = dst + pad / 2;
  if (pad & 1) {
    dw3_put1((int16_t *)at + 1, 2 * pw, mcu_load_u32(src), off2);
    --n, src += ch, ++at;
  }
  for (; n >= 2; n -= 2, ++at, src += 2 * ch) {
    dw3_put(at, pw, mcu_load_u32(src), mcu_load_u32(src + ch), off2);
  }
  if (n > 0) {
    dw3_put1((int16_t *)at, 2 * pw, mcu_load_u32(src), off2);
  }
}
#endif

/* Input lines y0 .. y1 (y0 >= -pad) of channels c .. c + g - 1 into their band slots: entry
 * pad + x of a plane line holds column x. The entries around the image stay 0 (`dw3_setup`
 * clears the band, and lines outside the image are stored 0, unless the band holds every line
 * of the layer: then their slots never hold another line and stay as cleared); the fields are
 * read into locals once (the band's stores may alias them). Four channels: a lone column where
 * the image starts or ends mid-word, the pairs between (on DSP cores the image's lines that
 * follow each other in the ring in one assembly call). */
__attribute__((noinline)) static void dw3_fill(const dw3_job_t *j, int32_t y0, int32_t y1,
                                               int32_t c, int32_t g) {
  const int32_t half = j->bw / 2, ring = j->ring, pw = ring * half, pad = j->pad_along;
  const int32_t len = j->src.len, ch = j->src.step, lines = j->src.lines, step = j->src.line;
  const int whole = j->chunk == j->dst.lines; /* the ring never wraps */
  const uint32_t zero = repeat4(-j->p->rq.input_offset);
  const uint32_t off2 = mcu_pack16(j->p->rq.input_offset, j->p->rq.input_offset);
  const uint32_t blank = mcu_sxtab16(off2, zero); /* 0, opaque to the compiler (no memset) */
  int32_t slot = (y0 + j->pad_across) % ring;
  for (int32_t y = y0; y <= y1;) {
    uint32_t *dst = j->band + slot * half;
    const int8_t *row = j->in + y * step + c;
    int32_t run = 1; /* lines this pass */
    if (y < 0 || y >= lines) { /* (row is not read) */
      for (int32_t k = 0; k < half && !whole; ++k) {
        dst[k] = blank, dst[k + pw] = blank, dst[k + 2 * pw] = blank, dst[k + 3 * pw] = blank;
      }
    } else if (g < 4) { /* the last group: every entry, the missing channels' lanes the zero
                           point's */
      for (int32_t k = 0, x = -pad; k < half; ++k, x += 2) {
        dw3_put(dst + k, pw, dw3_pixel(j, row, x, g, zero), dw3_pixel(j, row, x + 1, g, zero),
                off2);
      }
    } else { /* the image's lines up to y1 or the ring's end, in one pass */
      run = mcu_min_i32(mcu_min_i32(y1, lines - 1) - y + 1, ring - slot);
#if MCU_SIMD_DSP
      if (j->fill != NULL) {
        j->fill(row, (int16_t *)dst + pad, run, off2);
      } else {
        dw3_fill_t f = {ch, 4 * pw, off2, run, step, 2 * j->bw};
        dw3_fill_lines(row, (int16_t *)dst + pad, len, &f);
      }
#else
      for (int32_t l = 0; l < run; ++l, row += step, dst += half) {
        dw3_fill_line_c(row, dst, pad, len, ch, pw, off2);
      }
#endif
    }
    y += run;
    slot += run;
    slot = slot >= ring ? slot - ring : slot;
  }
}

#if MCU_SIMD_DSP
/* Registers: r0 the call, r1-r3 the rows, r4 out, r5-r8 the sums, r9-r12 and lr loads; in the
 * requantisation r9-r11 hold multiplier, round and right, r12 ch (one LDM), lr the rounding. */
#define DW3_OUT(S, AT)                                                                            \
  "add lr, r10, " S ", asr #31\n\t"                                                               \
  "smmlar " S ", " S ", r9, lr\n\t"                                                               \
  "asr " S ", " S ", r11\n\t"                                                                     \
  "ssat " S ", #8, " S "\n\t"                                                                     \
  "strb " S ", " AT "\n\t"

#define DW3_REQUANT4                                                                              \
  "ldm r0, {r9, r10, r11, r12}\n\t" DW3_OUT("r5", "[r4]") DW3_OUT("r6", "[r4, r12]")              \
      DW3_OUT("r7", "[r4, r12, lsl #1]") "add r4, r4, r12, lsl #1\n\t" DW3_OUT("r8", "[r4, r12]") \
          "add r4, r4, r12, lsl #1\n\t"
#define DW3_REQUANT2                                                                              \
  "ldm r0, {r9, r10, r11, r12}\n\t" DW3_OUT("r5", "[r4]") DW3_OUT("r6", "[r4, r12]")              \
      "add r4, r4, r12, lsl #1\n\t"
#define DW3_REQUANT1 "ldm r0, {r9, r10, r11}\n\t" DW3_OUT("r5", "[r4]")

/* Stride 1, four outputs, one filter line: line pointer P, weights at offset W; A, B by LDRD, C
 * after them; the first line's sums start from the bias in r9. */
#define DW3_S1_ROW4(P, W, S0, S1, S2, S3)                                                         \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "], #8\n\t" MCU_DW3_S1_AB4(S0, S1, S2, S3)                                \
  "ldr r12, [" P "]\n\t"                                                                          \
  "smlabt r7, r12, r11, r7\n\t"                                                                   \
  "smlad r8, r12, r11, r8\n\t"

/* Stride 2, four outputs: words A..E of the line, out_k += SMLAD(word_k, W01) + SMLABT(word_k+1,
 * W12); P moves on four words. */
#define DW3_S2_ROW4(P, W, S0, S1, S2, S3)                                                         \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "]\n\t"                                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r6, lr, r10, " S1 "\n\t"                                                                 \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "ldrd r12, lr, [" P ", #8]\n\t"                                                                 \
  "smlabt r6, r12, r11, r6\n\t"                                                                   \
  "smlad r7, r12, r10, " S2 "\n\t"                                                                \
  "smlad r8, lr, r10, " S3 "\n\t"                                                                 \
  "smlabt r7, lr, r11, r7\n\t"                                                                    \
  "ldr r12, [" P ", #16]!\n\t"                                                                    \
  "smlabt r8, r12, r11, r8\n\t"

/* Two outputs: stride 1 over words A, B (P moves on one word), stride 2 over A, B, C (two). */
#define DW3_S1_ROW2(P, W, S0, S1)                                                                 \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "], #4\n\t"                                                                 \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlatb r6, r12, r10, " S1 "\n\t"                                                                \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "smlad r6, lr, r11, r6\n\t"
#define DW3_S2_ROW2(P, W, S0, S1)                                                                 \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "], #8\n\t"                                                                 \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                \
  "smlad r6, lr, r10, " S1 "\n\t"                                                                  \
  "smlabt r5, lr, r11, r5\n\t"                                                                    \
  "ldr r12, [" P "]\n\t"                                                                          \
  "smlabt r6, r12, r11, r6\n\t"

/* One output at an even band column (either stride): SMLAD(A, W01) + SMLABT(B, W12). */
#define DW3_ROW1(P, W, S0, S1)                                                                    \
  "ldrd r10, r11, [r0, #" W "]\n\t"                                                               \
  "ldrd r12, lr, [" P "]\n\t"                                                                     \
  "smlad r5, r12, r10, " S0 "\n\t"                                                                 \
  "smlabt r5, lr, r11, r5\n\t"

#define DW3_BLOCKS(ROW, REQUANT)                                                                  \
  "ldr r9, [r0, #16]\n\t" ROW("r1", "24", "r9", "r9", "r9", "r9")                                 \
      ROW("r2", "32", "r5", "r6", "r7", "r8") ROW("r3", "40", "r5", "r6", "r7", "r8") REQUANT
#define DW3_BLOCK(ROW, REQUANT)                                                                   \
  "ldr r9, [r0, #16]\n\t" ROW("r1", "24", "r9", "r9") ROW("r2", "32", "r5", "r6")                 \
      ROW("r3", "40", "r5", "r6") REQUANT

/* A channel's lines (dw3_call_t), then the next channel's while `more`: per line its three band
 * lines from the table, blocks of four while four outputs remain, then one of two, then one (the
 * line's last, at an even column, which leaves r4 where it is); the output pointer r4 goes on
 * from line to line by `out_skip`. */
#define DW3_LINES(ROW4, ROW2)                                                                     \
  "push {r4-r11, lr}\n\t"                                                                         \
  "0:\n\t"                                                                                        \
  "ldr r4, [r0, #56]\n\t"                                                                         \
  "1:\n\t"                                                                                        \
  "ldr lr, [r0, #48]\n\t"                                                                         \
  "ldm lr!, {r1, r2, r3}\n\t"                                                                     \
  "str lr, [r0, #48]\n\t"                                                                         \
  "ldr lr, [r0, #52]\n\t"                                                                         \
  "add r1, r1, lr\n\t"                                                                            \
  "add r2, r2, lr\n\t"                                                                            \
  "add r3, r3, lr\n\t"                                                                            \
  "ldr lr, [r0, #60]\n\t"                                                                         \
  "add lr, r1, lr\n\t"                                                                            \
  "str lr, [r0, #20]\n\t"                                                                         \
  "cmp r1, lr\n\t"                                                                                \
  "beq 3f\n\t"                                                                                    \
  "2:\n\t" DW3_BLOCKS(ROW4, DW3_REQUANT4) "ldr lr, [r0, #20]\n\t"                                 \
  "cmp r1, lr\n\t"                                                                                \
  "bne 2b\n\t"                                                                                    \
  "3:\n\t"                                                                                        \
  "ldr lr, [r0, #64]\n\t"                                                                         \
  "cmp lr, #2\n\t"                                                                                \
  "blt 4f\n\t" DW3_BLOCK(ROW2, DW3_REQUANT2) "ldr lr, [r0, #64]\n\t"                              \
  "4:\n\t"                                                                                        \
  "tst lr, #1\n\t"                                                                                \
  "beq 5f\n\t" DW3_BLOCK(DW3_ROW1, DW3_REQUANT1) "5:\n\t"                                         \
  "ldr lr, [r0, #84]\n\t"                                                                         \
  "add r4, r4, lr\n\t"                                                                            \
  "ldr lr, [r0, #72]\n\t"                                                                         \
  "subs lr, lr, #1\n\t"                                                                           \
  "str lr, [r0, #72]\n\t"                                                                         \
  MCU_DW3_LINES_END

__attribute__((naked)) static void dw3_lines_s1(void *k) {
  (void)k;
  __asm__ volatile(DW3_LINES(DW3_S1_ROW4, DW3_S1_ROW2));
}

__attribute__((naked)) static void dw3_lines_s2(void *k) {
  (void)k;
  __asm__ volatile(DW3_LINES(DW3_S2_ROW4, DW3_S2_ROW2));
}
#endif

/* One output line of one channel: lines r0, r1, r2 of its plane (band column 0), weights w[6]. */
DW3_INLINE void dw3_row(const uint32_t *r0, const uint32_t *r1, const uint32_t *r2,
                        const uint32_t *w, const dw3_call_t *q, int8_t *out, int32_t ch,
                        int32_t n, int32_t stride, const int full) {
  const uint32_t a01 = w[0], a12 = w[1], b01 = w[2], b12 = w[3], c01 = w[4], c12 = w[5];
  int32_t x = 0;
  if (stride == 1) {
    for (; x + 4 <= n; x += 4, r0 += 2, r1 += 2, r2 += 2) {
      int32_t s0 = q->bias2, s1 = q->bias2, s2 = q->bias2, s3 = q->bias2;
      uint32_t a = r0[0], b = r0[1], c = r0[2];
      s0 = mcu_smlabt(b, a12, mcu_smlad(a, a01, s0));
      s1 = mcu_smlad(b, a12, mcu_smlatb(a, a01, s1));
      s2 = mcu_smlabt(c, a12, mcu_smlad(b, a01, s2));
      s3 = mcu_smlad(c, a12, mcu_smlatb(b, a01, s3));
      a = r1[0], b = r1[1], c = r1[2];
      s0 = mcu_smlabt(b, b12, mcu_smlad(a, b01, s0));
      s1 = mcu_smlad(b, b12, mcu_smlatb(a, b01, s1));
      s2 = mcu_smlabt(c, b12, mcu_smlad(b, b01, s2));
      s3 = mcu_smlad(c, b12, mcu_smlatb(b, b01, s3));
      a = r2[0], b = r2[1], c = r2[2];
      s0 = mcu_smlabt(b, c12, mcu_smlad(a, c01, s0));
      s1 = mcu_smlad(b, c12, mcu_smlatb(a, c01, s1));
      s2 = mcu_smlabt(c, c12, mcu_smlad(b, c01, s2));
      s3 = mcu_smlad(c, c12, mcu_smlatb(b, c01, s3));
      out[0] = (int8_t)dw3_out(q, s0, full);
      out[ch] = (int8_t)dw3_out(q, s1, full);
      out[2 * ch] = (int8_t)dw3_out(q, s2, full);
      out[3 * ch] = (int8_t)dw3_out(q, s3, full);
      out += 4 * ch;
    }
  } else {
    for (; x + 4 <= n; x += 4, r0 += 4, r1 += 4, r2 += 4) {
      int32_t s0 = q->bias2, s1 = q->bias2, s2 = q->bias2, s3 = q->bias2;
      const uint32_t *rr[3] = {r0, r1, r2};
      for (int32_t k = 0; k < 3; ++k) {
        const uint32_t *r = rr[k];
        uint32_t w01 = w[2 * k], w12 = w[2 * k + 1];
        s0 = mcu_smlabt(r[1], w12, mcu_smlad(r[0], w01, s0));
        s1 = mcu_smlabt(r[2], w12, mcu_smlad(r[1], w01, s1));
        s2 = mcu_smlabt(r[3], w12, mcu_smlad(r[2], w01, s2));
        s3 = mcu_smlabt(r[4], w12, mcu_smlad(r[3], w01, s3));
      }
      out[0] = (int8_t)dw3_out(q, s0, full);
      out[ch] = (int8_t)dw3_out(q, s1, full);
      out[2 * ch] = (int8_t)dw3_out(q, s2, full);
      out[3 * ch] = (int8_t)dw3_out(q, s3, full);
      out += 4 * ch;
    }
  }
  /* the last outputs one by one, over int16 entries (a stride-1 window may start mid-word) */
  const int16_t *h[3] = {(const int16_t *)r0, (const int16_t *)r1, (const int16_t *)r2};
  for (int32_t i = 0; x < n; ++x, ++i, out += ch) {
    int32_t s = q->bias2;
    for (int32_t k = 0; k < 3; ++k) {
      const int16_t *e = h[k] + i * stride;
      s += e[0] * mcu_lo16(w[2 * k]) + e[1] * mcu_hi16(w[2 * k]) + e[2] * mcu_hi16(w[2 * k + 1]);
    }
    out[0] = (int8_t)dw3_out(q, s, full);
  }
}

/* One channel's lines in C (the clamped range, and every range on cores without DSP). */
__attribute__((noinline)) static void dw3_lines_c(const dw3_call_t *q, int32_t n, int32_t stride,
                                                  const int full) {
  const int32_t *rows = q->rows;
  int8_t *out = (int8_t *)q->out;
  for (int32_t l = 0; l < q->lines; ++l, rows += 3, out += q->out_line) {
    const uint32_t *r0 = (const uint32_t *)(q->plane + (uintptr_t)rows[0]);
    const uint32_t *r1 = (const uint32_t *)(q->plane + (uintptr_t)rows[1]);
    const uint32_t *r2 = (const uint32_t *)(q->plane + (uintptr_t)rows[2]);
#if MCU_SIMD_DSP /* the assembly runs the full range */
    (void)full;
#else
    if (full) {
      dw3_row(r0, r1, r2, q->w, q, out, q->ch, n, stride, 1);
      continue;
    }
#endif
    dw3_row(r0, r1, r2, q->w, q, out, q->ch, n, stride, 0);
  }
}

/* The calls' constants of the layer (the same for every channel): output steps, blocks, the
 * activation range. */
static void dw3_calls(const dw3_job_t *j, dw3_call_t q[4]) {
  const int32_t n = j->dst.len;
  for (int32_t i = 0; i < 4; ++i) {
    q[i].ch = j->dst.step;
    q[i].quads = n / 4 * 8 * j->s_along; /* band bytes: 4 outputs, 2 bytes an entry */
    q[i].tail = n % 4;
    q[i].out_line = j->dst.line;
    q[i].out_skip = j->dst.line - (n - n % 2) * j->dst.step; /* from the assembly's r4 */
    q[i].lo = j->p->rq.act_min;
    q[i].hi = j->p->rq.act_max;
  }
}

/* The two lanes of a filter word's even (odd) bytes, doubled: SXTB16 then SXTAB16 adds them
 * again. */
static inline uint32_t dw3_even2(uint32_t t) { return mcu_sxtab16(mcu_sxtb16(t), t); }
static inline uint32_t dw3_odd2(uint32_t t) { return mcu_sxtab16_ror8(mcu_sxtb16_ror8(t), t); }

/* Four channels' doubled weights from `filter` (their first tap; `across` bytes to the next filter
 * line, `along` to the next tap along one) into calls[0..3].w, reading each tap's word once: its
 * even bytes' lanes give channels 0 and 2 (PKHBT, PKHTB of two taps), its odd bytes' channels 1
 * and 3. About 12 instructions a channel fewer than dw3_lanes' own loop; only the layer kernels
 * link it (depthwise_layer.h), so the general kernel's code stays as small as its budget asks. */
void mcu_dw3_weights4(const int8_t *filter, int32_t across, int32_t along, void *calls) {
  dw3_call_t *q = calls;
  for (int32_t k = 0; k < 3; ++k, filter += across) {
    uint32_t t0 = mcu_load_u32(filter), t1 = mcu_load_u32(filter + along);
    uint32_t t2 = mcu_load_u32(filter + 2 * along);
    uint32_t e0 = dw3_even2(t0), e1 = dw3_even2(t1), e2 = dw3_even2(t2);
    uint32_t o0 = dw3_odd2(t0), o1 = dw3_odd2(t1), o2 = dw3_odd2(t2);
    q[0].w[2 * k] = mcu_pack16((int32_t)e0, (int32_t)e1);
    q[0].w[2 * k + 1] = mcu_pack16((int32_t)e1, (int32_t)e2);
    q[2].w[2 * k] = mcu_pack16_hi(e0, e1);
    q[2].w[2 * k + 1] = mcu_pack16_hi(e1, e2);
    q[1].w[2 * k] = mcu_pack16((int32_t)o0, (int32_t)o1);
    q[1].w[2 * k + 1] = mcu_pack16((int32_t)o1, (int32_t)o2);
    q[3].w[2 * k] = mcu_pack16_hi(o0, o1);
    q[3].w[2 * k + 1] = mcu_pack16_hi(o1, o2);
  }
}

/* Channel c + i's doubled weights (W01, W12 of each filter line) and requantisation, i < g (the
 * lanes past g are never run), one channel at a time; four channels' weights by the layer's
 * `weights4` where it has one. */
static void dw3_lanes(const dw3_job_t *j, int32_t c, int32_t g, dw3_call_t q[4]) {
  const mcu_depthwise_conv_2d_params_t *p = j->p;
  const int32_t across = j->tap_across, along = j->tap_along;
  const int fast = g == 4 && j->weights4 != NULL;
  if (fast) {
    j->weights4(j->filter + c, across, along, q);
  }
  for (int32_t i = 0; i < g; ++i) {
    const int8_t *f = j->filter + c + i;
    for (int32_t k = 0; k < 3 && !fast; ++k, f += across) {
      int32_t w0 = 2 * f[0], w1 = 2 * f[along], w2 = 2 * f[2 * along];
      q[i].w[2 * k] = mcu_pack16(w0, w1);
      q[i].w[2 * k + 1] = mcu_pack16(w1, w2);
    }
    int32_t qi = p->rq.num_channels > 1 ? c + i : 0;
    int32_t right = -p->rq.shifts[qi];
    q[i].bias2 = j->bias != NULL ? 2 * j->bias[c + i] : 0;
    q[i].multiplier = p->rq.multipliers[qi];
    q[i].right = right;
    q[i].round =
        (int32_t)(((uint32_t)1 << (right - 1)) + ((uint32_t)p->rq.output_offset << right));
  }
}

/* The band lines of output lines oy0 .. oy1 - 1 into the table (byte offsets in a plane, three
 * a line). */
DW3_INLINE void dw3_table(const dw3_job_t *j, int32_t oy0, int32_t oy1) {
  const int32_t s_h = j->s_across, bytes = 2 * j->bw;
  int32_t slot = oy0 * s_h % j->ring; /* band slot of the window's first line */
  for (int32_t oy = oy0, *t = j->rows; oy < oy1; ++oy, t += 3) {
    int32_t s1 = slot + 1 == j->ring ? 0 : slot + 1, s2 = s1 + 1 == j->ring ? 0 : s1 + 1;
    t[0] = slot * bytes, t[1] = s1 * bytes, t[2] = s2 * bytes;
    slot += s_h;
    slot = slot >= j->ring ? slot - j->ring : slot;
  }
}

/* Channels c .. c + g - 1 of every output pixel, a chunk of output lines at a time: the chunk's
 * new input lines into the band, the chunk's table of band lines (once for the layer when one
 * chunk holds every line: `dw3_setup`), then each channel over the chunk's lines. `q` holds the
 * layer's constants (`dw3_calls`). */
static void dw3_group(const dw3_job_t *j, int32_t c, int32_t g, dw3_call_t q[4]) {
  dw3_lanes(j, c, g, q);
  const mcu_depthwise_conv_2d_params_t *p = j->p;
  const int32_t s_h = j->s_across, pad_h = j->pad_across, half = j->bw / 2;
  const int full = p->rq.act_min == -128 && p->rq.act_max == 127;
  int32_t next = -pad_h; /* the first input line not in the band yet */
  for (int32_t oy0 = 0; oy0 < j->dst.lines; oy0 += j->chunk) {
    int32_t oy1 = mcu_min_i32(oy0 + j->chunk, j->dst.lines);
    int32_t last = (oy1 - 1) * s_h - pad_h + 2;
    dw3_fill(j, mcu_max_i32(next, oy0 * s_h - pad_h), last, c, g);
    next = last + 1;
    if (j->chunk < j->dst.lines) {
      dw3_table(j, oy0, oy1);
    }
    for (int32_t i = 0; i < g; ++i) {
      q[i].rows = j->rows;
      q[i].plane = (uintptr_t)(j->band + i * j->ring * half);
      q[i].out = (uintptr_t)(j->out + oy0 * j->dst.line + c + i);
      q[i].lines = oy1 - oy0;
      q[i].more = i + 1 < g;
    }
#if MCU_SIMD_DSP
    if (full) { /* the group's channels in one call */
      j->lines(&q[0]);
      continue;
    }
#endif
    for (int32_t i = 0; i < g; ++i) {
      dw3_lines_c(&q[i], j->dst.len, j->s_along, full);
    }
  }
}

/* The layers this path takes (dw3_fits in opt_depthwise.py): 3x3, strides 1 or 2, every right
 * shift at least 1. */
static int dw3_fits(const mcu_depthwise_conv_2d_params_t *p, int32_t k_h, int32_t k_w) {
  if (k_h != 3 || k_w != 3 || p->win.stride_h < 1 || p->win.stride_h > 2 || p->win.stride_w < 1 ||
      p->win.stride_w > 2) {
    return 0;
  }
  for (int32_t i = 0; i < p->rq.num_channels; ++i) {
    if (p->rq.shifts[i] > -1) {
      return 0;
    }
  }
  return 1;
}

/* Lines are columns when the output is taller than wide and as large as the input (stride 1,
 * SAME: output column ox then lands on input column ox, and the layer may still run in place),
 * rows otherwise. */
static int dw3_by_columns(const dw_job_t *g) {
  return g->out_h > g->out_w && g->in_h == g->out_h && g->in_w == g->out_w;
}

/* The planar path runs every layer that fits, lines of any length (blocks of four, two, one). */
static int dw3_takes(const dw_job_t *g) { return dw3_fits(g->p, g->k_h, g->k_w); }

/* Rows as lines, or columns when the output is taller than wide; `layer`: the layer's own
 * assembly, which wants one chunk of every line. */
static void dw3_setup(dw3_job_t *j, const dw_job_t *g, void *scratch,
                      const mcu_dw3_layer_t *layer) {
  const mcu_depthwise_conv_2d_params_t *p = g->p;
  const int32_t ch = g->ch;
  const dw3_side_t rows_in = {g->in_h, g->in_w, ch, g->in_w * ch};
  const dw3_side_t rows_out = {g->out_h, g->out_w, ch, g->out_w * ch};
  const dw3_side_t cols_in = {g->in_w, g->in_h, g->in_w * ch, ch};
  const dw3_side_t cols_out = {g->out_w, g->out_h, g->out_w * ch, ch};
  j->in = g->in;
  j->out = g->out;
  j->filter = g->filter;
  j->bias = g->bias;
  j->p = p;
  j->ch = ch;
  if (dw3_by_columns(g)) {
    j->src = cols_in, j->dst = cols_out;
    j->s_across = p->win.stride_w, j->s_along = p->win.stride_h;
    j->pad_across = p->win.pad_w, j->pad_along = p->win.pad_h;
    j->tap_across = ch, j->tap_along = 3 * ch;
  } else {
    j->src = rows_in, j->dst = rows_out;
    j->s_across = p->win.stride_h, j->s_along = p->win.stride_w;
    j->pad_across = p->win.pad_h, j->pad_along = p->win.pad_w;
    j->tap_across = 3 * ch, j->tap_along = ch;
  }
  int32_t want = (MCU_DW3_OUTPUTS + j->dst.len - 1) / j->dst.len;
  j->chunk = layer != NULL ? j->dst.lines : mcu_min_i32(j->dst.lines, want);
  j->weights4 = layer != NULL ? layer->weights4 : NULL;
#if MCU_SIMD_DSP
  j->fill = layer != NULL ? layer->fill : NULL;
  j->lines = layer != NULL && layer->lines != NULL ? layer->lines
             : j->s_along == 1                   ? dw3_lines_s1
                                                 : dw3_lines_s2;
#endif
  j->ring = (j->chunk - 1) * j->s_across + 3;
  int32_t bw = mcu_max_i32(j->pad_along + j->src.len, j->s_along * j->dst.len + 2);
  j->bw = bw + (bw & 1);
  j->rows = scratch;
  j->band = (uint32_t *)(j->rows + 3 * j->chunk);
  memset(j->band, 0, (size_t)j->ring * (size_t)j->bw * 8); /* the padding's entries */
  if (j->chunk == j->dst.lines) {
    dw3_table(j, 0, j->chunk);
  }
}

/* In place, output row oy must not reach input rows the band has not copied while some remain
 * (see the top of the file). */
static int in_place_ok(const dw_job_t *j) {
  if (dw3_takes(j) && dw3_by_columns(j)) {
    /* the 3x3 path by columns: output column ox over input column ox, copied while columns
     * below ox * stride_w - pad_w + 3 are */
    for (int32_t ox = 0; ox < j->out_w; ++ox) {
      int32_t copied = ox * j->p->win.stride_w - j->p->win.pad_w + 3;
      if (copied < j->in_w && ox >= copied) {
        return 0;
      }
    }
    return 1;
  }
  for (int32_t oy = 0; oy < j->out_h; ++oy) {
    int32_t copied = oy * j->p->win.stride_h - j->p->win.pad_h + j->k_h; /* rows below are in the band */
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

/* The kernel; `layer` (NULL: none) runs a 3x3 layer over a band of the whole image. */
static mcu_status_t dw_eval(const mcu_node_t *node, mcu_context_t *ctx,
                            const mcu_dw3_layer_t *layer) {
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
                p->win.pad_w,
                0,
                NULL,
                NULL};
  int32_t batches = in->dims[0];
  MCU_ENSURE_MODEL(out->dims[0] == batches && out->dims[3] == j.ch && filter->dims[3] == j.ch,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->depth_multiplier == 1 && p->win.dilation_h == 1 && p->win.dilation_w == 1,
                   MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(j.k_h <= MCU_DW_MAX_ROWS, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(p->rq.num_channels == 1 || p->rq.num_channels == j.ch, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(j.pad_w >= 0 && p->win.pad_h >= 0, MCU_ERR_BAD_MODEL);
  /* the band row: padding, the image, and what the last window reads past it */
  j.band_w = mcu_max_i32(j.pad_w + j.in_w, (j.out_w - 1) * p->win.stride_w + j.k_w);
  j.wide = mcu_scratch(ctx, node);
  MCU_ENSURE(j.wide != NULL, MCU_ERR_BAD_MODEL);
  j.band = j.wide + 2 * j.k_h * j.k_w;
  if ((const void *)j.out == (const void *)j.in) {
    /* always checked: the path is chosen at run time, by the addresses the allocator gave */
    MCU_ENSURE(batches == 1 && in_place_ok(&j), MCU_ERR_BAD_MODEL);
  }
  if (dw3_takes(&j)) {
    dw3_job_t d;
    dw3_setup(&d, &j, j.wide, layer);
    dw3_call_t q[4];
    dw3_calls(&d, q);
    for (int32_t b = 0; b < batches; ++b) {
      for (int32_t c = 0; c < d.ch; c += 4) {
        dw3_group(&d, c, mcu_min_i32(d.ch - c, 4), q);
      }
      d.in += j.in_h * j.in_w * j.ch;
      d.out += j.out_h * j.out_w * j.ch;
    }
    return MCU_OK;
  }
  for (int32_t b = 0; b < batches; ++b) {
    run(&j);
    j.in += j.in_h * j.in_w * j.ch;
    j.out += j.out_h * j.out_w * j.ch;
  }
  return MCU_OK;
}

mcu_status_t mcu_depthwise_conv_2d_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  return dw_eval(node, ctx, NULL);
}

mcu_status_t mcu_depthwise_conv_2d_s8_layer(const mcu_node_t *node, mcu_context_t *ctx,
                                            const mcu_dw3_layer_t *layer) {
  return dw_eval(node, ctx, layer);
}
