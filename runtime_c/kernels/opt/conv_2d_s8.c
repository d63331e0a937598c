/* CONV_2D int8 with one group and any filter, stride, dilation and padding, bit-exact with
 * reference/conv_2d.c (mcu_conv_2d_int8). Output pixels go two at a time, in the reference
 * kernel's order (across rows and batches).
 *
 * im2col into 16-bit lanes, once per pixel pair for all output channels: each pixel's window
 * (k_h x k_w taps of in_c inputs, in the filter's [k_h][k_w][in_c] order, depth values) is
 * expanded in blocks of four depth values k0..k3 into two words, (k0, k2) and (k1, k3) (what
 * SXTB16 and SXTB16 ROR 8 give of one load), and the two pixels' words interleaved: block j is
 * the words x0(k0,k2), x1(k0,k2), x0(k1,k3), x1(k1,k3). The filter comes in the build's layout
 * (mcugen/codegen/lower/opt_conv_2d.py conv_layout): per pair of channels a and b, block j is
 * the bytes a.k0 b.k0 a.k2 b.k2 then a.k1 b.k1 a.k3 b.k3, so one load and SXTB16 give (a.k0,
 * a.k2), with ROR 8 (b.k0, b.k2): two SMLAD each per pixel. A block of four depth values of two
 * channels for two pixels is 16 multiply-adds in 16 instructions (2 LDRD of the window, 2 LDR,
 * 4 SXTB16, 8 SMLAD). Depths not a multiple of 4 end in a block whose missing values are 0 in
 * the window, against each channel's last depth % 4 weights, stored first in the filter and read
 * as one word: the bytes past them multiply those zeros. Windows: mcu/conv_2d_s8_window.h.
 *
 * Requantisation (TFLM's MultiplyByQuantizedMultiplier, then the output offset and the clamp)
 * per output from the channel's record (mcu/kernels/conv_2d.h): SMMLAR of acc << (left + 1)
 * and the multiplier is SaturatingRoundingDoublingHighMul (mcu/requant.h says why, the build
 * proves the shifted accumulator fits), its accumulator adds the rounding of
 * RoundingDivideByPOT, the output offset times 2^right, and -1 for a negative accumulator
 * (round half away from zero; x = 0 from a negative accumulator has low bits 0, never a tie),
 * then one shift right.
 *
 * mcu_conv_2d_s8_ort: the same sums with onnxruntime's output stage instead (mcu_ort_out of
 * mcu_conv_2d_s8_ort_params_t's `ort`; `--onnx-numerics ort`), as reference/ort_conv.c computes
 * it: the sums are the same integers (the folded bias is the build's, checked to fit int32). */
#include <string.h>

#include "mcu/conv_2d_s8_window.h" /* and the kernel's, quant, simd and window headers */

/* ---- the window, expanded ---------------------------------------------------------------- */

/* `n` blocks of four bytes from `src` into one pixel's words of the pair buffer `x`, two
 * blocks a pass. */
static inline void expand(uint32_t *x, const int8_t *src, int32_t n) {
  const int8_t *end = src + 4 * (n & ~1);
  while (src != end) {
    uint32_t w0 = mcu_load_u32(src), w1 = mcu_load_u32(src + 4);
    x[0] = mcu_sxtb16(w0);
    x[2] = mcu_sxtb16_ror8(w0);
    x[4] = mcu_sxtb16(w1);
    x[6] = mcu_sxtb16_ror8(w1);
    x += 8;
    src += 8;
  }
  if (n & 1) {
    uint32_t w = mcu_load_u32(src);
    x[0] = mcu_sxtb16(w);
    x[2] = mcu_sxtb16_ror8(w);
  }
}

/* `n` blocks of the padding value, both lanes. */
static void fill(uint32_t *x, uint32_t pad2, int32_t n) {
  for (int32_t j = 0; j < n; ++j) {
    x[4 * j] = pad2;
    x[4 * j + 2] = pad2;
  }
}

