/* Walks the generated operator list over one static arena. */
#include "mcu/runtime.h"

mcu_status_t mcu_init(mcu_context_t *ctx, const mcu_model_t *model, uint8_t *arena,
                      uint32_t arena_bytes) {
  MCU_ENSURE(ctx != NULL && model != NULL, MCU_ERR_INTERNAL);
  MCU_ENSURE(arena != NULL || model->arena_bytes == 0, MCU_ERR_ARENA);
  MCU_ENSURE(arena_bytes >= model->arena_bytes, MCU_ERR_ARENA);
  ctx->model = model;
  ctx->arena = arena;
  ctx->failed_node = -1;
  ctx->offsets = NULL;
  ctx->dyn = NULL;
  ctx->scratch_offset = -1;
  if (model->dyn != NULL) {
    MCU_ENSURE(model->dyn_state != NULL, MCU_ERR_BAD_MODEL);
    MCU_ENSURE(model->dyn->num_steps == model->num_nodes + 1u, MCU_ERR_BAD_MODEL);
    ctx->dyn = model->dyn_state;
    ctx->offsets = model->dyn_state->tensor_offsets;
    mcu_dyn_reset(ctx);
  }
  return MCU_OK;
}

mcu_status_t mcu_invoke(mcu_context_t *ctx) {
  const mcu_model_t *model = ctx->model;
  for (uint32_t i = 0; i < model->num_nodes; ++i) {
    const mcu_node_t *node = &model->nodes[i];
    if (ctx->dyn != NULL) {
      mcu_dyn_before(ctx, i);
    }
    mcu_status_t status = node->eval(node, ctx);
    if (ctx->dyn != NULL) {
      mcu_dyn_after(ctx, i);
    }
    if (status != MCU_OK) {
      if (ctx->dyn != NULL) {
        mcu_dyn_reset(ctx);
      }
      ctx->failed_node = node->index;
      return status;
    }
  }
  ctx->failed_node = -1;
  return MCU_OK;
}

mcu_status_t mcu_invoke_profiled(mcu_context_t *ctx, mcu_clock_fn now, uint64_t *node_ticks) {
  const mcu_model_t *model = ctx->model;
  for (uint32_t i = 0; i < model->num_nodes; ++i) {
    const mcu_node_t *node = &model->nodes[i];
    uint64_t start = now();
    if (ctx->dyn != NULL) {
      mcu_dyn_before(ctx, i);
    }
    mcu_status_t status = node->eval(node, ctx);
    if (ctx->dyn != NULL) {
      mcu_dyn_after(ctx, i);
    }
    node_ticks[i] += now() - start;
    if (status != MCU_OK) {
      if (ctx->dyn != NULL) {
        mcu_dyn_reset(ctx);
      }
      ctx->failed_node = node->index;
      return status;
    }
  }
  ctx->failed_node = -1;
  return MCU_OK;
}
