/* CONV_2D int8 with one group and any filter, stride, dilation and padding, bit-exact with
 * reference/conv_2d.c (mcu_conv_2d_int8), with no scratch: the rung below conv_2d_s8_col.c on
 * the ladder of kernels chosen for memory (mcugen/kernel_choice.py), where the reference kernel
 * was the only kernel without scratch (about 43 instructions a multiply-add on the M4).
 *
 * The input and the filter are read where they are (the filter as the model stores it, [O][KH]
 * [KW][I]). Per output pixel, the taps inside the image are found once: rows of the window
 * outside it are skipped, and with dilation_w 1 each row's taps inside it are one run of bytes,
 * in the image and in each filter row alike, so a run spans taps (kw pairs, triples and quads
 * of small in_c share words); with dilated columns a run is one tap. A run against four output
 * channels a word at a time: one load of the image and SXTAB16 / SXTAB16 ROR 8 with the input
 * offset in both lanes give (x0 + off, x2 + off) and (x1 + off, x3 + off), which meet each
 * channel's word (LDR, SXTB16 / SXTB16 ROR 8, SMLAD twice): 16 multiply-adds in 23
 * instructions; the run's last bytes one at a time. The offset is added to each input rather
 * than folded into the bias, so a skipped tap adds nothing, as the reference kernel's; the
 * records' bias is therefore the layer's own (mcugen/codegen/lower/opt_conv_lean.py), and their
 * requantisation conv_2d_s8.c's (requant_one). Pixels in the reference kernel's order. Never in
 * place. */
#include "mcu/conv_2d_s8_window.h"
#include "mcu/opt/conv_2d_s8_lean.h"

/* Assembly of one word of the image (4 depth values, `delta` bytes from the first channel's
 * word at `wp`) against four channels' words, the others `depth`, 2 * `depth` and `depth3`
 * bytes on: SXTAB16 adds the offset to the image's bytes, SXTB16 splits each weight word, 16
 * multiply-adds in 23 instructions. The image is addressed from the weights (one pointer steps
 * both). A last byte of a run: LDRSB, SXTAB16 (its low lane: the byte plus the offset) and
 * SMLABB, 4 multiply-adds in 10 instructions. */
#define LEAN_CHANNEL_ASM(LOAD, A)             \
  LOAD                                        \
  "sxtb16 %[e], %[wd]\n\t"                    \
  "smlad %[" A "], %[e], %[xe], %[" A "]\n\t" \
  "sxtb16 %[wd], %[wd], ror #8\n\t"           \
  "smlad %[" A "], %[wd], %[xo], %[" A "]\n\t"
#define LEAN_WORD_ASM                                                \
  "ldr %[xo], [%[wp], %[delta]]\n\t"                                 \
  "sxtab16 %[xe], %[off2], %[xo]\n\t"                                \
  "sxtab16 %[xo], %[off2], %[xo], ror #8\n\t"                        \
  LEAN_CHANNEL_ASM("ldr %[wd], [%[wp], %[depth]]\n\t", "a1")         \
  LEAN_CHANNEL_ASM("ldr %[wd], [%[wp], %[depth], lsl #1]\n\t", "a2") \
  LEAN_CHANNEL_ASM("ldr %[wd], [%[wp], %[depth3]]\n\t", "a3")        \
  LEAN_CHANNEL_ASM("ldr %[wd], [%[wp]], #4\n\t", "a0")
#define LEAN_BYTE_ASM                               \
  "ldrsb %[xo], [%[wp], %[delta]]\n\t"              \
  "sxtab16 %[xe], %[off2], %[xo]\n\t"               \
  "ldrsb %[wd], [%[wp], %[depth]]\n\t"              \
  "smlabb %[a1], %[xe], %[wd], %[a1]\n\t"           \
  "ldrsb %[wd], [%[wp], %[depth], lsl #1]\n\t"      \
  "smlabb %[a2], %[xe], %[wd], %[a2]\n\t"           \
  "ldrsb %[wd], [%[wp], %[depth3]]\n\t"             \
  "smlabb %[a3], %[xe], %[wd], %[a3]\n\t"           \
  "ldrsb %[wd], [%[wp]], #1\n\t"                    \
  "smlabb %[a0], %[xe], %[wd], %[a0]\n\t"

