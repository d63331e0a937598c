/* CONV_2D int8 with a 1x1 filter, stride 1 and one group, with no scratch: the matrix product
 * of mcu/mat_mult_s8.h one pixel at a time, each read as it is (mcu_mat_mult_s8_row: SXTB16 of
 * the input and weight words, 4 channels a pass), bit-exact with reference/conv_2d.c. The fast
 * variant (conv_2d_1x1_s8.c) widens two pixels into its scratch first.
 *
 * In place (the plan put the output over the input, with the registered staging of two pixels as
 * scratch, conv_2d.py conv_staging_bytes), each pixel is copied into the scratch before its
 * outputs are written (mcu_pointwise_pixels says in which order). */
#include "mcu/kernels/lean.h"
#include "mcu/mat_mult_s8.h"

mcu_status_t mcu_conv_2d_1x1_s8_lean(const mcu_node_t *node, mcu_context_t *ctx) {
  mcu_pointwise_t d;
  MCU_TRY(mcu_pointwise_dims(node, ctx, &d));
  MCU_ENSURE_MODEL(((const mcu_mat_mult_s8_params_t *)node->params)->stream == NULL,
                   MCU_ERR_BAD_MODEL);
  return mcu_pointwise_pixels(node, ctx, &d, mcu_mat_mult_s8_row);
}
