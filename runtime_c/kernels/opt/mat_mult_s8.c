/* The int8 matrix product of mcu/mat_mult_s8.h. The inputs of two rows are widened once into
 * the scratch as 16-bit lanes, per block of 4 inputs the words (x0, x2) and (x1, x3) of the first
 * row then of the second, so SXTB16 and SXTB16 ROR #8 of a word of 4 weights line up with them.
 * A block of 2 channels x 2 rows then takes one LDM of the 4 input words, one LDRD of 2 weight
 * words, 4 SXTB16 and 8 SMLAD: 14 instructions per 16 multiply-adds (inline assembly on a DSP
 * core, two blocks a loop). One row (a fully connected layer of batch 1, an odd last pixel) is
 * read as it is (no scratch), 4 channels a pass, 21 per 16. Other cores, depths not a multiple of 4 and unaligned weights
 * take the same arithmetic in C.
 *
 * The short requantisation (chosen by the build, mcugen/codegen/lower/opt_mat_mult.py): the
 * inputs are widened doubled and the bias doubled, so the sum is 2 acc, and TFLM's
 * MultiplyByQuantizedMultiplier (right shift e >= 1) plus the output offset and the int8 clamp is
 *   SMMLAR(2 acc, m, (2 offset + 1) << (e - 1) - [acc < 0]) >> (e - 1), then SSAT #8 ASR #1:
 * SMMLAR(2 acc, m, R) = R + floor((acc m + 2^30) / 2^31), gemmlowp's rounding doubling high
 * product (mcu/requant.h), and adding 2^(e-1) - [x < 0] before the floor shift by e rounds half
 * away from zero as RoundingDivideByPOT; x < 0 only when acc < 0, and x = 0 rounds to 0 either
 * way, so the sign of acc serves. The build checks that nothing wraps (|acc| < 2^30, the sum
 * with R inside int32) and that the activation is the whole int8 range; else the long path
 * (mcu_requant, then the offset and the clamp) on undoubled sums.
 *
 * Parameters with a `stream` (mcu/mat_mult_s8.h: 1x1 convolutions whose depth is a multiple of
 * 4 and channels even) take the short requantisation with its constants in the order a pair of
 * channels reads them: on a DSP core one assembly routine widens each pair of rows and runs all
 * pairs of channels against it, sums, requantisation and stores in registers
 * (mcu_mat_mult_s8_pairs_dsp below).
 *
 * Weights come in the build's pair layout (opt_mat_mult.py pair_layout): per pair of channels,
 * blocks of 4 weights of the first then 4 of the second, then the first's last depth mod 4
 * weights and the second's; an odd last channel as it is. */
#include "mcu/mat_mult_s8.h"

#include <string.h>

#include "mcu/quant.h"
#include "mcu/requant.h"
#include "mcu/simd.h"

/* The stream path's job, copied to the assembly's frame (below) as it is: the field order is
 * the frame's; the 4 words from out0 on are its own. */
typedef struct {
  const uint32_t *s, *s_end; /* the widened rows */
  const int8_t *w;           /* pair-layout weights */
  const int32_t *stream;
  int8_t *out0, *out1, *out0_end;
  uint32_t entry;
  int32_t channels;
  mcu_mat_mult_s8_rows_t rows;
} mcu_mat_mult_s8_pairs_t;

/* The first `n` (1 to 3) bytes at `p` in a word, the rest 0. */
static inline uint32_t tail_word(const int8_t *p, int32_t n) {
  uint32_t w = 0;
  memcpy(&w, p, (size_t)n);
  return w;
}

static inline __attribute__((always_inline)) void widen_word(uint32_t w, int doubled,
                                                             uint32_t *s) {
  uint32_t even = mcu_sxtb16(w);
  uint32_t odd = mcu_sxtb16_ror8(w);
  if (doubled) {
    even = mcu_sxtab16(even, w);
    odd = mcu_sxtab16_ror8(odd, w);
  }
  s[0] = even;
  s[1] = odd;
}