/* Four channels' sums over `rows` runs of the image (`x`, runs `x_row` bytes apart) and of each
 * filter row (`w`, channel k's `k * depth` bytes on, runs `w_row` apart), `n` bytes a run:
 * s[k] += sum of (x[j] + off) * w[k * depth + j]; per run its whole words, then its last
 * n % 4 bytes (assembly on a DSP core: 25 instructions a word, 12 a byte, 14 a run). Not
 * inlined: the assembly needs 14 registers. */
typedef struct {
  const int8_t *x;
  const int8_t *w;
  int32_t rows;
  int32_t n;
  int32_t x_row;
  int32_t w_row;
} runs_t;

static __attribute__((noinline)) void quad_runs(const runs_t *r, int32_t depth, uint32_t off2,
                                                int32_t s[4]) {
  int32_t a0 = s[0], a1 = s[1], a2 = s[2], a3 = s[3];
  const int8_t *x = r->x, *w = r->w;
  int32_t bytes = r->n & ~3, tail = r->n & 3;
#if MCU_SIMD_DSP && defined(__OPTIMIZE__)
  uint32_t xe, xo, wd, e;
  const int8_t *end;
  int32_t depth3 = 3 * depth, rows = r->rows;
  uint32_t delta = (uint32_t)(uintptr_t)x - (uint32_t)(uintptr_t)w;
  int32_t w_skip = r->w_row - r->n, delta_skip = r->x_row - r->w_row;
  __asm__ volatile("2:\n\t"
                   "ldr %[end], %[bytes]\n\t"
                   "add %[end], %[wp], %[end]\n\t"
                   "cmp %[wp], %[end]\n\t"
                   "beq 3f\n\t"
                   "1:\n\t" LEAN_WORD_ASM
                   "cmp %[wp], %[end]\n\t"
                   "bne 1b\n\t"
                   "3:\n\t"
                   "ldr %[e], %[tail]\n\t"
                   "add %[end], %[wp], %[e]\n\t"
                   "cmp %[wp], %[end]\n\t"
                   "beq 5f\n\t"
                   "4:\n\t" LEAN_BYTE_ASM
                   "cmp %[wp], %[end]\n\t"
                   "bne 4b\n\t"
                   "5:\n\t"
                   "ldr %[e], %[delta_skip]\n\t"
                   "add %[delta], %[delta], %[e]\n\t"
                   "ldr %[e], %[w_skip]\n\t"
                   "add %[wp], %[wp], %[e]\n\t"
                   "ldr %[e], %[rows]\n\t"
                   "subs %[e], %[e], #1\n\t"
                   "str %[e], %[rows]\n\t"
                   "bne 2b"
                   : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),
                     [delta] "+r"(delta), [wp] "+r"(w), [xe] "=&r"(xe), [xo] "=&r"(xo),
                     [wd] "=&r"(wd), [e] "=&r"(e), [end] "=&r"(end), [rows] "+m"(rows)
                   : [bytes] "m"(bytes), [tail] "m"(tail), [delta_skip] "m"(delta_skip),
                     [w_skip] "m"(w_skip), [depth] "r"(depth), [depth3] "r"(depth3),
                     [off2] "r"(off2)
                   : "cc", "memory");
