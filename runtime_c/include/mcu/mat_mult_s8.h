/* The int8 matrix product behind the optimised FULLY_CONNECTED and 1x1 CONV_2D variants
 * (kernels/opt/mat_mult_s8.c): each output is bias[c] + sum_k w[c][k] * x[r][k], requantised.
 * The input offset is folded into the bias at build time (bias[c] = the model's bias plus
 * input_offset * sum_k w[c][k], mcugen/codegen/lower/opt_mat_mult.py), so the inner loop only
 * multiplies: exact, because the sum of integers does not depend on its order and the build
 * checked that the full sum stays within int32 (partial sums wrap modulo 2^32 as SMLAD does). */
#ifndef MCU_MAT_MULT_S8_H
#define MCU_MAT_MULT_S8_H

#include "mcu/runtime.h"

typedef struct {
  int32_t output_offset; /* output zero point */
  int32_t act_min;
  int32_t act_max;
  int32_t num_channels;       /* entries of multipliers/shifts: 1 per tensor, else per output */
  const int32_t *multipliers; /* TFLM QuantizeMultiplier significands */
  const int32_t *shifts;      /* TFLM exponents: positive shifts left */
  const int32_t *bias;        /* per output channel, input offset folded in */
} mcu_mat_mult_s8_params_t;

/* out[r * out_stride + c] for r < rows, c < channels: rows of `depth` int8 inputs `x_stride`
 * apart, weights [channels][depth]. */
void mcu_mat_mult_s8(const mcu_mat_mult_s8_params_t *p, const int8_t *x, int32_t rows,
                     int32_t x_stride, const int8_t *w, int32_t channels, int32_t depth,
                     int8_t *out, int32_t out_stride);

/* Two rows `x0` and `x1` of `depth` inputs (or `x0` alone when `x1` is NULL) against all
 * `channels`: out0[c] and out1[c]. The building block of mcu_mat_mult_s8, for callers that
 * gather their rows themselves (kernels/opt/conv_2d_s8.c). */
void mcu_mat_mult_s8_rows(const mcu_mat_mult_s8_params_t *p, const int8_t *x0, const int8_t *x1,
                          const int8_t *w, int32_t channels, int32_t depth, int8_t *out0,
                          int8_t *out1);

#endif
