/* Backward MEAN (mcu/kernels/mean_grad.h), float32: dx[i] = dy[o(i)] / num_reduced, o(i) being
 * the flat index of i's kept coordinates in row-major order (mcu/kernels/mean.h's layout). No sums:
 * each element is one division, the one the forward divides by. */
#include "mcu/kernels/mean_grad.h"

typedef struct {
  int ndims;
  int32_t dims[MCU_MAX_DIMS];
  int32_t num_inputs;
  int32_t num_outputs;
} mean_grad_geom_t;

static mcu_status_t mean_grad_geom(const mcu_node_t *node, const mcu_context_t *ctx,
                                   mean_grad_geom_t *g) {
  const mcu_mean_grad_params_t *p = node->params;
  MCU_ENSURE_MODEL(node->num_inputs == 1 && node->num_outputs == 1, MCU_ERR_BAD_MODEL);
  const mcu_tensor_t *dy = mcu_input_tensor(ctx, node, 0);
  const mcu_tensor_t *dx = mcu_output_tensor(ctx, node, 0);
  MCU_ENSURE_MODEL(dy != NULL && p->num_reduced > 0, MCU_ERR_BAD_MODEL);
  g->ndims = dx->ndims;
  g->num_outputs = 1;
  int32_t reduced = 1;
  for (int i = 0; i < g->ndims; ++i) {
    g->dims[i] = dx->dims[i];
    if ((p->reduce_mask >> i) & 1) {
      reduced *= dx->dims[i];
    } else {
      g->num_outputs *= dx->dims[i];
    }
  }
  g->num_inputs = mcu_num_elements(dx);
  MCU_ENSURE_MODEL(reduced == p->num_reduced, MCU_ERR_BAD_MODEL);
  MCU_ENSURE_MODEL(g->num_outputs == mcu_num_elements(dy), MCU_ERR_BAD_MODEL);
  return MCU_OK;
}

/* Flat index into dy of input coordinates `idx`: the kept coordinates in row-major order. */
static int32_t kept_offset(const mean_grad_geom_t *g, int32_t reduce_mask, const int32_t *idx) {
  int32_t offset = 0;
  for (int i = 0; i < g->ndims; ++i) {
    if (((reduce_mask >> i) & 1) == 0) {
      offset = offset * g->dims[i] + idx[i];
    }
  }
  return offset;
}

/* Advances `idx` to the next input element in row-major order. */
static void next_index(const mean_grad_geom_t *g, int32_t *idx) {
  for (int i = g->ndims - 1; i >= 0; --i) {
    if (++idx[i] < g->dims[i]) {
      return;
    }
    idx[i] = 0;
  }
}

mcu_status_t mcu_mean_grad_f32(const mcu_node_t *node, mcu_context_t *ctx) {
  const mcu_mean_grad_params_t *p = node->params;
  mean_grad_geom_t g;
  MCU_TRY(mean_grad_geom(node, ctx, &g));
  const float *dy = mcu_input(ctx, node, 0);
  float *dx = mcu_output(ctx, node, 0);
  const float count = (float)p->num_reduced;
  int32_t idx[MCU_MAX_DIMS] = {0};
  for (int32_t i = 0; i < g.num_inputs; ++i) {
    dx[i] = dy[kept_offset(&g, p->reduce_mask, idx)] / count;
    next_index(&g, idx);
  }
  return MCU_OK;
}