static inline __attribute__((always_inline)) void widen_rows(const int8_t *x0, const int8_t *x1,
                                                             int32_t depth, int doubled,
                                                             uint32_t *s) {
  int32_t blocks = depth >> 2;
  for (int32_t j = 0; j < blocks; ++j, s += 4) {
    widen_word(mcu_load_u32(x0 + 4 * j), doubled, s);
    widen_word(mcu_load_u32(x1 + 4 * j), doubled, s + 2);
  }
  if (depth & 3) {
    widen_word(tail_word(x0 + 4 * blocks, depth & 3), doubled, s);
    widen_word(tail_word(x1 + 4 * blocks, depth & 3), doubled, s + 2);
  }
}

void mcu_mat_mult_s8_widen(const mcu_mat_mult_s8_params_t *p, const int8_t *x0, const int8_t *x1,
                           int32_t depth, uint32_t *scratch) {
  if (p->short_shifts != NULL) {
    widen_rows(x0, x1, depth, 1, scratch);
  } else {
    widen_rows(x0, x1, depth, 0, scratch);
  }
}

/* The short requantisation of one sum (the file's header). */
static inline int8_t short_out(int32_t acc2, int32_t m, int32_t right1, int32_t round) {
  return (int8_t)mcu_ssat8_asr1(mcu_smmlar(acc2, m, round + (acc2 >> 31)) >> right1);
}

/* The long requantisation: mcu_mbqm (as mcu_requant, exact for the multipliers and shifts the
 * build passes) plus the output offset, clamped. */
static inline int8_t long_out(const mcu_mat_mult_s8_params_t *p, int32_t acc, int32_t q) {
  acc = mcu_requant(acc, p->multipliers[q], p->shifts[q]) + p->output_offset;
  return (int8_t)mcu_clamp_i32(acc, p->act_min, p->act_max);
}

/* Output channel c of rows out0 and out1 (NULL: one row) from sums acc0 and acc1. */
static void store(const mcu_mat_mult_s8_params_t *p, int32_t c, int32_t acc0, int32_t acc1,
                  int8_t *out0, int8_t *out1) {
  int32_t q = p->num_channels > 1 ? c : 0;
  if (p->short_shifts != NULL) {
    int32_t right1 = p->short_shifts[q];
    int32_t round = (int32_t)((uint32_t)(2 * p->output_offset + 1) << right1);
    out0[c] = short_out(acc0, p->multipliers[q], right1, round);
    if (out1 != NULL) {
      out1[c] = short_out(acc1, p->multipliers[q], right1, round);
    }
    return;
  }
  out0[c] = long_out(p, acc0, q);
  if (out1 != NULL) {
    out1[c] = long_out(p, acc1, q);
  }
}

/* One channel's weight word `w` against one widened row's words s[0..1]: += dot. */
static inline int32_t row_dot(const uint32_t *s, uint32_t w, int32_t acc) {
  return mcu_smlad(mcu_sxtb16_ror8(w), s[1], mcu_smlad(mcu_sxtb16(w), s[0], acc));
}

/* Word j of a channel's `n` weights at `w` (the last one zero-padded). */
static inline uint32_t weight_word(const int8_t *w, int32_t j, int32_t n) {
  return 4 * j + 4 <= n ? mcu_load_u32(w + 4 * j) : tail_word(w + 4 * j, n & 3);
}

