/* The int8 matrix product behind the optimised FULLY_CONNECTED and 1x1 CONV_2D variants
 * (kernels/opt/mat_mult_s8.c): each output is bias[c] + sum_k w[c][k] * x[r][k], requantised.
 * The input offset is folded into the bias at build time (bias[c] = the model's bias plus
 * input_offset * sum_k w[c][k], mcugen/codegen/lower/opt_mat_mult.py), so the inner loop only
 * multiplies: exact, because the sum of integers does not depend on its order and the build
 * checked that the full sum stays within int32 (partial sums wrap modulo 2^32 as SMLAD does). */
#ifndef MCU_MAT_MULT_S8_H
#define MCU_MAT_MULT_S8_H

#include <string.h>

#include "mcu/runtime.h"

typedef struct {
  int32_t output_offset; /* output zero point */
  int32_t act_min;
  int32_t act_max;
  int32_t num_channels;       /* entries of multipliers/shifts: 1 per tensor, else per output */
  const int32_t *multipliers; /* TFLM QuantizeMultiplier significands */
  const int32_t *shifts;      /* TFLM exponents: positive shifts left */
  const int32_t *bias;        /* per output channel, input offset folded in */
  /* The short requantisation (kernels/opt/mat_mult_s8.c), when the build chose it: per entry of
   * `multipliers`, TFLM's right shift less 1 (>= 0); the bias is then doubled and `shifts`
   * unused. NULL: `shifts` and the bias as they are. */
  const int32_t *short_shifts;
  /* The short requantisation's constants in the order pairs of channels read them, for a depth
   * that is a multiple of 4 and an even channel count (the build's `pair_stream`): the doubled
   * biases of channels 0 and 1, each twice (one per row), then per pair of channels c, c + 1
   * the multiplier, rounding term (2 output_offset + 1) << shift and shift of c, the same of
   * c + 1, and the next pair's biases so (0 after the last). Set, widened pairs of rows read it instead of
   * `multipliers`, `short_shifts` and `bias`; NULL: they read those. For
   * mcu_conv_2d_1x1_s8_direct (mcu/kernels/conv_2d.h) a stream of another order, per group of
   * four channels (the build's `quad_stream`): their four undoubled biases, then per channel its
   * multiplier, rounding term and shift. */
  const int32_t *stream;
} mcu_mat_mult_s8_params_t;

/* The product with another output stage (onnxruntime's: kernels/opt/mat_mult_s8_ort.c): its
 * `product`'s `shifts`, `short_shifts` and `stream` are NULL (TFLM's long requantisation always
 * has `shifts`), which tells the product that its parameters are this struct's first member,
 * and each sum goes to out(this, sum, channel). Built at run time by that file's entries, so
 * the build's parameters hold only data and other builds link no other output stage. */
typedef struct mcu_mat_mult_s8_out mcu_mat_mult_s8_out_t;
struct mcu_mat_mult_s8_out {
  mcu_mat_mult_s8_params_t product;
  int8_t (*out)(const mcu_mat_mult_s8_out_t *self, int32_t acc, int32_t c);
};

/* Bytes of scratch the product needs for two rows of `depth` inputs: 16-bit lanes, depth
 * rounded up to a multiple of 4. */
#define MCU_MAT_MULT_S8_SCRATCH(depth) (16 * (((depth) + 3) / 4))

/* out[r * out_stride + c] for r < rows, c < channels: rows of `depth` int8 inputs `x_stride`
 * apart, weights [channels][depth]; pairs of rows widened into `scratch`
 * (MCU_MAT_MULT_S8_SCRATCH(depth) bytes, word-aligned; unused, may be NULL, when rows is 1). */
void mcu_mat_mult_s8(const mcu_mat_mult_s8_params_t *p, const int8_t *x, int32_t rows,
                     int32_t x_stride, const int8_t *w, int32_t channels, int32_t depth,
                     int8_t *out, int32_t out_stride, uint32_t *scratch);

/* The steps of mcu_mat_mult_s8, for callers that stage rows themselves: widen rows `x0` and
 * `x1` of `depth` inputs into `scratch`, which then holds all the product reads (so the rows
 * may be overwritten), then out0[c] and out1[c]; or one row `x` as it is: out[c]. */
void mcu_mat_mult_s8_widen(const mcu_mat_mult_s8_params_t *p, const int8_t *x0, const int8_t *x1,
                           int32_t depth, uint32_t *scratch);
