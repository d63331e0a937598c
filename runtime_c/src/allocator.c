/* Dynamic arena allocation between operators: the "compacting" and "planned" allocator modes.
 *
 * The arena holds buffers (a tensor with the tensors aliased into it, or an operator's scratch).
 * compacting: before an operator its new buffers go at the end of the live region; after it, the
 *   buffers it last used are freed and the live ones slide down, lowest address first, to close the
 *   gaps (Liberis & Lane 2019). The arena never exceeds the peak live bytes of the order.
 * planned: the generator computed every buffer's birth offset and the moves to perform before each
 *   operator (mcugen/plan/dynamic.py); the runtime performs them in order.
 * paged: planned, where offsets from the arena's size on are in a slow memory (MCU_PAGED,
 *   mcugen/plan/paging/target.py): a move there or back is a page out or in through
 *   mcu_port_copy, and a page whose slow copy is current is dropped by re-addressing it.
 * Both keep the tensors' current offsets in the model state struct; kernels read them through
 * mcu_tensor_ptr at each eval, so no address is cached across operators. At invoke boundaries the
 * graph inputs are at their initial offsets and the outputs where the last operator left them. */
#include <string.h>

#include "mcu/runtime.h"

static void place(mcu_context_t *ctx, int32_t buffer, int32_t offset) {
  const mcu_dyn_plan_t *plan = ctx->model->dyn;
  mcu_dyn_state_t *st = ctx->dyn;
  st->buffer_offsets[buffer] = offset;
  for (uint32_t m = plan->member_start[buffer]; m < plan->member_start[buffer + 1]; ++m) {
    st->tensor_offsets[plan->member_tensor[m]] = offset + plan->member_inner[m];
  }
}

__attribute__((weak)) void mcu_port_copy(void *dst, const void *src, uint32_t bytes) {
  memcpy(dst, src, bytes);
}

/* `buffer` to `target`: copied there, or with a negative target (paged) re-addressed to
 * -1 - target without a copy. Moves inside one memory may overlap (memmove); a copy between
 * the arena and the slow memory never does. */
static void move(mcu_context_t *ctx, int32_t buffer, int32_t target) {
  int32_t offset = target < 0 ? -1 - target : target;
  int32_t from = ctx->dyn->buffer_offsets[buffer];
  if (from == offset) {
    return;
  }
  if (target >= 0) {
    uint32_t bytes = ctx->model->dyn->buffer_bytes[buffer];
    uint32_t fast = ctx->model->arena_bytes;
    uint8_t *dst = mcu_dyn_address(ctx, offset);
    const uint8_t *src = mcu_dyn_address(ctx, from);
    if (((uint32_t)offset >= fast) != ((uint32_t)from >= fast)) {
      mcu_port_copy(dst, src, bytes);
    } else {
      memmove(dst, src, bytes);
    }
    ctx->dyn->moved_bytes += bytes;
  }
  place(ctx, buffer, offset);
}

/* Buffers born at step 0 (the graph inputs) at their initial offsets, nothing else live; the
 * count of moved bytes is kept. */
void mcu_dyn_reset(mcu_context_t *ctx) {
  const mcu_dyn_plan_t *plan = ctx->model->dyn;
  mcu_dyn_state_t *st = ctx->dyn;
  st->live_count = 0;
  st->top = 0;
  for (uint32_t k = plan->born_start[0]; k < plan->born_start[1]; ++k) {
    int32_t b = plan->born_buffer[k];
    place(ctx, b, plan->initial_offsets[b]);
    st->live[st->live_count++] = (int16_t)b;
    st->top = (uint32_t)plan->initial_offsets[b] + plan->buffer_bytes[b];
  }
}

static void free_dying(mcu_context_t *ctx, uint32_t step) {
  const mcu_dyn_plan_t *plan = ctx->model->dyn;
  mcu_dyn_state_t *st = ctx->dyn;
  for (uint32_t k = plan->dies_start[step]; k < plan->dies_start[step + 1]; ++k) {
    int16_t dead = plan->dies_buffer[k];
    uint32_t kept = 0;
    for (uint32_t i = 0; i < st->live_count; ++i) {
      if (st->live[i] != dead) {
        st->live[kept++] = st->live[i];
      }
    }
    st->live_count = kept;
  }
}

/* Slide every live buffer down to close the gaps, lowest address first (memmove-safe). */
static void compact(mcu_context_t *ctx) {
  const mcu_dyn_plan_t *plan = ctx->model->dyn;
  mcu_dyn_state_t *st = ctx->dyn;
  uint32_t cursor = 0;
  for (uint32_t i = 0; i < st->live_count; ++i) {
    move(ctx, st->live[i], (int32_t)cursor);
    cursor += plan->buffer_bytes[st->live[i]];
  }
  st->top = cursor;
}

void mcu_dyn_before(mcu_context_t *ctx, uint32_t position) {
  const mcu_dyn_plan_t *plan = ctx->model->dyn;
  mcu_dyn_state_t *st = ctx->dyn;
  uint32_t step = position + 1u;
  if (position == 0) {
    st->moved_bytes = 0;
  }
  if (plan->planned) {
    for (uint32_t k = plan->move_start[step]; k < plan->move_start[step + 1]; ++k) {
      move(ctx, plan->move_buffer[k], plan->move_offset[k]);
    }
    for (uint32_t k = plan->born_start[step]; k < plan->born_start[step + 1]; ++k) {
      place(ctx, plan->born_buffer[k], plan->initial_offsets[plan->born_buffer[k]]);
    }
  } else {
    if (position == 0) {
      free_dying(ctx, 0);
      compact(ctx);
    }
    for (uint32_t k = plan->born_start[step]; k < plan->born_start[step + 1]; ++k) {
      int32_t b = plan->born_buffer[k];
      place(ctx, b, (int32_t)st->top);
      st->top += plan->buffer_bytes[b];
      st->live[st->live_count++] = (int16_t)b;
    }
  }
  int16_t scratch = plan->scratch_buffer[position];
  ctx->scratch_offset = scratch < 0 ? -1 : st->buffer_offsets[scratch];
}

/* After the last operator the outputs stay where they are; the inputs go back to their initial
 * offsets (the generator checked that an input still live then is already there). */
static void finish(mcu_context_t *ctx) { mcu_dyn_reset(ctx); }

void mcu_dyn_after(mcu_context_t *ctx, uint32_t position) {
  const mcu_dyn_plan_t *plan = ctx->model->dyn;
  uint32_t step = position + 1u;
  if (!plan->planned) {
    free_dying(ctx, step);
    compact(ctx);
  }
  if (step + 1u == plan->num_steps) {
    finish(ctx);
  }
}

const mcu_allocator_t mcu_dyn_allocator = {mcu_dyn_reset, mcu_dyn_before, mcu_dyn_after};
