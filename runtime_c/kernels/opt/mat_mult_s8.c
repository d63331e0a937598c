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
 * Parameters with a `stream` take mat_mult_s8_pairs.c's path; without `shifts` nor
 * `short_shifts` they are an mcu_mat_mult_s8_out_t's (onnxruntime's output stage,
 * mat_mult_s8_ort.c), whose function takes the long path's sums instead.
 *
 * Weights come in the build's pair layout (opt_mat_mult.py pair_layout): per pair of channels,
 * blocks of 4 weights of the first then 4 of the second, then the first's last depth mod 4
 * weights and the second's; an odd last channel as it is. */
#include "mcu/mat_mult_s8.h"

#include "mcu/mat_mult_s8_lanes.h"
#include "mcu/opt/mat_mult_s8_asm.h"
#include "mcu/quant.h"
#include "mcu/requant.h"
#include "mcu/simd.h"

void mcu_mat_mult_s8_widen(const mcu_mat_mult_s8_params_t *p, const int8_t *x0, const int8_t *x1,
                           int32_t depth, uint32_t *scratch) {
  if (p->short_shifts != NULL) {
    widen_rows(x0, x1, depth, 1, scratch);
  } else {
    widen_rows(x0, x1, depth, 0, scratch);
  }
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
  if (p->shifts == NULL) { /* another output stage (mcu_mat_mult_s8_out_t) */
    const mcu_mat_mult_s8_out_t *h = (const mcu_mat_mult_s8_out_t *)p;
    out0[c] = h->out(h, acc0, c);
    if (out1 != NULL) {
      out1[c] = h->out(h, acc1, c);
    }
    return;
  }
  out0[c] = long_out(p, acc0, q);
  if (out1 != NULL) {
    out1[c] = long_out(p, acc1, q);
  }
}

/* Word j of a channel's `n` weights at `w` (the last one zero-padded). */
static inline uint32_t weight_word(const int8_t *w, int32_t j, int32_t n) {
  return 4 * j + 4 <= n ? mcu_load_u32(w + 4 * j) : tail_word(w + 4 * j, n & 3);
}

/* Word j of channel k (0 or 1) of a pair in the pair layout: a whole block's, else (j = full,
 * the depth's last `tail` values) channel k's tail bytes. */
static inline uint32_t pair_word(const int8_t *pair, int32_t j, int32_t full, int32_t tail,
                                 int32_t k) {
  return j < full ? mcu_load_u32(pair + 8 * j + 4 * k) : tail_word(pair + 8 * j + k * tail, tail);
}

/* Channels from c0 on against two widened rows, in plain C: pairs, then the odd last one. */
static void rows2_c(const mcu_mat_mult_s8_params_t *p, const uint32_t *s, const int8_t *w,
                    int32_t c0, int32_t channels, int32_t depth, int8_t *out0, int8_t *out1) {
  int32_t blocks = (depth + 3) >> 2, tail = depth & 3, full = depth >> 2;
  int32_t c = c0;
  for (; c + 2 <= channels; c += 2) {
    const int8_t *pair = w + c * depth;
    int32_t acc[4] = {p->bias[c], p->bias[c], p->bias[c + 1], p->bias[c + 1]};
    for (int32_t j = 0; j < blocks; ++j) {
      /* channel 0's word then channel 1's; the tail: channel 0's `tail` bytes then 1's */
      uint32_t w0 = pair_word(pair, j, full, tail, 0), w1 = pair_word(pair, j, full, tail, 1);
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
  int32_t blocks = (depth + 3) >> 2, tail = depth & 3, full = depth >> 2;
  int32_t c = c0;
  for (; c + 2 <= channels; c += 2) {
    const int8_t *pair = w + c * depth;
    int32_t acc0 = row_bias(p, c), acc1 = row_bias(p, c + 1);
    for (int32_t j = 0; j < blocks; ++j) {
      uint32_t xj = weight_word(x, j, depth);
      uint32_t w0 = pair_word(pair, j, full, tail, 0), w1 = pair_word(pair, j, full, tail, 1);
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
#define MCU_BLOCK_2X2 "ldm %[s]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t" MCU_MACS_2X2

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
    MCU_LOOP_2X2(si, MCU_BLOCK_2X2, "16");
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
    MCU_LOOP_1X4(xi);
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
