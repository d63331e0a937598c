/* CONV_2D int8 with one group and any filter, stride, dilation and padding, bit-exact with
 * reference/conv_2d.c (mcu_conv_2d_int8), with half conv_2d_s8.c's scratch: the rung between it
 * and conv_2d_s8_col.c on the ladder of kernels chosen for memory (mcugen/kernel_choice.py).
 * Like conv_2d_s8.c it takes output pixels two at a time, but gathers their windows as int8
 * bytes, interleaved a word at a time (word 2j + s holds depth values 4j..4j+3 of pixel s; the
 * last word's values past the depth 0), where conv_2d_s8.c expands them into 16-bit lanes (twice
 * the bytes). SXTB16 / SXTB16 ROR 8 of the window words in registers give (k0, k2) and (k1, k3),
 * which meet the filter's words for four channels in conv_2d_s8.c's layout (mcugen/codegen/lower/
 * opt_conv_2d.py conv_layout): per block of four depth values, 2 pixels x 4 channels = 32
 * multiply-adds in 34 instructions (2 LDRD, 4 LDR, 12 SXTB16, 16 SMLAD; assembly on a DSP core),
 * against conv_2d_s8.c's 30 after its expansion. Parameters, filter layout, padding and
 * requantisation are conv_2d_s8.c's (its header says why they are exact); pixels in the reference
 * kernel's order, an odd last one paired with itself. Never in place. */
#include "mcu/conv_2d_s8_window.h"

/* `n` bytes from `src` (or, NULL, the padding value `pad`) to depth values k.. of the pixel whose
 * words are every other one from `xb`: bytes up to a multiple of 4, then whole words, then the
 * last bytes. */
static void put_bytes(int8_t *xb, int32_t k, const int8_t *src, int8_t pad, int32_t n) {
  int32_t j = 0;
  for (; j < n && ((k + j) & 3) != 0; ++j) {
    xb[2 * ((k + j) & ~3) + ((k + j) & 3)] = src != NULL ? src[j] : pad;
  }
  uint32_t pad4 = (uint8_t)pad * 0x01010101u;
  for (; j + 4 <= n; j += 4) {
    mcu_store_u32(xb + 2 * (k + j), src != NULL ? mcu_load_u32(src + j) : pad4);
  }
  for (; j < n; ++j) {
    xb[2 * ((k + j) & ~3) + ((k + j) & 3)] = src != NULL ? src[j] : pad;
  }
}

/* Pixel q's window into the words of slot `slot` (0 or 1) of the pair's words `x`. */
static void pair_window(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const fast_t *g,
                        const int8_t *input, pixel_t q, uint32_t *x, int32_t slot) {
  const int8_t *in = input + q.b * g->image;
  int8_t *xb = (int8_t *)(x + slot);
  int32_t y0 = q.oy * p->win.stride_h - p->win.pad_h;
  int32_t x0 = q.ox * p->win.stride_w - p->win.pad_w;
  int32_t in_c = d->s.in_c, run = d->s.k_w * in_c;
  int8_t pad = (int8_t)p->pad_value;
  int contiguous = contiguous_rows(p, d, x0);
  for (int32_t ky = 0, k = 0; ky < d->s.k_h; ++ky, k += run) {
    int32_t y = y0 + ky * p->win.dilation_h;
    if (y < 0 || y >= d->s.in_h) {
      put_bytes(xb, k, NULL, pad, run);
      continue;
    }
    const int8_t *row = in + y * d->s.in_w * in_c;
    if (contiguous) {
      put_bytes(xb, k, row + x0 * in_c, pad, run);
    } else {
      for (int32_t kx = 0; kx < d->s.k_w; ++kx) {
        int32_t xx = x0 + kx * p->win.dilation_w;
        int inside = xx >= 0 && xx < d->s.in_w;
        put_bytes(xb, k + kx * in_c, inside ? row + xx * in_c : NULL, pad, in_c);
      }
    }
  }
}

/* Half a block: the two pixels' words x0, x1 ((k0, k2) or (k1, k3)) against the words of the
 * group's two pairs. */
#define COL2_HALF_ASM CONV_QUAD_HALF_ASM
#define COL2_BLOCK_ASM                      \
  "ldrd %[x0], %[x1], [%[xp]]\n\t"          \
  "sxtb16 %[x0], %[x0]\n\t"                 \
  "sxtb16 %[x1], %[x1]\n\t" COL2_HALF_ASM  \
  "ldrd %[x0], %[x1], [%[xp]], #8\n\t"      \
  "sxtb16 %[x0], %[x0], ror #8\n\t"         \
  "sxtb16 %[x1], %[x1], ror #8\n\t" COL2_HALF_ASM