/* Channels from c0 on against two widened rows, in plain C: pairs, then the odd last one. */
static void rows2_c(const mcu_mat_mult_s8_params_t *p, const uint32_t *s, const int8_t *w,
                    int32_t c0, int32_t channels, int32_t depth, int8_t *out0, int8_t *out1) {
  int32_t blocks = (depth + 3) >> 2;
  int32_t tail = depth & 3;
  int32_t full = depth >> 2;
  int32_t c = c0;
  for (; c + 2 <= channels; c += 2) {
    const int8_t *pair = w + c * depth;
    int32_t acc[4] = {p->bias[c], p->bias[c], p->bias[c + 1], p->bias[c + 1]};
    for (int32_t j = 0; j < blocks; ++j) {
      /* channel 0's word then channel 1's; the tail: channel 0's `tail` bytes then 1's */
      uint32_t w0 = j < full ? mcu_load_u32(pair + 8 * j) : tail_word(pair + 8 * j, tail);
      uint32_t w1 = j < full ? mcu_load_u32(pair + 8 * j + 4) : tail_word(pair + 8 * j + tail, tail);
      const uint32_t *sj = s + 4 * j;
      acc[0] = row_dot(sj, w0, acc[0]);
      acc[1] = row_dot(sj + 2, w0, acc[1]);
      acc[2] = row_dot(sj, w1, acc[2]);
      acc[3] = row_dot(sj + 2, w1, acc[3]);
    }
    store(p, c, acc[0], acc[1], out0, out1);
    store(p, c + 1, acc[2], acc[3], out0, out1);
  }
  if (c < channels) {
    const int8_t *row = w + c * depth;
    int32_t acc0 = p->bias[c], acc1 = p->bias[c];
    for (int32_t j = 0; j < blocks; ++j) {
      uint32_t wj = weight_word(row, j, depth);
      acc0 = row_dot(s + 4 * j, wj, acc0);
      acc1 = row_dot(s + 4 * j + 2, wj, acc1);
    }
    store(p, c, acc0, acc1, out0, out1);
  }
}

/* Pairs of channels against two widened rows with the build's stream `q` (depth a multiple of 4,
 * channels even: mcu/mat_mult_s8.h), in plain C: rows2_c's sums and short requantisation. */
static void stream_c(const int32_t *q, const uint32_t *s, const int8_t *w, int32_t channels,
                     int32_t depth, int8_t *out0, int8_t *out1) {
  for (int32_t c = 0; c < channels; c += 2, q += 10) {
    int32_t acc[4] = {q[0], q[1], q[2], q[3]};
    for (int32_t j = 0; j < depth >> 2; ++j, w += 8) {
      for (int32_t k = 0; k < 4; ++k) {
        acc[k] = row_dot(s + 4 * j + 2 * (k & 1), mcu_load_u32(w + 4 * (k >> 1)), acc[k]);
      }
    }
    for (int32_t k = 0; k < 4; ++k) {
      const int32_t *r = q + 4 + 3 * (k >> 1); /* multiplier, rounding term, shift */
      (k & 1 ? out1 : out0)[c + (k >> 1)] = short_out(acc[k], r[0], r[2], r[1]);
    }
  }
}

/* One row's input word `x` against a channel's weight word `w`: += dot. */
static inline int32_t x_dot(uint32_t x, uint32_t w, int32_t acc) {
  acc = mcu_smlad(mcu_sxtb16(w), mcu_sxtb16(x), acc);
  return mcu_smlad(mcu_sxtb16_ror8(w), mcu_sxtb16_ror8(x), acc);
}

/* A row's sum starts at the undoubled bias and is doubled for the short requantisation at the
 * end (its input is not widened): exact, the doubled bias is even and |acc| < 2^30. */
static inline int32_t row_bias(const mcu_mat_mult_s8_params_t *p, int32_t c) {
  return p->short_shifts != NULL ? p->bias[c] >> 1 : p->bias[c];
}

static inline int32_t row_sum(const mcu_mat_mult_s8_params_t *p, int32_t acc) {
  return p->short_shifts != NULL ? (int32_t)((uint32_t)acc << 1) : acc;
}