/* Window rows straight from the image into the words (in_c a multiple of 4). */
static void expand_window(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const int8_t *in,
                          int32_t y0, int32_t x0, uint32_t *x) {
  uint32_t pad2 = mcu_pack16(p->pad_value, p->pad_value);
  int32_t tap_blocks = d->s.in_c / 4;
  int contiguous = contiguous_rows(p, d, x0);
  for (int32_t ky = 0; ky < d->s.k_h; ++ky, x += 4 * d->s.k_w * tap_blocks) {
    int32_t y = y0 + ky * p->win.dilation_h;
    if (y < 0 || y >= d->s.in_h) {
      fill(x, pad2, d->s.k_w * tap_blocks);
      continue;
    }
    const int8_t *row = in + y * d->s.in_w * d->s.in_c;
    if (contiguous) {
      expand(x, row + x0 * d->s.in_c, d->s.k_w * tap_blocks);
      continue;
    }
    for (int32_t kx = 0; kx < d->s.k_w; ++kx) {
      int32_t xx = x0 + kx * p->win.dilation_w;
      uint32_t *dst = x + 4 * kx * tap_blocks;
      if (xx >= 0 && xx < d->s.in_w) {
        expand(dst, row + xx * d->s.in_c, tap_blocks);
      } else {
        fill(dst, pad2, tap_blocks);
      }
    }
  }
}

/* Pixel q's window into the words of slot `slot` (0 or 1) of `x`: windows that cross the
 * image's border or have dilated rows, tap by tap. */
static __attribute__((noinline)) void pixel_window(const mcu_conv_2d_s8_params_t *p,
                                                   const dims_t *d, const int8_t *input,
                                                   pixel_t q, uint32_t *x, int8_t *col) {
  const int8_t *in = input + q.b * d->s.in_h * d->s.in_w * d->s.in_c;
  int32_t y0 = q.oy * p->win.stride_h - p->win.pad_h;
  int32_t x0 = q.ox * p->win.stride_w - p->win.pad_w;
  if (d->s.in_c % 4 == 0) {
    expand_window(p, d, in, y0, x0, x);
    return;
  }
  gather_window(p, d, in, y0, x0, col);
  expand(x, col, d->blocks + (d->tail != 0));
}

/* Pixel q's window the short way when it lies inside the image with contiguous rows (1 when
 * done): each row one run, expanded straight from the image when a row is whole blocks, else
 * copied as bytes into `col` and expanded from there. */
static inline __attribute__((always_inline)) int fast_window(const mcu_conv_2d_s8_params_t *p,
                                                             const dims_t *d, const fast_t *g,
                                                             const int8_t *input, pixel_t q,
                                                             uint32_t *x, int8_t *col) {
  int32_t y0 = q.oy * p->win.stride_h - p->win.pad_h;
  int32_t x0 = q.ox * p->win.stride_w - p->win.pad_w;
  if (y0 < 0 || y0 > g->y_max || x0 < 0 || x0 > g->x_max) {
    return 0;
  }
  const int8_t *src = input + q.b * g->image + (y0 * d->s.in_w + x0) * d->s.in_c;
  if (g->run % 4 == 0) {
    for (int32_t ky = 0; ky < d->s.k_h; ++ky, x += g->run, src += g->step) {
      expand(x, src, g->run / 4);
    }
    return 1;
  }
  if (g->run == 9 && d->s.k_h == 3) { /* the 3x3 stem of three channels, unrolled */
    for (int32_t ky = 0; ky < 3; ++ky, col += 9, src += g->step) {
      mcu_store_u32(col, mcu_load_u32(src));
      mcu_store_u32(col + 4, mcu_load_u32(src + 4));
      col[8] = src[8];
    }
    expand(x, col - 27, 7);
    return 1;
  }
  int8_t *dst = col;
  for (int32_t ky = 0; ky < d->s.k_h; ++ky, dst += g->run, src += g->step) {
    copy_bytes(dst, src, g->run);
  }
  expand(x, col, d->blocks + (d->tail != 0));
  return 1;
}

/* ---- the products ------------------------------------------------------------------------ */

/* One block of four depth values of a pair of channels (`w`, 8 bytes) against both pixels
 * (`x`, 4 words): 16 multiply-adds. */