#define COL2_OPERANDS                                                                          \
  : [a00] "+r"(s[0]), [a01] "+r"(s[1]), [a10] "+r"(s[2]), [a11] "+r"(s[3]), [a20] "+r"(s[4]),  \
    [a21] "+r"(s[5]), [a30] "+r"(s[6]), [a31] "+r"(s[7]), [xp] "+r"(x), [wp] "+r"(w),          \
    [x0] "=&r"(x0), [x1] "=&r"(x1), [wd] "=&r"(word), [e] "=&r"(e)                             \
  : [end] "m"(end)                                                                             \
  : "cc", "memory"

/* The pair's words `x` against four channels, sums s[2 * channel + pixel]: an odd block alone,
 * then two a loop. Inlined, so the sums stay in registers for the requantisation. */
static inline __attribute__((always_inline)) void dot_quad(const uint32_t *x, const int8_t *w,
                                                           int32_t blocks, int32_t s[8]) {
  const uint32_t *end = x + 2 * blocks;
#if MCU_SIMD_DSP && defined(__OPTIMIZE__)
  uint32_t x0, x1, word, e;
  if (blocks & 1) {
    __asm__ volatile(COL2_BLOCK_ASM COL2_OPERANDS);
  }
  if (blocks > 1) {
    __asm__ volatile("1:\n\t" COL2_BLOCK_ASM COL2_BLOCK_ASM
                     "ldr %[wd], %[end]\n\t"
                     "cmp %[xp], %[wd]\n\t"
                     "bne 1b" COL2_OPERANDS);
  }
#else
  for (; x != end; x += 2, w += 16) {
    for (int32_t h = 0; h < 2; ++h) { /* the words (k0, k2), then (k1, k3) */
      uint32_t wa = mcu_load_u32(w + 8 * h), wb = mcu_load_u32(w + 8 * h + 4);
      quad_half(wa, wb, lanes(x[0], h), s, 2);
      quad_half(wa, wb, lanes(x[1], h), s + 1, 2);
    }
  }
#endif
}
#undef COL2_HALF_ASM
#undef COL2_BLOCK_ASM
#undef COL2_OPERANDS

/* One channel's word `w` (four weights in order) against pixel words x0, x1: acc[pixel] += dot. */
static inline void dot_word(uint32_t x0, uint32_t x1, uint32_t w, int32_t acc[2]) {
  uint32_t e = mcu_sxtb16(w), o = mcu_sxtb16_ror8(w);
  acc[0] = mcu_smlad(o, mcu_sxtb16_ror8(x0), mcu_smlad(e, mcu_sxtb16(x0), acc[0]));
  acc[1] = mcu_smlad(o, mcu_sxtb16_ror8(x1), mcu_smlad(e, mcu_sxtb16(x1), acc[1]));
}

/* The pair's words against a pair of channels (8 bytes a block: a, b (k0, k2), then (k1, k3)):
 * acc[channel][pixel] += dot. */
static void dot_pair(const uint32_t *x, const int8_t *w, int32_t blocks, int32_t acc[2][2]) {
  for (int32_t j = 0; j < blocks; ++j, x += 2, w += 8) {
    uint32_t wa = mcu_load_u32(w), wb = mcu_load_u32(w + 4);
    uint32_t e0 = mcu_sxtb16(x[0]), e1 = mcu_sxtb16(x[1]);
    uint32_t o0 = mcu_sxtb16_ror8(x[0]), o1 = mcu_sxtb16_ror8(x[1]);
    acc[0][0] = mcu_smlad(mcu_sxtb16(wb), o0, mcu_smlad(mcu_sxtb16(wa), e0, acc[0][0]));
    acc[0][1] = mcu_smlad(mcu_sxtb16(wb), o1, mcu_smlad(mcu_sxtb16(wa), e1, acc[0][1]));
    acc[1][0] = mcu_smlad(mcu_sxtb16_ror8(wb), o0, mcu_smlad(mcu_sxtb16_ror8(wa), e0, acc[1][0]));
    acc[1][1] = mcu_smlad(mcu_sxtb16_ror8(wb), o1, mcu_smlad(mcu_sxtb16_ror8(wa), e1, acc[1][1]));
  }
}

/* Channel c's tail (its last depth % 4 weights against the pixels' zero-padded last words),
 * then its outputs: out1[c] first, then out0[c] (out1 is out0 when there is one pixel). */
