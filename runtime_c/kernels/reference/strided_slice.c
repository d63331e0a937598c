/* STRIDED_SLICE, as TFLM's reference_ops::StridedSlice: output elements in row-major order, input
 * index start + i * stride on each axis. The lowering resolved masks and clamping (TFLM's
 * strided_slice logic) into starts, strides and counts; this kernel only checks and walks them. */
#include "mcu/kernels/strided_slice.h"

#include "mcu/gather.h"

/* The taken indices of axis `d` lie inside the input dimension. */
static int axis_in_range(const mcu_strided_slice_params_t *p, int d, int32_t size) {
  int32_t count = p->counts[d];
  if (count == 0) {
    return 1;
  }
  int32_t first = p->starts[d];
  int32_t last = first + (count - 1) * p->strides[d];
  return count > 0 && first >= 0 && first < size && last >= 0 && last < size;
}

static mcu_status_t slice_walk(const mcu_node_t *node, const mcu_context_t *ctx, mcu_gather_t *w) {
  const mcu_strided_slice_params_t *p = node->params;
  const mcu_tensor_t *input = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *output = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(input != NULL && p->ndims == input->ndims && p->elem_bytes > 0,
                   MCU_ERR_BAD_MODEL);
  w->ndims = input->ndims;
  w->base = 0;
  w->total = 1;
  int32_t in_stride = 1;
  for (int d = w->ndims - 1; d >= 0; --d) {
    MCU_ENSURE_MODEL(axis_in_range(p, d, input->dims[d]), MCU_ERR_BAD_MODEL);
    w->counts[d] = p->counts[d];
    w->steps[d] = p->strides[d] * in_stride;
    w->base += p->starts[d] * in_stride;
    w->total *= p->counts[d];
    in_stride *= input->dims[d];
  }
  MCU_ENSURE_MODEL(w->total == mcu_num_elements(output), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

MCU_GATHER_KERNEL(mcu_strided_slice, mcu_strided_slice_params_t, slice_walk)