#else
  int32_t off = mcu_lo16(off2);
  for (int32_t i = 0; i < r->rows; ++i, x += r->x_row - r->n, w += r->w_row - r->n) {
    for (const int8_t *end = x + bytes; x != end; x += 4, w += 4) {
      uint32_t xw = mcu_load_u32(x);
      uint32_t xe = mcu_sxtab16(off2, xw), xo = mcu_sxtab16_ror8(off2, xw);
      uint32_t wd = mcu_load_u32(w);
      a0 = mcu_smlad(mcu_sxtb16_ror8(wd), xo, mcu_smlad(mcu_sxtb16(wd), xe, a0));
      wd = mcu_load_u32(w + depth);
      a1 = mcu_smlad(mcu_sxtb16_ror8(wd), xo, mcu_smlad(mcu_sxtb16(wd), xe, a1));
      wd = mcu_load_u32(w + 2 * depth);
      a2 = mcu_smlad(mcu_sxtb16_ror8(wd), xo, mcu_smlad(mcu_sxtb16(wd), xe, a2));
      wd = mcu_load_u32(w + 3 * depth);
      a3 = mcu_smlad(mcu_sxtb16_ror8(wd), xo, mcu_smlad(mcu_sxtb16(wd), xe, a3));
    }
    for (const int8_t *end = x + tail; x != end; ++x, ++w) {
      int32_t v = *x + off;
      a0 += v * w[0];
      a1 += v * w[depth];
      a2 += v * w[2 * depth];
      a3 += v * w[3 * depth];
    }
  }
#endif
  s[0] = a0;
  s[1] = a1;
  s[2] = a2;
  s[3] = a3;
}
#undef LEAN_CHANNEL_ASM
#undef LEAN_WORD_ASM
#undef LEAN_BYTE_ASM

/* The same against one channel's weights: acc + the dot. */
static int32_t run_one(const int8_t *x, const int8_t *w, int32_t n, uint32_t off2, int32_t acc) {
  int32_t j = 0;
  for (; j + 4 <= n; j += 4) {
    uint32_t xw = mcu_load_u32(x + j), wd = mcu_load_u32(w + j);
    acc = mcu_smlad(mcu_sxtb16(wd), mcu_sxtab16(off2, xw), acc);
    acc = mcu_smlad(mcu_sxtb16_ror8(wd), mcu_sxtab16_ror8(off2, xw), acc);
  }
  for (; j < n; ++j) {
    acc += (x[j] + mcu_lo16(off2)) * w[j];
  }
  return acc;
}

/* The taps k < k_n of a window side starting at `first`, `dil` apart, that lie in [0, size):
 * lo <= k < hi. */
typedef struct {
  int32_t lo;
  int32_t hi;
} span_t;

static span_t inside(int32_t first, int32_t k_n, int32_t dil, int32_t size) {
  span_t s;
  int32_t last = size - 1 - first; /* the largest k * dil inside */
  s.hi = last < 0 ? 0 : last / dil + 1;
  s.hi = s.hi < k_n ? s.hi : k_n;
  s.lo = first < 0 ? (dil - 1 - first) / dil : 0;
  s.lo = s.lo < s.hi ? s.lo : s.hi;
  return s;
}

/* One pixel's window inside the image: `rows` rows of `runs` runs of `n` bytes each; the first
 * run at `x` in the image and `w` in filter row 0; runs `x_run` / `n` apart, rows `x_row` /
 * `w_row` apart. */
typedef struct {
  const int8_t *x;
  const int8_t *w;
  int32_t rows;
  int32_t runs;
  int32_t n;
  int32_t x_run;
  int32_t x_row;
  int32_t w_row;
} taps_t;

static taps_t window_taps(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const int8_t *in,
                          const int8_t *weights, int32_t y0, int32_t x0) {
  const mcu_window_params_t *win = &p->win;
  span_t ys = inside(y0, d->s.k_h, win->dilation_h, d->s.in_h);
  span_t xs = inside(x0, d->s.k_w, win->dilation_w, d->s.in_w);
  int32_t in_c = d->s.in_c, taps = xs.hi - xs.lo;
  int joined = win->dilation_w == 1 || taps <= 1; /* a row's taps inside are one run */
  taps_t t;
  t.x = in + ((y0 + ys.lo * win->dilation_h) * d->s.in_w + x0 + xs.lo * win->dilation_w) * in_c;
  t.w = weights + (ys.lo * d->s.k_w + xs.lo) * in_c;
  t.rows = taps > 0 ? ys.hi - ys.lo : 0;
  t.runs = joined ? 1 : taps;
  t.n = joined ? taps * in_c : in_c;
  t.x_run = win->dilation_w * in_c;
  t.x_row = win->dilation_h * d->s.in_w * in_c;
  t.w_row = d->s.k_w * in_c;
  return t;
}