void mcu_mat_mult_s8_widened(const mcu_mat_mult_s8_params_t *p, const uint32_t *scratch,
                             const int8_t *w, int32_t channels, int32_t depth, int8_t *out0,
                             int8_t *out1);
/* Pairs of rows for mcu_mat_mult_s8_pairs: `count` (>= 1) pairs, the first's first row at `x`
 * and its outputs at `out`, each next pair `x_step` and `out_step` bytes on; a pair's second row
 * `x1` bytes after its first, its outputs `out1` bytes after (0 and 0: a row paired with itself,
 * written once). */
typedef struct {
  const int8_t *x;
  int32_t x1, x_step;
  int8_t *out;
  int32_t out1, out_step, count;
} mcu_mat_mult_s8_rows_t;

/* The product of parameters with a `stream` (`depth` a multiple of 4, `channels` even) over
 * pairs of rows, each widened into `scratch` (MCU_MAT_MULT_S8_SCRATCH(depth) bytes) first. */
void mcu_mat_mult_s8_pairs(const mcu_mat_mult_s8_params_t *p, const mcu_mat_mult_s8_rows_t *rows,
                           const int8_t *w, int32_t channels, int32_t depth, uint32_t *scratch);
void mcu_mat_mult_s8_row(const mcu_mat_mult_s8_params_t *p, const int8_t *x, const int8_t *w,
                         int32_t channels, int32_t depth, int8_t *out);

/* The sizes of a 1x1 CONV_2D of stride 1 and one group (the 1x1 variants, kernels/opt/
 * conv_2d_1x1_s8*.c), from the tensor table: input and output channels and pixels, checked. */
typedef struct {
  int32_t in_c, out_c, pixels;
} mcu_pointwise_t;

static inline mcu_status_t mcu_pointwise_dims(const mcu_node_t *node, const mcu_context_t *ctx,
                                              mcu_pointwise_t *d) {
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  d->in_c = in->dims[3];
  d->out_c = out->dims[3];
  MCU_ENSURE_MODEL(filter->dims[1] == 1 && filter->dims[2] == 1 && filter->dims[3] == d->in_c,
                   MCU_ERR_BAD_MODEL);
  d->pixels = out->dims[0] * out->dims[1] * out->dims[2];
  MCU_ENSURE_MODEL(d->pixels == in->dims[0] * in->dims[1] * in->dims[2], MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* One pixel's outputs `out` from its inputs `x` (mcu_mat_mult_s8_row's arguments). */
typedef void (*mcu_pointwise_pixel_fn)(const mcu_mat_mult_s8_params_t *p, const int8_t *x,
                                       const int8_t *w, int32_t channels, int32_t depth,
                                       int8_t *out);

/* A 1x1 convolution a pixel at a time by `pixel` (inlined: a constant at each call). In place
 * (the plan put the output over the input, with the reference kernel's staging of two pixels
 * as scratch) each pixel is copied into the staging before its outputs are written: from the
 * first pixel on when there are no more output than input channels (pixel k's outputs end at
 * or before the end of its inputs), else from the last back (they start at or after the start
 * of its inputs); either way no pixel not yet copied is overwritten. Not in place, the output
 * may be a concatenation's channel slice (pixels `out_stride` apart). */
static inline __attribute__((always_inline)) mcu_status_t mcu_pointwise_pixels(
    const mcu_node_t *node, mcu_context_t *ctx, const mcu_pointwise_t *d,
    mcu_pointwise_pixel_fn pixel) {
  const mcu_mat_mult_s8_params_t *p = node->params;
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *weights = mcu_input(ctx, node, 1);
  int8_t *output = mcu_output(ctx, node, 0);
  if ((const void *)output != (const void *)input) {
    int32_t out_s = mcu_output_stride(node, d->out_c); /* a concatenation's channel slice */
    for (int32_t i = 0; i < d->pixels; ++i) {
      pixel(p, input + i * d->in_c, weights, d->out_c, d->in_c, output + i * out_s);
    }
    return MCU_OK;
  }
  int8_t *staged = mcu_scratch(ctx, node);
  MCU_ENSURE(staged != NULL, MCU_ERR_BAD_MODEL); /* the plan's staging: checked every invoke */
  for (int32_t i = 0; i < d->pixels; ++i) {
    int32_t k = d->out_c <= d->in_c ? i : d->pixels - 1 - i;
    memcpy(staged, input + k * d->in_c, (size_t)d->in_c);
    pixel(p, staged, weights, d->out_c, d->in_c, output + k * d->out_c);
  }
  return MCU_OK;
}

#endif