static inline __attribute__((always_inline)) void finish(const mcu_conv_2d_s8_params_t *p,
                                                         const dims_t *d, const uint32_t *x,
                                                         const int8_t *w, int32_t c,
                                                         int32_t acc[2], int full,
                                                         int8_t *out0, int8_t *out1) {
  if (d->tail != 0) {
    dot_word(x[2 * d->blocks], x[2 * d->blocks + 1], tail_word(w + c * d->tail, d), acc);
  }
  two_t v = requantize(p->channels + c * MCU_CONV_REC_WORDS, acc[0], acc[1], full, p->act_min,
                       p->act_max);
  out1[c] = (int8_t)v.v1;
  out0[c] = (int8_t)v.v0;
}

/* Every output channel of the pixel pair in `x`: out0[c] and out1[c]. `full`: the activation
 * range is all of int8 (a constant at each call). */
static inline __attribute__((always_inline)) void channels_clamped(
    const mcu_conv_2d_s8_params_t *p, const dims_t *d, const uint32_t *x, const int8_t *w,
    int8_t *out0, int8_t *out1, int full) {
  const int8_t *blocks = w + d->s.out_c * d->tail;
  int32_t c = 0;
  for (; c + 4 <= d->s.out_c; c += 4) {
    int32_t s[8] = {conv_bias(p, c),     conv_bias(p, c),     conv_bias(p, c + 1), conv_bias(p, c + 1),
                    conv_bias(p, c + 2), conv_bias(p, c + 2), conv_bias(p, c + 3), conv_bias(p, c + 3)};
    if (d->blocks > 0) {
      dot_quad(x, blocks + c * 4 * d->blocks, d->blocks, s);
    }
    for (int32_t k = 0; k < 4; ++k) {
      finish(p, d, x, w, c + k, s + 2 * k, full, out0, out1);
    }
  }
  for (; c + 2 <= d->s.out_c; c += 2) {
    int32_t acc[2][2] = {{conv_bias(p, c), conv_bias(p, c)}, {conv_bias(p, c + 1), conv_bias(p, c + 1)}};
    dot_pair(x, blocks + c * 4 * d->blocks, d->blocks, acc);
    finish(p, d, x, w, c, acc[0], full, out0, out1);
    finish(p, d, x, w, c + 1, acc[1], full, out0, out1);
  }
  if (c < d->s.out_c) {
    const int8_t *row = blocks + c * 4 * d->blocks;
    int32_t acc[2] = {conv_bias(p, c), conv_bias(p, c)};
    for (int32_t j = 0; j < d->blocks; ++j) {
      dot_word(x[2 * j], x[2 * j + 1], mcu_load_u32(row + 4 * j), acc);
    }
    finish(p, d, x, w, c, acc, full, out0, out1);
  }
}

static void channels(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const uint32_t *x,
                     const int8_t *w, int8_t *out0, int8_t *out1) {
  full_range(p) ? channels_clamped(p, d, x, w, out0, out1, 1)
                : channels_clamped(p, d, x, w, out0, out1, 0);
}

mcu_status_t mcu_conv_2d_s8_col2(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_conv_2d_s8_params_t *p = node->params;
  dims_t d;
  operands_t k;
  MCU_TRY(conv_operands(node, ctx, 1, &d, &k));
  uint32_t *x = k.scratch; /* two words per block of four depth values */
  int32_t words = 2 * (d.blocks + (d.tail != 0));
  if (d.tail != 0) {
    x[words - 2] = x[words - 1] = 0; /* the values past the depth, never written after */
  }
  fast_t g = fast_geometry(p, &d);
  int32_t pixels = d.s.batches * d.s.out_h * d.s.out_w;
  pixel_t q = {0, 0, 0};
  int32_t out_s = mcu_output_stride(node, d.s.out_c); /* a channel slice's pixel stride */
  for (int32_t i = 0; i < pixels; i += 2) {
    int two = i + 1 < pixels;
    pair_window(p, &d, &g, k.input, q, x, 0);
    next(&q, &d);
    if (two) {
      pair_window(p, &d, &g, k.input, q, x, 1);
      next(&q, &d);
    } else {
      for (int32_t k = 0; k < words; k += 2) { /* the last pixel alone: both slots hold it */
        x[k + 1] = x[k];
      }
    }
    int8_t *out0 = k.output + i * out_s;
    channels(p, &d, x, k.weights, out0, two ? out0 + out_s : out0);
  }
  return MCU_OK;
}
