#ifndef MCU_OPT_DW_S8_PLANAR_H
#define MCU_OPT_DW_S8_PLANAR_H

/* Part of the optimised depthwise kernels (kernels/opt/depthwise_conv_2d_s8*.c), included by
 * them alone: the planar 3x3 path's layout, its types and its shared inline helpers. */
#include <stddef.h>
#include <stdint.h>

#include "mcu/kernels/depthwise_conv_2d.h"
#include "mcu/kernels/depthwise_layer.h"
#include "mcu/quant.h"
#include "mcu/simd.h"

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
 * right), then t + (sum >> 31) >> right: mcu_mbqm's rounding division, as in `requant`
 * (dw_s8_band.h), with the sign of the sum in place of the sign of the high product (they differ
 * only when that product is 0, where both add nothing after the shift since 2^(right-1) - 1 <
 * 2^right). */

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

#endif /* MCU_OPT_DW_S8_PLANAR_H */
