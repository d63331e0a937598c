/* The int8 matrix product of mcu/mat_mult_s8.h, blocked 2 rows x 2 channels: each 32-bit load
 * of four weights serves two rows and each load of four inputs two channels; SXTB16 splits a
 * word into its even and odd bytes as 16-bit lanes and SMLAD multiplies and adds two lanes at a
 * time (mcu/simd.h), so 16 multiply-adds take 4 loads, 8 SXTB16 and 8 SMLAD. Odd rows, odd
 * channels and depths not a multiple of 4 take the narrower loops below.
 * Weights come in the build's pair layout (mcugen/codegen/lower/opt_mat_mult.py pair_layout):
 * per pair of channels, blocks of 4 weights of the first then 4 of the second, then the first's
 * last depth mod 4 weights and the second's; an odd last channel as it is. One pointer walks a
 * pair, which keeps the 2x2 loop's pointers and sums in registers. */
#include "mcu/mat_mult_s8.h"

#include "mcu/quant.h"
#include "mcu/requant.h"
#include "mcu/simd.h"

/* Two lanes of four int8 inputs: even and odd bytes. */
typedef struct {
  uint32_t even;
  uint32_t odd;
} lanes_t;

static inline lanes_t lanes(const int8_t *p) {
  uint32_t w = mcu_load_u32(p);
  lanes_t l = {mcu_sxtb16(w), mcu_sxtb16_ror8(w)};
  return l;
}

static inline int32_t dot4(lanes_t a, lanes_t b, int32_t acc) {
  return mcu_smlad(a.odd, b.odd, mcu_smlad(a.even, b.even, acc));
}

/* acc[j][i] += dot(w_j, x_i) for j, i < 2 over `depth`; `pair` in the pair layout. */
static void dot_2x2(const int8_t *x0, const int8_t *x1, const int8_t *pair, int32_t depth,
                    int32_t acc[2][2]) {
  int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
  const int8_t *end = x0 + (depth & ~3);
  while (x0 != end) {
    lanes_t in0 = lanes(x0);
    lanes_t in1 = lanes(x1);
    lanes_t wt = lanes(pair);
    a00 = dot4(wt, in0, a00);
    a01 = dot4(wt, in1, a01);
    wt = lanes(pair + 4);
    a10 = dot4(wt, in0, a10);
    a11 = dot4(wt, in1, a11);
    x0 += 4;
    x1 += 4;
    pair += 8;
  }
  int32_t tail = depth & 3;
  for (int32_t k = 0; k < tail; ++k) {
    a00 = mcu_wrap_add_i32(a00, pair[k] * x0[k]);
    a01 = mcu_wrap_add_i32(a01, pair[k] * x1[k]);
    a10 = mcu_wrap_add_i32(a10, pair[tail + k] * x0[k]);
    a11 = mcu_wrap_add_i32(a11, pair[tail + k] * x1[k]);
  }
  acc[0][0] = a00;
  acc[0][1] = a01;
  acc[1][0] = a10;
  acc[1][1] = a11;
}

/* One row against a pair of channels: acc[j] += dot(w_j, x). */
static inline __attribute__((always_inline)) void dot_1x2(const int8_t *x, const int8_t *pair,
                                                           int32_t depth, int32_t acc[2]) {
  int32_t a0 = acc[0], a1 = acc[1];
  const int8_t *end = x + (depth & ~3);
  while (x != end) {
    lanes_t in = lanes(x);
    a0 = dot4(lanes(pair), in, a0);
    a1 = dot4(lanes(pair + 4), in, a1);
    x += 4;
    pair += 8;
  }
  int32_t tail = depth & 3;
  for (int32_t k = 0; k < tail; ++k) {
    a0 = mcu_wrap_add_i32(a0, pair[k] * x[k]);
    a1 = mcu_wrap_add_i32(a1, pair[tail + k] * x[k]);
  }
  acc[0] = a0;
  acc[1] = a1;
}

/* One row against two pairs of channels (`a`, then `b`): acc[j] += dot(w_j, x), j < 4. Each
 * load of four inputs serves four channels: 23 instructions per 16 multiply-adds. */
