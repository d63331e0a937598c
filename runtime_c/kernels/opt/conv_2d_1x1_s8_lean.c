/* CONV_2D int8 with a 1x1 filter, stride 1 and one group, with no scratch: the matrix product
 * of mcu/mat_mult_s8.h one pixel at a time, each read as it is (mcu_mat_mult_s8_row: SXTB16 of
 * the input and weight words, 4 channels a pass), bit-exact with reference/conv_2d.c. The fast
 * variant (conv_2d_1x1_s8.c) widens two pixels into its scratch first.
 *
 * In place (the plan put the output over the input, with the registered staging of two pixels as
 * scratch, conv_2d.py conv_staging_bytes), each pixel is copied into the scratch before its
 * outputs are written: from the first pixel on when there are no more output than input
 * channels (pixel k's outputs end at or before the end of its inputs), else from the last back
 * (they start at or after the start of its inputs); either way no pixel not yet copied is
 * overwritten. */
#include <string.h>

#include "mcu/kernels/lean.h"
#include "mcu/mat_mult_s8.h"

mcu_status_t mcu_conv_2d_1x1_s8_lean(const mcu_node_t *node, mcu_context_t *ctx) {
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
  MCU_ENSURE_MODEL(p->stream == NULL, MCU_ERR_BAD_MODEL);
  const int8_t *input = mcu_input(ctx, node, 0);
  const int8_t *weights = mcu_input(ctx, node, 1);
  int8_t *output = mcu_output(ctx, node, 0);
  if ((const void *)output != (const void *)input) {
    for (int32_t k = 0; k < pixels; ++k) {
      mcu_mat_mult_s8_row(p, input + k * in_c, weights, out_c, in_c, output + k * out_c);
    }
    return MCU_OK;
  }
  int8_t *staged = mcu_scratch(ctx, node);
  MCU_ENSURE(staged != NULL, MCU_ERR_BAD_MODEL); /* the plan's staging: checked every invoke */
  for (int32_t i = 0; i < pixels; ++i) {
    int32_t k = out_c <= in_c ? i : pixels - 1 - i;
    memcpy(staged, input + k * in_c, (size_t)in_c);
    mcu_mat_mult_s8_row(p, staged, weights, out_c, in_c, output + k * out_c);
  }
  return MCU_OK;
}