/* Channels from c0 on against one int8 row `x`, in plain C: pairs, then the odd last one. */
static void row1_c(const mcu_mat_mult_s8_params_t *p, const int8_t *x, const int8_t *w,
                   int32_t c0, int32_t channels, int32_t depth, int8_t *out) {
  int32_t blocks = (depth + 3) >> 2;
  int32_t tail = depth & 3;
  int32_t full = depth >> 2;
  int32_t c = c0;
  for (; c + 2 <= channels; c += 2) {
    const int8_t *pair = w + c * depth;
    int32_t acc0 = row_bias(p, c), acc1 = row_bias(p, c + 1);
    for (int32_t j = 0; j < blocks; ++j) {
      uint32_t xj = weight_word(x, j, depth);
      uint32_t w0 = j < full ? mcu_load_u32(pair + 8 * j) : tail_word(pair + 8 * j, tail);
      uint32_t w1 = j < full ? mcu_load_u32(pair + 8 * j + 4) : tail_word(pair + 8 * j + tail, tail);
      acc0 = x_dot(xj, w0, acc0);
      acc1 = x_dot(xj, w1, acc1);
    }
    store(p, c, row_sum(p, acc0), 0, out, NULL);
    store(p, c + 1, row_sum(p, acc1), 0, out, NULL);
  }
  if (c < channels) {
    const int8_t *row = w + c * depth;
    int32_t acc = row_bias(p, c);
    for (int32_t j = 0; j < blocks; ++j) {
      acc = x_dot(weight_word(x, j, depth), weight_word(row, j, depth), acc);
    }
    store(p, c, row_sum(p, acc), 0, out, NULL);
  }
}

#if MCU_SIMD_DSP
/* One block of 2 channels x 2 rows: LDM of the rows' 4 words (r2-r5: LDM fills registers in
 * ascending order), LDRD of the 2 channels' weight words. */
#define MCU_BLOCK_2X2                               \
  "ldm %[s]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t" \
  "ldrd %[w0], %[w1], [%[pw]], #8\n\t"              \
  "sxtb16 %[t], %[w0]\n\t"                          \
  "smlad %[a00], %[t], %[x0e], %[a00]\n\t"          \
  "smlad %[a01], %[t], %[x1e], %[a01]\n\t"          \
  "sxtb16 %[w0], %[w0], ror #8\n\t"                 \
  "smlad %[a00], %[w0], %[x0o], %[a00]\n\t"         \
  "smlad %[a01], %[w0], %[x1o], %[a01]\n\t"         \
  "sxtb16 %[t], %[w1]\n\t"                          \
  "smlad %[a10], %[t], %[x0e], %[a10]\n\t"          \
  "smlad %[a11], %[t], %[x1e], %[a11]\n\t"          \
  "sxtb16 %[w1], %[w1], ror #8\n\t"                 \
  "smlad %[a10], %[w1], %[x0o], %[a10]\n\t"         \
  "smlad %[a11], %[w1], %[x1o], %[a11]\n\t"

/* One block of 1 row x 2 channels of the pair at `P` into sums A0 and A1. */
#define MCU_PAIR_1X2(P, A0, A1)                    \
  "ldrd %[w0], %[w1], [%[" P "]], #8\n\t"          \
  "sxtb16 %[t], %[w0]\n\t"                         \
  "smlad %[" A0 "], %[t], %[xe], %[" A0 "]\n\t"    \
  "sxtb16 %[w0], %[w0], ror #8\n\t"                \
  "smlad %[" A0 "], %[w0], %[xo], %[" A0 "]\n\t"   \
  "sxtb16 %[t], %[w1]\n\t"                         \
  "smlad %[" A1 "], %[t], %[xe], %[" A1 "]\n\t"    \
  "sxtb16 %[w1], %[w1], ror #8\n\t"                \
  "smlad %[" A1 "], %[w1], %[xo], %[" A1 "]\n\t"