#define MCU_CONV_BLOCK(x, w)                                                                       \
  do {                                                                                             \
    uint32_t x0_ = (x)[0], x1_ = (x)[1];                                                           \
    uint32_t wa_ = mcu_load_u32(w), wb_ = mcu_load_u32((w) + 4);                                   \
    uint32_t e_ = mcu_sxtb16(wa_);                                                                 \
    a00 = mcu_smlad(e_, x0_, a00);                                                                 \
    a01 = mcu_smlad(e_, x1_, a01);                                                                 \
    e_ = mcu_sxtb16_ror8(wa_);                                                                     \
    a10 = mcu_smlad(e_, x0_, a10);                                                                 \
    a11 = mcu_smlad(e_, x1_, a11);                                                                 \
    x0_ = (x)[2];                                                                                  \
    x1_ = (x)[3];                                                                                  \
    e_ = mcu_sxtb16(wb_);                                                                          \
    a00 = mcu_smlad(e_, x0_, a00);                                                                 \
    a01 = mcu_smlad(e_, x1_, a01);                                                                 \
    e_ = mcu_sxtb16_ror8(wb_);                                                                     \
    a10 = mcu_smlad(e_, x0_, a10);                                                                 \
    a11 = mcu_smlad(e_, x1_, a11);                                                                 \
  } while (0)

/* Two pixels against a pair of channels: acc[channel][pixel]; four blocks a pass (the loop's
 * own instructions once per 64 multiply-adds), then the rest. */
static void dot_pair(const uint32_t *x, const int8_t *w, int32_t blocks, int32_t acc[2][2]) {
  int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
  const uint32_t *end = x + 4 * (blocks & ~3);
  while (x != end) {
    MCU_CONV_BLOCK(x, w);
    MCU_CONV_BLOCK(x + 4, w + 8);
    MCU_CONV_BLOCK(x + 8, w + 16);
    MCU_CONV_BLOCK(x + 12, w + 24);
    x += 16;
    w += 32;
  }
  for (int32_t j = 0; j < (blocks & 3); ++j, x += 4, w += 8) {
    MCU_CONV_BLOCK(x, w);
  }
  acc[0][0] = a00;
  acc[0][1] = a01;
  acc[1][0] = a10;
  acc[1][1] = a11;
}

/* Half a block of dot_quad's assembly: two words of the window against one word of each of
 * the four channels' (k0, k2) or (k1, k3) pairs. */
#define DOT_QUAD_HALF_ASM "ldrd %[x0], %[x1], [%[xp]], #8\n\t" CONV_QUAD_HALF_ASM

/* Two pixels against four channels, sums s[2 * channel + pixel]. The filter's block j of a
 * group of four channels is the first pair's word (k0, k2), the second pair's, then their
 * words (k1, k3): each load of the window's words serves four channels, 32 multiply-adds in
 * 30 instructions. The DSP build runs it in assembly (GCC spills with 8 sums, 4 operands and 2
 * pointers live): 33 instructions a block with the loop's own. Inlined, so the sums stay in
 * registers for the requantisation. */
static inline __attribute__((always_inline)) void dot_quad(const uint32_t *x, const int8_t *w,
                                                           int32_t blocks, int32_t s[8]) {
  const uint32_t *end = x + 4 * blocks;
#if MCU_SIMD_DSP && defined(__OPTIMIZE__)
  if (blocks > 0) {
    uint32_t x0, x1, word, e;
    __asm__ volatile(
        "1:\n\t" DOT_QUAD_HALF_ASM DOT_QUAD_HALF_ASM
        "ldr %[wd], %[end]\n\t"
        "cmp %[xp], %[wd]\n\t"
        "bne 1b"
        : [a00] "+r"(s[0]), [a01] "+r"(s[1]), [a10] "+r"(s[2]), [a11] "+r"(s[3]),
          [a20] "+r"(s[4]), [a21] "+r"(s[5]), [a30] "+r"(s[6]), [a31] "+r"(s[7]), [xp] "+r"(x),
          [wp] "+r"(w),
          [x0] "=&r"(x0), [x1] "=&r"(x1), [wd] "=&r"(word), [e] "=&r"(e)
        : [end] "m"(end)
        : "cc", "memory");
  }
#else
  for (; x != end; x += 4, w += 16) {
    for (int32_t h = 0; h < 2; ++h) { /* the words (k0, k2), then (k1, k3) */
      uint32_t wa = mcu_load_u32(w + 8 * h), wb = mcu_load_u32(w + 8 * h + 4);
      quad_half(wa, wb, x[2 * h], s, 2);
      quad_half(wa, wb, x[2 * h + 1], s + 1, 2);
    }
  }
#endif
}

