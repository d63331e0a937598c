/* FULLY_CONNECTED int8 with a filter zero point of 0, as one matrix product (mcu/mat_mult_s8.h)
 * with pairs of input rows widened into the scratch (MCU_MAT_MULT_S8_SCRATCH(depth) bytes
 * when there is more than one row, declared by codegen/lower/opt_mat_mult.py): bit-exact with reference/fully_connected.c
 * (mcu_fully_connected_int8), which sums the same products in another order.
 * mcu_fully_connected_s8_row: the build's choice for one row, which links no widened pairs. */
#include "mcu/kernels/fully_connected.h"
#include "mcu/mat_mult_s8.h"

mcu_status_t mcu_fully_connected_s8_row(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(filter != NULL && filter->ndims == 2, MCU_ERR_BAD_MODEL);
  int32_t channels = filter->dims[0];
  MCU_ENSURE_MODEL(channels > 0 && mcu_num_elements(output) == channels, MCU_ERR_BAD_MODEL);
  mcu_mat_mult_s8_row(node->params, mcu_input(ctx, node, 0), mcu_input(ctx, node, 1), channels,
                      filter->dims[1], mcu_output(ctx, node, 0));
  return MCU_OK;
}

mcu_status_t mcu_fully_connected_s8_opt(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mat_mult_s8_params_t *p = node->params;
  const mcu_tensor_t *filter = mcu_input_tensor(ctx, node, 1);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(filter != NULL && filter->ndims == 2, MCU_ERR_BAD_MODEL);
  int32_t channels = filter->dims[0];
  int32_t depth = filter->dims[1];
  MCU_ENSURE_MODEL(channels > 0 && mcu_dim(output, -1) == channels, MCU_ERR_BAD_MODEL);
  int32_t rows = mcu_num_elements(output) / channels;
  uint32_t *widened = mcu_scratch(ctx, node);
  MCU_ENSURE(widened != NULL || rows < 2, MCU_ERR_BAD_MODEL);
  mcu_mat_mult_s8(p, mcu_input(ctx, node, 0), rows, depth, mcu_input(ctx, node, 1), channels,
                  depth, mcu_output(ctx, node, 0), channels, widened);
  return MCU_OK;
}
