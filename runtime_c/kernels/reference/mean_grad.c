/* Backward MEAN (mcu/kernels/mean_grad.h), float32: dx[i] = dy[o(i)] / num_reduced, o(i) being
 * the flat index of i's kept coordinates in row-major order (mcu/kernels/mean.h's layout). No sums:
 * each element is one division, the one the forward divides by. */
#include "mcu/kernels/mean_grad.h"

#include "mcu/reduce.h"

mcu_status_t mcu_mean_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mean_grad_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  mcu_reduce_t g;
  MCU_TRY(mcu_reduce_of(mcu_output_tensor(ctx, node, 0), mcu_input_tensor(ctx, node, 0),
                        p->reduce_mask, p->num_reduced, &g));
  const float *dy = mcu_input(ctx, node, 0);
  float *dx = mcu_output(ctx, node, 0);
  const float count = (float)p->num_reduced;
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int32_t i = 0; i < g.num_whole; ++i) {
    dx[i] = dy[mcu_reduce_kept_offset(&g, idx)] / count;
    mcu_reduce_next(&g, idx);
  }
  return MCU_OK;
}