static void dot_1x4(const int8_t *x, const int8_t *a, const int8_t *b, int32_t depth,
                    int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int8_t *end = x + (depth & ~3);
  while (x != end) {
    lanes_t in = lanes(x);
    a0 = dot4(lanes(a), in, a0);
    a1 = dot4(lanes(a + 4), in, a1);
    a2 = dot4(lanes(b), in, a2);
    a3 = dot4(lanes(b + 4), in, a3);
    x += 4;
    a += 8;
    b += 8;
  }
  int32_t tail = depth & 3;
  for (int32_t k = 0; k < tail; ++k) {
    a0 = mcu_wrap_add_i32(a0, a[k] * x[k]);
    a1 = mcu_wrap_add_i32(a1, a[tail + k] * x[k]);
    a2 = mcu_wrap_add_i32(a2, b[k] * x[k]);
    a3 = mcu_wrap_add_i32(a3, b[tail + k] * x[k]);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

static int32_t dot_1x1(const int8_t *x, const int8_t *w, int32_t depth, int32_t acc) {
  int32_t k = 0;
  for (; k + 4 <= depth; k += 4) {
    acc = dot4(lanes(w + k), lanes(x + k), acc);
  }
  for (; k < depth; ++k) {
    acc = mcu_wrap_add_i32(acc, w[k] * x[k]);
  }
  return acc;
}

/* mcu_mbqm plus the output offset, clamped, in fewer instructions (mcu/requant.h): the build
 * passes only the multipliers and shifts it is exact for (mcugen/codegen/lower/opt_mat_mult.py). */
static inline int8_t requantize(const mcu_mat_mult_s8_params_t *p, int32_t acc, int32_t c) {
  int32_t ch = p->num_channels > 1 ? c : 0;
  acc = mcu_requant(acc, p->multipliers[ch], p->shifts[ch]) + p->output_offset;
  return (int8_t)mcu_clamp_i32(acc, p->act_min, p->act_max);
}

/* A matrix of one row (a fully connected layer of batch 1): four channels per pass while four
 * are left, then a pair, then a single channel. Separate from the two-row blocks, whose loop
 * compiles less well when this shares its function (measured: every 1x1 layer of VWW slower). */
static __attribute__((noinline)) void one_row(const mcu_mat_mult_s8_params_t *p,
                                              const int8_t *x, const int8_t *w,
                    int32_t channels, int32_t depth, int8_t *out) {
  int32_t c = 0;
  for (; c + 4 <= channels; c += 4) {
    const int8_t *pair = w + c * depth;
    int32_t acc[4] = {p->bias[c], p->bias[c + 1], p->bias[c + 2], p->bias[c + 3]};
    dot_1x4(x, pair, pair + 2 * depth, depth, acc);
    for (int32_t j = 0; j < 4; ++j) {
      out[c + j] = requantize(p, acc[j], c + j);
    }
  }
  if (c + 2 <= channels) {
    int32_t acc[2] = {p->bias[c], p->bias[c + 1]};
    dot_1x2(x, w + c * depth, depth, acc);
    out[c] = requantize(p, acc[0], c);
    out[c + 1] = requantize(p, acc[1], c + 1);
    c += 2;
  }
  if (c < channels) {
    out[c] = requantize(p, dot_1x1(x, w + c * depth, depth, p->bias[c]), c);
  }
}

void mcu_mat_mult_s8_rows(const mcu_mat_mult_s8_params_t *p, const int8_t *x0, const int8_t *x1,
                          const int8_t *w, int32_t channels, int32_t depth, int8_t *out0,
                          int8_t *out1) {
  int32_t c = 0;
  for (; c + 2 <= channels; c += 2) {
    const int8_t *pair = w + c * depth;
    if (x1 != NULL) {
      int32_t acc[2][2] = {{p->bias[c], p->bias[c]}, {p->bias[c + 1], p->bias[c + 1]}};
      dot_2x2(x0, x1, pair, depth, acc);
      out1[c] = requantize(p, acc[0][1], c);
      out1[c + 1] = requantize(p, acc[1][1], c + 1);
      out0[c] = requantize(p, acc[0][0], c);
      out0[c + 1] = requantize(p, acc[1][0], c + 1);
    } else {
      int32_t acc[2] = {p->bias[c], p->bias[c + 1]};
      dot_1x2(x0, pair, depth, acc);
      out0[c] = requantize(p, acc[0], c);
      out0[c + 1] = requantize(p, acc[1], c + 1);
    }
  }
  if (c < channels) {
    const int8_t *wl = w + c * depth;
    if (x1 != NULL) {
      out1[c] = requantize(p, dot_1x1(x1, wl, depth, p->bias[c]), c);
    }
    out0[c] = requantize(p, dot_1x1(x0, wl, depth, p->bias[c]), c);
  }
}

void mcu_mat_mult_s8(const mcu_mat_mult_s8_params_t *p, const int8_t *x, int32_t rows,
                     int32_t x_stride, const int8_t *w, int32_t channels, int32_t depth,
                     int8_t *out, int32_t out_stride) {
  if (rows == 1) {
    one_row(p, x, w, channels, depth, out);
    return;
  }
  int32_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    const int8_t *x0 = x + r * x_stride;
    mcu_mat_mult_s8_rows(p, x0, x0 + x_stride, w, channels, depth, out + r * out_stride,
                         out + (r + 1) * out_stride);
  }
  if (r < rows) {
    mcu_mat_mult_s8_rows(p, x + r * x_stride, NULL, w, channels, depth, out + r * out_stride,
                         NULL);
  }
}