#define MCU_BLOCK_1X4                        \
  "ldr %[xo], [%[s]], #4\n\t"               \
  "sxtb16 %[xe], %[xo]\n\t"                 \
  "sxtb16 %[xo], %[xo], ror #8\n\t"         \
  MCU_PAIR_1X2("a", "c0", "c1") MCU_PAIR_1X2("b", "c2", "c3")

/* Pairs of channels against two widened rows (word-aligned, depth a multiple of 4): the sums in
 * registers, two blocks a loop (entered at the second when the count is odd), the short
 * requantisation inline. Returns the channels done. */
static int32_t rows2_dsp(const mcu_mat_mult_s8_params_t *p, const uint32_t *s,
                         const int8_t *w, int32_t channels, int32_t depth, int8_t *out0,
                         int8_t *out1) {
  const int32_t *bias = p->bias;
  const int32_t *mult = p->multipliers;
  const int32_t *right = p->short_shifts;
  int32_t step = p->num_channels > 1 ? 1 : 0;
  uint32_t k = (uint32_t)(2 * p->output_offset + 1);
  const uint32_t *end = s + depth;
  int32_t pairs = channels >> 1;
  const int8_t *w_end = w + 2 * pairs * depth; /* the asm walks `w` a pair at a time */
  int8_t *o0 = out0;
  int8_t *o1 = out1;
  while (w != w_end) {
    register uint32_t x0e __asm__("r2");
    register uint32_t x0o __asm__("r3");
    register uint32_t x1e __asm__("r4");
    register uint32_t x1o __asm__("r5");
    uint32_t w0, w1, t;
    const uint32_t *si = s;
    int32_t a00 = bias[0], a01 = a00, a10 = bias[1], a11 = a10;
    bias += 2;
    /* 13 registers: the end is read from memory once a loop (14 are more than GCC finds for
     * the Cortex-M7) */
    __asm__ volatile("ldr %[t], %[end]\n\t"
                     "sub %[t], %[t], %[s]\n\t"
                     "tst %[t], #16\n\t"
                     "bne 2f\n\t"
                     "1:\n\t" MCU_BLOCK_2X2 "2:\n\t" MCU_BLOCK_2X2
                     "ldr %[t], %[end]\n\t"
                     "cmp %[s], %[t]\n\t"
                     "bne 1b\n\t"
                     : [s] "+r"(si), [pw] "+r"(w), [a00] "+r"(a00), [a01] "+r"(a01),
                       [a10] "+r"(a10), [a11] "+r"(a11), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o),
                       [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [w0] "=&r"(w0), [w1] "=&r"(w1),
                       [t] "=&r"(t)
                     : [end] "m"(end)
                     : "memory", "cc");
    if (right == NULL) {
      int32_t c = (int32_t)(o0 - out0);
      store(p, c, a00, a01, out0, out1);
      store(p, c + 1, a10, a11, out0, out1);
    } else {
      int32_t r = right[0], r1 = right[step];
      int32_t m = mult[0], m1 = mult[step];
      int32_t round = (int32_t)(k << r);
      o0[0] = short_out(a00, m, r, round);
      o1[0] = short_out(a01, m, r, round);
      round = (int32_t)(k << r1);
      o0[1] = short_out(a10, m1, r1, round);
      o1[1] = short_out(a11, m1, r1, round);
      mult += 2 * step;
      right += 2 * step;
    }
    o0 += 2;
    o1 += 2;
  }
  return 2 * pairs;
}

/* Quads of channels (two pairs) against one int8 row `x` (LDR: any alignment), as rows2_dsp;
 * 21 instructions per 16 multiply-adds. */
