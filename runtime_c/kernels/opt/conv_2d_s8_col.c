/* CONV_2D int8 with one group and any filter, stride, dilation and padding, bit-exact with
 * reference/conv_2d.c (mcu_conv_2d_int8), with a scratch of one window of bytes: the rung
 * below conv_2d_s8.c on the ladder of kernels chosen for memory (mcugen/kernel_choice.py).
 * conv_2d_s8.c expands the windows of two output pixels into 16-bit lanes (16 bytes per block
 * of four depth values); this one gathers one pixel's window as int8 bytes (the depth rounded
 * up to a multiple of 4, the bytes past the depth 0) and widens it in registers: per block,
 * one load and SXTB16 / SXTB16 ROR 8 of the window word give (k0, k2) and (k1, k3), which meet
 * the filter's words for four channels in conv_2d_s8.c's layout (mcugen/codegen/lower/
 * opt_conv_2d.py conv_layout): 16 multiply-adds in 21 instructions (1 LDR, 2 LDRD, 10 SXTB16,
 * 8 SMLAD; assembly on a DSP core; 23 with 4 LDR where the weights are not word-aligned). Same
 * parameters, filter layout, padding (taps outside the image are the input zero point, which
 * the folded bias makes exact) and requantisation as conv_2d_s8.c (its header says why they are
 * exact); pixels in the reference kernel's order.
 * Never in place. */
#include "mcu/conv_2d_s8_window.h"

/* One block of the window (4 bytes at `x`) against four channels' 16 bytes at `w`: LOAD2 reads
 * two words of them (LDRD where they are word-aligned, else two LDR). */
#define COL_HALF_ASM(LOAD2, X)              \
  LOAD2                                     \
  "sxtb16 %[e], %[w0]\n\t"                  \
  "smlad %[a0], %[e], %[" X "], %[a0]\n\t"  \
  "sxtb16 %[w0], %[w0], ror #8\n\t"         \
  "smlad %[a1], %[w0], %[" X "], %[a1]\n\t" \
  "sxtb16 %[e], %[w1]\n\t"                  \
  "smlad %[a2], %[e], %[" X "], %[a2]\n\t"  \
  "sxtb16 %[w1], %[w1], ror #8\n\t"         \
  "smlad %[a3], %[w1], %[" X "], %[a3]\n\t"
#define COL_QUAD_ASM(LOAD2)             \
  "ldr %[xo], [%[xp]], #4\n\t"          \
  "sxtb16 %[xe], %[xo]\n\t"             \
  "sxtb16 %[xo], %[xo], ror #8\n\t"     \
  COL_HALF_ASM(LOAD2, "xe") COL_HALF_ASM(LOAD2, "xo")
#define COL_LDRD "ldrd %[w0], %[w1], [%[wp]], #8\n\t"
#define COL_LDR2 "ldr %[w0], [%[wp]], #4\n\tldr %[w1], [%[wp]], #4\n\t"
#define COL_LOOP(LOAD2)                                                                    \
  __asm__ volatile("tst %[n], #1\n\t"                                                      \
                   "bne 2f\n\t"                                                            \
                   "1:\n\t" COL_QUAD_ASM(LOAD2) "2:\n\t" COL_QUAD_ASM(LOAD2)               \
                   "cmp %[xp], %[end]\n\t"                                                 \
                   "bne 1b"                                                                \
                   : [a0] "+r"(s[0]), [a1] "+r"(s[1]), [a2] "+r"(s[2]), [a3] "+r"(s[3]),   \
                     [xp] "+r"(x), [wp] "+r"(w), [xe] "=&r"(xe), [xo] "=&r"(xo),           \
                     [w0] "=&r"(w0), [w1] "=&r"(w1), [e] "=&r"(e)                          \
                   : [end] "r"(end), [n] "r"(blocks)                                       \
                   : "cc", "memory")

/* The window `x` (blocks > 0 of them) against four channels: s[channel] += dot; two blocks a
 * loop on a DSP core (entered at the second when the count is odd). */
static inline __attribute__((always_inline)) void dot_quad(const int8_t *x, const int8_t *w,
                                                           int32_t blocks, int32_t s[4]) {
  const int8_t *end = x + 4 * blocks;
#if MCU_SIMD_DSP && defined(__OPTIMIZE__)
  uint32_t xe, xo, w0, w1, e;
  if (((uintptr_t)w & 3) == 0) { /* LDRD needs a word-aligned address (the weights after the
                                  * channels' tails may not be) */
    COL_LOOP(COL_LDRD);
  } else {
    COL_LOOP(COL_LDR2);
  }
#else
  for (; x != end; x += 4, w += 16) {
    uint32_t xw = mcu_load_u32(x);
    for (int32_t h = 0; h < 2; ++h) { /* the words (k0, k2), then (k1, k3) */
      quad_half(mcu_load_u32(w + 8 * h), mcu_load_u32(w + 8 * h + 4), lanes(xw, h), s, 1);
    }
  }
#endif
}
#undef COL_HALF_ASM
#undef COL_QUAD_ASM
#undef COL_LDRD
#undef COL_LDR2
#undef COL_LOOP

/* The window against a pair of channels (8 bytes a block: a, b (k0, k2), then (k1, k3)):
 * s[channel] += dot. */
