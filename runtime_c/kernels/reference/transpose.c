/* TRANSPOSE, as TFLM's reference_ops::Transpose: output element (i_0, ..., i_n) is the input element
 * whose axis perm[d] has index i_d. Element type does not matter, only its size. */
#include "mcu/kernels/transpose.h"

#include "mcu/gather.h"

static mcu_status_t transpose_walk(const mcu_node_t *node, const mcu_context_t *ctx,
                                   mcu_gather_t *w) {
  const mcu_transpose_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && output->ndims == input->ndims, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(output->type == input->type && p->elem_bytes > 0, MCU_ERR_BAD_MODEL);
  int32_t in_strides[MCU_MAX_DIMS];
  int32_t stride = 1;
  for (int d = input->ndims - 1; d >= 0; --d) {
    in_strides[d] = stride;
    stride *= input->dims[d];
  }
  w->ndims = output->ndims;
  w->base = 0;
  w->total = 1;
  uint32_t seen = 0;
  for (int d = 0; d < w->ndims; ++d) {
    int32_t axis = p->perm[d];
    MCU_ENSURE_MODEL(axis >= 0 && axis < input->ndims, MCU_ERR_BAD_MODEL);
    MCU_ENSURE_MODEL((seen & (1u << axis)) == 0, MCU_ERR_BAD_MODEL);
    seen |= 1u << axis;
    MCU_ENSURE_MODEL(output->dims[d] == input->dims[axis], MCU_ERR_BAD_MODEL);
    w->counts[d] = output->dims[d];
    w->steps[d] = in_strides[axis];
    w->total *= output->dims[d];
  }
  MCU_ENSURE_MODEL(w->total == mcu_num_elements(input), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

MCU_GATHER_KERNEL(mcu_transpose, mcu_transpose_params_t, transpose_walk)