static int32_t row1_dsp(const mcu_mat_mult_s8_params_t *p, const int8_t *x, const int8_t *w,
                        int32_t channels, int32_t depth, int8_t *out) {
  const int8_t *end = x + depth;
  const int32_t *mult = p->multipliers;
  const int32_t *right = p->short_shifts;
  int32_t step = p->num_channels > 1 ? 1 : 0;
  uint32_t k = (uint32_t)(2 * p->output_offset + 1);
  int32_t quads = channels >> 2;
  for (int32_t i = 0; i < quads; ++i) {
    uint32_t xe, xo, w0, w1, t;
    const int8_t *xi = x;
    const int8_t *a = w + 4 * i * depth;
    const int8_t *b = a + 2 * depth;
    int32_t acc[4];
    for (int32_t j = 0; j < 4; ++j) {
      acc[j] = row_bias(p, 4 * i + j);
    }
    int32_t c0 = acc[0], c1 = acc[1], c2 = acc[2], c3 = acc[3];
    __asm__ volatile("sub %[t], %[end], %[s]\n\t"
                     "tst %[t], #4\n\t"
                     "bne 2f\n\t"
                     "1:\n\t" MCU_BLOCK_1X4 "2:\n\t" MCU_BLOCK_1X4
                     "cmp %[s], %[end]\n\t"
                     "bne 1b\n\t"
                     : [s] "+r"(xi), [a] "+r"(a), [b] "+r"(b), [c0] "+r"(c0), [c1] "+r"(c1),
                       [c2] "+r"(c2), [c3] "+r"(c3), [xe] "=&r"(xe), [xo] "=&r"(xo),
                       [w0] "=&r"(w0), [w1] "=&r"(w1), [t] "=&r"(t)
                     : [end] "r"(end)
                     : "memory", "cc");
    acc[0] = c0;
    acc[1] = c1;
    acc[2] = c2;
    acc[3] = c3;
    for (int32_t j = 0; j < 4; ++j) {
      if (right == NULL) {
        store(p, 4 * i + j, acc[j], 0, out, NULL);
        continue;
      }
      int32_t r = *right;
      out[4 * i + j] = short_out((int32_t)((uint32_t)acc[j] << 1), *mult, r, (int32_t)(k << r));
      mult += step;
      right += step;
    }
  }
  return 4 * quads;
}
#undef MCU_BLOCK_2X2
#undef MCU_PAIR_1X2
#undef MCU_BLOCK_1X4

/* The stream path on a DSP core, in assembly (all 14 registers): per pair of channels the 2x2
 * block loop (MCU_BLOCK_2X2's 14 instructions, forced to 32-bit encodings so each is 56 bytes)
 * sixteen blocks a loop, entered at block (-blocks) mod 16 by a jump computed once; then the short
 * requantisation of the 4 sums (4 instructions each: ADD of the rounding term and the sign,
 * SMMLAR, ASR, SSAT), its constants and the next pair's biases read from the stream by LDM.
 * r0 s, r1 w, r2-r5 rows' words, r6-r7 weight words, r8 temporary, r9-r12 sums, lr stream; the
 * frame holds the job (its entry word: the computed jump). */
#define MCU_PAIRS_BLOCK                    \
  "  ldmia.w r0!, {r2, r3, r4, r5}\n"      \
  "  ldrd r6, r7, [r1], #8\n"              \
  "  sxtb16 r8, r6\n"                      \
  "  smlad r9, r8, r2, r9\n"               \
  "  smlad r10, r8, r4, r10\n"             \
  "  sxtb16 r6, r6, ror #8\n"              \
  "  smlad r9, r6, r3, r9\n"               \
  "  smlad r10, r6, r5, r10\n"             \
  "  sxtb16 r8, r7\n"                      \
  "  smlad r11, r8, r2, r11\n"             \
  "  smlad r12, r8, r4, r12\n"             \
  "  sxtb16 r7, r7, ror #8\n"              \
  "  smlad r11, r7, r3, r11\n"             \
  "  smlad r12, r7, r5, r12\n"