/* Two pixels against one channel whose weights are blocks of four in order: acc[pixel]. */
static void dot_one(const uint32_t *x, const int8_t *w, int32_t blocks, int32_t acc[2]) {
  int32_t a0 = acc[0], a1 = acc[1];
  for (int32_t j = 0; j < blocks; ++j, x += 4, w += 4) {
    uint32_t wa = mcu_load_u32(w);
    uint32_t e = mcu_sxtb16(wa);
    uint32_t o = mcu_sxtb16_ror8(wa);
    a0 = mcu_smlad(o, x[2], mcu_smlad(e, x[0], a0));
    a1 = mcu_smlad(o, x[3], mcu_smlad(e, x[1], a1));
  }
  acc[0] = a0;
  acc[1] = a1;
}

/* The channels' shared facts for `finish`. */
typedef struct {
  const int32_t *rec;     /* records, MCU_CONV_REC_WORDS per channel */
  const int8_t *tails;    /* each channel's last depth % 4 weights */
  const uint32_t *x_tail; /* the pair's tail block */
  int32_t lo;
  int32_t hi;
  const mcu_ort_out_t *ort; /* onnxruntime's output stage (mode ORT_OUT only) */
} finish_t;

/* `finish`'s output stage besides 0 (clamped to [lo, hi]) and 1 (all of int8). */
#define ORT_OUT 2

/* Channel c's tail, then its outputs: out1[c] first, then out0[c] (out1 is out0 when there is
 * one pixel: the real one is written last). `full` ORT_OUT: onnxruntime's output stage. */
static inline __attribute__((always_inline)) void finish(const dims_t *d, const finish_t *f,
                                                         int32_t c, int32_t acc0, int32_t acc1,
                                                         int full, int8_t *out0, int8_t *out1) {
  if (d->tail != 0) {
    uint32_t w = tail_word(f->tails + c * d->tail, d);
    uint32_t e = mcu_sxtb16(w), o = mcu_sxtb16_ror8(w);
    acc0 = mcu_smlad(o, f->x_tail[2], mcu_smlad(e, f->x_tail[0], acc0));
    acc1 = mcu_smlad(o, f->x_tail[3], mcu_smlad(e, f->x_tail[1], acc1));
  }
  if (full == ORT_OUT) {
    out1[c] = (int8_t)mcu_ort_out(f->ort, acc1, c);
    out0[c] = (int8_t)mcu_ort_out(f->ort, acc0, c);
    return;
  }
  two_t v = requantize(f->rec + c * MCU_CONV_REC_WORDS, acc0, acc1, full, f->lo, f->hi);
  out1[c] = (int8_t)v.v1;
  out0[c] = (int8_t)v.v0;
}

static inline int32_t bias(const finish_t *f, int32_t c) {
  return f->rec[c * MCU_CONV_REC_WORDS + MCU_CONV_REC_BIAS];
}

/* Every output channel of the pixel pair in `x`: out0[c] and out1[c]. `full`: the activation
 * range is all of int8 (one SSAT per output; a constant at each call, so each compiles its
 * own clamp), or ORT_OUT. */