static void dot_pair(const int8_t *x, const int8_t *w, int32_t blocks, int32_t s[2]) {
  for (int32_t j = 0; j < blocks; ++j, x += 4, w += 8) {
    uint32_t xw = mcu_load_u32(x), wa = mcu_load_u32(w), wb = mcu_load_u32(w + 4);
    uint32_t xe = mcu_sxtb16(xw), xo = mcu_sxtb16_ror8(xw);
    s[0] = mcu_smlad(mcu_sxtb16(wb), xo, mcu_smlad(mcu_sxtb16(wa), xe, s[0]));
    s[1] = mcu_smlad(mcu_sxtb16_ror8(wb), xo, mcu_smlad(mcu_sxtb16_ror8(wa), xe, s[1]));
  }
}

/* The window against one channel's word `w` (four weights in order): acc += dot. */
static inline int32_t dot_word(uint32_t x, uint32_t w, int32_t acc) {
  acc = mcu_smlad(mcu_sxtb16(w), mcu_sxtb16(x), acc);
  return mcu_smlad(mcu_sxtb16_ror8(w), mcu_sxtb16_ror8(x), acc);
}

/* One output from its sum and its channel's record `rec`: conv_2d_s8.c's requantisation. */
static inline __attribute__((always_inline)) int8_t requant(const int32_t *rec, int32_t acc,
                                                            int full, int32_t lo, int32_t hi) {
  int32_t v = requant_one(rec, acc);
  return (int8_t)(full ? mcu_ssat8(v) : mcu_clamp_i32(v, lo, hi));
}

/* `n` (1 to 4) channels from c on: their sums s[k] (whole blocks done) plus their tails (their
 * last depth % 4 weights, at the filter's start, against the window's zero-padded last word),
 * then their outputs. */
static inline __attribute__((always_inline)) void finish(const mcu_conv_2d_s8_params_t *p,
                                                         const dims_t *d, const int8_t *x,
                                                         const int8_t *w, int32_t c, int32_t n,
                                                         int32_t s[4], int full, int8_t *out) {
  if (d->tail != 0) {
    uint32_t xt = mcu_load_u32(x + 4 * d->blocks);
    for (int32_t k = 0; k < n; ++k) {
      s[k] = dot_word(xt, tail_word(w + (c + k) * d->tail, d), s[k]);
    }
  }
  const int32_t *rec = p->channels + c * MCU_CONV_REC_WORDS;
  for (int32_t k = 0; k < n; ++k) {
    out[c + k] = requant(rec + k * MCU_CONV_REC_WORDS, s[k], full, p->act_min, p->act_max);
  }
}

/* Every output channel of the window `x`: out[c]. `full`: the activation range is all of int8
 * (a constant at each call). */
static inline __attribute__((always_inline)) void channels_clamped(
    const mcu_conv_2d_s8_params_t *p, const dims_t *d, const int8_t *x, const int8_t *w,
    int8_t *out, int full) {
  const int8_t *blocks = w + d->s.out_c * d->tail;
  int32_t c = 0;
  for (; c + 4 <= d->s.out_c; c += 4) {
    int32_t s[4] = {conv_bias(p, c), conv_bias(p, c + 1), conv_bias(p, c + 2), conv_bias(p, c + 3)};
    if (d->blocks > 0) {
      dot_quad(x, blocks + c * 4 * d->blocks, d->blocks, s);
    }
    finish(p, d, x, w, c, 4, s, full, out);
  }
  for (; c + 2 <= d->s.out_c; c += 2) {
    int32_t s[4] = {conv_bias(p, c), conv_bias(p, c + 1), 0, 0};
    dot_pair(x, blocks + c * 4 * d->blocks, d->blocks, s);
    finish(p, d, x, w, c, 2, s, full, out);
  }
  if (c < d->s.out_c) {
    const int8_t *row = blocks + c * 4 * d->blocks;
    int32_t s[4] = {conv_bias(p, c), 0, 0, 0};
    for (int32_t j = 0; j < d->blocks; ++j) {
      s[0] = dot_word(mcu_load_u32(x + 4 * j), mcu_load_u32(row + 4 * j), s[0]);
    }
    finish(p, d, x, w, c, 1, s, full, out);
  }
}

static void channels(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const int8_t *x,
                     const int8_t *w, int8_t *out) {
  full_range(p) ? channels_clamped(p, d, x, w, out, 1) : channels_clamped(p, d, x, w, out, 0);
}

mcu_status_t mcu_conv_2d_s8_col(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_conv_2d_s8_params_t *p = node->params;
  dims_t d;
  operands_t k;
  MCU_TRY(conv_operands(node, ctx, 1, &d, &k));
  int8_t *col = k.scratch; /* one window, the depth rounded up to whole words */
  int32_t bytes = 4 * (d.blocks + (d.tail != 0));
  memset(col + d.depth, 0, (size_t)(bytes - d.depth)); /* the tail's missing values */
  fast_t g = fast_geometry(p, &d);
  int32_t pixels = d.s.batches * d.s.out_h * d.s.out_w;
  pixel_t q = {0, 0, 0};
  int32_t out_s = mcu_output_stride(node, d.s.out_c); /* a channel slice's pixel stride */
  for (int32_t i = 0; i < pixels; ++i) {
    int32_t y0 = q.oy * p->win.stride_h - p->win.pad_h;
    int32_t x0 = q.ox * p->win.stride_w - p->win.pad_w;
    gather_window(p, &d, k.input + q.b * g.image, y0, x0, col);
    next(&q, &d);
    channels(p, &d, col, k.weights, k.output + i * out_s);
  }
  return MCU_OK;
}
