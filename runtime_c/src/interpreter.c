/* Walks the generated operator list over one static arena.
 *
 * mcu_init is the runtime's prepare pass: it checks the model against the arena once and resets
 * the variable tensors (the state that invokes carry over, outside the arena). The
 * operators' own tables were validated at build time (runtime.h, MCU_ENSURE_MODEL), so invoking
 * is one loop over the nodes; a dynamic allocator, when the model has one, is called around each
 * operator through the model's hook table. */
#include <string.h>

#include "mcu/runtime.h"

mcu_status_t mcu_reset_variables(const mcu_context_t *ctx) {
  const mcu_model_t *model = ctx->model;
  for (uint32_t i = 0; i < model->num_variables; ++i) {
    const mcu_variable_t *v = &model->variables[i];
    if (v->init != NULL) {
      memcpy(v->data, v->init, v->bytes);
    } else {
      memset(v->data, v->reset_byte, v->bytes);
    }
  }
  return MCU_OK;
}

mcu_status_t mcu_init(mcu_context_t *ctx, const mcu_model_t *model, uint8_t *arena,
                      uint32_t arena_bytes) {
  MCU_ENSURE(ctx != NULL && model != NULL, MCU_ERR_INTERNAL);
  MCU_ENSURE(arena != NULL || model->arena_bytes == 0, MCU_ERR_ARENA);
  MCU_ENSURE(arena_bytes >= model->arena_bytes, MCU_ERR_ARENA);
  MCU_ENSURE((model->allocator == NULL) == (model->dyn == NULL), MCU_ERR_BAD_MODEL);
#ifdef MCU_STATIC_OFFSETS
  MCU_ENSURE(model->allocator == NULL, MCU_ERR_BAD_MODEL); /* built without the allocator */
#endif
  ctx->model = model;
  ctx->arena = arena;
  ctx->failed_node = -1;
  ctx->offsets = NULL;
  ctx->dyn = NULL;
  ctx->scratch_offset = -1;
  MCU_ENSURE_MODEL((model->reset_variables != NULL) == (model->num_variables != 0u) &&
                       (model->variables != NULL || model->num_variables == 0u),
                   MCU_ERR_BAD_MODEL);
  if (model->allocator != NULL) {
    MCU_ENSURE(model->dyn_state != NULL, MCU_ERR_BAD_MODEL);
#ifndef MCU_PAGED
    MCU_ENSURE(model->dyn->slow == NULL, MCU_ERR_BAD_MODEL); /* built without paging */
#endif
    MCU_ENSURE(model->dyn->num_steps == model->num_nodes + 1u, MCU_ERR_BAD_MODEL);
    ctx->dyn = model->dyn_state;
    ctx->offsets = model->dyn_state->tensor_offsets;
    model->allocator->reset(ctx);
  }
  if (model->reset_variables != NULL) {
    return model->reset_variables(ctx); /* a tail call: stateless builds pay one test */
  }
  return MCU_OK;
}

/* The one invoke loop, over positions first .. end - 1 (end 0: to the last, so that the whole
 * model's entry points compile exactly as before ranges existed). With a clock, each operator's
 * ticks (allocator hooks included) are added to node_ticks[position]. On a failure a dynamic
 * allocator is reset, so the next invoke starts from the initial offsets. Inlined into the entry
 * points, so mcu_invoke's copy has no clock test left. */
static inline __attribute__((always_inline)) mcu_status_t run_nodes(mcu_context_t *ctx,
                                                                    uint32_t first, uint32_t end,
                                                                    mcu_clock_fn now,
                                                                    uint64_t *node_ticks) {
  const mcu_model_t *model = ctx->model;
#ifdef MCU_STATIC_OFFSETS
  const mcu_allocator_t *allocator = NULL;
#else
  const mcu_allocator_t *allocator = model->allocator;
#endif
  for (uint32_t i = first; i < (end != 0u ? end : model->num_nodes); ++i) {
    const mcu_node_t *node = &model->nodes[i];
    uint64_t start = now != NULL ? now() : 0u;
    if (allocator != NULL) {
      allocator->before(ctx, i);
    }
    mcu_status_t status = node->eval(node, ctx);
    if (allocator != NULL) {
      allocator->after(ctx, i);
    }
    if (now != NULL) {
      node_ticks[i] += now() - start;
    }
    if (status != MCU_OK) {
      if (allocator != NULL) {
        allocator->reset(ctx);
      }
      ctx->failed_node = node->index;
      return status;
    }
  }
  ctx->failed_node = -1;
  return MCU_OK;
}

mcu_status_t mcu_invoke(mcu_context_t *ctx) {
  return run_nodes(ctx, 0u, 0u, NULL, NULL);
}

mcu_status_t mcu_invoke_profiled(mcu_context_t *ctx, mcu_clock_fn now, uint64_t *node_ticks) {
  return run_nodes(ctx, 0u, 0u, now, node_ticks);
}

mcu_status_t mcu_invoke_nodes(mcu_context_t *ctx, uint32_t first, uint32_t end, mcu_clock_fn now,
                              uint64_t *node_ticks) {
  if (first >= end || end > ctx->model->num_nodes || ctx->model->allocator != NULL) {
    ctx->failed_node = -1;
    return MCU_ERR_UNSUPPORTED;
  }
  return run_nodes(ctx, first, end, now, node_ticks);
}