/* Every output channel of one pixel whose taps are `t`: out[c]. */
static void pixel_channels(const mcu_conv_2d_s8_params_t *p, const dims_t *d, const taps_t *t,
                           uint32_t off2, int8_t *out) {
  const int32_t lo = p->act_min, hi = p->act_max;
  const int32_t *rec = p->channels;
  const int8_t *w = t->w;
  int32_t c = 0;
  for (; c + 4 <= d->s.out_c; c += 4, w += 4 * d->depth, rec += 4 * MCU_CONV_REC_WORDS) {
    int32_t s[4];
    for (int32_t k = 0; k < 4; ++k) {
      s[k] = rec[k * MCU_CONV_REC_WORDS + MCU_CONV_REC_BIAS];
    }
    for (int32_t k = 0; k < t->runs; ++k) {
      runs_t r = {t->x + k * t->x_run, w + k * t->n, t->rows, t->n, t->x_row, t->w_row};
      quad_runs(&r, d->depth, off2, s);
    }
    for (int32_t k = 0; k < 4; ++k) {
      out[c + k] = conv_output(rec + k * MCU_CONV_REC_WORDS, s[k], lo, hi);
    }
  }
  for (; c < d->s.out_c; ++c, w += d->depth, rec += MCU_CONV_REC_WORDS) {
    int32_t acc = rec[MCU_CONV_REC_BIAS];
    const int8_t *x = t->x, *wr = w;
    for (int32_t i = 0; i < t->rows; ++i, x += t->x_row, wr += t->w_row) {
      for (int32_t k = 0; k < t->runs; ++k) {
        acc = run_one(x + k * t->x_run, wr + k * t->n, t->n, off2, acc);
      }
    }
    out[c] = conv_output(rec, acc, lo, hi);
  }
}

/* A pixel whose window lies wholly in the padding: every output its bias's. */
static void no_taps(const mcu_conv_2d_s8_params_t *p, const dims_t *d, int8_t *out) {
  for (int32_t c = 0; c < d->s.out_c; ++c) {
    const int32_t *rec = p->channels + c * MCU_CONV_REC_WORDS;
    out[c] = conv_output(rec, rec[MCU_CONV_REC_BIAS], p->act_min, p->act_max);
  }
}

mcu_status_t mcu_conv_2d_s8_lean(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_conv_2d_s8_params_t *p = node->params;
  dims_t d;
  operands_t k;
  MCU_TRY(conv_operands(node, ctx, 0, &d, &k));
  /* the filter a convolution's [O, KH, KW, I] as stored, or a depthwise one's of one input
   * channel [1, KH, KW, O] whose columns the build stored as those rows (read_dims checks) */
  int8_t *out = k.output;
  int32_t out_s = mcu_output_stride(node, d.s.out_c); /* a channel slice's pixel stride */
  uint32_t off2 = mcu_pack16(-p->pad_value, -p->pad_value);
  int32_t image = d.s.in_h * d.s.in_w * d.s.in_c;
  for (int32_t b = 0; b < d.s.batches; ++b) {
    for (int32_t oy = 0; oy < d.s.out_h; ++oy) {
      int32_t y0 = oy * p->win.stride_h - p->win.pad_h;
      for (int32_t ox = 0; ox < d.s.out_w; ++ox, out += out_s) {
        int32_t x0 = ox * p->win.stride_w - p->win.pad_w;
        taps_t t = window_taps(p, &d, k.input + b * image, k.weights, y0, x0);
        if (t.rows > 0) {
          pixel_channels(p, &d, &t, off2, out);
        } else {
          no_taps(p, &d, out);
        }
      }
    }
  }
  return MCU_OK;
}