static inline __attribute__((always_inline)) void channels_clamped(
    const mcu_conv_2d_s8_params_t *p, const dims_t *d, const uint32_t *x, const int8_t *w,
    int8_t *out0, int8_t *out1, int full) {
  finish_t f = {p->channels, w, x + 4 * d->blocks, p->act_min, p->act_max, NULL};
  mcu_ort_out_t ort;
  if (full == ORT_OUT) { /* p is an mcu_conv_2d_s8_ort_params_t's `conv` */
    ort = mcu_ort_out_of(&((const mcu_conv_2d_s8_ort_params_t *)p)->ort);
    f.ort = &ort;
  }
  const int8_t *blocks = w + d->s.out_c * d->tail;
  int32_t c = 0;
  for (; c + 4 <= d->s.out_c; c += 4) {
    int32_t s[8] = {bias(&f, c),     bias(&f, c),     bias(&f, c + 1), bias(&f, c + 1),
                    bias(&f, c + 2), bias(&f, c + 2), bias(&f, c + 3), bias(&f, c + 3)};
    dot_quad(x, blocks + c * 4 * d->blocks, d->blocks, s);
    finish(d, &f, c, s[0], s[1], full, out0, out1);
    finish(d, &f, c + 1, s[2], s[3], full, out0, out1);
    finish(d, &f, c + 2, s[4], s[5], full, out0, out1);
    finish(d, &f, c + 3, s[6], s[7], full, out0, out1);
  }
  for (; c + 2 <= d->s.out_c; c += 2) {
    int32_t acc[2][2] = {{bias(&f, c), bias(&f, c)}, {bias(&f, c + 1), bias(&f, c + 1)}};
    dot_pair(x, blocks + c * 4 * d->blocks, d->blocks, acc);
    finish(d, &f, c, acc[0][0], acc[0][1], full, out0, out1);
    finish(d, &f, c + 1, acc[1][0], acc[1][1], full, out0, out1);
  }
  if (c < d->s.out_c) {
    int32_t acc[2] = {bias(&f, c), bias(&f, c)};
    dot_one(x, blocks + c * 4 * d->blocks, d->blocks, acc);
    finish(d, &f, c, acc[0], acc[1], full, out0, out1);
  }
}

static void channels(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const uint32_t *x,
                     const int8_t *w, int8_t *out0, int8_t *out1) {
  full_range(p) ? channels_clamped(p, d, x, w, out0, out1, 1)
                : channels_clamped(p, d, x, w, out0, out1, 0);
}

static void channels_ort(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const uint32_t *x,
                         const int8_t *w, int8_t *out0, int8_t *out1) {
  channels_clamped(p, d, x, w, out0, out1, ORT_OUT);
}

/* The kernel, its output stage by `ort` (a constant at each call). */
static inline __attribute__((always_inline)) mcu_status_t run(const mcu_node_t *node,
                                                              mcu_context_t *ctx, int ort) {
  const mcu_conv_2d_s8_params_t *p = node->params;
  dims_t d;
  operands_t k;
  MCU_TRY(conv_operands(node, ctx, 1, &d, &k));
  /* scratch: the pair's words (4 per block, the tail's block included), then the byte window */
  uint32_t *x = k.scratch;
  int32_t words = 4 * (d.blocks + (d.tail != 0));
  int8_t *col = (int8_t *)(x + words);
  if (d.s.in_c % 4 != 0) {
    memset(col + d.depth, 0, (size_t)(words - d.depth)); /* the tail's missing values */
  }
  int32_t pixels = d.s.batches * d.s.out_h * d.s.out_w;
  fast_t g = fast_geometry(p, &d);
  pixel_t q = {0, 0, 0};
  int32_t out_s = mcu_output_stride(node, d.s.out_c); /* a channel slice's pixel stride */
  for (int32_t i = 0; i < pixels; i += 2) {
    int two = i + 1 < pixels;
    if (!fast_window(p, &d, &g, k.input, q, x, col)) {
      pixel_window(p, &d, k.input, q, x, col);
    }
    next(&q, &d);
    if (two) {
      if (!fast_window(p, &d, &g, k.input, q, x + 1, col)) {
        pixel_window(p, &d, k.input, q, x + 1, col);
      }
      next(&q, &d);
    } else {
      for (int32_t k = 0; k < words; k += 2) { /* the last pixel alone: both slots hold it */
        x[k + 1] = x[k];
      }
    }
    int8_t *out0 = k.output + i * out_s;
    (ort ? channels_ort : channels)(p, &d, x, k.weights, out0, two ? out0 + out_s : out0);
  }
  return MCU_OK;
}

mcu_status_t mcu_conv_2d_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  return run(node, ctx, 0);
}

mcu_status_t mcu_conv_2d_s8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_ort_requant_t *ort = &((const mcu_conv_2d_s8_ort_params_t *)node->params)->ort;
  MCU_ENSURE_MODEL(ort->scales != NULL, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(ort->num_channels == 1 ||
                       ort->num_channels == mcu_output_tensor(ctx, node, 0)->dims[3],
                   MCU_ERR_BAD_MODEL);
  return run(node, ctx, 1);
}
