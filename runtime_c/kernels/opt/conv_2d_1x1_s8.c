/* CONV_2D int8 with a 1x1 filter, stride 1 and one group: a matrix product over the pixels
 * (mcu/mat_mult_s8.h), bit-exact with reference/conv_2d.c (mcu_conv_2d_int8), two pixels at a
 * time widened into the scratch (MCU_MAT_MULT_S8_SCRATCH(in_c) bytes, declared by
 * codegen/lower/opt_mat_mult.py). mcu_conv_2d_1x1_s8_opt copies an odd last pixel there as it
 * is; mcu_conv_2d_1x1_s8_pairs (parameters with a `stream`) widens it as a pair of itself, both
 * rows written to the same outputs. The widened copy holds everything a pair's product reads, so
 * it is also the staging for running in place (the plan put the output over the input): with
 * no more outputs than inputs from the first pair on, whose outputs end at or before the end of
 * the pair's inputs; with more, from the last pair back, whose outputs start at or after the
 * start of the pair's inputs. Either way no unwidened pixel is overwritten. */
#include <string.h>

#include "mcu/kernels/conv_2d.h"
#include "mcu/mat_mult_s8.h"

/* The product over the pixels; `pairs`: the stream path. */
static inline __attribute__((always_inline)) mcu_status_t run(const mcu_node_t *node,
                                                              mcu_context_t *ctx, int pairs) {
  const mcu_mat_mult_s8_params_t *p = node->params;
  mcu_pointwise_t d;
  MCU_TRY(mcu_pointwise_dims(node, ctx, &d));
  int32_t in_c = d.in_c, out_c = d.out_c, pixels = d.pixels;
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *weights = mcu_input(ctx, node, 1);
  int8_t *output = mcu_output(ctx, node, 0);
  uint32_t *widened = mcu_scratch(ctx, node);
  MCU_ENSURE(widened != NULL, MCU_ERR_BAD_MODEL);
  /* a concatenation's channel slice: pixels `out_s` apart, never over the input */
  int32_t out_s = mcu_output_stride(node, out_c);
  MCU_ENSURE_MODEL(out_s == out_c || (const void *)output != (const void *)input,
                   MCU_ERR_BAD_MODEL);
  if (pairs) {
    /* the pairs from the front, or from the back; then an odd last pixel with itself */
    int32_t back = out_c > in_c, k = back ? pixels - 2 : 0;
    mcu_mat_mult_s8_rows_t rows = {input + k * in_c,         in_c,   (back ? -2 : 2) * in_c,
                                   output + k * out_s,       out_s,  (back ? -2 : 2) * out_s,
                                   pixels >> 1};
    if (rows.count > 0) {
      mcu_mat_mult_s8_pairs(p, &rows, weights, out_c, in_c, widened);
    }
    if (pixels & 1) {
      k = back ? 0 : pixels - 1;
      rows = (mcu_mat_mult_s8_rows_t){input + k * in_c, 0, 0, output + k * out_s, 0, 0, 1};
      mcu_mat_mult_s8_pairs(p, &rows, weights, out_c, in_c, widened);
    }
    return MCU_OK;
  }
  if ((const void *)output != (const void *)input) {
    mcu_mat_mult_s8(p, input, pixels, in_c, weights, out_c, in_c, output, out_s, widened);
    return MCU_OK;
  }
  for (int32_t i = 0; i < pixels; i += 2) {
    int32_t rows = pixels - i < 2 ? 1 : 2;
    /* the first of the `rows` pixels: counted from the front, or from the back */
    int32_t k = out_c <= in_c ? i : pixels - i - rows;
    const int8_t *x0 = input + k * in_c;
    int8_t *out0 = output + k * out_c;
    if (rows == 2) {
      mcu_mat_mult_s8_widen(p, x0, x0 + in_c, in_c, widened);
      mcu_mat_mult_s8_widened(p, widened, weights, out_c, in_c, out0, out0 + out_c);
    } else {
      memcpy(widened, x0, (size_t)in_c);
      mcu_mat_mult_s8_row(p, (const int8_t *)widened, weights, out_c, in_c, out0);
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_conv_2d_1x1_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  return run(node, ctx, 0);
}

mcu_status_t mcu_conv_2d_1x1_s8_pairs(const mcu_node_t *node, mcu_context_t *ctx) {
  MCU_ENSURE_MODEL(((const mcu_mat_mult_s8_params_t *)node->params)->stream != NULL,
                   MCU_ERR_BAD_MODEL);
  return run(node, ctx, 1);
}