/* Sums A (row 0) and B (row 1) of one channel: multiplier M, rounding term R, shift E. */
#define MCU_PAIRS_REQUANT(A, B, M, R, E)   \
  "  add r8, " R ", " A ", asr #31\n"      \
  "  smmlar " A ", " A ", " M ", r8\n"     \
  "  add r8, " R ", " B ", asr #31\n"      \
  "  smmlar " B ", " B ", " M ", r8\n"     \
  "  asr " A ", " A ", " E "\n"            \
  "  asr " B ", " B ", " E "\n"            \
  "  ssat " A ", #8, " A ", asr #1\n"      \
  "  ssat " B ", #8, " B ", asr #1\n"
/* A naked static function (no global symbol: an exported library's symbols all carry its
 * prefix). */
__attribute__((naked)) static void mcu_mat_mult_s8_pairs_dsp(
    __attribute__((unused)) const mcu_mat_mult_s8_pairs_t *job) {
  __asm__ volatile(
        "  push {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n"
        "  sub sp, sp, #64\n"
        "  ldm r0!, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  stm sp, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  ldm r0, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  add r0, sp, #32\n"
        "  stm r0, {r1, r2, r3, r4, r5, r6, r7, r8}\n"
        "  ldrd r0, r1, [sp]\n"
        "  subs r8, r0, r1\n"          /* -16 blocks */
        "  ubfx r8, r8, #4, #4\n"      /* (-blocks) mod 16 */
        "  movs r9, #56\n"
        "  adr r10, 2f\n"
        "  mla r8, r8, r9, r10\n"
        "  orr r8, r8, #1\n"           /* a Thumb address */
        "  str r8, [sp, #28]\n"
        "1:\n" /* a pair of rows: widen them (doubled), x0 then x1 a block at a time */
        "  ldrd r1, r2, [sp, #36]\n"   /* x, x1 */
        "  ldr r3, [sp, #44]\n"
        "  add r3, r1, r3\n"
        "  str r3, [sp, #36]\n"
        "  ldrd r0, r3, [sp]\n"
        "4:\n"
        "  ldr r4, [r1, r2]\n"
        "  ldr r5, [r1], #4\n"
        "  sxtb16 r6, r5\n"
        "  sxtab16 r6, r6, r5\n"
        "  sxtb16 r7, r5, ror #8\n"
        "  sxtab16 r7, r7, r5, ror #8\n"
        "  sxtb16 r8, r4\n"
        "  sxtab16 r8, r8, r4\n"
        "  sxtb16 r9, r4, ror #8\n"
        "  sxtab16 r9, r9, r4, ror #8\n"
        "  stm r0!, {r6, r7, r8, r9}\n"
        "  cmp r0, r3\n"
        "  bne 4b\n"
        "  ldrd r2, r3, [sp, #48]\n"   /* out, out1 */
        "  add r3, r2, r3\n"
        "  strd r2, r3, [sp, #16]\n"
        "  ldr r4, [sp, #56]\n"        /* out_step */
        "  ldr r5, [sp, #32]\n"        /* channels */
        "  add r5, r2, r5\n"
        "  str r5, [sp, #24]\n"
        "  add r2, r2, r4\n"
        "  str r2, [sp, #48]\n"
        "  ldrd r1, lr, [sp, #8]\n"
        "  ldm lr!, {r9, r10, r11, r12}\n"
        "  ldr r0, [sp]\n"
        "  ldr pc, [sp, #28]\n"
        "2:\n" MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK
        MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK
        MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK MCU_PAIRS_BLOCK
        MCU_PAIRS_BLOCK
        "  ldr r8, [sp, #4]\n"
        "  cmp r0, r8\n"
        "  bne 2b\n"
        "  ldm lr!, {r2, r3, r4, r5, r6, r7}\n"
        MCU_PAIRS_REQUANT("r9", "r10", "r2", "r3", "r4")
        MCU_PAIRS_REQUANT("r11", "r12", "r5", "r6", "r7")
        "  ldrd r2, r3, [sp, #16]\n"
        "  strb r9, [r2], #1\n"
        "  strb r11, [r2], #1\n"
        "  strb r10, [r3], #1\n"
        "  strb r12, [r3], #1\n"
        "  strd r2, r3, [sp, #16]\n"
        "  ldm lr!, {r9, r10, r11, r12}\n"
        "  ldr r0, [sp]\n"
        "  ldr r8, [sp, #24]\n"
        "  cmp r2, r8\n"
        "  it ne\n"
        "  ldrne pc, [sp, #28]\n"
        "  ldr r8, [sp, #60]\n"        /* pairs of rows left */
        "  subs r8, r8, #1\n"
        "  str r8, [sp, #60]\n"
        "  bne 1b\n"
        "  add sp, sp, #64\n"
        "  pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n");
}
#undef MCU_PAIRS_BLOCK
#undef MCU_PAIRS_REQUANT

