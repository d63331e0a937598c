/* CONV_2D int8 of a first layer: a filter of three rows over one or three input channels,
 * dilation 1, any stride and padding, bit-exact with reference/conv_2d.c (mcu_conv_2d_int8).
 *
 * The input is widened once per strip of output pixels into a band of columns in the scratch:
 * column x holds the three filter rows' pixels at x, in 16-bit lanes, padded taps (rows or
 * columns outside the image) as the input zero point, which with the input offset folded into
 * the bias adds nothing, as the reference kernel's skipped tap. A column of three channels is
 * five words, (a0, a2) (b0, b2) (c0, c2) (a1, b1) (c1, -) for rows a, b, c (what SXTB16 gives of
 * one load per row, and one PKHBT); of one channel two, (a, b) (c, -). A lane marked - holds any
 * value: its weight is 0. An output pixel's window is then k_w columns in a row of the band,
 * `window` words (rounded up to even, the extra word again against a zero weight), starting
 * stride_w columns after the previous pixel's.
 *
 * The build lays the weights out in the same lanes as 16-bit pairs (mcugen/codegen/lower/
 * _conv_stem.py), per group of four output channels: the group's biases, then per chunk of four
 * window words (two for the last when `window` is not a multiple of 4) each channel's words,
 * then the channels' requantisation records. A pixel's group is then LDM of four window words
 * and, per channel, LDM of its four weight words and four SMLAD: 16 SMLAD in 21 instructions,
 * the sums in registers, the window words never expanded again. Requantisation as conv_2d_s8.c
 * (mcu/kernels/conv_2d.h's records) but for the left shift, which the build folded into the
 * weights and biases (the sums come out shifted); on the DSP cores the 3x3 windows' groups and
 * a full int8 activation range run in inline assembly, seven instructions an output.
 * mcu_conv_2d_stem_s8_ort runs the same band and sums with
 * onnxruntime's output stage (`--onnx-numerics ort`). */
#include <string.h>

#include "mcu/kernels/conv_2d.h"
#include "mcu/ort_requant.h"
#include "mcu/quant.h"
#include "mcu/simd.h"
#include "mcu/window.h"

typedef struct {
  mcu_window_dims_t s;
  int32_t col_words; /* words of a band column: 5 for three channels, 2 for one */
} dims_t;

/* The helpers below are inlined into each entry point, as they were into the one before the ort
 * entry point shared them (out of line, VWW's stem ran 8,000 more instructions). */
