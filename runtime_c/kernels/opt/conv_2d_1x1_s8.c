/* CONV_2D int8 with a 1x1 filter, stride 1 and one group: a matrix product over the pixels
 * (mcu/mat_mult_s8.h), bit-exact with reference/conv_2d.c (mcu_conv_2d_int8). In place (the
 * plan put the output over the input, as the reference kernel allows), two pixels at a time
 * staged in the scratch (the plan gives int8 two pixels of staging, codegen/lower/conv_2d.py):
 * with no more outputs than inputs from the first pair on, whose outputs end at or before the
 * end of the pair's inputs; with more, from the last pair back, whose outputs start at or after
 * the start of the pair's inputs. Either way no unstaged pixel is overwritten. */
#include <string.h>

#include "mcu/kernels/conv_2d.h"
#include "mcu/mat_mult_s8.h"

mcu_status_t mcu_conv_2d_1x1_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mat_mult_s8_params_t *p = node->params;
  const mcu_tensor_t *in = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *out = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(in->ndims == 4 && filter->ndims == 4 && out->ndims == 4, MCU_ERR_BAD_MODEL);
  int32_t in_c = in->dims[3];
  int32_t out_c = out->dims[3];
  MCU_ENSURE_MODEL(filter->dims[1] == 1 && filter->dims[2] == 1 && filter->dims[3] == in_c,
                   MCU_ERR_BAD_MODEL);
  int32_t pixels = out->dims[0] * out->dims[1] * out->dims[2];
  MCU_ENSURE_MODEL(pixels == in->dims[0] * in->dims[1] * in->dims[2], MCU_ERR_BAD_MODEL);
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *weights = mcu_input(ctx, node, 1);
  int8_t *output = mcu_output(ctx, node, 0);
  if ((const void *)output != (const void *)input) {
    mcu_mat_mult_s8(p, input, pixels, in_c, weights, out_c, in_c, output, out_c);
    return MCU_OK;
  }
  int8_t *staged = mcu_scratch(ctx, node);
  MCU_ENSURE(staged != NULL, MCU_ERR_BAD_MODEL); /* the path is chosen by the addresses */
  for (int32_t i = 0; i < pixels; i += 2) {
    int32_t rows = pixels - i < 2 ? 1 : 2;
    /* the first of the `rows` pixels: counted from the front, or from the back */
    int32_t k = out_c <= in_c ? i : pixels - i - rows;
    memcpy(staged, output + k * in_c, (size_t)(rows * in_c));
    mcu_mat_mult_s8(p, staged, rows, in_c, weights, out_c, in_c, output + k * out_c, out_c);
  }
  return MCU_OK;
}