/* The DSP paths' conditions: LDM and LDRD need word-aligned addresses; whole blocks only. */
static int dsp_ready(const void *s, const void *w, int32_t depth) {
  return ((uintptr_t)s & 3) == 0 && ((uintptr_t)w & 3) == 0 && (depth & 3) == 0 && depth > 0;
}
#endif

void mcu_mat_mult_s8_row(const mcu_mat_mult_s8_params_t *p, const int8_t *x, const int8_t *w,
                         int32_t channels, int32_t depth, int8_t *out) {
  int32_t c = 0;
#if MCU_SIMD_DSP
  if (dsp_ready(w, w, depth)) {
    c = row1_dsp(p, x, w, channels, depth, out);
  }
#endif
  row1_c(p, x, w, c, channels, depth, out);
}

void mcu_mat_mult_s8_pairs(const mcu_mat_mult_s8_params_t *p, const mcu_mat_mult_s8_rows_t *rows,
                           const int8_t *w, int32_t channels, int32_t depth, uint32_t *scratch) {
#if MCU_SIMD_DSP
  if (dsp_ready(scratch, w, depth)) {
    mcu_mat_mult_s8_pairs_t job = {scratch, scratch + depth, w, p->stream, NULL, NULL, NULL, 0,
                                   channels, *rows};
    mcu_mat_mult_s8_pairs_dsp(&job);
    return;
  }
#endif
  const int8_t *x = rows->x;
  int8_t *out = rows->out;
  for (int32_t i = 0; i < rows->count; ++i, x += rows->x_step, out += rows->out_step) {
    widen_rows(x, x + rows->x1, depth, 1, scratch);
    stream_c(p->stream, scratch, w, channels, depth, out, out + rows->out1);
  }
}

void mcu_mat_mult_s8_widened(const mcu_mat_mult_s8_params_t *p, const uint32_t *scratch,
                             const int8_t *w, int32_t channels, int32_t depth, int8_t *out0,
                             int8_t *out1) {
  int32_t c = 0;
#if MCU_SIMD_DSP
  if (dsp_ready(scratch, w, depth)) {
    c = rows2_dsp(p, scratch, w, channels, depth, out0, out1);
  }
#endif
  rows2_c(p, scratch, w, c, channels, depth, out0, out1);
}

void mcu_mat_mult_s8(const mcu_mat_mult_s8_params_t *p, const int8_t *x, int32_t rows,
                     int32_t x_stride, const int8_t *w, int32_t channels, int32_t depth,
                     int8_t *out, int32_t out_stride, uint32_t *scratch) {
  int32_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    const int8_t *x0 = x + r * x_stride;
    mcu_mat_mult_s8_widen(p, x0, x0 + x_stride, depth, scratch);
    int8_t *out0 = out + r * out_stride;
    mcu_mat_mult_s8_widened(p, scratch, w, channels, depth, out0, out0 + out_stride);
  }
  if (r < rows) {
    mcu_mat_mult_s8_row(p, x + r * x_stride, w, channels, depth, out + r * out_stride);
  }
}