static inline __attribute__((always_inline)) mcu_status_t read_dims(const mcu_node_t *node,
                                                                  const mcu_context_t *ctx,
                                                                  dims_t *d) {
  MCU_TRY(mcu_window_node_dims(node, ctx, 0, 1, &d->s));
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  d->col_words = d->s.in_c == 3 ? 5 : 2;
  MCU_ENSURE_MODEL(d->s.k_h == 3 && (d->s.in_c == 1 || d->s.in_c == 3), MCU_ERR_BAD_MODEL);
  /* a convolution [O, 3, KW, I], or a depthwise one of one input channel [1, 3, KW, O] */
  MCU_ENSURE_MODEL((filter->dims[0] == d->s.out_c && d->s.k_c == d->s.in_c) ||
                       (d->s.in_c == 1 && filter->dims[0] == 1 && d->s.k_c == d->s.out_c),
                   MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* ---- the band ---------------------------------------------------------------------------- */

/* PKHBT: the low lanes of `lo` and `hi` (GCC writes mcu_pack16 as two instructions). */
static inline uint32_t pack_lo(uint32_t lo, uint32_t hi) {
#if MCU_SIMD_DSP
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
  return r;
#else
  return mcu_pack16((int32_t)lo, (int32_t)hi);
#endif
}

/* One column from the words at the three rows' pixels (a pixel's channels in the low bytes). */
static inline __attribute__((always_inline)) void column(uint32_t *dst, uint32_t a, uint32_t b,
                                                         uint32_t c, int32_t in_c) {
  uint32_t sa = mcu_sxtb16(a), sb = mcu_sxtb16(b), sc = mcu_sxtb16(c);
  if (in_c == 1) {
    dst[0] = pack_lo(sa, sb);
    dst[1] = sc;
    return;
  }
  dst[0] = sa;
  dst[1] = sb;
  dst[2] = sc;
  dst[3] = pack_lo(mcu_sxtb16_ror8(a), mcu_sxtb16_ror8(b));
  dst[4] = mcu_sxtb16_ror8(c);
}

/* The word at pixel x of `row` (NULL: a row outside the image), the pad word outside it; the
 * bytes past the row's end are not read. */
static uint32_t pixel_word(const int8_t *row, int32_t x, const dims_t *d, uint32_t pad) {
  if (row == NULL || x < 0 || x >= d->s.in_w) {
    return pad;
  }
  uint32_t w = pad;
  memcpy(&w, row + x * d->s.in_c, (size_t)d->s.in_c);
  return w;
}

/* Columns x0 .. x0 + cols - 1 of rows y0 .. y0 + 2 of `image` into `dst`. */
static inline __attribute__((always_inline)) void band(const dims_t *d, uint32_t pad,
                                                      const int8_t *image, int32_t y0, int32_t x0,
                                                      int32_t cols, uint32_t *dst) {
  const int8_t *rows[3];
  int inside = 1;
  for (int32_t ky = 0; ky < 3; ++ky) {
    int32_t y = y0 + ky;
    int ok = y >= 0 && y < d->s.in_h;
    rows[ky] = ok ? image + y * d->s.in_w * d->s.in_c : NULL;
    inside &= ok;
  }
  /* [lo, hi): columns whose word loads stay inside their rows */
  int32_t lo = mcu_clamp_i32(-x0, 0, cols), hi = lo;
  int32_t row_bytes = d->s.in_w * d->s.in_c;
  if (inside && row_bytes >= 4) {
    hi = mcu_clamp_i32((row_bytes - 4) / d->s.in_c - x0 + 1, lo, cols);
  }
  int32_t i = 0;
  for (; i < lo; ++i, dst += d->col_words) {
    column(dst, pad, pad, pad, d->s.in_c);
  }
  if (i < hi) {
    int32_t step = d->s.in_c;
    const int8_t *a = rows[0] + (x0 + i) * step, *b = rows[1] + (x0 + i) * step;
    const int8_t *c = rows[2] + (x0 + i) * step;
    if (step == 1) { /* (a, b) (c, -) from the bytes */
      for (; i < hi; ++i, dst += 2) {
        dst[0] = pack_lo((uint32_t)(int32_t)*a++, (uint32_t)(int32_t)*b++);
        dst[1] = (uint32_t)(int32_t)*c++;
      }
    } else {
#if MCU_SIMD_DSP && defined(__OPTIMIZE__)
      int32_t count = hi - i; /* one column in 11 instructions and the loop's 2 */
      __asm__ volatile("1:\n\t"
                       "ldr r4, [%[a]], #3\n\t"
                       "ldr r5, [%[b]], #3\n\t"
                       "ldr r6, [%[c]], #3\n\t"
                       "sxtb16 r7, r4, ror #8\n\t"
                       "sxtb16 r4, r4\n\t"
                       "sxtb16 r8, r5, ror #8\n\t"
                       "sxtb16 r5, r5\n\t"
                       "pkhbt r7, r7, r8, lsl #16\n\t"
                       "sxtb16 r8, r6, ror #8\n\t"
                       "sxtb16 r6, r6\n\t"
                       "stm %[d]!, {r4-r8}\n\t"
                       "subs %[n], %[n], #1\n\t"
                       "bne 1b"
                       : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [d] "+r"(dst), [n] "+r"(count)
                       :
                       : "r4", "r5", "r6", "r7", "r8", "cc", "memory");
      i = hi;
#else
      for (; i < hi; ++i, dst += 5, a += 3, b += 3, c += 3) {
        column(dst, mcu_load_u32(a), mcu_load_u32(b), mcu_load_u32(c), 3);
      }
#endif
    }
  }
  for (; i < cols; ++i, dst += d->col_words) {
    int32_t x = x0 + i;
    column(dst, pixel_word(rows[0], x, d, pad), pixel_word(rows[1], x, d, pad),
           pixel_word(rows[2], x, d, pad), d->s.in_c);
  }
}

/* ---- the products ------------------------------------------------------------------------ */

#if MCU_SIMD_DSP && defined(__OPTIMIZE__)
#define MCU_STEM_ASM 1
/* Four window words (r4-r7) against four channels' four words (r8-r11 in turn). */
#define MCU_STEM_CHUNK4                                                                            \
  "ldm %[xp]!, {r4-r7}\n\t"                                                                        \
  "ldm %[wp]!, {r8-r11}\n\t"                                                                       \
  "smlad r0, r4, r8, r0\n\t"                                                                 \
  "smlad r0, r5, r9, r0\n\t"                                                                 \
  "smlad r0, r6, r10, r0\n\t"                                                                \
  "smlad r0, r7, r11, r0\n\t"                                                                \
  "ldm %[wp]!, {r8-r11}\n\t"                                                                       \
  "smlad r1, r4, r8, r1\n\t"                                                                 \
  "smlad r1, r5, r9, r1\n\t"                                                                 \
  "smlad r1, r6, r10, r1\n\t"                                                                \
  "smlad r1, r7, r11, r1\n\t"                                                                \
  "ldm %[wp]!, {r8-r11}\n\t"                                                                       \
  "smlad r2, r4, r8, r2\n\t"                                                                 \
  "smlad r2, r5, r9, r2\n\t"                                                                 \
  "smlad r2, r6, r10, r2\n\t"                                                                \
  "smlad r2, r7, r11, r2\n\t"                                                                \
  "ldm %[wp]!, {r8-r11}\n\t"                                                                       \
  "smlad r3, r4, r8, r3\n\t"                                                                 \
  "smlad r3, r5, r9, r3\n\t"                                                                 \
  "smlad r3, r6, r10, r3\n\t"                                                                \
  "smlad r3, r7, r11, r3\n\t"
/* Three window words (r4-r6) against four channels' three words (r8-r10 in turn). */
#define MCU_STEM_CHUNK3                                                                            \
  "ldm %[xp]!, {r4-r6}\n\t"                                                                        \
  "ldm %[wp]!, {r8-r10}\n\t"                                                                       \
  "smlad r0, r4, r8, r0\n\t"                                                                       \
  "smlad r0, r5, r9, r0\n\t"                                                                       \
  "smlad r0, r6, r10, r0\n\t"                                                                      \
  "ldm %[wp]!, {r8-r10}\n\t"                                                                       \
  "smlad r1, r4, r8, r1\n\t"                                                                       \
  "smlad r1, r5, r9, r1\n\t"                                                                       \
  "smlad r1, r6, r10, r1\n\t"                                                                      \
  "ldm %[wp]!, {r8-r10}\n\t"                                                                       \
  "smlad r2, r4, r8, r2\n\t"                                                                       \
  "smlad r2, r5, r9, r2\n\t"                                                                       \
  "smlad r2, r6, r10, r2\n\t"                                                                      \
  "ldm %[wp]!, {r8-r10}\n\t"                                                                       \
  "smlad r3, r4, r8, r3\n\t"                                                                       \
  "smlad r3, r5, r9, r3\n\t"                                                                       \
  "smlad r3, r6, r10, r3\n\t"
/* Two window words (r4, r5) against four channels' two words (r8-r11: two channels a load). */
#define MCU_STEM_CHUNK2                                                                            \
  "ldrd r4, r5, [%[xp]], #8\n\t"                                                                   \
  "ldm %[wp]!, {r8-r11}\n\t"                                                                       \
  "smlad r0, r4, r8, r0\n\t"                                                                 \
  "smlad r0, r5, r9, r0\n\t"                                                                 \
  "smlad r1, r4, r10, r1\n\t"                                                                \
  "smlad r1, r5, r11, r1\n\t"                                                                \
  "ldm %[wp]!, {r8-r11}\n\t"                                                                       \
  "smlad r2, r4, r8, r2\n\t"                                                                 \
  "smlad r2, r5, r9, r2\n\t"                                                                 \
  "smlad r3, r4, r10, r3\n\t"                                                                \
  "smlad r3, r5, r11, r3\n\t"
/* Sum `a` (shifted) by its record (r4 multiplier, r5 right shift, r6 constant) to int8, into
 * byte `byte` of the window pointer's register (dead by then); right > 0, so the sign's -1
 * for a negative sum is the sum's sign bit. */
#define MCU_STEM_REQUANTIZE(a, byte)                                                               \
  "ldm %[wp]!, {r4-r6}\n\t"                                                                        \
  "add r6, r6, " a ", asr #31\n\t"                                                                 \
  "smmlar r8, " a ", r4, r6\n\t"                                                                   \
  "asr r8, r8, r5\n\t"                                                                             \
  "ssat r8, #8, r8\n\t"                                                                            \
  "bfi %[xp], r8, #" byte ", #8\n\t"
#define MCU_STEM_OUTPUTS                                                                           \
  MCU_STEM_REQUANTIZE("r0", "0")                                                                   \
  MCU_STEM_REQUANTIZE("r1", "8") MCU_STEM_REQUANTIZE("r2", "16") MCU_STEM_REQUANTIZE("r3", "24")
#define MCU_STEM_OPERANDS                                                                          \
  : [xp] "+r"(xp), [wp] "+r"(wp)                                                                   \
  :                                                                                                \
  : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "memory"

/* `n` pixels of the band `x` (`step` words apart) into `out`, every group of four channels in
 * assembly: three columns of three channels (`wide`) or of one, the full int8 range. */
static inline __attribute__((always_inline)) void pixels_asm(const uint32_t *x, int32_t step,
                                                             int32_t n, const int32_t *weights,
                                                             int32_t groups, int8_t *out,
                                                             int wide) {
  for (; n > 0; --n, x += step) {
    const int32_t *w = weights;
    for (int32_t g = groups; g > 0; --g, out += 4) {
      /* the sums in r0-r3 (the biases load as one LDM), the window and the weights in r12
       * and lr: GCC left to itself finds no registers beside the twelve the assembly takes */
      register uint32_t xp __asm__("r12") = (uint32_t)(uintptr_t)x; /* then the outputs */
      register const int32_t *wp __asm__("lr") = w;
      if (wide) {
        __asm__ volatile("ldm %[wp]!, {r0-r3}\n\t" MCU_STEM_CHUNK4 MCU_STEM_CHUNK4 MCU_STEM_CHUNK4
                             MCU_STEM_CHUNK3
                             MCU_STEM_OUTPUTS MCU_STEM_OPERANDS);
      } else {
        __asm__ volatile("ldm %[wp]!, {r0-r3}\n\t" MCU_STEM_CHUNK4 MCU_STEM_CHUNK2 MCU_STEM_OUTPUTS
                             MCU_STEM_OPERANDS);
      }
      w = wp;
      mcu_store_u32(out, xp);
    }
  }
}

/* Group `*wp`'s four sums of one pixel's window `x` (three columns of three channels, `wide`,
 * or of one) in s[0..3], the products of pixels_asm; `*wp` moved to the group's records. */
static inline __attribute__((always_inline)) void group_asm(const uint32_t *x,
                                                            const int32_t **w, int32_t s[4],
                                                            int wide) {
  register int32_t a0 __asm__("r0");
  register int32_t a1 __asm__("r1");
  register int32_t a2 __asm__("r2");
  register int32_t a3 __asm__("r3");
  register uint32_t xp __asm__("r12") = (uint32_t)(uintptr_t)x;
  register const int32_t *wp __asm__("lr") = *w;
#define MCU_STEM_SUMS                                                                              \
  : "=&r"(a0), "=&r"(a1), "=&r"(a2), "=&r"(a3), [xp] "+r"(xp), [wp] "+r"(wp)                     \
  :                                                                                                \
  : "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "memory"
  if (wide) {
    __asm__ volatile("ldm %[wp]!, {r0-r3}\n\t" MCU_STEM_CHUNK4 MCU_STEM_CHUNK4 MCU_STEM_CHUNK4
                         MCU_STEM_CHUNK3 MCU_STEM_SUMS);
  } else {
    __asm__ volatile("ldm %[wp]!, {r0-r3}\n\t" MCU_STEM_CHUNK4 MCU_STEM_CHUNK2 MCU_STEM_SUMS);
  }
#undef MCU_STEM_SUMS
  *w = wp;
  s[0] = a0;
  s[1] = a1;
  s[2] = a2;
  s[3] = a3;
}
#else
#define MCU_STEM_ASM 0
#endif

/* Group `w`'s four sums of one pixel's window `x`: s[0..3]; returns `w` moved to the group's
 * records (chunks of four window words, the last of the rest). */
static inline __attribute__((always_inline)) const int32_t *group(const uint32_t *x,
                                                                  const int32_t *w,
                                                                  int32_t window, int32_t s[4]) {
  int32_t a0 = w[0], a1 = w[1], a2 = w[2], a3 = w[3];
  w += 4;
  for (int32_t j = 0; j < window; j += 4) {
    int32_t n = window - j < 4 ? window - j : 4;
    for (int32_t k = 0; k < n; ++k) {
      a0 = mcu_smlad((uint32_t)w[k], x[j + k], a0);
      a1 = mcu_smlad((uint32_t)w[n + k], x[j + k], a1);
      a2 = mcu_smlad((uint32_t)w[2 * n + k], x[j + k], a2);
      a3 = mcu_smlad((uint32_t)w[3 * n + k], x[j + k], a3);
    }
    w += 4 * n;
  }
  s[0] = a0;
  s[1] = a1;
  s[2] = a2;
  s[3] = a3;
  return w;
}

/* Shifted sum `acc` by record `rec` (multiplier, right shift > 0, constant), to [lo, hi]. */
static inline int8_t requantize(const int32_t *rec, int32_t acc, int32_t lo, int32_t hi) {
  int32_t v = mcu_smmlar(acc, rec[0], (acc >> 31) + rec[2]) >> rec[1];
  return (int8_t)mcu_clamp_i32(v, lo, hi);
}

/* A strip's `n` pixels from the band `x` into `out` (out_c channels a pixel). */
static void strip_outputs(const mcu_conv_2d_stem_s8_params_t *p, const dims_t *d,
                          const uint32_t *x, int32_t n, int8_t *out) {
  int32_t step = p->stride_w * d->col_words;
#if MCU_STEM_ASM
  /* every group whole, the full int8 range, a 3x3 window */
  if (d->s.out_c % 4 == 0 && p->act_min == -128 && p->act_max == 127) {
    if (p->window == 15) {
      pixels_asm(x, step, n, p->weights, d->s.out_c / 4, out, 1);
      return;
    }
    if (p->window == 6) {
      pixels_asm(x, step, n, p->weights, d->s.out_c / 4, out, 0);
      return;
    }
  }
#endif
  for (int32_t i = 0; i < n; ++i, x += step) {
    const int32_t *w = p->weights;
    for (int32_t c = 0; c < d->s.out_c; c += 4, w += 12) {
      int32_t s[4];
      w = group(x, w, p->window, s);
      for (int32_t k = 0; k < 4 && c + k < d->s.out_c; ++k) {
        *out++ = requantize(w + 3 * k, s[k], p->act_min, p->act_max);
      }
    }
  }
}

/* ---- onnxruntime's output stage (`--onnx-numerics ort`) --------------------------------- */

/* A strip's `n` pixels, each sum through mcu_ort_out (mcu/ort_requant.h), as the ort reference
 * kernel (reference/ort_conv.c) requantizes it: the build laid the weights out unshifted (left
 * shift 0) and proved |sum x scale| < 2^21 (mcugen/codegen/lower/ort_opt.py); the groups'
 * records are there but unused. The sums are the reference's integers: the same products, the
 * input offset folded into the bias, padded taps the input zero point (adding nothing). */
static void strip_outputs_ort(const mcu_conv_2d_stem_s8_params_t *p, const mcu_ort_out_t *o,
                              const dims_t *d, const uint32_t *x, int32_t n, int8_t *out) {
  int32_t step = p->stride_w * d->col_words;
#if MCU_STEM_ASM
  /* every group whole, a 3x3 window: the groups' sums in assembly */
  if (d->s.out_c % 4 == 0 && (p->window == 15 || p->window == 6)) {
    int wide = p->window == 15;
    for (int32_t i = 0; i < n; ++i, x += step) {
      const int32_t *w = p->weights;
      for (int32_t c = 0; c < d->s.out_c; c += 4, w += 12, out += 4) {
        int32_t s[4];
        group_asm(x, &w, s, wide);
        for (int32_t k = 0; k < 4; ++k) {
          out[k] = (int8_t)mcu_ort_out(o, s[k], c + k);
        }
      }
    }
    return;
  }
#endif
  for (int32_t i = 0; i < n; ++i, x += step) {
    const int32_t *w = p->weights;
    for (int32_t c = 0; c < d->s.out_c; c += 4, w += 12) {
      int32_t s[4];
      w = group(x, w, p->window, s);
      for (int32_t k = 0; k < 4 && c + k < d->s.out_c; ++k) {
        *out++ = (int8_t)mcu_ort_out(o, s[k], c + k);
      }
    }
  }
}

/* The strips of the layer; `ort` NULL: TFLite's requantisation, else onnxruntime's. */
static inline __attribute__((always_inline)) mcu_status_t run(
    const mcu_node_t *node, mcu_context_t *ctx, const mcu_conv_2d_stem_s8_params_t *p,
    const mcu_ort_out_t *ort) {
  dims_t d;
  MCU_TRY(read_dims(node, ctx, &d));
  MCU_ENSURE_MODEL(p->strip > 0 && p->window == d.s.k_w * d.col_words, MCU_ERR_BAD_MODEL);
  const int8_t *input = mcu_input(ctx, node, 0);
  int8_t *output = mcu_output(ctx, node, 0);
  MCU_ENSURE((const void *)output != (const void *)input, MCU_ERR_BAD_MODEL); /* never in place */
  uint32_t *x = mcu_scratch(ctx, node);
  MCU_ENSURE(x != NULL, MCU_ERR_BAD_MODEL);
  for (int32_t b = 0; b < d.s.batches; ++b) {
    const int8_t *image = input + b * d.s.in_h * d.s.in_w * d.s.in_c;
    for (int32_t oy = 0; oy < d.s.out_h; ++oy) {
      int32_t y0 = oy * p->stride_h - p->pad_h;
      for (int32_t ox = 0; ox < d.s.out_w; ox += p->strip) {
        int32_t n = d.s.out_w - ox < p->strip ? d.s.out_w - ox : p->strip;
        band(&d, (uint32_t)p->pad_word, image, y0, ox * p->stride_w - p->pad_w,
             (n - 1) * p->stride_w + d.s.k_w, x);
        int8_t *out = output + ((b * d.s.out_h + oy) * d.s.out_w + ox) * d.s.out_c;
        if (ort == NULL) {
          strip_outputs(p, &d, x, n, out);
        } else {
          strip_outputs_ort(p, ort, &d, x, n, out);
        }
      }
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_conv_2d_stem_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  return run(node, ctx, node->params, NULL);
}

mcu_status_t mcu_conv_2d_stem_s8_ort(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_conv_2d_stem_s8_ort_params_t *p = node->params;
  MCU_ENSURE_MODEL(p->rq.scales != NULL && p->rq.num_channels >= 1, MCU_ERR_BAD_MODEL);
  const mcu_ort_out_t out = mcu_ort_out_of(&p->rq);
  return run(node, ctx, &p->stem, &out);
}
